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
    "bench_app.py": "8. Bubble",
    "bench_collectives.py": "slowest simulation",
    "bench_ledger.py": "1,000-configuration sweep",
    "bench_pipeline.py": "per op, largest / smallest size",
}


def main() -> int:
    # All four at once: a quick run is mostly start-up and waits for frames, and its figures are
    # not read, so sharing the cores changes nothing checked here.
    running = {
        name: subprocess.Popen(
            [sys.executable, str(BENCHES / name), "--quick"],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for name in EXPECTED
    }
    failed = []
    for name, expected in EXPECTED.items():
        process = running[name]
        try:
            stdout, stderr = process.communicate(timeout=600)
        except subprocess.TimeoutExpired:
            process.kill()
            stdout, stderr = process.communicate()
        ok = process.returncode == 0 and expected in stdout and "Traceback" not in stderr
        print(f"{'ok' if ok else 'FAILED'}  {name} --quick", flush=True)
        if not ok:
            failed.append(name)
            print(stdout[-2000:] + stderr[-2000:], file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
