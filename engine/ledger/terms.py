"""The ledger's lines as text: each term's formula with the figures filled in, and its source."""

from __future__ import annotations

from typing import Any, NamedTuple

from engine import sources
from engine.activations import (
    StageActivations,
    per_stage_activation_bytes,
    stage_layer_counts,
)
from engine.errors import FieldName, FieldNote
from engine.i18n import N_, ngettext
from engine.i18n import gettext as _
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
from engine.units import format_fixed


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
                divisor += " " + _("(experts / {n_de})").format(n_de=shard.n_de)
            where = " → " + _("host") if is_offloaded(spec.offload, part.key) else ""
            formulas[part.key].append(
                f"{part.label} {part.bytes_per_param:.4g} B × {group.symbol}{divisor}{where}"
            )
    largest_note = ""
    if draft.largest is not None:
        w, largest, origin, _grads = draft.largest
        largest_note = " + " + _(
            "{bytes:g} B × largest layer {params} ({origin}; gathered whole)"
        ).format(bytes=w, params=format_fixed(largest, 0), origin=_(origin))
    source = CONVENTION_SOURCES[spec.convention]
    stage_name = zero_stage_name(spec)
    separator = _("; ")  # between the parts of a formula text: full-width in Chinese
    psi = format_fixed(stage.dense + stage.expert, 0)
    psi_text = f"{separator}Ψ = {shard_text(spec, shard, stage)} = {psi}"
    if spec.finetune == "qlora":
        psi_text += separator + _("Ψ_NF4 = the linear layers' weights = {params}").format(
            params=format_fixed(stage.quant_dense + stage.quant_expert, 0)
        )
    if spec.finetune != "full":
        psi_text += f"{separator}Ψ_LoRA = {lora_text(spec, shard, stage)}"
    terms: list[LedgerTerm] = []
    for index, (key, value) in enumerate(zip(MODEL_STATE_KEYS, draft.term_bytes, strict=False)):
        text = " + ".join(formulas[key]) or _("none kept")
        gathered = key == "params" or (
            key == "grads" and draft.largest is not None and draft.largest.grads
        )
        if largest_note and gathered:
            text += largest_note
        text += psi_text
        if key == "params" and spec.params is None and shard.size is not None:
            text += f"{separator}N = {shard.size.formula}"
        text += f"{separator}{stage_name} = {bytes_text(value)}"
        moved = draft.host_bytes[index]
        if moved:
            text += " " + _("on the device, {bytes} on the host").format(bytes=bytes_text(moved))
        terms.append(LedgerTerm(key, value, text, term_source(spec, key, source)))
    terms.append(activation_term(spec, draft.activations, stage))
    terms.append(buffer_term(spec, draft.buffer))
    return tuple(terms)


def host_figure(draft: Figures, value: float, gpn: int, nodes: int) -> dict[str, Any]:
    """How the host memory per node (``value``) was reached."""
    spec = draft.spec
    case = deepspeed_host_case(spec)
    factor = DEEPSPEED_BUFFER_FACTOR
    # Counts of one in the singular ("1 GPU per node", "1 node"), as the node-layout line has them.
    per_node = ngettext("{count} GPU per node", "{count} GPUs per node", gpn).format(count=gpn)
    node_count = ngettext("{count} node", "{count} nodes", nodes).format(count=nodes)
    if case is None:
        moved = sum(draft.host_bytes)
        if spec.offload == "none":
            formula = _("nothing offloaded: 0")
        else:
            formula = _(
                "the offloaded model states of one rank {bytes} × {per_node} = {total}"
            ).format(bytes=bytes_text(moved), per_node=per_node, total=bytes_text(value))
        source = sources.joined(sources.OFFLOAD)
    else:
        psi = draft.stage.dense + draft.stage.expert
        init = "zero_init" if spec.zero_init else _("no zero_init")
        figures = {
            "psi": format_fixed(psi, 0),
            "per_node": per_node,
            "factor": f"{factor:g}",
            "init": init,
        }
        world = gpn * nodes
        text = {
            "zero2-optimizer": _("Ψ {psi} × max(4 × {gpus}, 16) × {factor}").format(
                **figures,
                gpus=ngettext("{count} GPU", "{count} GPUs", world).format(count=world),
            ),
            "zero2-none": _("Ψ {psi} × 4 × {per_node} × {factor}").format(**figures),
            "zero3-none": (
                _("largest layer × 4 × {per_node} × {factor} ({init})").format(**figures)
                if spec.zero_init
                else _("Ψ {psi} × 4 × {per_node} × {factor} ({init})").format(**figures)
            ),
        }.get(case)
        if text is None:
            states = 18 if case == "zero3-optimizer+params" else 16
            if spec.zero_init:
                text = _("Ψ {psi} × {states} / {nodes} × {factor} (zero_init)").format(
                    **figures, states=states, nodes=node_count
                )
            else:
                text = _(
                    "Ψ {psi} × max(4 × {per_node}, {states} / {nodes}) × "
                    "{factor} (no zero_init: each process loads the model)"
                ).format(**figures, states=states, nodes=node_count)
        formula = _(
            "DeepSpeed's estimate per node, offload {offload}: {text} = {total} "
            "(buffer factor {factor}: DeepSpeed's additional_buffer_factor)"
        ).format(offload=spec.offload, text=text, total=bytes_text(value), factor=f"{factor:g}")
        source = sources.joined(sources.DEEPSPEED_ESTIMATORS)
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
            pieces.append(_("embedding"))
        pieces.append(
            _("{layers} of {total} layers").format(layers=stage.layers, total=size.layers)
            + uneven_text(spec, stage)
        )
        if stage.output:
            pieces.append(_(stage.output))
        if stage.position == spec.pp - 1 and size.final_norm:
            pieces.append(_("final norm"))
        text = f"({' + '.join(pieces)}) / TP {tp}" + (
            ", " + _("experts / EP {ep}").format(ep=ep) if size.experts > 1 else ""
        )
        if spec.params is not None:
            text = (
                f"N {format_fixed(shard.params_total, 0)} / {format_fixed(size.total, 0)} × {text}"
            )
        return text
    if stage.layers is None:
        where = f"1/PP {spec.pp}"
    else:
        where = _("{layers}/{total} layers").format(
            layers=stage.layers, total=spec.layers
        ) + uneven_text(spec, stage)
    text = f"N {format_fixed(shard.params_total, 0)} × {where} / TP {tp}"
    if shard.share:
        text += ", " + _("experts ({share} of N) / EP {ep}").format(
            share=f"{shard.share:.3g}", ep=ep
        )
    return text


def lora_text(spec: LedgerSpec, shard: Sharding, stage: StageParams) -> str:
    """How Ψ_LoRA, the adapter parameters on the rank, was reached."""
    targets = ",".join(spec.lora_targets)
    return _(
        "r {rank} × (d_in + d_out) on {targets}: {per_layer} per layer × {layers} layers "
        "/ TP {tp} = {params}"
    ).format(
        rank=spec.lora_rank,
        targets=targets,
        per_layer=format_fixed(shard.lora_per_layer, 0),
        layers=stage.layers,
        tp=spec.tp,
        params=format_fixed(stage.lora_dense + stage.lora_expert, 0),
    )


def uneven_text(spec: LedgerSpec, stage: StageParams) -> str:
    """Where the stage sits when the layers do not divide evenly over the stages; ``""`` when
    they do."""
    if spec.layers is not None and spec.layers % spec.pp:
        if stage.position == 0:
            return " " + _("on the first of {stages} uneven stages, the heaviest").format(
                stages=spec.pp
            )
        return " " + _("on stage {stage} of {stages} uneven stages").format(
            stage=stage.position + 1, stages=spec.pp
        )
    return ""


_STAGE_NAMES = (N_("ZeRO-0 (replicated)"), "ZeRO-1", "ZeRO-2", "ZeRO-3 / FSDP")


def zero_stage_name(spec: LedgerSpec) -> str:
    """The ZeRO stage as the formulas name it (Megatron-LM calls stage 1 its distributed
    optimizer)."""
    if spec.convention == "megatron" and spec.zero_stage == 1:
        return _("distributed optimizer")
    return _(_STAGE_NAMES[spec.zero_stage])


def term_source(spec: LedgerSpec, key: str, convention: sources.Citations) -> str:
    """The sources of the term ``key``: the convention's, and those of every option that changes
    it, in the interface language (:func:`engine.sources.joined`)."""
    cited: list[str | sources.Citations] = [convention]
    if key == "params" and spec.params is None:
        cited.append(_("N: {source}").format(source=sources.joined(sources.PARAM_COUNT)))
    if key == "params" and spec.pp > 1:
        cited.append(sources.STAGE_PLACEMENT)
    if spec.finetune != "full":
        cited.append(sources.LORA_ADAPTERS)
        if spec.finetune == "qlora" and key == "params":
            cited.append(sources.QLORA_NF4)
    if spec.offload != "none" and is_offloaded(spec.offload, key):
        cited.append(sources.OFFLOAD)
    if key == "grads" and spec.fp32_grad_accumulation:
        cited.append(sources.FP32_GRAD_ACCUMULATION)
    if key == "optimizer_states" and not spec.master_weights and DTYPE_BYTES[spec.dtype] < 4:
        cited.append(sources.PURE_BF16_STATES)
    if key == "optimizer_states" and spec.optimizer not in ("adam", "adamw"):
        cited.append(OPTIMIZER_SOURCES[spec.optimizer])
    elif spec.convention == "megatron" and spec.zero_stage >= 2:
        cited.append(
            _("stages 2-3 beyond its estimator, as {source}").format(source=sources.FSDP_UNITS)
        )
    return sources.joined(*cited)


def activation_term(
    spec: LedgerSpec, described: StageActivations | None, stage: StageParams
) -> LedgerTerm:
    """The activations line: Table 2's row, the stage's multiples, the stage shown."""
    if described is None:
        reason = FieldNote(
            _("not computed: give {seq} (and {layers}, {hidden}, {heads}) to compute activations"),
            **{name: FieldName(name) for name in ("seq", "layers", "hidden", "heads")},
        )
        return LedgerTerm("activations", 0.0, reason, sources.ACTIVATIONS_TABLE2)
    text = _("Table 2 row '{row}': {formula}").format(
        row=described.per_layer.row, formula=described.per_layer.formula
    )
    separator = _("; ")  # between the parts of a formula text: full-width in Chinese
    text += separator + described.formula
    if described.notes:
        text += separator + separator.join(described.notes)
    if (spec.experts or 1) > 1:
        text += separator + _(
            "MoE: balanced routing gives each rank as many tokens as a dense MLP, so no /EP"
        )
    if spec.finetune != "full":
        text += separator + _(
            "frozen layers still keep their inputs here (an upper bound for LoRA)"
        )
    value = described.total
    if stage.position:
        per_stage = per_stage_activation_bytes(
            described, stage_layer_counts(spec.layers or 1, spec.pp)
        )
        value = per_stage[stage.position]
        text += separator + _("stage {stage} of {stages}, the most loaded: {bytes}").format(
            stage=stage.position + 1, stages=spec.pp, bytes=bytes_text(value)
        )
    cited: list[str | sources.Citations] = [
        sources.ACTIVATIONS_TABLE2,
        sources.ACTIVATIONS_FIRST_STAGE,
    ]
    if spec.vocab is not None:
        cited.append(sources.ACTIVATIONS_EMBEDDING_OUTPUT)
    if described.per_layer.shape is not None and described.per_layer.row not in _TABLE2_ROWS:
        cited.append(sources.ACTIVATIONS_GENERAL_SHAPE)
    return LedgerTerm("activations", value, text, sources.joined(*cited))


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
        text = _("one data-parallel rank: nothing to communicate")
        return LedgerTerm("buffers", value, text, sources.DDP_BUCKET)
    if buffer.case == "ddp":
        text = (
            _("one DDP gradient bucket {bytes}").format(bytes=bytes_text(value))
            if value
            else _("DDP bucket not given: 0")
        )
        return LedgerTerm("buffers", value, text, sources.DDP_BUCKET)
    if buffer.case == "deepspeed":
        text = _("the gathered largest layer is in params and grads (DeepSpeed ZeRO-3 estimator)")
        return LedgerTerm("buffers", value, text, sources.joined(sources.DEEPSPEED_ESTIMATORS))
    if buffer.case == "unknown":
        return LedgerTerm("buffers", value, _("FSDP unit unknown: 0"), sources.FSDP_UNITS)
    text = _(
        "FSDP: (1 + prefetch {prefetch}) × {origin} {params} params × {weight} B gathered "
        "+ its unsharded gradient × {grad} B = {bytes}"
    ).format(
        prefetch=spec.prefetch,
        origin=_(buffer.origin),
        params=format_fixed(buffer.unit, 0),
        weight=f"{buffer.weight:g}",
        grad=f"{buffer.grad:g}",
        bytes=bytes_text(value),
    )
    return LedgerTerm("buffers", value, text, sources.FSDP_UNITS)


def bytes_text(value: float) -> str:
    """``value`` bytes with thousands separators: ``4,298,121,216 B``."""
    return f"{format_fixed(value, 0)} B"
