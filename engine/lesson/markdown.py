"""A lesson as Markdown for the reading pane and the export.

Item text is escaped so that it renders literally (:func:`escape_markdown`); a section's ``body``
is Markdown by definition and is passed through.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from engine.i18n import N_
from engine.lesson.model import Formula, Item, Lesson, Section

# The labels of the lesson header, as the source lessons write them.
META_LABELS: Final = {
    "kind": "内容类型",
    "date": "日期",
    "phase": "阶段",
    "route": "总路线",
    "week": "周次 / 节奏",
    "status": "状态",
    "topics": "主题",
}


@dataclass(frozen=True)
class MarkdownLabels:
    """The few words the Markdown rendering adds around lesson text (the UI may translate)."""

    tex: str = "TeX"
    # English msgids (engine.i18n): the reader shows them in the interface language.
    note: str = N_("Note")
    added: str = N_("added material")
    sources: str = N_("sources")
    # A label before its text, and the separator between parts: the interface language's
    # punctuation (full-width in Chinese).
    labelled: str = N_("{label}: {text}")
    separator: str = N_("; ")


DEFAULT_LABELS: Final = MarkdownLabels()

# Characters that can start markup anywhere in a line (emphasis, code, links, HTML, entities,
# tables, strikethrough, attributes); a backslash escape is valid for any ASCII punctuation.
_INLINE_SPECIAL: Final = frozenset("\\`*_[]<>&!~|{}#")
# At the start of a line these begin a list, a quote, a heading underline or a block.
_LINE_START_SPECIAL: Final = frozenset("-+=>:")
_ORDERED_MARKER_RE: Final = re.compile(r"([0-9]{1,9})([.)])")
_LINE_BREAK_RE: Final = re.compile(r"\r\n|\r|\n")


def _escape_line(raw: str) -> str:
    escaped = "".join("\\" + ch if ch in _INLINE_SPECIAL else ch for ch in raw)
    body = escaped.lstrip()
    lead = escaped[: len(escaped) - len(body)]
    marker = _ORDERED_MARKER_RE.match(body)
    if marker:
        body = f"{marker.group(1)}\\{marker.group(2)}{body[marker.end() :]}"
    elif body[:1] in _LINE_START_SPECIAL:
        body = "\\" + body
    stripped = body.rstrip()
    tail = body[len(stripped) :]
    return _as_entities(lead) + stripped + _as_entities(tail)


def _as_entities(blank: str) -> str:
    # Markdown parsers strip whitespace at line and paragraph edges; entities survive that.
    return "".join(f"&#{ord(ch)};" for ch in blank)


def escape_markdown(text: str) -> str:
    """``text`` as Markdown that renders to exactly ``text``, as one paragraph.

    Markup characters are backslash-escaped, so nothing becomes emphasis, a link, an entity,
    HTML, a heading or a list; line breaks become hard breaks; whitespace at the start and end
    of a line becomes numeric entities so that Markdown neither strips it nor reads an indented
    code block. (NUL cannot be shown: Markdown replaces it with U+FFFD.)
    """
    lines = [_escape_line(raw) for raw in _LINE_BREAK_RE.split(text)]
    out = lines[0]
    for index, line in enumerate(lines[1:], start=1):
        if index == len(lines) - 1 and not line:
            # A hard break cannot end a paragraph (the backslash would show): keep the newline.
            out += "&#10;"
        else:
            out += "\\\n" + line
    return out


def _indent_continuation(text: str, width: int) -> str:
    return text.replace("\n", "\n" + " " * width)


def _fence(text: str) -> str:
    longest = max((len(run) for run in re.findall(r"`+", text)), default=0)
    return "`" * max(3, longest + 1)


def formula_markdown(formula: Formula, labels: MarkdownLabels = DEFAULT_LABELS) -> str:
    """A formula for a reading pane: the Unicode form as a quoted block that wraps (a narrow
    terminal must not cut it off; runs of spaces become no-break spaces so columns stay aligned
    where there is room), then the TeX as written in the source in a fenced block, and its note.
    """
    lines = [
        escape_markdown(re.sub(r" {2,}", lambda run: "\u00a0" * len(run.group()), line))
        for line in formula.text.splitlines()
    ]
    unicode_form = "\\\n".join(f"> {line}" if line else ">" for line in lines)
    fence = _fence(formula.source)
    parts = [unicode_form, f"{labels.tex}:", f"{fence}text\n{formula.source}\n{fence}"]
    if formula.note.strip() or formula.sources:
        note = (
            labels.labelled.format(label=labels.note, text=formula.note)
            if formula.note.strip()
            else labels.note
        )
        parts.append(escape_markdown(note))
        parts.append(_provenance(formula.added or bool(formula.note), formula.sources, labels))
    return "\n\n".join(part for part in parts if part)


def _provenance(added: bool, sources: Sequence[str], labels: MarkdownLabels) -> str:
    words = [labels.added] if added else []
    if sources:
        sources_text = labels.separator.join(sources)
        words.append(labels.labelled.format(label=labels.sources, text=sources_text))
    return f"*{escape_markdown(labels.separator.join(words))}*" if words else ""


def key_points_markdown(item: Item, labels: MarkdownLabels = DEFAULT_LABELS) -> str:
    """An item's key points as a bulleted list, then whether they are added and their sources.

    Shown after the learner has answered; ``""`` when the item has none.
    """
    if not item.key_points:
        return ""
    bullets = "\n".join(f"- {_indent_continuation(escape_markdown(p), 2)}" for p in item.key_points)
    provenance = _provenance(item.added, item.key_point_sources, labels)
    return f"{bullets}\n\n{provenance}" if provenance else bullets


def links_markdown(item: Item, labels: MarkdownLabels = DEFAULT_LABELS) -> str:
    """An item's links as a bulleted list (``label: <url>``, a Markdown autolink the reader
    opens in the browser), then a line saying they are added material and their sources;
    ``""`` when the item has none."""
    if not item.links:
        return ""
    lines = [f"- {escape_markdown(link.label)}: <{link.url}>" for link in item.links]
    lines.append(f"- {_provenance(True, item.link_sources, labels)}")
    return "\n".join(lines)


def section_markdown(section: Section, labels: MarkdownLabels = DEFAULT_LABELS) -> str:
    """A section as Markdown, without its title: body, items, formulas (each after its item).

    Items render literally (escaped): as paragraphs in a ``prose`` section, otherwise as a list,
    numbered when ``section.numbered``; an item's links follow it (:func:`links_markdown`).
    Self-check items show the question only; their key points are revealed separately with
    :func:`key_points_markdown`.
    """
    parts: list[str] = []
    if section.body.strip():
        parts.append(section.body.strip("\n"))
    placed: dict[str, list[Formula]] = {}
    for formula in section.formulas:
        placed.setdefault(formula.after, []).append(formula)
    run: list[str] = []
    for number, item in enumerate(section.items, start=1):
        if section.kind == "prose":
            parts.append(escape_markdown(item.text))
            if item.links:
                parts.append(links_markdown(item, labels))
        else:
            marker = f"{number}. " if section.numbered else "- "
            text = _indent_continuation(escape_markdown(item.text), len(marker))
            if item.links:
                links = _indent_continuation(links_markdown(item, labels), len(marker))
                text += "\n" + " " * len(marker) + links
            run.append(marker + text)
        if item.id in placed:
            if run:
                parts.append("\n".join(run))
                run = []
            parts.extend(formula_markdown(formula, labels) for formula in placed[item.id])
    if run:
        parts.append("\n".join(run))
    parts.extend(formula_markdown(formula, labels) for formula in placed.get("", []))
    return "\n\n".join(parts) + "\n" if parts else ""


def meta_lines(lesson: Lesson) -> tuple[str, ...]:
    """The lesson header as plain text lines, in the source lessons' own wording and order."""
    meta = lesson.meta
    return (
        f"{META_LABELS['kind']}：{meta.kind}",
        f"{META_LABELS['date']}：{meta.date}",
        f"{META_LABELS['phase']}：{meta.phase}",
        f"{META_LABELS['route']}：Day {meta.day} / {meta.days_total}",
        f"{META_LABELS['week']}：{meta.week} · {meta.rhythm}",
        f"{META_LABELS['status']}：{meta.status}",
        f"{META_LABELS['topics']}：{'、'.join(meta.topics)}",
    )


def lesson_markdown(lesson: Lesson, labels: MarkdownLabels = DEFAULT_LABELS) -> str:
    """The whole lesson as Markdown: a title, the header lines, then every section headed."""
    header = "\\\n".join(escape_markdown(line) for line in meta_lines(lesson))
    parts = [f"# {escape_markdown(f'{lesson.id}：{lesson.title}')}", header]
    for section in lesson.sections:
        parts.append(f"## {escape_markdown(section.title)}")
        body = section_markdown(section, labels).rstrip("\n")
        if body:
            parts.append(body)
    return "\n\n".join(parts) + "\n"
