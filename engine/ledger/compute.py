"""The ledger of one configuration (:func:`compute_ledger`), and the same in every convention."""

from __future__ import annotations

import math
import operator
from dataclasses import replace

from engine.activations import (
    StageActivations,
    per_stage_activation_bytes,
    stage_activation_bytes,
    stage_layer_counts,
    uneven_stages_note,
)
from engine.errors import FieldName, InputError
from engine.i18n import gettext as _
from engine.ledger.buffers import comm_buffers
from engine.ledger.host import host_per_node
from engine.ledger.model import (
    ACTIVATION_INPUTS,
    CONVENTIONS,
    DTYPE_BYTES,
    MODEL_STATE_KEYS,
    TERM_KEYS,
    LedgerResult,
    LedgerSpec,
    convention_label,
)
from engine.ledger.states import (
    ParamGroup,
    StageParams,
    deepspeed_largest_layer,
    model_state_bytes,
    param_groups,
    placement,
    state_layout,
    weight_bytes_per_param,
)
from engine.ledger.terms import Figures, host_figure, term_lines
from engine.ledger.validate import check_ledger_spec, node_layout
from engine.model_size import (
    ModelShape,
    shape_param_count,
)


def compute_ledger(spec: LedgerSpec) -> LedgerResult:
    """The per-rank ledger of ``spec`` in ``spec.convention`` (module docstring: sources).

    Returns:
        A :class:`LedgerResult`; every figure in bytes, finite and >= 0.

    Raises:
        InputError: naming the spec field: a size that is zero, negative, fractional, NaN or
            infinite; an unknown dtype, optimizer, convention, schedule, recompute mode, model,
            MLP, norm, attention kernel, fine-tuning mode, LoRA target or offload mode; a ZeRO
            stage outside 0-3; neither ``params`` nor the architecture given; ``tp`` not dividing
            ``heads`` or ``kv_heads``; ``ep`` not dividing ``experts`` or DP·CP; ``pp`` above
            ``layers``; activations asked for (recompute, sequence parallel) without ``seq``, or
            ``seq`` without ``layers``, ``hidden`` or ``heads``; LoRA without the architecture;
            offload below the ZeRO stage it needs; ``nodes`` and ``gpus_per_node`` not matching
            the world size.
    """
    spec, shape = check_ledger_spec(spec)
    size = None
    if shape is not None and shape.vocab is not None:
        size = shape_param_count(shape, spec.seq)
    convention = spec.convention
    notes: list[str] = []
    if spec.fp32_grads and convention != "zero-paper":
        notes.append(
            _("fp32 gradients are part of the {convention} layout already").format(
                convention=convention
            )
        )
    if spec.fp32_grad_accumulation and (convention != "zero-paper" or spec.fp32_grads):
        notes.append(_("the fp32 gradient accumulation buffer is the fp32 gradients already"))
    if convention != "zero-paper" and (
        spec.weight_bytes is not None
        or spec.grad_bytes is not None
        or spec.optimizer_bytes is not None
    ):
        notes.append(
            _(
                "bytes-per-parameter overrides apply to {zero_paper} only; {convention} uses "
                "its own layout"
            ).format(
                zero_paper=convention_label("zero-paper"), convention=convention_label(convention)
            )
        )
    shard, stages = placement(spec, shape, size)
    layout = state_layout(spec)
    bytes_per_param: dict[str, float] = dict.fromkeys(MODEL_STATE_KEYS, 0.0)
    for part in layout:
        bytes_per_param[part.key] += part.bytes_per_param

    activations = _activations(spec, shape)
    if activations is not None:
        # The ledger writes its own note on uneven stages (the stage it reports on).
        uneven = uneven_stages_note(spec.layers or 1, spec.pp)
        notes.extend(note for note in activations.notes if note != uneven)
        assert spec.layers is not None
        activation_bytes = per_stage_activation_bytes(
            activations, stage_layer_counts(spec.layers, spec.pp)
        )
    else:
        activation_bytes = [0.0] * spec.pp
    buffer = comm_buffers(spec, shard, stages[0], notes)
    largest = deepspeed_largest_layer(spec, shard, notes)
    gpus_per_node, nodes = node_layout(spec)

    best: tuple[dict[str, float], dict[str, float], list[ParamGroup], StageParams] | None = None
    per_stage: list[dict[str, float]] = []
    for stage in stages:
        groups = param_groups(spec, stage, layout)
        per_rank, host = model_state_bytes(spec, shard, groups, largest)
        per_rank["activations"] = activation_bytes[stage.position]
        per_rank["buffers"] = buffer.bytes
        per_rank["total"] = math.fsum(per_rank.values())
        if spec.pp > 1:
            entry: dict[str, float] = {"stage": stage.position, "layers": stage.layers or 0}
            entry.update(per_rank)
            entry["offloaded"] = math.fsum(host.values())
            per_stage.append(entry)
        # Strictly more: equal stages report the first.
        if best is None or per_rank["total"] > best[0]["total"]:
            best = (per_rank, host, groups, stage)
    assert best is not None
    per_rank, best_host, groups, chosen = best
    term_bytes = _TERM_BYTES(per_rank)
    total = per_rank["total"]
    model_states = math.fsum([per_rank[key] for key in MODEL_STATE_KEYS])
    naive = shard.params_total * weight_bytes_per_param(spec)
    host_per_rank = math.fsum(best_host.values())
    offloaded = host_per_node(spec, shard, chosen, host_per_rank, gpus_per_node, nodes, largest)
    # Every input is validated >= 0, so a finite, non-negative total and naive figure clear
    # every term; the per-term walk only names the one that overflowed.
    if not (
        0.0 <= total < math.inf
        and 0.0 <= naive < math.inf
        and 0.0 <= offloaded < math.inf
        and min(term_bytes) >= 0.0
    ):
        for key, value in (*per_rank.items(), ("naive", naive), ("host", offloaded)):
            if not math.isfinite(value) or value < 0:
                raise InputError(
                    "params", _("the {key} figure overflows; use smaller sizes").format(key=key)
                )
    if spec.layers is not None and spec.pp > 1 and spec.layers % spec.pp:
        layers_here = chosen.layers
        uneven = (
            _(
                "{layers} layers on {stages} stages are uneven: figures are for the first "
                "stage, {layers_here} layers, the most loaded"
            )
            if chosen.position == 0
            else _(
                "{layers} layers on {stages} stages are uneven: figures are for stage {stage}, "
                "{layers_here} layers, the most loaded"
            )
        )
        notes.append(
            uneven.format(
                layers=spec.layers,
                stages=spec.pp,
                stage=chosen.position + 1,
                layers_here=layers_here,
            )
        )
    elif spec.pp > 1 and chosen.position:
        notes.append(
            _("figures are for stage {stage} of {stages}, the most loaded").format(
                stage=chosen.position + 1, stages=spec.pp
            )
        )
    if spec.finetune == "full":
        trainable = shard.params_total
    else:
        trainable = shard.lora_per_layer * (spec.layers or 0)
    figures = Figures(
        spec,
        shard,
        chosen,
        groups,
        largest,
        term_bytes,
        tuple(best_host.get(key, 0.0) for key in MODEL_STATE_KEYS),
        activations,
        buffer,
    )
    return LedgerResult(
        spec=spec,
        convention=convention,
        per_rank_bytes=per_rank,
        model_states_bytes=model_states,
        naive_bytes=naive,
        params_total=shard.params_total,
        params_per_rank=chosen.dense + chosen.expert,
        bytes_per_param=bytes_per_param,
        world_size=spec.dp * spec.tp * spec.pp * spec.cp,
        fits=None if spec.gpu_memory is None else total <= spec.gpu_memory,
        activations_computed=activations is not None,
        notes=tuple(dict.fromkeys(notes)),
        trainable_params=trainable,
        offloaded_bytes=offloaded,
        gpus_per_node=gpus_per_node,
        nodes=nodes,
        most_loaded_stage=chosen.position,
        per_stage_bytes=tuple(per_stage),
        terms=term_lines(figures),
        host=host_figure(figures, offloaded, gpus_per_node, nodes),
    )


def compare_conventions(spec: LedgerSpec) -> dict[str, LedgerResult]:
    """The same configuration in every convention, keyed ``zero-paper``, ``megatron``,
    ``deepspeed``; :data:`CONVENTION_NOTES` explains each one's difference.

    Raises:
        InputError: as :func:`compute_ledger`.
    """
    return {name: compute_ledger(replace(spec, convention=name)) for name in CONVENTIONS}


def bytes_per_param_note(result: LedgerResult) -> str:
    """The bytes per trainable parameter the configuration uses, summed and by component, in
    the interface language: 8-bit Adam in bf16 -> ``10 B per trainable parameter here (2 bf16
    params + 2 bf16 grads + 4 fp32 master weights + 2 adam-8bit states)``. Before sharding and
    offload; :data:`CONVENTION_NOTES` gives the convention's sources' case (Adam), which another
    optimizer, dtype or typed bytes per parameter change."""
    parts = state_layout(result.spec)
    text = " + ".join(f"{part.bytes_per_param:.4g} {part.label}" for part in parts)
    total = math.fsum(part.bytes_per_param for part in parts)
    return _("{total} B per trainable parameter here ({parts})").format(
        total=f"{total:.4g}", parts=text
    )


def exercise1_columns(result: LedgerResult) -> dict[str, float]:
    """Lesson S15 exercise 1's four columns, in bytes per rank: ``parameters``, ``gradients``,
    ``adam_states`` (master weights + optimizer states) and ``activations``."""
    per_rank = result.per_rank_bytes
    return {
        "parameters": per_rank["params"],
        "gradients": per_rank["grads"],
        "adam_states": per_rank["master_weights"] + per_rank["optimizer_states"],
        "activations": per_rank["activations"],
    }


_TERM_BYTES = operator.itemgetter(*TERM_KEYS)


def _activations(spec: LedgerSpec, shape: ModelShape | None) -> StageActivations | None:
    """The first stage's activations; ``None`` when ``seq`` is not given."""
    if spec.seq is None:
        return None
    if spec.layers is None or spec.hidden is None or spec.heads is None:
        missing = next(n for n in ("layers", "hidden", "heads") if getattr(spec, n) is None)
        raise InputError(
            missing,
            _("activations need {layers}, {hidden} and {heads} with {seq}"),
            **{name: FieldName(name) for name in ACTIVATION_INPUTS},
        )
    return stage_activation_bytes(
        seq=spec.seq,
        micro_batch_size=spec.micro_batch_size,
        hidden=spec.hidden,
        heads=spec.heads,
        layers=spec.layers,
        vocab=spec.vocab,
        tp=spec.tp,
        pp=spec.pp,
        cp=spec.cp,
        sequence_parallel=spec.sequence_parallel,
        recompute=spec.recompute,
        schedule=spec.schedule,
        num_microbatches=spec.num_microbatches,
        virtual_stages=spec.virtual_stages,
        activation_bytes=DTYPE_BYTES[spec.dtype],
        shape=shape,
    )
