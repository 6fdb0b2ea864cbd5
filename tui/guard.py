"""The app's defences against losing the learner's words when the process is told to stop or
the progress folder cannot be written.

- SIGINT (``kill -INT``, ``timeout``), SIGTERM (``kill``) and SIGHUP (the terminal window or
  SSH link closed) run the app's save before it exits, through asyncio's signal handlers (they
  run on the app's own loop, between messages, so the save never interleaves with an edit).
- Once saved and unlocked, a backstop ends the process within :data:`BACKSTOP_SECONDS` whatever
  the framework's exit path waits on (:func:`end_on_signal`).
- When the progress folder refuses writes (disk full, read-only, permission), notes are
  exported to the first folder that accepts them, and on an exit without a save the progress
  document is written there as a rescue copy.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import tempfile
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from engine.progress import LessonProgress, atomic_write_text, describe_os_error, dump_yaml
from engine.timefmt import file_stamp, utc_now
from tui.settle import settle

if TYPE_CHECKING:
    from textual.app import App

# The app exits with 128 + the signal's number, as a shell reports a process the signal ended.
EXIT_SIGNALS = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
# Within 2 s of the save, with time to spare for the process to be reaped.
BACKSTOP_SECONDS = 1.5


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


def arm_backstop(
    return_code: int,
    before_exit: Callable[[], None] = lambda: None,
    delay: float = BACKSTOP_SECONDS,
) -> threading.Timer:
    """End the process with ``return_code`` after ``delay`` seconds unless it ended by then.

    A daemon thread: it never keeps the process alive, and it fires even while the main thread
    waits forever (on a writer queue nobody drains, a thread that never stops, a terminal that
    does not read). ``before_exit`` runs first; ``os._exit`` skips Python's clean-up, so arm it
    only once nothing is left to write.
    """

    def end() -> None:
        with contextlib.suppress(Exception):
            before_exit()
        os._exit(return_code)

    timer = threading.Timer(delay, end)
    timer.daemon = True
    timer.start()
    return timer


def end_on_signal(
    app: App[Any], return_code: int, save_and_unlock: Callable[[], str]
) -> asyncio.Task[None]:
    """End ``app`` with ``return_code`` after an exit signal, saving first.

    At once: no resume after this and, if the terminal hung up, no output to it. Then, in a
    task of its own (the app's queue must stay free for the changes to arrive):
    :func:`tui.settle.settle`,
    ``save_and_unlock()`` (it returns a last message, or ``""``), the backstop, ``app.exit``.
    On a real terminal (:class:`tui.driver.ShardbookDriver`) the process is gone within
    :data:`BACKSTOP_SECONDS` of the save whatever the framework does; headless runs (tests)
    exit through Textual alone.
    """
    from tui.driver import ShardbookDriver

    driver = app._driver
    driver = driver if isinstance(driver, ShardbookDriver) else None
    terminal_gone = driver.end_session() if driver is not None else False

    async def save_then_exit() -> None:
        message = ""
        try:
            await settle(app)
            message = save_and_unlock()
        finally:  # an unforeseen error in the save still ends the process
            if driver is not None:
                arm_backstop(return_code, driver.restore_terminal_modes)
            shown = message if message and not terminal_gone else None
            app.exit(return_code=return_code, message=shown)

    return asyncio.get_running_loop().create_task(save_then_exit())


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
    stamp = file_stamp(utc_now())
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
