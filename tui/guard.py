"""The app's defences against losing the learner's words when the process is told to stop or
the progress folder cannot be written (issue 8).

- SIGTERM (``kill``) and SIGHUP (the terminal window closed) run the app's save before it
  exits, through asyncio's signal handlers (they run on the app's own loop, between messages,
  so the save never interleaves with an edit).
- When the progress folder refuses writes (disk full, read-only, permission), notes are
  exported to the first folder that accepts them, and on an exit without a save the progress
  document is written there as a rescue copy.
"""

from __future__ import annotations

import asyncio
import contextlib
import datetime as dt
import signal
import tempfile
from collections.abc import Callable
from pathlib import Path

from engine.progress import LessonProgress, atomic_write_text, describe_os_error, dump_yaml

EXIT_SIGNALS = (signal.SIGTERM, signal.SIGHUP)


def install_exit_signals(callback: Callable[[int], None]) -> Callable[[], None]:
    """Call ``callback(signum)`` on the running loop for each of :data:`EXIT_SIGNALS`.

    Returns a function that removes the handlers again. Where handlers cannot be installed
    (not the main thread, or a platform without them) nothing is installed.
    """
    loop = asyncio.get_running_loop()
    installed: list[int] = []
    for signum in EXIT_SIGNALS:
        try:
            loop.add_signal_handler(signum, callback, signum)
        except (ValueError, RuntimeError, NotImplementedError):
            continue
        installed.append(signum)

    def remove() -> None:
        for signum in installed:
            with contextlib.suppress(ValueError, RuntimeError):
                loop.remove_signal_handler(signum)
        installed.clear()

    return remove


def fallback_folders(progress_dir: Path) -> list[Path]:
    """Where to export when the progress folder fails: its ``exports/``, then the working
    folder, the home folder and the system's temporary folder (first that accepts wins)."""
    folders: list[Path] = []
    for folder in (progress_dir / "exports", Path.cwd(), Path.home(), Path(tempfile.gettempdir())):
        if folder not in folders:
            folders.append(folder)
    return folders


def write_rescue_copy(progress: LessonProgress, progress_dir: Path) -> tuple[Path | None, str]:
    """Write ``progress`` as a progress document to the first of :func:`fallback_folders` (after
    ``exports/``) that accepts it, named ``<lesson>-unsaved-<UTC stamp>.yaml``.

    Returns:
        (the path written, ``""``) or (``None``, why every folder refused).
    """
    stamp = dt.datetime.now(dt.UTC).strftime("%Y%m%dT%H%M%SZ")
    text = dump_yaml(progress.to_data())
    reasons: list[str] = []
    for folder in fallback_folders(progress_dir)[1:]:
        path = folder / f"{progress.lesson_id}-unsaved-{stamp}.yaml"
        try:
            atomic_write_text(path, text)
        except OSError as error:
            reasons.append(f"{folder}: {describe_os_error(error)}")
            continue
        return path, ""
    return None, "; ".join(reasons)
