"""What a change lays out: a change that keeps every widget's size repaints the widget, and the
screen is not laid out again for it (a layout places every widget of the screen, then draws
them all).

Layouts are counted with Textual's own messages: a widget whose size may have changed posts
``textual.messages.Layout`` to its screen, which lays the screen out on its next frame; the
tests record those messages through ``run_test``'s ``message_hook``.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from textual import messages
from textual.app import App, ComposeResult
from textual.dom import DOMNode
from textual.message import Message
from textual.widget import Widget
from textual.widgets import Static
from textual.widgets._footer import FooterKey

from tests.pilot_helpers import (
    SIZE,
    app_for,
    goto_section,
    paste,
    screen_lines,
    shown,
    wait_until,
)
from tui.widgets.footer import KeysFooter
from tui.widgets.header import FittingHeader, OneLineTitle
from tui.widgets.notes import SelfCheckBox
from tui.widgets.reader import BrokenText


class Layouts:
    """The widgets that asked their screen for a layout, in order (``message_hook``)."""

    def __init__(self) -> None:
        self.widgets: list[Widget] = []

    def hook(self, message: Message) -> None:
        if isinstance(message, messages.Layout):
            self.widgets.append(message.widget)

    def of(self, kind: type[Widget]) -> list[Widget]:
        return [widget for widget in self.widgets if isinstance(widget, kind)]


async def test_a_save_changes_the_header_line_without_laying_the_screen_out(
    tmp_path: Path,
) -> None:
    # Each save changes the status line (its time, "not saved" gone); the header's title is one
    # line as wide as the header, so a new status line is drawn in the same place.
    layouts = Layouts()
    app = app_for(tmp_path)
    async with app.run_test(size=SIZE, message_hook=layouts.hook) as pilot:
        await goto_section(pilot, app, "self-check")
        header = app.main_screen.query_one(FittingHeader)
        title = header.query_one(OneLineTitle)
        before = shown(title)
        assert "saved" not in app.sub_title
        layouts.widgets.clear()  # the first frame's
        box = app.query(SelfCheckBox).first()
        await paste(pilot, box.text_area, "an answer")
        await wait_until(pilot, lambda: not app.dirty and "saved" in app.sub_title)
        await pilot.pause()
        # The new line is drawn, fitted to the header as before.
        assert shown(title) != before
        assert shown(title).strip() == header.format_title().plain
        assert screen_lines(app)[0].strip() == header.format_title().plain
        assert layouts.of(OneLineTitle) == []


async def test_a_text_of_as_many_lines_is_repainted_a_longer_one_laid_out() -> None:
    class OneText(App[None]):
        def compose(self) -> ComposeResult:
            yield BrokenText("shard the optimizer states", id="text")

    layouts = Layouts()
    app = OneText()
    async with app.run_test(size=(40, 10), message_hook=layouts.hook) as pilot:
        text = app.query_one("#text", BrokenText)
        await pilot.pause()
        assert text.size.height == 1
        layouts.widgets.clear()

        text.update("shard the gradients too")  # one line at 40 columns, as before
        await pilot.pause()
        assert text.lines == ["shard the gradients too"]
        assert screen_lines(app)[0] == "shard the gradients too"
        assert layouts.of(BrokenText) == []

        text.update("shard the gradients too")  # the same text: nothing to draw
        await pilot.pause()
        assert layouts.of(BrokenText) == []

        longer = "ZeRO-3 shards the parameters, the gradients and the optimizer states"
        text.update(longer)  # two lines: the screen is laid out for its new height
        await pilot.pause()
        assert set(layouts.of(BrokenText)) == {text}
        assert text.size.height == len(text.lines) == 2
        assert screen_lines(app)[:2] == text.lines


async def test_the_footer_keys_of_a_new_focus_are_styled_once_when_mounted(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A footer key is mounted in the footer's style; restyling it again (compact, then not) after
    # every change of focus styled each key three times.
    app = app_for(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        footer = app.main_screen.query_one(KeysFooter)
        restyled: list[object] = []
        update_styles = app.update_styles

        def counted(node: DOMNode, animate: bool = True) -> None:
            restyled.append(node)
            update_styles(node, animate)

        monkeypatch.setattr(app, "update_styles", counted)
        before = set(footer.query(FooterKey))
        await pilot.press("f2")  # the Ledger: its keys in the footer
        await wait_until(pilot, lambda: not before & set(footer.query(FooterKey)))
        await pilot.pause()
        keys = [key for key in footer.query(FooterKey) if not key.has_class("-command-palette")]
        assert any(key.action.endswith("example") for key in keys)
        for key in keys:
            assert key.compact == footer.compact
            assert key.has_class("-compact") == footer.compact
        assert [node for node in restyled if isinstance(node, FooterKey)] == []


async def test_the_hidden_too_small_message_asks_no_layout_and_is_right_when_shown(
    tmp_path: Path,
) -> None:
    # The too-small message is rewritten on each resize; Static.update asks for a layout even
    # for the same text, so a live resize at a usable size laid the screen out once more per size.
    layouts = Layouts()
    app = app_for(tmp_path)
    async with app.run_test(size=SIZE, message_hook=layouts.hook) as pilot:
        await pilot.pause()
        too_small = app.main_screen.query_one("#too-small", Static)
        layouts.widgets.clear()
        for width in (81, 82, 80):
            await pilot.resize_terminal(width, 24)
            await pilot.pause()
        assert too_small not in layouts.widgets
        await pilot.resize_terminal(30, 8)  # under 40x12: only the message is shown
        await wait_until(pilot, lambda: too_small.display)
        await pilot.pause()
        assert "30x8" in " ".join(screen_lines(app))
