"""Export the learner's filled-in notes for a lesson: Markdown, JSON, HTML, or an Anki deck.

The notes follow the lesson's order: its exercises (exercise 1's memory ledger as a table, the
notes of exercises 2 to 5 beside the engine's answers), the self-check answers with the key points
the learner revealed, the reflection fields, then a summary of the spaced review. Each section of
the lesson that has notes is rendered by one function of :data:`_SECTION_NOTES`, keyed by the
section id or kind; a section without one is left out. The learning objectives appear with the
learner's ratings once any is rated; the readings (items with links, such as the course
alignment) with their links. Each exercise note the engine has an answer to says whether it was
written before looking at that answer or after the learner chose to look first.

- Markdown (``md``) starts with YAML front matter written by the safe YAML dumper (so a title with
  a colon, or a value such as ``no``, round-trips). The learner's text is rendered literally by
  any CommonMark renderer: each answer is a blockquote whose Markdown characters are
  backslash-escaped and whose line breaks are hard breaks (:func:`engine.lesson.escape_markdown`),
  so a line ``---`` or ``# x`` stays a line of text, never a rule, a heading or a list.
- JSON (``json``): the same notes as one object (:func:`export_data`), sizes in bytes.
- HTML (``html``): the Markdown body rendered by markdown-it-py (CommonMark, raw HTML off, so the
  learner's ``<`` is escaped) into one self-contained page (no script, no external file).
- Anki (``anki``): the lesson's quiz items (:func:`engine.quiz.lesson_items`) as an ``.apkg``
  deck written with genanki. Model and deck ids and each note's GUID are derived from the lesson
  and item ids, so importing a newer export updates the cards instead of adding copies.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import errno
import functools
import html
import io
import itertools
import json
import random
import re
import sqlite3
import tempfile
import zipfile
import zlib
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import yaml

from engine.errors import InputError, ProgressError
from engine.exercises import (
    EXERCISE_ITEMS,
    FREE_NOTES,
    TRADEOFFS,
    ExerciseNote,
    answered_by_engine,
    answered_notes,
    get_note,
)
from engine.ledger import PRECISION_PRESETS
from engine.lesson import (
    Item,
    Lesson,
    Section,
    escape_markdown,
    key_points_markdown,
    links_markdown,
)
from engine.progress import (
    RATING_LABELS,
    STATUS_LABELS,
    LessonProgress,
    atomic_write_bytes,
    dump_yaml,
)
from engine.strategies import get_strategy
from engine.timefmt import parse_utc, utc_iso, utc_now
from engine.units import format_gb, format_gib

FORMATS = ("md", "json", "html", "anki")
# The file name extension of each format.
EXTENSIONS = {"md": "md", "json": "json", "html": "html", "anki": "apkg"}
FORMAT_DESCRIPTIONS = {
    "md": "Markdown notes",
    "json": "the notes as one JSON object",
    "html": "the notes as one web page",
    "anki": "the lesson's quiz items as an Anki deck (.apkg)",
}
NOT_ANSWERED = "_(not answered yet)_"
# Exercise 1's four columns (the lesson: 参数、梯度、Adam 状态与 activation 四栏), in bytes.
EXERCISE1_COLUMNS = (
    ("parameters", "参数 parameters"),
    ("gradients", "梯度 gradients"),
    ("adam_states", "Adam 状态 Adam states (master weights + moments)"),
    ("activations", "activations"),
)
# The Ledger form's inputs, by their names in the field's terms. The first nine are always part
# of the result; the others count only when the learner changed them from their default text.
LEDGER_INPUTS: tuple[tuple[str, str, str | None], ...] = (
    ("params", "parameters N", None),
    ("preset", "precision", None),
    ("weight_bytes", "weight bytes per parameter", None),
    ("grad_bytes", "gradient bytes per parameter", None),
    ("optimizer_bytes", "optimizer bytes per parameter K (fp32 master weights + moments)", None),
    ("dp", "data-parallel size P", None),
    ("zero", "ZeRO stage", None),
    ("convention", "bytes-per-parameter convention", None),
    ("gpu_memory", "GPU memory", None),
    ("seq", "sequence length s", ""),
    ("layers", "layers L", ""),
    ("hidden", "hidden size h", ""),
    ("heads", "attention heads a", ""),
    ("ffn_hidden", "FFN hidden size", ""),
    ("vocab", "vocabulary size V", ""),
    ("micro_batch", "micro-batch size b", "1"),
    ("recompute", "activation recomputation", "none"),
    ("sequence_parallel", "sequence parallel", "no"),
    ("tp", "tensor-parallel size", "1"),
    ("pp", "pipeline-parallel size", "1"),
    ("cp", "context-parallel size", "1"),
    ("ep", "expert-parallel size", "1"),
    ("experts", "experts", "1"),
    ("schedule", "pipeline schedule", "1f1b"),
    ("micro_batches", "micro-batches m", ""),
    ("virtual_stages", "virtual stages v", "1"),
    ("largest_layer_params", "largest layer (parameters, DeepSpeed ZeRO-3)", ""),
)
_UNSAFE_NAME = re.compile(r"[^A-Za-z0-9._-]+")
_RESERVED = {"CON", "PRN", "AUX", "NUL", *(f"COM{i}" for i in range(1, 10))} | {
    f"LPT{i}" for i in range(1, 10)
}
_LINE_BREAKS = re.compile(r"\r\n|\r|\n")
# Where an HTML export and an Anki deck name their lesson (see notes_owner).
_HTML_OWNER = re.compile(r'<meta name="shardbook-lesson" content="([^"]*)">')
_APKG_OWNER_PREFIX = b"shardbook-lesson:"


def _now(now: dt.datetime | None) -> dt.datetime:
    return (now or utc_now()).astimezone(dt.UTC)


# ---------------------------------------------------------------------------------- pieces


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
        if name == "preset":
            preset = PRECISION_PRESETS.get(text)
            text = preset.label if preset else "custom bytes per parameter"
        rows.append((name, label, text))
    for name, value in form.items():
        if name not in known and value.strip():
            rows.append((name, name.replace("_", " "), value.strip()))
    return rows


def exercise1_figures(progress: LessonProgress) -> dict[str, float]:
    """Exercise 1's figures (bytes per column), or ``{}`` when they do not belong to the saved
    form: the Ledger saves ``{}`` while its form has an invalid field."""
    figures = progress.figures.get("exercise1", {})
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


def _section(lesson: Lesson, kind: str) -> Section | None:
    return next((section for section in lesson.sections if section.kind == kind), None)


def _exercise_item_notes(
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


def _note_title(note: ExerciseNote) -> str:
    if not note.strategy:
        return note.label
    try:
        return f"{get_strategy(note.strategy).title}: {note.label}"
    except InputError:
        return f"{note.strategy}: {note.label}"


# ---------------------------------------------------------------------------------- JSON


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
    moment = _now(now)
    by_item, _other = _exercise_item_notes(lesson, progress)
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
            for name, label, text in ledger_inputs(progress.forms.get("ledger", {}))
        ],
        "ledger_form": dict(progress.forms.get("ledger", {})),
        "exercise_notes": [
            {
                "id": note.id,
                "exercise": note.exercise,
                "strategy": note.strategy,
                "label": note.label,
                "text": text,
                "reference": engine_answer(note)[0],
                "reference_source": engine_answer(note)[1],
                "looked_before_answering": _looked_flag(progress, note.id),
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
            for item in _readings(lesson)
        ],
        "looked_before_answering": dict(progress.looked),
        "quiz": quiz_summary(lesson, progress, moment),
    }


def _looked_flag(progress: LessonProgress, note_id: str) -> bool | None:
    if not answered_by_engine(note_id):
        return None
    return progress.looked_before_answering(note_id)


def _readings(lesson: Lesson) -> list[Item]:
    """The items that carry links, in the lesson's order."""
    return [item for section in lesson.sections for item in section.items if item.links]


# ---------------------------------------------------------------------------------- Markdown


def learner_markdown(text: str) -> str:
    """The learner's ``text`` as a Markdown blockquote that renders to exactly ``text`` (its
    line breaks kept, nothing turned into a heading, list, rule, code or HTML), or
    :data:`NOT_ANSWERED` when it is blank."""
    if not text.strip():
        return NOT_ANSWERED
    return "\n".join(f"> {line}" for line in escape_markdown(text).split("\n"))


def _one_line(text: str) -> str:
    """Lesson text for a heading or a table cell: one line, rendered literally."""
    return escape_markdown(_LINE_BREAKS.sub(" ", text))


def _table(header: tuple[str, ...], align: str, rows: Sequence[tuple[str, ...]]) -> str:
    lines = [f"| {' | '.join(header)} |", f"|{align}|"]
    lines.extend(f"| {' | '.join(row)} |" for row in rows)
    return "\n".join(lines)


def _exercise1_markdown(progress: LessonProgress) -> list[str]:
    form = progress.forms.get("ledger", {})
    inputs = ledger_inputs(form)
    figures = exercise1_figures(progress)
    parts: list[str] = []
    if inputs:
        parts.append("Inputs (the Ledger pane, per rank):")
        pairs = [(_one_line(label), _one_line(text)) for _name, label, text in inputs]
        parts.append(_table(("input", "value"), "---|---", pairs))
    if figures:
        rows: list[tuple[str, ...]] = [
            (label, f"{figures[key]:.0f}", format_gb(figures[key]), format_gib(figures[key]))
            for key, label in EXERCISE1_COLUMNS
            if key in figures
        ]
        total = sum(figures.values())
        bold = (f"{total:.0f}", format_gb(total), format_gib(total))
        rows.append(("**total (these columns)**", *(f"**{cell}**" for cell in bold)))
        header = ("column", "bytes", "GB (1e9)", "GiB (2^30)")
        parts.append(_table(header, "---|---:|---:|---:", rows))
    elif inputs:
        parts.append(
            "No figures: these inputs have an invalid field, so the Ledger computed nothing for "
            "them. Fix it in the Ledger (F2) and export again."
        )
    return parts


LOOKED_FIRST = "_Looked at the engine's answer first ({at}), then wrote this note._"
WRITTEN_FIRST = "_Written before looking at the engine's answer._"
NO_ENGINE_ANSWER = (
    "_No engine answer to compare with: the exercise asks for a factor the formulas alone "
    "cannot decide._"
)
LOOKED_UNWRITTEN = "_Looked at the engine's answer first ({at}); no note written yet:_ {notes}"


STRATEGIES_SOURCE = "engine/strategies.py"
SLOW_LINK_SOURCE = (
    "engine/scaling.py, tradeoffs_report: the Trade-offs pane's table at its default choices"
)


@functools.cache
def _slow_link_answer() -> str:
    from engine.scaling import (  # the step-time engine loads only when notes are exported
        TRADEOFFS_LINK,
        TRADEOFFS_WORLD,
        slow_link_answer,
        tradeoffs_report,
    )

    return slow_link_answer(tradeoffs_report(TRADEOFFS_LINK, TRADEOFFS_WORLD))


def engine_answer(note: ExerciseNote) -> tuple[str, str]:
    """The engine's answer to ``note`` and where it comes from: exercises 2 and 3 from
    :mod:`engine.strategies` (what the diagrams are drawn from); exercise 4 from
    :func:`engine.scaling.tradeoffs_report` at the Trade-offs pane's default choices (the same
    call the pane makes), written by :func:`engine.scaling.slow_link_answer`. ``("", "")`` where
    the engine has none (exercise 5 asks for a factor the formulas cannot decide)."""
    if note.reference:
        return note.reference, STRATEGIES_SOURCE
    if note.answered_by == TRADEOFFS:
        return _slow_link_answer(), SLOW_LINK_SOURCE
    return "", ""


def _note_markdown(note: ExerciseNote, text: str, progress: LessonProgress) -> list[str]:
    parts = [f"**{_one_line(_note_title(note))}**", learner_markdown(text)]
    looked = _looked_flag(progress, note.id)
    if looked:
        parts.append(LOOKED_FIRST.format(at=progress.looked[note.id]))
    elif looked is not None:
        parts.append(WRITTEN_FIRST)
    answer, source = engine_answer(note)
    if answer:
        parts.append(f"Engine's answer ({source}): {_one_line(answer)}")
    elif note in FREE_NOTES:
        parts.append(NO_ENGINE_ANSWER)
    return parts


def _looked_unwritten(item: Item, progress: LessonProgress) -> list[str]:
    """The notes of ``item`` whose answer the learner looked at first and has not written."""
    blank = [
        note_id
        for note_id in item.notes
        if note_id in progress.looked and not progress.notes.get(note_id, "").strip()
    ]
    if not blank:
        return []
    at = min(progress.looked[note_id] for note_id in blank)
    titles = "; ".join(_one_line(_note_title(get_note(note_id))) for note_id in blank)
    return [LOOKED_UNWRITTEN.format(at=at, notes=titles)]


def _exercises_markdown(lesson: Lesson, section: Section, progress: LessonProgress) -> list[str]:
    by_item, other = _exercise_item_notes(lesson, progress)
    parts: list[str] = []
    for number, item in enumerate(section.items, start=1):
        parts.append(f"### {number}. {_one_line(item.text)}")
        body: list[str] = []
        if item.id == EXERCISE_ITEMS[1]:
            body.extend(_exercise1_markdown(progress))
        for note, text in by_item.get(item.id, []):
            body.extend(_note_markdown(note, text, progress))
        body.extend(_looked_unwritten(item, progress))
        parts.extend(body or [NOT_ANSWERED])
    if other:
        parts.append("### Other notes")
        for note, text in other:
            parts.extend(_note_markdown(note, text, progress))
    return parts


def _self_check_markdown(lesson: Lesson, section: Section, progress: LessonProgress) -> list[str]:
    parts: list[str] = []
    for number, item in enumerate(section.items, start=1):
        parts.append(f"### {number}. {_one_line(item.text)}")
        parts.append(learner_markdown(progress.answers.get(item.id, "")))
        if item.id in progress.revealed and item.key_points:
            parts.append("Key points (revealed):")
            parts.append(key_points_markdown(item))
    return parts


def _reflection_markdown(lesson: Lesson, section: Section, progress: LessonProgress) -> list[str]:
    parts: list[str] = []
    for item in section.items:
        parts.append(f"### {_one_line(item.text)}")
        parts.append(learner_markdown(progress.reflections.get(item.id, "")))
    return parts


def _trainer_names(lesson: Lesson) -> dict[str, str]:
    """Exercise and self-check ids -> ``exercise 2``, ``self-check 1``."""
    names = {item.id: f"exercise {n}" for n, item in enumerate(lesson.exercises, start=1)}
    names.update({item.id: f"self-check {n}" for n, item in enumerate(lesson.self_check, start=1)})
    return names


def _rating_words(level: str | None) -> str:
    return RATING_LABELS.get(level or "", "not rated")


def _objectives_markdown(lesson: Lesson, section: Section, progress: LessonProgress) -> list[str]:
    if not any(progress.ratings.get(item.id) for item in section.items):
        return []
    names = _trainer_names(lesson)
    parts: list[str] = []
    for number, item in enumerate(section.items, start=1):
        rating = progress.objective_rating(item.id)
        parts.append(f"### {number}. {_one_line(item.text)}")
        line = (
            f"Your rating: at the start {_rating_words(rating.start)}; "
            f"at the end {_rating_words(rating.end)}."
        )
        if item.trained_by:
            trained = ", ".join(names.get(trainer, trainer) for trainer in item.trained_by)
            line += f" Trained by {trained}."
        parts.append(_one_line(line))
    return parts


def _readings_markdown(lesson: Lesson, section: Section, progress: LessonProgress) -> list[str]:
    return [
        f"- {_one_line(item.text)}\n  " + links_markdown(item).replace("\n", "\n  ")
        for item in section.items
        if item.links
    ]


# Section id -> the notes of that section. The lesson's order decides where each appears.
_SECTION_NOTES: dict[str, Callable[[Lesson, Section, LessonProgress], list[str]]] = {
    "exercises": _exercises_markdown,
    "self-check": _self_check_markdown,
    "reflection": _reflection_markdown,
}
_KIND_NOTES = {
    "self-check": _self_check_markdown,
    "reflection": _reflection_markdown,
    "objectives": _objectives_markdown,
}
QUIZ_HEADING = "Spaced review (quiz)"


def _quiz_markdown(summary: dict[str, Any]) -> list[str]:
    if "error" in summary:
        return [f"The quiz data could not be read: {_one_line(str(summary['error']))}"]
    if not summary["reviews"]:
        return [f"No reviews yet ({summary['items']} items, all new). F12 starts the quiz."]
    lines = [
        f"- reviews: {summary['reviews']} ({summary['reviewed']} of {summary['items']} items "
        f"reviewed, {summary['new']} new)",
    ]
    if summary["recall"] is not None:
        lines.append(f"- recall: {summary['recall']:.0%} of reviews rated Good or Easy")
    if summary["retrievability"] is not None:
        lines.append(
            f"- retrievability now: {summary['retrievability']:.0%} (FSRS's estimate, mean over "
            "the reviewed items)"
        )
    lines.append(f"- due now: {summary['due']}")
    if summary["next_due"]:
        lines.append(f"- next due: {summary['next_due']}")
    return ["\n".join(lines)]


def _front_matter(lesson: Lesson, progress: LessonProgress, exported: str) -> dict[str, Any]:
    return {
        "title": f"{lesson.title} — notes",
        "lesson": lesson.id,
        "lesson_date": lesson.meta.date,
        "status": progress.status,
        "exported": exported,
    }


def notes_body(lesson: Lesson, progress: LessonProgress, now: dt.datetime | None = None) -> str:
    """The notes as CommonMark (with tables), without front matter (see module docstring)."""
    moment = _now(now)
    parts = [
        f"# {_one_line(f'{lesson.id} notes: {lesson.title}')}",
        _one_line(f"Status: {STATUS_LABELS[progress.status]} · exported {utc_iso(moment)}"),
    ]
    for section in lesson.sections:
        render = _SECTION_NOTES.get(section.id) or _KIND_NOTES.get(section.kind)
        if render is None and any(item.links for item in section.items):
            render = _readings_markdown
        body = render(lesson, section, progress) if render is not None else []
        if not body:
            continue
        parts.append(f"## {_one_line(section.title)}")
        parts.extend(body)
    parts.append(f"## {QUIZ_HEADING}")
    parts.extend(_quiz_markdown(quiz_summary(lesson, progress, moment)))
    return "\n\n".join(parts) + "\n"


def export_markdown(
    lesson: Lesson, progress: LessonProgress, now: dt.datetime | None = None
) -> str:
    """The notes as Markdown with YAML front matter (see module docstring)."""
    moment = _now(now)
    front = dump_yaml(_front_matter(lesson, progress, utc_iso(moment)))
    return f"---\n{front}---\n\n{notes_body(lesson, progress, moment)}"


# ---------------------------------------------------------------------------------- HTML

_PAGE_STYLE = """
body { font-family: system-ui, sans-serif; max-width: 46rem; margin: 2rem auto; padding: 0 1rem;
       line-height: 1.5; color: #1d1d1f; background: #fff; }
blockquote { margin: 0.5rem 0; padding: 0.25rem 1rem; border-left: 4px solid #5b8def;
             background: #f3f6fd; }
blockquote p { white-space: pre-wrap; margin: 0.25rem 0; }
table { border-collapse: collapse; margin: 0.5rem 0; }
th, td { border: 1px solid #c8c8cc; padding: 0.2rem 0.6rem; }
td { font-variant-numeric: tabular-nums; }
h1 { font-size: 1.6rem; } h2 { border-bottom: 1px solid #ddd; margin-top: 2rem; }
"""


def export_html(lesson: Lesson, progress: LessonProgress, now: dt.datetime | None = None) -> str:
    """The notes as one self-contained HTML page: :func:`notes_body` rendered by markdown-it-py
    (CommonMark plus tables; raw HTML is not passed through, so every ``<`` of the learner's is
    escaped), with an inline style sheet and no script or external resource."""
    from markdown_it import MarkdownIt  # loaded only for this format

    moment = _now(now)
    body = (
        MarkdownIt("commonmark", {"html": False})
        .enable("table")
        .render(notes_body(lesson, progress, moment))
    )
    # The learner's spaces are kept (white-space: pre-wrap), so a line break is the <br> alone.
    body = body.replace("<br />\n", "<br />")
    title = html.escape(f"{lesson.id} notes: {lesson.title}")
    owner = html.escape(lesson.id)
    return (
        "<!DOCTYPE html>\n"
        '<html lang="zh">\n<head>\n<meta charset="utf-8">\n'
        '<meta name="viewport" content="width=device-width, initial-scale=1">\n'
        f'<meta name="shardbook-lesson" content="{owner}">\n'
        f'<meta name="shardbook-exported" content="{utc_iso(moment)}">\n'
        f"<title>{title}</title>\n<style>{_PAGE_STYLE}</style>\n</head>\n"
        f"<body>\n{body}</body>\n</html>\n"
    )


# ---------------------------------------------------------------------------------- Anki


def _stable_id(name: str) -> int:
    """An id for an Anki model or deck that is the same in every export (genanki asks for ids
    between 2^30 and 2^31)."""
    return (1 << 30) + zlib.crc32(name.encode("utf-8")) % (1 << 30)


ANKI_MODEL_ID = _stable_id("shardbook/quiz-card/1")
ANKI_FIELDS = ("Question", "Answer", "Sources", "Item")
_CARD_STYLE = (
    ".card { font-family: system-ui, sans-serif; font-size: 18px; text-align: left; "
    "color: #1d1d1f; background: #fff; } .sources { font-size: 13px; color: #666; }"
)


def anki_deck_id(lesson_id: str) -> int:
    """The deck id of lesson ``lesson_id``'s cards (the same in every export)."""
    return _stable_id(f"shardbook/deck/{lesson_id}")


def _card_html(text: str) -> str:
    return html.escape(text).replace("\r\n", "\n").replace("\r", "\n").replace("\n", "<br>")


def anki_cards(lesson: Lesson) -> list[dict[str, str]]:
    """The lesson's quiz items as cards: ``id`` (the quiz item id), ``kind``, ``question`` and
    ``answer`` (plain text), ``sources``. A drill is asked with fixed numbers (seeded by its id),
    so the card is the same in every export; the app's quiz draws new numbers each time."""
    from engine.quiz import ask, lesson_items  # fsrs loads only for this format

    cards: list[dict[str, str]] = []
    for item in lesson_items(lesson):
        question = ask(item, lesson, random.Random(f"{lesson.id}/{item.id}"))
        prompt = question.prompt
        if question.answer_kind == "choice":
            options = "\n".join(
                f"{'abcd'[index]}) {option}" for index, option in enumerate(question.options)
            )
            prompt = f"{prompt}\n{options}"
        elif question.answer_kind == "true-false":
            prompt = f"{prompt}\n\nTrue or false?"
        elif question.answer_kind == "number":
            prompt = f"{prompt}\n\n(Fixed numbers; the app's quiz draws new ones each time.)"
        expected = question.expected_text()
        answer = f"{expected}\n\n{question.solution}" if expected else question.solution
        cards.append(
            {
                "id": item.id,
                "kind": item.kind,
                "question": prompt,
                "answer": answer,
                "sources": "; ".join(question.sources),
            }
        )
    return cards


def export_anki(lesson: Lesson, now: dt.datetime | None = None) -> bytes:
    """The lesson's quiz items as an Anki package (``.apkg``: a zip holding the SQLite
    collection ``collection.anki2`` and a ``media`` map), built with genanki; the zip comment
    names the lesson (:func:`notes_owner`)."""
    import genanki  # loaded only for this format

    model = genanki.Model(
        ANKI_MODEL_ID,
        "shardbook quiz card",
        fields=[{"name": name} for name in ANKI_FIELDS],
        templates=[
            {
                "name": "Card 1",
                "qfmt": "{{Question}}",
                "afmt": '{{FrontSide}}<hr id="answer">{{Answer}}'
                '<div class="sources">{{Sources}}</div>',
            }
        ],
        css=_CARD_STYLE,
    )
    deck = genanki.Deck(anki_deck_id(lesson.id), f"shardbook::{lesson.id} {lesson.title}")
    for card in anki_cards(lesson):
        deck.add_note(
            genanki.Note(
                model=model,
                fields=[
                    _card_html(card["question"]),
                    _card_html(card["answer"]),
                    _card_html(card["sources"]),
                    html.escape(card["id"]),
                ],
                tags=[lesson.id, card["kind"]],
                guid=genanki.guid_for("shardbook", lesson.id, card["id"]),
            )
        )
    timestamp = _now(now).timestamp()
    # genanki's own write_to_file leaves its temporary database behind; this one is removed.
    with tempfile.TemporaryDirectory(prefix="shardbook-anki-") as folder:
        database = Path(folder) / "collection.anki2"
        connection = sqlite3.connect(database)
        try:
            genanki.Package(deck).write_to_db(
                connection.cursor(), timestamp, itertools.count(int(timestamp * 1000))
            )
            connection.commit()
        finally:
            connection.close()
        buffer = io.BytesIO()
        with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as package:
            package.write(database, "collection.anki2")
            package.writestr("media", "{}")
            package.comment = _APKG_OWNER_PREFIX + lesson.id.encode("utf-8")
    return buffer.getvalue()


# ---------------------------------------------------------------------------------- files


def export_text(
    lesson: Lesson, progress: LessonProgress, fmt: str, now: dt.datetime | None = None
) -> str:
    """The notes in text format ``fmt`` (``md``, ``json`` or ``html``).

    Raises:
        ValueError: another format (``anki`` is binary: :func:`export_bytes`).
    """
    if fmt == "md":
        return export_markdown(lesson, progress, now)
    if fmt == "json":
        return json.dumps(export_data(lesson, progress, now), ensure_ascii=False, indent=2) + "\n"
    if fmt == "html":
        return export_html(lesson, progress, now)
    raise ValueError(f"format must be one of md, json, html (got {fmt!r})")


def export_bytes(
    lesson: Lesson, progress: LessonProgress, fmt: str, now: dt.datetime | None = None
) -> bytes:
    """The export in format ``fmt`` (one of :data:`FORMATS`) as the bytes of its file.

    Raises:
        ValueError: an unknown format.
    """
    if fmt == "anki":
        return export_anki(lesson, now)
    return export_text(lesson, progress, fmt, now).encode("utf-8")


def safe_file_name(lesson_id: str, fmt: str) -> str:
    """A file name for a lesson's export in format ``fmt`` (or a bare extension): no path
    separators, no reserved names, <= 80 chars."""
    stem = _UNSAFE_NAME.sub("_", lesson_id).strip("._") or "lesson"
    if stem.upper() in _RESERVED:
        stem = f"{stem}_"
    return f"{stem[:64]}-notes.{EXTENSIONS.get(fmt, fmt)}"


class NotesConflict(FileExistsError):
    """The target file holds another lesson's exported notes (``owner``); it was not touched."""

    def __init__(self, path: Path, owner: str) -> None:
        super().__init__(
            errno.EEXIST,
            f"holds the notes of lesson {owner!r}; choose another file name",
            str(path),
        )
        self.owner = owner


def notes_owner(path: Path) -> str | None:
    """The lesson whose export ``path`` holds (Markdown front matter, the JSON ``lesson`` key,
    the HTML page's ``shardbook-lesson`` meta tag or the Anki package's zip comment), or
    ``None`` when the file is missing or is not a shardbook export."""
    try:
        data = path.read_bytes()
    except OSError:
        return None
    if data.startswith(b"PK"):
        with contextlib.suppress(zipfile.BadZipFile, OSError, ValueError):
            comment = zipfile.ZipFile(io.BytesIO(data)).comment
            if comment.startswith(_APKG_OWNER_PREFIX):
                return comment[len(_APKG_OWNER_PREFIX) :].decode("utf-8", "replace")
        return None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    if text.startswith("<!DOCTYPE html>"):
        match = _HTML_OWNER.search(text)
        return html.unescape(match.group(1)) if match else None
    try:
        parsed = json.loads(text) if text.lstrip().startswith("{") else split_front_matter(text)[0]
    except (ValueError, RecursionError, yaml.YAMLError):
        return None
    owner = parsed.get("lesson") if isinstance(parsed, dict) else None
    return owner if isinstance(owner, str) else None


def export_path(folder: Path, lesson_id: str, fmt: str) -> Path:
    """Where the app exports a lesson's notes in ``folder``: :func:`safe_file_name`, or with
    ``-2``, ``-3``... when that name already holds another lesson's notes (two ids can map to
    one safe name, e.g. ``CON`` and ``CON_``)."""
    name = safe_file_name(lesson_id, fmt)
    stem, suffix = name.rsplit(".", 1)
    path, number = folder / name, 1
    while (owner := notes_owner(path)) is not None and owner != lesson_id:
        number += 1
        path = folder / f"{stem}-{number}.{suffix}"
    return path


def write_export(
    path: Path,
    content: str | bytes,
    *,
    create_folder: bool = False,
    lesson_id: str | None = None,
) -> Path:
    """Write an export atomically to ``path`` (text as UTF-8).

    A missing folder is an error (a mistyped ``-o`` path must not leave folders behind) unless
    ``create_folder`` is set, as the app does for its own ``exports/`` folder. With
    ``lesson_id``, a file holding another lesson's notes is never overwritten.

    Raises:
        NotesConflict: ``path`` holds the notes of a lesson other than ``lesson_id``.
        OSError: the folder is missing (ENOENT) or cannot be written.
    """
    if lesson_id is not None:
        owner = notes_owner(path)
        if owner is not None and owner != lesson_id:
            raise NotesConflict(path, owner)
    if not create_folder and not path.parent.is_dir():
        raise FileNotFoundError(errno.ENOENT, "no such folder", str(path.parent))
    data = content.encode("utf-8") if isinstance(content, str) else content
    atomic_write_bytes(path, data)
    return path


def split_front_matter(markdown: str) -> tuple[dict[str, Any], str]:
    """Split exported Markdown into its front matter (parsed, safe loader) and body.

    Raises:
        ValueError: the text does not start with a front-matter block.
    """
    if not markdown.startswith("---\n"):
        raise ValueError("no front matter")
    end = markdown.index("\n---\n", 4)
    data = yaml.safe_load(markdown[4 : end + 1])
    if not isinstance(data, dict):
        raise ValueError("front matter is not a mapping")
    return data, markdown[end + 5 :]
