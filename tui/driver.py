"""Textual's Linux driver, with the suspend, resume and hang-up handling the app needs.

Textual 8.2.8's ``LinuxDriver`` (``textual/drivers/linux_driver.py``) goes wrong in three ways
when a terminal goes away or the process is stopped and continued:

1. Any SIGCONT restarts application mode, as if it followed a ctrl+z. A closed pty sends SIGHUP
   *and* SIGCONT to its session leader, and some SSH servers send SIGCONT when a link drops, so
   a second writer thread and a second input thread start beside the first ones.
2. The writer thread dies on the first write that fails (EIO once the pty is closed), and its
   queue holds 30 writes: the exit path writes more than that (leaving application mode, then
   ``disable_input`` again from ``App._shutdown``), so the 31st write blocks forever and the
   process outlives its terminal. Writes after the writer stopped (suspended) block the same
   way (Textualize/textual PR #1655).
3. Its SIGTSTP/SIGCONT handlers run inside the signal handler, between any two bytecodes of the
   main thread (Textualize/textual#6298), and nothing redraws the screen after a resume from
   outside (``kill -TSTP``, then ``fg``): it stays blank until a key is pressed.
4. Its key parser reads an escape and the character that follows within its escape delay as one
   key (alt+X: a terminal sends alt+X as ESC X), or drops the escape (ESC ] is ``]``), so
   Escape then ``]`` arriving together (a fast typist over SSH, ``tmux send-keys Escape ]``)
   typed ``]`` into the text box that Escape should have left.
5. Its parser reads an ESC inside a bracketed paste as the start of an escape sequence and, at
   the next ESC (the paste's end marker's), sends that sequence as keys, its ESC as ``^``, before
   the paste, which then lacks it: ``abc`` and a paste of ``x\ty\x1b[1mz`` (tmux passes the
   ESC on) became ``abc^[1mzx\ty``.

``ShardbookDriver`` handles SIGTSTP and SIGCONT on the event loop (between messages, like the
app's other signals), resumes only after its own suspend, drops output once the terminal is gone
or the writer has stopped, repaints the whole screen after a resume, and reads keys and pastes
with :class:`EscapeFirstParser`.

Upstream reproducer, to try before dropping this module (``tests/test_lifecycle.py`` has the same
check, run with the stock driver, and fails once Textual no longer starts a second writer)::

    # minimal.py
    from textual.app import App
    from textual.widgets import Static

    class Minimal(App[None]):
        def compose(self):
            yield Static("hello")

    Minimal().run()

    $ python minimal.py &   # in a terminal; then, from another one:
    $ ls /proc/$PID/task | wc -l; kill -CONT $PID; ls /proc/$PID/task | wc -l
    3
    5                       # one more writer and one more input thread per SIGCONT
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import selectors
import signal
import termios
from codecs import getincrementaldecoder
from collections.abc import Generator, Iterator
from typing import IO, TYPE_CHECKING, Any

from textual import events
from textual._loop import loop_last
from textual._parser import ParseEOF, ParseError, Peek1, Read1, TokenCallback
from textual._xterm_parser import SPECIAL_KEY_TO_CHARACTER, XTermParser
from textual.drivers.linux_driver import LinuxDriver
from textual.message import Message

from tui import terminal
from tui.settle import settle

if TYPE_CHECKING:
    from textual.app import App


ESC = "\x1b"
# Kept as one key: alt+backspace (an xterm sends ESC DEL, which Textual reads as ctrl+w) and
# alt+delete delete a word in Textual's Input and TextArea (their BINDINGS); ESC b and ESC f
# are option+left/right in iTerm's "natural text editing", a word left/right in them, while b
# and f after an Escape mean nothing to the lesson.
_WHOLE_SEQUENCES = frozenset({ESC + "\x7f", ESC + "b", ESC + "f"})
_WHOLE_KEYS = frozenset({"alt+backspace", "alt+delete"})
# What a terminal sends around a paste in bracketed paste mode (xterm's ctlseqs, "Bracketed
# Paste Mode": https://invisible-island.net/xterm/ctlseqs/ctlseqs.html).
_PASTE_START = ESC + "[200~"
_PASTE_END = ESC + "[201~"
_END_CHARACTERS = list(_PASTE_END)


def _escape_key() -> events.Key:
    return events.Key("escape", ESC)


class EscapeFirstParser(XTermParser):
    """Textual's key parser, reading alt+X as the two keys Escape and X, in that order.

    A terminal sends alt+X as ESC X, the same bytes as Escape then X, and Textual 8.2.8's parser
    (``textual/_xterm_parser.py``) reads ESC and a character arriving within its escape delay
    (``ESCDELAY``, 100 ms) as one key: ``alt+a``, a key of its table (ESC 1 is ``¡``, a Mac's
    option+1), or the character alone (ESC ] is ``]``). The app binds no alt key, and Escape
    leaves a text box, so the two keys are what the learner meant; a key a terminal reports with
    an alt modifier (alt+up: ESC [1;3A) is read the same way. The word keys of the text fields
    stay whole: alt+backspace and alt+delete (delete a word), ESC b and ESC f (a word left and
    right, as iTerm sends option+left/right).

    A bracketed paste is one :class:`~textual.events.Paste` of exactly the characters between
    its markers, ESC included (Textual's parser sends the text from an ESC in a paste to the
    next ESC as keys, ahead of the rest of the paste), NUL excepted, as Textual drops it
    (Textualize/textual#1661).
    """

    def parse(self, token_callback: TokenCallback[Message]) -> Generator[Read1 | Peek1, str, None]:
        # Textual's parse reads everything outside pastes, and the markers: once it has read
        # the start marker it is given nothing until the end marker, so the one Paste it then
        # makes (of nothing) comes where the paste came, and carries the text read here.
        pasted = ""

        def on_token(token: Message) -> None:
            token_callback(events.Paste(pasted) if isinstance(token, events.Paste) else token)

        textual = super().parse(on_token)
        request = next(textual)
        # The characters Textual read since its last timeout, the latest six: it reads a new
        # sequence from each ESC, so ESC [ 2 0 0 ~ in a row is its paste start.
        recent = ""
        while True:
            try:
                character = yield request
            except ParseError as error:  # a timeout, or the end of the input
                recent = ""
                try:
                    request = textual.throw(error)
                except StopIteration:
                    return
                continue
            request = textual.send(character)
            recent = (recent + character)[-len(_PASTE_START) :]
            if recent != _PASTE_START:
                continue
            # The paste, up to its end marker; a read without a timeout is never timed out.
            text: list[str] = []
            while text[-len(_PASTE_END) :] != _END_CHARACTERS:
                try:
                    text.append((yield self.read1()))
                except ParseEOF:  # the input ended inside the paste (Textual drops it too)
                    return
            pasted = "".join(text[: -len(_PASTE_END)]).replace("\x00", "")
            for marker_character in _PASTE_END:
                request = textual.send(marker_character)
            recent = ""

    def _sequence_to_key_events(self, sequence: str, alt: bool = False) -> Iterator[events.Key]:
        if alt:  # ESC, then ``sequence`` (one character) within the escape delay
            yield _escape_key()
            yield from super()._sequence_to_key_events(sequence)
            return
        if (
            len(sequence) == 2
            and sequence[0] == ESC
            and sequence[1] != ESC
            and sequence not in _WHOLE_SEQUENCES
        ):
            # ESC and one character that Textual's table names as one key; nothing (a longer
            # sequence such as ESC [ A may follow) when the table does not.
            if list(super()._sequence_to_key_events(sequence)):
                yield _escape_key()
                yield from super()._sequence_to_key_events(sequence[1])
            return
        for key in super()._sequence_to_key_events(sequence):
            yield from self._split_alt(key)

    def _split_alt(self, key: events.Key) -> Iterator[events.Key]:
        """``key``, or Escape and ``key`` without alt when alt is one of its modifiers."""
        *modifiers, name = key.key.split("+")
        if "alt" not in modifiers or key.key in _WHOLE_KEYS:
            yield key
            return
        yield _escape_key()
        modifiers.remove("alt")
        character = key.character
        if character is not None and len(character) == 1 and character.isprintable():
            yield from super()._sequence_to_key_events(character)
        elif len(name) == 1 and modifiers in ([], ["shift"]):
            # Typed without alt, a letter is itself (``a``), with shift its capital (``A``).
            text = name.upper() if modifiers else name
            yield events.Key(text, text)
        else:
            yield events.Key(
                "+".join([*modifiers, name]),
                None if modifiers else SPECIAL_KEY_TO_CHARACTER.get(name),
            )


class TerminalOutput:
    """The file the writer thread writes to: the terminal until a write fails or
    :attr:`gone` is set, then nothing.

    A failing write (EIO: the pty was closed) would end Textual's writer thread and leave its
    bounded queue undrained; here the thread lives on and throws the text away, so a write never
    blocks.
    """

    def __init__(self, file: IO[str]) -> None:
        self._file = file
        self.gone = False
        self.is_terminal = file.isatty()

    def write(self, text: str) -> None:
        if self.gone:
            return
        try:
            self._file.write(text)
        except (OSError, ValueError):
            self.gone = True

    def flush(self) -> None:
        if self.gone:
            return
        try:
            self._file.flush()
        except (OSError, ValueError):
            self.gone = True

    def fileno(self) -> int:
        return self._file.fileno()


class ShardbookDriver(LinuxDriver):
    """Textual's Linux driver; see the module docstring for what it changes and why."""

    def __init__(
        self,
        app: App[Any],
        *,
        debug: bool = False,
        mouse: bool = True,
        size: tuple[int, int] | None = None,
    ) -> None:
        super().__init__(app, debug=debug, mouse=mouse, size=size)
        if self._file is None:  # Python started without a standard error: nowhere to draw
            raise RuntimeError("shardbook needs a terminal on standard error")
        self._output = TerminalOutput(self._file)
        self._file = self._output  # type: ignore[assignment]
        self._suspended = False
        self._ending = False
        self._suspending: asyncio.Task[None] | None = None
        # Replaces the handlers LinuxDriver.__init__ installed with signal.signal.
        loop = asyncio.get_running_loop()
        loop.add_signal_handler(signal.SIGTSTP, self.request_suspend)
        loop.add_signal_handler(signal.SIGCONT, self._resume_after_suspend)

    def start_application_mode(self) -> None:
        super().start_application_mode()  # type: ignore[no-untyped-call]
        # The start-up held the keys (tui/terminal.py): the modes to restore are those from
        # before, not the held ones Textual just read.
        if self.attrs_before is not None:
            before = terminal.modes_before(self.fileno)
            if before is not None:
                self.attrs_before = before

    def run_input_thread(self) -> None:
        """Textual 8.2.8's ``LinuxDriver.run_input_thread`` (read the terminal, post its events),
        with :class:`EscapeFirstParser` for its ``XTermParser``."""
        selector = selectors.SelectSelector()
        selector.register(self.fileno, selectors.EVENT_READ)
        fileno = self.fileno
        parser = EscapeFirstParser(self._debug)
        decode = getincrementaldecoder("utf-8")().decode

        def process_selector_events(
            selector_events: list[tuple[selectors.SelectorKey, int]], final: bool = False
        ) -> None:
            for last, (_selector_key, mask) in loop_last(selector_events):
                if mask & selectors.EVENT_READ:
                    unicode_data = decode(os.read(fileno, 1024 * 4), final=final and last)
                    if not unicode_data:  # standard input is a pipe, at its end
                        break
                    for event in parser.feed(unicode_data):
                        self.process_message(event)
            for event in parser.tick():
                self.process_message(event)

        try:
            while not self.exit_event.is_set():
                process_selector_events(selector.select(0.1))
            selector.unregister(self.fileno)
            process_selector_events(selector.select(0.1), final=True)
        finally:
            selector.close()
            with contextlib.suppress(EOFError, ParseError):
                for _event in parser.feed(""):
                    pass

    def write(self, data: str) -> None:
        # Nothing reads the queue of a stopped writer: a put would block once it holds 30.
        writer = self._writer_thread
        if not self._output.gone and writer is not None and writer.is_alive():
            writer.write(data)

    def terminal_gone(self) -> bool:
        """Whether the terminal hung up (a closed window or SSH link): its ioctls fail."""
        if not self._output.is_terminal:
            return self._output.gone
        try:
            termios.tcgetattr(self._output.fileno())
        except (termios.error, OSError, ValueError):
            return True
        return False

    def end_session(self) -> bool:
        """The app is ending: never resume, and write nothing more if the terminal is gone.
        Returns whether it is gone."""
        self._ending = True
        if self.terminal_gone():
            self._output.gone = True
        return self._output.gone

    def restore_terminal_modes(self) -> None:
        """Put back the terminal's modes from before the app started (an ioctl, no output)."""
        if self.attrs_before is not None:
            with contextlib.suppress(termios.error, OSError):
                termios.tcsetattr(self.fileno, termios.TCSANOW, self.attrs_before)

    def request_suspend(self) -> None:
        """Suspend (:meth:`suspend_process`) once the changes already typed have reached the
        app (:func:`tui.settle.settle`), in a task of its own: on SIGTSTP, on ctrl+z."""
        if self._suspending is None or self._suspending.done():
            self._suspending = asyncio.get_running_loop().create_task(self._settle_and_suspend())

    async def _settle_and_suspend(self) -> None:
        await settle(self._app)
        self.suspend_process()

    def suspend_process(self) -> None:
        """Leave application mode and stop the process (SIGSTOP) until SIGCONT. Subscribers of
        ``app_suspend_signal`` run first (the app saves there)."""
        if self._suspended or self._ending:
            return
        self._app.app_suspend_signal.publish(self._app)
        self.suspend_application_mode()
        self._suspended = True
        os.kill(os.getpid(), signal.SIGSTOP)

    def _resume_after_suspend(self) -> None:
        """SIGCONT: start application mode again only after our own suspend, then redraw all."""
        if not self._suspended or self._ending or self._output.gone:
            return
        self._must_signal_resume = True
        self.resume_application_mode()
        writer = self._writer_thread
        # Continued in the background (`bg`): the terminal refused LinuxDriver before it started
        # anything; the next SIGCONT (`fg`) tries again.
        if writer is None or not writer.is_alive():
            return
        self._suspended = False
        # The terminal shows an empty alternate screen: repaint every cell, not only changes.
        self._app.refresh(layout=True)


def is_job_control_child() -> bool:
    """Whether a job-control shell started this process in a job of its own, so a suspend can
    be undone with ``fg``. Run as the terminal's own program (``tmux new-session shardbook``)
    or from a shell without job control, a stopped process would wait for a SIGCONT nobody
    sends."""
    try:
        return os.getpgrp() != os.getsid(0)
    except OSError:
        return False
