"""The quiz screen: one review queue over the lessons, driven by the keyboard.

The screen holds no grading or scheduling logic: an :class:`engine.quiz.QuizSession` asks, grades,
schedules and undoes; the screen shows its questions and passes keys to it. Every answer and every
rating is saved at once through the app's progress store (the lesson open in the app shares its
progress object with the quiz, so neither overwrites the other's changes).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.events import Key
from textual.message import Message
from textual.screen import Screen
from textual.widgets import Footer, Static

from engine.errors import ContentError, InputError, ProgressError, ShardbookError
from engine.lesson import Lesson, discover_lessons, load_lesson
from engine.progress import LessonProgress
from engine.quiz import RATINGS, Clock, QuizSession, utc_now
from tui import strings
from tui.widgets.literal import LiteralTextArea

if TYPE_CHECKING:
    from tui.app import ShardbookApp

_RATE = Binding.Group(strings.QUIZ_RATE_GROUP, compact=False)
_JUDGE = Binding.Group(strings.QUIZ_JUDGE_GROUP, compact=False)
_CHOOSE = Binding.Group(strings.QUIZ_CHOOSE_GROUP, compact=False)
_LETTERS = "abcd"


@dataclass(frozen=True)
class QuizOptions:
    """How the quiz opens.

    Attributes:
        lesson: quiz only this lesson; None: every lesson in the content folder, one queue.
        due_only: only reviewed items that are due now (no new items).
        open_at_start: the app opens on the quiz screen (``shardbook quiz``).
        clock: the time source, timezone-aware (tests inject a fixed one).
        seed: seeds drill values and choice orders (None: random).
    """

    lesson: str | None = None
    due_only: bool = False
    open_at_start: bool = False
    clock: Clock = utc_now
    seed: int | None = None


class QuizAnswer(LiteralTextArea):
    """The answer box: enter submits (a pasted line break is kept in the text)."""

    class Submitted(Message):
        """The learner pressed enter in the answer box."""

    async def _on_key(self, event: Key) -> None:
        if event.key == "enter" and not self.read_only:
            event.stop()
            event.prevent_default()
            self.post_message(self.Submitted())
            return
        await super()._on_key(event)


class QuizScreen(Screen[None]):
    """Ask, grade, rate, undo; escape goes back to the lesson."""

    HELP = strings.QUIZ_HELP
    # _show() focuses the answer box or the body, whichever the question needs.
    AUTO_FOCUS = None

    BINDINGS = [
        Binding("enter", "submit", strings.QUIZ_SUBMIT, id="quiz_submit"),
        Binding("enter", "accept", strings.QUIZ_ACCEPT, id="quiz_accept"),
        Binding("enter", "restart", strings.QUIZ_AGAIN, id="quiz_again"),
        Binding("ctrl+r", "submit", strings.QUIZ_REVEAL, id="quiz_reveal"),
        *(
            Binding(str(key), f"rate({key})", label, id=f"quiz_rate_{key}", group=_RATE)
            for key, label in RATINGS.items()
        ),
        Binding("t", "judge(True)", strings.QUIZ_TRUE, id="quiz_true", group=_JUDGE),
        Binding("f", "judge(False)", strings.QUIZ_FALSE, id="quiz_false", group=_JUDGE),
        *(
            Binding(letter, f"choose({index})", letter, id=f"quiz_choose_{letter}", group=_CHOOSE)
            for index, letter in enumerate(_LETTERS)
        ),
        Binding("u", "undo", strings.QUIZ_UNDO, id="quiz_undo"),
        Binding("ctrl+z", "undo", strings.QUIZ_UNDO, id="quiz_undo_ctrl", show=False),
        Binding("escape", "leave", strings.QUIZ_LEAVE, id="quiz_leave"),
    ]

    def __init__(self, options: QuizOptions) -> None:
        super().__init__()
        self.options = options
        self.session: QuizSession | None = None
        self.problem = ""

    @property
    def shardbook(self) -> ShardbookApp:
        return self.app  # type: ignore[return-value]

    def compose(self) -> ComposeResult:
        yield Static("", id="quiz-status", markup=False)
        with VerticalScroll(id="quiz-body", can_focus=True):
            yield Static("", id="quiz-prompt", markup=False)
            yield Static("", id="quiz-options", markup=False)
            yield QuizAnswer(
                "",
                id="quiz-answer",
                soft_wrap=True,
                show_line_numbers=False,
                placeholder=strings.QUIZ_PLACEHOLDER,
            )
            yield Static("", id="quiz-feedback")
        yield Footer(compact=False)

    def on_mount(self) -> None:
        try:
            self.session = self._start()
        except ShardbookError as error:
            self.problem = str(error)
        self._show()

    # ----------------------------------------------------------------- building the session
    def _lessons(self) -> list[Lesson]:
        app = self.shardbook
        refs, _errors = discover_lessons(app.content_dir)
        wanted = [ref for ref in refs if self.options.lesson in (None, ref.id)]
        if self.options.lesson is not None and not wanted:
            raise ContentError(
                str(app.content_dir), None, f"no lesson with id {self.options.lesson!r}"
            )
        lessons: list[Lesson] = []
        for ref in wanted:
            if app.lesson is not None and app.lesson.id == ref.id:
                lessons.append(app.lesson)
                continue
            try:
                lessons.append(load_lesson(ref.path))
            except ContentError as error:
                self.notify(str(error), severity="error", timeout=15)
        return lessons

    def _start(self) -> QuizSession:
        app = self.shardbook
        lessons = self._lessons()
        progress: dict[str, LessonProgress] = {}
        for lesson in lessons:
            if lesson.id == app.progress.lesson_id:
                # The lesson open in the app: share its progress, or the app's next save
                # would write back a quiz state without the new ratings.
                progress[lesson.id] = app.progress
                continue
            loaded = app.store.load(lesson.id)
            if loaded.message:
                self.notify(strings.QUARANTINED.format(message=loaded.message), severity="warning")
            progress[lesson.id] = loaded.progress
        return QuizSession(
            lessons,
            progress,
            self._save,
            clock=self.options.clock,
            seed=self.options.seed,
            due_only=self.options.due_only,
        )

    def _save(self, progress: LessonProgress) -> None:
        app = self.shardbook
        if progress is app.progress:
            app.save_now()  # it reports a failure itself and retries on quit
            return
        try:
            app.store.save(progress)
        except ProgressError as error:
            self.notify(strings.SAVE_FAILED.format(error=error), severity="error", timeout=20)

    # ----------------------------------------------------------------- phases
    @property
    def phase(self) -> str:
        """``problem``, ``answer``, ``feedback`` or ``done``."""
        if self.session is None:
            return "problem"
        if self.session.current is None:
            return "done"
        return "feedback" if self.session.grade is not None else "answer"

    @property
    def answer_kind(self) -> str:
        session = self.session
        return session.current.answer_kind if session and session.current else ""

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        phase, kind = self.phase, self.answer_kind
        if action == "submit":
            return phase == "answer" and kind in ("text", "number")
        if action == "accept":
            grade = self.session.grade if self.session else None
            return phase == "feedback" and grade is not None and grade.suggested is not None
        if action == "restart":
            return phase == "done"
        if action == "rate":
            return phase == "feedback"
        if action == "judge":
            return phase == "answer" and kind == "true-false"
        if action == "choose":
            return phase == "answer" and kind == "choice"
        if action == "undo":
            return self.session is not None
        return True

    # ----------------------------------------------------------------- display
    def _show(self) -> None:
        """Redraw everything for the current phase, move the focus, refresh the footer."""
        status = self.query_one("#quiz-status", Static)
        prompt = self.query_one("#quiz-prompt", Static)
        options = self.query_one("#quiz-options", Static)
        answer = self.query_one("#quiz-answer", QuizAnswer)
        feedback = self.query_one("#quiz-feedback", Static)
        body = self.query_one("#quiz-body", VerticalScroll)
        phase = self.phase
        session = self.session
        options.display = False
        answer.display = False
        feedback.display = False
        if session is None:
            status.update(strings.QUIZ_TITLE)
            prompt.update(Text(strings.QUIZ_PROBLEM.format(error=self.problem)))
            body.focus()
            self.refresh_bindings()
            return
        if phase == "done":
            status.update(strings.QUIZ_TITLE)
            prompt.update(self._summary())
            body.focus()
            self.refresh_bindings()
            return
        question = session.current
        assert question is not None
        item = question.item
        status.update(
            strings.QUIZ_STATUS.format(
                lesson=item.lesson_id,
                kind=item.kind,
                left=session.remaining,
                done=session.reviewed_this_session,
            )
        )
        prompt.update(Text(question.prompt))
        if question.options:
            lines = [
                f"{letter}) {text}"
                for letter, text in zip(_LETTERS, question.options, strict=False)
            ]
            options.update(Text("\n".join(lines)))
            options.display = True
        if question.answer_kind == "true-false" and phase == "answer":
            options.update(Text(strings.QUIZ_JUDGE_HINT))
            options.display = True
        if question.answer_kind in ("text", "number"):
            answer.display = True
            answer.read_only = phase != "answer"
        if phase == "answer":
            if question.answer_kind in ("text", "number"):
                answer.focus()
            else:
                body.focus()
        else:
            feedback.update(self._feedback())
            feedback.display = True
            body.focus()
            self.call_after_refresh(feedback.scroll_visible, top=True, animate=False)
        self.refresh_bindings()

    def _feedback(self) -> Text:
        session = self.session
        assert session is not None and session.current is not None and session.grade is not None
        question, grade = session.current, session.grade
        text = Text()
        if grade.correct is True:
            text.append(strings.QUIZ_RIGHT, style="bold green")
        elif grade.correct is False:
            text.append(strings.QUIZ_WRONG, style="bold red")
        if grade.correct is not None:
            text.append(f"  {strings.QUIZ_YOUR_ANSWER}{grade.answer}")
            text.append(f"  {strings.QUIZ_EXPECTED}{question.expected_text()}\n")
        title = strings.QUIZ_KEY_POINTS if question.answer_kind == "text" else strings.QUIZ_SOLUTION
        text.append(title + "\n", style="bold")
        text.append(question.solution + "\n")
        if question.sources:
            text.append(
                strings.KEY_POINTS_SOURCES + "; ".join(question.sources) + "\n", style="dim"
            )
        if grade.suggested is not None:
            label = RATINGS[grade.suggested]
            hint = strings.QUIZ_RATE_SUGGESTED.format(rating=f"{grade.suggested} {label}")
        else:
            hint = strings.QUIZ_RATE_HINT
        text.append(hint, style="italic")
        return text

    def _summary(self) -> Text:
        session = self.session
        assert session is not None
        text = Text(strings.QUIZ_DONE.format(done=session.reviewed_this_session) + "\n\n")
        for row in session.stats():
            retention = "-" if row.retention is None else f"{row.retention:.0%}"
            text.append(
                strings.QUIZ_STATS_ROW.format(
                    lesson=row.lesson_id,
                    reviewed=row.reviewed,
                    items=row.items,
                    due=row.due,
                    retention=retention,
                    next_due=row.next_due or "-",
                )
                + "\n"
            )
        text.append("\n" + strings.QUIZ_DONE_HINT)
        return text

    # ----------------------------------------------------------------- actions
    def _attempt(self, answer: str | bool | int) -> None:
        assert self.session is not None
        try:
            self.session.answer(answer)
        except InputError as error:
            self.notify(error.message, severity="warning")
            return
        self._show()

    @on(QuizAnswer.Submitted)
    def _submitted(self, event: QuizAnswer.Submitted) -> None:
        event.stop()
        if self.check_action("submit", ()):
            self.action_submit()

    def action_submit(self) -> None:
        self._attempt(self.query_one("#quiz-answer", QuizAnswer).text)

    def action_judge(self, value: bool) -> None:
        self._attempt(value)

    def action_choose(self, index: int) -> None:
        self._attempt(index)

    def action_rate(self, rating: int) -> None:
        assert self.session is not None
        card = self.session.rate(rating)
        self.notify(
            strings.QUIZ_RATED.format(
                rating=RATINGS[rating], due=card.due.strftime("%Y-%m-%d %H:%M")
            ),
            timeout=3,
        )
        self._clear_answer()
        self._show()

    def action_accept(self) -> None:
        assert self.session is not None and self.session.grade is not None
        suggested = self.session.grade.suggested
        if suggested is None:
            self.notify(strings.QUIZ_RATE_HINT, severity="warning")
            return
        self.action_rate(suggested)

    def action_undo(self) -> None:
        assert self.session is not None
        question = self.session.undo()
        if question is None:
            self.notify(strings.QUIZ_NOTHING_TO_UNDO, severity="warning")
            return
        self.notify(strings.QUIZ_UNDONE, timeout=3)
        self._clear_answer()
        self._show()

    def action_restart(self) -> None:
        assert self.session is not None
        self.session.refill()
        self._show()

    def action_leave(self) -> None:
        self.app.pop_screen()

    def _clear_answer(self) -> None:
        answer = self.query_one("#quiz-answer", QuizAnswer)
        answer.read_only = False
        answer.clear()
