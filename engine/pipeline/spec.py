"""A pipeline-parallel configuration (:class:`PipelineSpec`) and the ops of a schedule."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final, Literal, NamedTuple, get_args

import numpy as np
import numpy.typing as npt

from engine import sources
from engine.checks import finite_number, one_of, whole_number
from engine.errors import InputError
from engine.i18n import gettext as _

IntArray = npt.NDArray[np.int64]


Schedule = Literal["gpipe", "1f1b", "interleaved-1f1b", "zb-h1", "zb-h2"]


SCHEDULES: Final[tuple[Schedule, ...]] = get_args(Schedule)
"""Schedule names, as the CLI and the Bubble pane offer them."""


SPLIT_BACKWARD: Final[frozenset[str]] = frozenset({"zb-h1", "zb-h2"})
"""Schedules that run B (input gradient) and W (weight gradient) as separate ops."""


MAX_SIMULATED_OPS: Final[int] = 2**21
"""Most ops (:attr:`PipelineSpec.num_ops`) :func:`engine.pipeline.simulate` accepts, a few
seconds of work; p·m·v is then at most 2^20 (every op's index fits an int32)."""


MAX_SIMULATED_STAGES: Final[int] = 2**14
"""Most stages :func:`engine.pipeline.simulate` accepts. Its work grows with p beyond the op
count (each stage's actions and start times, the warm-up and cool-down columns): measured on a
loaded 2-core machine, 1F1B with m = 1 took 0.5 s at 10,000 stages, 5.8 s at 100,000 and
14 s at 200,000 although every one of them is under :data:`MAX_SIMULATED_OPS`; at 16,384 stages
the largest schedule allowed (1F1B, m = 64) took about 4 s."""


MAX_OP_TIME: Final[float] = 1e24
"""Largest op time (t_F, t_B, t_W, p2p) a spec accepts, in op-time units. Whatever the unit, a
larger one is a typing error (1e24 ns is 30 million years), and the bound keeps every figure
finite: a schedule runs at most :data:`MAX_SIMULATED_OPS` ops and as many transfers, so its
makespan is below 2^21 × 2 × 3e24 < 1.3e31, and m(t_F + t_B + t_W) below 3e36, far from a
float's 1.8e308 (1e308 for t_B made the makespan inf and the bubble nan)."""


CONVENTIONS: Final = (
    f"bubble/ideal = idle / m(t_F+t_B+t_W) ({sources.MEGATRON_LM_PAPER} §2.2; "
    f"{sources.ULTRA_SCALE_PLAYBOOK_DOCS}); bubble/total = idle / iteration time "
    f"({sources.GPIPE_PAPER} (p-1)/(m+p-1); {sources.ZERO_BUBBLE_PAPER} bubble rate)"
)
"""The two bubble conventions, named with their sources."""


F_CODE, B_CODE, W_CODE = 0, 1, 2


SPLIT_KINDS = ("F", "B", "W")


JOINED_KINDS = ("F", "BW", "W")


def unused_virtual_stages_note(schedules: Sequence[str], virtual_stages: int) -> str | None:
    """What the CLI and the Bubble pane say when v (chunks per stage) is not 1 and a schedule
    shown is not interleaved 1F1B, the one schedule that splits a stage into chunks (Narayanan
    et al. 2021 §2.2.2): that schedule runs with v = 1. ``None`` when v is used (or is 1)."""
    unused = [name for name in schedules if name != "interleaved-1f1b"]
    if virtual_stages == 1 or not unused:
        return None
    return _(
        "v = {v} is not used by {schedules}: only interleaved-1f1b splits a stage into chunks"
    ).format(v=virtual_stages, schedules=", ".join(unused))


@dataclass(frozen=True)
class PipelineSpec:
    """One pipeline-parallel configuration to simulate.

    Attributes:
        schedule: one of :data:`SCHEDULES`.
        stages: pipeline stages p (ranks), a whole number >= 1.
        num_microbatches: micro-batches per iteration m, a whole number >= 1; a multiple of p for
            ``interleaved-1f1b``.
        virtual_stages: model chunks per stage v (``interleaved-1f1b`` only; 1 otherwise).
        t_forward: t_F, forward time of one micro-batch on one stage (op-time units, > 0).
        t_backward_input: t_B, input-gradient backward time (op-time units, > 0).
        t_backward_weight: t_W, weight-gradient backward time (op-time units, >= 0).
        p2p_time: time to send an activation or a gradient to the next stage (op-time units, >= 0).

    Raises:
        InputError: naming the field, for an unknown schedule, a count that is zero, negative or not
            a whole number, v < 1 (or v > 1 outside ``interleaved-1f1b``), m not a multiple of p
            for ``interleaved-1f1b``, or a time that is negative, zero (t_F, t_B), NaN, infinite
            or above :data:`MAX_OP_TIME`.
    """

    schedule: Schedule
    stages: int
    num_microbatches: int
    virtual_stages: int = 1
    t_forward: float = 1.0
    t_backward_input: float = 1.0
    t_backward_weight: float = 1.0
    p2p_time: float = 0.0

    def __post_init__(self) -> None:
        one_of("schedule", self.schedule, SCHEDULES)
        for name in ("stages", "num_microbatches", "virtual_stages"):
            object.__setattr__(self, name, whole_number(name, getattr(self, name)))
        for name, allow_zero in (
            ("t_forward", False),
            ("t_backward_input", False),
            ("t_backward_weight", True),
            ("p2p_time", True),
        ):
            value = finite_number(
                name, getattr(self, name), allow_zero=allow_zero, maximum=MAX_OP_TIME
            )
            object.__setattr__(self, name, value)
        if self.virtual_stages > 1 and self.schedule != "interleaved-1f1b":
            raise InputError(
                "virtual_stages",
                _("only interleaved-1f1b splits a stage into chunks; use 1 with {schedule}").format(
                    schedule=self.schedule
                ),
            )
        if self.schedule == "interleaved-1f1b" and self.num_microbatches % self.stages:
            lower = self.num_microbatches // self.stages * self.stages
            upper = lower + self.stages
            hint = (
                _("try m={lower} or m={upper}").format(lower=lower, upper=upper)
                if lower
                else _("try m={upper}").format(upper=upper)
            )
            raise InputError(
                "num_microbatches",
                _(
                    "Interleaved 1F1B needs m to be a multiple of p "
                    "(m={num_microbatches}, p={stages}); {hint}"
                ).format(num_microbatches=self.num_microbatches, stages=self.stages, hint=hint),
            )

    @property
    def split_backward(self) -> bool:
        """True when B and W run as separate ops (ZB-H1, ZB-H2)."""
        return self.schedule in SPLIT_BACKWARD

    @property
    def num_ops(self) -> int:
        """Ops the schedule runs over all stages: p·m·v times 2 (F, BW) or 3 (F, B, W)."""
        kinds = 3 if self.split_backward else 2
        return kinds * self.stages * self.num_microbatches * self.virtual_stages

    @property
    def ideal_time(self) -> float:
        """m(t_F + t_B + t_W): the time each stage computes, in op-time units."""
        return self.num_microbatches * (
            self.t_forward + self.t_backward_input + self.t_backward_weight
        )


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
    g = whole_number("global_batch", global_batch)
    b = whole_number("micro_batch_size", micro_batch_size)
    d = whole_number("dp", dp)
    per_pipeline = b * d
    if g % per_pipeline:
        raise InputError(
            "global_batch",
            _(
                "{global_batch} is not a multiple of micro-batch size x DP = {micro_batch} x {dp} "
                "= {per_pipeline} (m would be {value:g})"
            ).format(
                global_batch=g,
                micro_batch=b,
                dp=d,
                per_pipeline=per_pipeline,
                value=g / per_pipeline,
            ),
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
