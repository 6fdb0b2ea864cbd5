"""Model states per rank: where the parameters sit (pipeline stages, TP, EP, ZeRO shards), the
bytes per parameter of each state in the chosen convention, and what is offloaded.
"""

from __future__ import annotations

from typing import NamedTuple

from engine.activations import (
    stage_layer_counts,
)
from engine.checks import finite_number
from engine.errors import FieldName, FieldNote, InputError
from engine.i18n import N_
from engine.i18n import gettext as _
from engine.ledger.model import (
    DTYPE_BYTES,
    NF4_BYTES_PER_PARAM,
    OPTIMIZER_STATE_BYTES,
    TERM_KEYS,
    LedgerSpec,
)
from engine.model_size import (
    ModelShape,
    ModelSize,
)


class Part(NamedTuple):
    """A model-state component: bytes per parameter, sharded over N_d from ZeRO stage ``stage``."""

    key: str
    label: str
    bytes_per_param: float
    stage: int


class ParamGroup(NamedTuple):
    """Parameters of one kind on a rank (all of them, the frozen or NF4 ones, the adapters):
    ``dense`` and ``expert`` counts after TP/PP/EP, the parts each carries, and the symbol
    the formula text names the count by."""

    symbol: str
    dense: float
    expert: float
    parts: list[Part]


class StageParams(NamedTuple):
    """What one pipeline stage (``position``, 0-based) holds: parameter counts on one of its
    ranks, after TP and EP."""

    position: int
    layers: int | None
    dense: float
    expert: float
    quant_dense: float
    quant_expert: float
    lora_dense: float
    lora_expert: float
    embedding: bool
    output: str


class Sharding(NamedTuple):
    """How ZeRO divides the model shard, and where N came from."""

    n_d: int
    n_de: int
    size: ModelSize | None
    shape: ModelShape | None
    params_total: float
    share: float
    lora_per_layer: float


class GatheredLayer(NamedTuple):
    """DeepSpeed ZeRO-3's gathered largest layer on the rank (parameters, after TP)."""

    bytes_per_param: float
    params: float
    origin: str
    grads: bool


def model_state_bytes(
    spec: LedgerSpec, shard: Sharding, groups: list[ParamGroup], largest: GatheredLayer | None
) -> tuple[dict[str, float], dict[str, float]]:
    """(device bytes per term, host bytes per term) of one rank's model states."""
    per_rank: dict[str, float] = dict.fromkeys(TERM_KEYS, 0.0)
    host: dict[str, float] = {}
    zero_stage, n_d, n_de, offload = spec.zero_stage, shard.n_d, shard.n_de, spec.offload
    for group in groups:
        dense, expert = group.dense, group.expert
        for part in group.parts:
            sharded = zero_stage >= part.stage
            value = part.bytes_per_param * (
                dense / (n_d if sharded else 1) + expert / (n_de if sharded else 1)
            )
            if is_offloaded(offload, part.key):
                host[part.key] = host.get(part.key, 0.0) + value
            else:
                per_rank[part.key] += value
    if largest is not None:
        per_rank["params"] += largest.bytes_per_param * largest.params
        if largest.grads:
            per_rank["grads"] += largest.bytes_per_param * largest.params
    return per_rank, host


def is_offloaded(offload: str, key: str) -> bool:
    """Whether the model state ``key`` lives on the host under ``offload``."""
    return offload == "optimizer+params" or (offload == "optimizer" and key != "params")


def lora_per_layer(spec: LedgerSpec, shape: ModelShape | None) -> tuple[float, float]:
    """(dense, routed-expert) adapter parameters of one layer: r·(d_in + d_out) per matrix."""
    if spec.finetune == "full" or shape is None:
        return 0.0, 0.0
    layers = shape.linear_layers()
    dense = expert = 0.0
    for name in spec.lora_targets:
        d_in, d_out, copies, routed = layers[name]
        one = spec.lora_rank * (d_in + d_out)
        dense += copies * one
        expert += routed * one
    return dense, expert


def placement(
    spec: LedgerSpec, shape: ModelShape | None, size: ModelSize | None
) -> tuple[Sharding, list[StageParams]]:
    """Where the parameters sit: one :class:`StageParams` per pipeline stage, and the ZeRO
    groups."""
    if spec.params is None and size is None:
        missing = next(n for n in ("layers", "hidden", "vocab") if getattr(spec, n) is None)
        raise InputError(
            "params",
            _("give the parameter count, or the architecture ({missing} is missing)"),
            missing=FieldName(missing),
        )
    p, tp, ep = spec.pp, spec.tp, spec.ep
    n_d = spec.dp * spec.cp
    n_de = n_d // ep
    counts = None if spec.layers is None else stage_layer_counts(spec.layers, p)
    lora_dense, lora_expert = lora_per_layer(spec, shape)
    stages: list[StageParams] = []
    if size is not None:
        assert counts is not None
        params_total = size.total
        scale = 1.0
        if spec.params is not None:
            params_total = finite_number("params", spec.params)
            scale = params_total / size.total
        for i, layers in enumerate(counts):
            last = i == p - 1
            extra = size.embedding if i == 0 else 0.0
            output = ""
            if last:
                extra += size.output_layer + size.final_norm
                output = N_("output layer") if size.output_layer else ""
                if p > 1 and not size.output_layer:
                    extra += size.word_embedding
                    output = N_("tied output-layer copy")
            if size.experts > 1:
                dense = (layers * size.layer_dense + extra) / tp
                expert = layers * size.experts * size.layer_mlp / (tp * ep)
            else:
                dense = (layers * size.per_layer + extra) / tp
                expert = 0.0
            quant_expert = layers * size.expert_layer_quantizable / (tp * ep)
            quant_dense = layers * (size.layer_quantizable - size.expert_layer_quantizable) / tp
            stages.append(
                StageParams(
                    i,
                    layers,
                    dense * scale,
                    expert * scale,
                    quant_dense * scale,
                    quant_expert * scale,
                    layers * lora_dense / tp,
                    layers * lora_expert / (tp * ep),
                    i == 0,
                    output,
                )
            )
        shard = Sharding(n_d, n_de, size, shape, params_total, 0.0, lora_dense + lora_expert)
        return shard, stages
    params = finite_number("params", spec.params)
    share = expert_share(spec)
    for i in range(p):
        on_stage = None if counts is None else counts[i]
        fraction = 1 / p if counts is None else counts[i] / (spec.layers or 1)
        n = on_stage or 0
        stages.append(
            StageParams(
                i,
                on_stage,
                params * (1 - share) * fraction / tp,
                params * share * fraction / (tp * ep),
                0.0,
                0.0,
                n * lora_dense / tp,
                n * lora_expert / (tp * ep),
                i == 0,
                "",
            )
        )
    return Sharding(n_d, n_de, None, shape, params, share, lora_dense + lora_expert), stages


def param_groups(spec: LedgerSpec, stage: StageParams, layout: list[Part]) -> list[ParamGroup]:
    """The parameter groups of ``stage``: all of them (full fine-tuning), or the frozen weights
    (NF4 and 16-bit for QLoRA) and the LoRA adapters."""
    if spec.finetune == "full":
        return [ParamGroup("Ψ", stage.dense, stage.expert, layout)]
    w = DTYPE_BYTES[spec.dtype]
    dtype = spec.dtype
    adapters = ParamGroup("Ψ_LoRA", stage.lora_dense, stage.lora_expert, layout)
    if spec.finetune == "lora":
        frozen = [Part("params", _("frozen {dtype} weights").format(dtype=dtype), w, 3)]
        return [ParamGroup("Ψ", stage.dense, stage.expert, frozen), adapters]
    nf4 = [Part("params", _("frozen NF4 weights + constants"), NF4_BYTES_PER_PARAM, 3)]
    rest = [Part("params", _("frozen {dtype} embeddings, norms, biases").format(dtype=dtype), w, 3)]
    return [
        ParamGroup("Ψ_NF4", stage.quant_dense, stage.quant_expert, nf4),
        ParamGroup(
            "(Ψ − Ψ_NF4)", stage.dense - stage.quant_dense, stage.expert - stage.quant_expert, rest
        ),
        adapters,
    ]


def expert_share(spec: LedgerSpec) -> float:
    """The experts' share of N when N is given without the architecture.

    Raises:
        InputError: a share of 1 or more, a share without experts, or experts without a share.
    """
    experts = spec.experts or 1
    if spec.expert_param_share is not None:
        share = finite_number("expert_param_share", spec.expert_param_share, allow_zero=True)
        if share >= 1:
            raise InputError("expert_param_share", _("must be below 1 (a share of the parameters)"))
        if experts == 1 and share > 0:
            raise InputError("expert_param_share", _("needs more than one expert"))
        return share
    if experts == 1:
        return 0.0
    raise InputError(
        "experts",
        _(
            "the experts' share of the parameters is unknown: give the architecture ({layers}, "
            "{hidden}, {vocab}) or the share"
        ),
        layers=FieldName("layers"),
        hidden=FieldName("hidden"),
        vocab=FieldName("vocab"),
    )


def weight_bytes_per_param(spec: LedgerSpec) -> float:
    """Bytes per stored weight: ``weight_bytes`` in the zero-paper convention when given, else
    the dtype's."""
    if spec.convention == "zero-paper" and spec.weight_bytes is not None:
        return spec.weight_bytes
    return DTYPE_BYTES[spec.dtype]


def state_layout(spec: LedgerSpec) -> list[Part]:
    """Bytes per trainable parameter of each model-state component and the ZeRO stage sharding
    it."""
    w = DTYPE_BYTES[spec.dtype]
    low = w < 4
    master = 4.0 if low and spec.master_weights else 0.0
    states = OPTIMIZER_STATE_BYTES[spec.optimizer]
    if not master and spec.optimizer != "adam-8bit":
        states *= w / 4  # no fp32 master copy: the states are stored like the parameters
    dtype = spec.dtype
    label = "LoRA " if spec.finetune != "full" else ""
    parts = [Part("params", label + _("{dtype} params").format(dtype=dtype), w, 3)]
    if spec.convention == "zero-paper":
        if spec.weight_bytes is not None:
            parts = [Part("params", label + _("params"), spec.weight_bytes, 3)]
        grad = 4.0 if spec.fp32_grads else w
        if spec.grad_bytes is not None:
            parts.append(Part("grads", _("grads"), spec.grad_bytes, 2))
        else:
            grad_dtype = "fp32" if grad == 4 else dtype
            parts.append(Part("grads", _("{dtype} grads").format(dtype=grad_dtype), grad, 2))
        if spec.fp32_grad_accumulation and grad < 4:
            parts.append(Part("grads", _("fp32 grad accumulation"), 4.0, 2))
        if spec.optimizer_bytes is not None:
            text = _("optimizer K (master weights included)")
            parts.append(Part("optimizer_states", text, spec.optimizer_bytes, 1))
            return parts
    elif spec.convention == "megatron":
        if dtype == "fp16":
            parts.append(Part("grads", _("{dtype} grads").format(dtype="fp16"), 2.0, 2))
            parts.append(Part("grads", _("fp32 main grads"), 4.0, 1))
        else:
            parts.append(Part("grads", _("fp32 main grads"), 4.0, 2))
    elif low:
        # DeepSpeed ZeRO-3 reduces straight into the fp32 gradient shard: its estimator counts
        # no 16-bit gradient shard (18 B, not 20); the gathered largest layer is added apart.
        if spec.zero_stage < 3:
            parts.append(Part("grads", _("{dtype} grads").format(dtype=dtype), w, 2))
        parts.append(Part("grads", _("{dtype} grads").format(dtype="fp32"), 4.0, 1))
    else:
        parts.append(Part("grads", _("{dtype} grads").format(dtype="fp32"), 4.0, 2))
    if master:
        parts.append(Part("master_weights", _("fp32 master weights"), master, 1))
    if states:
        state_dtype = "" if master or w == 4 or spec.optimizer == "adam-8bit" else f"{dtype} "
        optimizer = f"{state_dtype}{spec.optimizer}"
        parts.append(
            Part("optimizer_states", _("{optimizer} states").format(optimizer=optimizer), states, 1)
        )
    return parts


def deepspeed_largest_layer(
    spec: LedgerSpec, shard: Sharding, notes: list[str]
) -> GatheredLayer | None:
    """DeepSpeed ZeRO-3's 4·largest_layer_params: the largest layer's 16-bit params and grads
    gathered whole (2 + 2 bytes for 16-bit training; frozen weights gather no gradient);
    ``None`` when the convention and stage do not count it."""
    if spec.convention != "deepspeed" or spec.zero_stage != 3:
        return None
    w = DTYPE_BYTES[spec.dtype]
    if spec.largest_layer_params is not None:
        largest = finite_number("largest_layer_params", spec.largest_layer_params)
        if largest > shard.params_total:
            raise InputError("largest_layer_params", _("cannot exceed the parameter count"))
        origin = N_("given")
    elif shard.size is not None:
        largest = shard.size.largest_module
        origin = N_("largest module of the architecture")
    else:
        largest = 0.0
        origin = N_("unknown, counted as 0 (an underestimate)")
        notes.append(
            FieldNote(
                _("DeepSpeed ZeRO-3: {largest} not given, its 4·largest_layer term is 0"),
                largest=FieldName("largest_layer_params"),
            )
        )
    return GatheredLayer(w, largest / spec.tp, origin, spec.finetune == "full")
