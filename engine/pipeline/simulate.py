"""The simulator: the earliest timeline a schedule's order allows, its bubble, and a check of
the schedule's dependencies.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import cached_property
from itertools import repeat
from operator import add

import numpy as np

from engine.errors import InputError
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
    MAX_SIMULATED_CHUNK_MICROBATCHES,
    SPLIT_KINDS,
    PipelineOp,
    PipelineSpec,
)

# A float residue below this share of the iteration time is rounding, not a bubble.
_RELATIVE_EPS = 1e-12


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
    """What :func:`simulate` keeps to build the timeline on demand."""

    kinds: tuple[str, str, str]
    actions: list[StageActions]
    starts: list[list[float]]
    durations: list[list[float]]

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
                        stage_starts,
                        map(add, stage_starts, stage_durations),
                        strict=True,
                    ),
                )
            )
            for stage, stage_starts, stage_durations in zip(
                self.actions, self.starts, self.durations, strict=True
            )
        )


def simulate(spec: PipelineSpec) -> PipelineResult:
    """Simulate ``spec``'s schedule and measure its bubble and activations in flight.

    Returns:
        A :class:`PipelineResult`; its ``closed_form`` is the paper's value for the same spec.

    Raises:
        InputError: on ``num_microbatches`` when p·m·v exceeds
            :data:`MAX_SIMULATED_CHUNK_MICROBATCHES`.
    """
    p, m, v = spec.stages, spec.num_microbatches, spec.virtual_stages
    if p * m * v > MAX_SIMULATED_CHUNK_MICROBATCHES:
        raise InputError(
            "num_microbatches",
            f"p*m*v = {p * m * v} is more than this simulator runs "
            f"({MAX_SIMULATED_CHUNK_MICROBATCHES}); lower m, p or v",
        )
    actions = stage_actions(spec)
    durations = np.array(stage_op_times(spec))
    op_durations = [durations[stage.codes].tolist() for stage in actions]
    starts = _run(spec, actions, op_durations)
    makespan = max(
        stage_starts[-1] + stage_durations[-1]
        for stage_starts, stage_durations in zip(starts, op_durations, strict=True)
    )
    iteration = max(
        stage_starts[-1] + stage_durations[-1] - stage_starts[0]
        for stage_starts, stage_durations in zip(starts, op_durations, strict=True)
    )
    ideal = spec.ideal_time
    bubbles = tuple(
        _tidy(iteration - float(np.bincount(stage.codes, minlength=3) @ durations), iteration)
        for stage in actions
    )
    worst = max(bubbles)
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
            SPLIT_KINDS if spec.split_backward else JOINED_KINDS, actions, starts, op_durations
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


def _run(
    spec: PipelineSpec, actions: list[StageActions], op_durations: list[list[float]]
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
        virtual = stage.chunks * p + r
        op_ids = (stage.codes * n_virtual + virtual) * m + stage.micro_batches
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
    while ready_stages:
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
