"""What the quiz asks and answers: items, questions as asked, and grades.

An item (:class:`QuizItem`) is what is scheduled; its id is stable (it never holds the item's
wording or random values), so editing a lesson keeps the learner's schedule. A question
(:class:`Question`) is an item asked once, with the values drawn for it; a grade (:class:`Grade`)
is the verdict on one answer.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Final, Literal, get_args

from engine.errors import InputError
from engine.i18n import N_
from engine.i18n import gettext as _
from engine.quiz.grading import parse_answer, show_value, within_tolerance

ItemKind = Literal["self-check", "drill", "misconception", "matching"]
KINDS: Final[tuple[ItemKind, ...]] = get_args(ItemKind)
"""The four kinds of items, in the order :func:`engine.quiz.items.lesson_items` lists them."""

AnswerKind = Literal["text", "number", "true-false", "choice"]
"""How a question is answered: free text (self-check), a number (drill), true or false
(misconception), or one of the options a-d (matching)."""

DrillUnit = Literal["GB", "ms", "fraction", ""]
"""The unit a bare number answering a drill is read in
(:func:`engine.quiz.grading.parse_answer`)."""

Params = dict[str, Any]
"""What makes one asking reproducible (drill values, choice order); JSON-like, stored in the log."""

DRILL_TOLERANCE: Final = 0.02
"""A drill answer within 2 % of the expected value (relative) is correct."""

CHOICE_KEYS: Final = "abcd"


@dataclass(frozen=True)
class QuizItem:
    """One schedulable item of a lesson.

    Attributes:
        id: stable id (:mod:`engine.quiz`), unique within the lesson.
        lesson_id: the lesson it belongs to.
        kind: one of :data:`KINDS`.
        title: a short English label for lists and the CLI.
        ref: what the item is built from: the lesson item id (self-check, misconception), the
            drill template id, or the strategy name.
    """

    id: str
    lesson_id: str
    kind: ItemKind
    title: str
    ref: str


@dataclass(frozen=True)
class Grade:
    """The verdict on one answer.

    Attributes:
        correct: True/False for graded items; None for a self-check answer.
        answer: the answer as given (text, ``true``/``false`` or the option letter).
        suggested: the FSRS rating a graded answer implies (1 Again when wrong, 3 Good when
            right); None for a self-check answer.
        value: drills: the answer parsed into base units.
    """

    correct: bool | None
    answer: str
    suggested: int | None
    value: float | None = None


@dataclass(frozen=True)
class Question:
    """An item as asked: prompt, what counts as right, and what to show afterwards.

    Attributes:
        item: the item asked.
        prompt: the question (lesson text is kept verbatim; show it literally).
        answer_kind: how it is answered (:data:`AnswerKind`).
        params: what makes this asking reproducible (drill values, choice order); JSON-like.
        expected: drills: the engine's value in base units (bytes, seconds, or a ratio);
            true-false: ``True``/``False``; choice: the index of the right option; text: None.
        unit: drills: the unit a bare number is read in (:data:`DrillUnit`).
        tolerance: drills: the relative tolerance (:data:`DRILL_TOLERANCE`); else 0.
        options: choice: the options, in order (keys a-d).
        solution: shown after answering: key points, the worked solution, or the explanation.
        sources: where the solution rests.
        accepted: choice: every option graded right: ``expected`` and any option equivalent to
            it (only a replayed asking from an older version can hold one, see
            :func:`engine.quiz.matching.make_matching`).
    """

    item: QuizItem
    prompt: str
    answer_kind: AnswerKind
    params: Params = field(default_factory=dict)
    expected: float | bool | int | None = None
    unit: DrillUnit = ""
    tolerance: float = 0.0
    options: tuple[str, ...] = ()
    solution: str = ""
    sources: tuple[str, ...] = ()
    accepted: tuple[int, ...] = ()

    def expected_text(self) -> str:
        """The right answer as text (drills: in the unit asked, 4 significant digits)."""
        if self.answer_kind == "number" and isinstance(self.expected, float):
            return show_value(self.expected, self.unit)
        if self.answer_kind == "true-false":
            return _("true") if self.expected else _("false")
        if self.answer_kind == "choice" and isinstance(self.expected, int):
            return self.choice_text(self.expected)
        return ""

    def choice_text(self, index: int) -> str:
        """Option ``index`` (0-3) with its letter: ``b) splits the batch | runs all-reduce``.

        Raises:
            IndexError: no such option.
        """
        return f"{CHOICE_KEYS[index]}) {self.options[index]}"

    def grade(self, answer: str | bool | int) -> Grade:
        """Grade an answer: text for ``number`` and ``text``, a bool for ``true-false``, an
        option index (0-3) for ``choice``.

        Returns:
            A :class:`Grade`. A ``text`` answer is not graded (``correct`` None, no suggested
            rating: the learner rates it).

        Raises:
            InputError: field ``answer``: a drill answer that is not a number in an accepted
                unit, an empty self-check answer, or a choice out of range.
        """
        if self.answer_kind == "text":
            if not str(answer).strip():
                raise InputError("answer", _("write your answer first, then reveal the key points"))
            return Grade(None, str(answer), None)
        if self.answer_kind == "number":
            value = parse_answer(str(answer), self.unit)
            assert isinstance(self.expected, float)
            ok = within_tolerance(value, self.expected, self.tolerance)
            return Grade(ok, str(answer), 3 if ok else 1, value)
        if self.answer_kind == "true-false":
            ok = bool(answer) == self.expected
            # Kept in the review log as written here; shown translated.
            return Grade(ok, N_("true") if answer else N_("false"), 3 if ok else 1)
        if isinstance(answer, bool) or not isinstance(answer, int):
            raise InputError("answer", _("choose an option a-d"))
        if not 0 <= answer < len(self.options):
            last = CHOICE_KEYS[len(self.options) - 1]
            raise InputError("answer", _("choose an option a-{last}").format(last=last))
        ok = answer == self.expected or answer in self.accepted
        return Grade(ok, CHOICE_KEYS[answer], 3 if ok else 1)
