"""engine.collectives: data flow against numpy, costs against the sources.

Sources (the values recomputed from their formulas):
- NCCL-tests doc/PERFORMANCE.md: algbw = S/t, busbw = algbw x factor; all-reduce 2(n-1)/n,
  reduce-scatter/all-gather/all-to-all (n-1)/n, broadcast/reduce 1; S is the whole array for
  all-gather and reduce-scatter. n = 8: 1.75 and 0.875.
- MPICH algorithm notes (Thakur, Rabenseifner, Gropp 2005): ring all-gather (p-1)a + n(p-1)/p b;
  ring all-reduce 2(p-1)a + 2n(p-1)/p b; binomial broadcast lg(p)(a + nb).
  a = 5 us, b = 1/100e9 s/B, n = 1e9 B, p = 8: ring all-gather 8.785 ms, ring all-reduce 17.57 ms.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine import collectives
from engine.collectives import (
    ALGORITHMS,
    OPERATIONS,
    collective_cost,
    simulate,
    step_count,
)
from engine.errors import InputError

CASES = [(op, algorithm) for op in OPERATIONS for algorithm in ALGORITHMS[op]]


def _reference(op: str, inputs: list[np.ndarray], rank: int) -> np.ndarray | None:
    """What numpy says rank ``rank`` ends with, computed from the whole input arrays."""
    p = len(inputs)
    if op == "all-reduce":
        return np.sum(inputs, axis=0)
    if op == "all-gather":
        return np.concatenate(inputs)
    if op == "reduce-scatter":
        return np.array_split(np.sum(inputs, axis=0), p)[rank]
    if op == "all-to-all":
        return np.concatenate([np.array_split(x, p)[rank] for x in inputs])
    if op == "broadcast":
        return inputs[0]
    if op == "reduce":
        return np.sum(inputs, axis=0) if rank == 0 else None
    return inputs[(rank - 1) % p]


def _runs(op: str, algorithm: str, ranks: int) -> bool:
    power_of_two = ranks & (ranks - 1) == 0
    return not (algorithm == "halving-doubling" and op != "all-reduce" and not power_of_two)


def _check_against_numpy(op: str, algorithm: str, ranks: int, size: int, seed: int) -> None:
    sim = simulate(op, ranks, size, algorithm, seed=seed)
    inputs = [sim.input_array(r) for r in range(ranks)]
    if op == "all-gather":
        assert sum(x.size for x in inputs) == size  # NCCL-tests: S is the whole array
    elif op == "broadcast":
        assert [x.size for x in inputs] == [size] + [0] * (ranks - 1)  # only the root has data
    else:
        assert all(x.size == size for x in inputs)
    for rank in range(ranks):
        expected = _reference(op, inputs, rank)
        got = sim.output(rank)
        if expected is None:
            assert got is None
        else:
            assert got is not None
            np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize(("op", "algorithm"), CASES)
@pytest.mark.parametrize("ranks", range(2, 17))
def test_final_buffers_equal_numpy(op: str, algorithm: str, ranks: int) -> None:
    if not _runs(op, algorithm, ranks):
        pytest.skip("halving-doubling all-gather/reduce-scatter need a power of two")
    # One element per slot, an uneven size, and one that leaves several ranks a longer slot.
    for size in (ranks, 3 * ranks + 1, 5 * ranks + ranks - 1):
        _check_against_numpy(op, algorithm, ranks, size, seed=ranks)


@settings(max_examples=60, deadline=None)
@given(
    case=st.sampled_from(CASES),
    ranks=st.integers(2, 16),
    extra=st.integers(0, 40),
    seed=st.integers(0, 2**32 - 1),
)
def test_any_size_matches_numpy(case: tuple[str, str], ranks: int, extra: int, seed: int) -> None:
    op, algorithm = case
    if not _runs(op, algorithm, ranks):
        return
    _check_against_numpy(op, algorithm, ranks, ranks + extra, seed)


def test_uneven_all_to_all_is_a_block_transpose() -> None:
    # 4 ranks, 10 elements each: blocks of 3, 3, 2, 2; rank j gets block j of every rank.
    sim = simulate("all-to-all", 4, 10, seed=3)
    blocks = [np.array_split(sim.input_array(i), 4) for i in range(4)]
    for j in range(4):
        np.testing.assert_array_equal(
            sim.output(j), np.concatenate([blocks[i][j] for i in range(4)])
        )
    assert sim.output(0) is not None and sim.output(0).size == 12  # type: ignore[union-attr]


def test_divisible_all_to_all_is_numpy_transpose() -> None:
    p, c = 4, 3
    sim = simulate("all-to-all", p, p * c, seed=5)
    stacked = np.stack([sim.input_array(i) for i in range(p)]).reshape(p, p, c)
    transposed = stacked.swapaxes(0, 1).reshape(p, p * c)
    for j in range(p):
        np.testing.assert_array_equal(sim.output(j), transposed[j])


def test_ring_all_reduce_is_reduce_scatter_then_all_gather() -> None:
    sim = simulate("all-reduce", 4)
    phases = [step.phase for step in sim.steps]
    assert phases == ["reduce-scatter"] * 3 + ["all-gather"] * 3
    # After the reduce-scatter half, rank i holds the full sum of slot i (MPICH ring).
    total = np.sum([sim.input_array(r) for r in range(4)], axis=0)
    after_rs = sim.buffers_at(3)
    for rank in range(4):
        chunk = after_rs[rank][rank]
        assert chunk is not None
        assert int(chunk[0]) == int(total[rank])


def test_steps_record_moves_and_buffers() -> None:
    sim = simulate("all-reduce", 4)
    first = sim.steps[0]
    assert first.index == 1
    assert [(t.src, t.dst) for t in first.transfers] == [(0, 1), (1, 2), (2, 3), (3, 0)]
    assert all(t.reduce and len(t.chunks) == 1 for t in first.transfers)
    # The receiver's slot is its own input plus the sender's.
    t = first.transfers[0]
    got = first.buffers[t.dst][t.slots[0]]
    sent = sim.initial[t.src][t.chunks[0]]
    own = sim.initial[t.dst][t.slots[0]]
    assert got is not None and sent is not None and own is not None
    assert int(got[0]) == int(sent[0]) + int(own[0])
    # Untouched slots keep their values.
    assert sim.steps[0].buffers[0][0] is sim.initial[0][0]


def test_inputs_are_small_integers_and_read_only() -> None:
    sim = simulate("all-reduce", 4, seed=11)
    values = np.concatenate([sim.input_array(r) for r in range(4)])
    assert values.min() >= 1 and values.max() <= 9
    chunk = sim.initial[0][0]
    assert chunk is not None
    with pytest.raises(ValueError):
        chunk[0] = 99


def test_broadcast_non_roots_start_empty() -> None:
    sim = simulate("broadcast", 4)
    assert all(slot is None for rank in sim.initial[1:] for slot in rank)
    assert all(slot is not None for slot in sim.initial[0])


@pytest.mark.parametrize(("op", "algorithm"), CASES)
@pytest.mark.parametrize("ranks", [2, 3, 4, 5, 7, 8, 12, 16])
def test_cost_model_matches_simulation(op: str, algorithm: str, ranks: int) -> None:
    """Closed-form steps and bytes equal what the simulator moves (whole-slot sizes)."""
    if not _runs(op, algorithm, ranks):
        pytest.skip("not a power of two")
    sim = simulate(op, ranks, 8 * ranks, algorithm)
    assert len(sim.steps) == step_count(op, ranks, algorithm)
    cost = collective_cost(op, ranks, 8 * 8 * ranks, 1.0, 0.0, algorithm)
    assert cost.steps == len(sim.steps)
    power_of_two = ranks & (ranks - 1) == 0
    if algorithm == "halving-doubling" and not power_of_two:
        return  # the fold moves whole slots, so its volume is only close to the closed form
    wire = sum(max(t.elements for t in step.transfers) for step in sim.steps) * 8
    assert cost.time_s == pytest.approx(wire)  # bandwidth 1 B/s, no latency: seconds = bytes
    assert cost.bytes_sent_per_rank == pytest.approx(max(sim.elements_sent()) * 8)


# --- Values from NCCL-tests and the MPICH algorithm notes -------------------------------------


def test_vectors_bus_bandwidth_factors_n8() -> None:
    assert collectives.bus_bandwidth_factor("all-reduce", 8) == pytest.approx(1.75)
    assert collectives.bus_bandwidth_factor("all-gather", 8) == pytest.approx(0.875)
    assert collectives.bus_bandwidth_factor("reduce-scatter", 8) == pytest.approx(0.875)
    assert collectives.bus_bandwidth_factor("all-to-all", 8) == pytest.approx(0.875)
    assert collectives.bus_bandwidth_factor("broadcast", 8) == 1.0
    assert collectives.bus_bandwidth_factor("reduce", 8) == 1.0


def test_vectors_ring_all_gather_8785us() -> None:
    cost = collective_cost("all-gather", 8, 1e9, 100e9, 5e-6, "ring")
    assert cost.time_s == pytest.approx(8.785e-3, rel=1e-12)
    assert cost.steps == 7
    assert cost.bytes_sent_per_rank == pytest.approx(0.875e9)
    assert cost.algbw_bytes_per_s == pytest.approx(1e9 / 8.785e-3)
    assert cost.busbw_bytes_per_s == pytest.approx(1e9 / 8.785e-3 * 0.875)


def test_vectors_ring_all_reduce_1757ms() -> None:
    cost = collective_cost("all-reduce", 8, 1e9, 100e9, 5e-6)
    assert cost.algorithm == "ring"
    assert cost.time_s == pytest.approx(17.57e-3, rel=1e-12)
    assert cost.steps == 14
    assert cost.bus_bandwidth_factor == pytest.approx(1.75)
    assert cost.busbw_bytes_per_s == pytest.approx(1e9 / 17.57e-3 * 1.75)


def test_text_inputs_parse_through_units() -> None:
    cost = collective_cost("all-reduce", "8", "1GB", "100GB/s", "5us")
    assert cost.time_s == pytest.approx(17.57e-3, rel=1e-12)
    gib = collective_cost("all-gather", 8, "1GiB", "100GB/s", 0)
    assert gib.size_bytes == 2**30


def test_binomial_broadcast_lg_p() -> None:
    # MPICH: lg(p) * (alpha + n * beta); 8 ranks -> 3 rounds.
    cost = collective_cost("broadcast", 8, 1e9, 100e9, 5e-6)
    assert cost.time_s == pytest.approx(3 * (5e-6 + 1e9 / 100e9))
    assert cost.busbw_bytes_per_s == pytest.approx(cost.algbw_bytes_per_s)
    # A non-power-of-two rank count needs ceil(lg p) rounds.
    assert collective_cost("broadcast", 5, 1e9, 100e9, 0).steps == 3


def test_reduce_scatter_ring_equals_all_gather_ring() -> None:
    rs = collective_cost("reduce-scatter", 16, 4e9, 50e9, 2e-6)
    ag = collective_cost("all-gather", 16, 4e9, 50e9, 2e-6)
    assert rs.time_s == ag.time_s
    ar = collective_cost("all-reduce", 16, 4e9, 50e9, 2e-6)
    assert ar.time_s == pytest.approx(rs.time_s + ag.time_s)


def test_halving_doubling_trades_latency_for_the_same_bandwidth() -> None:
    ring = collective_cost("all-reduce", 1024, 1e6, 100e9, 5e-6, "ring")
    hd = collective_cost("all-reduce", 1024, 1e6, 100e9, 5e-6, "halving-doubling")
    assert hd.steps == 20 and ring.steps == 2046
    assert hd.bytes_sent_per_rank == pytest.approx(ring.bytes_sent_per_rank)
    assert hd.time_s < ring.time_s


def test_pairwise_all_to_all() -> None:
    cost = collective_cost("all-to-all", 8, 8e9, 100e9, 1e-6)
    assert cost.time_s == pytest.approx(7 * 1e-6 + 7e9 / 100e9)
    assert cost.bus_bandwidth_factor == pytest.approx(0.875)


def test_send_recv_factor_one() -> None:
    cost = collective_cost("send-recv", 2, 1e9, 100e9, 5e-6)
    assert cost.time_s == pytest.approx(5e-6 + 1e-2)
    assert cost.bus_bandwidth_factor == 1.0


@settings(max_examples=100, deadline=None)
@given(
    case=st.sampled_from(CASES),
    ranks=st.integers(2, 4096),
    size=st.floats(1.0, 1e12),
    bandwidth=st.floats(1e6, 1e13),
    latency=st.floats(0.0, 1e-3),
)
def test_cost_is_finite_and_consistent(
    case: tuple[str, str], ranks: int, size: float, bandwidth: float, latency: float
) -> None:
    op, algorithm = case
    if not _runs(op, algorithm, ranks):
        with pytest.raises(InputError) as info:
            collective_cost(op, ranks, size, bandwidth, latency, algorithm)
        assert info.value.field == "ranks"
        return
    cost = collective_cost(op, ranks, size, bandwidth, latency, algorithm)
    assert math.isfinite(cost.time_s) and cost.time_s > 0
    assert cost.algbw_bytes_per_s == pytest.approx(size / cost.time_s)
    assert cost.busbw_bytes_per_s == pytest.approx(
        cost.algbw_bytes_per_s * cost.bus_bandwidth_factor
    )
    # No algorithm beats the bandwidth bound: bus bandwidth never exceeds the link's.
    if op in ("all-reduce", "all-gather", "reduce-scatter", "all-to-all"):
        assert cost.busbw_bytes_per_s <= bandwidth * (1 + 1e-9)


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"op": "allreduce"}, "op"),
        ({"ranks": 0}, "ranks"),
        ({"ranks": 2.5}, "ranks"),
        ({"ranks": True}, "ranks"),
        ({"size_bytes": "-1GB"}, "size_bytes"),
        ({"size_bytes": -1}, "size_bytes"),
        ({"size_bytes": float("nan")}, "size_bytes"),
        ({"size_bytes": "1e400"}, "size_bytes"),
        ({"size_bytes": "lots"}, "size_bytes"),
        ({"bandwidth_bytes_per_s": 0}, "bandwidth_bytes_per_s"),
        ({"bandwidth_bytes_per_s": "fast"}, "bandwidth_bytes_per_s"),
        ({"latency_s": -1e-6}, "latency_s"),
        # Ring all-reduce on 8 ranks takes 2(p-1) = 14 steps: 14 × 1e308 s overflows a float,
        # whatever the bytes.
        ({"latency_s": 1e308}, "latency_s"),
        ({"algorithm": "pairwise"}, "algorithm"),
        ({"algorithm": "halving-doubling", "op": "all-gather", "ranks": 6}, "ranks"),
    ],
)
def test_invalid_input_names_the_field(kwargs: dict[str, object], field: str) -> None:
    args: dict[str, object] = {
        "op": "all-reduce",
        "ranks": 8,
        "size_bytes": 1e9,
        "bandwidth_bytes_per_s": 100e9,
        "latency_s": 5e-6,
        "algorithm": None,
    }
    args.update(kwargs)
    with pytest.raises(InputError) as info:
        collective_cost(**args)  # type: ignore[arg-type]
    assert info.value.field == field


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"op": "gather"}, "op"),
        ({"ranks": 0}, "ranks"),
        ({"ranks": collectives.MAX_SIM_RANKS + 1}, "ranks"),
        ({"size": 3}, "size"),
        ({"algorithm": "tree", "op": "all-gather"}, "algorithm"),
        ({"seed": -1}, "seed"),
    ],
)
def test_simulate_invalid_input(kwargs: dict[str, object], field: str) -> None:
    args: dict[str, object] = {"op": "all-reduce", "ranks": 4}
    args.update(kwargs)
    with pytest.raises(InputError) as info:
        simulate(**args)  # type: ignore[arg-type]
    assert info.value.field == field


def test_buffers_at_rejects_bad_step() -> None:
    sim = simulate("all-gather", 4)
    with pytest.raises(InputError) as info:
        sim.buffers_at(len(sim.steps) + 1)
    assert info.value.field == "step"


# --- binomial (MPICH) and NCCL's pipelined double binary tree; nothing to move ----------------


def test_binomial_all_reduce_and_its_old_name() -> None:
    # MPICH: binomial reduce then binomial broadcast, whole messages: 2·ceil(lg p)·(alpha + n·beta);
    # p = 8, n = 1 GB, alpha 5 us, 100 GB/s: 6 × (5 us + 10 ms) = 60.03 ms.
    cost = collective_cost("all-reduce", 8, 1e9, 100e9, 5e-6, "binomial")
    assert cost.time_s == pytest.approx(6 * (5e-6 + 1e9 / 100e9))
    old = collective_cost("all-reduce", 8, 1e9, 100e9, 5e-6, "tree")
    assert old.algorithm == "binomial" and old.time_s == cost.time_s
    assert simulate("all-reduce", 4, algorithm="tree").algorithm == "binomial"


def test_double_binary_tree_pays_for_large_messages() -> None:
    # NCCL's tree all-reduce (src/graph/tuning.cc: algorithm bandwidth = bus bandwidth / 2;
    # 2·log2 hops of latency), pipelined: 2·ceil(lg p)·alpha + 2·n·beta = 30 us + 20 ms, against
    # the ring's 17.57 ms (MPICH algorithm notes) and the unpipelined binomial's 60.03 ms.
    cost = collective_cost("all-reduce", 8, 1e9, 100e9, 5e-6, "double-binary-tree")
    assert cost.time_s == pytest.approx(6 * 5e-6 + 2 * 1e9 / 100e9)
    assert cost.steps == 6
    # The busiest rank: an inner node of one tree (n/2 up, n/2 to each child) and a leaf of
    # the other (n/2 up).
    assert cost.bytes_sent_per_rank == 2e9
    assert cost.busbw_bytes_per_s is not None and cost.busbw_bytes_per_s < 100e9
    assert "Sanders" in cost.source and "nccl" in cost.source
    ring = collective_cost("all-reduce", 8, 1e9, 100e9, 5e-6)
    assert (
        ring.time_s
        < cost.time_s
        < collective_cost("all-reduce", 8, 1e9, 100e9, 5e-6, "binomial").time_s
    )


@settings(max_examples=50, deadline=None)
@given(
    ranks=st.integers(2, 4096),
    size=st.floats(1.0, 1e12),
    bandwidth=st.floats(1e6, 1e13),
    latency=st.floats(0.0, 1e-3),
)
def test_double_binary_tree_never_beats_the_link(
    ranks: int, size: float, bandwidth: float, latency: float
) -> None:
    cost = collective_cost("all-reduce", ranks, size, bandwidth, latency, "double-binary-tree")
    assert cost.busbw_bytes_per_s is not None
    assert cost.busbw_bytes_per_s <= bandwidth * (1 + 1e-9)


def test_double_binary_tree_is_costed_not_simulated() -> None:
    with pytest.raises(InputError) as info:
        simulate("all-reduce", 4, algorithm="double-binary-tree")
    assert info.value.field == "algorithm"
    with pytest.raises(InputError):
        step_count("all-reduce", 4, "double-binary-tree")


@pytest.mark.parametrize(("ranks", "size"), [(1, 1e9), (8, 0.0), (1, 0.0)])
def test_nothing_to_move_costs_nothing(ranks: int, size: float) -> None:
    # NCCL returns at once for one rank or a count of 0.
    for op in OPERATIONS:
        cost = collective_cost(op, ranks, size, 100e9, 5e-6)
        assert cost.time_s == 0 and cost.steps == 0 and cost.bytes_sent_per_rank == 0
        assert cost.algbw_bytes_per_s is None and cost.busbw_bytes_per_s is None


def test_one_rank_bus_factor_is_zero() -> None:
    assert collectives.bus_bandwidth_factor("all-reduce", 1) == 0
    assert collectives.bus_bandwidth_factor("broadcast", 1) == 1
