"""The figures table draws its columns as rich.table.Table does, and never cuts a figure."""

from __future__ import annotations

import io

from hypothesis import assume, example, given, settings
from hypothesis import strategies as st
from rich.cells import cell_len
from rich.console import Console, RenderableType
from rich.segment import Segment
from rich.table import Table
from rich.text import Text

from tui.widgets.fit import Column, FigureTable

labels = st.text(st.characters(categories=("L", "N"), max_codepoint=0x9FFF), max_size=18)
figures = st.builds(lambda value: f"{value:,.2f}", st.floats(0, 1e12, allow_nan=False))
styles = st.sampled_from(["", "bold", "bold blue", "dim"])


def cells(renderable: RenderableType, width: int) -> list[list[tuple[str, str]]]:
    """Each line as (character, visible style) pairs; a space's style shows nothing."""
    console = Console(width=width, file=io.StringIO(), color_system="truecolor")
    lines = console.render_lines(renderable, console.options, pad=False)
    return [
        [
            (char, str(segment.style or "") if char != " " else "")
            for segment in Segment.simplify(line)
            for char in segment.text
        ]
        for line in lines
    ]


@settings(max_examples=60, deadline=None)
@given(
    rows=st.lists(st.tuples(labels, styles, figures, figures), min_size=1, max_size=8),
    header=st.booleans(),
    gap=st.sampled_from([1, 2]),
    label_width=st.sampled_from([None, 8, 13]),
)
def test_the_columns_are_rich_tables_columns(
    rows: list[tuple[str, str, str, str]], header: bool, gap: int, label_width: int | None
) -> None:
    ours = FigureTable(
        Column("per rank", width=label_width),
        Column("GB", justify="right", min_width=6),
        Column("GiB", justify="right"),
        gap=gap,
        show_header=header,
    )
    # The Ledger's table as it was drawn by Rich: gap 1 is padding (0, 1) collapsed, gap 2
    # padding (0, 1) between columns.
    rich = Table(
        box=None,
        pad_edge=False,
        show_header=header,
        padding=(0, 1),
        collapse_padding=gap == 1,
    )
    rich.add_column("per rank", no_wrap=True, width=label_width)
    rich.add_column("GB", justify="right", no_wrap=True, min_width=6)
    rich.add_column("GiB", justify="right", no_wrap=True)
    for label, style, gb, gib in rows:
        ours.add_row(Text(label, style=style), gb, gib)
        rich.add_row(Text(label, style=style), gb, gib)
    width = 120
    assert ours.needed_width() <= width
    assert cells(ours, width) == cells(rich, width)


@given(rows=st.lists(st.tuples(labels, figures), min_size=1, max_size=6), width=st.integers(8, 40))
@example(rows=[("", "100,000,000,000.00"), ("\u1160", "0.00")], width=29)
def test_a_figure_is_never_cut(rows: list[tuple[str, str]], width: int) -> None:
    table = FigureTable(Column("term", width=10), Column("GB", justify="right"), gap=1)
    # A stacked figure takes its heading's line: "  GB 1,234.00".
    assume(all(len("  GB ") + len(figure) <= width for _label, figure in rows))
    for label, figure in rows:
        table.add_row(label, figure)
    console = Console(width=width, file=io.StringIO(), record=True)
    console.print(table)
    text = console.export_text()
    fits = table.needed_width() <= width
    # Measured in cells, as the terminal draws them: a character of no width (U+1160, a Hangul
    # filler) takes none, so the line may hold one character more than it has cells.
    assert all(cell_len(line) <= width for line in text.splitlines()) or not fits
    for _label, figure in rows:
        # Whole on a line of its own column (stacked: under its heading when it is too wide).
        assert any(line.rstrip().endswith(figure) for line in text.splitlines()), (figure, text)


def test_cells_are_shown_literally() -> None:
    table = FigureTable(Column(), Column(justify="right"), show_header=False)
    table.add_row("[bold]x[/]", "1.00")
    console = Console(width=40, file=io.StringIO(), record=True)
    console.print(table)
    assert "[bold]x[/]  1.00" in console.export_text()
