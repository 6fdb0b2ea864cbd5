"""The progress document: :class:`LessonProgress` and the layout of its file (schema version,
migrations, the shape each key must have when read).
"""

from __future__ import annotations

import copy
import datetime as dt
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal, get_args

from engine.errors import InputError, ProgressError
from engine.i18n import N_
from engine.i18n import gettext as _
from engine.timefmt import parse_utc, utc_iso

SCHEMA_VERSION = 3


def _v1_to_v2(data: dict[str, Any]) -> dict[str, Any]:
    """Version 2 keeps every version-1 key and adds the guided-study records, empty: nothing
    in a version-1 file says which sections were read, how objectives were rated, which
    answers were looked at first, or when the learner studied."""
    return {**data, "read": [], "ratings": {}, "looked": {}, "sessions": []}


def _v2_to_v3(data: dict[str, Any]) -> dict[str, Any]:
    """Version 3 keeps every version-2 key and adds the quiz answers typed but not submitted,
    none: a version-2 app kept no such text."""
    return {**data, "drafts": {}}


# version n -> a function turning a version-n document into a version-(n + 1) document.
MIGRATIONS: dict[int, Callable[[dict[str, Any]], dict[str, Any]]] = {1: _v1_to_v2, 2: _v2_to_v3}


Status = Literal["not-started", "in-progress", "complete"]


STATUSES: tuple[Status, ...] = get_args(Status)


# English msgids (engine.i18n): translated where shown.
STATUS_LABELS = {
    "not-started": N_("material ready, not studied"),
    "in-progress": N_("in progress"),
    "complete": N_("complete"),
}


_LESSON_ID_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$")


RATING_LEVELS = ("not-yet", "partly", "can")
"""How well the learner can meet a learning objective, in their own judgement."""


RATING_LABELS = {"not-yet": N_("not yet"), "partly": N_("partly"), "can": N_("can")}


RATING_PHASES = ("start", "end")
"""When an objective is rated: before studying the lesson, and after."""


@dataclass(frozen=True)
class ObjectiveRating:
    """The learner's ratings of one learning objective: a level of :data:`RATING_LEVELS`, or
    ``None`` where that phase was not rated."""

    start: str | None = None
    end: str | None = None


@dataclass
class LessonProgress:
    """Everything the learner has entered for one lesson (mutable; the app edits it in place)."""

    lesson_id: str
    status: Status = "not-started"
    answers: dict[str, str] = field(default_factory=dict)
    revealed: list[str] = field(default_factory=list)
    reflections: dict[str, str] = field(default_factory=dict)
    forms: dict[str, dict[str, str]] = field(default_factory=dict)
    figures: dict[str, dict[str, float]] = field(default_factory=dict)
    notes: dict[str, str] = field(default_factory=dict)
    quiz: dict[str, Any] = field(default_factory=dict)
    updated: str = ""
    read: list[str] = field(default_factory=list)
    ratings: dict[str, dict[str, str]] = field(default_factory=dict)
    looked: dict[str, str] = field(default_factory=dict)
    sessions: list[dict[str, Any]] = field(default_factory=list)
    drafts: dict[str, dict[str, Any]] = field(default_factory=dict)

    def last_good_form(self, name: str) -> dict[str, str] | None:
        """Calculator ``name``'s form of its last good result, saved beside a form that has a
        refused field (:func:`last_good_key`); ``None`` when the form as saved is its own last
        result (or none is known)."""
        kept = self.forms.get(last_good_key(name))
        return dict(kept) if kept is not None else None

    def save_form(
        self, name: str, values: dict[str, str], last_good: dict[str, str] | None
    ) -> bool:
        """Keep calculator ``name``'s form as typed, and ``last_good``: the form of the result
        still shown while the typed one has a refused field (``None``: the typed form is good,
        or nothing was computed). Returns whether anything changed."""
        key = last_good_key(name)
        if self.forms.get(name) == values and self.forms.get(key) == last_good:
            return False
        # Replaced, never edited in place (see merge_progress).
        forms = {form: text for form, text in self.forms.items() if form != key}
        forms[name] = dict(values)
        if last_good is not None:
            forms[key] = dict(last_good)
        self.forms = forms
        return True

    def touch(self) -> None:
        """Mark the lesson as studied: "not-started" becomes "in-progress"; "complete" stays."""
        if self.status == "not-started":
            self.status = "in-progress"

    # Nested values (ratings, sessions) are replaced, never edited in place: the store keeps
    # the document it last saved as the base of a three-way merge (see merge_progress).

    def mark_read(self, section_id: str) -> bool:
        """Record that the learner read section ``section_id`` (scrolled to its end or moved
        past it). Returns True when it was not recorded before."""
        if section_id in self.read:
            return False
        self.read = [*self.read, section_id]
        return True

    def rate_objective(self, objective_id: str, phase: str, level: str | None) -> None:
        """Set the learner's rating of a learning objective for ``phase`` (``start``: before
        studying; ``end``: after); ``level`` ``None`` clears it.

        Raises:
            InputError: ``phase`` not in :data:`RATING_PHASES` (field ``phase``) or ``level``
                not in :data:`RATING_LEVELS` (field ``level``).
        """
        if phase not in RATING_PHASES:
            raise InputError(
                "phase", _("use one of {choices}").format(choices=", ".join(RATING_PHASES))
            )
        if level is not None and level not in RATING_LEVELS:
            raise InputError(
                "level", _("use one of {choices}").format(choices=", ".join(RATING_LEVELS))
            )
        rating = dict(self.ratings.get(objective_id, {}))
        if level is None:
            rating.pop(phase, None)
        else:
            rating[phase] = level
        ratings = {key: value for key, value in self.ratings.items() if key != objective_id}
        if rating:
            ratings[objective_id] = rating
        self.ratings = ratings

    def objective_rating(self, objective_id: str) -> ObjectiveRating:
        """The learner's start and end ratings of a learning objective."""
        rating = self.ratings.get(objective_id, {})
        return ObjectiveRating(start=rating.get("start"), end=rating.get("end"))

    def mark_looked(self, note_ids: Sequence[str], at: dt.datetime) -> list[str]:
        """Record that the learner chose to see the engine's answer for ``note_ids`` before
        writing them. Notes already written, and notes already marked, are not marked (looking
        after answering is not looking first). Returns the ids marked now.

        Raises:
            InputError: ``at`` has no timezone (field ``time``).
        """
        stamp = utc_iso(at)
        marked = [
            note_id
            for note_id in dict.fromkeys(note_ids)
            if note_id not in self.looked and not self.notes.get(note_id, "").strip()
        ]
        if marked:
            self.looked = {**self.looked, **dict.fromkeys(marked, stamp)}
        return marked

    def looked_before_answering(self, note_id: str) -> bool:
        """True when the learner saw the engine's answer for ``note_id`` before writing it."""
        return note_id in self.looked

    def set_draft(self, item_id: str, text: str, params: dict[str, Any]) -> None:
        """Keep ``text``, typed in the quiz's answer box for item ``item_id`` and not submitted,
        with the ``params`` that asked it (drill values; ``{}`` for a self-check), so the same
        question comes back with it."""
        self.drafts = {**self.drafts, item_id: {"text": text, "params": copy.deepcopy(params)}}

    def clear_draft(self, item_id: str) -> bool:
        """Drop the draft of item ``item_id`` (submitted, or typed back to what the box started
        with). Returns True when there was one."""
        if item_id not in self.drafts:
            return False
        self.drafts = {key: value for key, value in self.drafts.items() if key != item_id}
        return True

    def to_data(self) -> dict[str, Any]:
        """The YAML document for this progress (plain dicts, lists, str and float)."""
        return {
            "schema_version": SCHEMA_VERSION,
            "lesson": self.lesson_id,
            "status": self.status,
            "updated": self.updated,
            "answers": dict(self.answers),
            "revealed": list(self.revealed),
            "reflections": dict(self.reflections),
            "forms": {name: dict(values) for name, values in self.forms.items()},
            "figures": {name: dict(values) for name, values in self.figures.items()},
            "notes": dict(self.notes),
            "quiz": dict(self.quiz),
            "read": list(self.read),
            "ratings": {key: dict(value) for key, value in self.ratings.items()},
            "looked": dict(self.looked),
            "sessions": [_copy_session(entry) for entry in self.sessions],
            "drafts": copy.deepcopy(self.drafts),
        }


LAST_GOOD_SUFFIX = ".last-good"


def last_good_key(name: str) -> str:
    """The key in ``forms`` of calculator ``name``'s last good form (``ledger.last-good``):
    present only while the form saved under ``name`` has a refused field, so that a restart
    shows the figures the session showed and the plan counts what the learner achieved."""
    return f"{name}{LAST_GOOD_SUFFIX}"


def _copy_session(entry: dict[str, Any]) -> dict[str, Any]:
    return {key: list(value) if isinstance(value, list) else value for key, value in entry.items()}


def check_lesson_id(lesson_id: str) -> None:
    """Refuse a lesson id that cannot name a progress file.

    Raises:
        ProgressError: not 1-64 letters, digits, ``-`` or ``_``.
    """
    if not _LESSON_ID_RE.match(lesson_id):
        raise ProgressError(lesson_id, _("lesson id is not a safe file name"))


def _text_map(path: Path, data: dict[str, Any], key: str) -> dict[str, str]:
    value = data.get(key) or {}
    if not isinstance(value, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in value.items()
    ):
        raise ProgressError(str(path), _("'{key}' must map ids to text").format(key=key))
    return dict(value)


class NewerVersionError(ProgressError):
    """The file was written by a newer shardbook: not ours to move or overwrite."""


def migrate(path: Path, data: dict[str, Any]) -> dict[str, Any]:
    """``data`` brought to :data:`SCHEMA_VERSION` through :data:`MIGRATIONS`, one step at a time.

    Raises:
        ProgressError: the version is missing or not a whole number >= 1 (a NewerVersionError when
            it is above SCHEMA_VERSION).
    """
    version = data.get("schema_version")
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise ProgressError(
            str(path), _("unknown schema_version {version!r}").format(version=version)
        )
    if version > SCHEMA_VERSION:
        raise NewerVersionError(
            str(path),
            _(
                "was written by a newer shardbook (schema_version {version}; this one reads up "
                "to {supported}); it was left untouched and this lesson will not be saved over it"
            ).format(version=version, supported=SCHEMA_VERSION),
        )
    while version < SCHEMA_VERSION:
        data = {**MIGRATIONS[version](dict(data)), "schema_version": version + 1}
        version += 1
    return data


def progress_from_data(path: Path, data: dict[str, Any], lesson_id: str) -> LessonProgress:
    """The :class:`LessonProgress` of a parsed, migrated document of the current version.

    Raises:
        ProgressError: a key with the wrong shape (named), or another lesson's file.
    """
    if data.get("lesson") != lesson_id:
        raise ProgressError(
            str(path), _("belongs to lesson {lesson!r}").format(lesson=data.get("lesson"))
        )
    status = data.get("status", "not-started")
    if status not in STATUSES:
        raise ProgressError(str(path), _("unknown status {status!r}").format(status=status))
    revealed = data.get("revealed") or []
    if not isinstance(revealed, list) or not all(isinstance(x, str) for x in revealed):
        raise ProgressError(str(path), _("'revealed' must be a list of ids"))
    forms_raw = data.get("forms") or {}
    figures_raw = data.get("figures") or {}
    if not isinstance(forms_raw, dict) or not isinstance(figures_raw, dict):
        raise ProgressError(str(path), _("'forms' and 'figures' must be mappings"))
    forms = {str(name): _text_map(path, forms_raw, name) for name in forms_raw}
    figures: dict[str, dict[str, float]] = {}
    for name, values in figures_raw.items():
        if not isinstance(values, dict) or not all(
            isinstance(v, int | float) and not isinstance(v, bool) for v in values.values()
        ):
            raise ProgressError(
                str(path), _("'figures.{name}' must map names to numbers").format(name=name)
            )
        figures[str(name)] = {str(k): float(v) for k, v in values.items()}
    quiz = data.get("quiz") or {}
    if not isinstance(quiz, dict):
        raise ProgressError(str(path), _("'quiz' must be a mapping"))
    return LessonProgress(
        lesson_id=lesson_id,
        status=status,
        answers=_text_map(path, data, "answers"),
        revealed=list(revealed),
        reflections=_text_map(path, data, "reflections"),
        forms=forms,
        figures=figures,
        notes=_text_map(path, data, "notes"),
        quiz=quiz,
        updated=str(data.get("updated") or ""),
        read=_id_list(path, data, "read"),
        ratings=_ratings(path, data),
        looked=_looked(path, data),
        sessions=_sessions(path, data),
        drafts=_drafts(path, data),
    )


def _id_list(path: Path, data: dict[str, Any], key: str) -> list[str]:
    value = data.get(key) or []
    if not isinstance(value, list) or not all(isinstance(x, str) for x in value):
        raise ProgressError(str(path), _("'{key}' must be a list of ids").format(key=key))
    return list(dict.fromkeys(value))


def _ratings(path: Path, data: dict[str, Any]) -> dict[str, dict[str, str]]:
    value = data.get("ratings") or {}
    if not isinstance(value, dict):
        raise ProgressError(str(path), _("'ratings' must map objective ids to ratings"))
    ratings: dict[str, dict[str, str]] = {}
    for objective_id, rating in value.items():
        if (
            not isinstance(objective_id, str)
            or not isinstance(rating, dict)
            or not all(
                phase in RATING_PHASES and level in RATING_LEVELS for phase, level in rating.items()
            )
        ):
            raise ProgressError(
                str(path),
                _("'ratings.{objective_id}' must map {choices} to one of {choices2}").format(
                    objective_id=objective_id,
                    choices=" / ".join(RATING_PHASES),
                    choices2=", ".join(RATING_LEVELS),
                ),
            )
        if rating:
            ratings[objective_id] = dict(rating)
    return ratings


def _looked(path: Path, data: dict[str, Any]) -> dict[str, str]:
    looked = _text_map(path, data, "looked")
    for note_id, stamp in looked.items():
        if parse_utc(stamp) is None:
            raise ProgressError(
                str(path),
                _("'looked.{note_id}' must be an ISO 8601 UTC time").format(note_id=note_id),
            )
    return looked


SESSION_KEYS = ("start", "end", "steps_finished", "answers_written")
"""The keys of one session-log entry (``LessonProgress.sessions``)."""


def _sessions(path: Path, data: dict[str, Any]) -> list[dict[str, Any]]:
    value = data.get("sessions") or []
    if not isinstance(value, list):
        raise ProgressError(str(path), _("'sessions' must be a list"))
    for index, entry in enumerate(value):
        if (
            not isinstance(entry, dict)
            or set(entry) != set(SESSION_KEYS)
            or parse_utc(str(entry["start"])) is None
            or parse_utc(str(entry["end"])) is None
            or not all(
                isinstance(entry[key], list) and all(isinstance(x, str) for x in entry[key])
                for key in ("steps_finished", "answers_written")
            )
        ):
            raise ProgressError(
                str(path),
                _(
                    "'sessions[{index}]' must hold start and end (ISO 8601 UTC times), "
                    "steps_finished and answers_written (lists of ids)"
                ).format(index=index),
            )
    return [_copy_session(entry) for entry in value]


def _drafts(path: Path, data: dict[str, Any]) -> dict[str, dict[str, Any]]:
    value = data.get("drafts") or {}
    if not isinstance(value, dict):
        raise ProgressError(str(path), _("'drafts' must map quiz item ids to drafts"))
    for item_id, draft in value.items():
        if (
            not isinstance(item_id, str)
            or not isinstance(draft, dict)
            or set(draft) != {"text", "params"}
            or not isinstance(draft["text"], str)
            or not isinstance(draft["params"], dict)
        ):
            raise ProgressError(
                str(path),
                _("'drafts.{item_id}' must hold text (the answer typed) and params").format(
                    item_id=item_id
                ),
            )
    return copy.deepcopy(value)
