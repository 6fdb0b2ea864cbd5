"""When the learner last revealed a self-check's key points in the lesson.

The quiz does not ask a self-check question again on the day the learner answered it in the lesson
(:class:`engine.quiz.QuizSession`). The moment is kept in the lesson's progress file, in the
mapping the quiz owns: ``quiz.lesson_reveals: {lesson item id: ISO 8601 UTC}``. This module is
light on purpose (no fsrs, no numpy): the lesson screen records a reveal without loading the quiz.
"""

from __future__ import annotations

import datetime as dt

from engine.progress import LessonProgress
from engine.timefmt import parse_utc, utc_iso

LESSON_REVEALS = "lesson_reveals"
"""The key of ``LessonProgress.quiz`` that holds the reveals."""


def note_lesson_reveal(progress: LessonProgress, item_id: str, now: dt.datetime) -> None:
    """Record that the key points of self-check ``item_id`` were revealed in the lesson at ``now``.

    The mapping is replaced, not edited in place (the progress store keeps the last saved
    document as the base of a merge, sharing nested values).

    Raises:
        InputError: ``now`` is naive (no timezone; an InputError is a ValueError).
    """
    stamp = utc_iso(now, timespec="auto")
    current = progress.quiz.get(LESSON_REVEALS)
    reveals = dict(current) if isinstance(current, dict) else {}
    reveals[item_id] = stamp
    progress.quiz[LESSON_REVEALS] = reveals


def lesson_reveals(progress: LessonProgress) -> dict[str, dt.datetime]:
    """The recorded reveals, by lesson item id, as aware UTC datetimes. Entries that are not an
    ISO 8601 moment with a timezone (a hand-edited file) are left out: a reveal only spares a
    question for a day, so a bad one costs nothing but that."""
    stored = progress.quiz.get(LESSON_REVEALS)
    if not isinstance(stored, dict):
        return {}
    found: dict[str, dt.datetime] = {}
    for item_id, text in stored.items():
        moment = parse_utc(str(text))
        if moment is not None:
            found[str(item_id)] = moment
    return found
