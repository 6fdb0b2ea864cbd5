"""Search over a lesson and the learner's own words: lesson + progress + query -> hits.

What is searched, in the lesson's order, section by section:

- the lesson text as the reading pane shows it (:func:`reader_texts`): each section's title,
  its paragraphs, list items and formulas (``engine.reading``), a self-check section's questions
  and the key points of the questions whose key points were revealed (the others are not on
  screen), and the lesson's header lines;
- the learner's own text (:func:`learner_places`): self-check answers (in the self-check
  section), reflection fields (in the reflection section) and exercise notes (in the exercises
  section; notes whose id names no note any more come after every section, so no word of the
  learner's is left out).

Matching is literal, case-insensitive and width-insensitive: each character is compared after
Unicode compatibility normalisation (NFKC, so a full-width ``ＺｅＲＯ`` typed with a Chinese input
method finds ``ZeRO``) and case folding (``str.casefold``, Unicode's full case folding, so
``STRASSE`` finds ``Straße``). A query is never read as a pattern: ``[/]``, ``a[/``, ``.*`` and
``\\d`` are the characters they are. Chinese needs no word boundaries: a query matches wherever
its characters occur in order, inside a word or not. Offsets are those of the original text (a
character that folds to two, such as ``ß``, is matched as a whole).
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from functools import lru_cache
from typing import Final, Literal

from rich.cells import cell_len

from engine.exercises import EXERCISE_ITEMS, answered_notes, note_label
from engine.i18n import gettext
from engine.lesson import Lesson, Section, meta_lines
from engine.linebreak import is_closing, is_opening, word_runs
from engine.progress import LessonProgress
from engine.reading import section_blocks

HEADER_ID: Final = "__meta__"
"""The section id of the lesson's header (title and header lines), the outline's first entry."""

Source = Literal["lesson", "answers", "reflections", "notes"]
ELLIPSIS: Final = "…"


@dataclass(frozen=True)
class Place:
    """One searchable text and where it is.

    Attributes:
        section_id: the section it is shown in (:data:`HEADER_ID` for the lesson's header;
            ``""`` for an exercise note of no known exercise).
        source: ``lesson`` (lesson text), or the learner's text: ``answers`` (a self-check
            answer), ``reflections`` (a reflection field) or ``notes`` (an exercise note).
        text: the text, literally.
        item_id: for the learner's text, its key in ``LessonProgress.answers``,
            ``.reflections`` or ``.notes``; ``""`` for lesson text.
        label: for the learner's text, the field it is in: the question, the reflection
            field's label, the note's strategy and question in the interface language
            (``"FSDP/ZeRO-3 - parameters, gradients, optimizer states sharded: which dimension is
            split"``).
        number: the question's number (answers) or the exercise's (notes); 0 otherwise.
        pane: for an exercise note, the side pane it is written in (its exercise's
            ``worked_in``: ``diagrams``, ``tradeoffs``); ``""`` otherwise.
        strategy: for an exercise 2 or 3 note, the strategy it is about (``fsdp``).
    """

    section_id: str
    source: Source
    text: str
    item_id: str = ""
    label: str = ""
    number: int = 0
    pane: str = ""
    strategy: str = ""


@dataclass(frozen=True)
class Hit:
    """One match: ``place.text[start:end]`` matches the query."""

    place: Place
    start: int
    end: int


@dataclass(frozen=True)
class Snippet:
    """A match with some of its text around it, on one line: ``before + match + after``."""

    before: str
    match: str
    after: str


def _fold_char(char: str) -> str:
    return unicodedata.normalize("NFKC", char).casefold()


@lru_cache(maxsize=512)
def _folded(text: str) -> tuple[str, tuple[int, ...]]:
    """``text`` folded character by character, and for each folded character the index of the
    original character it came from. Cached: the same lesson texts are searched on every key."""
    pieces: list[str] = []
    origin: list[int] = []
    for index, char in enumerate(text):
        folded = _fold_char(char)
        pieces.append(folded)
        origin.extend([index] * len(folded))
    return "".join(pieces), tuple(origin)


def fold(query: str) -> str:
    """``query`` as it is compared: NFKC-normalised and case-folded, character by character."""
    return "".join(_fold_char(char) for char in query)


def find_all(text: str, query: str) -> list[tuple[int, int]]:
    """Where ``query`` occurs in ``text``, as ``(start, end)`` offsets into ``text``, left to
    right and not overlapping; ``[]`` for a query that is empty or only white space.

    The comparison is literal and ignores case and character width (see module docstring).
    A match that begins or ends inside a character that folds to several (``ß`` is ``ss``)
    takes in that whole character.
    """
    if not query.strip():
        return []
    return _find_folded(text, fold(query))


def _find_folded(text: str, needle: str) -> list[tuple[int, int]]:
    """:func:`find_all` for a query already folded (:func:`fold`): a search folds its query
    once, not once per text (folding a long query for each of the lesson's texts made typing
    into the search field slow down as the query grew)."""
    if not needle:
        return []  # a query of characters that fold to nothing (a lone default-ignorable)
    haystack, origin = _folded(text)
    matches: list[tuple[int, int]] = []
    position = haystack.find(needle)
    while position >= 0:
        start = origin[position]
        end = origin[position + len(needle) - 1] + 1
        if not matches or start >= matches[-1][1]:
            matches.append((start, end))
        position = haystack.find(needle, position + len(needle))
    return matches


def reader_texts(
    lesson: Lesson, section_id: str, revealed: frozenset[str] = frozenset()
) -> list[str]:
    """The lesson's texts that the reading pane shows for ``section_id``, in its order.

    ``revealed`` holds the self-check questions whose key points were revealed: only theirs are
    on screen (with the sources they rest on). An item's links (a reading's pages) follow it, as
    their label and their address.

    Raises:
        KeyError: no section has id ``section_id``.
    """
    if section_id == HEADER_ID:
        return [lesson.title, "\n".join(meta_lines(lesson))]
    section = lesson.section(section_id)
    texts = [section.title]
    if section.kind == "self-check":
        for item in section.items:
            texts.append(item.text)
            if item.id in revealed:
                texts.extend(item.key_points)
                if item.key_point_sources:
                    texts.append(gettext("; ").join(item.key_point_sources))
        return texts
    items = iter(section.items)
    for block in section_blocks(section):
        texts.append(block.text)
        if block.kind == "item":
            # A reading's links are drawn under its item: its label and its address.
            for link in next(items).links:
                texts.extend((link.label, link.url))
    return texts


def _section_of_kind(lesson: Lesson, kind: str) -> Section | None:
    return next((section for section in lesson.sections if section.kind == kind), None)


def learner_places(lesson: Lesson, progress: LessonProgress) -> list[Place]:
    """The learner's written text (blank fields left out), in the lesson's order: each
    section's answers, reflection fields and exercise notes where that section comes, and
    notes of no known exercise last."""
    exercises = _section_of_kind(lesson, "exercises")
    items = {item.id: item for item in exercises.items} if exercises is not None else {}
    notes: list[Place] = []
    for note, text in answered_notes(progress.notes):
        item = items.get(EXERCISE_ITEMS.get(note.exercise, ""))
        notes.append(
            Place(
                exercises.id if exercises is not None and item is not None else "",
                "notes",
                text,
                note.id,
                note_label(note),
                note.exercise,
                item.worked_in if item is not None else "",
                note.strategy,
            )
        )
    places: list[Place] = []
    for section in lesson.sections:
        if section.kind == "self-check":
            for number, item in enumerate(section.items, start=1):
                text = progress.answers.get(item.id, "")
                if text.strip():
                    places.append(Place(section.id, "answers", text, item.id, item.text, number))
        elif section.kind == "reflection":
            for item in section.items:
                text = progress.reflections.get(item.id, "")
                if text.strip():
                    places.append(Place(section.id, "reflections", text, item.id, item.text))
        elif section.kind == "exercises":
            places.extend(place for place in notes if place.section_id == section.id)
    places.extend(place for place in notes if not place.section_id)
    return places


def searchable_places(lesson: Lesson, progress: LessonProgress) -> Iterator[Place]:
    """Every text searched, in the lesson's order: per section, its lesson text as the reader
    shows it, then the learner's text written in it (see module docstring)."""
    learner = learner_places(lesson, progress)
    revealed = frozenset(progress.revealed)
    for section_id in (HEADER_ID, *(section.id for section in lesson.sections)):
        seen: set[str] = set()
        for text in reader_texts(lesson, section_id, revealed):
            if text not in seen:  # a reflection field's label is its list item too
                seen.add(text)
                yield Place(section_id, "lesson", text)
        yield from (place for place in learner if place.section_id == section_id)
    yield from (place for place in learner if not place.section_id)


def search(lesson: Lesson, progress: LessonProgress, query: str) -> list[Hit]:
    """Every match of ``query`` in the lesson and the learner's text, in the lesson's order
    (see module docstring); ``[]`` for an empty or blank query."""
    return search_places(searchable_places(lesson, progress), query)


def search_places(places: Iterable[Place], query: str) -> list[Hit]:
    """Every match of ``query`` in ``places``, in their order (:func:`search` over the places
    :func:`searchable_places` gave, listed once for many queries); ``[]`` for a blank query."""
    if not query.strip():
        return []
    needle = fold(query)
    return [
        Hit(place, start, end)
        for place in places
        for start, end in _find_folded(place.text, needle)
    ]


def _one_line(text: str) -> str:
    return " ".join(text.split("\n")).replace("\r", " ").replace("\t", " ")


def _inside_words(text: str) -> set[int]:
    """The positions inside a word run of ``text`` (a Latin word, an identifier, a number or a
    URL: :func:`engine.linebreak.word_runs`), where a cut would split the word."""
    return {index for start, end in word_runs(text) for index in range(start + 1, end)}


def clip(text: str, width: int) -> str:
    """The start of ``text`` in at most ``width`` cells, an ellipsis marking a cut. The cut is
    made where a line may end by the reader's rules (:mod:`engine.linebreak`): never inside a
    Latin word, an identifier, a number or a URL, nor right after opening punctuation; the
    spaces before it are left out. Only where no such place leaves any text (one word wider
    than the room) is the text cut at the last character that fits."""
    if cell_len(text) <= width:
        return text
    if width < 1:
        return ""
    fits = 0
    while fits < len(text) and cell_len(text[: fits + 1]) <= width - 1:
        fits += 1
    inside = _inside_words(text)
    for cut in range(fits, 0, -1):
        kept = text[:cut].rstrip(" ")
        if cut not in inside and kept and not is_opening(kept[-1]):
            return kept + ELLIPSIS
    return text[:fits] + ELLIPSIS


def _fit_start(text: str, width: int) -> str:
    """The end of ``text`` in at most ``width`` cells, an ellipsis marking a cut: made, as
    :func:`clip` makes it, outside words, and never before closing punctuation (no ``…，``);
    the spaces after it are left out."""
    if cell_len(text) <= width:
        return text
    if width < 1:
        return ""
    first = len(text)
    while first > 0 and cell_len(text[first - 1 :]) <= width - 1:
        first -= 1
    inside = _inside_words(text)
    for cut in range(first, len(text)):
        kept = text[cut:].lstrip(" ")
        if cut not in inside and kept and not is_closing(kept[0]):
            return ELLIPSIS + kept
    return ELLIPSIS + text[first:]


def snippet(text: str, start: int, end: int, width: int) -> Snippet:
    """The match ``text[start:end]`` with the text around it, on one line of at most ``width``
    cells (line breaks shown as spaces; an ellipsis marks each cut). The match is kept whole
    when it fits, with up to a third of the room before it.

    Raises:
        ValueError: ``width`` < 1, or ``start``/``end`` not a span of ``text``.
    """
    if width < 1:
        raise ValueError(f"width must be at least 1 cell, not {width}")
    if not 0 <= start <= end <= len(text):
        raise ValueError(f"({start}, {end}) is not a span of a text of {len(text)} characters")
    match = clip(_one_line(text[start:end]), width)
    room = width - cell_len(match)
    before_text = _one_line(text[:start])
    after_text = _one_line(text[end:])
    before = _fit_start(before_text, max(room // 3, room - cell_len(after_text)))
    after = clip(after_text, room - cell_len(before))
    return Snippet(before, match, after)
