"""Messages (toasts) at 80x24, through Textual's Pilot: one at a time, a hint is short, the bar
spans the screen between the header and the footer (a toast's side edge inside a double-width
character left it blank after the toast went, tui/toasts.py says why), and it moves off the
field the learner is typing in."""

from __future__ import annotations

from functools import partial
from pathlib import Path

import pytest
from rich.cells import cell_len
from textual.widget import Widget
from textual.widgets import TextArea

from tests.pilot_helpers import (
    SIZE,
    Notified,
    TerminalCopy,
    app_for,
    screen_lines,
    wait_until,
)
from tui import strings
from tui.app import ShardbookApp, make_app
from tui.screens.quiz import QuizOptions
from tui.toasts import HINT_SECONDS


def _toast_reads(app: ShardbookApp, message: str) -> bool:
    return [str(toast.render()) for toast in toasts(app)] == [message]


def toasts(app: ShardbookApp) -> list[Widget]:
    """The toasts on screen, found by their type's name (Textual does not export the class)."""
    return list(app.screen.query("Toast"))


async def test_a_new_message_replaces_the_one_on_screen_whatever_its_kind(
    tmp_path: Path,
) -> None:
    app = app_for(tmp_path)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await pilot.pause()
        app.notify("first, a hint")
        await pilot.pause()
        # Two in one go (a step's message, then a warning about the same key), none waiting.
        app.notify("second, a hint")
        app.notify("third, a warning", severity="warning")
        await pilot.pause()
        await pilot.pause()
        assert [str(toast.render()) for toast in toasts(app)] == ["third, a warning"]
        # Back on the lesson, Textual shows again every notification the app still keeps.
        await pilot.press("f1", "escape")
        await pilot.pause()
        assert [str(toast.render()) for toast in toasts(app)] == ["third, a warning"]


async def test_a_hint_is_short_and_an_error_keeps_its_time(
    tmp_path: Path, notified: Notified
) -> None:
    app = app_for(tmp_path)
    async with app.run_test(size=SIZE, notifications=True, message_hook=notified.hook) as pilot:
        await pilot.pause()
        app.notify("a hint", timeout=20)
        app.notify("an error", severity="error", timeout=20)
        await pilot.pause()
        assert [n.timeout for n in notified.notifications] == [HINT_SECONDS, 20]


async def test_a_long_message_spans_the_screen_between_header_and_footer(
    tmp_path: Path,
) -> None:
    """The whole width: no side edge of the toast can fall inside a Chinese character. A
    message of 20 lines' worth at the toast's old width stays off the footer."""
    app = app_for(tmp_path)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await pilot.press("f2")  # the side pane beside the lesson: two panes under the toast
        await pilot.pause()
        app.notify("选一个假想 1B 参数模型，列出参数、梯度、Adam 状态与 activation 四栏。" * 12)
        await pilot.pause()
        await pilot.pause()
        (toast,) = toasts(app)
        width, height = SIZE
        assert toast.region.x == 0 and toast.region.right == width
        assert toast.region.y >= 1  # the header's row stays
        assert toast.region.bottom <= height - 1  # the footer's row stays


async def test_a_message_moves_off_the_answer_box_being_typed_in(tmp_path: Path) -> None:
    """In the quiz the answer box is at the top: a refusal (an empty answer submitted) is shown
    above the footer instead, and the box stays in view."""
    quiz = QuizOptions(open_at_start=True, seed=11)
    app = make_app(progress_dir=tmp_path, autosave_delay=0.05, quiz=quiz)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await pilot.pause()
        answer = app.focused
        assert isinstance(answer, TextArea)
        await pilot.press("ctrl+r")
        await pilot.pause()
        await pilot.pause()
        (toast,) = toasts(app)
        assert app.focused is answer
        assert not toast.region.overlaps(answer.region)
        # A message long enough to reach the box goes right above the footer.
        app.notify("long " * 200, severity="warning")
        await pilot.pause()
        await pilot.pause()
        (toast,) = toasts(app)
        assert not toast.region.overlaps(answer.region)
        assert toast.region.bottom == SIZE[1] - 1


async def test_a_message_in_chinese_over_the_pane_edges_shows_every_character(
    tmp_path: Path,
) -> None:
    """The toast lies over the lesson, the side pane and the edge between them: each Chinese
    character of its one line shows, whichever column an edge falls in (the text starting on
    an even or an odd column). Textual cut a character lying across an edge behind the toast
    into two spaces (Textualize/textual#6357); the main screen's compositor does not."""
    line = "第一步：先读一句话定义，再打开账本填写参数量与精度，然后比较三种约定的总量"
    app = app_for(tmp_path)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await pilot.press("f2")  # the side pane beside the lesson: pane edges under the toast
        await pilot.pause()
        for message in (line, f"a{line}"):
            app.notify(message)
            await wait_until(pilot, partial(_toast_reads, app, message))
            await pilot.pause()
            assert any(message in row.replace(" ", "") for row in screen_lines(app))


@pytest.mark.parametrize("size", [(160, 50), (120, 40)])
async def test_ctrl_ns_messages_keep_every_character_while_the_outline_repaints(
    tmp_path: Path, notified: Notified, monkeypatch: pytest.MonkeyPatch, size: tuple[int, int]
) -> None:
    """At 120 columns and wider the outline is a column beside the lesson, under the message.
    The save after each ctrl+n (half a second later) redraws the outline's plan marks, and the
    terminal got the message's line cut at the outline's edge: the Chinese character across it
    was written as a space, which erased it (``学习目 .`` for 学习目标 at 160x50, `` 习目标.``
    at 120x40) until the next message. After each of ctrl+n's first 8 steps (4 objectives to
    rate, then the sections to read) and its save, every line of the message is on the
    terminal."""
    monkeypatch.setattr("tui.toasts.HINT_SECONDS", 60)  # up until the next one, however slow
    app = make_app(progress_dir=tmp_path)  # the learner's save delay
    terminal = TerminalCopy(app, size)
    async with app.run_test(size=size, notifications=True, message_hook=notified.hook) as pilot:
        await pilot.pause()
        for _ in range(8):
            await pilot.press("ctrl+n")
            await wait_until(pilot, lambda: not app.unsaved and not app.store.writing)
            await pilot.pause()
            lines = await terminal.drawn_whole(pilot)
            (toast,) = toasts(app)
            for line in str(toast.render()).split("\n"):
                assert any(line in row for row in lines), (line, lines[toast.region.y])
        assert notified.messages[-3:] == [
            "Step 2/25: read 学习目标.",
            "Step 3/25: read 核心知识.",
            "Step 4/25: read 机制与推导.",
        ]


CLOSING = "，。、；：！？）」』”"


async def test_a_message_is_broken_by_the_lessons_rules_and_again_on_resize(
    tmp_path: Path, notified: Notified
) -> None:
    """A Chinese message is broken as the lesson is (UAX #14 and kinsoku): no line of the toast
    starts with closing punctuation, at any width, and after a resize too; the text is shown
    literally ('[b]' stays) and what was said is kept whole (``text``)."""
    message = (
        "[b]另一个 shardbook 窗口正在使用这个进度文件夹，所以本窗口只读：你输入的内容保留在这里，"
        "不会保存。关闭另一个窗口后按 ctrl+s（两个窗口的修改会合并），或按 F8 导出。"
    )
    app = app_for(tmp_path)
    async with app.run_test(size=SIZE, notifications=True, message_hook=notified.hook) as pilot:
        await pilot.pause()
        for width in (80, 61, 60, 59, 47, 46, 45, 44, 41, 40):
            await pilot.resize_terminal(width, 24)
            app.notify(message, severity="warning")
            await pilot.pause()
            await pilot.pause()
            (toast,) = toasts(app)
            region = toast.content_region
            shown = [row[region.x :].strip() for row in screen_lines(app)[region.y : region.bottom]]
            assert not [row for row in shown if row[:1] in CLOSING], (width, shown)
            lines = str(toast.render()).split("\n")
            assert len(lines) == len(shown)
            assert "".join(lines).replace(" ", "") == message.replace(" ", "")
            assert all(cell_len(line) <= toast.content_region.width for line in lines), width
        assert {n.text for n in notified.notifications} == {message}
        # Resized while on screen: broken again for the new width.
        await pilot.resize_terminal(53, 24)
        await pilot.pause()
        await pilot.pause()
        (toast,) = toasts(app)
        lines = str(toast.render()).split("\n")
        assert not [line for line in lines if line[:1] in CLOSING], lines
        assert max(cell_len(line) for line in lines) <= toast.content_region.width <= 50


async def test_the_not_typed_hint_is_broken_by_the_lessons_rules(tmp_path: Path) -> None:
    """The hint for keys typed outside a text box is broken like every other message: in Chinese
    at 40x12 it was wrapped by Textual at its spaces (a line ended after ``；Tab ... F1`` with
    cells free, ``列出全部按键。`` on the next), its lines now are the lesson's line breaks
    at the toast's width, the hint's words filling each line."""
    from engine.linebreak import break_text

    app = make_app(progress_dir=tmp_path, language="zh")
    async with app.run_test(size=(40, 12), notifications=True) as pilot:
        await pilot.pause()
        await pilot.press("x", "y")
        await wait_until(pilot, lambda: len(toasts(app)) == 1)
        await pilot.pause()
        (toast,) = toasts(app)
        width = toast.content_region.width
        text = strings.KEY_NOT_TYPED.format(text="xy")
        assert text.startswith("未输入")
        expected = [line.rstrip(" ") for line in break_text(text, width)]
        assert str(toast.render()).split("\n") == expected
        region = toast.content_region
        shown = [row[region.x :].rstrip() for row in screen_lines(app)[region.y : region.bottom]]
        assert [row.rstrip() for row in shown] == expected, shown


async def test_ctrl_ns_message_leaves_the_side_panes_tabs_in_sight(
    tmp_path: Path, notified: Notified
) -> None:
    """At 80x24 ctrl+n's message (the step it took the learner to, the Ledger's first field)
    was drawn over the side pane's tab row for its 4 seconds: it starts under the tabs, and
    the field and the figures are not under it either."""
    app = app_for(tmp_path)
    async with app.run_test(size=SIZE, notifications=True, message_hook=notified.hook) as pilot:
        await pilot.pause()
        for _ in range(16):
            await pilot.press("ctrl+n")
            await pilot.pause()
            if "exercise 1" in notified.messages[-1]:
                break
        assert "exercise 1" in notified.messages[-1]
        tabs = app.main_screen.query_one("SideTabs Tabs")
        # Exercise 1's first input not given yet: the sequence length (its activations).
        field = app.query_one("#field-seq")
        assert app.focused is field

        def clear_of_the_tabs() -> bool:
            shown = toasts(app)
            return (
                len(shown) == 1
                and tabs.region.height > 0
                and not shown[0].region.overlaps(tabs.region)
                and not shown[0].region.overlaps(field.region)
            )

        await wait_until(pilot, clear_of_the_tabs, timeout=3)
        (toast,) = toasts(app)
        assert "exercise 1" in str(toast.render())
        assert toast.region.y == tabs.region.bottom
        figures = app.query_one("LedgerPane .calc-result")
        assert not toast.region.overlaps(figures.region)


async def test_a_dialog_takes_the_hint_away_and_draws_a_warning_once(tmp_path: Path) -> None:
    """ctrl+s's hint, then ctrl+r's dialog in a Diagrams note box: the lesson's screen, seen
    dimmed around the dialog, drew the hint under the tabs and the dialog's screen drew it again
    over the tab row (README: a dialog opened over the screen takes the hint away). A warning,
    which keeps its time, is drawn once: on the dialog's screen."""
    from tui.widgets.confirm import ConfirmScreen
    from tui.widgets.notes import NoteBox

    app = app_for(tmp_path)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await pilot.press("f4")
        await wait_until(pilot, lambda: bool(app.query("DiagramsPane NoteBox")))
        box = next(b for b in app.query(NoteBox) if b.item.id == "ex2.dp.split")
        box.text_area.focus()
        await pilot.press("ctrl+s")
        hint = f"▌ {strings.SAVED_AT.format(time=app.last_saved)}"
        await wait_until(pilot, lambda: hint in screen_lines(app))
        top = screen_lines(app)[:2]
        assert "Ledger Bubble Diagr." in top[1]
        await pilot.press("ctrl+r")
        await wait_until(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        await pilot.pause()
        lines = screen_lines(app)
        assert hint not in lines
        assert lines[:2] == top
        await pilot.press("escape")
        await wait_until(pilot, lambda: not isinstance(app.screen, ConfirmScreen))
        app.notify("a warning", severity="warning", timeout=20)
        await wait_until(pilot, lambda: "▌ a warning" in screen_lines(app))
        await pilot.press("ctrl+r")
        await wait_until(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        await pilot.pause()
        lines = screen_lines(app)
        assert lines.count("▌ a warning") == 1
        assert lines[:1] == top[:1]


async def test_ctrl_ns_message_leaves_the_sections_title_in_sight(
    tmp_path: Path, notified: Notified
) -> None:
    """ctrl+n puts the lesson at a section's start; its message goes above the footer, not over
    the section's title under the header. Scrolled on, the title is gone from the top rows, and
    a message is at the top again."""
    app = app_for(tmp_path)
    async with app.run_test(size=SIZE, notifications=True, message_hook=notified.hook) as pilot:
        await pilot.pause()
        reading = app.main_screen.query_one("#reading")
        # First the objectives to rate (the focus on objective 1), then the sections to read
        # (the focus on the lesson itself).
        for step in ("rate objective 1", "Step 2/25: read 学习目标"):
            for _ in range(6):
                await pilot.press("ctrl+n")
                await pilot.pause()
                if step in notified.messages[-1]:
                    break
            message = notified.messages[-1]
            assert step in message

            def at_the_bottom(message: str = message) -> bool:
                shown = toasts(app)
                return (
                    len(shown) == 1
                    and message.split()[0] in str(shown[0].render())
                    and shown[0].region.bottom == SIZE[1] - 1
                )

            await wait_until(pilot, at_the_bottom, timeout=3)
            assert reading.scroll_y == 0
            top = [line.strip() for line in screen_lines(app)[1:4]]
            assert "学习目标" in top, top
        # A section longer than the screen, read on a page.
        while reading.max_scroll_y < 10:
            await pilot.press("right_square_bracket")
            await pilot.pause()
        await pilot.press("pagedown")
        await wait_until(pilot, lambda: reading.scroll_y >= 10)
        app.notify("scrolled on")
        await wait_until(pilot, lambda: _toast_reads(app, "scrolled on"), timeout=3)
        (toast,) = toasts(app)
        assert toast.region.y == 1
