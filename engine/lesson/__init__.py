"""Lessons: the model, the loader and the validator of the lesson format (``content/README.md``),
the lesson index and the Markdown of the reading pane.

A lesson is a YAML file (``schema_version: 1``) turned into frozen dataclasses
(:mod:`~engine.lesson.model`). Reading is safe and literal (:mod:`~engine.lesson.yaml_nodes`),
checking strict and complete (:mod:`~engine.lesson.schema`, :mod:`~engine.lesson.loader`); a
content folder is listed through a cached index (:mod:`~engine.lesson.index`), and a lesson read
once is loaded from a cache of its parsed model (:mod:`~engine.lesson.parsed`); sections render
as Markdown in which the lesson's text stays literal (:mod:`~engine.lesson.markdown`).
"""

from typing import TYPE_CHECKING, Any

from engine.lesson.index import (
    INDEX_VERSION,
    discover_lessons,
    lesson_files,
    lesson_index_path,
    read_head,
)
from engine.lesson.markdown import (
    DEFAULT_LABELS,
    META_LABELS,
    MarkdownLabels,
    escape_markdown,
    formula_markdown,
    key_points_markdown,
    lesson_markdown,
    links_markdown,
    meta_lines,
    section_markdown,
)
from engine.lesson.model import (
    LESSON_SUFFIXES,
    LINK_SCHEMES,
    PANES,
    SCHEMA_VERSION,
    SECTION_KINDS,
    SINGLE_KINDS,
    Formula,
    Item,
    Lesson,
    LessonMeta,
    LessonRef,
    Link,
    Section,
)
from engine.lesson.parsed import load_lesson_cached, parsed_lesson_path

if TYPE_CHECKING:
    from engine.lesson.loader import check_file, check_paths, load_lesson
    from engine.lesson.schema import url_problem
    from engine.lesson.yaml_nodes import MAX_DEPTH, MAX_FILE_BYTES

# The names whose modules import PyYAML: imported when first asked for, so that opening a lesson
# from the caches (the index, the parsed lesson) imports no YAML machinery (PEP 562).
_LAZY = {
    "check_file": "engine.lesson.loader",
    "check_paths": "engine.lesson.loader",
    "load_lesson": "engine.lesson.loader",
    "url_problem": "engine.lesson.schema",
    "MAX_DEPTH": "engine.lesson.yaml_nodes",
    "MAX_FILE_BYTES": "engine.lesson.yaml_nodes",
}


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


__all__ = [
    "DEFAULT_LABELS",
    "INDEX_VERSION",
    "LESSON_SUFFIXES",
    "LINK_SCHEMES",
    "MAX_DEPTH",
    "MAX_FILE_BYTES",
    "META_LABELS",
    "PANES",
    "SCHEMA_VERSION",
    "SECTION_KINDS",
    "SINGLE_KINDS",
    "Formula",
    "Item",
    "Lesson",
    "LessonMeta",
    "LessonRef",
    "Link",
    "MarkdownLabels",
    "Section",
    "check_file",
    "check_paths",
    "discover_lessons",
    "escape_markdown",
    "formula_markdown",
    "key_points_markdown",
    "lesson_files",
    "lesson_index_path",
    "lesson_markdown",
    "links_markdown",
    "load_lesson",
    "load_lesson_cached",
    "meta_lines",
    "parsed_lesson_path",
    "read_head",
    "section_markdown",
    "url_problem",
]
