"""A quiz session over one or more lessons: one queue, the current question, answers, ratings
and undo.

Order: due items first (earliest first), then new ones, taking one of each kind in turn (self-check,
misconception, matching, drill). Items of one pair (:func:`~engine.quiz.items.pair_key`) are *close*
when fewer than :data:`~engine.quiz.items.PAIR_GAP` other questions come between them in one
session; a session never asks them that close (the later one waits, if need be for the next
session). A self-check answered in the lesson today (:mod:`engine.lesson_reveals`) is not asked
again today; "today" is the learner's local date. An item with a draft (an answer typed and not
submitted, ``LessonProgress.drafts``: :meth:`QuizSession.keep_draft`) is asked first, with the
values it was asked with, and :meth:`QuizSession.draft` gives the text back for its box.

The session calls ``save`` after every answer and every rating. Clock, time zone and random seed
are injectable so runs are reproducible.
"""

from __future__ import annotations

import copy
import datetime as dt
import random
from collections.abc import Callable, Collection, Mapping, Sequence
from itertools import zip_longest

from fsrs import Card

from engine.errors import InputError
from engine.i18n import gettext as _
from engine.lesson import Lesson
from engine.lesson_reveals import lesson_reveals
from engine.progress import LessonProgress
from engine.quiz.clock import Clock, as_utc
from engine.quiz.items import PAIR_GAP, ask, lesson_items, pair_key
from engine.quiz.model import Grade, Question, QuizItem
from engine.quiz.state import QuizState, scheduler_for
from engine.quiz_stats import LessonStats, local_date
from engine.settings import DESIRED_RETENTION_DEFAULT
from engine.timefmt import utc_now


def _spread(items: Sequence[QuizItem]) -> list[QuizItem]:
    """``items`` with the members of each pair (:func:`pair_key`) as far apart as the list
    allows: the first member of every pair, then the second ones, and so on."""
    groups: dict[str, list[QuizItem]] = {}
    for item in items:
        groups.setdefault(pair_key(item), []).append(item)
    rounds = max((len(group) for group in groups.values()), default=0)
    return [group[n] for n in range(rounds) for group in groups.values() if n < len(group)]


def review_queue(
    entries: Sequence[tuple[QuizItem, QuizState]],
    now: dt.datetime,
    due_only: bool = False,
    skip: Collection[QuizItem] = (),
) -> list[QuizItem]:
    """One queue over all lessons: reviewed items that are due (earliest first), then, unless
    ``due_only``, new items, taking one of each kind in turn (self-check, misconception,
    matching, drill) so a session mixes them, and the members of a pair far apart within their
    kind. Items in ``skip`` are left out."""
    now = as_utc(now)
    due: list[tuple[dt.datetime, int, QuizItem]] = []
    new_by_kind: dict[str, list[QuizItem]] = {}
    for index, (item, state) in enumerate(entries):
        if skip and item in skip:  # an item's hash (a frozen dataclass's) is not free
            continue
        card = state.card(item.id)
        if card is None:
            new_by_kind.setdefault(item.kind, []).append(item)
        elif card.due <= now:
            due.append((card.due, index, item))
    queue = [item for _due, _index, item in sorted(due, key=lambda x: (x[0], x[1]))]
    if not due_only:
        order = ("self-check", "misconception", "matching", "drill")
        lists = [_spread(new_by_kind.get(kind, [])) for kind in order]
        queue.extend(
            item for round_items in zip_longest(*lists) for item in round_items if item is not None
        )
    return queue


class QuizSession:
    """One quiz over ``lessons``: a queue, the current question, answers, ratings and undo.

    Args:
        lessons: the lessons to quiz (one queue over all of them).
        progress: each lesson's progress by lesson id; ``progress[id].quiz`` is edited in place.
        save: called with a lesson's progress after every answer, rating and undo (for
            example :meth:`engine.progress.ProgressStore.save`); its errors propagate.
        clock: returns the current time, timezone-aware (default :func:`engine.timefmt.utc_now`).
        seed: seeds the RNG that draws drill values and choice orders (None: random).
        due_only: only items already reviewed and now due; no new items.
        desired_retention: FSRS desired retention of the ratings (0.70-0.97; the setting
            ``review.desired_retention``); :meth:`set_desired_retention` changes it.
        tz: the learner's time zone, for "today" and local dates (None: this machine's).

    Attributes:
        asked: every item asked in this session, in order (an undone item twice).
        held_back: when the session ends with items left (:attr:`remaining`), how many wait
            because each is paired with an item asked close before (:mod:`engine.quiz.session`).
        answered_today: self-check items left out because the learner answered them in the
            lesson today.

    Raises:
        ProgressError: a lesson's stored quiz data has the wrong shape.
        InputError: a naive clock (field ``clock``) or a desired retention outside 0.70-0.97.
    """

    def __init__(
        self,
        lessons: Sequence[Lesson],
        progress: Mapping[str, LessonProgress],
        save: Callable[[LessonProgress], object],
        *,
        clock: Clock = utc_now,
        seed: int | None = None,
        due_only: bool = False,
        desired_retention: float = DESIRED_RETENTION_DEFAULT,
        tz: dt.tzinfo | None = None,
    ) -> None:
        self.lessons = {lesson.id: lesson for lesson in lessons}
        self.progress = dict(progress)
        self.save = save
        self.clock = clock
        self.rng = random.Random(seed)
        self.due_only = due_only
        self.tz = tz
        self.states: dict[str, QuizState] = {}
        self.items: dict[str, tuple[QuizItem, ...]] = {}
        now = self.now()
        for lesson in lessons:
            state = QuizState(self.progress[lesson.id], desired_retention)
            items = lesson_items(lesson)
            if state.reconcile(items, now):
                self.save(self.progress[lesson.id])
            self.states[lesson.id] = state
            self.items[lesson.id] = items
        self.queue: list[QuizItem] = []
        self.current: Question | None = None
        self.grade: Grade | None = None
        self.reviewed_this_session = 0
        self.asked: list[QuizItem] = []
        self.held_back = 0
        self.answered_today: list[QuizItem] = []
        self._undo_stack: list[str] = []
        self.refill()

    def now(self) -> dt.datetime:
        """The clock's time in UTC.

        Raises:
            InputError: field ``clock`` when the clock returns a naive datetime.
        """
        return as_utc(self.clock())

    @property
    def desired_retention(self) -> float:
        """The desired retention new ratings are scheduled with."""
        return (
            next(iter(self.states.values())).scheduler.desired_retention
            if self.states
            else (DESIRED_RETENTION_DEFAULT)
        )

    def set_desired_retention(self, desired_retention: float) -> None:
        """Schedule the ratings from now on for ``desired_retention``; earlier reviews keep the
        retention they were rated with (the log records it).

        Raises:
            InputError: field ``desired_retention`` outside 0.70-0.97.
        """
        scheduler = scheduler_for(desired_retention)
        for state in self.states.values():
            state.scheduler = scheduler

    def refill(self) -> Question | None:
        """Rebuild the queue from what is due (and new) now, and ask its first item."""
        self._rebuild_queue()
        return self.next()

    def join(self, other: QuizSession) -> None:
        """Add ``other``'s lessons (built apart, for example in a worker thread while this
        session already asks) to this session: one queue over both, due items first, then new
        ones. The current question, its grade and the undo history stay; lessons this session
        already has are kept as they are. ``other`` must not be used afterwards."""
        for lesson_id, lesson in other.lessons.items():
            if lesson_id in self.lessons:
                continue
            self.lessons[lesson_id] = lesson
            self.progress[lesson_id] = other.progress[lesson_id]
            self.items[lesson_id] = other.items[lesson_id]
            self.states[lesson_id] = other.states[lesson_id]
        self._rebuild_queue()
        if self.current is None:
            self.next()
        elif self.current.item in self.queue:
            self.queue.remove(self.current.item)

    def _rebuild_queue(self) -> None:
        entries = [
            (item, self.states[lesson_id])
            for lesson_id, items in self.items.items()
            for item in items
        ]
        now = self.now()
        today = local_date(now, self.tz)
        skip = {item for item, _state in entries if self._answered_in_lesson(item, today)}
        queue = review_queue(entries, now, self.due_only, skip)
        # An answer typed and not submitted last time: its question comes back first, with it.
        drafted = [item for item in queue if item.id in self.progress[item.lesson_id].drafts]
        self.queue = [*drafted, *(item for item in queue if item not in drafted)]
        # In the order the whole queue would ask them (only when there are any: with hundreds
        # of lessons each pass over the queue is tens of ms on the event loop, where the quiz
        # joins the lessons read in its worker).
        self.answered_today = (
            [item for item in review_queue(entries, now, self.due_only) if item in skip]
            if skip
            else []
        )

    def _answered_in_lesson(self, item: QuizItem, today: dt.date) -> bool:
        if item.kind != "self-check":
            return False
        revealed = lesson_reveals(self.progress[item.lesson_id]).get(item.ref)
        return revealed is not None and local_date(revealed, self.tz) == today

    def next(self) -> Question | None:
        """Ask the first item in the queue that is not close to its pair (module docstring,
        "Order"); None when the queue is empty or every item left waits for that reason
        (:attr:`held_back`)."""
        self.grade = None
        self.held_back = 0
        recent = self.asked[-PAIR_GAP:]
        index = next(
            (
                index
                for index, item in enumerate(self.queue)
                if not any(pair_key(other) == pair_key(item) and other != item for other in recent)
            ),
            None,
        )
        if index is None:
            self.current = None
            self.held_back = len(self.queue)
            return None
        item = self.queue.pop(index)
        self.asked.append(item)
        self.current = self._ask_again(item)
        return self.current

    def _ask_again(self, item: QuizItem) -> Question:
        """Ask ``item``, with the values of its draft's asking when it has a draft (values no
        longer valid for the item: fresh ones)."""
        lesson = self.lessons[item.lesson_id]
        draft = self.progress[item.lesson_id].drafts.get(item.id)
        if draft is not None and draft["params"]:
            try:
                return ask(item, lesson, self.rng, draft["params"])
            except InputError:
                pass
        return ask(item, lesson, self.rng)

    def draft(self) -> str | None:
        """The answer typed for the current question and not submitted (kept in
        ``LessonProgress.drafts``), or None when there is none."""
        question = self.current
        if question is None:
            return None
        draft = self.progress[question.item.lesson_id].drafts.get(question.item.id)
        return None if draft is None else str(draft["text"])

    def keep_draft(self, text: str) -> LessonProgress | None:
        """Keep ``text``, the answer box as it stands, as the current question's draft; text
        equal to what the box starts with (:meth:`lesson_answer`) drops the draft instead.
        Nothing is saved here: returns the progress that changed (for the caller to save, as
        it saves other typing), or None when nothing changed or no question is open for an
        answer."""
        question = self.current
        if question is None or self.grade is not None:
            return None
        progress = self.progress[question.item.lesson_id]
        item_id = question.item.id
        if text == self.lesson_answer():
            return progress if progress.clear_draft(item_id) else None
        if self.draft() == text:
            return None
        progress.set_draft(item_id, text, question.params)
        return progress

    @property
    def remaining(self) -> int:
        """Items left after the current one."""
        return len(self.queue)

    def lesson_answer(self) -> str:
        """The answer the learner wrote in the lesson to the current self-check question
        (``LessonProgress.answers``); ``""`` for other kinds or when there is none."""
        question = self.current
        if question is None or question.item.kind != "self-check":
            return ""
        return self.progress[question.item.lesson_id].answers.get(question.item.ref, "")

    def intervals(self) -> dict[int, dt.timedelta]:
        """Each rating's next interval for the current question (1 Again ... 4 Easy), as fsrs
        computes it now (:meth:`QuizState.next_cards`); empty when there is no question."""
        question = self.current
        if question is None:
            return {}
        now = self.now()
        cards = self.states[question.item.lesson_id].next_cards(question.item.id, now)
        return {rating: card.due - now for rating, card in cards.items()}

    def answer(self, answer: str | bool | int) -> Grade:
        """Grade an answer to the current question and save it at once (before any rating);
        the question's draft, if any, is dropped: the answer is in the log now. A self-check
        answer also becomes the lesson's answer to that question when the lesson has none yet
        (``LessonProgress.answers``: the lesson's box shows it, and the plan counts it); an
        answer written in the lesson is never replaced.

        Raises:
            InputError: no current question (field ``answer``) or an answer the question cannot
                read (see :meth:`Question.grade`).
            ProgressError: saving failed.
        """
        if self.current is None:
            raise InputError("answer", _("there is no question to answer"))
        grade = self.current.grade(answer)
        self.grade = grade
        lesson_id = self.current.item.lesson_id
        progress = self.progress[lesson_id]
        progress.clear_draft(self.current.item.id)
        item = self.current.item
        lesson_answer = progress.answers.get(item.ref, "")
        if item.kind == "self-check" and isinstance(answer, str) and not lesson_answer.strip():
            progress.answers[item.ref] = answer
            progress.touch()
        self.states[lesson_id].record_answer(self.current, grade, self.now())
        self.save(self.progress[lesson_id])
        return grade

    def rate(self, rating: int) -> Card:
        """Rate the current question (after answering), save at once, and move on.

        Raises:
            InputError: field ``rating``: not answered yet, or a rating outside 1-4.
            ProgressError: saving failed.
        """
        if self.current is None or self.grade is None:
            raise InputError("rating", _("answer the question before rating it"))
        question = self.current
        lesson_id = question.item.lesson_id
        card = self.states[lesson_id].review(question, rating, self.now(), self.grade)
        self.save(self.progress[lesson_id])
        self._undo_stack.append(lesson_id)
        self.reviewed_this_session += 1
        self.next()
        return card

    def undo(self) -> Question | None:
        """Undo the last rating (this session's, else the latest in any lesson's log): its log
        entry is removed, the card restored, and the item asked again first, with the same
        values. Returns that question, or None when there is nothing to undo.

        Raises:
            ProgressError: saving failed.
        """
        lesson_id = self._undo_stack.pop() if self._undo_stack else self._latest_lesson()
        if lesson_id is None:
            return None
        state = self.states[lesson_id]
        entry = state.undo()
        if entry is None:
            return None
        self.save(self.progress[lesson_id])
        self.reviewed_this_session = max(0, self.reviewed_this_session - 1)
        item = next((i for i in self.items[lesson_id] if i.id == entry["item"]), None)
        if item is None:
            return self.current
        if self.current is not None:
            self.queue.insert(0, self.current.item)
        params = entry.get("params")
        self.current = ask(
            item, self.lessons[lesson_id], self.rng, params if isinstance(params, dict) else None
        )
        self.asked.append(item)
        self.grade = None
        self.held_back = 0
        return self.current

    def _latest_lesson(self) -> str | None:
        latest: tuple[str, str] | None = None
        for lesson_id, state in self.states.items():
            if state.log:
                stamp = str(state.log[-1]["at"])
                if latest is None or stamp >= latest[0]:
                    latest = (stamp, lesson_id)
        return latest[1] if latest else None

    def stats(self) -> list[LessonStats]:
        """Per-lesson statistics now, in lesson order (local dates in :attr:`tz`)."""
        now = self.now()
        return [self.states[lid].stats(self.items[lid], now, self.tz) for lid in self.items]


def lesson_stats(
    lesson: Lesson,
    progress: LessonProgress,
    now: dt.datetime,
    tz: dt.tzinfo | None = None,
) -> LessonStats:
    """Statistics of one lesson from its progress at ``now``, without changing the progress (the
    stored progress is copied first, so a reader such as ``shardbook stats`` or the export never
    edits it). Dates of the forecast and the recall history are local dates in ``tz`` (None:
    this machine's time zone). :func:`engine.quiz_stats.stats_text` writes a list of them as text.

    Raises:
        ProgressError: the stored quiz data has the wrong shape.
    """
    # The self-checks revealed in the lesson too: they count in ``answered_in_lesson``.
    unshared = LessonProgress(
        progress.lesson_id, quiz=copy.deepcopy(progress.quiz), revealed=list(progress.revealed)
    )
    return QuizState(unshared).stats(lesson_items(lesson), now, tz)
