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

from engine.i18n import N_, gettext


@dataclass(frozen=True)
class AppCommand:
    """One action of the app.

    ``scope`` says where the key is bound: ``"app"`` (every screen) or ``"main"`` (the lesson
    screen; an action the App carries out is written ``app.<name>``).
    """

    id: str
    key: str
    # The label and help are English msgids, translated where shown (engine.i18n).
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
        "quiz",
        "f12",
        N_("Quiz"),
        "app.quiz",
        N_("Quiz and spaced review: every lesson's due items"),
    ),
    AppCommand(
        "next_step",
        "ctrl+n",
        N_("Next"),
        "next_step",
        N_("Next step of the study plan: goes where it is done and puts the cursor there"),
    ),
    AppCommand("outline", "ctrl+o", N_("Outline"), "focus_outline", N_("Go to the lesson outline")),
    AppCommand(
        "side", "f6", N_("Side"), "toggle_side", N_("Show or hide the side pane (the calculators)")
    ),
    AppCommand(
        "ledger", "f2", N_("Ledger"), "side_tab('ledger')", N_("Open the memory-ledger calculator")
    ),
    AppCommand(
        "reading",
        "f7",
        N_("Read"),
        "toggle_reading",
        N_("Reading mode: the lesson takes the whole screen"),
    ),
    AppCommand(
        "zoom",
        "f5",
        N_("Zoom"),
        "toggle_zoom",
        N_("Widen the side pane to the whole screen, or back"),
    ),
    # Shown in F1's list and on the side pane's tabs; the footer keeps room at 80 columns for
    # the keys above and F1/ctrl+q.
    AppCommand(
        "bubble",
        "f3",
        N_("Bubble"),
        "side_tab('bubble')",
        N_("Open the pipeline-bubble calculator"),
        show=False,
    ),
    AppCommand(
        "diagrams",
        "f4",
        N_("Diagrams"),
        "side_tab('diagrams')",
        N_("Open the 4-rank diagrams; again: the collectives' data flow"),
        show=False,
    ),
    AppCommand(
        "tradeoffs",
        "f10",
        N_("Trade-offs"),
        "side_tab('tradeoffs')",
        N_("Open step time and scaling: slow links, counterexamples, exercises 4-5"),
        show=False,
    ),
    AppCommand(
        "lab",
        "ctrl+l",
        N_("Lab"),
        "side_tab('lab')",
        N_("Open the lab: collectives on real Gloo ranks, a real model's memory (lab extra)"),
        show=False,
    ),
    # Typed keys: in a text box they type (not priority); the palette has them too.
    AppCommand(
        "next_section",
        "right_square_bracket",
        N_("Section"),
        "next_section",
        N_("Read the next section (when the focus is not in a text box)"),
        show=False,
        priority=False,
    ),
    AppCommand(
        "previous_section",
        "left_square_bracket",
        N_("Back"),
        "next_section(-1)",
        N_("Read the previous section (when the focus is not in a text box)"),
        show=False,
        priority=False,
    ),
    AppCommand(
        "study_plan",
        "f11",
        N_("Plan"),
        "study_plan",
        N_("The study plan: every step with its state, the counts, your ratings; enter goes there"),
        show=False,
    ),
    AppCommand(
        "search",
        "ctrl+f",
        N_("Search"),
        "search",
        N_("Search the lesson and your answers and notes; enter goes to a hit (works everywhere)"),
        show=False,
    ),
    AppCommand(
        "search_slash",
        "slash",
        N_("Search"),
        "search",
        N_("Search too, when the focus is not in a text box (there / is typed)"),
        show=False,
        priority=False,
    ),
    AppCommand(
        "my_notes",
        "ctrl+e",
        N_("My notes"),
        "my_notes",
        N_(
            "All your answers, reflections and exercise notes together; enter edits one (works "
            "everywhere: in a text box, End goes to the end of the line)"
        ),
        show=False,
    ),
    AppCommand(
        "export",
        "f8",
        N_("Export"),
        "app.export_notes",
        N_("Export the filled-in notes: Markdown, JSON, HTML or an Anki deck"),
        show=False,
    ),
    AppCommand(
        "complete",
        "f9",
        N_("Done"),
        "app.toggle_complete",
        N_("Mark the lesson complete (asks first while steps are left), or back"),
        show=False,
    ),
    AppCommand(
        "help_question",
        "question_mark",
        N_("Help"),
        "app.show_help",
        N_("Help (when the focus is not in a text box, where ? is typed)"),
        show=False,
        priority=False,
    ),
    AppCommand(
        "help",
        "f1",
        N_("Help"),
        "show_help",
        N_("Show the keys and help for the focused pane"),
        scope="app",
    ),
    AppCommand(
        "save",
        "ctrl+s",
        N_("Save"),
        "save",
        N_("Save now (it also saves as you type)"),
        show=False,
        scope="app",
    ),
    AppCommand("quit", "ctrl+q", N_("Quit"), "quit", N_("Save and quit"), scope="app"),
    AppCommand(
        "suspend",
        "ctrl+z",
        N_("Suspend"),
        "suspend",
        N_("Save and suspend to the shell; fg brings it back (in a text box ctrl+z undoes)"),
        show=False,
        priority=False,
        scope="app",
    ),
    AppCommand(
        "interrupt",
        "ctrl+c",
        N_("Quit"),
        "interrupt",
        N_("Save and quit (in a text box with a selection, ctrl+c copies it)"),
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
                f"{labelled(gettext(command.label), gettext(command.help))} "
                f"({key_display(command.key)})",
                gettext(command.help),
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
        (key_display(command.key), labelled(gettext(command.label), gettext(command.help)))
        for command in APP_COMMANDS
    ]


def labelled(label: str, text: str) -> str:
    """``label: text`` with the interface language's colon (full-width in Chinese)."""
    return gettext("{label}: {text}").format(label=label, text=text)


def literal(text: str) -> Text:
    """Lesson or learner text as a Rich Text, never parsed as markup."""
    return Text(text)
