"""Helpers shared by the tests that drive the app through Textual's Pilot.

Everything here reads the app through Textual's public API: what a widget shows
(``Static.content``, ``ResultView``), the screen as the learner sees it (its SVG screenshot,
:func:`screen_lines`), the messages the app posts (``run_test``'s ``message_hook``,
:class:`Notified`), keys, bursts of keys (:func:`burst`) and pastes. Two exceptions:
:func:`terminal_keys` makes key events with Textual's own terminal parser, which is private
(:func:`terminal_read` uses the app's driver's parser, :mod:`tui.driver`, built on it), and
:class:`TerminalCopy` plays what the app sends to the terminal (``App._display``) into a terminal
emulator, and compares it with the screen drawn whole (the screen's compositor).
"""

from __future__ import annotations

import contextlib
import html
import io
import re
import time
from collections.abc import Callable
from pathlib import Path

import pyte
from rich.cells import cell_len
from rich.console import Console, RenderableType
from textual import events
from textual._compositor import CompositorUpdate, LayoutUpdate
from textual._xterm_parser import XTermParser
from textual.keys import Keys
from textual.message import Message
from textual.notifications import Notification, Notify
from textual.pilot import Pilot
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import Input, Select, Static, TextArea

from tui.app import ShardbookApp, make_app
from tui.driver import EscapeFirstParser
from tui.keys import KeyOrderApp
from tui.widgets.calculator import ResultView
from tui.widgets.reader import BrokenText

ROOT = Path(__file__).resolve().parent.parent
S15_FILE = ROOT / "content" / "S15.yaml"
SIZE = (80, 24)
"""The terminal size every Pilot test runs at: the smallest the app is designed for."""


def shown(widget: Static | ResultView, width: int = 120) -> str:
    """The text a Static or a calculator's result shows, as plain text (a no-break space, which
    keeps a field's label on one line, read as the space it looks like, as in
    :func:`screen_lines`)."""
    console = Console(width=width, record=True, file=io.StringIO())
    console.print(widget.content)
    return console.export_text().replace("\xa0", " ")


def reading_text(app: ShardbookApp) -> str:
    """Everything the reading pane shows, as plain text: its messages and hints (Statics) and the
    lesson text it broke into lines. The main screen's (``app.query`` would read the first one,
    replaced after a language switch)."""
    screen = app.main_screen
    parts = [shown(static, width=200) for static in screen.query("#reading Static")]
    parts.extend(text.text for text in screen.query("#reading BrokenText").results(BrokenText))
    return "\n".join(parts)


def result_text(pane: Widget) -> str:
    """A calculator pane's result: the figures and, below them, the details (formulas,
    sources, timelines), drawn one frame later."""
    return shown(pane.query_one(".calc-result", ResultView)) + shown(
        pane.query_one(".calc-details", ResultView)
    )


def app_for(progress_dir: Path, delay: float = 0.05) -> ShardbookApp:
    """The app on ``progress_dir``, saving ``delay`` seconds after the last key."""
    return make_app(progress_dir=progress_dir, autosave_delay=delay)


class Notified:
    """Every notification the app posts: pass :meth:`hook` as ``run_test``'s ``message_hook``."""

    def __init__(self) -> None:
        self.notifications: list[Notification] = []

    def hook(self, message: Message) -> None:
        if isinstance(message, Notify):
            self.notifications.append(message.notification)

    @property
    def messages(self) -> list[str]:
        # What was said (``text``), not the lines the toast broke it into (tui/toasts.py).
        return [
            getattr(notification, "text", notification.message)
            for notification in self.notifications
        ]


async def wait_until(pilot: Pilot[int], done: Callable[[], bool], timeout: float = 10.0) -> None:
    """Let the app run until ``done()`` is true (an autosave, a worker's result), at most
    ``timeout`` seconds; fail with the condition's name otherwise.

    Each look first waits for every widget of the screen to handle its queued messages, which
    costs CPU time in proportion to the widgets; the looks come 10 ms apart at first, then
    further apart up to 50 ms, so a long wait (a simulation process, a save) leaves the CPU to
    the other tests instead of polling it away."""
    deadline = time.monotonic() + timeout
    delay = 0.01
    while not done():
        assert time.monotonic() < deadline, f"timed out waiting for {done}"
        await pilot.pause(delay)
        delay = min(2 * delay, 0.05)


async def params_field(pilot: Pilot[int], app: ShardbookApp) -> Input:
    """The Ledger's ``params`` field, once the Ledger (built when first shown) has it."""
    await wait_until(pilot, lambda: bool(app.main_screen.query("#field-params")))
    return app.main_screen.query_one("#field-params", Input)


async def type_into(pilot: Pilot[int], widget: Input, text: str) -> None:
    """Replace a field's text by typing it, key by key."""
    widget.focus()
    await pilot.press("end", "ctrl+u", *text)
    await pilot.pause()


async def paste_into(pilot: Pilot[int], widget: Input, text: str) -> None:
    """Replace the field's text in one go (typing would pass through valid prefixes)."""
    widget.focus()
    await pilot.press("end", "ctrl+u")
    pilot.app.post_message(events.Paste(text))
    await pilot.pause()


async def paste(pilot: Pilot[int], area: TextArea, text: str) -> None:
    """Paste ``text`` into a text box."""
    area.focus()
    area.app.post_message(events.Paste(text))
    await pilot.pause()


async def write(pilot: Pilot[int], area: TextArea, text: str) -> None:
    """Type the first few plain characters with keys, paste the rest (tabs, escapes, CJK)."""
    area.focus()
    head = "ok "
    await pilot.press(*head)
    pilot.app.post_message(events.Paste(text))
    await pilot.pause()
    assert area.text == head + text


async def settle(pilot: Pilot[int]) -> None:
    """Wait for the app's workers (a report, a simulation, an export) and the frame that shows
    what they made."""
    await pilot.app.workers.wait_for_complete()
    await pilot.pause()


async def choose(
    pilot: Pilot[int], select: Select[str], value: str, typed: str | None = None
) -> None:
    """Pick ``value`` in a Select with the keyboard: open it, type to search (``typed``, else
    the value: most options' labels contain their value), enter; then wait for the work the
    choice started."""
    select.focus()
    await pilot.press("enter")
    await pilot.pause()
    await pilot.press(*(value if typed is None else typed), "enter")
    await pilot.pause()
    assert select.value == value
    await settle(pilot)


async def goto_section(pilot: Pilot[int], app: ShardbookApp, section_id: str) -> None:
    """Read on with ``]`` (from the reader: in a text box ``]`` is typed) up to a section."""
    app.main_screen.set_focus(app.query_one("#reading"))
    while app.main_screen.current_section != section_id:
        await pilot.press("right_square_bracket")
        await pilot.pause()


CELL = re.compile(
    r'<text[^>]*x="([\d.]+)"[^>]*clip-path="url\(#[\w-]+-line-(\d+)\)">([^<]*)</text>'
)


def screen_lines(app: ShardbookApp, columns: tuple[int, int] | None = None) -> list[str]:
    """The terminal's lines as the learner sees them, read from Textual's SVG screenshot (each
    run of text sits at its column, 12.2 units per cell); ``columns``: only the cells from the
    first to before the second (a widget's region, whatever wide characters lie left of it)."""
    width, height = app.size
    rows = [[" "] * (width + 2) for _ in range(height)]
    for x, line, text in CELL.findall(app.export_screenshot()):
        column = round(float(x) / 12.2)
        for char in html.unescape(text).replace("\n", ""):
            if int(line) < height and column < len(rows[0]):
                rows[int(line)][column] = char
                if cell_len(char) == 2 and column + 1 < len(rows[0]):
                    rows[int(line)][column + 1] = ""  # the second cell of a wide character
            column += cell_len(char)
    start, end = columns if columns is not None else (0, len(rows[0]))
    return ["".join(row[start:end]).replace("\xa0", " ").rstrip() for row in rows]


# What a terminal sends for these keys: the character a Key event carries.
CHARACTERS = {"tab": "\t", "shift+tab": None, "backspace": "\x7f", "space": " ", "enter": "\r"}


def terminal_keys(text: str) -> list[events.Key]:
    """The key events Textual's driver makes of ``text`` typed at a terminal: one per code point.

    The one private name of Textual the tests use: its terminal parser (``textual._xterm_parser``).
    No public API turns typed bytes into key events, and the tests of key order and of emoji
    typed as keys need exactly what a terminal's bytes become (its key names, ``question_mark``
    for ``?``, and the zero-width joiners Textual calls unprintable); Pilot's ``press`` builds
    its events another way. Textual is pinned exactly (pyproject.toml), so this cannot move
    under the tests."""
    return list(XTermParser().feed(text))


def key(name: str) -> events.Key:
    """The key event for ``name``; a character as the terminal driver names it ("?" is
    ``question_mark``)."""
    if len(name) == 1:
        (event,) = terminal_keys(name)
        return event
    return events.Key(name, CHARACTERS.get(name))


def keys(*names: str) -> list[str]:
    """Key names; a multi-character word that is not a key name (Textual's ``Keys``, or a
    character's name such as ``question_mark``) is split into characters."""
    named = set(CHARACTERS) | {key.value for key in Keys}
    return [part for name in names for part in ([name] if name in named else list(name))]


async def burst(app: KeyOrderApp[object], *names: str) -> None:
    """Post every key at once, then wait until the app has handled them all."""
    for name in keys(*names):
        app.post_message(key(name))
    await app.keys_done()


async def terminal_read(app: KeyOrderApp[object], data: str) -> None:
    """Post the keys, pastes and mouse events shardbook's driver makes of ``data`` read from the
    terminal at once (its parser, :class:`tui.driver.EscapeFirstParser`), then wait until the
    app has handled the keys and pastes."""
    for message in EscapeFirstParser().feed(data):
        if isinstance(message, events.Key | events.Paste | events.MouseEvent):
            app.post_message(message)
    await app.keys_done()


class TerminalCopy:
    """What a terminal ``size`` cells big shows of the app: every update the app sends
    (``App._display``, which a headless app otherwise drops) played into a terminal emulator
    (pyte)."""

    def __init__(self, app: ShardbookApp, size: tuple[int, int] = SIZE) -> None:
        width, height = self.size = size
        self.console = Console(width=width, height=height, force_terminal=True)
        self.terminal = pyte.Screen(width, height)
        self.stream = pyte.Stream(self.terminal)
        self.app = app
        display = app._display

        def shown(screen: Screen[object], renderable: RenderableType | None) -> None:
            if isinstance(renderable, CompositorUpdate):
                self.stream.feed(renderable.render_segments(self.console))
            display(screen, renderable)

        app._display = shown  # type: ignore[method-assign]

    def lines(self) -> list[str]:
        return _rows(self.terminal)

    def repainted(self) -> list[str]:
        """The screen drawn whole now (what a resize shows), played into a blank terminal; the
        regions waiting for the next frame stay marked (Textual's full update clears them)."""
        compositor = self.app.screen._compositor
        strips = compositor.render_strips()
        terminal = pyte.Screen(*self.size)
        update = LayoutUpdate([[strip] for strip in strips], compositor.size.region)
        pyte.Stream(terminal).feed(update.render_segments(self.console))
        return _rows(terminal)

    async def drawn_whole(self, pilot: Pilot[int]) -> list[str]:
        """The terminal once the frames have drawn what a repaint draws (at most 3 s)."""
        with contextlib.suppress(AssertionError):
            await wait_until(pilot, lambda: self.lines() == self.repainted(), timeout=3)
        lines, repainted = self.lines(), self.repainted()
        assert lines == repainted, [
            (y, shown, drawn)
            for y, (shown, drawn) in enumerate(zip(lines, repainted, strict=True))
            if shown != drawn
        ]
        return lines


def _rows(terminal: pyte.Screen) -> list[str]:
    # Cell by cell: the second cell of a double-width character holds "". pyte's ``display``
    # fails on such a cell left behind a narrow character (the first half written over).
    width = terminal.columns
    return [
        "".join(row[x].data for x in range(width)).rstrip()
        for row in (terminal.buffer[y] for y in range(terminal.lines))
    ]
