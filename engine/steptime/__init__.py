"""Step time of one training configuration: T_step = T_compute + T_comm_exposed + T_input +
T_sync_wait (lesson S15, 机制与推导, writes T_comm_unhidden: the communication time not overlapped
with compute, called exposed here and on screen), each term with its formula and source
(seconds).

The package, one part of the step a module: :mod:`~engine.steptime.spec` (the configuration, its
checks, the result), :mod:`~engine.steptime.flops` (FLOPs per step and the time to train),
:mod:`~engine.steptime.compute` (T_compute), :mod:`~engine.steptime.interconnects` (link
presets), :mod:`~engine.steptime.communication` (the collectives and their exposed time),
:mod:`~engine.steptime.moe` (the expert-imbalance wait) and :mod:`~engine.steptime.step`
(:func:`step_time`, the sum).

Compute. Hardware FLOPs per step follow one of two conventions, named in every result
(:mod:`~engine.steptime.flops`): ``korthikanti`` when the architecture is given (Korthikanti et al.
2022 Eq. 7-8, Narayanan et al. 2021 Eq. 3, read for any model shape), ``6N`` when only the
parameter count is (Kaplan et al. 2020 §2.1).

The device runs those FLOPs at X = peak × compute utilization (``compute_utilization``, the
share of peak the kernels reach while they compute; or ``achieved_flops`` given directly), so the
ideal compute is H / (world × X); the pipeline bubble comes from :func:`engine.pipeline.simulate`
and is part of T_compute (idle time inside the compute timeline). ``mfu`` in the result is the
step's model FLOPs utilization, model FLOPs / (T_step × world × peak), after every loss: it is
below the compute utilization by the bubble, the exposed communication and the waits.

Communication. Volumes per step follow Rajbhandari et al. 2020 (ZeRO, arXiv:1910.02054) §7 (DP and
ZeRO-1/2 2Ψ, ZeRO-3 3Ψ) and Narayanan et al. 2021 §3.2 (PP b·s·h per micro-batch, TP
8·b·s·h·(t−1)/t per layer per micro-batch); EP and CP volumes are those of
:mod:`engine.strategies`. Each collective is costed with :func:`engine.collectives.collective_cost`
on the link its group spans: ranks are numbered TP fastest, then CP, DP and PP (Megatron-LM's
order), and a group whose span exceeds ``gpus_per_node`` runs at the inter-node bandwidth (its
slowest ring link). The hidden share depends on the strategy:

- DDP and ZeRO-1/2 gradient reduction: buckets overlap the last micro-batch's backward (PyTorch
  DistributedDataParallel; gradient accumulation syncs once); the last bucket cannot overlap.
  Exposed = max(t_bucket, t − window). ZeRO-1/2's parameter all-gather after the optimizer step
  is exposed.
- ZeRO-3/FSDP: every micro-batch gathers the parameters in forward and backward and
  reduce-scatters gradients (Zhao et al. 2023, PyTorch FSDP §3); prefetch hides them behind the
  compute except the first unit of each pass: exposed = max(m·t_unit, t − window).
- TP and EP all-to-all sit on the critical path: nothing is hidden (Narayanan et al. 2021 §3.2).
- PP: the schedule is simulated with and without the stage-to-stage transfer time; the exposed
  share is the difference in iteration time.
- CP: the ring exchange of keys and values overlaps the attention computation (Liu et al. 2023,
  Ring Attention): hidden up to the attention core's compute time.

T_input and T_sync_wait have no formula in any source: they are assumptions, labelled as such.
T_input: the loader prefetches the next batch during the step, so only its excess is exposed:
max(0, tokens per replica / input rate − rest of the step). T_sync_wait: with a straggler
spread σ the slowest rank computes (1 + σ) times the mean and every synchronizing collective
waits for it: σ·T_compute; plus, for MoE, the wait for the most loaded expert (see
:class:`MoeWait`).
"""

from engine.activations import RECOMPUTE_CHOICES
from engine.steptime.flops import (
    FLOPS_CONVENTIONS,
    Flops,
    korthikanti_flops,
    six_n_flops,
    time_to_train,
)
from engine.steptime.interconnects import (
    INTERCONNECTS,
    Interconnect,
    custom_interconnect,
    get_interconnect,
)
from engine.steptime.spec import (
    DEFAULT_BUCKET_BYTES,
    DEFAULT_COMPUTE_UTILIZATION,
    DEFAULT_PEAK_FLOPS,
    CommTerm,
    MoeWait,
    StepResult,
    StepSpec,
    StepTerm,
    model_size,
    resolve_step_spec,
)
from engine.steptime.step import step_time

__all__ = [
    "DEFAULT_BUCKET_BYTES",
    "DEFAULT_COMPUTE_UTILIZATION",
    "DEFAULT_PEAK_FLOPS",
    "FLOPS_CONVENTIONS",
    "INTERCONNECTS",
    "RECOMPUTE_CHOICES",
    "CommTerm",
    "Flops",
    "Interconnect",
    "MoeWait",
    "StepResult",
    "StepSpec",
    "StepTerm",
    "custom_interconnect",
    "get_interconnect",
    "korthikanti_flops",
    "model_size",
    "resolve_step_spec",
    "six_n_flops",
    "step_time",
    "time_to_train",
]
