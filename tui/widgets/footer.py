"""The footer: Textual's Footer, recomposed at most once per refresh and only when its keys change.

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
"""

from __future__ import annotations

from textual.app import ComposeResult
from textual.screen import Screen
from textual.widgets import Footer
from textual.widgets._footer import FooterKey, FooterLabel

from engine.i18n import gettext


class KeysFooter(Footer):
    """A :class:`textual.widgets.Footer` that skips recomposes that would change nothing and
    shows its labels in the interface language."""

    def __init__(self, *, compact: bool = False, show_command_palette: bool = True) -> None:
        super().__init__(compact=compact, show_command_palette=show_command_palette)
        self._recompose_queued = False
        self._shown: tuple[object, ...] | None = None

    def _keys(self) -> tuple[object, ...]:
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
        keys = self._keys()
        if keys == self._shown:
            return
        self._shown = keys
        await self.recompose()

    def compose(self) -> ComposeResult:
        for widget in super().compose():
            if isinstance(widget, FooterKey):
                widget.description = gettext(widget.description)
                # The tooltip's attribute, not its setter: the setter updates the screen's
                # tooltip at once, which while composing is the screen being left, and moves
                # its focus (Textual is pinned exactly: pyproject.toml).
                if isinstance(widget._tooltip, str):
                    widget._tooltip = gettext(widget._tooltip)
            elif isinstance(widget, FooterLabel):
                widget.update(gettext(str(widget.content)))
            yield widget
