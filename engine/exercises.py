"""The learner's notes for lesson S15's exercises 2 to 5, and the engine's answers beside them.

Exercise 2 asks, for each strategy's 4-rank picture, which dimension is split; exercise 3 asks for
its main collective or point-to-point transfer and one wait it can cause. The engine's answers come
from :mod:`engine.strategies`, so the notes can be compared with the same description the
diagrams are drawn from. Exercises 4 and 5 are free text (their reference is the lesson itself).

Note ids are stable (``ex2.tp.split``, ``ex3.pp.comm``, ``ex3.pp.wait``, ``ex4``, ``ex5``): they key
``LessonProgress.notes``.

Exercise 1 is worked in the Ledger's form rather than in a note: :func:`ledger_exercise_done` says
whether the learner's last good result has the exercise's four columns (activations computed).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import TYPE_CHECKING

from engine.errors import InputError
from engine.i18n import N_
from engine.i18n import gettext as _
from engine.progress import LessonProgress, last_good_key
from engine.strategies import Strategy, get_strategy

if TYPE_CHECKING:
    # The lesson's checker asks this module which note ids exist: a runtime import back would
    # be a circle.
    from engine.lesson import Lesson

# The lesson's six strategies (DP, FSDP/ZeRO, TP, PP, EP, CP), in its order.
DIAGRAMS = "diagrams"
TRADEOFFS = "tradeoffs"
DIAGRAM_PARTS: tuple[str, ...] = ("split", "comm", "wait")
"""The parts of a strategy's diagram that exercises 2 and 3 ask the learner to work out first:
what is split, the main collective or transfer, one wait."""
EXERCISE_STRATEGIES: tuple[str, ...] = ("dp", "fsdp", "tp", "pp", "ep", "cp")


@dataclass(frozen=True)
class ExerciseNote:
    """One note the learner can write.

    Attributes:
        id: stable key in ``LessonProgress.notes``.
        exercise: the lesson's exercise number (2 to 5).
        strategy: the strategy key for exercises 2 and 3, ``""`` otherwise.
        label: what the note answers (English chrome; the exercise text itself is the lesson's).
        reference: the engine's answer, from :mod:`engine.strategies` (``""`` for 4 and 5).
        part: for exercises 2 and 3, the part of the strategy's diagram that answers it
            (:data:`DIAGRAM_PARTS`: ``split``, ``comm`` or ``wait``); ``""`` otherwise.
        answered_by: the pane that shows the engine's answer to it (``diagrams``: the
            strategy's diagram; ``tradeoffs``: the step-time table on a chosen interconnect),
            ``""`` when the engine has none (exercise 5: a factor the formulas cannot decide).
    """

    id: str
    exercise: int
    strategy: str
    label: str
    reference: str
    part: str = ""
    answered_by: str = ""


def _comm(strategy: Strategy) -> str:
    kind = _("point-to-point ") if strategy.point_to_point else ""
    uses = _("; ").join(
        _("{collective} in {phase} ({payload})").format(
            collective=use.collective, phase=_(use.phase), payload=_(use.payload)
        )
        for use in strategy.collectives
    )
    return f"{kind}{uses}"


def note_reference(note: ExerciseNote) -> str:
    """The engine's answer to ``note`` in the interface language (:attr:`ExerciseNote.reference`
    is the English one); ``""`` where the engine has none."""
    if not note.reference:
        return ""
    strategy = get_strategy(note.strategy)
    if note.part == "comm":
        return _comm(strategy)
    return _(note.reference)


def strategy_notes(name: str) -> tuple[ExerciseNote, ...]:
    """Exercise 2 and 3 notes for strategy ``name`` (split; collective; wait).

    Raises:
        InputError: unknown strategy (field ``strategy``).
    """
    strategy = get_strategy(name)
    key = "fsdp" if name == "zero3" else name
    return (
        ExerciseNote(
            f"ex2.{key}.split",
            2,
            key,
            N_("which dimension is split"),
            strategy.split,
            "split",
            DIAGRAMS,
        ),
        ExerciseNote(
            f"ex3.{key}.comm",
            3,
            key,
            N_("main collective or point-to-point transfer"),
            _comm(strategy),
            "comm",
            DIAGRAMS,
        ),
        ExerciseNote(
            f"ex3.{key}.wait", 3, key, N_("one wait it can cause"), strategy.wait, "wait", DIAGRAMS
        ),
    )


# The lesson item each exercise number answers (S15's section ``exercises``, in its order).
EXERCISE_ITEMS: dict[int, str] = {
    1: "exercise-ledger",
    2: "exercise-diagrams",
    3: "exercise-communication",
    4: "exercise-slow-interconnect",
    5: "exercise-real-factor",
}

FREE_NOTES: tuple[ExerciseNote, ...] = (
    ExerciseNote(
        "ex4",
        4,
        "",
        N_("slow interconnect: which strategies cost more, and why"),
        "",
        answered_by=TRADEOFFS,
    ),
    ExerciseNote("ex5", 5, "", N_("a real factor the formulas alone cannot decide"), ""),
)

ALL_NOTES: tuple[ExerciseNote, ...] = (
    *(note for name in EXERCISE_STRATEGIES for note in strategy_notes(name)),
    *FREE_NOTES,
)


def note_label(note: ExerciseNote) -> str:
    """An exercise note's field in the interface language: the strategy it is about (its
    title) and what it answers, e.g. ``DP - data parallel: which dimension is split``; the
    strategy's id where it names no known strategy."""
    label = _(note.label)
    if not note.strategy:
        return label
    try:
        strategy = _(get_strategy(note.strategy).title)
    except InputError:
        strategy = note.strategy
    return _("{strategy}: {label}").format(strategy=strategy, label=label)


def get_note(note_id: str) -> ExerciseNote:
    """The note with id ``note_id``: one of :data:`ALL_NOTES`, or ``ex2.<strategy>.split`` /
    ``ex3.<strategy>.comm|wait`` for any strategy of :mod:`engine.strategies`.

    Raises:
        InputError: an id of no known note (field ``note``).
    """
    for note in ALL_NOTES:
        if note.id == note_id:
            return note
    parts = note_id.split(".")
    if len(parts) == 3 and parts[0] in ("ex2", "ex3"):
        for note in strategy_notes(parts[1]):
            if note.id == note_id:
                return note
    raise InputError("note", _("unknown exercise note {note_id!r}").format(note_id=note_id))


def answered_notes(notes: dict[str, str]) -> list[tuple[ExerciseNote, str]]:
    """The learner's non-empty notes with their definitions, in the lesson's order: by
    exercise, then by strategy in :data:`EXERCISE_STRATEGIES` order.

    Ids that no longer name a note (a strategy renamed, say) are kept after the others, labelled
    by their id, so an export never drops the learner's words.
    """
    order = {note.id: index for index, note in enumerate(ALL_NOTES)}
    result: list[tuple[ExerciseNote, str]] = []
    for note_id, text in notes.items():
        if not text.strip():
            continue
        try:
            note = get_note(note_id)
        except InputError:
            note = ExerciseNote(note_id, 0, "", note_id, "")
        result.append((note, text))

    def position(entry: tuple[ExerciseNote, str]) -> tuple[int, int, str]:
        note = entry[0]
        exercise = note.exercise if note.exercise in EXERCISE_ITEMS else len(EXERCISE_ITEMS) + 1
        return exercise, order.get(note.id, len(order)), note.id

    return sorted(result, key=position)


LEDGER_FORM = "ledger"
"""The Ledger's key in ``LessonProgress.forms``."""

LEDGER_FORM_DEFAULTS: Mapping[str, str] = MappingProxyType(
    {
        "params": "1B",
        "preset": "mixed-adam",
        "weight_bytes": "2",
        "grad_bytes": "2",
        "optimizer_bytes": "12",
        "dp": "1",
        "zero": "0",
        "convention": "zero-paper",
        "gpu_memory": "80GB",
        "seq": "",
        "model": "custom",
        "layers": "",
        "hidden": "",
        "heads": "",
        "kv_heads": "",
        "ffn_hidden": "",
        "vocab": "",
        "mlp": "gelu",
        "norm": "layernorm",
        "bias": "yes",
        "tied_embeddings": "yes",
        "attention": "eager",
        "micro_batch": "1",
        "recompute": "none",
        "sequence_parallel": "no",
        "finetune": "full",
        "lora_rank": "8",
        "lora_targets": "q,v",
        "offload": "none",
        "tp": "1",
        "pp": "1",
        "cp": "1",
        "ep": "1",
        "experts": "1",
        "top_k": "1",
        "schedule": "1f1b",
        "micro_batches": "",
        "virtual_stages": "1",
        "largest_layer_params": "",
    }
)
"""The Ledger form as it opens, field -> text. The Ledger pane's fields take their defaults from
here, so the plan and the pane agree on what "not yet worked" means. ctrl+g's 1B example is this
form, so loading it alone leaves exercise 1 to do: the exercise asks for four columns, and the
fourth, activations, needs ``seq`` and the model's shape (:func:`ledger_exercise_done`)."""


LEDGER_FIGURES = "exercise1"
"""The Ledger's key in ``LessonProgress.figures``: the figures of its last valid form, ``{}``
while a field is invalid."""


def ledger_exercise_done(
    forms: Mapping[str, Mapping[str, str]], figures: Mapping[str, Mapping[str, float]]
) -> bool:
    """True when the learner's last good Ledger result has exercise 1's four columns: its form
    gives ``seq`` (:data:`~engine.ledger.model.ACTIVATION_INPUTS`: without it activations are
    not computed, and the pane says "not computed"), so parameters, gradients, Adam states and
    activations all have a figure. Such a form is also one of the learner's own: the defaults
    (:data:`LEDGER_FORM_DEFAULTS`, ctrl+g's 1B example) leave ``seq`` empty.

    The last good result is the form kept beside a saved form with a refused field
    (``forms["ledger.last-good"]``, :func:`engine.progress.last_good_key`): a refused edit
    keeps the figures on screen, and takes nothing away from what the learner achieved.
    Without it, the saved form itself when it computed a result: its figures
    (``figures[LEDGER_FIGURES]``) are saved and not empty (a form left with an invalid field is
    saved with no figures; ``seq`` without the model's shape is refused)."""
    form = forms.get(last_good_key(LEDGER_FORM))
    if form is None:
        form = forms.get(LEDGER_FORM)
        if not form or not figures.get(LEDGER_FIGURES):
            return False
    return bool(form.get("seq", "").strip())


def asked_notes(lesson: Lesson) -> dict[str, str]:
    """The notes the lesson's exercises ask for (their ``notes`` lists), note id -> the id of
    the exercise item that asks for it, in the lesson's order."""
    return {note_id: item.id for item in lesson.exercises for note_id in item.notes}


def answer_folded(
    note_id: str, lesson: Lesson, progress: LessonProgress, text: str | None = None
) -> bool:
    """Whether the engine's answer to note ``note_id`` is folded (predict, then reveal): the
    engine has an answer to it (:attr:`ExerciseNote.answered_by`), the lesson's exercises ask
    for the note, the note is blank, and the learner did not choose to look first
    (:meth:`LessonProgress.looked_before_answering`).

    ``text``: the note as it stands in a box being typed in; default: the saved note.
    """
    if not answered_by_engine(note_id) or note_id not in asked_notes(lesson):
        return False
    if progress.looked_before_answering(note_id):
        return False
    written = progress.notes.get(note_id, "") if text is None else text
    return not written.strip()


def answered_by_engine(note_id: str) -> bool:
    """Whether a pane shows the engine's answer to note ``note_id`` (an unknown id: no)."""
    try:
        return bool(get_note(note_id).answered_by)
    except InputError:
        return False
