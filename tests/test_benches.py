"""Each benchmark runs (``--quick``, in a subprocess): CI checks they execute, not their times."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

BENCHES = Path(__file__).resolve().parents[1] / "benches"


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("bench_app.py", "5. autosave"),
        ("bench_ledger.py", "1,000-configuration sweep"),
        ("bench_collectives.py", ""),
        ("bench_pipeline.py", ""),
    ],
)
def test_bench_runs_quick(name: str, expected: str) -> None:
    result = subprocess.run(
        [sys.executable, str(BENCHES / name), "--quick"],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-2000:]
    assert expected in result.stdout
    assert "Traceback" not in result.stderr
