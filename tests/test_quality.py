"""The test command also lints (ruff check), checks formatting (ruff format) and type-checks
engine/ (mypy, strict), so a single README command covers them."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(args, cwd=ROOT, capture_output=True, text=True)


def test_ruff_check() -> None:
    result = _run(sys.executable, "-m", "ruff", "check", ".")
    assert result.returncode == 0, result.stdout + result.stderr


def test_ruff_format() -> None:
    result = _run(sys.executable, "-m", "ruff", "format", "--check", ".")
    assert result.returncode == 0, result.stdout + result.stderr


def test_mypy_engine() -> None:
    result = _run(sys.executable, "-m", "mypy", "engine")
    assert result.returncode == 0, result.stdout + result.stderr
