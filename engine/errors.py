"""Errors the learner can cause, each naming what to fix.

Every engine entry point raises one of these for bad input, never a bare ZeroDivisionError,
OverflowError or a NaN result. The UI and the CLI show ``str(error)`` as is.
"""

from __future__ import annotations

import itertools
import unicodedata
from collections.abc import Callable
from typing import Final

from engine.i18n import gettext

# Unicode categories written as escapes in a quoted input: controls, line and paragraph
# separators, surrogates.
_ESCAPED = frozenset({"Cc", "Zl", "Zp", "Cs"})


def escaped(text: str) -> str:
    """``text`` as a message shows what the learner typed: each control character (a tab, an
    escape), line or paragraph separator and lone surrogate written as Python writes it
    (``\\t``, ``\\x1b``) so that it cannot move the cursor, colour the screen or break the
    line, and every other character as typed (``repr`` also escapes the joiners and variation
    selectors inside an emoji: 👩\\u200d💻)."""
    return "".join(
        repr(char)[1:-1] if unicodedata.category(char) in _ESCAPED else char for char in text
    )


def beginning(text: str, limit: int) -> str:
    """:func:`escaped` ``text`` cut to its first ``limit`` characters: a longer text keeps its
    first ``limit - 1`` user-perceived characters (Unicode grapheme clusters, UAX #29, so an
    emoji sequence is kept or left whole; an escape stands for its one character and is never
    cut in two) and ends in ``…``."""
    if len(text) <= limit:
        return escaped(text)
    # Imported here: only a long text needs it, and the module is on the start-up path.
    from uniseg.graphemecluster import grapheme_clusters

    # uniseg finds every boundary of the text it is given before yielding the first cluster
    # (0.1 s for 2,000 characters, on each key in a field holding them): it is given a head of
    # the text, longer until it holds more than limit + 1 clusters or the whole text. A
    # boundary depends only on the characters before it and the one after (UAX #29, rules
    # GB3-GB13), so every cluster of the head but its last is a cluster of the whole text.
    head_length = limit + 2
    while True:
        head = text[:head_length]
        clusters = list(itertools.islice(grapheme_clusters(head), limit + 2))
        if len(head) == len(text) or len(clusters) > limit + 1:
            break
        head_length *= 2
    if len(clusters) <= limit:
        return escaped(text)
    return escaped("".join(clusters[: max(0, limit - 1)])) + "…"


QUOTED_CHARACTERS: Final = 32
"""The most characters of what the learner typed that a message quotes: a value pasted 2,000
characters long is quoted by its beginning, not filling the screen (the field keeps it all)."""


def quoted(text: str) -> str:
    """``text`` as a message quotes what the learner typed: :func:`beginning` (at most
    :data:`QUOTED_CHARACTERS`), in the interface language's quotes (``'abc'``, ``“abc”``)."""
    return gettext("'{text}'").format(text=typed_value(text))


def typed_value(text: str) -> str:
    """What the learner typed, as a message shows it without quotes (``got 1.5``):
    :func:`beginning`, at most :data:`QUOTED_CHARACTERS`."""
    return beginning(text, QUOTED_CHARACTERS)


class ShardbookError(Exception):
    """Base class of every error shardbook reports to the learner."""


class FieldName:
    """Another input named inside an :class:`InputError`'s message (``layers`` in "the
    architecture (layers is missing)"): each front end shows it in its own words, the form's
    label in the interface, the flag (``--layers``) on the command line.

    Attributes:
        key: the spec field's name (``layers``, ``seq``).
    """

    __slots__ = ("key",)

    def __init__(self, key: str) -> None:
        self.key = key

    def __repr__(self) -> str:
        return f"FieldName({self.key!r})"


class FieldNote(str):
    """A note that names inputs (``largest_layer_params not given``): the text, with each
    :class:`FieldName` written as its spec field, so it reads as any note does (the app, the
    JSON); :meth:`naming` writes them in a front end's words (the command line's flags).

    Attributes:
        template: the ``str.format`` template. values: its values.
    """

    template: str
    values: dict[str, object]

    def __new__(cls, template: str, /, **values: object) -> FieldNote:
        text = template.format_map(
            {n: v.key if isinstance(v, FieldName) else v for n, v in values.items()}
        )
        note = super().__new__(cls, text)
        note.template = template
        note.values = values
        return note

    def naming(self, name_of: Callable[[str], str]) -> str:
        """The note with each :class:`FieldName` in it written as ``name_of(key)``."""
        return self.template.format_map(
            {n: name_of(v.key) if isinstance(v, FieldName) else v for n, v in self.values.items()}
        )


class InputError(ShardbookError, ValueError):
    """A calculator input is invalid.

    ``message`` is final text, or, with ``values``, a ``str.format`` template filled with them:
    a :class:`FieldName` value names another input, written as its spec field's name in
    ``message`` and as the caller's name for it by :meth:`naming`.

    Attributes:
        field: the name of the input (a spec field such as ``num_microbatches``, or a CLI flag such
            as ``--micro-batches`` once the CLI has mapped it).
        message: what is wrong and what is accepted, without the field name; other inputs it
            names are named by their spec fields.
        template: ``message`` before its values were filled in.
        values: the template's values (empty when ``message`` was given as final text).
    """

    def __init__(self, field: str, message: str, /, **values: object) -> None:
        self.field = field
        self.template = message
        self.values = values
        self.message = self.naming(lambda key: key)
        super().__init__(f"{field}: {self.message}")

    def naming(self, name_of: Callable[[str], str]) -> str:
        """The message with each :class:`FieldName` in it written as ``name_of(key)``."""
        if not self.values:
            return self.template
        return self.template.format_map(
            {
                name: name_of(value.key) if isinstance(value, FieldName) else value
                for name, value in self.values.items()
            }
        )

    def for_field(self, field: str) -> InputError:
        """The same error on ``field`` (another front end's name for the input)."""
        return InputError(field, self.template, **self.values)


class ContentError(ShardbookError):
    """A lesson file is invalid.

    Attributes:
        path: the file, as given.
        line: 1-based line number, or ``None`` when the problem is not tied to a line.
        message: what is wrong (it names the field when there is one).
    """

    def __init__(self, path: str, line: int | None, message: str) -> None:
        where = f"{path}:{line}" if line is not None else f"{path}"
        super().__init__(f"{where}: {message}")
        self.path = path
        self.line = line
        self.message = message


class ProgressError(ShardbookError):
    """The learner's progress file could not be read or written.

    Attributes:
        path: the progress file or folder concerned.
        message: what happened and what to do.
    """

    def __init__(self, path: str, message: str) -> None:
        super().__init__(f"{path}: {message}")
        self.path = path
        self.message = message
