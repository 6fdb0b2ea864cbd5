"""The lab's collectives on real Gloo ranks: every operation's output on every rank
equals engine.collectives.simulate's at R = 2 and 4; only loopback sockets are used; every
process ends, also when a rank raises or hangs. Skipped without torch (the ``lab`` extra).

Times are measured but never asserted (no timed tests): only their presence and finiteness.
"""

from __future__ import annotations

import math
import os
from pathlib import Path

import pytest

from engine.collectives import OPERATIONS, simulate
from engine.errors import InputError
from engine.lab import LabError, torch_available
from engine.lab.gloo import GlooRun, is_loopback_socket, run_collectives

# The module-scoped fixture starts the ranks once: its tests run on one worker (--dist loadgroup).
pytestmark = pytest.mark.xdist_group("lab_collectives")
needs_torch = pytest.mark.skipif(
    not torch_available(), reason="torch not installed: pip install -e '.[lab]'"
)
# Small timing payload and few calls keep each run to a few seconds on 2 cores.
FAST = {"timing_bytes": "16KiB", "repeats": 3, "timeout_s": 60}


def _ended(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    stat = Path(f"/proc/{pid}/stat")
    return stat.is_file() and stat.read_text().rsplit(")", 1)[-1].split()[0] == "Z"


@pytest.fixture(scope="module", params=[2, 4], ids=["R2", "R4"])
def gloo_run(request: pytest.FixtureRequest) -> GlooRun:
    if not torch_available():
        pytest.skip("torch not installed: pip install -e '.[lab]'")
    return run_collectives(ranks=request.param, size=2 * request.param, **FAST)


@needs_torch
def test_every_operation_equals_the_simulator(gloo_run: GlooRun) -> None:
    assert [item.op for item in gloo_run.ops] == list(OPERATIONS)
    for item in gloo_run.ops:
        sim = simulate(item.op, gloo_run.world, 2 * gloo_run.world)
        for rank in range(gloo_run.world):
            expected = sim.output(rank)
            got = item.ranks[rank].output
            if expected is None:
                # reduce: only the root's buffer is defined (MPI leaves the others unspecified).
                assert item.op == "reduce" and rank != 0
                continue
            assert got == tuple(int(v) for v in expected), (item.op, rank)
        assert item.matches


@needs_torch
def test_simulator_inputs_reached_gloo(gloo_run: GlooRun) -> None:
    # all-reduce of known inputs: the sum over ranks, element by element (a hand check).
    item = next(i for i in gloo_run.ops if i.op == "all-reduce")
    total = tuple(sum(col) for col in zip(*(r.input for r in item.ranks), strict=True))
    assert all(r.output == total for r in item.ranks)
    assert len(total) == 2 * gloo_run.world


@needs_torch
def test_times_and_model_are_reported(gloo_run: GlooRun) -> None:
    assert gloo_run.alpha_s > 0
    for item in gloo_run.ops:
        assert math.isfinite(item.measured_s) and item.measured_s > 0
        assert item.model.steps >= 1 and math.isfinite(item.ratio)
    payload = gloo_run.as_dict()
    assert payload["all_match"] is True
    assert {op["op"] for op in payload["ops"]} == set(OPERATIONS)


@needs_torch
def test_only_loopback_sockets(gloo_run: GlooRun) -> None:
    if gloo_run.sockets is None:
        pytest.skip("no /proc: sockets cannot be listed on this system")
    assert gloo_run.loopback_only is True
    for rank_sockets in gloo_run.sockets:
        assert rank_sockets, "Gloo connects ranks over TCP: each rank has sockets"
        for entry in rank_sockets:
            assert is_loopback_socket(entry), entry


@needs_torch
def test_all_processes_ended_after_success(gloo_run: GlooRun) -> None:
    assert len(gloo_run.pids) == gloo_run.world
    assert all(_ended(pid) for pid in gloo_run.pids)


@needs_torch
def test_a_rank_that_raises_ends_every_process() -> None:
    with pytest.raises(LabError) as caught:
        run_collectives(ranks=3, ops=["all-reduce"], inject=(1, "raise"), **FAST)
    assert "rank 1 failed" in caught.value.message
    assert "injected failure on rank 1" in caught.value.message
    assert len(caught.value.pids) == 3
    assert all(_ended(pid) for pid in caught.value.pids)


@needs_torch
def test_a_hanging_rank_times_out_and_every_process_ends() -> None:
    options = {**FAST, "timeout_s": 3}
    with pytest.raises(LabError) as caught:
        run_collectives(ranks=2, ops=["broadcast"], inject=(0, "hang"), **options)
    assert "did not finish within 3 s" in caught.value.message
    assert len(caught.value.pids) == 2
    assert all(_ended(pid) for pid in caught.value.pids)


def test_loopback_check_rejects_other_addresses() -> None:
    assert is_loopback_socket({"local": "127.0.0.1:5", "remote": "127.0.0.1:6", "state": "x"})
    assert is_loopback_socket(
        {"local": "[::ffff:127.0.0.1]:5", "remote": "[::1]:6", "state": "connected"}
    )
    assert is_loopback_socket({"local": "127.0.0.1:5", "remote": "0.0.0.0:0", "state": "listen"})
    # A TCPStore listens on every interface: exactly what the lab avoids.
    assert not is_loopback_socket({"local": "[::]:29500", "remote": "[::]:0", "state": "listen"})
    assert not is_loopback_socket(
        {"local": "10.0.0.2:5", "remote": "127.0.0.1:6", "state": "connected"}
    )


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"ranks": 1}, "ranks"),
        ({"ranks": 17}, "ranks"),
        ({"ops": ["all-shuffle"]}, "op"),
        ({"ranks": 4, "size": 6}, "size"),
        ({"timing_bytes": "1GB"}, "timing_bytes"),
        ({"timeout_s": 0}, "timeout_s"),
        ({"inject": (5, "raise")}, "inject"),
    ],
)
def test_bad_input_names_the_field(kwargs: dict[str, object], field: str) -> None:
    with pytest.raises(InputError) as caught:
        run_collectives(**kwargs)  # type: ignore[arg-type]
    assert caught.value.field == field
