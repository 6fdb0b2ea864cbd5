"""F1: the keys, and help for the focused pane."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Markdown, Static

from tui import strings
from tui.commands import key_rows


def pane_key_rows() -> list[tuple[str, str]]:
    """(key, help) rows for the keys a pane adds while it has focus, read from the panes'
    own BINDINGS so the help cannot disagree with them."""
    from tui.widgets.collectives import StepView
    from tui.widgets.ledger import LedgerPane
    from tui.widgets.literal import LiteralTextArea
    from tui.widgets.notes import SelfCheckBox

    rows = []
    for where, widget in (
        ("answer or note box", LiteralTextArea),
        ("self-check answer", SelfCheckBox),
        ("Ledger", LedgerPane),
        ("Collectives picture", StepView),
    ):
        for binding in widget.BINDINGS:
            if isinstance(binding, Binding):
                rows.append((binding.key, f"{where}: {binding.description}"))
    return rows


class HelpScreen(ModalScreen[None]):
    """A modal list of every key (from the command table) plus the focused pane's HELP."""

    BINDINGS = [Binding("escape", "dismiss", "Close", id="close_help")]

    def __init__(self, focused_help: str) -> None:
        super().__init__()
        self.focused_help = focused_help

    def compose(self) -> ComposeResult:
        rows = "\n".join(f"| `{key}` | {text} |" for key, text in (*key_rows(), *pane_key_rows()))
        table = f"| key | action |\n|---|---|\n{rows}\n| `ctrl+p` | Command palette |\n"
        with VerticalScroll(id="help-body"):
            yield Static(strings.HELP_TITLE, classes="section-title")
            yield Static(strings.HELP_INTRO, markup=False)
            yield Markdown(table)
            if self.focused_help:
                yield Static(strings.HELP_FOCUSED, classes="section-title")
                yield Static(self.focused_help, markup=False)
            yield Static(strings.HELP_CLOSE, markup=False, classes="hint")
