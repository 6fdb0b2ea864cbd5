"""``shardbook calc ledger``: the papers' memory values (ZeRO paper Figure 1, Megatron-LM's and
DeepSpeed's estimators, Korthikanti et al. 2022 Table 2) through ``--json``, the JSON keys, the
table, and bad input as one stderr line naming the flag with exit status 2."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from cli.main import main
from tests.cli_helpers import calc_json

JSON_KEYS = {
    "per_rank_bytes",
    "model_states_bytes",
    "naive_bytes",
    "params_total",
    "world_size",
    "fits",
    "convention",
    "terms",
    "activations_computed",
    # Added with model presets, fine-tuning and offload (per_stage_bytes and most_loaded_stage
    # appear only with --pp above 1).
    "trainable_params",
    "offloaded_bytes",
    "host",
    "model",
    "finetune",
    "offload",
}
PER_RANK_KEYS = [
    "params",
    "grads",
    "master_weights",
    "optimizer_states",
    "activations",
    "buffers",
    "total",
]


def _json(capsys: pytest.CaptureFixture[str], *flags: str) -> dict[str, Any]:
    return calc_json(capsys, "ledger", *flags)


def test_json_keys_exactly(capsys: pytest.CaptureFixture[str]) -> None:
    data = _json(capsys, "--params", "1e9")
    assert set(data) == JSON_KEYS
    assert list(data["per_rank_bytes"]) == PER_RANK_KEYS
    for term in data["terms"]:
        assert set(term) == {"name", "bytes", "formula", "source"}


def test_one_billion_params_only(capsys: pytest.CaptureFixture[str]) -> None:
    # Lesson S15 exercise 1: 1e9 params, mixed-precision Adam: 16 GB beside 2 GB naive;
    # with only --params, activations are 0 and reported as not computed.
    data = _json(capsys, "--params", "1B")
    assert data["per_rank_bytes"]["total"] == 16e9
    assert data["naive_bytes"] == 2e9
    assert data["per_rank_bytes"]["activations"] == 0
    assert data["activations_computed"] is False
    assert data["fits"] is None and data["world_size"] == 1
    assert data["convention"] == "zero-paper"


@pytest.mark.parametrize(
    ("zero", "expected"), [("0", 120e9), ("1", 31.40625e9), ("2", 16.640625e9), ("3", 1.875e9)]
)
def test_zero_paper_figure1(capsys: pytest.CaptureFixture[str], zero: str, expected: float) -> None:
    # ZeRO paper (arXiv:1910.02054) Figure 1: Ψ = 7.5e9, N_d = 64, K = 12.
    data = _json(capsys, "--params", "7.5B", "--dp", "64", "--zero", zero)
    assert data["model_states_bytes"] == pytest.approx(expected, rel=1e-12)


@pytest.mark.parametrize(("zero", "gb"), [("1", 52.5), ("2", 41.25), ("3", 30.0)])
def test_zero_paper_table1(capsys: pytest.CaptureFixture[str], zero: str, gb: float) -> None:
    # ZeRO paper Table 1, 7.5B at N_d = 4 (GB = 1e9).
    data = _json(capsys, "--params", "7.5e9", "--dp", "4", "--zero", zero)
    assert data["model_states_bytes"] == pytest.approx(gb * 1e9, rel=1e-12)


@pytest.mark.parametrize(
    ("dtype", "zero", "per_param"),
    [
        ("bf16", "0", 18),
        ("bf16", "1", 6 + 12 / 8),  # 7.5 at d = 8
        ("fp16", "0", 20),
        ("fp16", "1", 4 + 16 / 8),
        ("fp32", "0", 16),
        ("fp32", "1", 8 + 8 / 8),
    ],
)
def test_megatron(
    capsys: pytest.CaptureFixture[str], dtype: str, zero: str, per_param: float
) -> None:
    # Megatron-LM theoretical_memory_usage.py and dist_optimizer.md, d = 8.
    data = _json(
        capsys,
        "--params",
        "1B",
        "--dp",
        "8",
        "--dtype",
        dtype,
        "--zero",
        zero,
        "--convention",
        "megatron",
    )
    assert data["convention"] == "megatron"
    assert data["model_states_bytes"] == pytest.approx(per_param * 1e9, rel=1e-12)


def test_deepspeed_estimators(capsys: pytest.CaptureFixture[str]) -> None:
    # DeepSpeed stage_1_and_2.py: 2Ψ + 18Ψ/N; stage3.py: 4·largest_layer_params + 18Ψ/N.
    zero2 = _json(
        capsys, "--params", "7.5B", "--dp", "64", "--zero", "2", "--convention", "deepspeed"
    )
    assert zero2["model_states_bytes"] == pytest.approx(2 * 7.5e9 + 18 * 7.5e9 / 64)
    zero3 = _json(
        capsys,
        "--params",
        "7.5B",
        "--dp",
        "64",
        "--zero",
        "3",
        "--convention",
        "deepspeed",
        "--largest-layer-params",
        "500M",
    )
    assert zero3["model_states_bytes"] == pytest.approx(4 * 500e6 + 18 * 7.5e9 / 64)


def test_optimizers(capsys: pytest.CaptureFixture[str]) -> None:
    # EleutherAI Transformer Math 101: 8-bit Adam total 10 B/param; SGD with momentum 12.
    assert _json(capsys, "--params", "1B", "--optimizer", "adam-8bit")["model_states_bytes"] == 10e9
    data = _json(capsys, "--params", "1B", "--optimizer", "sgd-momentum")
    assert data["model_states_bytes"] == 12e9


def test_toy_activations(capsys: pytest.CaptureFixture[str]) -> None:
    # Korthikanti et al. 2022 Table 2, SP + selective, b = 1: 34·s·h/t per layer; for h 1024,
    # s 1024, L 24 (Megatron-LM's 345M GPT-2), 34·s·h·L = 855,638,016 bytes.
    data = _json(
        capsys,
        "--params",
        "354869248",
        "--layers",
        "24",
        "--hidden",
        "1024",
        "--heads",
        "16",
        "--seq",
        "1024",
        "--sequence-parallel",
        "--recompute",
        "selective",
    )
    assert data["activations_computed"] is True
    assert data["per_rank_bytes"]["activations"] == 855_638_016


def test_gpu_memory_fits(capsys: pytest.CaptureFixture[str]) -> None:
    assert _json(capsys, "--params", "1B", "--gpu-memory", "80GB")["fits"] is True
    assert _json(capsys, "--params", "7.5B", "--gpu-memory", "80GiB")["fits"] is False


def test_table_names_convention_units_and_missing_activations(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert main(["calc", "ledger", "--params", "1B"]) == 0
    out = capsys.readouterr().out
    assert "zero-paper" in out
    assert "GB (1e9 B)" in out and "GiB (2^30 B)" in out
    assert "16.000" in out and "14.901" in out  # 16e9 B = 14.901 GiB
    assert "activations not computed" in out


@pytest.mark.parametrize(
    ("optimizer", "used"),
    [
        # Mixed precision: 2 B bf16 weights + 2 B bf16 grads + 4 B fp32 master, then the states:
        # Adam's two fp32 moments 8 B (ZeRO paper §3.1), 8-bit Adam's two 1-byte states
        # (Dettmers et al. 2022), SGD with momentum one fp32 buffer, plain SGD none.
        (
            "adamw",
            "16 B per trainable parameter here (2 bf16 params + 2 bf16 grads + 4 fp32 "
            "master weights + 8 adamw states)",
        ),
        (
            "adam-8bit",
            "10 B per trainable parameter here (2 bf16 params + 2 bf16 grads + 4 fp32 "
            "master weights + 2 adam-8bit states)",
        ),
        (
            "sgd-momentum",
            "12 B per trainable parameter here (2 bf16 params + 2 bf16 grads + 4 "
            "fp32 master weights + 4 sgd-momentum states)",
        ),
        (
            "sgd",
            "8 B per trainable parameter here (2 bf16 params + 2 bf16 grads + 4 fp32 master "
            "weights)",
        ),
    ],
)
def test_table_caption_gives_the_bytes_per_parameter_of_the_optimizer_chosen(
    capsys: pytest.CaptureFixture[str], optimizer: str, used: str
) -> None:
    assert main(["calc", "ledger", "--params", "1B", "--optimizer", optimizer]) == 0
    out = " ".join(capsys.readouterr().out.split())  # the table wraps at 80 columns
    assert used in out
    # The convention's 16 B/param is its sources' case, said as such, never this one's total.
    assert "convention zero-paper: with mixed-precision Adam 16 B/param" in out


@pytest.mark.parametrize(
    ("flags", "flag"),
    [
        (["--params", "1B", "--zero", "4"], "--zero"),
        (["--params=-1B"], "--params"),
        (["--params", "nan"], "--params"),
        (["--params", "0"], "--params"),
        (["--params", "1B", "--dp", "0"], "--dp"),
        (["--params", "1B", "--tp", "3", "--heads", "16"], "--tp"),
        (["--params", "1B", "--dtype", "fp8"], "--dtype"),
        (["--params", "1B", "--optimizer", "lion"], "--optimizer"),
        (["--params", "1B", "--convention", "x"], "--convention"),
        (["--params", "1B", "--recompute", "full"], "--seq"),
        (["--params", "1B", "--seq", "1024"], "--layers"),
        (["--params", "1B", "--gpu-memory", "80XB"], "--gpu-memory"),
        (["--params", "1B", "--micro-batch", "1.5"], "--micro-batch"),
        (["--params", "1B", "--experts", "8"], "--experts"),
        (["--layers", "4"], "--params"),
    ],
)
def test_bad_input_is_one_line_naming_the_flag(
    capsys: pytest.CaptureFixture[str], flags: list[str], flag: str
) -> None:
    assert main(["calc", "ledger", *flags]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1
    assert flag in lines[0]
    assert "Traceback" not in err


def test_under_one_parameter_is_refused_as_a_missing_suffix(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """``--params 0.5`` priced half a parameter (0.000 GB); a learner meant 0.5B."""
    assert main(["calc", "ledger", "--params", "0.5"]) == 2
    assert capsys.readouterr().err.strip() == (
        "shardbook: calc ledger: --params: '0.5' is less than one parameter; was the suffix "
        "left out? (0.5B = 0.5e9 parameters)"
    )
    assert main(["calc", "ledger", "--params", "1", "--json"]) == 0


def test_a_fraction_of_a_parameter_is_refused_a_fraction_with_a_unit_is_not(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """``--params 1.5`` priced 1.5 parameters (``N = 1.5 (2)``); a count is whole once its unit
    is applied: 1.5B = 1,500,000,000, 7.5K = 7,500, 1.1B = 1,100,000,000 despite float noise."""
    assert main(["calc", "ledger", "--params", "1.5"]) == 2
    assert capsys.readouterr().err.strip() == (
        "shardbook: calc ledger: --params: '1.5' is not a whole number of parameters; a count "
        "with a unit may have decimals (1.5B = 1,500,000,000)"
    )
    for text, count in (("1.5B", 1_500_000_000), ("7.5K", 7_500), ("1.1B", 1_100_000_000)):
        assert _json(capsys, "--params", text)["params_total"] == count


@pytest.mark.parametrize("flag", ["--seq", "--layers", "--micro-batch"])
def test_a_huge_count_is_quoted_as_typed(capsys: pytest.CaptureFixture[str], flag: str) -> None:
    """1e300 is past every count's bound of 1e12: quoted as typed, not as the 301 digits of
    the whole number it stands for."""
    assert main(["calc", "ledger", "--model", "llama2-7b", flag, "1e300"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.endswith(f"{flag}: must be at most 1,000,000,000,000, got 1e300")


@pytest.mark.parametrize(
    ("flag", "typed"),
    [("--params", "1e40"), ("--largest-layer-params", "1e30")],
)
def test_a_huge_number_is_quoted_as_typed(
    capsys: pytest.CaptureFixture[str], flag: str, typed: str
) -> None:
    """Past the bound of 1e24 on a parameter count or a size: quoted as typed, not as the
    float (1e+40)."""
    assert main(["calc", "ledger", "--params", "7B", flag, typed]) == 2
    err = capsys.readouterr().err.strip()
    assert err.endswith(f"{flag}: must be at most 1e+24, got {typed}")


@pytest.mark.parametrize(("typed", "got"), [("1e308", "1e308 bytes"), ("2e15GB", "2e15GB")])
def test_a_huge_gpu_memory_is_refused_in_its_unit(
    capsys: pytest.CaptureFixture[str], typed: str, got: str
) -> None:
    """The bound of 1e24 bytes in GB (1e9 bytes: 1e15) and GiB (2^30 bytes: 9.313e14), the
    value quoted as typed, a bare number said to be bytes."""
    assert main(["calc", "ledger", "--params", "7B", "--gpu-memory", typed]) == 2
    err = capsys.readouterr().err.strip()
    assert err.endswith(f"--gpu-memory: must be at most 1e+15 GB (9.313e+14 GiB), got {got}")


def test_missing_value_is_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        main(["calc", "ledger", "--params"])
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "--params" in err


def test_entry_point_subprocess() -> None:
    exe = shutil.which("shardbook") or str(Path(sys.executable).parent / "shardbook")
    done = subprocess.run(
        [exe, "calc", "ledger", "--params", "7.5B", "--dp", "64", "--zero", "3", "--json"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert json.loads(done.stdout)["model_states_bytes"] == pytest.approx(1.875e9)
    bad = subprocess.run(
        [exe, "calc", "ledger", "--params", "7.5B", "--zero", "4"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert bad.returncode == 2
    assert bad.stderr.count("\n") == 1 and "--zero" in bad.stderr


def test_clearer_flag_names_are_aliases(capsys: pytest.CaptureFixture[str]) -> None:
    arch = ["--params", "7B", "--layers", "32", "--hidden", "4096", "--heads", "32"]
    old = calc_json(capsys, "ledger", *arch, "--seq", "2048", "--micro-batch", "2", "--zero", "3")
    new = calc_json(
        capsys, "ledger", *arch, "--seq", "2048", "--micro-batch-size", "2", "--zero-stage", "3"
    )
    assert old == new and old["per_rank_bytes"]["activations"] > 0


@pytest.mark.parametrize(
    "flag",
    [
        "--seq",
        "--nodes",
        "--gpu-memory",
        "--micro-batches",
        "--gpus-per-node",
        "--largest-layer-params",
        "--dp",
    ],
)
def test_a_numeric_flag_given_empty_is_refused(
    capsys: pytest.CaptureFixture[str], flag: str
) -> None:
    """`--seq ''` (a shell variable left unset) was taken as not given; --dp said so."""
    assert main(["calc", "ledger", "--params", "1B", flag, ""]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err == f"shardbook: calc ledger: {flag}: is empty; enter a number\n"


def test_the_deepspeed_largest_layer_note_names_the_flag(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """DeepSpeed's ZeRO-3 estimator adds 4 B x largest_layer_params (its estimate_zero3_model_
    states_mem_needs); without it the term is 0 and the table says which flag gives it."""
    assert (
        main(["calc", "ledger", "--params", "1B", "--zero", "3", "--convention", "deepspeed"]) == 0
    )
    text = " ".join(capsys.readouterr().out.split())
    assert (
        "DeepSpeed ZeRO-3: --largest-layer-params not given, its 4·largest_layer term is 0" in text
    )
    assert "largest_layer_params not given" not in text


def test_the_activations_line_names_the_flags_to_give(capsys: pytest.CaptureFixture[str]) -> None:
    """Without --seq the activations are not computed (Korthikanti et al. 2022 Table 2 needs s,
    and the shape); the formulas' line says which flags give them, as the line above it does."""
    assert main(["calc", "ledger", "--params", "1B"]) == 0
    text = " ".join(capsys.readouterr().out.split())
    assert (
        "activations: not computed: give --seq (and --layers, --hidden, --heads) to compute "
        "activations" in text
    )
    # The JSON keeps the engine's words, as the app shows them.
    data = calc_json(capsys, "ledger", "--params", "1B")
    (term,) = [t for t in data["terms"] if t["name"] == "activations"]
    assert term["formula"].startswith("not computed: give seq (and layers, hidden, heads)")


@pytest.mark.parametrize(
    ("flags", "flag"),
    [
        (["--lora-rank", "16"], "--lora-rank"),
        (["--lora-targets", "q,v"], "--lora-targets"),
        (["--finetune", "full", "--lora-rank", "16", "--lora-targets", "q,v"], "--lora-rank"),
    ],
)
def test_a_lora_flag_without_lora_is_refused_not_ignored(
    capsys: pytest.CaptureFixture[str], flags: list[str], flag: str
) -> None:
    """The rank and the targets size LoRA's adapters (Hu et al. 2021, arXiv:2106.09685); full
    fine-tuning has none, so computing it with them given would show full fine-tuning's figures
    as if they were LoRA's. Refused as every bad input is: one line naming the flag, exit 2."""
    assert main(["calc", "ledger", "--model", "llama2-7b", *flags]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == (
        f"shardbook: calc ledger: {flag}: applies to --finetune lora or qlora only\n"
    )


@pytest.mark.parametrize(
    ("flags", "trainable"),
    [
        # PEFT's LoRA on Llama 2 7B's q and v (the default targets): r × (4096 + 4096) per
        # projection, 2 projections, 32 layers = r × 524,288; r = 8 (the default) is PEFT's
        # "trainable params: 4,194,304".
        (["--finetune", "lora"], 4_194_304),
        (["--finetune", "lora", "--lora-rank", "16"], 8_388_608),
        (["--finetune", "qlora", "--lora-rank", "16", "--lora-targets", "q,v"], 8_388_608),
    ],
)
def test_the_lora_flags_size_the_adapters_with_lora_or_qlora(
    capsys: pytest.CaptureFixture[str], flags: list[str], trainable: int
) -> None:
    data = _json(capsys, "--model", "llama2-7b", *flags)
    assert data["trainable_params"] == trainable


@pytest.mark.parametrize(
    ("nodes", "per_node", "layout"),
    [("1", "8", "1 node × 8 GPUs per node"), ("2", "1", "2 nodes × 1 GPU per node")],
)
def test_a_node_layout_off_the_world_size_counts_one_in_the_singular(
    capsys: pytest.CaptureFixture[str], nodes: str, per_node: str, layout: str
) -> None:
    """DP 16 is 16 ranks: 1 node of 8 or 2 nodes of 1 GPU do not hold them."""
    argv = ["calc", "ledger", "--params", "7e9", "--dp", "16", "--nodes", nodes]
    assert main([*argv, "--gpus-per-node", per_node]) == 2
    err = capsys.readouterr().err
    assert err == f"shardbook: calc ledger: --nodes: {layout} is not the world size 16\n"


@pytest.mark.parametrize(("typed", "shown"), [("7\tB", "7\\tB"), ("7\nB", "7\\nB")])
def test_a_tab_or_newline_inside_a_number_is_refused(
    capsys: pytest.CaptureFixture[str], typed: str, shown: str
) -> None:
    """They exited 0 as 7B (an escape inside was refused): one line naming the flag, exit 2."""
    assert main(["calc", "ledger", "--params", typed]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err.startswith(f"shardbook: calc ledger: --params: '{shown}' holds a control character")
    assert err.count("\n") == 1


def test_deepspeeds_host_formulas_count_one_gpu_and_one_node_in_the_singular(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """One rank: "× 1 GPUs per node" and "/ 1 nodes" read wrong."""
    base = ["calc", "ledger", "--params", "7B", "--convention", "deepspeed", "--zero", "3"]
    assert main([*base, "--offload", "optimizer+params", "--no-zero-init"]) == 0
    text = " ".join(capsys.readouterr().out.split())
    assert "max(4 × 1 GPU per node, 18 / 1 node) × 1.5" in text
    assert main([*base, "--offload", "optimizer+params"]) == 0
    assert "Ψ 7,000,000,000 × 18 / 1 node × 1.5" in " ".join(capsys.readouterr().out.split())
    assert main([*base[:-1], "2", "--offload", "optimizer"]) == 0
    assert "max(4 × 1 GPU, 16) × 1.5" in " ".join(capsys.readouterr().out.split())
