"""The simulation process (engine.pipeline.process): the same figures as a simulation in this
process, a newer request cancels the older one, and the process never outlives its caller.

Orders of events are made certain by stopping the process (SIGSTOP) while requests queue up,
not by clocks; waits for a process to end poll it with a deadline.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from engine.i18n import current_language, set_language
from engine.pipeline import PipelineSpec, SimulationCancelled, TimelineDrawing, simulate
from engine.pipeline.process import NICENESS, SimulationProcess, simulate_and_draw

ROOT = Path(__file__).resolve().parent.parent
GONE_WITHIN_S = 10.0
# 1F1B at p = 100, m = 10,000: 2 million ops, the largest the Bubble pane is driven with.
LARGEST = PipelineSpec("1f1b", 100, 10_000)

pytestmark = pytest.mark.skipif(not Path("/proc").is_dir(), reason="reads /proc (Linux)")


@contextlib.contextmanager
def simulation_process() -> Iterator[SimulationProcess]:
    process = SimulationProcess()
    try:
        yield process
    finally:
        process.close()


def gone(pid: int) -> bool:
    """The process has ended (a zombie nobody reaped yet has ended too)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except FileNotFoundError:
        return True
    return stat.rsplit(")", 1)[1].split()[0] in ("Z", "X")


def wait_gone(pid: int) -> None:
    deadline = time.monotonic() + GONE_WITHIN_S
    while not gone(pid):
        assert time.monotonic() < deadline, f"process {pid} still runs {GONE_WITHIN_S} s later"
        time.sleep(0.02)


def test_the_process_gives_the_figures_and_rows_of_a_simulation_here() -> None:
    """GPipe p = 4, m = 8 drawn 80 columns wide, and 1F1B at 2 million ops (too many to draw):
    the same figures as :func:`simulate` in this process, the same rows, and the bubble of the
    papers: (p-1)/m = 3/8 and 99/10,000 (Narayanan et al. 2021 §2.2.1; Huang et al. 2019)."""
    specs = [PipelineSpec("gpipe", 4, 8), LARGEST]
    with simulation_process() as process:
        answered = process.run(specs, 80)
        assert process.pid is not None and process.pid != os.getpid()
    here = simulate_and_draw(specs, 80)
    assert [result.bubble_over_ideal for result, _ in answered] == [3 / 8, 99 / 10_000]
    for (result, drawing), (expected, expected_drawing) in zip(answered, here, strict=True):
        assert result.makespan == expected.makespan == simulate(expected.spec).makespan
        assert result.bubble_time == expected.bubble_time
        assert result.peak_in_flight_microbatches == expected.peak_in_flight_microbatches
        assert result.timeline == ()  # the op-by-op arrays stay in the process
        if isinstance(expected_drawing, TimelineDrawing):
            assert isinstance(drawing, TimelineDrawing)
            assert drawing.rows == expected_drawing.rows
        else:
            assert drawing == expected_drawing


def test_the_process_yields_the_cpu_to_its_caller() -> None:
    """The process runs NICENESS steps nicer than its caller: on a busy machine the app's
    event loop is scheduled first."""
    with simulation_process() as process:
        process.run([PipelineSpec("gpipe", 2, 2)], 80)
        assert process.pid is not None
        niceness = int(Path(f"/proc/{process.pid}/stat").read_text().rsplit(")", 1)[1].split()[16])
    assert NICENESS > 0
    assert niceness == min(19, os.nice(0) + NICENESS)


def test_the_process_answers_in_the_interface_language() -> None:
    """The message about a timeline too large to draw comes back in the caller's language."""
    before = current_language()
    set_language("zh")
    try:
        with simulation_process() as process:
            ((_, drawing),) = process.run([LARGEST], 80)
    finally:
        set_language(before)
    assert isinstance(drawing, str) and drawing.startswith("未画时间线")


def test_a_newer_request_cancels_the_one_in_progress() -> None:
    """Two requests queue while the process is stopped; once it runs again, the first is
    cancelled at its first check (the second is already waiting on its input) and the second
    is answered."""
    outcomes: dict[str, object] = {}
    with simulation_process() as process:
        process.run([PipelineSpec("gpipe", 2, 2)], 80)  # started, idle
        assert process.pid is not None
        os.kill(process.pid, signal.SIGSTOP)
        sent = threading.Event()
        real_wait = process._wait

        def waiting(*args: object) -> object:
            sent.set()
            return real_wait(*args)  # type: ignore[arg-type]

        process._wait = waiting  # type: ignore[method-assign]

        def older() -> None:
            try:
                outcomes["older"] = process.run([LARGEST], 80)
            except SimulationCancelled:
                outcomes["older"] = "cancelled"

        thread = threading.Thread(target=older)
        thread.start()
        assert sent.wait(GONE_WITHIN_S)
        told = threading.Event()
        real_cancel = process.cancel

        def cancel() -> None:
            real_cancel()
            told.set()

        process.cancel = cancel  # type: ignore[method-assign]

        def newer() -> None:
            outcomes["newer"] = process.run([PipelineSpec("1f1b", 4, 8)], 80)

        second = threading.Thread(target=newer)
        second.start()
        assert told.wait(GONE_WITHIN_S)  # the newer request's cancel is in the pipe
        os.kill(process.pid, signal.SIGCONT)
        thread.join(GONE_WITHIN_S)
        second.join(GONE_WITHIN_S)
    assert outcomes["older"] == "cancelled"
    ((result, _),) = outcomes["newer"]  # type: ignore[misc]
    assert result.bubble_over_ideal == 3 / 8


CALLER = """
import sys, threading
from engine.pipeline import PipelineSpec
from engine.pipeline.process import SimulationProcess
process = SimulationProcess()
process.run([PipelineSpec("gpipe", 2, 2)], 80)
print(process.pid, flush=True)
threading.Thread(target=process.run, args=([PipelineSpec("1f1b", 100, 10_000)], 80)).start()
threading.Event().wait()
"""


def test_the_process_ends_when_its_caller_is_killed() -> None:
    """A caller killed (SIGKILL: no clean-up runs) while its process simulates 2 million ops:
    the process sees its requests' pipe end and stops within moments."""
    caller = subprocess.Popen(
        [sys.executable, "-c", CALLER],
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
    )
    child = 0
    try:
        assert caller.stdout is not None
        child = int(caller.stdout.readline())
        assert not gone(child)
        caller.kill()
        caller.wait()
        wait_gone(child)
    finally:
        if caller.returncode is None:
            caller.kill()
            caller.wait()
        if child and not gone(child):
            os.kill(child, signal.SIGKILL)


def test_closing_ends_the_process_and_later_requests_are_cancelled() -> None:
    process = SimulationProcess()
    process.run([PipelineSpec("gpipe", 2, 2)], 80)
    pid = process.pid
    assert pid is not None
    process.close()
    assert gone(pid) and process.pid is None
    with pytest.raises(SimulationCancelled):
        process.run([PipelineSpec("gpipe", 2, 2)], 80)
