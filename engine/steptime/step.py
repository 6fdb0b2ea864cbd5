"""T_step = T_compute + T_comm_exposed + T_input + T_sync_wait of one configuration
(:func:`step_time`), each part from its module: :mod:`~engine.steptime.compute`,
:mod:`~engine.steptime.communication`, :mod:`~engine.steptime.moe` and the labelled assumptions
here (input, stragglers).
"""

from __future__ import annotations

from engine import sources
from engine.checks import finite_number
from engine.errors import FieldName, InputError
from engine.i18n import N_
from engine.i18n import gettext as _
from engine.steptime.communication import step_communication
from engine.steptime.compute import ComputeTime, compute_time
from engine.steptime.flops import time_to_train
from engine.steptime.moe import moe_term, moe_wait
from engine.steptime.spec import (
    ASSUMPTION,
    StepResult,
    StepSpec,
    StepTerm,
    check_step_spec,
    step_model,
)


def step_time(spec: StepSpec) -> StepResult:
    """T_step of ``spec`` and every term behind it (:mod:`engine.steptime`: formulas and
    sources).

    Returns:
        A :class:`StepResult`; every time finite and >= 0, T_step > 0.

    Raises:
        InputError: naming the spec field: a size that is not a whole number >= 1 (or too large),
            a rate or share that is zero, negative, NaN or infinite, an unknown schedule or
            recompute mode, a ZeRO stage outside 0-3, TP not dividing heads, PP above layers,
            CP not dividing seq, EP not dividing the experts or DP·CP, ``gpus`` disagreeing with
            DP·TP·PP·CP, a global batch not a multiple of micro-batch × DP, neither ``params``
            nor the architecture, MoE without the architecture, ``achieved_flops`` above peak;
            an unknown model or invalid shape field, TP not dividing the key/value heads, a
            sequence beyond the preset's, virtual stages without ``interleaved-1f1b`` or without
            pipeline stages.
    """
    spec, notes = check_step_spec(spec)
    assert spec.dp is not None and spec.global_batch is not None
    assert spec.experts is not None and spec.top_k is not None
    shape, size = step_model(spec)
    if spec.params is None and size is None:
        missing = next(n for n in ("layers", "hidden", "vocab") if getattr(spec, n) is None)
        raise InputError(
            "params",
            _("give the parameter count, or the architecture ({missing} is missing)"),
            missing=FieldName(missing),
        )
    if spec.experts > 1 and size is None:
        raise InputError(
            "experts",
            _("MoE step time needs the architecture ({layers}, {hidden}, {vocab})"),
            **{name: FieldName(name) for name in ("layers", "hidden", "vocab")},
        )
    params = size.total if size is not None else finite_number("params", spec.params)
    if size is not None and spec.params is not None:
        notes.append(N_("the architecture sets N; --params is not used"))
    world = spec.dp * spec.tp * spec.pp * spec.cp
    num_microbatches = spec.global_batch // (spec.micro_batch_size * spec.dp)
    tokens_per_step = float(spec.global_batch * spec.seq)

    compute = compute_time(
        spec, shape if size is not None else None, params, world, num_microbatches, tokens_per_step
    )
    terms = list(compute.terms)
    comm = step_communication(spec, params, size, num_microbatches, compute, world)
    t_comm = sum(c.time_s for c in comm)
    t_exposed = sum(c.exposed_s for c in comm)

    moe = moe_wait(spec, size, compute.flops, world, compute.achieved_flops, comm)
    straggle = _straggler_term(spec, compute, world)
    terms.append(straggle)
    t_sync = straggle.value + (moe.wait_s if moe is not None else 0.0)
    if moe is not None:
        terms.append(moe_term(spec, moe))
    rest = compute.t_compute_s + t_exposed + t_sync
    input_term = _input_term(spec, tokens_per_step, rest)
    terms.append(input_term)
    t_step = rest + input_term.value
    tokens_per_s = tokens_per_step / t_step
    mfu = compute.flops.model / (t_step * world * spec.peak_flops)
    terms.append(
        StepTerm(
            N_("MFU"),
            mfu,
            f"model FLOPs / (T_step {t_step:.4g} s × world {world} × peak {spec.peak_flops:.4g})",
            sources.MFU,
        )
    )
    train: float | None = None
    if spec.tokens is not None:
        active = params
        if size is not None and size.experts > 1:
            active = params - size.layers * (size.experts - spec.top_k) * size.layer_mlp
            notes.append(N_("time to train uses the active parameters per token (k experts)"))
        term = time_to_train(spec.tokens, active, world, compute.achieved_flops, spec.recompute)
        terms.append(term)
        train = term.value
        terms.append(
            StepTerm(
                N_("time to train from T_step"),
                spec.tokens / tokens_per_s,
                f"T / tokens per second = {spec.tokens:.4g} / {tokens_per_s:.4g} (counts "
                "communication, bubble and waits, which Eq. 4 leaves out)",
                "this model",
            )
        )
    if size is not None:
        notes.append(f"N from the architecture: {sources.joined(sources.PARAM_COUNT)}")
    return StepResult(
        spec=spec,
        world_size=world,
        num_microbatches=num_microbatches,
        tokens_per_step=tokens_per_step,
        flops_convention=compute.flops.convention,
        model_flops_per_step=compute.flops.model,
        hardware_flops_per_step=compute.flops.hardware,
        achieved_flops=compute.achieved_flops,
        t_compute_s=compute.t_compute_s,
        t_comm_s=t_comm,
        t_comm_exposed_s=t_exposed,
        t_input_s=input_term.value,
        t_sync_wait_s=t_sync,
        t_step_s=t_step,
        tokens_per_s=tokens_per_s,
        mfu=mfu,
        comm=tuple(comm),
        moe=moe,
        time_to_train_s=train,
        terms=tuple(terms),
        notes=tuple(notes),
    )


def _straggler_term(spec: StepSpec, compute: ComputeTime, world: int) -> StepTerm:
    """An assumption: with a straggler spread σ the slowest rank computes (1 + σ) times the mean
    and every synchronizing collective waits for it: σ·T_compute."""
    straggle = spec.straggler * compute.t_compute_s if world > 1 else 0.0
    return StepTerm(
        N_("straggler wait"),
        straggle,
        f"σ {spec.straggler:g} × T_compute (slowest rank computes (1+σ)× the mean)"
        + ("" if world > 1 else "; one rank: nobody waits"),
        ASSUMPTION,
    )


def _input_term(spec: StepSpec, tokens_per_step: float, rest: float) -> StepTerm:
    """An assumption: the loader prefetches the next batch during the step, so only its excess
    is exposed: max(0, tokens per replica / input rate − rest of the step)."""
    if spec.input_rate is None:
        return StepTerm(
            N_("input"), 0.0, "no input rate given: the loader is assumed to keep up", ASSUMPTION
        )
    assert spec.dp is not None
    per_replica = tokens_per_step / spec.dp
    t_input = max(0.0, per_replica / spec.input_rate - rest)
    return StepTerm(
        N_("input"),
        t_input,
        f"max(0, {per_replica:.6g} tokens per replica / {spec.input_rate:.4g} tokens/s "
        f"- rest of step {rest:.4g} s): the next batch loads during the step",
        ASSUMPTION,
    )
