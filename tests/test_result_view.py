"""The calculator's result view and form fields: drawn once per key, no needless re-layout."""

from __future__ import annotations

import asyncio
import contextlib
import io
import re
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st
from rich.console import Console
from rich.text import Text
from textual.app import App, ComposeResult
from textual.geometry import Region
from textual.pilot import Pilot
from textual.widget import Widget
from textual.widgets import Input, Select, Static

from engine.errors import InputError
from engine.pipeline.spec import Schedule
from engine.progress import LessonProgress, ProgressStore
from tests.pilot_helpers import (
    SIZE,
    TerminalCopy,
    app_for,
    choose,
    goto_section,
    paste_into,
    result_text,
    shown,
    wait_until,
)
from tui.app import make_app
from tui.compositor import in_view
from tui.widgets.bubble import TimelineView
from tui.widgets.calculator import ResultView
from tui.widgets.ledger import LedgerPane
from tui.widgets.notes import SelfCheckBox


class OneView(App[None]):
    def compose(self) -> ComposeResult:
        yield ResultView("[bold]x[/] a[/", classes="calc-result")


async def test_text_is_literal_and_typing_never_shrinks_the_view() -> None:
    app = OneView()
    async with app.run_test(size=(20, 10)) as pilot:
        view = app.query_one(ResultView)
        await pilot.pause()
        assert shown(view).strip() == "[bold]x[/] a[/"
        view.show(Text("1\n2\n3\n4"), typing=True)
        await pilot.pause()
        assert view.size.height == 4
        view.show(Text("1\n2"), typing=True)
        await pilot.pause()
        assert view.size.height == 4  # padded: the fields below do not jump
        assert [view.render_line(y).text.strip() for y in range(4)] == ["1", "2", "", ""]
        view.show(Text("1\n2"), typing=False)
        await pilot.pause()
        assert view.size.height == 2


async def test_typing_in_the_ledger_repaints_without_re_laying_out(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # No autosave during the test: a save changes the header, which is laid out again.
    app = make_app(progress_dir=tmp_path, autosave_delay=3600)
    layouts: list[Widget] = []
    real = Widget.refresh

    def counting(self: Widget, *regions: Region, **kwargs: bool) -> Widget:
        # A widget asks for a new layout with refresh(layout=True) (Textual's public API).
        if kwargs.get("layout"):
            layouts.append(self)
        return real(self, *regions, **kwargs)

    # Every value on the way is valid (7B, 17B, 137B, 13B, then back), so no error line appears.
    edits = ("home", "1", "3", "delete", "home", "delete", "delete", "7", "end")
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("f2")
        await pilot.pause()
        ledger = app.query_one("LedgerPane")
        params = ledger.query_one("#field-params", Input)
        params.focus()
        await pilot.press("end", "backspace", "backspace", "7", "B", *edits)
        await pilot.pause()
        assert params.value == "7B"
        # The first pass grew the result to its tallest; typing never shrinks it, so the same
        # edits again only repaint.
        monkeypatch.setattr(Widget, "refresh", counting)
        for key in edits[:4]:
            await pilot.press(key)
            await pilot.pause()
        monkeypatch.undo()
        assert params.value == "13B"
        assert layouts == []
        text = result_text(ledger)
        # 13e9 params x 16 B (ZeRO paper §3.1) = 208 GB; each term's source below the figures.
        total = next(line for line in text.splitlines() if line.startswith("total"))
        assert "208.00" in total
        assert "how each term is computed" in text and "arXiv:1910.02054" in text


async def test_a_long_value_scrolls_inside_its_field(tmp_path: Path) -> None:
    app = app_for(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("f2")
        await pilot.pause()
        field = app.query_one("#field-gpu_memory", Input)
        field.focus()
        await pilot.press("end", *"123456789012345678901234567890")
        await pilot.pause()
        assert field.value.endswith("1234567890")
        assert field.scroll_x > 0  # the cursor at the end stays in view
        await pilot.press("home")
        await pilot.pause()
        assert field.scroll_x == 0


async def test_the_more_inputs_are_built_once_and_keep_restored_values(tmp_path: Path) -> None:
    app = make_app(progress_dir=tmp_path, autosave_delay=3600)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("f2")
        await pilot.pause()
        ledger = app.query_one(LedgerPane)
        assert not ledger.more_open and not ledger.query("#field-tp")
        # Values for rows not built yet are kept and used: TP 2 halves params (Megatron §3).
        ledger.set_values({"tp": "2"}, by_learner=True)
        await pilot.pause()
        assert ledger.values()["tp"] == "2"
        assert app.progress.forms["ledger"]["tp"] == "2"
        total = next(line for line in result_text(ledger).splitlines() if line.startswith("total"))
        assert "8.00" in total  # 16 GB / TP 2
        # Asked for twice at once (a restore and a key press): built once.
        await asyncio.gather(ledger.open_more(), ledger.open_more(focus=True))
        await pilot.pause()
        assert ledger.more_open and len(ledger.query("#field-tp")) == 1
        assert ledger.query_one("#field-tp", Input).value == "2"
        assert app.focused is ledger.query_one("#field-seq", Input)


@contextlib.asynccontextmanager
async def ledger_restored(
    progress_dir: Path, form: dict[str, str]
) -> AsyncIterator[tuple[Pilot[int], LedgerPane]]:
    """The Ledger (F2) of the app started on a progress file that holds ``form``."""
    ProgressStore(progress_dir).save(LessonProgress("S15", forms={"ledger": form}))
    app = make_app(progress_dir=progress_dir, autosave_delay=3600)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("f2")
        await pilot.pause()
        yield pilot, app.query_one(LedgerPane)


async def test_a_huge_sequence_length_is_quoted_as_typed(tmp_path: Path) -> None:
    """seq len 1e300 is past the bound of 1e12 on every count: the message quotes 1e300, not
    the 301 digits of the whole number it stands for (eight lines of the pane)."""
    async with ledger_restored(tmp_path, {"params": "7B", "seq": "1e300"}) as (_pilot, ledger):
        error = " ".join(shown(ledger.query_one(".calc-error", Static)).split())
        assert error.startswith("seq len s")
        assert error.endswith("must be at most 1,000,000,000,000, got 1e300"), error


async def test_a_restored_form_with_a_bad_field_shows_no_figures(tmp_path: Path) -> None:
    # Saved: 7B on 8 ranks with ZeRO-3, and a sequence length that is not a number. No figure
    # on screen may come from another form (the defaults computed before the lesson opened).
    form = {"params": "7B", "dp": "8", "zero": "3", "seq": "abc"}
    async with ledger_restored(tmp_path, form) as (pilot, ledger):
        text = result_text(ledger)
        assert "total" not in text and "16.00" not in text
        assert "Enter values above." in text
        assert "seq len s" in shown(ledger.query_one(".calc-error", Static))
        assert ledger.query_one("#field-seq", Input).value == "abc"  # shown at once
        # Fixed by the learner: the figures are those of the form on screen (ZeRO §5.3: 16Ψ/8).
        await pilot.press("f2")
        field = ledger.query_one("#field-seq", Input)
        field.focus()
        await pilot.press("end", "backspace", "backspace", "backspace")
        await pilot.pause()
        total = next(line for line in result_text(ledger).splitlines() if line.startswith("total"))
        assert "14.00" in total


async def test_the_bubble_timeline_never_wraps(tmp_path: Path) -> None:
    app = make_app(progress_dir=tmp_path, autosave_delay=3600)
    async with app.run_test(size=(200, 50)) as pilot:
        await pilot.press("f3")
        await pilot.pause()
        bubble = app.query_one("BubblePane")
        await choose(pilot, bubble.query_one("#field-compare", Select), "zb-h1")
        await pilot.pause()
        # The rows as drawn in the pane's timeline view: one line per stage, never wrapped.
        view = bubble.query_one("#timeline", TimelineView)
        lines = [view.render_line(y).text.rstrip() for y in range(view.size.height)]
        stages = [line for line in lines if line.startswith("stage ")]
        # gpipe and zb-h1 at p=4: four stages each, every one on a single line with its ops.
        assert len(stages) == 8
        assert all(len(line.split()) == 3 for line in stages)
        assert "gpipe" in lines and "zb-h1" in lines


async def test_a_wide_timeline_scrolls_sideways_by_keys(tmp_path: Path) -> None:
    app = make_app(progress_dir=tmp_path, autosave_delay=3600)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("f3")
        await pilot.pause()
        bubble = app.query_one("BubblePane")
        view = bubble.query_one("#timeline", TimelineView)
        # GPipe p=4, m=8, t_F = 1, t_B + t_W = 2: 33 time units, at one column each wider than
        # the side pane; every F one column, every B two (never 0.375 columns per unit).
        assert view.virtual_size.width == len("stage 3 ") + 33 > view.size.width
        assert view.lines[0] == "stage 0 " + "F" * 8 + "." * 9 + "Bb" * 8
        # Cut by the pane's edge, a row says so in its last cell: time goes on to the right.
        shown_cells = view.size.width - len("stage 0 ")
        assert view.render_line(0).text == "stage 0 " + view.lines[0][8:][: shown_cells - 1] + "›"
        view.focus()
        await pilot.press("end")
        await pilot.pause()
        assert view.scroll_x == view.max_scroll_x > 0
        # The time axis scrolled; the stage labels stayed; the cut is now on the left.
        assert view.render_line(0).text == "stage 0 ‹" + view.lines[0][-shown_cells + 1 :]
        assert view.render_line(0).text.endswith(".BbBbBbBbBbBbBbBb")
        await pilot.press("home")
        await pilot.pause()
        assert view.render_line(0).text.startswith("stage 0 FFFF")
        assert view.render_line(0).text.endswith("›")
        # A longer time axis (m = 16: 57 units) scrolls to its new end.
        await paste_into(pilot, bubble.query_one("#field-micro_batches", Input), "16")
        await pilot.pause()
        assert view.virtual_size.width == len("stage 3 ") + 57
        view.focus()
        await pilot.press("end")
        await pilot.pause()
        assert view.scroll_x == view.max_scroll_x == view.virtual_size.width - view.size.width
        assert view.render_line(0).text == "stage 0 ‹" + view.lines[0][-shown_cells + 1 :]
        assert view.lines[0].endswith("Bb" * 16)


@pytest.mark.parametrize("size", [SIZE, (60, 20)])
async def test_the_help_s_way_to_scroll_the_timeline_works(
    tmp_path: Path, size: tuple[int, int]
) -> None:
    """The Bubble pane's help says a wide timeline "scrolls sideways (Tab to it, then
    left/right)": from the first field, where F3 puts the cursor, Tab reaches it past the
    form's five fields, and right and left then move its time axis a column each. GPipe at
    p = 4, m = 16 takes (m + p - 1) × 3 = 57 columns of time: wider than either pane."""
    from tui.widgets.bubble import BubblePane

    assert "(Tab to it, then left/right)" in BubblePane.HELP
    app = app_for(tmp_path, delay=3600)
    async with app.run_test(size=size) as pilot:
        await pilot.press("f3")
        await pilot.pause()
        bubble = app.query_one(BubblePane)
        view = bubble.query_one("#timeline", TimelineView)
        first = bubble.query_one("#field-schedule")
        assert app.focused is first
        await paste_into(pilot, bubble.query_one("#field-micro_batches", Input), "16")
        first.focus()
        for _ in bubble.FIELDS:
            await pilot.press("tab")
        await pilot.pause()
        assert app.focused is view
        await wait_until(pilot, lambda: in_view(view))
        assert view.max_scroll_x > 0 and view.scroll_x == 0
        await pilot.press("right", "right")
        await wait_until(pilot, lambda: view.scroll_x == 2)
        assert view.render_line(0).text.startswith("stage 0 ‹")
        await pilot.press("left")
        await wait_until(pilot, lambda: view.scroll_x == 1)


@pytest.mark.parametrize("size", [SIZE, (120, 40)])
async def test_typing_with_the_timeline_out_of_view_rebuilds_no_map(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, size: tuple[int, int]
) -> None:
    """At 80x24 the Bubble pane's timeline is below the fold while the learner types m; at
    120x40 its rows are in view and its scroll bar below. Its new rows must not make Textual
    rebuild its map of every widget (a look-up of a widget out of view does, tui/compositor.py:
    1-4 ms of each key); scrolled to, it shows the new rows and a scroll bar for their length,
    as a repaint draws them."""
    from tui.compositor import SpanCompositor

    app = app_for(tmp_path, delay=3600)
    terminal = TerminalCopy(app) if size == SIZE else None
    rebuilds: list[bool] = []
    full_map = SpanCompositor.full_map

    def counted(compositor: SpanCompositor) -> object:
        rebuilds.append(compositor._full_map_invalidated)
        return full_map.fget(compositor)  # type: ignore[attr-defined]

    async with app.run_test(size=size) as pilot:
        await pilot.press("f3")
        await pilot.pause()
        bubble = app.query_one("BubblePane")
        view = bubble.query_one("#timeline", TimelineView)
        field = bubble.query_one("#field-micro_batches", Input)
        field.focus()
        await pilot.press("end", "2", "backspace")  # the figures at their tallest
        await pilot.pause()
        assert view.show_horizontal_scrollbar and not in_view(view.horizontal_scrollbar)
        assert in_view(view) == (size != SIZE)
        monkeypatch.setattr(SpanCompositor, "full_map", property(counted))
        # m = 80, 8, 83: each timeline wider than the pane, at the same height.
        for key in ("0", "backspace", "3"):
            await pilot.press(key)
            await pilot.pause()
        monkeypatch.undo()
        assert field.value == "83"
        assert not any(rebuilds)
        # The scroll bar, out of view, is for the new length: (m + p - 1)(t_F + t_B + t_W) =
        # 86 × 3 units of GPipe's makespan (Huang et al. 2019) at a column each, after the 8
        # columns of the stage labels.
        assert view.virtual_size.width == len("stage 3 ") + 86 * 3
        assert view.horizontal_scrollbar.window_virtual_size == view.virtual_size.width
        if terminal is None:
            return
        # Tab from m (v, compare with, the timeline) scrolls the pane to it.
        await pilot.press("tab", "tab", "tab")
        await wait_until(pilot, lambda: app.focused is view and in_view(view))
        lines = await terminal.drawn_whole(pilot)
        # Stage 0 runs its 83 forwards first: its row is all F up to the pane's edge, cut there.
        assert any(line.endswith("stage 0 " + "F" * (view.size.width - 9) + "›") for line in lines)


async def test_bubble_figures_keep_every_digit(tmp_path: Path) -> None:
    """GPipe p=2, m=10,000, every op time 1: the makespan is (m+p-1)(t_F+t_B+t_W) = 10,001 × 3
    = 30,003 (Huang et al. 2019), and GPipe holds all m micro-batches' activations at its peak.
    Four significant digits showed 3e+04 and 1e+04."""
    app = make_app(progress_dir=tmp_path, autosave_delay=3600)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("f3")
        await pilot.pause()
        bubble = app.query_one("BubblePane")
        await paste_into(pilot, bubble.query_one("#field-stages", Input), "2")
        await paste_into(pilot, bubble.query_one("#field-micro_batches", Input), "10000")
        await wait_until(pilot, lambda: "peak in flight" in result_text(bubble))
        lines = [" ".join(line.split()) for line in result_text(bubble).splitlines()]
        assert "makespan 30,003 t" in lines, lines
        assert "ideal m(tF+tB+tW) 30,000 t" in lines
        assert "peak in flight 10,000" in lines
        assert lines[lines.index("peak in flight 10,000") + 1] == "(micro-batches)"
        assert any(line.startswith("in flight per stage: 10,000 10,000") for line in lines)


@pytest.mark.parametrize(
    ("size", "side", "language"), [(SIZE, 44, "en"), (SIZE, 44, "zh"), ((120, 40), 41, "en")]
)
async def test_bubble_figures_are_a_table_in_the_side_pane_for_every_schedule(
    tmp_path: Path, size: tuple[int, int], side: int, language: str
) -> None:
    """At 80x24 the side pane is 44 columns (README "Layout"), at 120x40 41: every schedule's
    figures fit it as a table, each figure on its label's line. Interleaved 1F1B's "5.5
    micro-batches" was two cells wider than "8 micro-batches" and stacked its table alone, one
    figure per line, at 44 columns; at 41 every schedule's stacked.

    The peaks at p = 4, m = 8 (first stage): GPipe holds all m (Huang et al. 2019); 1F1B and
    ZB-H1 p, ZB-H2 2p - 1 (Qi et al. 2023 Table 2); interleaved 1F1B with v = 2,
    p + (p - 1)/v = 5.5 micro-batches' worth (Korthikanti et al. 2022 §4.2.3)."""
    from engine.pipeline import SCHEDULES

    peaks = {"gpipe": "8", "1f1b": "4", "interleaved-1f1b": "5.5", "zb-h1": "4", "zb-h2": "7"}
    app = make_app(progress_dir=tmp_path, autosave_delay=3600, language=language)
    async with app.run_test(size=size) as pilot:
        await pilot.press("f3")
        await pilot.pause()
        bubble = app.query_one("BubblePane")
        assert app.query_one("#side").outer_size.width == side
        figures = bubble.query_one(".calc-result", ResultView)
        zh = language == "zh"
        peak_label, ideal_label = ("在途峰值", "气泡/理想") if zh else ("peak", "bubble/ideal")
        for schedule in SCHEDULES:
            await choose(pilot, bubble.query_one("#field-schedule", Select), schedule)
            lines = shown(figures, width=figures.size.width).splitlines()
            peak = next(line for line in lines if line.startswith(peak_label))
            assert peaks[schedule] in peak.split(), (schedule, lines)
            ideal = next(line for line in lines if line.startswith(ideal_label))
            assert len(ideal.split()) == 2, (schedule, lines)
            # What an interleaved peak counts, said under it: model chunks, each 1/v of the
            # stage's layers (Narayanan et al. 2021 §2.2.2), so 11 chunks are 5.5 micro-batches.
            words = "".join("".join(lines).split())  # lines broken anywhere, read whole
            if schedule == "interleaved-1f1b":
                said = {
                    "en": ("(micro-batches' worth)", "11 chunks = 5.5 micro-batches' worth"),
                    "zh": ("（折合 micro-batch 数）", "11 个 chunk = 折合 5.5 个 micro-batch"),
                }[language]
                assert all("".join(text.split()) in words for text in said), lines
                assert "§2.2.2" in words
            else:
                assert "chunk" not in words, lines


def test_bubble_form_names_the_first_bad_field_and_ignores_v_unless_interleaved() -> None:
    from tui.widgets.bubble import BubblePane, spec_from_form

    values = BubblePane.defaults()
    # GPipe has no virtual stages: a bad v does not block it ((p-1)/m = 3/8 needs none).
    spec = spec_from_form({**values, "virtual_stages": "y"}, "gpipe")
    assert spec.virtual_stages == 1
    with pytest.raises(InputError) as caught:
        spec_from_form({**values, "virtual_stages": "y"}, "interleaved-1f1b")
    assert caught.value.field == "virtual_stages"
    with pytest.raises(InputError) as caught:
        spec_from_form({**values, "stages": "x", "virtual_stages": "y"}, "interleaved-1f1b")
    assert caught.value.field == "stages"


@pytest.mark.parametrize(
    ("schedule", "stages", "micro_batches", "shown"),
    [
        # 1F1B with m >= p holds p - s micro-batches on stage s (Narayanan et al. 2021 §2.2.1).
        ("1f1b", 16, 16, " ".join(str(16 - s) for s in range(16))),
        ("1f1b", 20, 20, "20 19 18 17 16 15 14 13 … 8 7 6 5 4 3 2 1"),
        # GPipe holds all m micro-batches on every stage (Huang et al. 2019 §2.3).
        ("gpipe", 17, 8, "8×17"),
        # 1F1B with m < p: min(p - s, m).
        ("1f1b", 24, 8, "8×17 7 6 5 4 3 2 1"),
    ],
)
def test_the_in_flight_line_lists_few_stages_and_counts_runs_of_many(
    schedule: Schedule, stages: int, micro_batches: int, shown: str
) -> None:
    """Up to 16 stages, one count per stage; beyond, equal neighbours as count×stages and at
    most the first and last 8 runs around an ellipsis (a count per stage made 10,000 stages a
    20,000-character line)."""
    from engine.pipeline import PipelineSpec
    from engine.pipeline.simulate import simulate
    from tui.widgets.bubble import in_flight_text

    spec = PipelineSpec(schedule=schedule, stages=stages, num_microbatches=micro_batches)
    assert in_flight_text(simulate(spec).peak_in_flight_microbatches) == shown


def test_the_ledger_bars_of_equal_totals_are_equally_long() -> None:
    """7B parameters, mixed-precision Adam (2 + 2 + 12 bytes each), ZeRO-3 over 8 ranks: each
    rank holds 16 × 7e9 / 8 = 14e9 bytes (Rajbhandari et al. 2020, stage 3 partitions all
    three), and the naive N × precision is 7e9 × 2 = 14e9 bytes: the same 14.00 GB, so both
    bars fill the 28 cells (each term rounded alone made the rank's bar 29). The quotas are
    P 3.5, G 3.5, master weights 7, optimizer 14 cells."""
    from engine.ledger import compute_ledger
    from tui.widgets.ledger import ledger_renderable, spec_from_form

    values = {**LedgerPane.defaults(), "params": "7B", "zero": "3", "dp": "8"}
    result = compute_ledger(spec_from_form(values))
    assert result.per_rank_bytes["total"] == result.naive_bytes == 14e9
    console = Console(width=80, file=io.StringIO(), record=True)
    console.print(ledger_renderable(result, str))
    lines = console.export_text().splitlines()
    # The bar: the rank's line, then the naive one (the table above has a "naive" row too).
    at = next(n for n, line in enumerate(lines) if line.startswith("rank "))
    rank, naive = lines[at].split()[1], lines[at + 1].split()[1]
    assert rank == "P" * 4 + "G" * 3 + "M" * 7 + "O" * 14
    assert naive == "N" * 28


def test_the_ledger_writes_no_digit_past_a_floats_precision() -> None:
    """1e24 parameters, ZeRO-3 over 8 ranks: each rank's bf16 parameters are 2 B × 1e24 / 8 =
    2.5e23 B, 2.5e14 GB and 2.5e23 / 2^30 = 2.328e14 GiB (Rajbhandari et al. 2020). The table
    showed 250,000,000,000,000.03 and the formulas Ψ = 999,999,999,999,999,983,222,784: digits
    a float (15 significant) does not hold. No figure has more than 15 significant digits."""
    from engine.ledger import compute_ledger
    from tui.widgets.ledger import ledger_renderable, sources_renderable, spec_from_form

    values = {**LedgerPane.defaults(), "params": "1e24", "zero": "3", "dp": "8"}
    result = compute_ledger(spec_from_form(values))
    console = Console(width=100, file=io.StringIO(), record=True)
    console.print(ledger_renderable(result, str))
    console.print(sources_renderable(result, str))
    text = console.export_text()
    assert "P params            2.5e+14 2.328e+14" in text
    assert "Ψ = N 1e+24 × 1/PP 1 / TP 1 = 1e+24" in text
    figures = re.findall(r"\d[\d,]*(?:\.\d+)?", text)
    assert figures
    for figure in figures:
        digits = figure.replace(",", "").replace(".", "").lstrip("0")
        assert len(digits) <= 15, figure


@pytest.mark.parametrize(
    ("parts", "cells"),
    [
        ((1, 1, 1), [10, 9, 9]),  # 9.33 each: the one cell left to the first
        ((2, 2, 4, 8), [4, 3, 7, 14]),
        # 0.01 of 28 cells is 0.28: shown, one cell, from the part most over its quota.
        ((99, 1), [27, 1]),
        ((0, 5), [0, 28]),
        ((0, 0), [0, 0]),
    ],
)
def test_bar_cells_fill_the_width_by_largest_remainders(
    parts: tuple[float, ...], cells: list[int]
) -> None:
    from tui.widgets.ledger import bar_cells

    assert bar_cells(parts, 28) == cells


@given(st.lists(st.floats(min_value=0, max_value=1e30), min_size=1, max_size=6))
def test_bar_cells_sum_to_the_width_and_stay_within_a_cell_of_the_quota(
    parts: list[float],
) -> None:
    from tui.widgets.ledger import bar_cells

    cells = bar_cells(parts, 28)
    total = sum(parts)
    if total <= 0:
        assert cells == [0] * len(parts)
        return
    assert sum(cells) == 28
    bumped = any(part > 0 and 28 * part / total < 1 for part in parts)
    for part, count in zip(parts, cells, strict=True):
        assert (count >= 1) == (part > 0) or 28 * part / total == 0
        if not bumped:
            assert abs(count - 28 * part / total) < 1


async def test_a_key_sends_the_terminal_what_textual_would_send(tmp_path: Path) -> None:
    # The main screen's compositor renders only the widgets under a changed region; every
    # partial update it sends must be the very bytes Textual's own compositor would send.
    from textual._compositor import ChopsUpdate, Compositor

    app = make_app(progress_dir=tmp_path, autosave_delay=3600)
    console = Console(width=SIZE[0], force_terminal=True, color_system="truecolor")
    frames: list[int] = []
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("f2")
        await pilot.pause()
        compositor = app.screen._compositor
        ours = compositor.render_partial_update

        def both() -> ChopsUpdate | None:
            changed = set(compositor._dirty_regions)
            textual = Compositor.render_partial_update(compositor)
            compositor._dirty_regions.update(changed)
            update = ours()
            assert (update is None) == (textual is None)
            if update is not None and textual is not None:
                assert update.render_segments(console) == textual.render_segments(console)
                frames.append(len(changed))
            return update

        compositor.render_partial_update = both  # type: ignore[method-assign]
        params = app.query_one("#field-params", Input)
        params.focus()
        await pilot.press("end", "backspace", "backspace", "7", "B", "home", "1", "delete")
        await pilot.pause()
        assert params.value == "1B"
        # Frames with the typed field and the figures changed at once (two regions apart).
        assert frames and max(frames) >= 2
        # A key typed into an answer box: one changed region amid the lesson's lines.
        frames.clear()
        await goto_section(pilot, app, "self-check")
        box = app.query(SelfCheckBox).first()
        box.text_area.focus()
        await pilot.press(*"all-reduce")
        await pilot.pause()
        assert box.text_area.text == "all-reduce"
        assert frames


async def test_figures_changed_out_of_view_are_drawn_when_scrolled_to(tmp_path: Path) -> None:
    # At 80x24 the Ledger's formulas are below the fold: typing updates them without a
    # repaint, and scrolling down must show the new ones, not the lines drawn before.
    app = make_app(progress_dir=tmp_path, autosave_delay=3600)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("f2")
        await pilot.pause()
        ledger = app.query_one(LedgerPane)
        details = ledger.query_one(".calc-details", ResultView)
        # Drawn once (1B), then scrolled out of view again.
        ledger.scroll_end(animate=False)
        await pilot.pause()
        ledger.scroll_home(animate=False)
        await pilot.pause()
        assert details not in app.screen._compositor.visible_widgets
        params = ledger.query_one("#field-params", Input)
        params.focus()
        await pilot.press("end", "backspace", "backspace", "7", "B")
        await pilot.pause()
        ledger.scroll_end(animate=False)
        await pilot.pause()
        assert details in app.screen._compositor.visible_widgets
        # What the terminal shows: 7B parameters with 8 B of AdamW states each (the ZeRO
        # paper's K = 12 less the 4 B master copy) are 56e9 bytes.
        console = Console(width=SIZE[0], file=io.StringIO(), record=True)
        console.print(app.screen._compositor.render_update(full=True))
        screen = console.export_text()
        assert "7,000,000,000" in screen and "56,000,000,000 B" in screen


@pytest.mark.parametrize(("ranks", "heading"), [(1, "1 rank"), (8, "8 ranks")])
def test_the_collectives_heading_counts_ranks_in_the_singular_and_plural(
    ranks: int, heading: str
) -> None:
    """One rank costs nothing (NCCL returns at once) and is shown, headed 1 rank, not 1 ranks."""
    from engine.collectives import collective_cost
    from tui.widgets.collectives import cost_renderable

    cost = collective_cost("all-reduce", ranks, 1e9, 100e9, 5e-6)
    console = Console(width=80, file=io.StringIO(), color_system=None)
    console.print(cost_renderable(cost, "all-reduce", ranks))
    assert console.file.getvalue().splitlines()[0] == f"all-reduce, ring, {heading}"


@pytest.mark.parametrize("width", [40, 56, 78])
def test_each_terms_source_keeps_its_indent_when_it_wraps(width: int) -> None:
    """Under each term, its source is indented two cells, and a source too long for the line
    goes on four cells in: at 80x24 ``Figure 1`` of the ZeRO citation started at the margin,
    where it read as a line of its own. Each source, read back from its indented lines, is
    whole."""
    from engine.ledger import LedgerSpec, compute_ledger
    from tui.widgets.ledger import sources_renderable

    result = compute_ledger(LedgerSpec(params=1e9))
    console = Console(width=width, record=True, file=io.StringIO())
    console.print(sources_renderable(result, lambda field: field))
    lines = console.export_text().splitlines()
    starts = [index for index, line in enumerate(lines) if line.startswith("  source: ")]
    read_back = []
    for index in starts:
        block = [lines[index]]
        for line in lines[index + 1 :]:
            if not line.startswith("    "):
                break
            block.append(line)
        read_back.append(" ".join(part.strip() for part in block))
    assert read_back == [f"source: {term.source}" for term in result.terms], lines


async def test_a_zoomed_pane_scrolled_shows_what_a_repaint_shows(tmp_path: Path) -> None:
    """Zoomed at 80x24, End and Home in the Collectives pane (100000 ranks: the pane scrolls)
    and Home, Down, PageDown in the Diagrams pane must leave on the terminal what a full repaint
    draws. The frames of a scroll were compared with a map of the widgets rebuilt where they
    were scrolled to, not where the terminal showed them: they redrew nothing, and the old lines
    stayed (a line twice, the pane's last line hidden)."""
    from tui.widgets.collectives import CollectivesPane
    from tui.widgets.diagrams import DiagramsPane

    app = app_for(tmp_path)
    terminal = TerminalCopy(app)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("f4", "f4")
        pane = app.main_screen.query_one(CollectivesPane)
        await wait_until(pilot, lambda: bool(pane.query("#field-ranks")))
        await paste_into(pilot, pane.query_one("#field-ranks", Input), "100000")
        await pilot.press("f5", "escape")
        await terminal.drawn_whole(pilot)
        await pilot.press("end")
        await wait_until(pilot, lambda: pane.scroll_y == pane.max_scroll_y > 0)
        lines = await terminal.drawn_whole(pilot)
        assert "The data-flow picture draws up to 8 ranks; the cost above is exact." in lines
        await pilot.press("home")
        await wait_until(pilot, lambda: pane.scroll_y == 0)
        lines = await terminal.drawn_whole(pilot)
        assert sum("all-reduce, ring, 100000 ranks" in line for line in lines) == 1

        await pilot.press("f4")
        diagrams = app.main_screen.query_one(DiagramsPane)
        await choose(pilot, diagrams.query_one("#strategy", Select), "fsdp")
        diagrams.focus()
        await terminal.drawn_whole(pilot)
        assert diagrams.max_scroll_y > 1
        for key, scrolled in (("end", diagrams.max_scroll_y), ("home", 0), ("down", 1)):
            await pilot.press(key)
            await wait_until(pilot, lambda: diagrams.scroll_y == scrolled)  # noqa: B023
            lines = await terminal.drawn_whole(pilot)
            if key == "home":
                assert sum("My notes, exercises 2 and 3" in line for line in lines) == 1
        await pilot.press("pagedown")
        await wait_until(pilot, lambda: diagrams.scroll_y > 1)
        await terminal.drawn_whole(pilot)
