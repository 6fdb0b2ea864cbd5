"""The app's commands, each defined once: its key, footer label, palette entry and help row.

``APP_COMMANDS`` drives the App's ``BINDINGS`` (each with an ``id`` so a keymap can remap it),
the command palette provider and the help screen, so they can never disagree.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import partial
from typing import TYPE_CHECKING

from rich.text import Text
from textual.binding import Binding
from textual.command import DiscoveryHit, Hit, Hits, Provider
from textual.content import Content

if TYPE_CHECKING:
    from tui.app import ShardbookApp


@dataclass(frozen=True)
class AppCommand:
    """One action of the app."""

    id: str
    key: str
    label: str
    action: str
    help: str
    show: bool = True
    # A key the focused widget may use first (ctrl+c copies a selection in a text box).
    priority: bool = True

    def binding(self) -> Binding:
        return Binding(
            self.key, self.action, self.label, show=self.show, id=self.id, priority=self.priority
        )


APP_COMMANDS: tuple[AppCommand, ...] = (
    AppCommand("help", "f1", "Help", "show_help", "Show the keys and help for the focused pane"),
    AppCommand("ledger", "f2", "Ledger", "side_tab('ledger')", "Open the memory-ledger calculator"),
    AppCommand(
        "bubble", "f3", "Bubble", "side_tab('bubble')", "Open the pipeline-bubble calculator"
    ),
    AppCommand(
        "diagrams",
        "f4",
        "Diagrams",
        "side_tab('diagrams')",
        "Open the 4-rank diagrams; again: the collectives' data flow",
    ),
    AppCommand(
        "zoom", "f5", "Zoom", "toggle_zoom", "Widen the side pane to the whole screen, or back"
    ),
    AppCommand(
        "outline", "ctrl+o", "Outline", "focus_outline", "Go to the lesson outline", show=False
    ),
    AppCommand(
        "next_section", "ctrl+n", "Next", "next_section", "Read the next section", show=False
    ),
    AppCommand(
        "tradeoffs",
        "f10",
        "Trade-offs",
        "side_tab('tradeoffs')",
        "Open step time and scaling: slow links, counterexamples, exercises 4-5",
    ),
    AppCommand(
        "lab",
        "ctrl+l",
        "Lab",
        "side_tab('lab')",
        "Open the lab: collectives on real Gloo ranks, a real model's memory (lab extra)",
        show=False,
    ),
    AppCommand(
        "export",
        "f8",
        "Export",
        "export_notes",
        "Export the filled-in notes: Markdown, JSON, HTML or an Anki deck",
    ),
    AppCommand("complete", "f9", "Done", "toggle_complete", "Mark the lesson complete, or back"),
    AppCommand(
        "save", "ctrl+s", "Save", "save", "Save now (it also saves as you type)", show=False
    ),
    AppCommand("quiz", "f12", "Quiz", "quiz", "Quiz and spaced review: every lesson's due items"),
    AppCommand("quit", "ctrl+q", "Quit", "quit", "Save and quit"),
    AppCommand(
        "suspend",
        "ctrl+z",
        "Suspend",
        "suspend",
        "Save and suspend to the shell; fg brings it back (in a text box ctrl+z undoes)",
        show=False,
        priority=False,
    ),
    AppCommand(
        "interrupt",
        "ctrl+c",
        "Quit",
        "interrupt",
        "Save and quit (in a text box with a selection, ctrl+c copies it)",
        show=False,
        priority=False,
    ),
)


class AppCommandsProvider(Provider):
    """Command-palette entries for every :data:`APP_COMMANDS` action and every section."""

    @property
    def _app(self) -> ShardbookApp:
        return self.app  # type: ignore[return-value]

    def _entries(self) -> list[tuple[str, str, object]]:
        entries: list[tuple[str, str, object]] = [
            (
                f"{command.label}: {command.help} ({command.key})",
                command.help,
                partial(self._app.run_action, command.action),
            )
            for command in APP_COMMANDS
        ]
        entries.extend(self._app.palette_entries())
        return entries

    async def discover(self) -> Hits:
        for title, help_text, callback in self._entries():
            yield DiscoveryHit(Content(title), callback, text=title, help=help_text)  # type: ignore[arg-type]

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for title, help_text, callback in self._entries():
            score = matcher.match(title)
            if score > 0:
                yield Hit(
                    score, _highlight(matcher, query, title), callback, text=title, help=help_text
                )  # type: ignore[arg-type]


def _highlight(matcher: object, query: str, title: str) -> Content:
    """Like ``Matcher.highlight`` but over ``Content(title)``: that one parses markup, and
    section titles are lesson text."""
    content = Content(title)
    _score, offsets = matcher.fuzzy_search.match(query, title)  # type: ignore[attr-defined]
    for offset in offsets:
        if not title[offset].isspace():
            content = content.stylize(matcher.match_style, offset, offset + 1)  # type: ignore[attr-defined]
    return content


def key_rows() -> list[tuple[str, str]]:
    """(key, help) rows for the help screen."""
    return [(command.key, f"{command.label}: {command.help}") for command in APP_COMMANDS]


def literal(text: str) -> Text:
    """Lesson or learner text as a Rich Text, never parsed as markup."""
    return Text(text)
