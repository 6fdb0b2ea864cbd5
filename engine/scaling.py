"""Scaling series, the interconnect comparison of exercise 4, and the lesson's three
counterexamples, all computed with :func:`engine.steptime.step_time`.

- Scaling (lesson misconception: 认为 world size 翻倍，吞吐必定翻倍): throughput (tokens/s) and
  efficiency against world size n for one strategy. Strong scaling keeps the global batch;
  weak scaling grows it with n. Efficiency = throughput(n) / (n × throughput(1)), the
  one-GPU run of the same model and batch being the baseline (memory is not checked: a model
  that does not fit on one GPU still has a well-defined compute time). One GPU holds every
  expert of an MoE model, so its baseline waits for no busier expert on another rank.
- :func:`compare_interconnects`: each strategy's T_step on one interconnect against the
  NVLink-class preset, at the same world size (exercise 4: 假设设备互联很慢).
- :data:`COUNTEREXAMPLES` (深入学习提示: 用极端反例检查理解): each one a few configurations whose
  figures show the point; each cites the lesson sentence it illustrates (a test checks the quote
  is the lesson's text).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, replace

from engine.errors import InputError
from engine.ledger import LedgerSpec, compute_ledger
from engine.steptime import (
    INTERCONNECTS,
    Interconnect,
    StepResult,
    StepSpec,
    get_interconnect,
    resolve_step_spec,
    step_time,
)

SCALING_STRATEGIES: tuple[str, ...] = ("dp", "zero1", "zero2", "zero3", "tp", "pp", "cp", "ep")
MODES: tuple[str, ...] = ("strong", "weak")
REFERENCE_INTERCONNECT = "nvlink"


@dataclass(frozen=True)
class ScalingPoint:
    """One world size of a series.

    Attributes:
        world_size: GPUs n.
        tokens_per_s: throughput (``None`` when skipped).
        efficiency: throughput / (n × one-GPU throughput) (``None`` when skipped).
        t_step_s, t_comm_unhidden_s: from the step (``None`` when skipped).
        skipped: why this size cannot run the strategy ("" when it ran).
    """

    world_size: int
    tokens_per_s: float | None
    efficiency: float | None
    t_step_s: float | None
    t_comm_unhidden_s: float | None
    skipped: str = ""


@dataclass(frozen=True)
class ScalingSeries:
    """Throughput and efficiency against world size for one strategy.

    Attributes:
        strategy: a name of :data:`SCALING_STRATEGIES`. mode: ``strong`` or ``weak``.
        baseline_tokens_per_s: the one-GPU throughput the efficiency divides by.
        points: one per world size asked for, in order.
        formula, source: how efficiency is defined; where the step times come from.
    """

    strategy: str
    mode: str
    baseline_tokens_per_s: float
    points: tuple[ScalingPoint, ...]
    formula: str
    source: str

    def as_dict(self) -> dict[str, object]:
        """JSON-ready: strategy, mode, baseline and the points."""
        return {
            "strategy": self.strategy,
            "mode": self.mode,
            "baseline_tokens_per_s": self.baseline_tokens_per_s,
            "formula": self.formula,
            "points": [
                {
                    "world_size": p.world_size,
                    "tokens_per_s": p.tokens_per_s,
                    "efficiency": p.efficiency,
                    "t_step_s": p.t_step_s,
                    "t_comm_unhidden_s": p.t_comm_unhidden_s,
                    "skipped": p.skipped,
                }
                for p in self.points
            ],
        }


def strategy_spec(base: StepSpec, strategy: str, world: int) -> StepSpec:
    """``base`` with its parallel axes set so ``strategy`` alone spans ``world`` GPUs.

    Raises:
        InputError: unknown strategy (field ``strategy``).
    """
    if strategy not in SCALING_STRATEGIES:
        known = ", ".join(SCALING_STRATEGIES)
        raise InputError("strategy", f"unknown strategy {strategy!r}; use one of {known}")
    axes: dict[str, int] = {"dp": 1, "tp": 1, "pp": 1, "cp": 1, "ep": 1, "zero": 0}
    # Interleaving needs pipeline stages: the other strategies run without it.
    virtual = base.virtual_stages if strategy == "pp" else 1
    if strategy == "dp":
        axes["dp"] = world
    elif strategy.startswith("zero"):
        axes["dp"] = world
        axes["zero"] = int(strategy[-1])
    elif strategy == "ep":
        axes["dp"] = world
        axes["ep"] = world
    else:
        axes[strategy] = world
    return replace(
        base,
        gpus=None,
        dp=axes["dp"],
        tp=axes["tp"],
        pp=axes["pp"],
        cp=axes["cp"],
        ep=axes["ep"],
        zero=axes["zero"],
        virtual_stages=virtual,
    )


def world_sizes(max_gpus: int) -> tuple[int, ...]:
    """1, 2, 4, ... up to ``max_gpus``.

    Raises:
        InputError: ``max_gpus`` below 1 or above 2^20 (field ``max_gpus``).
    """
    if isinstance(max_gpus, bool) or not isinstance(max_gpus, int) or not 1 <= max_gpus <= 2**20:
        raise InputError("max_gpus", "must be a whole number from 1 to 1048576")
    return tuple(2**k for k in range(int(math.log2(max_gpus)) + 1))


def scaling_series(
    base: StepSpec, strategy: str, mode: str, sizes: tuple[int, ...]
) -> ScalingSeries:
    """Throughput and efficiency of ``strategy`` at each world size (module docstring).

    ``base`` gives the model, device, interconnect and the one-GPU batch (``global_batch``,
    default ``micro_batch``); its parallel axes are replaced. A size the strategy cannot run
    (TP not dividing heads, a batch not divisible, ...) is a point with ``skipped`` set.

    Raises:
        InputError: unknown strategy or mode, or a ``base`` that is invalid on one GPU.
    """
    if mode not in MODES:
        raise InputError("mode", f"{mode!r} is not one of strong, weak")
    one = strategy_spec(base, "dp", 1)
    batch = one.global_batch if one.global_batch is not None else one.micro_batch
    baseline = step_time(replace(one, global_batch=batch))
    points: list[ScalingPoint] = []
    for n in sizes:
        spec = strategy_spec(base, strategy, n)
        spec = replace(spec, global_batch=batch * n if mode == "weak" else batch)
        try:
            result = step_time(spec)
        except InputError as error:
            reason = f"{error.field}: {error.message}"
            points.append(ScalingPoint(n, None, None, None, None, reason))
            continue
        efficiency = result.tokens_per_s / (n * baseline.tokens_per_s)
        points.append(
            ScalingPoint(
                n, result.tokens_per_s, efficiency, result.t_step_s, result.t_comm_unhidden_s
            )
        )
    return ScalingSeries(
        strategy=strategy,
        mode=mode,
        baseline_tokens_per_s=baseline.tokens_per_s,
        points=tuple(points),
        formula="efficiency = tokens/s at n / (n × tokens/s on one GPU)"
        + ("; global batch fixed" if mode == "strong" else "; global batch × n"),
        source="engine.steptime.step_time at each n",
    )


def scaling_all(
    base: StepSpec, mode: str, sizes: tuple[int, ...], strategies: tuple[str, ...] | None = None
) -> tuple[ScalingSeries, ...]:
    """:func:`scaling_series` for each strategy (default: all of :data:`SCALING_STRATEGIES`,
    ``ep`` only for an MoE ``base``).

    Raises:
        InputError: as :func:`scaling_series`.
    """
    moe = (resolve_step_spec(base).experts or 1) > 1
    names = strategies or tuple(s for s in SCALING_STRATEGIES if s != "ep" or moe)
    return tuple(scaling_series(base, name, mode, sizes) for name in names)


_MARKERS = {"dp": "D", "zero1": "1", "zero2": "2", "zero3": "3", "tp": "T", "pp": "P"}
_MARKERS |= {"cp": "C", "ep": "E"}


def render_scaling_plot(
    series: tuple[ScalingSeries, ...], width: int = 60, height: int = 12
) -> str:
    """Throughput against world size as text: one marker per strategy (legend below), ``.``
    for perfect linear scaling (n × one-GPU throughput), log2 spacing on the x axis.

    Lines are at most ``width`` characters (at least 24). Skipped points are left out.
    """
    width = max(24, width)
    height = max(5, height)
    if not series:
        return ""
    sizes = [p.world_size for p in series[0].points]
    base = series[0].baseline_tokens_per_s
    top = max(
        [base * n for n in sizes]
        + [p.tokens_per_s for s in series for p in s.points if p.tokens_per_s is not None]
    )
    label_width = 8
    columns = width - label_width - 1
    step = max(1, columns // max(1, len(sizes)))
    grid = [[" "] * columns for _ in range(height)]

    def row_of(value: float) -> int:
        return height - 1 - min(height - 1, round(value / top * (height - 1)))

    for index, n in enumerate(sizes):
        column = min(columns - 1, index * step + step // 2)
        grid[row_of(base * n)][column] = "."
    for s in series:
        marker = _MARKERS.get(s.strategy, "?")
        for index, point in enumerate(s.points):
            if point.tokens_per_s is None:
                continue
            column = min(columns - 1, index * step + step // 2)
            row = row_of(point.tokens_per_s)
            grid[row][column] = "*" if grid[row][column] not in (" ", ".") else marker
    lines = []
    for r, cells in enumerate(grid):
        value = top * (height - 1 - r) / (height - 1)
        label = f"{value:8.2g}" if r in (0, height // 2, height - 1) else " " * label_width
        lines.append(f"{label}|{''.join(cells).rstrip()}")
    axis = [" "] * columns
    for index, n in enumerate(sizes):
        text = str(n)
        column = min(columns - len(text), index * step + step // 2)
        if all(c == " " for c in axis[max(0, column - 1) : column + len(text)]):
            axis[column : column + len(text)] = list(text)
    lines.append(" " * label_width + "+" + "-" * columns)
    lines.append(" " * (label_width + 1) + "".join(axis).rstrip())
    lines.append(f"tokens/s vs GPUs ({series[0].mode})")
    lines.append(". linear (n x 1 GPU)")
    lines.append("* two or more overlap")
    legend = ""
    for s in series:
        entry = f"{_MARKERS.get(s.strategy, '?')} {s.strategy}"
        if legend and len(legend) + 2 + len(entry) > width:
            lines.append(legend)
            legend = ""
        legend = f"{legend}  {entry}" if legend else entry
    lines.append(legend)
    return "\n".join(line[:width] for line in lines)


# ---------------------------------------------------------------------------------- exercise 4


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


# ---------------------------------------------------------------------------------- counterexamples


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
class CaseResult:
    """A case's step; ``fits`` from :func:`engine.ledger.compute_ledger` (None: not checked);
    ``efficiency`` against n × one GPU of the same model and batch."""

    case: Case
    step: StepResult
    fits: bool | None
    memory_bytes: float | None
    efficiency: float


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
        explanation=(
            "A 13B model needs about 208 GB of model states: plain DP does not fit an 80 GB GPU. "
            "ZeRO-3 fits by sharding, but gathers 3Ψ per micro-batch over the 100 Gb/s link "
            "between the two nodes. Keeping the heavy traffic (TP) inside the node and sending "
            "only b·s·h per micro-batch across it (PP) fits and is faster."
        ),
        cases=(
            Case("DP 16", replace(_13B, dp=16, interconnect=_SLOW), 80e9),
            Case("ZeRO-3 16", replace(_13B, dp=16, zero=3, interconnect=_SLOW), 80e9),
            Case("TP 8 x PP 2", replace(_13B, tp=8, pp=2, interconnect=_SLOW), 80e9),
        ),
    ),
    Counterexample(
        key="small-batch",
        title="模型能放下但 batch 太小",
        quote="并行扩大后，局部计算减少但通信和 straggler 更显著。",
        quote_item="mechanism-step",
        explanation=(
            "A 1.3B model fits on one GPU. With 64 GPUs and a global batch of 64, each GPU "
            "computes one sample, but the gradient all-reduce still moves 2Ψ: it no longer hides "
            "behind the short backward and efficiency falls. The same GPUs with a 16x larger "
            "batch hide it again."
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
        explanation=(
            "With 8 experts, balanced routing gives each 1/8 of the tokens. If one expert gets "
            "half of them, either it drops what exceeds its capacity (capacity factor 1.25) or, "
            "with room for them (capacity factor 4), every rank waits for the busiest one."
        ),
        cases=(
            Case("balanced (1/8 each)", _MOE),
            Case("hot expert 1/2, capacity 1.25", replace(_MOE, hot_expert_share=0.5)),
            Case(
                "hot expert 1/2, capacity 4",
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
    raise InputError("scenario", f"unknown counterexample {key!r}; use one of {known}")


def run_counterexample(example: Counterexample) -> tuple[CaseResult, ...]:
    """Each case's step time, memory fit (where a device memory is set) and efficiency.

    Raises:
        InputError: a case that is invalid (a defect in the data; tests run every case).
    """
    results: list[CaseResult] = []
    for case in example.cases:
        step = step_time(case.spec)
        fits: bool | None = None
        memory: float | None = None
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
                    micro_batch=spec.micro_batch,
                    dp=spec.dp,
                    tp=spec.tp,
                    pp=spec.pp,
                    zero=spec.zero,
                    micro_batches=step.micro_batches,
                    gpu_memory=case.gpu_memory,
                )
            )
            fits = ledger.fits
            memory = ledger.per_rank_bytes["total"]
        one = step_time(strategy_spec(step.spec, "dp", 1))
        efficiency = step.tokens_per_s / (step.world_size * one.tokens_per_s)
        results.append(CaseResult(case, step, fits, memory, efficiency))
    return tuple(results)


# ---------------------------------------------------------------------------------- the pane

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


@dataclass(frozen=True)
class TradeoffsReport:
    """What the Trade-offs pane shows for one interconnect and world size.

    Attributes:
        interconnect: the chosen links. world: GPUs compared in ``rows``.
        rows: :func:`compare_interconnects` at ``world``.
        series: strong-scaling series of :data:`TRADEOFFS_STRATEGIES` up to 64 GPUs.
    """

    interconnect: Interconnect
    world: int
    rows: tuple[InterconnectRow, ...]
    series: tuple[ScalingSeries, ...]


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
        raise InputError("world", "must be a whole number from 1 to 1048576")
    spec = replace(base, interconnect=link)
    return TradeoffsReport(
        link,
        world,
        compare_interconnects(spec, link, world),
        scaling_all(spec, "strong", world_sizes(64), TRADEOFFS_STRATEGIES),
    )
