"""A yes/no confirmation (F9 on an unfinished plan, looking at an answer before writing the note),
and the frame every modal of guided study shares.

A modal screen kept beside the widgets: the panes that ask it (diagrams, trade-offs) live here,
and screens import widgets, never the reverse (``.importlinter``). The texts are shown literally
(:class:`BrokenText`), never as markup.
"""

from __future__ import annotations

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen

from engine.i18n import N_
from tui import strings
from tui.widgets.reader import BrokenText

MODAL_CSS = """
    {name} {{ align: center middle; }}
    {name} > Vertical {{
        width: 96; max-width: 100%; height: auto; max-height: 100%;
        background: $surface; border: thick $primary; padding: 0 1;
    }}
    {name} .hint {{ margin: 0; }}
"""


class ConfirmScreen(ModalScreen[bool]):
    """A question with a yes (enter, y) and a no (escape, n); dismissed with True or False."""

    DEFAULT_CSS = (
        MODAL_CSS.format(name="ConfirmScreen")
        + "ConfirmScreen VerticalScroll { height: auto; max-height: 20; }"
    )
    BINDINGS = [
        Binding("enter,y", "dismiss(True)", N_("Yes"), id="confirm_yes"),
        Binding("escape,n", "dismiss(False)", N_("No"), id="confirm_no"),
    ]

    def __init__(self, question: str, lines: tuple[str, ...] = (), ask: str = "") -> None:
        super().__init__()
        self.question = question
        self.lines = lines
        self.ask = ask

    def compose(self) -> ComposeResult:
        with Vertical():
            yield BrokenText(strings.CONFIRM_TITLE, classes="section-title")
            with VerticalScroll(can_focus=False):
                yield BrokenText(self.question, classes="confirm-question")
                for line in self.lines:
                    yield BrokenText(line, marker="- ", classes="confirm-line")
                if self.ask:
                    yield BrokenText(self.ask, classes="confirm-ask")
            yield BrokenText(strings.CONFIRM_YES, classes="hint")
