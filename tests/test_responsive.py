"""No key waits on a long computation: the largest inputs the forms accept run in workers.

Each test makes the long work wait until the test has seen a key handled, so the order of the
two events is checked, not a clock: were the work on the event loop, the key could not be
handled before it ends, and the work's gate would time out first.
"""

from __future__ import annotations

import asyncio
import os
import signal
import subprocess
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot
from textual.widgets import Input, Static

import tui.screens.quiz as quiz_module
from engine.pipeline import PipelineSpec, SimulationCancelled
from engine.pipeline.process import Simulated, SimulationProcess
from engine.progress import LessonProgress
from engine.quiz import QuizSession
from tests.pilot_helpers import app_for, choose, result_text, shown, type_into, wait_until
from tests.test_quiz_flow import NOW
from tui.app import ShardbookApp, make_app
from tui.screens.quiz import QuizAnswer, QuizOptions, QuizScreen

SIZE = (80, 24)
LESSON = Path(__file__).resolve().parent.parent / "content" / "S15.yaml"
GATE_TIMEOUT_S = 20


class Gate:
    """Records events in order; the gated work waits until :meth:`open` (or times out)."""

    def __init__(self) -> None:
        self.events: list[str] = []
        self._opened = threading.Event()

    def wait(self) -> None:
        self._opened.wait(timeout=GATE_TIMEOUT_S)

    def open(self, event: str) -> None:
        self.events.append(event)
        self._opened.set()


async def bubble_pane(pilot: Pilot[int], app: ShardbookApp) -> Any:
    """F3: the Bubble pane, mounted."""
    await pilot.press("f3")
    await pilot.pause()
    pane = app.query_one("BubblePane")
    await pilot.pause()
    return pane


def gate_simulations(
    monkeypatch: pytest.MonkeyPatch, gate: Gate, stages: int | None, micro_batches: int | None
) -> list[int | None]:
    """Make the pane's simulations of ``stages`` (or ``micro_batches``) wait for ``gate`` before
    they are sent to the simulation process, and record when each starts, ends or is
    cancelled; returns the list the process ids that answered are added to."""
    real_run = SimulationProcess.run
    answered_by: list[int | None] = []

    def gated(
        process: SimulationProcess,
        specs: Sequence[PipelineSpec],
        width: int,
        cancelled: Callable[[], bool] = lambda: False,
    ) -> list[Simulated]:
        spec = specs[0]
        if spec.stages != stages and spec.num_microbatches != micro_batches:
            return real_run(process, specs, width, cancelled)
        label = f"simulation m={spec.num_microbatches}"
        gate.events.append(f"{label} started")
        gate.wait()
        try:
            simulated = real_run(process, specs, width, cancelled)
        except SimulationCancelled:
            gate.events.append(f"{label} cancelled")
            raise
        answered_by.append(process.pid)
        gate.events.append(f"{label} ended")
        return simulated

    monkeypatch.setattr(SimulationProcess, "run", gated)
    return answered_by


async def test_bubble_at_p100_m10000_answers_keys_while_it_simulates(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """1F1B at p = 100, m = 10,000 (2 million ops): the closed form (p-1)/m = 99/10,000 =
    0.0099 (Narayanan et al. 2021 §2.2.1) is on screen at once, a key typed while the schedule
    is simulated is handled before the simulation ends, and the simulated figures follow; the
    simulation ran in another process, which ends with the app."""
    gate = Gate()
    answered_by = gate_simulations(monkeypatch, gate, None, 10_000)
    app = app_for(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        pane = await bubble_pane(pilot, app)
        await choose(pilot, pane.query_one("#field-schedule"), "1f1b")
        await type_into(pilot, pane.query_one("#field-stages", Input), "100")
        field = pane.query_one("#field-micro_batches", Input)
        await type_into(pilot, field, "10000")
        text = result_text(pane)
        assert "closed form b/ideal" in text and "0.0099" in text
        assert text.count("simulating 2,000,000 ops") == 1
        # A key while the simulation waits: handled now, not after it.
        await pilot.press("home")
        assert field.cursor_position == 0
        gate.open("key handled")
        await app.workers.wait_for_complete()
        await pilot.pause()
        await pilot.pause()
        assert gate.events == [
            "simulation m=10000 started",
            "key handled",
            "simulation m=10000 ended",
        ]
        text = result_text(pane)
        assert "makespan" in text and "bubble/ideal" in text and "0.0099" in text
        assert "simulating" not in text
        assert field.value == "10000"
        child = pane.simulation_process._process
        assert child is not None and answered_by == [child.pid] and child.pid != os.getpid()
        await pilot.press("ctrl+q")
    assert child.returncode is not None  # ended and reaped with the app


async def test_bubble_at_2000_stages_answers_every_key_while_it_simulates(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """2,000 stages, then micro-batches typed up to 5,000 (2*p*m = 20 million ops, more than the
    simulator runs): every schedule with 2,000 stages is simulated in the simulation process,
    even m = 5 (20,000 ops, but 2,000 timeline rows and a 2,000-stage grid), so a key typed
    meanwhile is handled before any simulation ends; each newer value cancels the older
    simulation, and the last good one (m = 500, 2 million ops) is shown below the message about
    m = 5,000. GPipe's closed form (p-1)/m = 1999/500 = 3.998 (Huang et al. 2019 §2.3;
    Narayanan et al. 2021 §2.2.1)."""
    gate = Gate()
    gate_simulations(monkeypatch, gate, 2000, None)
    app = app_for(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        pane = await bubble_pane(pilot, app)
        await type_into(pilot, pane.query_one("#field-stages", Input), "2000")
        field = pane.query_one("#field-micro_batches", Input)
        await type_into(pilot, field, "5000")
        assert "2*p*m = 2 × 2000 × 5000 = 20,000,000 ops is more than this simulator runs" in shown(
            pane.query_one(".calc-error", Static)
        )
        # A key while every simulation waits: handled now, not after them.
        await pilot.press("home")
        assert field.cursor_position == 0
        gate.open("key handled")
        await app.workers.wait_for_complete()
        await pilot.pause()
        await pilot.pause()
        assert gate.events[0] == "simulation m=8 started"
        assert gate.events.index("key handled") < gate.events.index("simulation m=500 ended")
        started = [event for event in gate.events if event.endswith("started")]
        assert started == [f"simulation m={m} started" for m in (8, 5, 50, 500)]
        finished = set(gate.events) - {*started, "key handled"}
        assert finished == {
            *(f"simulation m={m} cancelled" for m in (8, 5, 50)),
            "simulation m=500 ended",
        }
        text = result_text(pane)
        assert "gpipe: p=2000, m=500" in text and "makespan" in text
        assert "closed form b/ideal" in text and "3.998" in text
        assert "simulating" not in text
        assert field.value == "5000"


# The longest text the event loop may break into lines: UAX #14 in pure Python takes about
# 0.1 ms a character (engine/linebreak.py), so 500 characters use the 50 ms a key may wait.
LONGEST_BROKEN_ON_THE_LOOP = 500


async def test_bubble_at_10000_stages_shows_its_result_without_holding_the_keys(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Stages typed up to 1e400: p = 1e4 (GPipe, m = 8: 160,000 ops) is simulated in the
    simulation process while 1e40 and 1e400 are refused, and its figures are the result kept;
    then the field is cleared and 100000 typed (refused: more stages than the simulator runs).
    Showing the result broke its line of in-flight
    counts, one per stage (20,000 characters), into lines on the event loop: 2 s in which the
    keys typed next waited. Every text the event loop breaks is short, and the counts are
    shown by runs: GPipe holds all m = 8 micro-batches on every stage at its peak (Huang et al.
    2019 §2.3), 8 on each of 10,000 stages."""
    import engine.linebreak as linebreak

    real_analyse = linebreak._analyse
    on_the_loop: list[int] = []
    loop_thread = threading.current_thread()

    def recorded(text: str) -> Any:
        if threading.current_thread() is loop_thread:
            on_the_loop.append(len(text))
        return real_analyse(text)

    monkeypatch.setattr(linebreak, "_analyse", recorded)
    app = app_for(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        pane = await bubble_pane(pilot, app)
        field = pane.query_one("#field-stages", Input)
        await type_into(pilot, field, "1e400")
        await wait_until(pilot, lambda: "makespan" in result_text(pane))
        await pilot.pause()
        text = result_text(pane)
        assert "gpipe: p=10000, m=8" in text
        assert "in flight per stage: 8×10,000" in " ".join(text.split())
        await type_into(pilot, field, "100000")
        assert field.value == "100000"
        # 1,600,000 ops, under the op limit, but more stages than the simulator runs (16,384):
        # refused on p before any work, 10,000's result kept.
        error = " ".join(shown(pane.query_one(".calc-error", Static)).split())
        assert error.startswith("stages p: p = 100,000 stages is more than this simulator runs")
        assert "gpipe: p=10000, m=8" in result_text(pane)
        await pilot.press("ctrl+q")
    assert on_the_loop and max(on_the_loop) <= LONGEST_BROKEN_ON_THE_LOOP


async def test_closing_the_app_ends_a_busy_simulation_process(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Quitting while the simulation process has not answered (1F1B typed up to p = 100,
    m = 10,000, 2 million ops): the app does not wait for the answer; the process is ended and
    reaped with the app, and every simulation asked for is cancelled. The process is stopped
    (SIGSTOP) before its first request, so it is busy, not done, whenever the quit comes."""
    events: list[str] = []
    all_returned = threading.Event()
    real_started = SimulationProcess._started
    real_run = SimulationProcess.run
    processes: list[subprocess.Popen[bytes]] = []

    def stopped(process: SimulationProcess) -> subprocess.Popen[bytes]:
        child = real_started(process)
        if not processes:
            os.kill(child.pid, signal.SIGSTOP)
            processes.append(child)
            events.append("a request sent to a stopped process")
        return child

    def watched(
        process: SimulationProcess,
        specs: Sequence[PipelineSpec],
        width: int,
        cancelled: Callable[[], bool] = lambda: False,
    ) -> list[Simulated]:
        events.append("asked")
        try:
            return real_run(process, specs, width, cancelled)
        except SimulationCancelled:
            events.append("cancelled")
            raise
        finally:
            if events.count("asked") == events.count("cancelled"):
                all_returned.set()

    monkeypatch.setattr(SimulationProcess, "_started", stopped)
    monkeypatch.setattr(SimulationProcess, "run", watched)
    app = app_for(tmp_path)
    try:
        async with app.run_test(size=SIZE) as pilot:
            pane = await bubble_pane(pilot, app)
            await choose(pilot, pane.query_one("#field-schedule"), "1f1b")
            await type_into(pilot, pane.query_one("#field-stages", Input), "100")
            await type_into(pilot, pane.query_one("#field-micro_batches", Input), "10000")
            await wait_until(pilot, lambda: bool(processes))
            assert "simulating 2,000,000 ops" in result_text(pane)
            await pilot.press("ctrl+q")
        (child,) = processes
        assert child.returncode == -signal.SIGKILL  # ended and reaped with the app
        # The workers' threads may outlive the app's run by the moment they take to return.
        await asyncio.to_thread(all_returned.wait, GATE_TIMEOUT_S)
        assert "a request sent to a stopped process" in events
        assert events.count("asked") == events.count("cancelled") >= 1
    finally:
        for child in processes:
            if child.returncode is None:
                child.kill()
                child.wait()


def copies_of_s15(folder: Path, count: int) -> Path:
    """A content folder: S15 and ``count`` copies of it under new ids."""
    folder.mkdir()
    text = LESSON.read_text(encoding="utf-8")
    (folder / "S15.yaml").write_text(text, encoding="utf-8")
    for number in range(count):
        copy = text.replace("\nid: S15\n", f"\nid: G{number:03d}\n", 1)
        (folder / f"G{number:03d}.yaml").write_text(copy, encoding="utf-8")
    return folder


async def test_the_quiz_asks_at_once_and_joins_the_other_lessons_when_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Over three lessons the quiz asks the open lesson's first question before the other two
    are parsed (in a worker); a key typed meanwhile is handled before they are; then one queue
    holds all three lessons' items."""
    gate = Gate()
    real_load = quiz_module.load_lesson_cached

    def gated(path: Path | str) -> Any:
        if "reading started" not in gate.events:
            gate.events.append("reading started")
            gate.wait()
        return real_load(path)

    monkeypatch.setattr(quiz_module, "load_lesson_cached", gated)
    monkeypatch.setenv("SHARDBOOK_CACHE_DIR", str(tmp_path / "cache"))
    content = copies_of_s15(tmp_path / "content", 2)
    app = make_app(
        content_dir=content,
        progress_dir=tmp_path / "progress",
        autosave_delay=0.05,
        quiz=QuizOptions(open_at_start=True, clock=lambda: NOW, seed=11),
    )
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, QuizScreen)
        session = screen.session
        assert session is not None and session.current is not None
        assert session.current.item.lesson_id == "S15"
        assert set(session.lessons) == {"S15"}
        alone = session.remaining
        assert "reading lessons" in str(screen.query_one("#quiz-status").render())
        # A key while the other lessons wait to be read: typed into the answer now.
        answer = screen.query_one("#quiz-answer", QuizAnswer)
        assert screen.typing
        before = answer.text
        await pilot.press("x")
        assert answer.text == before + "x"
        gate.open("key handled")
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert gate.events == ["reading started", "key handled"]
        assert set(session.lessons) == {"S15", "G000", "G001"}
        assert session.current.item.lesson_id == "S15"
        # The same items as one session built over the three lessons at once.
        whole = QuizSession(
            [session.lessons[lesson_id] for lesson_id in ("S15", "G000", "G001")],
            {lesson_id: LessonProgress(lesson_id) for lesson_id in ("S15", "G000", "G001")},
            lambda progress: None,
            clock=lambda: NOW,
        )
        assert whole.current is not None and session.remaining > alone
        asked = {session.current.item, *session.queue}
        assert asked == {whole.current.item, *whole.queue}
        assert "reading lessons" not in str(screen.query_one("#quiz-status").render())
        await pilot.press("ctrl+q")


async def test_the_quiz_uses_the_lessons_the_app_listed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Opening the quiz lists no lessons again (360 through the index: about 4 ms before the
    first question): it takes the list the app made when it started, and reads those lessons in
    its worker as before."""
    monkeypatch.setenv("SHARDBOOK_CACHE_DIR", str(tmp_path / "cache"))
    content = copies_of_s15(tmp_path / "content", 2)
    app = make_app(content_dir=content, progress_dir=tmp_path / "progress", autosave_delay=0.05)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()

        def listed_again(*_args: object) -> Any:
            raise AssertionError("the quiz listed the lessons again")

        monkeypatch.setattr(quiz_module, "discover_lessons", listed_again)
        await pilot.press("f12")
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, QuizScreen) and screen.problem == ""
        await app.workers.wait_for_complete()
        await pilot.pause()
        assert screen.session is not None
        assert set(screen.session.lessons) == {"S15", "G000", "G001"}
