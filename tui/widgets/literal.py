"""The learner's text fields: every character kept, control characters drawn visibly.

A learner can paste an escape sequence (``\\x1b[2J`` clears the screen). Textual's TextArea and
Input keep the text exactly, which we want, but draw it as is, so the terminal would obey it.
These subclasses keep the text byte for byte and only change what is drawn: each C0/C1 control
character becomes its visible Unicode "control picture" (ESC is shown as U+241B).

They also take the format characters (Cf) that Textual's fields drop when typed, so an emoji
ZWJ sequence or a subdivision flag typed at the keyboard is stored whole (see :mod:`tui.keys`).
A paste of several lines into a one-line field arrives whole, its lines joined with spaces
(:class:`tui.paste.OneLinePaste`).
The text box puts the cursor at the end of its text when entered (or selects a search match,
:meth:`LiteralTextArea.enter_with_selection`), and ctrl+home / ctrl+end go to the start and end
of the whole text.
"""

from __future__ import annotations

from rich.segment import Segment
from rich.text import Text
from textual import events
from textual.binding import Binding
from textual.strip import Strip
from textual.widgets import TextArea
from textual.widgets.text_area import Document, Edit, EditResult, Selection

from engine.i18n import N_
from tui.keys import is_format_character, is_text
from tui.paste import OneLinePaste

_PICTURES = {code: chr(0x2400 + code) for code in range(32) if code != 9}
_PICTURES[0x7F] = "\u2421"
_PICTURES.update({code: "\ufffd" for code in range(0x80, 0xA0)})
_TABLE = str.maketrans(_PICTURES)
_TEXT_TABLE = str.maketrans({code: picture for code, picture in _PICTURES.items() if code != 10})


def visible_text(text: str) -> str:
    """``text`` with control characters other than the line break replaced by visible
    symbols (learner text shown outside a text box: a search snippet, the notes view)."""
    return text.translate(_TEXT_TABLE)


def visible_controls(strip: Strip) -> Strip:
    """``strip`` with control characters replaced by visible symbols, cropped to its width.

    Control characters measure 0 cells and each symbol 1, so the line grows by one cell per
    control character; the crop takes that back from the trailing padding.
    """
    if not any(segment.text.translate(_TABLE) != segment.text for segment in strip):
        return strip
    segments = [
        Segment(segment.text.translate(_TABLE), segment.style, segment.control) for segment in strip
    ]
    return Strip(segments).crop(0, strip.cell_length)


class LiteralTextArea(TextArea):
    """A TextArea for the learner's words (see module docstring)."""

    BINDINGS = [
        Binding("ctrl+home", "cursor_text_start", N_("Start of the text"), show=False),
        Binding("ctrl+end", "cursor_text_end", N_("End of the text"), show=False),
        Binding(
            "ctrl+shift+home", "cursor_text_start(True)", N_("Select to the start"), show=False
        ),
        Binding("ctrl+shift+end", "cursor_text_end(True)", N_("Select to the end"), show=False),
    ]

    _entry_selection: Selection | None = None

    def enter_with_selection(self, start: int, end: int) -> None:
        """Focus the box with ``text[start:end]`` selected (a search match; the cursor at
        ``start`` when empty) instead of the cursor at the end. The focus moves at once, so a
        key that follows lands here."""
        document = self.document
        if not isinstance(document, Document):  # every LiteralTextArea holds a plain Document
            return
        selection = Selection(
            document.get_location_from_index(start), document.get_location_from_index(end)
        )
        if self.has_focus:
            self.selection = selection
            return
        self._entry_selection = selection
        self.screen.set_focus(self)

    def edit(self, edit: Edit) -> EditResult:
        result = super().edit(edit)
        # Textual scrolls to the cursor within the edit, and stops a row short when the
        # wrapped text holds a wide emoji (the row the cursor moved to is not scrollable yet):
        # after a long paste, what was typed next stayed under the box's bottom edge. Once laid
        # out, the cursor's row is brought into view.
        self.call_after_refresh(self.scroll_cursor_visible)
        return result

    def action_cursor_text_start(self, select: bool = False) -> None:
        self.move_cursor((0, 0), select=select)

    def action_cursor_text_end(self, select: bool = False) -> None:
        self.move_cursor(self.document.end, select=select)

    def _on_focus(self, event: events.Focus) -> None:
        # Entered from another widget (not the terminal regaining focus): continue the text.
        # A click then places the cursor where it points (its MouseDown comes after Focus).
        selection, self._entry_selection = self._entry_selection, None
        if selection is not None:
            self.selection = selection
        elif not event.from_app_focus:
            self.move_cursor(self.document.end)

    def check_consume_key(self, key: str, character: str | None = None) -> bool:
        return super().check_consume_key(key, character) or (
            not self.read_only and is_text(character)
        )

    async def _on_key(self, event: events.Key) -> None:
        # TextArea._on_key runs after this one (Textual calls each class's handler) unless the
        # key is taken here; subclasses calling super()._on_key get the same.
        if is_format_character(event.character) and not self.read_only:
            assert event.character is not None
            event.stop()
            event.prevent_default()
            self.replace(event.character, *self.selection)

    def get_line(self, line_index: int) -> Text:
        # Rich's Text drops BEL, BS, VT and FF on creation, before render_line could show them
        # (and the cursor would then sit one cell off); translate them while building it.
        line = self.document.get_line(line_index).translate(_TABLE)
        return Text(line, end="", no_wrap=True)

    def render_line(self, y: int) -> Strip:
        return visible_controls(super().render_line(y))


class LiteralInput(OneLinePaste):
    """An Input that keeps what is typed and draws control characters visibly (see module
    docstring)."""

    def check_consume_key(self, key: str, character: str | None) -> bool:
        return super().check_consume_key(key, character) or is_text(character)

    async def _on_key(self, event: events.Key) -> None:
        if is_format_character(event.character):  # Input._on_key would drop it
            assert event.character is not None
            event.stop()
            event.prevent_default()
            selection = self.selection
            if selection.is_empty:
                self.insert_text_at_cursor(event.character)
            else:
                self.replace(event.character, *selection)

    def render_line(self, y: int) -> Strip:
        return visible_controls(super().render_line(y))
