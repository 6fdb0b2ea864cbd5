"""Lesson text drawn in lines the app broke itself (``engine.linebreak``), again on every resize.

Textual and Rich wrap only at spaces, so mixed Chinese/Latin text came out as ``checkpointi`` /
``ng`` and ``r`` / ``educe-scatter``, and a ``。`` could start a line. A :class:`BrokenText` breaks
its text at its own width with the project's rule (UAX #14 plus: words and identifiers whole, no
line starting with closing punctuation) and draws exactly those lines; a list item's continuation
lines are indented under its text. The text is shown literally (``Content(text)``, never markup),
and it can be selected and copied like any Textual text. A search match in it can be marked
(:meth:`BrokenText.highlight`), wherever the lines break.
"""

from __future__ import annotations

import re

from rich.cells import cell_len
from rich.console import Console, ConsoleOptions, RenderResult
from rich.measure import Measurement
from rich.text import Text
from textual.app import ComposeResult
from textual.content import Content
from textual.geometry import Size
from textual.widget import Widget

from engine.linebreak import break_text, cell_width, hanging_lines, hanging_spans, widest
from engine.reading import Block

MATCH_STYLE = "bold reverse"
"""How a search match is marked in the lesson text."""


class BrokenText(Widget):
    """A text broken into lines at the widget's width (see module docstring).

    ``marker`` is drawn before the first line (``"1. "``, ``"• "``) and the lines after it are
    indented by its width.
    """

    DEFAULT_CSS = """
    BrokenText {
        width: 1fr;
        height: auto;
        text-wrap: nowrap;
        text-overflow: clip;
    }
    """

    def __init__(
        self, text: str, *, marker: str = "", id: str | None = None, classes: str | None = None
    ) -> None:
        super().__init__(id=id, classes=classes)
        self._text = text
        self._marker = marker
        self._lines: tuple[int, list[str]] = (-1, [])
        self._highlight: tuple[int, int] | None = None

    @property
    def text(self) -> str:
        """The text, as given (without the marker)."""
        return self._text

    @property
    def marker(self) -> str:
        return self._marker

    def update(self, text: str) -> None:
        """Show ``text`` instead (broken at the same width). The screen is laid out again only
        where the height changes: a text of as many lines at the width it was last broken at
        is repainted in place (a plan mark after each save changed one line of a pane's
        exercises, and each laid out the whole screen)."""
        if text == self._text:
            return
        width, lines = self._lines
        self._text = text
        self._lines = (-1, [])
        width_is_fixed = self.styles.width is not None and not self.styles.width.is_auto
        same_height = width > 0 and width_is_fixed and len(self.lines_at(width)) == len(lines)
        self.refresh(layout=not same_height)

    def hang(self, width: int) -> str | None:
        """The indent of the lines after the first at ``width`` cells; None: as wide as the
        marker."""
        return None

    def lines_at(self, width: int) -> list[str]:
        """The lines drawn at ``width`` cells (cached for the last width)."""
        width = max(width, 1)
        if self._lines[0] != width:
            rest = self.hang(width)
            if self._marker or rest is not None:
                lines = hanging_lines(self._text, width, self._marker, rest)
            else:
                lines = [line.rstrip(" ") for line in break_text(self._text, width)]
            self._lines = (width, lines)
        return self._lines[1]

    @property
    def lines(self) -> list[str]:
        """The lines on screen now."""
        return self.lines_at(self.size.width)

    def get_content_width(self, container: Size, viewport: Size) -> int:
        # The text unbroken: the width it asks for where it may be as wide as it likes.
        return cell_len(self._marker) + widest(self._text.splitlines())

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        return len(self.lines_at(width)) if width else 0

    @property
    def highlighted(self) -> tuple[int, int] | None:
        """The marked span of :attr:`text` (``start``, ``end``), or None."""
        return self._highlight

    def highlight(self, start: int, end: int) -> None:
        """Mark ``text[start:end]`` (a search match) on the lines it falls on."""
        self._highlight = (start, end)
        self.refresh()

    def clear_highlight(self) -> None:
        if self._highlight is not None:
            self._highlight = None
            self.refresh()

    def line_of(self, offset: int) -> int:
        """The line (0-based, at the current width) that shows ``text[offset]``."""
        width = max(self.size.width, 1)
        spans = hanging_spans(self._text, width, self._marker, self.hang(width))
        for index, (_prefix, start, end) in enumerate(spans):
            if offset < end or (start == end and offset == start):
                return index
        return max(len(spans) - 1, 0)

    def render(self) -> Content:
        content = Content("\n".join(self.lines))
        if self._highlight is None:
            return content
        low, high = self._highlight
        position = 0
        width = max(self.size.width, 1)
        for prefix, start, end in hanging_spans(self._text, width, self._marker, self.hang(width)):
            if start < high and low < end:
                begin = position + len(prefix) + max(low, start) - start
                content = content.stylize(
                    MATCH_STYLE, begin, begin + min(high, end) - max(low, start)
                )
            position += len(prefix) + end - start + 1
        return content


# A formula line's annotation column: after the last run of two or more spaces.
_ANNOTATION = re.compile(r"^(.*\S)( {2,})(?=\S)")
# The room an annotation needs to hang under its column rather than under the formula.
_ANNOTATION_ROOM = 12


class FormulaLine(BrokenText):
    """One line of a formula's Unicode form. A line with an annotation after it in a column of
    its own (``bubble / ideal = (p − 1) / m    Megatron-LM 的口径``) that wraps continues
    under that column, so the rest of the annotation never reads as another formula line;
    where the column leaves too little room, under the line's start."""

    def hang(self, width: int) -> str | None:
        found = _ANNOTATION.match(self.text)
        if found is None or "\n" in self.text:
            return None
        column = cell_len(found.group(1)) + len(found.group(2))
        return " " * column if width - column >= _ANNOTATION_ROOM else None


class ZoomHint(Widget):
    """A side pane's hint that names F5, worded for the state the pane is in: ``texts`` is the
    wording beside the lesson (F5 widens the pane) and the wording zoomed to the whole screen
    (F5 gives the lesson back). Both are composed; the main screen's layout classes show one
    (tui/side.tcss: ``-zoom``, except on a narrow screen, where the pane is the whole screen
    either way and F5 brings no lesson back). Without them (a pane alone in a test app), the
    first."""

    DEFAULT_CSS = """
    ZoomHint { height: auto; }
    ZoomHint > .-zoomed { display: none; }
    """

    def __init__(self, texts: tuple[str, str]) -> None:
        super().__init__()
        self._texts = texts

    def compose(self) -> ComposeResult:
        beside, zoomed = self._texts
        yield BrokenText(beside, classes="hint -beside")
        yield BrokenText(zoomed, classes="hint -zoomed")


def block_widget(block: Block) -> BrokenText:
    """The widget that shows one block of ``engine.reading`` (its kind is its CSS class)."""
    kind = FormulaLine if block.kind == "formula" else BrokenText
    return kind(block.text, marker=block.marker, classes=f"block-{block.kind}")


class BrokenLines:
    """A Rich renderable of ``text`` broken at whatever width it is drawn in, its continuation
    lines indented by ``indent`` so that they never look like entries of their own (an outline
    title that wraps), drawn in ``style`` (a Rich style: ``"dim"`` for a pane's notes). Widgets
    that draw Rich renderables (an OptionList's options, a Static) break it again when their
    width changes."""

    def __init__(self, text: str, indent: str = "  ", style: str = "", first: str = "") -> None:
        self.text = text
        self.indent = indent
        self.style = style
        self.first = first  # before the first line (the continuation lines get ``indent``)

    def __str__(self) -> str:
        return self.text

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        lines = hanging_lines(self.text, options.max_width, self.first, self.indent)
        yield Text("\n".join(lines), style=self.style, no_wrap=True, overflow="crop")

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> Measurement:
        return Measurement(1, cell_width(self.first) + widest(self.text.splitlines() or [""]))
