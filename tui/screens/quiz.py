"""The quiz screen: one review queue over the lessons, driven by the keyboard.

The screen holds no grading or scheduling logic: an :class:`engine.quiz.QuizSession` asks, grades,
schedules and undoes; the screen shows its questions and passes keys to it. Every answer and every
rating is saved at once through the app's progress store (the lesson open in the app shares its
progress object with the quiz, so neither overwrites the other's changes). What the quiz needs of
the app comes down in a :class:`QuizContext`: data, and callbacks for the app to save what the
quiz changed (called at once, so a save is done before the next key).

Layout: the question stays at the top (its own region, never scrolled away by the solution), the
choices or what to press, the answer box and the feedback scroll below it, and a bar above the
footer shows each rating key with its next interval. A true/false or matching question is asked
in the region that scrolls, with its choices (nothing is typed and nothing scrolls it away), so
a short screen shows all of it as the arrows scroll. In the answer box enter starts a new line
and ctrl+r submits; the quiz's own keys (ratings, ``u``, ``r``, ``s``) act only outside it, so
they never type into an answer.

Its length (about 830 lines) is one screen's: the keys, the question and feedback views, the
rating bar, the lessons loaded in a worker and the statistics text all read and change the same
session and widgets, so splitting them would pass the screen's state around; its two dialogs are
in ``tui.screens.quiz_dialogs``.
"""

from __future__ import annotations

import gc
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path

from rich.console import Console, ConsoleOptions, Group, RenderResult
from rich.text import Text
from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.command import DiscoveryHit, Hit, Hits, Provider
from textual.containers import Vertical, VerticalScroll
from textual.content import Content
from textual.geometry import Size
from textual.screen import Screen
from textual.timer import Timer
from textual.widgets import Static, TextArea
from textual.worker import Worker, WorkerState, get_current_worker

from engine.errors import (
    ContentError,
    InputError,
    ProgressError,
    ShardbookError,
    escaped,
    quoted,
)
from engine.i18n import gettext
from engine.lesson import (
    Lesson,
    LessonRef,
    discover_lessons,
    lesson_index_path,
    load_lesson_cached,
)
from engine.linebreak import NO_BREAK_SPACE, line_spans, unbreakable
from engine.progress import LessonProgress, ProgressStore
from engine.quiz import RATINGS, Question, QuizSession
from engine.quiz.model import CHOICE_KEYS
from engine.quiz_stats import LessonStats, next_due_text, percent
from engine.timefmt import duration_text, format_interval, local_text
from tui import strings
from tui.commands import labelled
from tui.options import QuizOptions
from tui.screens.quiz_dialogs import RetentionScreen, ReviewStatsScreen
from tui.toasts import HINT_SECONDS, withdraw
from tui.widgets.footer import KeysFooter
from tui.widgets.header import PART_SEPARATOR, FittingLine
from tui.widgets.literal import LiteralTextArea
from tui.widgets.reader import BrokenLines

_RATE = Binding.Group(strings.msgids.QUIZ_RATE_GROUP, compact=False)
_JUDGE = Binding.Group(strings.msgids.QUIZ_JUDGE_GROUP, compact=False)
_CHOOSE = Binding.Group(strings.msgids.QUIZ_CHOOSE_GROUP, compact=False)
_LETTERS = "abcd"
RETENTION_KEY = "review.desired_retention"
# Actions that never act while the learner types in the answer box (their keys are letters and
# digits, which the box takes; the footer hides them there).
_OUTSIDE_THE_BOX = frozenset(
    {"rate", "accept", "judge", "choose", "undo", "retention", "stats", "restart", "edit", "leave"}
)
# The actions that answer what the quiz asks now: where the footer is short of room, their keys
# are shown before help, quit and the palette.
_ANSWERING = frozenset({"submit", "edit", "judge", "choose", "rate", "accept", "restart"})


class QuizAnswer(LiteralTextArea):
    """The answer box: a multi-line text box (enter starts a new line; ctrl+r, bound on the
    screen, submits).

    Tab and shift+tab stay in the box and say so: the quiz has no other field to go to, and a
    focus moved in silence would turn the next letters typed into the quiz's keys (``u`` undoes
    the last rating). Escape is the one way out (:meth:`QuizScreen.action_blur`).
    """

    BINDINGS = [
        Binding("tab", "stay", show=False),
        Binding("shift+tab", "stay", show=False),
    ]

    def action_stay(self) -> None:
        self.notify(strings.QUIZ_TAB_STAYS, severity="warning", markup=False)

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        # Empty, as tall as its placeholder as TextArea wraps it: at 40 columns its end, "escape
        # leaves the box" (the one way out), was below the box's two lines.
        height = super().get_content_height(container, viewport, width)
        if not self.text and self.placeholder:
            height = max(height, len(Content.from_text(self.placeholder).wrap(width)))
        return height

    def watch_placeholder(self) -> None:
        self.refresh(layout=True)


class StyledLines:
    """A styled text broken into lines by the lesson's rules at the width it is drawn in (Rich
    would wrap at any space): the rating keys, a key not parted from its name and interval and
    no line starting with the ``·`` between two keys; a verdict, ``expected:`` not parted from
    what was expected."""

    def __init__(self, text: Text) -> None:
        self.text = text

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        for start, end in line_spans(self.text.plain, max(1, options.max_width)):
            line = self.text[start:end]
            # The glue was for the line breaker: the terminal gets plain spaces.
            plain = line.plain.replace(NO_BREAK_SPACE, " ")
            yield Text(plain, spans=list(line.spans), no_wrap=True, overflow="crop")


class QuizCommands(Provider):
    """Command-palette entries of the quiz screen."""

    def _entries(self) -> list[tuple[str, str]]:
        return [
            (strings.QUIZ_PALETTE_RETENTION, "retention"),
            (strings.QUIZ_PALETTE_STATS, "stats"),
            (strings.QUIZ_PALETTE_UNDO, "undo"),
        ]

    async def discover(self) -> Hits:
        for title, action in self._entries():
            yield DiscoveryHit(Content(title), partial(self._run, action), text=title)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for title, action in self._entries():
            score = matcher.match(title)
            if score > 0:
                yield Hit(score, Content(title), partial(self._run, action), text=title)

    def _run(self, action: str) -> None:
        screen = self.screen
        if isinstance(screen, QuizScreen):
            screen.run_quiz_action(action)


LOADING_GROUP = "quiz-lessons"
# Lessons read between two gc.freeze() calls in the worker (see _load_lessons).
FREEZE_EVERY = 10
# Seconds after the quiz opens when the other lessons start being read: its first frame first.
READ_AFTER_S = 0.05
# How often the line "reading lessons n of N" is redrawn while the other lessons load (seconds).
LOADING_REDRAW_S = 0.1


@dataclass
class _Loaded:
    """What the worker built: the other lessons' session, the progress it asks to save, and
    the problems to tell the learner (message, severity)."""

    session: QuizSession
    to_save: list[LessonProgress]
    problems: list[tuple[str, str]]


@dataclass(frozen=True)
class QuizContext:
    """What the quiz takes from the app that opens it.

    Attributes:
        content_dir: the lessons' folder.
        lesson: the lesson open in the app (None: none could be opened), quizzed first.
        progress: the learner's progress in ``lesson``, shared with the app.
        store: the progress store the other lessons are read from and saved to.
        desired_retention: the desired retention saved in the settings (0-1).
        save_open_lesson: saves ``progress`` now (False: it failed, and the learner was told).
        draft_changed: an answer typed and not submitted was kept or dropped in this progress.
        save_retention: sets the desired retention in the settings; returns why they could not
            be written (``""``: written).
        settings_path: where the settings are written (told to the learner).
        refs: the lessons the app listed when it started (None: listed when the quiz opens).
            Listing 360 lessons through the index takes about 4 ms, which the first question
            would wait for; a lesson added since is quizzed from the next start, and one
            removed since is reported as unreadable when its turn to be read comes.
    """

    content_dir: Path
    lesson: Lesson | None
    progress: LessonProgress
    store: ProgressStore
    desired_retention: float
    save_open_lesson: Callable[[], bool]
    draft_changed: Callable[[LessonProgress], None]
    save_retention: Callable[[float], str]
    settings_path: Path
    refs: Sequence[LessonRef] | None = None


class QuizScreen(Screen[None]):
    """Ask, grade, rate, undo; escape goes back to the lesson."""

    HELP = strings.msgids.QUIZ_HELP
    COMMANDS = {QuizCommands}
    # _show() focuses the answer box or the body, whichever the question needs.
    AUTO_FOCUS = None

    BINDINGS = [
        Binding("ctrl+r", "submit", strings.msgids.QUIZ_SUBMIT, id="quiz_submit"),
        Binding("enter", "accept", strings.msgids.QUIZ_ACCEPT, id="quiz_accept"),
        Binding("enter", "restart", strings.msgids.QUIZ_AGAIN, id="quiz_again"),
        Binding("enter", "edit", strings.msgids.QUIZ_EDIT, id="quiz_edit"),
        *(
            Binding(str(key), f"rate({key})", label, id=f"quiz_rate_{key}", group=_RATE)
            for key, label in RATINGS.items()
        ),
        Binding("t", "judge(True)", strings.msgids.QUIZ_TRUE, id="quiz_true", group=_JUDGE),
        Binding("f", "judge(False)", strings.msgids.QUIZ_FALSE, id="quiz_false", group=_JUDGE),
        *(
            Binding(letter, f"choose({index})", letter, id=f"quiz_choose_{letter}", group=_CHOOSE)
            for index, letter in enumerate(_LETTERS)
        ),
        Binding("u", "undo", strings.msgids.QUIZ_UNDO, id="quiz_undo"),
        Binding("r", "retention", strings.msgids.QUIZ_RETENTION, id="quiz_retention"),
        Binding("s", "stats", strings.msgids.QUIZ_STATS, id="quiz_stats"),
        Binding("escape", "blur", strings.msgids.QUIZ_BLUR, id="quiz_blur"),
        Binding("escape", "leave", strings.msgids.QUIZ_LEAVE, id="quiz_leave"),
    ]

    def __init__(self, options: QuizOptions, context: QuizContext) -> None:
        super().__init__()
        self.options = options
        self.context = context
        self.session: QuizSession | None = None
        self.problem = ""
        self._filled_for: object = None
        # (lessons read, lessons to read) while the other lessons load in a worker, else None.
        self.reading: tuple[int, int] | None = None
        self._loading_timer: Timer | None = None
        # The last rating and its next review, said in the bar above the footer for a few
        # seconds: a message over the question covered its first lines at 40x12.
        self._rated: str | None = None
        self._rated_timer: Timer | None = None
        # The self-check whose key points are to be placed once the body is laid out.
        self._key_points_for: Question | None = None

    def compose(self) -> ComposeResult:
        yield FittingLine(id="quiz-status")
        with VerticalScroll(id="quiz-question", can_focus=False):
            yield Static("", id="quiz-prompt", markup=False)
        with VerticalScroll(id="quiz-body", can_focus=True):
            # A question answered by a key, its choices and what to press, in the region that
            # scrolls (and has the focus): on a short screen they were cut off the question's.
            yield Static("", id="quiz-statement", markup=False)
            yield Static("", id="quiz-options", markup=False)
            yield Static("", id="quiz-instruction", markup=False)
            yield Static(strings.QUIZ_FROM_LESSON, id="quiz-from-lesson", markup=False)
            yield QuizAnswer(
                "",
                id="quiz-answer",
                soft_wrap=True,
                show_line_numbers=False,
                placeholder=strings.QUIZ_PLACEHOLDER.format(field=strings.QUIZ_ANSWER_FIELD),
            )
            yield Static("", id="quiz-feedback")
            yield Vertical(id="quiz-plots")
        yield Static("", id="quiz-ratings", markup=False)
        yield KeysFooter(compact=False, first_actions=_ANSWERING)

    def on_mount(self) -> None:
        self.watch(self.query_one("#quiz-body"), "virtual_size", self._body_laid_out, init=False)
        try:
            self.session = self._start()
        except ShardbookError as error:
            self.problem = str(error)
        self._show()

    # ----------------------------------------------------------------- building the session
    def _refs(self) -> list[LessonRef]:
        """The lessons to quiz, listed through the lesson index (no lesson parsed)."""
        content_dir = self.context.content_dir
        refs = self.context.refs
        if refs is None:
            refs, _errors = discover_lessons(content_dir, lesson_index_path(content_dir))
        wanted = [ref for ref in refs if self.options.lesson in (None, ref.id)]
        if self.options.lesson is not None and not wanted:
            raise ContentError(
                str(content_dir),
                None,
                strings.NO_SUCH_LESSON.format(lesson=quoted(self.options.lesson)),
            )
        return wanted

    def _start(self) -> QuizSession:
        """The session over the lesson open in the app, asking at once; the other lessons are
        read in a worker thread (:meth:`_load_lessons`) and joined to its queue when read."""
        refs = self._refs()
        opened = self.context.lesson
        first = [opened] if opened is not None and any(r.id == opened.id for r in refs) else []
        rest = [ref for ref in refs if opened is None or ref.id != opened.id]
        # The lesson open in the app shares its progress, or the app's next save would write
        # back a quiz state without the new ratings.
        progress = {lesson.id: self.context.progress for lesson in first}
        session = self._session(first, progress, self._save)
        if rest:
            self.reading = (0, len(rest))
            # After the first question is drawn: the worker's parsing would slow that frame.
            self.set_timer(
                READ_AFTER_S, partial(self._load_lessons, rest, session.desired_retention)
            )
            self._loading_timer = self.set_interval(LOADING_REDRAW_S, self._show_status)
        return session

    def _session(
        self,
        lessons: list[Lesson],
        progress: dict[str, LessonProgress],
        save: Callable[[LessonProgress], object],
        desired_retention: float | None = None,
    ) -> QuizSession:
        return QuizSession(
            lessons,
            progress,
            save,
            clock=self.options.clock,
            seed=self.options.seed,
            due_only=self.options.due_only,
            desired_retention=(
                self._stored_retention() if desired_retention is None else desired_retention
            ),
            tz=self.options.tz,
        )

    @work(thread=True, exclusive=True, group=LOADING_GROUP, exit_on_error=False)
    def _load_lessons(self, refs: list[LessonRef], desired_retention: float) -> _Loaded | None:
        """Read ``refs``' lessons and progress and build their session, off the event loop
        (a lesson takes about 13 ms to parse: seconds for hundreds). Saves that building asks
        for (a reconciled schedule) are returned, to be made on the event loop."""
        worker = get_current_worker()
        store = self.context.store
        lessons: list[Lesson] = []
        progress: dict[str, LessonProgress] = {}
        problems: list[tuple[str, str]] = []
        for count, ref in enumerate(refs, start=1):
            if worker.is_cancelled:
                return None
            try:
                lesson = load_lesson_cached(ref.path)
                loaded = store.load(lesson.id)
            except (ContentError, ProgressError) as error:
                problems.append((str(error), "error"))
                continue
            finally:
                self.reading = (count, len(refs))
            if loaded.message:
                problems.append((strings.QUARANTINED.format(message=loaded.message), "warning"))
            lessons.append(lesson)
            progress[lesson.id] = loaded.progress
            if count % FREEZE_EVERY == 0:
                # The lessons read so far live as long as the quiz: out of the collector's
                # reach, a full collection (which holds the interpreter lock, here for 0.1-0.3
                # s once hundreds of lessons are in memory) does not stop the event loop.
                gc.freeze()
        to_save: list[LessonProgress] = []
        session = self._session(lessons, progress, to_save.append, desired_retention)
        # Its items and states (thousands of objects with hundreds of lessons) live as long
        # as the quiz too: out of reach of the full collections that would scan them.
        gc.freeze()
        return _Loaded(session, to_save, problems)

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        worker = event.worker
        if worker.group != LOADING_GROUP or worker.is_cancelled:
            return
        if event.state in (WorkerState.ERROR, WorkerState.SUCCESS) and self._loading_timer:
            self._loading_timer.stop()
        if event.state == WorkerState.ERROR:
            self.reading = None
            self.notify(str(worker.error), severity="error", timeout=15, markup=False)
            self._show()
        elif event.state == WorkerState.SUCCESS and isinstance(worker.result, _Loaded):
            self.reading = None
            loaded = worker.result
            for message, severity in loaded.problems:
                self.notify(message, severity=severity, timeout=15, markup=False)  # type: ignore[arg-type]
            for progress in loaded.to_save:
                self._save(progress)
            if self.session is not None:
                asking = self.session.current
                self.session.join(loaded.session)
                if self.session.current is asking:
                    self._show_status()  # the same question, more left
                    return
            self._show()

    def _stored_retention(self) -> float:
        """The desired retention from the app's settings (a value out of range was replaced
        by the default, and the learner told, when the settings were loaded)."""
        return self.context.desired_retention

    def _save(self, progress: LessonProgress) -> None:
        if progress is self.context.progress:
            self.context.save_open_lesson()  # it reports a failure itself and retries on quit
            return
        try:
            self.context.store.save(progress)
        except ProgressError as error:
            self.notify(strings.SAVE_FAILED.format(error=error), severity="error", timeout=20)

    # ----------------------------------------------------------------- phases
    @property
    def phase(self) -> str:
        """``problem``, ``loading`` (nothing to ask until the other lessons are read),
        ``answer``, ``feedback`` or ``done``."""
        if self.session is None:
            return "problem"
        if self.session.current is None:
            return "loading" if self.reading is not None else "done"
        return "feedback" if self.session.grade is not None else "answer"

    @property
    def answer_kind(self) -> str:
        session = self.session
        return session.current.answer_kind if session and session.current else ""

    @property
    def answer_field(self) -> str:
        """The answer box's name as on screen (its placeholder), with the drill's unit."""
        session = self.session
        unit = session.current.unit if session and session.current else ""
        return strings.QUIZ_ANSWER_FIELDS.get(unit, strings.QUIZ_ANSWER_FIELD)

    @property
    def typing(self) -> bool:
        """Whether the focus is in the answer box."""
        return self.focused is self.query_one("#quiz-answer", QuizAnswer)

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        phase, kind = self.phase, self.answer_kind
        typed = kind in ("text", "number")
        if action == "blur":
            return self.typing
        if action in _OUTSIDE_THE_BOX and self.typing:
            return False
        if action == "submit":
            return phase == "answer" and typed
        if action == "edit":
            return phase == "answer" and typed
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
        if action in ("undo", "retention", "stats"):
            return self.session is not None
        return True

    @on(TextArea.Changed, "#quiz-answer")
    def _answer_typed(self, event: TextArea.Changed) -> None:
        """Keep what is typed as the question's draft (saved as other typing is), so an answer
        not submitted is never lost: quitting, a signal or leaving the quiz keeps it."""
        if self.session is None or self.phase != "answer":
            return
        changed = self.session.keep_draft(event.text_area.text)
        if changed is not None:
            self.context.draft_changed(changed)
            # Typing has begun: the last rating's bar gives its rows back to the answer box.
            self._rated_said()

    def on_descendant_focus(self) -> None:
        self.refresh_bindings()

    def on_descendant_blur(self) -> None:
        self.refresh_bindings()

    # ----------------------------------------------------------------- display
    def _show(self) -> None:
        """Redraw everything for the current phase, move the focus, refresh the footer."""
        status = self.query_one("#quiz-status", FittingLine)
        prompt = self.query_one("#quiz-prompt", Static)
        statement = self.query_one("#quiz-statement", Static)
        question_box = self.query_one("#quiz-question", VerticalScroll)
        options = self.query_one("#quiz-options", Static)
        instruction = self.query_one("#quiz-instruction", Static)
        from_lesson = self.query_one("#quiz-from-lesson", Static)
        answer = self.query_one("#quiz-answer", QuizAnswer)
        feedback = self.query_one("#quiz-feedback", Static)
        plots = self.query_one("#quiz-plots", Vertical)
        ratings = self.query_one("#quiz-ratings", Static)
        body = self.query_one("#quiz-body", VerticalScroll)
        phase = self.phase
        session = self.session
        for widget in (
            statement,
            options,
            instruction,
            from_lesson,
            answer,
            feedback,
            plots,
            ratings,
        ):
            widget.display = False
        question_box.display = True
        self.query_one("#quiz-question").scroll_home(animate=False)
        if session is None:
            status.show([strings.QUIZ_TITLE])
            prompt.update(Text(strings.QUIZ_PROBLEM.format(error=self.problem)))
            body.focus()
            self.refresh_bindings()
            return
        if phase == "loading":
            self._show_status()
            prompt.update(Text(strings.QUIZ_LOADING_ALL))
            body.focus()
            self.refresh_bindings()
            return
        if phase == "done":
            status.show([strings.QUIZ_TITLE])
            rows = session.stats()
            prompt.update(self._summary(rows))
            self._show_rated(ratings)
            plots.display = True
            self.call_after_refresh(self._draw_plots, rows)
            body.scroll_home(animate=False)
            body.focus()
            self.refresh_bindings()
            return
        question = session.current
        assert question is not None
        self._show_status()
        asked = Group(*(BrokenLines(line, "") for line in question.prompt.splitlines()))
        keyed = phase == "answer" and question.answer_kind in ("true-false", "choice")
        question_box.display = not keyed
        statement.display = keyed
        (statement if keyed else prompt).update(asked)
        if question.options and phase == "answer":
            # Broken by the lesson's rules, each choice's wrapped lines under its text. Once
            # answered, the verdict quotes the choice made and the one expected.
            choices = (
                BrokenLines(f"{letter}) {text}", "   ")
                for letter, text in zip(_LETTERS, question.options, strict=False)
            )
            options.update(Group(*choices))
            options.display = True
        if question.answer_kind == "true-false" and phase == "answer":
            instruction.update(BrokenLines(strings.QUIZ_JUDGE_HINT, ""))
            instruction.display = True
        draft = session.draft()
        if question is not self._filled_for:
            # A new question: the box starts with the answer typed and not submitted last
            # time, else with the lesson's answer to it, if any.
            self._filled_for = question
            answer.placeholder = strings.QUIZ_PLACEHOLDER.format(field=self.answer_field)
            answer.load_text(session.lesson_answer() if draft is None else draft)
            answer.move_cursor(answer.document.end)
        if question.answer_kind == "text" or (
            question.answer_kind == "number" and phase == "answer"
        ):
            # A graded number is quoted in the verdict ("yours: 300"): its box goes, and the
            # verdict is the body's first line.
            answer.display = True
            answer.read_only = phase != "answer"
            answer.can_focus = phase == "answer"
            from_lesson.update(
                strings.QUIZ_FROM_LESSON if draft is None else strings.QUIZ_FROM_DRAFT
            )
            from_lesson.display = phase == "answer" and (
                draft is not None or bool(session.lesson_answer())
            )
        if phase == "answer":
            if question.answer_kind in ("text", "number"):
                answer.focus()
            else:
                body.focus()
            body.scroll_home(animate=False)
            self._show_rated(ratings)
        else:
            self._rated = None
            feedback.update(self._feedback())
            feedback.display = True
            ratings.update(self._rating_bar())
            ratings.display = True
            body.focus()
            # A self-check's own answer above the key points, to compare; else the verdict
            # first, under the question (scrolled to below the choices or the answer box a
            # frame after the body grew, it stayed out of view in a terminal at 40x12).
            body.scroll_home(animate=False)
            if question.answer_kind == "text":
                # Placed once the body is laid out with them (_body_laid_out): a callback
                # after the next refresh can run before that layout, in a terminal.
                self._key_points_for = question
        self.refresh_bindings()

    def _body_laid_out(self, _size: object) -> None:
        """The body's scrollable size changed: it was laid out anew."""
        if self._key_points_for is not None:
            self.call_later(self._key_points_into_view)  # once the whole layout is done

    def _key_points_into_view(self) -> None:
        """Where the learner's answer above a self-check's key points leaves them less than
        half the body (a terminal at 40x12: the answer box filled it, the key points out of
        view with no sign of them), scroll their heading to the body's top; the answer is
        above, a scroll away."""
        question, self._key_points_for = self._key_points_for, None
        session = self.session
        if session is None or session.current is not question or self.phase != "feedback":
            return  # rated (or undone) meanwhile
        body = self.query_one("#quiz-body", VerticalScroll)
        feedback = self.query_one("#quiz-feedback", Static)
        rows = body.scrollable_content_region.height
        top = feedback.virtual_region.y  # in the body scrolled to its top, as _show asked
        if rows - top < min(feedback.outer_size.height, (rows + 1) // 2):
            # Deferred as _show's scroll_home is, so applied after it.
            body.scroll_to(y=top, animate=False)

    def _show_rated(self, ratings: Static) -> None:
        """The last rating in the bar above the footer, under the next question (nothing of
        which it covers), while it is news."""
        if self._rated is not None:
            ratings.update(BrokenLines(self._rated, ""))
            ratings.display = True

    def _rated_said(self) -> None:
        """The last rating has been on screen long enough, or the learner types the next
        answer: its bar goes (in the answer phase; after an answer the bar holds the rating
        keys)."""
        if self._rated_timer is not None:
            self._rated_timer.stop()
            self._rated_timer = None
        if self._rated is not None:
            self._rated = None
            self.query_one("#quiz-ratings", Static).display = False

    def _show_status(self) -> None:
        """The status line: the question's lesson and kind, items left and done, the target
        retention; and while other lessons are read, how many."""
        status = self.query_one("#quiz-status", FittingLine)
        session = self.session
        loading = ""
        if self.reading is not None:
            loading = strings.QUIZ_LOADING.format(read=self.reading[0], total=self.reading[1])
        if session is None or session.current is None:
            status.show([strings.QUIZ_TITLE], loading)
            return
        item = session.current.item
        line = strings.QUIZ_STATUS.format(
            lesson=item.lesson_id,
            kind=strings.QUIZ_KINDS.get(item.kind, item.kind),
            left=session.remaining,
            done=session.reviewed_this_session,
            target=f"{session.desired_retention:.0%}",
        )
        status.show(line.split(PART_SEPARATOR), loading)

    def _draw_plots(self, rows: list[LessonStats]) -> None:
        from tui.widgets.review_plots import ReviewPlots  # textual-plotext: loaded when needed

        plots = self.query_one("#quiz-plots", Vertical)
        found = plots.query(ReviewPlots)
        if found:
            found.first().show(rows)
            return
        widget = ReviewPlots()
        plots.mount(widget)
        self.call_after_refresh(widget.show, rows)

    def _rating_bar(self) -> StyledLines:
        """Each rating key with the interval fsrs gives it now, the suggested one in bold."""
        session = self.session
        assert session is not None
        suggested = session.grade.suggested if session.grade else None
        text = Text()
        for rating, interval in session.intervals().items():
            if text:
                text.append("  ·  ")
            label = strings.QUIZ_RATING_KEY.format(
                key=rating, label=gettext(RATINGS[rating]), interval=format_interval(interval)
            )
            # One unit where it fits: never "3" at a line's end and "Good 10 min" on the next.
            text.append(unbreakable(label), style="bold reverse" if rating == suggested else "")
        return StyledLines(text)

    def _feedback(self) -> Group:
        """Right or not, the answers, then the worked solution or the key points, broken into
        lines by the lesson's rules (Chinese has no spaces for the terminal's own wrap), the
        sources and the rating hint."""
        session = self.session
        assert session is not None and session.current is not None and session.grade is not None
        question, grade = session.current, session.grade
        text = Text()
        if grade.correct is True:
            text.append(strings.QUIZ_RIGHT, style="bold green")
        elif grade.correct is False:
            text.append(strings.QUIZ_WRONG, style="bold red")
        answers: list[BrokenLines] = []
        if question.answer_kind == "choice" and question.options:
            # Each choice whole on lines of its own, its letter on the line of its text: the
            # letters alone ("yours: a  expected: d)", the choice wrapped away) said nothing.
            shown = (
                (strings.QUIZ_YOUR_ANSWER, question.choice_text(CHOICE_KEYS.index(grade.answer))),
                (strings.QUIZ_EXPECTED, question.expected_text()),
            )
            for label, choice in shown:
                glued = choice.replace(") ", ")" + NO_BREAK_SPACE, 1)
                answers.append(BrokenLines(label + glued))
        elif grade.correct is not None:
            # A true/false answer is kept as "true" or "false": shown in the interface language.
            answer = gettext(grade.answer) if question.answer_kind == "true-false" else grade.answer
            # As graded (the spaces and line breaks around it are not), on the verdict's line: a
            # line break typed inside it is written \n, as every message quotes what was typed.
            answer = escaped(answer.strip())
            text.append("  " + unbreakable(strings.QUIZ_YOUR_ANSWER + answer))
            text.append("  " + unbreakable(strings.QUIZ_EXPECTED + question.expected_text()))
        heading = Text(
            strings.QUIZ_KEY_POINTS if question.answer_kind == "text" else strings.QUIZ_SOLUTION,
            style="bold",
        )
        after = Text()
        if question.sources:
            after.append(
                strings.KEY_POINTS_SOURCES
                + gettext("; ").join(gettext(source) for source in question.sources)
                + "\n",
                style="dim",
            )
        if grade.suggested is not None:
            label = gettext(RATINGS[grade.suggested])
            hint = strings.QUIZ_RATE_SUGGESTED.format(rating=f"{grade.suggested} {label}")
        else:
            hint = strings.QUIZ_RATE_HINT
        after.append(hint, style="italic")
        solution = (BrokenLines(line) for line in question.solution.splitlines())
        verdict = [StyledLines(text)] if text else []
        return Group(*verdict, *answers, heading, *solution, after)

    def _summary(self, rows: list[LessonStats]) -> Text:
        session = self.session
        assert session is not None
        text = Text(strings.QUIZ_DONE.format(done=session.reviewed_this_session) + "\n")
        if session.held_back:
            text.append(strings.quiz_held_back(session.held_back) + "\n")
        if session.answered_today:
            text.append(strings.quiz_answered_today(len(session.answered_today)))
            text.append("\n")
        text.append("\n")
        text.append(self.stats_lines(session, rows))
        text.append("\n" + strings.QUIZ_DONE_HINT)
        return text

    def stats_lines(self, session: QuizSession, rows: list[LessonStats]) -> str:
        """One line per lesson: recall, retrievability, next due in local time and how far off."""
        lines = []
        now = session.now()
        for row in rows:
            next_due = "-" if row.next_due is None else next_due_text(row.next_due, session.tz, now)
            lines.append(
                strings.QUIZ_STATS_ROW.format(
                    lesson=row.lesson_id,
                    reviewed=strings.quiz_reviewed(row.reviewed, row.answered_in_lesson, row.items),
                    due=row.due,
                    recall=percent(row.recall),
                    recalled=row.recalled,
                    reviews=row.reviews,
                    retrievability=percent(row.retrievability),
                    next_due=next_due,
                )
            )
        return "\n".join(lines) + "\n"

    # ----------------------------------------------------------------- actions
    def run_quiz_action(self, action: str) -> None:
        """Run a quiz action from the command palette, if it applies now."""
        if self.check_action(action, ()):
            getattr(self, f"action_{action}")()

    def _attempt(self, answer: str | bool | int) -> None:
        assert self.session is not None
        try:
            self.session.answer(answer)
        except InputError as error:
            self.notify(labelled(self.answer_field, error.message), severity="warning")
            return
        # What a refused answer was told is not true of this one.
        withdraw(self.app, "warning")
        self._show()

    def action_submit(self) -> None:
        self._attempt(self.query_one("#quiz-answer", QuizAnswer).text)

    def action_edit(self) -> None:
        self.query_one("#quiz-answer", QuizAnswer).focus()

    def action_blur(self) -> None:
        self.query_one("#quiz-body", VerticalScroll).focus()

    def action_judge(self, value: bool) -> None:
        self._attempt(value)

    def action_choose(self, index: int) -> None:
        self._attempt(index)

    def action_rate(self, rating: int) -> None:
        assert self.session is not None
        interval = self.session.intervals()[rating]
        card = self.session.rate(rating)
        self._rated = strings.QUIZ_RATED.format(
            rating=gettext(RATINGS[rating]),
            due=local_text(card.due, self.options.tz),
            interval=duration_text(interval),
        )
        if self._rated_timer is not None:
            self._rated_timer.stop()
        self._rated_timer = self.set_timer(HINT_SECONDS, self._rated_said)
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
        self._rated = None
        self.notify(strings.QUIZ_UNDONE, timeout=3)
        self._show()

    def action_restart(self) -> None:
        assert self.session is not None
        self.session.refill()
        self._show()

    def action_leave(self) -> None:
        self.app.pop_screen()

    def action_stats(self) -> None:
        assert self.session is not None
        rows = self.session.stats()
        self.app.push_screen(ReviewStatsScreen(rows, self.stats_lines(self.session, rows)))

    def action_retention(self) -> None:
        assert self.session is not None
        self.app.push_screen(
            RetentionScreen(self.session.desired_retention), self._retention_chosen
        )

    def _retention_chosen(self, value: float | None) -> None:
        if value is None or self.session is None:
            return
        self.session.set_desired_retention(value)
        self.notify(self._store_retention(value), timeout=6)
        if self.phase != "done":
            self._show()

    def _store_retention(self, value: float) -> str:
        """Set the desired retention in the app's settings, which writes them only while this
        window holds the progress folder's lock. Returns what to tell the learner."""
        why = self.context.save_retention(value)
        if why:
            return strings.QUIZ_RETENTION_NOT_SAVED.format(value=value, why=why)
        return strings.QUIZ_RETENTION_SET.format(value=value, path=self.context.settings_path)
