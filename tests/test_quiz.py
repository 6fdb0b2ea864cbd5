"""engine.quiz: items and stable ids, drills against the engines, grading, FSRS scheduling,
the review log (undo, rebuild, archive), statistics and the session queue.

Values: ../shared/reference/VECTORS.md (ZeRO paper Figure 1; Narayanan et al. 2021 §2.2; GPipe;
NCCL-tests doc/PERFORMANCE.md; MPICH alpha-beta costs). FSRS intervals: py-fsrs 6 defaults
(learning steps 1 min and 10 min).
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import math
import random
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.collectives import bus_bandwidth_factor, collective_cost
from engine.errors import InputError, ProgressError
from engine.ledger import LedgerSpec, compute_ledger
from engine.lesson import Lesson, load_lesson
from engine.paths import CHECKOUT_ROOT
from engine.pipeline import PipelineSpec, closed_form_bubble
from engine.progress import LessonProgress, ProgressStore
from engine.quiz import (
    DRILL_TEMPLATES,
    DRILL_TOLERANCE,
    MISCONCEPTIONS,
    Question,
    QuizItem,
    QuizSession,
    QuizState,
    ask,
    drill_params,
    lesson_items,
    lesson_stats,
    make_drill,
    parse_answer,
    review_queue,
)
from engine.strategies import STRATEGIES

NOW = dt.datetime(2026, 3, 1, 9, 0, tzinfo=dt.UTC)
SCALE = {"GB": 1e9, "ms": 1e-3, "fraction": 1.0, "": 1.0}


@pytest.fixture(scope="module")
def lesson() -> Lesson:
    return load_lesson(CHECKOUT_ROOT / "content" / "S15.yaml")


def drill_item(template: str) -> QuizItem:
    return QuizItem(f"drill:{template}", "S15", "drill", template, template)


def engine_value(template: str, params: dict[str, object]) -> float:
    """The engine's own answer, called here directly (not through engine.quiz)."""
    if template == "zero-memory":
        spec = LedgerSpec(params=params["params"], dp=params["dp"], zero=params["zero"])  # type: ignore[arg-type]
        return compute_ledger(spec).model_states_bytes
    if template == "preset-memory":
        spec = LedgerSpec(model=params["model"], dp=params["dp"], zero=params["zero"])  # type: ignore[arg-type]
        return compute_ledger(spec).model_states_bytes
    if template.startswith("bubble"):
        spec_p = PipelineSpec(
            str(params["schedule"]),
            int(params["p"]),  # type: ignore[call-overload]
            int(params["m"]),  # type: ignore[call-overload]
            int(params["v"]),  # type: ignore[call-overload]
        )
        closed = closed_form_bubble(spec_p)
        return (
            closed.bubble_over_ideal if template == "bubble-over-ideal" else closed.bubble_fraction
        )
    if template == "busbw-factor":
        return bus_bandwidth_factor(str(params["op"]), int(params["ranks"]))  # type: ignore[call-overload]
    cost = collective_cost(
        "all-reduce",
        params["ranks"],  # type: ignore[arg-type]
        params["size_bytes"],  # type: ignore[arg-type]
        params["bandwidth"],  # type: ignore[arg-type]
        params["latency"],  # type: ignore[arg-type]
        "ring",
    )
    return cost.time_s


# ---------------------------------------------------------------------------------- drills


def test_a_thousand_drills_match_the_engines_and_grade_at_ten_percent() -> None:
    rng = random.Random(20260301)
    for index in range(1000):
        template = DRILL_TEMPLATES[index % len(DRILL_TEMPLATES)]
        params = drill_params(template, rng)
        question = make_drill(drill_item(template), params)
        expected = engine_value(template, params)
        assert question.expected == expected, (template, params)
        assert question.tolerance == DRILL_TOLERANCE < 0.1
        in_unit = expected / SCALE[question.unit]
        assert question.grade(repr(in_unit)).correct is True, (template, params)
        assert question.grade(question.expected_text().split(" (")[0]).correct is True
        for factor in (1.1, 0.9):
            assert question.grade(repr(in_unit * factor)).correct is False, (template, factor)
        assert question.solution and question.sources


@pytest.mark.parametrize(
    ("template", "params", "expected"),
    [
        # ZeRO paper Figure 1: Psi = 7.5B, N_d = 64: 120 GB, 31.4 GB, 16.6 GB, 1.9 GB.
        ("zero-memory", {"params": 7.5e9, "dp": 64, "zero": 0}, 120e9),
        ("zero-memory", {"params": 7.5e9, "dp": 64, "zero": 1}, 31.40625e9),
        ("zero-memory", {"params": 7.5e9, "dp": 64, "zero": 2}, 16.6406e9),
        ("zero-memory", {"params": 7.5e9, "dp": 64, "zero": 3}, 1.875e9),
        # Narayanan et al. 2021 §2.2: p=4, m=8: 3/8; interleaved v=2: 3/16.
        ("bubble-over-ideal", {"schedule": "1f1b", "p": 4, "m": 8, "v": 1}, 0.375),
        ("bubble-over-ideal", {"schedule": "interleaved-1f1b", "p": 4, "m": 8, "v": 2}, 0.1875),
        # GPipe: (p-1)/(m+p-1) = 3/11.
        ("bubble-fraction", {"schedule": "gpipe", "p": 4, "m": 8, "v": 1}, 3 / 11),
        # NCCL-tests PERFORMANCE.md: all-reduce n=8 factor 1.75, all-gather 0.875.
        ("busbw-factor", {"op": "all-reduce", "ranks": 8}, 1.75),
        ("busbw-factor", {"op": "all-gather", "ranks": 8}, 0.875),
        # Llama 2 7B (6,738,415,616 parameters, Hugging Face Hub) at 16 B/param, ZeRO-3 over 8:
        # 16 × 6,738,415,616 / 8 (ZeRO paper, P_os+g+p).
        ("preset-memory", {"model": "llama2-7b", "dp": 8, "zero": 3}, 2 * 6_738_415_616),
        # MPICH ring: 2(p-1)a + 2n(p-1)/p b, a=5us, 1 GB, 100 GB/s, p=8: 17.57 ms.
        (
            "allreduce-time",
            {"ranks": 8, "size_bytes": 1e9, "bandwidth": 100e9, "latency": 5e-6},
            17.57e-3,
        ),
    ],
)
def test_drills_give_the_reference_values(
    template: str, params: dict[str, object], expected: float
) -> None:
    question = make_drill(drill_item(template), params)
    assert isinstance(question.expected, float)
    assert math.isclose(question.expected, expected, rel_tol=1e-4)


def test_answers_accept_units_and_percentages() -> None:
    memory = make_drill(drill_item("zero-memory"), {"params": 1e9, "dp": 1, "zero": 0})
    assert memory.grade("16").correct is True  # 16 B/param x 1e9 = 16 GB (ZeRO §3.1)
    assert memory.grade("14.9GiB").correct is True
    assert memory.grade("16e9B").correct is True
    assert memory.grade("2").correct is False  # the "parameters x precision" misconception
    bubble = make_drill(
        drill_item("bubble-over-ideal"), {"schedule": "1f1b", "p": 4, "m": 8, "v": 1}
    )
    assert bubble.grade("37.5%").correct is True
    assert bubble.grade("0.375").correct is True
    time = make_drill(
        drill_item("allreduce-time"),
        {"ranks": 8, "size_bytes": 1e9, "bandwidth": 100e9, "latency": 5e-6},
    )
    assert time.grade("17.57").correct is True
    assert time.grade("0.01757s").correct is True
    assert time.grade("17570us").correct is True
    for bad in ("", "abc", "12 parsecs", "nan"):
        with pytest.raises(InputError) as caught:
            time.grade(bad)
        assert caught.value.field == "answer"


@settings(max_examples=200, deadline=None)
@given(
    expected=st.floats(min_value=1e-6, max_value=1e15),
    factor=st.floats(min_value=0.5, max_value=2.0),
)
def test_grader_accepts_exactly_within_the_tolerance(expected: float, factor: float) -> None:
    assert parse_answer(repr(expected), "") == expected
    given_value = expected * factor
    ok = abs(given_value - expected) <= DRILL_TOLERANCE * expected
    question = dataclasses.replace(
        make_drill(drill_item("busbw-factor"), {"op": "all-reduce", "ranks": 8}),
        expected=expected,
    )
    assert question.grade(repr(given_value)).correct is ok


@settings(max_examples=50, deadline=None)
@given(seed=st.integers(min_value=0, max_value=2**32))
def test_drill_params_are_valid_for_every_seed(seed: int) -> None:
    rng = random.Random(seed)
    for template in DRILL_TEMPLATES:
        params = drill_params(template, rng)
        value = make_drill(drill_item(template), params).expected
        assert isinstance(value, float) and math.isfinite(value) and value > 0


# ---------------------------------------------------------------------------------- items


def test_items_have_stable_ids_and_all_four_kinds(lesson: Lesson) -> None:
    items = lesson_items(lesson)
    ids = [item.id for item in items]
    assert len(ids) == len(set(ids))
    kinds = {item.kind for item in items}
    assert kinds == {"self-check", "drill", "misconception", "matching"}
    assert [i.id for i in items if i.kind == "self-check"] == [
        f"self-check:{item.id}" for item in lesson.self_check
    ]
    assert {f"drill:{t}" for t in DRILL_TEMPLATES} <= set(ids)
    assert {f"matching:{name}" for name in STRATEGIES} <= set(ids)
    # The lesson's five misconceptions, each as a false claim and a true counterpart.
    section = lesson.section("misconceptions")
    assert len(section.items) == 5 and set(MISCONCEPTIONS) == {i.id for i in section.items}
    rng = random.Random(1)
    for entry in section.items:
        claim = ask(
            next(i for i in items if i.id == f"misconception:{entry.id}:claim"), lesson, rng
        )
        truth = ask(
            next(i for i in items if i.id == f"misconception:{entry.id}:truth"), lesson, rng
        )
        assert claim.expected is False and truth.expected is True
        assert entry.text in claim.solution and claim.sources
        assert claim.grade(False).correct is True and truth.grade(False).correct is False


def test_editing_wording_keeps_ids(lesson: Lesson) -> None:
    section = lesson.section("self-check")
    edited_items = tuple(
        dataclasses.replace(item, text=item.text + "（改写）") for item in section.items
    )
    edited = dataclasses.replace(
        lesson,
        sections=tuple(
            dataclasses.replace(s, items=edited_items) if s.id == "self-check" else s
            for s in lesson.sections
        ),
    )
    assert [i.id for i in lesson_items(edited)] == [i.id for i in lesson_items(lesson)]


@settings(max_examples=40, deadline=None)
@given(seed=st.integers(min_value=0, max_value=2**32), name=st.sampled_from(sorted(STRATEGIES)))
def test_matching_has_one_right_option_and_tests_both_halves(seed: int, name: str) -> None:
    lesson = load_lesson(CHECKOUT_ROOT / "content" / "S15.yaml")
    item = QuizItem(f"matching:{name}", "S15", "matching", name, name)
    question = ask(item, lesson, random.Random(seed))
    strategy = STRATEGIES[name]
    assert len(question.options) == 4 == len(set(question.options))
    assert isinstance(question.expected, int)
    right = question.options[question.expected]
    assert " + ".join(strategy.collective_names()) in right
    assert question.grade(question.expected).correct is True
    wrong = [i for i in range(4) if i != question.expected]
    assert all(question.grade(i).correct is False for i in wrong)


# ---------------------------------------------------------------------------------- scheduling


def right_answer(question: Question) -> str | bool | int:
    """The answer a learner who knows it gives, in the form the question reads."""
    if question.answer_kind == "number":
        assert isinstance(question.expected, float)
        return repr(question.expected / SCALE[question.unit])
    if question.answer_kind == "text":
        return "我的回答"
    assert question.expected is not None
    return question.expected


def state_for(progress: LessonProgress) -> QuizState:
    return QuizState(progress)


def test_ratings_follow_fsrs_learning_steps_and_rebuild_from_the_log(lesson: Lesson) -> None:
    progress = LessonProgress("S15")
    state = state_for(progress)
    items = lesson_items(lesson)
    rng = random.Random(3)
    good = ask(items[0], lesson, rng)
    again = ask(items[1], lesson, rng)
    card = state.review(good, 3, NOW)
    # py-fsrs 6 defaults: a new card rated Good goes to the second learning step (10 min),
    # Again to the first (1 min).
    assert card.due == NOW + dt.timedelta(minutes=10)
    assert state.review(again, 1, NOW).due == NOW + dt.timedelta(minutes=1)
    later = NOW + dt.timedelta(minutes=10)
    assert state.review(good, 3, later).due > later + dt.timedelta(days=1)
    rebuilt = state.rebuild_cards()
    assert {k: c.to_dict() for k, c in rebuilt.items()} == progress.quiz["cards"]
    assert [entry["rating"] for entry in progress.quiz["log"]] == [3, 1, 3]
    with pytest.raises(InputError):
        state.review(good, 5, NOW)


def test_undo_restores_the_card_from_the_log(lesson: Lesson) -> None:
    progress = LessonProgress("S15")
    state = state_for(progress)
    question = ask(lesson_items(lesson)[0], lesson, random.Random(0))
    state.review(question, 3, NOW)
    before = dict(progress.quiz["cards"])
    state.review(question, 1, NOW + dt.timedelta(minutes=10))
    entry = state.undo()
    assert entry is not None and entry["rating"] == 1
    assert progress.quiz["cards"] == before
    assert state.undo() is not None
    assert progress.quiz["cards"] == {} and progress.quiz["log"] == []
    assert state.undo() is None


def test_state_survives_the_progress_store(tmp_path: Path, lesson: Lesson) -> None:
    store = ProgressStore(tmp_path)
    progress = store.load("S15").progress
    state = state_for(progress)
    items = lesson_items(lesson)
    rng = random.Random(9)
    for index, rating in enumerate((1, 2, 3, 4)):
        question = ask(items[index * 7], lesson, rng)
        state.record_answer(question, question.grade(right_answer(question)), NOW)
        state.review(question, rating, NOW)
        store.save(progress)
    loaded = ProgressStore(tmp_path).load("S15").progress
    assert loaded.quiz == progress.quiz
    again = state_for(loaded)
    for item in items:
        mine, theirs = state.card(item.id), again.card(item.id)
        assert (mine and mine.to_dict()) == (theirs and theirs.to_dict())


def test_removed_items_are_archived_not_deleted(lesson: Lesson) -> None:
    progress = LessonProgress("S15")
    state = state_for(progress)
    items = lesson_items(lesson)
    gone = items[0]
    state.review(ask(gone, lesson, random.Random(0)), 3, NOW)
    kept = items[1:]
    assert state.reconcile(kept, NOW) == [gone.id]
    assert gone.id in progress.quiz["archived"] and gone.id not in progress.quiz["cards"]
    assert progress.quiz["log"][0]["item"] == gone.id
    stats = state.stats(kept, NOW)
    assert (stats.archived, stats.reviewed, stats.reviews) == (1, 0, 1)
    assert state.reconcile(items, NOW) == []
    assert gone.id in progress.quiz["cards"] and not progress.quiz["archived"]


def test_stats_and_queue(lesson: Lesson) -> None:
    progress = LessonProgress("S15")
    state = state_for(progress)
    items = lesson_items(lesson)
    rng = random.Random(0)
    state.review(ask(items[0], lesson, rng), 1, NOW)  # due in 1 min
    state.review(ask(items[1], lesson, rng), 3, NOW)  # due in 10 min
    later = NOW + dt.timedelta(minutes=5)
    stats = state.stats(items, later)
    assert (stats.items, stats.reviewed, stats.new, stats.due, stats.reviews) == (
        len(items),
        2,
        len(items) - 2,
        1,
        2,
    )
    assert stats.retention is not None and 0 < stats.retention <= 1
    assert stats.next_due == (NOW + dt.timedelta(minutes=1)).isoformat()
    entries = [(item, state) for item in items]
    assert [i.id for i in review_queue(entries, later, due_only=True)] == [items[0].id]
    queue = review_queue(entries, later)
    assert queue[0] == items[0] and items[1] not in queue and len(queue) == len(items) - 1
    assert {i.kind for i in queue[1:5]} == {"self-check", "misconception", "matching", "drill"}
    assert lesson_stats(lesson, progress, later) == stats


def test_bad_quiz_data_is_named() -> None:
    with pytest.raises(ProgressError, match="log"):
        QuizState(LessonProgress("S15", quiz={"log": [{"item": "x", "rating": 9, "at": "?"}]}))
    with pytest.raises(ProgressError, match="version"):
        QuizState(LessonProgress("S15", quiz={"version": 99}))
    # Cards are a cache of the log: broken cards are rebuilt from it.
    log = [{"item": "self-check:a", "rating": 3, "at": NOW.isoformat()}]
    state = QuizState(LessonProgress("S15", quiz={"cards": {"x": "bad"}, "log": log}))
    card = state.card("self-check:a")
    assert card is not None and card.due == NOW + dt.timedelta(minutes=10)


def test_session_saves_every_answer_and_rating_and_undoes(lesson: Lesson) -> None:
    saved: list[int] = []
    progress = LessonProgress("S15")
    session = QuizSession(
        [lesson],
        {"S15": progress},
        lambda p: saved.append(len(p.quiz["log"])),
        clock=lambda: NOW,
        seed=5,
    )
    first = session.current
    assert first is not None and first.item.kind == "self-check"
    with pytest.raises(InputError):
        session.rate(3)  # not answered yet
    with pytest.raises(InputError):
        session.answer("   ")  # a self-check answer must not be empty
    session.answer("权重、梯度、优化器状态")
    assert saved == [0] and progress.quiz["answers"][first.item.id]["answer"]
    session.rate(4)
    assert saved == [0, 1]
    second = session.current
    assert second is not None and second.item.kind == "misconception"
    assert session.answer(not second.expected).suggested == 1
    session.rate(1)
    undone = session.undo()
    assert undone is not None and undone.item == second.item
    assert [e["item"] for e in progress.quiz["log"]] == [first.item.id]
    assert saved[-1] == 1
    with pytest.raises(InputError):
        QuizSession(
            [lesson], {"S15": LessonProgress("S15")}, print, clock=lambda: NOW.replace(tzinfo=None)
        )
