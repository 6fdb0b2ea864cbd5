"""The app's commands as Textual declares them, and the command palette and help rows read from
them.

Each command is a ``Binding`` in the ``BINDINGS`` of the class whose keys it is: the App's
(:data:`APP_BINDINGS`: keys that work on every screen, help, save, quit), the main screen's
(:data:`LESSON_BINDINGS`: the lesson's keys, which the quiz and help screens pushed over it do not
have), a pane's or a screen's own. Its ``id`` lets a keymap remap it, its ``description`` is the
footer's label and its ``tooltip`` says what it does. The command palette
(:class:`CommandsProvider`) and the help screen (:func:`key_rows`) list the bindings the classes
declare (:func:`declared_bindings`), so they can never disagree with the keys. Every text is an
English msgid, translated where it is shown (``engine.i18n``).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable
from functools import partial
from typing import Self, cast

from rich.align import Align
from rich.text import Text
from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.command import (
    Command,
    CommandInput,
    CommandList,
    CommandPalette,
    DiscoveryHit,
    Hit,
    Hits,
    Provider,
)
from textual.content import Content
from textual.css.styles import RulesMap
from textual.dom import DOMNode
from textual.fuzzy import Matcher
from textual.strip import Strip
from textual.style import Style
from textual.visual import RenderOptions, Visual, VisualType
from textual.widgets.option_list import Option

from engine.i18n import N_, current_language, gettext
from engine.linebreak import line_spans
from tui import strings
from tui.paste import OneLinePaste

# The keys that work on every screen (the App's BINDINGS): help, save, quit. ctrl+z and ctrl+c
# are not priority bindings: a text box uses them first (undo; copy a selection).
APP_BINDINGS: list[BindingType] = [
    Binding(
        "f1",
        "show_help",
        N_("Help"),
        priority=True,
        tooltip=N_("Show the keys and help for the focused pane"),
        id="help",
    ),
    Binding(
        "ctrl+s",
        "save",
        N_("Save"),
        show=False,
        priority=True,
        tooltip=N_("Save now (it also saves as you type)"),
        id="save",
    ),
    Binding("ctrl+q", "quit", N_("Quit"), priority=True, tooltip=N_("Save and quit"), id="quit"),
    Binding(
        "ctrl+z",
        "suspend",
        N_("Suspend"),
        show=False,
        tooltip=N_(
            "Save and suspend to the shell; fg brings it back (in a text box ctrl+z undoes)"
        ),
        id="suspend",
    ),
    # The action ctrl+q runs: the palette offers the command once, under ctrl+q.
    Binding(
        "ctrl+c",
        "quit",
        N_("Quit"),
        show=False,
        tooltip=N_("Save and quit (in a text box with a selection, ctrl+c copies it)"),
        id="interrupt",
    ),
]

# The lesson's keys (the main screen's BINDINGS), in the footer's order: the study keys (quiz,
# next step, outline, side pane) first. A key that can be typed (?, /, ]) is never a priority
# binding: inside a text box it types.
LESSON_BINDINGS: list[BindingType] = [
    Binding(
        "f12",
        "app.quiz",
        N_("Quiz"),
        priority=True,
        tooltip=N_("Quiz and spaced review: every lesson's due items"),
        id="quiz",
    ),
    Binding(
        "ctrl+n",
        "next_step",
        N_("Next"),
        priority=True,
        tooltip=N_("Next step of the study plan: goes where it is done and puts the cursor there"),
        id="next_step",
    ),
    Binding(
        "ctrl+o",
        "focus_outline",
        N_("Outline"),
        priority=True,
        tooltip=N_("Go to the lesson outline"),
        id="outline",
    ),
    Binding(
        "f6",
        "toggle_side",
        N_("Side"),
        priority=True,
        tooltip=N_("Show or hide the side pane (the calculators)"),
        id="side",
    ),
    Binding(
        "f2",
        "side_tab('ledger')",
        N_("Ledger"),
        priority=True,
        tooltip=N_("Open the memory-ledger calculator"),
        id="ledger",
    ),
    Binding(
        "f7",
        "toggle_reading",
        N_("Read"),
        priority=True,
        tooltip=N_("Reading mode: the lesson takes the whole screen"),
        id="reading",
    ),
    Binding(
        "f5",
        "toggle_zoom",
        N_("Zoom"),
        priority=True,
        tooltip=N_("Widen the side pane to the whole screen, or back"),
        id="zoom",
    ),
    # Shown in F1's list and on the side pane's tabs; the footer keeps room at 80 columns
    # for the keys above and F1/ctrl+q.
    Binding(
        "f3",
        "side_tab('bubble')",
        N_("Bubble"),
        show=False,
        priority=True,
        tooltip=N_("Open the pipeline-bubble calculator"),
        id="bubble",
    ),
    Binding(
        "f4",
        "side_tab('diagrams')",
        N_("Diagrams"),
        show=False,
        priority=True,
        tooltip=N_("Open the 4-rank diagrams; again: the collectives' data flow"),
        id="diagrams",
    ),
    Binding(
        "f10",
        "side_tab('tradeoffs')",
        N_("Trade-offs"),
        show=False,
        priority=True,
        tooltip=N_(
            "Open the trade-offs: step time and scaling, slow links, counterexamples, exercises 4-5"
        ),
        id="tradeoffs",
    ),
    Binding(
        "ctrl+l",
        "side_tab('lab')",
        N_("Lab"),
        show=False,
        priority=True,
        tooltip=N_(
            "Open the lab: collectives on real Gloo ranks, a real model's memory (lab extra)"
        ),
        id="lab",
    ),
    # Typed keys: in a text box they type (not priority); the palette has them too.
    Binding(
        "right_square_bracket",
        "next_section",
        N_("Section"),
        show=False,
        tooltip=N_("Read the next section (when the focus is not in a text box)"),
        id="next_section",
    ),
    Binding(
        "left_square_bracket",
        "next_section(-1)",
        N_("Back"),
        show=False,
        tooltip=N_("Read the previous section (when the focus is not in a text box)"),
        id="previous_section",
    ),
    Binding(
        "f11",
        "study_plan",
        N_("Plan"),
        show=False,
        priority=True,
        tooltip=N_(
            "The study plan: every step with its state, the counts, your ratings; enter goes there"
        ),
        id="study_plan",
    ),
    Binding(
        "ctrl+f",
        "search",
        N_("Search"),
        show=False,
        priority=True,
        tooltip=N_(
            "Search the lesson and your answers and notes; enter goes to a hit (works everywhere)"
        ),
        id="search",
    ),
    Binding(
        "slash",
        "search",
        N_("Search"),
        show=False,
        tooltip=N_("Search too, when the focus is not in a text box (there / is typed)"),
        id="search_slash",
    ),
    Binding(
        "ctrl+e",
        "my_notes",
        N_("My notes"),
        show=False,
        priority=True,
        tooltip=N_(
            "All your answers, reflections and exercise notes together; enter edits one "
            "(works everywhere: in a text box, End goes to the end of the line)"
        ),
        id="my_notes",
    ),
    Binding(
        "f8",
        "app.export_notes",
        N_("Export"),
        show=False,
        priority=True,
        tooltip=N_("Export the filled-in notes: Markdown, JSON, HTML or an Anki deck"),
        id="export",
    ),
    Binding(
        "f9",
        "app.toggle_complete",
        N_("Done"),
        show=False,
        priority=True,
        tooltip=N_("Mark the lesson complete (asks first while steps are left), or back"),
        id="complete",
    ),
    Binding(
        "question_mark",
        "app.show_help",
        N_("Help"),
        show=False,
        tooltip=N_("Help (when the focus is not in a text box, where ? is typed)"),
        id="help_question",
    ),
]

PaletteEntry = tuple[str, str, Callable[[], object]] | tuple[str, str, Callable[[], object], str]
"""One palette entry: (title, help, what choosing it runs), and optionally its English words
(its msgids): in another interface language a search in English finds it too."""


def declared_bindings(node: DOMNode | type[DOMNode]) -> list[Binding]:
    """The bindings this project's classes declare for ``node`` (an instance or a class): the
    ``BINDINGS`` of its class and of its bases, base classes first, each in its declared order.
    Textual's own classes are left out (their keys, such as a text box's, are Textual's)."""
    cls = node if isinstance(node, type) else type(node)
    found: list[Binding] = []
    for klass in reversed(cls.__mro__):
        if klass.__module__.partition(".")[0] == "tui" and "BINDINGS" in vars(klass):
            found.extend(Binding.make_bindings(vars(klass)["BINDINGS"]))
    return found


def _runs(node: DOMNode, action: str) -> str:
    """``action`` of a binding declared on ``node``, with the node it runs on (``app.save``)."""
    if action.partition(".")[0] in ("app", "screen"):
        return action
    return f"{'app' if isinstance(node, App) else 'screen'}.{action}"


class CommandsProvider(Provider):
    """Command-palette entries for the commands declared on one node: the App's (this provider,
    in the App's ``COMMANDS``: every screen's), or the screen's (a subclass in the main screen's
    ``COMMANDS``, whose :meth:`commands_node` is the screen: Textual gathers the App's providers
    and those of the screen the palette opened over). A command whose action another key of the
    palette already runs (``?`` and F1 for help, ``/`` and ctrl+f for search) is offered once."""

    def commands_node(self) -> DOMNode:
        """The node whose declared commands are offered."""
        return self.app

    def extra_entries(self) -> list[PaletteEntry]:
        """Entries beyond the commands (the main screen's sections and study steps)."""
        return []

    def _entries(self) -> list[PaletteEntry]:
        node = self.commands_node()
        offered: set[str] = set()
        if node is not self.app:
            offered = {_runs(self.app, b.action) for b in declared_bindings(self.app) if b.tooltip}
        entries: list[PaletteEntry] = []
        for binding in declared_bindings(node):
            runs = _runs(node, binding.action)
            if not binding.tooltip or runs in offered:
                continue
            offered.add(runs)
            help_text = gettext(binding.tooltip)
            title = strings.PALETTE_COMMAND.format(
                command=gettext(binding.description), key=key_display(binding.key)
            )
            run = partial(self.app.run_action, binding.action, node)
            entries.append((title, help_text, run, f"{binding.description} {binding.tooltip}"))
        return entries + self.extra_entries()

    async def discover(self) -> Hits:
        for title, help_text, callback, *_english in self._entries():
            yield DiscoveryHit(Content(title), callback, text=title, help=_literal(help_text))

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for title, help_text, callback, *english in self._entries():
            # The help line below the title is searched too ("widen" finds Zoom), a match in
            # the title first; and the English words (the msgids) where the interface is in
            # another language, so that "export" finds 导出.
            score = max(matcher.match(title), matcher.match(help_text) / 2)
            if english and current_language() != "en":
                score = max(score, matcher.match(english[0]) / 2)
            if score > 0:
                yield Hit(
                    score,
                    _highlight(matcher, title),
                    callback,
                    text=title,
                    help=_literal(help_text),
                )


NO_MATCHES_ID = "--no-matches"
"""The id of the line Textual's palette adds when a query finds nothing (Textual 8.2.8,
``CommandPalette._NO_MATCHES``: pinned exactly, pyproject.toml)."""
NO_MATCHES = N_("No matches found")


class BrokenPrompt(Visual):
    """A palette entry's prompt (``Content``: its title, a line break, its help line, styled by
    the palette) broken by the lesson's rules (:func:`engine.linebreak.line_spans`) at the
    width it is drawn in, again when that changes: Textual wraps a prompt at spaces only, which
    left a Chinese help line's first line half empty at 40 columns (保存并挂起到 shell；fg, then
    恢复 on the next). The lines are the prompt's own ``Content``, so its styles (the help
    line's colour, the letters a query matched) are drawn by Textual as before."""

    def __init__(self, content: Content) -> None:
        self.content = content
        self._broken: tuple[int, Content] | None = None

    def __str__(self) -> str:
        return self.content.plain

    def broken(self, width: int) -> Content:
        """The prompt with a line break at each of the lesson's break positions for ``width``."""
        if self._broken is None or self._broken[0] != width:
            spans = line_spans(self.content.plain, max(1, width))
            lines = Content("\n").join(self.content[start:end] for start, end in spans)
            self._broken = (width, lines)
        return self._broken[1]

    def render_strips(
        self, width: int, height: int | None, style: Style, options: RenderOptions
    ) -> list[Strip]:
        return self.broken(width).render_strips(width, height, style, options)

    def get_optimal_width(self, rules: RulesMap, container_width: int) -> int:
        return self.content.get_optimal_width(rules, container_width)

    def get_height(self, rules: RulesMap, width: int) -> int:
        return self.broken(width).get_height(rules, width)


class _CommandList(CommandList):
    """The palette's list: its "No matches found" line in the interface language, and each
    entry broken into lines by the lesson's rules (:class:`BrokenPrompt`)."""

    def add_option(self, option: Option | VisualType | None = None) -> Self:
        if isinstance(option, Option) and option.id == NO_MATCHES_ID:
            shown = Align.center(Text(gettext(NO_MATCHES), style="not bold"))
            option = Option(shown, disabled=True, id=NO_MATCHES_ID)
        return super().add_option(option)

    def add_options(self, new_options: Iterable[Option | VisualType | None]) -> Self:
        return super().add_options(
            Command(BrokenPrompt(option.prompt), option.hit, option.id, option.disabled)
            if isinstance(option, Command) and isinstance(option.prompt, Content)
            else option
            for option in new_options
        )


class _CommandInput(CommandInput, OneLinePaste):
    """The palette's query: a paste of several lines keeps them all (:class:`OneLinePaste`).
    CommandInput comes first: Textual takes a widget's CSS type names along its first bases
    (``DOMNode._css_bases``), and the palette's styles and queries name CommandInput."""


class LanguagePalette(CommandPalette):
    """Textual's command palette in the interface language: Textual writes the line it shows
    when nothing matches in English, inside the palette's code, so the palette is composed with
    a list that puts that line in the interface language as it is added. Its query field keeps
    every line of a paste, as the app's own fields do."""

    def compose(self) -> ComposeResult:
        for widget in super().compose():
            if type(widget) is CommandList:
                yield _CommandList()
            elif type(widget) is CommandInput:
                yield _CommandInput(
                    placeholder=widget.placeholder, select_on_focus=widget.select_on_focus
                )
            else:
                yield widget


def _literal(help_text: str) -> str:
    """``help_text`` to be shown as it is: Textual reads a hit's help line as markup
    (``Content.from_markup``), which returns a ``Content`` unchanged; the help of an entry may
    be a lesson's path or a lesson file's error, where ``[`` is text. (A ``Content`` where the
    hit's field is typed ``str``: Textual is pinned exactly, pyproject.toml.)"""
    return cast("str", Content(help_text))


def _highlight(matcher: Matcher, title: str) -> Content:
    """Like ``Matcher.highlight`` but over ``Content(title)``: that one parses markup, and
    section titles are lesson text."""
    content = Content(title)
    _score, offsets = matcher.fuzzy_search.match(matcher.query, title)
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


def key_rows(nodes: Iterable[DOMNode | type[DOMNode]]) -> list[tuple[str, str]]:
    """(key, what it does) for each binding declared on ``nodes`` (in their order) that has a
    label: ``label: tooltip`` where it has a tooltip, the tooltip alone where it names the label
    already (``Quiz and spaced review: ...`` for Quiz, ``学习计划：...`` for 计划)."""
    rows = []
    for node in nodes:
        for binding in declared_bindings(node):
            if not binding.description:
                continue
            text = gettext(binding.description)
            if binding.tooltip:
                tooltip = gettext(binding.tooltip)
                text = tooltip if names(tooltip, text) else labelled(text, _continued(tooltip))
            rows.append((key_display(binding.key), text))
    return rows


def _continued(sentence: str) -> str:
    """``sentence`` going on after a label's colon: its first word in lower case (``Zoom: widen
    the side pane``, not ``Zoom: Widen``), unless it is a name or an acronym (``NVLink``,
    ``F1``)."""
    if len(sentence) > 1 and sentence[0].isupper() and sentence[1].islower():
        return sentence[0].lower() + sentence[1:]
    return sentence


def names(text: str, label: str) -> bool:
    """Whether a word of ``text`` starts with ``label`` (case aside): ``Reading mode: ...``
    names Read; ``Study plan: ...`` names Plan, ``explanation`` does not. Chinese has no spaces
    between words, so there any occurrence counts (``学习计划`` names 计划)."""
    pattern = r"(?<![A-Za-z])" + re.escape(label.casefold())
    return re.search(pattern, text.casefold()) is not None


def labelled(label: str, text: str) -> str:
    """``label: text`` with the interface language's colon (full-width in Chinese)."""
    return gettext("{label}: {text}").format(label=label, text=text)


def literal(text: str) -> Text:
    """Lesson or learner text as a Rich Text, never parsed as markup."""
    return Text(text)
