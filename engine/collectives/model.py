"""The collectives' names, algorithms and size conventions, the checks of an operation and an
algorithm, and the records the cost model and the simulator return.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType

import numpy as np
import numpy.typing as npt

from engine.errors import InputError
from engine.i18n import N_
from engine.i18n import gettext as _

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
        "all-reduce": "2(R-1)/R",
        "all-gather": "(R-1)/R",
        "reduce-scatter": "(R-1)/R",
        "all-to-all": "(R-1)/R",
        "broadcast": "1",
        "reduce": "1",
        "send-recv": "1",
    }
)
"""NCCL-tests bus-bandwidth factors (``doc/PERFORMANCE.md``; send/recv from ``src/sendrecv.cu``),
with R ranks (NCCL-tests writes n for the ranks, the MPICH notes p), the symbol of ``--ranks``
and the Collectives pane's ranks R."""


SIZE_CONVENTIONS: Mapping[str, str] = MappingProxyType(
    {
        "all-reduce": N_("S = each rank's buffer"),
        "all-gather": N_("S = the whole gathered array (all ranks' shards)"),
        "reduce-scatter": N_("S = the whole array before scattering (all ranks' shards)"),
        "all-to-all": N_("S = each rank's whole send buffer"),
        "broadcast": N_("S = the root's buffer"),
        "reduce": N_("S = each rank's buffer"),
        "send-recv": N_("S = the message each rank sends"),
    }
)
"""What S (``size_bytes``) measures for each operation: English msgids in the JSON, translated
with ``gettext`` where a report shows them."""


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
            raise InputError("step", _("must be a whole number"))
        if not 0 <= step <= len(self.steps):
            raise InputError(
                "step",
                _("must be between 0 and {count}, got {step}").format(
                    count=len(self.steps), step=step
                ),
            )
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
            return concat_chunks(final[rank : rank + 1])
        if self.op == "reduce" and rank != self.root:
            return None
        return concat_chunks(final)

    def input_array(self, rank: int) -> Chunk:
        """Rank ``rank``'s contribution as one array (its filled input slots, concatenated)."""
        return concat_chunks(self.inputs[rank])

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


def check_op(op: str) -> str:
    """Return ``op`` if it names an operation.

    Raises:
        InputError: unknown operation (field ``op``), listing the known ones.
    """
    if op not in ALGORITHMS:
        raise InputError(
            "op",
            _("unknown operation {op!r}; use one of {choices}").format(
                op=op, choices=", ".join(OPERATIONS)
            ),
        )
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
            "algorithm",
            _("{algorithm!r} is not available for {op}; use {choices}").format(
                algorithm=algorithm, op=op, choices=_(" or ").join(choices)
            ),
        )
    if simulated and algorithm not in ALGORITHMS[op]:
        raise InputError(
            "algorithm",
            _(
                "{algorithm} is costed, not simulated: NCCL pipelines many small chunks through "
                "two trees at once; binomial shows one tree's reduce and broadcast step by step"
            ).format(algorithm=algorithm),
        )
    if algorithm == "halving-doubling" and op != "all-reduce" and not is_power_of_two(ranks):
        raise InputError(
            "ranks",
            _(
                "halving-doubling {op} needs a power-of-two rank count, got {ranks}; use ring"
            ).format(op=op, ranks=ranks),
        )
    return algorithm


def is_power_of_two(value: int) -> bool:
    """Whether ``value`` is 1, 2, 4, 8, ..."""
    return value > 0 and value & (value - 1) == 0


def ceil_log2(value: int) -> int:
    """ceil(log2(value)) for ``value`` >= 1: the rounds of a binomial tree on that many ranks."""
    return (value - 1).bit_length()


def frozen_chunk(array: npt.ArrayLike) -> Chunk:
    """``array`` as a read-only 1-D int64 :data:`Chunk`."""
    out = np.array(array, dtype=np.int64)
    out.flags.writeable = False
    return out


def concat_chunks(slots: Sequence[Chunk | None]) -> Chunk:
    """The filled ``slots`` joined into one read-only chunk."""
    filled = [s for s in slots if s is not None]
    return frozen_chunk(np.concatenate(filled) if filled else np.zeros(0, dtype=np.int64))
