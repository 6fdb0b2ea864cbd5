"""Review statistics of a lesson: what ``shardbook stats``, the quiz screen and the export show.

:func:`engine.quiz.lesson_stats` builds a :class:`LessonStats` from a lesson's progress; the
functions here turn a review log and due dates into the figures, and :func:`stats_text` writes
them as the command line's text. Two figures answer two different questions:

- ``recall``: what the learner did. The share of reviews rated Good or Easy
  (:data:`engine.quiz.RECALLED`) among all reviews in the log; after three Again ratings it is 0.
- ``retrievability``: what the model expects now. The mean FSRS retrievability (the predicted
  chance of recall at this moment) of the reviewed items; right after a review it is near 1 even
  when the review was a lapse, which is why it is not called recall. ``retention`` is its older
  name, kept in the JSON for scripts.

Dates are the learner's local dates (stored moments are UTC): a review due at 23:30 UTC falls on
the next day east of UTC.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Final

from engine.i18n import N_
from engine.i18n import gettext as _
from engine.timefmt import local_text, relative


@dataclass(frozen=True)
class DueDay:
    """Reviews falling due on one local date (overdue ones count on today)."""

    date: dt.date
    count: int

    def as_dict(self) -> dict[str, Any]:
        return {"date": self.date.isoformat(), "count": self.count}


@dataclass(frozen=True)
class RecallDay:
    """The reviews of one local date and how many were recalled (Good or Easy)."""

    date: dt.date
    reviews: int
    recalled: int

    @property
    def recall(self) -> float | None:
        """``recalled / reviews``; None on a day without reviews."""
        return self.recalled / self.reviews if self.reviews else None

    def as_dict(self) -> dict[str, Any]:
        return {"date": self.date.isoformat(), "reviews": self.reviews, "recalled": self.recalled}


@dataclass(frozen=True)
class LessonStats:
    """Review statistics of one lesson at one moment.

    Attributes:
        lesson_id: the lesson.
        items: current items (archived ones excluded).
        new: items never rated.
        reviewed: items rated at least once.
        reviews: ratings in the log (current and archived items).
        due: reviewed items whose due date has come.
        retention: the older name of ``retrievability`` (kept for scripts).
        archived: items removed from the lesson whose history is kept.
        next_due: the earliest due date of a reviewed item (ISO 8601 UTC), None before any.
        recalled: reviews rated Good or Easy.
        recall: ``recalled / reviews`` (0-1), None before any review.
        retrievability: mean FSRS retrievability of the reviewed items now (0-1), None before
            any.
        due_forecast: reviews due on each of the next days, today (local) first; overdue
            reviews count on today.
        recall_history: reviews and recalls on each of the past days, oldest first, today last.
        answered_in_lesson: self-check items answered in the lesson with their key points
            shown there (on any day) and never rated in the quiz: reviewed by the learner, but
            not in ``reviewed``, which counts the quiz's ratings.
    """

    lesson_id: str
    items: int
    new: int
    reviewed: int
    reviews: int
    due: int
    retention: float | None
    archived: int
    next_due: str | None
    recalled: int = 0
    recall: float | None = None
    retrievability: float | None = None
    due_forecast: tuple[DueDay, ...] = ()
    recall_history: tuple[RecallDay, ...] = ()
    answered_in_lesson: int = 0

    def as_dict(self) -> dict[str, Any]:
        """The JSON object of ``shardbook stats --json`` for this lesson."""
        return {
            "lesson": self.lesson_id,
            "items": self.items,
            "new": self.new,
            "reviewed": self.reviewed,
            "reviews": self.reviews,
            "due": self.due,
            "retention": self.retention,
            "archived": self.archived,
            "next_due": self.next_due,
            "recalled": self.recalled,
            "recall": self.recall,
            "retrievability": self.retrievability,
            "due_forecast": [day.as_dict() for day in self.due_forecast],
            "recall_history": [day.as_dict() for day in self.recall_history],
            "answered_in_lesson": self.answered_in_lesson,
        }


def local_date(moment: dt.datetime, tz: dt.tzinfo | None = None) -> dt.date:
    """The learner's date of ``moment`` in ``tz`` (None: this machine's local time zone)."""
    return moment.astimezone(tz).date()


def due_forecast(
    dues: Iterable[dt.datetime], today: dt.date, tz: dt.tzinfo | None, days: int
) -> tuple[DueDay, ...]:
    """How many of ``dues`` fall on each of the ``days`` local dates from ``today``; a due date
    before ``today`` counts on ``today`` (it is waiting), one after the last day is left out."""
    counts = [0] * days
    for due in dues:
        offset = max((local_date(due, tz) - today).days, 0)
        if offset < days:
            counts[offset] += 1
    return tuple(DueDay(today + dt.timedelta(days=n), count) for n, count in enumerate(counts))


def recall_history(
    reviews: Iterable[tuple[dt.datetime, bool]],
    today: dt.date,
    tz: dt.tzinfo | None,
    days: int,
) -> tuple[RecallDay, ...]:
    """Per local date of the ``days`` ending with ``today``: the reviews (moment, recalled) made
    that day and how many were recalled."""
    first = today - dt.timedelta(days=days - 1)
    totals = [[0, 0] for _ in range(days)]
    for moment, recalled in reviews:
        offset = (local_date(moment, tz) - first).days
        if 0 <= offset < days:
            totals[offset][0] += 1
            totals[offset][1] += int(recalled)
    return tuple(
        RecallDay(first + dt.timedelta(days=n), total, good)
        for n, (total, good) in enumerate(totals)
    )


STATS_HEADINGS: Final = (
    N_("lesson"),
    N_("items"),
    N_("rated in quiz"),
    N_("due"),
    N_("new"),
    N_("reviews"),
    N_("recall"),
    N_("retrievability"),
    N_("archived"),
    N_("next due (local)"),
    N_("answered in lesson"),
)
"""The columns of :func:`stats_text`'s table (msgids; the JSON keeps its own keys)."""

WEEKDAYS: Final = (N_("Mon"), N_("Tue"), N_("Wed"), N_("Thu"), N_("Fri"), N_("Sat"), N_("Sun"))
"""Monday first, as :meth:`datetime.date.weekday` counts (the C locale's ``%a``)."""


def percent(share: float | None) -> str:
    """``0.375`` -> ``'38%'``; None -> ``'-'``."""
    return "-" if share is None else f"{share:.0%}"


def next_due_text(next_due: str, tz: dt.tzinfo | None, now: dt.datetime | None) -> str:
    """A stored due time (ISO 8601 UTC) as the learner reads it: ``2026-12-08 10:30`` in ``tz``,
    then ``(in 3 days)`` from ``now`` when given."""
    due = dt.datetime.fromisoformat(next_due)
    shown = local_text(due, tz)
    if now is None:
        return shown
    # Brackets through the catalog: full-width in Chinese text (2026-12-08 10:30（3 天后）).
    return _("{date} ({relative})").format(date=shown, relative=relative(due, now))


def stats_text(
    rows: Sequence[LessonStats],
    tz: dt.tzinfo | None = None,
    bar_width: int = 40,
    now: dt.datetime | None = None,
) -> str:
    """The statistics as text, for the command line and notes: a table (one lesson a line, tab
    separated, next due in local time, and how far off it is from ``now`` when given), then each
    lesson's forecast of the days with reviews due, with a bar of ``#`` per review (scaled to
    ``bar_width`` when more are due). Of the items reviewed, the table counts those rated in
    the quiz and, in its last column, the self-checks answered in the lesson and not rated yet
    (the quiz screen's "reviewed" is their sum)."""
    lines = ["\t".join(_(heading) for heading in STATS_HEADINGS)]
    for row in rows:
        recall = (
            _("{share} ({recalled}/{reviews} Good/Easy)").format(
                share=percent(row.recall), recalled=row.recalled, reviews=row.reviews
            )
            if row.reviews
            else "-"
        )
        next_due = "-" if row.next_due is None else next_due_text(row.next_due, tz, now)
        lines.append(
            f"{row.lesson_id}\t{row.items}\t{row.reviewed}\t{row.due}\t{row.new}\t{row.reviews}"
            f"\t{recall}\t{percent(row.retrievability)}\t{row.archived}\t{next_due}"
            f"\t{row.answered_in_lesson}"
        )
    for row in rows:
        if not row.due_forecast:
            continue
        busy = [day for day in row.due_forecast if day.count]
        span = len(row.due_forecast)
        lines.append("")
        if not busy:
            lines.append(
                _("{lesson}: nothing due in the next {days} days").format(
                    lesson=row.lesson_id, days=span
                )
            )
            continue
        lines.append(
            _("{lesson}: reviews due in the next {days} days (local dates)").format(
                lesson=row.lesson_id, days=span
            )
        )
        most = max(day.count for day in busy)
        for day in busy:
            width = max(1, round(day.count * bar_width / most)) if most > bar_width else day.count
            weekday = _(WEEKDAYS[day.date.weekday()])
            lines.append(f"  {day.date.isoformat()} {weekday} {day.count:4d} {'#' * width}")
    return "\n".join(lines)
