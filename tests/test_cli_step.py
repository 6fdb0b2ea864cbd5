"""``shardbook calc step`` and ``calc scaling`` through ``cli.main.main``: their flags and JSON
keys, values from Narayanan et al. 2021 Eq. 4, one-line errors."""

from __future__ import annotations

from typing import Any

import pytest

from cli.main import main
from tests.cli_helpers import calc_json

KEYS = {
    "t_compute_s",
    "t_comm_s",
    "t_comm_unhidden_s",
    "t_comm_exposed_s",
    "t_input_s",
    "t_sync_wait_s",
    "t_step_s",
    "tokens_per_s",
    "mfu",
    "model_flops_per_step",
    "comm",
}
ARCH = ["--layers", "24", "--hidden", "2048", "--heads", "16", "--vocab", "50304"]


def _json(capsys: pytest.CaptureFixture[str], command: str, *args: str) -> dict[str, Any]:
    return calc_json(capsys, command, *args)


def test_step_json_keys(capsys: pytest.CaptureFixture[str]) -> None:
    data = _json(
        capsys,
        "step",
        *ARCH,
        "--gpus",
        "16",
        "--tp",
        "2",
        "--pp",
        "2",
        "--global-batch",
        "64",
        "--interconnect",
        "100gbps",
    )
    assert set(data) == KEYS
    assert {c["name"] for c in data["comm"]} == {"DP gradients", "TP activations", "PP activations"}
    for entry in data["comm"]:
        assert set(entry) == {"name", "op", "bytes", "time_s", "hidden_share"}
        assert 0 <= entry["hidden_share"] <= 1
    parts = ("t_compute_s", "t_comm_exposed_s", "t_input_s", "t_sync_wait_s")
    assert data["t_step_s"] == pytest.approx(sum(data[k] for k in parts))
    # The older name of the exposed communication time stays for scripts.
    assert data["t_comm_unhidden_s"] == data["t_comm_exposed_s"]


def test_time_to_train_gpt3(capsys: pytest.CaptureFixture[str]) -> None:
    """Narayanan et al. 2021 §5.1 Eq. 4: GPT-3 175B, 300B tokens, 1024 GPUs at 140 TFLOP/s,
    full recomputation: 8·T·P/(n·X) = 34 days."""
    data = _json(
        capsys,
        "step",
        "--params",
        "175B",
        "--gpus",
        "1024",
        "--achieved-flops",
        "140e12",
        "--recompute",
        "full",
        "--tokens",
        "300B",
        "--seq",
        "2048",
    )
    assert data["time_to_train_s"] == pytest.approx(8 * 300e9 * 175e9 / (1024 * 140e12))
    assert data["time_to_train_s"] / 86400 == pytest.approx(33.9, abs=0.05)
    without = _json(
        capsys,
        "step",
        "--params",
        "175B",
        "--gpus",
        "1024",
        "--achieved-flops",
        "140e12",
        "--tokens",
        "300B",
    )
    assert without["time_to_train_s"] == pytest.approx(0.75 * data["time_to_train_s"])


def test_custom_links_slow_the_step(capsys: pytest.CaptureFixture[str]) -> None:
    fast = _json(
        capsys,
        "step",
        *ARCH,
        "--tp",
        "8",
        "--gpus-per-node",
        "4",
        "--inter-bandwidth",
        "400Gb/s",
        "--latency",
        "5us",
    )
    slow = _json(
        capsys,
        "step",
        *ARCH,
        "--tp",
        "8",
        "--gpus-per-node",
        "4",
        "--inter-bandwidth",
        "100Gb/s",
        "--latency",
        "5us",
    )
    assert slow["t_step_s"] > fast["t_step_s"]
    inside = _json(capsys, "step", *ARCH, "--tp", "8", "--inter-bandwidth", "100Gb/s")
    assert inside["t_step_s"] < slow["t_step_s"]


def test_readable_report(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["calc", "step", *ARCH, "--dp", "8", "--global-batch", "64"]) == 0
    out = capsys.readouterr().out
    assert "T_step" in out and "assumption" in out and "Korthikanti" in out


def test_scaling_json(capsys: pytest.CaptureFixture[str]) -> None:
    data = _json(
        capsys,
        "scaling",
        *ARCH,
        "--global-batch",
        "64",
        "--strategy",
        "dp",
        "--strategy",
        "tp",
        "--max-gpus",
        "32",
        "--interconnect",
        "100gbps",
    )
    assert data["world_sizes"] == [1, 2, 4, 8, 16, 32]
    assert [s["strategy"] for s in data["series"]] == ["dp", "tp"]
    tp = data["series"][1]["points"]
    assert tp[0]["efficiency"] == pytest.approx(1.0)
    assert all(p["efficiency"] < 1 for p in tp[1:5])
    assert tp[5]["skipped"].startswith("tp")


@pytest.mark.parametrize(
    ("args", "flag"),
    [
        (["step", "--params", "abc"], "--params"),
        (["step", "--params", "1e9", "--mfu", "2"], "--compute-utilization"),
        (["step", *ARCH, "--tp", "3"], "--tp"),
        (["step", "--params", "1e9", "--interconnect", "warp"], "--interconnect"),
        (["step", "--params", "1e9", "--interconnect", "pcie", "--latency", "1us"], "--latency"),
        (["step", "--params", "1e9", "--inter-bandwidth", "fast"], "--inter-bandwidth"),
        (["step", "--params", "1e9", "--recompute", "half"], "--recompute"),
        (["step", "--params", "1e9", "--gpus", "3", "--dp", "2"], "--gpus"),
        (["scaling", "--params", "1e9", "--mode", "sideways"], "--mode"),
        (["scaling", "--params", "1e9", "--strategy", "magic"], "--strategy"),
    ],
)
def test_errors_exit_2_with_one_line_naming_the_flag(
    capsys: pytest.CaptureFixture[str], args: list[str], flag: str
) -> None:
    assert main(["calc", *args]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and flag in err and "Traceback" not in err


def test_clearer_flag_names_are_aliases(capsys: pytest.CaptureFixture[str]) -> None:
    # Scripts keep --mfu, --micro-batch and --zero; the clearer names set the same fields.
    common = ["step", *ARCH, "--gpus", "8", "--global-batch", "64"]
    old = _json(capsys, *common, "--mfu", "0.4", "--micro-batch", "2", "--zero", "3")
    new = _json(
        capsys,
        *common,
        "--compute-utilization",
        "0.4",
        "--micro-batch-size",
        "2",
        "--zero-stage",
        "3",
    )
    assert old == new
    default = _json(capsys, *common)
    assert default["t_step_s"] != old["t_step_s"]


@pytest.mark.parametrize(("flag", "typed"), [("--params", "1e40"), ("--tokens", "1e300")])
def test_a_huge_count_is_quoted_as_typed(
    capsys: pytest.CaptureFixture[str], flag: str, typed: str
) -> None:
    """Past the bound of 1e24 on a count: quoted as typed, not as the float (1e+300)."""
    args = ["calc", "step", "--params", "7B", "--layers", "32", "--hidden", "4096"]
    args += ["--seq", "2048", "--global-batch", "8", "--gpus", "8", flag, typed]
    assert main(args) == 2
    assert capsys.readouterr().err.strip().endswith(f"{flag}: must be at most 1e+24, got {typed}")


@pytest.mark.parametrize(
    ("flag", "typed", "message"),
    [
        # A latency per message of a second or more is a typing error: 1 s, and 10 typed is 10 s.
        ("--latency", "10", "must be at most 1 s, got 10 s"),
        ("--latency", "2000ms", "must be at most 1 s, got 2 s"),
        # 1e24 bytes/s is 1e15 GB/s (GB = 1e9 bytes); 2e15GB/s is 2e24 bytes/s.
        ("--inter-bandwidth", "2e15GB/s", "must be at most 1e+15 GB/s, got 2e+15 GB/s"),
        ("--peak-flops", "2e18", "must be at most 1e+18 FLOP/s, got 2e+18 FLOP/s"),
    ],
)
def test_a_figure_past_its_bound_is_refused_in_its_unit(
    capsys: pytest.CaptureFixture[str], flag: str, typed: str, message: str
) -> None:
    args = ["calc", "step", "--params", "7B", "--layers", "32", "--hidden", "4096"]
    args += ["--seq", "2048", "--global-batch", "8", "--gpus", "8", flag, typed]
    assert main(args) == 2
    assert capsys.readouterr().err.strip().endswith(f"{flag}: {message}")


def test_scaling_skips_name_the_flags_and_the_fixed_batch_is_said_once(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Without --global-batch strong scaling keeps one micro-batch (1 sample), which DP cannot
    split over 2, 4 or 8 GPUs; without --layers and --hidden TP has no communication to price.
    The reasons name the flags the learner can set (README: errors name the flag)."""
    argv = ["calc", "scaling", "--params", "1.3B", "--max-gpus", "8"]
    assert main([*argv, "--strategy", "dp", "--strategy", "tp"]) == 0
    out, err = capsys.readouterr()
    text = " ".join(out.split())
    assert "skipped: --global-batch: 1 is not a multiple of micro-batch × DP = 2" in text
    assert "skipped: --layers: TP communication needs the architecture (--layers, --hidden)" in text
    assert "global_batch" not in text and "layers:" not in text.replace("--layers:", "")
    assert err == (
        "shardbook: calc scaling: note: strong scaling keeps the global batch fixed, and without "
        "--global-batch it is one micro-batch (--micro-batch 1): DP cannot split it over more "
        "GPUs, so every n > 1 of dp is skipped. Set --global-batch to a multiple of 8 "
        "(micro-batch × the largest n), e.g. --global-batch 8\n"
    )
    # The note's advice works: 8 samples split over 1, 2, 4 and 8 GPUs; nothing noted.
    assert main([*argv, "--strategy", "dp", "--global-batch", "8"]) == 0
    out, err = capsys.readouterr()
    assert err == "" and "skipped" not in out
    # Weak scaling grows the batch with n: nothing to note.
    assert main([*argv, "--strategy", "dp", "--mode", "weak"]) == 0
    assert capsys.readouterr().err == ""


STEP = ["calc", "step", "--params", "7B", "--layers", "32", "--hidden", "4096", "--heads", "32"]
STEP += ["--seq", "2048", "--global-batch", "16", "--gpus", "16"]


def test_a_custom_link_figure_with_its_unit_left_out_is_refused_or_noted(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """`--inter-bandwidth 2.5` was 2.5 bytes per second: a step of 1e10 s. As on calc collective,
    a bare rate below 1 MB/s is refused, a plausible bare one noted, and a size is no rate."""
    assert main([*STEP, "--inter-bandwidth", "2.5"]) == 2
    assert capsys.readouterr().err.startswith(
        "shardbook: calc step: --inter-bandwidth: '2.5' is 2.5 bytes per second, slower than any "
        "link; was the unit left out?"
    )
    assert main([*STEP, "--inter-bandwidth", "400Gb"]) == 2
    assert capsys.readouterr().err.startswith(
        "shardbook: calc step: --inter-bandwidth: '400Gb' is a size, not a rate; add /s"
    )
    assert main([*STEP, "--intra-bandwidth", "1e11", "--latency", "0.5", "--json"]) == 0
    assert capsys.readouterr().err.splitlines() == [
        "shardbook: calc step: note: --intra-bandwidth '1e11' has no unit: read as bytes per "
        "second, 100 GB/s",
        "shardbook: calc step: note: --latency '0.5' has no unit: read as seconds, 500 ms",
    ]


def test_an_empty_interconnect_is_refused_not_taken_as_the_default(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """`--interconnect ''` (a shell variable unset) silently priced the 400 Gb/s default."""
    assert main([*STEP, "--interconnect", ""]) == 2
    assert capsys.readouterr().err == (
        "shardbook: calc step: --interconnect: unknown interconnect ''; use one of nvlink, "
        "400gbps, pcie, 100gbps\n"
    )


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--gpus", "1", "--tp", "2"], "--gpus: 1 GPU is not a multiple of TP·PP·CP = 2"),
        (["--gpus", "1", "--dp", "2"], "--gpus: 1 GPU but DP·TP·PP·CP = 2"),
    ],
)
def test_one_gpu_is_named_in_the_singular(
    capsys: pytest.CaptureFixture[str], args: list[str], message: str
) -> None:
    assert main(["calc", "step", "--params", "1e9", *args]) == 2
    assert capsys.readouterr().err == f"shardbook: calc step: {message}\n"


def test_the_step_report_counts_one_micro_batch_and_one_gpu_per_node_in_the_singular(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """8 GPUs of DP, a global batch of 8 and micro-batches of 1: each replica runs 8 / 8 / 1 = 1
    micro-batch per step."""
    argv = ["calc", "step", "--params", "1e9", "--gpus", "8", "--global-batch", "8"]
    assert main([*argv, "--gpus-per-node", "1"]) == 0
    out = " ".join(capsys.readouterr().out.split())  # the table's lines wrap at its width
    assert "ZeRO 0); m = 1 micro-batch; " in out
    assert ", 1 GPU per node " in out


@pytest.mark.parametrize("flag", ["--capacity-factor", "--hot-expert-share"])
def test_an_expert_load_flag_for_a_dense_model_is_refused_not_ignored(
    capsys: pytest.CaptureFixture[str], flag: str
) -> None:
    """The capacity factor and the hottest expert's share set only the MoE imbalance wait
    (Fedus et al. 2021, Switch Transformer §2.2): Llama 2 7B has no routed experts."""
    assert main(["calc", "step", "--model", "llama2-7b", "--gpus", "8", flag, "0.5"]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == (
        f"shardbook: calc step: {flag}: applies to a mixture of experts only (--experts above 1)\n"
    )


def test_the_capacity_factor_caps_the_hottest_experts_load(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Mixtral 8x7B (8 experts) with one expert taking half the tokens: 4x the mean load. A
    capacity factor of 1 drops the excess (the load is capped at the mean: no rank waits); 2
    lets it run at twice the mean, and the step waits for it."""
    common = ["--model", "mixtral-8x7b", "--gpus", "8", "--ep", "8", "--hot-expert-share", "0.5"]
    capped = _json(capsys, "step", *common, "--capacity-factor", "1")
    assert capped["t_sync_wait_s"] == 0
    assert _json(capsys, "step", *common, "--capacity-factor", "2")["t_sync_wait_s"] > 0


def test_one_gpu_says_there_is_no_communication(capsys: pytest.CaptureFixture[str]) -> None:
    """A "communication:" heading with nothing under it read as a list gone missing."""
    argv = ["calc", "step", "--params", "1e9", "--gpus", "1", "--global-batch", "8"]
    assert main(argv) == 0
    lines = capsys.readouterr().out.splitlines()
    assert "communication: none" in lines and "communication:" not in lines
    assert main(["calc", "step", "--params", "1e9", "--gpus", "8", "--global-batch", "8"]) == 0
    lines = capsys.readouterr().out.splitlines()
    heading = lines.index("communication:")
    assert lines[heading + 1].startswith("  ")  # the DP gradient all-reduce under it
