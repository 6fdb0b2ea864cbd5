"""A cache of parsed lessons: a lesson file read and checked once is loaded the next time from a
pickle of its :class:`~engine.lesson.model.Lesson`.

Reading S15 (19 kB) with libyaml and checking it takes 3-5 ms, and 13 ms a lesson on a loaded
2-core machine; unpickling its model takes about 0.2 ms. The first frame reads the open lesson,
and the quiz reads every lesson of the content folder, so both read them from here
(:func:`load_lesson_cached`). One file per lesson file, ``cache_dir()/parsed/<hash>.pickle``
(:mod:`engine.paths`; the hash is of the file's resolved path), holding the key it was written
under: this format's version, the stamp of the modules that define and check the model, the
file's resolved path and its stamp (mtime, ctime, size and inode, as the lesson index keys a file,
:mod:`engine.lesson.index`). A file changed within 2 s of being read is not cached (its mtime
could stay the same through another change: Git's "racy" rule), and nothing but a valid lesson
is: a file with errors is read and checked each time, so its messages are always current and in
the interface language.

Only the model's own classes (and ``pathlib``'s paths) can come out of a cache file: the
unpickler refuses every other global (the Python documentation's "Restricting Globals",
``pickle`` module), so a cache file written by anything else is read as a miss, never run. A cache
that cannot be read or written costs a new read of the lesson, never an error.
"""

from __future__ import annotations

import contextlib
import io
import os
import pickle
import threading
import time
from dataclasses import replace
from functools import lru_cache
from pathlib import Path
from typing import Any, Final

from engine.lesson import model
from engine.lesson.index import RACY_NS, file_stamp
from engine.lesson.model import Lesson
from engine.paths import cache_dir, content_key

# Bump when what a pickle holds changes in a way the modules' stamp would not show.
PARSED_CACHE_VERSION: Final = 1
# What a cache file may name: the lesson model's classes and the path of the file.
_ALLOWED_GLOBALS: Final = frozenset(
    {
        *((model.__name__, name) for name in ("Lesson", "LessonMeta", "Section", "Item")),
        *((model.__name__, name) for name in ("Formula", "Link")),
        *(("pathlib", name) for name in ("Path", "PosixPath", "WindowsPath")),
    }
)


class _ModelUnpickler(pickle.Unpickler):
    """An unpickler that builds only the lesson model's classes and paths."""

    def find_class(self, module: str, name: str) -> Any:
        if (module, name) not in _ALLOWED_GLOBALS:
            raise pickle.UnpicklingError(f"{module}.{name} is not part of a lesson")
        return super().find_class(module, name)


@lru_cache(maxsize=1)
def _code_stamp() -> tuple[int, ...]:
    """The mtime and size of the modules that define and check the model: a new version of
    either (an upgrade, an edit in a checkout) makes every cached lesson a miss."""
    stamp: list[int] = []
    # The checker's file beside the model's, not imported: a hit needs no YAML machinery.
    for name in ("model.py", "schema.py"):
        try:
            info = os.stat(Path(str(model.__file__)).with_name(name))
        except (OSError, TypeError):
            return ()
        stamp += [info.st_mtime_ns, info.st_size]
    return tuple(stamp)


def load_lesson(file: Path) -> Lesson:
    """:func:`engine.lesson.loader.load_lesson` (its module, and PyYAML with it, imported on a
    miss only)."""
    from engine.lesson.loader import load_lesson as load

    return load(file)


def parsed_lesson_path(path: Path) -> Path:
    """Where the parsed lesson of the file ``path`` is cached (see the module's docstring)."""
    resolved = str(path.resolve()).encode("utf-8", "surrogateescape")
    return cache_dir() / "parsed" / f"{content_key(resolved)}.pickle"


def load_lesson_cached(path: Path | str) -> Lesson:
    """:func:`~engine.lesson.loader.load_lesson`, from the cache when the file has not changed
    since it was cached; a file read and found valid is cached for the next time.

    Returns:
        The lesson; its ``path`` is ``path`` as given.

    Raises:
        ContentError: the file cannot be read or is not a valid lesson (as ``load_lesson``).
    """
    file = Path(path)
    try:
        info = file.stat()
        cache = parsed_lesson_path(file)
        key = (
            PARSED_CACHE_VERSION,
            _code_stamp(),
            str(file.resolve()),
            tuple(file_stamp(info)),
        )
    except (OSError, RuntimeError):
        return load_lesson(file)  # its message names the file and what is wrong
    cached = _read(cache, key)
    if cached is not None:
        return cached if cached.path == file else replace(cached, path=file)
    lesson = load_lesson(file)
    if time.time_ns() - info.st_mtime_ns > RACY_NS:
        _write(cache, key, lesson)
    return lesson


def _read(cache: Path, key: tuple[Any, ...]) -> Lesson | None:
    try:
        data = cache.read_bytes()
    except OSError:
        return None
    try:
        stored = _ModelUnpickler(io.BytesIO(data)).load()
    except Exception:  # any unreadable cache file is a miss (truncated, foreign, refused)
        return None
    if (
        isinstance(stored, tuple)
        and len(stored) == 2
        and stored[0] == key
        and isinstance(stored[1], Lesson)
    ):
        return stored[1]
    return None


def _write(cache: Path, key: tuple[Any, ...], lesson: Lesson) -> None:
    # Per thread too: the quiz's reading worker and the app may write the same lesson at once.
    temp = cache.with_name(f".{cache.name}.{os.getpid()}.{threading.get_ident()}.tmp")
    try:
        cache.parent.mkdir(parents=True, exist_ok=True)
        temp.write_bytes(pickle.dumps((key, lesson), protocol=pickle.HIGHEST_PROTOCOL))
        os.replace(temp, cache)
    except (OSError, pickle.PicklingError):
        with contextlib.suppress(OSError):
            temp.unlink(missing_ok=True)
