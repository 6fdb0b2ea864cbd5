"""A figures table that is never cut: drawn as a table where it fits, stacked where it does not.

Rich shrinks a table that is wider than the space it is given, and a shrunk figure column loses
digits (an ellipsis at best). A study tool must never show a wrong number, so :class:`FitTable`
measures what the figure columns need and, when the width given is less, draws each row as a
block instead: the row's label on a line, then each figure under its column's heading, whole. A
label column with a fixed width may still end in an ellipsis (a visible mark); figures never do.
"""

from __future__ import annotations

from rich.cells import cell_len
from rich.console import Console, ConsoleOptions, RenderableType, RenderResult
from rich.measure import Measurement
from rich.table import Table
from rich.text import Text


def _plain(cell: RenderableType) -> str:
    if isinstance(cell, Text):
        return cell.plain
    return cell if isinstance(cell, str) else str(cell)


class FitTable:
    """``table`` as it is where its columns fit the width, else stacked (module docstring).

    Every cell must be a ``str`` or a ``rich.text.Text``; the first column holds the row labels.
    """

    def __init__(self, table: Table) -> None:
        self.table = table

    def needed_width(self) -> int:
        """Cells the table needs to draw every figure whole: each column as wide as its widest
        cell (a fixed-width column: its width), plus the padding between columns."""
        widths = []
        for column in self.table.columns:
            if column.width is not None:
                widths.append(column.width)
                continue
            cells = [column.header, *column.cells]
            widths.append(max(column.min_width or 0, *(cell_len(_plain(c)) for c in cells)))
        left, right = self.table.padding[3], self.table.padding[1]
        return sum(widths) + (left + right) * (len(widths) - 1)

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        if self.needed_width() <= options.max_width:
            yield self.table
            return
        if self.table.title:
            yield Text(_plain(self.table.title), style="bold")
        label, *figures = self.table.columns
        headings = [_plain(column.header) for column in figures]
        for index, row_label in enumerate(label.cells):
            yield Text(_plain(row_label), style=getattr(row_label, "style", "") or "bold")
            for heading, column in zip(headings, figures, strict=True):
                value = list(column.cells)[index]
                yield Text.assemble("  ", (heading, "dim"), " ", _plain(value))

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> Measurement:
        return Measurement(1, self.needed_width())
