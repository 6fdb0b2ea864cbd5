"""The training-memory ledger: what one rank holds, term by term, in a named convention (bytes).

Terms per rank (the most loaded rank where ranks differ: the first pipeline stage, which holds the
embedding, the extra layers of an uneven split, and the most micro-batches in flight): parameters,
gradients, master weights, optimizer states, activations, communication buffers.

The sources disagree on bytes per parameter for mixed-precision Adam, so the convention is an
input and is named in every result (values in ``shared/reference/VECTORS.md``):

- ``zero-paper`` (default): Rajbhandari et al. 2020, "ZeRO" (arXiv:1910.02054) §3.1 and §5.1,
  Figure 1: 16-bit params 2 + 16-bit grads 2 + K = 12 (fp32 master 4, momentum 4, variance 4);
  ZeRO-1 P_os = 4Ψ + KΨ/N_d, ZeRO-2 P_os+g = 2Ψ + (2+K)Ψ/N_d, ZeRO-3 P_os+g+p = (2+2+K)Ψ/N_d.
- ``megatron``: NVIDIA/Megatron-LM ``megatron/training/theoretical_memory_usage.py`` and
  ``docs/source/api-guide/dist_optimizer.md``: fp32 main gradients, 18 B/param for bf16 (20 for
  fp16, 16 for fp32); the distributed optimizer (ZeRO stage >= 1 here) 6 + 12/d (4 + 16/d, 8 + 8/d).
- ``deepspeed``: microsoft/DeepSpeed ``deepspeed/runtime/zero/stage_1_and_2.py``
  ``estimate_zero2_model_states_mem_needs`` (2 + 18/N: 16-bit grads 2 + fp32 grads 4 + fp32
  params 4 + Adam 8 sharded) and ``stage3.py`` ``estimate_zero3_model_states_mem_needs``
  (4·largest_layer_params + 18·Ψ/N).

Parallel axes: TP, PP and EP split the model (Ψ on a rank = the rank's model shard); ZeRO shards
across the N_d = DP·CP ranks that hold the same shard (Megatron-Core's distributed optimizer shards
over its data-parallel-with-context-parallel group); expert parameters shard over DP·CP/EP.
World size = DP·TP·PP·CP (EP is carved out of DP·CP, as in Megatron-Core).
"""

from __future__ import annotations

import math
import operator
from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import Any, Literal, NamedTuple, get_args

from engine.activations import (
    EXTRA_SOURCE,
    RECOMPUTE_CHOICES,
    SCHEDULE_CHOICES,
    STAGE_SOURCE,
    TABLE2_SOURCE,
    StageFigures,
    describe_stage,
    stage_activation_figures,
)
from engine.errors import InputError
from engine.model_size import (
    MAX_COUNT,
    PARAM_COUNT_SOURCE,
    ModelSize,
    finite_number,
    transformer_param_count,
    whole_number,
)
from engine.units import parse_bytes, parse_count, parse_int

Dtype = Literal["bf16", "fp16", "fp32"]
Optimizer = Literal["adam", "adamw", "sgd", "sgd-momentum", "adam-8bit"]
Convention = Literal["zero-paper", "megatron", "deepspeed"]
DTYPE_CHOICES: tuple[str, ...] = get_args(Dtype)
OPTIMIZER_CHOICES: tuple[str, ...] = get_args(Optimizer)
CONVENTIONS: tuple[str, ...] = get_args(Convention)
ZERO_STAGES = (0, 1, 2, 3)

TERM_KEYS = ("params", "grads", "master_weights", "optimizer_states", "activations", "buffers")
MODEL_STATE_KEYS = TERM_KEYS[:4]

DTYPE_BYTES: dict[str, float] = {"bf16": 2.0, "fp16": 2.0, "fp32": 4.0}
# Optimizer-state bytes per parameter, master weights excluded.
OPTIMIZER_STATE_BYTES: dict[str, float] = {
    "adam": 8.0,
    "adamw": 8.0,
    "sgd": 0.0,
    "sgd-momentum": 4.0,
    "adam-8bit": 2.0,
}
OPTIMIZER_SOURCES: dict[str, str] = {
    "adam": "Rajbhandari et al. 2020 §3.1 (fp32 momentum 4 + variance 4)",
    "adamw": "Rajbhandari et al. 2020 §3.1 (fp32 momentum 4 + variance 4; AdamW keeps the same)",
    "sgd": "plain SGD keeps no optimizer state",
    "sgd-momentum": "EleutherAI, Transformer Math 101 (momentum 4 B/param; 8 with master weights)",
    "adam-8bit": "EleutherAI, Transformer Math 101; Dettmers et al. 2022 (arXiv:2110.02861): "
    "two 1-byte states, 6 B/param with master weights",
}

ZERO_SOURCE = "Rajbhandari et al. 2020 (arXiv:1910.02054) §3.1, §5.1, Figure 1"
MEGATRON_SOURCE = (
    "NVIDIA/Megatron-LM megatron/training/theoretical_memory_usage.py; "
    "docs/source/api-guide/dist_optimizer.md"
)
DEEPSPEED_SOURCE = (
    "microsoft/DeepSpeed deepspeed/runtime/zero/stage_1_and_2.py "
    "estimate_zero2_model_states_mem_needs; stage3.py estimate_zero3_model_states_mem_needs"
)
CONVENTION_SOURCES: dict[str, str] = {
    "zero-paper": ZERO_SOURCE,
    "megatron": MEGATRON_SOURCE,
    "deepspeed": DEEPSPEED_SOURCE,
}
CONVENTION_NOTES: dict[str, str] = {
    "zero-paper": "16 B/param (2 params + 2 grads + K=12 fp32 master and Adam); ZeRO-1/2/3 shard "
    "K, then grads, then params over N_d.",
    "megatron": "fp32 main gradients: 18 B/param for bf16 (20 fp16, 16 fp32); its distributed "
    "optimizer shards master and Adam only: 6 + 12/d. Stages 2-3 extend it as FSDP would.",
    "deepspeed": "adds an fp32 gradient copy: ZeRO-2 2 + 18/N; ZeRO-3 18/N plus 4 B for the "
    "largest layer gathered whole (its 16-bit params and grads).",
}

DDP_BUCKET_SOURCE = "PyTorch DistributedDataParallel bucket_cap_mb (default 25 MiB)"
FSDP_SOURCE = (
    "Zhao et al. 2023, PyTorch FSDP (arXiv:2304.11277) §3: one unit gathered whole, "
    "plus prefetched units"
)


@dataclass(frozen=True)
class LedgerSpec:
    """One training configuration. Sizes are counts; memory is bytes. Field names follow the
    ``shardbook calc ledger`` flags in snake_case.

    Give ``params`` (the parameter count N), or the architecture (``layers``, ``hidden``,
    ``vocab``; ``ffn_hidden`` defaults to 4·hidden) from which N is derived
    (:data:`engine.model_size.PARAM_COUNT_SOURCE`). Activations are computed when ``seq`` is given,
    and then need ``layers``, ``hidden`` and ``heads``.

    ``weight_bytes``, ``grad_bytes`` and ``optimizer_bytes`` override the bytes per parameter of the
    ``zero-paper`` convention (``optimizer_bytes`` is the paper's K: master weights included).
    ``expert_param_share`` is the experts' share of N when N is given without an architecture.
    ``bucket_bytes`` is one DDP gradient bucket (0 leaves it out); ``prefetch`` counts the FSDP
    units gathered ahead of the one in use. ``gpu_memory`` is the device memory in bytes.
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
    experts: int = 1
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


@dataclass(frozen=True)
class LedgerTerm:
    """One line of the ledger.

    Attributes:
        name: a key of ``LedgerResult.per_rank_bytes`` (``params``, ``grads``, ...).
        bytes: bytes on the rank (>= 0, finite).
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
        spec: the configuration.
        convention: the bytes-per-parameter convention used (a key of :data:`CONVENTION_NOTES`).
        per_rank_bytes: ``params``, ``grads``, ``master_weights``, ``optimizer_states``,
            ``activations``, ``buffers`` and ``total`` on the most loaded rank.
        model_states_bytes: the first four summed.
        naive_bytes: the "parameters x precision" figure, N x weight bytes (whole model).
        params_total: N.
        params_per_rank: the model-parallel shard of N on the most loaded rank, before ZeRO.
        bytes_per_param: each model-state term's bytes per parameter before sharding.
        world_size: DP x TP x PP x CP.
        fits: ``total <= gpu_memory``; ``None`` when no device memory is given.
        activations_computed: False when ``seq`` (or the architecture) was not given.
        notes: what a reader should know (defaults taken, uneven stages, inputs not used).
        terms: one :class:`LedgerTerm` per ``per_rank_bytes`` key except ``total``, in order
            (a property: the formula text is formatted on first read, from figures
            :func:`compute_ledger` keeps, so a sweep that reads only the bytes never pays for it).
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
    _draft: _Draft = field(kw_only=True, repr=False, compare=False)

    @cached_property
    def terms(self) -> tuple[LedgerTerm, ...]:
        """One :class:`LedgerTerm` per ``per_rank_bytes`` key except ``total``, in order."""
        return _terms(self._draft)

    def as_dict(self) -> dict[str, Any]:
        """The JSON object of ``shardbook calc ledger --json`` (issue 3): sizes in bytes."""
        return {
            "per_rank_bytes": dict(self.per_rank_bytes),
            "model_states_bytes": self.model_states_bytes,
            "naive_bytes": self.naive_bytes,
            "params_total": self.params_total,
            "world_size": self.world_size,
            "fits": self.fits,
            "convention": self.convention,
            "terms": [
                {"name": t.name, "bytes": t.bytes, "formula": t.formula, "source": t.source}
                for t in self.terms
            ],
            "activations_computed": self.activations_computed,
        }


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
        ZERO_SOURCE,
    ),
    "fp32-adam": PrecisionPreset(
        "fp32 Adam 4/4/8",
        {"dtype": "fp32", "optimizer": "adamw", "master_weights": False, "fp32_grads": False},
        4.0,
        4.0,
        8.0,
        "EleutherAI, Transformer Math 101 (fp32 AdamW: 4 + 4 + 8)",
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


class _Shard(NamedTuple):
    """The model-parallel shard on the most loaded rank and how ZeRO divides it."""

    dense: float
    expert: float
    n_d: int
    n_de: int
    layers_on_stage: int | None
    size: ModelSize | None
    params_total: float
    share: float


class _Largest(NamedTuple):
    """DeepSpeed ZeRO-3's gathered largest layer on the rank (parameters, after TP)."""

    bytes_per_param: float
    params: float
    origin: str


class _Buffer(NamedTuple):
    """The communication-buffer term's bytes and what its text needs (``case`` names the
    branch of :func:`_buffers`)."""

    bytes: float
    case: Literal["single", "ddp", "deepspeed", "fsdp", "unknown"]
    origin: str = ""
    unit: float = 0.0
    weight: float = 0.0
    grad: float = 0.0


class _Draft(NamedTuple):
    """What :attr:`LedgerResult.terms` formats: the figures :func:`compute_ledger` computed."""

    spec: LedgerSpec
    shard: _Shard
    parts: list[_Part]
    largest: _Largest | None
    term_bytes: tuple[float, ...]
    stage: StageFigures | None
    buffer: _Buffer


def compute_ledger(spec: LedgerSpec) -> LedgerResult:
    """The per-rank ledger of ``spec`` in ``spec.convention`` (module docstring: sources).

    Returns:
        A :class:`LedgerResult`; every figure in bytes, finite and >= 0.

    Raises:
        InputError: naming the spec field: a size that is zero, negative, fractional, NaN or
            infinite; an unknown dtype, optimizer, convention, schedule or recompute mode; a ZeRO
            stage outside 0-3; neither ``params`` nor the architecture given; ``tp`` not dividing
            ``heads``; ``ep`` not dividing ``experts`` or DP·CP; ``pp`` above ``layers``;
            activations asked for (recompute, sequence parallel) without ``seq``, or ``seq``
            without ``layers``, ``hidden`` or ``heads``.
    """
    spec = _checked(spec)
    shard = _model_shard(spec)
    convention = spec.convention
    notes: list[str] = []
    if spec.fp32_grads and convention != "zero-paper":
        notes.append(f"fp32 gradients are part of the {convention} layout already")
    if convention != "zero-paper" and (
        spec.weight_bytes is not None
        or spec.grad_bytes is not None
        or spec.optimizer_bytes is not None
    ):
        notes.append(
            f"bytes-per-parameter overrides apply to zero-paper only; {convention} uses "
            f"its own layout"
        )
    parts = _layout(spec)
    per_rank: dict[str, float] = dict.fromkeys(TERM_KEYS, 0.0)
    bytes_per_param: dict[str, float] = dict.fromkeys(MODEL_STATE_KEYS, 0.0)
    zero, dense, expert, n_d, n_de = spec.zero, shard.dense, shard.expert, shard.n_d, shard.n_de
    for part in parts:
        bytes_per_param[part.key] += part.bytes_per_param
        sharded = zero >= part.stage
        per_rank[part.key] += part.bytes_per_param * (
            dense / (n_d if sharded else 1) + expert / (n_de if sharded else 1)
        )
    largest = _deepspeed_largest_layer(spec, shard, per_rank, notes)

    stage = _activations(spec)
    if stage is not None:
        notes.extend(note for note in stage.notes if "uneven" not in note)
        per_rank["activations"] = stage.total
    buffer = _buffers(spec, shard, notes)
    per_rank["buffers"] = buffer.bytes
    term_bytes = tuple(per_rank.values())

    model_states = math.fsum([per_rank[key] for key in MODEL_STATE_KEYS])
    total = math.fsum([model_states, per_rank["activations"], per_rank["buffers"]])
    per_rank["total"] = total
    naive = shard.params_total * _weight_bytes(spec)
    # Every input is validated >= 0, so a finite, non-negative total and naive figure clear
    # every term; the per-term walk only names the one that overflowed.
    if not (0.0 <= total < math.inf and 0.0 <= naive < math.inf and min(term_bytes) >= 0.0):
        for key, value in (*per_rank.items(), ("naive", naive)):
            if not math.isfinite(value) or value < 0:
                raise InputError("params", f"the {key} figure overflows; use smaller sizes")
    if spec.layers is not None and spec.pp > 1 and spec.layers % spec.pp:
        notes.append(
            f"{spec.layers} layers on {spec.pp} stages are uneven: figures are for the first "
            f"stage, {shard.layers_on_stage} layers, the heaviest"
        )
    return LedgerResult(
        spec=spec,
        convention=convention,
        per_rank_bytes=per_rank,
        model_states_bytes=model_states,
        naive_bytes=naive,
        params_total=shard.params_total,
        params_per_rank=dense + expert,
        bytes_per_param=bytes_per_param,
        world_size=spec.dp * spec.tp * spec.pp * spec.cp,
        fits=None if spec.gpu_memory is None else total <= spec.gpu_memory,
        activations_computed=stage is not None,
        notes=tuple(dict.fromkeys(notes)),
        _draft=_Draft(spec, shard, parts, largest, term_bytes, stage, buffer),
    )


def _terms(draft: _Draft) -> tuple[LedgerTerm, ...]:
    """The six ledger lines of ``draft``, formula text filled in."""
    spec, shard = draft.spec, draft.shard
    formulas: dict[str, list[str]] = {key: [] for key in MODEL_STATE_KEYS}
    for part in draft.parts:
        sharded = spec.zero >= part.stage
        divisor = f" / N_d {shard.n_d}" if sharded and shard.n_d > 1 else ""
        if sharded and shard.expert and shard.n_de != shard.n_d:
            divisor += f" (experts / {shard.n_de})"
        formulas[part.key].append(f"{part.label} {part.bytes_per_param:g} B × Ψ{divisor}")
    largest_note = ""
    if draft.largest is not None:
        w, largest, origin = draft.largest
        largest_note = f" + {w:g} B × largest layer {largest:,.0f} ({origin}; gathered whole)"
    source = CONVENTION_SOURCES[spec.convention]
    stage_name = _stage_name(spec)
    psi_text = f"; Ψ = {_shard_text(spec, shard)} = {shard.dense + shard.expert:,.0f}"
    terms: list[LedgerTerm] = []
    for key, value in zip(MODEL_STATE_KEYS, draft.term_bytes, strict=False):
        text = " + ".join(formulas[key]) or "none kept"
        if key in ("params", "grads") and largest_note:
            text += largest_note
        text += psi_text
        if key == "params" and spec.params is None and shard.size is not None:
            text += f"; N = {shard.size.formula}"
        text += f"; {stage_name} = {_b(value)}"
        terms.append(LedgerTerm(key, value, text, _term_source(spec, key, source)))
    terms.append(_activation_term(spec, draft.stage))
    terms.append(_buffer_term(spec, draft.buffer))
    return tuple(terms)


# LedgerSpec's numeric fields as typed (CLI flags, the Ledger pane's form): how each is parsed.
# Optional ones may be empty or None (not given); the others always carry a value.
OPTIONAL_COUNT_FIELDS = ("layers", "hidden", "heads", "ffn_hidden", "vocab", "seq", "micro_batches")
SIZE_FIELDS = ("micro_batch", "dp", "tp", "pp", "cp", "ep", "experts", "virtual_stages")


def numeric_fields_from_text(texts: dict[str, str | None]) -> dict[str, Any]:
    """Parse the numeric :class:`LedgerSpec` fields present in ``texts`` (field -> text).

    ``params`` and ``largest_layer_params`` are counts (``7.5B``), ``gpu_memory`` a size
    (``80GB``), ``zero`` a whole number 0-3, the others whole numbers >= 1
    (:mod:`engine.units`). ``params``, ``largest_layer_params``, ``gpu_memory`` and
    :data:`OPTIONAL_COUNT_FIELDS` left empty or ``None`` are omitted (not given).

    Raises:
        InputError: naming the spec field whose text does not parse.
    """
    values: dict[str, Any] = {}
    for name, text in texts.items():
        optional = name in OPTIONAL_COUNT_FIELDS or name in _OPTIONAL_UNIT_FIELDS
        if optional and (text is None or not text.strip()):
            continue
        assert text is not None
        if name in _OPTIONAL_UNIT_FIELDS:
            values[name] = _OPTIONAL_UNIT_FIELDS[name](name, text)
        elif name == "zero":
            values[name] = parse_int(name, text, minimum=0, maximum=3)
        elif name in OPTIONAL_COUNT_FIELDS or name in SIZE_FIELDS:
            values[name] = parse_int(name, text)
    return values


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


# (field, minimum, may be None) of every whole-number field of LedgerSpec.
_COUNT_FIELDS: tuple[tuple[str, int, bool], ...] = (
    *((name, 1, False) for name in ("micro_batch", "dp", "tp", "pp", "cp", "ep", "experts")),
    ("virtual_stages", 1, False),
    ("prefetch", 0, False),
    *((name, 1, True) for name in ("layers", "hidden", "heads", "ffn_hidden", "vocab", "seq")),
    ("micro_batches", 1, True),
)


_COUNT_VALUES = operator.attrgetter(*(name for name, _, _ in _COUNT_FIELDS))
_CHOICE_FIELDS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("dtype", DTYPE_CHOICES),
    ("optimizer", OPTIMIZER_CHOICES),
    ("convention", CONVENTIONS),
    ("recompute", RECOMPUTE_CHOICES),
    ("schedule", SCHEDULE_CHOICES),
)


def _checked(spec: LedgerSpec) -> LedgerSpec:
    """Validate every field; return the spec with whole numbers as ``int``."""
    if (
        spec.dtype not in DTYPE_CHOICES
        or spec.optimizer not in OPTIMIZER_CHOICES
        or spec.convention not in CONVENTIONS
        or spec.recompute not in RECOMPUTE_CHOICES
        or spec.schedule not in SCHEDULE_CHOICES
    ):
        for name, allowed in _CHOICE_FIELDS:
            value = getattr(spec, name)
            if value not in allowed:
                raise InputError(name, f"{value!r} is not one of {', '.join(map(str, allowed))}")
    if isinstance(spec.zero, bool) or spec.zero not in ZERO_STAGES:
        raise InputError("zero", f"must be 0, 1, 2 or 3 (3 = FSDP full shard), got {spec.zero!r}")
    # bool cannot be subclassed: a type test is isinstance's answer.
    if type(spec.master_weights) is not bool:
        raise InputError("master_weights", "must be true or false")
    if type(spec.fp32_grads) is not bool:
        raise InputError("fp32_grads", "must be true or false")
    if type(spec.sequence_parallel) is not bool:
        raise InputError("sequence_parallel", "must be true or false")
    # Whole numbers typed as floats (2.0) are normalized to int; anything else must already be one.
    changed: dict[str, Any] = {}
    for (name, minimum, optional), value in zip(_COUNT_FIELDS, _COUNT_VALUES(spec), strict=True):
        if (type(value) is int and minimum <= value <= MAX_COUNT) or (value is None and optional):
            continue
        changed[name] = whole_number(name, value, minimum=minimum)
    if changed:
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
    if spec.hidden is not None and spec.heads is not None and spec.hidden % spec.heads:
        raise InputError("heads", f"must divide hidden ({spec.hidden}); {spec.heads} heads do not")
    if spec.layers is not None and spec.pp > spec.layers:
        raise InputError("pp", f"{spec.pp} stages need at least {spec.pp} layers")
    if spec.ep > spec.experts or spec.experts % spec.ep:
        raise InputError("ep", f"must divide the number of experts ({spec.experts})")
    if (spec.dp * spec.cp) % spec.ep:
        raise InputError("ep", f"must divide DP·CP ({spec.dp * spec.cp}): experts spread over DP")
    if spec.seq is None:
        if spec.recompute != "none":
            raise InputError("seq", "activation recomputation needs the sequence length")
        if spec.sequence_parallel:
            raise InputError("seq", "sequence parallelism needs the sequence length")
    return spec


def _model_shard(spec: LedgerSpec) -> _Shard:
    size: ModelSize | None = None
    if spec.layers is not None and spec.hidden is not None and spec.vocab is not None:
        size = transformer_param_count(
            layers=spec.layers,
            hidden=spec.hidden,
            vocab=spec.vocab,
            ffn_hidden=spec.ffn_hidden,
            seq=spec.seq,
            experts=spec.experts,
        )
    if spec.params is None and size is None:
        missing = next(n for n in ("layers", "hidden", "vocab") if getattr(spec, n) is None)
        raise InputError(
            "params", f"give the parameter count, or the architecture ({missing} is missing)"
        )
    n_d = spec.dp * spec.cp
    n_de = n_d // spec.ep
    layers_on_stage = None if spec.layers is None else math.ceil(spec.layers / spec.pp)
    tp, ep = spec.tp, spec.ep
    if spec.params is None and size is not None:
        stage = layers_on_stage or 1
        if size.experts > 1:
            dense = (stage * size.layer_dense + size.embedding) / tp
            expert = stage * size.experts * size.layer_mlp / (tp * ep)
        else:
            dense = (stage * size.per_layer + size.embedding) / tp
            expert = 0.0
        return _Shard(dense, expert, n_d, n_de, layers_on_stage, size, size.total, 0.0)
    params = finite_number("params", spec.params)
    share = _expert_share(spec, size)
    fraction = 1 / spec.pp if layers_on_stage is None else layers_on_stage / (spec.layers or 1)
    dense = params * (1 - share) * fraction / tp
    expert = params * share * fraction / (tp * ep)
    return _Shard(dense, expert, n_d, n_de, layers_on_stage, size, params, share)


def _shard_text(spec: LedgerSpec, shard: _Shard) -> str:
    """How Ψ, the model-parallel shard of :func:`_model_shard`, was reached."""
    tp, ep = spec.tp, spec.ep
    size = shard.size
    if spec.params is None and size is not None:
        stage = shard.layers_on_stage or 1
        return f"(embedding + {stage} of {size.layers} layers{_uneven(spec)}) / TP {tp}" + (
            f", experts / EP {ep}" if size.experts > 1 else ""
        )
    where = (
        f"1/PP {spec.pp}"
        if shard.layers_on_stage is None
        else f"{shard.layers_on_stage}/{spec.layers} layers{_uneven(spec)}"
    )
    text = f"N {shard.params_total:,.0f} × {where} / TP {tp}"
    if shard.share:
        text += f", experts ({shard.share:.3g} of N) / EP {ep}"
    return text


def _uneven(spec: LedgerSpec) -> str:
    if spec.layers is not None and spec.layers % spec.pp:
        return f" on the first of {spec.pp} uneven stages, the heaviest"
    return ""


def _expert_share(spec: LedgerSpec, size: ModelSize | None) -> float:
    if spec.expert_param_share is not None:
        share = finite_number("expert_param_share", spec.expert_param_share, allow_zero=True)
        if share >= 1:
            raise InputError("expert_param_share", "must be below 1 (a share of the parameters)")
        if spec.experts == 1 and share > 0:
            raise InputError("expert_param_share", "needs more than one expert")
        return share
    if spec.experts == 1:
        return 0.0
    if size is None:
        raise InputError(
            "experts",
            "the experts' share of the parameters is unknown: give the architecture "
            "(layers, hidden, vocab) or the share",
        )
    return size.expert_params / size.total


def _weight_bytes(spec: LedgerSpec) -> float:
    if spec.convention == "zero-paper" and spec.weight_bytes is not None:
        return spec.weight_bytes
    return DTYPE_BYTES[spec.dtype]


def _layout(spec: LedgerSpec) -> list[_Part]:
    """Bytes per parameter of each model-state component and the ZeRO stage sharding it."""
    w = DTYPE_BYTES[spec.dtype]
    low = w < 4
    master = 4.0 if low and spec.master_weights else 0.0
    states = OPTIMIZER_STATE_BYTES[spec.optimizer]
    dtype = spec.dtype
    parts = [_Part("params", f"{dtype} params", w, 3)]
    if spec.convention == "zero-paper":
        if spec.weight_bytes is not None:
            parts = [_Part("params", "params", spec.weight_bytes, 3)]
        grad = 4.0 if spec.fp32_grads else w
        if spec.grad_bytes is not None:
            parts.append(_Part("grads", "grads", spec.grad_bytes, 2))
        else:
            parts.append(_Part("grads", "fp32 grads" if grad == 4 else f"{dtype} grads", grad, 2))
        if spec.optimizer_bytes is not None:
            label = "optimizer K (master weights included)"
            parts.append(_Part("optimizer_states", label, spec.optimizer_bytes, 1))
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
        parts.append(_Part("optimizer_states", f"{spec.optimizer} states", states, 1))
    return parts


def _deepspeed_largest_layer(
    spec: LedgerSpec,
    shard: _Shard,
    per_rank: dict[str, float],
    notes: list[str],
) -> _Largest | None:
    """DeepSpeed ZeRO-3's 4·largest_layer_params: the largest layer's 16-bit params and grads
    gathered whole (2 + 2 bytes for 16-bit training), added to ``per_rank``; ``None`` when the
    convention and stage do not count it."""
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
    largest /= spec.tp
    per_rank["params"] += w * largest
    per_rank["grads"] += w * largest
    return _Largest(w, largest, origin)


_STAGE_NAMES = ("ZeRO-0 (replicated)", "ZeRO-1", "ZeRO-2", "ZeRO-3 / FSDP")


def _stage_name(spec: LedgerSpec) -> str:
    if spec.convention == "megatron" and spec.zero == 1:
        return "distributed optimizer"
    return _STAGE_NAMES[spec.zero]


def _term_source(spec: LedgerSpec, key: str, source: str) -> str:
    if key == "params" and spec.params is None:
        source = f"{source}; N: {PARAM_COUNT_SOURCE}"
    if key == "optimizer_states" and spec.optimizer not in ("adam", "adamw"):
        return f"{source}; {OPTIMIZER_SOURCES[spec.optimizer]}"
    if spec.convention == "megatron" and spec.zero >= 2:
        return f"{source}; stages 2-3 beyond its estimator, as {FSDP_SOURCE}"
    return source


def _activations(spec: LedgerSpec) -> StageFigures | None:
    """The first stage's activation figures; ``None`` when ``seq`` is not given."""
    if spec.seq is None:
        return None
    if spec.layers is None or spec.hidden is None or spec.heads is None:
        missing = next(n for n in ("layers", "hidden", "heads") if getattr(spec, n) is None)
        raise InputError(missing, "activations need layers, hidden and heads with seq")
    return stage_activation_figures(
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
    )


def _activation_term(spec: LedgerSpec, figures: StageFigures | None) -> LedgerTerm:
    if figures is None:
        reason = "not computed: give seq (and layers, hidden, heads) to compute activations"
        return LedgerTerm("activations", 0.0, reason, TABLE2_SOURCE)
    stage = describe_stage(figures)
    text = f"Table 2 row '{stage.per_layer.row}': {stage.per_layer.formula}; {stage.formula}"
    if stage.notes:
        text += "; " + "; ".join(stage.notes)
    if spec.experts > 1:
        text += "; MoE: balanced routing gives each rank as many tokens as a dense MLP, so no /EP"
    source = f"{TABLE2_SOURCE}; {STAGE_SOURCE}"
    if spec.vocab is not None:
        source += f"; {EXTRA_SOURCE}"
    return LedgerTerm("activations", stage.total, text, source)


def _buffers(spec: LedgerSpec, shard: _Shard, notes: list[str]) -> _Buffer:
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
    elif shard.layers_on_stage:
        unit = (shard.dense + shard.expert) / shard.layers_on_stage
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
        return LedgerTerm("buffers", value, text, DDP_BUCKET_SOURCE)
    if buffer.case == "ddp":
        text = f"one DDP gradient bucket {_b(value)}" if value else "DDP bucket not given: 0"
        return LedgerTerm("buffers", value, text, DDP_BUCKET_SOURCE)
    if buffer.case == "deepspeed":
        text = "the gathered largest layer is in params and grads (DeepSpeed ZeRO-3 estimator)"
        return LedgerTerm("buffers", value, text, DEEPSPEED_SOURCE)
    if buffer.case == "unknown":
        return LedgerTerm("buffers", value, "FSDP unit unknown: 0", FSDP_SOURCE)
    text = (
        f"FSDP: (1 + prefetch {spec.prefetch}) × {buffer.origin} {buffer.unit:,.0f} params × "
        f"{buffer.weight:g} B gathered + its unsharded gradient × {buffer.grad:g} B = {_b(value)}"
    )
    return LedgerTerm("buffers", value, text, FSDP_SOURCE)


def _b(value: float) -> str:
    return f"{value:,.0f} B"
