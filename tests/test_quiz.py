"""engine.quiz: items and stable ids, drills against the engines, grading, FSRS scheduling,
the review log (undo, rebuild, archive), statistics and the session queue.

Values: ZeRO paper Figure 1; Narayanan et al. 2021 §2.2; GPipe;
NCCL-tests doc/PERFORMANCE.md; MPICH alpha-beta costs. FSRS intervals: py-fsrs 6 defaults
(learning steps 1 min and 10 min).
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import math
import random
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.errors import InputError, ProgressError, quoted
from engine.lesson import Lesson
from engine.model_presets import get_preset
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
from engine.quiz_stats import stats_text
from engine.strategies import STRATEGIES

NOW = dt.datetime(2026, 3, 1, 9, 0, tzinfo=dt.UTC)
SCALE = {"GB": 1e9, "ms": 1e-3, "fraction": 1.0, "": 1.0}


def drill_item(template: str) -> QuizItem:
    return QuizItem(f"drill:{template}", "S15", "drill", template, template)


def paper_value(template: str, params: dict[str, Any]) -> tuple[float, float]:
    """The answer to a drill from the papers' formulas, written here (not the engine's code),
    and the relative tolerance it is known to."""
    if template in ("zero-memory", "preset-memory"):
        if template == "zero-memory":
            psi, rel = float(params["params"]), 1e-12
        else:
            # The preset's parameter count as its source publishes it, to its digits.
            preset = get_preset(str(params["model"]))
            psi = preset.published
            rel = 1e-12
            if preset.digits is not None:  # half a unit in the last published digit
                last = 10.0 ** (math.floor(math.log10(psi)) - preset.digits + 1)
                rel = 0.5 * last / psi
        n_d, stage = int(params["dp"]), int(params["zero"])
        # ZeRO paper §5.1 with K = 12: baseline (2 + 2 + K)Ψ; P_os 4Ψ + KΨ/N_d;
        # P_os+g 2Ψ + (2 + K)Ψ/N_d; P_os+g+p (2 + 2 + K)Ψ/N_d.
        per_param = (16.0, 4 + 12 / n_d, 2 + 14 / n_d, 16 / n_d)[stage]
        return per_param * psi, rel
    if template in ("bubble-over-ideal", "bubble-fraction"):
        p, m, v = int(params["p"]), int(params["m"]), int(params["v"])
        if template == "bubble-over-ideal":
            return (p - 1) / (m * v), 1e-12  # Narayanan et al. 2021 §2.2.1-2.2.2
        return (p - 1) / (m + p - 1), 1e-12  # GPipe, Huang et al. 2019
    if template == "busbw-factor":
        ranks = int(params["ranks"])
        # NCCL-tests doc/PERFORMANCE.md: all-reduce 2(n-1)/n, the others (n-1)/n.
        factor = 2.0 if params["op"] == "all-reduce" else 1.0
        return factor * (ranks - 1) / ranks, 1e-12
    # MPICH algorithm notes, ring all-reduce: 2(p-1)α + 2n(p-1)/p·β, β = 1/bandwidth.
    ranks, size = int(params["ranks"]), float(params["size_bytes"])
    alpha, bandwidth = float(params["latency"]), float(params["bandwidth"])
    return 2 * (ranks - 1) * alpha + 2 * size * (ranks - 1) / ranks / bandwidth, 1e-12


# ---------------------------------------------------------------------------------- drills


def test_a_thousand_drills_match_the_engines_and_grade_at_ten_percent() -> None:
    rng = random.Random(20260301)
    for index in range(1000):
        template = DRILL_TEMPLATES[index % len(DRILL_TEMPLATES)]
        params = drill_params(template, rng)
        question = make_drill(drill_item(template), params)
        expected, rel = paper_value(template, params)
        assert isinstance(question.expected, float)
        assert math.isclose(question.expected, expected, rel_tol=rel), (template, params)
        expected = question.expected
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


def test_a_memory_drills_solution_names_the_terms_in_words() -> None:
    """The worked solution lists the four model-state terms by name, as the ledger and the
    command line do (``master weights``), never by the engine's keys (``master_weights:``)."""
    question = make_drill(drill_item("zero-memory"), {"params": 1e9, "dp": 1, "zero": 0})
    lines = question.solution.splitlines()
    for term in ("params", "grads", "master weights", "optimizer states"):
        assert any(line.startswith(f"{term}: ") for line in lines), (term, lines)
    assert not any("_" in line.partition(": ")[0] for line in lines[:4]), lines


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


@pytest.mark.parametrize("unit", ["GB", "ms", "fraction", ""])
def test_a_refused_answer_is_quoted_as_typed(unit: str) -> None:
    """Every message about an answer that is not a number quotes it as typed, an overflowing
    one too (``1e400`` was answered "is too large (overflows a float)")."""
    huge = "1" + "0" * 400
    for bad in ("abc", "1e400", "1e400 GB", "  1e400  ", f"{huge}/3", "1e400%", "abc%"):
        if bad.endswith("%") and unit not in ("fraction", ""):
            continue
        with pytest.raises(InputError) as caught:
            parse_answer(bad, unit)
        assert caught.value.field == "answer"
        assert quoted(bad.strip()) in caught.value.message, (bad, caught.value.message)


@pytest.mark.parametrize("unit", ["fraction", ""])
@pytest.mark.parametrize("bad", ["1/6 草稿", "15/16 x", "3/8 % x", "1/6 a,b"])
def test_a_refused_fraction_is_quoted_as_typed(unit: str, bad: str) -> None:
    """A fraction followed by words is refused quoting what was typed, its space included, not
    the fraction worked out (1/6 is 0.1666…: the learner never typed 0.16666666666666666草稿)."""
    with pytest.raises(InputError) as caught:
        parse_answer(bad, unit)
    assert caught.value.message == (
        f"'{bad}': answer with a number, a fraction (3/11) or a percentage (25%)"
    )


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
def test_matching_has_one_right_option_and_tests_both_halves(
    seed: int, name: str, lesson: Lesson
) -> None:
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


def test_a_self_check_answered_in_the_quiz_becomes_the_lessons_empty_answer(
    lesson: Lesson,
) -> None:
    own = {entry.id: f"my own words on {entry.id}" for entry in lesson.self_check}
    for answers, kept in (({}, False), (own, True)):
        progress = LessonProgress("S15", answers=dict(answers))
        session = QuizSession([lesson], {"S15": progress}, lambda p: None, clock=lambda: NOW)
        question = session.current
        assert question is not None and question.item.kind == "self-check"
        session.answer("权重、梯度、优化器状态")
        # An answer written in the lesson stays; an empty one takes the quiz's.
        expected = own if kept else {question.item.ref: "权重、梯度、优化器状态"}
        assert progress.answers == expected
        assert progress.status == ("not-started" if kept else "in-progress")


# ---------------------------------------------------------------------------------- fairness
# What a strategy runs, with each all-reduce written out as the reduce-scatter and all-gather it
# is equivalent to (Patarasuk & Yuan 2009, JPDC 69(2); NCCL docs, "Collective Operations":
# ReduceScatter followed by AllGather equals AllReduce). DeepSpeed's first ZeRO-1 all-reduced the
# gradients (DeepSpeed tutorial "ZeRO stage 1 with reduced communication"), so for ZeRO-1
# "all-reduce" is as defensible as the ZeRO paper's reduce-scatter + all-gather.


def written_out(collectives: tuple[str, ...]) -> list[str]:
    names: list[str] = []
    for name in collectives:
        names.extend(("reduce-scatter", "all-gather") if name == "all-reduce" else (name,))
    return sorted(names)


def option_is_defensible(split_of: str, collectives_of: str, strategy: str) -> bool:
    """True when "``strategy`` splits what ``split_of`` splits and runs what ``collectives_of``
    runs" is right by the strategy data: it names nothing ``strategy`` does not divide (CP divides
    the sequence everywhere, so also in the LayerNorm regions) and the same collectives."""
    right = STRATEGIES[strategy]
    divides = set(right.shards) | ({"sequence-norm"} if "sequence" in right.shards else set())
    return set(STRATEGIES[split_of].shards) <= divides and written_out(
        STRATEGIES[collectives_of].collective_names()
    ) == written_out(right.collective_names())


@settings(max_examples=150, deadline=None)
@given(seed=st.integers(min_value=0, max_value=2**32), name=st.sampled_from(sorted(STRATEGIES)))
def test_no_matching_distractor_is_right_by_the_strategy_data(
    seed: int, name: str, lesson: Lesson
) -> None:
    item = QuizItem(f"matching:{name}", "S15", "matching", name, name)
    question = ask(item, lesson, random.Random(seed))
    pairs = question.params["options"]
    assert isinstance(question.expected, int)
    for index, (split_of, collectives_of) in enumerate(pairs):
        text = question.options[index]
        assert " + ".join(STRATEGIES[collectives_of].collective_names()) in text
        defensible = option_is_defensible(split_of, collectives_of, name)
        assert defensible is (index == question.expected), (name, text)
        assert question.grade(index).correct is defensible


def test_the_reported_unfair_options_are_never_offered(lesson: Lesson) -> None:
    for seed in range(200):
        rng = random.Random(seed)
        dp = ask(QuizItem("matching:dp", "S15", "matching", "dp", "dp"), lesson, rng)
        zero1 = ask(QuizItem("matching:zero1", "S15", "matching", "zero1", "zero1"), lesson, rng)
        # DP's all-reduce may be answered as a reduce-scatter plus an all-gather: no option pits
        # the two forms against each other.
        runs = {option.split(" | runs ")[1] for option in dp.options}
        assert not runs & {"reduce-scatter + all-gather", "all-gather + reduce-scatter"}
        # ZeRO-1 may all-reduce its gradients (DeepSpeed): "runs all-reduce" is never offered.
        assert "all-reduce" not in {option.split(" | runs ")[1] for option in zero1.options}


def test_every_strategy_names_what_it_divides() -> None:
    from engine.strategies import SHARDS, collective_signature

    for strategy in STRATEGIES.values():
        assert strategy.shards and set(strategy.shards) <= set(SHARDS)
    # ZeRO paper Sec. 7: DP, ZeRO-1 and ZeRO-2 move 2 Psi each (an all-reduce, or the reduce-scatter
    # and all-gather it consists of); Korthikanti et al. Sec. 4.2.2: SP's pair equals TP's
    # all-reduce. CP adds an all-gather and a reduce-scatter of K,V to its all-reduce.
    dp = collective_signature(STRATEGIES["dp"].collective_names())
    for same in ("zero1", "zero2", "zero3", "tp", "tp-sp"):
        assert collective_signature(STRATEGIES[same].collective_names()) == dp
    for other in ("cp", "ep", "pp"):
        assert collective_signature(STRATEGIES[other].collective_names()) != dp


def test_a_replayed_asking_with_an_equivalent_option_grades_it_right(lesson: Lesson) -> None:
    # An asking logged before options were checked: ZeRO-1's split with DP's all-reduce.
    item = QuizItem("matching:zero1", "S15", "matching", "zero1", "zero1")
    params = {"strategy": "zero1", "options": [["pp", "tp"], ["zero1", "dp"], ["zero1", "zero1"]]}
    params["options"].append(["tp", "pp"])
    question = ask(item, lesson, random.Random(0), params)
    assert question.expected == 2
    assert question.grade(1).correct is True and question.grade(2).correct is True
    assert question.grade(0).correct is False and question.grade(3).correct is False


# ---------------------------------------------------------------------------------- grading


def test_fractions_percentages_and_units_are_graded(lesson: Lesson) -> None:
    # Narayanan et al. 2021 Sec. 2.2: 1F1B bubble/ideal = (p-1)/m; p = 2, m = 8: 1/8.
    bubble = make_drill(
        drill_item("bubble-over-ideal"), {"schedule": "1f1b", "p": 2, "m": 8, "v": 1}
    )
    for right in ("1/8", " 1 / 8 ", "0.125", "12.5%", "12.5 %", "1/8 "):
        assert bubble.grade(right).correct is True, right
    for wrong in ("1/7", "1/8%", "3/11", "0.2"):
        assert bubble.grade(wrong).correct is False, wrong
    # GPipe bubble/total (p-1)/(m+p-1), p = 4, m = 8: 3/11, as the worked solution writes it.
    gpipe = make_drill(drill_item("bubble-fraction"), {"schedule": "gpipe", "p": 4, "m": 8, "v": 1})
    assert gpipe.grade("3/11").correct is True and gpipe.grade("27.27%").correct is True
    # ZeRO Sec. 3.1: 1B parameters x 16 bytes = 16 GB = 14.90 GiB.
    memory = make_drill(drill_item("zero-memory"), {"params": 1e9, "dp": 1, "zero": 0})
    for right in ("16", "16 GB", "16GB", "14.9 GiB", "16e9 B", "16000 MB", "32/2 GB"):
        assert memory.grade(right).correct is True, right
    assert memory.grade("16 GiB").correct is False
    # MPICH ring all-reduce, 1 GB on 8 ranks at 100 GB/s, alpha 5 us: 17.57 ms.
    time = make_drill(
        drill_item("allreduce-time"),
        {"ranks": 8, "size_bytes": 1e9, "bandwidth": 100e9, "latency": 5e-6},
    )
    for right in ("17.57", "17.57 ms", "0.01757 s", "17570 us", "17570us"):
        assert time.grade(right).correct is True, right
    # NCCL-tests PERFORMANCE.md: all-reduce factor 2(n-1)/n = 7/4 on 8 ranks.
    factor = make_drill(drill_item("busbw-factor"), {"op": "all-reduce", "ranks": 8})
    assert factor.grade("7/4").correct is True and factor.grade("175%").correct is True
    for bad, why in (("1/0", "zero"), ("/8", "number"), ("12 GB", "fraction"), ("1/8/2", "")):
        with pytest.raises(InputError) as caught:
            bubble.grade(bad)
        assert caught.value.field == "answer" and why in caught.value.message, bad


@settings(max_examples=200, deadline=None)
@given(
    numerator=st.integers(min_value=0, max_value=10**6),
    denominator=st.integers(min_value=1, max_value=10**6),
)
def test_a_fraction_reads_as_its_quotient(numerator: int, denominator: int) -> None:
    assert parse_answer(f"{numerator}/{denominator}", "fraction") == numerator / denominator
    assert parse_answer(f"{numerator}/{denominator}", "") == numerator / denominator


# ---------------------------------------------------------------------------------- order


def partners(first: QuizItem, second: QuizItem) -> bool:
    """Two different items that give each other away: a misconception and its counterpart, or
    two drills from one formula ((p-1)/m in both bubble conventions; the ring all-reduce's
    2(n-1)/n, NCCL-tests PERFORMANCE.md)."""
    if first == second or first.lesson_id != second.lesson_id:
        return False
    if first.kind == second.kind == "misconception":
        return first.ref == second.ref
    formulas = [{"bubble-over-ideal", "bubble-fraction"}, {"busbw-factor", "allreduce-time"}]
    return first.kind == second.kind == "drill" and {first.ref, second.ref} in formulas


def answer_and_rate(session: QuizSession, rating: int) -> None:
    question = session.current
    assert question is not None
    session.answer(right_answer(question))
    session.rate(rating)


@settings(max_examples=30, deadline=None)
@given(
    seed=st.integers(min_value=0, max_value=2**32),
    moves=st.lists(
        st.tuples(st.sampled_from((1, 2, 3, 4, 0)), st.sampled_from((0, 0, 1, 11, 600))),
        min_size=40,
        max_size=80,
    ),
)
def test_paired_items_are_never_close_in_a_session(
    seed: int, moves: list[tuple[int, int]], lesson: Lesson
) -> None:
    from engine.quiz import PAIR_GAP

    clock = [NOW]
    session = QuizSession(
        [lesson], {"S15": LessonProgress("S15")}, print, clock=lambda: clock[0], seed=seed
    )
    for rating, minutes in moves:
        if session.current is None:
            clock[0] += dt.timedelta(minutes=minutes)
            session.refill()
            continue
        if rating == 0 and session.reviewed_this_session:
            session.undo()  # 0: undo this session's last rating
        else:
            answer_and_rate(session, rating or 3)
        clock[0] += dt.timedelta(minutes=minutes)
    # Close: fewer than PAIR_GAP other questions between two partners.
    asked = session.asked
    for first in range(len(asked)):
        for second in range(first + 1, min(len(asked), first + PAIR_GAP + 1)):
            assert not partners(asked[first], asked[second]), (first, second, asked)


def test_a_fresh_session_asks_every_item_with_pairs_apart(lesson: Lesson) -> None:
    session = QuizSession(
        [lesson], {"S15": LessonProgress("S15")}, print, clock=lambda: NOW, seed=1
    )
    while session.current is not None:
        answer_and_rate(session, 3)
    assert len(session.asked) == len(lesson_items(lesson)) and session.held_back == 0
    claim = session.asked.index(
        next(i for i in session.asked if i.id.endswith("params-times-precision:claim"))
    )
    truth = session.asked.index(
        next(i for i in session.asked if i.id.endswith("params-times-precision:truth"))
    )
    assert abs(truth - claim) > 5


def test_a_pair_that_cannot_be_spaced_waits_for_the_next_session(lesson: Lesson) -> None:
    # Only one misconception's two statements are new: the second waits.
    progress = LessonProgress("S15")
    state = QuizState(progress)
    rng = random.Random(0)
    for item in lesson_items(lesson):
        if "params-times-precision" not in item.id:
            state.review(ask(item, lesson, rng), 4, NOW - dt.timedelta(minutes=1))
    session = QuizSession([lesson], {"S15": progress}, print, clock=lambda: NOW, seed=2)
    first = session.current
    assert first is not None and "params-times-precision" in first.item.id
    answer_and_rate(session, 3)
    assert session.current is None and session.held_back == 1 and session.remaining == 1


@settings(max_examples=40, deadline=None)
@given(
    offset_hours=st.integers(min_value=-11, max_value=13),
    minutes_before=st.lists(
        st.integers(min_value=0, max_value=3 * 24 * 60), min_size=4, max_size=4
    ),
)
def test_a_self_check_answered_in_the_lesson_today_is_not_asked_today(
    offset_hours: int, minutes_before: list[int], lesson: Lesson
) -> None:
    from engine.lesson_reveals import note_lesson_reveal

    tz = dt.timezone(dt.timedelta(hours=offset_hours))
    progress = LessonProgress("S15")
    revealed_today = set()
    for entry, minutes in zip(lesson.self_check, minutes_before, strict=True):
        moment = NOW - dt.timedelta(minutes=minutes)
        note_lesson_reveal(progress, entry.id, moment)
        if moment.astimezone(tz).date() == NOW.astimezone(tz).date():
            revealed_today.add(f"self-check:{entry.id}")
    session = QuizSession([lesson], {"S15": progress}, print, clock=lambda: NOW, seed=3, tz=tz)
    while session.current is not None:
        answer_and_rate(session, 3)
    asked = {item.id for item in session.asked}
    self_checks = {f"self-check:{entry.id}" for entry in lesson.self_check}
    assert asked & self_checks == self_checks - revealed_today
    assert {item.id for item in session.answered_today} == revealed_today


def test_stats_count_self_checks_answered_in_the_lesson_once(lesson: Lesson) -> None:
    """Self-checks revealed in the lesson (yesterday's in the ``revealed`` list alone, as
    files written before reveals had dates) are reviewed; one also rated in the quiz counts
    once, as rated."""
    from engine.lesson_reveals import note_lesson_reveal

    first, second, third, _fourth = (entry.id for entry in lesson.self_check)
    progress = LessonProgress("S15", revealed=[first, second, third])
    note_lesson_reveal(progress, second, NOW - dt.timedelta(days=1))
    note_lesson_reveal(progress, third, NOW)
    session = QuizSession([lesson], {"S15": progress}, print, clock=lambda: NOW, seed=3)
    assert session.stats()[0].answered_in_lesson == 3
    # As ``shardbook stats`` and the export read it (a copy of the progress): the same three;
    # the text's last column.
    row = lesson_stats(lesson, progress, NOW)
    assert (row.reviewed, row.answered_in_lesson) == (0, 3)
    header, line = stats_text([row]).splitlines()[:2]
    assert header.split("\t")[-1] == "answered in lesson" and line.split("\t")[-1] == "3"
    # The first self-check is not answered today in the lesson's record, so the quiz asks it.
    while session.current is not None and session.current.item.ref != first:
        session.queue.append(session.current.item)
        session.next()
    assert session.current is not None
    answer_and_rate(session, 3)
    (stats,) = session.stats()
    assert (stats.reviewed, stats.answered_in_lesson) == (1, 2)
    assert stats.as_dict()["answered_in_lesson"] == 2


def test_lesson_reveals_are_replaced_not_edited_and_bad_ones_skipped() -> None:
    from engine.lesson_reveals import lesson_reveals, note_lesson_reveal

    progress = LessonProgress("S15", quiz={"lesson_reveals": {"a": "yesterday", "b": "2026"}})
    before = progress.quiz["lesson_reveals"]
    note_lesson_reveal(progress, "c", NOW)
    assert before == {"a": "yesterday", "b": "2026"}  # the old mapping is untouched
    assert lesson_reveals(progress) == {"c": NOW}
    with pytest.raises(ValueError):
        note_lesson_reveal(progress, "c", NOW.replace(tzinfo=None))


# ---------------------------------------------------------------------------------- scheduling


def test_the_default_desired_retention_is_fsrs_default_and_the_setting_checks_its_range() -> None:
    from fsrs import Scheduler

    from engine.settings import DESIRED_RETENTION_DEFAULT, SETTINGS, Settings

    assert Scheduler().desired_retention == DESIRED_RETENTION_DEFAULT
    spec = next(spec for spec in SETTINGS if spec.key == "review.desired_retention")
    assert spec.default == DESIRED_RETENTION_DEFAULT
    # fsrs4anki docs/tutorial.md: desired retention 0.70 to 0.97.
    assert [spec.check(v) for v in (0.7, 0.97, 0.85, 0.69, 0.98, True, "0.9")] == [
        True,
        True,
        True,
        False,
        False,
        False,
        False,
    ]
    loaded = Settings({"review": {"desired_retention": 1.5}})
    assert loaded.get("review.desired_retention") == 0.9 and loaded.problems


@pytest.mark.parametrize("retention", [0.7, 0.9, 0.97])
def test_each_rating_previews_the_interval_fsrs_computes(lesson: Lesson, retention: float) -> None:
    from fsrs import Card, Rating, Scheduler

    scheduler = Scheduler(desired_retention=retention, enable_fuzzing=False)
    state = QuizState(LessonProgress("S15"), retention)
    question = ask(lesson_items(lesson)[0], lesson, random.Random(0))
    card = Card(due=NOW)
    moments = (NOW, NOW + dt.timedelta(minutes=10), NOW + dt.timedelta(days=3))
    for moment in moments:
        preview = state.next_cards(question.item.id, moment)
        for rating in (1, 2, 3, 4):
            theirs, _log = scheduler.review_card(card, Rating(rating), moment)
            assert preview[rating].due == theirs.due, (moment, rating)
        stored = state.review(question, 3, moment)
        card, _log = scheduler.review_card(card, Rating(3), moment)
        assert stored.due == card.due
    # py-fsrs 6 defaults: learning steps 1 min and 10 min; a new card rated Easy goes to review
    # with stability w3 = 8.2956 days, the interval at which recall falls to 90 %.
    fresh = state.next_cards("self-check:new", NOW)
    assert fresh[1].due - NOW == dt.timedelta(minutes=1)
    assert fresh[3].due - NOW == dt.timedelta(minutes=10)
    if retention == 0.9:
        assert fresh[4].due - NOW == dt.timedelta(days=8)


def test_the_log_keeps_each_review_retention_so_the_schedule_rebuilds(lesson: Lesson) -> None:
    progress = LessonProgress("S15")
    question = ask(lesson_items(lesson)[0], lesson, random.Random(0))
    state = QuizState(progress, 0.9)
    state.review(question, 4, NOW)
    later = NOW + dt.timedelta(days=8)
    state.scheduler = QuizState(LessonProgress("x"), 0.75).scheduler
    state.review(question, 3, later)
    assert [entry["retention"] for entry in progress.quiz["log"]] == [0.9, 0.75]
    rebuilt = QuizState(progress, 0.97).rebuild_cards()
    assert {k: c.to_dict() for k, c in rebuilt.items()} == progress.quiz["cards"]
    # A lower desired retention gives a longer interval than 0.9 would have (FSRS: the review
    # falls due when predicted recall drops to the desired retention).
    at_09 = QuizState(LessonProgress("S15"), 0.9)
    at_09.review(question, 4, NOW)
    assert at_09.review(question, 3, later).due < progress_due(progress, question.item.id)
    with pytest.raises(ProgressError):
        bad = [{"item": "a", "rating": 3, "at": NOW.isoformat(), "retention": 2}]
        QuizState(LessonProgress("S15", quiz={"log": bad}))
    with pytest.raises(InputError) as caught:
        QuizState(LessonProgress("S15"), 0.5)
    assert caught.value.field == "desired_retention"


def progress_due(progress: LessonProgress, item_id: str) -> dt.datetime:
    return dt.datetime.fromisoformat(progress.quiz["cards"][item_id]["due"])


def test_intervals_are_written_short() -> None:
    from engine.timefmt import format_interval

    minutes = [dt.timedelta(minutes=m) for m in (0.5, 1, 5.5, 10)]
    assert [format_interval(m) for m in minutes] == ["<1 min", "1 min", "5.5 min", "10 min"]
    longer = [dt.timedelta(hours=3), dt.timedelta(days=8), dt.timedelta(days=76)]
    assert [format_interval(i) for i in longer] == ["3 h", "8 d", "2.5 mo"]
    assert format_interval(dt.timedelta(days=438)) == "1.2 y"


# ---------------------------------------------------------------------------------- statistics


def test_three_again_ratings_give_a_recall_of_zero(lesson: Lesson) -> None:
    progress = LessonProgress("S15")
    state = QuizState(progress)
    question = ask(lesson_items(lesson)[0], lesson, random.Random(0))
    for minutes in (0, 1, 2):
        state.review(question, 1, NOW + dt.timedelta(minutes=minutes))
    stats = lesson_stats(lesson, progress, NOW + dt.timedelta(minutes=3), dt.UTC)
    assert (stats.reviews, stats.recalled, stats.recall) == (3, 0, 0.0)
    # The model's retrievability right after a review stays near 1: not what was recalled.
    assert stats.retrievability is not None and stats.retrievability > 0.9
    assert stats.retention == stats.retrievability
    state.review(question, 3, NOW + dt.timedelta(minutes=4))
    assert lesson_stats(lesson, progress, NOW, dt.UTC).recall == 0.25


def test_forecast_and_recall_history_use_local_dates(lesson: Lesson) -> None:
    progress = LessonProgress("S15")
    state = QuizState(progress)
    items = lesson_items(lesson)
    rng = random.Random(0)
    # Rated Easy at 2026-02-22 20:00 UTC: due 8 days on, 2026-03-02 20:00 UTC, which is
    # 2026-03-03 04:00 at UTC+8. Rated at 15:00 UTC: due 2026-03-02 15:00 UTC, 23:00 at +8.
    state.review(ask(items[0], lesson, rng), 4, dt.datetime(2026, 2, 22, 20, tzinfo=dt.UTC))
    state.review(ask(items[1], lesson, rng), 4, dt.datetime(2026, 2, 22, 15, tzinfo=dt.UTC))
    east = dt.timezone(dt.timedelta(hours=8))
    stats = lesson_stats(lesson, progress, NOW, east)
    assert len(stats.due_forecast) == 30 and stats.due_forecast[0].date == dt.date(2026, 3, 1)
    busy = {day.date: day.count for day in stats.due_forecast if day.count}
    assert busy == {dt.date(2026, 3, 2): 1, dt.date(2026, 3, 3): 1}
    in_utc = lesson_stats(lesson, progress, NOW, dt.UTC)
    assert {d.date: d.count for d in in_utc.due_forecast if d.count} == {dt.date(2026, 3, 2): 2}
    history = {day.date: (day.reviews, day.recalled) for day in stats.recall_history}
    assert len(stats.recall_history) == 30 and stats.recall_history[-1].date == dt.date(2026, 3, 1)
    assert history[dt.date(2026, 2, 23)] == (1, 1) and history[dt.date(2026, 2, 22)] == (1, 1)
    row = stats.as_dict()
    assert row["due_forecast"][1] == {"date": "2026-03-02", "count": 1}
    for key in ("lesson", "items", "new", "reviewed", "reviews", "due", "retention", "archived"):
        assert key in row  # the keys scripts already read
    assert {"recall", "retrievability", "due_forecast", "recall_history"} <= set(row)
