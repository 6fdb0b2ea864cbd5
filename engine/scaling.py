"""Scaling series, computed with :func:`engine.steptime.step_time` (lesson misconception: 认为
world size 翻倍，吞吐必定翻倍), and their plot.

Throughput (tokens/s) and efficiency against world size n for one strategy. Strong scaling keeps
the global batch; weak scaling grows it with n. Efficiency = throughput(n) / (n × throughput(1)),
the one-GPU run of the same model and batch being the baseline (memory is not checked: a model
that does not fit on one GPU still has a well-defined compute time). One GPU holds every expert
of an MoE model, so its baseline waits for no busier expert on another rank. The Trade-offs
pane's comparisons and counterexamples are :mod:`engine.tradeoffs`.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace

from engine.checks import one_of
from engine.errors import InputError
from engine.i18n import N_, gettext, ngettext
from engine.i18n import gettext as _
from engine.linebreak import cell_width
from engine.steptime import (
    StepSpec,
    model_size,
    resolve_step_spec,
    step_time,
)
from engine.units import format_count

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
        t_step_s, t_comm_exposed_s: from the step (``None`` when skipped; the JSON also gives
            the second as ``t_comm_unhidden_s``, its older name).
        skipped: why this size cannot run the strategy ("" when it ran), naming spec fields.
        error: the step's error behind ``skipped`` (``None`` when it ran), for a front end to
            name the inputs in its own words (the command line's flags).
    """

    world_size: int
    tokens_per_s: float | None
    efficiency: float | None
    t_step_s: float | None
    t_comm_exposed_s: float | None
    skipped: str = ""
    error: InputError | None = field(default=None, compare=False, repr=False)


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
                    "t_comm_unhidden_s": p.t_comm_exposed_s,
                    "t_comm_exposed_s": p.t_comm_exposed_s,
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
        raise InputError(
            "strategy",
            gettext("unknown strategy {strategy!r}; use one of {known}").format(
                strategy=strategy, known=known
            ),
        )
    axes: dict[str, int] = {"dp": 1, "tp": 1, "pp": 1, "cp": 1, "ep": 1, "zero_stage": 0}
    # Interleaving needs pipeline stages: the other strategies run without it.
    virtual = base.virtual_stages if strategy == "pp" else 1
    if strategy == "dp":
        axes["dp"] = world
    elif strategy.startswith("zero"):
        axes["dp"] = world
        axes["zero_stage"] = int(strategy[-1])
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
        zero_stage=axes["zero_stage"],
        virtual_stages=virtual,
    )


def world_sizes(max_gpus: int) -> tuple[int, ...]:
    """1, 2, 4, ... up to ``max_gpus``.

    Raises:
        InputError: ``max_gpus`` below 1 or above 2^20 (field ``max_gpus``).
    """
    if isinstance(max_gpus, bool) or not isinstance(max_gpus, int) or not 1 <= max_gpus <= 2**20:
        raise InputError("max_gpus", gettext("must be a whole number from 1 to 1048576"))
    return tuple(2**k for k in range(int(math.log2(max_gpus)) + 1))


def scaling_series(
    base: StepSpec, strategy: str, mode: str, sizes: tuple[int, ...]
) -> ScalingSeries:
    """Throughput and efficiency of ``strategy`` at each world size (module docstring).

    ``base`` gives the model, device, interconnect and the one-GPU batch (``global_batch``,
    default ``micro_batch_size``); its parallel axes are replaced. A size the strategy cannot run
    (TP not dividing heads, a batch not divisible, ...) is a point with ``skipped`` set.

    Raises:
        InputError: unknown strategy or mode, or a ``base`` that is invalid on one GPU.
    """
    one_of("mode", mode, MODES)
    one = strategy_spec(base, "dp", 1)
    batch = one.global_batch if one.global_batch is not None else one.micro_batch_size
    baseline = step_time(replace(one, global_batch=batch))
    points: list[ScalingPoint] = []
    for n in sizes:
        spec = strategy_spec(base, strategy, n)
        spec = replace(spec, global_batch=batch * n if mode == "weak" else batch)
        try:
            result = step_time(spec)
        except InputError as error:
            reason = f"{error.field}: {error.message}"
            points.append(ScalingPoint(n, None, None, None, None, reason, error))
            continue
        efficiency = result.tokens_per_s / (n * baseline.tokens_per_s)
        points.append(
            ScalingPoint(
                n, result.tokens_per_s, efficiency, result.t_step_s, result.t_comm_exposed_s
            )
        )
    return ScalingSeries(
        strategy=strategy,
        mode=mode,
        baseline_tokens_per_s=baseline.tokens_per_s,
        points=tuple(points),
        formula=(
            N_("efficiency = tokens/s at n / (n × tokens/s on one GPU); global batch fixed")
            if mode == "strong"
            else N_("efficiency = tokens/s at n / (n × tokens/s on one GPU); global batch × n")
        ),
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


MARKERS: dict[str, str] = {"dp": "D", "zero1": "1", "zero2": "2", "zero3": "3", "tp": "T"}


MARKERS |= {"pp": "P", "cp": "C", "ep": "E"}
"""The plot's marker of each strategy of :data:`SCALING_STRATEGIES`."""


OVERLAP_MARKER = "*"


LINEAR_MARKER = "."

_MODE_CAPTIONS = {"strong": N_("(strong scaling)"), "weak": N_("(weak scaling)")}
"""The plot's caption for each mode; its words in the interface language."""


_Y_LABEL_WIDTH = 8


@dataclass(frozen=True)
class ScalingPlot:
    """Throughput against world size as text, on log-log axes.

    Attributes:
        lines: the plot, the axis, the legend and the overlaps, one string each.
        marks: (line, first column, end column, strategy) of every marker of a single strategy
            and of each legend entry, so a screen can colour them.
        shared: (line, column) of every cell several strategies share (:data:`OVERLAP_MARKER`).
        legend: (marker, strategy) of each series, in order.
        overlaps: (world size, strategies) of each shared cell.
    """

    lines: tuple[str, ...]
    marks: tuple[tuple[int, int, int, str], ...]
    shared: tuple[tuple[int, int], ...]
    legend: tuple[tuple[str, str], ...]
    overlaps: tuple[tuple[int, tuple[str, ...]], ...]

    def text(self) -> str:
        """The lines joined."""
        return "\n".join(self.lines)


def scaling_plot(
    series: tuple[ScalingSeries, ...], width: int = 60, height: int = 12
) -> ScalingPlot:
    """Throughput (tokens/s) against world size on log2-log2 axes: each doubling of GPUs is one
    step right and each doubling of throughput the same number of rows up anywhere on the plot,
    so perfect linear scaling (``.``, n × one-GPU throughput) is a straight line and a strategy's
    shortfall is its distance below it, at small n as at large n. One marker per strategy
    (:data:`MARKERS`); where several land on one cell, :data:`OVERLAP_MARKER`, and a line below
    names them. Skipped points are left out.

    Lines are at most ``width`` characters (at least 24); the plot is ``height`` rows (at least 5).
    """
    width = max(24, width)
    height = max(5, height)
    if not series:
        return ScalingPlot((), (), (), (), ())
    sizes = [p.world_size for p in series[0].points]
    base = series[0].baseline_tokens_per_s
    values = [base * n for n in sizes] + [
        p.tokens_per_s for s in series for p in s.points if p.tokens_per_s and p.tokens_per_s > 0
    ]
    top, bottom = max(values), min(values)
    span = math.log2(top / bottom) if top > bottom else 1.0
    columns = width - _Y_LABEL_WIDTH - 1
    x_span = math.log2(max(sizes) / min(sizes)) if max(sizes) > min(sizes) else 1.0

    def row_of(value: float) -> int:
        return round(math.log2(top / value) / span * (height - 1))

    def column_of(n: int) -> int:
        return 1 + round(math.log2(n / min(sizes)) / x_span * (columns - 3))

    grid = [[" "] * columns for _ in range(height)]
    for n in sizes:
        grid[row_of(base * n)][column_of(n)] = LINEAR_MARKER
    owners: dict[tuple[int, int], list[str]] = {}
    for s in series:
        for point in s.points:
            if point.tokens_per_s and point.tokens_per_s > 0:
                cell = (row_of(point.tokens_per_s), column_of(point.world_size))
                owners.setdefault(cell, []).append(s.strategy)
    marks: list[tuple[int, int, int, str]] = []
    shared: list[tuple[int, int]] = []
    overlaps: list[tuple[int, tuple[str, ...]]] = []
    for (row, column), names in owners.items():
        at = _Y_LABEL_WIDTH + 1 + column
        if len(names) == 1:
            grid[row][column] = MARKERS.get(names[0], "?")
            marks.append((row, at, at + 1, names[0]))
        else:
            grid[row][column] = OVERLAP_MARKER
            shared.append((row, at))
            n = next(n for n in sizes if column_of(n) == column)
            overlaps.append((n, tuple(names)))
    lines = []
    for r, cells in enumerate(grid):
        value = top / 2 ** (r / (height - 1) * span)
        shown = _tokens_per_s(value) if r in (0, height // 2, height - 1) else ""
        label = shown.rjust(_Y_LABEL_WIDTH)
        lines.append(f"{label}|{''.join(cells).rstrip()}")
    axis = [" "] * columns
    for n in sizes:
        text = str(n)
        column = min(columns - len(text), column_of(n))
        if all(c == " " for c in axis[max(0, column - 1) : column + len(text)]):
            axis[column : column + len(text)] = list(text)
    lines.append(" " * _Y_LABEL_WIDTH + "+" + "-" * columns)
    lines.append(" " * (_Y_LABEL_WIDTH + 1) + "".join(axis).rstrip())
    mode = gettext(_MODE_CAPTIONS[series[0].mode])
    lines.extend(_wrap([gettext("log-log:"), gettext("tokens/s vs GPUs"), mode], " ", width))
    lines.append(gettext("{marker} linear (n x 1 GPU)").format(marker=LINEAR_MARKER))
    legend_pairs = tuple((MARKERS.get(s.strategy, "?"), s.strategy) for s in series)
    for line in _wrap([f"{marker} {name}" for marker, name in legend_pairs], "  ", width):
        for marker, name in legend_pairs:
            entry = f"{marker} {name}"
            if f"  {entry}  " in f"  {line}  ":
                start = f"  {line}  ".index(f"  {entry}  ")
                marks.append((len(lines), start, start + len(entry), name))
        lines.append(line)
    if overlaps:
        entries = [
            f"n={n} {'/'.join(MARKERS.get(name, '?') for name in names)}"
            for n, names in sorted(overlaps)
        ]
        entries[0] = gettext("{marker} in one cell: {first}").format(
            marker=OVERLAP_MARKER, first=entries[0]
        )
        lines.extend(_wrap(entries, ", ", width))
    return ScalingPlot(
        tuple(line[:width] for line in lines),
        tuple(marks),
        tuple(shared),
        legend_pairs,
        tuple(sorted(overlaps)),
    )


def _wrap(entries: list[str], separator: str, width: int) -> list[str]:
    """``entries`` joined by ``separator`` into lines of at most ``width`` terminal cells (a
    Chinese character takes two; an entry is never split)."""
    lines: list[str] = []
    line = ""
    for entry in entries:
        if line and cell_width(line) + cell_width(separator) + cell_width(entry) > width:
            lines.append(line)
            line = ""
        line = f"{line}{separator}{entry}" if line else entry
    return [*lines, line] if line else lines


def _tokens_per_s(value: float) -> str:
    for suffix, scale in (("M", 1e6), ("k", 1e3)):
        if value >= scale:
            return f"{value / scale:.3g}{suffix}"
    return f"{value:.3g}"


def render_scaling_plot(
    series: tuple[ScalingSeries, ...], width: int = 60, height: int = 12
) -> str:
    """:func:`scaling_plot` as text."""
    return scaling_plot(series, width, height).text()


def describe_assumptions(spec: StepSpec) -> tuple[str, ...]:
    """What a step-time or scaling figure assumes, one line each: the model (architecture and
    parameter count N, :func:`engine.steptime.model_size`), the batch and
    sequence, the device, and the links.

    Raises:
        InputError: an architecture that is not whole numbers (named by its field).
    """
    spec = resolve_step_spec(spec)
    size = model_size(spec)
    if size is not None:
        heads = (
            ngettext(", {count} head", ", {count} heads", spec.heads).format(count=spec.heads)
            if spec.heads
            else ""
        )
        experts = (
            _(", {experts} experts").format(experts=spec.experts)
            if spec.experts and spec.experts > 1
            else ""
        )
        name = _("{model}, ").format(model=spec.model) if spec.model else ""
        model = _(
            "model: {name}N = {params} params ({layers}, h {hidden}{heads}, V {vocab}{experts})"
        ).format(
            name=name,
            params=format_count(size.total),
            layers=ngettext("{count} layer", "{count} layers", size.layers).format(
                count=size.layers
            ),
            hidden=spec.hidden,
            heads=heads,
            vocab=spec.vocab,
            experts=experts,
        )
    else:
        model = _("model: N = {params} params").format(params=format_count(spec.params or 0))
    batch = spec.global_batch if spec.global_batch is not None else spec.micro_batch_size
    tokens = batch * spec.seq
    link = spec.interconnect
    return (
        model,
        _(
            "batch: {batch} x sequence {seq} = {tokens} tokens per step, micro-batch {micro_batch}"
        ).format(
            batch=batch, seq=spec.seq, tokens=f"{tokens:,}", micro_batch=spec.micro_batch_size
        ),
        _("device: {tflops} TFLOP/s peak at {utilization}, {gpus}").format(
            tflops=f"{spec.peak_flops / 1e12:g}",
            utilization=f"{spec.compute_utilization:.0%}",
            gpus=ngettext(
                "{count} GPU per node", "{count} GPUs per node", spec.gpus_per_node
            ).format(count=spec.gpus_per_node),
        ),
        _("link: {link}, latency {latency} us").format(
            link=_(link.label), latency=f"{link.latency * 1e6:g}"
        ),
    )
