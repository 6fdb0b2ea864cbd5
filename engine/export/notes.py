"""What an export holds, in the lesson's order: the exercises with the learner's notes beside the
engine's answers, the self-check answers, the reflections and the spaced review's figures.
"""

from __future__ import annotations

import datetime as dt
import functools
import re
from typing import Any

from engine.errors import InputError, ProgressError
from engine.exercises import (
    EXERCISE_ITEMS,
    LEDGER_FIGURES,
    LEDGER_FORM,
    TRADEOFFS,
    ExerciseNote,
    answered_by_engine,
    answered_notes,
    note_reference,
)
from engine.i18n import N_, current_language
from engine.i18n import gettext as _
from engine.ledger import PRECISION_PRESETS, convention_label
from engine.lesson import Item, Lesson, Section
from engine.model_presets import get_preset, model_presets
from engine.progress import (
    LessonProgress,
)
from engine.strategies import get_strategy
from engine.timefmt import parse_utc, utc_iso, utc_now

FORMATS = ("md", "json", "html", "anki")


# The file name extension of each format.
EXTENSIONS = {"md": "md", "json": "json", "html": "html", "anki": "apkg"}


FORMAT_DESCRIPTIONS = {
    "md": N_("Markdown notes"),
    "json": N_("the notes as one JSON object"),
    "html": N_("the notes as one web page"),
    "anki": N_("the lesson's quiz items as an Anki deck (.apkg)"),
}


NOT_ANSWERED = N_("_(not answered yet)_")


# Exercise 1's four columns (the lesson: 参数、梯度、Adam 状态与 activation 四栏), in bytes;
# the labels in the interface language.
EXERCISE1_COLUMNS = (
    ("parameters", N_("parameters")),
    ("gradients", N_("gradients")),
    ("adam_states", N_("Adam states (master weights + moments)")),
    ("activations", N_("activations")),
)


# The Ledger form's inputs, by their names in the field's terms. The first nine are always part
# of the result; the others count only when the learner changed them from their default text.
LEDGER_INPUTS: tuple[tuple[str, str, str | None], ...] = (
    ("params", N_("parameters N"), None),
    ("preset", N_("precision"), None),
    ("weight_bytes", N_("weight bytes per parameter"), None),
    ("grad_bytes", N_("gradient bytes per parameter"), None),
    (
        "optimizer_bytes",
        N_("optimizer bytes per parameter K (fp32 master weights + moments)"),
        None,
    ),
    ("dp", N_("data-parallel size P"), None),
    ("zero", N_("ZeRO stage"), None),
    ("convention", N_("bytes-per-parameter convention"), None),
    ("gpu_memory", N_("GPU memory"), None),
    ("seq", N_("sequence length s"), ""),
    ("layers", N_("layers L"), ""),
    ("hidden", N_("hidden size h"), ""),
    ("heads", N_("attention heads a"), ""),
    ("ffn_hidden", N_("FFN hidden size"), ""),
    ("vocab", N_("vocabulary size V"), ""),
    ("micro_batch", N_("micro-batch size b"), "1"),
    ("recompute", N_("activation recomputation"), "none"),
    ("sequence_parallel", N_("sequence parallel"), "no"),
    ("tp", N_("tensor-parallel size"), "1"),
    ("pp", N_("pipeline-parallel size"), "1"),
    ("cp", N_("context-parallel size"), "1"),
    ("ep", N_("expert-parallel size"), "1"),
    ("experts", N_("experts"), "1"),
    ("schedule", N_("pipeline schedule"), "1f1b"),
    ("micro_batches", N_("micro-batches m"), ""),
    ("virtual_stages", N_("virtual stages v"), "1"),
    ("largest_layer_params", N_("largest layer (parameters, DeepSpeed ZeRO-3)"), ""),
    ("model", N_("model"), "custom"),
    ("kv_heads", N_("key/value heads"), ""),
    ("mlp", "MLP", "gelu"),
    ("norm", N_("norm"), "layernorm"),
    ("bias", N_("linear bias"), "yes"),
    ("tied_embeddings", N_("tied embeddings"), "yes"),
    ("attention", N_("attention kernel"), "eager"),
    ("finetune", N_("fine-tuning"), "full"),
    ("lora_rank", N_("LoRA rank r"), "8"),
    ("lora_targets", N_("LoRA targets"), "q,v"),
    ("offload", N_("offload"), "none"),
    ("top_k", N_("experts per token (top-k)"), "1"),
)


LINE_BREAKS = re.compile(r"\r\n|\r|\n")


# Where an HTML export and an Anki deck name their lesson (see notes_owner).
HTML_OWNER = re.compile(r'<meta name="shardbook-lesson" content="([^"]*)">')


APKG_OWNER_PREFIX = b"shardbook-lesson:"


def now_utc(now: dt.datetime | None) -> dt.datetime:
    """``now`` in UTC (None: the current time)."""
    return (now or utc_now()).astimezone(dt.UTC)


def ledger_inputs(form: dict[str, str]) -> list[tuple[str, str, str]]:
    """The Ledger inputs the learner set, as (field, label, text): the main fields when not
    empty, the less-used ones only when changed from their default, then any field this module
    does not know (labelled by its name). Empty fields are left out."""
    known = {name for name, _label, _unset in LEDGER_INPUTS}
    rows: list[tuple[str, str, str]] = []
    for name, label, unset in LEDGER_INPUTS:
        text = form.get(name, "").strip()
        if not text or (unset is not None and text == unset):
            continue
        rows.append((name, _(label), shown_input(name, text)))
    for name, value in form.items():
        if name not in known and value.strip():
            rows.append((name, name.replace("_", " "), value.strip()))
    return rows


def shown_input(name: str, text: str) -> str:
    """A Ledger input's stored text as the Ledger pane shows it, in the interface language:
    a precision preset, a convention or a model preset by its label (``zero-paper`` is "ZeRO
    paper", ``ZeRO 论文`` in Chinese; ``custom`` is "custom shape"), yes and no translated;
    any other text as typed."""
    if name == "preset":
        preset = PRECISION_PRESETS.get(text)
        return _(preset.label) if preset else _("custom bytes per parameter")
    if name == "convention":
        return convention_label(text)
    if name == "model":
        if text == "custom":
            return _("custom shape")
        return get_preset(text).shown_title if text in model_presets() else text
    if text in ("yes", "no"):
        return _(text)
    return text


def exercise1_form(progress: LessonProgress) -> tuple[dict[str, str], bool]:
    """The Ledger form exercise 1's figures are of, and whether it is the last good one kept
    beside a typed form with a refused field (the figures the pane still shows, and what the
    study plan counts: :func:`engine.exercises.ledger_exercise_done`)."""
    last_good = progress.last_good_form(LEDGER_FORM)
    if last_good is not None:
        return last_good, True
    return dict(progress.forms.get(LEDGER_FORM, {})), False


def exercise1_figures(progress: LessonProgress) -> dict[str, float]:
    """Exercise 1's figures (bytes per column), of the form :func:`exercise1_form` gives; ``{}``
    when there are none (the Ledger saves ``{}`` while its form has an invalid field and no
    good result was shown, and files written before it kept the last good figures)."""
    figures = progress.figures.get(LEDGER_FIGURES, {})
    return {key: float(figures[key]) for key, _label in EXERCISE1_COLUMNS if key in figures}


def quiz_summary(lesson: Lesson, progress: LessonProgress, now: dt.datetime) -> dict[str, Any]:
    """The spaced-review summary: ``items``, ``new``, ``reviewed``, ``reviews`` (ratings given),
    ``due`` (now), ``recall`` (the share of reviews rated Good or Easy, 0-1, or None before any
    review), ``retrievability`` (mean FSRS retrievability of the reviewed items now, 0-1, or None)
    and ``next_due`` (ISO 8601 UTC to the second, or None); with ``error`` instead when the
    stored quiz data cannot be read (the export still goes ahead)."""
    from engine.quiz import lesson_stats  # fsrs loads only when notes are exported

    try:
        stats = lesson_stats(lesson, progress, now)
    except ProgressError as error:
        return {"error": str(error)}
    return {
        "items": stats.items,
        "new": stats.new,
        "reviewed": stats.reviewed,
        "answered_in_lesson": stats.answered_in_lesson,
        "reviews": stats.reviews,
        "due": stats.due,
        "recall": stats.recall,
        "retrievability": stats.retrievability,
        "next_due": _stored_time(stats.next_due),
    }


def _stored_time(text: str | None) -> str | None:
    """A time of the review log (ISO 8601 UTC with microseconds, which replay the schedule
    exactly) as every other time of the export is written: :func:`engine.timefmt.utc_iso`,
    to the second."""
    moment = parse_utc(text) if text else None
    return utc_iso(moment) if moment is not None else text


STRATEGIES_SOURCE = "engine/strategies.py"
SLOW_LINK_SOURCE = (
    "engine/tradeoffs.py, tradeoffs_report: the Trade-offs pane's table at its default choices"
)


def _slow_link_answer() -> str:
    return _slow_link_answer_in(current_language())


@functools.cache
def _slow_link_answer_in(language: str) -> str:
    """Exercise 4's answer (computed once per interface language: the report is fixed)."""
    from engine.tradeoffs import (  # the step-time engine loads only when notes are exported
        TRADEOFFS_LINK,
        TRADEOFFS_WORLD,
        slow_link_answer,
        tradeoffs_report,
    )

    return slow_link_answer(tradeoffs_report(TRADEOFFS_LINK, TRADEOFFS_WORLD))


def engine_answer(note: ExerciseNote) -> tuple[str, str]:
    """The engine's answer to ``note`` and where it comes from: exercises 2 and 3 from
    :mod:`engine.strategies` (what the diagrams are drawn from); exercise 4 from
    :func:`engine.tradeoffs.tradeoffs_report` at the Trade-offs pane's default choices (the
    same call the pane makes), written by :func:`engine.tradeoffs.slow_link_answer`.
    ``("", "")`` where the engine has none (exercise 5 asks for a factor the formulas cannot
    decide)."""
    if note.reference:
        return note_reference(note), STRATEGIES_SOURCE
    if note.answered_by == TRADEOFFS:
        return _slow_link_answer(), SLOW_LINK_SOURCE
    return "", ""


def _section(lesson: Lesson, kind: str) -> Section | None:
    return next((section for section in lesson.sections if section.kind == kind), None)


def exercise_item_notes(
    lesson: Lesson, progress: LessonProgress
) -> tuple[dict[str, list[tuple[ExerciseNote, str]]], list[tuple[ExerciseNote, str]]]:
    """The answered notes by the lesson item of their exercise, and those of no item."""
    item_ids = {item.id for item in _exercises(lesson)}
    by_item: dict[str, list[tuple[ExerciseNote, str]]] = {}
    other: list[tuple[ExerciseNote, str]] = []
    for note, text in answered_notes(progress.notes):
        item_id = EXERCISE_ITEMS.get(note.exercise, "")
        if item_id in item_ids:
            by_item.setdefault(item_id, []).append((note, text))
        else:
            other.append((note, text))
    return by_item, other


def _exercises(lesson: Lesson) -> tuple[Item, ...]:
    try:
        return lesson.section("exercises").items
    except KeyError:
        return ()


def note_title(note: ExerciseNote) -> str:
    """An exercise note's heading: its strategy's title and the note's label."""
    if not note.strategy:
        return _(note.label)
    try:
        title = _(get_strategy(note.strategy).title)
    except InputError:
        title = note.strategy
    return _("{strategy}: {label}").format(strategy=title, label=_(note.label))


def export_data(
    lesson: Lesson, progress: LessonProgress, now: dt.datetime | None = None
) -> dict[str, Any]:
    """The notes as one JSON-ready object, sizes in bytes.

    Keys: ``lesson``, ``title``, ``status``, ``exported`` (ISO 8601, UTC), ``exercises`` (per
    exercise of the lesson, in order: number, id, text, and the learner's ``notes``),
    ``exercise1`` (column -> bytes; ``{}`` when not filled in or the form has an error),
    ``ledger_inputs`` (the inputs set: field, label, text), ``ledger_form`` (the form as typed),
    ``exercise_notes`` (id, exercise, strategy, label, text, reference: the engine's answer or
    ``""``, reference_source: where it comes from, :func:`engine_answer`),
    ``self_check`` (id, question, answer, revealed, key_points), ``reflections`` (id, label,
    text), ``objectives`` (id, text, trained_by: exercise and question ids, rating: start and
    end, each a level or None), ``readings`` (id, text, links: label and url, sources),
    ``looked_before_answering`` (note id -> when the learner chose to see the engine's answer
    first, ISO 8601 UTC; written or not) and ``quiz`` (:func:`quiz_summary`). Each entry of
    ``exercise_notes`` also says ``looked_before_answering`` (True, False, or None where the
    engine has no answer to compare with).
    """
    moment = now_utc(now)
    by_item, _other = exercise_item_notes(lesson, progress)
    return {
        "lesson": lesson.id,
        "title": lesson.title,
        "status": progress.status,
        "exported": utc_iso(moment),
        "exercises": [
            {
                "number": number,
                "id": item.id,
                "text": item.text,
                "notes": [note.id for note, _text in by_item.get(item.id, [])],
            }
            for number, item in enumerate(_exercises(lesson), start=1)
        ],
        "exercise1": exercise1_figures(progress),
        "ledger_inputs": [
            {"field": name, "label": label, "text": text}
            for name, label, text in ledger_inputs(exercise1_form(progress)[0])
        ],
        "ledger_inputs_last_good": exercise1_form(progress)[1],
        "ledger_form": dict(progress.forms.get("ledger", {})),
        "exercise_notes": [
            {
                "id": note.id,
                "exercise": note.exercise,
                "strategy": note.strategy,
                "label": _(note.label),
                "text": text,
                "reference": engine_answer(note)[0],
                "reference_source": engine_answer(note)[1],
                "looked_before_answering": looked_flag(progress, note.id),
            }
            for note, text in answered_notes(progress.notes)
        ],
        "self_check": [
            {
                "id": item.id,
                "question": item.text,
                "answer": progress.answers.get(item.id, ""),
                "revealed": item.id in progress.revealed,
                "key_points": list(item.key_points),
            }
            for item in lesson.self_check
        ],
        "reflections": [
            {"id": item.id, "label": item.text, "text": progress.reflections.get(item.id, "")}
            for item in lesson.reflection_fields
        ],
        "objectives": [
            {
                "id": item.id,
                "text": item.text,
                "trained_by": list(item.trained_by),
                "rating": {
                    "start": progress.objective_rating(item.id).start,
                    "end": progress.objective_rating(item.id).end,
                },
            }
            for item in lesson.objectives
        ],
        "readings": [
            {
                "id": item.id,
                "text": item.text,
                "links": [{"label": link.label, "url": link.url} for link in item.links],
                "sources": list(item.link_sources),
            }
            for item in readings(lesson)
        ],
        "looked_before_answering": dict(progress.looked),
        "quiz": quiz_summary(lesson, progress, moment),
    }


def looked_flag(progress: LessonProgress, note_id: str) -> bool | None:
    """Whether the learner chose to see the engine's answer to ``note_id`` before writing it;
    None where the engine has no answer to compare with."""
    if not answered_by_engine(note_id):
        return None
    return progress.looked_before_answering(note_id)


def readings(lesson: Lesson) -> list[Item]:
    """The items that carry links, in the lesson's order."""
    return [item for section in lesson.sections for item in section.items if item.links]
