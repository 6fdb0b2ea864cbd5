"""Exported notes as a CommonMark renderer sees them (markdown-it-py, with the front-matter and
table extensions that common viewers enable): the heading outline and the learner's texts."""

from __future__ import annotations

import re
from collections import Counter
from typing import Any

from markdown_it import MarkdownIt
from mdit_py_plugins.front_matter import front_matter_plugin

from engine.export import QUIZ_HEADING
from engine.lesson import Lesson

RENDERER = MarkdownIt("commonmark").use(front_matter_plugin).enable("table")


def tokens(markdown: str) -> list[Any]:
    return RENDERER.parse(markdown)


def inline_text(inline: Any) -> str:
    """The text an inline token shows: text as is, each line break a newline."""
    parts = []
    for child in inline.children:
        assert child.type in ("text", "softbreak", "hardbreak", "strong_open", "strong_close"), (
            child.type
        )
        if child.type == "text":
            parts.append(child.content)
        elif child.type.endswith("break"):
            parts.append("\n")
    return "".join(parts)


def outline(markdown: str) -> list[tuple[int, str]]:
    """(level, text) of every heading, in order."""
    found = tokens(markdown)
    return [
        (int(token.tag[1]), inline_text(found[index + 1]))
        for index, token in enumerate(found)
        if token.type == "heading_open"
    ]


def quotes(markdown: str) -> list[str]:
    """The text of every blockquote (the learner's words), in order."""
    found = tokens(markdown)
    texts: list[str] = []
    depth = 0
    for token in found:
        if token.type == "blockquote_open":
            depth += 1
            texts.append("")
        elif token.type == "blockquote_close":
            depth -= 1
        elif depth and token.type == "inline":
            texts[-1] += inline_text(token)
    return texts


def block_kinds(markdown: str) -> Counter[str]:
    """How many of each block token (headings, lists, rules, code, HTML, tables) render."""
    return Counter(token.type for token in tokens(markdown) if token.block and token.nesting >= 0)


def as_typed(text: str) -> str:
    """What a renderer shows for ``text``: its line breaks, each one a newline."""
    return re.sub(r"\r\n|\r", "\n", text)


def lesson_outline(lesson: Lesson) -> list[tuple[int, str]]:
    """The headings the notes must have: the title, then the lesson's exercises, self-check
    questions and reflection fields under their sections' titles, and the sections whose items
    carry links (the readings), in the lesson's order, then the quiz summary."""
    expected = [(1, f"{lesson.id} notes: {lesson.title}")]
    for section in lesson.sections:
        if section.id == "exercises" or section.kind == "self-check":
            expected.append((2, section.title))
            expected.extend(
                (3, f"{number}. {item.text}") for number, item in enumerate(section.items, 1)
            )
        elif section.kind == "reflection":
            expected.append((2, section.title))
            expected.extend((3, item.text) for item in section.items)
        elif any(item.links for item in section.items):
            expected.append((2, section.title))
    expected.append((2, QUIZ_HEADING))
    return expected
