"""The learner's progress: one YAML file per lesson, written atomically.

A progress file holds what cannot be recomputed: self-check answers, reflection notes, the
learner's own calculator figures, the calculator forms as last typed, and the lesson's status.

Writes follow SQLite's and Git's discipline: the new text goes to a temporary file in the same
folder, is flushed and fsynced, and replaces the old file with ``os.replace`` (atomic on POSIX);
the folder is then fsynced so the rename itself survives a power cut. Before replacing, the
dumped YAML is parsed back and compared with what was meant to be saved, so a text YAML cannot
round-trip is refused instead of silently altered.

A file that cannot be parsed is never treated as empty and never overwritten: it is moved aside
under a timestamped name (``S15.yaml.unreadable-20261129T101500Z``) and reported. A file that
exists but cannot be opened (permissions), or that a newer shardbook wrote, is left where it is
and the lesson is not saved over it.

Two app instances on one folder: the app takes ``.shardbook.lock`` in the folder (the
``filelock`` library: an OS lock, released by the kernel even when the holder is killed). The
second instance is read-only and says so; its text stays in memory. When it may write again
(ctrl+s after the first one quit), :meth:`ProgressStore.save` merges: a field this instance
changed since it loaded the file keeps its text, every other field takes the text on disk, so
neither window's words are lost.

Versions: ``schema_version`` names the layout below. :data:`MIGRATIONS` turns a document of
version ``n`` into version ``n + 1``; a file of any earlier version is migrated when loaded
and saved in the current layout (tests/test_progress.py holds a file of every version and loads
each). Version 2 added ``read``, ``ratings``, ``looked`` and ``sessions``; a version-1 file gets
them empty.

File layout (``schema_version: 2``)::

    schema_version: 2
    lesson: S15
    status: not-started | in-progress | complete
    updated: 2026-11-29T10:15:00+00:00
    answers: {self-check item id: text}
    revealed: [self-check item ids whose key points were shown]
    reflections: {reflection field id: text}
    forms: {calculator name: {field: text as typed}}
    figures: {name: {key: number}}     # e.g. exercise1: {parameters: bytes, ...}
    notes: {note id: text}             # the learner's exercise notes, e.g. ex2.dp.split
    quiz: {...}                        # owned by engine.quiz: cards and review history
    read: [section ids read to their end or moved past]
    ratings: {objective id: {start: level, end: level}}   # level: not-yet | partly | can
    looked: {note id: UTC time}        # the engine's answer was shown before the note was written
    sessions:                          # the session log, oldest first (engine.session)
      - {start: UTC time, end: UTC time, steps_finished: [plan step ids], answers_written: [ids]}

Times are ISO 8601 in UTC with an explicit offset (``2026-12-07T10:15:00+00:00``).
"""

from __future__ import annotations

import contextlib
import datetime as dt
import errno
import os
import re
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any, Literal, get_args

import yaml
from filelock import FileLock, Timeout

from engine.errors import InputError, ProgressError

SCHEMA_VERSION = 2


def _v1_to_v2(data: dict[str, Any]) -> dict[str, Any]:
    """Version 2 keeps every version-1 key and adds the guided-study records, empty: nothing
    in a version-1 file says which sections were read, how objectives were rated, which
    answers were looked at first, or when the learner studied."""
    return {**data, "read": [], "ratings": {}, "looked": {}, "sessions": []}


# version n -> a function turning a version-n document into a version-(n + 1) document.
MIGRATIONS: dict[int, Callable[[dict[str, Any]], dict[str, Any]]] = {1: _v1_to_v2}
LOCK_NAME = ".shardbook.lock"
# What the learner can do about each error a save meets (errno -> plain words).
_ERRNO_WORDS = {
    errno.ENOSPC: "the disk is full",
    errno.EDQUOT: "the disk quota is used up",
    errno.EROFS: "the folder is on a read-only file system",
    errno.EACCES: "permission denied",
    errno.EPERM: "permission denied",
}
_TEMP_RE = re.compile(r"^\..+\.yaml\.[A-Za-z0-9_]+\.tmp$")
Status = Literal["not-started", "in-progress", "complete"]
STATUSES: tuple[Status, ...] = get_args(Status)
STATUS_LABELS = {
    "not-started": "material ready, not studied",
    "in-progress": "in progress",
    "complete": "complete",
}
_LESSON_ID_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$")
RATING_LEVELS = ("not-yet", "partly", "can")
"""How well the learner can meet a learning objective, in their own judgement."""
RATING_LABELS = {"not-yet": "not yet", "partly": "partly", "can": "can"}
RATING_PHASES = ("start", "end")
"""When an objective is rated: before studying the lesson, and after."""


@dataclass(frozen=True)
class ObjectiveRating:
    """The learner's ratings of one learning objective: a level of :data:`RATING_LEVELS`, or
    ``None`` where that phase was not rated."""

    start: str | None = None
    end: str | None = None


def utc_stamp(moment: dt.datetime) -> str:
    """``moment`` as ISO 8601 UTC with an explicit offset, to the second:
    ``2026-12-07T10:15:00+00:00``.

    Raises:
        InputError: ``moment`` has no timezone (field ``time``).
    """
    if moment.tzinfo is None:
        raise InputError("time", "needs a timezone-aware datetime (UTC)")
    return moment.astimezone(dt.UTC).isoformat(timespec="seconds")


def parse_utc(text: str) -> dt.datetime | None:
    """An ISO 8601 time with an offset as an aware UTC datetime; ``None`` when ``text`` is not
    one (no offset, or not a time)."""
    try:
        moment = dt.datetime.fromisoformat(text)
    except (TypeError, ValueError):
        return None
    if moment.tzinfo is None:
        return None
    return moment.astimezone(dt.UTC)


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
            raise InputError("phase", f"use one of {', '.join(RATING_PHASES)}")
        if level is not None and level not in RATING_LEVELS:
            raise InputError("level", f"use one of {', '.join(RATING_LEVELS)}")
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
        stamp = utc_stamp(at)
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
        }


def _copy_session(entry: dict[str, Any]) -> dict[str, Any]:
    return {key: list(value) if isinstance(value, list) else value for key, value in entry.items()}


@dataclass(frozen=True)
class LoadResult:
    """What :meth:`ProgressStore.load` found.

    Attributes:
        progress: the learner's progress (fresh when there was no readable file).
        quarantined: where an unreadable file was moved, or ``None``.
        message: a sentence for the learner when something was moved aside, else ``""``.
    """

    progress: LessonProgress
    quarantined: Path | None = None
    message: str = ""


def _check_lesson_id(lesson_id: str) -> None:
    if not _LESSON_ID_RE.match(lesson_id):
        raise ProgressError(lesson_id, "lesson id is not a safe file name")


def _text_map(path: Path, data: dict[str, Any], key: str) -> dict[str, str]:
    value = data.get(key) or {}
    if not isinstance(value, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in value.items()
    ):
        raise ProgressError(str(path), f"'{key}' must map ids to text")
    return dict(value)


class _NewerVersion(ProgressError):
    """The file was written by a newer shardbook: not ours to move or overwrite."""


def migrate(path: Path, data: dict[str, Any]) -> dict[str, Any]:
    """``data`` brought to :data:`SCHEMA_VERSION` through :data:`MIGRATIONS`, one step at a time.

    Raises:
        ProgressError: the version is missing or not a whole number >= 1 (a _NewerVersion when
            it is above SCHEMA_VERSION).
    """
    version = data.get("schema_version")
    if not isinstance(version, int) or isinstance(version, bool) or version < 1:
        raise ProgressError(str(path), f"unknown schema_version {version!r}")
    if version > SCHEMA_VERSION:
        raise _NewerVersion(
            str(path),
            f"was written by a newer shardbook (schema_version {version}; this one reads up to "
            f"{SCHEMA_VERSION}); it was left untouched and this lesson will not be saved over it",
        )
    while version < SCHEMA_VERSION:
        data = {**MIGRATIONS[version](dict(data)), "schema_version": version + 1}
        version += 1
    return data


def _parse(path: Path, text: str, lesson_id: str) -> LessonProgress:
    try:
        data = _safe_load(text)
    except yaml.YAMLError as error:
        raise ProgressError(str(path), f"not valid YAML ({error})") from None
    except RecursionError:
        raise ProgressError(str(path), "not valid YAML (nested too deeply)") from None
    if not isinstance(data, dict):
        raise ProgressError(str(path), "not a progress file (expected a mapping)")
    return _from_data(path, migrate(path, data), lesson_id)


def _from_data(path: Path, data: dict[str, Any], lesson_id: str) -> LessonProgress:
    if data.get("lesson") != lesson_id:
        raise ProgressError(str(path), f"belongs to lesson {data.get('lesson')!r}")
    status = data.get("status", "not-started")
    if status not in STATUSES:
        raise ProgressError(str(path), f"unknown status {status!r}")
    revealed = data.get("revealed") or []
    if not isinstance(revealed, list) or not all(isinstance(x, str) for x in revealed):
        raise ProgressError(str(path), "'revealed' must be a list of ids")
    forms_raw = data.get("forms") or {}
    figures_raw = data.get("figures") or {}
    if not isinstance(forms_raw, dict) or not isinstance(figures_raw, dict):
        raise ProgressError(str(path), "'forms' and 'figures' must be mappings")
    forms = {str(name): _text_map(path, forms_raw, name) for name in forms_raw}
    figures: dict[str, dict[str, float]] = {}
    for name, values in figures_raw.items():
        if not isinstance(values, dict) or not all(
            isinstance(v, int | float) and not isinstance(v, bool) for v in values.values()
        ):
            raise ProgressError(str(path), f"'figures.{name}' must map names to numbers")
        figures[str(name)] = {str(k): float(v) for k, v in values.items()}
    quiz = data.get("quiz") or {}
    if not isinstance(quiz, dict):
        raise ProgressError(str(path), "'quiz' must be a mapping")
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
    )


def _id_list(path: Path, data: dict[str, Any], key: str) -> list[str]:
    value = data.get(key) or []
    if not isinstance(value, list) or not all(isinstance(x, str) for x in value):
        raise ProgressError(str(path), f"'{key}' must be a list of ids")
    return list(dict.fromkeys(value))


def _ratings(path: Path, data: dict[str, Any]) -> dict[str, dict[str, str]]:
    value = data.get("ratings") or {}
    if not isinstance(value, dict):
        raise ProgressError(str(path), "'ratings' must map objective ids to ratings")
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
                f"'ratings.{objective_id}' must map {' / '.join(RATING_PHASES)} to one of "
                f"{', '.join(RATING_LEVELS)}",
            )
        if rating:
            ratings[objective_id] = dict(rating)
    return ratings


def _looked(path: Path, data: dict[str, Any]) -> dict[str, str]:
    looked = _text_map(path, data, "looked")
    for note_id, stamp in looked.items():
        if parse_utc(stamp) is None:
            raise ProgressError(str(path), f"'looked.{note_id}' must be an ISO 8601 UTC time")
    return looked


SESSION_KEYS = ("start", "end", "steps_finished", "answers_written")
"""The keys of one session-log entry (``LessonProgress.sessions``)."""


def _sessions(path: Path, data: dict[str, Any]) -> list[dict[str, Any]]:
    value = data.get("sessions") or []
    if not isinstance(value, list):
        raise ProgressError(str(path), "'sessions' must be a list")
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
                f"'sessions[{index}]' must hold start and end (ISO 8601 UTC times), "
                "steps_finished and answers_written (lists of ids)",
            )
    return [_copy_session(entry) for entry in value]


# libyaml's C parser and emitter, when PyYAML was built with them, are ~8x faster than the pure
# Python ones on a progress file with a long review log; both are the safe variants.
_SafeLoader: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_SafeDumperBase: type[yaml.SafeDumper] = getattr(yaml, "CSafeDumper", yaml.SafeDumper)


def _safe_load(text: str) -> Any:
    """Parse YAML with the safe loader (C when available)."""
    return yaml.load(text, Loader=_SafeLoader)


class _Dumper(_SafeDumperBase):  # type: ignore[valid-type,misc]
    """The safe dumper, with text that holds line breaks or control characters double-quoted.

    PyYAML's plain and single-quoted styles fold or drop some characters (NEL ``\x85``,
    U+2028, a BOM, ``\r``); its double-quoted style escapes them, so they round-trip exactly.
    """


def _represent_str(dumper: yaml.SafeDumper, text: str) -> yaml.ScalarNode:
    style = None if text.isprintable() else '"'
    return dumper.represent_scalar("tag:yaml.org,2002:str", text, style=style)


_Dumper.add_representer(str, _represent_str)


def dump_yaml(data: Any) -> str:
    """YAML text for ``data`` (safe dumper, Unicode kept, key order kept)."""
    return yaml.dump(
        data,
        Dumper=_Dumper,
        allow_unicode=True,
        sort_keys=False,
        default_flow_style=False,
        width=100,
    )


def dump_checked(data: dict[str, Any], cache: dict[str, tuple[str, str]], path: Path) -> str:
    """YAML text for the top-level mapping ``data``, checked to parse back to ``data`` exactly.

    A block mapping's text is the concatenation of its keys' texts, so each top-level key is
    dumped and checked on its own, and a key whose value is unchanged since the last call (same
    ``repr``, kept in ``cache``: key -> (repr, text)) reuses its checked text. An autosave then
    dumps and re-parses only what was edited, not the whole review log (README "Performance").

    Raises:
        ProgressError: a value's text would not parse back to the same value.
    """
    if not data:
        return dump_yaml(data)  # "{}", not an empty concatenation
    parts = []
    for key, value in data.items():
        fingerprint = repr(value)
        cached = cache.get(key)
        if cached is None or cached[0] != fingerprint:
            text = dump_yaml({key: value})
            if _safe_load(text) != {key: value}:
                raise ProgressError(str(path), "the text could not be stored exactly; not saved")
            cached = cache[key] = (fingerprint, text)
        parts.append(cached[1])
    return "".join(parts)


def atomic_write_text(path: Path, text: str) -> None:
    """Write ``text`` (UTF-8) to ``path`` atomically (see :func:`atomic_write_bytes`).

    Raises:
        OSError: the folder cannot be created or written (disk full, read-only, permission).
    """
    atomic_write_bytes(path, text.encode("utf-8"))


def atomic_write_bytes(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` atomically: temp file in the same folder, fsync,
    ``os.replace``, fsync of the folder. Either the old or the new file remains, never half.

    Raises:
        OSError: the folder cannot be created or written (disk full, read-only, permission).
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp_name, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp_name)
        raise
    with contextlib.suppress(OSError):
        # Not every platform lets a folder be opened for fsync; the rename is done either way.
        dir_fd = os.open(path.parent, os.O_RDONLY)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)


def describe_os_error(error: OSError) -> str:
    """Plain words for a failed write: "the disk is full (No space left on device)"."""
    detail = error.strerror or str(error)
    words = _ERRNO_WORDS.get(error.errno or 0)
    return f"{words} ({detail})" if words else detail


_MISSING = object()


def _merge_maps(base: dict[str, Any], mine: dict[str, Any], disk: dict[str, Any]) -> dict[str, Any]:
    """Per key: this instance's value where it changed it since ``base``, else the disk's."""
    merged: dict[str, Any] = {}
    for key in dict.fromkeys([*disk, *mine, *base]):
        ours = mine.get(key, _MISSING)
        value = ours if ours != base.get(key, _MISSING) else disk.get(key, _MISSING)
        if value is not _MISSING:
            merged[key] = value
    return merged


def merge_progress(
    base: dict[str, Any], mine: dict[str, Any], disk: dict[str, Any]
) -> dict[str, Any]:
    """Three-way merge of progress documents (:meth:`LessonProgress.to_data` layout).

    ``base`` is what this instance loaded, ``mine`` what it holds now, ``disk`` what another
    instance saved meanwhile. Text maps (answers, reflections, notes), forms, figures, quiz and
    looked-first marks merge per id; ratings per objective and phase; revealed and read ids are
    united; the session logs are joined (:func:`_merge_sessions`); status keeps this instance's
    change, if any.
    """
    merged = dict(disk)
    for key in ("answers", "reflections", "notes", "forms", "figures", "quiz", "looked"):
        merged[key] = _merge_maps(base.get(key) or {}, mine.get(key) or {}, disk.get(key) or {})
    for key in ("revealed", "read"):
        united = list(disk.get(key) or [])
        united += [x for x in mine.get(key) or [] if x not in united]
        merged[key] = united
    merged["ratings"] = _merge_ratings(
        base.get("ratings") or {}, mine.get("ratings") or {}, disk.get("ratings") or {}
    )
    merged["sessions"] = _merge_sessions(
        base.get("sessions") or [], mine.get("sessions") or [], disk.get("sessions") or []
    )
    if mine.get("status") != base.get("status"):
        merged["status"] = mine.get("status")
    return merged


def _merge_ratings(
    base: dict[str, dict[str, str]], mine: dict[str, dict[str, str]], disk: dict[str, Any]
) -> dict[str, dict[str, str]]:
    """Per objective and phase: this instance's rating where it changed it, else the disk's."""
    merged: dict[str, dict[str, str]] = {}
    for objective_id in dict.fromkeys([*disk, *mine, *base]):
        rating = _merge_maps(
            base.get(objective_id) or {}, mine.get(objective_id) or {}, disk.get(objective_id) or {}
        )
        if rating:
            merged[objective_id] = rating
    return merged


def _merge_sessions(
    base: list[dict[str, Any]], mine: list[dict[str, Any]], disk: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    """The disk's session log plus this instance's new or updated entries, by start time.

    An instance updates its own session's entry as it goes (same ``start``): an entry it
    updated replaces the version it had loaded or saved before; every other window's entry is
    kept, so two windows' sessions are both logged.
    """
    merged = list(disk)
    for entry in mine:
        if entry in base:
            continue
        older = [old for old in base if old["start"] == entry["start"]]
        merged = [kept for kept in merged if kept not in older]
        if entry not in merged:
            merged.append(entry)
    return sorted(merged, key=lambda entry: str(entry["start"]))


def _fingerprint(path: Path) -> tuple[int, int, int]:
    """(inode, size, mtime_ns) of ``path``; (-1, -1, -1) when it cannot be read."""
    try:
        stat = path.stat()
    except OSError:
        return (-1, -1, -1)
    return (stat.st_ino, stat.st_size, stat.st_mtime_ns)


class ProgressStore:
    """Reads and writes progress files in one folder, one ``<lesson id>.yaml`` per lesson.

    A store that called :meth:`lock` writes only while it holds the folder's lock; others (the
    CLI, which only reads, and tests) write freely.
    """

    def __init__(self, folder: Path | str) -> None:
        self.folder = Path(folder)
        self._lock: FileLock | None = None
        # Per lesson: the document as last loaded or saved (the base of a merge).
        self._base: dict[str, dict[str, Any]] = {}
        # (inode, size, mtime_ns) of the file as this store last wrote it: while the file still
        # has them, it holds exactly ``_base`` and need not be parsed again to merge. Every
        # write makes a new inode (temp file + rename), so another writer's file never matches.
        self._written: dict[str, tuple[int, int, int]] = {}
        # Per lesson: each top-level key's last checked YAML text (see dump_checked).
        self._texts: dict[str, dict[str, tuple[str, str]]] = {}
        # Per lesson: why it must not be saved (its file exists but could not be read).
        self._blocked: dict[str, str] = {}
        self.merged = False

    # ------------------------------------------------------------------ lock
    def lock(self) -> bool:
        """Take the folder's lock without waiting. True when this store may write; False when
        another instance holds it (this store is then read-only until :meth:`lock` succeeds;
        :meth:`save` tries again each time).

        Raises:
            ProgressError: the folder cannot be created or the lock file cannot be opened.
        """
        if self._lock is None:
            try:
                self.folder.mkdir(parents=True, exist_ok=True)
            except OSError as error:
                raise ProgressError(str(self.folder), describe_os_error(error)) from None
            self._lock = FileLock(self.folder / LOCK_NAME, thread_local=False)
        if self._lock.is_locked:
            return True
        try:
            self._lock.acquire(timeout=0)
        except Timeout:
            return False
        except OSError as error:
            raise ProgressError(str(self.folder), describe_os_error(error)) from None
        self._remove_stale_temp_files()
        return True

    @property
    def read_only(self) -> bool:
        """True when this store asked for the lock and another instance holds it."""
        return self._lock is not None and not self._lock.is_locked

    def unlock(self) -> None:
        """Release the folder's lock (the app calls this when it exits)."""
        if self._lock is not None and self._lock.is_locked:
            self._lock.release()

    def _remove_stale_temp_files(self) -> None:
        # Only the lock holder writes, so a temp file now is one a killed writer left behind.
        for entry in self.folder.iterdir():
            if _TEMP_RE.match(entry.name):
                with contextlib.suppress(OSError):
                    entry.unlink()

    # ------------------------------------------------------------------ files
    def path_for(self, lesson_id: str) -> Path:
        """The progress file of ``lesson_id``. Raises ProgressError for an unsafe id."""
        _check_lesson_id(lesson_id)
        return self.folder / f"{lesson_id}.yaml"

    def load(self, lesson_id: str, *, quarantine: bool = True) -> LoadResult:
        """Read a lesson's progress; a missing file gives fresh progress.

        An unreadable file (bad YAML, bad UTF-8, wrong shape) is moved aside under a
        timestamped name and reported in the result, never overwritten. Readers that will not
        save (``quarantine=False``: listing, exporting; or a read-only store) get a
        ProgressError instead, and the file stays where it is.

        Raises:
            ProgressError: the file exists but cannot be opened, was written by a newer
                shardbook, is unreadable and may not be moved aside, or cannot be moved aside.
                The lesson is then not saved over the file (:meth:`save` refuses).
        """
        path = self.path_for(lesson_id)
        self._base.pop(lesson_id, None)
        self._written.pop(lesson_id, None)
        self._blocked.pop(lesson_id, None)
        try:
            result = self._load(path, lesson_id, quarantine and not self.read_only)
        except ProgressError as error:
            self._blocked[lesson_id] = error.message
            raise
        self._base[lesson_id] = result.progress.to_data()
        return result

    def _load(self, path: Path, lesson_id: str, quarantine: bool) -> LoadResult:
        try:
            raw = path.read_bytes()
        except FileNotFoundError:
            return LoadResult(LessonProgress(lesson_id))
        except OSError as error:
            raise ProgressError(str(path), f"cannot be read ({describe_os_error(error)})") from None
        try:
            return LoadResult(_parse(path, raw.decode("utf-8-sig"), lesson_id))
        except _NewerVersion:
            raise
        except (UnicodeDecodeError, ProgressError) as error:
            reason = "not valid UTF-8" if isinstance(error, UnicodeDecodeError) else error.message
            if not quarantine:
                raise ProgressError(str(path), f"cannot be read: {reason}") from None
            aside = self._quarantine(path)
            message = (
                f"{path.name} could not be read ({reason}); it was kept as {aside.name} "
                "and a new file was started. Nothing was deleted."
            )
            return LoadResult(LessonProgress(lesson_id), quarantined=aside, message=message)

    def _quarantine(self, path: Path) -> Path:
        stamp = dt.datetime.now(dt.UTC).strftime("%Y%m%dT%H%M%S%fZ")
        aside = path.with_name(f"{path.name}.unreadable-{stamp}")
        try:
            os.replace(path, aside)
        except OSError as error:
            raise ProgressError(
                str(path),
                f"is unreadable and could not be moved aside ({describe_os_error(error)})",
            ) from None
        return aside

    def save(self, progress: LessonProgress) -> Path:
        """Write ``progress`` atomically and return the file's path.

        When the file on disk changed since this store loaded it (another instance saved), the
        two are merged first (:func:`merge_progress`) and ``progress`` is updated in place;
        :attr:`merged` is then True until the next save.

        Raises:
            ProgressError: another instance holds the folder's lock; the file could not be
                read when loaded; the folder is not writable (the message says why: disk
                full, read-only, permission denied); or the text would not survive a YAML
                round trip. ``progress`` is kept as it was, so the caller can retry.
        """
        path = self.path_for(progress.lesson_id)
        self.merged = False
        if progress.lesson_id in self._blocked:
            raise ProgressError(str(path), f"not saved: {self._blocked[progress.lesson_id]}")
        if self._lock is not None and not self.lock():
            raise ProgressError(
                str(self.folder),
                "another shardbook window is using this progress folder, so this one is "
                "read-only; close the other window, then save again",
            )
        previous = progress.updated
        progress.updated = dt.datetime.now(dt.UTC).isoformat(timespec="seconds")
        data = progress.to_data()
        base = self._base.get(progress.lesson_id)
        if base is not None:
            data = self._merge_with_disk(path, base, data)
        try:
            text = dump_checked(data, self._texts.setdefault(progress.lesson_id, {}), path)
        except ProgressError:
            progress.updated = previous
            raise
        try:
            atomic_write_text(path, text)
        except OSError as error:
            progress.updated = previous
            raise ProgressError(
                str(path), f"could not be saved: {describe_os_error(error)}"
            ) from None
        if self.merged:
            merged = _from_data(path, data, progress.lesson_id)
            for item in fields(LessonProgress):
                setattr(progress, item.name, getattr(merged, item.name))
        self._base[progress.lesson_id] = data
        self._written[progress.lesson_id] = _fingerprint(path)
        return path

    def _merge_with_disk(
        self, path: Path, base: dict[str, Any], mine: dict[str, Any]
    ) -> dict[str, Any]:
        written = self._written.get(mine["lesson"])
        if written is not None and written == _fingerprint(path):
            return mine
        try:
            disk = _parse(path, path.read_bytes().decode("utf-8-sig"), mine["lesson"]).to_data()
        except FileNotFoundError:
            return mine
        except (OSError, UnicodeDecodeError, ProgressError):
            # Another writer left something unreadable: keep it aside, then write ours.
            if path.exists():
                self._quarantine(path)
            return mine
        if disk == base:
            return mine
        self.merged = True
        merged = merge_progress(base, mine, disk)
        merged["updated"] = mine["updated"]
        return merged
