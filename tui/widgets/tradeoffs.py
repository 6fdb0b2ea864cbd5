"""The Trade-offs pane: step time on a chosen interconnect (exercise 4), throughput against world
size (misconception: world size 翻倍，吞吐必定翻倍), the lesson's three counterexamples on keys
1-3, and the learner's answers to exercises 4 and 5.

The pane turns its two choices into one call of :func:`engine.tradeoffs.tradeoffs_report` (or of
:func:`engine.tradeoffs.run_counterexample` for a scenario) and renders the result; it holds no
formula. The answers are :class:`~tui.widgets.notes.NoteBox` es of kind ``notes`` (ids ``ex4``,
``ex5``); the app saves them in ``LessonProgress.notes``. The pickers' values are remembered where
the lesson was left (``choices``, ``restore_choices``), and the lesson and the learner's notes come
down from the main screen (``show_lesson``, see ``tui.widgets.side``).

Predict, then reveal: the table and the plot answer exercise 4 (which strategies cost more on a
slow interconnect), so while the lesson asks for note ``ex4`` and it is blank they are folded
(``engine.exercises.answer_folded``), until the learner has written it and left its box, or has
chosen to look first (ctrl+r and a confirmation; recorded as looked before answering). Nothing
is computed while they are folded.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from typing import Any

from rich.console import Console, ConsoleOptions, Group, RenderableType, RenderResult
from rich.padding import Padding
from rich.table import Table
from rich.text import Text
from textual import events, on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.timer import Timer
from textual.widget import Widget
from textual.widgets import Button, Label, Select, Static, TextArea
from textual.worker import Worker, WorkerState

from engine import units
from engine.errors import InputError
from engine.exercises import answer_folded
from engine.i18n import N_, current_language, gettext
from engine.lesson import Item
from engine.linebreak import break_text, unbreakable
from engine.model_presets import get_preset, model_presets
from engine.scaling import ScalingPlot, scaling_plot
from engine.steptime import INTERCONNECTS
from engine.tradeoffs import (
    COUNTEREXAMPLES,
    TRADEOFFS_BASE,
    TRADEOFFS_BATCHES,
    TRADEOFFS_LINK,
    TRADEOFFS_SEQS,
    TRADEOFFS_WORLD,
    TRADEOFFS_WORLDS,
    TradeoffsReport,
    explanation_text,
    memory_terms,
    run_counterexample,
    tradeoffs_base,
    tradeoffs_report,
)
from tui import strings
from tui.commands import labelled
from tui.widgets.calculator import ResultView
from tui.widgets.notes import NoteBox, keep_focus_in_view
from tui.widgets.picker import Picker
from tui.widgets.reader import BrokenLines, ZoomHint
from tui.widgets.scrolling import FocusFollowsScroll
from tui.widgets.side import ChoicesChanged, OpenedLesson
from tui.widgets.study import AnswerLooked, PaneExercises

# The note whose answer the table and the plot are (exercise 4: the slow-interconnect judgement).
ANSWERED_NOTE = "ex4"
# Exercise note id -> the lesson item whose text labels it.
EXERCISE_NOTES: tuple[tuple[str, str], ...] = (
    ("ex4", "exercise-slow-interconnect"),
    ("ex5", "exercise-real-factor"),
)
# The pickers whose values are remembered where the lesson was left (ids tradeoffs-<name>).
PICKERS = ("link", "world", "model", "batch", "seq")
PLOT_HEIGHT = 10
# The report (tens of ms for the largest models) is computed in a worker thread; when it takes
# longer than this, the pane says it is working on the new choice (seconds).
BUSY_AFTER_S = 0.1
REPORT_GROUP = "tradeoffs-report"
MIN_PLOT_WIDTH = 26
# Each strategy's colour in the scaling plot and its legend (the marker letters tell them apart
# without colour too).
SERIES_STYLES = {
    "dp": "bold blue",
    "zero1": "bold cyan",
    "zero2": "bold cyan",
    "zero3": "bold magenta",
    "tp": "bold yellow",
    "pp": "bold green",
    "cp": "bold red",
    "ep": "bold white",
}


def _seconds(value: float) -> str:
    """Three significant digits, so the table fits the 28-column side pane."""
    for suffix, scale in (("s", 1.0), ("ms", 1e-3), ("us", 1e-6)):
        if value >= scale:
            return f"{value / scale:.3g} {suffix}"
    return "0 s" if value == 0 else f"{value / 1e-9:.3g} ns"


def _dim_text(text: str, width: int) -> Text:
    """``text`` broken by the lesson's rules at ``width`` (Rich's wrap parts a number from its
    unit: ``（50`` / ``GB/s）``), dimmed."""
    lines = (line.rstrip(" ") for line in break_text(text, max(width, 1)))
    return Text("\n".join(lines), style="dim")


class DrawnAtWidth:
    """A Rich renderable made by ``make(width)`` for the width it is drawn at, whenever that is
    (the last one kept). Made for a width read from the pane beforehand, the lines and the plot
    were wrapped again, mid-phrase, when the pane's scroll bar appeared below the report (Textual
    sends no Resize for that); a Static or a ResultView draws this again when its width
    changes."""

    def __init__(self, make: Callable[[int], RenderableType]) -> None:
        self._make = make
        self._made: tuple[int, RenderableType] | None = None

    def at(self, width: int) -> RenderableType:
        """What is drawn ``width`` cells wide."""
        if self._made is None or self._made[0] != width:
            self._made = (width, self._make(width))
        return self._made[1]

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        yield self.at(options.max_width)


def _room(width: int) -> int:
    """The width the report and the counterexamples are made for in ``width`` cells (one cell
    short of the edge, at least the plot's least width)."""
    return max(MIN_PLOT_WIDTH, width - 1)


def report_view(report: TradeoffsReport) -> DrawnAtWidth:
    """:func:`report_renderable` at the width it is drawn at."""
    return DrawnAtWidth(lambda width: report_renderable(report, _room(width)))


def report_renderable(report: TradeoffsReport, width: int) -> RenderableType:
    """The growth table (exercise 4) and the scaling plot, ``width`` cells wide."""
    table = Table(box=None, pad_edge=False, show_edge=False, padding=(0, 1, 0, 0))
    table.add_column(strings.TRADEOFFS_COL_STRATEGY, no_wrap=True)
    table.add_column(strings.TRADEOFFS_COL_STEP, justify="right", no_wrap=True)
    table.add_column(strings.TRADEOFFS_COL_EXPOSED, justify="right", no_wrap=True)
    table.add_column(strings.TRADEOFFS_COL_GROWTH, justify="right", no_wrap=True)
    for row in report.rows:
        if row.chosen is None:
            table.add_row(row.strategy, "-", "-", strings.TRADEOFFS_SKIPPED)
            continue
        table.add_row(
            row.strategy,
            _seconds(row.chosen.t_step_s),
            _seconds(row.chosen.t_comm_exposed_s),
            f"x{row.growth:.3g}",
        )
    plot = scaling_plot(report.series, max(MIN_PLOT_WIDTH, width), PLOT_HEIGHT)
    efficiency = "  ".join(
        f"{s.strategy} {s.points[-1].efficiency:.2f}"
        for s in report.series
        if not s.points[-1].skipped
    )
    title = strings.TRADEOFFS_TABLE_TITLE.format(
        world=report.world, link=gettext(report.interconnect.label)
    )
    return Group(
        Text(strings.TRADEOFFS_ASSUMPTIONS, style="bold"),
        _dim_text("\n".join(report.assumptions), width),
        Text(""),
        Text(title, style="bold"),
        table,
        _dim_text(strings.TRADEOFFS_GROWTH_NOTE, width),
        Text(""),
        Text(strings.TRADEOFFS_PLOT_TITLE, style="bold"),
        plot_renderable(plot),
        Text(strings.TRADEOFFS_EFFICIENCY.format(values=efficiency), style="dim"),
    )


def plot_renderable(plot: ScalingPlot) -> Text:
    """The scaling plot with each strategy's markers and legend entry in its colour, and the
    cells several strategies share in reverse video (the lines below the legend name them)."""
    text = Text()
    offsets = []
    for line in plot.lines:
        offsets.append(len(text))
        text.append(line + "\n")
    for row, start, end, strategy in plot.marks:
        text.stylize(SERIES_STYLES.get(strategy, "bold"), offsets[row] + start, offsets[row] + end)
    for row, column in plot.shared:
        text.stylize("bold reverse", offsets[row] + column, offsets[row] + column + 1)
    text.rstrip()
    return text


# Below this width the six columns of a counterexample do not fit: one block per case instead.
MIN_SCENARIO_TABLE_WIDTH = 60


def scenario_renderable(index: int, width: int = MIN_SCENARIO_TABLE_WIDTH) -> RenderableType:
    """Counterexample ``index`` (0-2): the lesson's words, its figures, the explanation, in
    the interface language; a table when ``width`` (cells) has room for it, else one block per
    case."""
    return _scenario_renderable(index, width, current_language())


@functools.cache
def scenario_view(index: int, language: str) -> DrawnAtWidth:
    """Counterexample ``index`` as a table or as blocks, whichever the width it is drawn at has
    room for (two cache entries per counterexample and language)."""

    def make(width: int) -> RenderableType:
        narrow = _room(width) < MIN_SCENARIO_TABLE_WIDTH
        return _scenario_renderable(index, 0 if narrow else MIN_SCENARIO_TABLE_WIDTH, language)

    return DrawnAtWidth(make)


@functools.cache
def _scenario_renderable(index: int, width: int, language: str) -> RenderableType:
    """:func:`scenario_renderable`, cached per language: the three step-time models are fixed,
    and keys 1-3 flip between them."""
    example = COUNTEREXAMPLES[index]
    results = run_counterexample(example)
    headers = (
        strings.TRADEOFFS_COL_STEP,
        strings.TRADEOFFS_COL_EXPOSED,
        strings.TRADEOFFS_COL_WAIT,
        strings.TRADEOFFS_COL_EFFICIENCY,
        strings.TRADEOFFS_COL_FITS,
    )
    rows: list[tuple[str, tuple[str, ...]]] = []
    for result in results:
        step = result.step
        if result.fits is None or result.memory_bytes is None:
            fits = "-"
        else:
            verdict = gettext("yes") if result.fits else gettext("NO")
            fits = f"{verdict} {units.format_gb(result.memory_bytes, 0)}"
        cells = (
            _seconds(step.t_step_s),
            _seconds(step.t_comm_exposed_s),
            _seconds(step.t_sync_wait_s),
            f"{result.efficiency:.2f}",
            fits,
        )
        rows.append((gettext(result.case.label), cells))
    figures: list[RenderableType] = []
    if width >= MIN_SCENARIO_TABLE_WIDTH:
        table = Table(box=None, pad_edge=False, show_edge=False)
        table.add_column(strings.TRADEOFFS_COL_CASE)
        for header in headers:
            table.add_column(header, justify="right", no_wrap=True)
        for label, row_cells in rows:
            table.add_row(Text(label), *row_cells)
        figures.append(table)
    else:
        for label, row_cells in rows:
            # One figure a line, its name beside it: a wrapped run of pairs split "0 s".
            grid = Table.grid(padding=(0, 1))
            grid.add_column()
            grid.add_column()
            for header, cell in zip(headers, row_cells, strict=True):
                grid.add_row(Text(header), Text(cell))
            figures.append(Text(label, style="bold"))
            figures.append(Padding(grid, (0, 0, 0, 2)))
    checked = [r for r in results if r.memory is not None]
    if checked:
        # The column's figure is the whole GPU, not the model states the explanation starts
        # from: each case's sum, term by term, so the learner can check it. Broken where drawn
        # (``width`` is a cache key), never between a figure and its unit.
        figures.append(BrokenLines(strings.TRADEOFFS_MEMORY_NOTE, indent="", style="dim"))
        for r in checked:
            assert r.memory is not None
            line = strings.TRADEOFFS_MEMORY_CASE.format(
                case=gettext(r.case.label), terms=memory_terms(r.memory)
            )
            figures.append(BrokenLines(line, style="dim"))
    parts: list[RenderableType] = [
        Text(f"{index + 1}. {example.title}", style="bold"),
        Text(f"「{example.quote}」", style="italic"),
        *figures,
        BrokenLines(explanation_text(example, results), indent=""),
    ]
    dropped = [r for r in results if r.step.moe is not None and r.step.moe.dropped_share > 0]
    for r in dropped:
        assert r.step.moe is not None
        parts.append(
            Text(
                strings.TRADEOFFS_DROPPED.format(
                    case=gettext(r.case.label), share=r.step.moe.dropped_share
                ),
                style="dim",
            )
        )
    return Group(*parts)


# The step spec's fields that the pickers set, by the picker's label.
_PICKER_LABELS = {
    "interconnect": strings.msgids.TRADEOFFS_LINK,
    "gpus": strings.msgids.TRADEOFFS_WORLD,
    "model": strings.msgids.TRADEOFFS_MODEL,
    "global_batch": strings.msgids.TRADEOFFS_BATCH,
    "seq": strings.msgids.TRADEOFFS_SEQ,
}


def picker_error(error: InputError) -> str:
    """``error`` naming the pickers by their labels (the engine names its spec fields)."""

    def name_of(key: str) -> str:
        return strings.FIELD_NAMED.format(label=unbreakable(gettext(_PICKER_LABELS.get(key, key))))

    return gettext("{field}: {message}").format(
        field=unbreakable(gettext(_PICKER_LABELS.get(error.field, error.field))),
        message=error.naming(name_of),
    )


class TradeoffsPane(FocusFollowsScroll, VerticalScroll):
    """Step time and scaling on a chosen interconnect; counterexamples; exercises 4 and 5."""

    HELP = N_(
        "Trade-offs: choose the interconnect and the number of GPUs; the table shows each "
        "strategy's step time and how much it grew against NVLink-class links (exercise 4). "
        "The plot shows tokens/s against GPUs with '.' for perfect linear scaling: doubling the "
        "GPUs does not double throughput once communication is not hidden. Keys 1, 2, 3 show the "
        "lesson's counterexamples (the focus must not be in a text box). Write your answers to "
        "exercises 4 and 5 below; they are saved as you type. Pick the model, the global batch "
        "and the sequence length (default: the lesson's 1B-class GPT, 24 layers, h 2048, about "
        "1.3B; batch 64; s 2048); A100 peak at 50%. The counterexamples keep their own models. "
        "The model, batch, sequence, device and links the figures assume are listed above them. "
        "The plot is log-log: linear scaling is the straight '.' line; '*' marks a cell several "
        "strategies share. The table and the plot answer exercise 4, so they are folded until "
        "you have written your judgement (and left its box); ctrl+r shows them first, recorded "
        "as looked before answering."
    )
    BINDINGS = [
        Binding("1", "scenario(0)", strings.msgids.TRADEOFFS_KEY_1, id="scenario_1"),
        Binding("2", "scenario(1)", strings.msgids.TRADEOFFS_KEY_2, id="scenario_2"),
        Binding("3", "scenario(2)", strings.msgids.TRADEOFFS_KEY_3, id="scenario_3"),
        Binding("ctrl+r", "look_first", strings.msgids.LOOK_KEY, id="tradeoffs_look"),
    ]

    def __init__(self) -> None:
        super().__init__(classes="calculator", id="tradeoffs-pane")
        self.scenario: int | None = None
        # The learner chose to see the answer first in this pane (the app records it).
        self._shown_first = False
        # The choices of the report being computed (None: none is wanted).
        self._wanted: tuple[str, int, str, int, int] | None = None
        self._busy_timer: Timer | None = None
        # What the main screen handed down (show_lesson, restore_choices): shown once mounted.
        self.opened = OpenedLesson()
        self._wanted_choices: Mapping[str, Any] = {}

    def compose(self) -> ComposeResult:
        yield Static(strings.TRADEOFFS_TITLE, classes="section-title")
        yield PaneExercises("tradeoffs", self.opened.lesson, self.opened.progress)
        for label, select_id, options, value in self._pickers(self._wanted_choices):
            with Horizontal(classes="form-row"):
                yield Label(label, classes="form-label")
                yield Picker(
                    options,
                    value=value,
                    allow_blank=False,
                    id=select_id,
                    compact=True,
                    classes="form-field",
                )
        busy = Static(strings.TRADEOFFS_BUSY, id="tradeoffs-busy", classes="hint")
        busy.display = False  # shown only while a report takes longer than BUSY_AFTER_S
        yield busy
        yield Static("", id="tradeoffs-result")
        yield ZoomHint(strings.TRADEOFFS_SCENARIO_HINT)
        with Horizontal(classes="form-row scenario-buttons"):
            for number in range(1, len(COUNTEREXAMPLES) + 1):
                yield Button(str(number), id=f"scenario-{number}", compact=True)
        yield ResultView("", id="tradeoffs-scenario")
        for note_id, _item in EXERCISE_NOTES:
            label = strings.TRADEOFFS_NOTE_LABELS[note_id]
            yield NoteBox("notes", Item(note_id, label), "", label, strings.REFLECTION_PLACEHOLDER)

    @staticmethod
    def _pickers(chosen: Mapping[str, Any]) -> list[tuple[str, str, list[tuple[str, str]], str]]:
        """Each picker: label, id, options (label, value) and its value: the one in ``chosen``
        (where the lesson was left) when it is still an option, else the default."""
        pickers = []
        for name, label, options, default in (
            (
                "link",
                strings.TRADEOFFS_LINK,
                [(gettext(link.picker_label), key) for key, link in INTERCONNECTS.items()],
                TRADEOFFS_LINK,
            ),
            (
                "world",
                strings.TRADEOFFS_WORLD,
                [(str(n), str(n)) for n in TRADEOFFS_WORLDS],
                str(TRADEOFFS_WORLD),
            ),
            (
                "model",
                strings.TRADEOFFS_MODEL,
                [(preset.picker_title, name) for name, preset in model_presets().items()],
                str(TRADEOFFS_BASE.model),
            ),
            (
                "batch",
                strings.TRADEOFFS_BATCH,
                [(str(n), str(n)) for n in TRADEOFFS_BATCHES],
                str(TRADEOFFS_BASE.global_batch),
            ),
            (
                "seq",
                strings.TRADEOFFS_SEQ,
                [(str(n), str(n)) for n in TRADEOFFS_SEQS],
                str(TRADEOFFS_BASE.seq),
            ),
        ):
            wanted = chosen.get(name)
            known = any(wanted == value for _label, value in options)
            value = str(wanted) if known else default
            pickers.append((label, f"tradeoffs-{name}", options, value))
        return pickers

    def choices(self) -> dict[str, Any]:
        """What is remembered where the lesson was left: the five pickers' values."""
        return {name: str(self.query_one(f"#tradeoffs-{name}", Select).value) for name in PICKERS}

    def restore_choices(self, choices: Mapping[str, Any]) -> None:
        """Set the pickers to ``choices`` (a value that is no option any more: the default),
        once mounted."""
        self._wanted_choices = choices
        if self.is_mounted:
            self._set_pickers()
            self.refresh_report()

    def _set_pickers(self) -> None:
        with self.prevent(Select.Changed):
            for _label, select_id, _options, value in self._pickers(self._wanted_choices):
                self.query_one(f"#{select_id}", Select).value = value

    def on_mount(self) -> None:
        # The choices handed down since the pickers were composed, then the learner's saved
        # answers (the report follows them: it is folded while exercise 4 is not written).
        self._set_pickers()
        self._show_opened()

    def show_lesson(self, opened: OpenedLesson) -> None:
        """Show the learner's answers of ``opened``, labelled with its lesson's exercises
        (once mounted)."""
        self.opened = opened
        if self.is_mounted:
            self._show_opened()

    def _show_opened(self) -> None:
        self.query_one(PaneExercises).show_lesson(self.opened.lesson, self.opened.progress)
        self._show_notes(self.opened.progress.notes)

    def first_focus(self) -> Widget | None:
        """The widget the pane's key focuses first: the link selector."""
        return self.query_one("#tradeoffs-link", Select)

    @property
    def folded(self) -> bool:
        """Whether the table and the plot are folded now (see module docstring)."""
        lesson, progress = self.opened.lesson, self.opened.progress
        if self._shown_first or lesson is None:
            return False
        box = self._note_box(ANSWERED_NOTE)
        text = box.text_area.text if box is not None and box.is_mounted else None
        return answer_folded(ANSWERED_NOTE, lesson, progress, text)

    def _note_box(self, note_id: str) -> NoteBox | None:
        return next((box for box in self.query(NoteBox) if box.item.id == note_id), None)

    def refresh_report(self) -> None:
        """Recompute the table and the plot from the choices (when not folded), in a worker:
        the last result stays on screen until the new one is drawn."""
        self.workers.cancel_group(self, REPORT_GROUP)
        if self.folded:
            self._wanted = None
            self._set_busy(False)
            self.query_one("#tradeoffs-result", Static).update(Text(strings.FOLDED_TRADEOFFS))
            return
        choices = (
            str(self.query_one("#tradeoffs-link", Select).value),
            int(str(self.query_one("#tradeoffs-world", Select).value)),
            str(self.query_one("#tradeoffs-model", Select).value),
            int(str(self.query_one("#tradeoffs-batch", Select).value)),
            int(str(self.query_one("#tradeoffs-seq", Select).value)),
        )
        self._wanted = choices
        self._compute_report(choices)
        if self._busy_timer is None:
            self._busy_timer = self.set_timer(BUSY_AFTER_S, lambda: self._set_busy(True))

    @work(thread=True, exclusive=True, group=REPORT_GROUP, exit_on_error=False)
    def _compute_report(
        self, choices: tuple[str, int, str, int, int]
    ) -> tuple[tuple[str, int, str, int, int], RenderableType]:
        """The report for ``choices``, made for the width it is drawn at (a worker thread)."""
        link, world, model, batch, seq = choices
        try:
            report = tradeoffs_report(link, world, tradeoffs_base(model, batch, seq))
        except InputError as error:
            # A choice the model cannot take (a sequence beyond its positions): say which.
            return choices, Text(labelled(get_preset(model).shown_title, picker_error(error)))
        return choices, report_view(report)

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        worker = event.worker
        if worker.group != REPORT_GROUP or worker.is_cancelled:
            return
        result = self.query_one("#tradeoffs-result", Static)
        if event.state == WorkerState.ERROR:
            self._set_busy(False)
            result.update(Text(strings.TRADEOFFS_FAILED.format(error=worker.error)))
        elif event.state == WorkerState.SUCCESS and worker.result is not None:
            wanted, renderable = worker.result
            if wanted == self._wanted:
                self._set_busy(False)
                result.update(renderable)
                # The report above the note boxes changed height after the focus moved.
                keep_focus_in_view(self)

    def _set_busy(self, busy: bool) -> None:
        """Show or hide the line that says a new report is being computed."""
        if not busy and self._busy_timer is not None:
            self._busy_timer.stop()
        self._busy_timer = None
        line = self.query_one("#tradeoffs-busy", Static)
        if line.display != busy:
            line.display = busy

    @on(
        Select.Changed,
        "#tradeoffs-link, #tradeoffs-world, #tradeoffs-model, #tradeoffs-batch, #tradeoffs-seq",
    )
    def _choice_changed(self, event: Select.Changed) -> None:
        event.stop()
        self.refresh_report()
        self.post_message(ChoicesChanged())

    @on(events.DescendantBlur)
    def _left_a_box(self, event: events.DescendantBlur) -> None:
        # The judgement written and left: the table and the plot unfold (not while typed).
        if isinstance(event.widget, TextArea):
            self.refresh_report()
            keep_focus_in_view(self)

    def action_look_first(self) -> None:
        """ctrl+r: show the table and the plot before writing exercise 4, once confirmed."""
        from tui.widgets.confirm import ConfirmScreen

        if not self.folded:
            self.notify(strings.NOTHING_FOLDED)
            return
        label = strings.TRADEOFFS_NOTE_LABELS[ANSWERED_NOTE]
        question = strings.LOOK_FIRST_QUESTION.format(notes=label)

        def answered(yes: bool | None) -> None:
            if yes:
                self.post_message(AnswerLooked([ANSWERED_NOTE]))
                self._shown_first = True
                self.refresh_report()
                self._label_notes()

        self.app.push_screen(ConfirmScreen(question), answered)

    async def study_target(self, note_id: str) -> Widget | None:
        """The note box of ``note_id`` (ctrl+n puts the cursor there); the first choice when
        the note is not one of this pane's."""
        box = self._note_box(note_id)
        return box.text_area if box is not None else self.query_one("#tradeoffs-link")

    @on(Button.Pressed)
    def _scenario_pressed(self, event: Button.Pressed) -> None:
        if event.button.id and event.button.id.startswith("scenario-"):
            event.stop()
            self.action_scenario(int(event.button.id.removeprefix("scenario-")) - 1)

    def action_scenario(self, index: int) -> None:
        """Show counterexample ``index`` (0-2) below the buttons."""
        self.scenario = index
        widget = self.query_one("#tradeoffs-scenario", ResultView)
        # Flipping between the three never shrinks the view, so the notes below do not jump.
        widget.show(scenario_view(index, current_language()), typing=True, fixed=True)
        widget.scroll_visible(animate=False)

    def _show_notes(self, notes: dict[str, str]) -> None:
        """Show the learner's saved answers, labelled with the lesson's exercise text."""
        self._shown_first = False
        for box in self.query(NoteBox):
            area = box.text_area
            text = notes.get(box.item.id, "")
            if area.text != text:
                area.load_text(text)
        self._label_notes()
        self.refresh_report()

    def _label_notes(self) -> None:
        lesson, progress = self.opened.lesson, self.opened.progress
        items: dict[str, str] = {}
        if lesson is not None:
            try:
                items = {item.id: item.text for item in lesson.section("exercises").items}
            except KeyError:
                items = {}
        for box in self.query(NoteBox):
            note_id = box.item.id
            item_id = dict(EXERCISE_NOTES).get(note_id, "")
            label = strings.TRADEOFFS_NOTE_LABELS.get(note_id, note_id)
            if item_id in items:
                label = labelled(label, items[item_id])
            looked = progress.looked_before_answering(note_id)
            if looked or (note_id == ANSWERED_NOTE and self._shown_first):
                label = gettext("{label} ({mark})").format(label=label, mark=strings.LOOKED_MARK)
            box.set_label(label)
