"""The Collectives tab: step through a collective's data flow, and its cost at a chosen size.

``engine.collectives`` simulates the data flow (small integers on each rank, which a learner can
add up) and prices it with the alpha-beta model and NCCL-tests' bus-bandwidth factors;
``engine.diagrams`` draws one step. This pane holds no formula: it shows both, literally. Its
form is saved with the lesson's progress; the step shown is remembered where the lesson was left
(``choices``, ``restore_choices``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from rich.console import Group, RenderableType
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import ScrollableContainer
from textual.message import Message
from textual.widgets import Static

from engine import units
from engine.collectives import (
    ALGORITHM_ALIASES,
    ALGORITHMS,
    COST_ONLY_ALGORITHMS,
    MAX_COST_RANKS,
    OPERATIONS,
    CollectiveCost,
    collective_cost,
    is_simulated,
)
from engine.diagrams import MAX_DIAGRAM_RANKS, collective_diagram_parts, collective_step_count
from engine.errors import InputError, quoted
from engine.i18n import N_, gettext, ngettext
from tui import strings
from tui.widgets.calculator import CalculatorPane, Field, FieldChecks, Outcome
from tui.widgets.diagrams import mark_roomy
from tui.widgets.fit import Column, FigureTable
from tui.widgets.reader import BrokenText
from tui.widgets.side import ChoicesChanged

DEFAULT = "default"
# collective_cost's argument -> the form field that gives it.
_PANE_FIELDS = {
    "size_bytes": "bytes",
    "bandwidth_bytes_per_s": "bandwidth",
    "latency_s": "latency",
}
_ALL_ALGORITHMS = tuple(
    dict.fromkeys(
        a for table in (ALGORITHMS, COST_ONLY_ALGORITHMS) for names in table.values() for a in names
    )
)


class StepView(Static, can_focus=True):
    """The data-flow picture; left/right move one step, home/end to the first/last."""

    BINDINGS: ClassVar = [
        Binding("left", "step(-1)", N_("Prev step"), id="collective_prev"),
        Binding("right", "step(1)", N_("Next step"), id="collective_next"),
        Binding("home", "step(-1000000)", N_("First"), show=False, id="collective_first"),
        Binding("end", "step(1000000)", N_("Last"), show=False, id="collective_last"),
    ]

    class Stepped(Message):
        def __init__(self, delta: int) -> None:
            super().__init__()
            self.delta = delta

    def action_step(self, delta: int) -> None:
        self.post_message(self.Stepped(delta))

    def on_focus(self) -> None:
        # The picture is taller than the pane at 80x24: bring its top into view.
        self.scroll_visible(top=True, animate=False)


def cost_renderable(cost: CollectiveCost, op: str, ranks: int) -> RenderableType:
    """The alpha-beta time, bytes sent and both bandwidths, with formula and source."""
    table = FigureTable(Column(), Column(justify="right"), show_header=False)
    table.add_row(gettext("time"), units.format_seconds(cost.time_s))
    table.add_row(gettext("sent per rank"), units.format_bytes(cost.bytes_sent_per_rank))
    for label, rate in (("algbw S/t", cost.algbw_bytes_per_s), ("busbw", cost.busbw_bytes_per_s)):
        table.add_row(label, "-" if rate is None else units.format_rate(rate))
    table.add_row(gettext("busbw factor"), f"{cost.bus_bandwidth_factor:.4g}")
    table.add_row(gettext("steps"), str(cost.steps))
    return Group(
        Text(
            ngettext(
                "{op}, {algorithm}, {ranks} rank", "{op}, {algorithm}, {ranks} ranks", ranks
            ).format(op=op, algorithm=cost.algorithm, ranks=ranks),
            style="bold",
        ),
        table,
        Text(gettext("formula: {formula}").format(formula=cost.formula), style="dim"),
        Text(gettext("source: {source}").format(source=cost.source), style="dim"),
    )


class CollectivesPane(CalculatorPane):
    """A collective on R ranks: its cost, and its data flow step by step."""

    form_name = "collectives"
    STUDY_PANE = "collectives"
    HELP = N_(
        "Pick a collective and an algorithm (default: the first the engine lists for it), the "
        "number of ranks, the size S (for all-gather and reduce-scatter S is the whole array, as "
        "NCCL-tests counts it), the link bandwidth and the latency per message. The cost is the "
        "alpha-beta time (MPICH algorithm notes) with algorithm and bus bandwidth (NCCL-tests). "
        "Below, each rank's buffer as small integers: focus the picture (ctrl+y, from anywhere "
        "in the pane) and press left and right to move one step, home and end for the first and "
        "last; '+' marks a slot that was added into, '*' one copied in."
    )
    # The picture is below the form, six fields away with Tab: one key goes to it. ctrl+y is
    # taken by no text field (Textual's Input), nor by the app or tmux.
    BINDINGS: ClassVar = [
        Binding("ctrl+y", "focus_diagram", N_("Diagram"), id="collective_diagram"),
    ]
    FIELDS: ClassVar = (
        Field("op", N_("collective"), "all-reduce", options=tuple((op, op) for op in OPERATIONS)),
        Field(
            "algorithm",
            N_("algorithm"),
            DEFAULT,
            options=((N_("default"), DEFAULT), *((a, a) for a in _ALL_ALGORITHMS)),
        ),
        Field("ranks", N_("ranks R"), "4"),
        Field("bytes", N_("size S"), "1GB", tooltip=N_("1e9, 1GB, 1GiB")),
        Field("bandwidth", N_("bandwidth"), "100GB/s", tooltip=N_("100GB/s, 400Gb/s")),
        Field("latency", N_("latency"), "5us", tooltip=N_("alpha per message: 5us")),
    )

    def __init__(self) -> None:
        super().__init__()
        self.step = 0
        self.step_count = 0
        self._flow_key: tuple[str, str | None, int] | None = None
        # The step handed down before the flow was first drawn (see restore_choices).
        self._wanted_step: int | None = None

    def compose_header(self) -> ComposeResult:
        yield Static(strings.COLLECTIVES_TITLE, classes="section-title")

    def action_focus_diagram(self) -> None:
        """Focus the data-flow picture (it scrolls its top into view), whose arrows step; with
        no picture drawn (more ranks than it draws, one rank, an algorithm not simulated), say
        why under the form, where the focus stays: the footer offered steps for none."""
        if not self.query_one("#flow-scroll").display:
            self.say(self.query_one("#flow-caption", BrokenText).text, warning=True)
            return
        self.query_one("#flow", StepView).focus(scroll_visible=False)

    def on_resize(self) -> None:
        mark_roomy(self)

    def restore(self, values: dict[str, str], last_good: dict[str, str] | None = None) -> None:
        super().restore(
            _current_names(values), None if last_good is None else _current_names(last_good)
        )
        if self._wanted_step is not None:  # the step where the lesson was left
            step, self._wanted_step = self._wanted_step, None
            self._show_step(step)

    def compose_footer(self) -> ComposeResult:
        yield BrokenText(strings.COLLECTIVE_STEP_HINT, classes="hint")
        # The picture itself takes focus (its arrows step); the container would take the arrows.
        with ScrollableContainer(id="flow-scroll", can_focus=False):
            yield StepView("", markup=False, id="flow", classes="diagram")
        # The caption (what the marks mean, what was done) and any message in place of a
        # picture: prose broken at the pane's width, never cut by the sideways scroll.
        yield BrokenText("", id="flow-caption")

    def compute(self, values: dict[str, str]) -> Outcome:
        op = values["op"]
        algorithm = None if values["algorithm"] == DEFAULT else values["algorithm"]
        # Each field parsed on its own, so that every refused one is named at once. The engine's
        # bound on R is checked here too, so its message shows R as the learner typed it.
        checks = FieldChecks()
        ranks = checks.parse(
            lambda: units.parse_int("ranks", values["ranks"], minimum=1, maximum=MAX_COST_RANKS),
            1,
        )
        size = checks.parse(lambda: units.parse_bytes("bytes", values["bytes"]), 0.0)
        rate = checks.parse(lambda: units.parse_rate("bandwidth", values["bandwidth"]), 0.0)
        latency = checks.parse(lambda: units.parse_time("latency", values["latency"]), 0.0)
        checks.check()
        try:
            cost = collective_cost(op, ranks, size, rate, latency, algorithm)
        except InputError as error:
            # The engine names its arguments (size_bytes); the message names the form's field.
            raise error.for_field(_PANE_FIELDS.get(error.field, error.field)) from None
        key = (op, algorithm, ranks)
        if key != self._flow_key:
            # Only a new op, algorithm or rank count changes the picture; redrawing it on every
            # key (bytes, bandwidth) would re-lay out the screen for nothing.
            self._flow_key = key
            self.step = 0
            self._draw_flow()
        shown = cost_renderable(cost, op, ranks)
        if not units.has_unit(values["bandwidth"]):
            # A bare number is bytes per second (as the command line reads it): 100 meant as
            # 100 GB/s would price an all-reduce at months; say how it was read.
            note = strings.BANDWIDTH_WITHOUT_UNIT.format(
                typed=quoted(values["bandwidth"].strip()), rate=units.format_rate(rate)
            )
            shown = Group(Text(note, style="bold"), shown)
        return Outcome(shown)

    def _draw_flow(self) -> None:
        assert self._flow_key is not None
        op, algorithm, ranks = self._flow_key
        if ranks > MAX_DIAGRAM_RANKS:
            self.step_count = self.step = 0
            self._show_flow("", strings.COLLECTIVE_TOO_MANY.format(limit=MAX_DIAGRAM_RANKS))
            return
        if ranks < 2:
            self.step_count = self.step = 0
            self._show_flow("", strings.COLLECTIVE_ONE_RANK)
            return
        if not is_simulated(op, algorithm):
            self.step_count = self.step = 0
            self._show_flow("", strings.COLLECTIVE_NOT_SIMULATED.format(algorithm=algorithm))
            return
        self.step_count = collective_step_count(op, ranks, algorithm)
        self.step = max(0, min(self.step, self.step_count))
        self._show_flow(*collective_diagram_parts(op, self.step, ranks, algorithm))

    def _show_flow(self, picture: str, caption: str) -> None:
        """Draw ``picture`` (none: its scrolling box is hidden) and ``caption`` under it."""
        self.query_one("#flow", StepView).update(picture)
        self.query_one("#flow-scroll").display = bool(picture)
        self.query_one("#flow-caption", BrokenText).update(caption)

    def on_step_view_stepped(self, event: StepView.Stepped) -> None:
        event.stop()
        # No picture drawn (too many ranks, one rank, an algorithm not simulated): no step to
        # move to; home and end would otherwise count the step out to +-1,000,000.
        if self._flow_key is None or self.last_error or not self.step_count:
            return
        self.step += event.delta
        self._draw_flow()
        self.post_message(ChoicesChanged())

    def choices(self) -> dict[str, Any]:
        """What is remembered where the lesson was left: the step of the data flow shown."""
        return {"step": self.step}

    def restore_choices(self, choices: Mapping[str, Any]) -> None:
        """Show the step of ``choices`` (clamped to the flow's steps; none drawn: nothing);
        before the pane is mounted, once its form is shown."""
        step = choices.get("step", 0)
        if not isinstance(step, int):
            return
        if not self.is_mounted:
            self._wanted_step = step
            return
        self._show_step(step)

    def _show_step(self, step: int) -> None:
        if self._flow_key is None or self.last_error:
            return
        self.step = step
        self._draw_flow()


def _current_names(values: dict[str, str]) -> dict[str, str]:
    """A form saved when binomial was called tree: under its current name."""
    aliases = ALGORITHM_ALIASES.get(values.get("op", ""), {})
    algorithm = values.get("algorithm", DEFAULT)
    if algorithm in aliases:
        return {**values, "algorithm": aliases[algorithm]}
    return values
