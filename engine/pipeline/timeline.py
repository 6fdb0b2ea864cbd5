"""A simulated schedule drawn as text: one row per stage, at a whole number of columns per time
unit, so equal operations have equal widths.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from fractions import Fraction
from typing import Final

from engine.errors import InputError
from engine.i18n import gettext as _
from engine.i18n import ngettext
from engine.pipeline.simulate import (
    PipelineResult,
    SimulationCancelled,
    simulate,
    stage_op_times,
)
from engine.pipeline.spec import PipelineSpec
from engine.sources import INTERLEAVED_SCHEDULE
from engine.units import format_figure

MAX_TIMELINE_COLUMNS: Final[int] = 2000
"""Most time steps a timeline is drawn with (columns per stage at one column per step)."""


ROUNDING_TOLERANCE: Final[float] = 0.05
"""When op times are rounded to draw, none moves by more than this share of the shortest op."""


_QUANTUM_DENOMINATOR: Final[int] = 1000


_NICE_STEPS: Final = (5, 2, 1)


@dataclass(frozen=True)
class TimelineDrawing:
    """A timeline drawn on a grid of whole columns per time unit.

    Every op of one kind is drawn exactly ``widths[kind]`` columns wide, at column
    ``start / unit × columns_per_unit``: the grid unit divides every op time (and the p2p time),
    so equal operations have equal widths. When no such unit keeps the drawing within
    :data:`MAX_TIMELINE_COLUMNS`, the op times are rounded to a multiple of a coarser unit and the
    schedule is simulated again with them (``rounded`` is then True and ``drawn`` holds the
    rounded simulation; the header says so).

    Attributes:
        header: schedule, scale and makespan. rounding: the rounded op times, or ``""``.
        rows: one line per stage, ``stage r`` then its cells; all the same length, which may
            exceed the width asked for (the caller scrolls).
        legend: what the letters mean and each kind's width in columns.
        unit: op-time units of one grid step. columns_per_unit: whole columns per grid step.
        widths: columns of one op, by kind (``F``, ``B``, ``W``; B includes W when joined).
        rounded: op times were rounded to draw. drawn: the simulation drawn.
    """

    header: str
    rounding: str
    rows: tuple[str, ...]
    legend: str
    unit: float
    columns_per_unit: int
    widths: dict[str, int]
    rounded: bool
    drawn: PipelineResult

    def text(self) -> str:
        """Header, rounding note, rows and legend, one per line (ASCII)."""
        return "\n".join([self.header, *([self.rounding] if self.rounding else []), *self.rows,
                          self.legend])  # fmt: skip


def _op_times(spec: PipelineSpec) -> dict[str, float]:
    """The durations a timeline is made of: one chunk's F, B (or B+W) and W, and the hop."""
    forward, backward, weight = stage_op_times(spec)
    times = {"F": forward, "B": backward, "W": weight if spec.split_backward else 0.0}
    times["p2p"] = spec.p2p_time if spec.stages > 1 else 0.0
    return times


def _exact_unit(times: list[float]) -> float | None:
    """The largest unit dividing every time (a fraction with a small denominator), or None."""
    fractions: list[Fraction] = []
    for value in times:
        fraction = Fraction(value).limit_denominator(_QUANTUM_DENOMINATOR)
        if abs(float(fraction) - value) > 1e-9 * max(1.0, value):
            return None
        fractions.append(fraction)
    scale = math.lcm(*(f.denominator for f in fractions))
    whole = math.gcd(*(int(f * scale) for f in fractions))
    return whole / scale


def _rounded(spec: PipelineSpec, unit: float) -> PipelineSpec:
    """``spec`` with every op time (and the p2p time) rounded to a multiple of ``unit``."""
    v = spec.virtual_stages
    times = _op_times(spec)

    def op(value: float) -> float:
        return round(value / unit) * unit

    return PipelineSpec(
        schedule=spec.schedule,
        stages=spec.stages,
        num_microbatches=spec.num_microbatches,
        virtual_stages=v,
        t_forward=op(times["F"]) * v,
        t_backward_input=op(times["B"]) * v,
        t_backward_weight=op(times["W"]) * v if spec.split_backward else 0.0,
        p2p_time=op(times["p2p"]),
    )


def _grid(
    result: PipelineResult, cancelled: Callable[[], bool]
) -> tuple[float, PipelineResult, bool]:
    """(unit, the simulation to draw, whether op times were rounded) for :func:`draw_timeline`.

    The exact unit (the largest dividing every op time) when the makespan is at most
    :data:`MAX_TIMELINE_COLUMNS` of it; else the coarsest 1-2-5 unit that moves no op time by
    more than :data:`ROUNDING_TOLERANCE` of the shortest F, B or W, the schedule simulated again
    with the rounded times.

    Raises:
        InputError: on ``num_microbatches`` when no drawing within :data:`MAX_TIMELINE_COLUMNS`
            steps keeps the op times within that tolerance.
    """
    spec = result.spec
    op_times = _op_times(spec)
    times = [value for value in op_times.values() if value > 0]
    unit = _exact_unit(times)
    if unit is not None and result.makespan / unit <= MAX_TIMELINE_COLUMNS + 0.5:
        return unit, result, False
    # The shortest compute op (the p2p time is a gap between ops, and may round to 0).
    shortest = min(value for key, value in op_times.items() if key != "p2p" and value > 0)
    ops_per_stage = (3 if spec.split_backward else 2) * spec.num_microbatches * spec.virtual_stages
    refused = InputError(
        "num_microbatches",
        _(
            "the timeline is not drawn: {ops} ops per stage, with these op times, need more "
            "than {columns} columns; lower m (or v), or use rounder op times"
        ).format(ops=ops_per_stage, columns=MAX_TIMELINE_COLUMNS),
    )
    if ops_per_stage > MAX_TIMELINE_COLUMNS:
        raise refused
    scale = 10.0 ** math.floor(math.log10(shortest))
    for _attempt in range(4):  # down to a thousandth of the shortest op
        for step in _NICE_STEPS:
            coarse = step * scale
            if coarse > shortest:
                continue
            errors = (abs(round(t / coarse) * coarse - t) for t in times)
            if max(errors) > ROUNDING_TOLERANCE * shortest:
                continue
            drawn = simulate(_rounded(spec, coarse), cancelled)
            if drawn.makespan / coarse > MAX_TIMELINE_COLUMNS + 0.5:
                raise refused
            return coarse, drawn, True
        scale /= 10
    raise refused


def draw_timeline(
    result: PipelineResult, width: int = 80, cancelled: Callable[[], bool] = lambda: False
) -> TimelineDrawing:
    """Draw the timeline in ASCII, one row per stage, at a whole number of columns per time unit.

    The unit divides every op time, so each F, B and W op is drawn the same number of columns
    wide wherever it runs; as many columns per unit as fit in ``width``, at least one (then the
    rows are wider than ``width``: the caller scrolls them). An op is its kind's upper-case
    letter, then its micro-batch number when every op has room for it, then lower-case letters;
    ``.`` is idle.

    ``cancelled`` is asked now and then (as :func:`~engine.pipeline.simulate` does).

    Raises:
        InputError: on ``width`` when it leaves fewer than 10 columns for the time axis; as
            :func:`_grid` when the schedule has too many ops to draw.
        SimulationCancelled: when ``cancelled()`` returned true.
    """
    spec = result.spec
    p = spec.stages
    label_width = len(f"stage {p - 1} ")
    columns = width - label_width
    if columns < 10:
        raise InputError(
            "width",
            ngettext(
                "must be at least {value} for {p} stage",
                "must be at least {value} for {p} stages",
                p,
            ).format(value=label_width + 10, p=p),
        )
    if cancelled():
        raise SimulationCancelled
    unit, drawn, rounded = _grid(result, cancelled)
    steps = round(drawn.makespan / unit)
    per_unit = max(1, columns // steps)
    times = _op_times(drawn.spec)
    kinds = ("F", "B", "W") if spec.split_backward else ("F", "B")
    widths = {kind: round(times[kind] / unit) * per_unit for kind in kinds}
    digits = min(width for width in widths.values() if width) > len(str(spec.num_microbatches - 1))
    rows = []
    for r, ops in enumerate(drawn.timeline):
        if not r % 64 and cancelled():
            raise SimulationCancelled
        cells = ["."] * (steps * per_unit)
        for op in ops:
            letter = op.kind[0]
            if not widths[letter]:  # t_W = 0: the weight gradient takes no time
                continue
            first = round(op.start / unit) * per_unit
            number = str(op.micro_batch) if digits else ""
            fill = [letter.lower()] * (widths[letter] - 1 - len(number))
            cells[first : first + widths[letter]] = [letter, *number, *fill]
        rows.append(f"stage {r}".ljust(label_width) + "".join(cells))
    shape = f"p={p} m={spec.num_microbatches}" + (
        f" v={spec.virtual_stages}" if spec.virtual_stages > 1 else ""
    )
    if unit == 1:  # "per 1 op-time units" read wrong
        columns_text = (
            _("1 column per op-time unit")
            if per_unit == 1
            else _("{columns} columns per op-time unit")
        ).format(columns=per_unit)
    else:
        columns_text = (
            _("1 column per {unit} op-time units")
            if per_unit == 1
            else _("{columns} columns per {unit} op-time units")
        ).format(columns=per_unit, unit=f"{unit:.6g}")
    makespan = f"{drawn.makespan:.6g}" + (
        " " + _("(exact: {makespan})").format(makespan=f"{result.makespan:.6g}") if rounded else ""
    )
    header = _("{schedule} {shape}: {columns}, makespan {makespan}").format(
        schedule=spec.schedule, shape=shape, columns=columns_text, makespan=makespan
    )
    rounding = ""
    if rounded:
        shown = [*kinds, *(["p2p"] if p > 1 else [])]
        drawn_times = ", ".join(f"{key} {times[key]:.6g}" for key in shown)
        rounding = _(
            "op times rounded to multiples of {unit} to draw ({times}); the figures above use "
            "the exact times"
        ).format(unit=f"{unit:.6g}", times=drawn_times)
    names = {"F": _("F fwd"), "B": _("B input grad") if spec.split_backward else _("B bwd+W"),
             "W": _("W weight grad")}  # fmt: skip
    sizes = _(", ").join(
        _("{name} {width} col").format(name=names[kind], width=widths[kind]) for kind in kinds
    )
    legend = (
        _("{sizes}; then micro-batch; lower case: runs; . idle")
        if digits
        else _("{sizes}; lower case: runs; . idle")
    ).format(sizes=sizes)
    return TimelineDrawing(
        header, rounding, tuple(rows), legend, unit, per_unit, widths, rounded, drawn
    )


def render_timeline(result: PipelineResult, width: int = 80) -> str:
    """:func:`draw_timeline` as text: header, rows, legend (rows may be wider than ``width``).

    Raises:
        InputError: as :func:`draw_timeline`.
    """
    return draw_timeline(result, width).text()


def chunks_note(result: PipelineResult) -> str:
    """What the interleaved schedule's peak in flight counts (``result`` with v > 1): model
    chunks, each 1/v of the stage's layers and so of a micro-batch's activations there, with the
    schedule's source (Narayanan et al. 2021, section 2.2.2). Shown by the Bubble pane and
    ``calc bubble``."""
    v = result.spec.virtual_stages
    peak = max(result.peak_in_flight_microbatches)
    # The peak is a whole number of chunks, a fraction of micro-batches: English's singular is
    # for exactly 1 (1.5 micro-batches); ngettext takes a whole count.
    return ngettext(
        "peak in flight counts model chunks, 1/v = 1/{v} of the stage's layers each, so a "
        "chunk in flight holds 1/{v} of a micro-batch's activations: {chunks} chunks = {count} "
        "micro-batch's worth ({source})",
        "peak in flight counts model chunks, 1/v = 1/{v} of the stage's layers each, so a "
        "chunk in flight holds 1/{v} of a micro-batch's activations: {chunks} chunks = {count} "
        "micro-batches' worth ({source})",
        1 if peak == 1 else 2,
    ).format(
        v=v,
        chunks=format_figure(round(peak * v)),
        count=format_figure(peak),
        source=INTERLEAVED_SCHEDULE,
    )
