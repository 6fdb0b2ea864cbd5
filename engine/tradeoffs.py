"""What the Trade-offs pane shows, computed with :func:`engine.steptime.step_time`: the
interconnect comparison of exercise 4, the lesson's three counterexamples and the pane's report.

- :func:`compare_interconnects`: each strategy's T_step on one interconnect against the
  NVLink-class preset, at the same world size (exercise 4: 假设设备互联很慢).
- :data:`COUNTEREXAMPLES` (深入学习提示: 用极端反例检查理解): each one a few configurations whose
  figures show the point; each cites the lesson sentence it illustrates (a test checks the quote
  is the lesson's text).
- :func:`tradeoffs_report`: the scaling series, the comparison and the assumptions the pane
  draws for one model, batch and sequence length.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace

from engine.errors import InputError
from engine.i18n import N_
from engine.i18n import gettext as _
from engine.ledger import LedgerSpec, compute_ledger
from engine.model_presets import get_preset
from engine.scaling import (
    REFERENCE_INTERCONNECT,
    SCALING_STRATEGIES,
    ScalingSeries,
    describe_assumptions,
    scaling_all,
    strategy_spec,
    world_sizes,
)
from engine.steptime import (
    INTERCONNECTS,
    Interconnect,
    StepResult,
    StepSpec,
    get_interconnect,
    resolve_step_spec,
    step_time,
)
from engine.units import format_count, format_gb


@dataclass(frozen=True)
class InterconnectRow:
    """One strategy on the chosen interconnect against the reference (NVLink-class).

    Attributes:
        strategy: a name of :data:`SCALING_STRATEGIES`.
        reference, chosen: the two steps (``None`` with ``skipped`` when it cannot run).
        growth: chosen T_step / reference T_step (>= 1 when the chosen link is slower).
        skipped: why it cannot run ("" when it ran).
    """

    strategy: str
    reference: StepResult | None
    chosen: StepResult | None
    growth: float
    skipped: str = ""


def compare_interconnects(
    base: StepSpec, interconnect: Interconnect, world: int
) -> tuple[InterconnectRow, ...]:
    """Each strategy alone on ``world`` GPUs, on ``interconnect`` and on the NVLink-class
    preset; sorted by growth, largest first (exercise 4).

    Raises:
        InputError: a ``base`` that is invalid on one GPU.
    """
    step_time(strategy_spec(base, "dp", 1))
    reference = INTERCONNECTS[REFERENCE_INTERCONNECT]
    rows: list[InterconnectRow] = []
    moe = (resolve_step_spec(base).experts or 1) > 1
    for name in SCALING_STRATEGIES:
        if name == "ep" and not moe:
            continue
        spec = strategy_spec(base, name, world)
        try:
            ref = step_time(replace(spec, interconnect=reference))
            now = step_time(replace(spec, interconnect=interconnect))
        except InputError as error:
            rows.append(InterconnectRow(name, None, None, 0.0, f"{error.field}: {error.message}"))
            continue
        rows.append(InterconnectRow(name, ref, now, now.t_step_s / ref.t_step_s))
    return tuple(sorted(rows, key=lambda row: -row.growth))


@dataclass(frozen=True)
class Case:
    """One configuration of a counterexample, with an optional device memory to check fit."""

    label: str
    spec: StepSpec
    gpu_memory: float | None = None


@dataclass(frozen=True)
class Counterexample:
    """One of the lesson's extreme counterexamples.

    Attributes:
        key: ``slow-network``, ``small-batch``, ``moe-imbalance``.
        title: the lesson's words for it (深入学习提示).
        quote: a sentence of the lesson that explains it, verbatim; ``quote_item`` its item id.
        explanation: what the figures show (English, short).
        cases: the configurations to compare.
    """

    key: str
    title: str
    quote: str
    quote_item: str
    explanation: str
    cases: tuple[Case, ...]


@dataclass(frozen=True)
class CaseMemory:
    """One GPU's memory in a case, the terms of :func:`engine.ledger.compute_ledger` (bytes).

    Attributes:
        params: the model's parameters (count, all ranks together).
        model_states: weights, gradients, master weights and optimizer states on the GPU.
        activations: the activations it holds (the micro-batches in flight).
        buffers: communication buffers.
        total: their sum, what ``fits`` compares with the device memory.
    """

    params: float
    model_states: float
    activations: float
    buffers: float
    total: float


@dataclass(frozen=True)
class CaseResult:
    """A case's step; ``fits`` from :func:`engine.ledger.compute_ledger` (None: not checked),
    ``memory`` its terms; ``efficiency`` against n × one GPU of the same model and batch."""

    case: Case
    step: StepResult
    fits: bool | None
    memory: CaseMemory | None
    efficiency: float

    @property
    def memory_bytes(self) -> float | None:
        """One GPU's memory in bytes (None: not checked)."""
        return None if self.memory is None else self.memory.total


_13B = StepSpec(layers=40, hidden=5120, heads=40, vocab=32000, seq=2048, global_batch=64)


_1B = StepSpec(layers=24, hidden=2048, heads=16, vocab=50304, seq=2048)


_MOE = replace(_1B, experts=8, top_k=1, dp=8, ep=8, global_batch=64)


_SLOW = INTERCONNECTS["100gbps"]


COUNTEREXAMPLES: tuple[Counterexample, ...] = (
    Counterexample(
        key="slow-network",
        title="模型放不下但网络很慢",
        quote="通信开销取决于数据量、拓扑、带宽、延迟以及能否与计算重叠。",
        quote_item="core-collectives",
        # The figures come from the first case's ledger (explanation_text): "13B" rounds the
        # model's 12.76B parameters, so 13e9 × 16 B (208 GB) is not its model states.
        explanation=N_(
            "The 13B model has {params} parameters; at 16 bytes each (mixed-precision Adam: "
            "fp16 weights and gradients, fp32 master weights, momentum and variance) its "
            "model states take {states}, and the activations of one micro-batch (2048 tokens) "
            "{activations} more: {total} on each GPU with plain DP, which does not fit an 80 GB "
            "GPU. ZeRO-3 fits by sharding, but gathers 3Ψ per micro-batch over the 100 Gb/s "
            "link between the two nodes. Keeping the heavy traffic (TP) inside the node and "
            "sending only b·s·h per micro-batch across it (PP) fits and is faster."
        ),
        cases=(
            Case("DP 16", replace(_13B, dp=16, interconnect=_SLOW), 80e9),
            Case("ZeRO-3 16", replace(_13B, dp=16, zero_stage=3, interconnect=_SLOW), 80e9),
            Case("TP 8 x PP 2", replace(_13B, tp=8, pp=2, interconnect=_SLOW), 80e9),
        ),
    ),
    Counterexample(
        key="small-batch",
        title="模型能放下但 batch 太小",
        quote="并行扩大后，局部计算减少但通信和 straggler 更显著。",
        quote_item="mechanism-step",
        explanation=N_(
            "A 1.3B model fits on one GPU. With 64 GPUs and a global batch of 64, each GPU "
            "computes one sample, but the gradient all-reduce still moves 2Ψ: it outlasts the "
            "short backward it overlaps, the rest of it is exposed, and efficiency falls. The "
            "same GPUs with a 16x larger batch (16 micro-batches each, the gradients "
            "accumulated and reduced once) leave the same time exposed but spread it over 16x "
            "the compute, so efficiency recovers."
        ),
        cases=(
            Case("DP 64, batch 64", replace(_1B, dp=64, global_batch=64), 80e9),
            Case("DP 64, batch 1024", replace(_1B, dp=64, global_batch=1024), 80e9),
        ),
    ),
    Counterexample(
        key="moe-imbalance",
        title="MoE 专家负载极不均",
        quote="all-to-all 常见于 token 路由到专家。",
        quote_item="core-collectives",
        explanation=N_(
            "With 8 experts, balanced routing gives each 1/8 of the tokens. If one expert gets "
            "half of them, either it drops what exceeds its capacity (capacity factor 1.25) or, "
            "with room for them (capacity factor 4), every rank waits for the busiest one."
        ),
        cases=(
            Case(N_("balanced (1/8 each)"), _MOE),
            Case(N_("hot expert 1/2, capacity 1.25"), replace(_MOE, hot_expert_share=0.5)),
            Case(
                N_("hot expert 1/2, capacity 4"),
                replace(_MOE, hot_expert_share=0.5, capacity_factor=4.0),
            ),
        ),
    ),
)
"""The three counterexamples of 深入学习提示, in the lesson's order."""


def get_counterexample(key: str) -> Counterexample:
    """The counterexample called ``key``.

    Raises:
        InputError: unknown key (field ``scenario``).
    """
    for example in COUNTEREXAMPLES:
        if example.key == key:
            return example
    known = ", ".join(e.key for e in COUNTEREXAMPLES)
    raise InputError(
        "scenario",
        _("unknown counterexample {key!r}; use one of {known}").format(key=key, known=known),
    )


def run_counterexample(example: Counterexample) -> tuple[CaseResult, ...]:
    """Each case's step time, memory fit (where a device memory is set) and efficiency.

    Raises:
        InputError: a case that is invalid (a defect in the data; tests run every case).
    """
    results: list[CaseResult] = []
    for case in example.cases:
        step = step_time(case.spec)
        fits: bool | None = None
        memory: CaseMemory | None = None
        if case.gpu_memory is not None:
            spec = step.spec
            assert spec.dp is not None
            ledger = compute_ledger(
                LedgerSpec(
                    layers=spec.layers,
                    hidden=spec.hidden,
                    heads=spec.heads,
                    vocab=spec.vocab,
                    seq=spec.seq,
                    micro_batch_size=spec.micro_batch_size,
                    dp=spec.dp,
                    tp=spec.tp,
                    pp=spec.pp,
                    zero_stage=spec.zero_stage,
                    num_microbatches=step.num_microbatches,
                    gpu_memory=case.gpu_memory,
                )
            )
            fits = ledger.fits
            per_rank = ledger.per_rank_bytes
            memory = CaseMemory(
                params=ledger.params_total,
                model_states=ledger.model_states_bytes,
                activations=per_rank["activations"],
                buffers=per_rank["buffers"],
                total=per_rank["total"],
            )
        one = step_time(strategy_spec(step.spec, "dp", 1))
        efficiency = step.tokens_per_s / (step.world_size * one.tokens_per_s)
        results.append(CaseResult(case, step, fits, memory, efficiency))
    return tuple(results)


def explanation_text(example: Counterexample, results: Sequence[CaseResult]) -> str:
    """``example``'s explanation in the interface language, its figures filled in from the
    ledger of its first case with a memory check (``results``: :func:`run_counterexample`):
    ``params`` (count), ``states``, ``activations`` and ``total`` (GB, one decimal)."""
    memory = next((r.memory for r in results if r.memory is not None), None)
    if memory is None:
        return _(example.explanation)
    return _(example.explanation).format(
        params=format_count(memory.params),
        states=format_gb(memory.model_states, 1),
        activations=format_gb(memory.activations, 1),
        total=format_gb(memory.total, 1),
    )


def memory_terms(memory: CaseMemory) -> str:
    """``memory``'s sum as the learner can check it, GB with one decimal: model states +
    activations + buffers = total (``204.2 GB + 48.1 GB + 0.0 GB = 252.3 GB``)."""
    terms = (memory.model_states, memory.activations, memory.buffers)
    return " + ".join(format_gb(term, 1) for term in terms) + " = " + format_gb(memory.total, 1)


TRADEOFFS_MODEL = "lesson-1b"


TRADEOFFS_BASE = StepSpec(model=TRADEOFFS_MODEL, seq=2048, global_batch=64)
"""The Trade-offs pane's default: the ``lesson-1b`` preset (24 layers, h 2048, 16 heads, V 50304,
about 1.3B), s 2048, global batch 64."""


TRADEOFFS_BATCHES: tuple[int, ...] = (8, 16, 32, 64, 128, 256, 512, 1024)


TRADEOFFS_SEQS: tuple[int, ...] = (512, 1024, 2048, 4096, 8192)


def tradeoffs_base(model: str, global_batch: int, seq: int) -> StepSpec:
    """The Trade-offs pane's step: preset ``model`` at ``seq`` tokens and ``global_batch``
    samples per step (the devices and links are the pane's other choices).

    Raises:
        InputError: unknown model (``model``); the checks of :func:`engine.steptime.step_time`
            apply when the step runs.
    """
    resolve_step_spec(StepSpec(model=model))
    return StepSpec(model=model, seq=seq, global_batch=global_batch)


TRADEOFFS_STRATEGIES: tuple[str, ...] = ("dp", "zero3", "tp", "pp")


TRADEOFFS_WORLDS: tuple[int, ...] = (8, 16, 64)


TRADEOFFS_LINK = "400gbps"
"""The Trade-offs pane's default interconnect: NVLink in the node, a 400 Gb/s network."""


TRADEOFFS_WORLD = 16
"""The Trade-offs pane's default world size: two nodes of 8 GPUs, so the network is crossed."""


@dataclass(frozen=True)
class TradeoffsReport:
    """What the Trade-offs pane shows for one interconnect and world size.

    Attributes:
        interconnect: the chosen links. world: GPUs compared in ``rows``.
        rows: :func:`compare_interconnects` at ``world``.
        series: strong-scaling series of :data:`TRADEOFFS_STRATEGIES` up to 64 GPUs.
        base: the configuration all of them start from, on the chosen links.
        assumptions: :func:`describe_assumptions` of ``base``.
    """

    interconnect: Interconnect
    world: int
    rows: tuple[InterconnectRow, ...]
    series: tuple[ScalingSeries, ...]
    base: StepSpec
    assumptions: tuple[str, ...]


def tradeoffs_report(
    interconnect: str, world: int, base: StepSpec = TRADEOFFS_BASE
) -> TradeoffsReport:
    """The comparison of exercise 4 and the scaling series, on the preset ``interconnect``.

    Raises:
        InputError: unknown interconnect (``interconnect``) or a world size below 1 or above
            2^20 (``world``).
    """
    link = get_interconnect(interconnect)
    if isinstance(world, bool) or not isinstance(world, int) or not 1 <= world <= 2**20:
        raise InputError("world", _("must be a whole number from 1 to 1048576"))
    spec = replace(base, interconnect=link)
    return TradeoffsReport(
        link,
        world,
        compare_interconnects(spec, link, world),
        scaling_all(spec, "strong", world_sizes(64), TRADEOFFS_STRATEGIES),
        spec,
        describe_assumptions(spec),
    )


def slow_link_answer(report: TradeoffsReport) -> str:
    """Exercise 4's answer in one line, from the report the Trade-offs pane shows: each
    strategy's T_step growth over the NVLink-class links, largest first, with its exposed
    communication and T_step on the chosen links, and the configuration it holds for.

    Example: ``16 GPUs, NVLink in node, 400 Gb/s network (50 GB/s), lesson-1b at s 2048,
    global batch 64; T_step growth over NVLink-class links, largest first (exposed
    communication / T_step here): tp x2.68 (2.85 s / 3.33 s); ...``.
    """
    base = report.base
    parts = [
        _("{strategy} cannot run ({reason})").format(strategy=row.strategy, reason=row.skipped)
        if row.chosen is None
        else f"{row.strategy} x{row.growth:.3g} "
        f"({row.chosen.t_comm_exposed_s:.3g} s / {row.chosen.t_step_s:.3g} s)"
        for row in report.rows
    ]
    return _(
        "{gpus} GPUs, {link}, {model} at s {seq}, global batch {batch}; T_step growth over "
        "NVLink-class links, largest first (exposed communication / T_step here): {growth}"
    ).format(
        gpus=report.world,
        link=_(report.interconnect.label),
        model=get_preset(base.model).shown_title if base.model else _("custom shape"),
        seq=base.seq,
        batch=base.global_batch,
        growth=_("; ").join(parts),
    )
