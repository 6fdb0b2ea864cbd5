"""Loading and checking lesson files: a file becomes a :class:`~engine.lesson.model.Lesson`, or
the list of its problems (``FILE:LINE: message``, in line order).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path

import yaml

from engine.errors import ContentError
from engine.i18n import gettext as _
from engine.lesson.index import lesson_files
from engine.lesson.model import Lesson
from engine.lesson.schema import LessonChecker
from engine.lesson.yaml_nodes import EMPTY_FILE_MESSAGE, compose, read_lesson_text


def _sorted(errors: Iterable[ContentError]) -> list[ContentError]:
    """Document order; errors not tied to a line first (they concern the whole file)."""
    return sorted(errors, key=lambda e: -1 if e.line is None else e.line)


def _check(path: Path | str) -> tuple[Lesson | None, list[ContentError]]:
    shown = str(path)
    file = Path(path)
    try:
        text = read_lesson_text(file, shown)
        root = compose(shown, text)
    except ContentError as error:
        return None, [error]
    if root is None or (isinstance(root, yaml.ScalarNode) and not str(root.value).strip()):
        return None, [ContentError(shown, 1, _(EMPTY_FILE_MESSAGE))]
    checker = LessonChecker(shown)
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
                errors.append(ContentError(str(raw), None, _("no lesson files (*.yaml) in folder")))
            files.extend(found)
        elif path.exists():
            files.append(path)
        else:
            errors.append(ContentError(str(raw), None, _("no such file or folder")))
    owners: dict[str, Path] = {}
    for file in files:
        lesson, found_errors = _check(file)
        errors.extend(found_errors)
        if lesson is None:
            continue
        if lesson.id in owners and owners[lesson.id].resolve() != file.resolve():
            errors.append(
                ContentError(
                    str(file),
                    None,
                    _("lesson id {id!r} is also used by {path}").format(
                        id=lesson.id, path=owners[lesson.id]
                    ),
                )
            )
        owners.setdefault(lesson.id, file)
    return files, errors
