"""Reading a lesson file's id and title alone: YAML events streamed until both are found, so a
lesson whose later sections are broken is still listed (:mod:`engine.lesson.index`, on an index
miss)."""

from __future__ import annotations

from pathlib import Path

import yaml

from engine.errors import ContentError
from engine.i18n import gettext as _
from engine.lesson.model import ID_PATTERN, LessonRef
from engine.lesson.yaml_nodes import (
    EMPTY_FILE_MESSAGE,
    STR_TAG,
    TextOnlyLoader,
    bad_character,
    event_line,
    field_message,
    next_event,
    read_lesson_text,
    yaml_error,
)


def read_lesson_head(path: Path) -> LessonRef:
    """Read a lesson's id and title by streaming YAML events, stopping once both are found.

    Raises:
        ContentError: the file cannot be read, or its id/title are missing or invalid.
    """
    shown = str(path)
    text = read_lesson_text(path, shown)
    try:
        loader = TextOnlyLoader(text)
    except yaml.YAMLError as error:
        raise yaml_error(shown, text, error) from None
    found: dict[str, tuple[str, int]] = {}
    try:
        while loader.check_event(yaml.StreamStartEvent, yaml.DocumentStartEvent):
            next_event(loader)
        if loader.check_event(yaml.StreamEndEvent):
            raise ContentError(shown, 1, _(EMPTY_FILE_MESSAGE))
        start = next_event(loader)
        if isinstance(start, yaml.ScalarEvent) and not str(start.value).strip():
            raise ContentError(shown, 1, _(EMPTY_FILE_MESSAGE))
        if not isinstance(start, yaml.MappingStartEvent) or start.anchor is not None:
            raise ContentError(shown, event_line(start), _("expected a mapping at the top"))
        while len(found) < 2 and not loader.check_event(yaml.MappingEndEvent):
            key = next_event(loader)
            if isinstance(key, yaml.ScalarEvent) and key.value in ("id", "title"):
                value = next_event(loader)
                line = event_line(value)
                if key.value in found:
                    raise ContentError(
                        shown, event_line(key), field_message(key.value, _("duplicate key"))
                    )
                if not isinstance(value, yaml.ScalarEvent) or value.tag not in (
                    None,
                    "!",
                    STR_TAG,
                ):
                    raise ContentError(shown, line, field_message(key.value, _("expected text")))
                problem = bad_character(str(value.value))
                if problem:
                    raise ContentError(shown, line, field_message(key.value, problem))
                found[str(key.value)] = (str(value.value), line)
                continue
            _skip_node(loader, key, shown)
            _skip_node(loader, next_event(loader), shown)
    except yaml.YAMLError as error:
        raise yaml_error(shown, text, error) from None
    finally:
        loader.dispose()
    for name in ("id", "title"):
        if name not in found:
            raise ContentError(
                shown, event_line(start), field_message(name, _("missing required field"))
            )
    lesson_id, id_line = found["id"]
    if not ID_PATTERN.fullmatch(lesson_id):
        raise ContentError(
            shown,
            id_line,
            field_message("id", _("{value!r} is not a valid id").format(value=lesson_id)),
        )
    title, title_line = found["title"]
    if not title.strip():
        raise ContentError(shown, title_line, field_message("title", _("must not be empty")))
    return LessonRef(id=lesson_id, title=title, path=path)


def _skip_node(loader: TextOnlyLoader, event: yaml.Event, shown: str) -> None:
    """Consume the events of the node that starts with ``event``; refuse anchors and aliases."""
    depth = 0
    while True:
        if isinstance(event, yaml.AliasEvent) or getattr(event, "anchor", None) is not None:
            raise ContentError(shown, event_line(event), _("anchors and aliases are not allowed"))
        if isinstance(event, yaml.MappingStartEvent | yaml.SequenceStartEvent):
            depth += 1
        elif isinstance(event, yaml.MappingEndEvent | yaml.SequenceEndEvent):
            depth -= 1
        if depth == 0:
            return
        event = next_event(loader)
