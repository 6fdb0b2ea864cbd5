"""A paste into a one-line field keeps every line (see :class:`OneLinePaste`)."""

from __future__ import annotations

import re

from textual import events
from textual.widgets import Input

from tui import strings

# The line breaks of a paste (CR LF, LF, CR: what terminals and clipboards send), a run of them
# (a blank line, CR LF) as one.
_LINE_BREAKS = re.compile(r"[\r\n]+")


class OneLinePaste(Input):
    """An Input that takes a paste of several lines whole and tells the learner it joined them.

    Textual's Input (8.2.8) keeps the first line of a paste and drops the rest without a word.
    Here the line breaks at the paste's ends are dropped, each run of them between its lines
    becomes one space, and every other character is kept. Only CR and LF break a line: Textual
    cuts at ``str.splitlines``, which also breaks at VT, FF, FS, GS, RS, NEL, U+2028 and U+2029
    (Python's documentation, "str.splitlines"), text in a field (``a\\x1cb`` stays whole). The
    text is inserted as Input inserts a paste, so its ``restrict`` and ``max_length`` and a
    subclass's ``replace`` still apply."""

    def _on_paste(self, event: events.Paste) -> None:
        # Input._on_paste would run after this one (Textual calls each class's handler).
        event.stop()
        event.prevent_default()
        trimmed = event.text.strip("\r\n")
        text = _LINE_BREAKS.sub(" ", trimmed)
        if not text:
            return
        value = self.value
        selection = self.selection
        if selection.is_empty:
            self.insert_text_at_cursor(text)
        else:
            self.replace(text, *selection)
        # Said only where lines were joined and the field took them (refused, it rings the bell).
        if self.value != value and text != trimmed:
            self.notify(strings.PASTE_JOINED, markup=False)
