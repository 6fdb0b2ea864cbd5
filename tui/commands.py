"""The app's commands as Textual declares them, and the command palette and help rows read from
them.

Each command is a ``Binding`` in the ``BINDINGS`` of the class whose keys it is: the App (keys that
work on every screen: help, save, quit), the main screen (the lesson's keys, which the quiz and
help screens pushed over it do not have) or a pane. Its ``id`` lets a keymap remap it, its
``description`` is the footer's label and its ``tooltip`` says what it does. The command palette
(:class:`CommandsProvider`) and the help screen (:func:`key_rows`) list those bindings
(:func:`declared_bindings`), so they can never disagree with the keys. Every text is an English
msgid, translated where it is shown (``engine.i18n``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from functools import partial

from rich.text import Text
from textual.app import App
from textual.binding import Binding
from textual.command import DiscoveryHit, Hit, Hits, Provider
from textual.content import Content
from textual.dom import DOMNode
from textual.fuzzy import Matcher

from engine.i18n import gettext

PaletteEntry = tuple[str, str, Callable[[], object]]
"""One palette entry: (title, help, what choosing it runs)."""


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
            title = f"{labelled(gettext(binding.description), help_text)} "
            title += f"({key_display(binding.key)})"
            entries.append((title, help_text, partial(self.app.run_action, binding.action, node)))
        return entries + self.extra_entries()

    async def discover(self) -> Hits:
        for title, help_text, callback in self._entries():
            yield DiscoveryHit(Content(title), callback, text=title, help=help_text)

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for title, help_text, callback in self._entries():
            score = matcher.match(title)
            if score > 0:
                yield Hit(score, _highlight(matcher, title), callback, text=title, help=help_text)


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
    label: ``label: tooltip`` where it has a tooltip."""
    rows = []
    for node in nodes:
        for binding in declared_bindings(node):
            if not binding.description:
                continue
            text = gettext(binding.description)
            if binding.tooltip:
                text = labelled(text, gettext(binding.tooltip))
            rows.append((key_display(binding.key), text))
    return rows


def labelled(label: str, text: str) -> str:
    """``label: text`` with the interface language's colon (full-width in Chinese)."""
    return gettext("{label}: {text}").format(label=label, text=text)


def literal(text: str) -> Text:
    """Lesson or learner text as a Rich Text, never parsed as markup."""
    return Text(text)
