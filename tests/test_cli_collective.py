"""``shardbook calc collective`` and ``shardbook diagram`` through ``cli.main.main``.

Values: MPICH algorithm notes (Thakur, Rabenseifner, Gropp 2005; alpha = 5 us,
beta = 1/100e9 s/B, n = 1e9 B, p = 8: ring all-gather 8.785 ms, ring all-reduce 17.57 ms) and
NCCL-tests doc/PERFORMANCE.md (n = 8: all-reduce factor 1.75, all-gather 0.875).
"""

from __future__ import annotations

import json

import pytest

from cli.main import main
from engine.diagrams import STRATEGY_NAMES, strategy_diagram
from tests.cli_helpers import calc_json

KEYS = {
    "time_s",
    "bytes_sent_per_rank",
    "algbw_bytes_per_s",
    "busbw_bytes_per_s",
    "bus_bandwidth_factor",
    "steps",
    "algorithm",
}


def _json(capsys: pytest.CaptureFixture[str], *argv: str) -> dict[str, object]:
    return calc_json(capsys, "collective", *argv)


def test_ring_all_reduce_vector(capsys: pytest.CaptureFixture[str]) -> None:
    data = _json(
        capsys,
        "--op",
        "all-reduce",
        "--ranks",
        "8",
        "--bytes",
        "1GB",
        "--bandwidth",
        "100GB/s",
        "--latency",
        "5us",
    )
    assert set(data) >= KEYS
    assert data["time_s"] == pytest.approx(17.57e-3, rel=1e-12)
    assert data["bus_bandwidth_factor"] == pytest.approx(1.75)
    assert data["steps"] == 14
    assert data["algorithm"] == "ring"
    assert data["bytes_sent_per_rank"] == pytest.approx(1.75e9)
    assert data["algbw_bytes_per_s"] == pytest.approx(1e9 / 17.57e-3)
    assert data["busbw_bytes_per_s"] == pytest.approx(1e9 / 17.57e-3 * 1.75)


def test_ring_all_gather_vector_plain_numbers(capsys: pytest.CaptureFixture[str]) -> None:
    data = _json(
        capsys,
        "--op",
        "all-gather",
        "--ranks",
        "8",
        "--bytes",
        "1e9",
        "--bandwidth",
        "1e11",
        "--latency",
        "5e-6",
        "--algorithm",
        "ring",
    )
    assert data["time_s"] == pytest.approx(8.785e-3, rel=1e-12)
    assert data["bus_bandwidth_factor"] == pytest.approx(0.875)
    assert data["steps"] == 7


def test_gib_size_and_default_link(capsys: pytest.CaptureFixture[str]) -> None:
    data = _json(capsys, "--op", "broadcast", "--ranks", "4", "--bytes", "1GiB")
    assert data["size_bytes"] == 2**30
    assert data["algorithm"] == "binomial"
    assert data["bandwidth_bytes_per_s"] == 100e9  # the documented default, 100GB/s
    assert data["time_s"] == pytest.approx(2 * (5e-6 + 2**30 / 100e9))


@pytest.mark.parametrize(("ranks", "heading"), [("1", "on 1 rank"), ("2", "on 2 ranks")])
def test_the_heading_counts_ranks_in_the_singular_and_plural(
    capsys: pytest.CaptureFixture[str], ranks: str, heading: str
) -> None:
    """One rank is a collective NCCL returns from at once (nothing to send), not an error: its
    heading says 1 rank, not 1 ranks."""
    args = ["calc", "collective", "--op", "all-reduce", "--ranks", ranks, "--bytes", "1GB"]
    assert main(args) == 0
    assert capsys.readouterr().out.splitlines()[0] == f"all-reduce (ring) {heading}"


def test_readable_report(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["calc", "collective", "--op", "all-reduce", "--ranks", "8", "--bytes", "1GB"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert "17.57 ms" in out
    assert "99.6 GB/s" in out  # busbw = 56.92 GB/s x 1.75
    # NCCL-tests' factor 2(n-1)/n, written with R ranks as --ranks R and the pane name them.
    assert "GiB" in out and "2(R-1)/R" in out


def test_the_formula_is_written_in_the_interfaces_symbols(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The MPICH notes' ring all-reduce 2(p-1)α + 2n(p-1)/p·β, with p ranks and n bytes,
    written in the symbols the flags and the Collectives pane use: R (--ranks R, ranks R) and
    S (--bytes S, size S); beta is 1/bandwidth, alpha the latency."""
    argv = ["calc", "collective", "--op", "all-reduce", "--ranks", "8", "--bytes", "1GB"]
    assert main(argv) == 0
    rows = [" ".join(line.split()) for line in capsys.readouterr().out.splitlines()]
    assert "ranks R 8" in rows
    assert "time 17.57 ms = 2(R-1)*alpha + 2*S*(R-1)/R*beta" in rows
    assert "bandwidth 100 GB/s = 1/beta latency alpha 5 us" in rows
    assert main([*argv, "--json"]) == 0
    formula = json.loads(capsys.readouterr().out)["formula"]
    assert formula == "2(R-1)*alpha + 2*S*(R-1)/R*beta"
    # All-gather's S is the whole array (NCCL-tests): R-1 steps of S/R each.
    assert main(["calc", "collective", "--op", "all-gather", "--ranks", "8", "--bytes", "1GB"]) == 0
    assert "= (R-1)*alpha + S*(R-1)/R*beta" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("argv", "flag"),
    [
        (["--op", "allreduce", "--ranks", "8", "--bytes", "1GB"], "--op"),
        (["--op", "all-reduce", "--ranks", "0", "--bytes", "1GB"], "--ranks"),
        (["--op", "all-reduce", "--ranks", "eight", "--bytes", "1GB"], "--ranks"),
        (["--op", "all-reduce", "--ranks", "8", "--bytes", "-1"], "--bytes"),
        (["--op", "all-reduce", "--ranks", "8", "--bytes", "1XB"], "--bytes"),
        (["--op", "all-reduce", "--ranks", "8", "--bytes", "1e400"], "--bytes"),
        (
            ["--op", "all-reduce", "--ranks", "8", "--bytes", "1GB", "--bandwidth", "0"],
            "--bandwidth",
        ),
        (
            ["--op", "all-reduce", "--ranks", "8", "--bytes", "1GB", "--latency", "5 parsecs"],
            "--latency",
        ),
        (
            ["--op", "all-reduce", "--ranks", "8", "--bytes", "1GB", "--algorithm", "star"],
            "--algorithm",
        ),
        (
            [
                "--op",
                "all-gather",
                "--ranks",
                "6",
                "--bytes",
                "1GB",
                "--algorithm",
                "halving-doubling",
            ],
            "--ranks",
        ),
        (["--ranks", "8", "--bytes", "1GB"], "--op"),
        (["--op", "all-reduce", "--bytes", "1GB"], "--ranks"),
        (["--op", "all-reduce", "--ranks", "8"], "--bytes"),
    ],
)
def test_invalid_input_exit_2_one_line(
    capsys: pytest.CaptureFixture[str], argv: list[str], flag: str
) -> None:
    assert main(["calc", "collective", *argv, "--json"]) == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1
    assert flag in lines[0]
    assert "Traceback" not in captured.err


def test_argparse_level_error_is_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        main(["calc", "collective", "--op"])
    assert info.value.code == 2
    lines = capsys.readouterr().err.strip().splitlines()
    assert len(lines) == 1 and "--op" in lines[0]


# --- shardbook diagram ------------------------------------------------------------------------


@pytest.mark.parametrize("name", STRATEGY_NAMES)
def test_diagram_strategy(capsys: pytest.CaptureFixture[str], name: str) -> None:
    assert main(["diagram", name]) == 0
    out = capsys.readouterr().out
    assert out == strategy_diagram(name)
    assert out.isascii() and "rank 3" in out


def test_diagram_collective_step(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["diagram", "all-reduce", "--step", "2"]) == 0
    out = capsys.readouterr().out
    assert "step 2 of 6: reduce-scatter" in out
    assert "rank 3 --> rank 0" in out


def test_diagram_collective_all_steps_and_options(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["diagram", "all-reduce", "--ranks", "8", "--algorithm", "halving-doubling"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    for step in range(7):
        assert f"step {step} of 6" in out
    assert "rank 7" in out


@pytest.mark.parametrize(
    ("argv", "flag"),
    [
        (["diagram", "ddp"], "NAME"),
        (["diagram", "all-reduce", "--step", "7"], "--step"),
        (["diagram", "all-reduce", "--step", "-1"], "--step"),
        (["diagram", "all-reduce", "--ranks", "9"], "--ranks"),
        (["diagram", "all-gather", "--algorithm", "tree"], "--algorithm"),
        (["diagram", "tp", "--step", "1"], "--step"),
        (["diagram", "tp", "--ranks", "8"], "--ranks"),
    ],
)
def test_diagram_errors(capsys: pytest.CaptureFixture[str], argv: list[str], flag: str) -> None:
    assert main(argv) == 2
    captured = capsys.readouterr()
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1 and flag in lines[0]


def test_one_rank_json_has_null_bandwidths(capsys: pytest.CaptureFixture[str]) -> None:
    # Nothing moves between one rank: time 0, and S / 0 has no bandwidth (JSON null, not inf).
    args = ["--op", "all-reduce", "--ranks", "1", "--bytes", "1GB"]
    assert main(["calc", "collective", *args, "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["time_s"] == 0 and data["steps"] == 0
    assert data["algbw_bytes_per_s"] is None and data["busbw_bytes_per_s"] is None
    assert main(["calc", "collective", *args]) == 0
    assert "nothing moves" in capsys.readouterr().out


def test_tree_keeps_working_as_binomial(capsys: pytest.CaptureFixture[str]) -> None:
    args = ["--op", "all-reduce", "--ranks", "8", "--bytes", "1GB", "--json"]
    assert main(["calc", "collective", *args, "--algorithm", "tree"]) == 0
    tree = json.loads(capsys.readouterr().out)
    assert main(["calc", "collective", *args, "--algorithm", "double-binary-tree"]) == 0
    nccl = json.loads(capsys.readouterr().out)
    assert tree["algorithm"] == "binomial"
    # 1 GB on 8 ranks at 100 GB/s, 5 us: binomial 6 × (5 us + 10 ms); double tree 30 us + 20 ms.
    assert tree["time_s"] == pytest.approx(6 * (5e-6 + 0.01))
    assert nccl["time_s"] == pytest.approx(6 * 5e-6 + 0.02)


@pytest.mark.parametrize(
    ("argv", "says"),
    [
        (["--op", "foo"], "--op: unknown operation 'foo'"),
        (["--op", "all-reduce", "--algorithm", "foo"], "--algorithm: 'foo' is not available"),
    ],
)
def test_an_unknown_choice_is_named_before_a_missing_flag(
    capsys: pytest.CaptureFixture[str], argv: list[str], says: str
) -> None:
    assert main(["calc", "collective", *argv]) == 2
    captured = capsys.readouterr()
    lines = captured.err.strip().splitlines()
    assert captured.out == "" and len(lines) == 1
    assert says in lines[0]


LINK = ["--op", "all-reduce", "--ranks", "8", "--bytes", "1GB"]


@pytest.mark.parametrize(
    ("flag", "typed", "message"),
    [
        # 2.5 bytes per second (meant as 2.5 GB/s) priced the all-reduce at 7e8 s.
        ("--bandwidth", "2.5", "'2.5' is 2.5 bytes per second, slower than any link; was the unit"),
        # 2.5 seconds a message (meant as 2.5 us): no network is that slow.
        ("--latency", "2.5", "'2.5' is 2.5 seconds a message, longer than any link takes; was"),
        # A size is not a rate: 1 GB read as 1 GB/s was a guess.
        ("--bandwidth", "1GB", "'1GB' is a size, not a rate; add /s"),
        ("--bandwidth", "400Gb", "'400Gb' is a size, not a rate; add /s"),
    ],
)
def test_a_link_figure_with_its_unit_left_out_is_refused(
    capsys: pytest.CaptureFixture[str], flag: str, typed: str, message: str
) -> None:
    assert main(["calc", "collective", *LINK, flag, typed]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err.startswith(f"shardbook: calc collective: {flag}: {message}")
    assert err.count("\n") == 1


def test_a_plausible_bare_link_figure_is_used_with_a_note(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """1e11 bare is 100 GB/s and 5e-6 bare is 5 us (the app's Collectives pane reads a bare
    bandwidth so, and says it): the JSON on stdout, a note on stderr for each."""
    args = ["calc", "collective", *LINK, "--bandwidth", "1e11", "--latency", "5e-6", "--json"]
    assert main(args) == 0
    out, err = capsys.readouterr()
    data = json.loads(out)
    assert data["bandwidth_bytes_per_s"] == 1e11
    assert data["latency_s"] == 5e-6
    assert err.splitlines() == [
        "shardbook: calc collective: note: --bandwidth '1e11' has no unit: read as bytes per "
        "second, 100 GB/s",
        "shardbook: calc collective: note: --latency '5e-6' has no unit: read as seconds, 5 us",
    ]
    # With units (or a zero latency) nothing is noted.
    assert main(["calc", "collective", *LINK, "--bandwidth", "100GB/s", "--latency", "0"]) == 0
    assert capsys.readouterr().err == ""


def test_a_missing_op_lists_the_collectives(capsys: pytest.CaptureFixture[str]) -> None:
    """As `calc bubble` lists its schedules: the seven collectives of NCCL's and MPI's sets."""
    assert main(["calc", "collective", "--ranks", "8", "--bytes", "1GB"]) == 2
    assert capsys.readouterr().err == (
        "shardbook: calc collective: --op: is required: one of all-reduce, all-gather, "
        "reduce-scatter, all-to-all, broadcast, reduce, send-recv\n"
    )
