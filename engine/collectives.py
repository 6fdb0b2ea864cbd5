"""Collectives: a step-by-step data-flow simulator and an alpha-beta cost model.

Two views of the same algorithms, kept in one module so they cannot drift apart (a test checks
that the simulator's step count and bytes sent equal the closed forms; only the non-power-of-two
halving-doubling all-reduce differs slightly, because its simulation moves whole slots):

- :func:`simulate` runs an operation on ``R`` ranks holding small numpy integers and records every
  step: which chunk moves from which rank to which, and every rank's buffer after it.
- :func:`collective_cost` gives the alpha-beta time, bytes sent per rank, algorithm bandwidth and
  bus bandwidth of the same operation at any size.

Size conventions follow NCCL-tests ``doc/PERFORMANCE.md``: ``S`` is the whole array for all-gather
and reduce-scatter (all ranks' shards together), the per-rank buffer for all-reduce, broadcast,
reduce and all-to-all, and the message for send/recv. ``algbw = S / t`` and
``busbw = algbw * factor`` with the factors of :data:`BUS_BANDWIDTH_FACTORS`.

Costs follow Thakur, Rabenseifner and Gropp, "Optimization of Collective Communication Operations in
MPICH" (IJHPCA 19(1), 2005), the "MPICH algorithm notes": ``alpha`` is the latency of one message
in seconds, ``beta`` the transfer time of one byte (``1 / bandwidth``), ``n`` the size in bytes and
``p`` the number of ranks. The reduction's compute term (``gamma``) is left out.

All-reduce's ``binomial`` is MPICH's binomial reduce followed by a binomial broadcast, whole
messages at every step (``tree`` is kept as its old name). NCCL's tree is another algorithm,
``double-binary-tree`` (Sanders, Speck and Träff 2009, "Two-tree algorithms for full bandwidth
broadcast, reduction and scan", Parallel Computing 35(12); NVIDIA/nccl ``src/graph/trees.cc``):
two binary trees, each rank an inner node of at most one, each reducing and broadcasting half the
data, pipelined in small chunks. In the limit of many chunks it costs ``2·ceil(lg p)·alpha +
2·n·beta`` (NVIDIA/nccl ``src/graph/tuning.cc``: a tree all-reduce's algorithm bandwidth is half
its bus bandwidth, its latency ``2·log2`` hops); the pipeline's fill is left out. It is costed,
not simulated: its chunks do not fit the step-by-step picture. One rank, or zero bytes, costs
nothing.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType

import numpy as np
import numpy.typing as npt

from engine import sources
from engine.errors import InputError
from engine.units import parse_bytes, parse_int, parse_rate, parse_time

Chunk = npt.NDArray[np.int64]
"""One chunk of a rank's buffer: a read-only 1-D array of int64."""

Buffers = tuple[tuple[Chunk | None, ...], ...]
"""Every rank's buffer as ``buffers[rank][slot]``; ``None`` is a slot that holds nothing yet."""

OPERATIONS: tuple[str, ...] = (
    "all-reduce",
    "all-gather",
    "reduce-scatter",
    "all-to-all",
    "broadcast",
    "reduce",
    "send-recv",
)

# The first algorithm of each operation is its default. Each is simulated and costed.
ALGORITHMS: Mapping[str, tuple[str, ...]] = MappingProxyType(
    {
        "all-reduce": ("ring", "halving-doubling", "binomial"),
        "all-gather": ("ring", "halving-doubling"),
        "reduce-scatter": ("ring", "halving-doubling"),
        "all-to-all": ("pairwise",),
        "broadcast": ("binomial",),
        "reduce": ("binomial",),
        "send-recv": ("direct",),
    }
)

# Costed only (module docstring).
COST_ONLY_ALGORITHMS: Mapping[str, tuple[str, ...]] = MappingProxyType(
    {"all-reduce": ("double-binary-tree",)}
)
# Former names still accepted: operation -> {old name: name}.
ALGORITHM_ALIASES: Mapping[str, Mapping[str, str]] = MappingProxyType(
    {"all-reduce": MappingProxyType({"tree": "binomial"})}
)
BUS_BANDWIDTH_FACTORS: Mapping[str, str] = MappingProxyType(
    {
        "all-reduce": "2(p-1)/p",
        "all-gather": "(p-1)/p",
        "reduce-scatter": "(p-1)/p",
        "all-to-all": "(p-1)/p",
        "broadcast": "1",
        "reduce": "1",
        "send-recv": "1",
    }
)
"""NCCL-tests bus-bandwidth factors (``doc/PERFORMANCE.md``; send/recv from ``src/sendrecv.cu``),
with p ranks: NCCL-tests writes n for the ranks, here n is always bytes (the MPICH notes' size)."""

SIZE_CONVENTIONS: Mapping[str, str] = MappingProxyType(
    {
        "all-reduce": "S = each rank's buffer",
        "all-gather": "S = the whole gathered array (all ranks' shards)",
        "reduce-scatter": "S = the whole array before scattering (all ranks' shards)",
        "all-to-all": "S = each rank's whole send buffer",
        "broadcast": "S = the root's buffer",
        "reduce": "S = each rank's buffer",
        "send-recv": "S = the message each rank sends",
    }
)


MAX_SIM_RANKS = 128
MAX_SIM_ELEMENTS = 1 << 16
MAX_COST_RANKS = 1 << 24
ROOT = 0


@dataclass(frozen=True)
class Transfer:
    """One message of one step.

    Attributes:
        src: sending rank.
        dst: receiving rank.
        chunks: slot indices read from the sender's buffer. For all-to-all the sender reads its
            send buffer (:attr:`Simulation.inputs`), where slot ``j`` is the block meant for rank j.
        slots: slot indices written in the receiver's buffer (equal to ``chunks`` except for
            all-to-all, where the block from rank ``i`` lands in slot ``i``).
        reduce: ``True`` when the receiver adds the data into its slot, ``False`` when it copies.
        elements: number of int64 elements in the message.
    """

    src: int
    dst: int
    chunks: tuple[int, ...]
    slots: tuple[int, ...]
    reduce: bool
    elements: int


@dataclass(frozen=True, eq=False)
class Step:
    """One communication round: its transfers happen at the same time.

    Attributes:
        index: 1-based step number.
        phase: the part of the algorithm (``reduce-scatter``, ``all-gather``, ``fold``, ...).
        transfers: the messages of this step.
        buffers: every rank's buffer after this step (``buffers[rank][slot]``).
    """

    index: int
    phase: str
    transfers: tuple[Transfer, ...]
    buffers: Buffers


@dataclass(frozen=True, eq=False)
class Simulation:
    """The recorded data flow of one collective.

    Attributes:
        op: the operation (one of :data:`OPERATIONS`).
        algorithm: the algorithm used (one of ``ALGORITHMS[op]``).
        ranks: number of ranks.
        size: elements in the array the size convention names (see :data:`SIZE_CONVENTIONS`).
        root: root rank of broadcast and reduce (always 0).
        inputs: what each rank contributes, as slots (``None`` where it contributes nothing).
        initial: every rank's buffer before step 1.
        steps: the steps, in order.
    """

    op: str
    algorithm: str
    ranks: int
    size: int
    root: int
    inputs: Buffers
    initial: Buffers
    steps: tuple[Step, ...]

    def buffers_at(self, step: int) -> Buffers:
        """Every rank's buffer after ``step`` (0 = before any transfer).

        Raises:
            InputError: ``step`` outside 0..len(steps) (field ``step``).
        """
        if isinstance(step, bool) or not isinstance(step, int):
            raise InputError("step", "must be a whole number")
        if not 0 <= step <= len(self.steps):
            raise InputError("step", f"must be between 0 and {len(self.steps)}, got {step}")
        return self.initial if step == 0 else self.steps[step - 1].buffers

    @property
    def final(self) -> Buffers:
        """Every rank's buffer after the last step."""
        return self.buffers_at(len(self.steps))

    def output(self, rank: int) -> Chunk | None:
        """What the operation defines on rank ``rank`` at the end, as one array.

        The whole final buffer, except: reduce-scatter keeps slot ``rank`` (its shard of the
        sum); reduce defines only the root's buffer (``None`` on the other ranks, whose buffers
        hold partial sums, as MPI leaves them unspecified).
        """
        final = self.final[rank]
        if self.op == "reduce-scatter":
            return _concat(final[rank : rank + 1])
        if self.op == "reduce" and rank != self.root:
            return None
        return _concat(final)

    def input_array(self, rank: int) -> Chunk:
        """Rank ``rank``'s contribution as one array (its filled input slots, concatenated)."""
        return _concat(self.inputs[rank])

    def elements_sent(self) -> tuple[int, ...]:
        """Elements each rank sends over the whole collective."""
        sent = [0] * self.ranks
        for step in self.steps:
            for transfer in step.transfers:
                sent[transfer.src] += transfer.elements
        return tuple(sent)


@dataclass(frozen=True)
class CollectiveCost:
    """Alpha-beta cost of one collective.

    Attributes:
        op, algorithm, ranks: what was costed.
        size_bytes: S in bytes, in the size convention of :data:`SIZE_CONVENTIONS`.
        bandwidth_bytes_per_s: link bandwidth (1/beta) in bytes/s.
        latency_s: alpha, seconds per message.
        time_s: modelled time in seconds.
        bytes_sent_per_rank: bytes the busiest rank sends.
        algbw_bytes_per_s: algorithm bandwidth S / time_s, bytes/s (``None`` when nothing moves).
        busbw_bytes_per_s: bus bandwidth algbw x bus_bandwidth_factor, bytes/s (``None`` then).
        bus_bandwidth_factor: the NCCL-tests factor for ``op`` at ``ranks``.
        steps: communication rounds (each costs one alpha).
        formula: the time formula in ASCII.
        source: where the formula comes from.
    """

    op: str
    algorithm: str
    ranks: int
    size_bytes: float
    bandwidth_bytes_per_s: float
    latency_s: float
    time_s: float
    bytes_sent_per_rank: float
    algbw_bytes_per_s: float | None
    busbw_bytes_per_s: float | None
    bus_bandwidth_factor: float
    steps: int
    formula: str
    source: str


# ----------------------------------------------------------------------------------------------
# Validation


def check_op(op: str) -> str:
    """Return ``op`` if it names an operation.

    Raises:
        InputError: unknown operation (field ``op``), listing the known ones.
    """
    if op not in ALGORITHMS:
        raise InputError("op", f"unknown operation {op!r}; use one of {', '.join(OPERATIONS)}")
    return op


def algorithm_choices(op: str) -> tuple[str, ...]:
    """Every algorithm the cost model has for ``op``: the simulated ones, then the costed ones.

    Raises:
        InputError: ``op`` unknown (field ``op``).
    """
    check_op(op)
    return ALGORITHMS[op] + COST_ONLY_ALGORITHMS.get(op, ())


def is_simulated(op: str, algorithm: str | None) -> bool:
    """Whether :func:`simulate` can run ``algorithm`` (``None`` = the default) for ``op``."""
    if algorithm is None:
        return True
    name = ALGORITHM_ALIASES.get(op, {}).get(algorithm, algorithm)
    return name in ALGORITHMS.get(op, ())


def check_algorithm(op: str, algorithm: str | None, ranks: int, simulated: bool = False) -> str:
    """Return the algorithm to use for ``op`` on ``ranks`` ranks (``None`` = the default; a
    former name, :data:`ALGORITHM_ALIASES`, gives the current one).

    Raises:
        InputError: ``op`` unknown (field ``op``); algorithm not available for ``op``, or, with
            ``simulated``, costed only (field ``algorithm``); halving-doubling all-gather or
            reduce-scatter on a rank count that is not a power of two (field ``ranks``).
    """
    choices = algorithm_choices(op)
    if algorithm is None:
        return choices[0]
    algorithm = ALGORITHM_ALIASES.get(op, {}).get(algorithm, algorithm)
    if algorithm not in choices:
        raise InputError(
            "algorithm", f"{algorithm!r} is not available for {op}; use {' or '.join(choices)}"
        )
    if simulated and algorithm not in ALGORITHMS[op]:
        raise InputError(
            "algorithm",
            f"{algorithm} is costed, not simulated: NCCL pipelines many small chunks through two "
            "trees at once; binomial shows one tree's reduce and broadcast step by step",
        )
    if algorithm == "halving-doubling" and op != "all-reduce" and not _is_power_of_two(ranks):
        raise InputError(
            "ranks",
            f"halving-doubling {op} needs a power-of-two rank count, got {ranks}; use ring",
        )
    return algorithm


def _is_power_of_two(value: int) -> bool:
    return value > 0 and value & (value - 1) == 0


def _ceil_log2(value: int) -> int:
    return (value - 1).bit_length()


def bus_bandwidth_factor(op: str, ranks: int) -> float:
    """The NCCL-tests factor that turns algorithm bandwidth into bus bandwidth.

    all-reduce 2(p-1)/p; reduce-scatter, all-gather, all-to-all (p-1)/p; broadcast, reduce and
    send/recv 1 (NCCL-tests ``doc/PERFORMANCE.md``, ``src/sendrecv.cu``). One rank: 0 for the
    first four (nothing crosses a link).

    Raises:
        InputError: unknown ``op`` or ``ranks`` below 1.
    """
    check_op(op)
    p = parse_int("ranks", ranks, minimum=1)
    if op == "all-reduce":
        return 2.0 * (p - 1) / p
    if op in ("all-gather", "reduce-scatter", "all-to-all"):
        return (p - 1) / p
    return 1.0


# ----------------------------------------------------------------------------------------------
# Cost model


def _closed_form(op: str, algorithm: str, p: int, n: float) -> tuple[int, float, float, str]:
    """(steps, bytes on the wire that set the time, bytes the busiest rank sends, formula)."""
    lg = _ceil_log2(p)
    if algorithm == "ring" and op == "all-reduce":
        wire = 2.0 * n * (p - 1) / p
        return 2 * (p - 1), wire, wire, "2(p-1)*alpha + 2*n*(p-1)/p*beta"
    if algorithm == "ring":
        wire = n * (p - 1) / p
        return p - 1, wire, wire, "(p-1)*alpha + n*(p-1)/p*beta"
    if algorithm == "halving-doubling" and op == "all-reduce":
        if _is_power_of_two(p):
            wire = 2.0 * n * (p - 1) / p
            return 2 * lg, wire, wire, "2*lg(p)*alpha + 2*n*(p-1)/p*beta"
        # Rabenseifner's fold: the p - r extra ranks hand their vector to a partner first and get
        # the result back last, so r = 2^floor(lg p) ranks do the halving and doubling.
        r = 1 << (p.bit_length() - 1)
        lr = r.bit_length() - 1
        inner = 2.0 * n * (r - 1) / r
        return (
            2 * lr + 2,
            inner + 2.0 * n,
            inner + n,
            "(2*lg(r)+2)*alpha + (2*n*(r-1)/r + 2*n)*beta, r = 2^floor(lg p)",
        )
    if algorithm == "halving-doubling":
        wire = n * (p - 1) / p
        return lg, wire, wire, "lg(p)*alpha + n*(p-1)/p*beta"
    if algorithm == "binomial" and op == "all-reduce":
        return 2 * lg, 2.0 * lg * n, lg * n, "2*ceil(lg p)*(alpha + n*beta)"
    if algorithm == "double-binary-tree":
        # The busiest rank: an inner node of one tree (n/2 up, n/2 to each of two children)
        # and a leaf of the other (n/2 up); with 2 or 3 ranks no node has two children.
        busiest = {2: 1.0, 3: 1.5}.get(p, 2.0) * n
        return 2 * lg, 2.0 * n, busiest, "2*ceil(lg p)*alpha + 2*n*beta (pipelined, fill left out)"
    if algorithm == "binomial":
        busiest = lg * n if op == "broadcast" else n
        return lg, lg * n, busiest, "ceil(lg p)*(alpha + n*beta)"
    if algorithm == "pairwise":
        wire = n * (p - 1) / p
        return p - 1, wire, wire, "(p-1)*alpha + n*(p-1)/p*beta"
    return 1, n, n, "alpha + n*beta"


def collective_cost(
    op: str,
    ranks: int | float | str,
    size_bytes: float | str,
    bandwidth_bytes_per_s: float | str,
    latency_s: float | str = 0.0,
    algorithm: str | None = None,
) -> CollectiveCost:
    """Alpha-beta time and bandwidths of ``op`` on ``ranks`` ranks.

    Args:
        op: one of :data:`OPERATIONS`.
        ranks: number of ranks, 1 or more (one rank costs nothing).
        size_bytes: S in bytes, in the size convention of :data:`SIZE_CONVENTIONS` (for
            all-gather and reduce-scatter, the whole array), 0 or more (0 costs nothing). Text
            such as ``"1GB"`` is accepted.
        bandwidth_bytes_per_s: link bandwidth in bytes/s (``"100GB/s"`` accepted); beta = 1/it.
        latency_s: alpha, seconds per message (``"5us"`` accepted).
        algorithm: one of :func:`algorithm_choices` (or a former name); ``None`` picks the first.

    Returns:
        The cost. ``time_s`` counts every step's alpha plus the bytes of the step's largest
        message times beta (MPICH algorithm notes); ``bytes_sent_per_rank`` is the busiest rank's.
        With nothing to move (one rank, zero bytes) the time, steps and bytes are 0 and the two
        bandwidths ``None`` (S / 0 has no value).

    Raises:
        InputError: naming the field (``op``, ``ranks``, ``size_bytes``,
            ``bandwidth_bytes_per_s``, ``latency_s``, ``algorithm``) that is invalid, or
            ``size_bytes`` when the result would overflow.
    """
    check_op(op)
    p = parse_int("ranks", ranks, minimum=1, maximum=MAX_COST_RANKS)
    n = parse_bytes("size_bytes", size_bytes, allow_zero=True)
    bandwidth = parse_rate("bandwidth_bytes_per_s", bandwidth_bytes_per_s)
    alpha = parse_time("latency_s", latency_s)
    name = check_algorithm(op, algorithm, max(p, 2))
    factor = bus_bandwidth_factor(op, p)
    source = sources.DOUBLE_BINARY_TREE if name == "double-binary-tree" else sources.MPICH_COSTS
    if p == 1 or n == 0:
        # NCCL returns at once for one rank or a count of 0: nothing is sent.
        reason = "one rank" if p == 1 else "zero bytes"
        return CollectiveCost(
            op=op,
            algorithm=name,
            ranks=p,
            size_bytes=n,
            bandwidth_bytes_per_s=bandwidth,
            latency_s=alpha,
            time_s=0.0,
            bytes_sent_per_rank=0.0,
            algbw_bytes_per_s=None,
            busbw_bytes_per_s=None,
            bus_bandwidth_factor=factor,
            steps=0,
            formula=f"0 ({reason}: nothing to send)",
            source=f"{source}; {sources.BUS_BANDWIDTH}",
        )
    steps, wire, busiest, formula = _closed_form(op, name, p, n)
    time_s = steps * alpha + wire / bandwidth
    if not math.isfinite(time_s) or time_s <= 0.0:
        raise InputError("size_bytes", "is too large or too small for a finite time")
    algbw = n / time_s
    return CollectiveCost(
        op=op,
        algorithm=name,
        ranks=p,
        size_bytes=n,
        bandwidth_bytes_per_s=bandwidth,
        latency_s=alpha,
        time_s=time_s,
        bytes_sent_per_rank=busiest,
        algbw_bytes_per_s=algbw,
        busbw_bytes_per_s=algbw * factor,
        bus_bandwidth_factor=factor,
        steps=steps,
        formula=formula,
        source=f"{source}; {sources.BUS_BANDWIDTH}",
    )


def step_count(op: str, ranks: int, algorithm: str | None = None) -> int:
    """Communication rounds of ``op`` on ``ranks`` ranks (what :func:`simulate` records).

    Raises:
        InputError: as :func:`check_algorithm` (a costed-only algorithm included), or ``ranks``
            below 2.
    """
    check_op(op)
    p = parse_int("ranks", ranks, minimum=2, maximum=MAX_COST_RANKS)
    return _closed_form(op, check_algorithm(op, algorithm, p, simulated=True), p, 1.0)[0]


# ----------------------------------------------------------------------------------------------
# Schedules: which slots move where at each step. Shared by every algorithm's simulation.

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
    mask = 1 << (_ceil_log2(p) - 1) if p > 1 else 0
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
        fold: _Phase = ("fold", [(i, i - r, everything, everything, True) for i in extra])
        unfold: _Phase = ("unfold", [(i - r, i, everything, everything, False) for i in extra])
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
            ("exchange", [(i, (i + k) % p, ((i + k) % p,), (i,), False) for i in range(p)])
            for k in range(1, p)
        ]
    if op == "broadcast":
        return _binomial_broadcast(p, everything)
    if op == "reduce":
        return _binomial_reduce(p, everything)
    # send-recv as NCCL-tests runs it: every rank sends to the next and receives from the previous.
    return [("send-recv", [(i, (i + 1) % p, everything, everything, False) for i in range(p)])]


# ----------------------------------------------------------------------------------------------
# Simulation


def _frozen(array: npt.ArrayLike) -> Chunk:
    out = np.array(array, dtype=np.int64)
    out.flags.writeable = False
    return out


def _concat(slots: Sequence[Chunk | None]) -> Chunk:
    filled = [s for s in slots if s is not None]
    return _frozen(np.concatenate(filled) if filled else np.zeros(0, dtype=np.int64))


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
        raise InputError("seed", "must be a whole number, 0 or more")
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
