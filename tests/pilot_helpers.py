"""Helpers shared by the tests that drive the app through Textual's Pilot.

Everything here reads the app through Textual's public API: what a widget shows
(``Static.content``, ``ResultView``), the messages the app posts (``run_test``'s
``message_hook``, :class:`Notified`), keys and pastes.
"""

from __future__ import annotations

import io
import time
from collections.abc import Callable
from pathlib import Path

from rich.console import Console
from textual import events
from textual.message import Message
from textual.notifications import Notification, Notify
from textual.pilot import Pilot
from textual.widget import Widget
from textual.widgets import Input, Select, Static, TextArea

from tui.app import ShardbookApp, make_app
from tui.widgets.calculator import ResultView
from tui.widgets.reader import BrokenText

ROOT = Path(__file__).resolve().parent.parent
S15_FILE = ROOT / "content" / "S15.yaml"
SIZE = (80, 24)
"""The terminal size every Pilot test runs at: the smallest the app is designed for."""


def shown(widget: Static | ResultView, width: int = 120) -> str:
    """The text a Static or a calculator's result shows, as plain text."""
    console = Console(width=width, record=True, file=io.StringIO())
    console.print(widget.content)
    return console.export_text()


def reading_text(app: ShardbookApp) -> str:
    """Everything the reading pane shows, as plain text: its messages and hints (Statics) and the
    lesson text it broke into lines."""
    parts = [shown(static, width=200) for static in app.query("#reading Static")]
    parts.extend(text.text for text in app.query("#reading BrokenText").results(BrokenText))
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
        return [notification.message for notification in self.notifications]


async def wait_until(pilot: Pilot[int], done: Callable[[], bool], timeout: float = 10.0) -> None:
    """Let the app run until ``done()`` is true (an autosave, a worker's result), at most
    ``timeout`` seconds; fail with the condition's name otherwise."""
    deadline = time.monotonic() + timeout
    while not done():
        assert time.monotonic() < deadline, f"timed out waiting for {done}"
        await pilot.pause(0.01)


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


async def choose(pilot: Pilot[int], select: Select[str], value: str) -> None:
    """Pick ``value`` in a Select with the keyboard: open it, type to search (the option's label
    contains its value), enter."""
    select.focus()
    await pilot.press("enter")
    await pilot.pause()
    await pilot.press(*value, "enter")
    await pilot.pause()
    assert select.value == value


async def goto_section(pilot: Pilot[int], app: ShardbookApp, section_id: str) -> None:
    """Read on with ``]`` (from the reader: in a text box ``]`` is typed) up to a section."""
    app.main_screen.set_focus(app.query_one("#reading"))
    while app.main_screen.current_section != section_id:
        await pilot.press("right_square_bracket")
        await pilot.pause()
