"""Finding the lessons of a content folder, and the index that caches them.

Listing reads only each file's id and title, streaming YAML events and stopping once both are
found (:func:`read_head`), so a lesson whose later sections are broken is still listed. The index
(:func:`lesson_index_path`) caches each file's id and title, keyed by its name, mtime, ctime, size
and inode: listing 360 lessons reads none of them again.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import time
from pathlib import Path
from typing import Any, Final

import yaml

from engine.errors import ContentError
from engine.i18n import current_language
from engine.i18n import gettext as _
from engine.lesson.model import ID_PATTERN, LESSON_SUFFIXES, LessonRef
from engine.lesson.yaml_nodes import (
    EMPTY_FILE_MESSAGE,
    STR_TAG,
    TextOnlyLoader,
    bad_character,
    event_line,
    field_message,
    next_event,
    read_lesson_text,
    yaml_error,
)
from engine.paths import cache_dir


def read_head(path: Path) -> LessonRef:
    """Read a lesson's id and title by streaming YAML events, stopping once both are found.

    Raises:
        ContentError: the file cannot be read, or its id/title are missing or invalid.
    """
    shown = str(path)
    text = read_lesson_text(path, shown)
    try:
        loader = TextOnlyLoader(text)
    except yaml.YAMLError as error:
        raise yaml_error(shown, text, error) from None
    found: dict[str, tuple[str, int]] = {}
    try:
        while loader.check_event(yaml.StreamStartEvent, yaml.DocumentStartEvent):
            next_event(loader)
        if loader.check_event(yaml.StreamEndEvent):
            raise ContentError(shown, 1, _(EMPTY_FILE_MESSAGE))
        start = next_event(loader)
        if isinstance(start, yaml.ScalarEvent) and not str(start.value).strip():
            raise ContentError(shown, 1, _(EMPTY_FILE_MESSAGE))
        if not isinstance(start, yaml.MappingStartEvent) or start.anchor is not None:
            raise ContentError(shown, event_line(start), _("expected a mapping at the top"))
        while len(found) < 2 and not loader.check_event(yaml.MappingEndEvent):
            key = next_event(loader)
            if isinstance(key, yaml.ScalarEvent) and key.value in ("id", "title"):
                value = next_event(loader)
                line = event_line(value)
                if key.value in found:
                    raise ContentError(
                        shown, event_line(key), field_message(key.value, _("duplicate key"))
                    )
                if not isinstance(value, yaml.ScalarEvent) or value.tag not in (
                    None,
                    "!",
                    STR_TAG,
                ):
                    raise ContentError(shown, line, field_message(key.value, _("expected text")))
                problem = bad_character(str(value.value))
                if problem:
                    raise ContentError(shown, line, field_message(key.value, problem))
                found[str(key.value)] = (str(value.value), line)
                continue
            _skip_node(loader, key, shown)
            _skip_node(loader, next_event(loader), shown)
    except yaml.YAMLError as error:
        raise yaml_error(shown, text, error) from None
    finally:
        loader.dispose()
    for name in ("id", "title"):
        if name not in found:
            raise ContentError(
                shown, event_line(start), field_message(name, _("missing required field"))
            )
    lesson_id, id_line = found["id"]
    if not ID_PATTERN.fullmatch(lesson_id):
        raise ContentError(
            shown,
            id_line,
            field_message("id", _("{value!r} is not a valid id").format(value=lesson_id)),
        )
    title, title_line = found["title"]
    if not title.strip():
        raise ContentError(shown, title_line, field_message("title", _("must not be empty")))
    return LessonRef(id=lesson_id, title=title, path=path)


def _skip_node(loader: TextOnlyLoader, event: yaml.Event, shown: str) -> None:
    """Consume the events of the node that starts with ``event``; refuse anchors and aliases."""
    depth = 0
    while True:
        if isinstance(event, yaml.AliasEvent) or getattr(event, "anchor", None) is not None:
            raise ContentError(shown, event_line(event), _("anchors and aliases are not allowed"))
        if isinstance(event, yaml.MappingStartEvent | yaml.SequenceStartEvent):
            depth += 1
        elif isinstance(event, yaml.MappingEndEvent | yaml.SequenceEndEvent):
            depth -= 1
        if depth == 0:
            return
        event = next_event(loader)


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
    name = hashlib.sha256(folder).hexdigest()[:16]
    return cache_dir() / "lessons" / f"{name}.json"


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
