"""Benchmark of engine.pipeline: time and memory per op of :func:`engine.pipeline.simulate`.

Usage: ``python benches/bench_pipeline.py [--quick]``

1. 1F1B at p=100 over four sizes, m = 1,250 to 10,000 (250,000 to 2,000,000 ops): CPU time
   (``time.process_time``, best of 3) and the peak of the memory the simulation allocates
   (``tracemalloc``, which numpy reports its arrays to; a separate run, since tracing slows the
   code), each per op. Growth is linear when both stay flat. Targets at 2 million ops: at most
   0.3 s CPU and 100 MB (1e8 bytes) peak.
2. The same 2-million-op simulation in a fresh process: its peak resident set (``ru_maxrss``)
   against a fresh process that imports the engine and simulates nothing, so the interpreter,
   numpy and the engine's own modules are the baseline.
3. Interleaved 1F1B at p=64, m=512, v=4 (262,144 ops; target under 0.5 s) and the op-by-op
   timeline built on first use (what the pane's drawing needs).
4. The 2-million-op simulation as the Bubble pane runs it, through the simulation process
   (``engine.pipeline.process``, already started): wall time of the round trip against the same
   simulation and drawing in this process, best of 3 each, alternated; and the process's start.
5. Keys typed while the Bubble pane simulates the same schedule (``bench_app.py`` figure 8: p=100,
   m=1,000, then a ``0``; cursor keys 50 ms apart until the simulated figures are shown): p95 of
   each key to its frame, and the event loop's longest stall, with the simulation in the pane's
   process against the same in a worker thread of the app (the lock shared), alternated.

Every time is also given as a ratio to a baseline measured in the same run: a plain Python loop
that does one float max, one add and one list store per op, over the same number of ops, so
figures from different machines can be compared. ``--quick`` runs small sizes once and only
checks that it runs. A full run exits 1 when a target is missed.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from engine.pipeline import PipelineSpec, simulate
from engine.pipeline.process import SimulationProcess, simulate_and_draw

STAGES = 100
SIZES = (1_250, 2_500, 5_000, 10_000)
QUICK_SIZES = (50, 100)
TARGET_CPU_S = 0.3
TARGET_PEAK_BYTES = 100e6
INTERLEAVED = (64, 512, 4)
INTERLEAVED_TARGET_S = 0.5


def _best_cpu(func: Callable[[], object], repeats: int) -> float:
    """Least CPU time of ``repeats`` runs, in seconds (the least disturbed run)."""
    best = float("inf")
    for _ in range(repeats):
        start = time.process_time()
        func()
        best = min(best, time.process_time() - start)
    return best


def _peak_bytes(func: Callable[[], object]) -> int:
    """Peak bytes allocated (Python objects and numpy arrays) while ``func`` runs."""
    tracemalloc.start()
    try:
        func()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


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


def _child(micro_batches: int) -> None:
    """Print this process's peak RSS after simulating 1F1B p=STAGES (m=0: nothing).

    Read from ``VmHWM`` in /proc (Linux): ``ru_maxrss`` would carry over the parent's peak
    across fork and exec."""
    if micro_batches:
        simulate(PipelineSpec("1f1b", STAGES, micro_batches))
    status = Path("/proc/self/status").read_text(encoding="ascii")
    peak_kib = next(
        int(line.split()[1]) for line in status.splitlines() if line.startswith("VmHWM:")
    )
    print(json.dumps({"peak_rss": peak_kib * 1024}))


def _rss(micro_batches: int) -> int:
    out = subprocess.run(
        [sys.executable, __file__, "--child", str(micro_batches)],
        capture_output=True,
        check=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parent.parent)},
    ).stdout
    return int(json.loads(out.strip().splitlines()[-1])["peak_rss"])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="run small sizes once")
    parser.add_argument("--child", type=int, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child is not None:
        _child(args.child)
        return 0
    repeats = 1 if args.quick else 3
    sizes = QUICK_SIZES if args.quick else SIZES
    simulate(PipelineSpec("1f1b", 4, 8))  # imports and first-call set-up, not measured

    print(f"1. 1F1B p={STAGES}: CPU time (best of {repeats}) and tracemalloc peak, per op")
    print(f"{'m':>7} {'ops':>10} {'CPU':>9} {'per op':>8} {'x loop':>7} {'peak':>9} {'per op':>9}")
    rows = []
    for m in sizes:
        spec = PipelineSpec("1f1b", STAGES, m)
        ops = spec.num_ops
        cpu = _best_cpu(lambda spec=spec: simulate(spec), repeats)
        loop = _best_cpu(_baseline(ops), repeats)
        peak = _peak_bytes(lambda spec=spec: simulate(spec))
        rows.append((ops, cpu, peak))
        print(
            f"{m:>7,} {ops:>10,} {cpu * 1e3:>6.0f} ms {cpu / ops * 1e9:>5.0f} ns "
            f"{cpu / loop:>6.2f}x {peak / 1e6:>6.1f} MB {peak / ops:>7.1f} B"
        )
    (small_ops, small_cpu, small_peak), (ops, cpu, peak) = rows[0], rows[-1]
    time_growth = (cpu / ops) / (small_cpu / small_ops)
    memory_growth = (peak / ops) / (small_peak / small_ops)
    print(
        f"   per op, largest / smallest size: time {time_growth:.2f}, memory "
        f"{memory_growth:.2f} (1.0 = linear)"
    )

    rss = _rss(sizes[-1]) if not args.quick else _rss(sizes[0])
    base_rss = _rss(0)
    print(
        f"2. fresh process, 1F1B p={STAGES} m={sizes[-1]:,}: peak RSS {rss / 2**20:.1f} MiB "
        f"= {base_rss / 2**20:.1f} MiB (python, numpy, engine; nothing simulated) "
        f"+ {(rss - base_rss) / 2**20:.1f} MiB"
    )

    full = (4, 8, 2) if args.quick else INTERLEAVED
    spec = PipelineSpec("interleaved-1f1b", *full)
    sim = _best_cpu(lambda: simulate(spec), repeats)
    with_timeline = _best_cpu(lambda: simulate(spec).timeline, repeats)
    loop = _best_cpu(_baseline(spec.num_ops), repeats)
    result = simulate(spec)
    print(
        f"3. interleaved-1f1b p={full[0]} m={full[1]} v={full[2]} ({spec.num_ops:,} ops): "
        f"{sim * 1e3:.0f} ms CPU = {sim / loop:.2f}x loop (target "
        f"{INTERLEAVED_TARGET_S * 1e3:.0f} ms); timeline on first use "
        f"+{(with_timeline - sim) * 1e3:.0f} ms; bubble/ideal {result.bubble_over_ideal:.6f} "
        f"(closed form {result.closed_form.bubble_over_ideal:.6f})"
    )
    largest = PipelineSpec("1f1b", STAGES, sizes[-1])
    process = SimulationProcess()
    try:
        started = time.perf_counter()
        process.run([PipelineSpec("gpipe", 2, 2)], 80)
        start_s = time.perf_counter() - started
        here = there = float("inf")
        for _ in range(repeats):
            for where in ("here", "there"):
                started = time.perf_counter()
                if where == "here":
                    simulate_and_draw([largest], 80)
                else:
                    process.run([largest], 80)
                elapsed = time.perf_counter() - started
                if where == "here":
                    here = min(here, elapsed)
                else:
                    there = min(there, elapsed)
    finally:
        process.close()
    print(
        f"4. through the simulation process, 1F1B p={STAGES} m={sizes[-1]:,}: "
        f"{there * 1e3:.0f} ms wall = {there / here:.2f}x in this process ({here * 1e3:.0f} ms); "
        f"the process starts in {start_s * 1e3:.0f} ms"
    )
    from benches.bench_app import _bubble_at_limit, percentile

    figures: dict[str, dict[str, list[float]]] = {"process": {}, "thread": {}}
    for _ in range(1 if args.quick else 3):
        for where in ("thread", "process"):
            got = asyncio.run(_bubble_at_limit(1, in_thread=where == "thread"))
            for name, values in got.items():
                figures[where].setdefault(name, []).extend(values)
    keys = {where: percentile(got["during"] or [0.0], 0.95) for where, got in figures.items()}
    stalls = {where: max(got["stall"]) for where, got in figures.items()}
    print(
        f"5. keys typed during it in the Bubble pane, p95: {keys['process'] * 1e3:.1f} ms with the "
        f"simulation process = {keys['process'] / keys['thread']:.2f}x in a worker thread "
        f"({keys['thread'] * 1e3:.1f} ms); longest event-loop stall {stalls['process'] * 1e3:.0f} "
        f"ms against {stalls['thread'] * 1e3:.0f} ms"
    )
    print(
        f"targets at {ops:,} ops: CPU <= {TARGET_CPU_S} s, peak <= {TARGET_PEAK_BYTES / 1e6:.0f} MB"
    )
    if args.quick:
        return 0
    ok = (
        cpu <= TARGET_CPU_S
        and peak <= TARGET_PEAK_BYTES
        and sim < INTERLEAVED_TARGET_S
        and time_growth < 2.0
        and memory_growth < 2.0
    )
    print("targets met" if ok else "TARGET MISSED")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
