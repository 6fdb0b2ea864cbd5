"""The progress folder: one file per lesson, a lock for the one window that writes, loading
(with quarantine of unreadable files) and saving (with a merge when another window wrote).
"""

from __future__ import annotations

import contextlib
import os
import re
import threading
from collections.abc import Callable
from dataclasses import dataclass, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any

from engine.errors import ProgressError
from engine.i18n import gettext as _
from engine.progress.document import (
    LessonProgress,
    NewerVersionError,
    check_lesson_id,
    migrate,
    progress_from_data,
)
from engine.progress.files import atomic_write_text, describe_os_error, dump_checked
from engine.progress.merge import merge_progress
from engine.timefmt import file_stamp, utc_iso, utc_now
from engine.yaml_cache import YamlSyntaxError, load_yaml, remember

if TYPE_CHECKING:
    from filelock import FileLock

LOCK_NAME = ".shardbook.lock"


_TEMP_RE = re.compile(r"^\..+\.yaml\.[A-Za-z0-9_]+\.tmp$")


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


def _parse(path: Path, text: str, lesson_id: str) -> LessonProgress:
    try:
        data = load_yaml(text, path)
    except YamlSyntaxError as error:
        raise ProgressError(str(path), _("not valid YAML ({error})").format(error=error)) from None
    except RecursionError:
        raise ProgressError(str(path), _("not valid YAML (nested too deeply)")) from None
    if not isinstance(data, dict):
        raise ProgressError(str(path), _("not a progress file (expected a mapping)"))
    return progress_from_data(path, migrate(path, data), lesson_id)


@dataclass
class _PreparedSave:
    """A save made ready on the caller's thread: the text to write and what it records."""

    path: Path
    lesson_id: str
    text: str
    data: dict[str, Any]
    # ``progress.updated`` before this save set it (put back when the write fails).
    previous_updated: str
    # The document merged with another window's file, or None when there was nothing to merge.
    merged: LessonProgress | None


class BackgroundSave:
    """One progress file being written in a thread (see :meth:`ProgressStore.save_in_background`).

    Only the temporary file, its fsync, the rename and the folder's fsync run in the thread;
    ``error`` holds the :class:`ProgressError` of a failed write once :attr:`done`.
    """

    def __init__(self, prepared: _PreparedSave, on_done: Callable[[], None]) -> None:
        self.prepared = prepared
        self.error: ProgressError | None = None
        self.fingerprint = (-1, -1, -1)
        self._on_done = on_done
        # Set when the write has finished, before ``on_done`` is called (the thread is still
        # alive then: its caller may see the message before the thread ends).
        self._finished = threading.Event()
        # Not a daemon: an interpreter that exits meanwhile still finishes the file.
        self._thread = threading.Thread(target=self._run, name="shardbook-save", daemon=False)

    @property
    def lesson_id(self) -> str:
        return self.prepared.lesson_id

    @property
    def done(self) -> bool:
        """Whether the write has finished (written or failed)."""
        return self._finished.is_set()

    def start(self) -> None:
        self._thread.start()

    def wait(self) -> None:
        """Block until the write has finished."""
        self._thread.join()

    def _run(self) -> None:
        try:
            _write(self.prepared)
            self.fingerprint = _fingerprint(self.prepared.path)
        except ProgressError as error:
            self.error = error
        finally:
            self._finished.set()
            self._on_done()


def _write(prepared: _PreparedSave) -> None:
    try:
        atomic_write_text(prepared.path, prepared.text)
    except OSError as error:
        raise ProgressError(
            str(prepared.path),
            _("could not be saved: {reason}").format(reason=describe_os_error(error)),
        ) from None
    # The next start reads the data written without PyYAML (the text is a checked dump of it).
    remember(prepared.path, prepared.text, prepared.data)


def _fingerprint(path: Path) -> tuple[int, int, int]:
    """(inode, size, mtime_ns) of ``path``; (-1, -1, -1) when it cannot be read."""
    try:
        stat = path.stat()
    except OSError:
        return (-1, -1, -1)
    return (stat.st_ino, stat.st_size, stat.st_mtime_ns)


class ProgressStore:
    """Reads and writes progress files in one folder, one ``<lesson id>.yaml`` per lesson.

    A store that called :meth:`lock`, or was made with ``locking=True``, writes only while it
    holds the folder's lock; others (the CLI, which only reads, and tests) write freely.

    ``locking=True`` (the app): the lock is taken when first needed, by :meth:`lock` or by the
    first save, or by a load that finds the file unreadable (only the lock's holder moves a
    file aside). The app takes it after its first frame: a readable file needs no lock to be
    read, and a save merges with whatever another window wrote since (:meth:`save`).
    """

    def __init__(self, folder: Path | str, *, locking: bool = False) -> None:
        self.folder = Path(folder)
        self.locking = locking
        self._lock: FileLock | None = None
        # lock() and unlock() may run in different threads (the app takes the lock in one, a
        # quiz's worker may ask for it while loading): one at a time.
        self._lock_guard = threading.RLock()
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
        # The write running in a thread (save_in_background), until this store's thread has
        # taken its result (finish_background): one at a time, so saves land in order.
        self._background: BackgroundSave | None = None

    # ------------------------------------------------------------------ lock
    def lock(self) -> bool:
        """Take the folder's lock without waiting. True when this store may write; False when
        another instance holds it (this store is then read-only until :meth:`lock` succeeds;
        :meth:`save` tries again each time).

        Raises:
            ProgressError: the folder cannot be created or the lock file cannot be opened.
        """
        with self._lock_guard:
            return self._take_lock()

    def _take_lock(self) -> bool:
        # Imported when first locked: a store that only reads never needs it.
        from filelock import FileLock, Timeout

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
    def holds_lock(self) -> bool:
        """True while this store holds the folder's lock."""
        return self._lock is not None and self._lock.is_locked

    @property
    def read_only(self) -> bool:
        """True when this store asked for the lock and another instance holds it."""
        return self._lock is not None and not self._lock.is_locked

    def unlock(self) -> None:
        """Finish a write in flight, then release the folder's lock (the app calls this when it
        exits): only the lock's holder writes."""
        self.finish_background()
        with self._lock_guard:
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
        check_lesson_id(lesson_id)
        return self.folder / f"{lesson_id}.yaml"

    def load(self, lesson_id: str, *, quarantine: bool = True) -> LoadResult:
        """Read a lesson's progress; a missing file gives fresh progress.

        An unreadable file (bad YAML, bad UTF-8, wrong shape) is moved aside under a
        timestamped name and reported in the result, never overwritten. Readers that will not
        save (``quarantine=False``: listing, exporting; or a read-only store, or a locking one
        that cannot take the lock now) get a ProgressError instead, and the file stays where
        it is.

        Raises:
            ProgressError: the file exists but cannot be opened, was written by a newer
                shardbook, is unreadable and may not be moved aside, or cannot be moved aside.
                The lesson is then not saved over the file (:meth:`save` refuses).
        """
        path = self.path_for(lesson_id)
        self.finish_background()
        self._base.pop(lesson_id, None)
        self._written.pop(lesson_id, None)
        self._blocked.pop(lesson_id, None)
        try:
            result = self._load(
                path, lesson_id, quarantine and (self.locking or not self.read_only)
            )
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
            raise ProgressError(
                str(path),
                _("cannot be read ({reason})").format(reason=describe_os_error(error)),
            ) from None
        try:
            return LoadResult(_parse(path, raw.decode("utf-8-sig"), lesson_id))
        except NewerVersionError:
            raise
        except (UnicodeDecodeError, ProgressError) as error:
            reason = (
                _("not valid UTF-8") if isinstance(error, UnicodeDecodeError) else error.message
            )
            if quarantine and self.locking:
                quarantine = self.lock()  # only the lock's holder moves a file aside (asked again)
            if not quarantine:
                raise ProgressError(
                    str(path), _("cannot be read: {reason}").format(reason=reason)
                ) from None
            aside = self._quarantine(path)
            message = _(
                "{file} could not be read ({reason}); it was kept as {aside} and a new file "
                "was started. Nothing was deleted."
            ).format(file=path.name, reason=reason, aside=aside.name)
            return LoadResult(LessonProgress(lesson_id), quarantined=aside, message=message)

    def _quarantine(self, path: Path) -> Path:
        stamp = file_stamp(utc_now())
        aside = path.with_name(f"{path.name}.unreadable-{stamp}")
        try:
            os.replace(path, aside)
        except OSError as error:
            raise ProgressError(
                str(path),
                _("is unreadable and could not be moved aside ({reason})").format(
                    reason=describe_os_error(error)
                ),
            ) from None
        return aside

    def save(self, progress: LessonProgress) -> Path:
        """Write ``progress`` atomically and return the file's path.

        A write still running in the background (:meth:`save_in_background`) finishes first,
        so this newer text is the one left on disk. When the file on disk changed since this
        store loaded it (another instance saved), the two are merged first
        (:func:`merge_progress`) and ``progress`` is updated in place; :attr:`merged` is then
        True until the next save.

        Raises:
            ProgressError: another instance holds the folder's lock; the file could not be
                read when loaded; the folder is not writable (the message says why: disk
                full, read-only, permission denied); or the text would not survive a YAML
                round trip. ``progress`` is kept as it was, so the caller can retry.
        """
        self.finish_background()
        prepared = self._prepare(progress)
        try:
            _write(prepared)
        except ProgressError:
            progress.updated = prepared.previous_updated
            raise
        if prepared.merged is not None:
            _take_fields(progress, prepared.merged)
        self._written_as(prepared, _fingerprint(prepared.path))
        return prepared.path

    def save_in_background(
        self, progress: LessonProgress, on_done: Callable[[], None]
    ) -> BackgroundSave:
        """Save ``progress`` as :meth:`save` does, with the file's write and fsync in a thread.

        Everything else (the lock check, the merge with another window's file, the YAML dump
        and its round-trip check) runs here, on the caller's thread, and raises as
        :meth:`save` does; a merge is applied to ``progress`` at once (text typed afterwards
        goes on top of it). ``on_done`` is called *in the writing thread* when the write has
        finished; the caller then calls :meth:`finish_background` on its own thread, which
        records the write and raises its error. Only one write runs at a time: one still
        running is finished first (this call then waits for it).

        Raises:
            ProgressError: as :meth:`save`, for what is checked before the write.
        """
        self.finish_background()
        prepared = self._prepare(progress)
        if prepared.merged is not None:
            _take_fields(progress, prepared.merged)
        background = BackgroundSave(prepared, on_done)
        # Started before it is published: another thread's load (the quiz reads progress files
        # in a worker) may finish it at once, and a thread not started cannot be joined.
        background.start()
        self._background = background
        return background

    @property
    def writing(self) -> bool:
        """Whether a background write is still running (see :meth:`save_in_background`)."""
        return self._background is not None and not self._background.done

    def finish_background(self) -> BackgroundSave | None:
        """Wait for the background write, if any, and record it (the base of the next merge).
        Returns it (``None`` when there was none, or it was finished already); its ``error``
        says whether it failed. Call it on the thread that saves, never in the writing thread.
        """
        background, self._background = self._background, None
        if background is None:
            return None
        background.wait()
        if background.error is None:
            self._written_as(background.prepared, background.fingerprint)
        return background

    def _written_as(self, prepared: _PreparedSave, fingerprint: tuple[int, int, int]) -> None:
        self._base[prepared.lesson_id] = prepared.data
        self._written[prepared.lesson_id] = fingerprint

    def _prepare(self, progress: LessonProgress) -> _PreparedSave:
        path = self.path_for(progress.lesson_id)
        self.merged = False
        if progress.lesson_id in self._blocked:
            raise ProgressError(
                str(path),
                _("not saved: {reason}").format(reason=self._blocked[progress.lesson_id]),
            )
        if (self.locking or self._lock is not None) and not self.lock():
            raise ProgressError(
                str(self.folder),
                _(
                    "another shardbook window is using this progress folder, so this one is "
                    "read-only; close the other window, then save again"
                ),
            )
        previous = progress.updated
        progress.updated = utc_iso(utc_now())
        data = progress.to_data()
        base = self._base.get(progress.lesson_id)
        if base is not None:
            data = self._merge_with_disk(path, base, data)
        try:
            text = dump_checked(data, self._texts.setdefault(progress.lesson_id, {}), path)
        except ProgressError:
            progress.updated = previous
            raise
        merged = progress_from_data(path, data, progress.lesson_id) if self.merged else None
        return _PreparedSave(path, progress.lesson_id, text, data, previous, merged)

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


def _take_fields(progress: LessonProgress, merged: LessonProgress) -> None:
    for item in fields(LessonProgress):
        setattr(progress, item.name, getattr(merged, item.name))
