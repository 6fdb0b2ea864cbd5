"""The ledger's configuration (:class:`LedgerSpec`), its result (:class:`LedgerResult`) and the
tables they name: dtypes, optimizers, conventions, bytes per parameter, presets.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Literal, get_args

from engine import sources
from engine.activations import ActivationSchedule, Recompute
from engine.i18n import N_, gettext
from engine.model_size import ShapeFields

Dtype = Literal["bf16", "fp16", "fp32"]
Optimizer = Literal["adam", "adamw", "sgd", "sgd-momentum", "adam-8bit"]
Convention = Literal["zero-paper", "megatron", "deepspeed"]
Finetune = Literal["full", "lora", "qlora"]
Offload = Literal["none", "optimizer", "optimizer+params"]
DTYPE_CHOICES: tuple[Dtype, ...] = get_args(Dtype)
OPTIMIZER_CHOICES: tuple[Optimizer, ...] = get_args(Optimizer)
CONVENTIONS: tuple[Convention, ...] = get_args(Convention)
FINETUNE_CHOICES: tuple[Finetune, ...] = get_args(Finetune)
OFFLOAD_CHOICES: tuple[Offload, ...] = get_args(Offload)
LORA_TARGETS: tuple[str, ...] = ("q", "k", "v", "o", "gate", "up", "down")
DEFAULT_LORA_TARGETS: tuple[str, ...] = ("q", "v")

TERM_KEYS = ("params", "grads", "master_weights", "optimizer_states", "activations", "buffers")
MODEL_STATE_KEYS = TERM_KEYS[:4]
ACTIVATION_INPUTS = ("seq", "layers", "hidden", "heads")
"""The spec fields the activations term needs; without ``seq`` it is not computed."""

DTYPE_BYTES: dict[str, float] = {"bf16": 2.0, "fp16": 2.0, "fp32": 4.0}
# Optimizer-state bytes per parameter with fp32 states, master weights excluded.
OPTIMIZER_STATE_BYTES: dict[str, float] = {
    "adam": 8.0,
    "adamw": 8.0,
    "sgd": 0.0,
    "sgd-momentum": 4.0,
    "adam-8bit": 2.0,
}

OPTIMIZER_SOURCES: dict[str, sources.Citations] = {
    "adam": (sources.ADAM_STATES,),
    "adamw": (sources.ADAM_STATES, N_("AdamW keeps the same")),
    "sgd": (N_("plain SGD keeps no optimizer state"),),
    "sgd-momentum": (sources.SGD_MOMENTUM_STATES,),
    "adam-8bit": sources.ADAM_8BIT_STATES,
}
"""What each optimizer's states rest on, translated and joined where shown
(:func:`engine.sources.joined`)."""

# 4-bit NF4 weights; one 8-bit constant per block of 64 weights and one fp32 constant per 256 of
# those blocks (double quantization): 4 + 8/64 + 32/(64·256) bits.
NF4_BYTES_PER_PARAM = (4 + 8 / 64 + 32 / (64 * 256)) / 8

DEEPSPEED_BUFFER_FACTOR = 1.5

CONVENTION_SOURCES: dict[str, sources.Citations] = {
    "zero-paper": (sources.ZERO_MODEL_STATES,),
    "megatron": sources.MEGATRON_MODEL_STATES,
    "deepspeed": sources.DEEPSPEED_ESTIMATORS,
}

CONVENTION_LABELS: dict[str, str] = {
    "zero-paper": N_("ZeRO paper"),
    # The frameworks' own names, the same in every language.
    "megatron": "Megatron-LM",
    "deepspeed": "DeepSpeed",
}
"""Each convention as the screen names it; the id (``zero-paper``) is what the settings, the
progress file and ``--convention`` store."""


def convention_label(convention: str) -> str:
    """``convention`` (an id of :data:`CONVENTIONS`) as the screen names it, in the interface
    language: ``zero-paper`` -> ``ZeRO paper`` (``ZeRO 论文``); an unknown id is itself."""
    return gettext(CONVENTION_LABELS.get(convention, convention))


CONVENTION_NOTES: dict[str, str] = {  # msgids: gettext() where shown
    "zero-paper": N_(
        "with mixed-precision Adam 16 B/param (2 params + 2 grads + K=12 fp32 master and "
        "Adam); ZeRO-1/2/3 shard K, then grads, then params over N_d."
    ),
    "megatron": N_(
        "fp32 main gradients: with Adam 18 B/param for bf16 (20 fp16, 16 fp32); its distributed "
        "optimizer shards master and Adam only: 6 + 12/d. Stages 2-3 extend it as FSDP would."
    ),
    "deepspeed": N_(
        "adds an fp32 gradient copy: with Adam ZeRO-2 2 + 18/N; ZeRO-3 18/N plus 4 B for the "
        "largest layer gathered whole (its 16-bit params and grads)."
    ),
}

"""Each convention's layout for the case its sources state (mixed-precision Adam); the bytes a
configuration uses are :func:`engine.ledger.compute.bytes_per_param_note`'s."""


@dataclass(frozen=True)
class LedgerSpec(ShapeFields):
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
    seq: int | None = None
    micro_batch_size: int = 1
    dtype: Dtype = "bf16"
    optimizer: Optimizer = "adamw"
    master_weights: bool = True
    fp32_grads: bool = False
    dp: int = 1
    tp: int = 1
    pp: int = 1
    cp: int = 1
    ep: int = 1
    expert_param_share: float | None = None
    zero_stage: int = 0
    recompute: Recompute = "none"
    sequence_parallel: bool = False
    schedule: ActivationSchedule = "1f1b"
    num_microbatches: int | None = None
    virtual_stages: int = 1
    convention: Convention = "zero-paper"
    largest_layer_params: float | None = None
    gpu_memory: float | None = None
    bucket_bytes: float = 0.0
    prefetch: int = 1
    weight_bytes: float | None = None
    grad_bytes: float | None = None
    optimizer_bytes: float | None = None
    finetune: Finetune = "full"
    lora_rank: int = 8
    lora_targets: tuple[str, ...] = DEFAULT_LORA_TARGETS
    offload: Offload = "none"
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
    convention: Convention
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
        label: its name with its bytes per parameter (weights/grads/K), as the export shows it.
        fields: the :class:`LedgerSpec` fields it sets (apply with ``dataclasses.replace``).
        weight_bytes, grad_bytes, optimizer_bytes: its bytes per parameter under ``zero-paper``
            (optimizer bytes include fp32 master weights, the ZeRO paper's K).
        source: where the figures come from (:func:`engine.sources.joined` shows them).
        short_label: its name alone, as the pane's picker shows it (the bytes are the fields
            under it).
    """

    label: str
    fields: dict[str, Any]
    weight_bytes: float
    grad_bytes: float
    optimizer_bytes: float
    source: sources.Citations
    short_label: str


PRECISION_PRESETS: dict[str, PrecisionPreset] = {
    "mixed-adam": PrecisionPreset(
        N_("mixed-precision Adam 2/2/12"),
        {"dtype": "bf16", "optimizer": "adamw", "master_weights": True, "fp32_grads": False},
        2.0,
        2.0,
        12.0,
        (sources.ZERO_MODEL_STATES,),
        N_("mixed-precision Adam"),
    ),
    "fp32-adam": PrecisionPreset(
        N_("fp32 Adam 4/4/8"),
        {"dtype": "fp32", "optimizer": "adamw", "master_weights": False, "fp32_grads": False},
        4.0,
        4.0,
        8.0,
        (sources.FP32_ADAM_STATES,),
        N_("fp32 Adam"),
    ),
    "sgd-momentum": PrecisionPreset(
        N_("SGD with momentum 2/2/8"),
        {"dtype": "bf16", "optimizer": "sgd-momentum", "master_weights": True, "fp32_grads": False},
        2.0,
        2.0,
        8.0,
        OPTIMIZER_SOURCES["sgd-momentum"],
        N_("SGD with momentum"),
    ),
    "adam-8bit": PrecisionPreset(
        N_("8-bit Adam 2/2/6"),
        {"dtype": "bf16", "optimizer": "adam-8bit", "master_weights": True, "fp32_grads": False},
        2.0,
        2.0,
        6.0,
        OPTIMIZER_SOURCES["adam-8bit"],
        N_("8-bit Adam"),
    ),
}

# Marketing capacities in decimal GB (an "80GB" H100 reports 81,559 MiB = 85.5e9 B in nvidia-smi,
# so these presets are slightly conservative).
DEVICE_MEMORY_PRESETS: dict[str, tuple[str, float]] = {
    "80GB": ("80 GB (A100/H100 80GB)", 80e9),
    "141GB": ("141 GB (H200)", 141e9),
}
