"""F1: the keys, and help for the focused pane."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Markdown, Static

from engine.i18n import N_, gettext
from tui import strings
from tui.commands import key_rows, labelled
from tui.widgets.reader import BrokenText


def pane_key_rows() -> list[tuple[str, str]]:
    """(key, help) rows for the keys a pane adds while it has focus, read from the panes'
    own BINDINGS so the help cannot disagree with them."""
    from tui.widgets.collectives import StepView
    from tui.widgets.ledger import LedgerPane
    from tui.widgets.literal import LiteralTextArea
    from tui.widgets.notes import SelfCheckBox

    rows = []
    for where, widget in (
        (N_("answer or note box"), LiteralTextArea),
        (N_("self-check answer"), SelfCheckBox),
        (N_("Ledger"), LedgerPane),
        (N_("Collectives picture"), StepView),
    ):
        for binding in widget.BINDINGS:
            if isinstance(binding, Binding):
                rows.append((binding.key, labelled(gettext(where), gettext(binding.description))))
    return rows


class HelpScreen(ModalScreen[None]):
    """A modal list of every key (from the command table) plus the focused pane's HELP."""

    BINDINGS = [Binding("escape", "dismiss", N_("Close"), id="close_help")]

    def __init__(self, focused_help: str) -> None:
        super().__init__()
        self.focused_help = focused_help

    def compose(self) -> ComposeResult:
        rows = "\n".join(f"| `{key}` | {text} |" for key, text in (*key_rows(), *pane_key_rows()))
        header = "| {} | {} |".format(gettext("key"), gettext("action"))
        palette = "| `ctrl+p` | {} |".format(gettext("Command palette"))
        table = f"{header}\n|---|---|\n{rows}\n{palette}\n"
        with VerticalScroll(id="help-body"):
            yield Static(strings.HELP_TITLE, classes="section-title")
            yield BrokenText(strings.HELP_INTRO)
            yield Markdown(table)
            if self.focused_help:
                yield Static(strings.HELP_FOCUSED, classes="section-title")
                yield BrokenText(self.focused_help)
            yield Static(strings.HELP_CLOSE, markup=False, classes="hint")
