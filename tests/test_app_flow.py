"""The learner's whole path through the app, at 80x24, driven by keys through Textual's Pilot.

Open the real S15 lesson, visit every section, work both calculators and check the figures on screen
(values from the ZeRO paper, Figure 1, and GPipe/Megatron bubble formulas), type hostile text into
the answers, quit, restart, find it all, and export Markdown whose front matter parses and whose
text matches byte for byte.
"""

from __future__ import annotations

from pathlib import Path

import yaml
from textual.widgets import Button, Input, Select, Static

from engine.export import split_front_matter
from tests.notes_render import quotes
from tests.pilot_helpers import (
    SIZE,
    Notified,
    app_for,
    burst,
    choose,
    goto_section,
    params_field,
    paste_into,
    reading_text,
    result_text,
    screen_lines,
    shown,
    type_into,
    wait_until,
    write,
)
from tui.app import make_app
from tui.widgets.calculator import ResultView
from tui.widgets.notes import SelfCheckBox
from tui.widgets.reader import BrokenText

HOSTILE_ANSWERS = [
    "[/] and a[/ and [bold]x — 混合精度 Adam 需要 16 B/param 👩‍💻",
    "tab\there, esc \x1b[31mred\x1b[0m, [link=x]y[/link]",
    "训练显存不只等于参数大小。\n第二行 ✔️",
    "no",
]


async def test_visit_every_section(tmp_path: Path) -> None:
    app = app_for(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        assert app.lesson is not None
        visited = []
        for _ in app.lesson.sections:
            await pilot.press("right_square_bracket")  # ]: the next section
            await pilot.pause()
            visited.append(app.main_screen.current_section)
            title = app.query_one("#reading .section-title", BrokenText)
            assert title.text == app.lesson.section(app.main_screen.current_section).title
        assert visited == [section.id for section in app.lesson.sections]


async def test_a_page_key_right_after_a_section_change_scrolls_the_new_section(
    tmp_path: Path,
) -> None:
    """] then PageDown in one burst, as a fast reader types them: the new section opens at
    its top and the page key scrolls it (the top is not set a frame later, over the key)."""
    app = app_for(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await goto_section(pilot, app, "core")
        reading = app.query_one("#reading")
        reading.focus()
        await burst(app, "]", "pagedown")
        await pilot.pause()
        assert app.main_screen.current_section == "mechanism"
        # A page is the pane's height less a line or so: far more than arrows would give. The
        # scroll is animated, and may start a frame or two after the key: waited for, not timed.
        page = reading.scrollable_content_region.height // 2
        await wait_until(pilot, lambda: reading.scroll_y >= page)
        assert reading.max_scroll_y > 0


async def test_ledger_pane_shows_the_papers_figures(tmp_path: Path) -> None:
    app = app_for(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("f2")
        await pilot.pause()
        ledger = app.query_one("LedgerPane")
        result = ledger.query_one(".calc-result", ResultView)
        params = ledger.query_one("#field-params", Input)
        assert app.focused is params
        await type_into(pilot, params, "3")
        # ctrl+g would replace what was typed: the first press only asks.
        await pilot.press("ctrl+g")
        await pilot.pause()
        assert params.value == "3"
        assert "ctrl+g again" in shown(ledger.query_one(".calc-note", Static))
        await pilot.press("ctrl+g")  # exercise 1: 1B parameters, mixed-precision Adam
        await pilot.pause()
        assert params.value == "1B"
        text = shown(result)
        # ZeRO paper §3.1: (2 + 2 + 12) bytes x 1e9 = 16 GB; naive 2 bytes x 1e9 = 2 GB.
        total = next(line for line in text.splitlines() if line.startswith("total"))
        assert "16.00" in total and "14.90" in total
        naive = next(line for line in text.splitlines() if line.startswith("naive"))
        assert "2.00" in naive and "1.86" in naive
        # ZeRO paper Figure 1: 7.5B parameters, N_d = 64.
        await type_into(pilot, params, "7.5e9")
        await type_into(pilot, ledger.query_one("#field-dp", Input), "64")
        zero = ledger.query_one("#field-zero", Select)
        for stage, expected in (("0", "120.00"), ("1", "31.41"), ("2", "16.64"), ("3", "1.88")):
            await choose(pilot, zero, stage)
            total_line = next(line for line in shown(result).splitlines() if "total" in line)
            assert expected in total_line, (stage, total_line)
        # Bad input: an inline message naming the field, the last good result kept.
        for bad in ("", "-1", "abc", "1e400", "nan", "0"):
            await paste_into(pilot, params, bad)
            error = ledger.query_one(".calc-error", Static)
            assert "params N" in shown(error), bad
            assert "1.88" in shown(result)


async def test_bubble_pane_shows_both_conventions(tmp_path: Path) -> None:
    app = app_for(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("f3")
        await pilot.pause()
        bubble = app.query_one("BubblePane")
        await type_into(pilot, bubble.query_one("#field-stages", Input), "4")
        await type_into(pilot, bubble.query_one("#field-micro_batches", Input), "8")
        text = result_text(bubble)
        # (p-1)/m = 3/8 (Narayanan et al. 2021 §2.2.1); (p-1)/(m+p-1) = 3/11 (GPipe).
        assert "bubble/ideal" in text and "0.375" in text
        assert "bubble/total" in text and "0.2727" in text
        await pilot.pause()
        timeline = bubble.query_one("#timeline")
        assert [line.split()[:2] for line in timeline.lines] == [
            ["stage", f"{r}"] for r in range(4)
        ]
        for bad in ("0", "", "2.5", "x", "-3", "1e400"):
            await paste_into(pilot, bubble.query_one("#field-micro_batches", Input), bad)
            assert "micro-batches m" in shown(bubble.query_one(".calc-error", Static))
            assert "0.375" in shown(bubble.query_one(".calc-result", ResultView))


async def test_answers_survive_quit_restart_and_export_byte_for_byte(tmp_path: Path) -> None:
    expected_answers: dict[str, str] = {}
    expected_reflections: dict[str, str] = {}
    app = app_for(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await goto_section(pilot, app, "self-check")
        boxes = list(app.query(SelfCheckBox))
        assert len(boxes) == 4
        for box, text in zip(boxes, HOSTILE_ANSWERS, strict=True):
            await write(pilot, box.text_area, text)
            expected_answers[box.item.id] = "ok " + text
        await pilot.press("ctrl+r")  # reveal the last question's key points
        await pilot.pause()
        assert boxes[-1].revealed
        await goto_section(pilot, app, "reflection")
        fields = list(app.query("#reading NoteBox").exclude(".self-check"))
        assert len(fields) == 5
        for index, box in enumerate(fields):
            text = HOSTILE_ANSWERS[index % len(HOSTILE_ANSWERS)] + f" #{index}"
            await write(pilot, box.text_area, text)
            expected_reflections[box.item.id] = "ok " + text
        await wait_until(pilot, lambda: app.progress.status == "in-progress")
        await pilot.press("ctrl+q")
    assert app.return_code == 0
    saved = yaml.safe_load((tmp_path / "S15.yaml").read_text(encoding="utf-8"))
    assert saved["answers"] == expected_answers
    assert saved["reflections"] == expected_reflections

    app = app_for(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await goto_section(pilot, app, "self-check")
        restored = {box.item.id: box.text_area.text for box in app.query(SelfCheckBox)}
        assert restored == expected_answers
        assert app.query(SelfCheckBox).last().revealed
        await goto_section(pilot, app, "reflection")
        restored = {
            box.item.id: box.text_area.text
            for box in app.query("#reading NoteBox").exclude(".self-check")
        }
        assert restored == expected_reflections
        await pilot.press("f9", "y")  # mark complete: steps are left, so it asks first
        await pilot.press("f8", "f8")  # export: F8 asks which format, F8 again takes Markdown
        await pilot.pause()
        assert app.progress.status == "complete"
    exported = (tmp_path / "exports" / "S15-notes.md").read_text(encoding="utf-8")
    front, _body = split_front_matter(exported)
    assert front["lesson"] == "S15"
    assert front["status"] == "complete"
    assert front["title"].startswith("训练内存、Collective 与并行轴全景")
    assert quotes(exported) == [*expected_answers.values(), *expected_reflections.values()]


async def test_ledger_compare_and_exercise1_figures_are_saved(tmp_path: Path) -> None:
    app = app_for(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("f2", "ctrl+g")
        await wait_until(pilot, lambda: "exercise1" in app.progress.figures)
        ledger = app.query_one("LedgerPane")
        # Exercise 1's four columns for 1B params, mixed-precision Adam (ZeRO paper §3.1).
        assert app.progress.figures["exercise1"] == {
            "parameters": 2e9,
            "gradients": 2e9,
            "adam_states": 12e9,
            "activations": 0.0,
        }
        await pilot.press("ctrl+t")
        await pilot.pause()
        text = shown(ledger.query_one(".calc-result", ResultView))
        total = next(line for line in text.splitlines() if line.startswith("total"))
        # 16 B/param (ZeRO paper) vs 18 B/param (Megatron-LM, fp32 main grads) on 1e9 params.
        assert "ZeRO paper" in text and "Megatron-LM" in text and "DeepSpeed" in text
        assert "16.00" in total and "18.00" in total
        # Activations from the architecture (Korthikanti et al. 2022, Table 2, no parallelism):
        # s*b*h*(34 + 5*a*s/h) per layer = 1024*1*1024*(34 + 80) * 24 layers.
        await pilot.press("ctrl+t")
        # The architecture's rows are built when the learner opens them (Enter on the button).
        assert not ledger.query("#field-seq")
        ledger.query_one("#more-open", Button).focus()
        await pilot.press("enter")
        await pilot.pause()
        assert app.focused is ledger.query_one("#field-seq", Input)
        for name, value in (("seq", "1024"), ("layers", "24"), ("hidden", "1024"), ("heads", "16")):
            await type_into(pilot, ledger.query_one(f"#field-{name}", Input), value)
        activations = app.progress.figures["exercise1"]["activations"]
        assert activations == 1024 * 1024 * (34 + 5 * 16 * 1024 / 1024) * 24
        await pilot.press("ctrl+q")
    # Reopened, the saved architecture is on screen at once: its rows are built without asking.
    app = app_for(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("f2")
        await pilot.pause()
        ledger = app.query_one("LedgerPane")
        assert ledger.query_one("#field-layers", Input).value == "24"
        assert not ledger.query("#more-open")
        assert "1024" in ledger.values()["seq"]
        await pilot.press("ctrl+q")
    saved = yaml.safe_load((tmp_path / "S15.yaml").read_text(encoding="utf-8"))
    assert saved["forms"]["ledger"]["seq"] == "1024"
    assert saved["figures"]["exercise1"]["adam_states"] == 12e9


async def test_bubble_compares_two_schedules(tmp_path: Path) -> None:
    app = app_for(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("f3", "f5")
        bubble = app.query_one("BubblePane")
        await choose(pilot, bubble.query_one("#field-schedule", Select), "1f1b")
        await choose(pilot, bubble.query_one("#field-compare", Select), "interleaved-1f1b")
        await pilot.pause()
        text = result_text(bubble)
        # 1F1B p=4, m=8: 0.375; interleaved v=2: (p-1)/(m*v) = 0.1875 (Narayanan et al. §2.2.2).
        assert "1f1b: p=4, m=8" in text and "interleaved-1f1b: p=4, m=8" in text
        assert "0.375" in text and "0.1875" in text
        # 1F1B stashes at most p micro-batches; the peak is on the first stage.
        assert "in flight per stage: 4 3 2 1" in text


async def test_a_missing_lesson_is_a_message_and_writes_no_progress_file(tmp_path: Path) -> None:
    app = make_app(lesson_id="S99", progress_dir=tmp_path, autosave_delay=0.05)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert "cannot be opened" in reading_text(app) and "S99" in reading_text(app)
        await pilot.press("f2", "ctrl+g")
        await wait_until(pilot, lambda: app.query_one("LedgerPane").result is not None)
        await pilot.press("ctrl+q")
    # Only the folder's lock file (engine.progress.LOCK_NAME): no progress file, and no settings
    # (no lesson, so no first-run hint was shown to remember).
    assert sorted(path.name for path in tmp_path.iterdir()) == [".shardbook.lock"]


async def test_ledger_pane_breakdown_matches_the_cli(tmp_path: Path) -> None:
    from engine.ledger import LedgerSpec, compute_ledger

    app = app_for(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("f2", "ctrl+g")
        await pilot.pause()
        pane_result = app.query_one("LedgerPane").result
        assert pane_result is not None
        # `shardbook calc ledger --params 1B` builds this spec (defaults: bf16, adamw, master).
        cli_result = compute_ledger(LedgerSpec(params=1e9, gpu_memory=80e9))
        assert pane_result.per_rank_bytes == cli_result.per_rank_bytes
        assert pane_result.per_rank_bytes["master_weights"] == 4e9


async def test_palette_go_to_focuses_the_first_answer_box(tmp_path: Path) -> None:
    app = app_for(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        index = [section.id for section in app.sections].index("self-check") + 1
        app.main_screen.goto(index)  # what the palette's "Go to: 自检问题" entry calls
        await pilot.pause()
        await pilot.press(*"typed")
        await pilot.pause()
        first = app.query(SelfCheckBox).first()
        assert first.text_area.text == "typed"


async def test_notifications_show_paths_and_errors_literally(
    tmp_path: Path, notified: Notified
) -> None:
    app = app_for(tmp_path)
    async with app.run_test(size=SIZE, message_hook=notified.hook) as pilot:
        # A file path or an error text with brackets must neither crash nor restyle the toast.
        await pilot.press("f2")
        app.notify("/tmp/a[/b/[bold]x.md", severity="warning")
        app.query_one("LedgerPane").notify("a[/ [link=x]y", severity="warning")
        await pilot.pause()
        assert "/tmp/a[/b/[bold]x.md" in notified.messages and "a[/ [link=x]y" in notified.messages
        assert all(not notification.markup for notification in notified.notifications)


async def test_a_refused_edit_claims_no_last_good_result_where_none_is_shown(
    tmp_path: Path,
) -> None:
    # A form saved with a refused value and no last good form beside it (as shardbook saved it
    # before it kept one) comes back refused: no figures, "Enter values above." Another
    # refused edit then said "(showing the last good result)" over that line.
    (tmp_path / "S15.yaml").write_text(
        "schema_version: 3\nlesson: S15\nforms: {ledger: {params: abc}}\n", encoding="utf-8"
    )
    app = app_for(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("f2")
        params = await params_field(pilot, app)
        ledger = app.query_one("LedgerPane")
        result = ledger.query_one(".calc-result", ResultView)
        error = ledger.query_one(".calc-error", Static)
        await wait_until(pilot, lambda: "params N" in shown(error))
        await paste_into(pilot, params, "xyz")
        assert "params N" in shown(error) and "last good" not in shown(error)
        assert "Enter values above." in shown(result)
        # Figures shown, then a refused edit: they stay, and the message says so.
        await paste_into(pilot, params, "7B")
        await wait_until(pilot, lambda: "total" in shown(result))
        await paste_into(pilot, params, "-1")
        assert "(showing the result for 7B)" in " ".join(shown(error).split())
        assert "total" in shown(result)


async def test_a_tab_pasted_inside_a_number_is_refused_naming_the_field(tmp_path: Path) -> None:
    """``7<TAB>B`` pasted into params read as 7B and showed as ``7       B``: refused as the
    command line refuses it, naming the field; the figures of the last good value stay."""
    app = app_for(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("f2")
        params = await params_field(pilot, app)
        ledger = app.query_one("LedgerPane")
        result = ledger.query_one(".calc-result", ResultView)
        error = ledger.query_one(".calc-error", Static)
        await paste_into(pilot, params, "7B")
        await wait_until(pilot, lambda: "total" in shown(result))
        await paste_into(pilot, params, "7\tB")
        await wait_until(pilot, lambda: "control character" in shown(error))
        message = " ".join(shown(error).split())
        assert "params N" in message and "'7\\tB' holds a control character (\\t)" in message
        assert "(showing the result for 7B)" in message


async def test_a_refused_field_says_so_in_a_12_row_terminal(tmp_path: Path) -> None:
    """At 40x12 the side pane has 8 rows: params N, then seven more fields, then the message
    under the form, out of view; typing ``x`` after ``1B`` showed only ``params N  1Bx``. The
    message comes right under the field, both in view, and the field is marked as refused until
    the value is good again."""
    app = app_for(tmp_path)
    async with app.run_test(size=(40, 12)) as pilot:
        await pilot.press("f2")
        params = await params_field(pilot, app)
        await pilot.press("end", "x")
        await pilot.pause()
        lines = [" ".join(line.split()) for line in screen_lines(app)]
        row = lines.index("params N 1Bx")
        below = " ".join(lines[row + 1 :])
        assert below.startswith("params N: unknown suffix 'Bx'; use K, M, B (1e9) or T"), lines
        assert "(showing the result for 1B)" in below, lines
        assert params.has_class("-refused")
        await pilot.press("backspace")
        await pilot.pause()
        assert not params.has_class("-refused")
        assert not any("unknown suffix" in line for line in screen_lines(app))


async def test_a_gpu_memory_past_the_bound_says_its_unit(tmp_path: Path) -> None:
    """1e40 in GPU memory: the bound, 1e24 bytes, is written as every size is, in GB (1e9
    bytes: 1e15) and GiB (2^30 bytes: 1e24 / 1,073,741,824 = 9.313e14), and the bare number
    typed is said to be read as bytes; it was "must be at most 1e+24, got 1e40"."""
    app = app_for(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("f2")
        await params_field(pilot, app)
        ledger = app.query_one("LedgerPane")
        error = ledger.query_one(".calc-error", Static)
        await paste_into(pilot, ledger.query_one("#field-gpu_memory", Input), "1e40")
        await wait_until(pilot, lambda: "GPU memory" in shown(error))
        message = " ".join(shown(error).split())
        assert message.startswith(
            "GPU memory: must be at most 1e+15 GB (9.313e+14 GiB), got 1e40 bytes"
        ), message


async def test_the_kept_figures_say_which_value_they_are_for(tmp_path: Path) -> None:
    """Typing 1e40 for params N passes through 1e4 (10,000 parameters), whose figures stay on
    screen under the refusal of 1e40: the message says they are 1e4's. An edit refused on
    another field than the one changed keeps the plain words."""
    app = app_for(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("f2")
        params = await params_field(pilot, app)
        ledger = app.query_one("LedgerPane")
        error = ledger.query_one(".calc-error", Static)
        await type_into(pilot, params, "1e40")
        message = " ".join(shown(error).split())
        # 1e40 is past the bound of 1e24 on a count: quoted as typed, not as the float 1e+40.
        assert message == (
            "params N: must be at most 1e+24, got 1e40 (showing the result for 1e4)"
        ), message
        # ZeRO §3.1's 16 bytes per parameter (mixed-precision Adam), 1e4 of them: 160,000 B,
        # 1.6e-4 GB and 1.49e-4 GiB (160,000 / 2^30), never rounded to a wrong 0.00; written
        # with the decimals the column's smallest figure needs (the weights' 2e-5 GB: 6).
        total = next(line for line in result_text(ledger).splitlines() if "total" in line)
        assert total.split()[:3] == ["total", "0.000160", "0.000149"], total
        await pilot.press("f3")
        bubble = app.query_one("BubblePane")
        await paste_into(pilot, bubble.query_one("#field-micro_batches", Input), "10")
        await wait_until(pilot, lambda: "p=4, m=10" in result_text(bubble))
        # Interleaved 1F1B needs m to be a multiple of p = 4: refused on m, the schedule changed.
        await choose(pilot, bubble.query_one("#field-schedule", Select), "interleaved-1f1b")
        shown_error = " ".join(shown(bubble.query_one(".calc-error", Static)).split())
        assert shown_error.endswith("(showing the last good result)"), shown_error


async def test_the_kept_value_and_the_bound_are_written_plainly(tmp_path: Path) -> None:
    """Typing 2.5 for DP size passes through "2.", a DP size of 2: its figures stay under the
    refusal, named as 2, not "(showing the result for 2.)", read as the end of a sentence. The
    bound on every count, 10^12, is written with its digits grouped, as every count's (4,096),
    not as the float 1e+12."""
    app = app_for(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("f2")
        await params_field(pilot, app)
        ledger = app.query_one("LedgerPane")
        error = ledger.query_one(".calc-error", Static)
        dp = ledger.query_one("#field-dp", Input)
        await paste_into(pilot, dp, "")
        await type_into(pilot, dp, "2.5")
        message = " ".join(shown(error).split())
        assert message == "DP size P: must be a whole number, got 2.5 (showing the result for 2)"
        await paste_into(pilot, dp, "99999999999999999999")
        message = " ".join(shown(error).split())
        assert message.startswith(
            "DP size P: must be at most 1,000,000,000,000, got 99999999999999999999"
        ), message


async def test_a_refused_edit_shows_the_same_after_a_restart(tmp_path: Path) -> None:
    """Quit while the Bubble pane refuses p = 6 (interleaved 1F1B needs m = 8 to be a multiple
    of p): after a restart the pane showed only "Enter values above." under the fields. It shows
    what the session showed: the typed values, the message, and the figures for p = 4."""
    app = app_for(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("f3")
        await wait_until(pilot, lambda: bool(app.query("BubblePane #field-stages")))
        bubble = app.query_one("BubblePane")
        await choose(pilot, bubble.query_one("#field-schedule", Select), "interleaved-1f1b")
        await wait_until(pilot, lambda: "p=4, m=8" in result_text(bubble))
        await paste_into(pilot, bubble.query_one("#field-stages", Input), "6")
        error = bubble.query_one(".calc-error", Static)
        await wait_until(pilot, lambda: "multiple" in shown(error))
        message = " ".join(shown(error).split())
        # The nearest multiples of p = 6 around m = 8: 6 and 12.
        assert message == (
            "micro-batches m: Interleaved 1F1B needs m to be a multiple of p (m=8, p=6); try "
            "m=6 or m=12 (showing the last good result)"
        ), message
        assert "p=4, m=8" in result_text(bubble)
        await pilot.press("ctrl+q")
    app = app_for(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("f3")
        await wait_until(pilot, lambda: bool(app.query("BubblePane #field-stages")))
        bubble = app.query_one("BubblePane")
        error = bubble.query_one(".calc-error", Static)
        await wait_until(pilot, lambda: "p=4, m=8" in result_text(bubble))
        assert bubble.query_one("#field-stages", Input).value == "6"
        assert " ".join(shown(error).split()) == message
        # Interleaved 1F1B, v = 2: (p-1)/(v·m) = 3/16 (Narayanan et al. 2021 §2.2.2).
        assert "0.1875" in result_text(bubble)
        assert "Enter values above." not in result_text(bubble)


async def test_a_less_used_field_refused_at_a_restart_is_named_under_its_row(
    tmp_path: Path,
) -> None:
    """seq len s typed with no layers L when the learner quit (refused on layers L): after a
    restart the less-used rows are built after the form is computed, and the message went
    under the main form, far from the row it names; it is right under that row, as in the
    session."""
    (tmp_path / "S15.yaml").write_text(
        "schema_version: 3\nlesson: S15\n"
        "forms: {ledger: {params: 7B, seq: '4096'}, ledger.last-good: {params: 7B}}\n",
        encoding="utf-8",
    )
    app = app_for(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("f2")
        await wait_until(pilot, lambda: bool(app.query("LedgerPane #field-seq")))
        ledger = app.query_one("LedgerPane")
        error = ledger.query_one(".calc-error", Static)
        row = ledger.query_one("#field-layers").parent
        assert row is not None
        await wait_until(
            pilot, lambda: ledger.children.index(error) == ledger.children.index(row) + 1
        )
        assert shown(error).startswith("layers L:")
        # 7B with mixed-precision Adam: 16 bytes per parameter (ZeRO §3.1), 112 GB in all.
        total = next(line for line in result_text(ledger).splitlines() if "total" in line)
        assert "112.00" in total, total


async def test_ledger_caption_gives_the_bytes_per_parameter_of_the_preset_chosen(
    tmp_path: Path,
) -> None:
    app = app_for(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("f2", "ctrl+g")
        await wait_until(pilot, lambda: "exercise1" in app.progress.figures)
        ledger = app.query_one("LedgerPane")
        await choose(pilot, ledger.query_one("#field-preset", Select), "adam-8bit", "8-bit")
        text = " ".join(shown(ledger.query_one(".calc-result", ResultView)).split())
        # bf16 weights 2 + grads 2 + fp32 master 4 + two 1-byte states 2 (Dettmers et al. 2022).
        used = (
            "10 B per trainable parameter here (2 bf16 params + 2 bf16 grads + 4 fp32 master "
            "weights + 2 adam-8bit states)"
        )
        assert used in text
        await pilot.press("ctrl+t")
        await pilot.pause()
        text = " ".join(shown(ledger.query_one(".calc-result", ResultView)).split())
        # Each convention with 8-bit Adam: Megatron-LM keeps fp32 main grads in place of bf16
        # ones (+2 B), DeepSpeed an fp32 gradient copy beside them (+4 B).
        assert text.count(used) == 1
        assert (
            "12 B per trainable parameter here (2 bf16 params + 4 fp32 main grads + 4 fp32 "
            "master weights + 2 adam-8bit states)" in text
        )
        assert (
            "14 B per trainable parameter here (2 bf16 params + 2 bf16 grads + 4 fp32 grads + 4 "
            "fp32 master weights + 2 adam-8bit states)" in text
        )
        await pilot.press("ctrl+q")


async def test_bubble_refuses_more_stages_than_the_simulator_runs_on_the_stages_field(
    tmp_path: Path,
) -> None:
    """20,000 stages of one micro-batch are 2·p·m = 40,000 ops, far under the op limit, but the
    simulator's work grows with p (warm-up, cool-down, each stage): refused on the stages
    field, as the command line refuses --stages, before any simulation."""
    app = app_for(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("f3")
        await pilot.pause()
        bubble = app.query_one("BubblePane")
        await type_into(pilot, bubble.query_one("#field-micro_batches", Input), "1")
        await paste_into(pilot, bubble.query_one("#field-stages", Input), "20000")
        error = " ".join(shown(bubble.query_one(".calc-error", Static)).split())
        assert error.startswith("stages p: p = 20,000 stages is more than this simulator runs")
        assert "(16,384)" in error and "lower p" in error
        await pilot.press("ctrl+q")


async def test_bubble_says_when_v_is_not_used_by_the_schedule_as_the_cli_does(
    tmp_path: Path,
) -> None:
    """v splits a stage into chunks only in interleaved 1F1B (Narayanan et al. 2021 §2.2.2):
    with GPipe and v = 2 the pane's heading says v is not used, as `calc bubble` says it, over
    GPipe's bubble (p-1)/m = 3/8 = 0.375 for p = 4, m = 8; compared with interleaved 1F1B, only
    GPipe's heading says it; with v = 1 neither does."""
    app = app_for(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("f3")
        await pilot.pause()
        bubble = app.query_one("BubblePane")
        await type_into(pilot, bubble.query_one("#field-stages", Input), "4")
        await type_into(pilot, bubble.query_one("#field-micro_batches", Input), "8")
        await paste_into(pilot, bubble.query_one("#field-virtual_stages", Input), "2")
        lines = result_text(bubble).splitlines()
        assert "gpipe: p=4, m=8; v not used" in lines
        assert "0.375" in result_text(bubble)
        await choose(pilot, bubble.query_one("#field-compare", Select), "interleaved-1f1b")
        lines = result_text(bubble).splitlines()
        assert "gpipe: p=4, m=8; v not used" in lines
        assert "interleaved-1f1b: p=4, m=8" in lines
        await paste_into(pilot, bubble.query_one("#field-virtual_stages", Input), "1")
        assert "gpipe: p=4, m=8" in result_text(bubble).splitlines()
        assert "v not used" not in result_text(bubble)
        await pilot.press("ctrl+q")
