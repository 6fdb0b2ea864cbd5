"""The study plan in the reader and the panes: exercises that open where they are worked,
objectives the learner rates, reading links that open in the browser, and each pane's line
saying which exercises it serves.

Lesson text is shown literally (:class:`tui.widgets.reader.BrokenText`). The widgets never change
the progress themselves: a look at an answer is posted up (:class:`AnswerLooked`) and the app
records it, as it records the answer boxes' text. An objective's rating is recorded, and an
exercise goes where it is worked, through the callback its owner gives it: done before the next
key is looked at (a ctrl+n typed with a rating counts it).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence

from rich.cells import cell_len
from textual import events
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.message import Message

from engine.i18n import N_, gettext
from engine.lesson import Item, Lesson
from engine.plan import step_states
from engine.progress import RATING_LABELS, RATING_PHASES, LessonProgress, ObjectiveRating
from tui import strings
from tui.widgets.reader import BrokenText


def state_text(state: str) -> tuple[str, str]:
    """(glyph, words) of a step state."""
    return strings.STATE_GLYPHS[state], strings.STATE_WORDS[state]


class AnswerLooked(Message):
    """The learner confirmed looking at the engine's answer to ``note_ids`` before writing."""

    def __init__(self, note_ids: Sequence[str]) -> None:
        super().__init__()
        self.note_ids = tuple(note_ids)


class StudyItem(Vertical, can_focus=True):
    """A focusable entry of the reader: its lesson text under a marker, and a line below."""

    DEFAULT_CSS = """
    StudyItem { height: auto; }
    StudyItem:focus { background: $boost; }
    StudyItem .study-line { color: $text-muted; }
    """

    def __init__(self, text: str, marker: str, line: str) -> None:
        super().__init__(classes="study-item")
        self._text = text
        self._marker = marker
        self._line = line

    def compose(self) -> ComposeResult:
        yield BrokenText(self._text, marker=self._marker)
        yield BrokenText(self._line, marker=" " * cell_len(self._marker), classes="study-line")

    @property
    def line(self) -> str:
        """The line under the text (state, rating, keys)."""
        return self._line

    def set_line(self, line: str) -> None:
        if line != self._line:
            self._line = line
            if self.is_mounted:
                self.query_one(".study-line", BrokenText).update(line)


class ExerciseItem(StudyItem):
    """An exercise in the reader: its text, its state and where it is worked; Enter goes there."""

    BINDINGS = [Binding("enter", "work", N_("Work it"), id="exercise_work")]
    HELP = N_(
        "An exercise of the lesson, with how far you are in it and where it is worked. Enter "
        "opens that place with the cursor where the work is done; ctrl+n goes to the next "
        "unfinished step of the plan."
    )

    def __init__(
        self, item: Item, number: int, state: str, work: Callable[[str], Awaitable[None]]
    ) -> None:
        """``work``: goes to a step of the plan by its id (the guided study of the screen that
        shows the exercise)."""
        self.item = item
        self.step_id = f"exercise:{item.id}"
        self._work = work
        super().__init__(item.text, f"{number}. ", self.state_line(item, state))

    @staticmethod
    def state_line(item: Item, state: str) -> str:
        glyph, words = state_text(state)
        where = strings.PANE_WORDS.get(item.worked_in, item.worked_in)
        return strings.EXERCISE_ITEM_STATE.format(glyph=glyph, state=words, where=where)

    def show_state(self, state: str) -> None:
        self.set_line(self.state_line(self.item, state))

    async def action_work(self) -> None:
        # Awaited, not posted up: gone there before the next key is looked at.
        await self._work(self.step_id)


def _level(level: str | None) -> str:
    return gettext(RATING_LABELS.get(level or "", strings.NOT_RATED))


class ObjectiveItem(StudyItem):
    """A learning objective: what trains it, and the learner's ratings at the start and at the
    end, set with keys while it has the focus."""

    BINDINGS = [
        Binding("1", "rate('not-yet')", strings.msgids.OBJECTIVE_KEYS["1"], id="rate_not_yet"),
        Binding("2", "rate('partly')", strings.msgids.OBJECTIVE_KEYS["2"], id="rate_partly"),
        Binding("3", "rate('can')", strings.msgids.OBJECTIVE_KEYS["3"], id="rate_can"),
        Binding("0", "rate('')", strings.msgids.OBJECTIVE_KEYS["0"], id="rate_clear"),
        Binding("s", "phase('start')", strings.msgids.OBJECTIVE_KEYS["s"], id="rate_start"),
        Binding("e", "phase('end')", strings.msgids.OBJECTIVE_KEYS["e"], id="rate_end"),
    ]
    HELP = N_(
        "A learning objective. Rate how well you can do it, once before you study (the start) "
        "and once at the end: 1 not yet, 2 partly, 3 can; 0 clears. s and e choose which of the "
        "two the keys rate (the start until you rated it and finished what trains it). The plan "
        "view (F11) and your export show both ratings."
    )

    def __init__(
        self,
        item: Item,
        number: int,
        trained: str,
        rating: ObjectiveRating,
        rate: Callable[[str, str, str | None], None],
    ) -> None:
        """``number``: as the lesson numbers it (1 for the first); ``rate``: records a rating,
        ``(objective id, phase, level)`` (``level`` None: cleared), at once."""
        self.item = item
        self._rate = rate
        self.trained = trained
        self.rating = rating
        self.phase = "start"
        self.number = number
        super().__init__(item.text, f"{number}. ", "")
        self._line = self._rating_line()

    def show(self, trained: str, rating: ObjectiveRating, trained_all: bool) -> None:
        """Show what trains it and the ratings; the keys rate the end once the start is rated
        and everything that trains the objective is done."""
        self.trained = trained
        self.rating = rating
        if not self.has_focus:
            self.phase = "end" if rating.start and trained_all else "start"
        self.set_line(self._rating_line())

    def _rating_line(self, focused: bool | None = None) -> str:
        start, end = _level(self.rating.start), _level(self.rating.end)
        if self.has_focus if focused is None else focused:
            marks = {phase: "▸" if phase == self.phase else "" for phase in RATING_PHASES}
            rating = strings.OBJECTIVE_RATING_FOCUSED.format(
                start_mark=marks["start"], end_mark=marks["end"], start=start, end=end
            )
        else:
            rating = strings.OBJECTIVE_RATING.format(start=start, end=end)
        return f"{self.trained}\n{rating}" if self.trained else rating

    def on_focus(self, event: events.Focus) -> None:
        self.set_line(self._rating_line(focused=True))

    def on_blur(self, event: events.Blur) -> None:
        self.set_line(self._rating_line(focused=False))

    def action_phase(self, phase: str) -> None:
        self.phase = phase
        self.set_line(self._rating_line())

    def action_rate(self, level: str) -> None:
        chosen = level or None
        if self.phase == "start":
            self.rating = ObjectiveRating(start=chosen, end=self.rating.end)
        else:
            self.rating = ObjectiveRating(start=self.rating.start, end=chosen)
        self.set_line(self._rating_line())
        self._rate(self.item.id, self.phase, chosen)
        if chosen is not None:
            # Replaces the message asking for it (ctrl+n's), which would stay up otherwise.
            said = strings.OBJECTIVE_RATED[self.phase]
            self.notify(said.format(number=self.number, level=gettext(RATING_LABELS[chosen])))


class ReadingLink(BrokenText, can_focus=True):
    """A public page of a reading: Enter opens it in the browser (``App.open_url``)."""

    DEFAULT_CSS = """
    ReadingLink { color: $text-accent; }
    ReadingLink:focus { background: $boost; text-style: underline; }
    """
    BINDINGS = [Binding("enter", "open", N_("Open"), id="link_open")]
    HELP = N_("A reading's page: Enter opens it in your web browser.")

    def __init__(self, label: str, url: str, marker: str) -> None:
        super().__init__(strings.LINK_TEXT.format(label=label, url=url), marker=marker)
        self.url = url

    def action_open(self) -> None:
        self.app.open_url(self.url)
        self.notify(strings.LINK_OPENED.format(url=self.url))


class PaneExercises(BrokenText):
    """The line at the top of a side pane saying which exercises it serves and how far each is;
    nothing where the lesson works none there."""

    DEFAULT_CSS = """
    PaneExercises { color: $text-accent; margin: 0 0 1 0; }
    """

    def __init__(self, pane: str, lesson: Lesson | None, progress: LessonProgress) -> None:
        super().__init__("", classes="pane-exercises")
        self.pane = pane
        # Built with its pane: the text is there for the first layout, so nothing below it
        # moves once the pane is shown (a field focused then stays in view).
        self.show_lesson(lesson, progress)

    def show_lesson(self, lesson: Lesson | None, progress: LessonProgress) -> None:
        """Show the exercises of ``lesson`` worked in this pane, in their states of
        ``progress``."""
        self.show_states(lesson, step_states(lesson, progress) if lesson is not None else {})

    def show_states(self, lesson: Lesson | None, states: Mapping[str, str]) -> None:
        """Show the lesson's exercises worked in this pane with their states (``states``: step
        id -> state, :func:`engine.plan.step_states`)."""
        lines = []
        for number, item in enumerate(lesson.exercises if lesson else (), start=1):
            if item.worked_in != self.pane:
                continue
            glyph, words = state_text(states.get(f"exercise:{item.id}", "todo"))
            lines.append(
                strings.PANE_EXERCISE.format(
                    number=number, glyph=glyph, state=words, text=item.text
                )
            )
        self.update("\n".join(lines))
        self.display = bool(lines)
