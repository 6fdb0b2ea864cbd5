"""The Diagrams pane: each strategy's 4-rank ASCII diagram, drawn by ``engine.diagrams``, and the
learner's exercise 2 and 3 notes for it.

The text comes from the engine's structured strategy descriptions, so the picture can never
disagree with the calculators; this pane only shows it, literally (``markup=False``). The
strategy shown is remembered where the lesson was left (``choices``, ``restore_choices``), and the
lesson and the learner's notes come down from the main screen (``show_lesson``, see
``tui.widgets.side``).

Predict, then reveal: where the lesson's exercises ask for a strategy's notes (S15: what DP,
FSDP, TP and PP split, their collectives and one wait), the parts of the diagram that answer them
are folded until the learner has written the note (``engine.exercises.answer_folded``) and left
its box, or has chosen to look first (ctrl+r and a confirmation; recorded as looked before
answering). The strategy list marks each strategy's notes: ✓ all written, ◔ some, ◌ asked for
and none written.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from typing import Any

from textual import events, on
from textual.app import ComposeResult
from textual.await_complete import AwaitComplete
from textual.binding import Binding
from textual.containers import ScrollableContainer, Vertical, VerticalScroll
from textual.content import Content
from textual.geometry import Size
from textual.reactive import Reactive
from textual.widget import Widget
from textual.widgets import Select, Static, TextArea

from engine.diagrams import STRATEGY_NAMES, WIDTH, strategy_diagram_parts
from engine.errors import InputError
from engine.exercises import (
    DIAGRAM_PARTS,
    ExerciseNote,
    answer_folded,
    asked_notes,
    get_note,
    strategy_notes,
)
from engine.i18n import N_, gettext
from engine.lesson import Item, Lesson
from engine.progress import LessonProgress
from engine.strategies import ALIASES, get_strategy
from tui import strings
from tui.commands import labelled
from tui.widgets.notes import NoteBox, keep_focus_in_view
from tui.widgets.picker import Picker
from tui.widgets.reader import BrokenText, ZoomHint
from tui.widgets.scrolling import FocusFollowsScroll, SidewaysScroll
from tui.widgets.side import ChoicesChanged, OpenedLesson
from tui.widgets.study import AnswerLooked, PaneExercises

# One entry per strategy in the picker: FSDP and ZeRO-3 are one strategy (the engine's alias
# ``fsdp`` draws ZeRO-3), listed once, in ZeRO-3's place after ZeRO-2, under the name the
# lesson's exercises and the notes use.
_PICKER_NAME: Mapping[str, str] = {strategy: alias for alias, strategy in ALIASES.items()}
PICKER_STRATEGIES: tuple[str, ...] = tuple(
    _PICKER_NAME.get(name, name) for name in STRATEGY_NAMES if name not in ALIASES
)


def picked(name: str) -> str:
    """The picker's entry for strategy ``name`` (``zero3`` is listed as ``fsdp``)."""
    return _PICKER_NAME.get(name, name)


# The diagram parts shown only once every part is unfolded (the three questions answer them
# all: what each rank holds, when it needs others' data).
_WITH_ALL = ("questions",)

# Select's ``value`` reactive, read from the class's namespace: through the generic class itself
# mypy cannot tell its type parameter.
_SELECT_VALUE: Reactive[object] = vars(Select)["value"]


# Zoomed (F5), a pane of 80-column pictures keeps the other panes' column of padding on each
# side where the terminal leaves room for it: from 82 columns. At 80 and 81 the pictures take
# every column (tui/side.tcss).
ROOMY_WIDTH = WIDTH + 2


def mark_roomy(pane: Widget) -> None:
    """Class ``-roomy`` on ``pane`` when it is at least :data:`ROOMY_WIDTH` columns wide, its
    padding included: the padding the class gives must not take it away again (82 columns
    less 2 of padding is 80, which would drop the class, and so on at each resize)."""
    pane.set_class(pane.outer_size.width >= ROOMY_WIDTH, "-roomy")


class DiagramText(Static):
    """A text part of the diagram (before or after the picture), broken by the engine at the
    width it is laid out and drawn at, whenever that is, not at a width read from the pane
    beforehand: a pane behind another tab has none (a note box left there draws the text
    again), and Textual does not always send a pane shown again at its old size a Resize (not
    after a frame drawn by a scroll), nor tell it that its scroll bar narrowed it. Broken for
    another width, the lines were wrapped again at spaces."""

    def __init__(self, *, id: str) -> None:
        super().__init__("", markup=False, id=id, classes="diagram-text")
        self._text_at: Callable[[int], str] = lambda width: ""
        self._broken: tuple[int, str] = (-1, "")

    def show_text(self, text_at: Callable[[int], str]) -> None:
        """Show ``text_at(width)``: the text broken at ``width`` cells, called with the width
        the widget is laid out at (cached for the last width)."""
        self._text_at = text_at
        self._broken = (-1, "")
        self.refresh(layout=True)

    def text_at(self, width: int) -> str:
        if self._broken[0] != width:
            self._broken = (width, self._text_at(width))
        return self._broken[1]

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        text = self.text_at(width)
        return text.count("\n") + 1 if text else 0

    def render(self) -> Content:
        return Content(self.text_at(self.size.width))


class PictureScroll(SidewaysScroll, ScrollableContainer):
    """The 80-column picture, scrolled sideways where the pane is narrower."""


class DiagramsPane(FocusFollowsScroll, VerticalScroll):
    """Pick a strategy; see what each of 4 ranks holds, what is split, what moves, what waits."""

    HELP = N_(
        "Choose a strategy with the selector (enter opens it, arrows move). The diagram shows "
        "4 ranks: what each holds, which dimension is split, the collective or point-to-point "
        "transfer, one wait it can cause, and the lesson's three questions answered. Diagrams "
        "are up to 80 columns wide: F5 widens the pane to the whole screen or gives it back its "
        "place. Below the "
        "diagram, write your own answers to exercises 2 and 3 for this strategy; they are saved "
        "and exported beside the engine's answers. For the strategies the exercises ask about, "
        "the parts that answer them are folded until you have written your note (and left its "
        "box); ctrl+r shows them first, recorded as looked before answering. In the selector, "
        "✓ marks a strategy whose three notes are written, ◔ some, ◌ none yet. F4 again opens "
        "the Collectives tab."
    )
    BINDINGS = [Binding("ctrl+r", "look_first", strings.msgids.LOOK_KEY, id="diagrams_look")]

    def __init__(self) -> None:
        super().__init__()
        # The strategy list's labels as last drawn.
        self._labels: list[str] = []
        # Notes whose answers the learner chose to see first in this pane: shown at once, while
        # the app records them (AnswerLooked).
        self._shown_first: set[str] = set()
        # The note boxes of the strategy shown, mounted once this is done (see refresh_notes).
        self._notes_shown: AwaitComplete | None = None
        # The strategy whose diagram and notes are shown.
        self._shown = ""
        # What the main screen handed down (show_lesson, restore_choices): shown once mounted.
        self.opened = OpenedLesson()
        self._wanted = PICKER_STRATEGIES[0]

    def compose(self) -> ComposeResult:
        yield PaneExercises("diagrams", self.opened.lesson, self.opened.progress)
        yield Picker(
            self._options(), value=self._wanted, allow_blank=False, id="strategy", compact=True
        )
        yield ZoomHint(strings.DIAGRAM_ZOOM_HINT)
        # The text parts are broken at the pane's width; the 80-column picture scrolls sideways.
        yield DiagramText(id="diagram-head")
        with PictureScroll(id="diagram-scroll"):
            yield Static("", markup=False, id="diagram", classes="diagram")
        yield DiagramText(id="diagram-tail")
        yield Static("", markup=False, id="diagram-folded", classes="folded")
        yield BrokenText(strings.EXERCISE_NOTES_TITLE, classes="more-title")
        yield Vertical(id="strategy-notes")

    def on_resize(self) -> None:
        mark_roomy(self)

    def on_mount(self) -> None:
        self._show_opened()

    def show_lesson(self, opened: OpenedLesson) -> None:
        """Show the lesson's and the learner's notes of ``opened`` (once mounted)."""
        self.opened = opened
        if self.is_mounted:
            self._show_opened()

    def _show_opened(self) -> None:
        self.query_one(PaneExercises).show_lesson(self.opened.lesson, self.opened.progress)
        self._shown = ""  # the notes are built again from the progress handed down
        self.show_strategy(self._wanted)
        self.refresh_marks()

    @property
    def _lesson(self) -> Lesson | None:
        return self.opened.lesson

    @property
    def _progress(self) -> LessonProgress:
        return self.opened.progress

    # ----------------------------------------------------------------- the strategy list
    def _options(self) -> list[tuple[str, str]]:
        return [(self._option_label(name), name) for name in PICKER_STRATEGIES]

    def _option_label(self, name: str) -> str:
        """The strategy's short name with the mark of its notes (see module docstring): its
        title's part before " - " (``FSDP/ZeRO-3 (zero3)``), whole in the picker at 80x24,
        where the full title was cut; the full title heads the diagram below it."""
        title = f"{gettext(get_strategy(name).title).split(' - ')[0]} ({name})"
        if not self.is_attached:
            return f"  {title}"
        notes = [note.id for note in strategy_notes(name)]
        saved = self._progress.notes
        written = [note_id for note_id in notes if saved.get(note_id, "").strip()]
        lesson = self._lesson
        asked = asked_notes(lesson) if lesson is not None else {}
        if written and len(written) == len(notes):
            state = "done"
        elif written:
            state = "started"
        elif any(note_id in asked for note_id in notes):
            state = "todo"
        else:
            return f"  {title}"
        return f"{strings.STATE_GLYPHS[state]} {title}"

    def refresh_marks(self) -> None:
        """Mark each strategy again from the saved notes (the app calls it after a save)."""
        select = self.query_one("#strategy", Select)
        options = self._options()
        if [label for label, _ in options] == self._labels:
            return
        self._labels = [label for label, _ in options]
        current = select.value
        with self.prevent(Select.Changed):
            select.set_options(options)
            select.value = current
            # The same value again runs no watcher: the shown label would keep its old mark.
            select.mutate_reactive(_SELECT_VALUE)

    @on(Select.Changed, "#strategy")
    def _strategy_changed(self, event: Select.Changed) -> None:
        event.stop()
        # A Select posts Changed when it mounts too: the notes shown (and a box ctrl+n may
        # have focused meanwhile) are rebuilt only for another strategy.
        if str(event.value) != self._shown:
            self._wanted = str(event.value)
            self.show(self._wanted)
            self.post_message(ChoicesChanged())

    def choices(self) -> dict[str, Any]:
        """What is remembered where the lesson was left: the strategy shown."""
        return {"strategy": self.strategy}

    def restore_choices(self, choices: Mapping[str, Any]) -> None:
        """Show the strategy of ``choices`` (the first one when it names none that exists),
        once mounted."""
        self._wanted = _known_strategy(choices)
        if self.is_mounted:
            self.show_strategy(self._wanted)

    def show_strategy(self, name: str) -> AwaitComplete:
        """Select and show strategy ``name`` (of ``engine.diagrams.STRATEGY_NAMES``: ``zero3``
        selects its picker entry, ``fsdp``); await the result to have its note boxes."""
        name = picked(name)
        self._wanted = name
        select = self.query_one("#strategy", Select)
        if select.value == name and self._shown == name and self._notes_shown is not None:
            return self._notes_shown
        with self.prevent(Select.Changed):
            select.value = name
        return self.show(name)

    @property
    def strategy(self) -> str:
        return str(self.query_one("#strategy", Select).value)

    # ----------------------------------------------------------------- the diagram
    def show(self, name: str) -> AwaitComplete:
        """Show strategy ``name`` (one of :data:`PICKER_STRATEGIES`) and its notes; await the
        result to have the note boxes mounted."""
        self._shown = name
        shown = self.refresh_notes()
        self.refresh_folds()
        return shown

    def folded_parts(self) -> list[str]:
        """The parts of the current strategy's diagram folded now (of ``DIAGRAM_PARTS``): the
        note's box, when shown, says what the learner has written so far."""
        lesson = self._lesson
        if lesson is None:
            return []
        boxes = {box.item.id: box.text_area.text for box in self._boxes()}
        return [
            note.part
            for note in strategy_notes(self.strategy)
            if note.id not in self._shown_first
            and answer_folded(note.id, lesson, self._progress, boxes.get(note.id))
        ]

    def _folded_notes(self) -> list[str]:
        """The current strategy's notes whose answers are folded."""
        folded = set(self.folded_parts())
        return [note.id for note in strategy_notes(self.strategy) if note.part in folded]

    def refresh_folds(self) -> None:
        """Draw the diagram without its folded parts, and say what is folded."""
        folded = set(self.folded_parts())
        strategy = self.strategy

        @functools.cache  # the head and the tail at one width: the parts are drawn once
        def texts(width: int) -> dict[str, str]:
            """The text before the picture, the picture and the text after it, the texts
            broken at ``width`` cells (the picture is 80 columns at any width)."""
            shown = set(DIAGRAM_PARTS) - folded
            texts = {"head": "", "picture": "", "tail": ""}
            where = "head"
            for part, lines in strategy_diagram_parts(
                strategy, transfers="comm" in shown, width=width
            ):
                if part == "picture":
                    where = "picture"
                elif where == "picture":
                    where = "tail"
                if part in folded or (part == "picture" and "split" in folded):
                    continue
                if part in _WITH_ALL and folded:
                    continue
                texts[where] += lines
            return texts

        # Each text part breaks its lines when laid out, at its own width (DiagramText).
        whole = texts(WIDTH)
        self.query_one("#diagram-head", DiagramText).show_text(
            lambda width: texts(width)["head"].removesuffix("\n")
        )
        self.query_one("#diagram", Static).update(whole["picture"])
        tail = self.query_one("#diagram-tail", DiagramText)
        tail.show_text(lambda width: texts(width)["tail"].removesuffix("\n"))
        tail.display = bool(whole["tail"])
        note = self.query_one("#diagram-folded", Static)
        parts = gettext("; ").join(
            strings.FOLDED_PARTS[part] for part in DIAGRAM_PARTS if part in folded
        )
        note.update(strings.FOLDED_DIAGRAM.format(parts=parts) if folded else "")
        note.display = bool(folded)

    def _boxes(self) -> list[NoteBox]:
        return [box for box in self.query(NoteBox) if box.is_mounted]

    def _note_label(self, note: ExerciseNote) -> str:
        label = gettext("ex{number} {strategy}: {label}").format(
            number=note.exercise,
            strategy=gettext(get_strategy(self.strategy).title),
            label=gettext(note.label),
        )
        if note.id in self._shown_first or self._progress.looked_before_answering(note.id):
            label = gettext("{label} ({mark})").format(label=label, mark=strings.LOOKED_MARK)
        return label

    def refresh_notes(self) -> AwaitComplete:
        """Rebuild the note boxes of the current strategy from the learner's saved notes;
        await the result to have them mounted."""
        notes_box = self.query_one("#strategy-notes", Vertical)
        removed = notes_box.remove_children()
        saved = self._progress.notes
        mounted = notes_box.mount_all(
            NoteBox(
                "notes",
                Item(note.id, note.label),
                saved.get(note.id, ""),
                self._note_label(note),
                strings.REFLECTION_PLACEHOLDER,
            )
            for note in strategy_notes(self.strategy)
        )

        async def settled() -> None:
            await removed
            await mounted

        self._notes_shown = AwaitComplete(settled())
        return self._notes_shown

    @on(events.DescendantBlur)
    def _left_a_box(self, event: events.DescendantBlur) -> None:
        # A note written and left: the part it answers unfolds (not while it is typed), and the
        # picker marks the strategy's notes.
        if isinstance(event.widget, TextArea):
            self.refresh_folds()
            self.refresh_marks()
            keep_focus_in_view(self)

    # ----------------------------------------------------------------- look first
    def action_look_first(self) -> None:
        """ctrl+r: show the folded answers before writing the notes, once confirmed."""
        from tui.widgets.confirm import ConfirmScreen

        notes = self._folded_notes()
        if not notes:
            self.notify(strings.NOTHING_FOLDED)
            return
        titles = gettext("; ").join(
            labelled(gettext(get_strategy(self.strategy).title), gettext(get_note(note_id).label))
            for note_id in notes
        )
        question = strings.LOOK_FIRST_QUESTION.format(notes=titles)

        def answered(yes: bool | None) -> None:
            if yes:
                self.looked(notes)

        self.app.push_screen(ConfirmScreen(question), answered)

    def looked(self, note_ids: list[str]) -> None:
        """The learner chose to look first: the app records it; the pane unfolds now."""
        self.post_message(AnswerLooked(note_ids))
        self._shown_first.update(note_ids)
        self.refresh_folds()
        for box in self._boxes():
            if box.item.id in note_ids:
                box.set_label(self._note_label(get_note(box.item.id)))

    # ----------------------------------------------------------------- guided study
    async def study_target(self, note_id: str) -> Widget | None:
        """Show the strategy of note ``note_id`` and return its note box, once built (ctrl+n
        puts the cursor there); the selector when the note is not one of this pane's."""
        select = self.query_one("#strategy", Select)
        try:
            note = get_note(note_id)
        except InputError:
            return select
        if note.strategy not in STRATEGY_NAMES:
            return select
        await self.show_strategy(note.strategy)
        for box in self._boxes():
            if box.item.id == note_id:
                return box.text_area
        return select

    def first_focus(self) -> Widget | None:
        """The widget the pane's key focuses first: the strategy selector."""
        return self.query_one("#strategy")


def _known_strategy(choices: Mapping[str, Any]) -> str:
    """The picker's entry for the strategy of ``choices`` when it is one the diagrams draw (a
    ``zero3`` saved before it was listed once is ``fsdp``), else the first."""
    name = choices.get("strategy")
    if isinstance(name, str) and name in STRATEGY_NAMES:
        return picked(name)
    return PICKER_STRATEGIES[0]
