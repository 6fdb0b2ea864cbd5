"""However the app is ended or stopped, in a real pseudo-terminal, it saves first and is gone
within 3 s with the conventional exit code (128 + the signal's number, as a shell reports it).

Each test runs shardbook on its own pty (``os.forkpty``: the app is the session leader and the
pty its controlling terminal, as in a terminal window) and reads what the terminal shows through
pyte. Closing the pty's master side is closing the window: the kernel sends the session leader
SIGHUP and SIGCONT. Every process of the pty's session is killed at the end of each test, passed
or failed. Waits poll the screen or the process with a deadline.

Some runs load a few lines before the app (``PRELUDE_*``): no autosave, so only the ending can
have saved the typed text; a slow save, to close the terminal during one; Textual's own driver,
to show what ``tui.driver`` changes; an exit path that never returns, for the backstop.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import select
import shlex
import signal
import struct
import sys
import termios
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pyte
import pytest
from textual.command import CommandList
from textual.widgets import TextArea

from engine.progress import LessonProgress, ProgressStore
from tests.pilot_helpers import Notified, wait_until
from tui import strings
from tui.app import make_app

pytestmark = pytest.mark.skipif(not hasattr(os, "forkpty"), reason="needs POSIX ptys")

# Wide enough for all three panes (outline, lesson, side pane): the outline's last section then
# shows when the first screen is fully drawn.
ROWS, COLUMNS = 40, 120
GONE_WITHIN = 3.0  # seconds, from the signal or the closed terminal to a reaped process
LESSON_DRAWN = "学后填写区"  # the outline's last section: the first screen is fully drawn
TYPED = "typed then ended"

RUN_APP = "import sys; from cli.main import main; sys.exit(main())"
# The app the command line builds, saving an hour after the last key: only the ending saves.
PRELUDE_NO_AUTOSAVE = (
    "import functools, tui.app; "
    "tui.app.make_app = functools.partial(tui.app.make_app, autosave_delay=3600.0); "
)
PRELUDE_STOCK_DRIVER = (
    "from textual.drivers.linux_driver import LinuxDriver\n"
    "import tui.app\n"
    "tui.app.ShardbookApp.get_driver_class = lambda self: LinuxDriver\n"
)
PRELUDE_EXIT_HANGS = (
    "import threading\n"
    "import tui.driver\n"
    "tui.driver.ShardbookDriver.stop_application_mode = lambda self: threading.Event().wait()\n"
)


def prelude_slow_save(marker: Path) -> str:
    """Every progress file's write (the autosave's, in its thread, and the last save's) touches
    ``marker``, then takes 0.5 s before it writes."""
    return (
        "import time\n"
        "from pathlib import Path\n"
        "import engine.progress.store\n"
        "_write = engine.progress.store.atomic_write_text\n"
        "def slow_write(path, text):\n"
        f"    Path({str(marker)!r}).touch()\n"
        "    time.sleep(0.5)\n"
        "    return _write(path, text)\n"
        "engine.progress.store.atomic_write_text = slow_write\n"
    )


class Terminal:
    """A pseudo-terminal of ROWS x COLUMNS with a program running in it."""

    def __init__(self, argv: list[str]) -> None:
        env = {key: value for key, value in os.environ.items() if not key.startswith("TEXTUAL")}
        env.update(TERM="xterm-256color", COLUMNS=str(COLUMNS), LINES=str(ROWS))
        self.screen = pyte.Screen(COLUMNS, ROWS)
        self._stream = pyte.ByteStream(self.screen)
        self.output = bytearray()
        self.exit_code: int | None = None
        pid, fd = os.forkpty()
        if pid == 0:  # the child: size its terminal, then become the program
            try:
                fcntl.ioctl(0, termios.TIOCSWINSZ, struct.pack("HHHH", ROWS, COLUMNS, 0, 0))
                os.execve(argv[0], argv, env)
            finally:
                os._exit(127)
        self.pid = pid
        self._fd: int | None = fd

    # ----------------------------------------------------------------- output
    def _read(self, timeout: float) -> None:
        if self._fd is None:
            time.sleep(min(timeout, 0.02))
            return
        ready, _, _ = select.select([self._fd], [], [], timeout)
        if not ready:
            return
        try:
            data = os.read(self._fd, 65536)
        except OSError:  # EIO: every process of the pty's session has closed it
            data = b""
        if not data:
            time.sleep(min(timeout, 0.02))
            return
        self.output += data
        self._stream.feed(data)

    def drain(self) -> None:
        """Read all the program wrote that is still in the pty (it may have stopped or ended)."""
        while self._fd is not None:
            read_so_far = len(self.output)
            self._read(0)
            if len(self.output) == read_so_far:
                return

    @property
    def rows(self) -> list[str]:
        """What the terminal shows, one string per row. (pyte's ``Screen.display`` fails on a
        cell left empty by a zero-width character; the cell after a wide one is empty too.)"""
        buffer = self.screen.buffer
        return ["".join(buffer[y][x].data for x in range(COLUMNS)) for y in range(ROWS)]

    @property
    def text(self) -> str:
        return "\n".join(self.rows)

    def wait_for(self, condition: Callable[[], bool], what: str, timeout: float = 30) -> None:
        """Read output until ``condition()`` holds; fail after ``timeout`` s saying ``what``."""
        deadline = time.monotonic() + timeout
        while not condition():
            assert time.monotonic() < deadline, f"no {what} after {timeout} s:\n{self.text}"
            self._read(0.05)

    def wait_for_text(self, text: str, timeout: float = 30) -> None:
        self.wait_for(lambda: text in self.text, repr(text), timeout)

    def send(self, data: str) -> None:
        assert self._fd is not None
        os.write(self._fd, data.encode())

    def close(self) -> None:
        """Close the terminal, as closing its window does."""
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None

    # ----------------------------------------------------------------- process
    def threads(self) -> int:
        return len(os.listdir(f"/proc/{self.pid}/task"))

    def state(self) -> str:
        """The process's state letter (``T``: stopped)."""
        stat = Path(f"/proc/{self.pid}/stat").read_text()
        return stat.rsplit(")", 1)[1].split()[0]

    def signal(self, signum: int) -> None:
        os.kill(self.pid, signum)

    def wait_exit(self, timeout: float = GONE_WITHIN) -> int:
        """The exit code, once the process is gone; fail if it is still there after
        ``timeout`` seconds. Output is read meanwhile, so the app never waits on a full pty."""
        deadline = time.monotonic() + timeout
        while self.exit_code is None:
            pid, status = os.waitpid(self.pid, os.WNOHANG)
            if pid:
                self.exit_code = os.waitstatus_to_exitcode(status)
                self.drain()
                break
            assert time.monotonic() < deadline, f"still running {timeout} s later:\n{self.text}"
            self._read(0.02)
        return self.exit_code

    def end(self) -> None:
        """Kill every process of the pty's session that is left, and reap the program."""
        self.close()
        for entry in os.listdir("/proc"):
            if entry.isdigit():
                with contextlib.suppress(OSError):
                    if os.getsid(int(entry)) == self.pid:
                        os.kill(int(entry), signal.SIGKILL)
        if self.exit_code is None:
            with contextlib.suppress(ChildProcessError):
                os.waitpid(self.pid, 0)


@contextlib.contextmanager
def shardbook(progress_dir: Path, prelude: str = "") -> Iterator[Terminal]:
    """shardbook on its own terminal, its lesson fully drawn; always ended afterwards."""
    terminal = Terminal(
        [sys.executable, "-c", prelude + RUN_APP, "--progress-dir", str(progress_dir)]
    )
    try:
        terminal.wait_for_text(LESSON_DRAWN)
        yield terminal
    finally:
        terminal.end()


def type_an_answer(terminal: Terminal, text: str = TYPED) -> None:
    """Go to the self-check questions through the palette and type into the first answer."""
    terminal.send("\x10")  # ctrl+p
    terminal.wait_for_text("🔎")
    terminal.send("自检")
    terminal.wait_for_text("Go to: 自检问题")
    terminal.send("\r")
    terminal.wait_for_text(strings.ANSWER_PLACEHOLDER.split(" (")[0])
    terminal.send(text)
    terminal.wait_for_text(text)


def whole_screen_drawn(terminal: Terminal) -> bool:
    """Header, footer, the outline's last section, the typed answer, and both pane borders on
    every row between: what a full repaint draws on an empty screen (a partial one does not)."""
    rows = terminal.rows
    return (
        rows[0].strip().startswith(strings.APP_TITLE)
        and "Quit" in rows[-1]
        and LESSON_DRAWN in terminal.text
        and TYPED in terminal.text
        and all(row.count("│") >= 2 for row in rows[1:-1])
    )


def saved_answers(progress_dir: Path) -> list[str]:
    return list(ProgressStore(progress_dir).load("S15").progress.answers.values())


# --------------------------------------------------------------------- closing the terminal
def test_closing_the_terminal_as_the_lesson_appears_saves_and_ends(tmp_path: Path) -> None:
    # A progress file from long ago: the save on SIGHUP rewrites its time stamp.
    ProgressStore(tmp_path).save(LessonProgress("S15", answers={"sc-1": "kept"}))
    path = tmp_path / "S15.yaml"
    path.write_text(path.read_text().replace("updated: '20", "updated: '19"))
    terminal = Terminal([sys.executable, "-c", RUN_APP, "--progress-dir", str(tmp_path)])
    try:
        # The moment the header names the lesson: the first frame is still being written.
        terminal.wait_for(lambda: b"S15" in terminal.output, "first paint")
        terminal.close()
        assert terminal.wait_exit() == 128 + signal.SIGHUP
    finally:
        terminal.end()
    progress = ProgressStore(tmp_path).load("S15").progress
    assert progress.answers == {"sc-1": "kept"}
    assert progress.updated.startswith("20")


def test_closing_the_terminal_during_a_save_keeps_the_text(tmp_path: Path) -> None:
    marker = tmp_path / "save-started"
    progress_dir = tmp_path / "progress"
    with shardbook(progress_dir, prelude_slow_save(marker)) as terminal:
        type_an_answer(terminal)
        terminal.wait_for(marker.exists, "autosave")
        terminal.close()
        assert terminal.wait_exit() == 128 + signal.SIGHUP
    assert saved_answers(progress_dir) == [TYPED]


@pytest.mark.parametrize(
    ("key", "shown"),
    [("\x1b[24~", strings.QUIZ_TITLE), ("\x1bOP", strings.HELP_TITLE)],  # F12 quiz, F1 help
    ids=["quiz", "help"],
)
def test_closing_the_terminal_over_another_screen_keeps_the_text(
    tmp_path: Path, key: str, shown: str
) -> None:
    with shardbook(tmp_path, PRELUDE_NO_AUTOSAVE) as terminal:
        type_an_answer(terminal)
        terminal.send(key)
        terminal.wait_for_text(shown)
        terminal.close()
        assert terminal.wait_exit() == 128 + signal.SIGHUP
    assert saved_answers(tmp_path) == [TYPED]


def session_processes(terminal: Terminal) -> list[str]:
    """The command lines of the processes of the pty's session that are still running."""
    found = []
    for entry in os.listdir("/proc"):
        with contextlib.suppress(OSError):
            if entry.isdigit() and os.getsid(int(entry)) == terminal.pid:
                stat = Path(f"/proc/{entry}/stat").read_text()
                if stat.rsplit(")", 1)[1].split()[0] not in ("Z", "X"):
                    found.append(Path(f"/proc/{entry}/cmdline").read_text().replace("\0", " "))
    return found


@pytest.mark.parametrize("ending", ["close", "ctrl+q"])
def test_ending_the_app_during_a_simulation_leaves_no_process(tmp_path: Path, ending: str) -> None:
    """The Bubble pane simulating 2 million ops (p = 100, m = 10,000) in its child process; the
    terminal closed, or ctrl+q: the app and the child are gone. The app runs under a shell that
    leads the session, as in a terminal window, and stays after ctrl+q: the kernel's SIGHUP to
    the foreground group when a session leader ends never comes to end the child for the app."""
    shell = '"$0" "$@"; echo "app ended: $?"; read stays'
    app = [sys.executable, "-c", PRELUDE_NO_AUTOSAVE + RUN_APP, "--progress-dir", str(tmp_path)]
    terminal = Terminal(["/bin/sh", "-c", shell, *app])
    try:
        terminal.wait_for_text(LESSON_DRAWN)
        terminal.send("\x1bOR")  # F3: the Bubble pane
        terminal.wait_for_text("Pipeline bubble")
        terminal.send("\t\x15100\t\x1510000")  # stages, then micro-batches: ctrl+u, typed
        terminal.wait_for_text("simulating 2,000,000 ops")
        terminal.wait_for(
            lambda: any("engine.pipeline.process" in line for line in session_processes(terminal)),
            "simulation process",
        )
        if ending == "close":
            terminal.close()
            terminal.wait_exit()  # the shell ends of the SIGHUP
            left: list[str] = []
        else:
            terminal.send("\x11")
            terminal.wait_for_text("app ended: 0")
            left = [f"/bin/sh -c {shell} "]
        terminal.wait_for(
            lambda: [line.split(sys.executable)[0] for line in session_processes(terminal)] == left,
            "end of every process but the shell",
            GONE_WITHIN,
        )
    finally:
        terminal.end()


# --------------------------------------------------------------------- signals
# SIGHUP with the terminal gone: the tests above; with it still there: test_never_lose_a_word.py.
@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_a_signal_right_after_typing_keeps_the_text(tmp_path: Path, signum: int) -> None:
    with shardbook(tmp_path, PRELUDE_NO_AUTOSAVE) as terminal:
        type_an_answer(terminal)
        terminal.signal(signum)
        assert terminal.wait_exit() == 128 + signum
        # The terminal is still open: the app left it as it found it (main screen, cursor on).
        assert terminal.output.rfind(b"\x1b[?1049l") > terminal.output.rfind(b"\x1b[?1049h")
        # Only logged: no session summary is printed after a signal.
        assert b"Session on S15" not in terminal.output
    assert saved_answers(tmp_path) == [TYPED]
    (session,) = ProgressStore(tmp_path).load("S15").progress.sessions
    assert session["answers_written"] == ["self-check-adam-memory"]


def test_ctrl_q_prints_the_session_summary_once_the_app_is_gone(tmp_path: Path) -> None:
    with shardbook(tmp_path) as terminal:
        type_an_answer(terminal)
        terminal.send("\x11")  # ctrl+q: quits at once, no question
        assert terminal.wait_exit() == 0
        after = terminal.output[terminal.output.rfind(b"\x1b[?1049l") :].decode()
    # Printed to the terminal the app gave back: what the session did and what comes next.
    assert "Session on S15" in after
    assert "answers written: 1\r\n  self-check 1: " in after
    assert "next: " in after and "reviews: 0 due now" in after


def test_a_stray_sigcont_starts_nothing_and_ctrl_q_saves_and_quits(tmp_path: Path) -> None:
    with shardbook(tmp_path, PRELUDE_NO_AUTOSAVE) as terminal:
        type_an_answer(terminal)
        terminal.send("\x1bOP")  # F1 (its Markdown starts a thread of its own)
        terminal.wait_for_text(strings.HELP_TITLE)
        threads = terminal.threads()
        terminal.signal(signal.SIGCONT)
        terminal.signal(signal.SIGCONT)
        # The signals arrived before this key: once it has closed the help, the loop saw them.
        terminal.send("\x1b")
        terminal.wait_for(lambda: strings.HELP_TITLE not in terminal.text, "help closed")
        assert terminal.threads() == threads
        terminal.send("\x11")  # ctrl+q
        assert terminal.wait_exit() == 0
    assert saved_answers(tmp_path) == [TYPED]


def test_textual_alone_still_starts_threads_on_a_stray_sigcont(tmp_path: Path) -> None:
    """What tui.driver works around; once this fails, Textual has fixed it (see its module
    docstring) and the resume guard can go."""
    with shardbook(tmp_path, PRELUDE_STOCK_DRIVER) as terminal:
        threads = terminal.threads()
        terminal.signal(signal.SIGCONT)
        terminal.wait_for(lambda: terminal.threads() > threads, "second writer and input thread")


def test_the_backstop_ends_an_exit_that_never_returns(tmp_path: Path) -> None:
    with shardbook(tmp_path, PRELUDE_NO_AUTOSAVE + PRELUDE_EXIT_HANGS) as terminal:
        type_an_answer(terminal)
        terminal.signal(signal.SIGTERM)
        assert terminal.wait_exit() == 128 + signal.SIGTERM
    assert saved_answers(tmp_path) == [TYPED]


# --------------------------------------------------------------------- suspend and resume
def test_sigtstp_saves_and_sigcont_redraws_the_whole_screen(tmp_path: Path) -> None:
    with shardbook(tmp_path, PRELUDE_NO_AUTOSAVE) as terminal:
        type_an_answer(terminal)
        terminal.signal(signal.SIGTSTP)
        terminal.wait_for(lambda: terminal.state() == "T", "stopped process")
        terminal.drain()  # it left application mode before it stopped
        assert saved_answers(tmp_path) == [TYPED]
        assert terminal.output.rfind(b"\x1b[?1049l") > terminal.output.rfind(b"\x1b[?1049h")
        # A terminal shows an empty alternate screen when the app enters it again.
        terminal.screen.reset()
        terminal.signal(signal.SIGCONT)
        terminal.wait_for(lambda: whole_screen_drawn(terminal), "whole screen", 3)
        terminal.send("\x11")
        assert terminal.wait_exit() == 0
    assert saved_answers(tmp_path) == [TYPED]


def test_ctrl_z_needs_a_shell_to_return_to(tmp_path: Path) -> None:
    with shardbook(tmp_path) as terminal:
        terminal.send("\x1a")  # ctrl+z; the app is the terminal's own program here
        terminal.wait_for_text("Nothing to suspend to")
        assert terminal.state() != "T"
        terminal.send("\x11")
        assert terminal.wait_exit() == 0


@contextlib.contextmanager
def suspended_in_a_shell(progress_dir: Path) -> Iterator[Terminal]:
    """An interactive bash (job control) on its own terminal that ran shardbook, where an
    answer was typed and ctrl+z pressed outside the text box; always ended afterwards."""
    bash = "/bin/bash"
    if not os.access(bash, os.X_OK):
        pytest.skip("needs bash for job control")
    terminal = Terminal([bash, "--norc", "--noprofile", "-i"])
    try:
        code = PRELUDE_NO_AUTOSAVE + RUN_APP
        command = shlex.join([sys.executable, "-c", code, "--progress-dir", str(progress_dir)])
        terminal.send(f"{command}\r")
        terminal.wait_for_text(LESSON_DRAWN)
        type_an_answer(terminal)
        terminal.send("\x0f")  # ctrl+o: to the outline, out of the text box
        terminal.send("\x1a")  # ctrl+z
        terminal.wait_for_text("Stopped")
        yield terminal
    finally:
        terminal.end()


def test_ctrl_z_in_a_shell_saves_suspends_and_fg_brings_it_back(tmp_path: Path) -> None:
    with suspended_in_a_shell(tmp_path) as terminal:
        assert saved_answers(tmp_path) == [TYPED]
        terminal.screen.reset()  # the terminal shows the shell now, not the app's last frame
        terminal.send("fg; echo exit=$?\r")
        terminal.wait_for(lambda: whole_screen_drawn(terminal), "whole screen", 3)
        terminal.send("\x11")
        terminal.wait_for_text("exit=0")
        terminal.send("exit\r")
        assert terminal.wait_exit() == 0


def test_closing_the_terminal_while_suspended_ends_the_app(tmp_path: Path) -> None:
    with suspended_in_a_shell(tmp_path) as terminal:
        children = Path(f"/proc/{terminal.pid}/task/{terminal.pid}/children").read_text()
        (app_pid,) = map(int, children.split())
        stat = Path(f"/proc/{app_pid}/stat")
        terminal.close()  # bash passes the SIGHUP on, with a SIGCONT, to its stopped job
        # Not our child, so no exit code here: gone, or a zombie nobody reaped yet.
        deadline = time.monotonic() + GONE_WITHIN
        while stat.exists() and stat.read_text().rsplit(")", 1)[1].split()[0] != "Z":
            assert time.monotonic() < deadline, "still running 3 s after the terminal closed"
            time.sleep(0.02)
        assert terminal.wait_exit() == -signal.SIGHUP  # bash, ended by the signal itself
    assert saved_answers(tmp_path) == [TYPED]


# --------------------------------------------------------------------- in-process
async def test_ctrl_z_undoes_in_a_text_box_and_suspend_is_a_palette_command(
    tmp_path: Path, notified: Notified
) -> None:
    app = make_app(progress_dir=tmp_path, autosave_delay=60)
    async with app.run_test(size=(COLUMNS, ROWS), message_hook=notified.hook) as pilot:
        app.main_screen.show_section("self-check")
        await pilot.pause()
        area = app.query("#reading TextArea").first(TextArea)
        area.focus()
        await pilot.press(*"undo me")
        await pilot.press("ctrl+z")
        await pilot.pause()
        assert area.text == "" and not notified.messages
        await pilot.press("ctrl+p", *"suspend")
        palette = app.screen
        await wait_until(
            pilot, lambda: palette.query(CommandList).first(CommandList).option_count > 0
        )
        await pilot.press("enter")
        await pilot.pause()
        # Headless there is no shell to suspend to, and the app says so.
        assert notified.messages == [strings.CANNOT_SUSPEND]


# --------------------------------------------------------------------- keys in one read
def test_escape_and_a_key_in_one_read_leave_the_box_then_run_the_key(tmp_path: Path) -> None:
    """ESC ] in one write, as ``tmux send-keys Escape ]`` or a fast typist over SSH sends them:
    Textual's parser read it as ``]`` alone, typed into the answer box (tests/test_key_parser.py
    has the parser's side). The driver's keys are Escape, which leaves the box, then ``]``,
    which reads on."""
    with shardbook(tmp_path, PRELUDE_NO_AUTOSAVE) as terminal:
        type_an_answer(terminal)
        assert "自检问题" in terminal.rows[1]
        terminal.send("\x1b]")
        terminal.wait_for(lambda: "专业课程对齐" in terminal.rows[1], "next section", 10)
        terminal.send("\x11")  # ctrl+q
        assert terminal.wait_exit() == 0
    assert saved_answers(tmp_path) == [TYPED]


def test_a_paste_with_an_escape_then_editing_keys_is_saved_as_pasted_then_edited(
    tmp_path: Path,
) -> None:
    """A bracketed paste holding an ESC (tmux's ``paste-buffer -p`` passes it on raw), then End,
    two backspaces and 7B, in one write: Textual's parser typed the text after the ESC first,
    ``^`` for the ESC, and pasted the rest after it (tests/test_key_parser.py has the parser's
    side). The answer is the typed text, the paste byte for byte, then the edit."""
    with shardbook(tmp_path, PRELUDE_NO_AUTOSAVE) as terminal:
        type_an_answer(terminal)
        terminal.send("\x1b[200~x\ty\x1b[1mz\x1b[201~\x1b[F\x7f\x7f7B")
        terminal.wait_for_text("y\u241b[17B")  # the ESC drawn as its control picture
        terminal.send("\x11")  # ctrl+q
        assert terminal.wait_exit() == 0
    assert saved_answers(tmp_path) == [TYPED + "x\ty\x1b[17B"]


# --------------------------------------------------------------------- keys during the start-up
def test_keys_typed_while_the_app_starts_reach_it_unedited(tmp_path: Path) -> None:
    # The app's modules take a while to import; keys typed meanwhile, in a terminal still in
    # canonical mode, would be echoed onto the shell's screen and edited by the kernel (the
    # backspaces erasing bytes of the End key). The prelude makes the wait long, and says when
    # it starts: after the command line has read its arguments, before the app exists.
    starting = tmp_path / "starting"
    prelude = (
        "import time\n"
        "from pathlib import Path\n"
        "import tui.app\n"
        "_make_app = tui.app.make_app\n"
        "def slow_make_app(**options):\n"
        f"    Path({str(starting)!r}).touch()\n"
        "    time.sleep(1.0)\n"
        "    return _make_app(**options)\n"
        "tui.app.make_app = slow_make_app\n"
    )
    progress_dir = tmp_path / "progress"
    progress_dir.mkdir()
    terminal = Terminal(
        [sys.executable, "-c", prelude + RUN_APP, "--progress-dir", str(progress_dir)]
    )
    try:
        terminal.wait_for(starting.exists, "start of the app's making")
        terminal.send("\x1bOQ\x1b[F\x7f\x7f7B")  # F2, End, two backspaces, 7B
        terminal.wait_for_text(LESSON_DRAWN)
        assert b"^[" not in terminal.output, "keys echoed by the terminal"
        terminal.wait_for(lambda: "7B" in terminal.text, "7B in the Ledger's parameters")
        terminal.send("\x11")  # ctrl+q
        assert terminal.wait_exit() == 0
        # The terminal is given back in the modes it had: canonical input and echo.
        assert terminal._fd is not None
        local_modes = termios.tcgetattr(terminal._fd)[3]
        assert local_modes & termios.ICANON and local_modes & termios.ECHO
    finally:
        terminal.end()
    forms = ProgressStore(progress_dir).load("S15").progress.forms
    assert forms["ledger"]["params"] == "7B"
