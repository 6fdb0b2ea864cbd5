"""Benchmark of engine.collectives: the cost model at 1,024 ranks across every operation
and algorithm, and the data-flow simulation at 64 ranks.

Usage: ``python benches/bench_collectives.py [--quick]``

Reports absolute times (targets: the whole cost sweep under 5 ms; each 64-rank simulation under
100 ms) and ratios against a baseline measured in the same run (a pure-Python loop of 100,000
additions), so figures from different machines can be compared. ``--quick`` runs everything once
at small sizes and only checks that it runs. Exit status 1 when a full run misses a target.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from engine.collectives import ALGORITHMS, OPERATIONS, collective_cost, simulate

COST_RANKS = 1024
SIM_RANKS = 64
COST_TARGET_S = 5e-3
SIM_TARGET_S = 100e-3


def _best_of(func: Callable[[], object], repeats: int) -> float:
    """Best wall time of ``repeats`` runs, in seconds (the least disturbed run)."""
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        func()
        best = min(best, time.perf_counter() - start)
    return best


def _baseline() -> None:
    total = 0
    for i in range(100_000):
        total += i


def _cost_sweep(ranks: int) -> None:
    for op in OPERATIONS:
        for algorithm in ALGORITHMS[op]:
            collective_cost(op, ranks, 1e9, 100e9, 5e-6, algorithm)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="run once at small sizes")
    args = parser.parse_args(argv)
    repeats = 1 if args.quick else 7
    cost_ranks = 16 if args.quick else COST_RANKS
    sim_ranks = 8 if args.quick else SIM_RANKS

    baseline = _best_of(_baseline, repeats)
    print(f"baseline (100,000 Python additions): {baseline * 1e3:.3f} ms")

    cost = _best_of(lambda: _cost_sweep(cost_ranks), repeats)
    count = sum(len(a) for a in ALGORITHMS.values())
    print(
        f"cost model, {cost_ranks} ranks, {count} op/algorithm pairs: {cost * 1e3:.3f} ms "
        f"({cost / baseline:.3f} x baseline; target < {COST_TARGET_S * 1e3:g} ms)"
    )
    missed = cost > COST_TARGET_S

    worst = 0.0
    for op in OPERATIONS:
        for algorithm in ALGORITHMS[op]:
            elapsed = _best_of(
                lambda op=op, algorithm=algorithm: simulate(op, sim_ranks, algorithm=algorithm),
                repeats,
            )
            worst = max(worst, elapsed)
            print(
                f"simulate {op:<14} {algorithm:<16} {sim_ranks} ranks: {elapsed * 1e3:8.3f} ms "
                f"({elapsed / baseline:7.3f} x baseline)"
            )
    print(f"slowest simulation: {worst * 1e3:.3f} ms (target < {SIM_TARGET_S * 1e3:g} ms)")
    missed = missed or worst > SIM_TARGET_S

    if args.quick:
        print("quick run: completed (targets not checked)")
        return 0
    print("targets: missed" if missed else "targets: met")
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
