"""F1: the keys of the screen it opens over, and help for the focused pane.

The rows are read from the bindings the app, the screen below and the panes declare
(:func:`tui.commands.key_rows`), not from what is active at that moment: a text box with the focus
takes the keys that can be typed (``?``, ``/``, ``]``), and Textual's ``active_bindings`` then
leaves them out, but the help still lists them (each says where it works).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.content import Content
from textual.dom import DOMNode
from textual.geometry import Size
from textual.screen import ModalScreen, Screen
from textual.widget import Widget
from textual.widgets import Static

from engine.i18n import N_, gettext
from engine.linebreak import break_text, cell_width, pad_cells
from tui import strings
from tui.commands import declared_bindings, key_display, key_rows, labelled
from tui.widgets.reader import BrokenText

KeyRow = tuple[str, str]


def _pane_classes() -> tuple[tuple[str, type[DOMNode]], ...]:
    from tui.widgets.collectives import StepView
    from tui.widgets.ledger import LedgerPane
    from tui.widgets.literal import LiteralTextArea
    from tui.widgets.notes import NoteBox, SelfCheckBox

    return (
        (N_("answer or note box"), LiteralTextArea),
        (N_("answer or note box"), NoteBox),
        (N_("self-check answer"), SelfCheckBox),
        (N_("Ledger"), LedgerPane),
        (N_("Collectives picture"), StepView),
    )


def pane_key_rows() -> list[KeyRow]:
    """(key, help) rows for the keys a pane adds while it has focus, read from the panes'
    own BINDINGS so the help cannot disagree with them."""
    return [
        (key_display(binding.key), labelled(gettext(where), gettext(binding.description)))
        for where, widget in _pane_classes()
        for binding in declared_bindings(widget)
    ]


def focused_key_rows(focused: Widget | None, listed: Sequence[KeyRow]) -> list[KeyRow]:
    """(key, help) rows for the keys the focused widget and the widgets around it declare
    (its ``ancestors_with_self`` below the screen), less those already ``listed``."""
    if focused is None:
        return []
    panes = tuple(widget for _where, widget in _pane_classes())
    rows: list[KeyRow] = []
    for node in focused.ancestors_with_self:
        if not isinstance(node, Widget) or isinstance(node, panes):
            continue
        for row in key_rows([node]):
            if row not in listed and row not in rows:
                rows.append(row)
    return rows


def help_rows(screen: Screen[Any], focused: Widget | None) -> tuple[list[KeyRow], list[KeyRow]]:
    """What F1 lists over ``screen``: the keys of the screen and of the app, the panes' keys and
    the command palette's; then the keys of the focused widget and its containers not listed
    already."""
    app = screen.app
    keys = key_rows([screen, app])
    keys += pane_key_rows()
    keys.append((app.COMMAND_PALETTE_BINDING, gettext("Command palette")))
    return keys, focused_key_rows(focused, keys)


KEY_GAP = 2
"""Spaces between the key column and the text column."""
MIN_TEXT_WIDTH = 16
"""Below this many cells beside the keys, each key stands on a line of its own, its text
under it."""


def key_table_lines(rows: Sequence[KeyRow], width: int) -> list[tuple[str, str]]:
    """The key table drawn ``width`` cells wide, as ``(key cell, text)`` line pairs: the key
    column is as wide as the longest key (or its heading), and each text is broken into lines
    by the lesson's rules (:func:`engine.linebreak.break_text`), its continuation lines under
    it, so nothing is cut. Where less than :data:`MIN_TEXT_WIDTH` cells would be left beside the
    keys, each key stands on its own line with its text indented under it. The first pair is the
    heading."""
    header = (gettext("key"), gettext("action"))
    key_width = max(cell_width(key) for key, _text in [header, *rows])
    room = width - key_width - KEY_GAP
    stacked = room < MIN_TEXT_WIDTH
    if stacked:
        room = max(width - KEY_GAP, 1)
    lines: list[tuple[str, str]] = []
    for key, text in [header, *rows]:
        broken = [line.rstrip(" ") for line in break_text(text, room)]
        if stacked:
            lines.append((key, ""))
            lines.extend((" " * KEY_GAP, line) for line in broken)
            continue
        blank = " " * (key_width + KEY_GAP)
        lines.append((pad_cells(key, key_width + KEY_GAP), broken[0]))
        lines.extend((blank, line) for line in broken[1:])
    return lines


class KeyTable(Widget):
    """The keys and what each does, in two columns that wrap rather than cut
    (:func:`key_table_lines`); drawn literally."""

    DEFAULT_CSS = """
    KeyTable {
        width: 1fr;
        height: auto;
        margin: 1 0;
        text-wrap: nowrap;
        text-overflow: clip;
    }
    """

    def __init__(self, rows: Sequence[KeyRow], *, classes: str | None = None) -> None:
        super().__init__(classes=classes)
        self.rows = list(rows)

    def lines_at(self, width: int) -> list[tuple[str, str]]:
        return key_table_lines(self.rows, max(width, 1))

    def get_content_width(self, container: Size, viewport: Size) -> int:
        return max(cell_width(key) + KEY_GAP + cell_width(text) for key, text in self.lines_at(999))

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        return len(self.lines_at(width)) if width else 0

    def render(self) -> Content:
        parts: list[tuple[str, str] | str] = []
        for index, (key, line) in enumerate(self.lines_at(self.size.width)):
            heading = index == 0
            parts += [
                "\n" if index else "",
                (key, "bold" if heading else "bold $accent"),
                (line, "bold" if heading else ""),
            ]
        return Content.assemble(*parts)


class HelpScreen(ModalScreen[None]):
    """A modal list of the keys (see module docstring) plus the focused pane's HELP."""

    BINDINGS = [Binding("escape", "dismiss", N_("Close"), id="close_help")]

    def __init__(
        self,
        focused_help: str,
        keys: Sequence[KeyRow] = (),
        focused_keys: Sequence[KeyRow] = (),
    ) -> None:
        """``keys``: the rows of the keys table (:func:`help_rows`); ``focused_keys``: those of
        the focused pane, listed under its help."""
        super().__init__()
        self.focused_help = focused_help
        self.keys = list(keys)
        self.focused_keys = list(focused_keys)

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="help-body"):
            yield Static(strings.HELP_TITLE, classes="section-title")
            yield BrokenText(strings.HELP_INTRO)
            yield KeyTable(self.keys)
            if self.focused_help or self.focused_keys:
                yield Static(strings.HELP_FOCUSED, classes="section-title")
            if self.focused_help:
                yield BrokenText(self.focused_help)
            if self.focused_keys:
                yield KeyTable(self.focused_keys)
            yield BrokenText(strings.HELP_CLOSE, classes="hint")
