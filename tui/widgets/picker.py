"""A picker (Textual's Select) whose open list closes at once, so the next key goes to the
picker.

Textual 8.2.8's list closes through messages: Escape or Enter posts one to the list, which
posts the choice to the Select, which then closes the list and gives the focus back to itself.
Keys are handled one at a time (:mod:`tui.keys`), but the next key does not wait for those
messages: in one burst (Escape, then ``x`` typed quickly) it still went to the list, whose
type-to-search took it in silence (no option matched), rather than to the closed picker,
where a key that nothing takes gets the "not typed" hint (README "No key typed in silence").
:class:`PickerList` closes the list and focuses the picker while the key is handled.
"""

from __future__ import annotations

from typing import Any

from textual.app import ComposeResult
from textual.widgets import Select
from textual.widgets._select import SelectCurrent, SelectOverlay


class PickerList(SelectOverlay):
    """A :class:`Picker`'s open list: Escape and Enter close it before the next key."""

    def action_dismiss(self) -> None:
        self._close()

    def action_select(self) -> None:
        picker = self.parent
        index = self.highlighted
        if (
            not isinstance(picker, Picker)
            or index is None
            or self.get_option_at_index(index).disabled
        ):
            super().action_select()
            return
        # What Select does with the list's choice (Select._update_selection), now. The list's
        # rows are the picker's options in order, the blank one first where it has one.
        value = picker._options[index][1]
        if value != picker.value:
            picker.value = value
        self._close()

    def _close(self) -> None:
        picker = self.parent
        if not isinstance(picker, Select):
            super().action_dismiss()
            return
        picker.expanded = False
        # Its Blur posts what Textual's Escape would (the list closes; the focus stays put).
        self.screen.set_focus(picker, scroll_visible=False)


class Picker(Select[str]):
    """Textual's Select with a :class:`PickerList` (see the module docstring); the same
    arguments."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._searches = bool(kwargs.get("type_to_search", True))

    def compose(self) -> ComposeResult:
        # Select.compose with the list replaced.
        yield SelectCurrent(self.prompt)
        yield PickerList(type_to_search=self._searches).data_bind(compact=Select.compact)
