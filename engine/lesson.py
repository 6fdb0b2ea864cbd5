"""Lessons: the model, the loader and the validator of the lesson format (``content/README.md``).

A lesson is a YAML file (``schema_version: 1``) turned into frozen dataclasses. Loading is strict
so that the learner sees the lesson exactly as written:

- safe YAML only: a :class:`yaml.SafeLoader` subclass; tags (``!!python/object``, ``!!int``),
  anchors and aliases are errors (no object construction, no alias bombs);
- every scalar stays text: ``no``, ``off``, ``3.10``, ``null``, ``2026-12-07`` come through as the
  exact strings written; the few numeric and boolean fields are converted here, strictly;
- duplicate keys, unknown fields, missing required fields and wrong types are errors;
- UTF-8 with or without a BOM; files over :data:`MAX_FILE_BYTES` are refused before parsing.

Every problem is a :class:`~engine.errors.ContentError` naming the file, the 1-based line (from
the YAML node marks) and the field path, e.g. ``sections[3].items[1].text`` (indices 0-based).

Rendering helpers turn sections into Markdown for a reading pane. Item text is escaped so that
it renders literally; section ``body`` is Markdown by definition and is passed through.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import re
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Any, Final, cast
from urllib.parse import urlsplit

import yaml
from yaml.composer import Composer
from yaml.constructor import SafeConstructor
from yaml.resolver import Resolver

from engine.errors import ContentError
from engine.paths import cache_dir

SCHEMA_VERSION: Final = 1
MAX_FILE_BYTES: Final = 2 * 1024 * 1024
MAX_DEPTH: Final = 64
SECTION_KINDS: Final = ("prose", "list", "objectives", "exercises", "self-check", "reflection")
# Kinds a lesson has at most one section of: the study plan reads them as the lesson's objectives,
# exercises, questions and reflection fields.
SINGLE_KINDS: Final = ("objectives", "exercises", "self-check", "reflection")
PANES: Final = ("ledger", "diagrams", "collectives", "tradeoffs")
"""Where an exercise can be worked (``worked_in``): the side panes that hold its work."""
LINK_SCHEMES: Final = ("https", "http")
LESSON_SUFFIXES: Final = (".yaml", ".yml")

# Ids become file names and keys of progress files: a portable, shell-safe alphabet.
_ID_RE: Final = re.compile(r"[A-Za-z0-9][A-Za-z0-9_-]{0,63}")
_DATE_RE: Final = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")
_WHOLE_RE: Final = re.compile(r"[0-9]+")

_STR_TAG: Final = "tag:yaml.org,2002:str"
_SEQ_TAG: Final = "tag:yaml.org,2002:seq"
_MAP_TAG: Final = "tag:yaml.org,2002:map"

# Field tables: name -> required.
_TOP_FIELDS: Final = {
    "schema_version": True,
    "id": True,
    "title": True,
    "meta": True,
    "sections": True,
}
_META_FIELDS: Final = {
    "kind": True,
    "date": True,
    "phase": True,
    "day": True,
    "days_total": True,
    "week": True,
    "rhythm": True,
    "status": True,
    "topics": True,
}
_SECTION_FIELDS: Final = {
    "id": True,
    "title": True,
    "kind": True,
    "numbered": False,
    "body": False,
    "items": False,
    "formulas": False,
}
_ITEM_FIELDS: Final = {
    "id": True,
    "text": True,
    "key_points": False,
    "worked_in": False,
    "notes": False,
    "trained_by": False,
    "links": False,
}
_KEY_POINT_FIELDS: Final = {"added": True, "sources": True, "points": True}
_LINKS_FIELDS: Final = {"added": True, "sources": True, "urls": True}
_URL_FIELDS: Final = {"label": True, "url": True}
_FORMULA_FIELDS: Final = {
    "id": True,
    "text": True,
    "source": True,
    "note": False,
    "added": False,
    "sources": False,
    "after": False,
}

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
    worked_in: str = ""
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
    kind: str
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

    def _items_of(self, kind: str) -> tuple[Item, ...]:
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


# --------------------------------------------------------------------------------------------
# Reading and parsing


class _Refused(Exception):
    """A YAML construct the lesson format does not allow (anchor, alias)."""

    def __init__(self, line: int, message: str) -> None:
        super().__init__(message)
        self.line = line
        self.message = message


def _peek_event(loader: yaml.SafeLoader) -> yaml.Event:
    event: yaml.Event = loader.peek_event()  # type: ignore[no-untyped-call]  # untyped in stubs
    return event


def _next_event(loader: yaml.SafeLoader) -> yaml.Event:
    event: yaml.Event = loader.get_event()  # type: ignore[no-untyped-call]  # untyped in stubs
    return event


def _event_line(event: yaml.Event) -> int:
    mark = event.start_mark
    return int(mark.line) + 1 if mark is not None else 1


class _Checks:
    """Composing that refuses anchors, aliases, lone surrogates and deep nesting."""

    _depth = 0

    def compose_node(self, parent: yaml.Node | None, index: int) -> yaml.Node | None:
        event = _peek_event(self)  # type: ignore[arg-type]
        line = _event_line(event)
        if isinstance(event, yaml.AliasEvent):
            raise _Refused(line, f"aliases (*{event.anchor}) are not allowed; write the text out")
        anchor = getattr(event, "anchor", None)
        if anchor is not None:
            raise _Refused(line, f"anchors (&{anchor}) are not allowed; write the text out")
        if isinstance(event, yaml.ScalarEvent):
            problem = _bad_character(str(event.value))
            if problem:
                raise _Refused(line, problem)
        # PyYAML composes recursively: "[[[[..." 20,000 deep would exhaust the stack.
        if self._depth >= MAX_DEPTH:
            raise _Refused(line, f"nested more than {MAX_DEPTH} levels deep")
        self._depth += 1
        try:
            node: yaml.Node | None = Composer.compose_node(self, parent, index)  # type: ignore[arg-type]
            return node
        finally:
            self._depth -= 1


class _Loader(_Checks, yaml.SafeLoader):
    """SafeLoader whose plain scalars all resolve to text, and which refuses anchors/aliases."""


_SURROGATE: Final = re.compile("[\ud800-\udfff]")


def _bad_character(text: str) -> str:
    """A message when ``text`` holds a lone surrogate (only reachable through an escape such as
    ``"\\ud800"``): it is not text, cannot be written as UTF-8, and would break every save and
    export of the lesson. ``""`` when the text is fine. (Control characters are allowed: Rich
    and Textual strip them when drawing.)"""
    found = _SURROGATE.search(text)
    if found is None:
        return ""
    return f"contains a lone surrogate (U+{ord(found.group()):04X}), which is not text"


def _fast_loader() -> type | None:
    """:class:`_Loader`'s nodes from libyaml's C scanner and parser under Python's composer
    (tests/test_lesson_loader.py compares them): about 10x faster on S15, which the first frame
    waits for. None where PyYAML was built without libyaml."""
    if not getattr(yaml, "__with_libyaml__", False):
        return None
    from yaml._yaml import CParser

    class _FastLoader(_Checks, CParser, Composer, SafeConstructor, Resolver):
        def __init__(self, stream: str) -> None:
            CParser.__init__(self, stream)
            Composer.__init__(self)
            SafeConstructor.__init__(self)
            Resolver.__init__(self)

        # Python's composer over the C parser's events (CParser composes in C, unchecked).
        get_single_node = Composer.get_single_node
        compose_document = Composer.compose_document
        compose_scalar_node = Composer.compose_scalar_node
        compose_sequence_node = Composer.compose_sequence_node
        compose_mapping_node = Composer.compose_mapping_node

    _FastLoader.yaml_implicit_resolvers = {}
    return _FastLoader


# No implicit resolvers: a plain scalar falls through to the default tag, str.
_Loader.yaml_implicit_resolvers = {}
_FAST_LOADER: Final = _fast_loader()


def _read_text(path: Path, shown: str) -> str:
    """The file's text, UTF-8 with an optional BOM removed.

    Raises:
        ContentError: missing or unreadable, larger than MAX_FILE_BYTES, or not UTF-8.
    """
    try:
        size = path.stat().st_size
    except FileNotFoundError:
        raise ContentError(shown, None, "no such file") from None
    except OSError as error:
        raise ContentError(shown, None, f"cannot read: {error.strerror or error}") from None
    if size > MAX_FILE_BYTES:
        raise ContentError(
            shown,
            1,
            f"file is {size:,} bytes; a lesson file may be at most {MAX_FILE_BYTES:,} bytes "
            "(2 MiB); split the lesson",
        )
    try:
        data = path.read_bytes()
    except OSError as error:
        raise ContentError(shown, None, f"cannot read: {error.strerror or error}") from None
    data = data.removeprefix(b"\xef\xbb\xbf")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        line = data[: error.start].count(b"\n") + 1
        raise ContentError(
            shown,
            line,
            f"not valid UTF-8 (byte {error.start} of the file); save the file as UTF-8",
        ) from None


def _yaml_error(shown: str, text: str, error: yaml.YAMLError) -> ContentError:
    """Turn a PyYAML error into a ContentError with a line and a plain message."""
    if isinstance(error, yaml.reader.ReaderError):
        position = error.position if isinstance(error.position, int) else 0
        line = text[:position].count("\n") + 1
        char = error.character
        shown_char = f"U+{char:04X}" if isinstance(char, int) else repr(char)
        return ContentError(
            shown, line, f"contains a control character ({shown_char}) that YAML does not allow"
        )
    if isinstance(error, yaml.MarkedYAMLError):
        mark = error.problem_mark or error.context_mark
        mark_line = int(mark.line) + 1 if mark is not None else None
        problem = error.problem or error.context or "invalid YAML"
        if "'\\t'" in problem or "\t" in problem:
            message = "a tab character cannot indent YAML; indent with spaces"
        else:
            context = f"{error.context}: " if error.context and error.problem else ""
            message = f"invalid YAML: {context}{problem}"
        return ContentError(shown, mark_line, message)
    return ContentError(shown, None, f"invalid YAML: {error}")


def _compose(shown: str, text: str) -> yaml.Node | None:
    """Parse one YAML document into nodes (nothing is constructed).

    Raises:
        ContentError: syntax errors, several documents, anchors or aliases.
    """
    # Files libyaml refuses, and control characters (the pure-Python reader's check), are read
    # again by _Loader: its lines and messages are the ones the learner sees.
    if _FAST_LOADER is not None and not yaml.reader.Reader.NON_PRINTABLE.search(text):
        fast = _FAST_LOADER(text)
        try:
            node: yaml.Node | None = fast.get_single_node()
            return node
        except (yaml.YAMLError, _Refused):
            pass
        finally:
            fast.dispose()
    try:
        loader = _Loader(text)
    except yaml.YAMLError as error:
        raise _yaml_error(shown, text, error) from None
    try:
        return loader.get_single_node()
    except _Refused as refused:
        raise ContentError(shown, refused.line, refused.message) from None
    except yaml.YAMLError as error:
        raise _yaml_error(shown, text, error) from None
    finally:
        loader.dispose()


# --------------------------------------------------------------------------------------------
# Validation


def _line(node: yaml.Node) -> int:
    return int(node.start_mark.line) + 1


def _kind_of(node: yaml.Node) -> str:
    if isinstance(node, yaml.MappingNode):
        return "a mapping"
    if isinstance(node, yaml.SequenceNode):
        return "a list"
    return "text"


def _join(where: str, name: str) -> str:
    return f"{where}.{name}" if where else name


class _Checker:
    """Walks the node tree of one file, collecting every error, and builds the lesson."""

    def __init__(self, shown: str) -> None:
        self.shown = shown
        self.errors: list[ContentError] = []
        # Each ``trained_by`` entry (node, field path, id), checked once every section is read.
        self.trained_by: list[tuple[yaml.Node, str, str]] = []

    def error(self, node: yaml.Node | int | None, where: str, message: str) -> None:
        line = _line(node) if isinstance(node, yaml.Node) else node
        text = f"{where}: {message}" if where else message
        self.errors.append(ContentError(self.shown, line, text))

    # -- structure shared by every node

    def check_tree(self, node: yaml.Node, where: str) -> None:
        """Tags and keys anywhere in the file, before the schema is applied."""
        if isinstance(node, yaml.ScalarNode):
            if node.tag != _STR_TAG:
                self.error(node, where, f"tags ({node.tag}) are not allowed; write plain text")
        elif isinstance(node, yaml.SequenceNode):
            if node.tag != _SEQ_TAG:
                self.error(node, where, f"tags ({node.tag}) are not allowed")
            for index, child in enumerate(node.value):
                self.check_tree(child, f"{where}[{index}]")
        elif isinstance(node, yaml.MappingNode):
            if node.tag != _MAP_TAG:
                self.error(node, where, f"tags ({node.tag}) are not allowed")
            seen: dict[str, int] = {}
            for key, value in node.value:
                if not isinstance(key, yaml.ScalarNode) or key.tag != _STR_TAG:
                    self.error(key, where, "a key must be plain text")
                    continue
                name = str(key.value)
                if name in seen:
                    self.error(
                        key,
                        _join(where, name),
                        f"duplicate key (first on line {seen[name]}); keep one",
                    )
                else:
                    seen[name] = _line(key)
                self.check_tree(value, _join(where, name))

    # -- typed accessors; each returns None after recording an error

    def mapping(
        self, node: yaml.Node, where: str, fields: dict[str, bool]
    ) -> dict[str, yaml.Node] | None:
        if not isinstance(node, yaml.MappingNode):
            self.error(node, where, f"expected a mapping, got {_kind_of(node)}")
            return None
        found: dict[str, yaml.Node] = {}
        for key, value in node.value:
            name = str(key.value)
            if name not in fields:
                known = ", ".join(fields)
                self.error(key, _join(where, name), f"unknown field (known fields: {known})")
            elif name not in found:
                found[name] = value
        for name, required in fields.items():
            if required and name not in found:
                self.error(node, _join(where, name), "missing required field")
        return found

    def text(self, node: yaml.Node, where: str, *, blank_ok: bool = False) -> str | None:
        if not isinstance(node, yaml.ScalarNode):
            self.error(node, where, f"expected text, got {_kind_of(node)}")
            return None
        value = str(node.value)
        if not blank_ok and not value.strip():
            self.error(node, where, "must not be empty")
            return None
        return value

    def ident(self, node: yaml.Node, where: str) -> str | None:
        value = self.text(node, where)
        if value is not None and not _ID_RE.fullmatch(value):
            self.error(
                node,
                where,
                f"{value!r} is not a valid id: use 1-64 letters, digits, '-' or '_', "
                "starting with a letter or digit",
            )
            return None
        return value

    def whole(self, node: yaml.Node, where: str) -> int | None:
        value = self.text(node, where)
        if value is None:
            return None
        if not _WHOLE_RE.fullmatch(value.strip()) or int(value) < 1:
            self.error(node, where, f"expected a whole number of at least 1, got {value!r}")
            return None
        return int(value)

    def boolean(self, node: yaml.Node, where: str) -> bool | None:
        value = self.text(node, where)
        if value is None:
            return None
        if value not in ("true", "false"):
            self.error(node, where, f"expected true or false, got {value!r}")
            return None
        return value == "true"

    def sequence(self, node: yaml.Node, where: str) -> list[yaml.Node] | None:
        if not isinstance(node, yaml.SequenceNode):
            self.error(node, where, f"expected a list, got {_kind_of(node)}")
            return None
        return list(node.value)

    def texts(self, node: yaml.Node, where: str) -> tuple[str, ...] | None:
        children = self.sequence(node, where)
        if children is None:
            return None
        values = [self.text(child, f"{where}[{i}]") for i, child in enumerate(children)]
        if any(value is None for value in values):
            return None
        return tuple(value for value in values if value is not None)

    # -- the schema

    def lesson(self, root: yaml.Node, path: Path) -> Lesson | None:
        fields = self.mapping(root, "", _TOP_FIELDS)
        if fields is None:
            return None
        version_node = fields.get("schema_version")
        if version_node is not None:
            version = self.text(version_node, "schema_version")
            if version is not None and version != str(SCHEMA_VERSION):
                self.error(
                    version_node,
                    "schema_version",
                    f"unsupported version {version!r}; this shardbook reads {SCHEMA_VERSION}",
                )
        lesson_id = self.ident(fields["id"], "id") if "id" in fields else None
        title = self.text(fields["title"], "title") if "title" in fields else None
        meta = self.meta(fields["meta"]) if "meta" in fields else None
        sections = self.sections(fields["sections"]) if "sections" in fields else None
        if self.errors or None in (lesson_id, title, meta, sections):
            return None
        assert lesson_id is not None and title is not None
        assert meta is not None and sections is not None
        return Lesson(id=lesson_id, title=title, meta=meta, sections=sections, path=path)

    def meta(self, node: yaml.Node) -> LessonMeta | None:
        fields = self.mapping(node, "meta", _META_FIELDS)
        if fields is None:
            return None
        values: dict[str, str] = {}
        for name in ("kind", "date", "phase", "week", "rhythm", "status"):
            if name in fields:
                value = self.text(fields[name], f"meta.{name}")
                if value is not None:
                    values[name] = value
        if "date" in values and not _valid_date(values["date"]):
            self.error(
                fields["date"], "meta.date", f"expected a date YYYY-MM-DD, got {values['date']!r}"
            )
        day = self.whole(fields["day"], "meta.day") if "day" in fields else None
        total = (
            self.whole(fields["days_total"], "meta.days_total") if "days_total" in fields else None
        )
        if day is not None and total is not None and day > total:
            self.error(fields["day"], "meta.day", f"day {day} is after days_total {total}")
        topics = self.texts(fields["topics"], "meta.topics") if "topics" in fields else None
        if len(values) < 6 or day is None or total is None or topics is None:
            return None
        return LessonMeta(
            kind=values["kind"],
            date=values["date"],
            phase=values["phase"],
            day=day,
            days_total=total,
            week=values["week"],
            rhythm=values["rhythm"],
            status=values["status"],
            topics=topics,
        )

    def sections(self, node: yaml.Node) -> tuple[Section, ...] | None:
        children = self.sequence(node, "sections")
        if children is None:
            return None
        if not children:
            self.error(node, "sections", "a lesson needs at least one section")
            return None
        section_ids: dict[str, int] = {}
        item_ids: dict[str, int] = {}
        single_kinds: dict[str, int] = {}
        built: list[Section] = []
        for index, child in enumerate(children):
            where = f"sections[{index}]"
            section = self.section(child, where, item_ids)
            if section is None:
                continue
            if section.id in section_ids:
                self.error(
                    child,
                    f"{where}.id",
                    f"section id {section.id!r} is already used on line {section_ids[section.id]}",
                )
            section_ids.setdefault(section.id, _line(child))
            if section.kind in SINGLE_KINDS:
                if section.kind in single_kinds:
                    self.error(
                        child,
                        f"{where}.kind",
                        f"only one {section.kind!r} section is allowed "
                        f"(another starts on line {single_kinds[section.kind]})",
                    )
                single_kinds.setdefault(section.kind, _line(child))
            built.append(section)
        if len(built) == len(children):
            self.check_trained_by(built)
        return tuple(built)

    def check_trained_by(self, sections: Sequence[Section]) -> None:
        """Each objective's ``trained_by`` ids name exercises or self-check questions."""
        trainers = {
            item.id
            for section in sections
            if section.kind in ("exercises", "self-check")
            for item in section.items
        }
        for node, where, item_id in self.trained_by:
            if item_id not in trainers:
                self.error(
                    node,
                    where,
                    f"{item_id!r} is not the id of an exercise or a self-check question "
                    "of this lesson",
                )

    def section(self, node: yaml.Node, where: str, item_ids: dict[str, int]) -> Section | None:
        fields = self.mapping(node, where, _SECTION_FIELDS)
        if fields is None:
            return None
        section_id = self.ident(fields["id"], f"{where}.id") if "id" in fields else None
        title = self.text(fields["title"], f"{where}.title") if "title" in fields else None
        kind = self.text(fields["kind"], f"{where}.kind") if "kind" in fields else None
        if kind is not None and kind not in SECTION_KINDS:
            self.error(
                fields["kind"],
                f"{where}.kind",
                f"{kind!r} is not a section kind; use one of {', '.join(SECTION_KINDS)}",
            )
            kind = None
        numbered: bool | None = False
        if "numbered" in fields:
            numbered = self.boolean(fields["numbered"], f"{where}.numbered")
        body: str | None = ""
        if "body" in fields:
            body = self.text(fields["body"], f"{where}.body", blank_ok=True)
        items: tuple[Item, ...] | None = ()
        if "items" in fields:
            items = self.items(fields["items"], f"{where}.items", kind, item_ids)
        formulas: tuple[Formula, ...] | None = ()
        if "formulas" in fields:
            own = {item.id for item in items} if items is not None else None
            formulas = self.formulas(fields["formulas"], f"{where}.formulas", item_ids, own)
        if body is not None and not body.strip() and items == () and formulas == ():
            self.error(node, where, "section has no body, items or formulas")
        if (
            section_id is None
            or title is None
            or kind is None
            or numbered is None
            or body is None
            or items is None
            or formulas is None
        ):
            return None
        return Section(
            id=section_id,
            title=title,
            kind=kind,
            body=body,
            items=items,
            formulas=formulas,
            numbered=numbered,
        )

    def claim_id(self, node: yaml.Node, where: str, value: str, ids: dict[str, int]) -> None:
        if value in ids:
            self.error(
                node, where, f"id {value!r} is already used on line {ids[value]}; ids are unique"
            )
        else:
            ids[value] = _line(node)

    def items(
        self, node: yaml.Node, where: str, kind: str | None, ids: dict[str, int]
    ) -> tuple[Item, ...] | None:
        children = self.sequence(node, where)
        if children is None:
            return None
        built: list[Item] = []
        ok = True
        for index, child in enumerate(children):
            item = self.item(child, f"{where}[{index}]", kind, ids)
            if item is None:
                ok = False
            else:
                built.append(item)
        return tuple(built) if ok else None

    def item(
        self, node: yaml.Node, where: str, kind: str | None, ids: dict[str, int]
    ) -> Item | None:
        fields = self.mapping(node, where, _ITEM_FIELDS)
        if fields is None:
            return None
        item_id = self.ident(fields["id"], f"{where}.id") if "id" in fields else None
        if item_id is not None:
            self.claim_id(fields["id"], f"{where}.id", item_id, ids)
        text = self.text(fields["text"], f"{where}.text") if "text" in fields else None
        points: tuple[str, ...] | None = ()
        sources: tuple[str, ...] | None = ()
        added: bool | None = False
        if "key_points" in fields:
            self.only_in(kind, "self-check", fields["key_points"], f"{where}.key_points")
            points, sources, added = self.key_points(fields["key_points"], f"{where}.key_points")
        worked_in, notes = self.exercise_fields(node, fields, where, kind)
        trained_by: tuple[str, ...] | None = ()
        if "trained_by" in fields:
            self.only_in(kind, "objectives", fields["trained_by"], f"{where}.trained_by")
            trained_by = self.id_list(fields["trained_by"], f"{where}.trained_by")
            if trained_by is not None:
                children = list(cast(yaml.SequenceNode, fields["trained_by"]).value)
                self.trained_by.extend(
                    (child, f"{where}.trained_by[{index}]", value)
                    for index, (child, value) in enumerate(zip(children, trained_by, strict=True))
                )
        links: tuple[Link, ...] | None = ()
        link_sources: tuple[str, ...] | None = ()
        if "links" in fields:
            links, link_sources = self.links(fields["links"], f"{where}.links")
        if (
            item_id is None
            or text is None
            or points is None
            or sources is None
            or added is None
            or worked_in is None
            or notes is None
            or trained_by is None
            or links is None
            or link_sources is None
        ):
            return None
        return Item(
            id=item_id,
            text=text,
            key_points=points,
            key_point_sources=sources,
            added=added,
            worked_in=worked_in,
            notes=notes,
            trained_by=trained_by,
            links=links,
            link_sources=link_sources,
        )

    def only_in(self, kind: str | None, allowed: str, node: yaml.Node, where: str) -> None:
        """Record an error when a field that belongs to ``allowed`` sections is elsewhere."""
        if kind is not None and kind != allowed:
            article = "an" if allowed[0] in "aeiou" else "a"
            self.error(node, where, f"only items of {article} {allowed} section have this field")

    def exercise_fields(
        self, node: yaml.Node, fields: dict[str, yaml.Node], where: str, kind: str | None
    ) -> tuple[str | None, tuple[str, ...] | None]:
        """``worked_in`` (required in an exercises section) and ``notes`` (required unless the
        exercise is worked in the Ledger, whose saved form is its work)."""
        worked_in: str | None = ""
        if "worked_in" in fields:
            self.only_in(kind, "exercises", fields["worked_in"], f"{where}.worked_in")
            worked_in = self.text(fields["worked_in"], f"{where}.worked_in")
            if worked_in is not None and worked_in not in PANES:
                self.error(
                    fields["worked_in"],
                    f"{where}.worked_in",
                    f"{worked_in!r} is not a pane; use one of {', '.join(PANES)}",
                )
                worked_in = None
        elif kind == "exercises":
            self.error(
                node,
                f"{where}.worked_in",
                f"missing required field (where the exercise is worked: {', '.join(PANES)})",
            )
            worked_in = None
        notes: tuple[str, ...] | None = ()
        if "notes" in fields:
            self.only_in(kind, "exercises", fields["notes"], f"{where}.notes")
            notes = self.note_ids(fields["notes"], f"{where}.notes")
        elif kind == "exercises" and worked_in and worked_in != "ledger":
            self.error(
                node,
                f"{where}.notes",
                f"missing required field (an exercise worked in {worked_in!r} is done when the "
                "notes it lists are written)",
            )
            notes = None
        return worked_in, notes

    def id_list(self, node: yaml.Node, where: str) -> tuple[str, ...] | None:
        """A non-empty list of distinct ids."""
        children = self.sequence(node, where)
        if children is None:
            return None
        if not children:
            self.error(node, where, "give at least one id")
            return None
        values: list[str] = []
        ok = True
        for index, child in enumerate(children):
            value = self.text(child, f"{where}[{index}]")
            if value is None:
                ok = False
            elif value in values:
                self.error(child, f"{where}[{index}]", f"{value!r} is listed twice")
                ok = False
            else:
                values.append(value)
        return tuple(values) if ok else None

    def note_ids(self, node: yaml.Node, where: str) -> tuple[str, ...] | None:
        """Ids of exercise notes the app has a note box for (:func:`engine.exercises.get_note`)."""
        from engine.errors import InputError
        from engine.exercises import get_note

        values = self.id_list(node, where)
        if values is None:
            return None
        ok = True
        for index, (child, value) in enumerate(
            zip(cast(yaml.SequenceNode, node).value, values, strict=True)
        ):
            try:
                get_note(value)
            except InputError:
                self.error(child, f"{where}[{index}]", f"{value!r} is not an exercise note id")
                ok = False
        return values if ok else None

    def links(
        self, node: yaml.Node, where: str
    ) -> tuple[tuple[Link, ...] | None, tuple[str, ...] | None]:
        """``links``: added material (``added: true``) with its sources and at least one URL."""
        fields = self.mapping(node, where, _LINKS_FIELDS)
        if fields is None:
            return None, None
        added = self.boolean(fields["added"], f"{where}.added") if "added" in fields else None
        if added is False:
            self.error(
                fields["added"],
                f"{where}.added",
                "links are never the source lesson's text: write 'added: true'",
            )
        sources = self.texts(fields["sources"], f"{where}.sources") if "sources" in fields else None
        if sources is not None and not sources:
            self.error(fields["sources"], f"{where}.sources", "added material must name a source")
            sources = None
        urls = self.sequence(fields["urls"], f"{where}.urls") if "urls" in fields else None
        if urls is not None and not urls:
            self.error(fields["urls"], f"{where}.urls", "give at least one link")
            urls = None
        built: list[Link] = []
        for index, child in enumerate(urls or []):
            link = self.link(child, f"{where}.urls[{index}]")
            if link is not None:
                built.append(link)
        if added is not True or sources is None or urls is None or len(built) != len(urls):
            return None, None
        return tuple(built), sources

    def link(self, node: yaml.Node, where: str) -> Link | None:
        fields = self.mapping(node, where, _URL_FIELDS)
        if fields is None:
            return None
        label = self.text(fields["label"], f"{where}.label") if "label" in fields else None
        url = self.text(fields["url"], f"{where}.url") if "url" in fields else None
        if url is not None:
            problem = url_problem(url)
            if problem:
                self.error(fields["url"], f"{where}.url", problem)
                url = None
        if label is None or url is None:
            return None
        return Link(label=label, url=url)

    def key_points(
        self, node: yaml.Node, where: str
    ) -> tuple[tuple[str, ...] | None, tuple[str, ...] | None, bool | None]:
        fields = self.mapping(node, where, _KEY_POINT_FIELDS)
        if fields is None:
            return None, None, None
        added = self.boolean(fields["added"], f"{where}.added") if "added" in fields else None
        sources = self.texts(fields["sources"], f"{where}.sources") if "sources" in fields else None
        points = self.texts(fields["points"], f"{where}.points") if "points" in fields else None
        if points is not None and not points:
            self.error(fields["points"], f"{where}.points", "give at least one key point")
            points = None
        if added and sources is not None and not sources:
            self.error(fields["sources"], f"{where}.sources", "added material must name a source")
            sources = None
        return points, sources, added

    def formulas(
        self, node: yaml.Node, where: str, ids: dict[str, int], own: set[str] | None
    ) -> tuple[Formula, ...] | None:
        children = self.sequence(node, where)
        if children is None:
            return None
        built: list[Formula] = []
        ok = True
        for index, child in enumerate(children):
            formula = self.formula(child, f"{where}[{index}]", ids, own)
            if formula is None:
                ok = False
            else:
                built.append(formula)
        return tuple(built) if ok else None

    def formula(
        self, node: yaml.Node, where: str, ids: dict[str, int], own: set[str] | None
    ) -> Formula | None:
        """``own``: ids of the items of the same section (None when they could not be read)."""
        fields = self.mapping(node, where, _FORMULA_FIELDS)
        if fields is None:
            return None
        formula_id = self.ident(fields["id"], f"{where}.id") if "id" in fields else None
        if formula_id is not None:
            self.claim_id(fields["id"], f"{where}.id", formula_id, ids)
        text = self.text(fields["text"], f"{where}.text") if "text" in fields else None
        source = self.text(fields["source"], f"{where}.source") if "source" in fields else None
        note: str | None = ""
        if "note" in fields:
            note = self.text(fields["note"], f"{where}.note", blank_ok=True)
        added: bool | None = False
        if "added" in fields:
            added = self.boolean(fields["added"], f"{where}.added")
        sources: tuple[str, ...] | None = ()
        if "sources" in fields:
            sources = self.texts(fields["sources"], f"{where}.sources")
        if added and sources == ():
            self.error(node, f"{where}.sources", "an added formula must name its sources")
            sources = None
        after: str | None = ""
        if "after" in fields:
            after = self.ident(fields["after"], f"{where}.after")
            if after is not None and own is not None and after not in own:
                self.error(
                    fields["after"],
                    f"{where}.after",
                    f"{after!r} is not the id of an item in this section",
                )
                after = None
        if (
            formula_id is None
            or text is None
            or source is None
            or note is None
            or added is None
            or sources is None
            or after is None
        ):
            return None
        return Formula(
            id=formula_id,
            text=text,
            source=source,
            note=note,
            added=added,
            sources=sources,
            after=after,
        )


def url_problem(url: str) -> str:
    """Why ``url`` cannot be a lesson link, or ``""`` when it can: an ``https://`` or
    ``http://`` address with a host, in printable ASCII without spaces or the characters that
    end a Markdown autolink (``<``, ``>``)."""
    if not url.isascii() or any(ch.isspace() or not ch.isprintable() for ch in url):
        return f"{url!r} must be printable ASCII without spaces (percent-encode the rest)"
    if any(ch in url for ch in '<>"\\`'):
        return f"{url!r} must not contain <, >, quotes, backslashes or backquotes"
    try:
        parts = urlsplit(url)
        host = parts.hostname
    except ValueError:
        return f"{url!r} is not a valid web address"
    if parts.scheme not in LINK_SCHEMES:
        return f"{url!r} is not a web address: start it with https://"
    if not host:
        return f"{url!r} has no host name"
    return ""


def _valid_date(text: str) -> bool:
    if not _DATE_RE.fullmatch(text):
        return False
    try:
        date.fromisoformat(text)
    except ValueError:
        return False
    return True


def _sorted(errors: Iterable[ContentError]) -> list[ContentError]:
    """Document order; errors not tied to a line first (they concern the whole file)."""
    return sorted(errors, key=lambda e: -1 if e.line is None else e.line)


_EMPTY_MESSAGE: Final = "the file is empty; a lesson starts with 'schema_version: 1'"


def _check(path: Path | str) -> tuple[Lesson | None, list[ContentError]]:
    shown = str(path)
    file = Path(path)
    try:
        text = _read_text(file, shown)
        root = _compose(shown, text)
    except ContentError as error:
        return None, [error]
    if root is None or (isinstance(root, yaml.ScalarNode) and not str(root.value).strip()):
        return None, [ContentError(shown, 1, _EMPTY_MESSAGE)]
    checker = _Checker(shown)
    checker.check_tree(root, "")
    if checker.errors:
        return None, _sorted(checker.errors)
    lesson = checker.lesson(root, file)
    return lesson, _sorted(checker.errors)


def check_file(path: Path | str) -> list[ContentError]:
    """Every error in one lesson file, in line order; ``[]`` when the file is a valid lesson.

    Syntax-level problems (encoding, YAML syntax, anchors) stop the check at the first one;
    schema problems are all reported.
    """
    return _check(path)[1]


def load_lesson(path: Path | str) -> Lesson:
    """Load and validate one lesson file.

    Raises:
        ContentError: the first problem found (see :func:`check_file` for all of them).
    """
    lesson, errors = _check(path)
    if errors:
        raise errors[0]
    assert lesson is not None
    return lesson


# --------------------------------------------------------------------------------------------
# Discovery


def _head(path: Path) -> LessonRef:
    """Read a lesson's id and title by streaming YAML events, stopping once both are found.

    Raises:
        ContentError: the file cannot be read, or its id/title are missing or invalid.
    """
    shown = str(path)
    text = _read_text(path, shown)
    try:
        loader = _Loader(text)
    except yaml.YAMLError as error:
        raise _yaml_error(shown, text, error) from None
    found: dict[str, tuple[str, int]] = {}
    try:
        while loader.check_event(yaml.StreamStartEvent, yaml.DocumentStartEvent):
            _next_event(loader)
        if loader.check_event(yaml.StreamEndEvent):
            raise ContentError(shown, 1, _EMPTY_MESSAGE)
        start = _next_event(loader)
        if isinstance(start, yaml.ScalarEvent) and not str(start.value).strip():
            raise ContentError(shown, 1, _EMPTY_MESSAGE)
        if not isinstance(start, yaml.MappingStartEvent) or start.anchor is not None:
            raise ContentError(shown, _event_line(start), "expected a mapping at the top")
        while len(found) < 2 and not loader.check_event(yaml.MappingEndEvent):
            key = _next_event(loader)
            if isinstance(key, yaml.ScalarEvent) and key.value in ("id", "title"):
                value = _next_event(loader)
                line = _event_line(value)
                if key.value in found:
                    raise ContentError(shown, _event_line(key), f"{key.value}: duplicate key")
                if not isinstance(value, yaml.ScalarEvent) or value.tag not in (
                    None,
                    "!",
                    _STR_TAG,
                ):
                    raise ContentError(shown, line, f"{key.value}: expected text")
                problem = _bad_character(str(value.value))
                if problem:
                    raise ContentError(shown, line, f"{key.value}: {problem}")
                found[str(key.value)] = (str(value.value), line)
                continue
            _skip_node(loader, key, shown)
            _skip_node(loader, _next_event(loader), shown)
    except yaml.YAMLError as error:
        raise _yaml_error(shown, text, error) from None
    finally:
        loader.dispose()
    for name in ("id", "title"):
        if name not in found:
            raise ContentError(shown, _event_line(start), f"{name}: missing required field")
    lesson_id, id_line = found["id"]
    if not _ID_RE.fullmatch(lesson_id):
        raise ContentError(shown, id_line, f"id: {lesson_id!r} is not a valid id")
    title, title_line = found["title"]
    if not title.strip():
        raise ContentError(shown, title_line, "title: must not be empty")
    return LessonRef(id=lesson_id, title=title, path=path)


def _skip_node(loader: _Loader, event: yaml.Event, shown: str) -> None:
    """Consume the events of the node that starts with ``event``; refuse anchors and aliases."""
    depth = 0
    while True:
        if isinstance(event, yaml.AliasEvent) or getattr(event, "anchor", None) is not None:
            raise ContentError(shown, _event_line(event), "anchors and aliases are not allowed")
        if isinstance(event, yaml.MappingStartEvent | yaml.SequenceStartEvent):
            depth += 1
        elif isinstance(event, yaml.MappingEndEvent | yaml.SequenceEndEvent):
            depth -= 1
        if depth == 0:
            return
        event = _next_event(loader)


def lesson_files(folder: Path) -> list[Path]:
    """The lesson files directly inside ``folder`` (``*.yaml``, ``*.yml``), sorted by name."""
    return sorted(
        entry
        for entry in folder.iterdir()
        if entry.suffix.lower() in LESSON_SUFFIXES and entry.is_file()
    )


def discover_lessons(
    content_dir: Path, index: Path | None = None
) -> tuple[list[LessonRef], list[ContentError]]:
    """The lessons in a content folder, sorted by id, and the files that could not be listed.

    Only each file's id and title are read (a lesson whose later sections are broken is still
    listed; :func:`load_lesson` reports those). A second file with an id already seen is an
    error. Never raises for a bad file; a missing folder is one error.

    ``index``: a JSON file caching each file's id and title (or its error), keyed by name,
    mtime_ns, ctime_ns, size and inode (:func:`lesson_index_path` gives the usual place). A file
    whose key changed, or that is new, is read again; a removed file is dropped; the result is
    the same as without the index. The index is an optimisation: when it cannot be read or
    written it is ignored.
    """
    shown = str(content_dir)
    if not content_dir.is_dir():
        return [], [ContentError(shown, None, "no such folder")]
    cached = _read_index(index, content_dir) if index is not None else {}
    fresh: dict[str, dict[str, Any]] = {}
    refs: dict[str, LessonRef] = {}
    errors: list[ContentError] = []
    for file, stamp in _lesson_stamps(content_dir):
        entry = cached.get(file.name)
        if not stamp or entry is None or entry.get("stamp") != stamp or not _valid_entry(entry):
            entry = _index_entry(file, stamp)
        fresh[file.name] = entry
        if "error" in entry:
            line, message = entry["error"]
            errors.append(ContentError(str(file), line, message))
            continue
        ref = LessonRef(id=entry["id"], title=entry["title"], path=file)
        if ref.id in refs:
            errors.append(
                ContentError(
                    str(file), None, f"lesson id {ref.id!r} is also used by {refs[ref.id].path}"
                )
            )
            continue
        refs[ref.id] = ref
    if index is not None:
        _write_index(index, content_dir, cached, fresh)
    return sorted(refs.values(), key=lambda ref: ref.id), errors


# --------------------------------------------------------------------------------------------
# The lesson index (a cache of discover_lessons)

# Bump when what _head accepts or returns changes: every cached entry is then read again.
INDEX_VERSION: Final = 1
# Git's "racy" rule: a file modified within the filesystem's timestamp resolution (2 s on FAT)
# of being indexed could change again without its mtime changing; it is not cached.
_RACY_NS: Final = 2_000_000_000


def lesson_index_path(content_dir: Path) -> Path:
    """Where the app caches the index of ``content_dir``: one JSON file per content folder, named
    by a hash of its resolved path, in ``cache_dir()/lessons`` (:mod:`engine.paths`)."""
    folder = str(content_dir.resolve()).encode("utf-8", "surrogateescape")
    name = hashlib.sha256(folder).hexdigest()[:16]
    return cache_dir() / "lessons" / f"{name}.json"


def _lesson_stamps(folder: Path) -> list[tuple[Path, list[int]]]:
    """The lesson files of ``folder`` (as :func:`lesson_files` lists them), each with its
    [mtime_ns, ctime_ns, size, inode]; one ``stat`` per file."""
    found: list[tuple[Path, list[int]]] = []
    with os.scandir(folder) as entries:
        for entry in entries:
            if Path(entry.name).suffix.lower() not in LESSON_SUFFIXES:
                continue
            try:
                if not entry.is_file():
                    continue
            except OSError:
                continue
            try:
                info = entry.stat()
            except OSError:
                stamp: list[int] = []  # never matches a cached entry: the file is read again
            else:
                stamp = [info.st_mtime_ns, info.st_ctime_ns, info.st_size, info.st_ino]
            found.append((folder / entry.name, stamp))
    return sorted(found)


def _index_entry(file: Path, stamp: list[int]) -> dict[str, Any]:
    try:
        ref = _head(file)
    except ContentError as error:
        return {"stamp": stamp, "error": [error.line, error.message]}
    return {"stamp": stamp, "id": ref.id, "title": ref.title}


def _valid_entry(entry: dict[str, Any]) -> bool:
    """A cached entry has the shape :func:`_index_entry` writes (a hand-edited or truncated
    index must not list a lesson that is not there)."""
    if "error" in entry:
        error = entry["error"]
        return (
            isinstance(error, list)
            and len(error) == 2
            and (error[0] is None or isinstance(error[0], int))
            and isinstance(error[1], str)
        )
    lesson_id, title = entry.get("id"), entry.get("title")
    return (
        isinstance(lesson_id, str)
        and _ID_RE.fullmatch(lesson_id) is not None
        and isinstance(title, str)
        and bool(title.strip())
    )


def _read_index(index: Path, content_dir: Path) -> dict[str, dict[str, Any]]:
    try:
        data = json.loads(index.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    if (
        not isinstance(data, dict)
        or data.get("version") != INDEX_VERSION
        or data.get("folder") != str(content_dir.resolve())
        or not isinstance(data.get("files"), dict)
    ):
        return {}
    return {
        name: entry
        for name, entry in data["files"].items()
        if isinstance(entry, dict) and isinstance(entry.get("stamp"), list)
    }


def _write_index(
    index: Path,
    content_dir: Path,
    cached: dict[str, dict[str, Any]],
    fresh: dict[str, dict[str, Any]],
) -> None:
    now = time.time_ns()
    keep = {
        name: entry
        for name, entry in fresh.items()
        if entry["stamp"] and now - entry["stamp"][0] > _RACY_NS
    }
    if keep == cached:
        return
    data = {"version": INDEX_VERSION, "folder": str(content_dir.resolve()), "files": keep}
    temp = index.with_name(f".{index.name}.{os.getpid()}.tmp")
    try:
        index.parent.mkdir(parents=True, exist_ok=True)
        temp.write_text(json.dumps(data, ensure_ascii=False), encoding="utf-8")
        os.replace(temp, index)
    except OSError:
        # A cache that cannot be written only costs the next start-up a re-read.
        with contextlib.suppress(OSError):
            temp.unlink(missing_ok=True)


def check_paths(paths: Sequence[Path | str]) -> tuple[list[Path], list[ContentError]]:
    """Check lesson files and folders (a folder: its ``*.yaml``/``*.yml`` files).

    Returns:
        The files checked and every error found, including a lesson id used by two files
        and a path that does not exist or a folder without lessons.
    """
    files: list[Path] = []
    errors: list[ContentError] = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            found = lesson_files(path)
            if not found:
                errors.append(ContentError(str(raw), None, "no lesson files (*.yaml) in folder"))
            files.extend(found)
        elif path.exists():
            files.append(path)
        else:
            errors.append(ContentError(str(raw), None, "no such file or folder"))
    owners: dict[str, Path] = {}
    for file in files:
        lesson, found_errors = _check(file)
        errors.extend(found_errors)
        if lesson is None:
            continue
        if lesson.id in owners and owners[lesson.id].resolve() != file.resolve():
            errors.append(
                ContentError(
                    str(file), None, f"lesson id {lesson.id!r} is also used by {owners[lesson.id]}"
                )
            )
        owners.setdefault(lesson.id, file)
    return files, errors


# --------------------------------------------------------------------------------------------
# Markdown


@dataclass(frozen=True)
class MarkdownLabels:
    """The few words the Markdown rendering adds around lesson text (the UI may translate)."""

    tex: str = "TeX"
    note: str = "Note"
    added: str = "added material"
    sources: str = "sources"


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
        note = f"{labels.note}: {formula.note}" if formula.note.strip() else labels.note
        parts.append(escape_markdown(note))
        parts.append(_provenance(formula.added or bool(formula.note), formula.sources, labels))
    return "\n\n".join(part for part in parts if part)


def _provenance(added: bool, sources: Sequence[str], labels: MarkdownLabels) -> str:
    words = [labels.added] if added else []
    if sources:
        words.append(f"{labels.sources}: {'; '.join(sources)}")
    return f"*{escape_markdown('; '.join(words))}*" if words else ""


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
