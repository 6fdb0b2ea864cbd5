"""Reading a lesson file safely, and the typed node reader the schema is built on.

- safe YAML only: a :class:`yaml.SafeLoader` subclass; tags (``!!python/object``, ``!!int``),
  anchors and aliases are errors (no object construction, no alias bombs);
- every scalar stays text: ``no``, ``off``, ``3.10``, ``null``, ``2026-12-07`` come through as the
  exact strings written;
- UTF-8 with or without a BOM; files over :data:`MAX_FILE_BYTES` are refused before parsing;
  nesting deeper than :data:`MAX_DEPTH` is refused (PyYAML composes recursively).

Every problem is a :class:`~engine.errors.ContentError` naming the file, the 1-based line (from
the YAML node marks) and the field path, e.g. ``sections[3].items[1].text`` (indices 0-based).
Messages are in the interface language (:mod:`engine.i18n`, read when the file is checked); the
path, the field path and the values quoted from the file stay as the file writes them.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Final

import yaml
from yaml.composer import Composer
from yaml.constructor import SafeConstructor
from yaml.resolver import Resolver

from engine.errors import ContentError
from engine.i18n import N_
from engine.i18n import gettext as _
from engine.lesson.model import ID_PATTERN

MAX_FILE_BYTES: Final = 2 * 1024 * 1024
MAX_DEPTH: Final = 64
EMPTY_FILE_MESSAGE: Final = N_("the file is empty; a lesson starts with 'schema_version: 1'")
"""Translated where it is raised (``_(EMPTY_FILE_MESSAGE)``): defined before the language is
chosen."""

STR_TAG: Final = "tag:yaml.org,2002:str"
SEQ_TAG: Final = "tag:yaml.org,2002:seq"
MAP_TAG: Final = "tag:yaml.org,2002:map"
_WHOLE_RE: Final = re.compile(r"[0-9]+")


class Refused(Exception):
    """A YAML construct the lesson format does not allow (anchor, alias)."""

    def __init__(self, line: int, message: str) -> None:
        super().__init__(message)
        self.line = line
        self.message = message


def peek_event(loader: yaml.SafeLoader) -> yaml.Event:
    """The loader's next event, not consumed."""
    event: yaml.Event = loader.peek_event()  # type: ignore[no-untyped-call]  # untyped in stubs
    return event


def next_event(loader: yaml.SafeLoader) -> yaml.Event:
    """The loader's next event, consumed."""
    event: yaml.Event = loader.get_event()  # type: ignore[no-untyped-call]  # untyped in stubs
    return event


def event_line(event: yaml.Event) -> int:
    """The 1-based line an event starts on."""
    mark = event.start_mark
    return int(mark.line) + 1 if mark is not None else 1


class _Checks:
    """Composing that refuses anchors, aliases, lone surrogates and deep nesting."""

    _depth = 0

    def compose_node(self, parent: yaml.Node | None, index: int) -> yaml.Node | None:
        event = peek_event(self)  # type: ignore[arg-type]
        line = event_line(event)
        if isinstance(event, yaml.AliasEvent):
            raise Refused(
                line,
                _("aliases (*{anchor}) are not allowed; write the text out").format(
                    anchor=event.anchor
                ),
            )
        anchor = getattr(event, "anchor", None)
        if anchor is not None:
            raise Refused(
                line,
                _("anchors (&{anchor}) are not allowed; write the text out").format(anchor=anchor),
            )
        if isinstance(event, yaml.ScalarEvent):
            problem = bad_character(str(event.value))
            if problem:
                raise Refused(line, problem)
        # PyYAML composes recursively: "[[[[..." 20,000 deep would exhaust the stack.
        if self._depth >= MAX_DEPTH:
            raise Refused(line, _("nested more than {depth} levels deep").format(depth=MAX_DEPTH))
        self._depth += 1
        try:
            node: yaml.Node | None = Composer.compose_node(self, parent, index)  # type: ignore[arg-type]
            return node
        finally:
            self._depth -= 1


class TextOnlyLoader(_Checks, yaml.SafeLoader):
    """SafeLoader whose plain scalars all resolve to text, and which refuses anchors/aliases."""


_SURROGATE: Final = re.compile("[\ud800-\udfff]")


def bad_character(text: str) -> str:
    """A message when ``text`` holds a lone surrogate (only reachable through an escape such as
    ``"\\ud800"``): it is not text, cannot be written as UTF-8, and would break every save and
    export of the lesson. ``""`` when the text is fine. (Control characters are allowed: Rich
    and Textual strip them when drawing.)"""
    found = _SURROGATE.search(text)
    if found is None:
        return ""
    return _("contains a lone surrogate (U+{code}), which is not text").format(
        code=f"{ord(found.group()):04X}"
    )


def _fast_loader() -> type | None:
    """:class:`TextOnlyLoader`'s nodes from libyaml's C scanner and parser under Python's
    composer and the same checks (tests/test_lesson_loader.py compares them): about 10x faster
    on S15, which the first frame waits for. None where PyYAML was built without libyaml."""
    if not getattr(yaml, "__with_libyaml__", False):
        return None
    from yaml._yaml import CParser

    class FastTextOnlyLoader(_Checks, CParser, Composer, SafeConstructor, Resolver):
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

    FastTextOnlyLoader.yaml_implicit_resolvers = {}
    return FastTextOnlyLoader


# No implicit resolvers: a plain scalar falls through to the default tag, str.
TextOnlyLoader.yaml_implicit_resolvers = {}
FAST_LOADER: Final = _fast_loader()


def read_lesson_text(path: Path, shown: str) -> str:
    """The file's text, UTF-8 with an optional BOM removed.

    Raises:
        ContentError: missing or unreadable, larger than MAX_FILE_BYTES, or not UTF-8.
    """
    try:
        size = path.stat().st_size
    except FileNotFoundError:
        raise ContentError(shown, None, _("no such file")) from None
    except OSError as error:
        raise ContentError(shown, None, _cannot_read(error)) from None
    if size > MAX_FILE_BYTES:
        raise ContentError(
            shown,
            1,
            _(
                "file is {size} bytes; a lesson file may be at most {limit} bytes (2 MiB); "
                "split the lesson"
            ).format(size=f"{size:,}", limit=f"{MAX_FILE_BYTES:,}"),
        )
    try:
        data = path.read_bytes()
    except OSError as error:
        raise ContentError(shown, None, _cannot_read(error)) from None
    data = data.removeprefix(b"\xef\xbb\xbf")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        line = data[: error.start].count(b"\n") + 1
        raise ContentError(
            shown,
            line,
            _("not valid UTF-8 (byte {offset} of the file); save the file as UTF-8").format(
                offset=error.start
            ),
        ) from None


def _cannot_read(error: OSError) -> str:
    """Why a file could not be read, the system's own words after it."""
    return _("cannot read: {reason}").format(reason=error.strerror or error)


def yaml_error(shown: str, text: str, error: yaml.YAMLError) -> ContentError:
    """Turn a PyYAML error into a ContentError with a line and a plain message."""
    if isinstance(error, yaml.reader.ReaderError):
        position = error.position if isinstance(error.position, int) else 0
        line = text[:position].count("\n") + 1
        char = error.character
        shown_char = f"U+{char:04X}" if isinstance(char, int) else repr(char)
        return ContentError(
            shown,
            line,
            _("contains a control character ({character}) that YAML does not allow").format(
                character=shown_char
            ),
        )
    if isinstance(error, yaml.MarkedYAMLError):
        mark = error.problem_mark or error.context_mark
        mark_line = int(mark.line) + 1 if mark is not None else None
        # PyYAML's own words (English) follow "invalid YAML", as the system's do after an OS error.
        problem = error.problem or error.context or ""
        if "'\\t'" in problem or "\t" in problem:
            message = _("a tab character cannot indent YAML; indent with spaces")
        elif not problem:
            message = _("invalid YAML")
        else:
            context = f"{error.context}: " if error.context and error.problem else ""
            message = _("invalid YAML: {problem}").format(problem=f"{context}{problem}")
        return ContentError(shown, mark_line, message)
    return ContentError(shown, None, _("invalid YAML: {problem}").format(problem=error))


def compose(shown: str, text: str) -> yaml.Node | None:
    """Parse one YAML document into nodes (nothing is constructed).

    Raises:
        ContentError: syntax errors, several documents, anchors or aliases.
    """
    # Files libyaml refuses, and control characters (the pure-Python reader's check), are read
    # again by TextOnlyLoader: its lines and messages are the ones the learner sees.
    if FAST_LOADER is not None and not yaml.reader.Reader.NON_PRINTABLE.search(text):
        fast = FAST_LOADER(text)
        try:
            node: yaml.Node | None = fast.get_single_node()
            return node
        except (yaml.YAMLError, Refused):
            pass
        finally:
            fast.dispose()
    try:
        loader = TextOnlyLoader(text)
    except yaml.YAMLError as error:
        raise yaml_error(shown, text, error) from None
    try:
        return loader.get_single_node()
    except Refused as refused:
        raise ContentError(shown, refused.line, refused.message) from None
    except yaml.YAMLError as error:
        raise yaml_error(shown, text, error) from None
    finally:
        loader.dispose()


def node_line(node: yaml.Node) -> int:
    """The 1-based line a node starts on."""
    return int(node.start_mark.line) + 1


def kind_of(node: yaml.Node) -> str:
    """What a node is, in an error message: a mapping, a list or text."""
    if isinstance(node, yaml.MappingNode):
        return _("a mapping")
    if isinstance(node, yaml.SequenceNode):
        return _("a list")
    return _("text")


def field_message(field: str, message: str) -> str:
    """``message`` about the field at path ``field`` (``sections[3].id: ...``), in the interface
    language; the path stays as the file spells it. ``message`` alone when ``field`` is empty."""
    return _("{field}: {message}").format(field=field, message=message) if field else message


def join_path(where: str, name: str) -> str:
    """The field path ``where.name`` (``name`` alone at the top)."""
    return f"{where}.{name}" if where else name


class NodeReader:
    """Reads the node tree of one file, collecting every error: tags and keys anywhere
    (:meth:`check_tree`), then typed values, each accessor returning None after recording an
    error."""

    def __init__(self, shown: str) -> None:
        self.shown = shown
        self.errors: list[ContentError] = []

    def error(self, node: yaml.Node | int | None, where: str, message: str) -> None:
        line = node_line(node) if isinstance(node, yaml.Node) else node
        self.errors.append(ContentError(self.shown, line, field_message(where, message)))

    # -- structure shared by every node

    def check_tree(self, node: yaml.Node, where: str) -> None:
        """Tags and keys anywhere in the file, before the schema is applied."""
        if isinstance(node, yaml.ScalarNode):
            if node.tag != STR_TAG:
                self.error(
                    node,
                    where,
                    _("tags ({tag}) are not allowed; write plain text").format(tag=node.tag),
                )
        elif isinstance(node, yaml.SequenceNode):
            if node.tag != SEQ_TAG:
                self.error(node, where, _("tags ({tag}) are not allowed").format(tag=node.tag))
            for index, child in enumerate(node.value):
                self.check_tree(child, f"{where}[{index}]")
        elif isinstance(node, yaml.MappingNode):
            if node.tag != MAP_TAG:
                self.error(node, where, _("tags ({tag}) are not allowed").format(tag=node.tag))
            seen: dict[str, int] = {}
            for key, value in node.value:
                if not isinstance(key, yaml.ScalarNode) or key.tag != STR_TAG:
                    self.error(key, where, _("a key must be plain text"))
                    continue
                name = str(key.value)
                if name in seen:
                    self.error(
                        key,
                        join_path(where, name),
                        _("duplicate key (first on line {line}); keep one").format(line=seen[name]),
                    )
                else:
                    seen[name] = node_line(key)
                self.check_tree(value, join_path(where, name))

    # -- typed accessors; each returns None after recording an error

    def mapping(
        self, node: yaml.Node, where: str, fields: dict[str, bool]
    ) -> dict[str, yaml.Node] | None:
        if not isinstance(node, yaml.MappingNode):
            self.error(node, where, _("expected a mapping, got {kind}").format(kind=kind_of(node)))
            return None
        found: dict[str, yaml.Node] = {}
        for key, value in node.value:
            name = str(key.value)
            if name not in fields:
                known = ", ".join(fields)
                self.error(
                    key,
                    join_path(where, name),
                    _("unknown field (known fields: {known})").format(known=known),
                )
            elif name not in found:
                found[name] = value
        for name, required in fields.items():
            if required and name not in found:
                self.error(node, join_path(where, name), _("missing required field"))
        return found

    def text(self, node: yaml.Node, where: str, *, blank_ok: bool = False) -> str | None:
        if not isinstance(node, yaml.ScalarNode):
            self.error(node, where, _("expected text, got {kind}").format(kind=kind_of(node)))
            return None
        value = str(node.value)
        if not blank_ok and not value.strip():
            self.error(node, where, _("must not be empty"))
            return None
        return value

    def ident(self, node: yaml.Node, where: str) -> str | None:
        value = self.text(node, where)
        if value is not None and not ID_PATTERN.fullmatch(value):
            self.error(
                node,
                where,
                _(
                    "{value!r} is not a valid id: use 1-64 letters, digits, '-' or '_', "
                    "starting with a letter or digit"
                ).format(value=value),
            )
            return None
        return value

    def whole(self, node: yaml.Node, where: str) -> int | None:
        value = self.text(node, where)
        if value is None:
            return None
        if not _WHOLE_RE.fullmatch(value.strip()) or int(value) < 1:
            self.error(
                node,
                where,
                _("expected a whole number of at least 1, got {value!r}").format(value=value),
            )
            return None
        return int(value)

    def boolean(self, node: yaml.Node, where: str) -> bool | None:
        value = self.text(node, where)
        if value is None:
            return None
        if value not in ("true", "false"):
            self.error(node, where, _("expected true or false, got {value!r}").format(value=value))
            return None
        return value == "true"

    def sequence(self, node: yaml.Node, where: str) -> list[yaml.Node] | None:
        if not isinstance(node, yaml.SequenceNode):
            self.error(node, where, _("expected a list, got {kind}").format(kind=kind_of(node)))
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
