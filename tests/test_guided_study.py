"""Guided study in the app, driven by keys through Textual's Pilot: ``ctrl+n`` and typed text alone
study S15 from a fresh progress folder to a complete plan; the plan's states follow what the
learner does in the panes; answers are folded until a note is written or a look is confirmed (and
the export says which); F9 asks before marking an unfinished lesson complete; objectives are
rated in the reader; reading links open in the browser; the plan view goes to a step; the session
is logged and summed up."""

from __future__ import annotations

import itertools
import json
import re
from pathlib import Path

import pytest
import yaml
from textual.pilot import Pilot
from textual.widget import Widget
from textual.widgets import Input, OptionList, Static, TextArea

from engine.export import export_text
from engine.lesson import load_lesson
from engine.plan import build_plan, study_places
from engine.progress import ProgressStore
from tests.pilot_helpers import (
    S15_FILE,
    SIZE,
    Notified,
    app_for,
    burst,
    goto_section,
    params_field,
    paste_into,
    reading_text,
    result_text,
    screen_lines,
    settle,
    shown,
    type_into,
    wait_until,
)
from tui.app import ShardbookApp, make_app
from tui.screens.layout import META_ID
from tui.screens.study import PlanScreen, SummaryLine, SummaryScreen
from tui.widgets.confirm import ConfirmScreen
from tui.widgets.diagrams import DiagramsPane
from tui.widgets.notes import NoteBox
from tui.widgets.reader import BrokenText
from tui.widgets.study import ExerciseItem, ObjectiveItem, PaneExercises, ReadingLink

LESSON = load_lesson(S15_FILE)
# ctrl+n's first steps on a fresh folder: each of S15's 4 objectives to rate at the start, left
# unrated here (ctrl+n goes on).
START_RATINGS = ("ctrl+n",) * 4


def saved(progress_dir: Path) -> dict[str, object]:
    data = yaml.safe_load((progress_dir / "S15.yaml").read_text(encoding="utf-8"))
    assert isinstance(data, dict)
    return data


def last_message(notified: Notified) -> str:
    """The last information message the app posted (each replaces the one before on screen)."""
    information = [
        m
        for n, m in zip(notified.notifications, notified.messages, strict=True)
        if n.severity == "information"
    ]
    return information[-1] if information else ""


async def saved_now(pilot: Pilot[int], app: ShardbookApp) -> None:
    """Wait until what the last keys changed is saved (the autosave runs 0.05 s after them)."""
    await pilot.pause()
    await wait_until(pilot, lambda: not app.dirty)


def in_view(widget: Widget) -> bool:
    """Whether ``widget`` is wholly shown: inside the screen and inside every container around
    it (a box scrolled below its pane's visible part takes typed text that cannot be seen)."""
    return all(
        container.region.contains_region(widget.region)
        for container in widget.ancestors
        if isinstance(container, Widget)
    )


def diagram_text(app: ShardbookApp) -> str:
    """The Diagrams pane's diagram: its text before the picture, the picture, the text after."""
    pane = app.query_one(DiagramsPane)
    return "\n".join(
        str(pane.query_one(f"#{part}", Static).render())
        for part in ("diagram-head", "diagram", "diagram-tail")
    )


# Exercise 1's activations, for a Llama 2 7B-like shape (32 layers, hidden 4096, 32 heads) at
# seq 4096, micro-batch 1, no recomputation: Korthikanti et al. 2022, Table 2, per layer
# s*b*h*(34 + 5*a*s/h) bytes = 4096*4096*(34 + 160) B, times 32 layers.
ACTIVATION_INPUTS = {"seq": "4096", "layers": "32", "hidden": "4096", "heads": "32"}
ACTIVATIONS_GB = 32 * 4096 * 4096 * (34 + 5 * 32 * 4096 / 4096) / 1e9  # 104.15


async def give_activations(pilot: Pilot[int], app: ShardbookApp) -> None:
    """Type :data:`ACTIVATION_INPUTS` into the Ledger (shown), its less-used fields opened."""
    ledger = app.query_one("LedgerPane")
    if not ledger.query("#field-seq"):
        ledger.query_one("#more-open").focus()
        await pilot.press("enter")
        await wait_until(pilot, lambda: bool(ledger.query("#field-seq")))
    for name, text in ACTIVATION_INPUTS.items():
        await type_into(pilot, ledger.query_one(f"#field-{name}", Input), text)
    await saved_now(pilot, app)


def result_row(pane: Widget, term: str) -> str:
    """The line of a calculator's result that starts with ``term`` (``P params``)."""
    return next(line for line in result_text(pane).splitlines() if line.startswith(term))


# ----------------------------------------------------------------- the whole lesson
@pytest.mark.long
async def test_ctrl_n_and_typing_alone_study_s15_to_complete(
    tmp_path: Path, notified: Notified
) -> None:
    """What guided study promises: from a fresh folder, ctrl+n then typed text, repeated,
    fills every exercise note, self-check answer and reflection field; no other navigation key.
    Each field ctrl+n puts the cursor in is in view at 80x24 (an answer unfolding above a
    Diagrams or Trade-offs note box, when the box before it is left, does not push it off
    screen). In the Ledger ctrl+n puts the cursor in the first activation input still empty
    (exercise 1 asks for four columns, the fourth activations), and the learner types it, one
    field a visit: seq, then, coming round as the one step left, layers, hidden and heads."""
    app = app_for(tmp_path)
    typed: list[str] = []
    ledger_typed: dict[str, str] = {}
    rated_at_start: list[str] = []
    rated_at_end: list[str] = []
    async with app.run_test(size=SIZE, message_hook=notified.hook) as pilot:
        await pilot.pause()
        for _ in range(200):
            await pilot.press("ctrl+n")
            await pilot.pause()
            if last_message(notified).startswith("Every step of S15 is done"):
                break
            focused = app.focused
            if isinstance(focused, Input | TextArea):
                # Scrolled to once its pane is laid out: a frame or two on a loaded machine.
                await wait_until(pilot, lambda field=focused: in_view(field))
            if isinstance(focused, ObjectiveItem) and not rated_at_end and len(typed) == 0:
                # Before any step, ctrl+n asks for each objective's rating at the start.
                assert last_message(notified).startswith("Before you study: rate objective")
                await pilot.press("1")
                rated_at_start.append(focused.item.id)
            elif isinstance(focused, ObjectiveItem):
                # Every step done, ctrl+n asks for each objective's rating at the end.
                assert last_message(notified).startswith("Every step is done: rate objective")
                await pilot.press("3")
                rated_at_end.append(focused.item.id)
            elif isinstance(focused, Input):
                name = (focused.id or "").removeprefix("field-")
                await pilot.press(*ACTIVATION_INPUTS[name])
                ledger_typed[name] = ACTIVATION_INPUTS[name]
            elif isinstance(focused, TextArea):
                text = f"a{len(typed)}"  # short: each key is a frame; distinct per place
                await pilot.press(*text)
                typed.append(text)
            await pilot.pause()
        else:
            raise AssertionError(
                f"ctrl+n never said every step is done: {notified.messages[-12:]}, {app.focused}"
            )
        await saved_now(pilot, app)
        progress = app.progress
        plan = build_plan(LESSON, progress)
        assert plan.complete and plan.figure == "25/25"
        notes = [note for item in LESSON.exercises for note in item.notes]
        written = (
            [progress.notes[note] for note in notes]
            + [progress.answers[item.id] for item in LESSON.self_check]
            + [progress.reflections[item.id] for item in LESSON.reflection_fields]
        )
        # Every note, answer and field holds exactly what was typed into one box.
        assert sorted(written) == sorted(typed)
        assert ledger_typed == ACTIVATION_INPUTS
        assert {name: progress.forms["ledger"][name] for name in ACTIVATION_INPUTS} == (
            ACTIVATION_INPUTS
        )
        activations = progress.figures["exercise1"]["activations"]
        assert activations / 1e9 == pytest.approx(ACTIVATIONS_GB)
        # 14 notes + 4 answers + 5 fields: each place once, nothing twice.
        assert len(typed) == len(notes) + 4 + 5
        assert len(progress.read) == len(LESSON.sections)
        assert not progress.looked  # every answer was written before it was shown
        assert "plan 25/25" in app.sub_title
        # A step quoted in a message ends its sentence once (a question's ？, no full stop after).
        assert not [m for m in notified.messages if re.search(r"[?!？！。][.。]", m)]
        # The lesson: "Rate each objective before you study and again at the end" (its 4).
        objectives = [item.id for item in LESSON.objectives]
        assert rated_at_start == objectives and rated_at_end == objectives
        assert len(objectives) == 4
        assert all(progress.objective_rating(o).start == "not-yet" for o in objectives)
        assert all(progress.objective_rating(o).end == "can" for o in objectives)
        # A finished plan is marked complete without a question.
        await pilot.press("f9")
        await pilot.pause()
        assert not isinstance(app.screen, ConfirmScreen)
        assert app.progress.status == "complete"
        await pilot.press("ctrl+q")
    data = saved(tmp_path)
    assert data["status"] == "complete"
    (session,) = data["sessions"]  # type: ignore[misc]
    assert len(session["steps_finished"]) == 25
    assert len(session["answers_written"]) == len(notes) + 4 + 5


def in_progress(progress_dir: Path, fields: str, schema_version: int = 3) -> None:
    """S15's progress file: in progress, with ``fields`` (YAML lines, each ending in a newline)."""
    (progress_dir / "S15.yaml").write_text(
        f"schema_version: {schema_version}\nlesson: S15\nstatus: in-progress\n{fields}",
        encoding="utf-8",
    )


def studied_all_but(progress_dir: Path, note_id: str) -> None:
    """A progress file of S15 with every step done but note ``note_id`` (exercise 1: the
    learner's own 7B model with :data:`ACTIVATION_INPUTS`, and its four columns: 2 + 2 + 12
    bytes per parameter, ZeRO paper §3.1, and :data:`ACTIVATIONS_GB`)."""
    notes = [note for item in LESSON.exercises for note in item.notes if note != note_id]
    data = {
        "schema_version": 3,
        "lesson": "S15",
        "status": "in-progress",
        "read": [section.id for section in LESSON.sections],
        "forms": {"ledger": {"params": "7B", **ACTIVATION_INPUTS}},
        "figures": {
            "exercise1": {
                "parameters": 14e9,
                "gradients": 14e9,
                "adam_states": 84e9,
                "activations": ACTIVATIONS_GB * 1e9,
            }
        },
        "notes": {note: "mine" for note in notes},
        "answers": {item.id: "mine" for item in LESSON.self_check},
        "reflections": {item.id: "mine" for item in LESSON.reflection_fields},
    }
    (progress_dir / "S15.yaml").write_text(yaml.safe_dump(data), encoding="utf-8")


async def test_ctrl_n_in_the_last_open_box_says_it_is_left_not_that_every_step_is_done(
    tmp_path: Path, notified: Notified
) -> None:
    """Every step done but exercise 3's FSDP "one wait" note: ctrl+n puts the learner in its
    box, and ctrl+n there with nothing typed keeps them in it and says it is the one thing left
    (it said every step was done and asked for the ratings at the end, at plan 24/25). Once it
    is written, ctrl+n asks for the ratings at the end; the lesson's first page, on screen all
    along, says what is next, then that every step is done."""
    studied_all_but(tmp_path, "ex3.fsdp.wait")
    app = app_for(tmp_path)
    async with app.run_test(size=SIZE, message_hook=notified.hook) as pilot:
        await settle(pilot)
        meta = app.main_screen.query_one("#reading .meta-next", BrokenText)
        assert "Next: exercise 3:" in meta.text and "24/25" in meta.text
        await pilot.press("ctrl+n")
        await pilot.pause()
        said = "Step 8/25, part 4/8: exercise 3, FSDP/ZeRO-3: one wait it can cause."
        assert last_message(notified).startswith(said)
        box = app.focused.parent if app.focused else None
        assert isinstance(box, NoteBox) and box.item.id == "ex3.fsdp.wait"
        await pilot.press("ctrl+n")
        await pilot.pause()
        assert last_message(notified).startswith(f"Only this is left to do. {said}")
        assert not [m for m in notified.messages if m.startswith("Every step")]
        box = app.focused.parent if app.focused else None
        assert isinstance(box, NoteBox) and box.item.id == "ex3.fsdp.wait"
        assert "plan 24/25" in app.sub_title
        await pilot.press(*"gather")
        await saved_now(pilot, app)
        assert "plan 25/25" in app.sub_title
        assert meta.text.startswith("Every step of the study plan is done.")
        await pilot.press("ctrl+n")
        await pilot.pause()
        assert last_message(notified).startswith("Every step is done: rate objective 1")
        assert isinstance(app.focused, ObjectiveItem)


@pytest.mark.parametrize("plan_key", ["ctrl+n", "f9"])
async def test_a_note_and_a_plan_key_typed_together_count_the_note(
    tmp_path: Path, notified: Notified, plan_key: str
) -> None:
    """The last open box's first letter and a key that reads the plan, in one read from the
    terminal (a fast typist, an SSH link): the key counts the letter typed with it. The box's
    edit went up to the progress as a message behind the key, so ctrl+n said "Only this is left
    to do" in a box already written, and F9 asked whether to mark the lesson complete with
    that note left, at plan 24/25."""
    studied_all_but(tmp_path, "ex3.fsdp.wait")
    app = app_for(tmp_path)
    async with app.run_test(size=SIZE, message_hook=notified.hook) as pilot:
        await settle(pilot)
        await pilot.press("ctrl+n")
        await pilot.pause()
        box = app.focused.parent if app.focused else None
        assert isinstance(box, NoteBox) and box.item.id == "ex3.fsdp.wait"
        await burst(app, "g", plan_key)
        await settle(pilot)
        assert app.progress.notes["ex3.fsdp.wait"] == "g"
        if plan_key == "ctrl+n":
            assert last_message(notified).startswith("Every step is done: rate objective 1")
            assert isinstance(app.focused, ObjectiveItem)
        else:
            assert not isinstance(app.screen, ConfirmScreen)
            assert app.progress.status == "complete"


async def test_the_last_activation_input_and_ctrl_n_typed_together_finish_exercise_1(
    tmp_path: Path, notified: Notified
) -> None:
    """Every step done but exercise 1's activations (the Ledger holds a 7B model, no shape):
    ctrl+n puts the learner in each activation input left, and heads typed with ctrl+n in one
    burst finishes the plan. The Ledger's change reached the progress after ctrl+n, which said
    "Only this is left to do ... List the four columns" and put the cursor in params N."""
    studied_all_but(tmp_path, "")
    path = tmp_path / "S15.yaml"
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    data["forms"]["ledger"] = {"params": "7B"}
    del data["figures"]["exercise1"]
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    app = app_for(tmp_path)
    async with app.run_test(size=SIZE, message_hook=notified.hook) as pilot:
        await settle(pilot)
        for name in ("seq", "layers", "hidden", "heads"):
            await pilot.press("ctrl+n")
            await settle(pilot)
            focused = app.focused
            assert isinstance(focused, Input) and focused.id == f"field-{name}"
            if name != "heads":
                await type_into(pilot, focused, ACTIVATION_INPUTS[name])
        await burst(app, *ACTIVATION_INPUTS["heads"], "ctrl+n")
        await settle(pilot)
        assert last_message(notified).startswith("Every step is done: rate objective 1")
        activations = app.progress.figures["exercise1"]["activations"]
        assert activations / 1e9 == pytest.approx(ACTIVATIONS_GB)


async def test_ctrl_n_asks_for_the_ratings_at_the_start_before_the_first_step(
    tmp_path: Path, notified: Notified
) -> None:
    """The lesson: "Rate each objective before you study and again at the end". ctrl+n asked
    only at the end. Its first steps now put the learner on each objective not rated at the
    start (objective 1 is rated here: not asked), once each; then the plan's first step."""
    in_progress(tmp_path, "ratings: {objective-memory-sources: {start: partly}}\n")
    app = app_for(tmp_path)
    async with app.run_test(size=SIZE, message_hook=notified.hook) as pilot:
        await settle(pilot)
        await pilot.press("ctrl+n")
        await pilot.pause()
        assert last_message(notified) == (
            "Before you study: rate objective 2 now, at the start: 1 not yet, 2 partly, 3 can "
            "(left to rate at the start: 3; ctrl+n goes on)."
        )
        objective = app.focused
        assert isinstance(objective, ObjectiveItem)
        assert objective.item.id == "objective-parallel-axes" and objective.phase == "start"
        await pilot.press("2")
        # The prompt is replaced by what was done (it stayed up, asking, after the rating).
        assert last_message(notified) == ("Objective 2 rated at the start: partly. ctrl+n goes on.")
        await saved_now(pilot, app)
        assert saved(tmp_path)["ratings"] == {
            "objective-memory-sources": {"start": "partly"},
            "objective-parallel-axes": {"start": "partly"},
        }
        await pilot.press("ctrl+n")
        await pilot.pause()
        assert "rate objective 3 now, at the start" in last_message(notified)
        assert "(left to rate at the start: 2;" in last_message(notified)
        await pilot.press("ctrl+n")  # objective 3 left unrated: on to 4
        await pilot.pause()
        focused = app.focused
        assert isinstance(focused, ObjectiveItem) and focused.item.id == "objective-tradeoffs"
        await pilot.press("ctrl+n")
        await pilot.pause()
        assert last_message(notified).startswith("Step 1/25: read 一句话定义.")
        assert app.main_screen.current_section == "definition"
        # Asked once a session: objective 3, still unrated, is not asked again.
        await pilot.press("ctrl+n")
        await pilot.pause()
        assert "at the start" not in last_message(notified)
        assert not isinstance(app.focused, ObjectiveItem)


async def test_a_rating_and_ctrl_n_typed_together_leave_ctrl_ns_message_up(
    tmp_path: Path, notified: Notified
) -> None:
    """ "2" then ctrl+n in one read from the terminal: the rating's message reached the app after
    ctrl+n had said "rate objective 2", and replaced it; the learner, on objective 2, read
    "Objective 1 rated ... ctrl+n goes on". ctrl+n counts the rating typed with it: of S15's 4
    objectives, 3 are left once objective 1 is rated, then 2 (it said 4, then 3)."""
    app = app_for(tmp_path)
    async with app.run_test(size=SIZE, message_hook=notified.hook) as pilot:
        await settle(pilot)
        await pilot.press("ctrl+n")
        await pilot.pause()
        assert "rate objective 1 now, at the start" in last_message(notified)
        assert "(left to rate at the start: 4;" in last_message(notified)
        await burst(app, "2", "ctrl+n")
        await settle(pilot)
        focused = app.focused
        assert isinstance(focused, ObjectiveItem) and focused.item.id == "objective-parallel-axes"
        assert "rate objective 2 now, at the start" in last_message(notified)
        assert "(left to rate at the start: 3;" in last_message(notified)
        await burst(app, "1", "ctrl+n")
        await settle(pilot)
        assert "rate objective 3 now, at the start" in last_message(notified)
        assert "(left to rate at the start: 2;" in last_message(notified)
        await saved_now(pilot, app)
        assert saved(tmp_path)["ratings"] == {
            "objective-memory-sources": {"start": "partly"},
            "objective-parallel-axes": {"start": "not-yet"},
        }


async def test_a_rating_at_the_end_and_ctrl_n_typed_together_count_it(
    tmp_path: Path, notified: Notified
) -> None:
    """Every step done: "3" then ctrl+n in one read from the terminal rates objective 1 at the
    end and asks for objective 2, with 3 of S15's 4 objectives left to rate at the end (it
    said 4: the rating reached the progress after ctrl+n had counted)."""
    studied_all_but(tmp_path, "")
    app = app_for(tmp_path)
    async with app.run_test(size=SIZE, message_hook=notified.hook) as pilot:
        await settle(pilot)
        await pilot.press("ctrl+n")
        await pilot.pause()
        assert "rate objective 1 again now, at the end" in last_message(notified)
        assert "(left to rate at the end: 4;" in last_message(notified)
        await burst(app, "3", "ctrl+n")
        await settle(pilot)
        assert "rate objective 2 again now, at the end" in last_message(notified)
        assert "(left to rate at the end: 3;" in last_message(notified)
        await burst(app, "2", "ctrl+n")
        await settle(pilot)
        assert "rate objective 3 again now, at the end" in last_message(notified)
        assert "(left to rate at the end: 2;" in last_message(notified)
        await saved_now(pilot, app)
        assert saved(tmp_path)["ratings"] == {
            "objective-memory-sources": {"end": "can"},
            "objective-parallel-axes": {"end": "partly"},
        }


async def test_a_learner_at_work_is_not_taken_to_the_start_ratings(
    tmp_path: Path, notified: Notified
) -> None:
    """Once a step is done (a self-check answered here), "before you study" has passed: ctrl+n
    goes to the plan's next step, not to the objectives to rate at the start (from a note box in
    the Diagrams pane it took the learner away to the objectives section)."""
    in_progress(tmp_path, "answers: {self-check-adam-memory: sixteen bytes}\n")
    app = app_for(tmp_path)
    async with app.run_test(size=SIZE, message_hook=notified.hook) as pilot:
        await settle(pilot)
        # The first page says what ctrl+n does next: no ratings first.
        assert "Next: read 一句话定义. ctrl+n goes there" in " ".join(reading_text(app).split())
        await pilot.press("ctrl+n")
        await pilot.pause()
        assert last_message(notified).startswith("Step 1/25: read 一句话定义.")
        assert not isinstance(app.focused, ObjectiveItem)


async def test_the_first_page_says_ctrl_n_asks_the_start_ratings_first(tmp_path: Path) -> None:
    """It said "Next: read 一句话定义. ctrl+n goes there" while ctrl+n first asked for the
    ratings at the start."""
    app = app_for(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert (
            "Next: rate each objective at the start, then read 一句话定义. ctrl+n goes there"
            in " ".join(reading_text(app).split())
        )
        # Each of the 4 asked once and left unrated: ctrl+n goes to the first step now, and the
        # page, shown again, says so.
        await pilot.press(*["ctrl+n"] * 4)
        await pilot.pause()
        app.main_screen.set_focus(app.query_one("#reading"))
        while app.main_screen.current_section != "__meta__":
            await pilot.press("left_square_bracket")
            await pilot.pause()
        await wait_until(
            pilot,
            lambda: (
                "Next: read 一句话定义. ctrl+n goes there" in " ".join(reading_text(app).split())
            ),
        )


# ----------------------------------------------------------------- plan states from the UI
async def test_the_plan_follows_what_the_learner_does_in_the_panes(tmp_path: Path) -> None:
    app = app_for(tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        outline = app.query_one("#outline", OptionList)
        assert str(outline.get_option("definition").prompt).startswith("◌ ")
        # ] shows the next section; scrolling through it to its end reads it.
        await pilot.press("right_square_bracket")
        app.set_focus(app.query_one("#reading"))
        await pilot.press("end")
        await saved_now(pilot, app)
        assert "definition" in saved(tmp_path)["read"]  # type: ignore[operator]
        assert str(outline.get_option("definition").prompt).startswith("✓ ")
        # Exercise 1: the Ledger's 1B example is the default form, so only started; so is a
        # model of the learner's own without activations (the fourth column).
        await pilot.press("f2", "ctrl+g")
        await saved_now(pilot, app)
        assert build_plan(LESSON, app.progress).step("exercise:exercise-ledger").state == "started"
        ledger_banner = app.query_one("LedgerPane").query_one(PaneExercises)
        assert "Exercise 1 ◔ started" in ledger_banner.text
        await pilot.press("end", "backspace", "backspace", "7", "B")
        await saved_now(pilot, app)
        assert saved(tmp_path)["forms"]["ledger"]["params"] == "7B"  # type: ignore[index]
        assert "Exercise 1 ◔ started" in ledger_banner.text
        await give_activations(pilot, app)
        assert "Exercise 1 ✓ done" in ledger_banner.text
        # The exercises in the reader show the same states, and the outline the section's.
        app.main_screen.goto(5)  # 最小练习或观察步骤
        await wait_until(pilot, lambda: len(app.query(ExerciseItem)) == 5)
        items = list(app.query(ExerciseItem))
        assert [item.line.split(" ")[1] for item in items] == ["done", "to", "to", "to", "to"]
        assert str(outline.get_option("exercises").prompt).startswith("◔ ")
        # Exercise 2 in the Diagrams pane: one note of four is started.
        await pilot.press("f4")
        await pilot.pause()
        pane = app.query_one(DiagramsPane)
        box = next(b for b in pane.query(NoteBox) if b.item.id == "ex2.dp.split")
        app.screen.set_focus(box.text_area)
        await pilot.press(*"the batch")
        await saved_now(pilot, app)
        plan = build_plan(LESSON, ProgressStore(tmp_path).load("S15").progress)
        assert plan.step("exercise:exercise-diagrams").state == "started"
        assert items[1].line.startswith("◔ started")
        assert str(pane.query_one("#strategy").value) == "dp"
        shown_label = pane.query_one("#strategy").query_one("SelectCurrent #label", Static)
        assert str(shown_label.render()).startswith("◔ DP")
        assert f"plan {plan.figure}" in app.sub_title


async def test_an_invalid_ledger_form_does_not_do_exercise_1(tmp_path: Path) -> None:
    """The parameter count emptied at once (F2, end, ctrl+u) changes the form but computes
    nothing: the last good result is the default form's, so exercise 1 stays started and the
    plan's count does not move; a valid count of the learner's own and the activations' inputs
    then do it."""
    app = app_for(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        before = build_plan(LESSON, app.progress)
        await pilot.press("f2", "end", "ctrl+u")
        await saved_now(pilot, app)
        assert saved(tmp_path)["forms"]["ledger"]["params"] == ""  # type: ignore[index]
        # The figures kept on screen are saved, of the last good form (the default's 1B):
        # 2 bytes a parameter of bf16 weights.
        assert saved(tmp_path)["figures"]["exercise1"]["parameters"] == 2e9  # type: ignore[index]
        plan = build_plan(LESSON, app.progress)
        assert plan.step("exercise:exercise-ledger").state == "started"
        assert plan.counts.steps_done == before.counts.steps_done
        banner = app.query_one("LedgerPane").query_one(PaneExercises)
        assert "Exercise 1 ◔ started" in banner.text
        assert f"plan {before.figure}" in app.sub_title
        await pilot.press("7", "B")
        await give_activations(pilot, app)
        assert "Exercise 1 ✓ done" in banner.text
        assert build_plan(LESSON, app.progress).counts.steps_done == before.counts.steps_done + 1


async def test_a_refused_ledger_edit_takes_nothing_from_exercise_1(tmp_path: Path) -> None:
    """Exercise 1 done with the learner's own 7B and its activations, then two refused edits:
    layers emptied while seq is given (activations need it), and abc in params N. The figures
    stay on screen, and exercise 1 stays done: the plan follows the last good result, which a
    restart shows again under the same message."""
    app = app_for(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("f2")
        params = await params_field(pilot, app)
        await type_into(pilot, params, "7B")
        await give_activations(pilot, app)
        done = build_plan(LESSON, app.progress)
        assert done.step("exercise:exercise-ledger").done and done.figure == "1/25"
        ledger = app.query_one("LedgerPane")
        banner = ledger.query_one(PaneExercises)
        await paste_into(pilot, ledger.query_one("#field-layers", Input), "")
        error = ledger.query_one(".calc-error", Static)
        await wait_until(pilot, lambda: "layers L" in shown(error), timeout=3)
        await paste_into(pilot, params, "abc")
        await saved_now(pilot, app)
        # 7B in bf16: 2 bytes per parameter (ZeRO §3.1), 14 GB; activations: ACTIVATIONS_GB.
        assert "14.00" in result_row(ledger, "P params")
        assert f"{ACTIVATIONS_GB:.2f}" in result_row(ledger, "A activations")
        message = " ".join(shown(error).split())
        assert message.startswith("params N:") and "showing the last good result" in message
        plan = build_plan(LESSON, app.progress)
        assert plan.step("exercise:exercise-ledger").done and plan.figure == "1/25"
        assert "Exercise 1 ✓ done" in banner.text and "plan 1/25" in app.sub_title
        forms = saved(tmp_path)["forms"]
        assert forms["ledger"]["params"] == "abc" and forms["ledger"]["layers"] == ""  # type: ignore[index]
        assert forms["ledger.last-good"]["params"] == "7B"  # type: ignore[index]
        assert forms["ledger.last-good"]["layers"] == "32"  # type: ignore[index]
        await pilot.press("ctrl+q")
    app = app_for(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("f2")
        params = await params_field(pilot, app)
        ledger = app.query_one("LedgerPane")
        await wait_until(pilot, lambda: "total" in result_text(ledger))
        assert params.value == "abc"
        assert "14.00" in result_row(ledger, "P params")
        restarted = " ".join(shown(ledger.query_one(".calc-error", Static)).split())
        assert restarted == message
        assert "Exercise 1 ✓ done" in ledger.query_one(PaneExercises).text
        assert "plan 1/25" in app.sub_title


async def test_exercise_1_is_done_only_with_its_activations_column(
    tmp_path: Path, notified: Notified
) -> None:
    """Exercise 1 asks for four columns (parameters, gradients, Adam states, activations). A
    model of the learner's own without seq leaves activations "not computed": exercise 1 is
    started, not done (it was done, beside "not computed"). The plan view's enter on it puts the
    cursor in the first activation input and says what they need; with them given, the
    activations have a figure and exercise 1 is done."""
    app = app_for(tmp_path)
    async with app.run_test(size=SIZE, message_hook=notified.hook) as pilot:
        await pilot.press("f2")
        params = await params_field(pilot, app)
        await type_into(pilot, params, "7B")
        await saved_now(pilot, app)
        ledger = app.query_one("LedgerPane")
        banner = ledger.query_one(PaneExercises)
        assert "0.00" in result_row(ledger, "A activations")
        assert "activations not computed" in " ".join(result_text(ledger).split())
        assert build_plan(LESSON, app.progress).step("exercise:exercise-ledger").state == "started"
        assert "Exercise 1 ◔ started" in banner.text and "plan 0/25" in app.sub_title
        await pilot.press("f11")
        await wait_until(pilot, lambda: isinstance(app.screen, PlanScreen))
        steps = app.screen.query_one(OptionList)
        steps.highlighted = steps.get_option_index("exercise:exercise-ledger")
        await pilot.press("enter")
        await wait_until(pilot, lambda: app.focused is not None and app.focused.id == "field-seq")
        assert last_message(notified) == (
            "Step 6/25: exercise 1. List the four columns: activations need seq len s, layers L, "
            "hidden h and heads a (a model fills the last three)."
        )
        await give_activations(pilot, app)
        assert f"{ACTIVATIONS_GB:.2f}" in result_row(ledger, "A activations")
        assert build_plan(LESSON, app.progress).step("exercise:exercise-ledger").done
        assert "Exercise 1 ✓ done" in banner.text and "plan 1/25" in app.sub_title


async def test_ctrl_g_twice_takes_nothing_from_exercise_1_and_says_what_it_records(
    tmp_path: Path,
) -> None:
    """ctrl+g (the 1B example; twice when it replaces what was typed) replaced the learner's 7B
    and took exercise 1 from done back to started, saying only that the example was loaded. The
    example keeps the activation inputs, so it takes nothing from exercise 1; the question and
    the message say so, and what exercise 1 records after it."""
    app = app_for(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("f2")
        params = await params_field(pilot, app)
        ledger = app.query_one("LedgerPane")
        note = ledger.query_one(".calc-note", Static)
        banner = ledger.query_one(PaneExercises)
        await type_into(pilot, params, "7B")
        await saved_now(pilot, app)
        before = build_plan(LESSON, app.progress).step("exercise:exercise-ledger").state
        await pilot.press("ctrl+g")
        assert " ".join(shown(note).split()) == (
            "Press ctrl+g again to replace your inputs with exercise 1's 1B example (your "
            "activation inputs are kept)."
        )
        await pilot.press("ctrl+g")
        await saved_now(pilot, app)
        assert params.value == "1B"
        assert build_plan(LESSON, app.progress).step("exercise:exercise-ledger").state == before
        assert " ".join(shown(note).split()) == (
            "Loaded exercise 1's example: a 1B-parameter model, mixed-precision Adam. Exercise 1 "
            "is done once its activations are computed too: enter 'seq len s', 'layers L', "
            "'hidden h', 'heads a' (▸ below)."
        )
        # Done with the learner's own model and its activations: ctrl+g twice keeps it done.
        await type_into(pilot, params, "7B")
        await give_activations(pilot, app)
        assert "Exercise 1 ✓ done" in banner.text
        params.focus()
        await pilot.press("ctrl+g", "ctrl+g")
        await saved_now(pilot, app)
        assert params.value == "1B"
        # 1B in bf16: 2 GB of parameters (ZeRO §3.1); the activations as they were.
        assert "2.00" in result_row(ledger, "P params")
        assert f"{ACTIVATIONS_GB:.2f}" in result_row(ledger, "A activations")
        assert build_plan(LESSON, app.progress).step("exercise:exercise-ledger").done
        assert "Exercise 1 ✓ done" in banner.text and "plan 1/25" in app.sub_title
        assert " ".join(shown(note).split()) == (
            "Loaded exercise 1's example: a 1B-parameter model, mixed-precision Adam, with your "
            "activation inputs kept: all four columns are computed, so exercise 1 is done."
        )


# ----------------------------------------------------------------- predict, then reveal
async def test_the_diagram_is_folded_until_the_note_is_written_or_a_look_confirmed(
    tmp_path: Path,
) -> None:
    app = app_for(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("f4")
        await pilot.pause()
        assert "DP - data parallel (4 ranks)" in diagram_text(app)
        for answer in ("Split:", "rank 0", "Collectives:", "One wait:", "The three questions"):
            assert answer not in diagram_text(app)
        folded = app.query_one("#diagram-folded", Static)
        assert folded.display and "Folded until you write your note" in str(folded.render())
        # The note for exercise 2 written and left: what DP splits (and the ranks) unfolds.
        box = next(b for b in app.query(NoteBox) if b.item.id == "ex2.dp.split")
        app.screen.set_focus(box.text_area)
        await pilot.press(*"the batch")
        assert "Split:" not in diagram_text(app)  # not while it is typed
        await pilot.press("tab")
        await pilot.pause()
        assert "Split: the batch" in diagram_text(app) and "rank 0" in diagram_text(app)
        assert "Collectives:" not in diagram_text(app) and "all-reduce" not in diagram_text(app)
        # Look first: escape keeps it folded and records nothing; enter shows and records.
        await pilot.press("ctrl+r")
        await pilot.pause()
        assert isinstance(app.screen, ConfirmScreen)
        await pilot.press("escape")
        await pilot.pause()
        assert "Collectives:" not in diagram_text(app) and not app.progress.looked
        await pilot.press("ctrl+r")
        await pilot.pause()
        await pilot.press("enter")
        await wait_until(pilot, lambda: "Collectives:" in diagram_text(app))
        assert "Collectives:" in diagram_text(app) and "One wait:" in diagram_text(app)
        assert "The three questions" in diagram_text(app) and not folded.display
        assert set(app.progress.looked) == {"ex3.dp.comm", "ex3.dp.wait"}
        labels = [b.query_one(".note-label", BrokenText).text for b in app.query(NoteBox)]
        assert ["looked before answering" in label for label in labels] == [False, True, True]
        # A strategy no exercise asks about is never folded.
        pane = app.query_one(DiagramsPane)
        pane.query_one("#strategy").value = "zero1"
        await pilot.pause()
        assert "Collectives:" in diagram_text(app) and not folded.display
        await pilot.press("ctrl+q")
    progress = ProgressStore(tmp_path).load("S15").progress
    assert set(progress.looked) == {"ex3.dp.comm", "ex3.dp.wait"}
    markdown = export_text(LESSON, progress, "md")
    assert "Written before looking at the engine's answer." in markdown
    assert "Looked at the engine's answer first" in markdown and "no note written yet" in markdown
    data = json.loads(export_text(LESSON, progress, "json"))
    assert set(data["looked_before_answering"]) == {"ex3.dp.comm", "ex3.dp.wait"}
    (note,) = data["exercise_notes"]
    assert note["id"] == "ex2.dp.split" and note["looked_before_answering"] is False
    html = export_text(LESSON, progress, "html")
    assert "Looked at the engine" in html and "Written before looking" in html


async def test_a_saved_note_opens_its_answer_at_once(tmp_path: Path) -> None:
    in_progress(
        tmp_path,
        "notes: {ex2.tp.split: 'inside each layer', ex4: 'TP: all-reduce per layer'}\n",
        schema_version=2,
    )
    app = app_for(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("f4")
        await pilot.pause()
        app.query_one(DiagramsPane).query_one("#strategy").value = "tp"
        await pilot.pause()
        assert "Split: inside each layer" in diagram_text(app)
        assert "Collectives:" not in diagram_text(app)
        await pilot.press("f10")
        await settle(pilot)
        result = str(app.query_one("#tradeoffs-result", Static).render())
        assert "folded" not in result


# ----------------------------------------------------------------- completion
async def test_f9_on_a_fresh_folder_asks_and_lists_what_is_left(
    tmp_path: Path, notified: Notified
) -> None:
    app = app_for(tmp_path)
    async with app.run_test(size=SIZE, message_hook=notified.hook) as pilot:
        await pilot.press("f9")
        await pilot.pause()
        assert isinstance(app.screen, ConfirmScreen)
        lines = [text.text for text in app.screen.query(".confirm-line").results(BrokenText)]
        # S15 has 25 steps (11 sections, 5 exercises, 4 questions, 5 fields); 12 are listed.
        assert lines[0] == "read 一句话定义" and lines[-1] == "and 13 more"
        assert "exercises 0/5" in app.screen.question
        await pilot.press("escape")
        await pilot.pause()
        assert app.progress.status == "not-started"
        await pilot.press("f9", "y")
        await pilot.pause()
        assert app.progress.status == "complete"
        # Back: nothing was studied, so not started (not "in progress").
        await pilot.press("f9")
        await pilot.pause()
        assert app.progress.status == "not-started"
        await pilot.press("right_square_bracket", "end")  # a section read
        await saved_now(pilot, app)
        await pilot.press("f9", "enter", "f9")
        await pilot.pause()
        assert app.progress.status == "in-progress"
        assert "in progress again" in last_message(notified)


# ----------------------------------------------------------------- the reader
async def test_enter_on_an_exercise_opens_its_place(tmp_path: Path) -> None:
    app = app_for(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        app.main_screen.goto(5)  # 最小练习或观察步骤
        await pilot.pause()
        items = list(app.query(ExerciseItem))
        assert len(items) == 5 and "Trade-offs (F10)" in items[3].line
        app.screen.set_focus(items[3])
        await pilot.press("enter")
        await pilot.pause()
        box = app.focused.parent if app.focused else None
        assert isinstance(box, NoteBox) and box.item.id == "ex4"
        assert app.query_one("#side").display
        # Exercise 3 opens the strategy whose note is first left to write.
        app.main_screen.goto(5)
        await pilot.pause()
        app.screen.set_focus(list(app.query(ExerciseItem))[2])
        await pilot.press("enter")
        await pilot.pause()
        box = app.focused.parent if app.focused else None
        assert isinstance(box, NoteBox) and box.item.id == "ex3.dp.comm"


async def test_objectives_are_rated_at_the_start_and_the_end(tmp_path: Path) -> None:
    app = app_for(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        app.main_screen.goto(2)  # 学习目标
        await pilot.pause()
        objectives = list(app.query(ObjectiveItem))
        assert len(objectives) == 4
        assert "trained by exercise 1 ◌, self-check 1 ◌ (0/2 done)" in objectives[0].line
        app.screen.set_focus(objectives[0])
        await pilot.press("2")  # the start: partly
        await pilot.press("e", "3")  # the end: can
        await saved_now(pilot, app)
        assert "start partly" in objectives[0].line and "end can" in objectives[0].line
        assert saved(tmp_path)["ratings"] == {
            "objective-memory-sources": {"start": "partly", "end": "can"}
        }
        await pilot.press("f11")
        await pilot.pause()
        assert isinstance(app.screen, PlanScreen)
        listed = app.screen.query_one(OptionList)
        prompts = [str(listed.get_option_at_index(i).prompt) for i in range(listed.option_count)]
        assert any(p.startswith("1. 能拆解") and "partly -> can" in p for p in prompts)
        await pilot.press("escape")
        await pilot.press("ctrl+q")
    markdown = export_text(LESSON, ProgressStore(tmp_path).load("S15").progress, "md")
    assert "Your rating: at the start partly; at the end can." in markdown


async def test_a_rating_key_and_its_word_stay_on_one_line(tmp_path: Path) -> None:
    """A focused objective lists its keys (``1 not yet · 2 partly · 3 can``): broken at any
    width a reader may have, no line ends with a key whose word went to the next line."""
    app = app_for(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        app.main_screen.goto(2)  # 学习目标
        await pilot.pause()
        objective = app.query(ObjectiveItem).first()
        app.screen.set_focus(objective)
        await pilot.press("2")  # the start rated: the line as the learner then sees it
        line = objective.query_one(".study-line", BrokenText)
        await wait_until(pilot, lambda: "keys" in line.text and "partly ·" in line.text)
        for width in range(20, 100):
            rows = [row.replace("\xa0", " ").rstrip() for row in line.lines_at(width)]
            keys = rows[next(n for n, row in enumerate(rows) if "keys" in row) :]
            assert any("3 can" in row for row in keys), (width, keys)
            assert not [row for row in keys if re.search(r"(^|[ ·:])[0-3]$", row)], (width, keys)


def split_words(lines: list[str], words: tuple[str, ...]) -> list[tuple[str, str]]:
    """Each two lines in a row (frames, scroll bars and spaces at their ends left out) that
    part one of ``words`` between them (``…来源：还`` then ``不能 -> 部分能``)."""
    edges = " \xa0█▊▎▌│▁▂▃▄▅▆▇"
    parted = []
    for before, after in itertools.pairwise(line.strip(edges) for line in lines):
        for word in words:
            if any(
                before.endswith(word[:cut]) and after.startswith(word[cut:])
                for cut in range(1, len(word))
            ):
                parted.append((before, after))
    return parted


@pytest.mark.parametrize("size", [(80, 24), (60, 20), (40, 12)])
async def test_a_chinese_rating_word_is_never_broken_inside(
    tmp_path: Path, notified: Notified, size: tuple[int, int]
) -> None:
    """The ratings 还不能 (not yet) and 部分能 (partly) are words of three ideographs, between
    any two of which UAX #14 allows a break (the lines' glue kept only two-ideograph marks such
    as 未评 whole). With every step done and each objective rated 还不能 at the start, they were
    broken inside: at 60x20 in ctrl+n's message asking for the rating at the end (``1 还`` then
    ``不能、2``), at 40x12 in the focused objective's line (``结束 部`` then ``分能``), at 80x24
    and 40x12 in F11's objective lines (``来源：还`` then ``不能 -> 部分能``). Each is whole on
    one line at all three sizes."""
    studied_all_but(tmp_path, "")
    data = saved(tmp_path)
    data["ratings"] = {item.id: {"start": "not-yet"} for item in LESSON.objectives}
    (tmp_path / "S15.yaml").write_text(yaml.safe_dump(data), encoding="utf-8")
    words = ("还不能", "部分能")
    app = make_app(progress_dir=tmp_path, autosave_delay=0.05, language="zh")
    async with app.run_test(size=size, message_hook=notified.hook) as pilot:
        await settle(pilot)
        await pilot.press("ctrl+n")
        await wait_until(pilot, lambda: isinstance(app.focused, ObjectiveItem))
        assert notified.messages[-1].startswith("所有步骤都已完成"), notified.messages[-1]
        toast = notified.notifications[-1].message
        assert not split_words(toast.split("\n"), words), toast
        await pilot.press("2")  # objective 1 rated 部分能 at the end
        await pilot.pause()
        assert not split_words(screen_lines(app), words), screen_lines(app)
        await pilot.press("f11")
        await wait_until(pilot, lambda: isinstance(app.screen, PlanScreen))
        steps = app.screen.query_one(OptionList)
        rated = [
            index
            for index in range(steps.option_count)
            if "还不能" in str(steps.get_option_at_index(index).prompt)
        ]
        assert len(rated) == len(LESSON.objectives)
        for index in rated:
            steps.highlighted = index
            await pilot.pause()
            assert not split_words(screen_lines(app), words), screen_lines(app)
        await pilot.press("escape", "ctrl+q")


async def test_a_reading_link_opens_in_the_browser(tmp_path: Path) -> None:
    app = app_for(tmp_path)
    opened: list[str] = []
    app.open_url = lambda url, *, new_tab=True: opened.append(url)  # type: ignore[method-assign]
    async with app.run_test(size=SIZE) as pilot:
        app.main_screen.goto(9)  # 专业课程对齐
        await pilot.pause()
        links = list(app.query(ReadingLink))
        assert [link.url for link in links] == [
            link.url for item in LESSON.section("course-alignment").items for link in item.links
        ]
        app.screen.set_focus(links[2])
        await pilot.press("enter")
        await pilot.pause()
    assert opened == ["https://docs.pytorch.org/docs/stable/distributed.html"]


async def test_brackets_move_between_sections_but_type_in_a_text_box(tmp_path: Path) -> None:
    app = app_for(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("right_square_bracket", "right_square_bracket", "left_square_bracket")
        await pilot.pause()
        assert app.main_screen.current_section == "definition"
        app.main_screen.goto(8)  # 自检问题: focus in the first answer box
        await pilot.pause()
        assert isinstance(app.focused, TextArea)
        await pilot.press("right_square_bracket", "left_square_bracket")
        await pilot.pause()
        assert app.main_screen.current_section == "self-check"
        assert app.focused.text == "]["


# ----------------------------------------------------------------- plan view, summary
async def test_the_plan_view_goes_to_the_chosen_step(tmp_path: Path) -> None:
    app = app_for(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("f11")
        await pilot.pause()
        plan_screen = app.screen
        assert isinstance(plan_screen, PlanScreen)
        steps = plan_screen.query_one("#plan-steps", OptionList)
        assert steps.highlighted == 0  # the next step
        head = "\n".join(t.text for t in plan_screen.query(".plan-head").results(BrokenText))
        assert "sections 0/11 read, exercises 0/5, self-check 0/4 answered" in head
        steps.highlighted = [step.id for step in plan_screen.plan.steps].index(
            "reflection:reflection-tradeoff"
        )
        await pilot.press("enter")
        await pilot.pause()
        box = app.focused.parent if app.focused else None
        assert isinstance(box, NoteBox) and box.item.id == "reflection-tradeoff"


async def test_the_plan_view_names_the_step_ctrl_n_goes_to_from_here(
    tmp_path: Path, notified: Notified
) -> None:
    """A learner who chose to look first at DP's answers, then wrote DP's split (exercise 2),
    pressed ctrl+n and went on to DP's collective (exercise 3), while the plan view (F11) named
    "read 一句话定义", the first unfinished step, as next. ctrl+n goes on from where the learner
    is (README, "ctrl+n goes on"): the plan view names and highlights that step, as it names
    the ratings ctrl+n asks for first on a fresh folder."""

    async def plan_view() -> tuple[str, str | None]:
        await pilot.press("f11")
        await wait_until(pilot, lambda: isinstance(app.screen, PlanScreen))
        screen = app.screen
        head = " ".join(t.text for t in screen.query(".plan-head").results(BrokenText))
        steps = screen.query_one("#plan-steps", OptionList)
        index = steps.highlighted
        option = steps.get_option_at_index(index) if index is not None else None
        await pilot.press("escape")
        await wait_until(pilot, lambda: not isinstance(app.screen, PlanScreen))
        return head, option.id if option else None

    app = app_for(tmp_path)
    async with app.run_test(size=SIZE, message_hook=notified.hook) as pilot:
        await settle(pilot)
        head, highlighted = await plan_view()
        assert (
            "next, ctrl+n from here: rate each objective at the start, then read 一句话定义" in head
        )
        assert highlighted == "read:definition"
        await pilot.press("ctrl+n")
        await pilot.pause()
        assert last_message(notified).startswith("Before you study: rate objective 1")
        # Exercise 2 in the Diagrams pane: look first at DP (confirmed), then DP's split.
        await pilot.press("f4")
        await wait_until(pilot, lambda: bool(app.query(DiagramsPane)))
        await pilot.press("ctrl+r")
        await wait_until(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        await pilot.press("y")
        await wait_until(pilot, lambda: "ex2.dp.split" in app.progress.looked)
        box = next(b for b in app.query(NoteBox) if b.item.id == "ex2.dp.split")
        app.main_screen.set_focus(box.text_area)
        await pilot.press(*"the batch")
        await saved_now(pilot, app)
        head, highlighted = await plan_view()
        assert "next, ctrl+n from here: exercise 3: 为每张图写主要 collective" in head
        assert "read 一句话定义" not in head
        assert highlighted == "exercise:exercise-communication"
        await pilot.press("ctrl+n")
        await pilot.pause()
        assert last_message(notified).startswith("Step 8/25, part 1/8: exercise 3, DP")
        box = app.focused.parent if app.focused else None
        assert isinstance(box, NoteBox) and box.item.id == "ex3.dp.comm"
        # Back on the lesson's first page, its line names what ctrl+n does from there, as the
        # plan view does (it named the first unfinished step, read 一句话定义).
        app.main_screen.set_focus(app.query_one("#reading"))
        while app.main_screen.current_section != META_ID:
            await pilot.press("left_square_bracket")
            await pilot.pause()
        head, highlighted = await plan_view()
        assert "next, ctrl+n from here: exercise 3: 为每张图写主要 collective" in head
        first_page = " ".join(reading_text(app).split())
        assert "Next: exercise 3: 为每张图写主要 collective" in first_page
        assert "read 一句话定义" not in first_page
        await pilot.press("ctrl+n")
        await pilot.pause()
        assert last_message(notified).startswith("Step 8/25, part 2/8: exercise 3")


async def test_the_plan_view_shows_the_next_step_at_every_size(tmp_path: Path) -> None:
    """With the first 15 steps done, the plan opens on the 16th, highlighted and on screen (the
    first ◌ in the list), at 40x12 as at 160x50: on a short screen the counts give their rows
    to the steps (they had none at 40x12), on a taller one they are shown above them."""
    import dataclasses

    from tests.pilot_helpers import screen_lines

    for width, height in ((40, 12), (60, 20), (80, 24), (160, 50)):
        folder = tmp_path / f"{width}x{height}"
        folder.mkdir()
        app = app_for(folder)
        async with app.run_test(size=(width, height)) as pilot:
            await settle(pilot)
            plan = app.main_screen.guide.plan(reviews=True)
            steps = tuple(
                dataclasses.replace(step, state="done" if index < 15 else "todo")
                for index, step in enumerate(plan.steps)
            )
            app.push_screen(PlanScreen(dataclasses.replace(plan, steps=steps), ""))
            await settle(pilot)
            screen = app.screen
            assert isinstance(screen, PlanScreen)
            listing = screen.query_one("#plan-steps", OptionList)
            assert listing.highlighted == 15
            assert listing.region.height >= 5, (width, height)
            lines = screen_lines(app)
            to_do = [n for n, line in enumerate(lines) if "◌ to do" in line]
            assert to_do, (width, height, lines)
            assert listing.region.y <= to_do[0] < listing.region.bottom
            counts = any("sections 0/11 read" in line for line in lines)
            assert counts == (height >= 18), (width, height)


async def test_every_line_of_the_plan_view_is_reached_by_keys(tmp_path: Path) -> None:
    """At 80x24 the objectives' ratings and the reviews line, below the steps, are scrolled to by
    End, ctrl+End, PageDown and Down; enter there stays in the plan."""
    app = app_for(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        for key in ("end", "ctrl+end", "pagedown", "down"):
            await pilot.press("f11")
            await pilot.pause()
            plan_screen = app.screen
            assert isinstance(plan_screen, PlanScreen)
            steps = plan_screen.query_one("#plan-steps", OptionList)
            for _ in range(steps.option_count):  # down wraps round at the end: stop there
                await pilot.press(key)
                if steps.highlighted == steps.option_count - 1:
                    break
            await pilot.pause()
            assert steps.highlighted == steps.option_count - 1, key
            assert steps.scroll_y == steps.max_scroll_y > 0, key
            await pilot.press("enter")
            await pilot.pause()
            assert app.screen is plan_screen
            await pilot.press("escape")
            await pilot.pause()


async def test_the_session_summary_says_what_this_session_did(tmp_path: Path) -> None:
    app = app_for(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        app.main_screen.goto(8)
        await pilot.pause()
        await pilot.press(*"16 bytes")
        await saved_now(pilot, app)
        await pilot.press("f11", "s")
        await pilot.pause()
        assert isinstance(app.screen, SummaryScreen)
        text = app.screen.text
        assert text.startswith("Session on S15")
        assert "answers written: 1\n  self-check 1: 混合精度 Adam" in text
        assert "\n  self-check 1: 混合精度" in text.split("answers written")[0]
        # A line too long for the dialog (at 40 columns) goes on under itself, two cells
        # deeper (as the summary printed to the terminal does), not at the first column.
        await pilot.resize_terminal(40, 16)
        await pilot.pause()
        drawn = [line.lines for line in app.screen.query(SummaryLine)]
        wrapped = [lines for lines in drawn if len(lines) > 1 and lines[0].startswith("  s")]
        assert wrapped, drawn
        assert all(line.startswith("    ") for lines in wrapped for line in lines[1:]), wrapped
        await pilot.press("escape", "escape")
        await pilot.press("ctrl+q")
    (session,) = saved(tmp_path)["sessions"]  # type: ignore[misc]
    assert session["answers_written"] == ["self-check-adam-memory"]
    assert session["start"].endswith("+00:00")


def test_every_place_of_a_fresh_plan_is_reached_once_in_order() -> None:
    """What ctrl+n walks through on a fresh plan: the places in the plan's order."""
    from engine.progress import LessonProgress

    plan = build_plan(LESSON, LessonProgress("S15"))
    places = study_places(plan, LessonProgress("S15"))
    assert len(places) == 11 + 1 + 14 + 4 + 5 + 1
    assert [place.note_id for place in places if place.step.id.endswith("diagrams")] == [
        "ex2.dp.split",
        "ex2.fsdp.split",
        "ex2.tp.split",
        "ex2.pp.split",
    ]


async def test_reading_in_a_read_only_window_quits_at_once(tmp_path: Path) -> None:
    other = ProgressStore(tmp_path)
    assert other.lock()
    try:
        app = app_for(tmp_path)
        async with app.run_test(size=SIZE) as pilot:
            await pilot.press("right_square_bracket", "end")
            await wait_until(pilot, lambda: "definition" in app.progress.read)
            assert app.store.read_only and "definition" in app.progress.read
            assert not app.dirty  # reading alone: nothing to ask about when quitting
            await pilot.press("ctrl+q")
            await pilot.pause()
        assert app.return_code == 0
    finally:
        other.unlock()


@pytest.mark.parametrize(
    ("language", "first", "second"),
    [
        ("en", "Step 1/25: read 一句话定义. Read it;", "Step 2/25: read 学习目标."),
        ("zh", "第 1/25 步：阅读“一句话定义”。", "第 2/25 步：阅读“学习目标”。"),
    ],
)
async def test_ctrl_n_says_which_section_it_moved_on_to(
    tmp_path: Path, language: str, first: str, second: str
) -> None:
    """ctrl+n says how reading goes on once; moving on to the next section to read replaces that
    message at once (it names a step left behind) with a line naming the new step, in English
    and in Chinese."""
    from tui.app import make_app

    app = make_app(progress_dir=tmp_path, language=language)
    async with app.run_test(size=(120, 40), notifications=True) as pilot:

        def toasts() -> list[str]:
            return [str(toast.render()) for toast in app.screen.query("Toast")]

        await settle(pilot)
        await pilot.press(*START_RATINGS, "ctrl+n")
        await wait_until(pilot, lambda: any(first in text for text in toasts()))
        await pilot.press("ctrl+n")
        await wait_until(pilot, lambda: app.main_screen.current_section != "definition")
        await wait_until(pilot, lambda: any(second in text for text in toasts()))
        assert not any(first in text for text in toasts())
        assert all(len(text.splitlines()) == 1 for text in toasts()), toasts()
        assert "definition" in app.progress.read


async def test_ctrl_n_that_reads_a_section_says_the_next_step_and_a_question_stays_in_sight(
    tmp_path: Path,
) -> None:
    """At 80x24, the ctrl+n whose page down reads a long section to its end says so and names
    the step ctrl+n goes to next (it said nothing); the ctrl+n that then goes up to self-check
    1's box leaves the question above the box in sight beside the message (the message covered
    it for 4 s)."""
    app = app_for(tmp_path)
    notified = Notified()
    async with app.run_test(size=(80, 24), message_hook=notified.hook, notifications=True) as pilot:
        await settle(pilot)
        for section_id, title, after in (
            ("mechanism", "机制与推导", "step 5/25, read 最小练习或观察步骤"),
            ("self-check", "自检问题", "step 14/25, self-check 1: "),
        ):
            await goto_section(pilot, app, section_id)
            for _ in range(12):
                if section_id in app.progress.read:
                    break
                await pilot.press("ctrl+n")
                await settle(pilot)
            assert section_id in app.progress.read
            said = f"{title}: read to its end. Next, ctrl+n: {after}"
            assert last_message(notified).startswith(said), last_message(notified)
        await pilot.press("ctrl+n")
        box = next(box for box in app.query(NoteBox) if box.item.id == LESSON.self_check[0].id)
        await wait_until(pilot, lambda: app.focused is box.text_area)
        question = box.query_one(".note-label")
        reading = app.query_one("#reading")

        def question_in_sight() -> bool:
            toasts = [toast.region for toast in app.screen.query("Toast")]
            return (
                bool(toasts)
                and reading.region.contains_region(question.region)
                and not any(toast.overlaps(question.region) for toast in toasts)
            )

        await wait_until(pilot, question_in_sight, timeout=3)
        assert last_message(notified).startswith("Step 14/25: self-check 1.")


async def test_the_plan_view_lines_up_by_terminal_cells_in_chinese(tmp_path: Path) -> None:
    """In Chinese the state words (已完成, 待做, 进行中) are padded by terminal cells, not
    characters: every step's text starts at the same column, and its wrapped lines start there
    too, under the text."""
    import dataclasses
    import re

    from rich.cells import cell_len

    from tests.pilot_helpers import screen_lines
    from tui.app import make_app

    app = make_app(progress_dir=tmp_path, language="zh")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        plan = app.main_screen.guide.plan(reviews=True)
        states = ("done", "todo", "started")
        steps = tuple(
            dataclasses.replace(step, state=states[index % 3])
            for index, step in enumerate(plan.steps)
        )
        app.push_screen(PlanScreen(dataclasses.replace(plan, steps=steps), ""))
        await settle(pilot)
        step_line = re.compile(r"(.*▊[✓◌◔] \S+ +)\S")
        continued = re.compile(r"(.*▊ +)\S")
        firsts, nexts = set(), set()
        for line in screen_lines(app):
            if match := step_line.match(line):
                firsts.add(cell_len(match.group(1)))
            elif match := continued.match(line):
                nexts.add(cell_len(match.group(1)))
        assert len(firsts) == 1 and nexts == firsts, (firsts, nexts)


async def test_moving_through_the_outline_reads_nothing(tmp_path: Path) -> None:
    """Sections passed by the outline's highlight were shown, not read: the plan and the
    outline's marks stay as they were, at a wide and at a small screen."""
    for size in ((120, 40), SIZE):
        folder = tmp_path / f"{size[0]}x{size[1]}"
        folder.mkdir()
        app = app_for(folder)
        async with app.run_test(size=size) as pilot:
            await pilot.pause()
            await pilot.press("ctrl+o", *["down"] * 6, "escape")
            await settle(pilot)
            assert app.main_screen.current_section != "definition"  # the outline did move
            assert app.progress.read == []
            outline = app.query_one("#outline", OptionList)
            assert not any(
                str(outline.get_option(section.id).prompt).startswith("✓ ")
                for section in LESSON.sections
            )


async def test_a_section_is_read_when_the_learner_scrolls_through_it(tmp_path: Path) -> None:
    """Scrolling the reader to a long section's end reads it; a short one shown whole is read
    once the learner scrolls (or tries to) in it; moving past a section with ] does not."""
    app = app_for(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("right_square_bracket", "right_square_bracket")  # to objectives
        await settle(pilot)
        assert app.progress.read == []
        await app.main_screen.guide.show_in_reader("mechanism")
        reading = app.query_one("#reading")
        app.set_focus(reading)
        await settle(pilot)
        assert reading.max_scroll_y > 0 and "mechanism" not in app.progress.read
        await pilot.press("pagedown")
        await settle(pilot)
        assert "mechanism" not in app.progress.read  # not yet at its end
        await pilot.press("end")
        await wait_until(pilot, lambda: "mechanism" in app.progress.read)
    app = app_for(tmp_path / "short")
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await app.main_screen.guide.show_in_reader("definition")
        reading = app.query_one("#reading")
        app.set_focus(reading)
        await settle(pilot)
        assert reading.max_scroll_y == 0 and app.progress.read == []
        await pilot.press("down")
        await wait_until(pilot, lambda: "definition" in app.progress.read)


async def test_ctrl_n_from_tps_last_box_goes_to_pps_first_box_and_names_it(
    tmp_path: Path, notified: Notified
) -> None:
    """DP, FSDP and TP written box by box in the Diagrams pane, the learner in TP's "one wait"
    box (exercise 3): ctrl+n went to PP's exercise 3 box, past PP's "which dimension is split"
    (exercise 2), and the learner typed the split there. It goes to PP's split box, first of
    PP's boxes on screen, and says so."""
    written = [
        f"{note}: x"
        for strategy in ("dp", "fsdp", "tp")
        for note in (f"ex2.{strategy}.split", f"ex3.{strategy}.comm", f"ex3.{strategy}.wait")
    ]
    in_progress(tmp_path, "notes: {" + ", ".join(written) + "}\n", schema_version=2)
    app = app_for(tmp_path)
    async with app.run_test(size=SIZE, message_hook=notified.hook) as pilot:
        await pilot.press("f4")
        await settle(pilot)
        pane = app.query_one(DiagramsPane)
        pane.query_one("#strategy").value = "tp"
        await wait_until(
            pilot, lambda: any(b.item.id == "ex3.tp.wait" for b in pane.query(NoteBox))
        )
        box = next(b for b in pane.query(NoteBox) if b.item.id == "ex3.tp.wait")
        app.screen.set_focus(box.text_area)
        await pilot.press("end", "ctrl+n")
        await settle(pilot)
        box = app.focused.parent if app.focused else None
        assert isinstance(box, NoteBox) and box.item.id == "ex2.pp.split"
        assert str(pane.query_one("#strategy").value) == "pp"
        assert last_message(notified).startswith(
            "Step 7/25, part 4/4: exercise 2, PP: which dimension is split."
        )
        await wait_until(pilot, lambda: in_view(box.text_area))


async def test_ctrl_n_from_a_pane_the_learner_went_to_goes_to_the_first_unfinished_step(
    tmp_path: Path, notified: Notified
) -> None:
    """ctrl+n past exercise 2's DP note, then the Ledger by hand (F2, the learner's own 3B model
    with its activations: exercise 1 done there): the learner has left the note ctrl+n put them
    at, so ctrl+n goes to the first unfinished step in the plan's order (exercise 2's DP note,
    the plan view's next step), not on from DP's exercise 3 note. Each note says which part of
    its step it is."""
    app = app_for(tmp_path)
    async with app.run_test(size=SIZE, message_hook=notified.hook) as pilot:
        await settle(pilot)
        for _ in range(60):
            await pilot.press("ctrl+n")
            await pilot.pause()
            if "exercise 2, DP" in last_message(notified):
                break
        else:
            raise AssertionError("ctrl+n never reached exercise 2's DP note")
        assert "Step 7/25, part 1/4: exercise 2, DP" in last_message(notified)
        await pilot.press("ctrl+n")  # DP's next box in the Diagrams pane: exercise 3
        await pilot.pause()
        assert "Step 8/25, part 1/8: exercise 3, DP" in last_message(notified)
        await pilot.press("f2")
        await pilot.pause()
        await pilot.press("end", "backspace", "backspace", "3", "B")
        await give_activations(pilot, app)
        plan = build_plan(LESSON, app.progress)
        assert plan.step("exercise:exercise-ledger").done
        following = plan.next_step
        assert following is not None and following.id == "exercise:exercise-diagrams"
        await pilot.press("ctrl+n")
        await pilot.pause()
        assert "Step 7/25, part 1/4: exercise 2, DP" in last_message(notified)
        box = app.focused.parent if app.focused else None
        assert isinstance(box, NoteBox) and box.item.id == "ex2.dp.split"


@pytest.mark.parametrize(
    ("language", "expected"),
    [
        ("en", "1. 能拆解参数、梯度、优化器状态、activation 与临时 buffer 的内存来源: "),
        ("zh", "1. 能拆解参数、梯度、优化器状态、activation 与临时 buffer 的内存来源："),
    ],
)
def test_the_plan_views_objective_lines_put_no_colon_after_a_full_stop(
    language: str, expected: str
) -> None:
    """F11 listed ``…的内存来源。: not rated -> not rated``: the objective's own full stop,
    then the label's colon."""
    from engine.i18n import current_language, set_language
    from engine.progress import LessonProgress
    from tui.screens.study import objective_lines

    before = current_language()
    set_language(language)
    try:
        lines = objective_lines(build_plan(LESSON, LessonProgress("S15")))
    finally:
        set_language(before)
    assert lines[0].startswith(expected), lines[0]
    assert not any("。:" in line or "。：" in line for line in lines)


# The sizes where the side pane replaces the lesson: ctrl+n's side pane is built when shown.
NARROW_SIZES = [(40, 12), (60, 20)]
FIRST_FIVE_READ = "read: [definition, objectives, core, mechanism, exercises]\n"


async def left_at(progress_dir: Path, section_id: str) -> None:
    """Open the app, go to section ``section_id`` in the reader, quit (ctrl+q): the next start
    reopens there, the reader focused."""
    app = app_for(progress_dir)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await goto_section(pilot, app, section_id)
        await pilot.press("ctrl+q")


@pytest.mark.parametrize("size", NARROW_SIZES)
async def test_ctrl_n_after_a_restart_puts_the_cursor_in_the_ledger_field_it_names(
    tmp_path: Path, notified: Notified, size: tuple[int, int]
) -> None:
    """Sections 1-5 read, exercise 1 not done (params N 1B, seq empty), the app restarted on
    the exercises section where the side pane replaces the lesson: ctrl+n says exercise 1 and
    seq len s, and the keys typed at once go into seq len s; params N keeps its 1B. The side
    pane shown in the lesson's place focused its first field (params N) a moment after ctrl+n
    had put the cursor in seq: 4096 replaced the 1B (Textual's Input selects its whole value on
    focus), out of sight."""
    in_progress(tmp_path, FIRST_FIVE_READ + "forms: {ledger: {params: 1B}}\n")
    await left_at(tmp_path, "exercises")
    app = app_for(tmp_path)
    async with app.run_test(size=size, message_hook=notified.hook) as pilot:
        await settle(pilot)
        await pilot.press("ctrl+n", *"4096")
        await saved_now(pilot, app)
        assert last_message(notified).startswith("Step 6/25: exercise 1. List the four columns")
        ledger = app.query_one("LedgerPane")
        assert app.focused is ledger.query_one("#field-seq", Input)
        assert ledger.query_one("#field-seq", Input).value == "4096"
        assert ledger.query_one("#field-params", Input).value == "1B"
    form = saved(tmp_path)["forms"]["ledger"]  # type: ignore[index]
    assert (form["params"], form["seq"]) == ("1B", "4096")


@pytest.mark.parametrize("size", NARROW_SIZES)
async def test_ctrl_n_after_a_restart_puts_the_cursor_in_the_diagrams_note_it_names(
    tmp_path: Path, notified: Notified, size: tuple[int, int]
) -> None:
    """The same in the Diagrams pane: exercise 1 done, the app restarted on the mechanism
    section; ctrl+n says exercise 2's DP note, and the keys typed at once are written in the
    DP note's box (the pane's strategy list took the focus after ctrl+n's, and the text was
    refused: "No text box has the focus here")."""
    ledger = yaml.safe_dump({"params": "7B", **ACTIVATION_INPUTS}, default_flow_style=True)
    figures = {"parameters": 14e9, "gradients": 14e9, "adam_states": 84e9, "activations": 1e11}
    in_progress(
        tmp_path,
        FIRST_FIVE_READ
        + f"forms: {{ledger: {ledger.strip()}}}\n"
        + f"figures: {{exercise1: {yaml.safe_dump(figures, default_flow_style=True).strip()}}}\n",
    )
    assert (
        build_plan(LESSON, ProgressStore(tmp_path).load("S15").progress)
        .step("exercise:exercise-ledger")
        .done
    )
    await left_at(tmp_path, "mechanism")
    app = app_for(tmp_path)
    async with app.run_test(size=size, message_hook=notified.hook) as pilot:
        await settle(pilot)
        await pilot.press("ctrl+n", *"NOTEPROBE")
        await saved_now(pilot, app)
        assert "Step 7/25, part 1/4: exercise 2, DP" in last_message(notified)
        assert not any("Not typed" in message for message in notified.messages)
        box = app.focused.parent if app.focused else None
        assert isinstance(box, NoteBox) and box.item.id == "ex2.dp.split"
        assert box.text_area.text == "NOTEPROBE"
    assert saved(tmp_path)["notes"] == {"ex2.dp.split": "NOTEPROBE"}


async def test_ctrl_n_withdraws_its_message_once_the_step_it_asks_for_is_done(
    tmp_path: Path,
) -> None:
    """ctrl+n's message says what is left of the step it went to. Once the learner has done it,
    the message said so no longer: "Not done yet: activations still need 'heads a'" stayed up
    after heads a was typed (exercise 1 done in the header and the lesson), and "Write your note
    in the box" after the note was written. It goes at once, as the plan says done."""
    in_progress(tmp_path, FIRST_FIVE_READ + "forms: {ledger: {params: 1B}}\n")
    app = app_for(tmp_path)
    async with app.run_test(size=SIZE, notifications=True) as pilot:

        def toasts() -> str:
            return " ".join(str(toast.render()) for toast in app.screen.query("Toast"))

        await settle(pilot)
        await goto_section(pilot, app, "exercises")
        await pilot.press("ctrl+n", *"4096", "ctrl+n", *"24", "ctrl+n", *"2048", "ctrl+n")
        await saved_now(pilot, app)
        # Saved, the plan drawn again: the step is not done, and the message stays.
        assert "still need 'heads a'" in toasts().replace("\xa0", " "), toasts()
        await pilot.press(*"16")
        await saved_now(pilot, app)
        assert build_plan(LESSON, app.progress).step("exercise:exercise-ledger").done
        assert "Not done yet" not in toasts(), toasts()
        await pilot.press("ctrl+n")
        await wait_until(pilot, lambda: "exercise 2, DP" in toasts())
        await pilot.press(*"rows")
        await saved_now(pilot, app)
        assert "exercise 2, DP" not in toasts(), toasts()


async def test_ctrl_n_stays_at_exercise_1_until_every_activation_input_is_given(
    tmp_path: Path, notified: Notified
) -> None:
    """Exercise 1 is done once activations are computed: seq len s and the model's shape
    (layers L, hidden h, heads a). ctrl+n with seq given and the shape not went on to exercise
    2's DP note, so a fast typist's next keys (24, for layers) were written there: it stays at
    exercise 1, in the next empty input, and says which are left; with all four given it goes
    on to the DP note. (With none of them given, ctrl+n still passes exercise 1 by: see
    test_ctrl_n_from_a_pane_the_learner_went_to_goes_to_the_first_unfinished_step.)"""
    in_progress(tmp_path, FIRST_FIVE_READ + "forms: {ledger: {params: 1B}}\n")
    app = app_for(tmp_path)
    async with app.run_test(size=SIZE, message_hook=notified.hook) as pilot:
        await settle(pilot)
        await goto_section(pilot, app, "exercises")
        await pilot.press("ctrl+n", *"4096")
        ledger = app.query_one("LedgerPane")

        def field(name: str) -> Input:
            return ledger.query_one(f"#field-{name}", Input)

        assert field("seq").value == "4096"
        await pilot.press("ctrl+n", *"24")
        await saved_now(pilot, app)
        assert app.focused is field("layers") and field("layers").value == "24"
        # The labels are kept whole on a line (no-break spaces inside them).
        assert last_message(notified).replace("\xa0", " ") == (
            "Step 6/25: exercise 1. Not done yet: activations still need 'layers L', "
            "'hidden h', 'heads a' (a model fills the shape)."
        )
        assert saved(tmp_path)["notes"] == {}
        await pilot.press("ctrl+n", *"2048", "ctrl+n", *"16")
        await saved_now(pilot, app)
        assert (field("hidden").value, field("heads").value) == ("2048", "16")
        assert (
            last_message(notified)
            .replace("\xa0", " ")
            .endswith("Not done yet: activations still need 'heads a' (a model fills the shape).")
        )
        assert build_plan(LESSON, app.progress).step("exercise:exercise-ledger").done
        await pilot.press("ctrl+n", *"rows")
        await saved_now(pilot, app)
        assert "Step 7/25, part 1/4: exercise 2, DP" in last_message(notified)
    assert saved(tmp_path)["notes"] == {"ex2.dp.split": "rows"}
    form = saved(tmp_path)["forms"]["ledger"]  # type: ignore[index]
    shape = (form["params"], form["seq"], form["layers"], form["hidden"], form["heads"])
    assert shape == ("1B", "4096", "24", "2048", "16")
