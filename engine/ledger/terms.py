"""The ledger's lines as text: each term's formula with the figures filled in, and its source."""

from __future__ import annotations

from typing import Any, NamedTuple

from engine import sources
from engine.activations import (
    StageActivations,
    per_stage_activation_bytes,
    stage_layer_counts,
)
from engine.ledger.buffers import Buffer
from engine.ledger.host import deepspeed_host_case
from engine.ledger.model import (
    CONVENTION_SOURCES,
    DEEPSPEED_BUFFER_FACTOR,
    DTYPE_BYTES,
    MODEL_STATE_KEYS,
    OPTIMIZER_SOURCES,
    LedgerSpec,
    LedgerTerm,
)
from engine.ledger.states import (
    GatheredLayer,
    ParamGroup,
    Sharding,
    StageParams,
    is_offloaded,
)


class Figures(NamedTuple):
    """What the term texts are written from: the figures of the most loaded stage."""

    spec: LedgerSpec
    shard: Sharding
    stage: StageParams
    groups: list[ParamGroup]
    largest: GatheredLayer | None
    term_bytes: tuple[float, ...]
    host_bytes: tuple[float, ...]
    activations: StageActivations | None
    buffer: Buffer


def term_lines(draft: Figures) -> tuple[LedgerTerm, ...]:
    """The six ledger lines, formula text filled in."""
    spec, shard, stage = draft.spec, draft.shard, draft.stage
    formulas: dict[str, list[str]] = {key: [] for key in MODEL_STATE_KEYS}
    for group in draft.groups:
        for part in group.parts:
            sharded = spec.zero_stage >= part.stage
            divisor = f" / N_d {shard.n_d}" if sharded and shard.n_d > 1 else ""
            if sharded and group.expert and shard.n_de != shard.n_d:
                divisor += f" (experts / {shard.n_de})"
            where = " → host" if is_offloaded(spec.offload, part.key) else ""
            formulas[part.key].append(
                f"{part.label} {part.bytes_per_param:.4g} B × {group.symbol}{divisor}{where}"
            )
    largest_note = ""
    if draft.largest is not None:
        w, largest, origin, _grads = draft.largest
        largest_note = f" + {w:g} B × largest layer {largest:,.0f} ({origin}; gathered whole)"
    source = CONVENTION_SOURCES[spec.convention]
    stage_name = zero_stage_name(spec)
    psi_text = f"; Ψ = {shard_text(spec, shard, stage)} = {stage.dense + stage.expert:,.0f}"
    if spec.finetune == "qlora":
        psi_text += (
            f"; Ψ_NF4 = the linear layers' weights = {stage.quant_dense + stage.quant_expert:,.0f}"
        )
    if spec.finetune != "full":
        psi_text += f"; Ψ_LoRA = {lora_text(spec, shard, stage)}"
    terms: list[LedgerTerm] = []
    for index, (key, value) in enumerate(zip(MODEL_STATE_KEYS, draft.term_bytes, strict=False)):
        text = " + ".join(formulas[key]) or "none kept"
        gathered = key == "params" or (
            key == "grads" and draft.largest is not None and draft.largest.grads
        )
        if largest_note and gathered:
            text += largest_note
        text += psi_text
        if key == "params" and spec.params is None and shard.size is not None:
            text += f"; N = {shard.size.formula}"
        text += f"; {stage_name} = {bytes_text(value)}"
        moved = draft.host_bytes[index]
        if moved:
            text += f" on the device, {bytes_text(moved)} on the host"
        terms.append(LedgerTerm(key, value, text, term_source(spec, key, source)))
    terms.append(activation_term(spec, draft.activations, stage))
    terms.append(buffer_term(spec, draft.buffer))
    return tuple(terms)


def host_figure(draft: Figures, value: float, gpn: int, nodes: int) -> dict[str, Any]:
    """How the host memory per node (``value``) was reached."""
    spec = draft.spec
    case = deepspeed_host_case(spec)
    factor = DEEPSPEED_BUFFER_FACTOR
    if case is None:
        moved = sum(draft.host_bytes)
        if spec.offload == "none":
            formula = "nothing offloaded: 0"
        else:
            formula = (
                f"the offloaded model states of one rank {bytes_text(moved)} × {gpn} GPUs per node "
                f"= {bytes_text(value)}"
            )
        source = sources.OFFLOAD
    else:
        psi = draft.stage.dense + draft.stage.expert
        init = "zero_init" if spec.zero_init else "no zero_init"
        text = {
            "zero2-optimizer": f"Ψ {psi:,.0f} × max(4 × {gpn * nodes} GPUs, 16) × {factor:g}",
            "zero2-none": f"Ψ {psi:,.0f} × 4 × {gpn} GPUs per node × {factor:g}",
            "zero3-none": (
                f"largest layer × 4 × {gpn} GPUs per node × {factor:g} ({init})"
                if spec.zero_init
                else f"Ψ {psi:,.0f} × 4 × {gpn} GPUs per node × {factor:g} ({init})"
            ),
        }.get(case)
        if text is None:
            states = 18 if case == "zero3-optimizer+params" else 16
            if spec.zero_init:
                text = f"Ψ {psi:,.0f} × {states} / {nodes} nodes × {factor:g} (zero_init)"
            else:
                text = (
                    f"Ψ {psi:,.0f} × max(4 × {gpn} GPUs per node, {states} / {nodes} nodes) × "
                    f"{factor:g} (no zero_init: each process loads the model)"
                )
        formula = (
            f"DeepSpeed's estimate per node, offload {spec.offload}: {text} = {bytes_text(value)} "
            f"(buffer factor {factor:g}: DeepSpeed's additional_buffer_factor)"
        )
        source = sources.DEEPSPEED_ESTIMATORS
    return {
        "bytes": value,
        "per": "node",
        "gpus_per_node": gpn,
        "nodes": nodes,
        "formula": formula,
        "source": source,
    }


def shard_text(spec: LedgerSpec, shard: Sharding, stage: StageParams) -> str:
    """How Ψ, the model-parallel shard of :func:`placement`, was reached."""
    tp, ep = spec.tp, spec.ep
    size = shard.size
    if size is not None:
        pieces = []
        if stage.embedding:
            pieces.append("embedding")
        pieces.append(f"{stage.layers} of {size.layers} layers{uneven_text(spec, stage)}")
        if stage.output:
            pieces.append(stage.output)
        if stage.position == spec.pp - 1 and size.final_norm:
            pieces.append("final norm")
        text = f"({' + '.join(pieces)}) / TP {tp}" + (
            f", experts / EP {ep}" if size.experts > 1 else ""
        )
        if spec.params is not None:
            text = f"N {shard.params_total:,.0f} / {size.total:,.0f} × {text}"
        return text
    if stage.layers is None:
        where = f"1/PP {spec.pp}"
    else:
        where = f"{stage.layers}/{spec.layers} layers{uneven_text(spec, stage)}"
    text = f"N {shard.params_total:,.0f} × {where} / TP {tp}"
    if shard.share:
        text += f", experts ({shard.share:.3g} of N) / EP {ep}"
    return text


def lora_text(spec: LedgerSpec, shard: Sharding, stage: StageParams) -> str:
    """How Ψ_LoRA, the adapter parameters on the rank, was reached."""
    targets = ",".join(spec.lora_targets)
    return (
        f"r {spec.lora_rank} × (d_in + d_out) on {targets}: {shard.lora_per_layer:,.0f} per layer "
        f"× {stage.layers} layers / TP {spec.tp} = {stage.lora_dense + stage.lora_expert:,.0f}"
    )


def uneven_text(spec: LedgerSpec, stage: StageParams) -> str:
    """Where the stage sits when the layers do not divide evenly over the stages; ``""`` when
    they do."""
    if spec.layers is not None and spec.layers % spec.pp:
        if stage.position == 0:
            return f" on the first of {spec.pp} uneven stages, the heaviest"
        return f" on stage {stage.position + 1} of {spec.pp} uneven stages"
    return ""


_STAGE_NAMES = ("ZeRO-0 (replicated)", "ZeRO-1", "ZeRO-2", "ZeRO-3 / FSDP")


def zero_stage_name(spec: LedgerSpec) -> str:
    """The ZeRO stage as the formulas name it (Megatron-LM calls stage 1 its distributed
    optimizer)."""
    if spec.convention == "megatron" and spec.zero_stage == 1:
        return "distributed optimizer"
    return _STAGE_NAMES[spec.zero_stage]


def term_source(spec: LedgerSpec, key: str, source: str) -> str:
    """The sources of the term ``key``: the convention's, and those of every option that changes
    it."""
    if key == "params" and spec.params is None:
        source = f"{source}; N: {sources.PARAM_COUNT}"
    if key == "params" and spec.pp > 1:
        source = f"{source}; {sources.STAGE_PLACEMENT}"
    if spec.finetune != "full":
        source = f"{source}; {sources.LORA_ADAPTERS}"
        if spec.finetune == "qlora" and key == "params":
            source = f"{source}; {sources.QLORA_NF4}"
    if spec.offload != "none" and is_offloaded(spec.offload, key):
        source = f"{source}; {sources.OFFLOAD}"
    if key == "grads" and spec.fp32_grad_accumulation:
        source = f"{source}; {sources.FP32_GRAD_ACCUMULATION}"
    if key == "optimizer_states" and not spec.master_weights and DTYPE_BYTES[spec.dtype] < 4:
        source = f"{source}; {sources.PURE_BF16_STATES}"
    if key == "optimizer_states" and spec.optimizer not in ("adam", "adamw"):
        return f"{source}; {OPTIMIZER_SOURCES[spec.optimizer]}"
    if spec.convention == "megatron" and spec.zero_stage >= 2:
        return f"{source}; stages 2-3 beyond its estimator, as {sources.FSDP_UNITS}"
    return source


def activation_term(
    spec: LedgerSpec, described: StageActivations | None, stage: StageParams
) -> LedgerTerm:
    """The activations line: Table 2's row, the stage's multiples, the stage shown."""
    if described is None:
        reason = "not computed: give seq (and layers, hidden, heads) to compute activations"
        return LedgerTerm("activations", 0.0, reason, sources.ACTIVATIONS_TABLE2)
    text = (
        f"Table 2 row '{described.per_layer.row}': {described.per_layer.formula}; "
        f"{described.formula}"
    )
    if described.notes:
        text += "; " + "; ".join(described.notes)
    if (spec.experts or 1) > 1:
        text += "; MoE: balanced routing gives each rank as many tokens as a dense MLP, so no /EP"
    if spec.finetune != "full":
        text += "; frozen layers still keep their inputs here (an upper bound for LoRA)"
    value = described.total
    if stage.position:
        per_stage = per_stage_activation_bytes(
            described, stage_layer_counts(spec.layers or 1, spec.pp)
        )
        value = per_stage[stage.position]
        text += f"; stage {stage.position + 1} of {spec.pp}, the most loaded: {bytes_text(value)}"
    source = f"{sources.ACTIVATIONS_TABLE2}; {sources.ACTIVATIONS_FIRST_STAGE}"
    if spec.vocab is not None:
        source += f"; {sources.ACTIVATIONS_EMBEDDING_OUTPUT}"
    if described.per_layer.shape is not None and described.per_layer.row not in _TABLE2_ROWS:
        source += f"; {sources.ACTIVATIONS_GENERAL_SHAPE}"
    return LedgerTerm("activations", value, text, source)


_TABLE2_ROWS = frozenset(
    {
        "no parallelism",
        "tensor parallel",
        "tensor parallel + sequence parallel",
        "selective",
        "tensor parallel + selective recompute",
        "tensor parallel + sequence parallel + selective recompute",
        "full recompute",
    }
)


def buffer_term(spec: LedgerSpec, buffer: Buffer) -> LedgerTerm:
    """The communication-buffers line of :func:`~engine.ledger.buffers.comm_buffers`'s figure."""
    value = buffer.bytes
    if buffer.case == "single":
        text = "one data-parallel rank: nothing to communicate"
        return LedgerTerm("buffers", value, text, sources.DDP_BUCKET)
    if buffer.case == "ddp":
        text = (
            f"one DDP gradient bucket {bytes_text(value)}" if value else "DDP bucket not given: 0"
        )
        return LedgerTerm("buffers", value, text, sources.DDP_BUCKET)
    if buffer.case == "deepspeed":
        text = "the gathered largest layer is in params and grads (DeepSpeed ZeRO-3 estimator)"
        return LedgerTerm("buffers", value, text, sources.DEEPSPEED_ESTIMATORS)
    if buffer.case == "unknown":
        return LedgerTerm("buffers", value, "FSDP unit unknown: 0", sources.FSDP_UNITS)
    text = (
        f"FSDP: (1 + prefetch {spec.prefetch}) × {buffer.origin} {buffer.unit:,.0f} params × "
        f"{buffer.weight:g} B gathered + its unsharded gradient × {buffer.grad:g} B = "
        f"{bytes_text(value)}"
    )
    return LedgerTerm("buffers", value, text, sources.FSDP_UNITS)


def bytes_text(value: float) -> str:
    """``value`` bytes with thousands separators: ``4,298,121,216 B``."""
    return f"{value:,.0f} B"
