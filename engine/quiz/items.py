"""A lesson's quiz items, in a fixed order, and how each is asked.

Items of one *pair* (:func:`pair_key`) give each other away when asked close together: a
misconception's claim and its counterpart, and drills worked from one formula. A session keeps
them at least :data:`PAIR_GAP` questions apart (:mod:`engine.quiz.session`).
"""

from __future__ import annotations

import random
from typing import Final

from engine.errors import InputError
from engine.i18n import gettext as _
from engine.lesson import Lesson
from engine.quiz.drills import DRILLS, drill_params, make_drill
from engine.quiz.matching import make_matching, matching_params
from engine.quiz.misconceptions import MISCONCEPTIONS, misconception_question
from engine.quiz.model import Params, Question, QuizItem
from engine.strategies import STRATEGIES

PAIR_GAP: Final = 5
"""Two items of one pair are close when fewer than this many other questions come between them
in one session."""

ENGINE_LESSONS: Final = ("S15",)
"""Lessons that get the engine-generated drills and matching items: the engines (ledger,
pipeline, collectives, strategies) were written for S15 (``engine/strategies.py``)."""


def pair_key(item: QuizItem) -> str:
    """The pair ``item`` belongs to: items with one key give each other away when asked close
    together. A misconception's claim and its counterpart share a key, and so do drills from one
    formula (:attr:`engine.quiz.drills.Drill.formula`: both bubble conventions come from (p-1)/m;
    the all-reduce bus-bandwidth factor 2(p-1)/p is the bandwidth term of the ring all-reduce
    time); any other item is alone."""
    if item.kind == "misconception":
        return f"{item.lesson_id}/misconception:{item.ref}"
    if item.kind == "drill":
        drill = DRILLS.get(item.ref)
        return f"{item.lesson_id}/formula:{drill.formula if drill else item.ref}"
    return f"{item.lesson_id}/{item.id}"


def lesson_items(lesson: Lesson) -> tuple[QuizItem, ...]:
    """Every quiz item of ``lesson``, in a fixed order: self-check questions, misconception
    statements (lesson items of section ``misconceptions`` with an entry in
    :data:`~engine.quiz.misconceptions.MISCONCEPTIONS`), then, for :data:`ENGINE_LESSONS`,
    matching items and drills."""
    items: list[QuizItem] = [
        QuizItem(f"self-check:{item.id}", lesson.id, "self-check", item.text, item.id)
        for item in lesson.self_check
    ]
    for section in lesson.sections:
        if section.id != "misconceptions":
            continue
        for item in section.items:
            if item.id not in MISCONCEPTIONS:
                continue
            for side in ("claim", "truth"):
                items.append(
                    QuizItem(
                        f"misconception:{item.id}:{side}",
                        lesson.id,
                        "misconception",
                        f"{item.text} ({side})",
                        item.id,
                    )
                )
    if lesson.id in ENGINE_LESSONS:
        items.extend(
            QuizItem(f"matching:{name}", lesson.id, "matching", strategy.title, name)
            for name, strategy in STRATEGIES.items()
        )
        items.extend(
            QuizItem(f"drill:{name}", lesson.id, "drill", drill.title, name)
            for name, drill in DRILLS.items()
        )
    return tuple(items)


def ask(
    item: QuizItem, lesson: Lesson, rng: random.Random, params: Params | None = None
) -> Question:
    """The question for ``item``; ``params`` replays an earlier asking (drills, matching),
    otherwise fresh ones are drawn from ``rng``.

    Raises:
        InputError: ``item`` is not an item of ``lesson`` (field ``item``), or bad ``params``.
    """
    if item.kind == "drill":
        return make_drill(item, params if params else drill_params(item.ref, rng))
    if item.kind == "matching":
        return make_matching(item, params if params else matching_params(item.ref, rng))
    if item.kind == "self-check":
        for entry in lesson.self_check:
            if entry.id == item.ref:
                return Question(
                    item,
                    entry.text,
                    "text",
                    solution="\n".join(f"• {point}" for point in entry.key_points),
                    sources=entry.key_point_sources,
                )
    if item.kind == "misconception" and item.ref in MISCONCEPTIONS:
        return misconception_question(item, lesson)
    raise InputError(
        "item",
        _("{item!r} is not an item of lesson {lesson}").format(item=item.id, lesson=lesson.id),
    )
