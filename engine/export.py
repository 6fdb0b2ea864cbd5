"""Export the learner's filled-in notes for a lesson, as Markdown or JSON.

The Markdown starts with YAML front matter written by the safe YAML dumper (so a title with a
colon, or a value such as ``no``, round-trips), then the reflection fields, the self-check
answers and the learner's exercise-1 ledger figures. The learner's text is copied byte for
byte: it is data, not Markdown we rewrite.
"""

from __future__ import annotations

import datetime as dt
import errno
import json
import re
from pathlib import Path
from typing import Any

import yaml

from engine.exercises import answered_notes
from engine.lesson import Lesson
from engine.progress import STATUS_LABELS, LessonProgress, atomic_write_text, dump_yaml
from engine.strategies import get_strategy
from engine.units import format_gb, format_gib

FORMATS = ("md", "json")
NOT_ANSWERED = "_(not answered yet)_"
# Exercise 1's four columns (the lesson: 参数、梯度、Adam 状态与 activation 四栏), in bytes.
EXERCISE1_COLUMNS = (
    ("parameters", "参数 parameters"),
    ("gradients", "梯度 gradients"),
    ("adam_states", "Adam 状态 Adam states (master weights + moments)"),
    ("activations", "activation activations"),
)
_UNSAFE_NAME = re.compile(r"[^A-Za-z0-9._-]+")
_RESERVED = {"CON", "PRN", "AUX", "NUL", *(f"COM{i}" for i in range(1, 10))} | {
    f"LPT{i}" for i in range(1, 10)
}


def _front_matter(lesson: Lesson, progress: LessonProgress, exported: str) -> dict[str, Any]:
    return {
        "title": f"{lesson.title} — notes",
        "lesson": lesson.id,
        "lesson_date": lesson.meta.date,
        "status": progress.status,
        "exported": exported,
    }


def export_data(lesson: Lesson, progress: LessonProgress, exported: str = "") -> dict[str, Any]:
    """The notes as one JSON-ready object.

    Keys: ``lesson``, ``title``, ``status``, ``exported``, ``reflections`` (list of id, label,
    text), ``self_check`` (list of id, question, answer, key_points), ``exercise1`` (column ->
    bytes; empty when the learner has not filled it), ``ledger_form`` (the inputs as typed) and
    ``exercise_notes`` (list of id, exercise, strategy, label, text, reference: the learner's
    notes for exercises 2 to 5 beside the engine's answer).
    """
    exported = exported or _now()
    return {
        "lesson": lesson.id,
        "title": lesson.title,
        "status": progress.status,
        "exported": exported,
        "reflections": [
            {"id": item.id, "label": item.text, "text": progress.reflections.get(item.id, "")}
            for item in lesson.reflection_fields
        ],
        "self_check": [
            {
                "id": item.id,
                "question": item.text,
                "answer": progress.answers.get(item.id, ""),
                "key_points": list(item.key_points),
            }
            for item in lesson.self_check
        ],
        "exercise1": dict(progress.figures.get("exercise1", {})),
        "ledger_form": dict(progress.forms.get("ledger", {})),
        "exercise_notes": [
            {
                "id": note.id,
                "exercise": note.exercise,
                "strategy": note.strategy,
                "label": note.label,
                "text": text,
                "reference": note.reference,
            }
            for note, text in answered_notes(progress.notes)
        ],
    }


def _now() -> str:
    return dt.datetime.now(dt.UTC).isoformat(timespec="seconds")


def _learner_text(text: str) -> str:
    return text if text.strip() else NOT_ANSWERED


def export_markdown(lesson: Lesson, progress: LessonProgress, exported: str = "") -> str:
    """The notes as Markdown with YAML front matter (see module docstring)."""
    exported = exported or _now()
    parts = ["---\n", dump_yaml(_front_matter(lesson, progress, exported)), "---\n\n"]
    parts.append(f"# {lesson.id} notes\n\n")
    parts.append(f"Status: {STATUS_LABELS[progress.status]}\n\n")
    parts.append("## 学后填写区 Reflection\n\n")
    for item in lesson.reflection_fields:
        parts.append(
            f"### {item.text}\n\n{_learner_text(progress.reflections.get(item.id, ''))}\n\n"
        )
    parts.append("## 自检问题 Self-check\n\n")
    for number, item in enumerate(lesson.self_check, start=1):
        answer = _learner_text(progress.answers.get(item.id, ""))
        parts.append(f"### {number}. {item.text}\n\n{answer}\n\n")
    parts.append("## 练习 1 Exercise 1: my memory ledger\n\n")
    figures = progress.figures.get("exercise1", {})
    if figures:
        form = progress.forms.get("ledger", {})
        if form:
            inputs = ", ".join(f"{key} = {value}" for key, value in form.items())
            parts.append(f"Inputs: {inputs}\n\n")
        parts.append("| column | bytes | GB (1e9) | GiB (2^30) |\n|---|---:|---:|---:|\n")
        for key, label in EXERCISE1_COLUMNS:
            if key in figures:
                value = figures[key]
                parts.append(
                    f"| {label} | {value:.0f} | {format_gb(value)} | {format_gib(value)} |\n"
                )
        parts.append("\n")
    else:
        parts.append(f"{NOT_ANSWERED}\n\n")
    parts.append(_notes_markdown(lesson, progress))
    return "".join(parts)


def _notes_markdown(lesson: Lesson, progress: LessonProgress) -> str:
    parts = ["## 练习 2-5 Exercises 2-5: my notes\n\n"]
    answered = answered_notes(progress.notes)
    if not answered:
        return parts[0] + f"{NOT_ANSWERED}\n"
    exercises = lesson.section("exercises").items
    current = -1
    for note, text in answered:
        if note.exercise != current:
            current = note.exercise
            heading = exercises[current - 1].text if 1 <= current <= len(exercises) else "other"
            parts.append(f"### {current}. {heading}\n\n")
        title = f"{get_strategy(note.strategy).title}: " if note.strategy else ""
        parts.append(f"**{title}{note.label}**\n\n{text}\n\n")
        if note.reference:
            parts.append(f"Engine's answer (engine/strategies.py): {note.reference}\n\n")
    return "".join(parts)


def export_text(lesson: Lesson, progress: LessonProgress, fmt: str) -> str:
    """The notes in format ``fmt`` ("md" or "json"). Raises ValueError for another format."""
    if fmt == "md":
        return export_markdown(lesson, progress)
    if fmt == "json":
        return json.dumps(export_data(lesson, progress), ensure_ascii=False, indent=2) + "\n"
    raise ValueError(f"format must be one of {', '.join(FORMATS)}")


def safe_file_name(lesson_id: str, fmt: str) -> str:
    """A file name for a lesson's notes: no path separators, no reserved names, <= 80 chars."""
    stem = _UNSAFE_NAME.sub("_", lesson_id).strip("._") or "lesson"
    if stem.upper() in _RESERVED:
        stem = f"{stem}_"
    return f"{stem[:64]}-notes.{fmt}"


class NotesConflict(FileExistsError):
    """The target file holds another lesson's exported notes (``owner``); it was not touched."""

    def __init__(self, path: Path, owner: str) -> None:
        super().__init__(
            errno.EEXIST,
            f"holds the notes of lesson {owner!r}; choose another file name",
            str(path),
        )
        self.owner = owner


def notes_owner(path: Path) -> str | None:
    """The lesson whose exported notes ``path`` holds (Markdown front matter or the JSON
    ``lesson`` key), or ``None`` when the file is missing or is not shardbook notes."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None
    try:
        data = json.loads(text) if text.lstrip().startswith("{") else split_front_matter(text)[0]
    except (ValueError, RecursionError, yaml.YAMLError):
        return None
    owner = data.get("lesson") if isinstance(data, dict) else None
    return owner if isinstance(owner, str) else None


def export_path(folder: Path, lesson_id: str, fmt: str) -> Path:
    """Where the app exports a lesson's notes in ``folder``: :func:`safe_file_name`, or with
    ``-2``, ``-3``... when that name already holds another lesson's notes (two ids can map to
    one safe name, e.g. ``CON`` and ``CON_``)."""
    name = safe_file_name(lesson_id, fmt)
    stem, suffix = name.rsplit(".", 1)
    path, number = folder / name, 1
    while (owner := notes_owner(path)) is not None and owner != lesson_id:
        number += 1
        path = folder / f"{stem}-{number}.{suffix}"
    return path


def write_export(
    path: Path, text: str, *, create_folder: bool = False, lesson_id: str | None = None
) -> Path:
    """Write exported notes atomically to ``path``.

    A missing folder is an error (a mistyped ``-o`` path must not leave folders behind) unless
    ``create_folder`` is set, as the app does for its own ``exports/`` folder. With
    ``lesson_id``, a file holding another lesson's notes is never overwritten.

    Raises:
        NotesConflict: ``path`` holds the notes of a lesson other than ``lesson_id``.
        OSError: the folder is missing (ENOENT) or cannot be written.
    """
    if lesson_id is not None:
        owner = notes_owner(path)
        if owner is not None and owner != lesson_id:
            raise NotesConflict(path, owner)
    if not create_folder and not path.parent.is_dir():
        raise FileNotFoundError(errno.ENOENT, "no such folder", str(path.parent))
    atomic_write_text(path, text)
    return path


def split_front_matter(markdown: str) -> tuple[dict[str, Any], str]:
    """Split exported Markdown into its front matter (parsed, safe loader) and body.

    Raises:
        ValueError: the text does not start with a front-matter block.
    """
    if not markdown.startswith("---\n"):
        raise ValueError("no front matter")
    end = markdown.index("\n---\n", 4)
    data = yaml.safe_load(markdown[4 : end + 1])
    if not isinstance(data, dict):
        raise ValueError("front matter is not a mapping")
    return data, markdown[end + 5 :]
