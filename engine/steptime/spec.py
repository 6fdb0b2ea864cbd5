"""One training configuration for step time (:class:`StepSpec`), its checks, and the result
(:class:`StepResult`) with its terms.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

from engine.activations import RECOMPUTE_CHOICES, Recompute
from engine.checks import (
    MAX_COUNT,
    MAX_PIPELINE_STAGES,
    finite_number,
    one_of,
    whole_number,
    zero_stage,
)
from engine.errors import FieldName, InputError
from engine.i18n import gettext as _
from engine.i18n import ngettext
from engine.model_presets import get_preset, resolve_shape
from engine.model_size import (
    SHAPE_FIELDS,
    ModelShape,
    ModelSize,
    ShapeFields,
    shape_from_fields,
    shape_param_count,
)
from engine.pipeline import SCHEDULES, Schedule
from engine.steptime.interconnects import INTERCONNECTS, Interconnect
from engine.units import format_bytes, format_flops, format_per_element, format_token_rate

PIPELINE_SOURCE = "engine.pipeline.simulate (bubble and exposed p2p from the schedule)"
ASSUMPTION = "assumption (no source gives a formula)"
DEFAULT_PEAK_FLOPS = 312e12
DEFAULT_COMPUTE_UTILIZATION = 0.5
DEFAULT_BUCKET_BYTES = 25 * 2**20


@dataclass(frozen=True)
class StepSpec(ShapeFields):
    """One training configuration on a device and an interconnect. Field names follow the
    ``shardbook calc step`` flags in snake_case.

    Give ``params`` (N), or the architecture ``layers``, ``hidden``, ``vocab`` (``ffn_hidden``
    defaults to 4h; ``heads`` is checked against TP); the architecture selects the
    ``korthikanti`` FLOPs convention, N alone ``6N``. ``seq`` is tokens per sample;
    ``global_batch`` samples per step (default ``micro_batch_size`` × DP). ``dp`` defaults to
    ``gpus`` / (TP·PP·CP), else 1. ``model`` names a preset (:mod:`engine.model_presets`) whose
    shape fills the shape fields left ``None`` (:data:`engine.model_size.SHAPE_FIELDS`).
    ``virtual_stages`` is v of the interleaved 1F1B schedule. ``experts`` MLPs per layer with
    ``top_k`` per token,
    ``capacity_factor`` and ``hot_expert_share`` (the hottest expert's share of the tokens;
    default 1/experts, balanced). ``peak_flops`` and ``achieved_flops`` are FLOP/s per GPU;
    ``compute_utilization`` is the share of peak the kernels reach while computing (not the
    step's ``mfu``, :class:`StepResult`). ``comm_bytes`` is
    bytes per communicated element (2 for bf16). ``input_rate`` (tokens/s per data-parallel
    replica; ``None`` = the loader keeps up) and ``straggler`` (σ, a fraction) are the labelled
    assumptions. ``tokens`` is the training set size for the time to train.
    """

    params: float | None = None
    seq: int = 2048
    global_batch: int | None = None
    micro_batch_size: int = 1
    dp: int | None = None
    tp: int = 1
    pp: int = 1
    cp: int = 1
    ep: int = 1
    zero_stage: int = 0
    gpus: int | None = None
    schedule: Schedule = "1f1b"
    capacity_factor: float = 1.25
    hot_expert_share: float | None = None
    peak_flops: float = DEFAULT_PEAK_FLOPS
    compute_utilization: float = DEFAULT_COMPUTE_UTILIZATION
    achieved_flops: float | None = None
    recompute: Recompute = "none"
    interconnect: Interconnect = field(default_factory=lambda: INTERCONNECTS["400gbps"])
    gpus_per_node: int = 8
    comm_bytes: float = 2.0
    bucket_bytes: float = float(DEFAULT_BUCKET_BYTES)
    input_rate: float | None = None
    straggler: float = 0.0
    tokens: float | None = None
    virtual_stages: int = 1


@dataclass(frozen=True)
class StepTerm:
    """One figure of the step: seconds (or FLOPs where ``name`` says so), formula and source."""

    name: str
    value: float
    formula: str
    source: str


@dataclass(frozen=True)
class CommTerm:
    """One collective of the step, summed over the step.

    Attributes:
        name: what it moves (``DP gradients``, ``TP activations``, ...).
        op: an operation of :data:`engine.collectives.OPERATIONS`.
        group: ranks taking part. link: ``intra`` or ``inter`` (node).
        bytes: S of one call, in the size convention of ``engine.collectives``.
        calls: calls per step on one rank.
        time_s: calls × the alpha-beta time of one call.
        hidden_share: the share of ``time_s`` overlapped with compute, 0..1.
        exposed_s: ``time_s`` × (1 − hidden_share), the time not overlapped with compute.
        formula, source: how the volume and the overlap were found.
    """

    name: str
    op: str
    group: int
    link: str
    bytes: float
    calls: int
    time_s: float
    hidden_share: float
    exposed_s: float
    formula: str
    source: str


@dataclass(frozen=True)
class MoeWait:
    """Expert load imbalance (Switch Transformer's capacity, ``sources.MOE_CAPACITY``).

    Attributes:
        hot_share: the hottest expert's share of routed tokens (1/E when balanced).
        load_ratio: its load over the mean, min(hot_share × E, capacity factor).
        dropped_share: the share of all routed tokens dropped because the hottest expert is
            over capacity (only it is modelled as over capacity).
        wait_s: (load_ratio − 1) × (expert MLP compute + all-to-all time): every rank waits
            for the one holding the busiest expert; 0 without expert parallelism (EP 1: every
            rank holds every expert, so none waits for another's).
    """

    hot_share: float
    load_ratio: float
    dropped_share: float
    wait_s: float


@dataclass(frozen=True)
class StepResult:
    """The step time of one configuration (seconds; FLOPs; tokens/s).

    Attributes:
        spec: the configuration, with defaults filled in (``dp``, ``global_batch``).
        world_size: DP·TP·PP·CP. num_microbatches: m per pipeline per step.
        tokens_per_step: global batch × seq.
        flops_convention: ``korthikanti`` or ``6N``.
        model_flops_per_step, hardware_flops_per_step: FLOPs (hardware counts recomputation).
        achieved_flops: X, FLOP/s per GPU while computing.
        t_compute_s: ideal compute + pipeline bubble. t_comm_s: all collectives' time.
        t_comm_exposed_s: the part not overlapped with compute (exposed). t_input_s,
            t_sync_wait_s: assumptions.
        t_step_s: the sum of the four. tokens_per_s: tokens_per_step / t_step_s.
        mfu: model FLOPs / (t_step × world × peak).
        comm: one :class:`CommTerm` per collective. moe: the imbalance wait, or ``None``.
        time_to_train_s: Narayanan et al. Eq. 4, when ``tokens`` is given.
        terms: every figure with its formula and source. notes: defaults and limits.
    """

    spec: StepSpec
    world_size: int
    num_microbatches: int
    tokens_per_step: float
    flops_convention: str
    model_flops_per_step: float
    hardware_flops_per_step: float
    achieved_flops: float
    t_compute_s: float
    t_comm_s: float
    t_comm_exposed_s: float
    t_input_s: float
    t_sync_wait_s: float
    t_step_s: float
    tokens_per_s: float
    mfu: float
    comm: tuple[CommTerm, ...]
    moe: MoeWait | None
    time_to_train_s: float | None
    terms: tuple[StepTerm, ...]
    notes: tuple[str, ...] = ()

    def as_dict(self) -> dict[str, Any]:
        """The JSON object of ``shardbook calc step --json``: seconds, FLOPs, bytes.
        ``t_comm_unhidden_s`` is the older name of ``t_comm_exposed_s``, kept for scripts."""
        data: dict[str, Any] = {
            "t_compute_s": self.t_compute_s,
            "t_comm_s": self.t_comm_s,
            "t_comm_unhidden_s": self.t_comm_exposed_s,
            "t_comm_exposed_s": self.t_comm_exposed_s,
            "t_input_s": self.t_input_s,
            "t_sync_wait_s": self.t_sync_wait_s,
            "t_step_s": self.t_step_s,
            "tokens_per_s": self.tokens_per_s,
            "mfu": self.mfu,
            "model_flops_per_step": self.model_flops_per_step,
            "comm": [
                {
                    "name": c.name,
                    "op": c.op,
                    "bytes": c.bytes,
                    "time_s": c.time_s,
                    "hidden_share": c.hidden_share,
                }
                for c in self.comm
            ],
        }
        if self.time_to_train_s is not None:
            data["time_to_train_s"] = self.time_to_train_s
        return data


_COUNTS: tuple[tuple[str, bool], ...] = (
    ("seq", False),
    ("global_batch", True),
    ("micro_batch_size", False),
    ("dp", True),
    ("tp", False),
    ("pp", False),
    ("cp", False),
    ("ep", False),
    ("gpus", True),
    ("gpus_per_node", False),
    ("virtual_stages", False),
)


def resolve_step_spec(spec: StepSpec) -> StepSpec:
    """``spec`` with its shape fields filled in from its ``model`` preset and the defaults
    (:func:`engine.model_presets.resolve_shape`); nothing else checked.

    Raises:
        InputError: an unknown model or an invalid shape field (named by its field).
    """
    if spec.model is not None and not isinstance(spec.model, str):
        raise InputError(
            "model", _("expected a preset name, got {model!r}").format(model=spec.model)
        )
    values = {name: getattr(spec, name) for name in SHAPE_FIELDS}
    return replace(spec, **resolve_shape(values, spec.model))


def check_step_spec(spec: StepSpec) -> tuple[StepSpec, list[str]]:
    """``spec`` checked, its shape resolved and its defaults filled in (``dp``,
    ``global_batch``), with notes on the defaults taken.

    Raises:
        InputError: as :func:`engine.steptime.step_time`.
    """
    notes: list[str] = []
    spec = resolve_step_spec(spec)
    changed: dict[str, Any] = {}
    for name, optional in _COUNTS:
        value = getattr(spec, name)
        if value is None and optional:
            continue
        limit = MAX_PIPELINE_STAGES if name == "pp" else MAX_COUNT
        changed[name] = whole_number(name, value, maximum=limit)
    spec = replace(spec, **changed)
    spec = replace(spec, zero_stage=zero_stage("zero_stage", spec.zero_stage))
    one_of("schedule", spec.schedule, SCHEDULES)
    one_of("recompute", spec.recompute, RECOMPUTE_CHOICES)
    finite_number("peak_flops", spec.peak_flops, maximum=1e18, written=format_flops)
    finite_number("compute_utilization", spec.compute_utilization, maximum=1.0)
    if spec.achieved_flops is not None:
        achieved = finite_number(
            "achieved_flops", spec.achieved_flops, maximum=1e18, written=format_flops
        )
        if achieved > spec.peak_flops:
            raise InputError("achieved_flops", _("exceeds the peak FLOP/s of the device"))
    finite_number("comm_bytes", spec.comm_bytes, maximum=16, written=format_per_element)
    finite_number("bucket_bytes", spec.bucket_bytes, written=format_bytes)
    finite_number("capacity_factor", spec.capacity_factor, maximum=1e6)
    finite_number("straggler", spec.straggler, allow_zero=True, maximum=100)
    if spec.input_rate is not None:
        finite_number("input_rate", spec.input_rate, written=format_token_rate)
    if spec.tokens is not None:
        finite_number("tokens", spec.tokens)
    model_parallel = spec.tp * spec.pp * spec.cp
    if spec.dp is None:
        if spec.gpus is not None:
            if spec.gpus % model_parallel:
                raise InputError(
                    "gpus",
                    ngettext(
                        "{gpus} GPU is not a multiple of TP·PP·CP = {model_parallel}",
                        "{gpus} GPUs are not a multiple of TP·PP·CP = {model_parallel}",
                        spec.gpus,
                    ).format(gpus=spec.gpus, model_parallel=model_parallel),
                )
            spec = replace(spec, dp=spec.gpus // model_parallel)
            notes.append(f"DP = GPUs / (TP·PP·CP) = {spec.dp}")
        else:
            spec = replace(spec, dp=1)
    elif spec.gpus is not None and spec.gpus != spec.dp * model_parallel:
        raise InputError(
            "gpus",
            ngettext(
                "{gpus} GPU but DP·TP·PP·CP = {value}",
                "{gpus} GPUs but DP·TP·PP·CP = {value}",
                spec.gpus,
            ).format(gpus=spec.gpus, value=spec.dp * model_parallel),
        )
    dp = spec.dp
    assert dp is not None
    if dp * model_parallel > MAX_COUNT:
        raise InputError("gpus", _("too many GPUs"))
    if spec.global_batch is None:
        spec = replace(spec, global_batch=spec.micro_batch_size * dp)
    assert spec.global_batch is not None
    per = spec.micro_batch_size * dp
    if spec.global_batch % per:
        raise InputError(
            "global_batch",
            _("{global_batch} is not a multiple of micro-batch × DP = {per}").format(
                global_batch=spec.global_batch, per=per
            ),
        )
    if spec.heads is not None and spec.heads % spec.tp:
        raise InputError(
            "tp", _("must divide {field} ({heads})"), field=FieldName("heads"), heads=spec.heads
        )
    if spec.kv_heads is not None and spec.kv_heads % spec.tp:
        raise InputError(
            "tp", _("must divide the key/value heads ({kv_heads})").format(kv_heads=spec.kv_heads)
        )
    if spec.layers is not None and spec.pp > spec.layers:
        raise InputError("pp", _("{pp} stages need at least {pp} layers").format(pp=spec.pp))
    if spec.seq % spec.cp:
        raise InputError(
            "cp", _("must divide {field} ({seq})"), field=FieldName("seq"), seq=spec.seq
        )
    if spec.model is not None:
        longest = get_preset(spec.model).max_seq
        if longest is not None and spec.seq > longest:
            raise InputError(
                "seq",
                _("{model} takes at most {longest} tokens per sequence").format(
                    model=spec.model, longest=longest
                ),
            )
    experts = spec.experts or 1
    if experts % spec.ep or spec.ep > experts:
        raise InputError(
            "ep", _("must divide the number of experts ({experts})").format(experts=experts)
        )
    if (dp * spec.cp) % spec.ep:
        raise InputError("ep", _("must divide DP·CP ({value})").format(value=dp * spec.cp))
    if spec.virtual_stages > 1:
        if spec.schedule != "interleaved-1f1b":
            raise InputError("virtual_stages", _("takes the interleaved-1f1b schedule"))
        if spec.pp == 1:
            raise InputError("virtual_stages", _("interleaving needs more than one pipeline stage"))
        if spec.layers is not None and spec.pp * spec.virtual_stages > spec.layers:
            chunks = spec.pp * spec.virtual_stages
            raise InputError(
                "virtual_stages",
                _("p·v = {chunks} chunks exceed {layers} layers").format(
                    chunks=chunks, layers=spec.layers
                ),
            )
    if spec.hot_expert_share is not None:
        share = finite_number("hot_expert_share", spec.hot_expert_share, maximum=1.0)
        if share < 1 / experts:
            raise InputError(
                "hot_expert_share",
                _("must be at least 1/experts = {value:g}").format(value=1 / experts),
            )
    return spec, notes


def _shape(spec: StepSpec) -> ModelShape | None:
    return shape_from_fields({name: getattr(spec, name) for name in SHAPE_FIELDS})


def model_size(spec: StepSpec) -> ModelSize | None:
    """The parameter counts of ``spec``'s architecture (:func:`shape_param_count`), or None when
    it gives N alone.

    Raises:
        InputError: an architecture that is not whole numbers (named by its field).
    """
    return _size(spec, _shape(spec))


def step_model(spec: StepSpec) -> tuple[ModelShape | None, ModelSize | None]:
    """The shape of a checked ``spec`` and its parameter counts (``None`` without the
    architecture)."""
    shape = _shape(spec)
    return shape, _size(spec, shape)


def _size(spec: StepSpec, shape: ModelShape | None) -> ModelSize | None:
    if shape is None or shape.vocab is None:
        return None
    return shape_param_count(shape, spec.seq)
