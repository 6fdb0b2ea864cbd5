"""Step time of one training configuration: T_step = T_compute + T_comm_unhidden + T_input +
T_sync_wait (lesson S15, 机制与推导), each term with its formula and source (seconds).

Compute. Hardware FLOPs per step follow one of two conventions, named in every result:

- ``korthikanti`` (the architecture is given): per layer and sample, forward
  ``2·s·(4h² + 2·h·f·k) + 4·s²·h`` (QKV and output projections, k MLPs of hidden size f, the
  attention scores and their product with V), logits ``2·s·h·V``; for any
  :class:`~engine.model_size.ModelShape` the projections are ``2·s·(h·(q + 2kv) + q·h)`` (GQA
  widths), each of the k routed and the shared MLPs ``2·s·m·h·f`` (m = 3 when gated) and the
  scores ``4·s²·q`` (the router's h·E per token, under 0.1 %, is left out); model FLOPs are
  three passes (forward, two backward), which for f = 4h and k = 1 is Korthikanti et al. 2022
  (arXiv:2205.05198) Eq. 7, ``72·B·L·s·h²·(1 + s/(6h) + V/(12·h·L))``. Selective recomputation
  adds ``12·B·L·s²·h`` (Eq. 8, ``72·B·L·s·h²·(1 + s/(3h) + V/(12·h·L))``); full recomputation
  runs each layer's forward twice: ``4·layers + 3·logits``, Narayanan et al. 2021
  (arXiv:2104.04473) Eq. 3, ``96·B·s·L·h²·(1 + s/(6h) + V/(16·L·h))``.
- ``6N`` (only the parameter count is given): 6·N FLOPs per token (Kaplan et al. 2020,
  arXiv:2001.08361 §2.1), 8·N with full recomputation (Narayanan et al. 2021 §5.1, Eq. 4).

The device runs those FLOPs at X = peak × utilization (or ``achieved_flops`` given directly),
so the ideal compute is H / (world × X); the pipeline bubble comes from
:func:`engine.pipeline.simulate` and is part of T_compute (idle time inside the compute
timeline). ``mfu`` in the result is the step's model FLOPs utilization, model FLOPs /
(T_step × world × peak), after every loss.

Communication. Volumes per step follow Rajbhandari et al. 2020 (ZeRO, arXiv:1910.02054) §7 (DP and
ZeRO-1/2 2Ψ, ZeRO-3 3Ψ) and Narayanan et al. 2021 §3.2 (PP b·s·h per micro-batch, TP
8·b·s·h·(t−1)/t per layer per micro-batch); EP and CP volumes are those of
:mod:`engine.strategies`. Each collective is costed with :func:`engine.collectives.collective_cost`
on the link its group spans: ranks are numbered TP fastest, then CP, DP and PP (Megatron-LM's
order), and a group whose span exceeds ``gpus_per_node`` runs at the inter-node bandwidth (its
slowest ring link). The hidden share depends on the strategy:

- DDP and ZeRO-1/2 gradient reduction: buckets overlap the last micro-batch's backward (PyTorch
  DistributedDataParallel; gradient accumulation syncs once); the last bucket cannot overlap.
  Exposed = max(t_bucket, t − window). ZeRO-1/2's parameter all-gather after the optimizer step
  is exposed.
- ZeRO-3/FSDP: every micro-batch gathers the parameters in forward and backward and
  reduce-scatters gradients (Zhao et al. 2023, PyTorch FSDP §3); prefetch hides them behind the
  compute except the first unit of each pass: exposed = max(m·t_unit, t − window).
- TP and EP all-to-all sit on the critical path: nothing is hidden (Narayanan et al. 2021 §3.2).
- PP: the schedule is simulated with and without the stage-to-stage transfer time; the exposed
  share is the difference in iteration time.
- CP: the ring exchange of keys and values overlaps the attention computation (Liu et al. 2023,
  Ring Attention): hidden up to the attention core's compute time.

T_input and T_sync_wait have no formula in any source: they are assumptions, labelled as such.
T_input: the loader prefetches the next batch during the step, so only its excess is exposed:
max(0, tokens per replica / input rate − rest of the step). T_sync_wait: with a straggler
spread σ the slowest rank computes (1 + σ) times the mean and every synchronizing collective
waits for it: σ·T_compute; plus, for MoE, the wait for the most loaded expert (see
:class:`MoeWait`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Any

from engine import sources
from engine.checks import MAX_COUNT, finite_number, one_of, whole_number
from engine.collectives import collective_cost
from engine.errors import InputError
from engine.model_presets import get_preset, resolve_shape
from engine.model_size import (
    SHAPE_FIELDS,
    ModelShape,
    ModelSize,
    shape_from_fields,
    shape_param_count,
)
from engine.pipeline import SCHEDULES, PipelineSpec
from engine.pipeline import simulate as simulate_pipeline

PIPELINE_SOURCE = "engine.pipeline.simulate (bubble and exposed p2p from the schedule)"
ASSUMPTION = "assumption (no source gives a formula)"

RECOMPUTE_CHOICES: tuple[str, ...] = ("none", "selective", "full")
FLOPS_CONVENTIONS: tuple[str, ...] = ("korthikanti", "6N")
DEFAULT_PEAK_FLOPS = 312e12
DEFAULT_UTILIZATION = 0.5
DEFAULT_BUCKET_BYTES = 25 * 2**20


@dataclass(frozen=True)
class Interconnect:
    """The links between GPUs.

    Attributes:
        name: a key of :data:`INTERCONNECTS`, or ``custom``.
        label: what a screen shows.
        intra_bandwidth: bytes/s of one GPU's link to a GPU in its node (one direction).
        inter_bandwidth: bytes/s of one GPU's link to another node (one direction).
        latency: alpha, seconds per message, on either link.
        source: where the figures come from.
    """

    name: str
    label: str
    intra_bandwidth: float
    inter_bandwidth: float
    latency: float
    source: str


_NVLINK = 450e9
INTERCONNECTS: dict[str, Interconnect] = {
    "nvlink": Interconnect(
        "nvlink",
        "NVLink-class everywhere (450 GB/s)",
        _NVLINK,
        _NVLINK,
        3e-6,
        "NVIDIA H100 SXM: NVLink 4, 900 GB/s bidirectional = 450 GB/s per direction; "
        "one NVLink domain spans the nodes",
    ),
    "400gbps": Interconnect(
        "400gbps",
        "NVLink in node, 400 Gb/s network (50 GB/s)",
        _NVLINK,
        50e9,
        5e-6,
        "400 Gb/s InfiniBand NDR, one NIC per GPU (DGX H100) = 50 GB/s",
    ),
    "pcie": Interconnect(
        "pcie",
        "PCIe-class in node (32 GB/s), 100 Gb/s network",
        32e9,
        12.5e9,
        10e-6,
        "PCIe 4.0 x16: 32 GB/s per direction; 100 Gb/s NIC = 12.5 GB/s",
    ),
    "100gbps": Interconnect(
        "100gbps",
        "NVLink in node, 100 Gb/s network (12.5 GB/s)",
        _NVLINK,
        12.5e9,
        10e-6,
        "100 Gb/s Ethernet/InfiniBand EDR, one NIC per GPU = 12.5 GB/s",
    ),
}
"""Interconnect presets by name, fastest inter-node link first."""


def custom_interconnect(
    base: Interconnect,
    *,
    intra_bandwidth: float | None = None,
    inter_bandwidth: float | None = None,
    latency: float | None = None,
) -> Interconnect:
    """``base`` with the given figures replaced, named ``custom``.

    Raises:
        InputError: a bandwidth that is zero, negative or not finite (``intra_bandwidth``,
            ``inter_bandwidth``), or a negative latency (``latency``).
    """
    intra = finite_number(
        "intra_bandwidth", base.intra_bandwidth if intra_bandwidth is None else intra_bandwidth
    )
    inter = finite_number(
        "inter_bandwidth", base.inter_bandwidth if inter_bandwidth is None else inter_bandwidth
    )
    alpha = finite_number(
        "latency", base.latency if latency is None else latency, allow_zero=True, maximum=1.0
    )
    label = f"custom: {intra / 1e9:.4g} GB/s in node, {inter / 1e9:.4g} GB/s between nodes"
    return Interconnect("custom", label, intra, inter, alpha, "given")


def get_interconnect(name: str) -> Interconnect:
    """The preset called ``name``.

    Raises:
        InputError: unknown name (field ``interconnect``), listing the presets.
    """
    if name not in INTERCONNECTS:
        known = ", ".join(INTERCONNECTS)
        raise InputError("interconnect", f"unknown interconnect {name!r}; use one of {known}")
    return INTERCONNECTS[name]


@dataclass(frozen=True)
class StepSpec:
    """One training configuration on a device and an interconnect. Field names follow the
    ``shardbook calc step`` flags in snake_case.

    Give ``params`` (N), or the architecture ``layers``, ``hidden``, ``vocab`` (``ffn_hidden``
    defaults to 4h; ``heads`` is checked against TP); the architecture selects the
    ``korthikanti`` FLOPs convention, N alone ``6N``. ``seq`` is tokens per sample;
    ``global_batch`` samples per step (default ``micro_batch`` × DP). ``dp`` defaults to
    ``gpus`` / (TP·PP·CP), else 1. ``model`` names a preset (:mod:`engine.model_presets`) whose
    shape fills the shape fields left ``None`` (:data:`engine.model_size.SHAPE_FIELDS`).
    ``virtual_stages`` is v of the interleaved 1F1B schedule. ``experts`` MLPs per layer with
    ``top_k`` per token,
    ``capacity_factor`` and ``hot_expert_share`` (the hottest expert's share of the tokens;
    default 1/experts, balanced). ``peak_flops`` and ``achieved_flops`` are FLOP/s per GPU;
    ``utilization`` is the share of peak the kernels reach while computing. ``comm_bytes`` is
    bytes per communicated element (2 for bf16). ``input_rate`` (tokens/s per data-parallel
    replica; ``None`` = the loader keeps up) and ``straggler`` (σ, a fraction) are the labelled
    assumptions. ``tokens`` is the training set size for the time to train.
    """

    params: float | None = None
    layers: int | None = None
    hidden: int | None = None
    heads: int | None = None
    ffn_hidden: int | None = None
    vocab: int | None = None
    seq: int = 2048
    global_batch: int | None = None
    micro_batch: int = 1
    dp: int | None = None
    tp: int = 1
    pp: int = 1
    cp: int = 1
    ep: int = 1
    zero: int = 0
    gpus: int | None = None
    schedule: str = "1f1b"
    experts: int | None = None
    top_k: int | None = None
    capacity_factor: float = 1.25
    hot_expert_share: float | None = None
    peak_flops: float = DEFAULT_PEAK_FLOPS
    utilization: float = DEFAULT_UTILIZATION
    achieved_flops: float | None = None
    recompute: str = "none"
    interconnect: Interconnect = field(default_factory=lambda: INTERCONNECTS["400gbps"])
    gpus_per_node: int = 8
    comm_bytes: float = 2.0
    bucket_bytes: float = float(DEFAULT_BUCKET_BYTES)
    input_rate: float | None = None
    straggler: float = 0.0
    tokens: float | None = None
    virtual_stages: int = 1
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
    shared_experts: int | None = None
    expert_ffn_hidden: int | None = None
    attention: str | None = None


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
        unhidden_s: ``time_s`` × (1 − hidden_share).
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
    unhidden_s: float
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
        world_size: DP·TP·PP·CP. micro_batches: m per pipeline per step.
        tokens_per_step: global batch × seq.
        flops_convention: ``korthikanti`` or ``6N``.
        model_flops_per_step, hardware_flops_per_step: FLOPs (hardware counts recomputation).
        achieved_flops: X, FLOP/s per GPU while computing.
        t_compute_s: ideal compute + pipeline bubble. t_comm_s: all collectives' time.
        t_comm_unhidden_s: the part not overlapped. t_input_s, t_sync_wait_s: assumptions.
        t_step_s: the sum of the four. tokens_per_s: tokens_per_step / t_step_s.
        mfu: model FLOPs / (t_step × world × peak).
        comm: one :class:`CommTerm` per collective. moe: the imbalance wait, or ``None``.
        time_to_train_s: Narayanan et al. Eq. 4, when ``tokens`` is given.
        terms: every figure with its formula and source. notes: defaults and limits.
    """

    spec: StepSpec
    world_size: int
    micro_batches: int
    tokens_per_step: float
    flops_convention: str
    model_flops_per_step: float
    hardware_flops_per_step: float
    achieved_flops: float
    t_compute_s: float
    t_comm_s: float
    t_comm_unhidden_s: float
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
        """The JSON object of ``shardbook calc step --json`` (issue 6): seconds, FLOPs, bytes."""
        data: dict[str, Any] = {
            "t_compute_s": self.t_compute_s,
            "t_comm_s": self.t_comm_s,
            "t_comm_unhidden_s": self.t_comm_unhidden_s,
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


# ---------------------------------------------------------------------------------- FLOPs


@dataclass(frozen=True)
class Flops:
    """FLOPs of one step: model (no recomputation) and hardware (with it), and the formulas."""

    convention: str
    model: float
    hardware: float
    attention_core: float
    mlp: float
    model_formula: str
    hardware_formula: str
    source: str


def korthikanti_flops(
    *,
    batch: float,
    layers: int,
    seq: int,
    hidden: int,
    vocab: int,
    ffn_hidden: int | None = None,
    top_k: int = 1,
    recompute: str = "none",
    shape: ModelShape | None = None,
) -> Flops:
    """FLOPs of one step of ``batch`` samples (module docstring: Eq. 7, Eq. 8, Eq. 3).

    ``shape`` (its layers, hidden size and vocabulary must be ``layers``, ``hidden``, ``vocab``)
    gives the GQA widths, the MLP kind, the experts and the padded vocabulary; ``None`` is the
    GPT layer of Eq. 7 with MLP size ``ffn_hidden`` and ``top_k`` MLPs per token.

    Returns:
        :class:`Flops`; ``attention_core`` and ``mlp`` are the model FLOPs of the attention
        scores and of the MLPs (for overlap and MoE load).

    Raises:
        InputError: a size that is not a whole number >= 1, or an unknown ``recompute``.
    """
    b = finite_number("global_batch", batch)
    L = whole_number("layers", layers)
    s = float(whole_number("seq", seq))
    h = float(whole_number("hidden", hidden))
    V = float(whole_number("vocab", vocab))
    f = 4 * h if ffn_hidden is None else float(whole_number("ffn_hidden", ffn_hidden))
    k = whole_number("top_k", top_k)
    one_of("recompute", recompute, RECOMPUTE_CHOICES)
    projections = 2 * b * s * 4 * h * h
    attention = 4 * b * s * s * h
    mlp = 2 * b * s * 2 * h * f * k
    shared = 0.0
    generalized = shape is not None and (
        shape.q_width != shape.hidden
        or shape.kv_width != shape.hidden
        or shape.mlp != "gelu"
        or shape.shared_experts
        or shape.padded_vocab != shape.vocab
    )
    if shape is not None:
        q, kv, m = float(shape.q_width), float(shape.kv_width), shape.mlp_matrices
        f = float(shape.expert_ffn if shape.experts > 1 else shape.ffn)
        k = shape.top_k if shape.experts > 1 else 1
        V = float(shape.padded_vocab)
        projections = 2 * b * s * (h * (q + 2 * kv) + q * h)
        attention = 4 * b * s * s * q
        mlp = 2 * b * s * m * h * f * k
        shared = 2 * b * s * m * h * f * shape.shared_experts
    layer = projections + mlp + shared + attention
    logits = 2 * b * s * h * V
    model = 3 * (L * layer + logits)
    eq7 = f"72·B·L·s·h²·(1 + s/(6h) + V/(12·h·L)) = 72·{b:g}·{L}·{s:g}·{h:g}²·(...)"
    if generalized:
        assert shape is not None
        eq7 = (
            f"3·(L·(2Bs(h·(q + 2kv) + q·h + {shape.mlp_matrices}·h·f·(k + shared)) + 4Bs²q) + "
            f"2BshV), q={shape.q_width:g}, kv={shape.kv_width:g}, f={f:g}, k={k} (Eq. 7 "
            "generalized)"
        )
    elif f != 4 * h or k != 1:
        eq7 = f"3·(L·(2Bs(4h² + 2·h·f·k) + 4Bs²h) + 2BshV), f={f:g}, k={k} (Eq. 7 generalized)"
    if recompute == "selective":
        # Eq. 8 adds 12·B·L·s²·h, three times the attention core's forward (q in place of h).
        hardware = model + 3 * L * attention
        hw_formula = "72·B·L·s·h²·(1 + s/(3h) + V/(12·h·L)) = Eq. 7 + 12·B·L·s²·h"
        source = f"{sources.MODEL_FLOPS_EQ7}; {sources.SELECTIVE_RECOMPUTE_FLOPS_EQ8}"
    elif recompute == "full":
        hardware = 4 * L * layer + 3 * logits
        hw_formula = "96·B·s·L·h²·(1 + s/(6h) + V/(16·L·h)) = 4·layers + 3·logits"
        source = f"{sources.MODEL_FLOPS_EQ7}; {sources.FULL_RECOMPUTE_FLOPS_EQ3}"
    else:
        hardware = model
        hw_formula = "= model FLOPs (no recomputation)"
        source = sources.MODEL_FLOPS_EQ7
    return Flops(
        "korthikanti",
        model,
        hardware,
        3 * L * attention,
        3 * L * mlp,
        f"{eq7} = {model:.6g}",
        f"{hw_formula} = {hardware:.6g}",
        source,
    )


def six_n_flops(params: float, tokens: float, recompute: str = "none") -> Flops:
    """6·N FLOPs per token (8·N with full recomputation); selective recomputation's extra
    attention FLOPs need the architecture and count 0 here (said in the formula).

    Raises:
        InputError: ``params`` or ``tokens`` not a finite number > 0; unknown ``recompute``.
    """
    n = finite_number("params", params)
    t = finite_number("tokens", tokens)
    one_of("recompute", recompute, RECOMPUTE_CHOICES)
    model = 6 * n * t
    hardware = 8 * n * t if recompute == "full" else model
    hw_formula = {
        "none": "= model FLOPs",
        "selective": "= model FLOPs (its attention recompute needs the architecture: 0 here)",
        "full": f"8·N·tokens = {hardware:.6g}",
    }[recompute]
    source = (
        sources.SIX_N_FLOPS
        if recompute != "full"
        else f"{sources.SIX_N_FLOPS}; {sources.TIME_TO_TRAIN_EQ4}"
    )
    return Flops(
        "6N",
        model,
        hardware,
        0.0,
        model * 2 / 3,
        f"6·N·tokens = 6·{n:.6g}·{t:.6g} = {model:.6g}",
        hw_formula,
        source,
    )


def time_to_train(
    tokens: float, params: float, gpus: int, achieved_flops: float, recompute: str
) -> StepTerm:
    """Narayanan et al. 2021 Eq. 4: 8·T·P/(n·X) with (full) recomputation, 6·T·P/(n·X)
    without (T tokens, P parameters, n GPUs, X achieved FLOP/s per GPU). Seconds.

    Raises:
        InputError: any argument not a finite number > 0 (``tokens``, ``params``, ``gpus``,
            ``achieved_flops``), or an unknown ``recompute``.
    """
    t = finite_number("tokens", tokens)
    p = finite_number("params", params)
    n = whole_number("gpus", gpus)
    x = finite_number("achieved_flops", achieved_flops)
    one_of("recompute", recompute, RECOMPUTE_CHOICES)
    c = 8 if recompute == "full" else 6
    seconds = c * t * p / (n * x)
    note = "" if recompute != "selective" else " (selective recompute: Eq. 4's 8 is for full)"
    return StepTerm(
        "time to train",
        seconds,
        f"{c}·T·P/(n·X) = {c}·{t:.4g}·{p:.4g}/({n}·{x:.4g}) = {seconds:.6g} s{note}",
        sources.TIME_TO_TRAIN_EQ4,
    )


# ---------------------------------------------------------------------------------- checks

_COUNTS: tuple[tuple[str, bool], ...] = (
    ("seq", False),
    ("global_batch", True),
    ("micro_batch", False),
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
        raise InputError("model", f"expected a preset name, got {spec.model!r}")
    values = {name: getattr(spec, name) for name in SHAPE_FIELDS}
    return replace(spec, **resolve_shape(values, spec.model))


def _checked(spec: StepSpec) -> tuple[StepSpec, list[str]]:
    notes: list[str] = []
    spec = resolve_step_spec(spec)
    changed: dict[str, Any] = {}
    for name, optional in _COUNTS:
        value = getattr(spec, name)
        if value is None and optional:
            continue
        changed[name] = whole_number(name, value)
    spec = replace(spec, **changed)
    if isinstance(spec.zero, bool) or spec.zero not in (0, 1, 2, 3):
        raise InputError("zero", f"must be 0, 1, 2 or 3 (3 = FSDP), got {spec.zero!r}")
    one_of("schedule", spec.schedule, SCHEDULES)
    one_of("recompute", spec.recompute, RECOMPUTE_CHOICES)
    finite_number("peak_flops", spec.peak_flops, maximum=1e18)
    utilization = finite_number("utilization", spec.utilization, maximum=1.0)
    if spec.achieved_flops is not None:
        achieved = finite_number("achieved_flops", spec.achieved_flops, maximum=1e18)
        if achieved > spec.peak_flops:
            raise InputError("achieved_flops", "exceeds the peak FLOP/s of the device")
    del utilization
    finite_number("comm_bytes", spec.comm_bytes, maximum=16)
    finite_number("bucket_bytes", spec.bucket_bytes)
    finite_number("capacity_factor", spec.capacity_factor, maximum=1e6)
    finite_number("straggler", spec.straggler, allow_zero=True, maximum=100)
    if spec.input_rate is not None:
        finite_number("input_rate", spec.input_rate)
    if spec.tokens is not None:
        finite_number("tokens", spec.tokens)
    model_parallel = spec.tp * spec.pp * spec.cp
    if spec.dp is None:
        if spec.gpus is not None:
            if spec.gpus % model_parallel:
                raise InputError(
                    "gpus", f"{spec.gpus} GPUs are not a multiple of TP·PP·CP = {model_parallel}"
                )
            spec = replace(spec, dp=spec.gpus // model_parallel)
            notes.append(f"DP = GPUs / (TP·PP·CP) = {spec.dp}")
        else:
            spec = replace(spec, dp=1)
    elif spec.gpus is not None and spec.gpus != spec.dp * model_parallel:
        raise InputError("gpus", f"{spec.gpus} GPUs but DP·TP·PP·CP = {spec.dp * model_parallel}")
    dp = spec.dp
    assert dp is not None
    if dp * model_parallel > MAX_COUNT:
        raise InputError("gpus", "too many GPUs")
    if spec.global_batch is None:
        spec = replace(spec, global_batch=spec.micro_batch * dp)
    assert spec.global_batch is not None
    per = spec.micro_batch * dp
    if spec.global_batch % per:
        raise InputError(
            "global_batch",
            f"{spec.global_batch} is not a multiple of micro-batch × DP = {per}",
        )
    if spec.heads is not None and spec.heads % spec.tp:
        raise InputError("tp", f"must divide heads ({spec.heads})")
    if spec.kv_heads is not None and spec.kv_heads % spec.tp:
        raise InputError("tp", f"must divide the key/value heads ({spec.kv_heads})")
    if spec.layers is not None and spec.pp > spec.layers:
        raise InputError("pp", f"{spec.pp} stages need at least {spec.pp} layers")
    if spec.seq % spec.cp:
        raise InputError("cp", f"must divide seq ({spec.seq})")
    if spec.model is not None:
        longest = get_preset(spec.model).max_seq
        if longest is not None and spec.seq > longest:
            raise InputError("seq", f"{spec.model} takes at most {longest} tokens per sequence")
    experts = spec.experts or 1
    if experts % spec.ep or spec.ep > experts:
        raise InputError("ep", f"must divide the number of experts ({experts})")
    if (dp * spec.cp) % spec.ep:
        raise InputError("ep", f"must divide DP·CP ({dp * spec.cp})")
    if spec.virtual_stages > 1:
        if spec.schedule != "interleaved-1f1b":
            raise InputError("virtual_stages", "takes the interleaved-1f1b schedule")
        if spec.pp == 1:
            raise InputError("virtual_stages", "interleaving needs more than one pipeline stage")
        if spec.layers is not None and spec.pp * spec.virtual_stages > spec.layers:
            chunks = spec.pp * spec.virtual_stages
            raise InputError("virtual_stages", f"p·v = {chunks} chunks exceed {spec.layers} layers")
    if spec.hot_expert_share is not None:
        share = finite_number("hot_expert_share", spec.hot_expert_share, maximum=1.0)
        if share < 1 / experts:
            raise InputError("hot_expert_share", f"must be at least 1/experts = {1 / experts:g}")
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


def _size(spec: StepSpec, shape: ModelShape | None) -> ModelSize | None:
    if shape is None or shape.vocab is None:
        return None
    return shape_param_count(shape, spec.seq)


# ---------------------------------------------------------------------------------- the step


def step_time(spec: StepSpec) -> StepResult:
    """T_step of ``spec`` and every term behind it (module docstring: formulas and sources).

    Returns:
        A :class:`StepResult`; every time finite and >= 0, T_step > 0.

    Raises:
        InputError: naming the spec field: a size that is not a whole number >= 1 (or too large),
            a rate or share that is zero, negative, NaN or infinite, an unknown schedule or
            recompute mode, a ZeRO stage outside 0-3, TP not dividing heads, PP above layers,
            CP not dividing seq, EP not dividing the experts or DP·CP, ``gpus`` disagreeing with
            DP·TP·PP·CP, a global batch not a multiple of micro-batch × DP, neither ``params``
            nor the architecture, MoE without the architecture, ``achieved_flops`` above peak;
            an unknown model or invalid shape field, TP not dividing the key/value heads, a
            sequence beyond the preset's, virtual stages without ``interleaved-1f1b`` or without
            pipeline stages.
    """
    spec, notes = _checked(spec)
    assert spec.dp is not None and spec.global_batch is not None
    assert spec.experts is not None and spec.top_k is not None
    shape = _shape(spec)
    size = _size(spec, shape)
    if spec.params is None and size is None:
        missing = next(n for n in ("layers", "hidden", "vocab") if getattr(spec, n) is None)
        raise InputError(
            "params", f"give the parameter count, or the architecture ({missing} is missing)"
        )
    if spec.experts > 1 and size is None:
        raise InputError("experts", "MoE step time needs the architecture (layers, hidden, vocab)")
    params = size.total if size is not None else finite_number("params", spec.params)
    if size is not None and spec.params is not None:
        notes.append("the architecture sets N; --params is not used")
    world = spec.dp * spec.tp * spec.pp * spec.cp
    m = spec.global_batch // (spec.micro_batch * spec.dp)
    tokens_per_step = float(spec.global_batch * spec.seq)
    terms: list[StepTerm] = []

    # Compute.
    if size is not None:
        assert spec.layers is not None and spec.hidden is not None and spec.vocab is not None
        flops = korthikanti_flops(
            batch=spec.global_batch,
            layers=spec.layers,
            seq=spec.seq,
            hidden=spec.hidden,
            vocab=spec.vocab,
            ffn_hidden=spec.ffn_hidden,
            top_k=spec.top_k,
            recompute=spec.recompute,
            shape=shape,
        )
    else:
        flops = six_n_flops(params, tokens_per_step, spec.recompute)
    if spec.achieved_flops is not None:
        x = spec.achieved_flops
        x_text = f"X = {x:.4g} FLOP/s (given)"
    else:
        x = spec.peak_flops * spec.utilization
        x_text = (
            f"X = peak {spec.peak_flops:.4g} × utilization {spec.utilization:g} = {x:.4g} FLOP/s"
        )
    terms.append(StepTerm("model FLOPs per step", flops.model, flops.model_formula, flops.source))
    terms.append(
        StepTerm("hardware FLOPs per step", flops.hardware, flops.hardware_formula, flops.source)
    )
    ideal = flops.hardware / (world * x)
    terms.append(
        StepTerm(
            "ideal compute",
            ideal,
            f"hardware FLOPs / (world {world} × X); {x_text}",
            f"{flops.source}; {sources.A100_PEAK}",
        )
    )
    c_mb = ideal / m
    # Forward share of one micro-batch's hardware time: one of three model passes.
    t_f = c_mb * (flops.model / flops.hardware) / 3
    t_bw = (c_mb - t_f) / 2
    bubble = 0.0
    pipe_spec: PipelineSpec | None = None
    if spec.pp > 1:
        pipe_spec = PipelineSpec(
            schedule=spec.schedule,
            stages=spec.pp,
            micro_batches=m,
            virtual_stages=spec.virtual_stages,
            t_forward=t_f,
            t_backward_input=t_bw,
            t_backward_weight=t_bw,
        )
        piped = simulate_pipeline(pipe_spec)
        bubble = max(0.0, piped.iteration_time - ideal)
        terms.append(
            StepTerm(
                "pipeline bubble",
                bubble,
                f"{spec.schedule}, p={spec.pp}, m={m}"
                + (f", v={spec.virtual_stages}" if spec.virtual_stages > 1 else "")
                + ": simulated bubble/ideal "
                f"{piped.bubble_over_ideal:.4g} (closed form {piped.closed_form.formula})",
                f"{PIPELINE_SOURCE}; {piped.closed_form.source}",
            )
        )
    t_compute = ideal + bubble

    # Communication.
    comm: list[CommTerm] = []
    comm.extend(_data_parallel(spec, params, size, m, c_mb, t_f, t_bw))
    comm.extend(_tensor_parallel(spec, m))
    comm.extend(_context_parallel(spec, m, flops, world, x))
    comm.extend(_expert_parallel(spec, m))
    if spec.pp > 1 and pipe_spec is not None:
        comm.append(_pipeline_p2p(spec, m, pipe_spec, t_compute))
    t_comm = sum(c.time_s for c in comm)
    t_unhidden = sum(c.unhidden_s for c in comm)

    # Waits (assumptions) and MoE imbalance.
    moe = _moe_wait(spec, size, flops, world, x, comm)
    straggle = spec.straggler * t_compute if world > 1 else 0.0
    terms.append(
        StepTerm(
            "straggler wait",
            straggle,
            f"σ {spec.straggler:g} × T_compute (slowest rank computes (1+σ)× the mean)"
            + ("" if world > 1 else "; one rank: nobody waits"),
            ASSUMPTION,
        )
    )
    t_sync = straggle + (moe.wait_s if moe is not None else 0.0)
    if moe is not None:
        terms.append(_moe_term(spec, moe))
    rest = t_compute + t_unhidden + t_sync
    if spec.input_rate is None:
        t_input = 0.0
        terms.append(
            StepTerm(
                "input", 0.0, "no input rate given: the loader is assumed to keep up", ASSUMPTION
            )
        )
    else:
        per_replica = tokens_per_step / spec.dp
        load = per_replica / spec.input_rate
        t_input = max(0.0, load - rest)
        terms.append(
            StepTerm(
                "input",
                t_input,
                f"max(0, {per_replica:.6g} tokens per replica / {spec.input_rate:.4g} tokens/s "
                f"- rest of step {rest:.4g} s): the next batch loads during the step",
                ASSUMPTION,
            )
        )
    t_step = rest + t_input
    tokens_per_s = tokens_per_step / t_step
    mfu = flops.model / (t_step * world * spec.peak_flops)
    terms.append(
        StepTerm(
            "MFU",
            mfu,
            f"model FLOPs / (T_step {t_step:.4g} s × world {world} × peak {spec.peak_flops:.4g})",
            sources.MFU,
        )
    )
    train: float | None = None
    if spec.tokens is not None:
        active = params
        if size is not None and size.experts > 1:
            active = params - size.layers * (size.experts - spec.top_k) * size.layer_mlp
            notes.append("time to train uses the active parameters per token (k experts)")
        term = time_to_train(spec.tokens, active, world, x, spec.recompute)
        terms.append(term)
        train = term.value
        by_step = spec.tokens / tokens_per_s
        terms.append(
            StepTerm(
                "time to train from T_step",
                by_step,
                f"T / tokens per second = {spec.tokens:.4g} / {tokens_per_s:.4g} (counts "
                "communication, bubble and waits, which Eq. 4 leaves out)",
                "this model",
            )
        )
    if size is not None:
        notes.append(f"N from the architecture: {sources.PARAM_COUNT}")
    return StepResult(
        spec=spec,
        world_size=world,
        micro_batches=m,
        tokens_per_step=tokens_per_step,
        flops_convention=flops.convention,
        model_flops_per_step=flops.model,
        hardware_flops_per_step=flops.hardware,
        achieved_flops=x,
        t_compute_s=t_compute,
        t_comm_s=t_comm,
        t_comm_unhidden_s=t_unhidden,
        t_input_s=t_input,
        t_sync_wait_s=t_sync,
        t_step_s=t_step,
        tokens_per_s=tokens_per_s,
        mfu=mfu,
        comm=tuple(comm),
        moe=moe,
        time_to_train_s=train,
        terms=tuple(terms),
        notes=tuple(notes),
    )


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
    c_mb: float,
    t_f: float,
    t_bw: float,
) -> list[CommTerm]:
    assert spec.dp is not None
    n = spec.dp * spec.cp
    if n < 2:
        return []
    psi = _shard_params(spec, params, size)
    s_bytes = psi * spec.comm_bytes
    span = spec.tp * spec.cp * spec.dp
    backward = 2 * t_bw
    w = spec.comm_bytes
    if spec.zero == 0:
        time_s, link = _cost(spec, "all-reduce", n, s_bytes, span)
        bucket = min(spec.bucket_bytes, s_bytes)
        t_bucket, _ = _cost(spec, "all-reduce", n, bucket, span)
        exposed = max(t_bucket, time_s - backward)
        return [
            _term(
                "DP gradients",
                "all-reduce",
                n,
                link,
                s_bytes,
                1,
                time_s,
                exposed,
                f"all-reduce of Ψ {psi:.4g} × {w:g} B (2Ψ on the wire); exposed = max(last "
                f"bucket {t_bucket:.3g} s, t − last micro-batch backward {backward:.3g} s)",
                f"{sources.ZERO_COMMUNICATION}; {sources.DDP_OVERLAP}",
            )
        ]
    if spec.zero in (1, 2):
        t_rs, link = _cost(spec, "reduce-scatter", n, s_bytes, span)
        bucket = min(spec.bucket_bytes, s_bytes)
        t_bucket, _ = _cost(spec, "reduce-scatter", n, bucket, span)
        t_ag, _ = _cost(spec, "all-gather", n, s_bytes, span)
        return [
            _term(
                "ZeRO gradients",
                "reduce-scatter",
                n,
                link,
                s_bytes,
                1,
                t_rs,
                max(t_bucket, t_rs - backward),
                f"reduce-scatter of Ψ {psi:.4g} × {w:g} B, bucketed during the last backward",
                f"{sources.ZERO_COMMUNICATION}; {sources.DDP_OVERLAP}",
            ),
            _term(
                "ZeRO parameters",
                "all-gather",
                n,
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
    t_ag, link = _cost(spec, "all-gather", n, s_bytes, span)
    t_rs, _ = _cost(spec, "reduce-scatter", n, s_bytes, span)
    t_unit, _ = _cost(spec, "all-gather", n, unit, span)
    forward_window = m * t_f
    backward_window = m * 2 * t_bw
    fwd_exposed = max(m * t_unit, m * t_ag - forward_window)
    bwd_exposed = max(m * t_unit, m * (t_ag + t_rs) - backward_window)
    unit_text = f"one layer of {layers}" if spec.layers else "whole model (give layers for units)"
    del c_mb
    return [
        _term(
            "FSDP forward gather",
            "all-gather",
            n,
            link,
            s_bytes,
            m,
            m * t_ag,
            fwd_exposed,
            f"m {m} × all-gather of Ψ {psi:.4g} × {w:g} B; exposed = max(m × first unit "
            f"({unit_text}), t − forward compute)",
            f"{sources.ZERO_COMMUNICATION} (3Ψ per micro-batch); {sources.FSDP_PREFETCH}",
        ),
        _term(
            "FSDP backward gather + gradients",
            "reduce-scatter",
            n,
            link,
            s_bytes,
            2 * m,
            m * (t_ag + t_rs),
            bwd_exposed,
            f"m {m} × (all-gather + reduce-scatter of Ψ × {w:g} B); exposed = max(m × first "
            "unit, t − backward compute)",
            f"{sources.ZERO_COMMUNICATION}; {sources.FSDP_PREFETCH}",
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
        raise InputError("layers", "TP communication needs the architecture (layers, hidden)")
    s_local = spec.seq // spec.cp
    size = spec.micro_batch * s_local * spec.hidden * spec.comm_bytes
    per_layer = 6 if spec.recompute == "full" else 4
    layers = _layers_per_stage(spec)
    calls = per_layer * layers * m
    one, link = _cost(spec, "all-reduce", spec.tp, size, spec.tp)
    return [
        _term(
            "TP activations",
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
        raise InputError("layers", "CP communication needs the architecture (layers, hidden)")
    layers = _layers_per_stage(spec)
    size = 2 * spec.micro_batch * spec.seq * spec.hidden * spec.comm_bytes / spec.tp
    span = spec.tp * spec.cp
    t_ag, link = _cost(spec, "all-gather", spec.cp, size, span)
    t_rs, _ = _cost(spec, "reduce-scatter", spec.cp, size, span)
    time_s = layers * m * (t_ag + t_rs)
    window = flops.attention_core / (world * x)
    return [
        _term(
            "CP keys and values",
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
    size = spec.micro_batch * s_local * top_k * spec.hidden * spec.comm_bytes / spec.tp
    span = spec.tp * spec.cp * spec.ep
    one, link = _cost(spec, "all-to-all", spec.ep, size, span)
    calls = 4 * layers * m
    return [
        _term(
            "EP tokens",
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
        raise InputError("hidden", "PP communication needs the hidden size")
    size = spec.micro_batch * (spec.seq // spec.cp) * hidden * spec.comm_bytes
    one, link = _cost(spec, "send-recv", 2, size, spec.dp * spec.tp * spec.cp * spec.pp)
    piped = simulate_pipeline(replace(pipe_spec, p2p_time=one))
    exposed = max(0.0, piped.iteration_time - t_compute)
    calls = 2 * m * spec.virtual_stages
    return _term(
        "PP activations",
        "send-recv",
        2,
        link,
        size,
        calls,
        calls * one,
        exposed,
        f"b·s·h = {size:.4g} B per micro-batch each way (2·m·v sends per stage); exposed = "
        "simulated iteration with p2p − without",
        f"{sources.MEGATRON_COMMUNICATION}; {PIPELINE_SOURCE}",
    )


def _moe_wait(
    spec: StepSpec,
    size: ModelSize | None,
    flops: Flops,
    world: int,
    x: float,
    comm: list[CommTerm],
) -> MoeWait | None:
    e = spec.experts or 1
    if e < 2 or size is None:
        return None
    hot = spec.hot_expert_share if spec.hot_expert_share is not None else 1 / e
    ratio = min(hot * e, spec.capacity_factor)
    ratio = max(ratio, 1.0)
    dropped = max(0.0, hot - spec.capacity_factor / e)
    if spec.ep == 1:
        # Every rank holds every expert: no rank waits for another rank's busier expert.
        return MoeWait(hot, ratio, dropped, 0.0)
    expert_compute = flops.mlp * (flops.hardware / flops.model) / (world * x)
    a2a = sum(c.time_s for c in comm if c.op == "all-to-all")
    wait = (ratio - 1.0) * (expert_compute + a2a)
    return MoeWait(hot, ratio, dropped, wait)


def _moe_term(spec: StepSpec, moe: MoeWait) -> StepTerm:
    return StepTerm(
        "MoE imbalance wait",
        moe.wait_s,
        f"(min(hot share {moe.hot_share:.3g} × E {spec.experts}, capacity factor "
        f"{spec.capacity_factor:g}) − 1) × (expert MLP compute + all-to-all); "
        f"dropped {moe.dropped_share:.3g} of tokens",
        f"{sources.MOE_CAPACITY}; wait: {ASSUMPTION}",
    )
