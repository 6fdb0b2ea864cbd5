"""The main screen's layout at each terminal size, its keys and what it remembers, driven by keys
through Textual's Pilot and read back from the screen as the learner sees it."""

from __future__ import annotations

import io
import re
from functools import partial
from pathlib import Path

import pytest
import yaml
from rich.cells import cell_len
from textual.binding import Binding
from textual.keys import key_to_character
from textual.pilot import Pilot
from textual.widget import Widget
from textual.widgets import Input, OptionList, Static, TextArea

from engine import units
from engine.i18n import set_language
from engine.ledger import PRECISION_PRESETS, LedgerSpec, compute_ledger
from engine.linebreak import is_closing
from engine.progress import LessonProgress, ProgressStore
from tests.pilot_helpers import (
    Notified,
    app_for,
    burst,
    goto_section,
    screen_lines,
    settle,
    terminal_read,
    wait_until,
)
from tui.app import ShardbookApp, make_app
from tui.screens.layout import (
    MIN_HEIGHT,
    MIN_WIDTH,
    Arrangement,
    arrange,
    side_default,
    size_class,
    too_small_message,
)
from tui.screens.main import MainScreen
from tui.widgets.reader import BrokenText


def main(app: ShardbookApp) -> MainScreen:
    return app.main_screen


def settings_on_disk(tmp_path: Path) -> dict[str, object]:
    data = yaml.safe_load((tmp_path / "settings.yaml").read_text(encoding="utf-8"))
    assert isinstance(data, dict)
    return data


async def goto(pilot: Pilot[int], app: ShardbookApp, section_id: str) -> None:
    """Read on with ``]`` (the next section) up to ``section_id``."""
    while main(app).current_section != section_id:
        await pilot.press("right_square_bracket")
        await pilot.pause()


# ----------------------------------------------------------------- the layout as data
def test_size_classes() -> None:
    assert size_class(200, 60) == "wide" and size_class(120, 40) == "wide"
    assert size_class(119, 40) == "medium" and size_class(80, 24) == "medium"
    assert size_class(79, 24) == "narrow" and size_class(40, 12) == "narrow"
    assert size_class(MIN_WIDTH - 1, 24) == "too-small"
    assert size_class(80, MIN_HEIGHT - 1) == "too-small"
    assert size_class(1, 1) == "too-small"


@pytest.mark.parametrize("language", ["en", "zh"])
def test_the_too_small_message_is_one_line_that_fits(language: str) -> None:
    # Measured in cells: in Chinese the third wording is 33 characters but 40 cells, and took
    # two lines at 30x8.
    set_language(language)
    for width in range(5, 80):
        message = too_small_message(width, 5)
        assert cell_len(message) <= width and f"{MIN_WIDTH}x{MIN_HEIGHT}" in message
    if language == "zh":
        return
    assert too_small_message(79, 9) == (
        f"shardbook needs a terminal of at least {MIN_WIDTH}x{MIN_HEIGHT} (this one is 79x9)"
    )
    assert too_small_message(30, 8) == f"Needs {MIN_WIDTH}x{MIN_HEIGHT} (now 30x8)"


def test_arrangements() -> None:
    # Wide: all three; the side pane as the learner left it.
    assert arrange("wide", True, False, False, False) == Arrangement("column", True, True)
    assert arrange("wide", False, False, False, False) == Arrangement("column", True, False)
    # Medium: the outline opens over the lesson.
    assert arrange("medium", False, False, False, True) == Arrangement("overlay", True, False)
    # Narrow: one pane at a time.
    assert arrange("narrow", True, False, False, False) == Arrangement("hidden", False, True)
    # Reading mode: the lesson alone; zoom: the side pane alone, and zoom wins.
    assert arrange("wide", True, True, False, False) == Arrangement("hidden", True, False)
    assert arrange("medium", False, True, True, False) == Arrangement("hidden", False, True)
    assert arrange("wide", True, False, False, False).too_small is False
    assert arrange("too-small", True, True, True, True).too_small


def test_side_pane_defaults() -> None:
    assert side_default("wide", "auto") and not side_default("medium", "auto")
    assert side_default("medium", "shown") and not side_default("wide", "hidden")
    assert not side_default("narrow", "shown")  # the lesson first on a narrow screen


# ----------------------------------------------------------------- 80x24: the lesson's room
async def test_at_80_columns_the_lesson_gets_the_room_and_breaks_lines_well(
    tmp_path: Path,
) -> None:
    app = app_for(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        reading = app.query_one("#reading")
        assert reading.content_region.width >= 60
        await goto(pilot, app, "objectives")
        lines = screen_lines(app)
        assert any("reduce-scatter" in line for line in lines), lines
        await goto(pilot, app, "core")
        lines = screen_lines(app)
        assert any("checkpointing" in line for line in lines), lines
        # No line of the lesson starts with a full stop or a comma, in any section.
        while True:
            for text in app.query("#reading BrokenText").results(BrokenText):
                if not text.region.width:
                    continue  # not on screen (key points not revealed yet)
                for line in text.lines[1:]:
                    assert line.strip() and not is_closing(line.lstrip()[0]), (text.text, line)
            if main(app).current_section == "reflection":
                break
            await pilot.press("right_square_bracket")
            await pilot.pause()


async def test_every_side_tab_is_on_screen_at_80_columns(tmp_path: Path) -> None:
    app = app_for(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("f2")
        await pilot.pause()
        side = app.query_one("#side")
        tabs = list(side.query("Tab"))
        assert len(tabs) == 6
        for tab in tabs:
            assert side.region.contains_region(tab.region), tab
        labels = " ".join(screen_lines(app)[1:3])
        for word in ("Ledger", "Bubble", "Diagr.", "Coll.", "Trade.", "Lab"):
            assert word in labels


async def test_the_footer_shows_the_study_keys_first(tmp_path: Path) -> None:
    app = app_for(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        # The footer lays its keys out, then hides those that do not fit, a frame or two later.
        await wait_until(pilot, lambda: "f6 Side" in screen_lines(app)[-1])
        footer = screen_lines(app)[-1]
        for key in ("f12 Quiz", "^n Next", "^o Outline", "f6 Side"):
            assert key in footer, footer
        assert footer.index("f12 Quiz") < footer.index("^n Next") < footer.index("f6 Side")


# ----------------------------------------------------------------- keys
async def test_f6_hides_and_shows_the_side_pane_and_it_is_remembered(tmp_path: Path) -> None:
    app = app_for(tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        side = app.query_one("#side")
        assert side.display
        await pilot.press("f6")
        await pilot.pause()
        assert not side.display
        assert app.query_one("#reading").content_region.width >= 90
    assert settings_on_disk(tmp_path)["layout"] == {"side": "hidden"}
    app = app_for(tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        assert not app.query_one("#side").display
        await pilot.press("f2")  # a side tab's key shows the side pane again
        await pilot.pause()
        assert app.query_one("#side").display
        assert app.focused is app.query_one("#field-params", Input)


async def test_f7_reading_mode_gives_the_lesson_the_whole_screen(tmp_path: Path) -> None:
    app = app_for(tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("f7")
        await pilot.pause()
        assert not app.query_one("#outline").display
        assert not app.query_one("#side").display
        assert app.query_one("#reading").region.width == 120
        # ctrl+o still reaches the outline, over the lesson.
        await pilot.press("ctrl+o")
        await pilot.pause()
        assert app.focused is app.query_one("#outline", OptionList)
        await pilot.press("escape")
        await pilot.pause()
        assert not app.query_one("#outline").display
    assert settings_on_disk(tmp_path)["layout"]["reading"] is True  # type: ignore[index]
    app = app_for(tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        assert main(app).reading_mode
        await pilot.press("f7")
        await pilot.pause()
        assert app.query_one("#side").display and app.query_one("#outline").display


async def test_the_outline_opens_over_the_lesson_at_80_columns(tmp_path: Path) -> None:
    app = app_for(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        # Hidden at this size, the outline is not built for the first frame; ] still moves on.
        assert not app.query("#outline")
        await pilot.press("right_square_bracket")
        await pilot.pause()
        assert main(app).current_section == "definition"
        await pilot.press("ctrl+o", "down", "down", "enter")  # one burst: each key lands
        await pilot.pause()
        outline = app.query_one("#outline", OptionList)
        assert outline.highlighted == 3  # built on the section shown, then moved twice
        assert main(app).current_section == "core"
        assert not outline.display
        assert app.focused is app.query_one("#reading")
        await pilot.press("ctrl+o")
        await pilot.pause()
        assert outline.display and app.focused is outline
        await pilot.press("up", "up", "enter")
        await pilot.pause()
        assert main(app).current_section == "definition"
        assert not outline.display
        assert app.focused is app.query_one("#reading")


async def test_on_a_narrow_screen_one_pane_shows_at_a_time(tmp_path: Path) -> None:
    app = app_for(tmp_path)
    async with app.run_test(size=(60, 20)) as pilot:
        await pilot.pause()
        reading, side = app.query_one("#reading"), app.query_one("#side")
        assert reading.display and not side.display
        await pilot.press("f6")
        await pilot.pause()
        assert side.display and not reading.display
        assert side.region.width == 60
        await pilot.press("ctrl+n")  # the first step (an objective to rate) brings the lesson back
        await pilot.pause()
        assert reading.display and not side.display
        assert main(app).current_section == "objectives"


async def test_question_mark_opens_help_except_in_a_text_box(tmp_path: Path) -> None:
    from tui.screens.help import HelpScreen

    app = app_for(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        await pilot.press("question_mark")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        await pilot.press("escape")
        await goto(pilot, app, "self-check")
        area = app.query("#reading TextArea").first(TextArea)
        area.focus()
        await pilot.press("question_mark", "f1")
        await pilot.pause()
        assert area.text == "?"
        assert isinstance(app.screen, HelpScreen)  # F1 works everywhere


def test_no_key_that_can_be_typed_is_a_priority_binding() -> None:
    from tui.screens.help import HelpScreen
    from tui.screens.quiz import QuizScreen
    from tui.widgets.bubble import BubblePane
    from tui.widgets.collectives import StepView
    from tui.widgets.ledger import LedgerPane
    from tui.widgets.notes import SelfCheckBox
    from tui.widgets.tradeoffs import TradeoffsPane

    owners = (
        ShardbookApp,
        MainScreen,
        QuizScreen,
        HelpScreen,
        LedgerPane,
        BubblePane,
        StepView,
        SelfCheckBox,
        TradeoffsPane,
    )
    checked = 0
    for owner in owners:
        for binding in owner.BINDINGS:
            assert isinstance(binding, Binding)
            for key in binding.key.split(","):
                checked += 1
                typed = key_to_character(key.strip())
                assert not (binding.priority and typed and typed.isprintable()), (owner, key)
    assert checked > 30
    assert any(b.key == "question_mark" for b in MainScreen.BINDINGS)  # type: ignore[union-attr]


async def test_the_quiz_screen_has_none_of_the_lesson_keys(tmp_path: Path) -> None:
    from tui.screens.quiz import QuizScreen

    app = app_for(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("f12")
        await pilot.pause()
        assert isinstance(app.screen, QuizScreen)
        await pilot.press("ctrl+n", "f6", "f7", "f12")
        await pilot.pause()
        assert isinstance(app.screen, QuizScreen)
        assert len(app.screen_stack) == 2  # F12 did not open a second quiz
        assert main(app).current_section == "__meta__"
        assert not main(app).side_shown and not main(app).reading_mode


# ----------------------------------------------------------------- sizes and resizing
def drawn_at(app: ShardbookApp, size: tuple[int, int]) -> bool:
    """Whether the last frame shows the screen at ``size``: a resize's size class and then its
    layout come over the next frames, later on a busy machine than one pause."""
    too_small = size_class(*size) == "too-small"
    if app.query_one("#reading").display == too_small:
        return False
    if too_small and size[0] >= 5:
        return any(too_small_message(*size) in line for line in screen_lines(app))
    return True


async def test_too_small_says_the_size_needed_and_the_layout_recovers(tmp_path: Path) -> None:
    app = app_for(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await goto(pilot, app, "core")
        before = app.query_one("#reading").region
        for size in ((40, 12), (20, 5), (1, 1), (39, 30), (200, 60), (80, 24)):
            await pilot.resize_terminal(*size)
            await wait_until(pilot, partial(drawn_at, app, size))
            lines = screen_lines(app)
            if size_class(*size) == "too-small":
                shown = [line.strip() for line in lines if line.strip()]
                if size[0] >= 5:
                    assert shown == [too_small_message(*size)], lines
                assert not app.query_one("#reading").display
            else:
                assert app.query_one("#reading").display
            if size == (20, 5):  # keys do nothing while the lesson is not on screen
                await pilot.press("f6", "ctrl+n", "f5", "f7", "ctrl+o")
                await pilot.pause()
        await wait_until(pilot, lambda: app.query_one("#reading").region == before)
        assert main(app).current_section == "core"
        assert main(app).arrangement == Arrangement("hidden", True, False)
        assert app.focused is not None and app.focused.display


@pytest.mark.parametrize(
    ("keys", "first", "last"),
    [
        # Look first in Diagrams: the question ends with the third note's name.
        (["f4", "ctrl+r"], "Look at the engine's answer", "wait it can cause."),
        # F9 with the plan's steps left: the list, then the question.
        (["f9"], "S15 is not finished", "Mark it complete anyway?"),
    ],
)
async def test_at_40x12_a_confirmation_keeps_its_keys_on_screen_and_scrolls(
    tmp_path: Path, keys: list[str], first: str, last: str
) -> None:
    """At 40x12 the confirmation was taller than the screen: its keys line (enter / y, escape)
    was cut off below the question, and End and PageDown did not scroll the question. The keys
    line is on screen under the question's first rows, and End shows the question's end."""
    from tui.widgets.confirm import ConfirmScreen

    app = app_for(tmp_path)
    async with app.run_test(size=(40, 12)) as pilot:
        for key in keys:
            await pilot.press(key)
            await settle(pilot)
        await wait_until(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        await pilot.pause()
        lines = screen_lines(app)
        assert any(first in line for line in lines), lines
        assert any("enter / y: yes · escape: no" in line for line in lines), lines
        assert not any(last in line for line in lines), lines
        await pilot.press("end")
        await wait_until(pilot, lambda: any(last in line for line in screen_lines(app)))
        assert any("enter / y: yes · escape: no" in line for line in screen_lines(app))
        await pilot.press("escape")
        await wait_until(pilot, lambda: not isinstance(app.screen, ConfirmScreen))


async def test_at_40x12_the_lesson_is_readable(tmp_path: Path) -> None:
    app = app_for(tmp_path)
    async with app.run_test(size=(40, 12)) as pilot:
        await goto(pilot, app, "objectives")
        assert app.query_one("#reading").content_region.width >= 36
        assert "学习目标" in "\n".join(screen_lines(app))
        lines = app.query("#reading BrokenText").results(BrokenText)
        assert any("reduce-scatter" in line for text in lines for line in text.lines)


# ----------------------------------------------------------------- figures and messages
def _ledger_rows(result_lines: list[str]) -> dict[str, list[str]]:
    rows = {}
    for line in result_lines:
        match = re.search(r"\b([PGMOAB] [a-z ]+?|total) +([\d,.]+) +([\d,.]+)(?= |$)", line)
        if match:
            rows[match.group(1).strip()] = [match.group(2), match.group(3)]
    return rows


@pytest.mark.long
@pytest.mark.parametrize("size", [(60, 20), (80, 24)])
async def test_every_ledger_figure_on_screen_is_the_engines_value_whole(
    tmp_path: Path, size: tuple[int, int]
) -> None:
    app = app_for(tmp_path)
    async with app.run_test(size=size) as pilot:
        await pilot.press("f2")
        await pilot.pause()
        ledger = app.query_one("LedgerPane")
        # 7.5B parameters, 64 data-parallel ranks, ZeRO-1 (the ZeRO paper's Figure 1), and a
        # model too big for one rank, where the figures have four digits before the point.
        for params, dp in (("7.5B", "64"), ("175B", "1"), ("1B", "1")):
            for name, value in (("params", params), ("dp", dp)):
                field = ledger.query_one(f"#field-{name}", Input)
                field.focus()
                await pilot.press("end", "ctrl+u", *value)
            await pilot.pause()
            # Scroll the figures into view, as the learner would.
            result = ledger.query_one(".calc-result")
            result.scroll_visible(animate=False)
            await pilot.pause()
            preset = PRECISION_PRESETS["mixed-adam"].fields
            expected = compute_ledger(
                LedgerSpec(
                    params=units.parse_count("params", params),
                    dp=int(dp),
                    gpu_memory=80e9,
                    **dict(preset),
                )
            )
            rows = _ledger_rows(screen_lines(app))
            assert "total" in rows, screen_lines(app)
            if (params, dp) == ("7.5B", "64"):
                # Rajbhandari et al. 2020 (ZeRO), Figure 1: 7.5B parameters, no ZeRO: 120 GB.
                assert rows.get("total", ["120.00"])[0] == "120.00"
            labels = {
                "P params": "params",
                "G grads": "grads",
                "M master wts": "master_weights",
                "O optimizer": "optimizer_states",
                "A activations": "activations",
                "B buffers": "buffers",
                "total": "total",
            }
            for label, figures in rows.items():
                value = expected.per_rank_bytes[labels[label]]
                assert figures == [f"{value / units.GB:,.2f}", f"{value / units.GIB:,.2f}"], (
                    label,
                    figures,
                )


@pytest.mark.long
async def test_a_field_error_is_shown_next_to_the_field(tmp_path: Path) -> None:
    from textual.widgets import Button, Static

    app = app_for(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("f2", "f5")
        await pilot.pause()
        ledger = app.query_one("LedgerPane")
        ledger.query_one("#more-open", Button).focus()
        await pilot.press("enter")
        await pilot.pause()
        for name, value in (("seq", "1024"), ("layers", "24"), ("hidden", "2048"), ("heads", "3")):
            ledger.query_one(f"#field-{name}", Input).focus()
            await pilot.press(*value)
        await pilot.pause()
        heads_row = ledger.query_one("#field-heads").parent
        error = ledger.query_one(".calc-error", Static)
        assert isinstance(heads_row, Widget)
        assert ledger.children.index(error) == ledger.children.index(heads_row) + 1
        # Korthikanti et al. 2022: the heads split the hidden size, so 3 must divide 2048.
        text = "\n".join(screen_lines(app))
        assert "heads a: must divide 'hidden h' (2048)" in text


async def test_notifications_replace_each_other_and_stay_off_the_figures(
    tmp_path: Path,
) -> None:
    app = app_for(tmp_path)
    async with app.run_test(size=(80, 24), notifications=True) as pilot:
        await pilot.press("f2", "ctrl+g")
        await pilot.pause()
        await pilot.press("f9", "y", "f9")  # complete (confirmed: steps are left), then back
        await pilot.pause()
        toasts = list(app.screen.query("Toast"))
        assert len(toasts) == 1
        figures = app.query_one("LedgerPane").query_one(".calc-result")
        for toast in toasts:
            assert not toast.region.overlaps(figures.region)


# ----------------------------------------------------------------- settings
async def test_a_read_only_window_does_not_write_the_settings(tmp_path: Path) -> None:
    other = ProgressStore(tmp_path)
    assert other.lock()
    try:
        app = app_for(tmp_path)
        async with app.run_test(size=(120, 40)) as pilot:
            await pilot.press("f6", "f7")
            await pilot.pause()
            assert app.store.read_only
            assert app.settings.get("layout.side") == "hidden"  # kept in memory
        assert not (tmp_path / "settings.yaml").exists()
    finally:
        other.unlock()


async def test_the_first_run_hint_shows_once_and_the_theme_is_remembered(
    tmp_path: Path,
) -> None:
    app = app_for(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        hint = app.query_one(".first-run", BrokenText)
        for key in ("ctrl+n", "ctrl+o", "F2", "F12", "F1"):
            assert key in hint.text
        app.theme = "textual-light"
        await pilot.press("ctrl+n")  # on to the first step: the hint was read
        await wait_until(pilot, lambda: app.settings.get("hints.first_run_seen") is True)
    assert settings_on_disk(tmp_path)["theme"] == "textual-light"
    app = app_for(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        assert not app.query(".first-run")
        assert app.theme == "textual-light"


async def test_the_first_run_hint_counts_as_seen_only_once_it_was_on_screen_a_while(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A window closed a moment after the start (a terminal closed 1.5 s in) leaves the hint
    unseen: the next start shows it. Left on screen HINT_SEEN_SECONDS (here made short), it
    counts as seen without a key."""
    from tui.screens import main

    def hints_on_disk() -> object:
        exists = (tmp_path / "settings.yaml").exists()
        return settings_on_disk(tmp_path).get("hints") if exists else None

    app = app_for(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        assert app.query(".first-run")
    assert hints_on_disk() is None
    monkeypatch.setattr(main, "HINT_SEEN_SECONDS", 0.2)
    app = app_for(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        assert app.query(".first-run")  # shown again: not seen the first time
        await wait_until(pilot, lambda: hints_on_disk() is not None)
        assert app.query(".first-run")  # it stays on its page
    assert hints_on_disk() == {"first_run_seen": True}
    app = app_for(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        assert not app.query(".first-run")


async def test_a_side_pane_shown_with_f6_at_80_columns_is_shown_at_the_next_start(
    tmp_path: Path,
) -> None:
    app = app_for(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        assert not app.query_one("#side").display
        assert app.query_one("#reading").content_region.width >= 76
        await pilot.press("f6")
        await pilot.pause()
        assert app.query_one("#side").display
    app = app_for(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        assert app.query_one("#side").display
        assert app.query("LedgerPane")


@pytest.mark.parametrize("width", [20, 26, 30, 36, 44, 60])
def test_ledger_tables_stack_rather_than_cut_a_figure(width: int) -> None:
    """Wider than the pane, a table's rows stack, each figure whole under its column's name;
    a row's label is never cut either (the Ledger's "naive N × precision" was, to 13 cells)."""
    from rich.console import Console

    from engine.ledger import compare_conventions
    from tui.widgets.ledger import LedgerPane, comparison_renderable, ledger_renderable

    # GPT-3 175B (Brown et al. 2020) on one rank: four-digit GB figures.
    spec = LedgerSpec(params=175e9, gpu_memory=80e9)
    result = compute_ledger(spec)
    for index, (renderable, values) in enumerate(
        (
            (ledger_renderable(result, LedgerPane().field_named), result.per_rank_bytes.values()),
            (
                comparison_renderable(compare_conventions(spec)),
                [v for r in compare_conventions(spec).values() for v in r.per_rank_bytes.values()],
            ),
        )
    ):
        console = Console(width=width, record=True, file=open("/dev/null", "w"))  # noqa: SIM115
        console.print(renderable)
        text = console.export_text()
        tokens = set(re.findall(r"[\d,]+\.\d\d(?![\d])", text))
        assert all(cell_len(line) <= width for line in text.splitlines())
        for value in values:
            assert f"{value / units.GB:,.2f}" in tokens, (value, text)
        assert "…" not in text, text  # no figure, and no label either, ends in an ellipsis
        if index == 0:  # the ledger: its label column as wide as it needs (it was 13 cells)
            assert "naive N × precision" in text


async def test_zoomed_at_80_columns_every_diagram_fits(tmp_path: Path) -> None:
    from engine.diagrams import STRATEGY_NAMES, WIDTH
    from tui.widgets.diagrams import DiagramsPane

    app = app_for(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("f4", "f5")
        await pilot.pause()
        pane = app.query_one(DiagramsPane)
        scroll = app.query_one("#diagram-scroll")
        assert WIDTH == 80
        for name in STRATEGY_NAMES:
            pane.show(name)
            await pilot.pause()
            assert scroll.max_scroll_x == 0, name  # nothing to the right: no column cut
            assert scroll.region.width == 80


@pytest.mark.parametrize("width", [82, 100, 120])
async def test_zoomed_with_room_the_diagrams_and_collectives_keep_the_panes_padding(
    tmp_path: Path, width: int
) -> None:
    """Zoomed (F5), Diagrams and Collectives started at column 0 at any width, the other panes
    one column in: from 82 columns, where the 80-column pictures still fit beside it, they keep
    the same column on each side; and every diagram still fits."""
    from engine.diagrams import STRATEGY_NAMES
    from tui.widgets.collectives import CollectivesPane
    from tui.widgets.diagrams import DiagramsPane

    app = app_for(tmp_path)
    async with app.run_test(size=(width, 30)) as pilot:
        await pilot.press("f4", "f5")
        pane = app.query_one(DiagramsPane)
        # Its padding is set when it learns its width (a resize event after the zoom's layout).
        await wait_until(pilot, lambda: pane.content_region.x == 1)
        assert pane.content_region.right == width - 1
        scroll = app.query_one("#diagram-scroll")
        for name in STRATEGY_NAMES:
            pane.show(name)
            await pilot.pause()
            assert scroll.max_scroll_x == 0, name
        await pilot.press("f4")
        await pilot.pause()
        collectives = app.query_one(CollectivesPane)
        await wait_until(pilot, lambda: collectives.content_region.x == 1)
        lines = screen_lines(app)
        title = next(line for line in lines if "Collective data flow" in line)
        assert title.startswith(" Collective data flow"), title


async def test_the_diagrams_text_is_broken_again_when_its_scroll_bar_appears(
    tmp_path: Path,
) -> None:
    """Beside the lesson at 100 columns in Chinese, the parts unfolded by ctrl+r made the pane
    scroll, and its scroll bar narrowed the text broken for the width before: Textual wrapped
    its lines again at spaces (切分：… 1/4, 的样本； alone, 权重不切分 indented). The text is
    broken again at the new width: each line drawn is one of its lines."""
    app = make_app(progress_dir=tmp_path, language="zh")
    async with app.run_test(size=(100, 40)) as pilot:
        await pilot.press("f4")
        await pilot.pause()
        await pilot.press("ctrl+r")
        await pilot.pause()
        await pilot.press("enter")
        head = app.query_one("#diagram-head", Static)
        await wait_until(pilot, lambda: "切分" in str(head.render()))
        await pilot.pause()
        await pilot.pause()
        lines = str(head.render()).split("\n")
        assert head.size.height == len(lines), lines
        assert max(cell_len(line) for line in lines) <= head.content_region.width


@pytest.mark.parametrize("language", ["en", "zh"])
async def test_the_diagrams_text_is_broken_for_its_width_after_another_tab(
    tmp_path: Path, language: str
) -> None:
    """The learner's trial: from a DP note reached from the notes view, F3 (Bubble) then F4.
    Leaving the note box drew the text again while the pane was hidden, at 80 columns. The
    lesson scrolled meanwhile (a frame drawn by a scroll lays out only what is on screen), and
    Textual sent the pane no Resize when shown again at its old size: its 80-column lines were
    wrapped again at spaces (``until`` alone, lines indented wrongly, in Chinese a line
    starting with ；). Each line drawn is one of the text's lines, within the width, none
    starting with closing punctuation."""
    from tui.widgets.diagrams import DiagramsPane

    notes = {
        "ex2.dp.split": "the batch",
        "ex3.dp.comm": "all-reduce",
        "ex3.dp.wait": "the gradients' sum",
    }
    ProgressStore(tmp_path).save(LessonProgress("S15", notes=notes))
    app = make_app(progress_dir=tmp_path, language=language)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("ctrl+e")
        await pilot.pause()
        await pilot.press("home", "enter")
        await wait_until(pilot, lambda: isinstance(app.focused, TextArea))
        await pilot.press("f3")
        await wait_until(pilot, lambda: app.query_one(DiagramsPane).region.width == 0)
        await pilot.pause()
        pane = app.query_one(DiagramsPane)
        app.query_one("#reading", Widget).scroll_to(y=3, animate=False)  # the lesson scrolled
        await pilot.pause()
        await pilot.press("f4")
        await wait_until(pilot, lambda: pane.region.width > 0)
        await pilot.pause()
        await pilot.pause()
        for part in ("#diagram-head", "#diagram-tail"):
            text = pane.query_one(part, Static)
            if not text.display:
                continue
            lines = str(text.render()).split("\n")
            assert text.size.height == len(lines), (part, lines)
            assert max(cell_len(line) for line in lines) <= text.size.width, (part, lines)
            assert not any(line and is_closing(line[0]) for line in lines), (part, lines)


# ----------------------------------------------------------------- the footer
@pytest.mark.parametrize("keys", [[], ["f2"], ["f12"]])
async def test_the_footer_shows_only_keys_that_fit_whole(tmp_path: Path, keys: list[str]) -> None:
    """At 80 columns Textual's footer ran past the edge (``… f6 Si``, ``^q Q``): the keys shown
    end within the screen, and help and quit are among them."""
    app = app_for(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press(*keys)

        def fitted() -> bool:
            # The footer's keys by their type's name (Textual does not export the class).
            shown = [key for key in app.screen.query("FooterKey") if key.display]
            footer = screen_lines(app)[-1]
            return (
                all(0 < key.region.right <= 80 for key in shown)
                and "^q Quit" in footer
                and "f1 Help" in footer
                and len(shown) >= 4
            )

        await wait_until(pilot, fitted, timeout=5)


@pytest.mark.parametrize("size", [(40, 12), (80, 24)])
async def test_the_footer_keeps_the_focused_boxs_key_before_the_screens(
    tmp_path: Path, size: tuple[int, int]
) -> None:
    """In a self-check answer box at 40 columns the footer read ``f6 Side f7 Read ^q Quit f1
    Help``: the box's own key, ctrl+r to reveal the answer, was cut after the screen's F6 and
    F7. The focused box's key is kept before them; help and quit stay."""
    from tui.widgets.notes import SelfCheckBox

    app = app_for(tmp_path)
    async with app.run_test(size=size) as pilot:
        await goto_section(pilot, app, "self-check")
        app.query(SelfCheckBox).first().text_area.focus()
        await wait_until(pilot, lambda: "^r Reveal" in screen_lines(app)[-1])
        footer = screen_lines(app)[-1]
        assert "^q Quit" in footer and "f1 Help" in footer, footer


async def test_the_footer_hides_the_keys_that_do_not_fit_before_it_lays_them_out(
    tmp_path: Path,
) -> None:
    """At 60 columns some keys do not fit: the keys composed with the footer, and again after
    each recompose, are fitted before their first layout, so no frame shows the full row cut at
    the edge. The first keys come with the first frame (no recompose after it)."""
    from tui.widgets.footer import KeysFooter

    fitted_when_built: list[list[bool]] = []
    on_mount, recompose = KeysFooter.on_mount, KeysFooter.recompose

    def shown_keys(footer: KeysFooter) -> list[bool]:
        return [key.display for key in footer._footer_keys()]

    def mounted(footer: KeysFooter) -> None:
        on_mount(footer)
        fitted_when_built.append(shown_keys(footer))

    async def recomposed(footer: KeysFooter) -> None:
        await recompose(footer)
        fitted_when_built.append(shown_keys(footer))

    app = app_for(tmp_path)
    KeysFooter.on_mount = mounted  # type: ignore[method-assign]
    KeysFooter.recompose = recomposed  # type: ignore[method-assign,assignment]
    try:
        async with app.run_test(size=(60, 20)) as pilot:
            await wait_until(pilot, lambda: bool(fitted_when_built))
            await pilot.pause()
            footer = app.screen.query_one(KeysFooter)
            first = shown_keys(footer)
            assert len(fitted_when_built) == 1  # composed once: no recompose at start-up
            assert not all(first)  # some keys are hidden at this width
            assert fitted_when_built[-1] == first
            await pilot.press("f2")  # the Ledger's form takes the focus: other keys
            await wait_until(pilot, lambda: len(fitted_when_built) > 1)
            await pilot.pause()
            settled = shown_keys(footer)
    finally:
        KeysFooter.on_mount = on_mount  # type: ignore[method-assign]
        KeysFooter.recompose = recompose  # type: ignore[method-assign]
    assert not all(settled)
    assert fitted_when_built[-1] == settled


async def test_choosing_a_model_preset_keeps_the_field_where_it_was(tmp_path: Path) -> None:
    """The preset fills the model's shape and the figures above the field grow: the pane
    scrolls with them, so the ``model`` field stays on its row (it was pushed off screen)."""
    from textual.widgets import Select

    app = app_for(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        # Focusing may scroll the field into view, animated: its row once that is over.
        model = await model_picker_in_view(pilot, app)
        assert isinstance(model, Select)
        ledger = app.query_one("LedgerPane")
        row = model.region.y
        await pilot.press("enter", "down", "down", "enter")
        await wait_until(pilot, lambda: model.value != "custom")
        # The pane scrolls with the figures once they are laid out: a frame or more later.
        await wait_until(pilot, lambda: model.region.y == row)
        assert app.focused is model
        assert ledger.region.contains_region(model.region)


async def model_picker_in_view(pilot: Pilot[int], app: ShardbookApp) -> Widget:
    """F2, the Ledger's rest of the form opened, its model picker focused and in view."""
    await pilot.press("f2")
    await pilot.pause()
    ledger = app.query_one("LedgerPane")
    ledger.query_one("#more-open").focus()
    await pilot.press("enter")
    await pilot.pause()
    model = ledger.query_one("#field-model")
    model.focus()
    await pilot.wait_for_scheduled_animations()
    await settle(pilot)
    assert ledger.region.contains_region(model.region)
    return model


@pytest.mark.parametrize("size", [(80, 24), (40, 12)])
async def test_scroll_keys_from_a_picker_scroll_the_pane_and_the_focus_follows_the_view(
    tmp_path: Path, size: tuple[int, int]
) -> None:
    """Home, PageDown and Up from the model picker, in one read: Home and PageDown scrolled the
    pane away from the picker, still focused, and Up opened its list out of view, over the
    figures and the footer. The pane takes the focus once the picker is out of view: Up scrolls
    it one row, and Tab goes back into the form's first field."""
    from textual.widgets import Select

    app = app_for(tmp_path)
    async with app.run_test(size=size) as pilot:
        model = await model_picker_in_view(pilot, app)
        assert isinstance(model, Select)
        ledger = app.query_one("LedgerPane", Widget)
        await burst(app, "home", "pagedown", "up")
        await pilot.wait_for_scheduled_animations()
        await settle(pilot)
        assert not model.expanded
        assert app.focused is ledger
        page = ledger.scrollable_content_region.height
        assert ledger.scroll_y == page - 1
        assert not ledger.region.overlaps(model.region)
        await pilot.press("tab")
        await pilot.wait_for_scheduled_animations()
        await settle(pilot)
        params = app.query_one("#field-params", Input)
        assert app.focused is params
        assert ledger.region.contains_region(params.region)


async def test_the_wheel_scrolling_a_picker_away_gives_the_focus_to_the_pane(
    tmp_path: Path,
) -> None:
    """The wheel over the Ledger (as the terminal reports it: SGR mouse, button 65 down), until
    the focused model picker is out of view; then Up: it opened the picker's list out of view.
    The pane has the focus once the picker is out of view, and Up scrolls it."""
    from textual.widgets import Select

    app = app_for(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        model = await model_picker_in_view(pilot, app)
        assert isinstance(model, Select)
        ledger = app.query_one("LedgerPane", Widget)
        x, y = ledger.region.x + 10, ledger.region.y + 5
        for _ in range(10):
            await terminal_read(app, f"\x1b[<65;{x + 1};{y + 1}M")
            await settle(pilot)
            if not ledger.region.overlaps(model.region):
                break
        assert not ledger.region.overlaps(model.region)
        # The focus follows once the wheel's scroll is drawn (after the refresh that applies it).
        await wait_until(pilot, lambda: app.focused is ledger)
        scrolled = ledger.scroll_y
        await pilot.press("up")
        await pilot.wait_for_scheduled_animations()
        await settle(pilot)
        assert not model.expanded
        assert ledger.scroll_y == scrolled - 1


@pytest.mark.parametrize("size", [(80, 24), (40, MIN_HEIGHT)])
async def test_a_pickers_open_list_leaves_the_footer_on_screen(
    tmp_path: Path, size: tuple[int, int]
) -> None:
    """The model picker on the pane's last row, opened: Textual moved its list up to fit the
    screen, over the footer that shows the key closing it."""
    app = app_for(tmp_path)
    async with app.run_test(size=size) as pilot:
        model = await model_picker_in_view(pilot, app)
        ledger = app.query_one("LedgerPane", Widget)
        view = ledger.scrollable_content_region
        ledger.scroll_to(y=ledger.scroll_y + model.region.y - (view.bottom - 1), animate=False)
        await settle(pilot)
        assert model.region.y == view.bottom - 1
        await pilot.press("enter")
        await settle(pilot)
        open_list = model.query_one(OptionList)
        assert open_list.region.height >= 3
        assert open_list.region.bottom <= size[1] - 1
        assert screen_lines(app)[-1].startswith("esc Dismiss menu")


# Each strategy's split dimension, as the lesson states it (content/S15.yaml, "机制与推导": DP
# replicates the model and splits the batch; FSDP/ZeRO-3 shards parameters, gradients and
# optimizer states, Rajbhandari et al. 2020, arXiv:1910.02054, Sec. 5).
SPLIT_ANSWERS = {
    ("en", "dp"): "Split: the batch: each rank runs 1/4 of the samples; weights are not split",
    ("zh", "fsdp"): (
        "切分：参数、梯度和优化器状态分成 4 片（每个展平参数按元素切分）；batch 与 DP 相同"
    ),
}


@pytest.mark.parametrize("size", [(80, 24), (60, 20), (120, 40)])
@pytest.mark.parametrize(("language", "strategy"), list(SPLIT_ANSWERS))
async def test_the_diagrams_answer_shows_whole_in_the_side_pane(
    tmp_path: Path, size: tuple[int, int], language: str, strategy: str
) -> None:
    """Not zoomed, the engine's answer was cut at the pane's edge (the diagram is 80 columns
    and scrolls sideways): its text is broken at the pane's width, every word on screen."""
    from textual.widgets import Static

    from tui.widgets.diagrams import DiagramsPane

    app = make_app(progress_dir=tmp_path, autosave_delay=0.05, language=language)
    async with app.run_test(size=size) as pilot:
        await pilot.press("f4")
        await pilot.pause()
        pane = app.query_one(DiagramsPane)
        await pane.show_strategy(strategy)
        await pilot.pause()
        await pilot.press("ctrl+r", "y")  # look first: the folded answers are shown
        await wait_until(pilot, lambda: not pane.folded_parts())
        await pilot.pause()
        head = pane.query_one("#diagram-head", Static)
        text = str(head.render())
        width = pane.scrollable_content_region.width
        assert all(cell_len(line) <= width for line in text.splitlines())
        assert pane.region.contains_region(head.region.intersection(pane.region))
        assert head.region.width <= width
        joined = "".join(text.split())
        assert "".join(SPLIT_ANSWERS[language, strategy].split()) in joined


async def test_every_side_pane_keeps_a_column_from_the_divider(tmp_path: Path) -> None:
    """Beside the lesson, every side pane's text starts one blank column right of the divider:
    the Diagrams, Collectives and Lab panes had no left padding and their text touched it."""
    app = app_for(tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        for keys, pane_name in (
            (("f2",), "LedgerPane"),
            (("f3",), "BubblePane"),
            (("f4",), "DiagramsPane"),
            (("f4",), "CollectivesPane"),
            (("f10",), "TradeoffsPane"),
            (("ctrl+l",), "LabPane"),
        ):
            await pilot.press(*keys)
            await settle(pilot)
            pane = app.query_one(pane_name)
            assert pane.region.width > 0, pane_name
            assert pane.content_region.x - pane.region.x == 1, pane_name


async def ledger_params(pilot: Pilot[int], app: ShardbookApp) -> Input:
    """F2: the Ledger's parameter count, focused."""
    await pilot.press("f2")
    await settle(pilot)
    params = app.query_one("#field-params", Input)
    assert app.focused is params
    return params


async def test_the_panes_key_again_brings_its_focused_field_back_into_view(tmp_path: Path) -> None:
    """F2, the form scrolled down to its figures, F2 again: the parameter count is on screen
    before the learner types over it (the focus was there already, so nothing scrolled)."""
    app = app_for(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        params = await ledger_params(pilot, app)
        pane = app.query_one("LedgerPane")
        await pilot.press("pagedown", "pagedown")
        await pilot.wait_for_scheduled_animations()
        await settle(pilot)
        assert not pane.region.contains_region(params.region)
        await pilot.press("f2")
        await pilot.wait_for_scheduled_animations()
        await settle(pilot)
        assert app.focused is params
        assert pane.region.contains_region(params.region)


async def test_the_panes_key_back_from_another_gives_a_field_the_focus(
    tmp_path: Path, notified: Notified
) -> None:
    """F2, the form scrolled down to its figures (the pane takes the focus from the field it
    scrolled away), F4, then F2 back: the parameter count has the focus and is on screen, as on
    a first visit, so the next key lands in it (it replaces the value Textual's Input selects
    on focus, "1B"). The pane kept the focus and its scroll: the 9 was refused, out of sight of
    the field, and `[` or `/` acted on the lesson."""
    app = app_for(tmp_path)
    async with app.run_test(size=(80, 24), message_hook=notified.hook) as pilot:
        params = await ledger_params(pilot, app)
        pane = app.query_one("LedgerPane")
        await pilot.press("pagedown", "pagedown")
        await pilot.wait_for_scheduled_animations()
        await settle(pilot)
        assert app.focused is pane
        assert not pane.region.contains_region(params.region)
        await pilot.press("f4")
        await settle(pilot)
        await pilot.press("f2")
        await pilot.wait_for_scheduled_animations()
        await settle(pilot)
        assert app.focused is params
        assert pane.region.contains_region(params.region)
        await pilot.press("9")
        await settle(pilot)
        assert params.value == "9"
        assert not [text for text in notified.messages if '"9"' in text]


async def test_the_panes_key_back_to_the_field_typed_in_keeps_its_value(
    tmp_path: Path,
) -> None:
    """F2 (the cursor in params N), F3, F2 back: params N has the focus again with the cursor at
    the end of its value, as after a restart, so the next key goes on from it. Textual's Input
    selected the whole value as it took the focus back, and ``y`` turned 1B into y."""
    app = app_for(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        params = await ledger_params(pilot, app)
        assert app.focused is params
        await pilot.press("f3")
        await settle(pilot)
        await pilot.press("f2")
        await settle(pilot)
        assert app.focused is params
        await pilot.press("y")
        await settle(pilot)
        assert params.value == "1By"


@pytest.mark.parametrize("size", [(60, 20), (120, 40)])
async def test_a_resize_keeps_the_side_pane_being_typed_in(
    tmp_path: Path, size: tuple[int, int]
) -> None:
    """Typing in the Ledger at 80x24, the terminal made narrower (the lesson first there) or
    wider: the field stays on screen and focused, and the next key lands in it."""
    app = app_for(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        params = await ledger_params(pilot, app)
        await pilot.press("end", "backspace", "backspace")
        await pilot.resize_terminal(*size)
        await settle(pilot)
        await pilot.press("7", "B")
        await settle(pilot)
        assert app.focused is params and params.value == "7B"
        assert app.main_screen.arrangement.side


async def test_a_side_tab_shown_at_start_is_blank_until_its_content_is_there(
    tmp_path: Path,
) -> None:
    # At 120x40 the side pane is in the first frame; the tab where the lesson was left comes a
    # frame or two later: meanwhile its tab pane draws nothing (Textual draws an empty widget's
    # class name).
    app = app_for(tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("f3")
        await wait_until(pilot, lambda: bool(app.query("BubblePane")))
        await pilot.press("ctrl+q")
    app = app_for(tmp_path)
    frames: list[list[str]] = []
    display = app._display

    def recorded(screen: object, renderable: object) -> None:
        display(screen, renderable)  # type: ignore[arg-type]
        if renderable is not None:
            frames.append(screen_lines(app))

    app._display = recorded  # type: ignore[method-assign]
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: bool(app.query("BubblePane")))
        await settle(pilot)
    assert len(frames) > 1 and "Pipeline bubble" in " ".join(frames[-1])
    assert "Pipeline bubble" not in " ".join(frames[0])  # the tab's content after the first
    assert not [line for frame in frames for line in frame if "TabPane" in line]


async def test_a_choice_wider_than_its_picker_ends_in_an_ellipsis(tmp_path: Path) -> None:
    """At 120x40 the side pane's pickers are narrower than at 80x24 (where every choice fits,
    tests/test_i18n.py): ``mixed-precision Adam`` wrapped onto a second line the form row does
    not show, and read ``mixed-precision`` with no mark of what was cut."""
    app = make_app(progress_dir=tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("f2")
        await wait_until(pilot, lambda: any("precision " in line for line in screen_lines(app)))
        await settle(pilot)
        row = next(line for line in screen_lines(app) if "precision " in line)
        shown = row.partition("precision ")[2].strip().removesuffix("▼").strip()
        assert shown == "mixed-precision Adam" or (
            shown.endswith("…") and "mixed-precision Adam".startswith(shown[:-1])
        ), row
        assert shown != "mixed-precision", row


async def test_zoomed_the_side_pane_gets_its_new_width_and_full_tab_names(tmp_path: Path) -> None:
    """F3 then F5 at 80x24: the side pane widened to the whole screen, but its tab row kept the
    short names it was given at 43 columns (``Diagr.``, ``Coll.``), in 3 starts of 5: the width
    change reached no widget when a look-up had rebuilt the compositor's map in between (the map
    a layout compares with to find the widgets it resized). Three starts, each must show them."""
    from tui.widgets.side_tabs import LazyTabbedContent

    for _ in range(3):
        app = app_for(tmp_path)
        async with app.run_test(size=(80, 24)) as pilot:
            await pilot.pause()
            await pilot.press("f3", "f5")
            await settle(pilot)
            tabs = app.query_one(LazyTabbedContent)
            await wait_until(pilot, lambda tabs=tabs: tabs.size.width == 80)
            await settle(pilot)
            assert tabs.get_tab("diagrams").label.plain == "Diagrams"
            assert "Ledger Bubble Diagrams Collectives Trade-offs Lab" in screen_lines(app)[1]


ZOOM_HINT_PANES = [
    pytest.param("f10", "TradeoffsPane", id="tradeoffs"),
    pytest.param("f4", "DiagramsPane", id="diagrams"),
    pytest.param("ctrl+l", "LabPane", id="lab"),
]


@pytest.mark.parametrize(("key", "pane_name"), ZOOM_HINT_PANES)
@pytest.mark.parametrize(
    ("language", "widens", "narrows"),
    [
        pytest.param("en", "F5 widens", "F5 narrows", id="en"),
        pytest.param("zh", "F5 加宽", "F5 收窄", id="zh"),
    ],
)
async def test_a_panes_f5_hint_says_what_f5_does_now(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    key: str,
    pane_name: str,
    language: str,
    widens: str,
    narrows: str,
) -> None:
    """Zoomed (F5: the side pane alone, the whole width), the Trade-offs, Diagrams and Lab
    panes still said "F5 widens the pane". The hint says what F5 does in each state: beside the
    lesson it widens (zooms) the pane; zoomed it narrows it and brings the lesson back (the
    lesson is on screen again after F5); again beside the lesson after that F5."""
    monkeypatch.setattr("tui.widgets.lab.torch_available", lambda: True)
    app = make_app(progress_dir=tmp_path, language=language)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press(key)
        screen = app.main_screen
        await wait_until(pilot, lambda: bool(screen.query(pane_name)))
        pane = screen.query_one(pane_name)

        def shown() -> list[str]:
            """The hints naming F5 that are on screen (laid out, not hidden): one, once the
            layout is done."""
            return [
                hint.text
                for hint in pane.query(BrokenText)
                if "F5" in hint.text and hint.display and hint.region.height
            ]

        await wait_until(pilot, lambda: len(shown()) == 1)
        (beside,) = shown()
        assert widens in beside or "F5 zooms" in beside or "F5 放大" in beside
        assert narrows not in beside
        await pilot.press("f5")
        await wait_until(pilot, lambda: not screen.arrangement.reading)
        await settle(pilot)
        await wait_until(pilot, lambda: len(shown()) == 1)
        (zoomed,) = shown()
        assert narrows in zoomed and widens not in zoomed and "zooms" not in zoomed
        await pilot.press("f5")
        await wait_until(pilot, lambda: screen.arrangement.reading)
        await settle(pilot)
        await wait_until(pilot, lambda: len(shown()) == 1)
        assert shown() == [beside]
        await pilot.press("ctrl+q")


async def test_on_a_narrow_screen_f5_brings_no_lesson_back_and_the_hint_does_not_say_so(
    tmp_path: Path,
) -> None:
    """Under 80 columns the side pane replaces the lesson, zoomed or not: F5 there brings no
    lesson back, so the Trade-offs hint keeps its wording beside the lesson."""
    app = app_for(tmp_path)
    async with app.run_test(size=(60, 20)) as pilot:
        await pilot.press("f10")
        screen = app.main_screen
        await wait_until(pilot, lambda: bool(screen.query("TradeoffsPane")))
        pane = screen.query_one("TradeoffsPane")
        await pilot.press("f5")
        await wait_until(pilot, lambda: screen.zoomed)
        await settle(pilot)
        hints = [t for t in pane.query(BrokenText) if "F5" in t.text]
        await wait_until(pilot, lambda: len([t for t in hints if t.region.height]) == 1)
        (hint,) = [t.text for t in hints if t.display and t.region.height]
        assert "F5 widens the pane" in hint and "brings the lesson back" not in hint
        await pilot.press("ctrl+q")


async def test_a_resize_keeps_the_note_box_being_typed_in_on_screen(tmp_path: Path) -> None:
    """Typing in the Diagrams pane's DP note at 80x24, then resized to 40x12: the pane stays
    (it is being worked in) and the box, label and cursor line, is scrolled back into view
    (the text above it, broken at the narrower width, had pushed it below the pane's bottom);
    the next keys go on in it, seen."""
    from tui.widgets.notes import NoteBox

    app = app_for(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("f4")
        await wait_until(pilot, lambda: bool(app.query("DiagramsPane NoteBox")))
        for _ in range(3):  # past the picture's scroll, as the learner tabs
            if isinstance(app.focused, TextArea):
                break
            await pilot.press("tab")
            await pilot.pause()
        area = app.focused
        assert isinstance(area, TextArea)
        box = next(node for node in area.ancestors if isinstance(node, NoteBox))
        assert box.item.id == "ex2.dp.split"
        await pilot.press(*"batch split across 4 ranks")
        await pilot.pause()
        await pilot.resize_terminal(40, 12)
        await pilot.press(*", params replicated")
        await wait_until(pilot, lambda: area.text.endswith("params replicated"))
        pane = app.query_one("DiagramsPane", Widget)
        await wait_until(
            pilot,
            lambda: bool(box.region.height) and pane.region.contains_region(box.region),
        )
        assert app.focused is area
        await pilot.press("ctrl+q")
    saved = yaml.safe_load((tmp_path / "S15.yaml").read_text(encoding="utf-8"))
    assert saved["notes"]["ex2.dp.split"] == "batch split across 4 ranks, params replicated"


def test_ledger_figures_share_one_rule_per_column() -> None:
    """LoRA r = 8 on q of Llama 2 7B (Touvron et al. 2023: 32 layers, hidden 4096): r(d_in +
    d_out) = 8 × 8,192 = 65,536 adapter parameters a layer, 2,097,152 in all (Hu et al. 2021).
    Their grads are 2 B each in the ZeRO paper's layout (4,194,304 B), 4 B as Megatron-LM's fp32
    main grads (8,388,608 B), 2 + 4 B with DeepSpeed's fp32 copy (12,582,912 B). The smallest
    figure needs 4 decimals: every cell has them (0.004194 beside 0.01 mixed two rules)."""
    from rich.console import Console, RenderableType

    from engine.ledger import compare_conventions
    from tui.widgets.ledger import LedgerPane, comparison_renderable, ledger_renderable

    spec = LedgerSpec(model="llama2-7b", finetune="lora", lora_targets=("q",))

    def rows(renderable: RenderableType) -> dict[str, list[str]]:
        console = Console(width=80, record=True, file=io.StringIO())
        console.print(renderable)
        found: dict[str, list[str]] = {}
        for line in console.export_text().splitlines():
            words = line.split()
            if words and words[-1][-1:].isdigit():
                found.setdefault(" ".join(w for w in words if not w[0].isdigit()), words)
        return found

    compared = rows(comparison_renderable(compare_conventions(spec)))
    assert compared["grads"][1:] == ["0.0042", "0.0084", "0.0126"]
    # 4,194,304 B = 4 MiB = 0.00390625 GiB.
    ledger = rows(ledger_renderable(compute_ledger(spec), LedgerPane().field_named))
    assert ledger["G grads"][2:] == ["0.0042", "0.0039"]
    assert all(len(cell.split(".")[1]) == 4 for cell in ledger["total"][1:]), ledger["total"]


@pytest.mark.parametrize("key", ["end", "pagedown", "down", "f5"])
async def test_at_40x12_the_labs_install_command_scrolls_into_view(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, key: str
) -> None:
    """At 40x12 without torch the Lab's install command was below the pane's bottom edge: the
    pane did not scroll (no scroll bar; End, PageDown, Down and F5 did nothing). It scrolls like
    the other side panes: its key focuses it, and the scroll keys bring the command into view
    (F5 gives the pane the whole screen, then End)."""
    import tui.widgets.lab
    from engine.lab import install_command

    monkeypatch.setattr(tui.widgets.lab, "torch_available", lambda: False)
    command = install_command()
    app = app_for(tmp_path)
    async with app.run_test(size=(40, 12)) as pilot:
        await pilot.press("ctrl+l")
        await settle(pilot)
        assert not [row for row in screen_lines(app) if command in row]
        pane = app.query_one("LabPane", Widget)
        assert pane.show_vertical_scrollbar
        for press in [key, "end"] if key == "f5" else [key] * (12 if key == "down" else 1):
            await pilot.press(press)
            await pilot.wait_for_scheduled_animations()
            await settle(pilot)
        assert [row for row in screen_lines(app) if command in row], screen_lines(app)
        assert app.focused is pane


async def test_the_labs_chinese_text_is_broken_by_the_apps_rules(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """At 80x24 in Chinese the Lab's text is broken by the lesson's rules, between Chinese
    characters where a line is full: drawn by Rich's wrap at spaces, the first line was only
    实验在真实的 rank 上运行 with about 50 columns empty, and another just 2.13 的 CPU."""
    import tui.widgets.lab

    monkeypatch.setattr(tui.widgets.lab, "torch_available", lambda: False)
    app = make_app(progress_dir=tmp_path, language="zh")
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("ctrl+l", "f5")
        await settle(pilot)
        rows = [line.strip(" │▐▌") for line in screen_lines(app)]
        first = next(row for row in rows if row.startswith("实验在真实的"))
        assert "collective（torch.distributed，Gloo，仅限本机），并" in first, rows
        assert not [row for row in rows if row in ("2.13 的 CPU", "实验在真实的 rank 上运行")]


async def test_the_op_times_field_that_takes_the_focus_is_scrolled_into_view(
    tmp_path: Path,
) -> None:
    """The Bubble pane zoomed at 80x24, its button at the foot of the pane: Enter on
    ``▸ op times`` showed only the title of the rows it opened, the field with the focus below
    the screen (Textual scrolled it into view within the pane's height before the rows were
    laid out). The focused field is on screen, inside the pane."""
    from tui.widgets.bubble import BubblePane

    app = make_app(progress_dir=tmp_path, autosave_delay=3600)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("f3")
        await pilot.press("f5")
        pane = app.query_one(BubblePane)
        button = pane.query_one("#more-open")
        # Tab from the first field to the button, past the four other fields and the timeline.
        await burst(app, *["tab"] * 6)
        assert app.focused is button
        await burst(app, "enter")
        await wait_until(pilot, lambda: app.focused is not button)
        field = pane.query_one("#field-t_forward")
        assert app.focused is field
        await pilot.pause()
        await pilot.pause()
        assert pane.region.contains_region(field.region), (field.region, pane.region)
