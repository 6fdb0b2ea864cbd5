"""Run every benchmark with ``--quick``: each must start, measure and exit 0 (their times are not
checked here; a full run of each prints them against its targets). Part of the README's test
command; exit 1 when one fails."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

BENCHES = Path(__file__).resolve().parent
# A line each benchmark prints near its end, so an early, silent exit is caught too.
EXPECTED = {
    "bench_app.py": "9. key typed into a note",
    "bench_collectives.py": "slowest simulation",
    "bench_ledger.py": "1,000-configuration sweep",
    "bench_pipeline.py": "per op, largest / smallest size",
}


def main() -> int:
    failed = []
    for name, expected in EXPECTED.items():
        result = subprocess.run(
            [sys.executable, str(BENCHES / name), "--quick"],
            capture_output=True,
            text=True,
            timeout=600,
        )
        ok = result.returncode == 0 and expected in result.stdout
        ok = ok and "Traceback" not in result.stderr
        print(f"{'ok' if ok else 'FAILED'}  {name} --quick", flush=True)
        if not ok:
            failed.append(name)
            print(result.stdout[-2000:] + result.stderr[-2000:], file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
