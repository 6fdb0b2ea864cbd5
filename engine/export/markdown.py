"""The notes as Markdown with YAML front matter: the learner's words as blockquotes that render
exactly as typed in any CommonMark viewer.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable, Sequence
from typing import Any

import yaml

from engine.exercises import EXERCISE_ITEMS, FREE_NOTES, ExerciseNote, get_note
from engine.export.notes import (
    EXERCISE1_COLUMNS,
    LINE_BREAKS,
    NOT_ANSWERED,
    engine_answer,
    exercise1_figures,
    exercise1_form,
    exercise_item_notes,
    ledger_inputs,
    looked_flag,
    note_title,
    now_utc,
    quiz_summary,
)
from engine.i18n import N_, ngettext
from engine.i18n import gettext as _
from engine.lesson import (
    Item,
    Lesson,
    Section,
    escape_markdown,
    key_points_markdown,
    links_markdown,
)
from engine.lesson.markdown import DEFAULT_LABELS, MarkdownLabels
from engine.progress import (
    RATING_LABELS,
    STATUS_LABELS,
    LessonProgress,
    dump_yaml,
)
from engine.timefmt import local_text, parse_utc, utc_iso
from engine.units import format_gb, format_gib


def learner_markdown(text: str) -> str:
    """The learner's ``text`` as a Markdown blockquote that renders to exactly ``text`` (its
    line breaks kept, nothing turned into a heading, list, rule, code or HTML), or
    :data:`NOT_ANSWERED` when it is blank."""
    if not text.strip():
        return _(NOT_ANSWERED)
    return "\n".join(f"> {line}" for line in escape_markdown(text).split("\n"))


def _one_line(text: str) -> str:
    """Lesson text for a heading or a table cell: one line, rendered literally."""
    return escape_markdown(LINE_BREAKS.sub(" ", text))


def _table(header: tuple[str, ...], align: str, rows: Sequence[tuple[str, ...]]) -> str:
    lines = [f"| {' | '.join(header)} |", f"|{align}|"]
    lines.extend(f"| {' | '.join(row)} |" for row in rows)
    return "\n".join(lines)


def _labels() -> MarkdownLabels:
    """The words around the lesson's added material, in the interface language."""
    return MarkdownLabels(
        note=_(DEFAULT_LABELS.note),
        added=_(DEFAULT_LABELS.added),
        sources=_(DEFAULT_LABELS.sources),
        labelled=_(DEFAULT_LABELS.labelled),
        separator=_(DEFAULT_LABELS.separator),
    )


def _exercise1_markdown(progress: LessonProgress) -> list[str]:
    form, last_good = exercise1_form(progress)
    inputs = ledger_inputs(form)
    figures = exercise1_figures(progress)
    parts: list[str] = []
    if last_good:
        parts.append(
            _(
                "The Ledger's form has a refused field now; exercise 1 is its last good result, "
                "the one the pane still shows (and the study plan counts):"
            )
        )
    if inputs:
        parts.append(_("Inputs (the Ledger pane, per rank):"))
        pairs = [(_one_line(label), _one_line(text)) for _name, label, text in inputs]
        parts.append(_table((_("input"), _("value")), "---|---", pairs))
    if figures:
        rows: list[tuple[str, ...]] = [
            (_(label), f"{figures[key]:.0f}", format_gb(figures[key]), format_gib(figures[key]))
            for key, label in EXERCISE1_COLUMNS
            if key in figures
        ]
        total = sum(figures.values())
        bold = (f"{total:.0f}", format_gb(total), format_gib(total))
        total_label = _("total (these columns)")
        rows.append((f"**{total_label}**", *(f"**{cell}**" for cell in bold)))
        header = (_("column"), _("bytes"), "GB (1e9)", "GiB (2^30)")
        parts.append(_table(header, "---|---:|---:|---:", rows))
    elif inputs:
        parts.append(
            _(
                "No figures: these inputs have an invalid field, so the Ledger computed nothing "
                "for them. Fix it in the Ledger (F2) and export again."
            )
        )
    return parts


# Msgids, translated where they are written into the notes.
LOOKED_FIRST = N_("_Looked at the engine's answer first ({at}), then wrote this note._")
WRITTEN_FIRST = N_("_Written before looking at the engine's answer._")
NO_ENGINE_ANSWER = N_(
    "_No engine answer to compare with: the exercise asks for a factor the formulas alone "
    "cannot decide._"
)
LOOKED_UNWRITTEN = N_("_Looked at the engine's answer first ({at}); no note written yet:_ {notes}")


def _note_markdown(note: ExerciseNote, text: str, progress: LessonProgress) -> list[str]:
    parts = [f"**{_one_line(note_title(note))}**", learner_markdown(text)]
    looked = looked_flag(progress, note.id)
    if looked:
        parts.append(_(LOOKED_FIRST).format(at=progress.looked[note.id]))
    elif looked is not None:
        parts.append(_(WRITTEN_FIRST))
    answer, source = engine_answer(note)
    if answer:
        parts.append(
            _("Engine's answer ({source}): {answer}").format(
                source=source, answer=_one_line(answer)
            )
        )
    elif note in FREE_NOTES:
        parts.append(_(NO_ENGINE_ANSWER))
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
    titles = "; ".join(_one_line(note_title(get_note(note_id))) for note_id in blank)
    return [_(LOOKED_UNWRITTEN).format(at=at, notes=titles)]


def _exercises_markdown(lesson: Lesson, section: Section, progress: LessonProgress) -> list[str]:
    by_item, other = exercise_item_notes(lesson, progress)
    parts: list[str] = []
    for number, item in enumerate(section.items, start=1):
        parts.append(f"### {number}. {_one_line(item.text)}")
        body: list[str] = []
        if item.id == EXERCISE_ITEMS[1]:
            body.extend(_exercise1_markdown(progress))
        for note, text in by_item.get(item.id, []):
            body.extend(_note_markdown(note, text, progress))
        body.extend(_looked_unwritten(item, progress))
        parts.extend(body or [_(NOT_ANSWERED)])
    if other:
        parts.append("### " + _("Other notes"))
        for note, text in other:
            parts.extend(_note_markdown(note, text, progress))
    return parts


def _self_check_markdown(lesson: Lesson, section: Section, progress: LessonProgress) -> list[str]:
    parts: list[str] = []
    for number, item in enumerate(section.items, start=1):
        parts.append(f"### {number}. {_one_line(item.text)}")
        parts.append(learner_markdown(progress.answers.get(item.id, "")))
        if item.id in progress.revealed and item.key_points:
            parts.append(_("Key points (revealed):"))
            parts.append(key_points_markdown(item, _labels()))
    return parts


def _reflection_markdown(lesson: Lesson, section: Section, progress: LessonProgress) -> list[str]:
    parts: list[str] = []
    for item in section.items:
        parts.append(f"### {_one_line(item.text)}")
        parts.append(learner_markdown(progress.reflections.get(item.id, "")))
    return parts


def _trainer_names(lesson: Lesson) -> dict[str, str]:
    """Exercise and self-check ids -> ``exercise 2``, ``self-check 1``."""
    exercise, self_check = _("exercise {number}"), _("self-check {number}")
    names = {item.id: exercise.format(number=n) for n, item in enumerate(lesson.exercises, 1)}
    names.update(
        {item.id: self_check.format(number=n) for n, item in enumerate(lesson.self_check, 1)}
    )
    return names


def _rating_words(level: str | None) -> str:
    return _(RATING_LABELS.get(level or "", "not rated"))


def _objectives_markdown(lesson: Lesson, section: Section, progress: LessonProgress) -> list[str]:
    if not any(progress.ratings.get(item.id) for item in section.items):
        return []
    names = _trainer_names(lesson)
    parts: list[str] = []
    for number, item in enumerate(section.items, start=1):
        rating = progress.objective_rating(item.id)
        parts.append(f"### {number}. {_one_line(item.text)}")
        start, end = _rating_words(rating.start), _rating_words(rating.end)
        if item.trained_by:
            # One sentence pair per language: Chinese sets no space after its 。.
            trained = _(", ").join(names.get(trainer, trainer) for trainer in item.trained_by)
            line = _(
                "Your rating: at the start {start}; at the end {end}. Trained by {trainers}."
            ).format(start=start, end=end, trainers=trained)
        else:
            line = _("Your rating: at the start {start}; at the end {end}.").format(
                start=start, end=end
            )
        parts.append(_one_line(line))
    return parts


def _readings_markdown(lesson: Lesson, section: Section, progress: LessonProgress) -> list[str]:
    return [
        f"- {_one_line(item.text)}\n  " + links_markdown(item, _labels()).replace("\n", "\n  ")
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


QUIZ_HEADING = N_("Spaced review (quiz)")


def _quiz_markdown(summary: dict[str, Any]) -> list[str]:
    if "error" in summary:
        return [
            _("The quiz data could not be read: {error}").format(
                error=_one_line(str(summary["error"]))
            )
        ]
    # As the quiz screen counts "reviewed": rated in the quiz, and self-checks answered in the
    # lesson with their key points shown (not rated yet).
    in_lesson = int(summary.get("answered_in_lesson", 0))
    # "1 item" in the singular: a lesson may have one quiz item.
    items = ngettext("{count} item", "{count} items", summary["items"]).format(
        count=summary["items"]
    )
    if not summary["reviews"]:
        if in_lesson:
            return [
                ngettext(
                    "No quiz reviews yet ({items}; {count} self-check answered in the "
                    "lesson). F12 starts the quiz.",
                    "No quiz reviews yet ({items}; {count} self-checks answered in the "
                    "lesson). F12 starts the quiz.",
                    in_lesson,
                ).format(items=items, count=in_lesson)
            ]
        return [_("No reviews yet ({items}, all new). F12 starts the quiz.").format(items=items)]
    if in_lesson:
        reviewed = ngettext(
            "reviews: {reviews} ({reviewed} of {items} reviewed: {rated} rated in the "
            "quiz, {count} self-check answered in the lesson; {left} not reviewed yet)",
            "reviews: {reviews} ({reviewed} of {items} reviewed: {rated} rated in the "
            "quiz, {count} self-checks answered in the lesson; {left} not reviewed yet)",
            in_lesson,
        ).format(
            reviews=summary["reviews"],
            reviewed=summary["reviewed"] + in_lesson,
            items=items,
            rated=summary["reviewed"],
            count=in_lesson,
            # Not "new": the quiz's new items include the self-checks answered in the lesson.
            left=summary["items"] - summary["reviewed"] - in_lesson,
        )
    else:
        reviewed = _("reviews: {reviews} ({reviewed} of {items} reviewed, {new} new)").format(
            reviews=summary["reviews"],
            reviewed=summary["reviewed"],
            items=items,
            new=summary["new"],
        )
    lines = ["- " + reviewed]
    if summary["recall"] is not None:
        recall = f"{summary['recall']:.0%}"
        lines.append(
            "- " + _("recall: {recall} of reviews rated Good or Easy").format(recall=recall)
        )
    if summary["retrievability"] is not None:
        retrievability = f"{summary['retrievability']:.0%}"
        lines.append(
            "- "
            + _(
                "retrievability now: {retrievability} (FSRS's estimate, mean over the reviewed "
                "items)"
            ).format(retrievability=retrievability)
        )
    lines.append("- " + _("due now: {count}").format(count=summary["due"]))
    due = parse_utc(summary["next_due"]) if summary["next_due"] else None
    if due is not None:
        # The learner's local time with its offset, as the command line writes times (the
        # JSON export keeps UTC).
        lines.append("- " + _("next due: {time}").format(time=local_text(due, zone=True)))
    return ["\n".join(lines)]


def _front_matter(lesson: Lesson, progress: LessonProgress, exported: str) -> dict[str, Any]:
    return {
        "title": _("{title} — notes").format(title=lesson.title),
        "lesson": lesson.id,
        "lesson_date": lesson.meta.date,
        "status": progress.status,
        "exported": exported,
    }


def notes_body(lesson: Lesson, progress: LessonProgress, now: dt.datetime | None = None) -> str:
    """The notes as CommonMark (with tables), without front matter (see module docstring)."""
    moment = now_utc(now)
    parts = [
        "# " + _one_line(_("{lesson} notes: {title}").format(lesson=lesson.id, title=lesson.title)),
        _one_line(
            _("Status: {status} · exported {time}").format(
                status=_(STATUS_LABELS[progress.status]), time=utc_iso(moment)
            )
        ),
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
    parts.append(f"## {_(QUIZ_HEADING)}")
    parts.extend(_quiz_markdown(quiz_summary(lesson, progress, moment)))
    return "\n\n".join(parts) + "\n"


def export_markdown(
    lesson: Lesson, progress: LessonProgress, now: dt.datetime | None = None
) -> str:
    """The notes as Markdown with YAML front matter (see module docstring)."""
    moment = now_utc(now)
    front = dump_yaml(_front_matter(lesson, progress, utc_iso(moment)))
    return f"---\n{front}---\n\n{notes_body(lesson, progress, moment)}"


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
