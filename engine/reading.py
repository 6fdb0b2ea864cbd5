"""What the reading pane shows of a lesson, as plain text blocks in order.

The reader draws every line itself (``engine.linebreak`` breaks them; Textual and Rich wrap only
at spaces), so it needs the lesson's structure rather than Markdown: paragraphs, list items with
their markers, each formula's Unicode lines, its TeX, and its note and where that comes from.
Every text here is lesson text, shown literally: nothing is parsed as markup. A section's
``body`` is shown as written, one block per paragraph (paragraphs are separated by a blank line);
the Markdown export (``engine.lesson.lesson_markdown``) is where it is read as Markdown.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final, Literal

from engine.i18n import gettext
from engine.lesson import (
    DEFAULT_LABELS,
    Formula,
    Lesson,
    MarkdownLabels,
    Section,
    meta_lines,
)

BlockKind = Literal["paragraph", "item", "formula", "label", "tex", "note", "provenance"]
BULLET: Final = "• "
_PARAGRAPH_BREAK: Final = re.compile(r"\n[ \t]*\n")


@dataclass(frozen=True)
class Block:
    """One block of the reading pane.

    Attributes:
        kind: ``paragraph`` (body text, a prose item, a header line), ``item`` (a list entry),
            ``formula`` (one line of a formula's Unicode form), ``label`` (the word before the
            TeX), ``tex`` (the TeX source, as written), ``note`` (a formula's note, added
            material) or ``provenance`` ("added material; sources: ...").
        text: the text, literally; it may hold line breaks (``tex``).
        marker: drawn before the first line of an ``item`` (``"1. "``, ``"• "``); the lines
            after it are indented by its width.
    """

    kind: BlockKind
    text: str
    marker: str = ""


def _provenance(added: bool, sources: tuple[str, ...], labels: MarkdownLabels) -> list[Block]:
    words = [gettext(labels.added)] if added else []
    if sources:
        shown = gettext(labels.labelled).format(
            label=gettext(labels.sources), text=gettext(labels.separator).join(sources)
        )
        words.append(shown)
    return [Block("provenance", gettext(labels.separator).join(words))] if words else []


def formula_blocks(formula: Formula, labels: MarkdownLabels = DEFAULT_LABELS) -> list[Block]:
    """A formula: each line of its Unicode form, the TeX as the source writes it, and its note
    with what it rests on (the same parts as ``engine.lesson.formula_markdown``)."""
    blocks = [Block("formula", line) for line in formula.text.splitlines()]
    blocks.append(Block("label", gettext("{label}:").format(label=labels.tex)))
    blocks.append(Block("tex", formula.source))
    if formula.note.strip() or formula.sources:
        note_label = gettext(labels.note)
        note = (
            gettext(labels.labelled).format(label=note_label, text=formula.note)
            if formula.note.strip()
            else note_label
        )
        blocks.append(Block("note", note))
        blocks.extend(_provenance(formula.added or bool(formula.note), formula.sources, labels))
    return blocks


def section_blocks(section: Section, labels: MarkdownLabels = DEFAULT_LABELS) -> list[Block]:
    """A section without its title: its body's paragraphs, its items (paragraphs in a ``prose``
    section, otherwise list entries, numbered when ``section.numbered``), and each formula after
    the item it belongs to (or after all items). Self-check items show the question only (their
    key points are revealed after the learner answered)."""
    blocks = [
        Block("paragraph", paragraph.strip("\n"))
        for paragraph in _PARAGRAPH_BREAK.split(section.body)
        if paragraph.strip()
    ]
    placed: dict[str, list[Formula]] = {}
    for formula in section.formulas:
        placed.setdefault(formula.after, []).append(formula)
    for number, item in enumerate(section.items, start=1):
        if section.kind == "prose":
            blocks.append(Block("paragraph", item.text))
        else:
            marker = f"{number}. " if section.numbered else BULLET
            blocks.append(Block("item", item.text, marker))
        for formula in placed.get(item.id, ()):
            blocks.extend(formula_blocks(formula, labels))
    for formula in placed.get("", ()):
        blocks.extend(formula_blocks(formula, labels))
    return blocks


def meta_blocks(lesson: Lesson, status_label: str) -> list[Block]:
    """The lesson's header lines (``engine.lesson.meta_lines``) and then the learner's own status
    (``status_label``, already worded), as one paragraph of lines."""
    return [Block("paragraph", "\n".join((*meta_lines(lesson), status_label)))]
