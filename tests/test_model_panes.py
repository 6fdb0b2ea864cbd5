"""The model presets in the panes, driven by keys through Textual's Pilot at 80x24: the Ledger's
model picker fills the shape and fine-tuning inputs work; the Trade-offs pane's model, batch and
sequence choices; the Collectives pane with one rank and NCCL's double binary tree. Counts from
the models' config.json and the Hugging Face Hub (tests/test_model_presets.py lists them)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from textual.widgets import Button, Input, Select, Static

from tests.pilot_helpers import (
    SIZE,
    app_for,
    choose,
    result_text,
    screen_lines,
    settle,
    shown,
    type_into,
    wait_until,
)
from tui.widgets.calculator import ResultView
from tui.widgets.reader import BrokenText


async def test_ledger_model_picker_fills_the_shape(tmp_path: Path) -> None:
    app = app_for(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("f2")
        await pilot.pause()
        ledger = app.query_one("LedgerPane")
        ledger.query_one("#more-open", Button).focus()
        await pilot.press("enter")
        await pilot.pause()
        await choose(pilot, ledger.query_one("#field-model", Select), "llama2-7b", "Llama 2 7B")
        await pilot.pause()
        values = ledger.values()
        # meta-llama/Llama-2-7b-hf config.json.
        assert (values["layers"], values["hidden"], values["ffn_hidden"]) == ("32", "4096", "11008")
        assert (values["mlp"], values["norm"], values["tied_embeddings"]) == (
            "swiglu",
            "rmsnorm",
            "no",
        )
        assert values["params"] == ""
        assert ledger.result is not None and ledger.result.params_total == 6_738_415_616
        text = result_text(ledger)
        assert "(Llama 2 7B)" in text
        # LoRA r = 8 on q, v (PEFT's default for Llama): 4,194,304 trainable parameters.
        await choose(pilot, ledger.query_one("#field-finetune", Select), "lora")
        assert "4,194,304 trainable" in shown(ledger.query_one(".calc-result", ResultView))
        # A shape edited away from the preset's is a custom shape.
        await type_into(pilot, ledger.query_one("#field-layers", Input), "16")
        assert ledger.values()["model"] == "custom"
        assert ledger.result.params_total == 6_738_415_616 - 16 * 202_383_360
        await pilot.press("ctrl+q")
    saved = yaml.safe_load((tmp_path / "S15.yaml").read_text(encoding="utf-8"))
    form = saved["forms"]["ledger"]
    assert form["model"] == "custom" and form["layers"] == "16" and form["finetune"] == "lora"
    # Reopened: the form as it was left, the new inputs included.
    app = app_for(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("f2")
        await pilot.pause()
        ledger = app.query_one("LedgerPane")
        assert ledger.values()["mlp"] == "swiglu"
        assert ledger.result is not None and ledger.result.trainable_params == 16 * 131_072
        await pilot.press("ctrl+q")


async def test_ledger_forms_saved_before_the_new_inputs_still_load(tmp_path: Path) -> None:
    # A progress file written before the model inputs existed: its keys load, the new ones take
    # their defaults (the GPT shape, full fine-tuning).
    old_form = {"params": "7.5B", "dp": "64", "zero": "1", "preset": "mixed-adam"}
    app = app_for(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("f2")
        await pilot.pause()
        ledger = app.query_one("LedgerPane")
        ledger.restore(old_form)
        await pilot.pause()
        assert ledger.result is not None
        # ZeRO paper Figure 1, P_os at N_d = 64: 4Ψ + 12Ψ/64 = 31.40625 GB.
        assert ledger.result.model_states_bytes == 31.40625e9
        assert ledger.values()["model"] == "custom" and ledger.values()["finetune"] == "full"
        await pilot.press("ctrl+q")


async def test_tradeoffs_model_batch_and_sequence(tmp_path: Path) -> None:
    # Exercise 4 written, so the table it folds is shown.
    (tmp_path / "S15.yaml").write_text(
        "schema_version: 2\nlesson: S15\nnotes: {ex4: 'TP and FSDP grow most'}\n",
        encoding="utf-8",
    )
    app = app_for(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("f10")
        await settle(pilot)
        pane = app.query_one("TradeoffsPane")
        result = pane.query_one("#tradeoffs-result", Static)
        before = shown(result)
        await choose(
            pilot, pane.query_one("#tradeoffs-model", Select), "llama3.1-8b", "Llama 3.1 8B"
        )
        after = shown(result)
        assert after != before and "T_step" in after
        # lesson-1b has 2,048 learned positions (GPT-3's n_ctx, Brown et al. 2020 Table 2.1).
        await choose(pilot, pane.query_one("#tradeoffs-model", Select), "lesson-1b", "the lesson")
        await choose(pilot, pane.query_one("#tradeoffs-seq", Select), "4096")
        assert "at most 2048 tokens" in shown(result)
        await choose(pilot, pane.query_one("#tradeoffs-seq", Select), "2048")
        await choose(pilot, pane.query_one("#tradeoffs-batch", Select), "64")
        assert shown(result) == before
        await pilot.press("ctrl+q")


async def test_collectives_one_rank_and_double_binary_tree(tmp_path: Path) -> None:
    app = app_for(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("f4", "f4")
        await pilot.pause()
        pane = app.query_one("CollectivesPane")
        caption = pane.query_one("#flow-caption", BrokenText)
        await choose(pilot, pane.query_one("#field-algorithm", Select), "double-binary-tree")
        # Said in the caption (broken at the pane's width), no picture drawn.
        assert "costed, not drawn" in caption.text
        assert not pane.query_one("#flow-scroll").display
        text = shown(pane.query_one(".calc-result", ResultView))
        assert "double-binary-tree" in text
        await type_into(pilot, pane.query_one("#field-ranks", Input), "1")
        assert "nothing moves" in caption.text
        assert pane.last_error == ""
        await pilot.press("ctrl+q")


async def test_collectives_form_saved_with_tree_loads_as_binomial(tmp_path: Path) -> None:
    app = app_for(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("f4", "f4")
        await pilot.pause()
        pane = app.query_one("CollectivesPane")
        pane.restore({"op": "all-reduce", "algorithm": "tree", "ranks": "8"})
        await pilot.pause()
        assert pane.values()["algorithm"] == "binomial"
        # MPICH binomial reduce + broadcast, 1 GB at 100 GB/s, 5 us: 6 × (5 us + 10 ms).
        assert "60.03 ms" in shown(pane.query_one(".calc-result", ResultView))
        await pilot.press("ctrl+q")


@pytest.mark.parametrize("size", [(80, 24), (120, 40)])
async def test_the_collectives_caption_is_on_screen_whole_beside_the_scrolling_picture(
    tmp_path: Path, size: tuple[int, int]
) -> None:
    """The caption under the data-flow picture (what '+' and '*' mean; at the last step, what
    the collective did) was a line of the sideways-scrolling picture, cut at the pane's edge at
    80x24 ("... this step, '*"). It is broken at the pane's width: at the last step of a ring
    all-reduce on 4 ranks, every word of it is on screen, in order, in the pane's columns."""
    caption = (
        "'+' = added into the slot this step, '*' = copied in, '.' = empty. Done: every rank "
        "holds the element-wise sum of all ranks' inputs."
    )
    app = app_for(tmp_path)
    async with app.run_test(size=size) as pilot:
        await pilot.press("f4", "f4")
        pane = app.main_screen.query_one("CollectivesPane")
        await wait_until(pilot, lambda: bool(pane.query("#flow")))
        await pilot.press("ctrl+y", "end")
        await wait_until(pilot, lambda: getattr(pane, "step", 0) == 6)
        await settle(pilot)  # the last step drawn and laid out: the pane's height is final
        pane.scroll_end(animate=False)
        await wait_until(pilot, lambda: pane.scroll_y == pane.max_scroll_y > 0)
        await settle(pilot)
        left, right = pane.region.x, pane.region.right
        lines = screen_lines(app, (left, right))[pane.region.y : pane.region.bottom]
        words, shown_words = caption.split(), " ".join(lines).split()
        assert any(
            shown_words[start : start + len(words)] == words for start in range(len(shown_words))
        ), lines
        await pilot.press("ctrl+q")
