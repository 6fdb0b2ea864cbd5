"""The learner's progress: one YAML file per lesson, written atomically.

A progress file holds what cannot be recomputed: self-check answers, reflection notes, the
learner's own calculator figures, the calculator forms as last typed, and the lesson's status.

Writes follow SQLite's and Git's discipline: the new text goes to a temporary file in the same
folder, is flushed and fsynced, and replaces the old file with ``os.replace`` (atomic on POSIX);
the folder is then fsynced so the rename itself survives a power cut. Before replacing, the
dumped YAML is parsed back and compared with what was meant to be saved, so a text YAML cannot
round-trip is refused instead of silently altered.

:meth:`ProgressStore.save_in_background` does the same with only the write and its fsyncs in a
thread (the app's autosave, so no key waits for the disk): one write at a time, and every other
save, load or unlock of the store finishes a write in flight first, so saves land in order.

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
them empty. Version 3 added ``drafts``; a version-2 file gets none. (A version-2 shardbook
refuses a version-3 file rather than save over it without the drafts.)

File layout (``schema_version: 3``)::

    schema_version: 3
    lesson: S15
    status: not-started | in-progress | complete
    updated: 2026-11-29T10:15:00+00:00
    answers: {self-check item id: text}
    revealed: [self-check item ids whose key points were shown]
    reflections: {reflection field id: text}
    forms: {calculator name: {field: text as typed}}
                                       # and, while that form has a refused field,
                                       # <name>.last-good: the form of the result still shown
    figures: {name: {key: number}}     # e.g. exercise1: {parameters: bytes, ...}
    notes: {note id: text}             # the learner's exercise notes, e.g. ex2.dp.split
    quiz: {...}                        # owned by engine.quiz: cards and review history
    read: [section ids the learner scrolled through to their end]
    ratings: {objective id: {start: level, end: level}}   # level: not-yet | partly | can
    looked: {note id: UTC time}        # the engine's answer was shown before the note was written
    sessions:                          # the session log, oldest first (engine.session)
      - {start: UTC time, end: UTC time, steps_finished: [plan step ids], answers_written: [ids]}
    drafts:                            # quiz answers typed and not submitted (engine.quiz)
      {quiz item id: {text: the answer as typed, params: what asked it (drill values)}}

Times are ISO 8601 in UTC with an explicit offset (``2026-12-07T10:15:00+00:00``).

The package: :mod:`~engine.progress.document` (the document and its layout),
:mod:`~engine.progress.files` (YAML and atomic writes), :mod:`~engine.progress.merge` and
:mod:`~engine.progress.store` (the folder, the lock, loading and saving).
"""

from engine.progress.document import (
    MIGRATIONS,
    RATING_LABELS,
    RATING_LEVELS,
    RATING_PHASES,
    SCHEMA_VERSION,
    SESSION_KEYS,
    STATUS_LABELS,
    STATUSES,
    LessonProgress,
    ObjectiveRating,
    Status,
    last_good_key,
    migrate,
)
from engine.progress.files import (
    atomic_write_bytes,
    atomic_write_text,
    describe_os_error,
    dump_checked,
    dump_yaml,
)
from engine.progress.merge import (
    merge_progress,
)
from engine.progress.store import (
    LOCK_NAME,
    LoadResult,
    ProgressStore,
)

__all__ = [
    "LOCK_NAME",
    "MIGRATIONS",
    "RATING_LABELS",
    "RATING_LEVELS",
    "RATING_PHASES",
    "SCHEMA_VERSION",
    "SESSION_KEYS",
    "STATUSES",
    "STATUS_LABELS",
    "LessonProgress",
    "LoadResult",
    "ObjectiveRating",
    "ProgressStore",
    "Status",
    "atomic_write_bytes",
    "atomic_write_text",
    "describe_os_error",
    "dump_checked",
    "dump_yaml",
    "last_good_key",
    "merge_progress",
    "migrate",
]
