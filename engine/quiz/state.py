"""The quiz part of a lesson's progress: FSRS cards, the review log, archived items.

Scheduling uses FSRS through the ``fsrs`` library (:data:`engine.sources.FSRS`):
:class:`fsrs.Scheduler` with fuzzing off and the learner's desired retention (the setting
``review.desired_retention``, :mod:`engine.settings`), which each log entry records, so replaying
the review log rebuilds the schedule exactly (:meth:`QuizState.rebuild_cards`).

State lives in ``LessonProgress.quiz`` (:class:`QuizState` edits that dict in place)::

    version: 1
    cards: {item id: fsrs Card.to_dict()}         # the schedule, a cache of the log
    log: [{item, rating 1-4, at (ISO UTC), answer, correct (true/false/null), params,
           retention (desired retention of that review; absent: 0.9, fsrs's default)}]
    answers: {item id: {answer, correct, at, params}}   # the last submitted answer
    archived: {item id: {card, at}}               # items no longer in the lesson, kept
    lesson_reveals: {lesson item id: at (ISO UTC)}      # self-checks revealed in the lesson
"""

from __future__ import annotations

import copy
import datetime as dt
import functools
import math
import zlib
from collections.abc import Sequence
from typing import Any, Final

from fsrs import Card, Rating, Scheduler

from engine.errors import InputError, ProgressError
from engine.i18n import N_
from engine.i18n import gettext as _
from engine.lesson_reveals import lesson_reveals
from engine.progress import LessonProgress
from engine.quiz.clock import as_utc, iso_utc
from engine.quiz.model import Grade, Question, QuizItem
from engine.quiz_stats import LessonStats, due_forecast, local_date, recall_history
from engine.settings import DESIRED_RETENTION_DEFAULT, DESIRED_RETENTION_RANGE

STATE_VERSION: Final = 1
RATINGS: Final = {1: N_("Again"), 2: N_("Hard"), 3: N_("Good"), 4: N_("Easy")}
"""FSRS ratings by key: 1 Again, 2 Hard, 3 Good, 4 Easy (``fsrs.Rating`` values); English
msgids (engine.i18n), translated where shown."""
RECALLED: Final = frozenset({3, 4})
"""Ratings that count as recalled in :attr:`LessonStats.recall`: Good and Easy (Again is a lapse;
Hard is counted as not recalled, so recall never flatters the learner)."""
FORECAST_DAYS: Final = 30
"""Days of :attr:`LessonStats.due_forecast`, today (local) included."""


@functools.lru_cache(maxsize=16)
def scheduler_for(desired_retention: float = DESIRED_RETENTION_DEFAULT) -> Scheduler:
    """The FSRS scheduler for ``desired_retention`` (0.70-0.97): py-fsrs 6 defaults otherwise,
    fuzzing off (fuzz draws from the global random module, so a replayed log would give other
    dues).

    Raises:
        InputError: field ``desired_retention`` outside :data:`DESIRED_RETENTION_RANGE`.
    """
    low, high = DESIRED_RETENTION_RANGE
    if isinstance(desired_retention, bool) or not low <= desired_retention <= high:
        raise InputError(
            "desired_retention",
            _("{desired_retention!r} is outside {low:.2f}-{high:.2f}").format(
                desired_retention=desired_retention, low=low, high=high
            ),
        )
    return Scheduler(desired_retention=float(desired_retention), enable_fuzzing=False)


def _card_id(lesson_id: str, item_id: str) -> int:
    return zlib.crc32(f"{lesson_id}/{item_id}".encode())


class QuizState:
    """The quiz part of one lesson's progress: ``progress.quiz``, read and written here only.

    Nested values of ``progress.quiz`` are replaced, never edited in place: the progress store
    keeps a shallow copy of the document it last saved as the base of a three-way merge, and an
    in-place edit would change that base too. After a merge the store may hand ``progress`` a new
    quiz mapping; every method reads it again when that happened.

    Args:
        progress: the lesson's progress.
        desired_retention: the FSRS desired retention of the reviews rated from now on
            (0.70-0.97; :func:`scheduler_for`). Replaying the log uses each entry's own.

    Raises (constructor and every method):
        ProgressError: the stored quiz data has the wrong shape (named by its key).
        InputError: field ``desired_retention`` outside 0.70-0.97.
    """

    def __init__(
        self, progress: LessonProgress, desired_retention: float = DESIRED_RETENTION_DEFAULT
    ) -> None:
        self.progress = progress
        self.lesson_id = progress.lesson_id
        self.scheduler = scheduler_for(desired_retention)
        self._seen: dict[str, Any] | None = None
        self._cards: dict[str, Card] = {}
        self._sync()

    @property
    def data(self) -> dict[str, Any]:
        """The quiz mapping of the progress (module docstring: layout)."""
        self._sync()
        return self.progress.quiz

    def _sync(self) -> None:
        data = self.progress.quiz
        if data is self._seen:
            return
        where = f"{self.lesson_id}.yaml: quiz"
        version = data.setdefault("version", STATE_VERSION)
        if version != STATE_VERSION:
            raise ProgressError(
                where, _("unknown quiz version {version!r}").format(version=version)
            )
        for key in ("cards", "answers", "archived"):
            if not isinstance(data.setdefault(key, {}), dict):
                raise ProgressError(where, _("'{key}' must be a mapping").format(key=key))
        log = data.setdefault("log", [])
        if not isinstance(log, list) or not all(_valid_entry(entry) for entry in log):
            raise ProgressError(where, _("'log' must be a list of {item, rating 1-4, at} entries"))
        self._seen = data
        try:
            self._cards = {str(key): Card.from_dict(value) for key, value in data["cards"].items()}
        except (KeyError, TypeError, ValueError, AttributeError):
            # The cards are a cache of the log: rebuild them rather than fail.
            self._cards = self.rebuild_cards()
            self._store_cards()

    @property
    def log(self) -> list[dict[str, Any]]:
        """The review log, oldest first (entries as stored; do not edit)."""
        entries: list[dict[str, Any]] = self.data["log"]
        return entries

    def card(self, item_id: str) -> Card | None:
        """The item's FSRS card, or None when it was never rated."""
        self._sync()
        return self._cards.get(item_id)

    def reconcile(self, items: Sequence[QuizItem], now: dt.datetime) -> list[str]:
        """Archive cards of items no longer in the lesson, and restore archived cards of items
        that are back. Returns the ids archived now. Log entries are never removed."""
        current = {item.id for item in items}
        archived: dict[str, Any] = dict(self.data["archived"])
        moved: list[str] = []
        for item_id in list(self._cards):
            if item_id not in current:
                archived[item_id] = {"card": self._cards.pop(item_id).to_dict(), "at": iso_utc(now)}
                moved.append(item_id)
        restored = [item_id for item_id in archived if item_id in current]
        if restored:
            rebuilt = self.rebuild_cards()
            for item_id in restored:
                del archived[item_id]
                if item_id in rebuilt:
                    self._cards[item_id] = rebuilt[item_id]
        if moved or restored:
            self.progress.quiz["archived"] = archived
            self._store_cards()
        return moved

    def record_answer(self, question: Question, grade: Grade, now: dt.datetime) -> None:
        """Keep the learner's last answer to the question's item (saved before rating)."""
        answers = dict(self.data["answers"])
        answers[question.item.id] = {
            "answer": grade.answer,
            "correct": grade.correct,
            "at": iso_utc(now),
            "params": copy.deepcopy(question.params),
        }
        self.progress.quiz["answers"] = answers

    def review(
        self,
        question: Question,
        rating: int,
        now: dt.datetime,
        grade: Grade | None = None,
    ) -> Card:
        """Rate the item (1 Again, 2 Hard, 3 Good, 4 Easy), append it to the log, update the card.

        Raises:
            InputError: field ``rating`` outside 1-4.
        """
        if rating not in RATINGS:
            raise InputError("rating", _("use 1 Again, 2 Hard, 3 Good or 4 Easy"))
        now = as_utc(now)
        item_id = question.item.id
        self._sync()
        card = self._cards.get(item_id) or Card(card_id=_card_id(self.lesson_id, item_id), due=now)
        card, _log = self.scheduler.review_card(card, Rating(rating), now)
        self._cards[item_id] = card
        entry = {
            "item": item_id,
            "rating": rating,
            "at": iso_utc(now),
            "answer": grade.answer if grade else "",
            "correct": grade.correct if grade else None,
            "params": copy.deepcopy(question.params),
            "retention": self.scheduler.desired_retention,
        }
        self.progress.quiz["log"] = [*self.log, entry]
        self._store_cards()
        return card

    def undo(self) -> dict[str, Any] | None:
        """Remove the last rating from the log and put its item's card back as it was before
        (rebuilt from the remaining log). Returns the removed entry, or None if the log is empty."""
        log = self.log
        if not log:
            return None
        entry = log[-1]
        self.progress.quiz["log"] = log[:-1]
        item_id = str(entry["item"])
        rebuilt = self.rebuild_cards(only=item_id)
        if item_id in rebuilt:
            self._cards[item_id] = rebuilt[item_id]
        else:
            self._cards.pop(item_id, None)
        self._store_cards()
        return entry

    def rebuild_cards(self, only: str | None = None) -> dict[str, Card]:
        """Replay the review log from scratch: the schedule it implies, by item id (archived
        items included). With fuzzing off this equals the stored cards."""
        cards: dict[str, Card] = {}
        for entry in self.progress.quiz.get("log", []):
            item_id = str(entry["item"])
            if only is not None and item_id != only:
                continue
            at = as_utc(dt.datetime.fromisoformat(str(entry["at"])), "log.at")
            card = cards.get(item_id) or Card(card_id=_card_id(self.lesson_id, item_id), due=at)
            scheduler = scheduler_for(entry.get("retention", DESIRED_RETENTION_DEFAULT))
            cards[item_id], _log = scheduler.review_card(card, Rating(int(entry["rating"])), at)
        return cards

    def next_cards(self, item_id: str, now: dt.datetime) -> dict[int, Card]:
        """What each rating (1-4) would make of the item's card at ``now``: fsrs's
        ``review_card`` on the card as it is (a new card when never rated), nothing stored. The
        card's ``due`` minus ``now`` is the interval each rating key shows."""
        now = as_utc(now)
        self._sync()
        card = self._cards.get(item_id) or Card(card_id=_card_id(self.lesson_id, item_id), due=now)
        return {
            rating: self.scheduler.review_card(card, Rating(rating), now)[0] for rating in RATINGS
        }

    def stats(
        self, items: Sequence[QuizItem], now: dt.datetime, tz: dt.tzinfo | None = None
    ) -> LessonStats:
        """Statistics of this lesson's current ``items`` at ``now``; dates in the forecast and
        the recall history are local dates in ``tz`` (None: this machine's time zone)."""
        now = as_utc(now)
        self._sync()
        current = {item.id for item in items}
        cards = [card for item_id, card in self._cards.items() if item_id in current]
        archived = set(self.data["archived"]) | (set(self._cards) - current)
        retrievability = (
            math.fsum(self.scheduler.get_card_retrievability(card, now) for card in cards)
            / len(cards)
            if cards
            else None
        )
        # A self-check revealed in the lesson was answered there; once rated in the quiz it
        # counts in ``reviewed`` instead.
        revealed = set(self.progress.revealed) | set(lesson_reveals(self.progress))
        in_lesson = sum(
            1
            for item in items
            if item.kind == "self-check" and item.ref in revealed and item.id not in self._cards
        )
        log = self.log
        recalled = sum(1 for entry in log if int(entry["rating"]) in RECALLED)
        today = local_date(now, tz)
        reviews = (
            (dt.datetime.fromisoformat(str(entry["at"])), int(entry["rating"]) in RECALLED)
            for entry in log
        )
        return LessonStats(
            lesson_id=self.lesson_id,
            items=len(current),
            new=len(current) - len(cards),
            reviewed=len(cards),
            reviews=len(log),
            due=sum(1 for card in cards if card.due <= now),
            retention=retrievability,
            archived=len(archived),
            next_due=iso_utc(min(card.due for card in cards)) if cards else None,
            recalled=recalled,
            recall=recalled / len(log) if log else None,
            retrievability=retrievability,
            due_forecast=due_forecast((card.due for card in cards), today, tz, FORECAST_DAYS),
            recall_history=recall_history(reviews, today, tz, FORECAST_DAYS),
            answered_in_lesson=in_lesson,
        )

    def _store_cards(self) -> None:
        self.progress.quiz["cards"] = {key: card.to_dict() for key, card in self._cards.items()}


def _valid_entry(entry: object) -> bool:
    if not isinstance(entry, dict):
        return False
    if not isinstance(entry.get("item"), str) or entry.get("rating") not in RATINGS:
        return False
    try:
        moment = dt.datetime.fromisoformat(str(entry.get("at")))
    except ValueError:
        return False
    retention = entry.get("retention", DESIRED_RETENTION_DEFAULT)
    low, high = DESIRED_RETENTION_RANGE
    if isinstance(retention, bool) or not isinstance(retention, int | float):
        return False
    return moment.tzinfo is not None and low <= retention <= high
