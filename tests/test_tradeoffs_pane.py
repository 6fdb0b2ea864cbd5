"""The Trade-offs pane at 80x24, driven by keys: F10 opens it, the interconnect choice changes the
table (exercise 4: TP grows most on a slow network) once the learner chose to look before writing
the judgement (the table is folded until then), keys 1-3 show the lesson's counterexamples, and the
answers to exercises 4 and 5 are saved in ``notes`` and exported, exercise 4 marked as written after
looking."""

from __future__ import annotations

import io
import json
import re
from pathlib import Path

from rich.console import Console, Group
from rich.text import Text
from textual.widgets import Select, Static, TextArea

from engine.export import export_text
from engine.i18n import set_language
from engine.lesson import load_lesson
from engine.progress import ProgressStore
from tests.notes_render import quotes
from tests.pilot_helpers import S15_FILE, SIZE, screen_lines, settle, shown, wait_until, write
from tui.app import make_app
from tui.widgets.calculator import ResultView
from tui.widgets.confirm import ConfirmScreen
from tui.widgets.reader import BrokenText
from tui.widgets.side import SideTabs
from tui.widgets.tradeoffs import (
    SERIES_STYLES,
    DrawnAtWidth,
    TradeoffsPane,
    scenario_renderable,
)


async def test_tradeoffs_tab_by_keys(tmp_path: Path) -> None:
    app = make_app(progress_dir=tmp_path, autosave_delay=0.05)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("f10")
        await settle(pilot)
        assert app.query_one(SideTabs).active == "tradeoffs"
        pane = app.query_one(TradeoffsPane)
        link = pane.query_one("#tradeoffs-link", Select)
        assert app.focused is link
        result = pane.query_one("#tradeoffs-result", Static)
        # Exercise 4 is not written: its answer (the table, the plot) is folded.
        assert "400 Gb/s" not in shown(result) and "folded" in shown(result)
        await pilot.press("ctrl+r")  # look first, which asks
        await pilot.pause()
        assert isinstance(app.screen, ConfirmScreen)
        await pilot.press("y")
        await settle(pilot)
        assert app.progress.looked_before_answering("ex4")
        assert "400 Gb/s" in shown(result)
        assert "looked before answering" in pane.query(".note-label").first(BrokenText).text
        # From 400 Gb/s (second preset) two down to "NVLink in node, 100 Gb/s network".
        await pilot.press("enter")
        await pilot.pause()
        await pilot.press("down", "down", "enter")
        await settle(pilot)
        assert link.value == "100gbps"
        table = shown(result)
        assert "100 Gb/s" in table
        first_row = next(line for line in table.splitlines() if line.strip().startswith("tp"))
        assert "x" in first_row
        assert table.index("tp ") < table.index("pp ")  # sorted by growth: TP first
        # Each column that is not a plain T_step says what it is, under the table.
        below = " ".join(table[table.index("tp ") :].split())
        assert "exposed = the communication time not hidden behind compute" in below
        assert "growth = T_step here / T_step on NVLink-class links" in below
        assert ". linear (n x 1 GPU)" in table
        # The assumptions come first, above every figure: model, batch and sequence, links.
        assumed = table.index("Assumed")
        model = table.index("model: lesson-1b, N = 1.316B params")
        assert assumed < model < table.index("T_step of each")
        assert assumed < table.index("batch: 64 x sequence 2048") < table.index("T_step")
        assert assumed < table.index("link: NVLink in node, 100 Gb/s") < table.index("T_step")
        # Each strategy's markers and legend entry in its own colour.
        assert isinstance(result.content, DrawnAtWidth)
        report = result.content.at(result.size.width)
        assert isinstance(report, Group)
        plot = next(
            part
            for part in report.renderables
            if isinstance(part, Text) and "log-log" in part.plain
        )
        colours = {str(span.style) for span in plot.spans}
        assert {SERIES_STYLES[name] for name in ("dp", "zero3", "tp", "pp")} <= colours

        for key, title in (
            ("1", "模型放不下但网络很慢"),
            ("2", "batch 太小"),
            ("3", "MoE 专家负载极不均"),
        ):
            await pilot.press(key)
            await pilot.pause()
            assert title in shown(pane.query_one("#tradeoffs-scenario", ResultView))
        assert "dropped" in shown(pane.query_one("#tradeoffs-scenario", ResultView))
        # In the 28-column pane each case is a block: its name whole, its figures below it.
        await pilot.press("2")
        await pilot.pause()
        view = pane.query_one("#tradeoffs-scenario", ResultView)
        drawn = [view.render_line(y).text.rstrip() for y in range(view.size.height)]
        assert "DP 64, batch 64" in drawn and "DP 64, batch 1024" in drawn
        assert any(re.fullmatch(r"T_step +144 ms", line.strip()) for line in drawn), drawn

        areas = list(pane.query(TextArea))
        assert len(areas) == 2
        areas[0].focus()
        await pilot.press(*"TP [b]3[/b]")
        await pilot.press("1")  # typed into the box, not a scenario key
        areas[1].focus()
        await pilot.press(*"data loading")
        await wait_until(pilot, lambda: app.progress.notes.get("ex5") == "data loading")
        assert app.progress.notes["ex4"] == "TP [b]3[/b]1"
        assert app.progress.notes["ex5"] == "data loading"
        await pilot.press("ctrl+q")

    saved = ProgressStore(tmp_path).load("S15").progress
    assert saved.notes["ex4"] == "TP [b]3[/b]1"
    lesson = load_lesson(S15_FILE)
    markdown = export_text(lesson, saved, "md")
    assert quotes(markdown) == ["TP [b]3[/b]1", "data loading"]
    data = json.loads(export_text(lesson, saved, "json"))
    exported = {note["id"]: note["text"] for note in data["exercise_notes"]}
    assert exported["ex4"] == "TP [b]3[/b]1" and exported["ex5"] == "data loading"
    looked = {note["id"]: note["looked_before_answering"] for note in data["exercise_notes"]}
    # Exercise 5 has no engine answer to look at first.
    assert looked == {"ex4": True, "ex5": None} and set(data["looked_before_answering"]) == {"ex4"}
    assert "Looked at the engine's answer first" in markdown

    again = make_app(progress_dir=tmp_path, autosave_delay=0.05)
    async with again.run_test(size=SIZE) as pilot:
        await pilot.press("f10")
        await settle(pilot)
        areas = list(again.query_one(TradeoffsPane).query(TextArea))
        assert [a.text for a in areas] == ["TP [b]3[/b]1", "data loading"]
        label = again.query_one(TradeoffsPane).query(".note-label").first(BrokenText).text
        assert "假设设备互联很慢" in label


def test_a_narrow_counterexample_in_each_language() -> None:
    """Below the table's width each case's figures are one figure a line, the name beside its
    value (a run of pairs wrapped between ``0`` and ``s``), in the interface language, and a
    switch of language is not served the other language's cached text."""

    def lines(width: int) -> list[str]:
        console = Console(width=width, file=io.StringIO(), color_system=None)
        with console.capture() as captured:
            console.print(scenario_renderable(0, width))
        return [line.rstrip() for line in captured.get().splitlines()]

    for language, exposed in (("zh", "暴露"), ("en", "exposed"), ("zh", "暴露")):
        set_language(language)
        shown = lines(40)
        # The lesson's three cases (DP, ZeRO-3, TP x PP), one line each for the step time and
        # the exposed communication, each ending in its unit.
        step_lines = [line for line in shown if line.lstrip().startswith("T_step")]
        exposed_lines = [line for line in shown if line.lstrip().startswith(exposed)]
        assert len(step_lines) == len(exposed_lines) == 3, shown
        assert all(line.startswith("  ") and line.endswith(" s") for line in step_lines), shown
        assert all(line.endswith(" s") for line in exposed_lines), shown
    set_language("en")


async def test_the_slow_network_counterexample_says_what_its_memory_figure_counts(
    tmp_path: Path,
) -> None:
    """Counterexample 1's DP case, worked by hand from the sources, as the pane shows it: the
    "fits 80 GB" figure is the whole GPU (model states + activations + buffers), and the text
    gives the model states of this model, not of a round 13e9 parameters (208 GB).

    Model: L 40, h 5120, a 40, V 32000, s 2048, micro-batch b 1, DP 16, no recompute."""
    L, h, a, V, s, b = 40, 5120, 40, 32000, 2048, 1
    # Narayanan et al. 2021 (arXiv:2104.04473) §5.1: P = 12·l·h²·(1 + 13/(12h) + (V+s)/(12lh)).
    params = 12 * L * h**2 + 13 * L * h + (V + s) * h
    assert params == 12_759_900_160
    # Rajbhandari et al. 2020 (ZeRO, arXiv:1910.02054) §3.1: mixed-precision Adam keeps
    # 2Ψ + 2Ψ + 12Ψ = 16Ψ bytes of model states; plain DP replicates all of it.
    states = 16 * params
    # Korthikanti et al. 2022 (arXiv:2205.05198) Table 2, no parallelism: s·b·h·(34 + 5·a·s/h)
    # a layer; §4.3: the embedding's dropout mask s·b·h, the output layer's 16-bit inputs
    # 2·2·s·b·h and its fp32 logits 4·s·b·V. One micro-batch in flight without PP.
    activations = L * s * b * h * (34 + 5 * a * s / h) + s * b * h + 4 * s * b * h + 4 * s * b * V
    total = states + activations  # no communication buffer for plain DP
    assert (states, activations, total) == (204_158_402_560, 48_129_638_400, 252_288_040_960)

    def gb(value: float) -> str:
        return f"{value / 1e9:.1f} GB"

    app = make_app(progress_dir=tmp_path, autosave_delay=0.05)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("f10")
        await settle(pilot)
        pane = app.query_one(TradeoffsPane)
        await pilot.press("1")
        await pilot.pause()
        view = pane.query_one("#tradeoffs-scenario", ResultView)
        text = " ".join(shown(view, view.size.width).split())
    # The column, then the same figure as its terms, then the text.
    assert re.search(r"fits 80 GB NO 252 GB\b", text), text
    assert f"DP 16: {gb(states)} + {gb(activations)} + 0.0 GB = {gb(total)}" in text, text
    assert f"{params / 1e9:.2f}B parameters" in text, text
    assert f"model states take {gb(states)}" in text, text
    assert f"{gb(activations)} more: {gb(total)} on each GPU" in text, text
    assert "208" not in text, text


async def test_the_report_is_broken_for_the_width_the_scroll_bar_leaves(tmp_path: Path) -> None:
    """At 200x60 the report, once exercise 4 is written and left, makes the pane overflow: its
    scroll bar takes two columns. Every line is broken for the width that is left, so none is
    wrapped again mid-phrase (``16`` / ``heads,``; the plot's axis ending on a line of its own,
    its last tick ``64`` below the others)."""
    app = make_app(progress_dir=tmp_path, autosave_delay=0.05, language="en")
    async with app.run_test(size=(200, 60)) as pilot:
        await pilot.press("f10")
        await settle(pilot)
        pane = app.query_one(TradeoffsPane)
        await write(pilot, pane.query(TextArea).first(), "TP grows most")
        pane.query_one("#tradeoffs-link", Select).focus()  # left: the report unfolds
        await settle(pilot)
        await wait_until(pilot, lambda: pane.show_vertical_scrollbar)
        await pilot.pause()
        region = pane.scrollable_content_region
        lines = screen_lines(app, (region.x, region.right))
    text = "\n".join(lines)
    assert "heads, V 50257)" in text, text
    axis = next(i for i, line in enumerate(lines) if line.lstrip().startswith("+---"))
    ticks = ["1", "2", "4", "8", "16", "32", "64"]
    assert lines[axis].endswith("-") and lines[axis + 1].split() == ticks, text
    assert not any(line.strip() in {"-", "64", "heads,", "1"} for line in lines), text
