"""The study plan (engine/plan.py): each step's state from hand-written progress files, the
counts, the next step, the objectives, and ``shardbook plan``."""

from __future__ import annotations

import datetime as dt
import json
import random
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cli.main import main
from engine.exercises import LEDGER_FORM_DEFAULTS
from engine.lesson import Lesson, load_lesson
from engine.plan import (
    ReviewOutlook,
    Step,
    build_plan,
    render_plan,
    review_outlook,
)
from engine.progress import LessonProgress, ProgressStore

ROOT = Path(__file__).resolve().parent.parent
NOW = dt.datetime(2026, 12, 7, 12, 0, tzinfo=dt.UTC)
NO_REVIEWS = ReviewOutlook(at=NOW)
# S15 in the lesson's order: 11 sections, 5 exercises, 4 self-check questions, 5 reflection fields.
SECTIONS = (
    "definition",
    "objectives",
    "core",
    "mechanism",
    "exercises",
    "misconceptions",
    "scenario",
    "self-check",
    "course-alignment",
    "deep-study",
    "reflection",
)


def progress_from(tmp_path: Path, body: str) -> LessonProgress:
    """A progress file written by hand (schema 2), loaded as the app loads it."""
    text = f"schema_version: 2\nlesson: S15\nstatus: in-progress\n{body}"
    (tmp_path / "S15.yaml").write_text(text, encoding="utf-8")
    result = ProgressStore(tmp_path).load("S15", quarantine=False)
    return result.progress


def states(lesson: Lesson, progress: LessonProgress) -> dict[str, str]:
    return {step.id: step.state for step in build_plan(lesson, progress, reviews=NO_REVIEWS).steps}


def test_a_fresh_plan_lists_every_step_in_the_lesson_s_order(lesson: Lesson) -> None:
    plan = build_plan(lesson, LessonProgress("S15"), reviews=NO_REVIEWS)
    ids = [step.id for step in plan.steps]
    assert ids[:5] == [f"read:{s}" for s in SECTIONS[:5]]
    # A section's own steps follow its reading step.
    assert ids[5:10] == [
        "exercise:exercise-ledger",
        "exercise:exercise-diagrams",
        "exercise:exercise-communication",
        "exercise:exercise-slow-interconnect",
        "exercise:exercise-real-factor",
    ]
    assert ids[10:13] == ["read:misconceptions", "read:scenario", "read:self-check"]
    assert [s.kind for s in plan.steps[13:17]] == ["self-check"] * 4
    assert ids[17:20] == ["read:course-alignment", "read:deep-study", "read:reflection"]
    assert [s.kind for s in plan.steps[20:25]] == ["reflection"] * 5
    assert ids[25:] == ["reviews"]
    assert [s.number for s in plan.steps if s.kind == "exercise"] == [1, 2, 3, 4, 5]
    assert [s.worked_in for s in plan.steps if s.kind == "exercise"] == [
        "ledger",
        "diagrams",
        "diagrams",
        "tradeoffs",
        "tradeoffs",
    ]
    assert {s.worked_in for s in plan.steps if s.kind in ("read", "self-check", "reflection")} == {
        "reader"
    }
    assert plan.step("reviews").worked_in == "quiz"
    assert plan.step("self-check:self-check-fsdp-vs-tp").title == (
        "FSDP 与 TP 分别切什么，通信时点有何不同？"
    )
    assert plan.step("reflection:reflection-memory-ledger").title == "我的训练内存账本"
    # Nothing done; with nothing due the reviews are done (none is due).
    assert {s.state for s in plan.steps if s.kind != "reviews"} == {"todo"}
    assert plan.step("reviews").state == "done"
    assert plan.figure == "0/25"
    assert plan.next_step is not None and plan.next_step.id == "read:definition"
    assert plan.implied_status == "not-started"
    assert plan.counts.line() == (
        "sections 0/11 read, exercises 0/5, self-check 0/4 answered, 0 revealed, "
        "reflections 0/5, reviews due 0"
    )


def test_sections_are_read_when_recorded(lesson: Lesson, tmp_path: Path) -> None:
    progress = progress_from(tmp_path, "read: [definition, core]\n")
    got = states(lesson, progress)
    assert got["read:definition"] == got["read:core"] == "done"
    assert got["read:objectives"] == "todo"
    plan = build_plan(lesson, progress, reviews=NO_REVIEWS)
    assert plan.next_step is not None and plan.next_step.id == "read:objectives"
    assert plan.section_state("definition") == "done"
    assert plan.counts.sections_read == 2 and plan.implied_status == "in-progress"


@pytest.mark.parametrize(
    ("forms", "state"),
    [
        ("", "todo"),
        # ctrl+g's 1B example is the form as it opens: loading it alone does not do exercise 1.
        ("forms: {ledger: {params: 1B, preset: mixed-adam, dp: '1', zero: '0'}}\n", "started"),
        (
            "forms: {ledger: {params: 1B, seq: '2048', layers: '24', hidden: '2048'}}\n"
            "figures: {exercise1: {parameters: 2.0e+9}}\n",
            "done",
        ),
        # Exercise 1 asks for four columns: a model of the learner's own without seq has no
        # activations ("not computed"), so it is started, not done.
        ("forms: {ledger: {params: 7B}}\nfigures: {exercise1: {parameters: 2.0e+9}}\n", "started"),
        # A changed form that computed nothing (a field left invalid: the Ledger saves no
        # figures) is not a result of the learner's own.
        ("forms: {ledger: {params: ''}}\nfigures: {exercise1: {}}\n", "started"),
        ("forms: {ledger: {params: 7B}}\n", "started"),
        # A refused field keeps the last good result on screen, saved beside the form: it
        # decides (the learner's 7B, or the form as it opens).
        (
            "forms: {ledger: {params: abc}, ledger.last-good: {params: 7B, seq: '4096', "
            "layers: '32', hidden: '4096', heads: '32'}}\n"
            "figures: {exercise1: {}}\n",
            "done",
        ),
        (
            "forms: {ledger: {params: abc}, ledger.last-good: {params: 7B}}\n"
            "figures: {exercise1: {}}\n",
            "started",
        ),
        (
            "forms: {ledger: {params: 7B, seq: '4096'}, ledger.last-good: {params: 1B}}\n"
            "figures: {exercise1: {}}\n",
            "started",
        ),
        # Another pane's form is not exercise 1's work.
        ("forms: {bubble: {stages: '8'}}\n", "todo"),
    ],
)
def test_exercise_1_is_done_by_a_ledger_result_with_its_four_columns(
    lesson: Lesson, tmp_path: Path, forms: str, state: str
) -> None:
    assert states(lesson, progress_from(tmp_path, forms))["exercise:exercise-ledger"] == state


@pytest.mark.parametrize(
    ("notes", "state"),
    [
        ("{}", "todo"),
        ("{ex2.dp.split: the batch, ex2.tp.split: '   '}", "started"),
        # EP and CP have note boxes too, but exercise 2 asks for DP, FSDP, TP and PP.
        ("{ex2.ep.split: experts, ex2.cp.split: sequence}", "todo"),
        (
            "{ex2.dp.split: batch, ex2.fsdp.split: states, ex2.tp.split: matrices, "
            "ex2.pp.split: layers}",
            "done",
        ),
    ],
)
def test_exercise_2_is_done_when_its_four_notes_are_written(
    lesson: Lesson, tmp_path: Path, notes: str, state: str
) -> None:
    got = states(lesson, progress_from(tmp_path, f"notes: {notes}\n"))
    assert got["exercise:exercise-diagrams"] == state


def test_exercises_3_to_5(lesson: Lesson, tmp_path: Path) -> None:
    six = ", ".join(f"ex3.{s}.{p}: x" for s in ("dp", "fsdp", "tp") for p in ("comm", "wait"))
    progress = progress_from(tmp_path, f"notes: {{{six}, ex3.pp.comm: p2p, ex4: TP first}}\n")
    got = states(lesson, progress)
    assert got["exercise:exercise-communication"] == "started"  # ex3.pp.wait is missing
    assert got["exercise:exercise-slow-interconnect"] == "done"
    assert got["exercise:exercise-real-factor"] == "todo"
    progress.notes["ex3.pp.wait"] = "the bubble"
    assert states(lesson, progress)["exercise:exercise-communication"] == "done"


def test_self_check_and_reflections(lesson: Lesson, tmp_path: Path) -> None:
    body = (
        "answers: {self-check-adam-memory: 16 B/param, self-check-more-devices: '  '}\n"
        "revealed: [self-check-adam-memory]\n"
        "reflections: {reflection-tradeoff: ZeRO-3 vs TP, reflection-open-assumption: ''}\n"
    )
    plan = build_plan(lesson, progress_from(tmp_path, body), reviews=NO_REVIEWS)
    got = {step.id: step.state for step in plan.steps}
    assert got["self-check:self-check-adam-memory"] == "done"
    assert got["self-check:self-check-more-devices"] == "todo"  # blank is not an answer
    assert got["reflection:reflection-tradeoff"] == "done"
    assert got["reflection:reflection-open-assumption"] == "todo"
    counts = plan.counts
    assert (counts.self_check_answered, counts.self_check_revealed, counts.reflections_written) == (
        1,
        1,
        1,
    )
    assert plan.section_state("self-check") == "started"
    assert plan.section_state("reflection") == "started"
    assert plan.section_state("scenario") == "todo"


def test_a_finished_plan(lesson: Lesson, tmp_path: Path) -> None:
    notes = [n for item in lesson.exercises for n in item.notes]
    body = (
        f"read: [{', '.join(SECTIONS)}]\n"
        "forms: {ledger: {params: 1B, seq: '2048', layers: '16', hidden: '2048', heads: '16'}}\n"
        "figures: {exercise1: {parameters: 2.0e+9}}\n"
        f"notes: {{{', '.join(f'{n}: mine' for n in notes)}}}\n"
        f"answers: {{{', '.join(f'{q.id}: mine' for q in lesson.self_check)}}}\n"
        "revealed: [self-check-adam-memory, self-check-fsdp-vs-tp]\n"
        f"reflections: {{{', '.join(f'{r.id}: mine' for r in lesson.reflection_fields)}}}\n"
    )
    progress = progress_from(tmp_path, body)
    plan = build_plan(lesson, progress, reviews=NO_REVIEWS)
    assert plan.complete and plan.next_step is None and plan.unfinished == ()
    assert plan.figure == "25/25"
    assert plan.counts.line() == (
        "sections 11/11 read, exercises 5/5, self-check 4/4 answered, 2 revealed, "
        "reflections 5/5, reviews due 0"
    )
    assert all(plan.section_state(section) == "done" for section in SECTIONS)
    # With reviews due, the plan is not finished and the reviews are what is left.
    due = build_plan(lesson, progress, reviews=ReviewOutlook(at=NOW, due_now=3))
    assert not due.complete and [step.id for step in due.unfinished] == ["reviews"]
    assert due.counts.line().endswith("reviews due 3")
    assert due.figure == "25/25"


def test_next_after_skips_the_current_step_and_goes_round(lesson: Lesson, tmp_path: Path) -> None:
    progress = progress_from(tmp_path, "read: [definition, objectives, core, mechanism]\n")
    plan = build_plan(lesson, progress, reviews=NO_REVIEWS)
    assert plan.next_after(None) == plan.next_step
    assert plan.next_step is not None and plan.next_step.id == "read:exercises"
    assert plan.next_after("read:exercises") == plan.step("exercise:exercise-ledger")
    # From the last reflection field, round to the first unfinished step.
    assert plan.next_after("reflection:reflection-open-assumption") == plan.step("read:exercises")


def test_objectives_list_what_trains_them_and_both_ratings(lesson: Lesson, tmp_path: Path) -> None:
    body = (
        "answers: {self-check-adam-memory: sixteen bytes}\n"
        "ratings: {objective-memory-sources: {start: not-yet, end: can}}\n"
    )
    plan = build_plan(lesson, progress_from(tmp_path, body), reviews=NO_REVIEWS)
    memory = plan.objectives[0]
    assert memory.id == "objective-memory-sources"
    assert memory.trained_by == ("exercise:exercise-ledger", "self-check:self-check-adam-memory")
    assert memory.trained_done == 1
    assert (memory.rating.start, memory.rating.end) == ("not-yet", "can")
    assert plan.objectives[3].trained_by == (
        "exercise:exercise-slow-interconnect",
        "exercise:exercise-real-factor",
        "self-check:self-check-more-devices",
    )
    assert (plan.objectives[3].rating.start, plan.objectives[3].rating.end) == (None, None)
    text = render_plan(plan)
    assert "not yet -> can; trained by 1/2 done" in text


def test_a_rating_alone_makes_the_lesson_in_progress(lesson: Lesson, tmp_path: Path) -> None:
    body = "ratings: {objective-collectives: {start: partly}}\n"
    plan = build_plan(lesson, progress_from(tmp_path, body), reviews=NO_REVIEWS)
    assert plan.implied_status == "in-progress"


def test_reviews_fall_due_on_the_fsrs_schedule(lesson: Lesson) -> None:
    from engine.quiz import QuizState, ask, lesson_items

    progress = LessonProgress("S15")
    state = QuizState(progress)
    items = lesson_items(lesson)
    rng = random.Random(0)
    # py-fsrs' default learning steps are 1 and 10 minutes (fsrs.Scheduler learning_steps):
    # a new card rated Again is due in 1 minute, Good in 10.
    state.review(ask(items[0], lesson, rng), 1, NOW)
    state.review(ask(items[1], lesson, rng), 3, NOW)
    before = json.dumps(progress.quiz, sort_keys=True)
    outlook = review_outlook(lesson, progress, NOW + dt.timedelta(minutes=5))
    assert json.dumps(progress.quiz, sort_keys=True) == before  # read only
    assert outlook.due_now == 1
    assert outlook.next_due == NOW + dt.timedelta(minutes=10)
    assert outlook.due_next_day == 1
    plan = build_plan(lesson, progress, NOW + dt.timedelta(minutes=5))
    assert plan.step("reviews").state == "todo" and plan.counts.reviews_due == 1
    later = build_plan(lesson, progress, NOW + dt.timedelta(minutes=11))
    assert later.counts.reviews_due == 2
    assert later.reviews.next_due is None


def test_the_ledger_opens_with_the_defaults_the_plan_compares_with() -> None:
    from tui.widgets.ledger import LedgerPane

    defaults = LedgerPane.defaults()
    assert defaults == dict(LEDGER_FORM_DEFAULTS)


def test_a_lesson_of_other_shape_gets_its_own_plan(tmp_path: Path) -> None:
    from tests.test_study_content import STUDY

    path = tmp_path / "T2.yaml"
    path.write_text(STUDY, encoding="utf-8")
    other = load_lesson(path)
    progress = LessonProgress("T2", notes={"ex2.dp.split": "batch"}, answers={"q1": "because"})
    plan = build_plan(other, progress, reviews=ReviewOutlook(at=NOW))
    assert [(s.id, s.state) for s in plan.steps] == [
        ("read:goals", "todo"),
        ("read:work", "todo"),
        ("exercise:ex-ledger", "todo"),
        ("exercise:ex-notes", "started"),
        ("read:reading", "todo"),
        ("read:questions", "todo"),
        ("self-check:q1", "done"),
        ("reviews", "done"),
    ]
    assert plan.objectives[0].trained_by == ("exercise:ex-ledger", "self-check:q1")
    assert plan.objectives[0].trained_done == 1


# ------------------------------------------------------------------------------ the command


def test_shardbook_plan_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    progress_from(tmp_path, "read: [definition]\nnotes: {ex4: TP first}\n")
    assert main(["plan", "S15", "--json", "--progress-dir", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert out.count("\n") == 1
    data = json.loads(out)
    assert {"lesson", "steps", "counts"} <= set(data)
    assert data["lesson"] == "S15"
    assert set(data["steps"][0]) >= {"id", "kind", "title", "state", "worked_in"}
    steps = {step["id"]: step for step in data["steps"]}
    assert steps["read:definition"]["state"] == "done"
    assert steps["exercise:exercise-slow-interconnect"] == {
        "id": "exercise:exercise-slow-interconnect",
        "kind": "exercise",
        "title": "假设设备互联很慢，判断哪些策略的代价会放大并说明原因。",
        "state": "done",
        "worked_in": "tradeoffs",
        "section": "exercises",
        "item": "exercise-slow-interconnect",
        "number": 4,
    }
    assert data["counts"]["exercises"] == {"done": 1, "started": 0, "total": 5}
    assert data["counts"]["sections"] == {"read": 1, "total": 11}
    assert data["counts"]["self_check"] == {"answered": 0, "revealed": 0, "total": 4}
    assert data["counts"]["reviews_due"] == 0
    assert data["next"] == "read:objectives"
    assert data["figure"] == "2/25"
    # The file was only read.
    assert sorted(p.name for p in tmp_path.iterdir()) == ["S15.yaml"]


def test_shardbook_plan_text_defaults_to_s15(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["plan", "--progress-dir", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    lines = out.splitlines()
    assert lines[0] == "S15 训练内存、Collective 与并行轴全景: 0/25 steps done"
    assert lines[1].startswith("sections 0/11 read, exercises 0/5, self-check 0/4 answered")
    assert lines[2] == "next: read 一句话定义"
    assert "todo     exercise 2    diagrams     分别画 DP、FSDP、TP、PP 的 4 卡示意图" in out
    assert "done     reviews       quiz         spaced review" in out
    assert lines[-1] == "reviews: 0 due now; none scheduled later"
    assert list(tmp_path.iterdir()) == []


def test_shardbook_plan_bad_input_exits_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["plan", "S99", "--progress-dir", str(tmp_path)]) == 2
    assert "LESSON: no lesson 'S99' in " in capsys.readouterr().err
    (tmp_path / "S15.yaml").write_text("schema_version: 2\nlesson: S15\nread: 3\n", "utf-8")
    assert main(["plan", "--progress-dir", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "S15.yaml" in err and "'read' must be a list of ids" in err
    assert (tmp_path / "S15.yaml").read_text("utf-8").endswith("read: 3\n")
    with pytest.raises(SystemExit) as exited:
        main(["plan", "--content-dir"])
    assert exited.value.code == 2
    assert capsys.readouterr().err.startswith("shardbook: plan: ")


def test_step_is_frozen() -> None:
    step = Step("read:core", "read", "核心知识", "todo", "reader")
    with pytest.raises(AttributeError):
        step.state = "done"  # type: ignore[misc]


# ------------------------------------------------------------------------------ properties
def _answer_ids(lesson: Lesson) -> list[tuple[str, str]]:
    """(progress field, id) of everything the learner can write for S15, and its sections."""
    found = [("read", section.id) for section in lesson.sections]
    found += [("notes", note) for item in lesson.exercises for note in item.notes]
    found += [("answers", item.id) for item in lesson.self_check]
    found += [("reflections", item.id) for item in lesson.reflection_fields]
    return found


def _progress_of(entries: list[tuple[str, str]]) -> LessonProgress:
    progress = LessonProgress("S15")
    for field, entry_id in entries:
        if field == "read":
            progress.mark_read(entry_id)
        else:
            getattr(progress, field)[entry_id] = "written"
    return progress


S15_LESSON = load_lesson(ROOT / "content" / "S15.yaml")
ENTRIES = _answer_ids(S15_LESSON)


@settings(max_examples=60, deadline=None)
@given(
    first=st.lists(st.sampled_from(ENTRIES), unique=True),
    more=st.lists(st.sampled_from(ENTRIES), unique=True),
)
def test_writing_more_never_undoes_a_step(
    first: list[tuple[str, str]], more: list[tuple[str, str]]
) -> None:
    before = build_plan(S15_LESSON, _progress_of(first), reviews=NO_REVIEWS)
    after = build_plan(S15_LESSON, _progress_of(first + more), reviews=NO_REVIEWS)
    rank = {"todo": 0, "started": 1, "done": 2}
    for old, new in zip(before.steps, after.steps, strict=True):
        assert rank[new.state] >= rank[old.state], old.id
    for plan in (before, after):
        lesson_steps = [step for step in plan.steps if step.kind != "reviews"]
        assert plan.counts.steps_done == sum(step.done for step in lesson_steps)
        following = plan.next_step
        first_open = next((step for step in plan.steps if not step.done), None)
        assert following == first_open
        for section in S15_LESSON.sections:
            own = [step for step in plan.steps if step.section_id == section.id]
            assert (plan.section_state(section.id) == "done") == all(s.done for s in own)
    # Everything written: every lesson step is done.
    full = build_plan(S15_LESSON, _progress_of(ENTRIES), reviews=NO_REVIEWS)
    assert [step.id for step in full.unfinished] == ["exercise:exercise-ledger"]


def test_ctrl_n_from_a_strategys_last_box_goes_to_the_next_strategys_first(
    lesson: Lesson, tmp_path: Path
) -> None:
    """DP, FSDP and TP written box by box in the Diagrams pane; ctrl+n from TP's "one wait"
    (exercise 3) went to PP's exercise 3 box, past PP's "which dimension is split" (exercise 2,
    earlier in the plan), and the learner typed the split into the collective's box. It goes
    to PP's split, the first of PP's boxes, then to PP's two of exercise 3."""
    from engine.plan import next_place, study_places

    written = [
        f"{note}: x"
        for strategy in ("dp", "fsdp", "tp")
        for note in (f"ex2.{strategy}.split", f"ex3.{strategy}.comm", f"ex3.{strategy}.wait")
    ]
    progress = progress_from(tmp_path, "notes: {" + ", ".join(written) + "}\n")
    places = study_places(build_plan(lesson, progress, reviews=NO_REVIEWS), progress)
    tp_wait = next(place for place in places if place.note_id == "ex3.tp.wait")
    pp_split = next_place(places, tp_wait.key)
    assert pp_split is not None and pp_split.note_id == "ex2.pp.split"
    pp_comm = next_place(places, pp_split.key)
    assert pp_comm is not None and pp_comm.note_id == "ex3.pp.comm"
    pp_wait = next_place(places, pp_comm.key)
    assert pp_wait is not None and pp_wait.note_id == "ex3.pp.wait"
    # The places of each step keep the plan's order among themselves.
    exercise_3 = [
        place.note_id for place in places if place.step.id == "exercise:exercise-communication"
    ]
    assert exercise_3 == [
        f"ex3.{strategy}.{part}"
        for strategy in ("dp", "fsdp", "tp", "pp")
        for part in ("comm", "wait")
    ]


def test_ctrl_n_places_go_note_by_note_after_where_the_learner_is(
    lesson: Lesson, tmp_path: Path
) -> None:
    from engine.plan import next_place, study_places

    progress = progress_from(
        tmp_path,
        "read: [definition, objectives, core, mechanism, exercises]\n"
        "notes: {ex2.dp.split: the batch, ex2.tp.split: '  '}\n",
    )
    places = study_places(build_plan(lesson, progress, reviews=NO_REVIEWS), progress)
    first = next_place(places)
    assert first is not None and first.key == ("exercise:exercise-ledger", "")
    # Exercises 2 and 3 are worked in the Diagrams pane, which shows a strategy's three boxes
    # together (its split, exercise 2; its collective and its wait, exercise 3): from DP's note
    # of exercise 2, DP's two of exercise 3, then FSDP's split.
    after_dp = next_place(places, ("exercise:exercise-diagrams", "ex2.dp.split"))
    assert after_dp is not None and after_dp.note_id == "ex3.dp.comm"
    after_comm = next_place(places, after_dp.key)
    assert after_comm is not None and after_comm.note_id == "ex3.dp.wait"
    after_wait = next_place(places, after_comm.key)
    assert after_wait is not None and after_wait.note_id == "ex2.fsdp.split"
    # TP's split was left blank (not written): from FSDP's wait, TP's split.
    after_fsdp = next_place(places, ("exercise:exercise-communication", "ex3.fsdp.wait"))
    assert after_fsdp is not None and after_fsdp.note_id == "ex2.tp.split"
    # From the last reflection field it goes round to the start; the place itself is skipped.
    last = ("reflection:reflection-open-assumption", "")
    back = next_place(places, last)
    assert back is not None and back.key == ("exercise:exercise-ledger", "")
    done = [place for place in places if not place.done]
    assert next_place(done[:1], done[0].key) is None
