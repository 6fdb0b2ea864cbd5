"""The app's commands, each defined once: its key, footer label, palette entry and help row.

``APP_COMMANDS`` drives the ``BINDINGS`` of the App (keys that work on every screen: help, save,
quit) and of the main screen (the lesson UI's keys, which the quiz and help screens do not have),
each with an ``id`` so a keymap can remap it, as well as the command palette provider and the
help screen, so they can never disagree. The main screen's commands come first, in the order the
footer shows them: the study keys (quiz, next section, outline, side pane) before the rest.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from typing import ClassVar, Literal

from rich.text import Text
from textual.binding import Binding, BindingType
from textual.command import DiscoveryHit, Hit, Hits, Provider
from textual.content import Content
from textual.fuzzy import Matcher


@dataclass(frozen=True)
class AppCommand:
    """One action of the app.

    ``scope`` says where the key is bound: ``"app"`` (every screen) or ``"main"`` (the lesson
    screen; an action the App carries out is written ``app.<name>``).
    """

    id: str
    key: str
    label: str
    action: str
    help: str
    show: bool = True
    # A key the focused widget may use first (ctrl+c copies a selection in a text box). A key
    # that can be typed (?, /, ]) is never a priority binding: inside a text box it types.
    priority: bool = True
    scope: Literal["app", "main"] = "main"

    def binding(self) -> Binding:
        return Binding(
            self.key, self.action, self.label, show=self.show, id=self.id, priority=self.priority
        )


APP_COMMANDS: tuple[AppCommand, ...] = (
    AppCommand(
        "quiz", "f12", "Quiz", "app.quiz", "Quiz and spaced review: every lesson's due items"
    ),
    AppCommand(
        "next_step",
        "ctrl+n",
        "Next",
        "next_step",
        "Next step of the study plan: goes where it is done and puts the cursor there",
    ),
    AppCommand("outline", "ctrl+o", "Outline", "focus_outline", "Go to the lesson outline"),
    AppCommand("side", "f6", "Side", "toggle_side", "Show or hide the side pane (the calculators)"),
    AppCommand("ledger", "f2", "Ledger", "side_tab('ledger')", "Open the memory-ledger calculator"),
    AppCommand(
        "reading", "f7", "Read", "toggle_reading", "Reading mode: the lesson takes the whole screen"
    ),
    AppCommand(
        "zoom", "f5", "Zoom", "toggle_zoom", "Widen the side pane to the whole screen, or back"
    ),
    # Shown in F1's list and on the side pane's tabs; the footer keeps room at 80 columns for
    # the keys above and F1/ctrl+q.
    AppCommand(
        "bubble",
        "f3",
        "Bubble",
        "side_tab('bubble')",
        "Open the pipeline-bubble calculator",
        show=False,
    ),
    AppCommand(
        "diagrams",
        "f4",
        "Diagrams",
        "side_tab('diagrams')",
        "Open the 4-rank diagrams; again: the collectives' data flow",
        show=False,
    ),
    AppCommand(
        "tradeoffs",
        "f10",
        "Trade-offs",
        "side_tab('tradeoffs')",
        "Open step time and scaling: slow links, counterexamples, exercises 4-5",
        show=False,
    ),
    AppCommand(
        "lab",
        "ctrl+l",
        "Lab",
        "side_tab('lab')",
        "Open the lab: collectives on real Gloo ranks, a real model's memory (lab extra)",
        show=False,
    ),
    # Typed keys: in a text box they type (not priority); the palette has them too.
    AppCommand(
        "next_section",
        "right_square_bracket",
        "Section",
        "next_section",
        "Read the next section (when the focus is not in a text box)",
        show=False,
        priority=False,
    ),
    AppCommand(
        "previous_section",
        "left_square_bracket",
        "Back",
        "next_section(-1)",
        "Read the previous section (when the focus is not in a text box)",
        show=False,
        priority=False,
    ),
    AppCommand(
        "study_plan",
        "f11",
        "Plan",
        "study_plan",
        "The study plan: every step with its state, the counts, your ratings; enter goes there",
        show=False,
    ),
    AppCommand(
        "search",
        "ctrl+f",
        "Search",
        "search",
        "Search the lesson and your answers and notes; enter goes to a hit (works everywhere)",
        show=False,
    ),
    AppCommand(
        "search_slash",
        "slash",
        "Search",
        "search",
        "Search too, when the focus is not in a text box (there / is typed)",
        show=False,
        priority=False,
    ),
    AppCommand(
        "my_notes",
        "ctrl+e",
        "My notes",
        "my_notes",
        "All your answers, reflections and exercise notes together; enter edits one (works "
        "everywhere: in a text box, End goes to the end of the line)",
        show=False,
    ),
    AppCommand(
        "export",
        "f8",
        "Export",
        "app.export_notes",
        "Export the filled-in notes: Markdown, JSON, HTML or an Anki deck",
        show=False,
    ),
    AppCommand(
        "complete",
        "f9",
        "Done",
        "app.toggle_complete",
        "Mark the lesson complete (asks first while steps are left), or back",
        show=False,
    ),
    AppCommand(
        "help_question",
        "question_mark",
        "Help",
        "app.show_help",
        "Help (when the focus is not in a text box, where ? is typed)",
        show=False,
        priority=False,
    ),
    AppCommand(
        "help",
        "f1",
        "Help",
        "show_help",
        "Show the keys and help for the focused pane",
        scope="app",
    ),
    AppCommand(
        "save",
        "ctrl+s",
        "Save",
        "save",
        "Save now (it also saves as you type)",
        show=False,
        scope="app",
    ),
    AppCommand("quit", "ctrl+q", "Quit", "quit", "Save and quit", scope="app"),
    AppCommand(
        "suspend",
        "ctrl+z",
        "Suspend",
        "suspend",
        "Save and suspend to the shell; fg brings it back (in a text box ctrl+z undoes)",
        show=False,
        priority=False,
        scope="app",
    ),
    AppCommand(
        "interrupt",
        "ctrl+c",
        "Quit",
        "interrupt",
        "Save and quit (in a text box with a selection, ctrl+c copies it)",
        show=False,
        priority=False,
        scope="app",
    ),
)


def bindings(scope: Literal["app", "main"]) -> list[BindingType]:
    """The ``BINDINGS`` of the App (``"app"``) or of the main screen (``"main"``)."""
    return [command.binding() for command in APP_COMMANDS if command.scope == scope]


PaletteEntry = tuple[str, str, Callable[[], object]]
"""One palette entry: (title, help, what choosing it runs)."""


class CommandsProvider(Provider):
    """Command-palette entries for the :data:`APP_COMMANDS` of one scope. The App lists this one
    (``"app"``: every screen's keys) in its ``COMMANDS``; the main screen lists a subclass for
    ``"main"`` in its own, so the lesson's commands are offered only over it (Textual gathers
    the App's providers and those of the screen the palette opened over)."""

    scope: ClassVar[Literal["app", "main"]] = "app"

    def extra_entries(self) -> list[PaletteEntry]:
        """Entries beyond the commands (the main screen's sections and study steps)."""
        return []

    def _entries(self) -> list[PaletteEntry]:
        target = self.screen if self.scope == "main" else self.app
        entries: list[PaletteEntry] = [
            (
                f"{command.label}: {command.help} ({key_display(command.key)})",
                command.help,
                partial(self.app.run_action, command.action, target),
            )
            for command in APP_COMMANDS
            if command.id not in ("help_question", "search_slash") and command.scope == self.scope
        ]
        return entries + self.extra_entries()

    async def discover(self) -> Hits:
        for title, help_text, callback in self._entries():
            yield DiscoveryHit(Content(title), callback, text=title, help=help_text)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for title, help_text, callback in self._entries():
            score = matcher.match(title)
            if score > 0:
                yield Hit(
                    score, _highlight(matcher, query, title), callback, text=title, help=help_text
                )


def _highlight(matcher: Matcher, query: str, title: str) -> Content:
    """Like ``Matcher.highlight`` but over ``Content(title)``: that one parses markup, and
    section titles are lesson text."""
    content = Content(title)
    _score, offsets = matcher.fuzzy_search.match(query, title)
    for offset in offsets:
        if not title[offset].isspace():
            content = content.stylize(matcher.match_style, offset, offset + 1)
    return content


_KEY_CHARACTERS = {
    "question_mark": "?",
    "slash": "/",
    "right_square_bracket": "]",
    "left_square_bracket": "[",
}


def key_display(key: str) -> str:
    """A binding's key as the learner types it (``question_mark`` is ``?``, ``slash`` ``/``)."""
    return _KEY_CHARACTERS.get(key, key)


def key_rows() -> list[tuple[str, str]]:
    """(key, help) rows for the help screen."""
    return [
        (key_display(command.key), f"{command.label}: {command.help}") for command in APP_COMMANDS
    ]


def literal(text: str) -> Text:
    """Lesson or learner text as a Rich Text, never parsed as markup."""
    return Text(text)
