"""F1: the keys, and help for the focused pane."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Markdown, Static

from tui import strings
from tui.commands import key_rows


class HelpScreen(ModalScreen[None]):
    """A modal list of every key (from the command table) plus the focused pane's HELP."""

    BINDINGS = [Binding("escape", "dismiss", "Close", id="close_help")]

    def __init__(self, focused_help: str) -> None:
        super().__init__()
        self.focused_help = focused_help

    def compose(self) -> ComposeResult:
        rows = "\n".join(f"| `{key}` | {text} |" for key, text in key_rows())
        table = f"| key | action |\n|---|---|\n{rows}\n| `ctrl+p` | Command palette |\n"
        with VerticalScroll(id="help-body"):
            yield Static(strings.HELP_TITLE, classes="section-title")
            yield Static(strings.HELP_INTRO, markup=False)
            yield Markdown(table)
            if self.focused_help:
                yield Static(strings.HELP_FOCUSED, classes="section-title")
                yield Static(self.focused_help, markup=False)
            yield Static(strings.HELP_CLOSE, markup=False, classes="hint")
