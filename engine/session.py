"""Study sessions: what one sitting with a lesson did, logged in the progress file and summed up.

A session starts when the learner opens a lesson and ends when they leave it (quit, or open
another lesson). :class:`StudySession` takes a snapshot of the plan's states and of the
learner's answers at the start; :meth:`StudySession.record` compares the progress with it and
keeps the result in ``LessonProgress.sessions`` (one entry per session, updated as it goes, so a
session cut short by a crash is logged up to the last save)::

    - start: '2026-12-07T10:15:00+00:00'     # ISO 8601, UTC
      end: '2026-12-07T11:40:02+00:00'
      steps_finished: [read:definition, exercise:exercise-ledger]   # plan step ids
      answers_written: [self-check-adam-memory, ex2.dp.split]       # answer, note, field ids

A step is finished in a session when it was not done at its start and is done at its end; an
answer is written when its text is not blank and differs from its text at the start.
:func:`summarize` adds what comes next (the next step, the reviews due and when) and
:func:`render_summary` prints it for the terminal after the app exits.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import Any, Final

from engine.errors import InputError
from engine.exercises import get_note, note_label
from engine.i18n import gettext as _
from engine.lesson import Lesson
from engine.linebreak import hanging_lines
from engine.plan import (
    PlanCounts,
    ReviewOutlook,
    Step,
    build_plan,
    describe_step,
    review_line,
    step_states,
)
from engine.progress import LessonProgress
from engine.timefmt import local_span, parse_utc, utc_iso

MIN_LOGGED: Final = dt.timedelta(minutes=1)
"""A session that finished no step and wrote no answer is logged only when it lasted this long
(opening the app to look something up is not a study session)."""


@dataclass(frozen=True)
class SessionRecord:
    """One entry of the session log. Times are aware UTC datetimes, to the second."""

    start: dt.datetime
    end: dt.datetime
    steps_finished: tuple[str, ...] = ()
    answers_written: tuple[str, ...] = ()

    @property
    def duration_s(self) -> float:
        """Seconds from start to end."""
        return (self.end - self.start).total_seconds()

    def to_data(self) -> dict[str, Any]:
        """The entry as stored in ``LessonProgress.sessions``."""
        return {
            "start": utc_iso(self.start),
            "end": utc_iso(self.end),
            "steps_finished": list(self.steps_finished),
            "answers_written": list(self.answers_written),
        }

    @classmethod
    def from_data(cls, entry: dict[str, Any]) -> SessionRecord:
        """An entry of ``LessonProgress.sessions`` (as the progress loader checked it).

        Raises:
            InputError: a time is not ISO 8601 with an offset (field ``sessions``).
        """
        start, end = parse_utc(str(entry.get("start"))), parse_utc(str(entry.get("end")))
        if start is None or end is None:
            raise InputError("sessions", _("start and end must be ISO 8601 times with an offset"))
        return cls(
            start=start,
            end=end,
            steps_finished=tuple(entry.get("steps_finished") or ()),
            answers_written=tuple(entry.get("answers_written") or ()),
        )

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready: the stored entry and its duration in seconds."""
        return {**self.to_data(), "duration_s": self.duration_s}


def session_log(progress: LessonProgress) -> tuple[SessionRecord, ...]:
    """The lesson's session log, oldest first."""
    return tuple(SessionRecord.from_data(entry) for entry in progress.sessions)


def _answer_texts(progress: LessonProgress) -> dict[str, str]:
    # Answer, field and note ids never collide: lesson ids have no dots and note ids
    # (ex2.dp.split, ex4) are not lesson item ids.
    return {**progress.answers, **progress.reflections, **progress.notes}


def _answer_order(lesson: Lesson) -> dict[str, int]:
    ids = [note_id for item in lesson.exercises for note_id in item.notes]
    ids += [item.id for item in lesson.self_check]
    ids += [item.id for item in lesson.reflection_fields]
    return {answer_id: index for index, answer_id in enumerate(dict.fromkeys(ids))}


def _utc_second(moment: dt.datetime) -> dt.datetime:
    return dt.datetime.fromisoformat(utc_iso(moment))


class StudySession:
    """One sitting with ``lesson``, from ``start`` (aware; stored in UTC to the second).

    Raises (constructor):
        InputError: ``start`` has no timezone (field ``time``).
    """

    def __init__(self, lesson: Lesson, progress: LessonProgress, start: dt.datetime) -> None:
        self.lesson = lesson
        self.start = _utc_second(start)
        self._states = step_states(lesson, progress)
        self._texts = _answer_texts(progress)
        self._order = _answer_order(lesson)

    def current(self, progress: LessonProgress, now: dt.datetime) -> SessionRecord:
        """What the session did up to ``now``, without recording it."""
        states = step_states(self.lesson, progress)
        finished = tuple(
            step_id
            for step_id, state in states.items()
            if state == "done" and self._states.get(step_id) != "done"
        )
        written = [
            answer_id
            for answer_id, text in _answer_texts(progress).items()
            if text.strip() and text != self._texts.get(answer_id)
        ]
        written.sort(
            key=lambda answer_id: (self._order.get(answer_id, len(self._order)), answer_id)
        )
        end = max(_utc_second(now), self.start)
        return SessionRecord(self.start, end, finished, tuple(written))

    def record(self, progress: LessonProgress, now: dt.datetime) -> SessionRecord:
        """Update this session's entry in ``progress.sessions`` (added the first time) and
        return it. A session that finished nothing, wrote nothing and is shorter than
        :data:`MIN_LOGGED` is not logged (its entry, if any, is left as it was)."""
        record = self.current(progress, now)
        if not (record.steps_finished or record.answers_written) and (
            record.end - record.start < MIN_LOGGED
        ):
            return record
        entry = record.to_data()
        others = [old for old in progress.sessions if old.get("start") != entry["start"]]
        progress.sessions = sorted([*others, entry], key=lambda old: str(old["start"]))
        return record


@dataclass(frozen=True)
class SessionSummary:
    """What a session did and what comes next, for the learner.

    Attributes:
        record: the session's times, steps finished and answers written (ids).
        finished: the steps finished, described (:func:`engine.plan.describe_step`), in order.
        written: the answers written, each with what it answers.
        counts: the plan's counts at the end of the session.
        next_step: the first unfinished step, or ``None`` when the plan is complete.
        reviews: the reviews due at the end and the next ones.
    """

    lesson_id: str
    lesson_title: str
    record: SessionRecord
    finished: tuple[str, ...]
    written: tuple[str, ...]
    counts: PlanCounts
    figure: str
    next_step: Step | None
    reviews: ReviewOutlook

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready (times ISO 8601 UTC, durations in seconds)."""
        return {
            "lesson": self.lesson_id,
            "session": self.record.as_dict(),
            "finished": list(self.finished),
            "written": list(self.written),
            "figure": self.figure,
            "counts": self.counts.as_dict(),
            "next": self.next_step.id if self.next_step else None,
            "reviews": self.reviews.as_dict(),
        }


def describe_answer(lesson: Lesson, answer_id: str) -> str:
    """What an answer id answers, in the interface language: ``self-check 1: <question>``,
    ``reflection: <label>``, ``exercise 2, DP - data parallel: which dimension is split``; the
    id itself when it names nothing known."""
    for number, item in enumerate(lesson.self_check, start=1):
        if item.id == answer_id:
            return _("self-check {number}: {title}").format(number=number, title=item.text)
    for item in lesson.reflection_fields:
        if item.id == answer_id:
            return _("reflection: {title}").format(title=item.text)
    try:
        note = get_note(answer_id)
    except InputError:
        return answer_id
    return _("exercise {number}, {label}").format(number=note.exercise, label=note_label(note))


def summarize(
    lesson: Lesson,
    progress: LessonProgress,
    record: SessionRecord,
    *,
    reviews: ReviewOutlook | None = None,
) -> SessionSummary:
    """The summary of a session (``record``, from :meth:`StudySession.record`) of ``lesson``.

    ``reviews``: the outlook at the session's end when the caller has it; otherwise computed
    (which imports the quiz engine).

    Raises:
        ProgressError: the stored quiz data has the wrong shape (only when ``reviews`` is None).
    """
    plan = build_plan(lesson, progress, record.end, reviews=reviews)
    steps = {step.id: step for step in plan.steps}
    finished = tuple(
        describe_step(steps[step_id]) if step_id in steps else step_id
        for step_id in record.steps_finished
    )
    written = tuple(describe_answer(lesson, answer_id) for answer_id in record.answers_written)
    return SessionSummary(
        lesson_id=lesson.id,
        lesson_title=lesson.title,
        record=record,
        finished=finished,
        written=written,
        counts=plan.counts,
        figure=plan.figure,
        next_step=plan.next_step,
        reviews=plan.reviews,
    )


def format_duration(seconds: float) -> str:
    """``1 h 25 min``, ``12 min``, ``40 s`` in English; ``1 小时 25 分钟``, ``12 分钟``, ``40 秒``
    in Chinese (the interface language of the moment, :mod:`engine.i18n`)."""
    whole = max(0, round(seconds))
    if whole < 60:
        return _("{seconds} s").format(seconds=whole)
    hours, minutes = divmod(whole // 60, 60)
    if hours:
        return _("{hours} h {minutes} min").format(hours=hours, minutes=minutes)
    return _("{minutes} min").format(minutes=minutes)


def render_summary(
    summary: SessionSummary, tz: dt.tzinfo | None = None, width: int | None = None
) -> str:
    """The summary as plain text for the terminal (times in ``tz``, default local).

    ``width``: the terminal's width in cells; each line is then broken to it by the reader's
    rule, its continuation lines indented under it (two cells more than the line they continue),
    where the terminal's own wrap would start them at the first column. None: one line each.
    """
    record = summary.record
    lines = [
        (
            "",
            _("Session on {lesson} {title}").format(
                lesson=summary.lesson_id, title=summary.lesson_title
            ),
        ),
        (
            "",
            _("{span} ({duration})").format(
                span=local_span(record.start, record.end, tz),
                duration=format_duration(record.duration_s),
            ),
        ),
        ("", _("steps finished: {count}").format(count=len(summary.finished))),
        *(("  ", text) for text in summary.finished),
        ("", _("answers written: {count}").format(count=len(summary.written))),
        *(("  ", text) for text in summary.written),
        (
            "",
            _("plan: {figure} steps done; {counts}").format(
                figure=summary.figure, counts=summary.counts.line()
            ),
        ),
        (
            "",
            _("next: {step}").format(step=describe_step(summary.next_step))
            if summary.next_step
            else _("next: every step is done"),
        ),
        ("", review_line(summary.reviews, tz)),
    ]
    out: list[str] = []
    for indent, text in lines:
        text = text.replace("\n", " ")
        if width is None:
            out.append(indent + text)
        else:
            out.extend(hanging_lines(text, width, indent, indent + "  "))
    return "\n".join(out) + "\n"


def session_log_rows(lesson_id: str, progress: LessonProgress) -> list[dict[str, Any]]:
    """The lesson's session log as JSON-ready rows (``shardbook stats --json``, key
    ``sessions``): lesson, start, end (ISO 8601 UTC), duration_s, steps_finished and
    answers_written (ids)."""
    return [{"lesson": lesson_id, **record.as_dict()} for record in session_log(progress)]


def render_session_log(rows: list[dict[str, Any]], tz: dt.tzinfo | None = None) -> str:
    """Rows of :func:`session_log_rows` as a tab-separated table with a heading, each sitting's
    time in ``tz`` (default local) with its offset; ``""`` when there are none."""
    if not rows:
        return ""
    headings = (_("lesson"), _("time"), _("duration"), _("steps finished"), _("answers written"))
    lines = [_("session log"), "\t".join(headings)]
    for row in rows:
        # The rows' own ISO 8601 times (session_log checked them when it read the file).
        start = dt.datetime.fromisoformat(str(row["start"]))
        end = dt.datetime.fromisoformat(str(row["end"]))
        lines.append(
            f"{row['lesson']}\t{local_span(start, end, tz)}\t{format_duration(row['duration_s'])}"
            f"\t{len(row['steps_finished'])}\t{len(row['answers_written'])}"
        )
    return "\n".join(lines) + "\n"
