"""Benchmark of the memory ledger: one evaluation under 1 ms (a key typed in the Ledger pane
recomputes once), and a 1,000-configuration sweep at the same 1 ms a configuration.

Every evaluation formats its terms' formula text, as every caller reads it.

Run: ``python benches/bench_ledger.py [--quick]``. Each figure is reported in absolute time and as a
ratio against a baseline measured in the same run, so that a slow machine shows as a slow baseline
rather than as a slow ledger: one evaluation against constructing the spec (a frozen dataclass),
the sweep against a plain Python loop building the same 1,000 specs; ``sum(range(10**6))`` gives
the machine's scale. Times are this process's CPU time (``time.process_time``), best of several
runs, so other load on a shared machine disturbs them less. ``--quick`` runs a few repetitions
only, to check that the script works.
"""

from __future__ import annotations

import argparse
import itertools
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from engine.ledger import CONVENTIONS, LedgerSpec, compute_ledger

# A full configuration: architecture, activations, every parallel axis (the slowest path).
FULL = {
    "layers": 80,
    "hidden": 8192,
    "heads": 64,
    "vocab": 128256,
    "seq": 4096,
    "micro_batch_size": 1,
    "dp": 16,
    "tp": 8,
    "pp": 4,
    "cp": 2,
    "zero_stage": 1,
    "recompute": "selective",
    "sequence_parallel": True,
    "num_microbatches": 16,
    "virtual_stages": 2,
    "gpu_memory": 80e9,
}


def _sweep_specs() -> list[LedgerSpec]:
    """1,000 configurations: 10 sizes x 4 ZeRO stages x 5 DP sizes x 5 other variations."""
    grid = itertools.product(
        [1e9, 3e9, 7e9, 13e9, 34e9, 70e9, 175e9, 405e9, 1e12, 2e12],
        [0, 1, 2, 3],
        [1, 8, 64, 512, 4096],
        [
            ("zero-paper", 1, None),
            ("megatron", 2, None),
            ("deepspeed", 4, 2048),
            ("zero-paper", 8, 4096),
            ("megatron", 1, 8192),
        ],
    )
    specs = []
    for params, zero, dp, (convention, tp, seq) in grid:
        if seq is None:
            specs.append(
                LedgerSpec(params=params, zero_stage=zero, dp=dp, tp=tp, convention=convention)
            )
        else:
            specs.append(
                LedgerSpec(
                    params=params,
                    layers=32,
                    hidden=4096,
                    heads=32,
                    seq=seq,
                    zero_stage=zero,
                    dp=dp,
                    tp=tp,
                    convention=convention,
                )
            )
    assert len(specs) == 1000 and {s.convention for s in specs} == set(CONVENTIONS)
    return specs


def _best(func: Callable[[], object], repeat: int, number: int) -> float:
    """Best-of-``repeat`` mean seconds per call over ``number`` calls (timeit's convention)."""
    times = []
    for _ in range(repeat):
        start = time.process_time()
        for _ in range(number):
            func()
        times.append((time.process_time() - start) / number)
    return min(times)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="a few repetitions, to check it runs")
    args = parser.parse_args(argv)
    repeat, number, sweeps = (2, 20, 2) if args.quick else (7, 500, 15)

    spec = LedgerSpec(**FULL)  # type: ignore[arg-type]
    one = _best(lambda: compute_ledger(spec), repeat, number)
    one_base = _best(lambda: LedgerSpec(**FULL), repeat, number)  # type: ignore[arg-type]

    specs = _sweep_specs()
    sweep_times = []
    base_times = []
    for _ in range(sweeps):
        start = time.process_time()
        for item in specs:
            compute_ledger(item)
        sweep_times.append(time.process_time() - start)
        start = time.process_time()
        _sweep_specs()
        base_times.append(time.process_time() - start)
    sweep, sweep_base = min(sweep_times), min(base_times)
    loop = _best(lambda: sum(range(1_000_000)), repeat, 1)

    print(f"python {sys.version.split()[0]}; best of {repeat} x {number} / {sweeps} sweeps")
    print(
        f"one evaluation (full spec): {one * 1e6:8.1f} us   "
        f"= {one / one_base:6.1f} x building the spec ({one_base * 1e6:.2f} us)   target < 1 ms"
    )
    print(
        f"1,000-configuration sweep:  {sweep * 1e3:8.2f} ms   "
        f"= {sweep / sweep_base:6.1f} x building the 1,000 specs ({sweep_base * 1e3:.2f} ms)   "
        f"target < 1,000 ms (median {statistics.median(sweep_times) * 1e3:.2f} ms)"
    )
    print(f"machine scale: sum(range(10**6)) takes {loop * 1e3:.1f} ms of CPU here")
    ok = one < 1e-3 and sweep < 1.0
    print("targets met" if ok else "TARGET MISSED")
    return 0 if ok or args.quick else 1


if __name__ == "__main__":
    sys.exit(main())
