"""The training-memory ledger: what one rank holds, term by term, in a named convention (bytes).

Terms per rank (the most loaded rank where ranks differ: the pipeline stage with the largest
total): parameters, gradients, master weights, optimizer states, activations, communication
buffers. What is offloaded to the host (ZeRO-Offload, ZeRO-Infinity) is counted apart.

The sources disagree on bytes per parameter for mixed-precision Adam, so the convention is an
input and is named in every result:

- ``zero-paper`` (default): Rajbhandari et al. 2020, "ZeRO" (arXiv:1910.02054) §3.1 and §5.1,
  Figure 1: 16-bit params 2 + 16-bit grads 2 + K = 12 (fp32 master 4, momentum 4, variance 4);
  ZeRO-1 P_os = 4Ψ + KΨ/N_d, ZeRO-2 P_os+g = 2Ψ + (2+K)Ψ/N_d, ZeRO-3 P_os+g+p = (2+2+K)Ψ/N_d.
  ``fp32_grads`` keeps the gradients in fp32 instead (18); ``fp32_grad_accumulation`` adds an
  fp32 accumulation buffer beside the 16-bit gradients (20, the Ultra-Scale Playbook's count).
- ``megatron``: NVIDIA/Megatron-LM ``megatron/training/theoretical_memory_usage.py`` and
  ``docs/source/api-guide/dist_optimizer.md``: fp32 main gradients, 18 B/param for bf16 (20 for
  fp16, 16 for fp32); the distributed optimizer (ZeRO stage >= 1 here) 6 + 12/d (4 + 16/d, 8 + 8/d).
- ``deepspeed``: microsoft/DeepSpeed ``deepspeed/runtime/zero/stage_1_and_2.py``
  ``estimate_zero2_model_states_mem_needs`` (2 + 18/N: 16-bit grads 2 + fp32 grads 4 + fp32
  params 4 + Adam 8 sharded) and ``stage3.py`` ``estimate_zero3_model_states_mem_needs``
  (4·largest_layer_params + 18·Ψ/N), with their offload cases and host memory per node.

Without fp32 master weights (``master_weights`` false) the optimizer states are stored like the
parameters (:data:`engine.sources.PURE_BF16_STATES`): ``dtype bf16`` without master weights is
pure bf16 training.

The model is a preset (``model``, :mod:`engine.model_presets`) or its shape fields
(:mod:`engine.model_size`). Pipeline stages hold what they really hold: the embedding on the first,
the output layer (a copy of the embedding when tied) and the final norm on the last, the extra
layers of an uneven split on the first ones.

Fine-tuning (``finetune``): ``full`` trains every parameter; ``lora`` freezes the model at its
storage precision and trains r·(d_in + d_out) adapter parameters per adapted matrix
(:data:`engine.sources.LORA_ADAPTERS`); ``qlora`` also stores the frozen linear layers in 4-bit
NF4 with double-quantized constants (:data:`engine.sources.QLORA_NF4`). Adapters carry the
convention's gradients, master weights and optimizer states; frozen weights carry none.

Parallel axes: TP, PP and EP split the model (Ψ on a rank = the rank's model shard); ZeRO shards
across the N_d = DP·CP ranks that hold the same shard (Megatron-Core's distributed optimizer shards
over its data-parallel-with-context-parallel group); expert parameters shard over DP·CP/EP.
World size = DP·TP·PP·CP (EP is carved out of DP·CP, as in Megatron-Core).
"""

from __future__ import annotations

import math
import operator
from dataclasses import dataclass, field, replace
from typing import Any, Literal, NamedTuple, get_args

from engine import sources
from engine.activations import (
    RECOMPUTE_CHOICES,
    SCHEDULE_CHOICES,
    StageActivations,
    per_stage_activation_bytes,
    stage_activation_bytes,
    stage_layer_counts,
)
from engine.checks import MAX_COUNT, finite_number, flag, one_of, whole_number
from engine.errors import InputError
from engine.model_presets import get_preset, resolve_shape_key
from engine.model_size import (
    SHAPE_FIELDS,
    ModelShape,
    ModelSize,
    shape_param_count,
)
from engine.units import parse_bytes, parse_count, parse_int

Dtype = Literal["bf16", "fp16", "fp32"]
Optimizer = Literal["adam", "adamw", "sgd", "sgd-momentum", "adam-8bit"]
Convention = Literal["zero-paper", "megatron", "deepspeed"]
DTYPE_CHOICES: tuple[str, ...] = get_args(Dtype)
OPTIMIZER_CHOICES: tuple[str, ...] = get_args(Optimizer)
CONVENTIONS: tuple[str, ...] = get_args(Convention)
FINETUNE_CHOICES: tuple[str, ...] = ("full", "lora", "qlora")
OFFLOAD_CHOICES: tuple[str, ...] = ("none", "optimizer", "optimizer+params")
LORA_TARGETS: tuple[str, ...] = ("q", "k", "v", "o", "gate", "up", "down")
DEFAULT_LORA_TARGETS: tuple[str, ...] = ("q", "v")
ZERO_STAGES = (0, 1, 2, 3)

TERM_KEYS = ("params", "grads", "master_weights", "optimizer_states", "activations", "buffers")
MODEL_STATE_KEYS = TERM_KEYS[:4]

DTYPE_BYTES: dict[str, float] = {"bf16": 2.0, "fp16": 2.0, "fp32": 4.0}
# Optimizer-state bytes per parameter with fp32 states, master weights excluded.
OPTIMIZER_STATE_BYTES: dict[str, float] = {
    "adam": 8.0,
    "adamw": 8.0,
    "sgd": 0.0,
    "sgd-momentum": 4.0,
    "adam-8bit": 2.0,
}
OPTIMIZER_SOURCES: dict[str, str] = {
    "adam": sources.ADAM_STATES,
    "adamw": f"{sources.ADAM_STATES}; AdamW keeps the same",
    "sgd": "plain SGD keeps no optimizer state",
    "sgd-momentum": sources.SGD_MOMENTUM_STATES,
    "adam-8bit": sources.ADAM_8BIT_STATES,
}
# 4-bit NF4 weights; one 8-bit constant per block of 64 weights and one fp32 constant per 256 of
# those blocks (double quantization): 4 + 8/64 + 32/(64·256) bits.
NF4_BYTES_PER_PARAM = (4 + 8 / 64 + 32 / (64 * 256)) / 8
DEEPSPEED_BUFFER_FACTOR = 1.5

CONVENTION_SOURCES: dict[str, str] = {
    "zero-paper": sources.ZERO_MODEL_STATES,
    "megatron": sources.MEGATRON_MODEL_STATES,
    "deepspeed": sources.DEEPSPEED_ESTIMATORS,
}
CONVENTION_NOTES: dict[str, str] = {
    "zero-paper": "16 B/param (2 params + 2 grads + K=12 fp32 master and Adam); ZeRO-1/2/3 shard "
    "K, then grads, then params over N_d.",
    "megatron": "fp32 main gradients: 18 B/param for bf16 (20 fp16, 16 fp32); its distributed "
    "optimizer shards master and Adam only: 6 + 12/d. Stages 2-3 extend it as FSDP would.",
    "deepspeed": "adds an fp32 gradient copy: ZeRO-2 2 + 18/N; ZeRO-3 18/N plus 4 B for the "
    "largest layer gathered whole (its 16-bit params and grads).",
}


@dataclass(frozen=True)
class LedgerSpec:
    """One training configuration. Sizes are counts; memory is bytes. Field names follow the
    ``shardbook calc ledger`` flags in snake_case.

    Give ``params`` (the parameter count N), a ``model`` preset, or the shape (``layers``,
    ``hidden``, ``vocab`` and the other :data:`engine.model_size.SHAPE_FIELDS`; a field left as
    ``None`` takes the preset's value, else the default of :mod:`engine.model_size`), from which N
    is derived (:data:`engine.sources.PARAM_COUNT`). With both, N is ``params`` and the
    shape places it on the pipeline stages. Activations are computed when ``seq`` is given, and
    then need ``layers``, ``hidden`` and ``heads``.

    ``weight_bytes``, ``grad_bytes`` and ``optimizer_bytes`` override the bytes per parameter of the
    ``zero-paper`` convention (``optimizer_bytes`` is the paper's K: master weights included).
    ``expert_param_share`` is the experts' share of N when N is given without an architecture.
    ``bucket_bytes`` is one DDP gradient bucket (0 leaves it out); ``prefetch`` counts the FSDP
    units gathered ahead of the one in use. ``gpu_memory`` is the device memory in bytes.

    ``finetune`` is ``full``, ``lora`` or ``qlora`` with ``lora_rank`` r and ``lora_targets``
    (names of :data:`LORA_TARGETS`). ``offload`` is ``none``, ``optimizer`` (ZeRO-Offload, ZeRO
    stage >= 1) or ``optimizer+params`` (ZeRO-Infinity, ZeRO-3); ``gpus_per_node`` and ``nodes``
    (default: every rank on one node) and ``zero_init`` are DeepSpeed's estimator inputs.
    """

    params: float | None = None
    layers: int | None = None
    hidden: int | None = None
    heads: int | None = None
    ffn_hidden: int | None = None
    vocab: int | None = None
    seq: int | None = None
    micro_batch: int = 1
    dtype: str = "bf16"
    optimizer: str = "adamw"
    master_weights: bool = True
    fp32_grads: bool = False
    dp: int = 1
    tp: int = 1
    pp: int = 1
    cp: int = 1
    ep: int = 1
    experts: int | None = None
    expert_param_share: float | None = None
    zero: int = 0
    recompute: str = "none"
    sequence_parallel: bool = False
    schedule: str = "1f1b"
    micro_batches: int | None = None
    virtual_stages: int = 1
    convention: str = "zero-paper"
    largest_layer_params: float | None = None
    gpu_memory: float | None = None
    bucket_bytes: float = 0.0
    prefetch: int = 1
    weight_bytes: float | None = None
    grad_bytes: float | None = None
    optimizer_bytes: float | None = None
    model: str | None = None
    kv_heads: int | None = None
    head_dim: int | None = None
    mlp: str | None = None
    norm: str | None = None
    bias: bool | None = None
    tied_embeddings: bool | None = None
    vocab_multiple: int | None = None
    positions: str | None = None
    position_count: int | None = None
    final_norm: bool | None = None
    dropout: bool | None = None
    top_k: int | None = None
    shared_experts: int | None = None
    expert_ffn_hidden: int | None = None
    attention: str | None = None
    finetune: str = "full"
    lora_rank: int = 8
    lora_targets: tuple[str, ...] = DEFAULT_LORA_TARGETS
    offload: str = "none"
    gpus_per_node: int | None = None
    nodes: int | None = None
    zero_init: bool = True
    fp32_grad_accumulation: bool = False


@dataclass(frozen=True)
class LedgerTerm:
    """One line of the ledger.

    Attributes:
        name: a key of ``LedgerResult.per_rank_bytes`` (``params``, ``grads``, ...).
        bytes: bytes on the rank's device (>= 0, finite).
        formula: the expression with the numbers filled in, readable in a terminal.
        source: paper, section and equation, or repository and file.
    """

    name: str
    bytes: float
    formula: str
    source: str


@dataclass(frozen=True)
class LedgerResult:
    """The ledger of one configuration, per rank, in bytes.

    Attributes:
        spec: the configuration, its shape fields filled in from the preset and the defaults.
        convention: the bytes-per-parameter convention used (a key of :data:`CONVENTION_NOTES`).
        per_rank_bytes: ``params`` (the weights as stored), ``grads``, ``master_weights``,
            ``optimizer_states``, ``activations``, ``buffers`` and ``total`` on the device of the
            most loaded rank (what is offloaded is in ``offloaded_bytes``).
        model_states_bytes: the first four summed (on the device).
        naive_bytes: the "parameters x precision" figure, N x weight bytes (whole model).
        params_total: N.
        params_per_rank: the model-parallel shard of N on the most loaded rank, before ZeRO.
        bytes_per_param: each model-state term's bytes per trainable parameter before sharding.
        world_size: DP x TP x PP x CP.
        fits: ``total <= gpu_memory``; ``None`` when no device memory is given.
        activations_computed: False when ``seq`` (or the architecture) was not given.
        notes: what a reader should know (defaults taken, uneven stages, inputs not used).
        trainable_params: parameters that get gradients (N with ``full``, the adapters with
            ``lora``/``qlora``), whole model.
        offloaded_bytes: host memory per node: the offloaded model states of its
            ``gpus_per_node`` ranks, or DeepSpeed's estimate in the ``deepspeed`` convention
            (module docstring; :attr:`host` says which).
        gpus_per_node, nodes: the node layout the host figure assumes.
        most_loaded_stage: the pipeline stage (0-based) the per-rank figures are for.
        per_stage_bytes: one dict per pipeline stage (``stage``, ``layers``, the term keys,
            ``total``, ``offloaded``) when PP > 1, else empty.
        terms: one :class:`LedgerTerm` per ``per_rank_bytes`` key except ``total``, in order.
        host: the host figure: ``bytes`` per node, ``per`` (``node``), ``gpus_per_node``,
            ``nodes``, ``formula`` and ``source``.
    """

    spec: LedgerSpec
    convention: str
    per_rank_bytes: dict[str, float]
    model_states_bytes: float
    naive_bytes: float
    params_total: float
    params_per_rank: float
    bytes_per_param: dict[str, float]
    world_size: int
    fits: bool | None
    activations_computed: bool
    notes: tuple[str, ...] = field(default=())
    trainable_params: float = 0.0
    offloaded_bytes: float = 0.0
    gpus_per_node: int = 1
    nodes: int = 1
    most_loaded_stage: int = 0
    per_stage_bytes: tuple[dict[str, float], ...] = ()
    terms: tuple[LedgerTerm, ...] = ()
    host: dict[str, Any] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        """The JSON object of ``shardbook calc ledger --json``: sizes in bytes, counts."""
        data: dict[str, Any] = {
            "per_rank_bytes": dict(self.per_rank_bytes),
            "model_states_bytes": self.model_states_bytes,
            "naive_bytes": self.naive_bytes,
            "params_total": self.params_total,
            "trainable_params": self.trainable_params,
            "offloaded_bytes": self.offloaded_bytes,
            "world_size": self.world_size,
            "fits": self.fits,
            "convention": self.convention,
            "model": self.spec.model,
            "finetune": self.spec.finetune,
            "offload": self.spec.offload,
            "host": self.host,
            "terms": [
                {"name": t.name, "bytes": t.bytes, "formula": t.formula, "source": t.source}
                for t in self.terms
            ],
            "activations_computed": self.activations_computed,
        }
        if self.per_stage_bytes:
            data["per_stage_bytes"] = [dict(stage) for stage in self.per_stage_bytes]
            data["most_loaded_stage"] = self.most_loaded_stage
        return data


@dataclass(frozen=True)
class PrecisionPreset:
    """A precision/optimizer preset of the Ledger pane.

    Attributes:
        label: what the pane shows.
        fields: the :class:`LedgerSpec` fields it sets (apply with ``dataclasses.replace``).
        weight_bytes, grad_bytes, optimizer_bytes: its bytes per parameter under ``zero-paper``
            (optimizer bytes include fp32 master weights, the ZeRO paper's K).
        source: where the figures come from.
    """

    label: str
    fields: dict[str, Any]
    weight_bytes: float
    grad_bytes: float
    optimizer_bytes: float
    source: str


PRECISION_PRESETS: dict[str, PrecisionPreset] = {
    "mixed-adam": PrecisionPreset(
        "mixed-precision Adam 2/2/12",
        {"dtype": "bf16", "optimizer": "adamw", "master_weights": True, "fp32_grads": False},
        2.0,
        2.0,
        12.0,
        sources.ZERO_MODEL_STATES,
    ),
    "fp32-adam": PrecisionPreset(
        "fp32 Adam 4/4/8",
        {"dtype": "fp32", "optimizer": "adamw", "master_weights": False, "fp32_grads": False},
        4.0,
        4.0,
        8.0,
        sources.FP32_ADAM_STATES,
    ),
    "sgd-momentum": PrecisionPreset(
        "SGD with momentum 2/2/8",
        {"dtype": "bf16", "optimizer": "sgd-momentum", "master_weights": True, "fp32_grads": False},
        2.0,
        2.0,
        8.0,
        OPTIMIZER_SOURCES["sgd-momentum"],
    ),
    "adam-8bit": PrecisionPreset(
        "8-bit Adam 2/2/6",
        {"dtype": "bf16", "optimizer": "adam-8bit", "master_weights": True, "fp32_grads": False},
        2.0,
        2.0,
        6.0,
        OPTIMIZER_SOURCES["adam-8bit"],
    ),
}

# Marketing capacities in decimal GB (an "80GB" H100 reports 81,559 MiB = 85.5e9 B in nvidia-smi,
# so these presets are slightly conservative).
DEVICE_MEMORY_PRESETS: dict[str, tuple[str, float]] = {
    "80GB": ("80 GB (A100/H100 80GB)", 80e9),
    "141GB": ("141 GB (H200)", 141e9),
}


class _Part(NamedTuple):
    """A model-state component: bytes per parameter, sharded over N_d from ZeRO stage ``stage``."""

    key: str
    label: str
    bytes_per_param: float
    stage: int


class _Group(NamedTuple):
    """Parameters of one kind on a rank (all of them, the frozen or NF4 ones, the adapters):
    ``dense`` and ``expert`` counts after TP/PP/EP, the parts each carries, and the symbol
    the formula text names the count by."""

    symbol: str
    dense: float
    expert: float
    parts: list[_Part]


class _Stage(NamedTuple):
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


class _Shard(NamedTuple):
    """How ZeRO divides the model shard, and where N came from."""

    n_d: int
    n_de: int
    size: ModelSize | None
    shape: ModelShape | None
    params_total: float
    share: float
    lora_per_layer: float


class _Largest(NamedTuple):
    """DeepSpeed ZeRO-3's gathered largest layer on the rank (parameters, after TP)."""

    bytes_per_param: float
    params: float
    origin: str
    grads: bool


class _Buffer(NamedTuple):
    """The communication-buffer term's bytes and what its text needs (``case`` names the
    branch of :func:`_buffers`)."""

    bytes: float
    case: Literal["single", "ddp", "deepspeed", "fsdp", "unknown"]
    origin: str = ""
    unit: float = 0.0
    weight: float = 0.0
    grad: float = 0.0


class _Figures(NamedTuple):
    """What the term texts are written from: the figures of the most loaded stage."""

    spec: LedgerSpec
    shard: _Shard
    stage: _Stage
    groups: list[_Group]
    largest: _Largest | None
    term_bytes: tuple[float, ...]
    host_bytes: tuple[float, ...]
    activations: StageActivations | None
    buffer: _Buffer


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
    spec, shape = _checked(spec)
    size = None
    if shape is not None and shape.vocab is not None:
        size = shape_param_count(shape, spec.seq)
    convention = spec.convention
    notes: list[str] = []
    if spec.fp32_grads and convention != "zero-paper":
        notes.append(f"fp32 gradients are part of the {convention} layout already")
    if spec.fp32_grad_accumulation and (convention != "zero-paper" or spec.fp32_grads):
        notes.append("the fp32 gradient accumulation buffer is the fp32 gradients already")
    if convention != "zero-paper" and (
        spec.weight_bytes is not None
        or spec.grad_bytes is not None
        or spec.optimizer_bytes is not None
    ):
        notes.append(
            f"bytes-per-parameter overrides apply to zero-paper only; {convention} uses "
            f"its own layout"
        )
    shard, stages = _placement(spec, shape, size)
    layout = _layout(spec)
    bytes_per_param: dict[str, float] = dict.fromkeys(MODEL_STATE_KEYS, 0.0)
    for part in layout:
        bytes_per_param[part.key] += part.bytes_per_param

    activations = _activations(spec, shape)
    if activations is not None:
        notes.extend(note for note in activations.notes if "uneven" not in note)
        assert spec.layers is not None
        activation_bytes = per_stage_activation_bytes(
            activations, stage_layer_counts(spec.layers, spec.pp)
        )
    else:
        activation_bytes = [0.0] * spec.pp
    buffer = _buffers(spec, shard, stages[0], notes)
    largest = _deepspeed_largest_layer(spec, shard, notes)
    gpus_per_node, nodes = _node_layout(spec)

    best: tuple[dict[str, float], dict[str, float], list[_Group], _Stage] | None = None
    per_stage: list[dict[str, float]] = []
    for stage in stages:
        groups = _groups(spec, stage, layout)
        per_rank, host = _model_states(spec, shard, groups, largest)
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
    naive = shard.params_total * _weight_bytes(spec)
    host_per_rank = math.fsum(best_host.values())
    offloaded = _host_per_node(spec, shard, chosen, host_per_rank, gpus_per_node, nodes, largest)
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
                raise InputError("params", f"the {key} figure overflows; use smaller sizes")
    if spec.layers is not None and spec.pp > 1 and spec.layers % spec.pp:
        layers_here = chosen.layers
        where = "the first stage" if chosen.position == 0 else f"stage {chosen.position + 1}"
        notes.append(
            f"{spec.layers} layers on {spec.pp} stages are uneven: figures are for {where}, "
            f"{layers_here} layers, the most loaded"
        )
    elif spec.pp > 1 and chosen.position:
        notes.append(f"figures are for stage {chosen.position + 1} of {spec.pp}, the most loaded")
    if spec.finetune == "full":
        trainable = shard.params_total
    else:
        trainable = shard.lora_per_layer * (spec.layers or 0)
    figures = _Figures(
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
        terms=_terms(figures),
        host=_host(figures, offloaded, gpus_per_node, nodes),
    )


def _model_states(
    spec: LedgerSpec, shard: _Shard, groups: list[_Group], largest: _Largest | None
) -> tuple[dict[str, float], dict[str, float]]:
    """(device bytes per term, host bytes per term) of one rank's model states."""
    per_rank: dict[str, float] = dict.fromkeys(TERM_KEYS, 0.0)
    host: dict[str, float] = {}
    zero, n_d, n_de, offload = spec.zero, shard.n_d, shard.n_de, spec.offload
    for group in groups:
        dense, expert = group.dense, group.expert
        for part in group.parts:
            sharded = zero >= part.stage
            value = part.bytes_per_param * (
                dense / (n_d if sharded else 1) + expert / (n_de if sharded else 1)
            )
            if _offloaded(offload, part.key):
                host[part.key] = host.get(part.key, 0.0) + value
            else:
                per_rank[part.key] += value
    if largest is not None:
        per_rank["params"] += largest.bytes_per_param * largest.params
        if largest.grads:
            per_rank["grads"] += largest.bytes_per_param * largest.params
    return per_rank, host


def _offloaded(offload: str, key: str) -> bool:
    return offload == "optimizer+params" or (offload == "optimizer" and key != "params")


def _terms(draft: _Figures) -> tuple[LedgerTerm, ...]:
    """The six ledger lines, formula text filled in."""
    spec, shard, stage = draft.spec, draft.shard, draft.stage
    formulas: dict[str, list[str]] = {key: [] for key in MODEL_STATE_KEYS}
    for group in draft.groups:
        for part in group.parts:
            sharded = spec.zero >= part.stage
            divisor = f" / N_d {shard.n_d}" if sharded and shard.n_d > 1 else ""
            if sharded and group.expert and shard.n_de != shard.n_d:
                divisor += f" (experts / {shard.n_de})"
            where = " → host" if _offloaded(spec.offload, part.key) else ""
            formulas[part.key].append(
                f"{part.label} {part.bytes_per_param:.4g} B × {group.symbol}{divisor}{where}"
            )
    largest_note = ""
    if draft.largest is not None:
        w, largest, origin, _grads = draft.largest
        largest_note = f" + {w:g} B × largest layer {largest:,.0f} ({origin}; gathered whole)"
    source = CONVENTION_SOURCES[spec.convention]
    stage_name = _stage_name(spec)
    psi_text = f"; Ψ = {_shard_text(spec, shard, stage)} = {stage.dense + stage.expert:,.0f}"
    if spec.finetune == "qlora":
        psi_text += (
            f"; Ψ_NF4 = the linear layers' weights = {stage.quant_dense + stage.quant_expert:,.0f}"
        )
    if spec.finetune != "full":
        psi_text += f"; Ψ_LoRA = {_lora_text(spec, shard, stage)}"
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
        text += f"; {stage_name} = {_b(value)}"
        moved = draft.host_bytes[index]
        if moved:
            text += f" on the device, {_b(moved)} on the host"
        terms.append(LedgerTerm(key, value, text, _term_source(spec, key, source)))
    terms.append(_activation_term(spec, draft.activations, stage))
    terms.append(_buffer_term(spec, draft.buffer))
    return tuple(terms)


def _host_per_node(
    spec: LedgerSpec,
    shard: _Shard,
    stage: _Stage,
    host_per_rank: float,
    gpus_per_node: int,
    nodes: int,
    largest: _Largest | None,
) -> float:
    """Host memory per node: DeepSpeed's estimate (deepspeed convention, ZeRO-2/3, full
    fine-tuning), else the offloaded model states of the node's ranks."""
    case = _deepspeed_host_case(spec)
    if case is None:
        return host_per_rank * gpus_per_node
    psi = stage.dense + stage.expert
    factor = DEEPSPEED_BUFFER_FACTOR
    total_gpus = gpus_per_node * nodes
    per_node = 1 / nodes
    largest_params = 0.0 if largest is None else largest.params
    if case == "zero2-optimizer":
        return psi * max(4 * total_gpus, 16) * factor
    if case == "zero2-none":
        return psi * 4 * gpus_per_node * factor
    if case == "zero3-none":
        return (largest_params if spec.zero_init else psi) * 4 * gpus_per_node * factor
    states = 18 if case == "zero3-optimizer+params" else 16
    if spec.zero_init:
        return psi * states * per_node * factor
    return psi * max(4 * gpus_per_node, states * per_node) * factor


def _deepspeed_host_case(spec: LedgerSpec) -> str | None:
    if spec.convention != "deepspeed" or spec.zero < 2 or spec.finetune != "full":
        return None
    return f"zero{min(spec.zero, 3)}-{spec.offload}"


def _host(draft: _Figures, value: float, gpn: int, nodes: int) -> dict[str, Any]:
    """How the host memory per node (``value``) was reached."""
    spec = draft.spec
    case = _deepspeed_host_case(spec)
    factor = DEEPSPEED_BUFFER_FACTOR
    if case is None:
        moved = sum(draft.host_bytes)
        if spec.offload == "none":
            formula = "nothing offloaded: 0"
        else:
            formula = (
                f"the offloaded model states of one rank {_b(moved)} × {gpn} GPUs per node "
                f"= {_b(value)}"
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
            f"DeepSpeed's estimate per node, offload {spec.offload}: {text} = {_b(value)} "
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


# LedgerSpec's numeric fields as typed (CLI flags, the Ledger pane's form): how each is parsed.
# Optional ones may be empty or None (not given); the others always carry a value.
OPTIONAL_COUNT_FIELDS = (
    "layers",
    "hidden",
    "heads",
    "ffn_hidden",
    "vocab",
    "seq",
    "micro_batches",
    "kv_heads",
    "head_dim",
    "experts",
    "top_k",
    "expert_ffn_hidden",
    "vocab_multiple",
    "gpus_per_node",
    "nodes",
)
SIZE_FIELDS = ("micro_batch", "dp", "tp", "pp", "cp", "ep", "virtual_stages", "lora_rank")
# Whole numbers that may be 0, or empty (not given).
OPTIONAL_ZERO_FIELDS = ("shared_experts",)


def numeric_fields_from_text(texts: dict[str, str | None]) -> dict[str, Any]:
    """Parse the numeric :class:`LedgerSpec` fields present in ``texts`` (field -> text).

    ``params`` and ``largest_layer_params`` are counts (``7.5B``), ``gpu_memory`` a size
    (``80GB``), ``zero`` a whole number 0-3, ``shared_experts`` a whole number from 0, the others
    whole numbers >= 1 (:mod:`engine.units`). ``params``, ``largest_layer_params``,
    ``gpu_memory``, ``shared_experts`` and :data:`OPTIONAL_COUNT_FIELDS` left empty or ``None``
    are omitted (not given).

    Raises:
        InputError: naming the spec field whose text does not parse.
    """
    values: dict[str, Any] = {}
    for name, text in texts.items():
        optional = (
            name in OPTIONAL_COUNT_FIELDS
            or name in _OPTIONAL_UNIT_FIELDS
            or name in OPTIONAL_ZERO_FIELDS
        )
        if optional and (text is None or not text.strip()):
            continue
        assert text is not None
        if name in _OPTIONAL_UNIT_FIELDS:
            values[name] = _OPTIONAL_UNIT_FIELDS[name](name, text)
        elif name == "zero":
            values[name] = parse_int(name, text, minimum=0, maximum=3)
        elif name in OPTIONAL_ZERO_FIELDS:
            values[name] = parse_int(name, text, minimum=0)
        elif name in OPTIONAL_COUNT_FIELDS or name in SIZE_FIELDS:
            values[name] = parse_int(name, text)
    return values


def parse_lora_targets(text: str | None) -> tuple[str, ...]:
    """LoRA targets from a comma list (``q,v``; empty or ``None``: the default q, v).

    Raises:
        InputError: (field ``lora_targets``) a name not in :data:`LORA_TARGETS`, or one twice.
    """
    if text is None or not text.strip():
        return DEFAULT_LORA_TARGETS
    names = tuple(part.strip().lower() for part in text.split(","))
    return _checked_targets(names)


def _checked_targets(names: object) -> tuple[str, ...]:
    if isinstance(names, str) or not isinstance(names, tuple | list):
        raise InputError("lora_targets", f"expected a list of names, got {names!r}")
    for name in names:
        if name not in LORA_TARGETS:
            raise InputError(
                "lora_targets", f"{name!r} is not one of {', '.join(LORA_TARGETS)} (comma list)"
            )
    if not names:
        raise InputError("lora_targets", f"name at least one of {', '.join(LORA_TARGETS)}")
    if len(set(names)) != len(names):
        raise InputError("lora_targets", "a target is named twice")
    return tuple(names)


# No accelerator has less than this; "80" typed for 80 GB would otherwise be 80 bytes.
MIN_DEVICE_MEMORY_BYTES = 2**20


def parse_device_memory(field: str, text: str) -> float:
    """A device's memory in bytes from ``80GB``, ``141GB``, ``80GiB``, ``80e9``.

    Raises:
        InputError: as :func:`engine.units.parse_bytes`, or under 1 MiB (a unit left out).
    """
    value = parse_bytes(field, text)
    if value < MIN_DEVICE_MEMORY_BYTES:
        raise InputError(
            field,
            f"{text.strip()!r} is {value:g} bytes, less than any accelerator has; was the unit "
            "left out? (80GB = 80e9 bytes, 80GiB = 80 x 2^30)",
        )
    return value


_OPTIONAL_UNIT_FIELDS = {
    "params": parse_count,
    "largest_layer_params": parse_count,
    "gpu_memory": parse_device_memory,
}


def compare_conventions(spec: LedgerSpec) -> dict[str, LedgerResult]:
    """The same configuration in every convention, keyed ``zero-paper``, ``megatron``,
    ``deepspeed``; :data:`CONVENTION_NOTES` explains each one's difference.

    Raises:
        InputError: as :func:`compute_ledger`.
    """
    return {name: compute_ledger(replace(spec, convention=name)) for name in CONVENTIONS}


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


# (field, minimum, may be None) of every whole-number field of LedgerSpec outside the shape.
_COUNT_FIELDS: tuple[tuple[str, int, bool], ...] = (
    *((name, 1, False) for name in ("micro_batch", "dp", "tp", "pp", "cp", "ep")),
    ("virtual_stages", 1, False),
    ("prefetch", 0, False),
    ("lora_rank", 1, False),
    ("seq", 1, True),
    ("micro_batches", 1, True),
    ("gpus_per_node", 1, True),
    ("nodes", 1, True),
)


_COUNT_VALUES = operator.attrgetter(*(name for name, _, _ in _COUNT_FIELDS))
_TERM_BYTES = operator.itemgetter(*TERM_KEYS)
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


def _checked(spec: LedgerSpec) -> tuple[LedgerSpec, ModelShape | None]:
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
    if type(spec.zero) is not int or spec.zero not in ZERO_STAGES:
        # 2.0 is stage 2; True, 2.5 or "2" are not stages.
        if not (type(spec.zero) is float and spec.zero in ZERO_STAGES):
            raise InputError(
                "zero", f"must be 0, 1, 2 or 3 (3 = FSDP full shard), got {spec.zero!r}"
            )
        spec = replace(spec, zero=int(spec.zero))
    for name in _FLAG_FIELDS:
        flag(name, getattr(spec, name))
    if spec.model is not None and not isinstance(spec.model, str):
        raise InputError("model", f"expected a preset name, got {spec.model!r}")
    # Whole numbers typed as floats (2.0) are normalized to int; anything else must already be one.
    values = _SHAPE_VALUES(spec)
    key = tuple(zip(map(type, values), values, strict=True))
    resolved, shape = resolve_shape_key(key, spec.model)
    changed: dict[str, Any] = dict(zip(SHAPE_FIELDS, resolved, strict=True))
    for (name, minimum, optional), value in zip(_COUNT_FIELDS, _COUNT_VALUES(spec), strict=True):
        if (type(value) is int and minimum <= value <= MAX_COUNT) or (value is None and optional):
            continue
        changed[name] = whole_number(name, value, minimum=minimum)
    if spec.lora_targets != DEFAULT_LORA_TARGETS:
        changed["lora_targets"] = _checked_targets(spec.lora_targets)
    spec = replace(spec, **changed)
    if spec.weight_bytes is not None:
        finite_number("weight_bytes", spec.weight_bytes, maximum=64)
    if spec.grad_bytes is not None:
        finite_number("grad_bytes", spec.grad_bytes, allow_zero=True, maximum=64)
    if spec.optimizer_bytes is not None:
        finite_number("optimizer_bytes", spec.optimizer_bytes, allow_zero=True, maximum=64)
    finite_number("bucket_bytes", spec.bucket_bytes, allow_zero=True)
    if spec.gpu_memory is not None:
        finite_number("gpu_memory", spec.gpu_memory)
    if spec.heads is not None and spec.heads % spec.tp:
        raise InputError("tp", f"must divide heads ({spec.heads}); TP {spec.tp} does not")
    if spec.kv_heads is not None and spec.kv_heads % spec.tp:
        raise InputError(
            "tp", f"must divide the key/value heads ({spec.kv_heads}); TP {spec.tp} does not"
        )
    if spec.layers is not None and spec.pp > spec.layers:
        raise InputError("pp", f"{spec.pp} stages need at least {spec.pp} layers")
    experts = spec.experts or 1
    if spec.ep > experts or experts % spec.ep:
        raise InputError("ep", f"must divide the number of experts ({experts})")
    if (spec.dp * spec.cp) % spec.ep:
        raise InputError("ep", f"must divide DP·CP ({spec.dp * spec.cp}): experts spread over DP")
    if spec.seq is None:
        if spec.recompute != "none":
            raise InputError("seq", "activation recomputation needs the sequence length")
        if spec.sequence_parallel:
            raise InputError("seq", "sequence parallelism needs the sequence length")
    elif spec.model is not None:
        longest = get_preset(spec.model).max_seq
        if longest is not None and spec.seq > longest:
            raise InputError("seq", f"{spec.model} takes at most {longest} tokens per sequence")
    if spec.offload == "optimizer" and spec.zero < 1:
        raise InputError("offload", "offloading the optimizer needs ZeRO stage 1, 2 or 3")
    if spec.offload == "optimizer+params" and spec.zero != 3:
        raise InputError("offload", "offloading the parameters needs ZeRO-3 (ZeRO-Infinity)")
    if spec.finetune != "full":
        if spec.layers is None or spec.hidden is None:
            raise InputError(
                "finetune", "LoRA needs the architecture: give a model, or layers and hidden"
            )
        if spec.finetune == "qlora" and spec.vocab is None:
            raise InputError("finetune", "QLoRA's 4-bit share needs the vocabulary too")
        if "gate" in spec.lora_targets and spec.mlp == "gelu":
            raise InputError("lora_targets", "gate exists only in a gated MLP (swiglu, geglu)")
    return spec, shape


def _node_layout(spec: LedgerSpec) -> tuple[int, int]:
    """(GPUs per node, nodes): as given, else every rank on one node."""
    world = spec.dp * spec.tp * spec.pp * spec.cp
    gpn, nodes = spec.gpus_per_node, spec.nodes
    if gpn is not None and nodes is not None:
        if gpn * nodes != world:
            raise InputError(
                "nodes", f"{nodes} nodes × {gpn} GPUs per node is not the world size {world}"
            )
        return gpn, nodes
    if gpn is not None:
        if world % gpn:
            raise InputError("gpus_per_node", f"must divide the world size {world}")
        return gpn, world // gpn
    if nodes is not None:
        if world % nodes:
            raise InputError("nodes", f"must divide the world size {world}")
        return world // nodes, nodes
    return world, 1


def _lora_per_layer(spec: LedgerSpec, shape: ModelShape | None) -> tuple[float, float]:
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


def _placement(
    spec: LedgerSpec, shape: ModelShape | None, size: ModelSize | None
) -> tuple[_Shard, list[_Stage]]:
    """Where the parameters sit: one :class:`_Stage` per pipeline stage, and the ZeRO groups."""
    if spec.params is None and size is None:
        missing = next(n for n in ("layers", "hidden", "vocab") if getattr(spec, n) is None)
        raise InputError(
            "params", f"give the parameter count, or the architecture ({missing} is missing)"
        )
    p, tp, ep = spec.pp, spec.tp, spec.ep
    n_d = spec.dp * spec.cp
    n_de = n_d // ep
    counts = None if spec.layers is None else stage_layer_counts(spec.layers, p)
    lora_dense, lora_expert = _lora_per_layer(spec, shape)
    stages: list[_Stage] = []
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
                output = "output layer" if size.output_layer else ""
                if p > 1 and not size.output_layer:
                    extra += size.word_embedding
                    output = "tied output-layer copy"
            if size.experts > 1:
                dense = (layers * size.layer_dense + extra) / tp
                expert = layers * size.experts * size.layer_mlp / (tp * ep)
            else:
                dense = (layers * size.per_layer + extra) / tp
                expert = 0.0
            quant_expert = layers * size.expert_layer_quantizable / (tp * ep)
            quant_dense = layers * (size.layer_quantizable - size.expert_layer_quantizable) / tp
            stages.append(
                _Stage(
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
        shard = _Shard(n_d, n_de, size, shape, params_total, 0.0, lora_dense + lora_expert)
        return shard, stages
    params = finite_number("params", spec.params)
    share = _expert_share(spec)
    for i in range(p):
        on_stage = None if counts is None else counts[i]
        fraction = 1 / p if counts is None else counts[i] / (spec.layers or 1)
        n = on_stage or 0
        stages.append(
            _Stage(
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
    return _Shard(n_d, n_de, None, shape, params, share, lora_dense + lora_expert), stages


def _groups(spec: LedgerSpec, stage: _Stage, layout: list[_Part]) -> list[_Group]:
    """The parameter groups of ``stage``: all of them (full fine-tuning), or the frozen weights
    (NF4 and 16-bit for QLoRA) and the LoRA adapters."""
    if spec.finetune == "full":
        return [_Group("Ψ", stage.dense, stage.expert, layout)]
    w = DTYPE_BYTES[spec.dtype]
    dtype = spec.dtype
    adapters = _Group("Ψ_LoRA", stage.lora_dense, stage.lora_expert, layout)
    if spec.finetune == "lora":
        frozen = [_Part("params", f"frozen {dtype} weights", w, 3)]
        return [_Group("Ψ", stage.dense, stage.expert, frozen), adapters]
    nf4 = [_Part("params", "frozen NF4 weights + constants", NF4_BYTES_PER_PARAM, 3)]
    rest = [_Part("params", f"frozen {dtype} embeddings, norms, biases", w, 3)]
    return [
        _Group("Ψ_NF4", stage.quant_dense, stage.quant_expert, nf4),
        _Group(
            "(Ψ − Ψ_NF4)", stage.dense - stage.quant_dense, stage.expert - stage.quant_expert, rest
        ),
        adapters,
    ]


def _shard_text(spec: LedgerSpec, shard: _Shard, stage: _Stage) -> str:
    """How Ψ, the model-parallel shard of :func:`_placement`, was reached."""
    tp, ep = spec.tp, spec.ep
    size = shard.size
    if size is not None:
        pieces = []
        if stage.embedding:
            pieces.append("embedding")
        pieces.append(f"{stage.layers} of {size.layers} layers{_uneven(spec, stage)}")
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
        where = f"{stage.layers}/{spec.layers} layers{_uneven(spec, stage)}"
    text = f"N {shard.params_total:,.0f} × {where} / TP {tp}"
    if shard.share:
        text += f", experts ({shard.share:.3g} of N) / EP {ep}"
    return text


def _lora_text(spec: LedgerSpec, shard: _Shard, stage: _Stage) -> str:
    targets = ",".join(spec.lora_targets)
    return (
        f"r {spec.lora_rank} × (d_in + d_out) on {targets}: {shard.lora_per_layer:,.0f} per layer "
        f"× {stage.layers} layers / TP {spec.tp} = {stage.lora_dense + stage.lora_expert:,.0f}"
    )


def _uneven(spec: LedgerSpec, stage: _Stage) -> str:
    if spec.layers is not None and spec.layers % spec.pp:
        if stage.position == 0:
            return f" on the first of {spec.pp} uneven stages, the heaviest"
        return f" on stage {stage.position + 1} of {spec.pp} uneven stages"
    return ""


def _expert_share(spec: LedgerSpec) -> float:
    experts = spec.experts or 1
    if spec.expert_param_share is not None:
        share = finite_number("expert_param_share", spec.expert_param_share, allow_zero=True)
        if share >= 1:
            raise InputError("expert_param_share", "must be below 1 (a share of the parameters)")
        if experts == 1 and share > 0:
            raise InputError("expert_param_share", "needs more than one expert")
        return share
    if experts == 1:
        return 0.0
    raise InputError(
        "experts",
        "the experts' share of the parameters is unknown: give the architecture "
        "(layers, hidden, vocab) or the share",
    )


def _weight_bytes(spec: LedgerSpec) -> float:
    if spec.convention == "zero-paper" and spec.weight_bytes is not None:
        return spec.weight_bytes
    return DTYPE_BYTES[spec.dtype]


def _layout(spec: LedgerSpec) -> list[_Part]:
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
    parts = [_Part("params", f"{label}{dtype} params", w, 3)]
    if spec.convention == "zero-paper":
        if spec.weight_bytes is not None:
            parts = [_Part("params", f"{label}params", spec.weight_bytes, 3)]
        grad = 4.0 if spec.fp32_grads else w
        if spec.grad_bytes is not None:
            parts.append(_Part("grads", "grads", spec.grad_bytes, 2))
        else:
            parts.append(_Part("grads", "fp32 grads" if grad == 4 else f"{dtype} grads", grad, 2))
        if spec.fp32_grad_accumulation and grad < 4:
            parts.append(_Part("grads", "fp32 grad accumulation", 4.0, 2))
        if spec.optimizer_bytes is not None:
            text = "optimizer K (master weights included)"
            parts.append(_Part("optimizer_states", text, spec.optimizer_bytes, 1))
            return parts
    elif spec.convention == "megatron":
        if dtype == "fp16":
            parts.append(_Part("grads", "fp16 grads", 2.0, 2))
            parts.append(_Part("grads", "fp32 main grads", 4.0, 1))
        else:
            parts.append(_Part("grads", "fp32 main grads", 4.0, 2))
    elif low:
        # DeepSpeed ZeRO-3 reduces straight into the fp32 gradient shard: its estimator counts
        # no 16-bit gradient shard (18 B, not 20); the gathered largest layer is added apart.
        if spec.zero < 3:
            parts.append(_Part("grads", f"{dtype} grads", w, 2))
        parts.append(_Part("grads", "fp32 grads", 4.0, 1))
    else:
        parts.append(_Part("grads", "fp32 grads", 4.0, 2))
    if master:
        parts.append(_Part("master_weights", "fp32 master weights", master, 1))
    if states:
        state_dtype = "" if master or w == 4 or spec.optimizer == "adam-8bit" else f"{dtype} "
        parts.append(_Part("optimizer_states", f"{state_dtype}{spec.optimizer} states", states, 1))
    return parts


def _deepspeed_largest_layer(spec: LedgerSpec, shard: _Shard, notes: list[str]) -> _Largest | None:
    """DeepSpeed ZeRO-3's 4·largest_layer_params: the largest layer's 16-bit params and grads
    gathered whole (2 + 2 bytes for 16-bit training; frozen weights gather no gradient);
    ``None`` when the convention and stage do not count it."""
    if spec.convention != "deepspeed" or spec.zero != 3:
        return None
    w = DTYPE_BYTES[spec.dtype]
    if spec.largest_layer_params is not None:
        largest = finite_number("largest_layer_params", spec.largest_layer_params)
        if largest > shard.params_total:
            raise InputError("largest_layer_params", "cannot exceed the parameter count")
        origin = "given"
    elif shard.size is not None:
        largest = shard.size.largest_module
        origin = "largest module of the architecture"
    else:
        largest = 0.0
        origin = "unknown, counted as 0 (an underestimate)"
        notes.append(
            "DeepSpeed ZeRO-3: largest_layer_params not given, its 4·largest_layer term is 0"
        )
    return _Largest(w, largest / spec.tp, origin, spec.finetune == "full")


_STAGE_NAMES = ("ZeRO-0 (replicated)", "ZeRO-1", "ZeRO-2", "ZeRO-3 / FSDP")


def _stage_name(spec: LedgerSpec) -> str:
    if spec.convention == "megatron" and spec.zero == 1:
        return "distributed optimizer"
    return _STAGE_NAMES[spec.zero]


def _term_source(spec: LedgerSpec, key: str, source: str) -> str:
    if key == "params" and spec.params is None:
        source = f"{source}; N: {sources.PARAM_COUNT}"
    if key == "params" and spec.pp > 1:
        source = f"{source}; {sources.STAGE_PLACEMENT}"
    if spec.finetune != "full":
        source = f"{source}; {sources.LORA_ADAPTERS}"
        if spec.finetune == "qlora" and key == "params":
            source = f"{source}; {sources.QLORA_NF4}"
    if spec.offload != "none" and _offloaded(spec.offload, key):
        source = f"{source}; {sources.OFFLOAD}"
    if key == "grads" and spec.fp32_grad_accumulation:
        source = f"{source}; {sources.FP32_GRAD_ACCUMULATION}"
    if key == "optimizer_states" and not spec.master_weights and DTYPE_BYTES[spec.dtype] < 4:
        source = f"{source}; {sources.PURE_BF16_STATES}"
    if key == "optimizer_states" and spec.optimizer not in ("adam", "adamw"):
        return f"{source}; {OPTIMIZER_SOURCES[spec.optimizer]}"
    if spec.convention == "megatron" and spec.zero >= 2:
        return f"{source}; stages 2-3 beyond its estimator, as {sources.FSDP_UNITS}"
    return source


def _activations(spec: LedgerSpec, shape: ModelShape | None) -> StageActivations | None:
    """The first stage's activations; ``None`` when ``seq`` is not given."""
    if spec.seq is None:
        return None
    if spec.layers is None or spec.hidden is None or spec.heads is None:
        missing = next(n for n in ("layers", "hidden", "heads") if getattr(spec, n) is None)
        raise InputError(missing, "activations need layers, hidden and heads with seq")
    return stage_activation_bytes(
        seq=spec.seq,
        micro_batch=spec.micro_batch,
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
        micro_batches=spec.micro_batches,
        virtual_stages=spec.virtual_stages,
        activation_bytes=DTYPE_BYTES[spec.dtype],
        shape=shape,
    )


def _activation_term(
    spec: LedgerSpec, described: StageActivations | None, stage: _Stage
) -> LedgerTerm:
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
        text += f"; stage {stage.position + 1} of {spec.pp}, the most loaded: {_b(value)}"
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


def _buffers(spec: LedgerSpec, shard: _Shard, stage: _Stage, notes: list[str]) -> _Buffer:
    """Communication buffers on the rank; :func:`_buffer_term` formats the text."""
    if shard.n_d == 1:
        return _Buffer(0.0, "single")
    if spec.zero < 3:
        return _Buffer(spec.bucket_bytes, "ddp")
    if spec.convention == "deepspeed":
        return _Buffer(0.0, "deepspeed")
    w = _weight_bytes(spec)
    g = (
        spec.grad_bytes
        if spec.grad_bytes is not None and spec.convention == "zero-paper"
        else (4.0 if spec.fp32_grads or spec.convention != "zero-paper" else w)
    )
    if shard.size is not None:
        size = shard.size
        unit = (size.layer_dense + size.experts * size.layer_mlp / spec.ep) / spec.tp
        origin = "one layer"
    elif stage.layers:
        unit = (stage.dense + stage.expert) / stage.layers
        origin = "one layer"
    elif spec.largest_layer_params is not None:
        unit = spec.largest_layer_params / spec.tp
        origin = "largest layer"
    else:
        notes.append("FSDP unit size unknown (give layers): gathered-parameter buffer left out")
        return _Buffer(0.0, "unknown")
    return _Buffer(unit * ((1 + spec.prefetch) * w + g), "fsdp", origin, unit, w, g)


def _buffer_term(spec: LedgerSpec, buffer: _Buffer) -> LedgerTerm:
    value = buffer.bytes
    if buffer.case == "single":
        text = "one data-parallel rank: nothing to communicate"
        return LedgerTerm("buffers", value, text, sources.DDP_BUCKET)
    if buffer.case == "ddp":
        text = f"one DDP gradient bucket {_b(value)}" if value else "DDP bucket not given: 0"
        return LedgerTerm("buffers", value, text, sources.DDP_BUCKET)
    if buffer.case == "deepspeed":
        text = "the gathered largest layer is in params and grads (DeepSpeed ZeRO-3 estimator)"
        return LedgerTerm("buffers", value, text, sources.DEEPSPEED_ESTIMATORS)
    if buffer.case == "unknown":
        return LedgerTerm("buffers", value, "FSDP unit unknown: 0", sources.FSDP_UNITS)
    text = (
        f"FSDP: (1 + prefetch {spec.prefetch}) × {buffer.origin} {buffer.unit:,.0f} params × "
        f"{buffer.weight:g} B gathered + its unsharded gradient × {buffer.grad:g} B = {_b(value)}"
    )
    return LedgerTerm("buffers", value, text, sources.FSDP_UNITS)


def _b(value: float) -> str:
    return f"{value:,.0f} B"
