"""Benchmark of engine.pipeline: simulate interleaved 1F1B at p=64, m=512, v=4.

Usage: ``python benches/bench_pipeline.py [--quick]``

Reports the wall time of :func:`engine.pipeline.simulate` (target: under 0.5 s at p=64, m=512,
v=4, i.e. 262,144 ops) and of building the op-by-op timeline on first use, then how the time grows
with p·m·v over a few sizes (time per op should stay flat: linear growth). Each size is compared
with a baseline measured in the same run: a plain Python loop that does one float max, one add
and one list store per op, over the same number of ops, so figures from different machines can be
compared. ``--quick`` runs small sizes once and only checks that it runs. Exit status 1 when a full
run misses the time target or grows worse than linearly (time per op at the largest size more
than twice that at the smallest).
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from engine.pipeline import PipelineSpec, simulate

TARGET_S = 0.5
FULL = (64, 512, 4)
GROWTH = [(8, 64, 4), (16, 128, 4), (32, 256, 4), (64, 512, 4)]
QUICK_GROWTH = [(4, 8, 2), (8, 16, 2)]


def _best_of(func: Callable[[], object], repeats: int) -> float:
    """Best wall time of ``repeats`` runs, in seconds (the least disturbed run)."""
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        func()
        best = min(best, time.perf_counter() - start)
    return best


def _baseline(ops: int) -> Callable[[], object]:
    """A plain loop with the least work a list scheduler does per op."""

    def loop() -> list[float]:
        ends = [0.0] * ops
        clock = 0.0
        for i in range(ops):
            arrived = ends[i - 1] + 0.5
            clock = max(clock, arrived) + 1.0
            ends[i] = clock
        return ends

    return loop


def _ops(p: int, m: int, v: int) -> int:
    return 2 * p * m * v  # interleaved 1F1B: one F and one BW per chunk and micro-batch


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="run small sizes once")
    args = parser.parse_args(argv)
    repeats = 1 if args.quick else 3
    sizes = QUICK_GROWTH if args.quick else GROWTH
    full = sizes[-1] if args.quick else FULL

    spec = PipelineSpec("interleaved-1f1b", *full)
    sim_s = _best_of(lambda: simulate(spec), repeats)
    timeline_s = _best_of(lambda: simulate(spec).timeline, repeats) - sim_s
    result = simulate(spec)
    ops = _ops(*full)
    print(f"interleaved-1f1b p={full[0]} m={full[1]} v={full[2]}: {ops:,} ops")
    print(
        f"  simulate {sim_s * 1e3:8.1f} ms  (target {TARGET_S * 1e3:.0f} ms); "
        f"timeline on first use +{timeline_s * 1e3:.1f} ms"
    )
    print(
        f"  bubble/ideal {result.bubble_over_ideal:.6f} "
        f"(closed form {result.closed_form.bubble_over_ideal:.6f})"
    )
    print()
    print(
        f"{'p':>4} {'m':>5} {'v':>2} {'ops':>9} {'simulate':>11} {'per op':>9} {'x baseline':>11}"
    )
    per_op: list[float] = []
    for p, m, v in sizes:
        n = _ops(p, m, v)
        size_spec = PipelineSpec("interleaved-1f1b", p, m, v)
        seconds = _best_of(lambda size_spec=size_spec: simulate(size_spec), repeats)
        baseline = _best_of(_baseline(n), repeats)
        per_op.append(seconds / n)
        print(
            f"{p:>4} {m:>5} {v:>2} {n:>9,} {seconds * 1e3:>8.2f} ms "
            f"{seconds / n * 1e9:>6.0f} ns {seconds / baseline:>10.1f}x"
        )
    growth = per_op[-1] / per_op[0]
    print(f"time per op, largest / smallest size: {growth:.2f} (1.0 = linear)")
    if args.quick:
        return 0
    ok = sim_s < TARGET_S and growth < 2.0
    print("OK" if ok else "MISSED TARGET")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
