"""A figures table that is never cut: columns where they fit, stacked where they do not.

Rich shrinks a table that is wider than the space it is given, and a shrunk figure column loses
digits (an ellipsis at best). A study tool must never show a wrong number, so
:class:`FigureTable` measures what its columns need and, when the width given is less, draws each
row as a block instead: the row's label on a line, then each figure under its column's heading,
whole. A label column with a fixed width may still end in an ellipsis (a visible mark); figures
never do.

The columns are drawn here rather than by ``rich.table.Table``: a calculator's figures are drawn
again on every key typed into its form, and Rich's general table (every cell measured, wrapped
and padded as a renderable of its own) took 2-3 ms of the 16 ms a frame has for the Ledger's nine
rows. These tables hold one line of text per cell, so aligning them is a sum of widths; the
columns look as Rich draws them with ``box=None`` (a bold header row, the given gap between
columns, no outer padding), and the cells are shown literally (no markup).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Literal

from rich.cells import cell_len
from rich.console import Console, ConsoleOptions, RenderResult
from rich.measure import Measurement
from rich.segment import Segment
from rich.style import Style
from rich.text import Text

HEADER_STYLE = Style(bold=True)
TITLE_STYLE = Style(italic=True)


@dataclass(frozen=True)
class Column:
    """One column: its heading, its alignment, and its width in cells. ``width`` fixes it (a
    longer cell ends in an ellipsis: for labels only); otherwise it is as wide as its widest
    cell or heading, and at least ``min_width``."""

    header: str = ""
    justify: Literal["left", "right"] = "left"
    width: int | None = None
    min_width: int = 0


class FigureTable:
    """Rows of one-line cells under :class:`Column` headings (module docstring); the first
    column holds the row labels. ``gap`` is the number of spaces between two columns."""

    def __init__(
        self, *columns: Column, gap: int = 2, title: str = "", show_header: bool = True
    ) -> None:
        self.columns = columns
        self.gap = gap
        self.title = title
        self.show_header = show_header
        self.rows: list[tuple[Text, ...]] = []

    def add_row(self, *cells: str | Text) -> None:
        """Add a row: one cell per column, a ``str`` (shown literally) or a styled ``Text``.

        Raises:
            ValueError: the number of cells is not the number of columns.
        """
        if len(cells) != len(self.columns):
            raise ValueError(f"{len(cells)} cells for {len(self.columns)} columns")
        self.rows.append(tuple(cell if isinstance(cell, Text) else Text(cell) for cell in cells))

    def widths(self) -> list[int]:
        """Each column's width in cells, as drawn when the table fits."""
        widths = []
        for index, column in enumerate(self.columns):
            if column.width is not None:
                widths.append(column.width)
                continue
            cells = [row[index].cell_len for row in self.rows]
            header = cell_len(column.header) if self.show_header else 0
            widths.append(max(column.min_width, header, *cells))
        return widths

    def needed_width(self) -> int:
        """Cells the table needs to draw every figure whole: the columns and the gaps."""
        return sum(self.widths()) + self.gap * (len(self.columns) - 1)

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        widths = self.widths()
        if sum(widths) + self.gap * (len(widths) - 1) <= options.max_width:
            yield from self._aligned(console, widths)
        else:
            yield from self._stacked()

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> Measurement:
        return Measurement(1, self.needed_width())

    def _aligned(self, console: Console, widths: list[int]) -> Iterator[Segment | Text]:
        if self.title:
            yield Text(self.title, style=TITLE_STYLE)
        rows: list[tuple[tuple[Text, ...], Style | None]] = []
        if self.show_header:
            header = tuple(Text(column.header, style=HEADER_STYLE) for column in self.columns)
            rows.append((header, HEADER_STYLE))
        rows.extend((row, None) for row in self.rows)
        for cells, gap_style in rows:
            # One Text per row: its cells' styles become spans, which render() applies.
            line = Text()
            for index, (cell, width, column) in enumerate(
                zip(cells, widths, self.columns, strict=True)
            ):
                if index:
                    line.append(" " * self.gap, gap_style)
                text = cell
                if cell.cell_len > width:
                    text = cell.copy()
                    text.truncate(width, overflow="ellipsis")
                room = width - text.cell_len
                if room and column.justify == "right":
                    line.append(" " * room, text.style)
                    line.append_text(text)
                else:
                    line.append_text(text)
                    if room:
                        line.append(" " * room, text.style)
            yield from line.render(console)
            yield Segment.line()

    def _stacked(self) -> Iterator[Text]:
        if self.title:
            yield Text(self.title, style="bold")
        headings = [column.header for column in self.columns[1:]]
        for label, *figures in self.rows:
            yield Text(label.plain, style=label.style or "bold")
            for heading, figure in zip(headings, figures, strict=True):
                if heading:
                    yield Text.assemble("  ", (heading, "dim"), " ", figure.plain)
                else:
                    yield Text.assemble("  ", figure.plain)
