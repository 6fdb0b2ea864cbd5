"""Checking a :class:`~engine.ledger.model.LedgerSpec` before it is computed: every field with
:mod:`engine.checks`, the shape resolved from its preset, the relations between the parallel
sizes, the node layout.
"""

from __future__ import annotations

import operator
from dataclasses import replace
from typing import Any

from engine.activations import (
    RECOMPUTE_CHOICES,
    SCHEDULE_CHOICES,
)
from engine.checks import (
    MAX_COUNT,
    MAX_PIPELINE_STAGES,
    finite_number,
    flag,
    one_of,
    whole_number,
    zero_stage,
)
from engine.errors import FieldName, InputError, quoted
from engine.i18n import gettext, ngettext
from engine.ledger.model import (
    CONVENTIONS,
    DEFAULT_LORA_TARGETS,
    DTYPE_CHOICES,
    FINETUNE_CHOICES,
    LORA_TARGETS,
    OFFLOAD_CHOICES,
    OPTIMIZER_CHOICES,
    LedgerSpec,
)
from engine.model_presets import get_preset, resolve_shape_key
from engine.model_size import (
    SHAPE_FIELDS,
    ModelShape,
)
from engine.units import format_bytes, format_per_parameter


def checked_targets(names: object) -> tuple[str, ...]:
    """LoRA target names, each one of :data:`~engine.ledger.model.LORA_TARGETS`, none twice.

    Raises:
        InputError: (field ``lora_targets``) not a list, an unknown name, none, or one twice.
    """
    if isinstance(names, str) or not isinstance(names, tuple | list):
        raise InputError(
            "lora_targets", gettext("expected a list of names, got {names!r}").format(names=names)
        )
    for name in names:
        if name not in LORA_TARGETS:
            raise InputError(
                "lora_targets",
                gettext("{name} is not one of {choices} (comma list)").format(
                    name=quoted(str(name)), choices=", ".join(LORA_TARGETS)
                ),
            )
    if not names:
        raise InputError(
            "lora_targets",
            gettext("name at least one of {choices}").format(choices=", ".join(LORA_TARGETS)),
        )
    if len(set(names)) != len(names):
        raise InputError("lora_targets", gettext("a target is named twice"))
    return tuple(names)


# (field, minimum, may be None) of every whole-number field of LedgerSpec outside the shape.
_COUNT_FIELDS: tuple[tuple[str, int, bool], ...] = (
    *((name, 1, False) for name in ("micro_batch_size", "dp", "tp", "cp", "ep")),
    ("virtual_stages", 1, False),
    ("prefetch", 0, False),
    ("lora_rank", 1, False),
    ("seq", 1, True),
    ("num_microbatches", 1, True),
    ("gpus_per_node", 1, True),
    ("nodes", 1, True),
)


_COUNT_VALUES = operator.attrgetter(*(name for name, _, _ in _COUNT_FIELDS))


_SHAPE_VALUES = operator.attrgetter(*SHAPE_FIELDS)


_CHOICE_FIELDS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("dtype", DTYPE_CHOICES),
    ("optimizer", OPTIMIZER_CHOICES),
    ("convention", CONVENTIONS),
    ("recompute", RECOMPUTE_CHOICES),
    ("schedule", SCHEDULE_CHOICES),
    ("finetune", FINETUNE_CHOICES),
    ("offload", OFFLOAD_CHOICES),
)


_FLAG_FIELDS = (
    "master_weights",
    "fp32_grads",
    "sequence_parallel",
    "zero_init",
    "fp32_grad_accumulation",
)


def check_ledger_spec(spec: LedgerSpec) -> tuple[LedgerSpec, ModelShape | None]:
    """Validate every field; return the spec with whole numbers as ``int`` and the shape fields
    filled in (preset, then defaults), and the shape they describe."""
    if (
        spec.dtype not in DTYPE_CHOICES
        or spec.optimizer not in OPTIMIZER_CHOICES
        or spec.convention not in CONVENTIONS
        or spec.recompute not in RECOMPUTE_CHOICES
        or spec.schedule not in SCHEDULE_CHOICES
        or spec.finetune not in FINETUNE_CHOICES
        or spec.offload not in OFFLOAD_CHOICES
    ):
        for name, allowed in _CHOICE_FIELDS:
            one_of(name, getattr(spec, name), allowed)
    if type(spec.zero_stage) is not int:
        spec = replace(spec, zero_stage=zero_stage("zero_stage", spec.zero_stage))
    zero_stage("zero_stage", spec.zero_stage)
    for name in _FLAG_FIELDS:
        flag(name, getattr(spec, name))
    if spec.model is not None and not isinstance(spec.model, str):
        raise InputError(
            "model", gettext("expected a preset name, got {model!r}").format(model=spec.model)
        )
    # Whole numbers typed as floats (2.0) are normalized to int; anything else must already be one.
    values = _SHAPE_VALUES(spec)
    key = tuple(zip(map(type, values), values, strict=True))
    resolved, shape = resolve_shape_key(key, spec.model)
    changed: dict[str, Any] = dict(zip(SHAPE_FIELDS, resolved, strict=True))
    if not (type(spec.pp) is int and 1 <= spec.pp <= MAX_PIPELINE_STAGES):
        changed["pp"] = whole_number("pp", spec.pp, maximum=MAX_PIPELINE_STAGES)
    for (name, minimum, optional), value in zip(_COUNT_FIELDS, _COUNT_VALUES(spec), strict=True):
        if (type(value) is int and minimum <= value <= MAX_COUNT) or (value is None and optional):
            continue
        changed[name] = whole_number(name, value, minimum=minimum)
    if spec.lora_targets != DEFAULT_LORA_TARGETS:
        changed["lora_targets"] = checked_targets(spec.lora_targets)
    spec = replace(spec, **changed)
    if spec.weight_bytes is not None:
        finite_number("weight_bytes", spec.weight_bytes, maximum=64, written=format_per_parameter)
    if spec.grad_bytes is not None:
        finite_number(
            "grad_bytes", spec.grad_bytes, allow_zero=True, maximum=64, written=format_per_parameter
        )
    if spec.optimizer_bytes is not None:
        finite_number(
            "optimizer_bytes",
            spec.optimizer_bytes,
            allow_zero=True,
            maximum=64,
            written=format_per_parameter,
        )
    finite_number("bucket_bytes", spec.bucket_bytes, allow_zero=True, written=format_bytes)
    if spec.gpu_memory is not None:
        finite_number("gpu_memory", spec.gpu_memory, written=format_bytes)
    if spec.heads is not None and spec.heads % spec.tp:
        raise InputError(
            "tp",
            gettext("must divide {field} ({heads}); TP {tp} does not"),
            field=FieldName("heads"),
            heads=spec.heads,
            tp=spec.tp,
        )
    if spec.kv_heads is not None and spec.kv_heads % spec.tp:
        raise InputError(
            "tp",
            gettext("must divide the key/value heads ({kv_heads}); TP {tp} does not").format(
                kv_heads=spec.kv_heads, tp=spec.tp
            ),
        )
    if spec.layers is not None and spec.pp > spec.layers:
        raise InputError("pp", gettext("{pp} stages need at least {pp} layers").format(pp=spec.pp))
    experts = spec.experts or 1
    if spec.ep > experts or experts % spec.ep:
        raise InputError(
            "ep", gettext("must divide the number of experts ({experts})").format(experts=experts)
        )
    if (spec.dp * spec.cp) % spec.ep:
        raise InputError(
            "ep",
            gettext("must divide DP·CP ({value}): experts spread over DP").format(
                value=spec.dp * spec.cp
            ),
        )
    if spec.seq is None:
        if spec.recompute != "none":
            raise InputError("seq", gettext("activation recomputation needs the sequence length"))
        if spec.sequence_parallel:
            raise InputError("seq", gettext("sequence parallelism needs the sequence length"))
    elif spec.model is not None:
        longest = get_preset(spec.model).max_seq
        if longest is not None and spec.seq > longest:
            raise InputError(
                "seq",
                gettext("{model} takes at most {longest} tokens per sequence").format(
                    model=spec.model, longest=longest
                ),
            )
    if spec.offload == "optimizer" and spec.zero_stage < 1:
        raise InputError("offload", gettext("offloading the optimizer needs ZeRO stage 1, 2 or 3"))
    if spec.offload == "optimizer+params" and spec.zero_stage != 3:
        raise InputError(
            "offload", gettext("offloading the parameters needs ZeRO-3 (ZeRO-Infinity)")
        )
    if spec.finetune != "full":
        if spec.layers is None or spec.hidden is None:
            raise InputError(
                "finetune",
                gettext("LoRA needs the architecture: give a model, or {layers} and {hidden}"),
                layers=FieldName("layers"),
                hidden=FieldName("hidden"),
            )
        if spec.finetune == "qlora" and spec.vocab is None:
            raise InputError("finetune", gettext("QLoRA's 4-bit share needs the vocabulary too"))
        if "gate" in spec.lora_targets and spec.mlp == "gelu":
            raise InputError(
                "lora_targets", gettext("gate exists only in a gated MLP (swiglu, geglu)")
            )
    return spec, shape


def node_layout(spec: LedgerSpec) -> tuple[int, int]:
    """(GPUs per node, nodes): as given, else every rank on one node."""
    world = spec.dp * spec.tp * spec.pp * spec.cp
    gpn, nodes = spec.gpus_per_node, spec.nodes
    if gpn is not None and nodes is not None:
        if gpn * nodes != world:
            raise InputError(
                "nodes",
                gettext("{nodes} × {gpn} is not the world size {world}").format(
                    nodes=ngettext("{count} node", "{count} nodes", nodes).format(count=nodes),
                    gpn=ngettext("{count} GPU per node", "{count} GPUs per node", gpn).format(
                        count=gpn
                    ),
                    world=world,
                ),
            )
        return gpn, nodes
    if gpn is not None:
        if world % gpn:
            raise InputError(
                "gpus_per_node", gettext("must divide the world size {world}").format(world=world)
            )
        return gpn, world // gpn
    if nodes is not None:
        if world % nodes:
            raise InputError(
                "nodes", gettext("must divide the world size {world}").format(world=world)
            )
        return world // nodes, nodes
    return world, 1
