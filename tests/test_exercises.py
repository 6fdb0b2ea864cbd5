"""Exercises 2-5: the learner's notes, the engine's answers beside them, saved and exported."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml
from textual.widget import Widget
from textual.widgets import Input, Select, Static, TextArea
from textual.widgets._select import SelectOverlay

from engine.errors import InputError
from engine.exercises import ALL_NOTES, EXERCISE_STRATEGIES, answered_notes, get_note
from engine.export import export_data, export_markdown, split_front_matter
from engine.lesson import load_lesson
from engine.progress import LessonProgress, ProgressStore
from engine.strategies import get_strategy
from tests.notes_render import quotes
from tests.pilot_helpers import (
    app_for,
    choose,
    params_field,
    paste_into,
    settle,
    shown,
    wait_until,
    write,
)
from tui.widgets.calculator import ResultView
from tui.widgets.diagrams import DiagramsPane
from tui.widgets.notes import NoteBox
from tui.widgets.side import SideTabs

ROOT = Path(__file__).resolve().parent.parent
LESSON = load_lesson(ROOT / "content" / "S15.yaml")


def test_every_strategy_has_split_collective_and_wait_from_the_engine() -> None:
    for name in EXERCISE_STRATEGIES:
        strategy = get_strategy(name)
        key = "fsdp" if name == "fsdp" else name
        assert get_note(f"ex2.{key}.split").reference == strategy.split
        assert get_note(f"ex3.{key}.wait").reference == strategy.wait
        comm = get_note(f"ex3.{key}.comm").reference
        assert all(collective in comm for collective in strategy.collective_names())
    assert len({note.id for note in ALL_NOTES}) == len(ALL_NOTES) == 6 * 3 + 2


def test_unknown_ids_are_kept_not_dropped() -> None:
    notes = {"ex5": "five", "ex2.tp.split": "columns", "ex9.old": "kept", "ex4": "  "}
    answered = answered_notes(notes)
    assert [note.id for note, _text in answered] == ["ex2.tp.split", "ex5", "ex9.old"]
    with pytest.raises(InputError):
        get_note("ex9.old")


def test_export_puts_each_note_beside_the_engines_answer() -> None:
    text = "[bold]hidden dim h[/] 按列切分 ✔️\n\tsecond line"
    progress = LessonProgress("S15", notes={"ex2.tp.split": text, "ex4": "TP suffers most"})
    markdown = export_markdown(LESSON, progress)
    assert quotes(markdown) == [text, "TP suffers most"]
    _front, body = split_front_matter(markdown)
    assert get_strategy("tp").split in body
    assert LESSON.section("exercises").items[1].text in body  # exercise 2's own wording
    data = export_data(LESSON, progress)
    assert [entry["id"] for entry in data["exercise_notes"]] == ["ex2.tp.split", "ex4"]
    assert data["exercise_notes"][0]["reference"] == get_strategy("tp").split


def test_export_gives_the_trade_offs_panes_answer_to_exercise_4_and_says_5_has_none() -> None:
    from engine.tradeoffs import TRADEOFFS_LINK, TRADEOFFS_WORLD, tradeoffs_report

    progress = LessonProgress("S15", notes={"ex4": "TP suffers most", "ex5": "kernel fusion"})
    # The pane's table at its default choices: the same engine call.
    report = tradeoffs_report(TRADEOFFS_LINK, TRADEOFFS_WORLD)
    data = export_data(LESSON, progress)
    ex4, ex5 = data["exercise_notes"]
    assert ex4["id"] == "ex4" and ex4["reference_source"].startswith("engine/tradeoffs.py")
    growth = [f"{row.strategy} x{row.growth:.3g}" for row in report.rows]
    assert growth and all(entry in ex4["reference"] for entry in growth)
    assert report.interconnect.label in ex4["reference"]
    # Megatron-LM (Shoeybi et al. 2019, Sec. 3): tensor parallelism all-reduces inside every
    # layer, so off the NVLink domain it slows most; data parallelism overlaps its gradient
    # all-reduce with the backward pass (PyTorch DDP, Li et al. 2020).
    order = [row.strategy for row in report.rows]
    assert order.index("tp") < order.index("dp")
    assert (ex5["reference"], ex5["reference_source"]) == ("", "")
    _front, body = split_front_matter(export_markdown(LESSON, progress))
    exercise4 = body[body.index("### 4.") : body.index("### 5.")]
    assert "Engine's answer (engine/tradeoffs.py, tradeoffs_report" in exercise4
    assert "tp x" in exercise4
    exercise5 = body[body.index("### 5.") : body.index("\n## ", body.index("### 5."))]
    assert "No engine answer to compare with" in exercise5


async def test_strategy_notes_are_saved_and_restored(tmp_path: Path) -> None:
    app = app_for(tmp_path)
    text = "a[/ rank k holds W[:, k] 列切分 👩‍💻"
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("f4")
        pane = app.query_one("DiagramsPane")
        await choose(pilot, pane.query_one("#strategy", Select), "tp")
        box = pane.query(NoteBox).first()
        assert box.item.id == "ex2.tp.split"
        await write(pilot, box.text_area, text)
        await pilot.press("ctrl+q")
    saved = yaml.safe_load((tmp_path / "S15.yaml").read_text(encoding="utf-8"))
    assert saved["notes"]["ex2.tp.split"] == "ok " + text
    app = app_for(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        # Reopened where it was left (tests/test_resume.py): the Diagrams tab, on TP (the tab is
        # built after the first frame).
        await wait_until(pilot, lambda: bool(app.query("DiagramsPane Select")))
        pane = app.query_one("DiagramsPane")
        await wait_until(pilot, lambda: pane.query_one("#strategy", Select).value != Select.NULL)
        assert pane.strategy == "tp"
        assert pane.query(NoteBox).first().text_area.text == "ok " + text
        await choose(pilot, pane.query_one("#strategy", Select), "dp")
        await choose(pilot, pane.query_one("#strategy", Select), "tp")
        assert pane.query(NoteBox).first().text_area.text == "ok " + text


async def test_the_strategy_picker_lists_each_strategy_once(tmp_path: Path) -> None:
    # FSDP is ZeRO-3 (ZeRO paper, arXiv:1910.02054 §5.3: stage 3 partitions the parameters;
    # PyTorch's FSDP docs: "inspired by" ZeRO stage 3): one entry, after ZeRO-2. A choice saved
    # as ``zero3`` (the engine's name) comes back as that entry.
    (tmp_path / "settings.yaml").write_text(
        "schema_version: 1\nresume:\n  S15:\n    side_tab: diagrams\n    side_shown: true\n"
        "    panes: {diagrams: {strategy: zero3}}\n",
        encoding="utf-8",
    )
    app = app_for(tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: bool(app.query("DiagramsPane Select")))
        pane = app.query_one(DiagramsPane)
        select = pane.query_one("#strategy", Select)
        await wait_until(pilot, lambda: select.value != Select.NULL)
        assert pane.strategy == "fsdp"
        overlay = select.query_one(SelectOverlay)
        # Each label after the mark of its notes (◌ asked for, none written).
        labels = [str(option.prompt).lstrip("◌◔✓ ") for option in overlay.options]
    assert labels == [
        "DP (dp)",
        "ZeRO-1 (zero1)",
        "ZeRO-2 (zero2)",
        "FSDP/ZeRO-3 (fsdp)",
        "TP (tp)",
        "TP+SP (tp-sp)",
        "PP (pp)",
        "EP (ep)",
        "CP (cp)",
    ]


async def test_collectives_tab_steps_with_arrows_and_prices_the_collective(tmp_path: Path) -> None:
    app = app_for(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("f4", "f4")
        assert app.query_one("#side").active == "collectives"
        pane = app.query_one("CollectivesPane")
        # MPICH ring all-reduce, alpha = 5 us, beta = 1/(100e9) s/B, n = 1e9 B, p = 8:
        # 2(p-1)alpha + 2n(p-1)/p beta = 17.57 ms (MPICH algorithm notes, ring all-reduce).
        await paste_into(pilot, pane.query_one("#field-ranks", Input), "8")
        result = shown(pane.query_one(".calc-result", ResultView))
        assert "17.57 ms" in result and "busbw factor" in result and "1.75" in result
        await paste_into(pilot, pane.query_one("#field-ranks", Input), "4")
        flow = pane.query_one("#flow", Static)
        flow.focus()
        await pilot.press("right")
        await pilot.pause()
        assert pane.step == 1 and "step 1 of 6" in shown(flow)
        await pilot.press("end")
        await pilot.pause()
        assert pane.step == 6
        await pilot.press("left", "home")
        await pilot.pause()
        assert pane.step == 0
        await paste_into(pilot, pane.query_one("#field-bytes", Input), "-1")
        assert "size S" in shown(pane.query_one(".calc-error", Static))
        # A size and a bandwidth each valid alone, whose time overflows a float: the message
        # names the field as labelled on screen, never the engine's name for it.
        await paste_into(pilot, pane.query_one("#field-bytes", Input), "1e308")
        await paste_into(pilot, pane.query_one("#field-bandwidth", Input), "1e-10")
        error = shown(pane.query_one(".calc-error", Static))
        assert error.startswith("size S: is too large or too small") and "size_bytes" not in error


@pytest.mark.parametrize("size", [(80, 24), (40, 12)])
async def test_the_key_the_collectives_hint_names_focuses_the_picture(
    tmp_path: Path, size: tuple[int, int]
) -> None:
    """The hint under the form said "Tab to it", while Tab from the pane lands on its first
    field and the picture is six fields further. The key the hint names focuses the picture,
    from a picker or a text field; the arrows then step it."""
    from tui.widgets.reader import BrokenText

    app = app_for(tmp_path)
    async with app.run_test(size=size) as pilot:
        await pilot.press("f4", "f4")
        await pilot.pause()
        pane = app.query_one("CollectivesPane")
        flow = pane.query_one("#flow", Static)
        hints = [text.text for text in pane.query(BrokenText) if "focuses it" in text.text]
        assert len(hints) == 1
        focus_key = re.search(r"\((\S+) focuses it\)", hints[0])
        assert focus_key is not None
        assert app.focused is pane.query_one("#field-op", Select)
        await pilot.press(focus_key[1], "right")
        await pilot.pause()
        assert app.focused is flow and pane.step == 1
        assert pane.region.overlaps(flow.region)
        ranks = pane.query_one("#field-ranks", Input)
        ranks.focus()
        await pilot.press(focus_key[1], "end")
        await pilot.pause()
        assert app.focused is flow and pane.step == 6  # ring all-reduce on 4 ranks: 2(R-1)
        assert ranks.value == "4"


async def test_collectives_pane_shows_huge_sizes_and_ranks_honestly(tmp_path: Path) -> None:
    """All-reduce on 4 ranks sends 2(R-1)/R * S = 1.5 S per rank (ring all-reduce, MPICH
    algorithm notes): 1.5e40 B, shown as 1.5e+31 GB, never as 32 digits of float noise cut
    across two lines; an overflowing S keeps that result under the message. R above the cost
    model's 16777216 ranks is named as typed."""
    app = app_for(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("f4", "f4")
        pane = app.query_one("CollectivesPane")
        await paste_into(pilot, pane.query_one("#field-bytes", Input), "1e40")
        await paste_into(pilot, pane.query_one("#field-bytes", Input), "1e400GB")
        result = shown(pane.query_one(".calc-result", ResultView))
        assert "1.5e+31 GB" in result and "000,000,000" not in result
        error = shown(pane.query_one(".calc-error", Static))
        assert error.startswith("size S")
        await paste_into(pilot, pane.query_one("#field-bytes", Input), "1GB")
        await paste_into(pilot, pane.query_one("#field-ranks", Input), "100000000")
        error = " ".join(shown(pane.query_one(".calc-error", Static)).split())
        assert "at most 16,777,216, got 100000000" in error and "1e+08" not in error


async def test_a_bandwidth_without_a_unit_says_it_was_read_as_bytes_per_second(
    tmp_path: Path,
) -> None:
    """``100`` is 100 B/s (the command line reads it so too): ring all-reduce of 1 GB on 4 ranks
    sends 2(R-1)/R S = 1.5e9 B per rank, 1.5e7 s at 100 B/s (MPICH algorithm notes), which a
    learner who meant 100 GB/s must be told. With a unit, no such line: 1.5e9 B at 100 GB/s
    plus 2(R-1) = 6 messages of 5 us is 15.03 ms."""
    app = app_for(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("f4", "f4")
        pane = app.query_one("CollectivesPane")
        field = pane.query_one("#field-bandwidth", Input)
        await paste_into(pilot, field, "100")
        result = " ".join(shown(pane.query_one(".calc-result", ResultView)).split())
        assert "bandwidth '100' has no unit: read as bytes per second, 1e-07 GB/s" in result
        assert "1.5e+07 s" in result
        await paste_into(pilot, field, "100GB/s")
        result = shown(pane.query_one(".calc-result", ResultView))
        assert "no unit" not in result and "15.03 ms" in result


def test_an_answer_is_folded_until_its_note_is_written_or_looked_at() -> None:
    import datetime as dt

    from engine.exercises import answer_folded, asked_notes

    lesson = load_lesson(Path(__file__).resolve().parent.parent / "content" / "S15.yaml")
    progress = LessonProgress("S15")
    # S15's exercises ask for DP, FSDP, TP and PP's notes and exercises 4 and 5.
    assert sorted({note.split(".")[1] for note in asked_notes(lesson) if "." in note}) == [
        "dp",
        "fsdp",
        "pp",
        "tp",
    ]
    assert answer_folded("ex2.dp.split", lesson, progress)
    assert answer_folded("ex4", lesson, progress)
    assert not answer_folded("ex5", lesson, progress)  # no engine answer to fold
    assert not answer_folded("ex2.zero1.split", lesson, progress)  # no exercise asks it
    assert not answer_folded("ex2.dp.split", lesson, progress, text="the batch")
    assert answer_folded("ex2.dp.split", lesson, progress, text="  \n")
    progress.notes["ex3.dp.comm"] = "all-reduce"
    assert not answer_folded("ex3.dp.comm", lesson, progress)
    progress.mark_looked(["ex3.dp.wait"], dt.datetime(2026, 12, 7, tzinfo=dt.UTC))
    assert not answer_folded("ex3.dp.wait", lesson, progress)


# ----------------------------------------------------------------- focus after a pane switch
WRITTEN_NOTES = {
    "ex2.dp.split": "the batch",
    "ex3.dp.comm": "all-reduce",
    "ex3.dp.wait": "the gradients' sum",
    "ex2.pp.split": "layers",
    "ex3.pp.comm": "send/recv",
    "ex3.pp.wait": "the bubble",
}


async def test_a_note_box_left_for_another_pane_has_the_focus_again_on_coming_back(
    tmp_path: Path,
) -> None:
    """The learner's trial: from the notes view (ctrl+e, Home, enter) the cursor is in the DP
    note in Diagrams; F3 (Bubble) then F4 gave the focus to the strategy picker, scrolled out of
    view above the note box shown, so `layers` was not typed and the space opened the picker
    over the header. Coming back, the note box has the focus again, in view, and every key of
    ` layers split` lands in it."""
    ProgressStore(tmp_path).save(LessonProgress("S15", notes=dict(WRITTEN_NOTES)))
    app = app_for(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("ctrl+e")
        await pilot.pause()
        await pilot.press("home", "enter")
        await wait_until(pilot, lambda: isinstance(app.focused, TextArea))
        area = app.focused
        assert isinstance(area, TextArea) and area.text == "the batch"
        await pilot.press("f3")
        await wait_until(pilot, lambda: app.query_one("#side", SideTabs).current == "bubble")
        await pilot.press("f4")
        await wait_until(pilot, lambda: app.focused is area)
        await pilot.pause()
        await pilot.pause()
        pane = app.query_one(DiagramsPane)
        assert pane.region.contains_region(area.region)
        await pilot.press(*" layers split")
        await pilot.pause()
        assert area.text == "the batch layers split"
        assert app.focused is area
        assert not pane.query_one("#strategy", Select).expanded


async def test_a_field_left_for_another_pane_has_the_focus_again_and_its_key_again_the_first(
    tmp_path: Path,
) -> None:
    """Every side pane keeps its focus over a switch, not only Diagrams: the Ledger's second
    field, left for Bubble (F3), has the focus again after F2; F2 pressed in the Ledger itself
    still goes to its first field (README, "No key typed in silence")."""
    app = app_for(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("f2")
        first = await params_field(pilot, app)
        await wait_until(pilot, lambda: app.focused is first)
        await pilot.press("tab")
        await wait_until(pilot, lambda: app.focused is not first)
        second = app.focused
        assert isinstance(second, Widget) and second.id is not None
        assert second.id.startswith("field-")
        await pilot.press("f3")
        await wait_until(pilot, lambda: app.focused is not second)
        await pilot.press("f2")
        await wait_until(pilot, lambda: app.focused is second)
        await pilot.press("f2")
        await wait_until(pilot, lambda: app.focused is first)


async def test_a_widget_given_the_focus_on_coming_back_is_scrolled_into_view(
    tmp_path: Path,
) -> None:
    """The strategy picker had the focus in Diagrams, scrolled to its notes below: F3 then F4
    gave it the focus again out of view, where a space opened it over the header. It is
    scrolled into view with the focus."""
    app = app_for(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("f4")
        pane = app.query_one(DiagramsPane)
        select = pane.query_one("#strategy", Select)
        await wait_until(pilot, lambda: app.focused is select and pane.max_scroll_y > 0)
        pane.scroll_end(animate=False, immediate=True)
        await wait_until(pilot, lambda: not pane.region.contains_region(select.region))
        await pilot.press("f3")
        await wait_until(pilot, lambda: app.focused is not select)
        await pilot.press("f4")
        await wait_until(pilot, lambda: app.focused is select)
        await wait_until(pilot, lambda: pane.region.contains_region(select.region))


async def test_the_side_pane_hidden_and_shown_again_gives_the_focus_back(tmp_path: Path) -> None:
    """F6 hid the side pane with the Diagrams picker focused: Textual moved the focus to a
    hidden sibling (the picture's scroll) on its way to the lesson, and F6 again gave the focus
    to that instead of the picker."""
    app = app_for(tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        await pilot.press("f4")
        select = app.query_one(DiagramsPane).query_one("#strategy", Select)
        await wait_until(pilot, lambda: app.focused is select)
        await pilot.press("f6")
        await wait_until(pilot, lambda: app.focused is app.query_one("#reading"))
        await settle(pilot)
        await pilot.press("f6")
        await wait_until(pilot, lambda: app.focused is not app.query_one("#reading"))
        await settle(pilot)
        assert app.focused is select


async def test_the_strategy_picker_marks_notes_as_they_are_written(tmp_path: Path) -> None:
    # Exercises 2 and 3 cover four strategies, so a strategy's last note leaves both exercises
    # "started": the plan's marks do not change, yet the picker must show the strategy done, as
    # the learner leaves the box (no save yet: the autosave waits a minute here) or saves.
    app = app_for(tmp_path, delay=60)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("f4")
        await wait_until(pilot, lambda: bool(app.query("DiagramsPane #strategy")))
        pane = app.query_one(DiagramsPane)
        select = pane.query_one("#strategy", Select)
        current = select.query_one("SelectCurrent #label", Static)

        def marks(name: str) -> tuple[str, str]:
            """The picker's shown label (strategy ``name`` picked) and ``name``'s option."""
            listed = next(
                str(option.prompt)
                for option in select.query_one(SelectOverlay).options
                if f"({name})" in str(option.prompt)
            )
            return str(current.render()), listed

        async def write_notes(name: str, leave_each: bool) -> None:
            await choose(pilot, select, name, typed=name.upper())
            await pane.show_strategy(name)
            boxes = {box.item.id: box for box in pane.query(NoteBox)}
            for note_id in (f"ex2.{name}.split", f"ex3.{name}.comm", f"ex3.{name}.wait"):
                await write(pilot, boxes[note_id].text_area, "shards")
                if leave_each:
                    await pilot.press("escape")

        fsdp = "FSDP/ZeRO-3 (fsdp)"
        await choose(pilot, select, "fsdp", typed="FSDP")
        assert marks("fsdp") == (f"◌ {fsdp}", f"◌ {fsdp}")
        await write_notes("fsdp", leave_each=True)
        assert app.dirty
        assert marks("fsdp") == (f"✓ {fsdp}", f"✓ {fsdp}")
        await pilot.press("ctrl+s")  # exercises 2 and 3 saved as started
        await wait_until(pilot, lambda: not app.dirty)
        # DP's notes written with the cursor left in the last box, then saved (ctrl+s).
        await write_notes("dp", leave_each=False)
        await pilot.press("ctrl+s")
        await wait_until(pilot, lambda: not app.dirty)
        assert marks("dp") == ("✓ DP (dp)", "✓ DP (dp)")
