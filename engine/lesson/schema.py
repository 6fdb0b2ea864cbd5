"""The lesson format's schema: which fields each part of a lesson has, and how a node tree
becomes a :class:`~engine.lesson.model.Lesson`.

Loading is strict so that the learner sees the lesson exactly as written: duplicate keys, unknown
fields, missing required fields and wrong types are errors; every error is collected, not only
the first (:class:`LessonChecker`).

The module is long (about 620 lines) because it is the format's one definition: every field of
every part of a lesson with its check and its message, read top to bottom as the file is.
Split by part, each piece would need the checker's shared state and error list.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from datetime import date
from pathlib import Path
from typing import Final, Literal, TypeVar, cast
from urllib.parse import urlsplit

import yaml

from engine.i18n import gettext as _
from engine.lesson.model import (
    LINK_SCHEMES,
    PANES,
    SCHEMA_VERSION,
    SECTION_KINDS,
    SINGLE_KINDS,
    Formula,
    Item,
    Lesson,
    LessonMeta,
    Link,
    Pane,
    Section,
)
from engine.lesson.yaml_nodes import NodeReader, node_line

# What one list element is built into (an item, a formula).
Built = TypeVar("Built")

_DATE_RE: Final = re.compile(r"[0-9]{4}-[0-9]{2}-[0-9]{2}")

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


class LessonChecker(NodeReader):
    """Walks the node tree of one file, collecting every error, and builds the lesson."""

    def __init__(self, shown: str) -> None:
        super().__init__(shown)
        # Each ``trained_by`` entry (node, field path, id), checked once every section is read.
        self.trained_by: list[tuple[yaml.Node, str, str]] = []

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
                    _("unsupported version {version!r}; this shardbook reads {supported}").format(
                        version=version, supported=SCHEMA_VERSION
                    ),
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
                fields["date"],
                "meta.date",
                _("expected a date YYYY-MM-DD, got {value!r}").format(value=values["date"]),
            )
        day = self.whole(fields["day"], "meta.day") if "day" in fields else None
        total = (
            self.whole(fields["days_total"], "meta.days_total") if "days_total" in fields else None
        )
        if day is not None and total is not None and day > total:
            self.error(
                fields["day"],
                "meta.day",
                _("day {day} is after days_total {total}").format(day=day, total=total),
            )
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
            self.error(node, "sections", _("a lesson needs at least one section"))
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
                    _("section id {id!r} is already used on line {line}").format(
                        id=section.id, line=section_ids[section.id]
                    ),
                )
            section_ids.setdefault(section.id, node_line(child))
            if section.kind in SINGLE_KINDS:
                if section.kind in single_kinds:
                    self.error(
                        child,
                        f"{where}.kind",
                        _(
                            "only one {kind!r} section is allowed (another starts on line {line})"
                        ).format(kind=section.kind, line=single_kinds[section.kind]),
                    )
                single_kinds.setdefault(section.kind, node_line(child))
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
                    _(
                        "{id!r} is not the id of an exercise or a self-check question "
                        "of this lesson"
                    ).format(id=item_id),
                )

    def section(self, node: yaml.Node, where: str, item_ids: dict[str, int]) -> Section | None:
        fields = self.mapping(node, where, _SECTION_FIELDS)
        if fields is None:
            return None
        section_id = self.ident(fields["id"], f"{where}.id") if "id" in fields else None
        title = self.text(fields["title"], f"{where}.title") if "title" in fields else None
        kind_text = self.text(fields["kind"], f"{where}.kind") if "kind" in fields else None
        if kind_text is not None and kind_text not in SECTION_KINDS:
            self.error(
                fields["kind"],
                f"{where}.kind",
                _("{kind!r} is not a section kind; use one of {kinds}").format(
                    kind=kind_text, kinds=", ".join(SECTION_KINDS)
                ),
            )
        kind = kind_text if kind_text in SECTION_KINDS else None
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
            self.error(node, where, _("section has no body, items or formulas"))
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
                node,
                where,
                _("id {id!r} is already used on line {line}; ids are unique").format(
                    id=value, line=ids[value]
                ),
            )
        else:
            ids[value] = node_line(node)

    def each(
        self, node: yaml.Node, where: str, build: Callable[[yaml.Node, str], Built | None]
    ) -> tuple[Built, ...] | None:
        """``build(child, where)`` for every element of the list at ``node``: each one is
        checked (every error reported); None when it is not a list or any element failed."""
        children = self.sequence(node, where)
        if children is None:
            return None
        built = [build(child, f"{where}[{index}]") for index, child in enumerate(children)]
        if any(value is None for value in built):
            return None
        return tuple(value for value in built if value is not None)

    def items(
        self, node: yaml.Node, where: str, kind: str | None, ids: dict[str, int]
    ) -> tuple[Item, ...] | None:
        return self.each(node, where, lambda child, at: self.item(child, at, kind, ids))

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
            message = (
                _("only items of an {kind} section have this field")
                if allowed[0] in "aeiou"
                else _("only items of a {kind} section have this field")
            )
            self.error(node, where, message.format(kind=allowed))

    def exercise_fields(
        self, node: yaml.Node, fields: dict[str, yaml.Node], where: str, kind: str | None
    ) -> tuple[Pane | Literal[""] | None, tuple[str, ...] | None]:
        """``worked_in`` (required in an exercises section) and ``notes`` (required unless the
        exercise is worked in the Ledger, whose saved form is its work)."""
        worked_in: Pane | Literal[""] | None = ""
        if "worked_in" in fields:
            self.only_in(kind, "exercises", fields["worked_in"], f"{where}.worked_in")
            pane = self.text(fields["worked_in"], f"{where}.worked_in")
            if pane is not None and pane not in PANES:
                self.error(
                    fields["worked_in"],
                    f"{where}.worked_in",
                    _("{pane!r} is not a pane; use one of {panes}").format(
                        pane=pane, panes=", ".join(PANES)
                    ),
                )
            worked_in = pane if pane in PANES else None
        elif kind == "exercises":
            self.error(
                node,
                f"{where}.worked_in",
                _("missing required field (where the exercise is worked: {panes})").format(
                    panes=", ".join(PANES)
                ),
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
                _(
                    "missing required field (an exercise worked in {pane!r} is done when the "
                    "notes it lists are written)"
                ).format(pane=worked_in),
            )
            notes = None
        return worked_in, notes

    def id_list(self, node: yaml.Node, where: str) -> tuple[str, ...] | None:
        """A non-empty list of distinct ids."""
        children = self.sequence(node, where)
        if children is None:
            return None
        if not children:
            self.error(node, where, _("give at least one id"))
            return None
        values: list[str] = []
        ok = True
        for index, child in enumerate(children):
            value = self.text(child, f"{where}[{index}]")
            if value is None:
                ok = False
            elif value in values:
                self.error(
                    child, f"{where}[{index}]", _("{value!r} is listed twice").format(value=value)
                )
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
                self.error(
                    child,
                    f"{where}[{index}]",
                    _("{value!r} is not an exercise note id").format(value=value),
                )
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
                _("links are never the source lesson's text: write 'added: true'"),
            )
        sources = self.texts(fields["sources"], f"{where}.sources") if "sources" in fields else None
        if sources is not None and not sources:
            self.error(
                fields["sources"], f"{where}.sources", _("added material must name a source")
            )
            sources = None
        urls = self.sequence(fields["urls"], f"{where}.urls") if "urls" in fields else None
        if urls is not None and not urls:
            self.error(fields["urls"], f"{where}.urls", _("give at least one link"))
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
            self.error(fields["points"], f"{where}.points", _("give at least one key point"))
            points = None
        if added and sources is not None and not sources:
            self.error(
                fields["sources"], f"{where}.sources", _("added material must name a source")
            )
            sources = None
        return points, sources, added

    def formulas(
        self, node: yaml.Node, where: str, ids: dict[str, int], own: set[str] | None
    ) -> tuple[Formula, ...] | None:
        return self.each(node, where, lambda child, at: self.formula(child, at, ids, own))

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
            self.error(node, f"{where}.sources", _("an added formula must name its sources"))
            sources = None
        after: str | None = ""
        if "after" in fields:
            after = self.ident(fields["after"], f"{where}.after")
            if after is not None and own is not None and after not in own:
                self.error(
                    fields["after"],
                    f"{where}.after",
                    _("{id!r} is not the id of an item in this section").format(id=after),
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
        return _("{url!r} must be printable ASCII without spaces (percent-encode the rest)").format(
            url=url
        )
    if any(ch in url for ch in '<>"\\`'):
        return _("{url!r} must not contain <, >, quotes, backslashes or backquotes").format(url=url)
    try:
        parts = urlsplit(url)
        host = parts.hostname
    except ValueError:
        return _("{url!r} is not a valid web address").format(url=url)
    if parts.scheme not in LINK_SCHEMES:
        return _("{url!r} is not a web address: start it with https://").format(url=url)
    if not host:
        return _("{url!r} has no host name").format(url=url)
    return ""


def _valid_date(text: str) -> bool:
    if not _DATE_RE.fullmatch(text):
        return False
    try:
        date.fromisoformat(text)
    except ValueError:
        return False
    return True
