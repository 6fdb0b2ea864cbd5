"""Every key lands where the learner meant (tui/keys.py): in order however fast keys arrive, in
the widget focused at that moment, whole graphemes, and never dropped in silence.

Keys of one burst are posted to the app back to back, the way the driver posts the keys it
parsed from one read of the terminal (Pilot's ``press`` waits for the app to go idle after each
key, so it cannot send a burst). Textual 8.2.8 on its own applies them out of order
(Textualize/textual#6605): without :class:`tui.keys.KeyOrderApp` the Ledger's ``1B`` becomes
``''`` instead of ``7B``, and ``4096 Tab 32 ...`` puts ``409632409632`` into the first field.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import ClassVar

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from textual import events
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.pilot import Pilot
from textual.widget import Widget
from textual.widgets import Button, Input, OptionList, Static, TextArea

from engine.progress import ProgressStore
from tests.pilot_helpers import (
    SIZE,
    Notified,
    app_for,
    burst,
    goto_section,
    key,
    params_field,
    paste_into,
    screen_lines,
    terminal_keys,
    terminal_read,
    wait_until,
)
from tui import strings
from tui.app import ShardbookApp
from tui.keys import KeyOrderApp
from tui.widgets.ledger import LedgerPane
from tui.widgets.literal import LiteralInput, LiteralTextArea
from tui.widgets.notes import NoteBox, SelfCheckBox


async def save_and_quit(pilot: Pilot[int]) -> None:
    await pilot.pause()
    await pilot.press("ctrl+q")


async def test_a_burst_of_editing_keys_in_the_ledger_is_applied_in_order(tmp_path: Path) -> None:
    app = app_for(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("f2")
        params = app.query_one("#field-params", Input)
        assert app.focused is params and params.value == "1B"
        await burst(app, "end", "backspace", "backspace", "7B")
        assert params.value == "7B"
        await save_and_quit(pilot)
    assert ProgressStore(tmp_path).load("S15").progress.forms["ledger"]["params"] == "7B"


@pytest.mark.parametrize("save_key", ["ctrl+q", "ctrl+s"])
async def test_a_save_key_right_after_typing_saves_what_was_typed(
    tmp_path: Path, notified: Notified, save_key: str
) -> None:
    # The field's change climbs to the app one message queue per ancestor after the key was
    # typed; a save key in the same burst is handled before it has arrived. No autosave: only
    # the save key writes the file.
    app = app_for(tmp_path, delay=3600.0)
    async with app.run_test(size=SIZE, message_hook=notified.hook) as pilot:
        await pilot.press("f2")
        for name in ("end", "backspace", "backspace", "7", "B", save_key):
            app.post_message(key(name))
        if save_key == "ctrl+q":
            await wait_until(pilot, lambda: app.return_code is not None)
        else:
            saved = strings.SAVED_AT.split("{")[0]
            await wait_until(pilot, lambda: any(saved in text for text in notified.messages))
    progress = ProgressStore(tmp_path).load("S15").progress
    assert progress.forms["ledger"]["params"] == "7B"
    assert progress.status == "in-progress", "a calculator worked is the lesson studied"


async def test_keys_that_came_before_the_first_frame_are_applied_in_order(tmp_path: Path) -> None:
    # The driver reads keys as soon as the terminal is in application mode, before the first
    # screen is mounted: posted before the app runs, they wait in its queue the same way.
    app = app_for(tmp_path)
    for name in ("f2", "end", "backspace", "backspace", "7", "B"):
        app.post_message(key(name))
    async with app.run_test(size=SIZE) as pilot:
        async with asyncio.timeout(30):  # a key lost on a screen not mounted never finishes
            await app.keys_done()
        params = app.query_one("#field-params", Input)
        assert params.value == "7B"
        assert app.focused is params
        assert all(node.display for node in params.ancestors_with_self if isinstance(node, Widget))
        await save_and_quit(pilot)
    assert ProgressStore(tmp_path).load("S15").progress.forms["ledger"]["params"] == "7B"


@pytest.mark.long
async def test_tab_in_a_burst_moves_the_focus_before_the_next_characters(tmp_path: Path) -> None:
    app = app_for(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("f2")
        pane = app.query_one(LedgerPane)
        await pane.open_more(focus=True)
        await pilot.pause()
        assert app.focused is app.query_one("#field-seq", Input)
        # Llama 2 7B: context 4096 (Touvron et al. 2023, "Llama 2", Table 1), 32 layers, hidden
        # 4096, 32 heads (Touvron et al. 2023, "LLaMA", Table 2), typed as a learner would. The
        # model picker sits between seq and layers: one more Tab passes it.
        await burst(app, "4096", "tab", "tab", "32", "tab", "4096", "tab", "32")
        typed = {name: pane.values()[name] for name in ("seq", "layers", "hidden", "heads")}
        assert typed == {"seq": "4096", "layers": "32", "hidden": "4096", "heads": "32"}
        await burst(app, "shift+tab", "shift+tab", "end", "backspace", "8")
        assert pane.values()["layers"] == "38"
        await save_and_quit(pilot)
    saved = ProgressStore(tmp_path).load("S15").progress.forms["ledger"]
    assert {name: saved[name] for name in typed} == {**typed, "layers": "38"}


async def test_answers_in_a_burst_with_tabs_editing_keys_and_a_paste(tmp_path: Path) -> None:
    app = app_for(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await goto_section(pilot, app, "self-check")
        first, second, *_ = app.query(SelfCheckBox)
        first.text_area.focus()
        await pilot.pause()
        await burst(app, "abc", "left", "left", "backspace", "X", "ctrl+end", "!")
        app.post_message(events.Paste(" pasted"))
        await burst(app, "ctrl+home", "<", "tab", "tab", "two", "shift+tab", "shift+tab", ">")
        assert first.text_area.text == "<Xbc! pasted>"
        assert second.text_area.text == "two"
        await save_and_quit(pilot)
    answers = ProgressStore(tmp_path).load("S15").progress.answers
    assert answers == {first.item.id: "<Xbc! pasted>", second.item.id: "two"}


async def test_answer_reveal_tab_tab_type_is_saved_and_tab_order_never_changes(
    tmp_path: Path,
) -> None:
    app = app_for(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await goto_section(pilot, app, "self-check")
        boxes = list(app.query(SelfCheckBox))

        def chain_of(box: SelfCheckBox) -> list[Widget]:
            return [w for w in app.screen.focus_chain if box in w.ancestors]

        def chain() -> list[type[Widget]]:
            return [type(w) for box in boxes for w in chain_of(box)]

        before = chain()
        boxes[0].text_area.focus()
        await pilot.press(*"first", "ctrl+r", "tab", "tab", *"second")
        await pilot.pause()
        assert boxes[0].revealed and not boxes[1].revealed
        assert boxes[1].text_area.text == "second"
        # Revealed or not, each question is its answer box then its button.
        assert chain() == before
        assert [type(w) for w in chain_of(boxes[0])] == [type(w) for w in chain_of(boxes[1])]
        assert [type(w) for w in chain_of(boxes[0])] == [LiteralTextArea, Button]
        await save_and_quit(pilot)
    progress = ProgressStore(tmp_path).load("S15").progress
    assert progress.answers[boxes[1].item.id] == "second"
    assert progress.revealed == [boxes[0].item.id]


async def on_the_first_reveal_button(pilot: Pilot[int], app: ShardbookApp) -> SelfCheckBox:
    """The first self-check question's answer begun (``one``), then Tab to its reveal button."""
    await goto_section(pilot, app, "self-check")
    box = app.query(SelfCheckBox).first()
    box.text_area.focus()
    await pilot.press(*"one", "tab")
    assert isinstance(app.focused, Button)
    return box


async def test_a_key_on_the_reveal_button_goes_to_the_end_of_its_answer(
    tmp_path: Path, notified: Notified
) -> None:
    app = app_for(tmp_path)
    async with app.run_test(size=SIZE, message_hook=notified.hook) as pilot:
        box = await on_the_first_reveal_button(pilot, app)
        await burst(app, " two", "enter")
        assert box.text_area.text == "one two\n"
        assert app.focused is box.text_area
        assert not notified.messages, "a routed key needs no hint"
        await save_and_quit(pilot)
    assert ProgressStore(tmp_path).load("S15").progress.answers[box.item.id] == "one two\n"


async def test_page_down_from_the_reveal_button_takes_the_focus_to_the_lesson(
    tmp_path: Path,
) -> None:
    """PageDown scrolled the lesson away from the focused button, and Enter then pressed it
    unseen. Out of view, the button gives the focus to the lesson: Enter reveals nothing, and
    the lesson's keys scroll it."""
    app = app_for(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        box = await on_the_first_reveal_button(pilot, app)
        reading = app.main_screen.query_one("#reading", Widget)
        await burst(app, "pagedown", "enter")
        assert app.focused is reading
        assert not box.revealed
        assert box.text_area.text == "one"
        await pilot.wait_for_scheduled_animations()
        await pilot.pause()
        assert not reading.region.overlaps(box.query_one(Button).region)


async def test_a_key_nothing_takes_is_refused_with_one_hint(
    tmp_path: Path, notified: Notified
) -> None:
    app = app_for(tmp_path)
    async with app.run_test(size=SIZE, notifications=True, message_hook=notified.hook) as pilot:
        await pilot.press("ctrl+o")
        outline = app.query_one("#outline", OptionList)
        # The outline takes the focus once its overlay is drawn.
        await wait_until(pilot, lambda: app.focused is outline)
        highlighted = outline.highlighted
        await burst(app, "typ")
        await pilot.press("e")
        await pilot.pause()
        # Each hint replaces the one before: the last names all four keys.
        assert 'Not typed: "type"' in notified.messages[-1]
        assert outline.highlighted == highlighted and app.focused is outline
        # The hint is drawn (one toast), not only recorded.
        toasts = [str(toast.render()) for toast in app.screen.query("Toast")]
        assert len(toasts) == 1 and 'Not typed: "type"' in toasts[0]
        # A long run is quoted by its end, after an ellipsis: its start was dropped unmarked
        # ("its the batch" for "DP splits the batch").
        await burst(app, *"abcdefghijklmnopqrstuvwxyz")
        await pilot.pause()
        assert (
            'Not typed: "…' + "typeabcdefghijklmnopqrstuvwxyz"[-23:] + '"'
            in (notified.messages[-1])
        )


async def test_a_paste_nothing_takes_is_refused_with_a_hint_not_run_as_keys(
    tmp_path: Path, notified: Notified
) -> None:
    """Text pasted where no text box has the focus (the lesson) is not lost without a word:
    a hint shows it literally, and none of its characters runs as a key (``/`` would search)."""
    app = app_for(tmp_path)
    async with app.run_test(size=SIZE, notifications=True, message_hook=notified.hook) as pilot:
        await pilot.pause()
        screen = app.screen
        app.post_message(events.Paste("hello [bold]x /search\n"))
        await wait_until(pilot, lambda: bool(notified.messages))
        # The line break as README says a control character is quoted: \n, not a space.
        assert notified.messages[-1].startswith('Not typed: "hello [bold]x /search\\n"')
        toasts = [str(toast.render()) for toast in app.screen.query("Toast")]
        assert len(toasts) == 1 and '"hello [bold]x /search\\n"' in toasts[0]
        assert app.screen is screen and not app.dirty
        app.post_message(events.Paste("a very long paste of a whole paragraph of notes"))
        await wait_until(pilot, lambda: "…" in notified.messages[-1])
        # A paste is its own hint: the one before is not glued to it.
        assert 'Not typed: "a very long paste of a …"' in notified.messages[-1]


async def test_a_pasted_tab_is_quoted_as_an_escape_and_each_paste_has_its_own_hint(
    tmp_path: Path, notified: Notified
) -> None:
    """A tab and a line break pasted on the lesson were drawn as spaces, and two pastes were
    run together in one hint (``"12"``): each paste is quoted alone, as pasted, its control
    characters written ``\\t`` and ``\\n``; keys typed after it start a hint of their own."""
    app = app_for(tmp_path)
    async with app.run_test(size=SIZE, notifications=True, message_hook=notified.hook) as pilot:
        await pilot.pause()
        app.post_message(events.Paste("a\tb\nc"))
        await wait_until(pilot, lambda: bool(notified.messages))
        assert 'Not typed: "a\\tb\\nc"' in notified.messages[-1]
        app.post_message(events.Paste("2"))
        await wait_until(pilot, lambda: len(notified.messages) == 2)
        assert 'Not typed: "2"' in notified.messages[-1]
        await pilot.press("x")
        await wait_until(pilot, lambda: len(notified.messages) == 3)
        assert 'Not typed: "x"' in notified.messages[-1]
        toasts = [str(toast.render()) for toast in app.screen.query("Toast")]
        assert len(toasts) == 1 and '"x"' in toasts[0]


async def test_the_not_typed_hint_goes_when_a_dialog_opens_over_it(
    tmp_path: Path, notified: Notified
) -> None:
    """The hint stayed drawn over the search dialog's title after ``/`` opened it: a screen
    pushed over the one where a key was refused takes the hint away, on every screen."""
    app = app_for(tmp_path)
    async with app.run_test(size=SIZE, notifications=True, message_hook=notified.hook) as pilot:
        await pilot.pause()
        main = app.screen
        await pilot.press("x")
        await wait_until(pilot, lambda: bool(main.query("Toast")))
        await pilot.press("slash")
        await wait_until(pilot, lambda: app.screen is not main)
        await pilot.pause()
        for screen in app.screen_stack:
            assert not [str(toast.render()) for toast in screen.query("Toast")]
        await pilot.press("escape")
        await wait_until(pilot, lambda: app.screen is main)
        await pilot.press("y")
        await wait_until(pilot, lambda: len(notified.messages) == 2)
        assert 'Not typed: "y"' in notified.messages[-1]  # not "xy"


async def test_a_paste_on_the_reveal_button_goes_into_its_answer(
    tmp_path: Path, notified: Notified
) -> None:
    app = app_for(tmp_path)
    async with app.run_test(size=SIZE, message_hook=notified.hook) as pilot:
        box = await on_the_first_reveal_button(pilot, app)
        app.post_message(events.Paste(" two [/] 数据"))
        await wait_until(pilot, lambda: box.text_area.text == "one two [/] 数据")
        assert app.focused is box.text_area
        assert not notified.messages, "a routed paste needs no hint"
        await save_and_quit(pilot)
    answer = ProgressStore(tmp_path).load("S15").progress.answers[box.item.id]
    assert answer == "one two [/] 数据"


async def test_a_paste_of_several_lines_into_a_field_keeps_every_word_on_one_line(
    tmp_path: Path, notified: Notified
) -> None:
    app = app_for(tmp_path)
    async with app.run_test(size=SIZE, message_hook=notified.hook, notifications=True) as pilot:
        await pilot.press("f2")
        field = await params_field(pilot, app)
        # CR LF, a blank line and the breaks at the ends, as copied from a document.
        await paste_into(pilot, field, "\n3B\r\n[bold]x\tY\n\n7 参数\r\n")
        await wait_until(pilot, lambda: bool(notified.messages))
        assert field.value == "3B [bold]x\tY 7 参数"
        assert notified.messages == [strings.PASTE_JOINED]
        await wait_until(
            pilot, lambda: any(strings.PASTE_JOINED in row for row in screen_lines(app))
        )
        await paste_into(pilot, field, "7.5B\n")  # one line and its break: nothing to say
        await wait_until(pilot, lambda: field.value == "7.5B")
        app.post_message(events.Paste("0"))
        await wait_until(pilot, lambda: field.value == "7.5B0")
        assert len(notified.messages) == 1


async def test_a_paste_keeps_the_characters_python_splits_lines_at(
    tmp_path: Path, notified: Notified
) -> None:
    # str.splitlines also breaks at VT, FF, FS, GS, RS, NEL, U+2028 and U+2029: in a one-line
    # field they are text, not the end of the paste.
    app = app_for(tmp_path)
    async with app.run_test(size=SIZE, message_hook=notified.hook) as pilot:
        await pilot.press("f2")
        field = await params_field(pilot, app)
        await paste_into(pilot, field, "a\x1cb")
        await wait_until(pilot, lambda: field.value == "a\x1cb")
        pasted = "x\u2028y \x0b\x0c\x1d\x1e\x85\u2029z"
        await paste_into(pilot, field, pasted)
        await wait_until(pilot, lambda: field.value == pasted)
        assert not notified.messages, "no line was joined"


# A paste holding escapes as a terminal sends it (tmux's ``paste-buffer -p`` passes the ESC on),
# read by the driver's parser (tests/test_key_parser.py has the parser's side): Textual's typed
# the text after the ESC as keys, ahead of the paste, its ESC as ``^``.
PASTED = "x\ty\x1b[1mz"
END_BACKSPACES_7B = "\x1b[F\x7f\x7f7B"  # End, two backspaces, 7B, as an xterm sends them


async def test_a_paste_with_escapes_lands_as_pasted_then_the_keys_after_it(
    tmp_path: Path,
) -> None:
    app = app_for(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await goto_section(pilot, app, "self-check")
        first = app.query(SelfCheckBox).first()
        first.text_area.focus()
        await pilot.pause()
        await terminal_read(app, "abc")
        await terminal_read(app, f"\x1b[200~{PASTED}\x1b[201~")
        assert first.text_area.text == "abc" + PASTED
        # The ESC is drawn as its control picture, the tab as spaces.
        assert any("abcx    y\u241b[1mz" in line for line in screen_lines(app))
        await terminal_read(app, f"\x1b[200~A\x1bB\x1b[201~{END_BACKSPACES_7B}")
        assert first.text_area.text == "abc" + PASTED + "A7B"
        await save_and_quit(pilot)
    assert ProgressStore(tmp_path).load("S15").progress.answers[first.item.id] == (
        "abcx\ty\x1b[1mzA7B"
    )


async def test_a_paste_with_escapes_into_a_field_is_kept_and_quoted_as_written(
    tmp_path: Path,
) -> None:
    app = app_for(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("f2")
        field = await params_field(pilot, app)
        field.focus()
        await terminal_read(app, "\x1b[F\x1b[200~\x1b[31mred\x1b[201~")
        assert field.value == "1B\x1b[31mred"
        # The message writes the ESC as the README says: \x1b (the units parser refuses a
        # control character inside a number, quoting the value whole).
        await wait_until(
            pilot, lambda: any("'1B\\x1b[31mred' holds a" in line for line in screen_lines(app))
        )
        await save_and_quit(pilot)
    saved = ProgressStore(tmp_path).load("S15").progress.forms["ledger"]["params"]
    assert saved == "1B\x1b[31mred"


async def test_printable_bindings_still_work_outside_text_boxes(
    tmp_path: Path, notified: Notified
) -> None:
    app = app_for(tmp_path)
    async with app.run_test(size=SIZE, message_hook=notified.hook) as pilot:
        await pilot.press("f10")
        await pilot.pause()
        pane = app.query_one("TradeoffsPane")
        app.query_one("#tradeoffs-link").focus()
        await pilot.pause()
        await burst(app, "2")
        await pilot.pause()
        assert getattr(pane, "scenario", None) == 1
        assert not notified.messages


class Doomed(Static, can_focus=True):
    """On "x", removes the container around its own container, and lets the key go up: the
    inner container then has the key and its marker queued while its parent closes, so it
    never passes them on (Textual bubbles only to an active parent)."""

    def on_key(self, event: events.Key) -> None:
        if event.key == "x":
            self.query_ancestor("#doomed-box").remove()


class Sketch(KeyOrderApp[None]):
    """A screen with a later ``?`` binding (non-priority), a button and two text fields."""

    BINDINGS: ClassVar = [("question_mark", "asked", "Help")]

    def __init__(self) -> None:
        super().__init__()
        self.asked = 0

    def compose(self) -> ComposeResult:
        with Vertical(id="item"):
            yield Button("go", id="go")
            yield LiteralTextArea(id="area")
        yield LiteralInput(id="field")
        with Vertical(id="doomed-box"), Vertical():
            yield Doomed("doomed")

    def action_asked(self) -> None:
        self.asked += 1


async def test_a_non_priority_printable_binding_runs_where_no_text_box_has_focus() -> None:
    app = Sketch()
    async with app.run_test() as pilot:
        app.query_one("#go").focus()
        await pilot.pause()
        await burst(app, "?", "x", "?")
        area = app.query_one("#area", TextArea)
        # The button's item has one text box: "x" goes there, and the second "?" with it.
        assert app.asked == 1 and area.text == "x?"


async def test_a_key_whose_widget_was_removed_does_not_hold_back_the_next() -> None:
    app = Sketch()
    async with app.run_test() as pilot:
        app.query_one(Doomed).focus()
        await pilot.pause()
        # "x" bubbles into a container that closes before handling it: its marker is lost.
        await asyncio.wait_for(burst(app, "x", "b"), timeout=10)
        assert not app.query(Doomed)
        typed = app.query_one("#field", Input).value + app.query_one("#area", TextArea).text
        assert typed == "b"


FAMILY = "👨\u200d👩\u200d👧"  # man ZWJ woman ZWJ girl (Unicode TR #51, emoji ZWJ sequences)
FLAG_CN = "🇨🇳"  # regional indicators C and N
KEYCAP_1 = "1\ufe0f\u20e3"  # digit, VS16, combining enclosing keycap
FLAG_ENGLAND = "🏴\U000e0067\U000e0062\U000e0065\U000e006e\U000e0067\U000e007f"  # tag sequence
GRAPHEMES = f"{FAMILY} {FLAG_CN} {KEYCAP_1} {FLAG_ENGLAND}"


async def test_grapheme_clusters_typed_at_the_keyboard_are_stored_whole(tmp_path: Path) -> None:
    typed = terminal_keys(GRAPHEMES)
    assert len(typed) == len(GRAPHEMES)  # one key per code point, ZWJs and tags included
    assert not all(event.is_printable for event in typed)  # Textual calls ZWJ unprintable
    app = app_for(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await goto_section(pilot, app, "self-check")
        box = app.query(SelfCheckBox).first()
        box.text_area.focus()
        await pilot.pause()
        for event in typed:
            app.post_message(event)
        await app.keys_done()
        assert box.text_area.text == GRAPHEMES
        await pilot.press("f2")
        params = app.query_one("#field-params", Input)
        for event in terminal_keys(FAMILY):
            app.post_message(event)
        await app.keys_done()
        assert params.value == FAMILY  # replaced the selected "1B"
        await save_and_quit(pilot)
    progress = ProgressStore(tmp_path).load("S15").progress
    assert progress.answers[box.item.id] == GRAPHEMES
    assert progress.forms["ledger"]["params"] == FAMILY


async def test_entering_a_filled_box_puts_the_cursor_at_the_end(tmp_path: Path) -> None:
    app = app_for(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await goto_section(pilot, app, "reflection")
        first, second = list(app.query("#reading NoteBox TextArea"))[:2]
        assert isinstance(first, TextArea) and isinstance(second, TextArea)
        second.load_text("line one\nline two")
        first.focus()
        await pilot.press("tab")
        assert app.focused is second and second.cursor_location == (1, 8)
        await pilot.press("ctrl+home")
        assert second.cursor_location == (0, 0)
        await pilot.press("ctrl+end", *"!")
        assert second.text == "line one\nline two!"


async def test_ctrl_r_scrolls_the_key_points_into_view(tmp_path: Path) -> None:
    app = app_for(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await goto_section(pilot, app, "self-check")
        box = app.query(SelfCheckBox).last()
        box.text_area.focus()
        await pilot.press(*"my answer")
        reading = app.query_one("#reading")
        key_points = box.query_one(".key-points")
        await pilot.press("ctrl+r")
        assert box.revealed

        # The answer stays in view, and the key points fill the rest of it (they may be
        # taller than the view: 45 lines at 80 columns); the scroll comes after a frame.
        def in_view() -> bool:
            view, shown = reading.content_region, key_points.region
            return view.contains_region(box.text_area.region) and view.intersection(
                shown
            ).height >= min(shown.height, view.height // 2)

        await wait_until(pilot, in_view)


EDIT_KEYS = ["a", "b", "7", "backspace", "left", "right", "home", "end"]


def model(names: list[str]) -> str:
    """What an Input holds after ``names``, applied one by one (a text and a cursor)."""
    text, cursor = "", 0
    for name in names:
        if name == "backspace":
            text, cursor = text[: max(cursor - 1, 0)] + text[cursor:], max(cursor - 1, 0)
        elif name == "left":
            cursor = max(cursor - 1, 0)
        elif name == "right":
            cursor = min(cursor + 1, len(text))
        elif name == "home":
            cursor = 0
        elif name == "end":
            cursor = len(text)
        else:
            text, cursor = text[:cursor] + name + text[cursor:], cursor + 1
    return text


@settings(max_examples=25, deadline=None)
@given(st.lists(st.sampled_from(EDIT_KEYS), max_size=30))
def test_any_burst_of_editing_keys_gives_what_the_keys_one_by_one_give(names: list[str]) -> None:
    async def run() -> str:
        app = Sketch()
        async with app.run_test() as pilot:
            field = app.query_one("#field", Input)
            field.focus()
            await pilot.pause()
            for name in names:
                app.post_message(key(name))
            await app.keys_done()
            return field.value

    assert asyncio.run(run()) == model(names)


@pytest.mark.parametrize("size", [(80, 24), (60, 20)])
async def test_escape_leaves_a_calculator_field_keeping_what_was_typed(
    tmp_path: Path, size: tuple[int, int]
) -> None:
    """Escape in a calculator's field did nothing: the learner was stuck typing ``]`` into it.
    It moves the focus to the pane, the field keeps what was typed, and the lesson's keys work
    (``]`` reads on) instead of being typed; escape outside a field changes nothing."""
    from tui.widgets.ledger import LedgerPane

    app = app_for(tmp_path)
    async with app.run_test(size=size) as pilot:
        await pilot.press("f2")
        await wait_until(pilot, lambda: isinstance(app.focused, Input))
        field = app.focused
        assert isinstance(field, Input)
        await pilot.press("end", "backspace", "backspace", "7", "B", "escape")
        await pilot.pause()
        pane = app.query_one(LedgerPane)
        assert app.focused is pane
        assert field.value == "7B"
        section = app.main_screen.current_section
        await pilot.press("escape", "right_square_bracket")
        await wait_until(pilot, lambda: app.main_screen.current_section != section)
        assert field.value == "7B"


async def focused_reflection(
    pilot: Pilot[int], app: ShardbookApp
) -> tuple[NoteBox, LiteralTextArea]:
    """The lesson's first reflection box and its text area, focused."""
    await goto_section(pilot, app, "reflection")
    await wait_until(pilot, lambda: bool(app.main_screen.query(NoteBox)))
    box = app.main_screen.query(NoteBox).first()
    area = box.query_one(LiteralTextArea)
    area.focus()
    return box, area


async def test_escape_leaves_a_note_box_keeping_what_was_typed(tmp_path: Path) -> None:
    """Escape in a reflection box did nothing: the ``]`` typed next went into the box. It moves
    the focus to the reading pane, the box keeps what was typed, and ``]`` reads on."""
    app = app_for(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        box, area = await focused_reflection(pilot, app)
        await pilot.press("r", "i", "n", "g", "escape")
        await pilot.pause()
        assert app.focused is app.query_one("#reading")
        assert area.text == "ring"
        await pilot.press("right_square_bracket")
        await wait_until(pilot, lambda: app.main_screen.current_section != "reflection")
        assert app.progress.reflections[box.item.id] == "ring"


async def test_escape_and_a_key_in_one_burst_leave_the_box_then_run_the_key(
    tmp_path: Path,
) -> None:
    """Escape and ``]`` arriving together (one read of the terminal): the ``]`` went into the
    box Escape had left, as the focus change came after it. It reads on, the box as typed."""
    app = app_for(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        box, area = await focused_reflection(pilot, app)
        await burst(app, "ring", "escape", "]")
        assert area.text == "ring"
        assert app.focused is app.query_one("#reading")
        await wait_until(pilot, lambda: app.main_screen.current_section != "reflection")
        assert app.progress.reflections[box.item.id] == "ring"


async def test_escape_and_a_key_in_one_burst_leave_a_calculator_field(tmp_path: Path) -> None:
    app = app_for(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("f2")
        await wait_until(pilot, lambda: isinstance(app.focused, Input))
        field = app.focused
        assert isinstance(field, Input)
        section = app.main_screen.current_section
        await burst(app, "end", "backspace", "backspace", "7B", "escape", "]")
        assert field.value == "7B"
        assert app.focused is app.query_one(LedgerPane)
        await wait_until(pilot, lambda: app.main_screen.current_section != section)


async def test_arrows_in_one_burst_each_scroll_the_diagram_a_column(tmp_path: Path) -> None:
    """At 60x20 the 80-column DP picture hides rank 3. Twenty Rights sent at once moved it two
    or three columns: each scrolled one column from where the last was going, which Textual
    sets only after the next refresh. Each key moves it one column; End goes to its right end,
    Home back to its left one."""
    app = app_for(tmp_path)
    async with app.run_test(size=(60, 20)) as pilot:
        await pilot.press("f4")
        # The picture shows once its answers are: look first (ctrl+r), confirmed.
        await pilot.press("ctrl+r")
        await pilot.pause()
        await pilot.press("y")
        picture = app.query_one("#diagram-scroll")
        await wait_until(pilot, lambda: picture.max_scroll_x > 20)
        # Tab from the strategy picker, which the confirmation gives the focus back to.
        await wait_until(pilot, lambda: app.focused is app.query_one("#strategy"))
        await pilot.press("tab")
        assert app.focused is picture
        await burst(app, *["right"] * 20)
        await wait_until(pilot, lambda: picture.scroll_x == 20)
        await burst(app, "left", "left", "left")
        await wait_until(pilot, lambda: picture.scroll_x == 17)
        await burst(app, "end")
        await wait_until(pilot, lambda: picture.scroll_x == picture.max_scroll_x)
        await burst(app, "home", "right", "right")
        await wait_until(pilot, lambda: picture.scroll_x == 2)
        assert app.focused is picture


async def test_arrows_and_page_keys_in_one_burst_each_scroll_the_timeline(tmp_path: Path) -> None:
    """The Bubble timeline scrolls sideways the same way: every key of a burst counts, a page
    key too (it counted from the column an arrow's animation had reached)."""
    from tui.widgets.bubble import BubblePane, TimelineView

    app = app_for(tmp_path, delay=3600)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("f3")
        bubble = app.query_one(BubblePane)
        view = bubble.query_one("#timeline", TimelineView)
        # GPipe p=4, m=40: (m + p - 1) x 3 = 129 columns of time, over twice the pane's width.
        await paste_into(pilot, bubble.query_one("#field-micro_batches", Input), "40")
        await wait_until(pilot, lambda: view.virtual_size.width == len("stage 3 ") + 129)
        assert view.max_scroll_x > view.scrollable_content_region.width + 1
        view.focus()
        await pilot.pause()
        await burst(app, *["right"] * 12, "left", "left")
        await wait_until(pilot, lambda: view.scroll_x == 10)
        page = view.scrollable_content_region.width
        # A page counts from where the arrows before it were going, not from where their
        # animation had got to.
        await burst(app, "home", "right", "right", "pagedown")
        await wait_until(pilot, lambda: view.scroll_x == page + 2)
        await burst(app, "end", "left")
        await wait_until(pilot, lambda: view.scroll_x == view.max_scroll_x - 1)


@pytest.mark.parametrize("closing", ["escape", "enter"])
async def test_a_key_right_after_a_picker_s_list_closes_gets_the_hint(
    tmp_path: Path, notified: Notified, closing: str
) -> None:
    """The Bubble pane's schedule picker: Enter opens its list, Escape (or Enter on an option)
    closes it. A key typed at once after that (one burst) went to the closing list, whose
    type-to-search took it without a word; on the closed picker, which types nothing, it is
    refused with the hint. Enter's choice is made before the key: Down then Enter picks the
    second schedule (1f1b)."""
    from textual.widgets import Select

    app = app_for(tmp_path, delay=3600)
    async with app.run_test(size=SIZE, message_hook=notified.hook) as pilot:
        await pilot.press("f3")
        picker = app.query_one("#field-schedule", Select)
        await wait_until(pilot, lambda: app.focused is picker)
        await pilot.press("enter")
        await wait_until(pilot, lambda: picker.expanded and app.focused is not picker)
        await burst(app, *(["escape"] if closing == "escape" else ["down", "enter"]), "x", "9")
        await wait_until(pilot, lambda: app.focused is picker and not picker.expanded)
        assert notified.messages and 'Not typed: "x9"' in notified.messages[-1]
        assert picker.value == ("gpipe" if closing == "escape" else "1f1b")
