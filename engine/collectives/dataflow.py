"""The step-by-step data flow of a collective on R ranks holding small integers: which chunk
moves from which rank to which at every step, and every rank's buffer after it.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from engine.collectives.model import (
    MAX_SIM_ELEMENTS,
    MAX_SIM_RANKS,
    ROOT,
    Buffers,
    Simulation,
    Step,
    Transfer,
    ceil_log2,
    check_algorithm,
    check_op,
)
from engine.errors import InputError
from engine.i18n import N_
from engine.i18n import gettext as _
from engine.units import parse_int

_Move = tuple[int, int, tuple[int, ...], tuple[int, ...], bool]


_Phase = tuple[str, list[_Move]]


def _ring_reduce_scatter(p: int, ranks: Sequence[int]) -> list[_Phase]:
    # Step k: rank i sends slot (i-k-1) to i+1, which adds it. After p-1 steps rank i holds the
    # fully reduced slot i.
    phases: list[_Phase] = []
    for k in range(p - 1):
        moves: list[_Move] = []
        for i in range(p):
            c = (i - k - 1) % p
            moves.append((ranks[i], ranks[(i + 1) % p], (c,), (c,), True))
        phases.append(("reduce-scatter", moves))
    return phases


def _ring_all_gather(p: int) -> list[_Phase]:
    # Step k: rank i forwards slot (i-k), the one it received last step (its own at k = 0).
    phases: list[_Phase] = []
    for k in range(p - 1):
        moves: list[_Move] = []
        for i in range(p):
            c = (i - k) % p
            moves.append((i, (i + 1) % p, (c,), (c,), False))
        phases.append(("all-gather", moves))
    return phases


def _halving(groups: Sequence[tuple[int, ...]], phase: str) -> list[_Phase]:
    # Recursive halving over len(groups) = 2^d ranks: the block a rank is responsible for halves
    # each step; it keeps the half that contains its own group and sends the other half.
    r = len(groups)
    phases: list[_Phase] = []
    lo = [0] * r
    hi = [r] * r
    mask = r >> 1
    while mask:
        moves: list[_Move] = []
        for i in range(r):
            partner = i ^ mask
            mid = (lo[i] + hi[i]) // 2
            send = range(mid, hi[i]) if i < partner else range(lo[i], mid)
            slots = tuple(s for g in send for s in groups[g])
            moves.append((i, partner, slots, slots, True))
        for i in range(r):
            mid = (lo[i] + hi[i]) // 2
            if i & mask:
                lo[i] = mid
            else:
                hi[i] = mid
        phases.append((phase, moves))
        mask >>= 1
    return phases


def _doubling(groups: Sequence[tuple[int, ...]], phase: str) -> list[_Phase]:
    # Recursive doubling: each step a rank sends everything it has gathered to its partner.
    r = len(groups)
    phases: list[_Phase] = []
    mask = 1
    while mask < r:
        moves: list[_Move] = []
        for i in range(r):
            base = i & ~(mask - 1)
            slots = tuple(s for g in range(base, base + mask) for s in groups[g])
            moves.append((i, i ^ mask, slots, slots, False))
        phases.append((phase, moves))
        mask <<= 1
    return phases


def _binomial_reduce(p: int, everything: tuple[int, ...]) -> list[_Phase]:
    phases: list[_Phase] = []
    mask = 1
    while mask < p:
        moves = [
            (i, i - mask, everything, everything, True) for i in range(p) if i % (2 * mask) == mask
        ]
        phases.append(("reduce", moves))
        mask <<= 1
    return phases


def _binomial_broadcast(p: int, everything: tuple[int, ...]) -> list[_Phase]:
    phases: list[_Phase] = []
    mask = 1 << (ceil_log2(p) - 1) if p > 1 else 0
    while mask:
        moves = [
            (i, i + mask, everything, everything, False)
            for i in range(0, p, 2 * mask)
            if i + mask < p
        ]
        phases.append(("broadcast", moves))
        mask >>= 1
    return phases


def _schedule(op: str, algorithm: str, p: int) -> list[_Phase]:
    everything = tuple(range(p))
    if op == "all-reduce" and algorithm == "ring":
        return _ring_reduce_scatter(p, range(p)) + _ring_all_gather(p)
    if op == "all-reduce" and algorithm == "halving-doubling":
        r = 1 << (p.bit_length() - 1)
        groups = [tuple(int(s) for s in g) for g in np.array_split(np.arange(p), r)]
        inner = _halving(groups, "reduce-scatter") + _doubling(groups, "all-gather")
        if r == p:
            return inner
        extra = range(r, p)
        fold: _Phase = (N_("fold"), [(i, i - r, everything, everything, True) for i in extra])
        unfold: _Phase = (N_("unfold"), [(i - r, i, everything, everything, False) for i in extra])
        return [fold, *inner, unfold]
    if op == "all-reduce":
        return _binomial_reduce(p, everything) + _binomial_broadcast(p, everything)
    if op == "reduce-scatter" and algorithm == "ring":
        return _ring_reduce_scatter(p, range(p))
    if op == "reduce-scatter":
        return _halving([(i,) for i in range(p)], "reduce-scatter")
    if op == "all-gather" and algorithm == "ring":
        return _ring_all_gather(p)
    if op == "all-gather":
        return _doubling([(i,) for i in range(p)], "all-gather")
    if op == "all-to-all":
        # Pairwise exchange: at step k rank i sends its block for rank i+k and receives rank
        # (i-k)'s block for it.
        return [
            (N_("exchange"), [(i, (i + k) % p, ((i + k) % p,), (i,), False) for i in range(p)])
            for k in range(1, p)
        ]
    if op == "broadcast":
        return _binomial_broadcast(p, everything)
    if op == "reduce":
        return _binomial_reduce(p, everything)
    # send-recv as NCCL-tests runs it: every rank sends to the next and receives from the previous.
    return [("send-recv", [(i, (i + 1) % p, everything, everything, False) for i in range(p)])]


def _initial_state(op: str, p: int, size: int, rng: np.random.Generator) -> tuple[Buffers, Buffers]:
    """(inputs, initial buffers): small integers 1..9 a learner can add up by hand."""
    values = rng.integers(1, 10, size=(p, size), dtype=np.int64)
    values.flags.writeable = False
    # numpy.array_split's boundaries; slices of a read-only array are read-only views.
    bounds = [0, *np.cumsum([len(part) for part in np.array_split(np.empty(size), p)])]
    full = [
        tuple(values[i, int(bounds[s]) : int(bounds[s + 1])] for s in range(p)) for i in range(p)
    ]
    none: tuple[None, ...] = (None,) * p
    if op == "all-gather":
        # Rank i contributes shard i of the whole array (size = the whole array).
        inputs = tuple(tuple(full[i][s] if s == i else None for s in range(p)) for i in range(p))
        return inputs, inputs
    if op == "all-to-all":
        initial = tuple(tuple(full[i][i] if s == i else None for s in range(p)) for i in range(p))
        return tuple(full), initial
    if op == "broadcast":
        initial = tuple(full[i] if i == ROOT else none for i in range(p))
        return initial, initial
    return tuple(full), tuple(full)


def simulate(
    op: str,
    ranks: int = 4,
    size: int | None = None,
    algorithm: str | None = None,
    seed: int = 0,
) -> Simulation:
    """Run ``op`` on ``ranks`` ranks and record every step.

    Each rank's buffer is ``ranks`` slots (``numpy.array_split`` of ``size`` elements, so sizes
    not divisible by ``ranks`` give slots one element apart). Inputs are random integers 1..9
    drawn from ``seed``. Broadcast and reduce use root 0; send-recv sends rank i's buffer to rank
    i+1 (mod R) as NCCL-tests' sendrecv does.

    Args:
        op: one of :data:`OPERATIONS`.
        ranks: 2 to :data:`MAX_SIM_RANKS`.
        size: elements in the array of the size convention (default: one element per slot).
        algorithm: one of ``ALGORITHMS[op]``; ``None`` picks the first.
        seed: seed of the input integers.

    Raises:
        InputError: naming ``op``, ``ranks``, ``size``, ``algorithm`` or ``seed``.
    """
    check_op(op)
    p = parse_int("ranks", ranks, minimum=2, maximum=MAX_SIM_RANKS)
    total_elements = (
        p if size is None else parse_int("size", size, minimum=p, maximum=MAX_SIM_ELEMENTS)
    )
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise InputError("seed", _("must be a whole number, 0 or more"))
    name = check_algorithm(op, algorithm, p, simulated=True)
    inputs, initial = _initial_state(op, p, total_elements, np.random.default_rng(seed))

    state = [list(rank) for rank in initial]
    before = initial
    steps: list[Step] = []
    for index, (phase, moves) in enumerate(_schedule(op, name, p), start=1):
        # Every message of a step reads what the sender held before the step.
        source = inputs if op == "all-to-all" else before
        transfers: list[Transfer] = []
        for src, dst, chunks, slots, reduce in moves:
            elements = 0
            for chunk, slot in zip(chunks, slots, strict=True):
                data = source[src][chunk]
                if data is None:
                    raise AssertionError(f"rank {src} sends empty slot {chunk} in step {index}")
                elements += data.size
                held = state[dst][slot]
                if reduce and held is not None:
                    total = held + data
                    total.flags.writeable = False
                    state[dst][slot] = total
                else:
                    state[dst][slot] = data
            transfers.append(Transfer(src, dst, chunks, slots, reduce, elements))
        before = tuple(tuple(rank) for rank in state)
        steps.append(Step(index, phase, tuple(transfers), before))
    return Simulation(
        op=op,
        algorithm=name,
        ranks=p,
        size=total_elements,
        root=ROOT,
        inputs=inputs,
        initial=initial,
        steps=tuple(steps),
    )
