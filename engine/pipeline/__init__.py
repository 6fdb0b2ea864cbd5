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

The package, one concept a module: :mod:`~engine.pipeline.spec` (the configuration and the ops),
:mod:`~engine.pipeline.schedules` (each schedule's action lists),
:mod:`~engine.pipeline.simulate` (the simulator and the schedule check),
:mod:`~engine.pipeline.closed_form` (the papers' formulas), :mod:`~engine.pipeline.timeline`
(the drawing) and :mod:`~engine.pipeline.process` (simulations in a child process, so that a
long one never holds the caller's interpreter lock).
"""

from engine.pipeline.closed_form import (
    ClosedForm,
    bubble_fraction,
    bubble_over_ideal,
    closed_form_bubble,
)
from engine.pipeline.schedules import schedule_actions
from engine.pipeline.simulate import (
    PipelineResult,
    SimulationCancelled,
    check_simulated_size,
    simulate,
    validate_schedule,
)
from engine.pipeline.spec import (
    CONVENTIONS,
    MAX_OP_TIME,
    MAX_SIMULATED_OPS,
    MAX_SIMULATED_STAGES,
    SCHEDULES,
    SPLIT_BACKWARD,
    PipelineAction,
    PipelineOp,
    PipelineSpec,
    Schedule,
    micro_batches_from_batch,
    unused_virtual_stages_note,
)
from engine.pipeline.timeline import (
    MAX_TIMELINE_COLUMNS,
    ROUNDING_TOLERANCE,
    TimelineDrawing,
    draw_timeline,
    render_timeline,
)

__all__ = [
    "CONVENTIONS",
    "MAX_OP_TIME",
    "MAX_SIMULATED_OPS",
    "MAX_SIMULATED_STAGES",
    "MAX_TIMELINE_COLUMNS",
    "ROUNDING_TOLERANCE",
    "SCHEDULES",
    "SPLIT_BACKWARD",
    "ClosedForm",
    "PipelineAction",
    "PipelineOp",
    "PipelineResult",
    "PipelineSpec",
    "Schedule",
    "SimulationCancelled",
    "TimelineDrawing",
    "bubble_fraction",
    "bubble_over_ideal",
    "check_simulated_size",
    "closed_form_bubble",
    "draw_timeline",
    "micro_batches_from_batch",
    "render_timeline",
    "schedule_actions",
    "simulate",
    "unused_virtual_stages_note",
    "validate_schedule",
]
