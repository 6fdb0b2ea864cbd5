"""Pipeline-parallel schedules: simulate them, measure the bubble, draw them as text.

A schedule is a list of typed actions per pipeline stage (``F`` forward, ``B`` backward for the
input gradient, ``W`` backward for the weight gradient, ``BW`` both as one op), in the order the
stage runs them, as in PyTorch's ``torch.distributed.pipelining`` schedules. One simulator, one
text renderer and one validator consume those lists.

Schedules (p stages, m micro-batches, v model chunks per stage):

- ``gpipe``: all forwards, then all backwards (Huang et al. 2019, GPipe).
- ``1f1b``: p − r forwards on stage r, then one backward and one forward alternately
  (Narayanan et al. 2021 §2.2.1, "PipeDream-Flush").
- ``interleaved-1f1b``: stage r holds chunks r, r + p, …; Megatron-LM's order
  (Narayanan et al. 2021 §2.2.2). m must be a multiple of p.
- ``zb-h1``: 1F1B's forwards with B and W split; stage r defers its W by r micro-batches to
  fill the cool-down (Qi et al. 2023 §3, "ZB-H1"; the order of PyTorch's
  ``ScheduleInterleavedZeroBubble`` with one chunk).
- ``zb-h2``: 2(p − r) − 1 forwards on stage r before its first B, W deferred by 2r, so each
  stage's ops form one unbroken block (Qi et al. 2023 §3, "ZB-H2").

Schedules without a B/W split (``gpipe``, ``1f1b``, ``interleaved-1f1b``) run B and W as one op
``BW`` of t_B + t_W. Time is in "op-time units": whatever unit the durations are given in. With v
chunks, one chunk's op takes 1/v of the stage's op time, so the ideal (bubble-free) time of every
stage is m(t_F + t_B + t_W) for every schedule.

Simulation: a stage runs its action list in order; an action starts when the stage is free and its
inputs have arrived (the previous virtual stage's F, the next virtual stage's B, or the same stage's
own F or B), plus ``p2p_time`` when the input comes from another stage. The result is the earliest
timeline the order allows; it is computed in one pass over the ops, driven by op completions.

Bubble conventions (both are reported; the sources disagree on the denominator):

- bubble/ideal: idle time over the ideal time m(t_F + t_B + t_W), as Narayanan et al. 2021 §2.2
  and the HF Ultra-Scale Playbook state it: (p − 1)/m for GPipe and 1F1B.
- bubble/total: idle time over the iteration time, as GPipe's (p − 1)/(m + p − 1) and the
  Zero-Bubble paper's "bubble rate". f_total = f_ideal / (1 + f_ideal).

The bubble time of a stage is the iteration time minus the time the stage computes. The iteration
time is the longest stage span (first op start to last op end), which is how Qi et al. 2023 §5
measure a schedule's cost: when consecutive iterations follow each other, the idle time before a
stage's first op and after its last op overlaps the neighbouring iterations. For every schedule but
ZB-H2 the longest span is the makespan; ZB-H2's stages are shifted copies of one block, so its
bubble is 0 although the one-iteration makespan is longer by (p − 1)·t_F.

Closed forms hold under conditions that :class:`ClosedForm` states and checks (``applies``): no
p2p time; m >= p for ZB-H1, m >= 2p − 1 for ZB-H2, and T_W <= T_F for both. Qi et al. draw their
layouts for equal times; these wider conditions are where the simulated orders reach the formula,
which tests/test_pipeline.py checks over a grid and over random specs.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from fractions import Fraction
from functools import cached_property
from itertools import repeat
from operator import add
from typing import Final, NamedTuple

import numpy as np
import numpy.typing as npt

from engine.errors import InputError

IntArray = npt.NDArray[np.int64]

SCHEDULES: Final[tuple[str, ...]] = ("gpipe", "1f1b", "interleaved-1f1b", "zb-h1", "zb-h2")
"""Schedule names, as the CLI and the Bubble pane offer them."""

SPLIT_BACKWARD: Final[frozenset[str]] = frozenset({"zb-h1", "zb-h2"})
"""Schedules that run B (input gradient) and W (weight gradient) as separate ops."""

MAX_SIMULATED_CHUNK_MICROBATCHES: Final[int] = 2**20
"""Largest p·m·v :func:`simulate` accepts (about 3 million ops, a few seconds)."""

SOURCE_GPIPE: Final = "Huang et al. 2019, GPipe (bubble/total (p-1)/(m+p-1))"
SOURCE_1F1B: Final = "Narayanan et al. 2021, SC'21, §2.2.1 (bubble/ideal (p-1)/m)"
SOURCE_INTERLEAVED: Final = "Narayanan et al. 2021, SC'21, §2.2.2 (bubble/ideal (p-1)/(m*v))"
SOURCE_ZERO_BUBBLE: Final = "Qi et al. 2023, Zero Bubble Pipeline Parallelism, Table 2"

CONVENTIONS: Final = (
    "bubble/ideal = idle / m(t_F+t_B+t_W) (Narayanan et al. 2021; HF Ultra-Scale Playbook); "
    "bubble/total = idle / iteration time (GPipe (p-1)/(m+p-1); Qi et al. 2023 bubble rate)"
)
"""The two bubble conventions, named with their sources."""

_F, _B, _W = 0, 1, 2
_KIND_SPLIT = ("F", "B", "W")
_KIND_JOINED = ("F", "BW", "W")
# A float residue below this share of the iteration time is rounding, not a bubble.
_RELATIVE_EPS = 1e-12


@dataclass(frozen=True)
class PipelineSpec:
    """One pipeline-parallel configuration to simulate.

    Attributes:
        schedule: one of :data:`SCHEDULES`.
        stages: pipeline stages p (ranks), a whole number >= 1.
        micro_batches: micro-batches per iteration m, a whole number >= 1; a multiple of p for
            ``interleaved-1f1b``.
        virtual_stages: model chunks per stage v (``interleaved-1f1b`` only; 1 otherwise).
        t_forward: t_F, forward time of one micro-batch on one stage (op-time units, > 0).
        t_backward_input: t_B, input-gradient backward time (op-time units, > 0).
        t_backward_weight: t_W, weight-gradient backward time (op-time units, >= 0).
        p2p_time: time to send an activation or a gradient to the next stage (op-time units, >= 0).

    Raises:
        InputError: naming the field, for an unknown schedule, a count that is zero, negative or not
            a whole number, v < 1 (or v > 1 outside ``interleaved-1f1b``), m not a multiple of p
            for ``interleaved-1f1b``, or a time that is negative, zero (t_F, t_B), NaN or infinite.
    """

    schedule: str
    stages: int
    micro_batches: int
    virtual_stages: int = 1
    t_forward: float = 1.0
    t_backward_input: float = 1.0
    t_backward_weight: float = 1.0
    p2p_time: float = 0.0

    def __post_init__(self) -> None:
        if self.schedule not in SCHEDULES:
            raise InputError(
                "schedule", f"unknown schedule {self.schedule!r}; use one of {', '.join(SCHEDULES)}"
            )
        for name in ("stages", "micro_batches", "virtual_stages"):
            object.__setattr__(self, name, _whole(name, getattr(self, name)))
        for name, allow_zero in (
            ("t_forward", False),
            ("t_backward_input", False),
            ("t_backward_weight", True),
            ("p2p_time", True),
        ):
            object.__setattr__(self, name, _time(name, getattr(self, name), allow_zero))
        if self.virtual_stages > 1 and self.schedule != "interleaved-1f1b":
            raise InputError(
                "virtual_stages",
                f"only interleaved-1f1b splits a stage into chunks; use 1 with {self.schedule}",
            )
        if self.schedule == "interleaved-1f1b" and self.micro_batches % self.stages:
            lower = self.micro_batches // self.stages * self.stages
            upper = lower + self.stages
            hint = f"try m={lower} or m={upper}" if lower else f"try m={upper}"
            raise InputError(
                "micro_batches",
                "Interleaved 1F1B needs m to be a multiple of p "
                f"(m={self.micro_batches}, p={self.stages}); {hint}",
            )

    @property
    def split_backward(self) -> bool:
        """True when B and W run as separate ops (ZB-H1, ZB-H2)."""
        return self.schedule in SPLIT_BACKWARD

    @property
    def num_ops(self) -> int:
        """Ops the schedule runs over all stages: p·m·v times 2 (F, BW) or 3 (F, B, W)."""
        kinds = 3 if self.split_backward else 2
        return kinds * self.stages * self.micro_batches * self.virtual_stages

    @property
    def ideal_time(self) -> float:
        """m(t_F + t_B + t_W): the time each stage computes, in op-time units."""
        return self.micro_batches * (
            self.t_forward + self.t_backward_input + self.t_backward_weight
        )


def _whole(field: str, value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise InputError(field, f"must be a whole number, got {value!r}")
    if isinstance(value, float):
        if math.isnan(value) or math.isinf(value):
            raise InputError(field, f"must be a whole number, got {value}")
        if value != math.floor(value):
            raise InputError(field, f"must be a whole number, got {value:g}")
    if value < 1:
        raise InputError(field, f"must be at least 1, got {value:g}")
    return int(value)


def _time(field: str, value: object, allow_zero: bool) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise InputError(field, f"must be a number, got {value!r}")
    result = float(value)
    if math.isnan(result):
        raise InputError(field, "is not a number (NaN)")
    if math.isinf(result):
        raise InputError(field, "must be finite")
    if result < 0:
        raise InputError(field, "must not be negative")
    if result == 0 and not allow_zero:
        raise InputError(field, "must be greater than zero")
    return result


def micro_batches_from_batch(global_batch: int, micro_batch_size: int, dp: int) -> int:
    """m = global batch / (micro-batch size × data-parallel size).

    Args:
        global_batch: samples per iteration over all data-parallel replicas (whole number >= 1).
        micro_batch_size: samples per micro-batch b (whole number >= 1).
        dp: data-parallel size (whole number >= 1).

    Returns:
        The number of micro-batches m each pipeline runs per iteration.

    Raises:
        InputError: naming ``global_batch``, ``micro_batch_size`` or ``dp`` when a value is not a
            whole number >= 1, or ``global_batch`` when it is not a multiple of b × DP (m would
            be zero or fractional).
    """
    g = _whole("global_batch", global_batch)
    b = _whole("micro_batch_size", micro_batch_size)
    d = _whole("dp", dp)
    per_pipeline = b * d
    if g % per_pipeline:
        raise InputError(
            "global_batch",
            f"{g} is not a multiple of micro-batch size x DP = {b} x {d} = {per_pipeline} "
            f"(m would be {g / per_pipeline:g})",
        )
    return g // per_pipeline


class PipelineAction(NamedTuple):
    """One entry of a stage's schedule: what to run, not when."""

    kind: str
    """``F``, ``B``, ``W``, or ``BW`` (B and W as one op)."""
    micro_batch: int
    chunk: int
    """Model chunk on this stage, 0 … v − 1 (virtual stage chunk·p + stage)."""


class PipelineOp(NamedTuple):
    """One op of a simulated timeline, with its start and end in op-time units."""

    kind: str
    micro_batch: int
    chunk: int
    start: float
    end: float


@dataclass(frozen=True)
class ClosedForm:
    """The paper's closed-form bubble for a spec, with its convention and source.

    Attributes:
        formula: the formula as the paper states it, with the quantity it gives and its value.
        value: the formula's value: bubble/ideal (GPipe, 1F1B, interleaved) or the bubble time per
            stage in op-time units (ZB-H1, ZB-H2), as ``formula`` names it.
        source: paper and section or table.
        bubble_time: the same bubble as idle time per stage (op-time units).
        bubble_over_ideal: the same bubble over the ideal time m(t_F + t_B + t_W).
        bubble_fraction: the same bubble over the iteration time (bubble/total).
        assumptions: the conditions under which the schedule's timeline reaches the formula.
        applies: whether ``assumptions`` hold for this spec (then the simulation equals it).
    """

    formula: str
    value: float
    source: str
    bubble_time: float
    bubble_over_ideal: float
    bubble_fraction: float
    assumptions: str
    applies: bool


@dataclass(frozen=True)
class PipelineResult:
    """A simulated schedule.

    Attributes:
        spec: the simulated configuration.
        micro_batches: m.
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
    micro_batches: int
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
    actions: list[_StageActions]
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


def bubble_over_ideal(bubble: float, ideal: float) -> float:
    """Bubble time over the ideal compute time, the convention of Narayanan et al. 2021 §2.2.1
    and the Ultra-Scale Playbook (``(p-1)/m`` for GPipe and 1F1B). Both in op-time units."""
    return bubble / ideal


def bubble_fraction(bubble: float, ideal: float) -> float:
    """Bubble time over the whole iteration, ``bubble / (bubble + ideal)``: GPipe's
    ``(p-1)/(m+p-1)`` and the Zero-Bubble paper's measured bubble rate. Equal to
    f_ideal / (1 + f_ideal) of :func:`bubble_over_ideal`."""
    return bubble / (bubble + ideal)


def closed_form_bubble(spec: PipelineSpec) -> ClosedForm:
    """The paper's closed-form bubble for ``spec``, with its source.

    - GPipe, 1F1B: bubble/ideal (p−1)/m (Narayanan et al. 2021 §2.2.1); bubble/total
      (p−1)/(m+p−1) (GPipe, Huang et al. 2019).
    - Interleaved 1F1B: bubble/ideal (p−1)/(m·v) (Narayanan et al. 2021 §2.2.2).
    - ZB-H1: bubble time (p−1)(T_F+T_B−T_W); ZB-H2: (p−1)(T_F+T_B−2T_W), both clipped at 0
      (Qi et al. 2023, Table 2).

    Returns:
        A :class:`ClosedForm` giving the bubble in both conventions and whether the formula's
        assumptions hold for ``spec``. Nothing is simulated, so any size is accepted.
    """
    p, m, v = spec.stages, spec.micro_batches, spec.virtual_stages
    tf, tb, tw = spec.t_forward, spec.t_backward_input, spec.t_backward_weight
    ideal = spec.ideal_time
    no_p2p = spec.p2p_time == 0
    if spec.schedule in ("gpipe", "1f1b"):
        over_ideal = (p - 1) / m
        formula = (
            f"bubble/ideal = (p-1)/m = {p - 1}/{m} = {_num(over_ideal)}; "
            f"bubble/total = (p-1)/(m+p-1) = {p - 1}/{m + p - 1}"
        )
        source = f"{SOURCE_1F1B}; {SOURCE_GPIPE}"
        return _closed(
            formula, over_ideal, source, over_ideal * ideal, ideal, "no p2p time", no_p2p
        )
    if spec.schedule == "interleaved-1f1b":
        over_ideal = (p - 1) / (m * v)
        formula = f"bubble/ideal = (p-1)/(m*v) = {p - 1}/({m}*{v}) = {_num(over_ideal)}"
        return _closed(
            formula,
            over_ideal,
            SOURCE_INTERLEAVED,
            over_ideal * ideal,
            ideal,
            "m a multiple of p, no p2p time",
            no_p2p,
        )
    if spec.schedule == "zb-h1":
        bubble = max(0.0, (p - 1) * (tf + tb - tw))
        formula = f"bubble time per stage = max(0, (p-1)(T_F+T_B-T_W)) = {_num(bubble)}"
        return _closed(
            formula,
            bubble,
            SOURCE_ZERO_BUBBLE,
            bubble,
            ideal,
            "m >= p, T_W <= T_F, no p2p time",
            m >= p and tw <= tf and no_p2p,
        )
    bubble = max(0.0, (p - 1) * (tf + tb - 2 * tw))
    formula = f"bubble time per stage = max(0, (p-1)(T_F+T_B-2T_W)) = {_num(bubble)}"
    return _closed(
        formula,
        bubble,
        SOURCE_ZERO_BUBBLE,
        bubble,
        ideal,
        "m >= 2p-1, T_W <= T_F, no p2p time",
        m >= 2 * p - 1 and tw <= tf and no_p2p,
    )


def _closed(
    formula: str,
    value: float,
    source: str,
    bubble: float,
    ideal: float,
    assumptions: str,
    applies: bool,
) -> ClosedForm:
    return ClosedForm(
        formula=formula,
        value=value,
        source=source,
        bubble_time=bubble,
        bubble_over_ideal=bubble_over_ideal(bubble, ideal),
        bubble_fraction=bubble_fraction(bubble, ideal),
        assumptions=assumptions,
        applies=applies,
    )


def _num(value: float) -> str:
    return f"{value:.6g}"


def schedule_actions(spec: PipelineSpec) -> tuple[tuple[PipelineAction, ...], ...]:
    """The schedule of ``spec``: per stage, the actions in the order the stage runs them."""
    kinds = _KIND_SPLIT if spec.split_backward else _KIND_JOINED
    return tuple(
        tuple(
            PipelineAction(kinds[code], mb, chunk)
            for code, mb, chunk in zip(
                stage.codes.tolist(),
                stage.micro_batches.tolist(),
                stage.chunks.tolist(),
                strict=True,
            )
        )
        for stage in _actions(spec)
    )


@dataclass(frozen=True)
class _StageActions:
    """One stage's schedule as parallel arrays: kind code, micro-batch and chunk of each action."""

    codes: IntArray
    micro_batches: IntArray
    chunks: IntArray


def _actions(spec: PipelineSpec) -> list[_StageActions]:
    p, m = spec.stages, spec.micro_batches
    if spec.schedule == "gpipe":
        return [_gpipe(m) for _ in range(p)]
    if spec.schedule == "interleaved-1f1b":
        return [_interleaved(p, m, spec.virtual_stages, r) for r in range(p)]
    if spec.schedule == "1f1b":
        return [_flush(m, min(p - r, m), None) for r in range(p)]
    if spec.schedule == "zb-h1":
        return [_flush(m, min(p - r, m), r) for r in range(p)]
    return [_flush(m, min(2 * (p - r) - 1, m), 2 * r) for r in range(p)]


def _gpipe(m: int) -> _StageActions:
    """All m forwards, then all m backwards, in micro-batch order (as PyTorch's ScheduleGPipe)."""
    every = np.arange(m)
    codes = np.repeat(np.array([_F, _B]), m)
    return _StageActions(codes, np.concatenate([every, every]), np.zeros(2 * m, dtype=np.int64))


def _flush(m: int, warm_forwards: int, w_lag: int | None) -> _StageActions:
    """1F1B-shaped order: ``warm_forwards`` forwards, then cycles of B, (W), F.

    ``w_lag`` is None when B and W run as one op. Otherwise cycle j runs W of micro-batch j − lag
    (when j >= lag), so ``w_lag`` weight gradients wait and fill the idle time at the end.
    """
    cycle = np.arange(m)
    codes = np.empty((m, 3), dtype=np.int64)
    batches = np.empty((m, 3), dtype=np.int64)
    codes[:, 0], batches[:, 0] = _B, cycle
    codes[:, 1], batches[:, 1] = _W, cycle - (w_lag or 0)
    codes[:, 2], batches[:, 2] = _F, cycle + warm_forwards
    keep = np.empty((m, 3), dtype=bool)
    keep[:, 0] = True
    keep[:, 1] = w_lag is not None and cycle >= (w_lag or 0)
    keep[:, 2] = cycle + warm_forwards < m
    head = np.arange(warm_forwards)
    tail = np.arange(max(0, m - w_lag), m) if w_lag is not None else np.arange(0)
    all_codes = np.concatenate([np.full(head.size, _F), codes[keep], np.full(tail.size, _W)])
    all_batches = np.concatenate([head, batches[keep], tail])
    return _StageActions(all_codes, all_batches, np.zeros(all_codes.size, dtype=np.int64))


def _interleaved(p: int, m: int, v: int, r: int) -> _StageActions:
    """Megatron-LM's interleaved 1F1B order for stage r: groups of p micro-batches per chunk.

    The k-th forward runs chunk (k // p) mod v of micro-batch (k // pv)·p + k mod p; the k-th
    backward the same micro-batch on chunk v − 1 − (k // p) mod v.
    """
    total = m * v
    warm = min((p - r - 1) * 2 + (v - 1) * p, total)
    steady = total - warm
    k = np.arange(total)
    batch = (k // (p * v)) * p + k % p
    chunk = (k // p) % v
    codes = np.empty(2 * total, dtype=np.int64)
    batches = np.empty(2 * total, dtype=np.int64)
    chunks = np.empty(2 * total, dtype=np.int64)
    middle = slice(warm, warm + 2 * steady)
    for array, forward, backward in (
        (codes, np.full(total, _F), np.full(total, _B)),
        (batches, batch, batch),
        (chunks, chunk, v - 1 - chunk),
    ):
        array[:warm] = forward[:warm]
        array[middle][0::2] = forward[warm:]
        array[middle][1::2] = backward[:steady]
        array[warm + 2 * steady :] = backward[steady:]
    return _StageActions(codes, batches, chunks)


def check_simulated_size(spec: PipelineSpec) -> None:
    """Refuse a spec larger than :func:`simulate` runs, before any work.

    Raises:
        InputError: on ``micro_batches`` when p·m·v exceeds
            :data:`MAX_SIMULATED_CHUNK_MICROBATCHES`.
    """
    size = spec.stages * spec.micro_batches * spec.virtual_stages
    if size > MAX_SIMULATED_CHUNK_MICROBATCHES:
        raise InputError(
            "micro_batches",
            f"p*m*v = {size} is more than this simulator runs "
            f"({MAX_SIMULATED_CHUNK_MICROBATCHES}); lower m, p or v",
        )


def simulate(spec: PipelineSpec) -> PipelineResult:
    """Simulate ``spec``'s schedule and measure its bubble and activations in flight.

    Returns:
        A :class:`PipelineResult`; its ``closed_form`` is the paper's value for the same spec.

    Raises:
        InputError: on ``micro_batches`` when p·m·v exceeds
            :data:`MAX_SIMULATED_CHUNK_MICROBATCHES`.
    """
    check_simulated_size(spec)
    m, v = spec.micro_batches, spec.virtual_stages
    actions = _actions(spec)
    durations = np.array(_durations(spec))
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
        int(np.cumsum((stage.codes == _F).astype(np.int64) - (stage.codes == _B)).max()) / v
        for stage in actions
    )
    return PipelineResult(
        spec=spec,
        micro_batches=m,
        bubble_time=bubbles,
        bubble_over_ideal=bubble_over_ideal(worst, ideal),
        bubble_fraction=bubble_fraction(worst, ideal),
        makespan=makespan,
        iteration_time=iteration,
        ideal_time=ideal,
        peak_in_flight_microbatches=peaks,
        closed_form=closed_form_bubble(spec),
        _trace=_Trace(
            _KIND_SPLIT if spec.split_backward else _KIND_JOINED, actions, starts, op_durations
        ),
    )


def _durations(spec: PipelineSpec) -> tuple[float, float, float]:
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
    spec: PipelineSpec, actions: list[_StageActions], op_durations: list[list[float]]
) -> list[list[float]]:
    """Start time of every action: each stage in its order, each op after its inputs.

    Op ids are ``(code·S + virtual stage)·m + micro-batch`` with S = p·v virtual stages. Only the
    input from another virtual stage is looked up: a stage's own F precedes its B, and its B its W,
    in every schedule built here (``validate_schedule`` checks it). A stage whose next action waits
    for an op not yet run is parked on that op and resumed when it ends, so every op is handled
    once: the cost is linear in the number of ops.
    """
    p, m = spec.stages, spec.micro_batches
    n_virtual = p * spec.virtual_stages
    # Neighbouring virtual stages always sit on different stages when p > 1.
    hop = spec.p2p_time if p > 1 else 0.0
    ids: list[list[int]] = []
    needs: list[list[int]] = []
    for r, stage in enumerate(actions):
        virtual = stage.chunks * p + r
        op_ids = (stage.codes * n_virtual + virtual) * m + stage.micro_batches
        need_ids = np.full(op_ids.size, -1, dtype=np.int64)
        forward = (stage.codes == _F) & (virtual > 0)
        need_ids[forward] = op_ids[forward] - m
        backward = (stage.codes == _B) & (virtual < n_virtual - 1)
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
    p, m, v = spec.stages, spec.micro_batches, spec.virtual_stages
    hop = spec.p2p_time if p > 1 else 0.0
    d_forward, d_backward, d_weight = _durations(spec)
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


MAX_TIMELINE_COLUMNS: Final[int] = 2000
"""Most time steps a timeline is drawn with (columns per stage at one column per step)."""
ROUNDING_TOLERANCE: Final[float] = 0.05
"""When op times are rounded to draw, none moves by more than this share of the shortest op."""
_QUANTUM_DENOMINATOR: Final[int] = 1000
_NICE_STEPS: Final = (5, 2, 1)


@dataclass(frozen=True)
class TimelineDrawing:
    """A timeline drawn on a grid of whole columns per time unit.

    Every op of one kind is drawn exactly ``widths[kind]`` columns wide, at column
    ``start / unit × columns_per_unit``: the grid unit divides every op time (and the p2p time),
    so equal operations have equal widths. When no such unit keeps the drawing within
    :data:`MAX_TIMELINE_COLUMNS`, the op times are rounded to a multiple of a coarser unit and the
    schedule is simulated again with them (``rounded`` is then True and ``drawn`` holds the
    rounded simulation; the header says so).

    Attributes:
        header: schedule, scale and makespan. rounding: the rounded op times, or ``""``.
        rows: one line per stage, ``stage r`` then its cells; all the same length, which may
            exceed the width asked for (the caller scrolls).
        legend: what the letters mean and each kind's width in columns.
        unit: op-time units of one grid step. columns_per_unit: whole columns per grid step.
        widths: columns of one op, by kind (``F``, ``B``, ``W``; B includes W when joined).
        rounded: op times were rounded to draw. drawn: the simulation drawn.
    """

    header: str
    rounding: str
    rows: tuple[str, ...]
    legend: str
    unit: float
    columns_per_unit: int
    widths: dict[str, int]
    rounded: bool
    drawn: PipelineResult

    def text(self) -> str:
        """Header, rounding note, rows and legend, one per line (ASCII)."""
        return "\n".join([self.header, *([self.rounding] if self.rounding else []), *self.rows,
                          self.legend])  # fmt: skip


def _op_times(spec: PipelineSpec) -> dict[str, float]:
    """The durations a timeline is made of: one chunk's F, B (or B+W) and W, and the hop."""
    forward, backward, weight = _durations(spec)
    times = {"F": forward, "B": backward, "W": weight if spec.split_backward else 0.0}
    times["p2p"] = spec.p2p_time if spec.stages > 1 else 0.0
    return times


def _exact_unit(times: list[float]) -> float | None:
    """The largest unit dividing every time (a fraction with a small denominator), or None."""
    fractions: list[Fraction] = []
    for value in times:
        fraction = Fraction(value).limit_denominator(_QUANTUM_DENOMINATOR)
        if abs(float(fraction) - value) > 1e-9 * max(1.0, value):
            return None
        fractions.append(fraction)
    scale = math.lcm(*(f.denominator for f in fractions))
    whole = math.gcd(*(int(f * scale) for f in fractions))
    return whole / scale


def _rounded(spec: PipelineSpec, unit: float) -> PipelineSpec:
    """``spec`` with every op time (and the p2p time) rounded to a multiple of ``unit``."""
    v = spec.virtual_stages
    times = _op_times(spec)

    def op(value: float) -> float:
        return round(value / unit) * unit

    return PipelineSpec(
        schedule=spec.schedule,
        stages=spec.stages,
        micro_batches=spec.micro_batches,
        virtual_stages=v,
        t_forward=op(times["F"]) * v,
        t_backward_input=op(times["B"]) * v,
        t_backward_weight=op(times["W"]) * v if spec.split_backward else 0.0,
        p2p_time=op(times["p2p"]),
    )


def _grid(result: PipelineResult) -> tuple[float, PipelineResult, bool]:
    """(unit, the simulation to draw, whether op times were rounded) for :func:`draw_timeline`.

    The exact unit (the largest dividing every op time) when the makespan is at most
    :data:`MAX_TIMELINE_COLUMNS` of it; else the coarsest 1-2-5 unit that moves no op time by
    more than :data:`ROUNDING_TOLERANCE` of the shortest F, B or W, the schedule simulated again
    with the rounded times.

    Raises:
        InputError: on ``micro_batches`` when no drawing within :data:`MAX_TIMELINE_COLUMNS`
            steps keeps the op times within that tolerance.
    """
    spec = result.spec
    op_times = _op_times(spec)
    times = [value for value in op_times.values() if value > 0]
    unit = _exact_unit(times)
    if unit is not None and result.makespan / unit <= MAX_TIMELINE_COLUMNS + 0.5:
        return unit, result, False
    # The shortest compute op (the p2p time is a gap between ops, and may round to 0).
    shortest = min(value for key, value in op_times.items() if key != "p2p" and value > 0)
    ops_per_stage = (3 if spec.split_backward else 2) * spec.micro_batches * spec.virtual_stages
    refused = InputError(
        "micro_batches",
        f"the timeline is not drawn: {ops_per_stage} ops per stage, with these op times, need "
        f"more than {MAX_TIMELINE_COLUMNS} columns; lower m (or v), or use rounder op times",
    )
    if ops_per_stage > MAX_TIMELINE_COLUMNS:
        raise refused
    scale = 10.0 ** math.floor(math.log10(shortest))
    for _ in range(4):  # down to a thousandth of the shortest op
        for step in _NICE_STEPS:
            coarse = step * scale
            if coarse > shortest:
                continue
            errors = (abs(round(t / coarse) * coarse - t) for t in times)
            if max(errors) > ROUNDING_TOLERANCE * shortest:
                continue
            drawn = simulate(_rounded(spec, coarse))
            if drawn.makespan / coarse > MAX_TIMELINE_COLUMNS + 0.5:
                raise refused
            return coarse, drawn, True
        scale /= 10
    raise refused


def draw_timeline(result: PipelineResult, width: int = 80) -> TimelineDrawing:
    """Draw the timeline in ASCII, one row per stage, at a whole number of columns per time unit.

    The unit divides every op time, so each F, B and W op is drawn the same number of columns
    wide wherever it runs; as many columns per unit as fit in ``width``, at least one (then the
    rows are wider than ``width``: the caller scrolls them). An op is its kind's upper-case
    letter, then its micro-batch number when every op has room for it, then lower-case letters;
    ``.`` is idle.

    Raises:
        InputError: on ``width`` when it leaves fewer than 10 columns for the time axis; as
            :func:`_grid` when the schedule has too many ops to draw.
    """
    spec = result.spec
    p = spec.stages
    label_width = len(f"stage {p - 1} ")
    columns = width - label_width
    if columns < 10:
        raise InputError("width", f"must be at least {label_width + 10} for {p} stages")
    unit, drawn, rounded = _grid(result)
    steps = round(drawn.makespan / unit)
    per_unit = max(1, columns // steps)
    times = _op_times(drawn.spec)
    kinds = ("F", "B", "W") if spec.split_backward else ("F", "B")
    widths = {kind: round(times[kind] / unit) * per_unit for kind in kinds}
    digits = min(width for width in widths.values() if width) > len(str(spec.micro_batches - 1))
    rows = []
    for r, ops in enumerate(drawn.timeline):
        cells = ["."] * (steps * per_unit)
        for op in ops:
            letter = op.kind[0]
            if not widths[letter]:  # t_W = 0: the weight gradient takes no time
                continue
            first = round(op.start / unit) * per_unit
            number = str(op.micro_batch) if digits else ""
            fill = [letter.lower()] * (widths[letter] - 1 - len(number))
            cells[first : first + widths[letter]] = [letter, *number, *fill]
        rows.append(f"stage {r}".ljust(label_width) + "".join(cells))
    shape = f"p={p} m={spec.micro_batches}" + (
        f" v={spec.virtual_stages}" if spec.virtual_stages > 1 else ""
    )
    columns_word = "column" if per_unit == 1 else "columns"
    header = (
        f"{spec.schedule} {shape}: {per_unit} {columns_word} per {unit:.6g} op-time units, "
        f"makespan {drawn.makespan:.6g}" + (f" (exact: {result.makespan:.6g})" if rounded else "")
    )
    rounding = ""
    if rounded:
        shown = [*kinds, *(["p2p"] if p > 1 else [])]
        drawn_times = ", ".join(f"{key} {times[key]:.6g}" for key in shown)
        rounding = (
            f"op times rounded to multiples of {unit:.6g} to draw ({drawn_times}); the figures "
            "above use the exact times"
        )
    names = {"F": "F fwd", "B": "B input grad" if spec.split_backward else "B bwd+W",
             "W": "W weight grad"}  # fmt: skip
    sizes = ", ".join(f"{names[kind]} {widths[kind]} col" for kind in kinds)
    then = "then micro-batch; " if digits else ""
    legend = f"{sizes}; {then}lower case: runs; . idle"
    return TimelineDrawing(
        header, rounding, tuple(rows), legend, unit, per_unit, widths, rounded, drawn
    )


def render_timeline(result: PipelineResult, width: int = 80) -> str:
    """:func:`draw_timeline` as text: header, rows, legend (rows may be wider than ``width``).

    Raises:
        InputError: as :func:`draw_timeline`.
    """
    return draw_timeline(result, width).text()
