"""No key waits on a long computation: the largest inputs the forms accept run in workers.

Each test makes the long work wait until the test has seen a key handled, so the order of the
two events is checked, not a clock: were the work on the event loop, the key could not be
handled before it ends, and the work's gate would time out first.
"""

from __future__ import annotations

import asyncio
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from textual.pilot import Pilot
from textual.widgets import Input, Static
from textual.worker import get_current_worker

import tui.screens.quiz as quiz_module
import tui.widgets.bubble as bubble_module
from engine.pipeline import PipelineResult, PipelineSpec, SimulationCancelled
from engine.progress import LessonProgress
from engine.quiz import QuizSession
from tests.pilot_helpers import app_for, choose, result_text, shown, type_into
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


async def test_bubble_at_p100_m10000_answers_keys_while_it_simulates(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """1F1B at p = 100, m = 10,000 (2 million ops): the closed form (p-1)/m = 99/10,000 =
    0.0099 (Narayanan et al. 2021 §2.2.1) is on screen at once, a key typed while the schedule
    is simulated is handled before the simulation ends, and the simulated figures follow."""
    gate = Gate()
    real_simulate = bubble_module.simulate

    def gated(spec: PipelineSpec, cancelled: Callable[[], bool]) -> PipelineResult:
        if spec.num_microbatches != 10_000:
            return real_simulate(spec, cancelled)
        gate.events.append("simulation started")
        gate.wait()
        result = real_simulate(spec, cancelled)
        gate.events.append("simulation ended")
        return result

    monkeypatch.setattr(bubble_module, "simulate", gated)
    app = app_for(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        pane = await bubble_pane(pilot, app)
        await choose(pilot, pane.query_one("#field-schedule"), "1f1b")
        await type_into(pilot, pane.query_one("#field-stages", Input), "100")
        field = pane.query_one("#field-micro_batches", Input)
        await type_into(pilot, field, "10000")
        text = result_text(pane)
        assert "closed form b/ideal" in text and "0.0099" in text
        assert "simulating 2,000,000 ops" in text
        # A key while the simulation waits: handled now, not after it.
        await pilot.press("home")
        assert field.cursor_position == 0
        gate.open("key handled")
        await app.workers.wait_for_complete()
        await pilot.pause()
        await pilot.pause()
        assert gate.events == ["simulation started", "key handled", "simulation ended"]
        text = result_text(pane)
        assert "makespan" in text and "bubble/ideal" in text and "0.0099" in text
        assert "simulating" not in text
        assert field.value == "10000"


async def test_bubble_at_2000_stages_answers_every_key_while_it_simulates(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """2,000 stages, then micro-batches typed up to 5,000 (p*m = 10 million, more than the
    simulator runs): every schedule with 2,000 stages is simulated in a worker, even m = 5
    (20,000 ops, but 2,000 timeline rows and a 2,000-stage grid), so a key typed meanwhile is
    handled before any simulation ends; each newer value cancels the older simulation, and the
    last good one (m = 500, 2 million ops) is shown below the message about m = 5,000. GPipe's
    closed form (p-1)/m = 1999/500 = 3.998 (Huang et al. 2019 §2.3; Narayanan et al. 2021
    §2.2.1)."""
    gate = Gate()
    real_simulate = bubble_module.simulate

    def gated(spec: PipelineSpec, cancelled: Callable[[], bool]) -> PipelineResult:
        if spec.stages != 2000:
            return real_simulate(spec, cancelled)
        gate.events.append(f"simulation m={spec.num_microbatches} started")
        gate.wait()
        try:
            result = real_simulate(spec, cancelled)
        except SimulationCancelled:
            gate.events.append(f"simulation m={spec.num_microbatches} cancelled")
            raise
        gate.events.append(f"simulation m={spec.num_microbatches} ended")
        return result

    monkeypatch.setattr(bubble_module, "simulate", gated)
    app = app_for(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        pane = await bubble_pane(pilot, app)
        await type_into(pilot, pane.query_one("#field-stages", Input), "2000")
        field = pane.query_one("#field-micro_batches", Input)
        await type_into(pilot, field, "5000")
        assert "p*m*v = 10000000 is more than this simulator runs" in shown(
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


async def test_closing_the_app_stops_a_simulation_at_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Quitting while 1F1B at p = 100, m = 10,000 is simulated (2 million ops): the quit
    cancels the worker and the simulator stops at its next check instead of running to the end
    (the process would wait for its thread)."""
    events: list[str] = []
    returned = threading.Event()
    real_simulate = bubble_module.simulate

    def watched(spec: PipelineSpec, cancelled: Callable[[], bool]) -> PipelineResult:
        if spec.num_microbatches != 10_000:
            return real_simulate(spec, cancelled)
        events.append("simulation started")
        get_current_worker().cancelled_event.wait(timeout=GATE_TIMEOUT_S)
        try:
            result = real_simulate(spec, cancelled)
        except SimulationCancelled:
            events.append("simulation cancelled")
            raise
        finally:
            returned.set()
        events.append("simulation ended")
        return result

    monkeypatch.setattr(bubble_module, "simulate", watched)
    app = app_for(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        pane = await bubble_pane(pilot, app)
        await choose(pilot, pane.query_one("#field-schedule"), "1f1b")
        await type_into(pilot, pane.query_one("#field-stages", Input), "100")
        await type_into(pilot, pane.query_one("#field-micro_batches", Input), "10000")
        assert events == ["simulation started"]
        await pilot.press("ctrl+q")
    # The worker's thread may outlive the app's run by the moment it takes to stop.
    await asyncio.to_thread(returned.wait, GATE_TIMEOUT_S)
    assert events == ["simulation started", "simulation cancelled"]


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
    real_load = quiz_module.load_lesson

    def gated(path: Path | str) -> Any:
        if "reading started" not in gate.events:
            gate.events.append("reading started")
            gate.wait()
        return real_load(path)

    monkeypatch.setattr(quiz_module, "load_lesson", gated)
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
