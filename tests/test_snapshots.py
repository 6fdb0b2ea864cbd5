"""A few SVG snapshots of the app at 80x24 (pytest-textual-snapshot; Textual pinned exactly).

Regenerate after an intended change with ``pytest tests/test_snapshots.py --snapshot-update`` and
look at the SVGs before committing them. No flow here saves, so the header shows no clock.
"""

from __future__ import annotations

from pathlib import Path

from tui.app import make_app

SIZE = (80, 24)


def test_main_screen(snap_compare, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    assert snap_compare(make_app(progress_dir=tmp_path), terminal_size=SIZE)


def test_diagram_zoomed(snap_compare, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    assert snap_compare(make_app(progress_dir=tmp_path), terminal_size=SIZE, press=["f4", "f5"])


def test_bubble_pane(snap_compare, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    assert snap_compare(make_app(progress_dir=tmp_path), terminal_size=SIZE, press=["f3", "f5"])
