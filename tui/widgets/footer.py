"""The footer: Textual's Footer, recomposed only when its keys change, showing the keys that fit.

Textual's Footer builds all its key widgets again after every change of focus or bindings
(``Screen.bindings_updated_signal``), one recompose per change. Opening a lesson changes focus
and bindings several times before the first frame settles, and each recompose styles and lays
out every key again (about 20 ms with the main screen's keys on a 2-core machine: most of the
first frame's time after the first paint). Here changes that arrive together make one
recompose, and none when the keys, labels and states shown are the same as before.

It is also the footer in the interface language: a ``Binding``'s description is fixed when its
class is defined, before the language is chosen, so BINDINGS hold the English msgids
(``strings.msgids``) and each key's description, tooltip and group label is translated as the
footer builds them (:mod:`engine.i18n`).

Textual's Footer also lays its keys out in a row and lets the last ones run past the screen's
edge, cut (``… f6 Si``, ``^q Q`` at 80 columns). This one measures each key from its text and
styles as soon as it is mounted, before its first layout, and hides those that do not fit:
first the keys that answer what the screen asks now (the quiz's ``t f True/False``,
``^r Submit``: ``first_actions``), then help and quit (always needed), then the command
palette's key, then the others: the focused widget's own keys (and its containers') before the
screen's and the app's, each in Textual's order. A group of keys is measured with its label and
shown or hidden whole. F1 lists every key.
"""

from __future__ import annotations

from textual.app import ComposeResult
from textual.geometry import Size
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import Footer
from textual.widgets._footer import FooterKey, FooterLabel, KeyGroup

from engine.i18n import gettext

# Kept first, where they fit: the actions of F1 (help) and ctrl+q (quit).
KEPT_ACTIONS = frozenset({"show_help", "quit"})


class KeysFooter(Footer):
    """A :class:`textual.widgets.Footer` that skips recomposes that would change nothing and
    shows the keys that fit whole, in the interface language (see module docstring)."""

    def __init__(
        self,
        *,
        compact: bool = False,
        show_command_palette: bool = True,
        first_actions: frozenset[str] = frozenset(),
    ) -> None:
        """``first_actions``: the actions (their names, without arguments: ``judge`` for
        ``judge(True)``) whose keys are kept before every other key where room is short."""
        super().__init__(compact=compact, show_command_palette=show_command_palette)
        self.first_actions = first_actions
        self._recompose_queued = False
        self._shown: tuple[object, ...] | None = None
        # Each key's or group's cells (its width and the margin after it), from its text and
        # styles.
        self._cells: dict[Widget, int] = {}
        # The keys are composed with the footer, from the screen's bindings then, so the first
        # frame lays them out with everything else (Textual's Footer composes none until the
        # first change of bindings, and the keys then cost a layout of their own). When the
        # focus is given, the keys are built again only if what they show changed.
        self.set_reactive(Footer._bindings_ready, True)

    # ----------------------------------------------------------------- fewer recomposes
    def _bindings_shown(self) -> tuple[object, ...]:
        """What the footer would show now: each shown binding with its state, in order."""
        palette = self.app.COMMAND_PALETTE_BINDING
        shown = [
            (key, binding.action, binding.description, binding.group, enabled, tooltip)
            for key, (_node, binding, enabled, tooltip) in self.screen.active_bindings.items()
            if binding.show or key == palette
        ]
        return (*shown, self.show_command_palette, self.compact)

    def bindings_changed(self, screen: Screen[object]) -> None:
        # Textual's handler, less one recompose per change (see module docstring).
        self._bindings_ready = True
        if not screen.app.app_focus:
            return
        if self.is_attached and screen is self.screen and not self._recompose_queued:
            self._recompose_queued = True
            self.call_after_refresh(self._recompose_if_changed)

    async def _recompose_if_changed(self) -> None:
        self._recompose_queued = False
        if not self.is_attached:
            return
        keys = self._bindings_shown()
        if keys == self._shown:
            return
        self._shown = keys
        await self.recompose()

    def compose(self) -> ComposeResult:
        self._shown = self._bindings_shown()
        for widget in super().compose():
            if isinstance(widget, FooterKey):
                if not widget.has_class("-command-palette"):
                    # Born in the footer's style: a key starts compact and its binding to the
                    # footer's ``compact`` switches it when mounted, each switch restyling the
                    # key (twice per key and recompose); with the value set, neither happens.
                    # The palette's key is not bound, and stays compact.
                    widget.set_reactive(FooterKey.compact, self.compact)
                    widget.set_class(self.compact, "-compact", update=False)
                widget.description = gettext(widget.description)
                # The tooltip's attribute, not its setter: the setter updates the screen's
                # tooltip at once, which while composing is the screen being left, and moves
                # its focus (Textual is pinned exactly: pyproject.toml).
                if isinstance(widget._tooltip, str):
                    widget._tooltip = gettext(widget._tooltip)
            elif isinstance(widget, FooterLabel):
                widget.update(gettext(str(widget.content)))
            yield widget

    # ----------------------------------------------------------------- the keys that fit
    async def recompose(self) -> None:
        await super().recompose()
        # The keys are mounted and styled: fitted now, before their first layout, so the frame
        # after a recompose shows only the keys that fit (no frame with every key, cut).
        self._cells = {}
        self._fit()

    def on_mount(self) -> None:
        # Textual's Footer.on_mount (which subscribes to the bindings) runs too: Textual calls
        # each class's handler.
        self._fit()  # the keys composed with the footer, before the first layout

    def on_resize(self) -> None:
        self._fit()

    def _footer_keys(self) -> list[FooterKey]:
        return [key for key in self.query(FooterKey) if not key.has_class("-command-palette")]

    def _width(self) -> int:
        """The footer's width: the screen's before its first layout (it spans the screen)."""
        return self.size.width or (self.screen.size.width if self.display else 0)

    def _footer_items(self) -> list[tuple[Widget, ...]]:
        """What the row holds, in order, each shown or hidden as one: a key, or a group of keys
        with the label Textual puts after it (the quiz's ``t f`` then ``True/False``)."""
        items: list[tuple[Widget, ...]] = []
        for child in self.children:
            if isinstance(child, FooterLabel) and items and isinstance(items[-1][0], KeyGroup):
                items[-1] = (*items[-1], child)
            elif isinstance(child, KeyGroup | FooterLabel) or (
                isinstance(child, FooterKey) and not child.has_class("-command-palette")
            ):
                items.append((child,))
        return items

    def _cells_of(self, widget: Widget) -> int:
        """The cells ``widget`` takes in the row, its margin included, from its text and styles
        (what the layout will give it; a hidden one is measured as well as a shown one); a
        group: its keys, and its own margin."""
        if widget not in self._cells:
            if isinstance(widget, KeyGroup):
                content = sum(self._cells_of(child) for child in widget.children)
            else:
                content = widget.get_content_width(Size(self._width(), 1), self.app.size)
            self._cells[widget] = content + widget.styles.gutter.width + widget.styles.margin.width
        return self._cells[widget]

    def _fit(self) -> None:
        items = self._footer_items()
        room = self._width()
        if not items or not room:
            return  # hidden (a screen too small): fitted on the resize that shows it
        first = [item for item in items if _actions(item) & self.first_actions]
        kept = [item for item in items if item not in first and _actions(item) & KEPT_ACTIONS]
        palette = [(key,) for key in self.query(FooterKey).filter(".-command-palette")]
        # The focused widget's keys (and its containers') before the screen's and the app's:
        # in an answer box at 40 columns, its ^r Reveal came after F6 and F7 and was cut.
        screen_keys = {
            key
            for key, active in self.screen.active_bindings.items()
            if active.node is self.screen or active.node is self.app
        }
        rest = sorted(
            (item for item in items if item not in first and item not in kept),
            key=lambda item: all(key.key in screen_keys for key in _keys(item)),
        )
        shown: set[tuple[Widget, ...]] = set()
        for item in first + kept + palette + rest:
            cells = sum(self._cells_of(widget) for widget in item)
            if cells <= room:
                shown.add(item)
                room -= cells
            elif item in rest:
                break  # the keys after a cut one stay in order: none is shown out of it
        for item in items + palette:
            for widget in item:
                # Set only when it changes: setting it lays the key out again and drops the
                # width just measured, so the layout would render every key once more.
                _show(widget, item in shown)
                if isinstance(widget, KeyGroup):
                    for key in widget.query(FooterKey):
                        _show(key, widget.display)


def _show(widget: Widget, shown: bool) -> None:
    if widget.display != shown:
        widget.display = shown


def _actions(item: tuple[Widget, ...]) -> set[str]:
    """The names of the actions of an item's keys (``judge`` for ``judge(True)``)."""
    return {key.action.partition("(")[0] for key in _keys(item)}


def _keys(item: tuple[Widget, ...]) -> list[FooterKey]:
    """The keys of an item: a key, or the keys of a group."""
    widgets = [key for widget in item for key in (widget, *widget.query(FooterKey))]
    return [key for key in widgets if isinstance(key, FooterKey)]
