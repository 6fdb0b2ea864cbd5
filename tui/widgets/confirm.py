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


# The most rows the question and its list take before they scroll (where the screen has more).
BODY_ROWS = 20


class ConfirmScreen(ModalScreen[bool]):
    """A question with a yes (enter, y) and a no (escape, n); dismissed with True or False.

    The title and the keys line are always on screen: the question and its list between them
    take the rows left (at most :data:`BODY_ROWS`) and scroll, with the arrows, PageUp/PageDown
    and Home/End, where they need more (at 40x12 the keys line was cut off below them)."""

    DEFAULT_CSS = (
        MODAL_CSS.format(name="ConfirmScreen")
        + f"ConfirmScreen VerticalScroll {{ height: auto; max-height: {BODY_ROWS}; }}"
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
            with VerticalScroll():
                yield BrokenText(self.question, classes="confirm-question")
                for line in self.lines:
                    yield BrokenText(line, marker="- ", classes="confirm-line")
                if self.ask:
                    yield BrokenText(self.ask, classes="confirm-ask")
            yield BrokenText(strings.CONFIRM_YES, classes="hint")

    def on_mount(self) -> None:
        self._fit_body()
        # Its keys scroll it; enter, y, escape and n are the screen's.
        self.query_one(VerticalScroll).focus()

    def on_resize(self) -> None:
        self._fit_body()

    def _fit_body(self) -> None:
        """Cap the body's rows at what the screen leaves beside the title and the keys line,
        as broken at the dialog's width (a body of auto height in a box capped at the screen's
        height would push the keys line out of it, not scroll)."""
        box = self.query_one("ConfirmScreen > Vertical", Vertical)
        screen_width, screen_height = self.app.size
        declared = box.styles.width.cells if box.styles.width is not None else None
        width = min(declared or screen_width, screen_width) - box.styles.gutter.width
        around = box.styles.gutter.height + sum(
            len(text.lines_at(width)) + text.styles.margin.height
            for text in box.query_children(BrokenText)
        )
        self.query_one(VerticalScroll).styles.max_height = max(
            1, min(BODY_ROWS, screen_height - around)
        )
