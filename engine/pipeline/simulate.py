"""The simulator: the earliest timeline a schedule's order allows, its bubble, and a check of
the schedule's dependencies.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property
from itertools import repeat
from operator import add

import numpy as np
import numpy.typing as npt

from engine.errors import InputError
from engine.i18n import gettext
from engine.pipeline.closed_form import (
    ClosedForm,
    bubble_fraction,
    bubble_over_ideal,
    closed_form_bubble,
)
from engine.pipeline.schedules import StageActions, stage_actions
from engine.pipeline.spec import (
    B_CODE,
    CONVENTIONS,
    F_CODE,
    JOINED_KINDS,
    MAX_SIMULATED_OPS,
    MAX_SIMULATED_STAGES,
    SPLIT_KINDS,
    PipelineOp,
    PipelineSpec,
)

FloatArray = npt.NDArray[np.float64]
IntArray = npt.NDArray[np.int64]
# A float residue below this share of the iteration time is rounding, not a bubble.
_RELATIVE_EPS = 1e-12
# The loops ask whether to stop every this many columns (or parked stages): a few ms of work at
# p = 100, so a caller that gives up (a newer input, the app closing) waits no longer than that.
_CANCEL_EVERY = 256


class SimulationCancelled(Exception):
    """Raised by :func:`simulate` (and :func:`~engine.pipeline.draw_timeline`) when the
    ``cancelled`` callable it was given returns true: the caller no longer wants the result."""


def _never() -> bool:
    return False


def _stop_if(cancelled: Callable[[], bool]) -> None:
    """Raise :class:`SimulationCancelled` when ``cancelled()`` is true."""
    if cancelled():
        raise SimulationCancelled


@dataclass(frozen=True)
class PipelineResult:
    """A simulated schedule.

    Attributes:
        spec: the simulated configuration.
        num_microbatches: m.
        bubble_time: idle time per stage (iteration time − compute time), op-time units.
        bubble_over_ideal: the largest stage bubble over the ideal time m(t_F + t_B + t_W).
        bubble_fraction: the largest stage bubble over the iteration time (bubble/total).
        makespan: end of the last op when all stages start the iteration together.
        iteration_time: the longest stage span, first op start to last op end.
        ideal_time: m(t_F + t_B + t_W), the time each stage computes.
        peak_in_flight_microbatches: per stage, the most micro-batches with activations stashed
            (forward started, backward not finished); chunks count 1/v.
        closed_form: the paper's formula for the same spec.
        conventions: the two bubble conventions with their sources.
        timeline: per stage, its ops in the order they run (built on first use: a large
            schedule has millions of ops and most callers only need the figures).
    """

    spec: PipelineSpec
    num_microbatches: int
    bubble_time: tuple[float, ...]
    bubble_over_ideal: float
    bubble_fraction: float
    makespan: float
    iteration_time: float
    ideal_time: float
    peak_in_flight_microbatches: tuple[float, ...]
    closed_form: ClosedForm
    conventions: str = CONVENTIONS
    _trace: _Trace | None = field(default=None, repr=False, compare=False)

    @cached_property
    def timeline(self) -> tuple[tuple[PipelineOp, ...], ...]:
        """Per stage, its ops in the order they run; empty when built without a trace."""
        return self._trace.ops() if self._trace is not None else ()


@dataclass(frozen=True)
class _Trace:
    """What :func:`simulate` keeps to build the timeline on demand: per stage, its actions and
    their start times (float64 arrays), and the duration of one F, B (or BW) and W op."""

    kinds: tuple[str, str, str]
    actions: list[StageActions]
    starts: list[FloatArray]
    durations: FloatArray

    def ops(self) -> tuple[tuple[PipelineOp, ...], ...]:
        new_op = tuple.__new__
        return tuple(
            tuple(
                map(
                    new_op,
                    repeat(PipelineOp),
                    zip(
                        map(self.kinds.__getitem__, stage.codes.tolist()),
                        stage.micro_batches.tolist(),
                        stage.chunks.tolist(),
                        stage_starts.tolist(),
                        # start + duration: the same sum the simulation made for the end.
                        map(add, stage_starts.tolist(), self.durations[stage.codes].tolist()),
                        strict=True,
                    ),
                )
            )
            for stage, stage_starts in zip(self.actions, self.starts, strict=True)
        )


def check_simulated_size(spec: PipelineSpec) -> None:
    """Refuse a spec larger than :func:`simulate` runs, before any work.

    The size is the spec's true op count (:attr:`PipelineSpec.num_ops`), the same for the
    check and for its message: 2·p·m for GPipe and 1F1B, 2·p·m·v for interleaved 1F1B, 3·p·m
    for ZB-H1 and ZB-H2 (their B and W are separate ops).

    The work that grows with p alone is bounded too: at most :data:`MAX_SIMULATED_STAGES`
    stages.

    Raises:
        InputError: on ``stages`` when p exceeds :data:`MAX_SIMULATED_STAGES`; on
            ``num_microbatches`` when the op count exceeds :data:`MAX_SIMULATED_OPS`.
    """
    if spec.stages > MAX_SIMULATED_STAGES:
        raise InputError(
            "stages",
            gettext(
                "p = {stages:,} stages is more than this simulator runs ({maximum:,}): its work "
                "grows with p (warm-up, cool-down, each stage's ops); lower p"
            ).format(stages=spec.stages, maximum=MAX_SIMULATED_STAGES),
        )
    ops = spec.num_ops
    if ops <= MAX_SIMULATED_OPS:
        return
    kinds = 3 if spec.split_backward else 2
    if spec.schedule == "interleaved-1f1b":
        formula = f"{kinds}*p*m*v = {kinds} × {spec.stages} × {spec.num_microbatches} × "
        formula += str(spec.virtual_stages)
        message = gettext(
            "{formula} = {ops:,} ops is more than this simulator runs ({maximum:,}); "
            "lower m, p or v"
        )
    else:
        formula = f"{kinds}*p*m = {kinds} × {spec.stages} × {spec.num_microbatches}"
        message = gettext(
            "{formula} = {ops:,} ops is more than this simulator runs ({maximum:,}); lower m or p"
        )
    raise InputError(
        "num_microbatches", message.format(formula=formula, ops=ops, maximum=MAX_SIMULATED_OPS)
    )


def simulate(spec: PipelineSpec, cancelled: Callable[[], bool] = _never) -> PipelineResult:
    """Simulate ``spec``'s schedule and measure its bubble and activations in flight.

    The timing is computed column by column over all stages at once (:func:`_run_columns`;
    the event-driven :func:`_run` for a small schedule, or where the columns' shifts do not
    settle). Both give the same start times to the last bit (tests/test_pipeline.py
    compares them).

    Returns:
        A :class:`PipelineResult`; its ``closed_form`` is the paper's value for the same spec.

    ``cancelled`` is asked every few milliseconds of work (a worker thread's cancel flag): the
    simulation stops as soon as it returns true.

    Raises:
        InputError: on ``num_microbatches`` when the op count exceeds
            :data:`MAX_SIMULATED_OPS`; on ``t_forward`` when a figure is not finite (only for
            op times above :data:`~engine.pipeline.spec.MAX_OP_TIME`, which a spec refuses).
        SimulationCancelled: when ``cancelled()`` returned true.
    """
    check_simulated_size(spec)
    m, v = spec.num_microbatches, spec.virtual_stages
    actions = stage_actions(spec)
    _stop_if(cancelled)
    durations = np.array(stage_op_times(spec))
    starts = None
    if spec.stages >= _MIN_COLUMN_STAGES and spec.num_ops >= _MIN_COLUMN_OPS:
        starts = _run_columns(spec, actions, durations, cancelled)
    if starts is None:
        op_durations = [durations[stage.codes].tolist() for stage in actions]
        starts = [np.array(stage) for stage in _run(spec, actions, op_durations, cancelled)]
    _stop_if(cancelled)
    last_ends = [
        float(stage_starts[-1]) + float(durations[stage.codes[-1]])
        for stage, stage_starts in zip(actions, starts, strict=True)
    ]
    makespan = max(last_ends)
    iteration = max(
        end - float(stage_starts[0]) for end, stage_starts in zip(last_ends, starts, strict=True)
    )
    ideal = spec.ideal_time
    bubbles = tuple(
        _tidy(iteration - float(np.bincount(stage.codes, minlength=3) @ durations), iteration)
        for stage in actions
    )
    worst = max(bubbles)
    if not math.isfinite(makespan + iteration + ideal + worst):
        # MAX_OP_TIME keeps every figure finite; a spec built around its checks must still
        # never show inf or nan.
        raise InputError("t_forward", gettext("is too large or too small for a finite time"))
    peaks = tuple(
        int(np.cumsum((stage.codes == F_CODE).astype(np.int64) - (stage.codes == B_CODE)).max()) / v
        for stage in actions
    )
    return PipelineResult(
        spec=spec,
        num_microbatches=m,
        bubble_time=bubbles,
        bubble_over_ideal=bubble_over_ideal(worst, ideal),
        bubble_fraction=bubble_fraction(worst, ideal),
        makespan=makespan,
        iteration_time=iteration,
        ideal_time=ideal,
        peak_in_flight_microbatches=peaks,
        closed_form=closed_form_bubble(spec),
        _trace=_Trace(
            SPLIT_KINDS if spec.split_backward else JOINED_KINDS, actions, starts, durations
        ),
    )


def stage_op_times(spec: PipelineSpec) -> tuple[float, float, float]:
    """Duration of one F, B (or BW) and W op of one chunk."""
    v = spec.virtual_stages
    if spec.split_backward:
        backward = spec.t_backward_input
    else:
        backward = spec.t_backward_input + spec.t_backward_weight
    return spec.t_forward / v, backward / v, spec.t_backward_weight / v


def _tidy(value: float, scale: float) -> float:
    return 0.0 if abs(value) <= _RELATIVE_EPS * scale else value


# Below these, the event-driven loop is faster (under about 2 ms): a column of few stages costs
# its numpy calls and the grid's set-up, about 3 us, more than its ops in plain Python.
_MIN_COLUMN_STAGES = 8
_MIN_COLUMN_OPS = 4096
# The column path handles a column whose ops wait for ops of the same column one op at a time
# (about 0.5 us an op, as fast as the event-driven loop), any other column in one step (about
# 3 us); it takes every schedule whose shifts settle, however chained (GPipe's every column):
# its grid holds 20 bytes an op where the event-driven loop's lists and floats hold about 150.
# Rounds of the column shifts' relaxation before a schedule is given to the event-driven loop.
_MAX_SHIFT_ROUNDS = 64


def _run_columns(
    spec: PipelineSpec,
    actions: list[StageActions],
    durations: FloatArray,
    cancelled: Callable[[], bool] = _never,
) -> list[FloatArray] | None:
    """Start time of every action, per stage, computed a column at a time; None when the
    columns' shifts do not settle (then :func:`_run` runs the schedule).

    Stage r's i-th action sits in column i + shift[r] of row r of a grid; the shifts put every
    op's input from another stage in an earlier column, or the same one. A column is then one
    step over all stages: each op ends at max(end of the stage's previous op, end of its input
    + p2p time) + its duration, the same float operations, in the same order, as the
    event-driven loop. Ops whose input is in their own column (1F1B's warm-up forwards and
    cool-down backwards, a few columns) are done one by one after their inputs. About
    p·(m·v·2 + 2p) cells of 20 bytes: the input's cell (int32), the end and the start
    (float64); the starts returned are views of the start grid.
    """
    p, m, v = spec.stages, spec.num_microbatches, spec.virtual_stages
    n_virtual = p * v
    hop = spec.p2p_time if p > 1 else 0.0
    lengths = [stage.codes.size for stage in actions]
    # Op ids (code·S + virtual stage)·m + micro-batch, S = p·v virtual stages (int32: 3·p·m·v
    # is at most 3·2^20), and where each id sits in its stage's list.
    position = np.empty(3 * n_virtual * m, dtype=np.int32)
    ids_of = []
    for r, stage in enumerate(actions):
        ids = (stage.codes.astype(np.int32) * n_virtual + stage.chunks * p + r) * m
        ids += stage.micro_batches
        position[ids] = np.arange(ids.size, dtype=np.int32)
        ids_of.append(ids)
    _stop_if(cancelled)  # each step of the set-up is a few tens of ms at 2 million ops
    # Each op's input from another virtual stage: per stage, (indices of the ops that have one,
    # the stage the inputs run on, the inputs' indices there); and for each pair of stages the
    # largest (input's index - op's index), which the shifts must make up for.
    links: list[list[tuple[npt.NDArray[np.int32], int, npt.NDArray[np.int32]]]] = []
    gaps: dict[tuple[int, int], int] = {}
    for r, (stage, ids) in enumerate(zip(actions, ids_of, strict=True)):
        stage_links = []
        for code, step, neighbour, first_chunk in (
            (F_CODE, -m, (r - 1) % p, 0 if r == 0 else None),  # virtual stage 0: no input
            (B_CODE, m, (r + 1) % p, v - 1 if r == p - 1 else None),  # the last: no input
        ):
            mask = stage.codes == code
            if first_chunk is not None:
                mask &= stage.chunks != first_chunk
            where = np.flatnonzero(mask).astype(np.int32)
            if not where.size:
                continue
            found = position[ids[where] + step]
            gap = int((found - where).max())
            gaps[(neighbour, r)] = max(gaps.get((neighbour, r), gap), gap)
            stage_links.append((where, neighbour, found))
        links.append(stage_links)
    del position, ids_of
    _stop_if(cancelled)
    shift_array = _shifts(p, gaps)
    if shift_array is None:
        return None
    shift = shift_array.tolist()
    ncols = max(s + length for s, length in zip(shift, lengths, strict=True))
    chained = np.zeros(ncols + 1, dtype=bool)
    for r, stage_links in enumerate(links):
        for where, neighbour, found in stage_links:
            same = found + (shift[neighbour] - shift[r]) == where
            chained[where[same] + shift[r]] = True
    chained_list = chained.tolist()
    # Flat cell r·columns + c, stage-major: each stage's ops are contiguous, so filling the
    # grid writes memory in order, and the loop's p cells of a column, one per stage, stay in
    # cache for the next columns of the same cache lines. One more column, whose end is -inf,
    # is the input of ops that have none. Each cell's input cell; its end, which holds the op's
    # duration (0: no op) until its column is computed; and its start.
    columns = ncols + 1
    dep = np.full(p * columns, ncols, dtype=np.int32)
    end = np.zeros(p * columns)
    dep_grid, end_grid = dep.reshape(p, columns), end.reshape(p, columns)
    for r, (stage, stage_links) in enumerate(zip(actions, links, strict=True)):
        stage_columns = slice(shift[r], shift[r] + lengths[r])
        end_grid[r, stage_columns] = durations[stage.codes]
        stage_deps = dep_grid[r, stage_columns]
        for where, neighbour, found in stage_links:
            stage_deps[where] = found + (shift[neighbour] + neighbour * columns)
    del links
    _stop_if(cancelled)
    end_grid[:, ncols] = -np.inf
    start = np.empty(p * columns)
    start_grid = start.reshape(p, columns)
    # The loop runs once per column (20,000 for 1F1B at m = 10,000): three ufunc calls on p
    # values, bound methods only. ``take`` with mode="clip" writes straight into ``out`` (with
    # the default mode it copies through a buffer); every index is in range.
    take, maximum = end.take, np.maximum
    previous = np.zeros(p)
    orders: dict[bytes, list[tuple[int, int]]] = {}
    for c, (column_deps, column_starts, column_ends) in enumerate(
        zip(dep_grid.T, start_grid.T, end_grid.T, strict=False)
    ):
        if c == ncols:
            break
        if not c % _CANCEL_EVERY and cancelled():
            raise SimulationCancelled
        if chained_list[c]:
            _chain_column(
                c, columns, end, column_deps, column_starts, column_ends, previous, hop, orders
            )
        else:
            # start = max(the stage's previous end, the input's end + hop); end = start + op
            # time (added the other way round: IEEE addition commutes, bit for bit).
            take(column_deps, out=column_starts, mode="clip")
            if hop:
                column_starts += hop
            maximum(previous, column_starts, out=column_starts)
            column_ends += column_starts
        previous = column_ends
    # Each stage's starts: a view of its row of the grid, no copy.
    return [start_grid[r, shift[r] : shift[r] + lengths[r]] for r in range(p)]


def _shifts(p: int, gaps: dict[tuple[int, int], int]) -> IntArray | None:
    """The least non-negative column shifts with shift[to] >= shift[from] + gap for every pair
    of stages (Bellman-Ford, a round over all pairs at a time); None when they do not settle
    within :data:`_MAX_SHIFT_ROUNDS` rounds."""
    shift = np.zeros(p, dtype=np.int64)
    if not gaps:
        return shift
    pairs = np.array(list(gaps), dtype=np.int64)
    wanted_gaps = np.array(list(gaps.values()), dtype=np.int64)
    for _ in range(_MAX_SHIFT_ROUNDS):
        new = shift.copy()
        np.maximum.at(new, pairs[:, 1], shift[pairs[:, 0]] + wanted_gaps)
        if np.array_equal(new, shift):
            return shift
        shift = new
    return None


def _chain_column(
    c: int,
    columns: int,
    end: FloatArray,
    deps: npt.NDArray[np.int32],
    column_starts: FloatArray,
    column_ends: FloatArray,
    previous: FloatArray,
    hop: float,
    orders: dict[bytes, list[tuple[int, int]]],
) -> None:
    """Column ``c`` of a grid ``columns`` wide, where some ops take their input from an op of
    the same column: each op after its input, one at a time, in Python floats;
    ``column_ends`` holds the ops' durations on entry and their ends on return. The order
    (Kahn's) depends only on which stage's op each op waits for, the same in most such columns
    (GPipe's are all alike): ``orders`` keeps it by that pattern.

    Raises:
        RuntimeError: ops of the column wait for each other (a schedule that deadlocks).
    """
    parents = np.where(deps % columns == c, deps // columns, -1)
    key = parents.tobytes()
    order = orders.get(key)
    if order is None:
        order = orders[key] = _kahn_order(parents.tolist(), c)
    durations, previous_list = column_ends.tolist(), previous.tolist()
    # The inputs' ends (those in this column are taken from ``ends`` instead).
    arrived = end.take(deps, mode="clip").tolist()
    p = len(durations)
    starts, ends = [0.0] * p, [0.0] * p
    for r, parent in order:
        began = max(previous_list[r], (arrived[r] if parent < 0 else ends[parent]) + hop)
        starts[r] = began
        ends[r] = began + durations[r]
    column_starts[:] = starts
    column_ends[:] = ends


def _kahn_order(parents: list[int], c: int) -> list[tuple[int, int]]:
    """(stage, the stage of its input in the same column or -1), each after its input.

    Raises:
        RuntimeError: ops of column ``c`` wait for each other (a schedule that deadlocks).
    """
    waiting: dict[int, list[int]] = {}
    ready = []
    for r, parent in enumerate(parents):
        if parent < 0:
            ready.append(r)
        else:
            waiting.setdefault(parent, []).append(r)
    order = []
    while ready:
        r = ready.pop()
        order.append((r, parents[r]))
        ready.extend(waiting.pop(r, ()))
    if len(order) != len(parents):
        raise RuntimeError(f"ops of column {c} wait for each other: the schedule deadlocks")
    return order


def _run(
    spec: PipelineSpec,
    actions: list[StageActions],
    op_durations: list[list[float]],
    cancelled: Callable[[], bool] = _never,
) -> list[list[float]]:
    """Start time of every action: each stage in its order, each op after its inputs.

    Op ids are ``(code·S + virtual stage)·m + micro-batch`` with S = p·v virtual stages. Only the
    input from another virtual stage is looked up: a stage's own F precedes its B, and its B its W,
    in every schedule built here (``validate_schedule`` checks it). A stage whose next action waits
    for an op not yet run is parked on that op and resumed when it ends, so every op is handled
    once: the cost is linear in the number of ops.
    """
    p, m = spec.stages, spec.num_microbatches
    n_virtual = p * spec.virtual_stages
    # Neighbouring virtual stages always sit on different stages when p > 1.
    hop = spec.p2p_time if p > 1 else 0.0
    ids: list[list[int]] = []
    needs: list[list[int]] = []
    for r, stage in enumerate(actions):
        virtual = stage.chunks.astype(np.int64) * p + r
        op_ids = (stage.codes.astype(np.int64) * n_virtual + virtual) * m + stage.micro_batches
        need_ids = np.full(op_ids.size, -1, dtype=np.int64)
        forward = (stage.codes == F_CODE) & (virtual > 0)
        need_ids[forward] = op_ids[forward] - m
        backward = (stage.codes == B_CODE) & (virtual < n_virtual - 1)
        need_ids[backward] = op_ids[backward] + m
        ids.append(op_ids.tolist())
        needs.append(need_ids.tolist())
    end_at = [-1.0] * (3 * n_virtual * m)
    parked = [-1] * (3 * n_virtual * m)
    position = [0] * p
    free = [0.0] * p
    starts: list[list[float]] = [[] for _ in range(p)]
    ready_stages = list(range(p - 1, -1, -1))
    resumed = 0
    while ready_stages:
        resumed += 1
        if not resumed % _CANCEL_EVERY and cancelled():
            raise SimulationCancelled
        r = ready_stages.pop()
        stage_ids, stage_needs, stage_durations = ids[r], needs[r], op_durations[r]
        record = starts[r].append
        i, n, clock = position[r], len(stage_ids), free[r]
        while i < n:
            need = stage_needs[i]
            if need >= 0:
                arrived = end_at[need]
                if arrived < 0:
                    parked[need] = r
                    break
                arrived += hop
                if arrived > clock:
                    clock = arrived
            record(clock)
            clock += stage_durations[i]
            op = stage_ids[i]
            end_at[op] = clock
            if parked[op] >= 0:
                ready_stages.append(parked[op])
            i += 1
        position[r], free[r] = i, clock
    stuck = [r for r in range(p) if position[r] < len(ids[r])]
    if stuck:
        raise RuntimeError(f"schedule {spec.schedule} deadlocks on stages {stuck}")
    return starts


def validate_schedule(result: PipelineResult) -> list[str]:
    """Check a simulated timeline; returns the problems found (empty when it is valid).

    Checks that every stage runs every op of each of its chunks for every micro-batch exactly
    once (F and BW, or F, B and W), with the expected duration, one at a time, and never before
    its inputs: F after the previous virtual stage's F, B after its own F and the next virtual
    stage's B (both plus the p2p time when they come from another stage), W after its own B.
    """
    spec = result.spec
    p, m, v = spec.stages, spec.num_microbatches, spec.virtual_stages
    hop = spec.p2p_time if p > 1 else 0.0
    d_forward, d_backward, d_weight = stage_op_times(spec)
    kinds = ("F", "B", "W") if spec.split_backward else ("F", "BW")
    duration = {"F": d_forward, "B": d_backward, "BW": d_backward, "W": d_weight}
    tolerance = 1e-9 * max(1.0, result.makespan)
    problems: list[str] = []
    if len(result.timeline) != p:
        return [f"{len(result.timeline)} stages in the timeline, expected {p}"]
    ends: dict[tuple[str, int, int], float] = {}
    starts: dict[tuple[str, int, int], float] = {}
    for r, ops in enumerate(result.timeline):
        previous_end = 0.0
        for op in ops:
            if op.kind not in kinds or not 0 <= op.chunk < v or not 0 <= op.micro_batch < m:
                problems.append(f"stage {r}: unexpected op {op}")
                continue
            key = (op.kind, op.chunk * p + r, op.micro_batch)
            if key in ends:
                problems.append(f"stage {r}: {op.kind}{op.micro_batch} chunk {op.chunk} runs twice")
            ends[key] = op.end
            starts[key] = op.start
            if op.start < previous_end - tolerance:
                problems.append(f"stage {r}: {op} overlaps the previous op")
            if abs(op.end - op.start - duration[op.kind]) > tolerance:
                problems.append(f"stage {r}: {op} does not last {duration[op.kind]}")
            previous_end = op.end
    last = p * v - 1
    for vs in range(p * v):
        for mb in range(m):
            for kind in kinds:
                if (kind, vs, mb) not in ends:
                    problems.append(f"stage {vs % p}: {kind}{mb} chunk {vs // p} never runs")
    if problems:
        return problems

    def after(kind: str, vs: int, mb: int, dep: tuple[str, int, int], gap: float) -> None:
        if starts[(kind, vs, mb)] < ends[dep] + gap - tolerance:
            problems.append(
                f"stage {vs % p}: {kind}{mb} chunk {vs // p} starts before {dep[0]}{dep[2]} "
                f"of virtual stage {dep[1]} ends"
            )

    backward = kinds[1]
    for vs in range(p * v):
        for mb in range(m):
            if vs:
                after("F", vs, mb, ("F", vs - 1, mb), hop)
            after(backward, vs, mb, ("F", vs, mb), 0.0)
            if vs != last:
                after(backward, vs, mb, (backward, vs + 1, mb), hop)
            if spec.split_backward:
                after("W", vs, mb, ("B", vs, mb), 0.0)
    return problems
