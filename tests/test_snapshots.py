"""A few SVG snapshots of the app at 80x24 (pytest-textual-snapshot; Textual pinned exactly).

Regenerate after an intended change with ``pytest tests/test_snapshots.py --snapshot-update`` and
look at the SVGs before committing them. No flow here saves, so the header shows no clock.
"""

from __future__ import annotations

from pathlib import Path

from tests.pilot_helpers import SIZE
from tui.app import make_app


def test_main_screen(snap_compare, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    assert snap_compare(make_app(progress_dir=tmp_path), terminal_size=SIZE)


def test_diagram_zoomed(snap_compare, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    assert snap_compare(make_app(progress_dir=tmp_path), terminal_size=SIZE, press=["f4", "f5"])


def test_bubble_pane(snap_compare, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    assert snap_compare(make_app(progress_dir=tmp_path), terminal_size=SIZE, press=["f3", "f5"])


def test_quiz_feedback(snap_compare, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """A two-line self-check answer submitted: the question above, the key points below, each
    rating key with its interval (fixed clock and seed)."""
    import datetime as dt

    from tui.screens.quiz import QuizOptions

    now = dt.datetime(2026, 3, 1, 9, 0, tzinfo=dt.UTC)
    options = QuizOptions(lesson="S15", open_at_start=True, clock=lambda: now, seed=11, tz=dt.UTC)
    app = make_app(progress_dir=tmp_path, quiz=options)
    assert snap_compare(app, terminal_size=SIZE, press=["x", "enter", "y", "ctrl+r"])
