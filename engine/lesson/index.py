"""Finding the lessons of a content folder, and the index that caches them.

Listing reads only each file's id and title, streaming YAML events and stopping once both are
found (:func:`read_head`), so a lesson whose later sections are broken is still listed. The index
(:func:`lesson_index_path`) caches each file's id and title, keyed by its name, mtime, ctime, size
and inode: listing 360 lessons reads none of them again.
"""

from __future__ import annotations

import contextlib
import json
import os
import time
from pathlib import Path
from typing import Any, Final

from engine.errors import ContentError
from engine.i18n import current_language
from engine.i18n import gettext as _
from engine.lesson.model import ID_PATTERN, LESSON_SUFFIXES, LessonRef
from engine.paths import cache_dir, content_key


def read_head(path: Path) -> LessonRef:
    """Read a lesson's id and title by streaming YAML events, stopping once both are found
    (:func:`engine.lesson.heads.read_lesson_head`; PyYAML is imported then, on an index miss,
    not for a first frame the index serves).

    Raises:
        ContentError: the file cannot be read, or its id/title are missing or invalid.
    """
    from engine.lesson.heads import read_lesson_head

    return read_lesson_head(path)


def lesson_files(folder: Path) -> list[Path]:
    """The lesson files directly inside ``folder`` (``*.yaml``, ``*.yml``), sorted by name."""
    return sorted(
        entry
        for entry in folder.iterdir()
        if entry.suffix.lower() in LESSON_SUFFIXES and entry.is_file()
    )


def discover_lessons(
    content_dir: Path, index: Path | None = None
) -> tuple[list[LessonRef], list[ContentError]]:
    """The lessons in a content folder, sorted by id, and the files that could not be listed.

    Only each file's id and title are read (a lesson whose later sections are broken is still
    listed; :func:`load_lesson` reports those). A second file with an id already seen is an
    error. Never raises for a bad file; a missing folder is one error.

    ``index``: a JSON file caching each file's id and title (or its error), keyed by name,
    mtime_ns, ctime_ns, size and inode (:func:`lesson_index_path` gives the usual place). A file
    whose key changed, or that is new, is read again, and so is a file whose error was cached in
    another interface language; a removed file is dropped; the result is
    the same as without the index. The index is an optimisation: when it cannot be read or
    written it is ignored.
    """
    shown = str(content_dir)
    if not content_dir.is_dir():
        return [], [ContentError(shown, None, _("no such folder"))]
    cached = _read_index(index, content_dir) if index is not None else {}
    fresh: dict[str, dict[str, Any]] = {}
    refs: dict[str, LessonRef] = {}
    errors: list[ContentError] = []
    for file, stamp in _lesson_stamps(content_dir):
        entry = cached.get(file.name)
        if (
            not stamp
            or entry is None
            or entry.get("stamp") != stamp
            or not _valid_entry(entry)
            or ("error" in entry and entry.get("language") != current_language())
        ):
            entry = _index_entry(file, stamp)
        fresh[file.name] = entry
        if "error" in entry:
            line, message = entry["error"]
            errors.append(ContentError(str(file), line, message))
            continue
        ref = LessonRef(id=entry["id"], title=entry["title"], path=file)
        if ref.id in refs:
            errors.append(
                ContentError(
                    str(file),
                    None,
                    _("lesson id {id!r} is also used by {path}").format(
                        id=ref.id, path=refs[ref.id].path
                    ),
                )
            )
            continue
        refs[ref.id] = ref
    if index is not None:
        _write_index(index, content_dir, cached, fresh)
    return sorted(refs.values(), key=lambda ref: ref.id), errors


# --------------------------------------------------------------------------------------------
# The lesson index (a cache of discover_lessons)

# Bump when what _head accepts or returns changes: every cached entry is then read again.
INDEX_VERSION: Final = 1
# Git's "racy" rule: a file modified within the filesystem's timestamp resolution (2 s on FAT)
# of being indexed could change again without its mtime changing; it is not cached.
RACY_NS: Final = 2_000_000_000


def file_stamp(info: os.stat_result) -> list[int]:
    """What identifies a version of a file in the caches: [mtime_ns, ctime_ns, size, inode]."""
    return [info.st_mtime_ns, info.st_ctime_ns, info.st_size, info.st_ino]


def lesson_index_path(content_dir: Path) -> Path:
    """Where the app caches the index of ``content_dir``: one JSON file per content folder, named
    by a hash of its resolved path, in ``cache_dir()/lessons`` (:mod:`engine.paths`)."""
    folder = str(content_dir.resolve()).encode("utf-8", "surrogateescape")
    return cache_dir() / "lessons" / f"{content_key(folder)}.json"


def _lesson_stamps(folder: Path) -> list[tuple[Path, list[int]]]:
    """The lesson files of ``folder`` (as :func:`lesson_files` lists them), each with its
    [mtime_ns, ctime_ns, size, inode]; one ``stat`` per file."""
    found: list[tuple[Path, list[int]]] = []
    with os.scandir(folder) as entries:
        for entry in entries:
            if Path(entry.name).suffix.lower() not in LESSON_SUFFIXES:
                continue
            try:
                if not entry.is_file():
                    continue
            except OSError:
                continue
            try:
                info = entry.stat()
            except OSError:
                stamp: list[int] = []  # never matches a cached entry: the file is read again
            else:
                stamp = file_stamp(info)
            found.append((folder / entry.name, stamp))
    return sorted(found)


def _index_entry(file: Path, stamp: list[int]) -> dict[str, Any]:
    try:
        ref = read_head(file)
    except ContentError as error:
        # The message is in the interface language of now: another language reads the file again.
        return {
            "stamp": stamp,
            "error": [error.line, error.message],
            "language": current_language(),
        }
    return {"stamp": stamp, "id": ref.id, "title": ref.title}


def _valid_entry(entry: dict[str, Any]) -> bool:
    """A cached entry has the shape :func:`_index_entry` writes (a hand-edited or truncated
    index must not list a lesson that is not there)."""
    if "error" in entry:
        error = entry["error"]
        return (
            isinstance(error, list)
            and len(error) == 2
            and (error[0] is None or isinstance(error[0], int))
            and isinstance(error[1], str)
        )
    lesson_id, title = entry.get("id"), entry.get("title")
    return (
        isinstance(lesson_id, str)
        and ID_PATTERN.fullmatch(lesson_id) is not None
        and isinstance(title, str)
        and bool(title.strip())
    )


def _read_index(index: Path, content_dir: Path) -> dict[str, dict[str, Any]]:
    try:
        data = json.loads(index.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if (
        not isinstance(data, dict)
        or data.get("version") != INDEX_VERSION
        or data.get("folder") != str(content_dir.resolve())
        or not isinstance(data.get("files"), dict)
    ):
        return {}
    return {
        name: entry
        for name, entry in data["files"].items()
        if isinstance(entry, dict) and isinstance(entry.get("stamp"), list)
    }


def _write_index(
    index: Path,
    content_dir: Path,
    cached: dict[str, dict[str, Any]],
    fresh: dict[str, dict[str, Any]],
) -> None:
    now = time.time_ns()
    keep = {
        name: entry
        for name, entry in fresh.items()
        if entry["stamp"] and now - entry["stamp"][0] > RACY_NS
    }
    if keep == cached:
        return
    data = {"version": INDEX_VERSION, "folder": str(content_dir.resolve()), "files": keep}
    temp = index.with_name(f".{index.name}.{os.getpid()}.tmp")
    try:
        index.parent.mkdir(parents=True, exist_ok=True)
        temp.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
        os.replace(temp, index)
    except OSError:
        # A cache that cannot be written only costs the next start-up a re-read.
        with contextlib.suppress(OSError):
            temp.unlink(missing_ok=True)
