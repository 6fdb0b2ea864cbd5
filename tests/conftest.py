"""Shared test settings and fixtures (helpers for Pilot tests: ``tests/pilot_helpers.py``; for the
command line: ``tests/cli_helpers.py``).

Hypothesis's per-example deadline is a timing assertion: on a loaded 2-core machine it fails
tests whose code is correct. Speed is measured in benches/, so no test has a deadline.
Every test starts with the interface in English (:func:`english_locale`).

Bytecode is cached even where the environment says not to (``PYTHONDONTWRITEBYTECODE``): the
tests start the app, the command line and the lab's ranks in fresh processes, dozens of times,
and each would otherwise compile every module of engine/ and tui/ again.

Pilot waits for the app to be idle after each key and pause: until a window of
``SLEEP_GRANULARITY`` seconds (20 ms) passes in which the process used under 1/20 of it in CPU
time (``textual/_wait.py``). The window is a sleep, so a flow of a hundred keys slept four
seconds on top of its work; here it is 5 ms, with the same 1/20 share of CPU time meaning idle.
What a test checks is still awaited as before: Pilot first waits until every widget of the
screen has handled its queued messages, and a test waits for a timer, a worker or a later frame
with :func:`tests.pilot_helpers.wait_until`.

Apps started in this process do not animate (Textual's animation level ``none``, as a learner
gets with ``TEXTUAL_ANIMATIONS=none``): every key that switched a side tab slid the tab's
underline for 0.3 s, drawn frame by frame, and Pilot waits for each animation to end before the
next key, so a test spent that wait and those frames, and then checked the end state, which is
the same without them. Apps the tests start in their own processes (the terminal tests) keep
the default.

Python's cyclic garbage collector runs its full collection here less often than by default
(:data:`GC_THRESHOLDS`): a Pilot flow makes hundreds of thousands of objects a second (each
frame's strips and their caches) that live until the app ends, so the default thresholds started
a full collection of the whole heap every second or so, each 0.2 s on a 2-core machine: a fifth of
the CPU time of ``tests/test_layout.py``. Garbage is still collected, later, in bigger batches;
a worker holds about 190 MiB instead of 120 MiB.
"""

from __future__ import annotations

import gc
import inspect
import os
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest
import textual._wait as textual_wait
import textual.constants
from hypothesis import settings

import engine.settings
from engine.i18n import set_language
from engine.lesson import Lesson, load_lesson
from engine.paths import resolve_progress_dir
from tests.pilot_helpers import S15_FILE, Notified

os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
sys.dont_write_bytecode = False

# Caches (lesson index, line-break analyses) in a folder of this test process and the processes
# it starts, not the learner's: a test never reads a cache another run or the learner wrote.
_CACHE = tempfile.TemporaryDirectory(prefix="shardbook-test-cache-")
os.environ["SHARDBOOK_CACHE_DIR"] = _CACHE.name

# The progress folder a command uses when none is given (tests of the paths set their own).
DEFAULT_PROGRESS = resolve_progress_dir().resolve()

# A collection of the youngest generation after 50,000 new objects (Python's default: 700); of the
# whole heap after 100 of the middle one (default: 10).
GC_THRESHOLDS = (50_000, 20, 100)
gc.set_threshold(*GC_THRESHOLDS)

settings.register_profile("shardbook", deadline=None)
settings.load_profile("shardbook")

# Textual is pinned exactly (pyproject.toml); an upgrade that renames these fails here, loudly.
assert isinstance(textual_wait.SLEEP_GRANULARITY, float) and isinstance(
    textual_wait.SLEEP_IDLE, float
)
textual_wait.SLEEP_GRANULARITY = 0.005
textual_wait.SLEEP_IDLE = textual_wait.SLEEP_GRANULARITY / 20
# Read by each App when it is made (``App.animation_level``).
textual.constants.TEXTUAL_ANIMATIONS = "none"  # type: ignore[misc]


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """The longest tests first (marked ``long``: each runs for many seconds), then the other
    tests that start the app (Pilot flows, which are coroutines, and snapshots), then every other
    test, each kind in the order collected. pytest-xdist (``--dist loadgroup``) hands a worker its
    next test when it has two or fewer left, so a long test started near the end would leave the
    other core idle while it runs; the many short tests at the end fill both cores until the last
    one. A stable sort of the collected items, so every worker collects the same order, as xdist
    requires."""

    def starts_the_app(item: pytest.Item) -> bool:
        function = getattr(item, "obj", None)
        return inspect.iscoroutinefunction(function) or "snap_compare" in getattr(
            item, "fixturenames", ()
        )

    items.sort(key=lambda item: (not item.get_closest_marker("long"), not starts_the_app(item)))


@pytest.fixture(scope="session")
def lesson() -> Lesson:
    """Lesson S15 as the app loads it (frozen: tests may share it)."""
    return load_lesson(S15_FILE)


@pytest.fixture
def notified() -> Notified:
    """Records the app's notifications: ``app.run_test(message_hook=notified.hook)``."""
    return Notified()


@pytest.fixture(autouse=True)
def english_locale(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Every test starts in English with an English locale, whatever the machine's locale and
    whatever language the learner saved in the default progress folder (the command line reads
    it: a test of the saved setting gives its own folder); a test of another language sets its
    own; the language is English again after it."""
    for variable in ("LANGUAGE", "LC_ALL", "LC_MESSAGES"):
        monkeypatch.delenv(variable, raising=False)
    monkeypatch.setenv("LANG", "C.UTF-8")
    real = engine.settings.saved_language
    monkeypatch.setattr(
        engine.settings,
        "saved_language",
        lambda folder: real(folder) if Path(folder).resolve() != DEFAULT_PROGRESS else None,
    )
    set_language("en")
    yield
    set_language("en")
