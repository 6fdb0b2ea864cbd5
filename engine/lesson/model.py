"""The lesson model: a loaded, valid lesson as frozen dataclasses (the format:
``content/README.md``).

Text is kept exactly as the lesson file writes it (every scalar stays text;
:mod:`engine.lesson.schema` converts the few numeric and boolean fields).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Final, Literal, get_args

SCHEMA_VERSION: Final = 1
SectionKind = Literal["prose", "list", "objectives", "exercises", "self-check", "reflection"]
SECTION_KINDS: Final[tuple[SectionKind, ...]] = get_args(SectionKind)
# Kinds a lesson has at most one section of: the study plan reads them as the lesson's objectives,
# exercises, questions and reflection fields.
SINGLE_KINDS: Final[tuple[SectionKind, ...]] = (
    "objectives",
    "exercises",
    "self-check",
    "reflection",
)
Pane = Literal["ledger", "diagrams", "collectives", "tradeoffs"]
PANES: Final[tuple[Pane, ...]] = get_args(Pane)
"""Where an exercise can be worked (``worked_in``): the side panes that hold its work."""
LINK_SCHEMES: Final = ("https", "http")
LESSON_SUFFIXES: Final = (".yaml", ".yml")
# Ids become file names and keys of progress files: a portable, shell-safe alphabet.
ID_PATTERN: Final = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,63}")


@dataclass(frozen=True)
class LessonMeta:
    """Where the lesson sits in the study plan. ``day`` is 1-based and at most ``days_total``."""

    kind: str
    date: str
    phase: str
    day: int
    days_total: int
    week: str
    rhythm: str
    status: str
    topics: tuple[str, ...]


@dataclass(frozen=True)
class Formula:
    """A formula in a terminal-readable Unicode form, with the form written in TeX.

    Attributes:
        text: Unicode, may span lines; shown in a fenced code block.
        source: the TeX as the source lesson writes it; for an added formula, a TeX rendering.
        note: a short explanation; always added material (never the source's text).
        added: the formula itself is not in the source lesson.
        sources: papers/sections the formula (when added) or its note rests on.
        after: id of the item of the same section it follows; ``""`` places it after the items.
    """

    id: str
    text: str
    source: str
    note: str = ""
    added: bool = False
    sources: tuple[str, ...] = ()
    after: str = ""


@dataclass(frozen=True)
class Link:
    """A public page to read: ``url`` is ``https://`` or ``http://`` with a host."""

    label: str
    url: str


@dataclass(frozen=True)
class Item:
    """One addressable piece of a section: a paragraph, a list entry, a question or a field.

    Attributes:
        text: the source's text, verbatim (for a reflection field, its label).
        key_points: reference points for a self-check question, shown after answering.
        key_point_sources: papers/sections the key points rest on.
        added: the key points are added material (not the source lesson's text).
        worked_in: for an exercise, the pane where it is worked (one of :data:`PANES`).
        notes: for an exercise, the ids of the exercise notes that record its work
            (:mod:`engine.exercises`).
        trained_by: for a learning objective, the ids of the exercises and self-check
            questions that train it.
        links: public pages for the item (a reading); always added material.
        link_sources: where the links come from.
    """

    id: str
    text: str
    key_points: tuple[str, ...] = ()
    key_point_sources: tuple[str, ...] = ()
    added: bool = False
    worked_in: Pane | Literal[""] = ""
    notes: tuple[str, ...] = ()
    trained_by: tuple[str, ...] = ()
    links: tuple[Link, ...] = ()
    link_sources: tuple[str, ...] = ()


@dataclass(frozen=True)
class Section:
    """A headed part of the lesson.

    Attributes:
        kind: one of :data:`SECTION_KINDS`. ``prose`` items render as paragraphs, the others as
            a list; ``objectives`` items are learning objectives, ``exercises`` items are
            exercises (each says where it is worked), ``self-check`` items are questions,
            ``reflection`` items are field labels.
        body: Markdown shown before the items; may be ``""``.
        numbered: list items are numbered (``1.``) rather than bulleted.
    """

    id: str
    title: str
    kind: SectionKind
    body: str
    items: tuple[Item, ...]
    formulas: tuple[Formula, ...]
    numbered: bool = False


@dataclass(frozen=True)
class Lesson:
    """A loaded, valid lesson. ``path`` is the file it was read from."""

    id: str
    title: str
    meta: LessonMeta
    sections: tuple[Section, ...]
    path: Path

    def section(self, section_id: str) -> Section:
        """The section with this id.

        Raises:
            KeyError: no section has that id.
        """
        for section in self.sections:
            if section.id == section_id:
                return section
        raise KeyError(section_id)

    def _items_of(self, kind: SectionKind) -> tuple[Item, ...]:
        for section in self.sections:
            if section.kind == kind:
                return section.items
        return ()

    @property
    def self_check(self) -> tuple[Item, ...]:
        """The self-check questions (items of the ``self-check`` section; at most one exists)."""
        return self._items_of("self-check")

    @property
    def reflection_fields(self) -> tuple[Item, ...]:
        """The reflection fields (items of the ``reflection`` section; at most one exists)."""
        return self._items_of("reflection")

    @property
    def exercises(self) -> tuple[Item, ...]:
        """The exercises (items of the ``exercises`` section; at most one exists)."""
        return self._items_of("exercises")

    @property
    def objectives(self) -> tuple[Item, ...]:
        """The learning objectives (items of the ``objectives`` section; at most one exists)."""
        return self._items_of("objectives")


@dataclass(frozen=True)
class LessonRef:
    """A lesson found in a content folder, before it is fully loaded."""

    id: str
    title: str
    path: Path
