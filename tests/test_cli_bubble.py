"""``shardbook calc bubble`` through ``cli.main.main``: its flags and JSON keys, the papers' values
(GPipe, Huang et al. 2019; Narayanan et al. 2021 §2.2; Qi et al. 2023 Table 2), and
one-line errors naming the flag."""

from __future__ import annotations

import json
from typing import Any

import pytest

from cli.main import main
from tests.cli_helpers import calc_json

KEYS = {
    "bubble_time",
    "bubble_over_ideal",
    "bubble_fraction",
    "makespan",
    "ideal_time",
    "micro_batches",
    "peak_in_flight_microbatches",
    "closed_form",
}


def _json(capsys: pytest.CaptureFixture[str], *args: str) -> dict[str, Any]:
    return calc_json(capsys, "bubble", *args)


def test_json_keys_and_p4_m8_values(capsys: pytest.CaptureFixture[str]) -> None:
    data = _json(capsys, "--schedule", "1f1b", "--stages", "4", "--micro-batches", "8")
    assert set(data) == KEYS
    assert set(data["closed_form"]) == {"formula", "value", "source"}
    assert data["bubble_over_ideal"] == pytest.approx(0.375)
    assert data["bubble_fraction"] == pytest.approx(3 / 11)
    assert data["bubble_time"] == [9.0] * 4
    assert data["makespan"] == 33.0
    assert data["ideal_time"] == 24.0
    assert data["micro_batches"] == 8
    assert data["peak_in_flight_microbatches"] == [4, 3, 2, 1]
    assert data["closed_form"]["value"] == pytest.approx(0.375)
    assert "Narayanan" in data["closed_form"]["source"]


def test_json_timeline_only_with_flag(capsys: pytest.CaptureFixture[str]) -> None:
    data = _json(
        capsys, "--schedule", "zb-h1", "--stages", "2", "--micro-batches", "2", "--timeline"
    )
    assert set(data) == KEYS | {"timeline"}
    assert len(data["timeline"]) == 2
    first = data["timeline"][0][0]
    assert first == {"kind": "F", "micro_batch": 0, "chunk": 0, "start": 0.0, "end": 1.0}
    assert sorted(op["kind"] for op in data["timeline"][1]) == ["B", "B", "F", "F", "W", "W"]


def test_interleaved_and_p4_m16(capsys: pytest.CaptureFixture[str]) -> None:
    data = _json(
        capsys,
        "--schedule",
        "interleaved-1f1b",
        "--stages",
        "4",
        "--micro-batches",
        "8",
        "--virtual-stages",
        "2",
    )
    assert data["bubble_over_ideal"] == pytest.approx(0.1875)
    data = _json(capsys, "--schedule", "gpipe", "--stages", "4", "--micro-batches", "16")
    assert data["bubble_over_ideal"] == pytest.approx(0.1875)
    assert data["bubble_fraction"] == pytest.approx(3 / 19)
    assert data["peak_in_flight_microbatches"] == [16] * 4


@pytest.mark.parametrize(
    ("schedule", "bubble", "peak"), [("1f1b", 21, 8), ("zb-h1", 7, 8), ("zb-h2", 0, 15)]
)
def test_zero_bubble_table2(
    capsys: pytest.CaptureFixture[str], schedule: str, bubble: int, peak: int
) -> None:
    data = _json(
        capsys,
        "--schedule",
        schedule,
        "--stages",
        "8",
        "--micro-batches",
        "24",
        "--t-forward",
        "1",
        "--t-backward-input",
        "1",
        "--t-backward-weight",
        "1",
    )
    assert data["bubble_time"] == pytest.approx([bubble] * 8)
    assert max(data["peak_in_flight_microbatches"]) == peak


def test_micro_batches_from_global_batch(capsys: pytest.CaptureFixture[str]) -> None:
    data = _json(
        capsys,
        "--schedule",
        "1f1b",
        "--stages",
        "4",
        "--global-batch",
        "256",
        "--micro-batch-size",
        "4",
        "--dp",
        "8",
    )
    assert data["micro_batches"] == 8
    assert data["bubble_over_ideal"] == pytest.approx(0.375)


def test_readable_report_names_both_conventions(capsys: pytest.CaptureFixture[str]) -> None:
    assert (
        main(["calc", "bubble", "--schedule", "gpipe", "--stages", "4", "--micro-batches", "8"])
        == 0
    )
    out = capsys.readouterr().out
    assert "bubble/ideal 0.375 " in out
    assert "bubble/total 0.2727" in out
    assert "Huang et al. 2019" in out and "Narayanan et al. 2021" in out
    assert "stage 0" not in out


def test_the_interleaved_report_says_its_peak_counts_chunks(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Interleaved 1F1B, p=4, m=8, v=2: stage 0 runs 2(p-1) + (v-1)p = 10 chunk forwards before
    its steady state, and one more before its first backward (Megatron-LM's interleaved
    schedule, Narayanan et al. 2021 section 2.2.2): 11 chunks of 1/2 of a micro-batch, printed
    as 5.5. The report says so; a plain 1F1B report counts micro-batches and needs no note."""
    args = ["calc", "bubble", "--stages", "4", "--micro-batches", "8"]
    assert main([*args, "--schedule", "interleaved-1f1b", "--virtual-stages", "2"]) == 0
    out = capsys.readouterr().out
    assert "peak micro-batches in flight per stage: 5.5 4.5 3.5 2.5" in out
    assert "11 chunks = 5.5 micro-batches' worth" in out
    assert main([*args, "--schedule", "1f1b"]) == 0
    assert "chunks" not in capsys.readouterr().out


def test_timeline_without_json_prints_ascii(capsys: pytest.CaptureFixture[str]) -> None:
    args = ["calc", "bubble", "--schedule", "gpipe", "--stages", "8", "--micro-batches", "32"]
    assert main([*args, "--timeline"]) == 0
    out = capsys.readouterr().out
    rows = [line for line in out.splitlines() if line.startswith("stage ")]
    assert len(rows) == 8 and all(row.isascii() for row in rows)
    # GPipe p=8, m=32, t_F = 1, t_B + t_W = 2: makespan (m+p-1) x 3 = 117 time units, wider than
    # an 80-column terminal: drawn at one column per unit (F 1 column, B 2), never squeezed.
    assert {len(row) for row in rows} == {len("stage 7 ") + 117}
    assert "F fwd 1 col, B bwd+W 2 col" in out


@pytest.mark.parametrize(
    ("args", "flag"),
    [
        ("--stages 4 --micro-batches 8", "--schedule"),
        ("--schedule pipedream --stages 4 --micro-batches 8", "--schedule"),
        ("--schedule 1f1b --micro-batches 8", "--stages"),
        ("--schedule 1f1b --stages 0 --micro-batches 8", "--stages"),
        ("--schedule 1f1b --stages -3 --micro-batches 8", "--stages"),
        ("--schedule 1f1b --stages 4", "--micro-batches"),
        ("--schedule 1f1b --stages 4 --micro-batches 0", "--micro-batches"),
        ("--schedule 1f1b --stages 4 --micro-batches 2.5", "--micro-batches"),
        ("--schedule 1f1b --stages 4 --micro-batches nan", "--micro-batches"),
        ("--schedule 1f1b --stages 4 --micro-batches 1e400", "--micro-batches"),
        ("--schedule interleaved-1f1b --stages 4 --micro-batches 10", "--micro-batches"),
        ("--schedule 1f1b --stages 4 --micro-batches 8 --virtual-stages 0", "--virtual-stages"),
        ("--schedule gpipe --stages 4 --micro-batches 8 --virtual-stages x", "--virtual-stages"),
        ("--schedule 1f1b --stages 4 --micro-batches 8 --t-forward -1", "--t-forward"),
        ("--schedule 1f1b --stages 4 --micro-batches 8 --t-forward 0", "--t-forward"),
        (
            "--schedule zb-h1 --stages 4 --micro-batches 8 --t-backward-input inf",
            "--t-backward-input",
        ),
        (
            "--schedule zb-h1 --stages 4 --micro-batches 8 --t-backward-weight x",
            "--t-backward-weight",
        ),
        ("--schedule 1f1b --stages 4 --micro-batches 8 --p2p-time -0.1", "--p2p-time"),
        (
            "--schedule 1f1b --stages 4 --global-batch 100 --micro-batch-size 3 --dp 2",
            "--global-batch",
        ),
        ("--schedule 1f1b --stages 4 --global-batch 64", "--micro-batch-size"),
        ("--schedule 1f1b --stages 4 --global-batch 64 --micro-batch-size 2 --dp 0", "--dp"),
        (
            "--schedule 1f1b --stages 4 --micro-batches 8 --global-batch 64 --micro-batch-size 2",
            "--global-batch",
        ),
        ("--schedule gpipe --stages 64 --micro-batches 1e6", "--micro-batches"),
    ],
)
def test_errors_exit_2_with_one_line_naming_the_flag(
    capsys: pytest.CaptureFixture[str], args: str, flag: str
) -> None:
    assert main(["calc", "bubble", *args.split()]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1
    assert flag in lines[0]
    assert "Traceback" not in captured.err


@pytest.mark.parametrize(
    "flag", ["--t-forward", "--t-backward-input", "--t-backward-weight", "--p2p-time"]
)
def test_an_op_time_that_overflows_is_refused_quoting_it(
    capsys: pytest.CaptureFixture[str], flag: str
) -> None:
    """1e308 is a float, but a makespan of 11 such ops is not (GPipe p=4, m=8): the flag is
    refused as typed, with no numpy warning and no nan or inf printed."""
    args = ["--schedule", "gpipe", "--stages", "4", "--micro-batches", "8", flag, "1e308"]
    assert main(["calc", "bubble", *args]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.strip().endswith(f"{flag}: must be at most 1e+24, got 1e308")
    assert "Warning" not in captured.err


def test_more_stages_than_the_simulator_runs_is_refused_on_stages(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """2·p·m = 40,000 ops is far under the op limit (2,097,152), but the work that grows with p
    alone is bounded too (at most 16,384 stages): refused up front, naming --stages."""
    args = ["--schedule", "1f1b", "--stages", "20000", "--micro-batches", "1"]
    assert main(["calc", "bubble", *args]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.strip() == (
        "shardbook: calc bubble: --stages: p = 20,000 stages is more than this simulator runs "
        "(16,384): its work grows with p (warm-up, cool-down, each stage's ops); lower p"
    )


def test_a_virtual_stage_count_other_schedules_do_not_use_is_said_not_refused(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """v splits a stage into chunks only in interleaved 1F1B (Narayanan et al. 2021 §2.2.2), as
    the Bubble pane's v field: GPipe with v = 2 runs as v = 1, with a note saying so. GPipe at
    p = 4, m = 8: bubble/ideal (p-1)/m = 3/8 = 0.375 (Huang et al. 2019)."""
    args = ["calc", "bubble", "--schedule", "gpipe", "--stages", "4", "--micro-batches", "8"]
    assert main([*args, "--virtual-stages", "2"]) == 0
    out = capsys.readouterr().out
    note = "note: v = 2 is not used by gpipe: only interleaved-1f1b splits a stage into chunks"
    assert out.splitlines()[0] == note
    assert "bubble/ideal 0.375" in out
    assert main([*args, "--virtual-stages", "2", "--json"]) == 0
    captured = capsys.readouterr()
    assert captured.err.strip() == note  # stdout stays one JSON object
    assert json.loads(captured.out)["bubble_over_ideal"] == 0.375


def test_interleaved_error_says_why(capsys: pytest.CaptureFixture[str]) -> None:
    args = ["--schedule", "interleaved-1f1b", "--stages", "4", "--micro-batches", "10"]
    assert main(["calc", "bubble", *args, "--virtual-stages", "2"]) == 2
    assert "Interleaved 1F1B needs m to be a multiple of p" in capsys.readouterr().err


@pytest.mark.parametrize(
    "args",
    [
        "--schedule foo",
        "--schedule foo --stages 4",
        "--schedule 1F1B --stages 4 --micro-batches 8",
    ],
)
def test_an_unknown_schedule_is_named_before_a_missing_flag(
    capsys: pytest.CaptureFixture[str], args: str
) -> None:
    assert main(["calc", "bubble", *args.split()]) == 2
    captured = capsys.readouterr()
    lines = captured.err.strip().splitlines()
    assert captured.out == "" and len(lines) == 1
    assert f"--schedule: {args.split()[1]!r} is not one of" in lines[0]
    assert "gpipe, 1f1b, interleaved-1f1b, zb-h1, zb-h2" in lines[0]


@pytest.mark.parametrize(
    ("args", "shape"),
    [
        ("--schedule 1f1b --stages 4 --micro-batches 1", "p=4 stages, m=1 micro-batch"),
        ("--schedule gpipe --stages 1 --micro-batches 8", "p=1 stage, m=8 micro-batches"),
        (
            "--schedule interleaved-1f1b --stages 1 --micro-batches 1 --virtual-stages 2",
            "p=1 stage, m=1 micro-batch, v=2 chunks per stage",
        ),
    ],
)
def test_a_count_of_one_reads_in_the_singular(
    capsys: pytest.CaptureFixture[str], args: str, shape: str
) -> None:
    assert main(["calc", "bubble", *args.split()]) == 0
    out = capsys.readouterr().out
    schedule = args.split()[1]
    assert out.splitlines()[0] == f"schedule {schedule}: {shape}"


def test_one_micro_batch_in_flight_in_chunks_reads_in_the_singular(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Interleaved 1F1B on one stage with v = 2 and one micro-batch: both chunks of it run
    forward before its backward (Narayanan et al. 2021 §2.2.2), so the peak is 2 chunks, 1
    micro-batch's worth, and nothing waits: bubble/ideal (p-1)/(m·v) = 0."""
    args = ["--schedule", "interleaved-1f1b", "--stages", "1", "--micro-batches", "1"]
    assert main(["calc", "bubble", *args, "--virtual-stages", "2"]) == 0
    out = capsys.readouterr().out
    assert "2 chunks = 1 micro-batch's worth (" in out
    assert "bubble/ideal 0 " in out


def test_help_explains_every_flag(capsys: pytest.CaptureFixture[str]) -> None:
    """--schedule had no help text: the only flag of calc bubble without one."""
    with pytest.raises(SystemExit):
        main(["calc", "bubble", "--help"])
    help_text = " ".join(capsys.readouterr().out.split())
    assert "{gpipe,1f1b,interleaved-1f1b,zb-h1,zb-h2} the pipeline schedule (required)" in help_text
