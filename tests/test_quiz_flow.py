"""Issue 7 through the app at 80x24, keys only: a whole quiz session with a wrong numeric answer,
an undo and a restart in the middle; then ``shardbook quiz`` and ``shardbook stats``.

The clock is fixed and the seed set, so the items, drill values and due dates are the same on
every run. Expected answers come from the session's question (the engines' values; their
correctness against the sources is tests/test_quiz.py's job).
"""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path
from typing import Any

import pytest
import yaml
from rich.console import Console
from textual.pilot import Pilot
from textual.widgets import Static

from engine.quiz import Question
from tui.app import ShardbookApp, make_app
from tui.cli import main
from tui.screens.help import HelpScreen
from tui.screens.quiz import QuizOptions, QuizScreen

SIZE = (80, 24)
NOW = dt.datetime(2026, 3, 1, 9, 0, tzinfo=dt.UTC)
SCALE = {"GB": 1e9, "ms": 1e-3, "fraction": 1.0, "": 1.0}


def shown(widget: Static) -> str:
    console = Console(width=120, record=True, file=open("/dev/null", "w"))  # noqa: SIM115
    console.print(widget.content)
    return console.export_text()


def quiz_app(progress_dir: Path, **options: Any) -> ShardbookApp:
    return make_app(
        progress_dir=progress_dir,
        autosave_delay=0.05,
        quiz=QuizOptions(open_at_start=True, clock=lambda: NOW, seed=11, **options),
    )


def screen_of(app: ShardbookApp) -> QuizScreen:
    assert isinstance(app.screen, QuizScreen)
    return app.screen


def current(app: ShardbookApp) -> Question:
    session = screen_of(app).session
    assert session is not None and session.current is not None
    return session.current


async def answer_right(pilot: Pilot[int], app: ShardbookApp) -> None:
    """Answer the current question correctly with keys only, and rate it (enter or 3)."""
    question = current(app)
    if question.answer_kind == "text":
        await pilot.press(*"参数、梯度与优化器状态", "enter")
        await pilot.pause()
        await pilot.press("3")
    elif question.answer_kind == "number":
        assert isinstance(question.expected, float)
        await pilot.press(*repr(question.expected / SCALE[question.unit]), "enter")
        await pilot.pause()
        assert "Right." in shown(app.screen.query_one("#quiz-feedback", Static))
        await pilot.press("enter")
    elif question.answer_kind == "true-false":
        await pilot.press("t" if question.expected else "f")
        await pilot.pause()
        await pilot.press("enter")
    else:
        assert isinstance(question.expected, int)
        await pilot.press("abcd"[question.expected])
        await pilot.pause()
        await pilot.press("enter")
    await pilot.pause()


def stored_quiz(progress_dir: Path) -> dict[str, Any]:
    data = yaml.safe_load((progress_dir / "S15.yaml").read_text(encoding="utf-8"))
    quiz: dict[str, Any] = data["quiz"]
    return quiz


async def test_whole_session_with_a_wrong_answer_an_undo_and_a_restart(tmp_path: Path) -> None:
    app = quiz_app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        screen = screen_of(app)
        assert screen.phase == "answer" and current(app).item.kind == "self-check"
        assert app.focused is screen.query_one("#quiz-answer")
        # Every kind until the first drill, answered right.
        while current(app).item.kind != "drill":
            await answer_right(pilot, app)
        drill = current(app)
        assert isinstance(drill.expected, float)
        wrong = repr(drill.expected / SCALE[drill.unit] * 1.5)
        await pilot.press(*wrong, "enter")
        await pilot.pause()
        feedback = shown(screen.query_one("#quiz-feedback", Static))
        assert "Not quite." in feedback and drill.expected_text() in feedback
        assert "Worked solution" in feedback
        # The answer is saved before any rating.
        assert stored_quiz(tmp_path)["answers"][drill.item.id]["correct"] is False
        await pilot.press("enter")  # accepts the suggested rating: Again
        await pilot.pause()
        log = stored_quiz(tmp_path)["log"]
        assert log[-1]["item"] == drill.item.id and log[-1]["rating"] == 1
        # Undo: out of the next answer box with tab, then u. The drill comes back, same values.
        await pilot.press("tab", "u")
        await pilot.pause()
        assert current(app).item == drill.item and current(app).params == drill.params
        assert stored_quiz(tmp_path)["log"] == log[:-1]
        await answer_right(pilot, app)
        await answer_right(pilot, app)
        rated_before = stored_quiz(tmp_path)
        assert [entry["rating"] for entry in rated_before["log"]][-2:] == [3, 3]
        # Restart in the middle: a typed, unsubmitted answer is not a rating.
        await pilot.press(*"half", "ctrl+q")
        await pilot.pause()
    reviewed = [entry["item"] for entry in rated_before["log"]]
    assert stored_quiz(tmp_path)["log"] == rated_before["log"]
    assert stored_quiz(tmp_path)["cards"] == rated_before["cards"]
    due = {item: card["due"] for item, card in rated_before["cards"].items()}
    assert all(value == (NOW + dt.timedelta(minutes=10)).isoformat() for value in due.values())

    app = quiz_app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        screen = screen_of(app)
        session = screen.session
        assert session is not None
        # The rated items are scheduled 10 minutes on; none is asked again now.
        asked = current(app).item.id
        assert asked not in reviewed and all(item.id not in reviewed for item in session.queue)
        stats = session.stats()[0]
        assert stats.reviewed == len(set(reviewed)) and stats.reviews == len(reviewed)
        # Undo after the restart takes back the last rating in the log.
        await pilot.press("tab", "u")
        await pilot.pause()
        assert current(app).item.id == reviewed[-1]
        await answer_right(pilot, app)
        await pilot.press("escape")
        await pilot.pause()
        assert not isinstance(app.screen, QuizScreen)
    final = stored_quiz(tmp_path)
    assert [entry["item"] for entry in final["log"]] == reviewed
    assert final["cards"] == rated_before["cards"]


async def test_due_only_shows_what_is_due_and_footer_keys_work(tmp_path: Path) -> None:
    app = quiz_app(tmp_path, due_only=True)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        screen = screen_of(app)
        assert screen.phase == "done"
        assert "Nothing more is due" in shown(screen.query_one("#quiz-prompt", Static))
        await pilot.press("enter")  # check again: still nothing
        await pilot.pause()
        assert screen.phase == "done"
        await pilot.press("f1")
        await pilot.pause()
        assert isinstance(app.screen, HelpScreen)
        await pilot.press("escape")
        await pilot.pause()
        # The main screen's keys wait while the quiz is open (its panes are not here).
        await pilot.press("f2", "f5", "f12")
        await pilot.pause()
        assert app.screen is screen
        await pilot.press("escape")
        await pilot.pause()
        await pilot.press("f12")
        await pilot.pause()
        assert isinstance(app.screen, QuizScreen)
        # The new screen has the same options: due only, nothing due.
        assert screen_of(app).phase == "done"


async def test_graded_kinds_take_their_keys(tmp_path: Path) -> None:
    app = make_app(
        progress_dir=tmp_path,
        autosave_delay=0.05,
        quiz=QuizOptions(lesson="S15", open_at_start=True, clock=lambda: NOW, seed=3),
    )
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        screen = screen_of(app)
        await pilot.press("enter")  # an empty self-check answer: a warning, no reveal
        await pilot.pause()
        assert screen.phase == "answer"
        await pilot.press(*"x", "ctrl+r")
        await pilot.pause()
        assert screen.phase == "feedback"
        assert "Reference key points" in shown(screen.query_one("#quiz-feedback", Static))
        await pilot.press("enter")  # no suggested rating for a self-check: still rating
        await pilot.pause()
        assert screen.phase == "feedback"
        await pilot.press("2")
        await pilot.pause()
        question = current(app)
        assert question.answer_kind == "true-false"
        await pilot.press("a", "1")  # not keys of a true/false item
        await pilot.pause()
        assert screen.phase == "answer"
        await pilot.press("f" if question.expected else "t")
        await pilot.pause()
        assert "Not quite." in shown(screen.query_one("#quiz-feedback", Static))
        await pilot.press("4")
        await pilot.pause()
        assert current(app).answer_kind == "choice"
        ratings = [entry["rating"] for entry in stored_quiz(tmp_path)["log"]]
        assert ratings == [2, 4]


# ---------------------------------------------------------------------------------- CLI


def test_cli_quiz_opens_the_app_on_the_quiz(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    opened: list[QuizOptions] = []

    def fake_run(self: ShardbookApp, *args: object, **kwargs: object) -> None:
        opened.append(self.quiz_options)

    monkeypatch.setattr(ShardbookApp, "run", fake_run)
    assert main(["quiz", "--lesson", "S15", "--due", "--progress-dir", str(tmp_path)]) == 0
    assert main(["quiz", "--progress-dir", str(tmp_path)]) == 0
    assert [(o.lesson, o.due_only, o.open_at_start) for o in opened] == [
        ("S15", True, True),
        (None, False, True),
    ]


def test_cli_quiz_unknown_lesson_is_one_line(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    assert main(["quiz", "--lesson", "S99", "--progress-dir", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--lesson" in err and "S99" in err
    with pytest.raises(SystemExit) as exited:
        main(["quiz", "--lesson"])  # a flag without its value
    assert exited.value.code == 2
    assert capsys.readouterr().err.count("\n") == 1


async def test_cli_stats_reports_the_session(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    assert main(["stats", "--json", "--progress-dir", str(tmp_path)]) == 0
    fresh = json.loads(capsys.readouterr().out)
    (row,) = fresh["lessons"]
    assert row["lesson"] == "S15" and row["reviewed"] == 0 and row["new"] == row["items"] == 29
    assert row["retention"] is None and fresh["errors"] == []

    app = quiz_app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        for _ in range(3):
            await answer_right(pilot, app)
        await pilot.press("escape", "ctrl+q")
        await pilot.pause()
    assert main(["stats", "--json", "--progress-dir", str(tmp_path)]) == 0
    (row,) = json.loads(capsys.readouterr().out)["lessons"]
    # Reviewed on 2026-03-01 and due 10 minutes later: due by now, retention below 1.
    assert (row["reviewed"], row["reviews"], row["due"], row["new"]) == (3, 3, 3, 26)
    assert 0 < row["retention"] < 1
    assert row["next_due"] == (NOW + dt.timedelta(minutes=10)).isoformat()
    assert main(["stats", "--progress-dir", str(tmp_path)]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].startswith("lesson\titems") and lines[1].startswith("S15\t29\t3\t3\t26\t3\t")
