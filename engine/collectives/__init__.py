"""Collectives: a step-by-step data-flow simulator and an alpha-beta cost model.

Two views of the same algorithms, kept in one package so they cannot drift apart (a test checks
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

The package: :mod:`~engine.collectives.model` (names, algorithms, conventions, checks, records),
:mod:`~engine.collectives.cost` (the alpha-beta model) and :mod:`~engine.collectives.dataflow`
(the simulator).
"""

from engine.collectives.cost import (
    bus_bandwidth_factor,
    collective_cost,
    step_count,
)
from engine.collectives.dataflow import (
    simulate,
)
from engine.collectives.model import (
    ALGORITHM_ALIASES,
    ALGORITHMS,
    BUS_BANDWIDTH_FACTORS,
    COST_ONLY_ALGORITHMS,
    MAX_COST_RANKS,
    MAX_SIM_ELEMENTS,
    MAX_SIM_RANKS,
    OPERATIONS,
    ROOT,
    SIZE_CONVENTIONS,
    Buffers,
    Chunk,
    CollectiveCost,
    Simulation,
    Step,
    Transfer,
    algorithm_choices,
    check_algorithm,
    check_op,
    is_simulated,
)

__all__ = [
    "ALGORITHMS",
    "ALGORITHM_ALIASES",
    "BUS_BANDWIDTH_FACTORS",
    "COST_ONLY_ALGORITHMS",
    "MAX_COST_RANKS",
    "MAX_SIM_ELEMENTS",
    "MAX_SIM_RANKS",
    "OPERATIONS",
    "ROOT",
    "SIZE_CONVENTIONS",
    "Buffers",
    "Chunk",
    "CollectiveCost",
    "Simulation",
    "Step",
    "Transfer",
    "algorithm_choices",
    "bus_bandwidth_factor",
    "check_algorithm",
    "check_op",
    "collective_cost",
    "is_simulated",
    "simulate",
    "step_count",
]
