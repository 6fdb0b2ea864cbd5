"""Text boxes for the learner's own words: self-check answers and reflection fields.

Text is shown literally (``markup=False``; a TextArea never parses markup). Labels and key points
are lesson text, broken into lines by the reader's rule (:class:`tui.widgets.reader.BrokenText`).
Every change is posted up as :class:`NoteBox.Edited`; the app owns the progress model and the
saving.
"""

from __future__ import annotations

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.message import Message
from textual.widget import Widget
from textual.widgets import Button, Static, TextArea

from engine.i18n import N_
from engine.lesson import Item
from engine.reading import BULLET
from tui import strings
from tui.widgets.literal import LiteralTextArea
from tui.widgets.reader import BrokenText


class NoteBox(Vertical):
    """One labelled text area bound to a lesson item id."""

    HELP = N_(
        "Type your answer or note here; it is saved within a second and again on quit. "
        "Tab moves to the next field; entering a box puts the cursor at the end of its text; "
        "ctrl+home / ctrl+end go to the start / end of the text."
    )
    # Escape leaves the box for the pane around it (the lesson, or a side pane), whose keys
    # (], ?, /) then work, as it leaves a calculator's field; the text stays as typed.
    BINDINGS = [Binding("escape", "leave_box", N_("Leave the box"), show=False, id="leave_box")]

    class Edited(Message):
        """The learner changed item ``item_id`` of ``kind`` ("answers" or "reflections")."""

        def __init__(self, kind: str, item_id: str, text: str) -> None:
            super().__init__()
            self.kind = kind
            self.item_id = item_id
            self.text = text

    def __init__(
        self, kind: str, item: Item, text: str, label: str, placeholder: str, marker: str = ""
    ) -> None:
        super().__init__(classes="note-box")
        self.kind = kind
        self.item = item
        self._initial = text
        self._label = label
        self._marker = marker
        self._placeholder = placeholder

    def compose(self) -> ComposeResult:
        yield BrokenText(self._label, marker=self._marker, classes="note-label")
        yield LiteralTextArea(
            self._initial,
            soft_wrap=True,
            show_line_numbers=False,
            placeholder=self._placeholder,
            classes="note-text",
        )

    def _pane(self) -> Widget | None:
        """The nearest focusable widget around the box (the reading pane, a side pane)."""
        return next(
            (
                widget
                for widget in self.ancestors
                if isinstance(widget, Widget) and widget.focusable
            ),
            None,
        )

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "leave_box":
            return self._pane() is not None
        return True

    def action_leave_box(self) -> None:
        pane = self._pane()
        if pane is not None:
            pane.focus()

    def set_label(self, label: str) -> None:
        """Show ``label`` above the box instead."""
        self._label = label
        self.query_one(".note-label", BrokenText).update(label)

    @property
    def place_name(self) -> str:
        """The box's name where the lesson was left (``resume.<lesson>.focus``:
        ``answers-self-check-1``), so that the focus in it is given back after a restart. Not a
        widget id: a section shown again mounts its boxes while the old ones are still being
        removed, and two widgets with one id would raise."""
        return note_box_name(self.kind, self.item.id)

    @property
    def text_area(self) -> TextArea:
        return self.query_one(TextArea)

    @on(TextArea.Changed)
    def _changed(self, event: TextArea.Changed) -> None:
        event.stop()
        self.post_message(self.Edited(self.kind, self.item.id, event.text_area.text))


def note_box_name(kind: str, item_id: str) -> str:
    """:attr:`NoteBox.place_name` of the box of ``kind`` for ``item_id``."""
    return f"{kind}:{item_id}"


def keep_focus_in_view(pane: Widget) -> None:
    """Once ``pane`` is laid out again, scroll the focused widget inside it back into view (the
    whole note box, label included, when the focus is in one).

    For a pane whose parts above the focused box change height when a box is left (an answer
    unfolds): Tab or ctrl+n focuses the next box and scrolls to it first, and the box left
    reports its blur only afterwards, so the unfolded part would push the box with the cursor
    off screen.
    """
    focused = pane.screen.focused
    if focused is None or pane not in focused.ancestors:
        return
    box = next((node for node in focused.ancestors if isinstance(node, NoteBox)), None)
    scroll_into_view(box if box is not None else focused)


def scroll_into_view(target: Widget, frames: int = 5, *, center: bool = False) -> None:
    """Scroll ``target`` into view after each of the next ``frames`` refreshes: what is built
    or unfolded above it (note boxes mounting, an answer unfolding) may change the layout a
    frame after the first scroll, and scrolling to a widget already in view does nothing.
    ``center``: to the middle of its scroll view (as far as the view scrolls), away from the
    top and bottom rows where a message is shown (``tui.toasts``)."""

    def scroll() -> None:
        if not target.is_attached:
            return
        if center:
            target.screen.scroll_to_center(target, animate=False)
        else:
            target.scroll_visible(animate=False)
        if frames > 1:
            scroll_into_view(target, frames - 1, center=center)

    target.call_after_refresh(scroll)


class SelfCheckBox(NoteBox):
    """A self-check question: answer first, then reveal the reference key points."""

    HELP = N_(
        "Answer the question in your own words first. Then press ctrl+r (or the button) to "
        "reveal the reference key points and compare; the button then hides or shows them. "
        "The key points are added material, grounded in the lesson and its sources, not the "
        "lesson's own text. A key typed on the button goes into the answer."
    )
    BINDINGS = [Binding("ctrl+r", "reveal", N_("Reveal"), id="reveal")]

    class RevealRequested(Message):
        """The learner asked to see the key points of ``item_id``."""

        def __init__(self, box: SelfCheckBox) -> None:
            super().__init__()
            self.box = box

    def __init__(self, item: Item, number: int, text: str, revealed: bool) -> None:
        super().__init__(
            "answers", item, text, item.text, strings.ANSWER_PLACEHOLDER, marker=f"{number}. "
        )
        self._revealed = revealed
        self.add_class("self-check")

    def compose(self) -> ComposeResult:
        yield from super().compose()
        label = strings.HIDE_KEY_POINTS if self._revealed else strings.REVEAL_BUTTON
        yield Button(label, classes="reveal", compact=True)
        with Vertical(classes="key-points") as key_points:
            key_points.display = self._revealed
            yield Static(strings.KEY_POINTS_TITLE, markup=False)
            for point in self.item.key_points:
                yield BrokenText(point, marker=BULLET, classes="key-point")
            if self.item.key_point_sources:
                sources = strings.SOURCES_SEPARATOR.join(self.item.key_point_sources)
                yield BrokenText(strings.KEY_POINTS_SOURCES + sources, classes="key-point-sources")

    @property
    def revealed(self) -> bool:
        return self._revealed

    def show_key_points(self) -> None:
        """Show the key points (the learner answered and asked) and scroll them into view,
        under the question and the answer they are compared with."""
        self._revealed = True
        self.query_one(".key-points", Vertical).display = True
        self.query_one(".reveal", Button).label = strings.HIDE_KEY_POINTS
        # Once laid out with the key points: the box's top part (all of it when it fits).
        self.call_after_refresh(self._scroll_into_view)

    def _scroll_into_view(self) -> None:
        # When the learner already went on (ctrl+r, Tab, Tab in one burst), the field they are
        # in now: the key points just pushed it down, after its own scroll on focus.
        focused = self.screen.focused
        target = self if focused is None or self in focused.ancestors_with_self else focused
        target.scroll_visible(animate=False)

    @on(Button.Pressed, ".reveal")
    def _pressed(self, event: Button.Pressed) -> None:
        # The button stays after the reveal (as Hide / Show), so Tab visits the same widgets in
        # every question, revealed or not: answer, button, next answer.
        event.stop()
        key_points = self.query_one(".key-points", Vertical)
        if not self._revealed:
            self.action_reveal()
        elif key_points.display:
            key_points.display = False
            event.button.label = strings.SHOW_KEY_POINTS
        else:
            self.show_key_points()

    def action_reveal(self) -> None:
        self.post_message(self.RevealRequested(self))
