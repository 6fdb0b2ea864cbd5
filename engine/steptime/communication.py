"""The collectives of one training step: volume, time on the link each group spans, and the share
hidden behind compute.

Volumes per step follow Rajbhandari et al. 2020 (ZeRO) §7 (DP and ZeRO-1/2 2Ψ, ZeRO-3 3Ψ) and
Narayanan et al. 2021 §3.2 (PP b·s·h per micro-batch, TP 8·b·s·h·(t−1)/t per layer per
micro-batch); EP and CP volumes are those of :mod:`engine.strategies`. Each collective is costed
with :func:`engine.collectives.collective_cost` on the link its group spans: ranks are numbered TP
fastest, then CP, DP and PP (Megatron-LM's order), and a group whose span exceeds
``gpus_per_node`` runs at the inter-node bandwidth (its slowest ring link). The exposed share
depends on the strategy (:mod:`engine.steptime`).
"""

from __future__ import annotations

import math
from dataclasses import replace

from engine import sources
from engine.collectives import collective_cost
from engine.errors import FieldName, InputError
from engine.i18n import N_, gettext
from engine.model_size import ModelSize
from engine.pipeline import PipelineSpec
from engine.pipeline import simulate as simulate_pipeline
from engine.steptime.compute import ComputeTime
from engine.steptime.flops import Flops
from engine.steptime.spec import PIPELINE_SOURCE, CommTerm, StepSpec


def step_communication(
    spec: StepSpec,
    params: float,
    size: ModelSize | None,
    num_microbatches: int,
    compute: ComputeTime,
    world: int,
) -> list[CommTerm]:
    """Every collective of one step of a checked ``spec``: DP or ZeRO, TP, CP, EP, then PP.

    Raises:
        InputError: TP or CP without the architecture (``layers``), PP without ``hidden``.
    """
    comm = _data_parallel(
        spec, params, size, num_microbatches, compute.t_forward_s, compute.t_backward_s
    )
    comm += _tensor_parallel(spec, num_microbatches)
    comm += _context_parallel(spec, num_microbatches, compute.flops, world, compute.achieved_flops)
    comm += _expert_parallel(spec, num_microbatches)
    if compute.pipeline is not None:
        comm.append(_pipeline_p2p(spec, num_microbatches, compute.pipeline, compute.t_compute_s))
    return comm


def _link(spec: StepSpec, span: int) -> tuple[str, float]:
    if span <= spec.gpus_per_node:
        return "intra", spec.interconnect.intra_bandwidth
    return "inter", spec.interconnect.inter_bandwidth


def _cost(spec: StepSpec, op: str, ranks: int, size: float, span: int) -> tuple[float, str]:
    link, bandwidth = _link(spec, span)
    cost = collective_cost(op, ranks, size, bandwidth, spec.interconnect.latency)
    return cost.time_s, link


def _term(
    name: str,
    op: str,
    group: int,
    link: str,
    size: float,
    calls: int,
    time_s: float,
    exposed: float,
    formula: str,
    source: str,
) -> CommTerm:
    exposed = min(max(exposed, 0.0), time_s)
    hidden = 1.0 - exposed / time_s if time_s > 0 else 1.0
    return CommTerm(name, op, group, link, size, calls, time_s, hidden, exposed, formula, source)


def _shard_params(spec: StepSpec, params: float, size: ModelSize | None) -> float:
    """Ψ on one rank before ZeRO: the model-parallel shard (experts / EP)."""
    if size is not None and size.experts > 1:
        expert = size.expert_params
        return ((params - expert) + expert / spec.ep) / (spec.tp * spec.pp)
    return params / (spec.tp * spec.pp)


def _data_parallel(
    spec: StepSpec,
    params: float,
    size: ModelSize | None,
    m: int,
    t_f: float,
    t_bw: float,
) -> list[CommTerm]:
    assert spec.dp is not None
    ranks = spec.dp * spec.cp
    if ranks < 2:
        return []
    psi = _shard_params(spec, params, size)
    s_bytes = psi * spec.comm_bytes
    span = spec.tp * spec.cp * spec.dp
    backward = 2 * t_bw
    w = spec.comm_bytes
    if spec.zero_stage == 0:
        time_s, link = _cost(spec, "all-reduce", ranks, s_bytes, span)
        bucket = min(spec.bucket_bytes, s_bytes)
        t_bucket, _ = _cost(spec, "all-reduce", ranks, bucket, span)
        exposed = max(t_bucket, time_s - backward)
        return [
            _term(
                N_("DP gradients"),
                "all-reduce",
                ranks,
                link,
                s_bytes,
                1,
                time_s,
                exposed,
                f"all-reduce of Ψ {psi:.4g} × {w:g} B (2Ψ on the wire); exposed = max(last "
                f"bucket {t_bucket:.3g} s, t − last micro-batch backward {backward:.3g} s)",
                sources.joined(sources.ZERO_COMMUNICATION, sources.DDP_OVERLAP),
            )
        ]
    if spec.zero_stage in (1, 2):
        t_rs, link = _cost(spec, "reduce-scatter", ranks, s_bytes, span)
        bucket = min(spec.bucket_bytes, s_bytes)
        t_bucket, _ = _cost(spec, "reduce-scatter", ranks, bucket, span)
        t_ag, _ = _cost(spec, "all-gather", ranks, s_bytes, span)
        return [
            _term(
                N_("ZeRO gradients"),
                "reduce-scatter",
                ranks,
                link,
                s_bytes,
                1,
                t_rs,
                max(t_bucket, t_rs - backward),
                f"reduce-scatter of Ψ {psi:.4g} × {w:g} B, bucketed during the last backward",
                sources.joined(sources.ZERO_COMMUNICATION, sources.DDP_OVERLAP),
            ),
            _term(
                N_("ZeRO parameters"),
                "all-gather",
                ranks,
                link,
                s_bytes,
                1,
                t_ag,
                t_ag,
                f"all-gather of Ψ {psi:.4g} × {w:g} B after the optimizer step: exposed",
                sources.ZERO_COMMUNICATION,
            ),
        ]
    layers = max(1, (spec.layers or 1) // spec.pp) if spec.layers else 1
    unit = s_bytes / layers
    t_ag, link = _cost(spec, "all-gather", ranks, s_bytes, span)
    t_rs, _ = _cost(spec, "reduce-scatter", ranks, s_bytes, span)
    t_unit, _ = _cost(spec, "all-gather", ranks, unit, span)
    forward_window = m * t_f
    backward_window = m * 2 * t_bw
    fwd_exposed = max(m * t_unit, m * t_ag - forward_window)
    bwd_exposed = max(m * t_unit, m * (t_ag + t_rs) - backward_window)
    unit_text = f"one layer of {layers}" if spec.layers else "whole model (give layers for units)"
    return [
        _term(
            N_("FSDP forward gather"),
            "all-gather",
            ranks,
            link,
            s_bytes,
            m,
            m * t_ag,
            fwd_exposed,
            f"m {m} × all-gather of Ψ {psi:.4g} × {w:g} B; exposed = max(m × first unit "
            f"({unit_text}), t − forward compute)",
            sources.joined(
                f"{sources.ZERO_COMMUNICATION} (3Ψ per micro-batch)", sources.FSDP_PREFETCH
            ),
        ),
        _term(
            N_("FSDP backward gather + gradients"),
            "reduce-scatter",
            ranks,
            link,
            s_bytes,
            2 * m,
            m * (t_ag + t_rs),
            bwd_exposed,
            f"m {m} × (all-gather + reduce-scatter of Ψ × {w:g} B); exposed = max(m × first "
            "unit, t − backward compute)",
            sources.joined(sources.ZERO_COMMUNICATION, sources.FSDP_PREFETCH),
        ),
    ]


def _layers_per_stage(spec: StepSpec) -> int:
    if spec.layers is None:
        return 1
    return math.ceil(spec.layers / spec.pp)


def _tensor_parallel(spec: StepSpec, m: int) -> list[CommTerm]:
    if spec.tp < 2:
        return []
    if spec.layers is None or spec.hidden is None:
        raise InputError(
            "layers",
            gettext("TP communication needs the architecture ({layers}, {hidden})"),
            layers=FieldName("layers"),
            hidden=FieldName("hidden"),
        )
    s_local = spec.seq // spec.cp
    size = spec.micro_batch_size * s_local * spec.hidden * spec.comm_bytes
    per_layer = 6 if spec.recompute == "full" else 4
    layers = _layers_per_stage(spec)
    calls = per_layer * layers * m
    one, link = _cost(spec, "all-reduce", spec.tp, size, spec.tp)
    return [
        _term(
            N_("TP activations"),
            "all-reduce",
            spec.tp,
            link,
            size,
            calls,
            calls * one,
            calls * one,
            f"{per_layer} all-reduces of b·s·h = {size:.4g} B per layer × {layers} layers × m {m}"
            f" (8·b·s·h·(t−1)/t elements per layer on the wire); on the critical path",
            sources.MEGATRON_COMMUNICATION,
        )
    ]


def _context_parallel(spec: StepSpec, m: int, flops: Flops, world: int, x: float) -> list[CommTerm]:
    if spec.cp < 2:
        return []
    if spec.layers is None or spec.hidden is None:
        raise InputError(
            "layers",
            gettext("CP communication needs the architecture ({layers}, {hidden})"),
            layers=FieldName("layers"),
            hidden=FieldName("hidden"),
        )
    layers = _layers_per_stage(spec)
    size = 2 * spec.micro_batch_size * spec.seq * spec.hidden * spec.comm_bytes / spec.tp
    span = spec.tp * spec.cp
    t_ag, link = _cost(spec, "all-gather", spec.cp, size, span)
    t_rs, _ = _cost(spec, "reduce-scatter", spec.cp, size, span)
    time_s = layers * m * (t_ag + t_rs)
    window = flops.attention_core / (world * x)
    return [
        _term(
            N_("CP keys and values"),
            "all-gather",
            spec.cp,
            link,
            size,
            2 * layers * m,
            time_s,
            time_s - window,
            f"all-gather + reduce-scatter of K,V 2·b·s·h/t = {size:.4g} B per layer × {layers} "
            f"× m {m}; hidden behind the attention core ({window:.3g} s)",
            sources.CONTEXT_PARALLEL_COMMUNICATION,
        )
    ]


def _expert_parallel(spec: StepSpec, m: int) -> list[CommTerm]:
    if spec.ep < 2 or (spec.experts or 1) < 2:
        return []
    assert spec.hidden is not None
    layers = _layers_per_stage(spec)
    s_local = spec.seq // spec.cp
    top_k = spec.top_k or 1
    size = spec.micro_batch_size * s_local * top_k * spec.hidden * spec.comm_bytes / spec.tp
    span = spec.tp * spec.cp * spec.ep
    one, link = _cost(spec, "all-to-all", spec.ep, size, span)
    calls = 4 * layers * m
    return [
        _term(
            N_("EP tokens"),
            "all-to-all",
            spec.ep,
            link,
            size,
            calls,
            calls * one,
            calls * one,
            f"4 all-to-alls (dispatch, combine; forward, backward) of b·s·k·h = {size:.4g} B per "
            f"MoE layer × {layers} × m {m}; on the critical path",
            sources.EXPERT_PARALLEL_COMMUNICATION,
        )
    ]


def _pipeline_p2p(spec: StepSpec, m: int, pipe_spec: PipelineSpec, t_compute: float) -> CommTerm:
    assert spec.dp is not None
    hidden = spec.hidden if spec.hidden is not None else None
    if hidden is None:
        raise InputError("hidden", gettext("PP communication needs the hidden size"))
    size = spec.micro_batch_size * (spec.seq // spec.cp) * hidden * spec.comm_bytes
    one, link = _cost(spec, "send-recv", 2, size, spec.dp * spec.tp * spec.cp * spec.pp)
    piped = simulate_pipeline(replace(pipe_spec, p2p_time=one))
    exposed = max(0.0, piped.iteration_time - t_compute)
    calls = 2 * m * spec.virtual_stages
    return _term(
        N_("PP activations"),
        "send-recv",
        2,
        link,
        size,
        calls,
        calls * one,
        exposed,
        f"b·s·h = {size:.4g} B per micro-batch each way (2·m·v sends per stage); exposed = "
        "simulated iteration with p2p − without",
        sources.joined(sources.MEGATRON_COMMUNICATION, PIPELINE_SOURCE),
    )
