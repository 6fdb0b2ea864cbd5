"""No key waits on a long computation: the largest inputs the forms accept run in workers.

Each test makes the long work wait until the test has seen a key handled, so the order of the
two events is checked, not a clock: were the work on the event loop, the key could not be
handled before it ends, and the work's gate would time out first.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import pytest
from textual.widgets import Input

import tui.widgets.bubble as bubble_module
from engine.pipeline import PipelineResult, PipelineSpec
from tests.test_app_flow import app_for, choose, result_text, type_into

SIZE = (80, 24)
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


async def test_bubble_at_p100_m10000_answers_keys_while_it_simulates(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """1F1B at p = 100, m = 10,000 (2 million ops): the closed form (p-1)/m = 99/10,000 =
    0.0099 (Narayanan et al. 2021 §2.2.1) is on screen at once, a key typed while the schedule
    is simulated is handled before the simulation ends, and the simulated figures follow."""
    gate = Gate()
    real_simulate = bubble_module.simulate

    def gated(spec: PipelineSpec) -> PipelineResult:
        if spec.micro_batches != 10_000:
            return real_simulate(spec)
        gate.events.append("simulation started")
        gate.wait()
        result = real_simulate(spec)
        gate.events.append("simulation ended")
        return result

    monkeypatch.setattr(bubble_module, "simulate", gated)
    app = app_for(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("f3")
        await pilot.pause()
        pane: Any = app.query_one("BubblePane")
        await pilot.pause()
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
