"""Text fields that show control characters instead of sending them to the terminal.

A learner can paste an escape sequence (``\\x1b[2J`` clears the screen). Textual's TextArea and
Input keep the text exactly, which we want, but draw it as is, so the terminal would obey it.
These subclasses keep the text byte for byte and only change what is drawn: each C0/C1 control
character becomes its visible Unicode "control picture" (ESC is shown as U+241B).
"""

from __future__ import annotations

from rich.segment import Segment
from rich.text import Text
from textual.strip import Strip
from textual.widgets import Input, TextArea

_PICTURES = {code: chr(0x2400 + code) for code in range(32) if code != 9}
_PICTURES[0x7F] = "\u2421"
_PICTURES.update({code: "\ufffd" for code in range(0x80, 0xA0)})
_TABLE = str.maketrans(_PICTURES)


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
    """A TextArea that draws control characters visibly (see module docstring)."""

    def get_line(self, line_index: int) -> Text:
        # Rich's Text drops BEL, BS, VT and FF on creation, before render_line could show them
        # (and the cursor would then sit one cell off); translate them while building it.
        line = self.document.get_line(line_index).translate(_TABLE)
        return Text(line, end="", no_wrap=True)

    def render_line(self, y: int) -> Strip:
        return visible_controls(super().render_line(y))


class LiteralInput(Input):
    """An Input that draws control characters visibly (see module docstring)."""

    def render_line(self, y: int) -> Strip:
        return visible_controls(super().render_line(y))
