"""The quiz through the app at 80x24, keys only: a whole session with a wrong numeric answer, an
undo and a restart in the middle; a multi-line answer; the lesson's answer offered; each rating's
interval from fsrs; the desired retention set; then ``shardbook quiz`` and ``shardbook stats``.

The clock is fixed and the seed set, so the items, drill values and due dates are the same on
every run. Expected answers come from the session's question (the engines' values; their
correctness against the sources is tests/test_quiz.py's job).
"""

from __future__ import annotations

import datetime as dt
import json
import os
import random
import re
import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from textual import events
from textual.pilot import Pilot
from textual.widgets import Static

from cli.main import main
from engine.lesson import Lesson
from engine.progress import ProgressStore
from engine.quiz import DRILL_TEMPLATES, Question, QuizState, ask, lesson_items
from tests.pilot_helpers import SIZE, Notified, goto_section, screen_lines, shown, wait_until
from tui import strings
from tui.app import ShardbookApp, make_app
from tui.options import QuizOptions
from tui.screens.help import HelpScreen
from tui.screens.quiz import QuizAnswer, QuizScreen
from tui.widgets.notes import SelfCheckBox
from tui.widgets.reader import BrokenText

NOW = dt.datetime(2026, 3, 1, 9, 0, tzinfo=dt.UTC)
SCALE = {"GB": 1e9, "ms": 1e-3, "fraction": 1.0, "": 1.0}


def quiz_app(progress_dir: Path, language: str | None = None, **options: Any) -> ShardbookApp:
    return make_app(
        progress_dir=progress_dir,
        autosave_delay=0.05,
        language=language,
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
    """Answer the current question correctly and rate it (enter or 3). A written answer is
    pasted (a terminal's bracketed paste); typing key by key is checked where it matters (the
    wrong answer, the two-line answer, the quiz keys)."""
    question = current(app)
    if question.answer_kind == "text":
        # A self-check answered before (in the quiz or the lesson) offers that answer.
        if not app.screen.query_one("#quiz-answer", QuizAnswer).text:
            await paste_answer(pilot, "参数、梯度与优化器状态")
        await pilot.press("ctrl+r")
        await pilot.pause()
        await pilot.press("3")
    elif question.answer_kind == "number":
        assert isinstance(question.expected, float)
        await paste_answer(pilot, repr(question.expected / SCALE[question.unit]))
        await pilot.press("ctrl+r")
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


async def paste_answer(pilot: Pilot[int], text: str) -> None:
    """Paste ``text`` into the answer box, which has the focus."""
    assert isinstance(pilot.app.focused, QuizAnswer)
    pilot.app.post_message(events.Paste(text))
    await pilot.pause()
    assert pilot.app.focused.text == text


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
        for _ in range(8):
            if current(app).item.kind == "drill":
                break
            await answer_right(pilot, app)
        drill = current(app)
        assert isinstance(drill.expected, float)
        wrong = repr(drill.expected / SCALE[drill.unit] * 1.5)
        await pilot.press(*wrong, "ctrl+r")
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
        # Undo: out of the next answer box with escape, then u. The drill comes back, same values.
        await pilot.press("escape", "u")
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
        await pilot.press("escape", "u")
        await pilot.pause()
        assert current(app).item.id == reviewed[-1]
        await answer_right(pilot, app)
        if screen.typing:
            await pilot.press("escape")  # out of the answer box first
            await pilot.pause()
            assert app.screen is screen and not screen.typing
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


async def test_tab_in_the_answer_stays_there_and_says_how_to_leave(tmp_path: Path) -> None:
    # A Tab that moved the focus in silence turned the next letter into a quiz key: `u` undid
    # the last rating. It stays in the box, is not typed, and a hint names escape.
    notified = Notified()
    app = quiz_app(tmp_path, lesson="S15")
    async with app.run_test(size=SIZE, notifications=True, message_hook=notified.hook) as pilot:
        await pilot.pause()
        for _ in range(8):  # ratings to undo, up to the first drill (a number answer)
            if current(app).item.kind == "drill":
                break
            await answer_right(pilot, app)
        rated = stored_quiz(tmp_path)["log"]
        box = screen_of(app).query_one("#quiz-answer", QuizAnswer)
        assert app.focused is box
        await pilot.press(*"15", "tab", "u", "shift+tab", "s")
        await pilot.pause()
        assert app.focused is box and box.text == "15us"
        assert stored_quiz(tmp_path)["log"] == rated, "no rating undone"
        assert any("escape" in text for text in notified.messages)


async def test_graded_kinds_take_their_keys(tmp_path: Path) -> None:
    app = make_app(
        progress_dir=tmp_path,
        autosave_delay=0.05,
        quiz=QuizOptions(lesson="S15", open_at_start=True, clock=lambda: NOW, seed=3),
    )
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        screen = screen_of(app)
        await pilot.press("ctrl+r")  # an empty self-check answer: a warning, no reveal
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
        await pilot.press("ctrl+q")
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


# ---------------------------------------------------------------------------------- answering


async def test_a_two_line_answer_is_written_and_the_question_stays_with_the_solution(
    tmp_path: Path,
) -> None:
    app = quiz_app(tmp_path, lesson="S15")
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        screen = screen_of(app)
        question = current(app)
        assert question.answer_kind == "text" and screen.typing
        # Enter starts a new line; u and 1 are letters of the answer, not quiz keys.
        await pilot.press(*"u1 params", "enter", *"grads")
        await pilot.pause()
        assert screen.phase == "answer" and stored_log(tmp_path) == []
        assert screen.query_one("#quiz-answer", QuizAnswer).text == "u1 params\ngrads"
        await pilot.press("ctrl+r")
        await pilot.pause()
        assert screen.phase == "feedback"
        saved = stored_quiz(tmp_path)["answers"][question.item.id]["answer"]
        assert saved == "u1 params\ngrads"
        # At 80x24 the question is on screen, whole, above the key points.
        prompt = screen.query_one("#quiz-prompt", Static)
        region = screen.query_one("#quiz-question").region
        assert question.prompt in shown(prompt)
        assert region.y >= 1 and prompt.region.bottom <= region.bottom <= SIZE[1]
        feedback = screen.query_one("#quiz-feedback", Static)
        assert "Reference key points" in shown(feedback)
        assert feedback.region.height > 0 and feedback.region.y > region.bottom - 1


async def test_a_number_answered_after_a_new_line_is_quoted_on_the_verdicts_line(
    tmp_path: Path,
) -> None:
    """Enter first (an empty line), then the figure: graded right, and the verdict showed
    "yours:" on its line and the figure on the next. The answer is quoted as graded, without
    the line breaks around it; one inside it is written \\n."""
    app = quiz_app(tmp_path, lesson="S15")
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        while current(app).answer_kind != "number":
            await answer_right(pilot, app)
        question = current(app)
        assert isinstance(question.expected, float)
        figure = repr(question.expected / SCALE[question.unit])
        await paste_answer(pilot, f"\n{figure}\n")
        await pilot.press("ctrl+r")
        await pilot.pause()
        lines = shown(screen_of(app).query_one("#quiz-feedback", Static), 200).splitlines()
        verdict = next(line for line in lines if "yours:" in line)
        assert verdict.startswith("Right.") and f"yours: {figure}" in verdict, lines


async def test_the_empty_answer_box_shows_its_whole_placeholder_at_40_columns(
    tmp_path: Path,
) -> None:
    """At 40x12 the box was two lines tall and its placeholder three: "escape leaves the box",
    the one way out of it, was not on screen."""
    app = quiz_app(tmp_path, lesson="S15")
    async with app.run_test(size=(40, 12)) as pilot:
        await pilot.pause()
        assert screen_of(app).typing
        text = " ".join(" ".join(line.strip(" ▊▎") for line in screen_lines(app)).split())
        assert "enter starts a new line, ctrl+r submits, escape leaves the box" in text, text


def review_before(progress_dir: Path, lesson: Lesson, kinds: tuple[str, ...]) -> None:
    """Rate every item of ``kinds`` Easy at NOW through the engine, so a session opened at NOW
    asks only the others (an Easy card is next due days later)."""
    store = ProgressStore(progress_dir)
    progress = store.load("S15").progress
    state = QuizState(progress)
    rng = random.Random(11)
    for item in lesson_items(lesson):
        if item.kind in kinds:
            state.review(ask(item, lesson, rng), 4, NOW)
    store.save(progress)


async def test_the_question_stays_visible_after_every_drill_solution(
    tmp_path: Path, lesson: Lesson
) -> None:
    # The self-checks and misconceptions reviewed already: the session asks the matching items
    # and the drills, alternately, and every drill comes up (pairs 5 questions apart).
    review_before(tmp_path, lesson, ("self-check", "misconception"))
    app = quiz_app(tmp_path, lesson="S15")
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        screen = screen_of(app)
        seen = 0
        for _ in range(16):
            if screen.phase != "answer":
                break
            question = current(app)
            if question.answer_kind == "number":
                assert isinstance(question.expected, float)
                await paste_answer(pilot, repr(question.expected / SCALE[question.unit]))
                await pilot.press("ctrl+r")
                await pilot.pause()
                question_box = screen.query_one("#quiz-question")
                # The whole question fits its region and nothing scrolled it away.
                assert question_box.scroll_y == 0
                assert question_box.virtual_size.height <= question_box.size.height
                prompt = screen.query_one("#quiz-prompt", Static)
                assert " ".join(shown(prompt).split()) == " ".join(question.prompt.split())
                assert question_box.region.contains_region(prompt.region)
                assert question_box.region.y > 0 and question_box.region.bottom < SIZE[1]
                assert screen.query_one("#quiz-feedback").region.height > 0
                seen += 1
                await pilot.press("enter")
            else:
                await answer_right(pilot, app)
            await pilot.pause()
        assert seen == len(DRILL_TEMPLATES)  # every numeric drill of the lesson came up


async def test_a_true_false_question_shows_only_footer_keys_that_fit_whole(
    tmp_path: Path, lesson: Lesson
) -> None:
    """At 80x24 the true/false keys' group (`t f True/False`) was measured without its label,
    so the row ran into the palette key and cut the last key (`f1▏^p palette`): every key shown
    ends before the palette key, and help and quit are among them."""
    review_before(tmp_path, lesson, ("self-check",))
    app = quiz_app(tmp_path, lesson="S15")
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.pause()
        assert current(app).answer_kind == "true-false"

        def fitted() -> bool:
            palette = app.screen.query_one("FooterKey.-command-palette")
            shown = [
                widget
                for widget in app.screen.query("FooterKey, FooterLabel")
                if widget.display and widget is not palette and widget.region.width
            ]
            footer = screen_lines(app)[-1]
            return (
                "f1 Help" in footer
                and "^q Quit" in footer
                and "True/False" in footer
                and all(widget.region.right <= palette.region.x for widget in shown)
            )

        await wait_until(pilot, fitted, timeout=5)


@pytest.mark.parametrize(
    ("language", "submit", "judge", "instruction", "good"),
    [
        ("en", "^r Submit", "t f True/False", "Press t (true) or f (false).", "3 Good 10 min"),
        ("zh", "^r 提交", "t f 判断", "按 t（对）或 f（错）。", "3 良好 10 分钟"),
    ],
    ids=["en", "zh"],
)
async def test_at_40x12_the_footer_keeps_the_answering_keys_and_the_instruction_is_whole(
    tmp_path: Path,
    lesson: Lesson,
    language: str,
    submit: str,
    judge: str,
    instruction: str,
    good: str,
) -> None:
    """At 40x12 a self-check's ``^r Submit`` and a true/false question's ``t f True/False``
    were dropped from the footer while ``^p palette`` stayed, and the instruction under the
    statement was cut after ``Press t``, as were a matching question's choices after ``a)``:
    the keys that answer come first, and the instruction and the choices are on screen whole,
    wrapped."""
    review_before(tmp_path, lesson, ("self-check",))
    app = quiz_app(tmp_path, language, lesson="S15")
    async with app.run_test(size=(40, 12)) as pilot:
        await pilot.pause()
        assert current(app).answer_kind == "true-false"
        await wait_until(pilot, lambda: judge in screen_lines(app)[-1], timeout=5)
        on_screen = "".join(line.strip() for line in screen_lines(app)[:-1]).replace(" ", "")
        assert instruction.replace(" ", "") in on_screen
        # The statement too, to its end (it was cut at the question region's half screen).
        assert current(app).prompt.replace(" ", "")[-8:] in on_screen
        # Answered: the rating keys wrap whole ("3" was left at a line's end, "Good 10 min" on
        # the next), and no line of them starts with the "·" between two.
        await pilot.press("t")
        ratings = app.screen.query_one("#quiz-ratings")
        await wait_until(pilot, lambda: ratings.region.height >= 2)
        lines = [
            line.strip() for line in screen_lines(app)[ratings.region.y : ratings.region.bottom]
        ]
        assert good in lines[0] + "\n" + lines[1] and not any(
            line.startswith("·") for line in lines
        ), lines
        assert all(line.split("  ·  ")[-1][:1].isdigit() for line in lines), lines
    review_before(tmp_path, lesson, ("misconception",))
    app = quiz_app(tmp_path, language, lesson="S15")
    async with app.run_test(size=(40, 12)) as pilot:
        await pilot.pause()
        # A matching question: its four choices were cut off the question's region (only
        # "a)" showed); they are in the region that scrolls, the one with the focus.
        assert current(app).answer_kind == "choice"
        assert app.focused is app.screen.query_one("#quiz-body")
        await wait_until(pilot, lambda: "a b c d" in screen_lines(app)[-1], timeout=5)
        assert any(line.strip().startswith("a)") for line in screen_lines(app))
        await pilot.press("end")  # the focused region scrolls to the last choice
        await wait_until(
            pilot, lambda: any(line.strip().startswith("d)") for line in screen_lines(app))
        )
    review_before(tmp_path, lesson, ("matching",))
    app = quiz_app(tmp_path, language, lesson="S15")
    async with app.run_test(size=(40, 12)) as pilot:
        await pilot.pause()
        assert screen_of(app).typing
        await wait_until(pilot, lambda: submit in screen_lines(app)[-1], timeout=5)


async def test_quiz_keys_never_type_into_the_answer_and_undo_is_reachable(tmp_path: Path) -> None:
    app = quiz_app(tmp_path, lesson="S15")
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        screen = screen_of(app)
        await answer_right(pilot, app)  # a self-check, rated 3
        await answer_right(pilot, app)  # a misconception, rated with enter
        rated = current(app)
        assert rated.answer_kind == "choice"
        await pilot.press("abcd"[rated.expected])  # type: ignore[index]
        await pilot.pause()
        assert screen.phase == "feedback" and not screen.typing
        # The answer box cannot take the focus while the rating keys are live.
        await pilot.press("tab", "tab", "2")
        await pilot.pause()
        assert [entry["rating"] for entry in stored_log(tmp_path)] == [3, 3, 2]
        text_question = current(app)
        for _ in range(5):
            if current(app).answer_kind in ("text", "number"):
                break
            await answer_right(pilot, app)
        text_question = current(app)
        assert screen.typing
        ratings = len(stored_log(tmp_path))
        await pilot.press("u", "3")
        await pilot.pause()
        assert len(stored_log(tmp_path)) == ratings  # typed, not undone or rated
        assert screen.query_one("#quiz-answer", QuizAnswer).text.endswith("u3")
        assert "u" not in screen.active_bindings  # not in the footer while typing
        await pilot.press("escape")
        await pilot.pause()
        assert not screen.typing and isinstance(app.screen, QuizScreen)
        assert screen.active_bindings["u"].enabled
        await pilot.press("u")
        await pilot.pause()
        assert len(stored_log(tmp_path)) == ratings - 1
        assert current(app).item != text_question.item


async def test_a_self_check_offers_the_lesson_answer_and_is_rated_without_retyping(
    tmp_path: Path,
) -> None:
    written = "权重之外还有梯度、FP32 master 与两份 moment\n共 16 B/参数"
    (tmp_path / "S15.yaml").write_text(
        yaml.safe_dump(
            {
                "schema_version": 1,
                "lesson": "S15",
                "answers": {"self-check-adam-memory": written},
            },
            allow_unicode=True,
        ),
        encoding="utf-8",
    )
    app = quiz_app(tmp_path, lesson="S15")
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        screen = screen_of(app)
        assert current(app).item.id == "self-check:self-check-adam-memory"
        assert screen.query_one("#quiz-answer", QuizAnswer).text == written
        assert screen.query_one("#quiz-from-lesson").display
        # What it says is what happens: an edit is this review's, the lesson keeps its own.
        said = shown(screen.query_one("#quiz-from-lesson", Static))
        assert "for this review" in said and "the lesson keeps its own" in said
        await pilot.press("end", "!")
        await pilot.press("ctrl+r")
        await pilot.pause()
        await pilot.press("4")
        await pilot.pause()
        entry = stored_log(tmp_path)[-1]
        assert (entry["item"], entry["rating"], entry["answer"]) == (
            "self-check:self-check-adam-memory",
            4,
            written + "!",
        )
        # The lesson's own answer is untouched.
        data = yaml.safe_load((tmp_path / "S15.yaml").read_text(encoding="utf-8"))
        assert data["answers"]["self-check-adam-memory"] == written
        # The next question starts empty.
        assert screen.query_one("#quiz-answer", QuizAnswer).text == ""


async def test_a_self_check_answered_in_the_quiz_shows_in_the_lesson(tmp_path: Path) -> None:
    # Written once, in the quiz: the lesson's empty answer box shows it on return, the file
    # holds it as the lesson's answer, and the plan counts the question as answered.
    app = make_app(
        progress_dir=tmp_path,
        autosave_delay=0.05,
        quiz=QuizOptions(lesson="S15", clock=lambda: NOW, seed=11),
    )
    written = "参数 2 B、梯度 2 B、Adam 12 B [bold]x"
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await goto_section(pilot, app, "self-check")
        assert all(box.text_area.text == "" for box in app.screen.query(SelfCheckBox))
        await pilot.press("f12")
        await pilot.pause()
        first = current(app).item
        assert first.kind == "self-check"
        await paste_answer(pilot, written)
        await pilot.press("ctrl+r")
        await pilot.pause()
        await pilot.press("3", "escape")
        await pilot.pause()
        boxes = {box.item.id: box for box in app.screen.query(SelfCheckBox)}
        assert boxes[first.ref].text_area.text == written
        assert [box.text_area.text for id_, box in boxes.items() if id_ != first.ref] == [""] * (
            len(boxes) - 1
        )
        await pilot.press("ctrl+q")
        await wait_until(pilot, lambda: app.return_code is not None)
    assert ProgressStore(tmp_path).load("S15").progress.answers == {first.ref: written}


async def test_a_self_check_revealed_in_the_lesson_is_not_asked_today_and_counts_as_reviewed(
    tmp_path: Path,
) -> None:
    """A self-check answered in the lesson with its key points shown is not asked in the quiz
    today; the statistics' "reviewed N/M" counts it: with one item rated in the quiz, 2 of the
    lesson's items, each part named."""
    app = make_app(progress_dir=tmp_path, autosave_delay=0.05)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await goto_section(pilot, app, "self-check")
        app.screen.query(SelfCheckBox).first().text_area.focus()
        await pilot.press(*"weights", "ctrl+r")
        await pilot.pause()
        await pilot.press("f12")
        await pilot.pause()
        screen = screen_of(app)
        session = screen.session
        assert session is not None
        asked_later = [item.id for item in session.queue]
        first = "self-check:self-check-adam-memory"
        assert current(app).item.id != first and first not in asked_later
        assert [item.id for item in session.answered_today] == [first]
        items = len(session.items["S15"])
        await answer_right(pilot, app)
        if screen.typing:
            await pilot.press("escape")
        await pilot.press("s")
        await pilot.pause()
        from tui.screens.quiz_dialogs import ReviewStatsScreen

        assert isinstance(app.screen, ReviewStatsScreen)
        row = " ".join(shown(app.screen.query(Static)[1]).split())
        assert (
            f"S15: reviewed 2/{items} (1 rated in the quiz, 1 self-check answered in the lesson)"
            in row
        ), row
        await pilot.press("escape")
        await pilot.press("ctrl+q")
        await pilot.pause()


# ---------------------------------------------------------------------------------- scheduling


def fsrs_intervals(retention: float, card: object, now: dt.datetime) -> dict[int, dt.timedelta]:
    """What py-fsrs 6 itself gives each rating (fuzz off, as the quiz schedules)."""
    from fsrs import Card, Rating, Scheduler

    scheduler = Scheduler(desired_retention=retention, enable_fuzzing=False)
    assert isinstance(card, Card)
    return {r: scheduler.review_card(card, Rating(r), now)[0].due - now for r in range(1, 5)}


async def test_rating_keys_show_fsrs_intervals_and_retention_is_a_setting(tmp_path: Path) -> None:
    from fsrs import Card

    from engine.timefmt import format_interval

    app = quiz_app(tmp_path, lesson="S15")
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        screen = screen_of(app)
        await pilot.press(*"x", "ctrl+r")
        await pilot.pause()
        bar = shown(screen.query_one("#quiz-ratings", Static))
        expected = fsrs_intervals(0.9, Card(due=NOW), NOW)
        for rating, label in ((1, "Again"), (2, "Hard"), (3, "Good"), (4, "Easy")):
            assert f"{rating} {label} {format_interval(expected[rating])}" in bar
        assert expected[4] == dt.timedelta(days=8)  # Easy: stability w3 = 8.3 days at 90 %
        # r: the desired retention, saved in the settings file.
        await pilot.press("r")
        await pilot.pause()
        await pilot.press(*("backspace",) * 4, *"0.5", "enter")
        await pilot.pause()
        assert "0.70" in app.screen.query_one("#retention-error", BrokenText).text
        await pilot.press(*("backspace",) * 3, *"80%", "enter")
        await pilot.pause()
        assert app.screen is screen
        settings = yaml.safe_load((tmp_path / "settings.yaml").read_text(encoding="utf-8"))
        assert settings["review"]["desired_retention"] == 0.8
        at_80 = fsrs_intervals(0.8, Card(due=NOW), NOW)
        assert at_80[4] > expected[4]
        assert f"4 Easy {format_interval(at_80[4])}" in shown(
            screen.query_one("#quiz-ratings", Static)
        )
        await pilot.press("4")
        await pilot.pause()
        entry = stored_log(tmp_path)[-1]
        card = stored_quiz(tmp_path)["cards"][entry["item"]]
        assert entry["retention"] == 0.8
        assert dt.datetime.fromisoformat(card["due"]) == NOW + at_80[4]
    # A new window reads the setting.
    app = quiz_app(tmp_path, lesson="S15")
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        session = screen_of(app).session
        assert session is not None and session.desired_retention == 0.8
        assert "desired retention 80%" in shown(app.screen.query_one("#quiz-status", Static))


async def test_a_read_only_window_does_not_write_the_setting(tmp_path: Path) -> None:
    holder = ProgressStore(tmp_path)  # another window holds the progress folder
    assert holder.lock()
    second = quiz_app(tmp_path, lesson="S15")
    try:
        async with second.run_test(size=SIZE) as pilot:
            # The lock is tried once the first frame has settled (nothing writes before then).
            await wait_until(pilot, lambda: second.store.read_only)
            await pilot.press("escape", "r")
            await pilot.pause()
            await pilot.press(*("backspace",) * 4, *"0.85", "enter")
            await pilot.pause()
            session = screen_of(second).session
            assert session is not None and session.desired_retention == 0.85
            assert not (tmp_path / "settings.yaml").exists()
    finally:
        holder.unlock()


async def test_palette_offers_the_quiz_commands(tmp_path: Path) -> None:
    from tui.screens.quiz import QuizCommands
    from tui.screens.quiz_dialogs import RetentionScreen

    app = quiz_app(tmp_path, lesson="S15")
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        screen = screen_of(app)
        await pilot.press("escape")  # out of the answer box
        await pilot.pause()
        provider = QuizCommands(screen)
        titles = [hit.text async for hit in provider.discover()]
        assert any("desired retention" in str(title) for title in titles)
        screen.run_quiz_action("retention")
        await pilot.pause()
        assert isinstance(app.screen, RetentionScreen)


@pytest.mark.parametrize(
    ("typed", "message"),
    [
        ("", "Nothing typed: type a number from 0.70 to 0.97"),
        ("  ", "Nothing typed: type a number from 0.70 to 0.97"),
        ("abc", "'abc' is not a number: type one from 0.70 to 0.97"),
        ("0,85", "'0,85' is not a number: type one from 0.70 to 0.97"),
        ("nan", "'nan' is not a number"),
        ("0.5", "0.5 is outside 0.70-0.97: type a number in that range"),
        ("150%", "150% is outside 0.70-0.97"),
        ("-0.8", "-0.8 is outside 0.70-0.97"),
        ("0", "0 is outside 0.70-0.97"),
        # Past a float's range: called too large as every other field calls it, with the range.
        ("1e400", "'1e400' is too large (overflows a float): type a number from 0.70 to 0.97"),
        ("1e400%", "'1e400%' is too large (overflows a float): type a number from 0.70 to 0.97"),
        ("inf", "'inf' is not a number"),
    ],
)
def test_a_bad_retention_is_told_what_is_wrong(typed: str, message: str) -> None:
    """The dialog said the same line for every bad value: it names what is wrong (nothing
    typed, not a number, outside the range FSRS is set for, the range given)."""
    from engine.errors import InputError
    from tui.screens.quiz_dialogs import parse_retention

    with pytest.raises(InputError) as raised:
        parse_retention(typed)
    assert raised.value.message.startswith(message), raised.value.message
    assert parse_retention(" 85% ") == 0.85 and parse_retention("0.97") == 0.97


async def test_the_retention_dialog_says_what_is_wrong_in_chinese(tmp_path: Path) -> None:
    from tui.screens.quiz_dialogs import RetentionScreen

    app = make_app(progress_dir=tmp_path, language="zh")
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        app.push_screen(RetentionScreen(0.9))
        await pilot.pause()
        # The help broken by the lesson's rules: each English word on one line (Rich's wrap
        # drew "En" at a line's end and "ter 保存" under it).
        help_text = app.screen.query_one("#retention-help", BrokenText)
        assert "Enter" in help_text.text
        for word in re.findall(r"[A-Za-z]+", help_text.text):
            assert any(word in line for line in help_text.lines), (word, help_text.lines)
        error = app.screen.query_one("#retention-error", BrokenText)
        for typed, said in (
            ("", "没有输入：请输入 0.70 到 0.97 之间的数"),
            # In the interface language's quotes, as every message quoting the learner's input.
            ("x", "“x”不是数字"),
            ("99%", "99% 超出 0.70-0.97：请输入这个范围内的数"),
        ):
            await pilot.press("end", "ctrl+u", *typed, "enter")
            await pilot.pause()
            assert error.text.startswith(said), error.text
        assert isinstance(app.screen, RetentionScreen)


@pytest.mark.parametrize("language", ["en", "zh"])
async def test_at_40x12_the_retention_dialog_fits_and_shows_what_is_wrong(
    tmp_path: Path, language: str
) -> None:
    """The dialog was 64 columns wide (its help cut at the 40th), and the message under the
    field came below the fold: a refused value seemed to do nothing."""
    from tui.screens.quiz_dialogs import RetentionScreen

    app = make_app(progress_dir=tmp_path, language=language)
    async with app.run_test(size=(40, 12)) as pilot:
        await pilot.pause()
        app.push_screen(RetentionScreen(0.9))
        await pilot.pause()
        help_text = app.screen.query_one("#retention-help", BrokenText)
        assert help_text.size.width <= 40 - 6  # inside the border and the padding
        await pilot.press("end", "ctrl+u", *"xyz", "enter")
        error = app.screen.query_one("#retention-error", BrokenText)
        await wait_until(pilot, lambda: bool(error.lines))
        first = error.lines[0].strip()
        assert first.startswith("'xyz'" if language == "en" else "“xyz”"), first

        def on_screen() -> bool:
            return any(first in line for line in screen_lines(app))

        await wait_until(pilot, on_screen)


def stored_log(progress_dir: Path) -> list[dict[str, Any]]:
    path = progress_dir / "S15.yaml"
    if not path.exists():
        return []
    log: list[dict[str, Any]] = stored_quiz(progress_dir).get("log", [])
    return log


# ---------------------------------------------------------------------------------- statistics


async def test_after_three_again_ratings_stats_shows_a_recall_that_says_so(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    app = quiz_app(tmp_path, lesson="S15")
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        screen = screen_of(app)
        for _ in range(3):
            question = current(app)
            if question.answer_kind == "text":
                await pilot.press("x", "ctrl+r")
            elif question.answer_kind == "true-false":
                await pilot.press("f" if question.expected else "t")
            else:
                wrong = (int(question.expected) + 1) % 4  # type: ignore[arg-type]
                await pilot.press("abcd"[wrong])
            await pilot.pause()
            await pilot.press("1")
            await pilot.pause()
        # s: the statistics with their plots, in the app.
        if screen.typing:
            await pilot.press("escape")
        await pilot.press("s")
        await pilot.pause()
        from tui.screens.quiz_dialogs import ReviewStatsScreen
        from tui.widgets.review_plots import ReviewPlots

        assert isinstance(app.screen, ReviewStatsScreen)
        assert "recall 0% (0/3 Good/Easy)" in shown(app.screen.query(Static)[1])
        assert app.screen.query(ReviewPlots)
        await pilot.press("escape")
        await pilot.press("ctrl+q")
        await pilot.pause()
    assert [entry["rating"] for entry in stored_log(tmp_path)] == [1, 1, 1]
    capsys.readouterr()
    assert main(["stats", "--progress-dir", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    row = out.splitlines()[1].split("\t")
    assert row[0] == "S15" and row[6] == "0% (0/3 Good/Easy)"
    assert main(["stats", "--json", "--progress-dir", str(tmp_path)]) == 0
    (stats,) = json.loads(capsys.readouterr().out)["lessons"]
    assert (stats["reviews"], stats["recalled"], stats["recall"]) == (3, 0, 0.0)
    assert 0 < stats["retrievability"] <= 1 and stats["retention"] == stats["retrievability"]
    forecast = stats["due_forecast"]
    assert len(forecast) == 30 and set(forecast[0]) == {"date", "count"}
    assert sum(day["count"] for day in forecast) == 3


async def test_the_done_screen_draws_forecast_and_recall(tmp_path: Path) -> None:
    from tui.widgets.review_plots import ReviewPlots

    app = quiz_app(tmp_path, due_only=True)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await pilot.pause()
        screen = screen_of(app)
        assert screen.phase == "done"
        plots = screen.query(ReviewPlots)
        assert plots and plots.first().display
        assert "recall -" in shown(screen.query_one("#quiz-prompt", Static))


def test_plots_load_only_when_shown() -> None:
    code = (
        "import sys\nimport tui.app, tui.screens.quiz\n"
        "print(sorted(m for m in ('plotext', 'textual_plotext') if m in sys.modules))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.strip().splitlines()[-1] == "[]"


async def test_a_refused_drill_answer_names_the_answer_box_with_its_unit(
    tmp_path: Path, notified: Notified
) -> None:
    app = quiz_app(tmp_path)
    async with app.run_test(size=SIZE, notifications=True, message_hook=notified.hook) as pilot:
        await pilot.pause()
        for _ in range(8):
            if current(app).item.kind == "drill":
                break
            await answer_right(pilot, app)
        drill = current(app)
        unit = {"GB": " (GB)", "ms": " (ms)", "fraction": " (fraction or %)", "": ""}[drill.unit]
        field = f"Your answer{unit}"
        answer = screen_of(app).query_one("#quiz-answer", QuizAnswer)
        # The box says its name where the message will use it.
        assert str(answer.placeholder).startswith(f"{field}: ")
        for typed, why in (("", "is empty"), ("abc", "'abc'"), ("-3", "must not be negative")):
            answer.load_text(typed)
            await pilot.press("ctrl+r")
            await pilot.pause()
            message = notified.messages[-1]
            assert message.startswith(f"{field}: ") and why in message, message
        assert screen_of(app).phase == "answer"
        assert app.screen.query("Toast")
        # Answered then: the last refusal's message is not left beside "Right.".
        answer.load_text(repr(drill.expected / SCALE[drill.unit]))
        await pilot.press("ctrl+r")
        await pilot.pause()
        assert "Right." in shown(app.screen.query_one("#quiz-feedback", Static))
        await pilot.pause()
        assert not app.screen.query("Toast")


# ---------------------------------------------------------------------------------- drafts


def stored_drafts(progress_dir: Path) -> dict[str, Any]:
    data = yaml.safe_load((progress_dir / "S15.yaml").read_text(encoding="utf-8"))
    drafts: dict[str, Any] = data["drafts"]
    return drafts


def f12_app(progress_dir: Path) -> ShardbookApp:
    """The app as the learner starts it (F12 opens the quiz); no autosave before a minute, so
    only quitting or a signal can save what is typed."""
    return make_app(
        progress_dir=progress_dir,
        autosave_delay=60,
        quiz=QuizOptions(clock=lambda: NOW, seed=11),
    )


async def test_an_answer_typed_and_not_submitted_survives_ctrl_q_and_comes_back(
    tmp_path: Path,
) -> None:
    typed = "quiz answer before ctrl+q"
    app = f12_app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("f12")
        await pilot.pause()
        item = current(app).item
        assert item.kind == "self-check" and app.focused is screen_of(app).query_one(QuizAnswer)
        await pilot.press(*typed)
        await pilot.press("ctrl+q")
        await pilot.pause()
    assert stored_drafts(tmp_path) == {item.id: {"text": typed, "params": {}}}
    app = f12_app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("f12")
        await pilot.pause()
        screen = screen_of(app)
        assert current(app).item == item
        assert screen.query_one(QuizAnswer).text == typed
        assert "not submitted" in shown(screen.query_one("#quiz-from-lesson", Static))
        # Submitting files the answer in the log and drops the draft.
        await pilot.press("ctrl+r")
        await pilot.pause()
        assert stored_drafts(tmp_path) == {}
        assert stored_quiz(tmp_path)["answers"][item.id]["answer"] == typed


async def test_a_drill_typed_and_left_comes_back_first_with_the_same_values(
    tmp_path: Path,
) -> None:
    app = quiz_app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        for _ in range(8):
            if current(app).item.kind == "drill":
                break
            await answer_right(pilot, app)
        drill = current(app)
        await pilot.press("1", "2", ".", "5")
        # The autosave, 0.05 s after the last key.
        expected = {"text": "12.5", "params": drill.params}
        await wait_until(pilot, lambda: stored_drafts(tmp_path).get(drill.item.id) == expected)
        # Typed back to the empty box it started as: no draft left.
        await pilot.press("backspace", "backspace", "backspace", "backspace")
        await wait_until(pilot, lambda: stored_drafts(tmp_path) == {})
        await pilot.press("4", "2")
        await pilot.press("escape", "escape")  # out of the box, out of the quiz
        await pilot.pause()
    app = quiz_app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        again = current(app)
        assert (again.item, again.prompt, again.params) == (drill.item, drill.prompt, drill.params)
        assert screen_of(app).query_one(QuizAnswer).text == "42"


@pytest.mark.parametrize("signum", [signal.SIGHUP, signal.SIGTERM])
async def test_an_answer_typed_in_the_quiz_is_saved_when_the_terminal_closes(
    tmp_path: Path, signum: int
) -> None:
    app = f12_app(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("f12")
        await pilot.pause()
        item = current(app).item
        await pilot.press(*"typed, then closed")
        os.kill(os.getpid(), signum)
        await wait_until(pilot, lambda: app.return_code is not None)
    assert app.return_code == 128 + signum
    assert stored_drafts(tmp_path)[item.id]["text"] == "typed, then closed"


async def test_the_lessons_hint_does_not_follow_into_the_quiz(tmp_path: Path) -> None:
    """ctrl+n says which step it went to; F12 right after: the quiz's first question is not
    covered by that message (a warning or an error would stay: they are still true)."""
    app = f12_app(tmp_path)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await pilot.press("ctrl+n")
        await wait_until(pilot, lambda: bool(app.screen.query("Toast")))
        await pilot.press("f12")
        await wait_until(pilot, lambda: isinstance(app.screen, QuizScreen))
        await pilot.pause()
        assert not app.screen.query("Toast")


async def test_at_40x12_a_rating_is_said_above_the_footer_over_nothing(
    tmp_path: Path, lesson: Lesson
) -> None:
    """After a rating, its message covered the next question's first lines for 4 seconds at
    40x12 (a message bar under the status line). It is said in the bar above the footer, which
    holds the rating keys once an answer is graded: the next question shows from its first
    line, and the bar gives its rows back at the first key typed into the answer."""
    review_before(tmp_path, lesson, ("self-check", "misconception", "matching"))
    app = quiz_app(tmp_path, lesson="S15")
    async with app.run_test(size=(40, 12), notifications=True) as pilot:
        await pilot.pause()
        screen = screen_of(app)
        ratings = screen.query_one("#quiz-ratings", Static)
        assert current(app).item.kind == "drill"
        await pilot.press("5", "ctrl+r")
        await wait_until(pilot, lambda: screen.phase != "answer")
        await pilot.press("3")
        await wait_until(pilot, lambda: screen.phase == "answer" and ratings.display)
        await pilot.pause()
        assert not list(app.screen.query("Toast"))
        lines = screen_lines(app)
        bar = " ".join(line.strip() for line in lines[ratings.region.y : ratings.region.bottom])
        assert bar.startswith("Rated Good; next review") and "(in 10 minutes)" in bar, bar
        prompt = screen.query_one("#quiz-prompt", Static)
        first_words = current(app).prompt.split()[:3]
        assert lines[prompt.region.y].split()[:3] == first_words, lines
        await pilot.press("1")
        await wait_until(pilot, lambda: not ratings.display)


async def test_at_40x12_a_drills_verdict_is_the_first_line_under_the_question(
    tmp_path: Path, lesson: Lesson
) -> None:
    """A graded number answer: the verdict (which quotes the answer) is the body's first line,
    the answer box gone. Scrolled into view under the box a frame after the body grew, it stayed
    below the box in a terminal at 40x12 when the answer had taken several lines before."""
    review_before(tmp_path, lesson, ("self-check", "misconception", "matching"))
    app = quiz_app(tmp_path, lesson="S15")
    async with app.run_test(size=(40, 12)) as pilot:
        await pilot.pause()
        screen = screen_of(app)
        assert current(app).answer_kind == "number"
        await pilot.press("1", "enter", "2", "enter", "3", "enter", *"40")
        await pilot.press(*["backspace"] * 8, "5", "ctrl+r")
        await wait_until(pilot, lambda: screen.phase != "answer")
        await pilot.pause()
        body = screen.query_one("#quiz-body")
        feedback = screen.query_one("#quiz-feedback", Static)
        assert not screen.query_one("#quiz-answer", QuizAnswer).display
        assert feedback.region.y == body.region.y
        verdict = screen_lines(app)[body.region.y].strip()
        assert verdict.startswith("Not quite.  yours: 5"), verdict


async def test_at_40x12_a_matching_verdict_names_both_choices_in_words(
    tmp_path: Path, lesson: Lesson
) -> None:
    """A matching question answered: the verdict is the body's first line and quotes the choice
    made and the one expected, each with its text (``expected: d)`` at a line's end, the
    choice's words wrapped out of view under the choices, read as nothing)."""
    review_before(tmp_path, lesson, ("self-check", "misconception"))
    app = quiz_app(tmp_path, lesson="S15")
    async with app.run_test(size=(40, 12)) as pilot:
        await pilot.pause()
        screen = screen_of(app)
        while current(app).item.kind != "matching":
            await answer_right(pilot, app)
        question = current(app)
        assert isinstance(question.expected, int)
        wrong = (question.expected + 1) % len(question.options)
        if wrong in (question.accepted or ()):
            wrong = (question.expected + 2) % len(question.options)
        await pilot.press("abcd"[wrong])
        await wait_until(pilot, lambda: screen.phase != "answer")
        await pilot.pause()
        body = screen.query_one("#quiz-body")
        lines = [line.strip() for line in screen_lines(app)[body.region.y : body.region.bottom]]
        assert lines[0] == "Not quite.", lines
        yours = f"yours: {'abcd'[wrong]}) {question.options[wrong].split()[0]}"
        assert lines[1].startswith(yours), lines
        feedback = screen.query_one("#quiz-feedback", Static)
        drawn = [
            feedback.render_line(y).text.replace("\xa0", " ").strip()
            for y in range(feedback.size.height)
        ]
        expected = question.expected_text().split()
        wanted = f"expected: {expected[0]} {expected[1]}"
        assert any(line.startswith(wanted) for line in drawn), drawn


@pytest.mark.parametrize(
    ("size", "answer"),
    [
        ((40, 12), "参数、梯度与优化器状态"),
        ((40, 12), "参数\n梯度\n优化器状态\nactivation\n通信 buffer"),
        ((80, 24), "参数、梯度与优化器状态"),
    ],
)
async def test_a_self_checks_key_points_begin_on_screen_once_answered(
    tmp_path: Path, lesson: Lesson, size: tuple[int, int], answer: str
) -> None:
    """A self-check submitted: the key points' heading and first line are on screen. At 40x12
    they were below the answer box, out of view with no sign of them. Where the body has room
    (80x24) the learner's answer stays above them, to compare."""
    app = quiz_app(tmp_path, lesson="S15")
    async with app.run_test(size=size) as pilot:
        await pilot.pause()
        screen = screen_of(app)
        question = current(app)
        assert question.answer_kind == "text"
        await paste_answer(pilot, answer)
        await pilot.press("ctrl+r")
        await wait_until(pilot, lambda: screen.phase != "answer")
        heading = strings.QUIZ_KEY_POINTS.split()[0]

        def heading_row() -> int | None:
            lines = [line.strip() for line in screen_lines(app)]
            return next((row for row, line in enumerate(lines) if line.startswith(heading)), None)

        await wait_until(pilot, lambda: heading_row() is not None)
        at = heading_row()
        assert at is not None
        lines = [line.strip() for line in screen_lines(app)]
        # The first key point's first line (broken at 40 columns: its start) follows.
        first_point = question.solution.splitlines()[0]
        assert any(line and first_point.startswith(line[:8]) for line in lines[at + 1 :]), lines
        answer_shown = answer.splitlines()[0] in "\n".join(lines)
        assert answer_shown or size == (40, 12)
