"""The footer: Textual's, showing only the keys that fit whole.

Textual's Footer lays its keys out in a row and lets the last ones run past the screen's edge,
cut (``… f6 Si``, ``^q Q`` at 80 columns). :class:`FittingFooter` measures each key once laid
out and hides those that do not fit: help and quit first of all (they are always needed), then
the others in their order (the focused pane's keys first). F1 lists every key.
"""

from __future__ import annotations

from textual.widgets import Footer
from textual.widgets._footer import FooterKey

# Kept first, where they fit: the actions of F1 (help) and ctrl+q (quit).
KEPT_ACTIONS = frozenset({"show_help", "quit"})


class FittingFooter(Footer):
    """A Footer that shows the keys that fit whole (see module docstring)."""

    def __init__(self, *, show_command_palette: bool = True, compact: bool = False) -> None:
        super().__init__(show_command_palette=show_command_palette, compact=compact)
        # Each key's cells (its width and the margin after it), measured with every key shown.
        self._cells: dict[FooterKey, int] = {}

    async def recompose(self) -> None:
        await super().recompose()
        self._cells = {}
        self.call_after_refresh(self._fit)

    def on_resize(self) -> None:
        self.call_after_refresh(self._fit)

    def _keys(self) -> list[FooterKey]:
        return [key for key in self.query(FooterKey) if not key.has_class("-command-palette")]

    def _fit(self) -> None:
        keys = self._keys()
        if not keys:
            return
        if any(key not in self._cells for key in keys):
            if not all(key.display for key in keys):
                for key in keys:
                    key.display = True
                self.call_after_refresh(self._fit)  # measured once laid out again
                return
            self._cells = {key: key.outer_size.width + key.styles.margin.width for key in keys}
        room = self.size.width
        for palette in self.query(FooterKey).filter(".-command-palette"):
            room -= palette.outer_size.width
        kept = [key for key in keys if key.action in KEPT_ACTIONS]
        shown: set[FooterKey] = set()
        for key in kept + [key for key in keys if key not in kept]:
            if self._cells[key] <= room:
                shown.add(key)
                room -= self._cells[key]
            elif key not in kept:
                break  # the keys after a cut one stay in order: none is shown out of it
        for key in keys:
            key.display = key in shown
