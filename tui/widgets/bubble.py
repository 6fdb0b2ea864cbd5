"""The Bubble pane: a pipeline schedule simulated by ``engine.pipeline``, drawn in ASCII.

Shows the bubble in both conventions, each named (bubble/ideal, as Megatron-LM and the
Ultra-Scale Playbook state it; bubble/total, as GPipe and the Zero-Bubble paper measure it), the
paper's closed form beside the simulated value, the micro-batches in flight per stage (the
activation memory a schedule stashes), the timeline, and optionally a second schedule to compare.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import pairwise
from typing import ClassVar

from rich.console import Group, RenderableType
from rich.segment import Segment
from rich.text import Text
from textual import events, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.geometry import Size
from textual.scroll_view import ScrollView
from textual.scrollbar import ScrollBar
from textual.strip import Strip
from textual.widget import Widget
from textual.widgets import Static
from textual.worker import Worker, WorkerState, get_current_worker

from engine import units
from engine.checks import one_of
from engine.errors import InputError
from engine.i18n import N_, gettext
from engine.pipeline import (
    MAX_OP_TIME,
    SCHEDULES,
    PipelineResult,
    PipelineSpec,
    SimulationCancelled,
    TimelineDrawing,
    check_simulated_size,
    closed_form_bubble,
    unused_virtual_stages_note,
)
from engine.pipeline.process import Simulated, SimulationProcess, simulate_and_draw
from engine.pipeline.timeline import chunks_note
from tui import strings
from tui.compositor import in_view
from tui.widgets.calculator import CalculatorPane, Field, FieldChecks, Outcome, ResultView
from tui.widgets.fit import Column, FigureTable
from tui.widgets.reader import BrokenLines
from tui.widgets.scrolling import SidewaysScroll

NONE = "none"
MIN_TIMELINE_WIDTH = 24
# Schedules costing more than this (both compared ones together, see :func:`simulation_cost`)
# are simulated in a child process (:class:`SimulationProcess`), waited for by a worker thread:
# the closed form is shown in the frame that answers the key and the simulation follows, so no
# key waits on it. At this cost, simulating and drawing take at most about 10 ms of CPU on a
# loaded 2-core machine, within a 60 Hz frame.
INSTANT_COST = 4_000
SIMULATION_GROUP = "bubble-simulation"
# The details' line of micro-batches in flight lists each stage up to this many stages; beyond,
# a run of equal counts is one figure with its length (8×9,993), and only the first and last
# IN_FLIGHT_RUNS / 2 runs are shown. A figure per stage made 10,000 stages a 20,000-character
# line, broken into lines on the event loop (UAX #14 in pure Python: 2 s).
IN_FLIGHT_LISTED = 16
IN_FLIGHT_RUNS = 16


def spec_from_form(values: dict[str, str], schedule: str) -> PipelineSpec:
    """The pane's form as a PipelineSpec for ``schedule``.

    Raises:
        InputError: naming the form field; :class:`~tui.widgets.calculator.FormErrors` naming
            each one when several are refused (every field is parsed on its own).
    """
    checks = FieldChecks()

    def number(name: str, allow_zero: bool = False) -> float:
        return checks.parse(
            lambda: units.parse_number(
                name, values[name], allow_zero=allow_zero, maximum=MAX_OP_TIME
            ),
            1.0,
        )

    stages = checks.parse(lambda: units.parse_int("stages", values["stages"]), 1)
    micro_batches = checks.parse(
        lambda: units.parse_int("micro_batches", values["micro_batches"]), 1
    )
    # v means something only to the interleaved schedule; a bad v must not block the others.
    virtual = 1
    if schedule == "interleaved-1f1b":
        virtual = checks.parse(
            lambda: units.parse_int("virtual_stages", values["virtual_stages"]), 1
        )
    t_forward = number("t_forward")
    t_backward_input = number("t_backward_input")
    t_backward_weight = number("t_backward_weight", allow_zero=True)
    p2p_time = number("p2p_time", allow_zero=True)
    checks.check()
    return PipelineSpec(
        schedule=one_of("schedule", schedule, SCHEDULES),
        stages=stages,
        num_microbatches=micro_batches,
        virtual_stages=virtual,
        t_forward=t_forward,
        t_backward_input=t_backward_input,
        t_backward_weight=t_backward_weight,
        p2p_time=p2p_time,
    )


def simulation_cost(spec: PipelineSpec) -> int:
    """What simulating and drawing ``spec`` costs, in microseconds of CPU (roughly).

    Each op about 1 us; each column of the simulator's grid (ops per stage, plus 2p of warm-up
    and cool-down) a numpy step of about 4 us; each stage about 100 us of Python (its actions,
    its start times, its timeline row); and the grid's p*2p cells of warm-up and cool-down: 2,000
    stages of 5 micro-batches are only 20,000 ops but cost a third of a second.
    """
    stages = spec.stages
    columns = spec.num_ops // stages + 2 * stages
    return spec.num_ops + 4 * columns + 100 * stages + 2 * stages * stages


def _figures(result: PipelineResult) -> FigureTable:
    table = FigureTable(Column(), Column(justify="right"), show_header=False)
    closed = result.closed_form
    table.add_row(gettext("bubble/ideal"), units.format_figure(result.bubble_over_ideal))
    table.add_row("  (Megatron, Playbook)", "")
    table.add_row(gettext("bubble/total"), units.format_figure(result.bubble_fraction))
    table.add_row("  (GPipe, Zero-Bubble)", "")
    table.add_row(gettext("bubble time/stage"), units.format_figure(max(result.bubble_time)) + " t")
    table.add_row(gettext("makespan"), units.format_figure(result.makespan) + " t")
    table.add_row(gettext("ideal m(tF+tB+tW)"), units.format_figure(result.ideal_time) + " t")
    # The unit under the label, as the conventions above: a figure with its unit beside it
    # ("5.5 micro-batches") was wider than the side pane's column, and the table stacked.
    table.add_row(
        gettext("peak in flight"), units.format_figure(max(result.peak_in_flight_microbatches))
    )
    chunked = result.spec.virtual_stages > 1  # interleaved 1F1B: see chunks_note
    table.add_row(
        "  " + (gettext("(micro-batches' worth)") if chunked else gettext("(micro-batches)")), ""
    )
    # The paper's formula as the same ratio as the simulated bubble/ideal above, so the two can
    # be compared whatever quantity the paper states (a ratio, or a time for ZB-H1/ZB-H2).
    table.add_row(gettext("closed form b/ideal"), units.format_figure(closed.bubble_over_ideal))
    return table


def _heading(spec: PipelineSpec, micro_batches: int, typed_v: int = 1) -> Text:
    """The schedule and its sizes, in the interface language's punctuation; with a v typed
    (``typed_v``) that the schedule does not use, it says so, as ``calc bubble`` does
    (:func:`engine.pipeline.unused_virtual_stages_note`): one line, no row added."""
    text = strings.BUBBLE_HEADING.format(
        schedule=spec.schedule, stages=spec.stages, micro_batches=micro_batches
    )
    if unused_virtual_stages_note([spec.schedule], typed_v):
        text = strings.BUBBLE_V_NOT_USED.format(heading=text)
    return Text(text, style="bold")


def bubble_renderable(result: PipelineResult, typed_v: int = 1) -> RenderableType:
    """Both bubble figures beside the closed form, and the peak in flight; ``typed_v`` is the
    form's v (see :func:`_heading`)."""
    notes = [_note(strings.BUBBLE_TIME_UNIT)]
    if result.spec.virtual_stages > 1:
        notes.append(_note(chunks_note(result)))
    heading = _heading(result.spec, result.num_microbatches, typed_v)
    return Group(heading, _figures(result), *notes)


def closed_form_renderable(spec: PipelineSpec, typed_v: int = 1) -> RenderableType:
    """The closed form's bubble in both conventions, shown while ``spec`` is being simulated;
    ``typed_v`` is the form's v (see :func:`_heading`)."""
    closed = closed_form_bubble(spec)
    table = FigureTable(Column(), Column(justify="right"), show_header=False)
    table.add_row(gettext("closed form b/ideal"), units.format_figure(closed.bubble_over_ideal))
    table.add_row(gettext("closed form b/total"), units.format_figure(closed.bubble_fraction))
    return Group(_heading(spec, spec.num_microbatches, typed_v), table)


def bubble_details(
    result: PipelineResult, drawing: TimelineDrawing | str, heading: bool
) -> RenderableType:
    """The closed form with its source, in-flight counts per stage, and the timeline's scale and
    legend (its rows are drawn by :class:`TimelineView`), or why it is not drawn; headed by the
    schedule when two are compared."""
    closed = result.closed_form
    in_flight = in_flight_text(result.peak_in_flight_microbatches)
    parts: list[RenderableType] = [
        *([_heading(result.spec, result.num_microbatches)] if heading else []),
        _note(gettext("closed form: {formula}").format(formula=closed.formula)),
        _note(gettext("source: {source}").format(source=closed.source)),
        _note(gettext("in flight per stage: {counts}").format(counts=in_flight)),
    ]
    if result.makespan > result.iteration_time:
        parts.append(
            _note(
                gettext(
                    "makespan {makespan} > iteration {iteration}: stages start shifted, so the "
                    "drawing shows idle the steady-state bubble does not (Qi et al. 2023 §5 "
                    "measure the bubble per iteration)"
                ).format(
                    makespan=units.format_figure(result.makespan),
                    iteration=units.format_figure(result.iteration_time),
                )
            )
        )
    if not closed.applies:
        parts.append(
            _note(
                gettext("closed form assumes: {assumptions}").format(assumptions=closed.assumptions)
            )
        )
    if isinstance(drawing, str):
        parts.append(_note(drawing))
    else:
        lines = [
            gettext("timeline: {header}").format(header=drawing.header),
            drawing.rounding,
            drawing.legend,
        ]
        parts.extend(_note(line) for line in lines if line)
    return Group(*parts)


def in_flight_text(counts: Sequence[float]) -> str:
    """The micro-batches in flight per stage, stage 0 first, spaces between (as on the command
    line: a comma would read as the thousands separator of 100,000). Over
    :data:`IN_FLIGHT_LISTED` stages, a run of ``n`` equal counts ``c`` is ``c×n``, and over
    :data:`IN_FLIGHT_RUNS` runs the middle ones are one ``…``: the line stays short whatever p."""
    if len(counts) <= IN_FLIGHT_LISTED:
        return " ".join(map(units.format_figure, counts))
    # Where each run of equal counts starts, and the end; the runs shown only are formatted.
    starts = [0, *(s for s in range(1, len(counts)) if counts[s] != counts[s - 1]), len(counts)]
    half = IN_FLIGHT_RUNS // 2
    elided = len(starts) - 1 > IN_FLIGHT_RUNS
    shown = [starts[: half + 1], starts[-half - 1 :]] if elided else [starts]
    return " … ".join(
        " ".join(
            units.format_figure(counts[start])
            if end - start == 1
            else f"{units.format_figure(counts[start])}×{end - start:,}"
            for start, end in pairwise(part)
        )
        for part in shown
    )


def _note(text: str) -> BrokenLines:
    """A line of the details, broken by the lesson's rules at the pane's width, dim."""
    return BrokenLines(text, indent="", style="dim")


def simulated_outcome(
    specs: list[PipelineSpec], width: int, typed_v: int = 1
) -> tuple[Outcome, tuple[list[str], int]]:
    """Simulate ``specs`` here and now and draw them ``width`` columns wide: what the pane
    shows, and the timeline's rows with the width of their stage labels."""
    return outcome_of(simulate_and_draw(specs, width), typed_v)


def outcome_of(
    simulated: list[Simulated], typed_v: int = 1
) -> tuple[Outcome, tuple[list[str], int]]:
    """What the pane shows for schedules simulated and drawn (:func:`simulate_and_draw`), and
    the timeline's rows with the width of their stage labels; ``typed_v`` is the form's v (see
    :func:`_heading`)."""
    figures: list[RenderableType] = []
    details: list[RenderableType] = []
    timeline: list[str] = []
    label_width = len(f"stage {simulated[0][0].spec.stages - 1} ")
    compared = len(simulated) > 1
    for result, drawing in simulated:
        if isinstance(drawing, TimelineDrawing):
            if compared:
                timeline.extend([*([""] if timeline else []), result.spec.schedule])
            timeline.extend(drawing.rows)
        figures.extend([Text(""), bubble_renderable(result, typed_v)])
        details.extend([Text(""), bubble_details(result, drawing, compared)])
    return Outcome(Group(*figures[1:]), details=Group(*details[1:])), (timeline, label_width)


# Drawn in the edge cell of a timeline row that goes on beyond the pane's edge.
MORE_BEFORE = "‹"
MORE_AFTER = "›"


class TimelineView(SidewaysScroll, ScrollView, can_focus=True):
    """Pipeline timelines drawn at whole columns per time unit: never squeezed nor wrapped; when
    wider than the pane they scroll sideways (Tab focuses it; left/right, page up/down, home and
    end, or the mouse), a row's cut edge marked ‹ or ›."""

    DEFAULT_CSS = """
    TimelineView {
        height: auto;
        overflow-x: auto;
        overflow-y: hidden;
        scrollbar-size-horizontal: 1;
    }
    TimelineView:focus { background-tint: $foreground 5%; }
    """

    BINDINGS: ClassVar = [
        Binding("pageup", "page_left", N_("Page left"), show=False),
        Binding("pagedown", "page_right", N_("Page right"), show=False),
    ]

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.lines: list[str] = []
        self.label_width = 0

    def show(self, lines: list[str], label_width: int = 0) -> None:
        """Draw ``lines`` (ASCII); the first ``label_width`` columns of each ``stage`` row stay in
        place while the time axis scrolls. The view re-lays out only when its size changes."""
        size = Size(max((len(line) for line in lines), default=0), len(lines))
        self.lines = lines
        self.label_width = label_width
        shown = self.display
        self.display = bool(lines)
        # Out of view (the form scrolled over it while the learner types), a lookup of this
        # view's region, or a refresh of it or its scroll bar without a region (each asks for
        # its own size), would rebuild the compositor's map of every widget (tui/compositor.py):
        # the width is the one the last layout gave, and the repaints name their regions.
        if in_view(self):
            room = self.scrollable_content_region.width
        else:
            room = (self.outer_size - self.gutter.totals).width if shown else 0
        if (
            size.height == self.virtual_size.height
            and (size.width > room) == (self.virtual_size.width > room)
            and room > 0
        ):
            # Same height and the same scroll bar: a new length of the time axis needs only the
            # scroll bar and a repaint, not a layout of the whole screen (setting virtual_size
            # would ask for one), so typing m in the form stays cheap.
            self.set_reactive(Widget.virtual_size, size)
            self._repaint_time_axis(size)
        else:
            self.virtual_size = size
            self.refresh(layout=True)

    def _repaint_time_axis(self, size: Size) -> None:
        """What ``_scroll_update(size)`` and ``refresh()`` do for a new length of the time axis
        with the scroll bars unchanged, with every repaint given its region: the view may be in
        view and its scroll bar below the fold."""
        self._refresh_scrollbars()  # unchanged: sets nothing
        if self.show_horizontal_scrollbar:
            bar = self.horizontal_scrollbar
            bar.set_reactive(ScrollBar.window_virtual_size, size.width)
            bar.set_reactive(
                ScrollBar.window_size, self.container_size.width - self.scrollbar_size_vertical
            )
            bar.refresh(bar.outer_size.region)
        # Clamped to the new end (m made smaller while scrolled beyond it): a rare scroll, and
        # its lookups, as in _scroll_update.
        self.scroll_x = self.validate_scroll_x(self.scroll_x)
        self.refresh((self.outer_size - self.gutter.totals).region)

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        return len(self.lines)

    def render_line(self, y: int) -> Strip:
        scroll_x = self.scroll_offset.x
        width = self.scrollable_content_region.width
        line = self.lines[y] if y < len(self.lines) else ""
        if line.startswith("stage "):
            label, cells = line[: self.label_width], line[self.label_width :]
            room = width - len(label)
            shown = cells[scroll_x : scroll_x + room]
            # A row cut by the pane's edge says so at that edge (as ``less -S`` does): time
            # goes on to the right (›) or came before the left (‹).
            if shown and scroll_x > 0:
                shown = MORE_BEFORE + shown[1:]
            if shown and len(cells) > scroll_x + room:
                shown = shown[:-1] + MORE_AFTER
            line = label + shown
        strip = Strip([Segment(line, self.rich_style)])
        return strip.crop_extend(0, width, self.rich_style)


class BubblePane(CalculatorPane):
    """Pipeline bubble: stages p, micro-batches m, a schedule; optionally a second to compare."""

    form_name = "bubble"
    HELP = N_(
        "The pipeline bubble. p stages, m micro-batches; t_F, t_B (input gradient) and t_W "
        "(weight gradient) per op, under '▸ op times' below the result. bubble/ideal is "
        "(p-1)/m for GPipe and 1F1B (Megatron-LM, "
        "the Ultra-Scale Playbook); bubble/total is (p-1)/(m+p-1), the share of the iteration "
        "spent idle (GPipe, the Zero-Bubble paper). The timeline shows F, B, W per stage and "
        "idle as '.', at whole columns per time unit so equal ops are equally wide; a wide one "
        "scrolls sideways (Tab to it, then left/right). Pick a second schedule under "
        "'compare with' to see both. F5 widens the pane or gives it back its place."
    )
    FIELDS: ClassVar = (
        Field("schedule", N_("schedule"), "gpipe", options=tuple((s, s) for s in SCHEDULES)),
        Field("stages", N_("stages p"), "4"),
        Field("micro_batches", N_("micro-batches m"), "8"),
        Field("virtual_stages", N_("virtual st. v"), "2", tooltip=N_("interleaved-1f1b only")),
        Field(
            "compare",
            N_("compare with"),
            NONE,
            options=((N_("none"), NONE), *((s, s) for s in SCHEDULES)),
        ),
    )

    def label_of(self, name: str) -> str:
        # The pipeline spec says num_microbatches; the form keeps its stored key.
        return super().label_of("micro_batches" if name == "num_microbatches" else name)

    MORE_TITLE = strings.msgids.BUBBLE_MORE
    MORE_BUTTON = strings.msgids.BUBBLE_MORE_BUTTON
    MORE_FIELDS: ClassVar = (
        Field("t_forward", "t_F", "1"),
        Field("t_backward_input", "t_B", "1"),
        Field("t_backward_weight", "t_W", "1"),
        Field("p2p_time", N_("p2p time"), "0"),
    )

    def __init__(self) -> None:
        super().__init__()
        self._timeline: tuple[list[str], int] = ([], 0)
        # The last form that computed (a simulation in a worker is shown only for it).
        self._good_values: dict[str, str] = {}
        # p, m and v as the last compute saw them (:meth:`compute` names the one changed).
        self._sized_values: dict[str, str] = {}
        # Started on the first large simulation; ended with the pane (and with the app).
        self.simulation_process = SimulationProcess()

    def compose(self) -> ComposeResult:
        for widget in super().compose():
            yield widget
            if isinstance(widget, ResultView) and widget.has_class("calc-details"):
                yield TimelineView(id="timeline")

    def compose_header(self) -> ComposeResult:
        yield Static(strings.BUBBLE_TITLE, classes="section-title")

    def _timeline_width(self) -> int:
        # Room for the vertical scroll bar even before it appears: the timeline's own lines
        # often make the pane overflow.
        scrollbar = 0 if self.show_vertical_scrollbar else self.styles.scrollbar_size_vertical
        return max(MIN_TIMELINE_WIDTH, self.scrollable_content_region.width - 1 - scrollbar)

    def compute(self, values: dict[str, str]) -> Outcome:
        specs = [spec_from_form(values, values["schedule"])]
        if values["compare"] != NONE:
            specs.append(spec_from_form(values, values["compare"]))
        # The size limit on p·m (·v) is said on the one of them the learner just changed, so
        # the message is labelled by the field that was edited, not always by m.
        sizes = ("stages", "micro_batches", "virtual_stages")
        edited = [
            name for name in sizes if self._sized_values.get(name, values[name]) != values[name]
        ]
        self._sized_values = {name: values[name] for name in sizes}
        for spec in specs:
            try:
                check_simulated_size(spec)
            except InputError as error:
                # The bound on p alone stays on p, whichever field was edited.
                if error.field != "stages" and len(edited) == 1:
                    raise error.for_field(edited[0]) from None
                raise
        # A newer good form: a simulation still running is for values no longer shown. (Bad
        # input leaves it running: its figures are the last good result the pane keeps.)
        self.workers.cancel_group(self, SIMULATION_GROUP)
        self._good_values = values
        width = self._timeline_width()
        # v is interleaved 1F1B's alone (spec_from_form): another schedule's heading says so.
        typed_v = self._typed_virtual_stages(values)
        if sum(simulation_cost(spec) for spec in specs) <= INSTANT_COST:
            outcome, self._timeline = simulated_outcome(specs, width, typed_v)
            return outcome
        self._timeline = ([], 0)
        self._simulate(specs, width, dict(values))
        ops = sum(spec.num_ops for spec in specs)
        waiting = Text(strings.BUBBLE_SIMULATING.format(ops=ops), style="dim")
        figures = [closed_form_renderable(spec, typed_v) for spec in specs]
        # The figures say it is simulating; the details (the timeline) wait empty, not a
        # second copy of that line.
        return Outcome(Group(*figures, waiting), details=Text(""))

    @staticmethod
    def _typed_virtual_stages(values: dict[str, str]) -> int:
        """The v typed; 1 when it is not a whole number (no schedule shown uses it then)."""
        try:
            return units.parse_int("virtual_stages", values["virtual_stages"])
        except InputError:
            return 1

    @work(thread=True, exclusive=True, group=SIMULATION_GROUP, exit_on_error=False)
    def _simulate(
        self, specs: list[PipelineSpec], width: int, values: dict[str, str]
    ) -> tuple[dict[str, str], Outcome, tuple[list[str], int]] | None:
        """Simulate ``specs`` off the event loop (see :data:`INSTANT_COST`); the result is shown
        by :meth:`on_worker_state_changed` when the form still holds ``values``."""
        worker = get_current_worker()
        try:
            simulated = self.simulation_process.run(specs, width, lambda: worker.is_cancelled)
        except SimulationCancelled:
            return None
        outcome, timeline = outcome_of(simulated, self._typed_virtual_stages(values))
        return values, outcome, timeline

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        worker = event.worker
        if worker.group != SIMULATION_GROUP or worker.is_cancelled:
            return
        if event.state == WorkerState.ERROR:
            # The spec was checked before the worker started; an error here is the simulator's.
            error = self.query_one(".calc-error", Static)
            error.update(Text(strings.BUBBLE_SIMULATION_FAILED.format(error=worker.error)))
            error.display = True
            return
        if event.state != WorkerState.SUCCESS or worker.result is None:
            return
        values, outcome, timeline = worker.result
        if values != self._good_values:
            return
        self._timeline = timeline
        self.query_one(".calc-result", ResultView).show(outcome.renderable)
        self._queue_details(outcome.details, typing=False)

    def _show_details(self) -> None:
        # The timeline's rows are details too: drawn in the frame after the figures.
        super()._show_details()
        self.query_one("#timeline", TimelineView).show(*self._timeline)

    def recompute(self, by_learner: bool = False, typing: bool | None = None) -> None:
        super().recompute(by_learner, typing)
        if self.last_error and not self._showing_figures:
            self._timeline = ([], 0)  # no result: no timeline either
            self._good_values = {}
            self.workers.cancel_group(self, SIMULATION_GROUP)

    def on_resize(self, event: events.Resize) -> None:
        self.recompute()

    def on_unmount(self) -> None:
        self.workers.cancel_group(self, SIMULATION_GROUP)
        # Ended now; a fresh one (started only when needed) should the pane be mounted again.
        process, self.simulation_process = self.simulation_process, SimulationProcess()
        process.close()
