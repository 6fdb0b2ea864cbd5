"""F8: which format to export the notes in (Markdown, JSON, HTML, an Anki deck).

A small modal: arrows and enter, or the format's letter, choose; F8 again takes the highlighted
one (so F8 F8 exports Markdown, as F8 alone once did); escape closes it without exporting. It
returns the format (a key of :data:`engine.export.FORMATS`), or None.
"""

from __future__ import annotations

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import OptionList
from textual.widgets.option_list import Option

from engine.i18n import gettext
from tui import strings
from tui.widgets.reader import BrokenLines, BrokenText

# (format, key, label): the order of the list; the key chooses it directly.
EXPORT_CHOICES: tuple[tuple[str, str, str], ...] = (
    ("md", "m", strings.msgids.EXPORT_MD),
    ("json", "j", strings.msgids.EXPORT_JSON),
    ("html", "h", strings.msgids.EXPORT_HTML),
    ("anki", "a", strings.msgids.EXPORT_ANKI),
)


class ExportScreen(ModalScreen[str | None]):
    """Ask which format to export in; dismissed with the format, or None on escape."""

    DEFAULT_CSS = """
    ExportScreen { align: center middle; }
    #export-body {
        width: 64; max-width: 100%; height: auto;
        background: $surface; border: thick $primary; padding: 0 1;
    }
    #export-formats { height: auto; margin: 1 0; }
    ExportScreen .export-title { text-style: bold; color: $accent; margin: 0 0 1 0; }
    ExportScreen .export-hint { color: $text-muted; margin: 0 0 1 0; }
    ExportScreen.-short #export-body { height: 100%; }
    ExportScreen.-short #export-formats { height: 1fr; margin: 0; border: none; }
    ExportScreen.-short .export-title, ExportScreen.-short .export-hint { margin: 0; }
    """
    # Under 18 rows (40x12) the dialog was taller than the screen, its title and where the file
    # goes cut off: there the margins and the list's border give their rows to the formats,
    # which scroll (the title and the hint have classes of their own: the app's `.section-title`
    # and `.hint` margins would win over this default CSS).
    VERTICAL_BREAKPOINTS = [(0, "-short"), (18, "-tall")]
    BINDINGS = [
        Binding("escape", "dismiss(None)", strings.msgids.EXPORT_CANCEL, id="export_cancel"),
        # F8 again takes the highlighted format (F8 F8 exports Markdown, as before).
        Binding(
            "f8", "choose_highlighted", strings.msgids.EXPORT_CHOOSE, show=False, id="export_f8"
        ),
        *(
            Binding(key, f"choose('{fmt}')", label, show=False, id=f"export_{fmt}")
            for fmt, key, label in EXPORT_CHOICES
        ),
    ]

    def __init__(self, folder: str) -> None:
        super().__init__()
        self.folder = folder

    def compose(self) -> ComposeResult:
        with Vertical(id="export-body"):
            yield BrokenText(strings.EXPORT_TITLE, classes="export-title")
            yield OptionList(
                *(
                    Option(BrokenLines(f"{key}  {gettext(label)}", indent="   "), id=fmt)
                    for fmt, key, label in EXPORT_CHOICES
                ),
                id="export-formats",
            )
            yield BrokenText(strings.EXPORT_WHERE.format(folder=self.folder), classes="export-hint")

    def on_mount(self) -> None:
        options = self.query_one(OptionList)
        options.highlighted = 0
        options.focus()

    def action_choose(self, fmt: str) -> None:
        self.dismiss(fmt)

    def action_choose_highlighted(self) -> None:
        """Export in the highlighted format (F8 pressed again)."""
        options = self.query_one(OptionList)
        index = options.highlighted or 0
        self.dismiss(options.get_option_at_index(index).id)

    @on(OptionList.OptionSelected)
    def _selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self.dismiss(event.option.id)
