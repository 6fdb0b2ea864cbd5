"""The learner's progress: one YAML file per lesson, written atomically.

A progress file holds what cannot be recomputed: self-check answers, reflection notes, the
learner's own calculator figures, the calculator forms as last typed, and the lesson's status.

Writes follow SQLite's and Git's discipline: the new text goes to a temporary file in the same
folder, is flushed and fsynced, and replaces the old file with ``os.replace`` (atomic on POSIX);
the folder is then fsynced so the rename itself survives a power cut. Before replacing, the
dumped YAML is parsed back and compared with what was meant to be saved, so a text YAML cannot
round-trip is refused instead of silently altered.

A file that cannot be parsed is never treated as empty and never overwritten: it is moved aside
under a timestamped name (``S15.yaml.unreadable-20261129T101500Z``) and reported.

File layout (``schema_version: 1``)::

    schema_version: 1
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
"""

from __future__ import annotations

import contextlib
import datetime as dt
import os
import re
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from engine.errors import ProgressError

SCHEMA_VERSION = 1
STATUSES = ("not-started", "in-progress", "complete")
STATUS_LABELS = {
    "not-started": "material ready, not studied",
    "in-progress": "in progress",
    "complete": "complete",
}
_LESSON_ID_RE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$")


@dataclass
class LessonProgress:
    """Everything the learner has entered for one lesson (mutable; the app edits it in place)."""

    lesson_id: str
    status: str = "not-started"
    answers: dict[str, str] = field(default_factory=dict)
    revealed: list[str] = field(default_factory=list)
    reflections: dict[str, str] = field(default_factory=dict)
    forms: dict[str, dict[str, str]] = field(default_factory=dict)
    figures: dict[str, dict[str, float]] = field(default_factory=dict)
    notes: dict[str, str] = field(default_factory=dict)
    quiz: dict[str, Any] = field(default_factory=dict)
    updated: str = ""

    def touch(self) -> None:
        """Mark the lesson as studied: "not-started" becomes "in-progress"; "complete" stays."""
        if self.status == "not-started":
            self.status = "in-progress"

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
        }


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


def _parse(path: Path, text: str, lesson_id: str) -> LessonProgress:
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as error:
        raise ProgressError(str(path), f"not valid YAML ({error})") from None
    if not isinstance(data, dict):
        raise ProgressError(str(path), "not a progress file (expected a mapping)")
    version = data.get("schema_version")
    if version != SCHEMA_VERSION:
        raise ProgressError(str(path), f"unknown schema_version {version!r}")
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
    )


class _Dumper(yaml.SafeDumper):
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


def atomic_write_text(path: Path, text: str) -> None:
    """Write ``text`` (UTF-8) to ``path`` atomically: temp file in the same folder, fsync,
    ``os.replace``, fsync of the folder. Either the old or the new file remains, never half.

    Raises:
        OSError: the folder cannot be created or written (disk full, read-only, permission).
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="") as handle:
            handle.write(text)
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


class ProgressStore:
    """Reads and writes progress files in one folder, one ``<lesson id>.yaml`` per lesson."""

    def __init__(self, folder: Path | str) -> None:
        self.folder = Path(folder)

    def path_for(self, lesson_id: str) -> Path:
        """The progress file of ``lesson_id``. Raises ProgressError for an unsafe id."""
        _check_lesson_id(lesson_id)
        return self.folder / f"{lesson_id}.yaml"

    def load(self, lesson_id: str, *, quarantine: bool = True) -> LoadResult:
        """Read a lesson's progress; a missing file gives fresh progress.

        An unreadable file (bad YAML, bad UTF-8, wrong shape) is moved aside under a
        timestamped name and reported in the result, never overwritten. Readers that will not
        save (``quarantine=False``: listing, exporting) get a ProgressError instead.

        Raises:
            ProgressError: the file exists but cannot be read, or is unreadable and
                ``quarantine`` is False, or cannot be moved aside (permissions).
        """
        path = self.path_for(lesson_id)
        try:
            raw = path.read_bytes()
        except FileNotFoundError:
            return LoadResult(LessonProgress(lesson_id))
        except OSError as error:
            raise ProgressError(str(path), f"cannot be read ({error.strerror})") from None
        try:
            return LoadResult(_parse(path, raw.decode("utf-8-sig"), lesson_id))
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
                str(path), f"is unreadable and could not be moved aside ({error.strerror})"
            ) from None
        return aside

    def save(self, progress: LessonProgress) -> Path:
        """Write ``progress`` atomically and return the file's path.

        Raises:
            ProgressError: the folder is not writable (the message says why: disk full,
                read-only, permission denied), or the text would not survive a YAML round trip.
        """
        path = self.path_for(progress.lesson_id)
        progress.updated = dt.datetime.now(dt.UTC).isoformat(timespec="seconds")
        data = progress.to_data()
        text = dump_yaml(data)
        if yaml.safe_load(text) != data:
            raise ProgressError(str(path), "the text could not be stored exactly; not saved")
        try:
            atomic_write_text(path, text)
        except OSError as error:
            raise ProgressError(
                str(path), f"could not be saved: {error.strerror or error}"
            ) from None
        return path
