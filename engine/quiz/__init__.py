"""Quizzes and spaced review: items from a lesson and from the engines, graded and scheduled.

Four kinds of items (:data:`KINDS`), each with a stable id that never contains its wording or its
random values, so editing a lesson keeps the learner's schedule:

- ``self-check``: the lesson's self-check questions (``self-check:<item id>``). The learner types an
  answer (the one written in the lesson is offered, :meth:`QuizSession.lesson_answer`), the key
  points are revealed, and the learner rates the recall Again/Hard/Good/Easy.
- ``drill``: numeric questions generated from the engines with random but realistic values
  (``drill:<template id>``, :mod:`engine.quiz.drills`). The expected answer is the engine's output;
  an answer within :data:`DRILL_TOLERANCE` (relative) is correct, written as a number, a fraction
  (``3/11``), a percentage or in a unit of the prompt's kind (:func:`parse_answer`); the worked
  solution shows the engine's formula and its source.
- ``misconception``: the lesson's misconceptions as true/false statements, the mistaken belief
  (false) and its correct counterpart (true) (``misconception:<item id>:claim`` / ``:truth``,
  :mod:`engine.quiz.misconceptions`).
- ``matching``: a strategy, to be matched with what it splits and the collectives it runs
  (``matching:<strategy>``, :mod:`engine.quiz.matching`).

The package, one concept a module: :mod:`~engine.quiz.model` (items, questions, grades),
:mod:`~engine.quiz.grading` (reading a numeric answer), :mod:`~engine.quiz.drills`,
:mod:`~engine.quiz.misconceptions`, :mod:`~engine.quiz.matching`, :mod:`~engine.quiz.items` (a
lesson's items and how each is asked), :mod:`~engine.quiz.state` (FSRS cards and the review log in
the progress file), :mod:`~engine.quiz.session` (the queue and one sitting) and
:mod:`~engine.quiz.clock`. Importing it loads fsrs; :mod:`engine.quiz_stats` (the figures) and
:mod:`engine.lesson_reveals` stay outside the package so the lesson screen, ``shardbook stats``
and the export read them without it.

Statistics for ``shardbook stats``, the app and the export: :func:`lesson_stats`.
"""

from engine.quiz.clock import Clock
from engine.quiz.drills import (
    DRILL_TEMPLATES,
    DRILLS,
    Drill,
    drill_expected,
    drill_params,
    make_drill,
)
from engine.quiz.grading import parse_answer, within_tolerance
from engine.quiz.items import ENGINE_LESSONS, PAIR_GAP, ask, lesson_items, pair_key
from engine.quiz.matching import (
    collectives_are_wrong,
    collectives_summary,
    make_matching,
    shards_summary,
    split_is_wrong,
)
from engine.quiz.misconceptions import MISCONCEPTIONS, Misconception
from engine.quiz.model import DRILL_TOLERANCE, KINDS, Grade, Params, Question, QuizItem
from engine.quiz.session import QuizSession, lesson_stats, review_queue
from engine.quiz.state import (
    FORECAST_DAYS,
    RATINGS,
    RECALLED,
    STATE_VERSION,
    QuizState,
    scheduler_for,
)

__all__ = [
    "DRILLS",
    "DRILL_TEMPLATES",
    "DRILL_TOLERANCE",
    "ENGINE_LESSONS",
    "FORECAST_DAYS",
    "KINDS",
    "MISCONCEPTIONS",
    "PAIR_GAP",
    "RATINGS",
    "RECALLED",
    "STATE_VERSION",
    "Clock",
    "Drill",
    "Grade",
    "Misconception",
    "Params",
    "Question",
    "QuizItem",
    "QuizSession",
    "QuizState",
    "ask",
    "collectives_are_wrong",
    "collectives_summary",
    "drill_expected",
    "drill_params",
    "lesson_items",
    "lesson_stats",
    "make_drill",
    "make_matching",
    "pair_key",
    "parse_answer",
    "review_queue",
    "scheduler_for",
    "shards_summary",
    "split_is_wrong",
    "within_tolerance",
]
