"""Writing an export: each format's text or bytes, safe file names, whose export a file holds,
and atomic writes that never overwrite another lesson's notes.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import errno
import html
import io
import json
import re
import zipfile
from pathlib import Path

import yaml

from engine.errors import quoted
from engine.export.anki import export_anki
from engine.export.html import export_html
from engine.export.markdown import export_markdown, split_front_matter
from engine.export.notes import APKG_OWNER_PREFIX, EXTENSIONS, HTML_OWNER, export_data
from engine.i18n import gettext as _
from engine.lesson import Lesson
from engine.progress import (
    LessonProgress,
    atomic_write_bytes,
)

_UNSAFE_NAME = re.compile(r"[^A-Za-z0-9._-]+")


_RESERVED = {"CON", "PRN", "AUX", "NUL", *(f"COM{i}" for i in range(1, 10))} | {
    f"LPT{i}" for i in range(1, 10)
}


def export_text(
    lesson: Lesson, progress: LessonProgress, fmt: str, now: dt.datetime | None = None
) -> str:
    """The notes in text format ``fmt`` (``md``, ``json`` or ``html``).

    Raises:
        ValueError: another format (``anki`` is binary: :func:`export_bytes`).
    """
    if fmt == "md":
        return export_markdown(lesson, progress, now)
    if fmt == "json":
        return json.dumps(export_data(lesson, progress, now), ensure_ascii=False, indent=2) + "\n"
    if fmt == "html":
        return export_html(lesson, progress, now)
    raise ValueError(f"format must be one of md, json, html (got {fmt!r})")


def export_bytes(
    lesson: Lesson, progress: LessonProgress, fmt: str, now: dt.datetime | None = None
) -> bytes:
    """The export in format ``fmt`` (one of :data:`FORMATS`) as the bytes of its file.

    Raises:
        ValueError: an unknown format.
    """
    if fmt == "anki":
        return export_anki(lesson, now)
    return export_text(lesson, progress, fmt, now).encode("utf-8")


def safe_file_name(lesson_id: str, fmt: str) -> str:
    """A file name for a lesson's export in format ``fmt`` (or a bare extension): no path
    separators, no reserved names, <= 80 chars."""
    stem = _UNSAFE_NAME.sub("_", lesson_id).strip("._") or "lesson"
    if stem.upper() in _RESERVED:
        stem = f"{stem}_"
    return f"{stem[:64]}-notes.{EXTENSIONS.get(fmt, fmt)}"


class NotesConflict(FileExistsError):
    """The target file holds another lesson's exported notes (``owner``); it was not touched."""

    def __init__(self, path: Path, owner: str) -> None:
        super().__init__(
            errno.EEXIST,
            _("holds the notes of lesson {owner}; choose another file name").format(
                owner=quoted(owner)
            ),
            str(path),
        )
        self.owner = owner


def notes_owner(path: Path) -> str | None:
    """The lesson whose export ``path`` holds (Markdown front matter, the JSON ``lesson`` key,
    the HTML page's ``shardbook-lesson`` meta tag or the Anki package's zip comment), or
    ``None`` when the file is missing or is not a shardbook export."""
    try:
        data = path.read_bytes()
    except OSError:
        return None
    if data.startswith(b"PK"):
        with contextlib.suppress(zipfile.BadZipFile, OSError, ValueError):
            comment = zipfile.ZipFile(io.BytesIO(data)).comment
            if comment.startswith(APKG_OWNER_PREFIX):
                return comment[len(APKG_OWNER_PREFIX) :].decode("utf-8", "replace")
        return None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    if text.startswith("<!DOCTYPE html>"):
        match = HTML_OWNER.search(text)
        return html.unescape(match.group(1)) if match else None
    try:
        parsed = json.loads(text) if text.lstrip().startswith("{") else split_front_matter(text)[0]
    except (ValueError, RecursionError, yaml.YAMLError):
        return None
    owner = parsed.get("lesson") if isinstance(parsed, dict) else None
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
    path: Path,
    content: str | bytes,
    *,
    create_folder: bool = False,
    lesson_id: str | None = None,
) -> Path:
    """Write an export atomically to ``path`` (text as UTF-8).

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
        raise FileNotFoundError(errno.ENOENT, _("no such folder"), str(path.parent))
    data = content.encode("utf-8") if isinstance(content, str) else content
    atomic_write_bytes(path, data)
    return path
