"""Scroll keys move the view, and the focus follows the view.

A pane's scroll keys reach it when the focused widget does not use them: PageUp/PageDown and
Home/End from a Select, a button or a field (Input keeps Home/End), the arrows from a button.
Textual scrolls the pane and leaves the focus where it was, out of view, where the next key acts
unseen: with the Ledger's model Select focused, Home and PageDown scrolled it away, and Up then
opened its list over unrelated text. :class:`FocusFollowsScroll` gives the focus to the pane
itself when a scroll key, the wheel or the scroll bar leaves the focused widget out of view, as
Escape from a field does; the arrows then scroll the pane, and Tab goes back into its fields.

Every scroll key counts. Textual's scroll keys scroll from where the last scroll is going, but
that scroll starts only after the next refresh: the keys of one burst all counted from the same
place, so twenty Rights sent at once moved the Diagrams picture two or three columns, and the
page keys counted from the place drawn mid-animation. :class:`ScrollsByKeyNow` starts each key's
scroll at once; :class:`SidewaysScroll` is a view that scrolls only sideways, whose Home and End
go to its left and right ends (Textual's End scrolled such a view nowhere).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from textual import events
from textual.actions import SkipAction
from textual.containers import ScrollableContainer
from textual.geometry import Size
from textual.scrollbar import ScrollDown, ScrollTo, ScrollUp
from textual.widget import Widget


def rows_in(widget: Widget, pane: Widget) -> tuple[int, int] | None:
    """The rows ``widget`` takes in ``pane``'s content, scrolled or not: (first, after last);
    None when it is not inside ``pane``. Read from the layout Textual last made: each widget's
    region relative to its container (``virtual_region``), added up to the pane, less the
    scroll offset of any container scrolled in between."""
    top = 0
    node = widget
    while node is not pane:
        parent = node.parent
        if not isinstance(parent, Widget):
            return None
        top += node.virtual_region.y
        if parent is not pane:
            top += parent.styles.gutter.top - round(parent.scroll_y)
        node = parent
    return top, top + widget.outer_size.height


# The mixins below are plain classes when the app runs: a Widget subclass would set its own
# can_focus (False, Widget's) that the container after it in a class's bases could not give
# back (Textual's Widget.__init_subclass__ copies the first one found).
if TYPE_CHECKING:
    _MixinBase = Widget
else:
    _MixinBase = object


class ScrollsByKeyNow(_MixinBase):
    """A scrolling widget whose scroll keys, run through :meth:`_scroll_by_key`, scroll at once
    (see the module docstring)."""

    # Set while a scroll key's action runs: its scroll starts now, not after the next refresh
    # (Textual's default), so where it ends is known before the next key, which may be in the
    # same read.
    _scroll_now = False

    def scroll_to(self, x: float | None = None, y: float | None = None, **options: Any) -> None:
        if self._scroll_now:
            options["immediate"] = True
        super().scroll_to(x, y, **options)

    def _scroll_by_key(self, scroll: Callable[[], None]) -> None:
        # A scroll still under way first ends where it was going (as Textual's scroll_to ends
        # it): Textual's page keys count from the position drawn mid-way, so PageDown right
        # after Home paged from wherever the animation had got to.
        self.app.animator.force_stop_animation(self, "scroll_x")
        self.app.animator.force_stop_animation(self, "scroll_y")
        self._scroll_now = True
        try:
            scroll()  # SkipAction when there is nothing to scroll: the key goes on
        finally:
            self._scroll_now = False


class SidewaysScroll(ScrollsByKeyNow):
    """A view that scrolls only sideways (an 80-column picture, a timeline): each arrow and page
    key moves it from where the previous one took it, Home and End go to its left and right
    ends. Up, Down and the page keys of a view without them go on to the pane around it."""

    def action_scroll_left(self) -> None:
        self._scroll_by_key(super().action_scroll_left)

    def action_scroll_right(self) -> None:
        self._scroll_by_key(super().action_scroll_right)

    def action_page_left(self) -> None:
        self._scroll_by_key(super().action_page_left)

    def action_page_right(self) -> None:
        self._scroll_by_key(super().action_page_right)

    def action_scroll_home(self) -> None:
        self._scroll_sideways_to(0)

    def action_scroll_end(self) -> None:
        self._scroll_sideways_to(self.max_scroll_x)

    def _scroll_sideways_to(self, x: int) -> None:
        if not self.allow_horizontal_scroll:
            raise SkipAction()  # it fits: the key goes on to the pane around it
        self._scroll_by_key(lambda: self.scroll_to(x=x, animate=False))


class FocusFollowsScroll(ScrollsByKeyNow, ScrollableContainer):
    """A scrolling pane whose scroll keys take the focus from a widget they leave out of view
    (see the module docstring)."""

    # The pane's size at its last Resize event (None before the first).
    _last_size: Size | None = None

    def _on_resize(self, event: events.Resize) -> None:
        # The pane itself resized (the terminal, F5, F6), not its content grown (Textual sends
        # Resize for both): its text broken at the new width moved the focused widget, which
        # the learner may be typing in; it is scrolled back into view (README "Layout": a
        # resize keeps the pane typed in on screen, and what is typed in it). A content that
        # grows leaves the scroll alone: a restored scroll position is being waited for then.
        resized = self._last_size is not None and event.size != self._last_size
        self._last_size = event.size
        focused = self.screen.focused
        if not resized or focused is None or focused is self or self not in focused.ancestors:
            return
        # Imported here, once something inside a pane has the focus: the note boxes' module
        # (and Textual's TextArea) stays off the start-up.
        from tui.widgets.notes import keep_focus_in_view

        keep_focus_in_view(self)

    def _scroll_by_key(self, scroll: Callable[[], None]) -> None:
        super()._scroll_by_key(scroll)
        self.focus_follows_view()

    def focus_follows_view(self) -> None:
        """Focus the pane when the focused widget inside it is out of the view the pane is
        scrolling to (the scroll may be animated: its target is where it ends)."""
        focused = self.screen.focused
        if focused is None or focused is self or self not in focused.ancestors:
            return
        rows = rows_in(focused, self)
        if rows is None:
            return
        top = round(self.scroll_target_y)
        bottom = top + self.scrollable_content_region.height
        if rows[1] <= top or rows[0] >= bottom:
            self.screen.set_focus(self, scroll_visible=False)

    def _follow_view_after_scroll(self) -> None:
        # After Textual's own handler (it runs after this class's), once its scroll is applied
        # (a scroll bar's is, after the next refresh).
        self.call_next(self.call_after_refresh, self.focus_follows_view)

    # The wheel and the scroll bar, whose scrolling Textual's handlers of the same names do.
    def _on_mouse_scroll_down(self, event: events.MouseScrollDown) -> None:
        self._follow_view_after_scroll()

    def _on_mouse_scroll_up(self, event: events.MouseScrollUp) -> None:
        self._follow_view_after_scroll()

    def _on_scroll_to(self, message: ScrollTo) -> None:
        self._follow_view_after_scroll()

    def _on_scroll_down(self, message: ScrollDown) -> None:
        self._follow_view_after_scroll()

    def _on_scroll_up(self, message: ScrollUp) -> None:
        self._follow_view_after_scroll()

    def action_scroll_up(self) -> None:
        self._scroll_by_key(super().action_scroll_up)

    def action_scroll_down(self) -> None:
        self._scroll_by_key(super().action_scroll_down)

    def action_page_up(self) -> None:
        self._scroll_by_key(super().action_page_up)

    def action_page_down(self) -> None:
        self._scroll_by_key(super().action_page_down)

    def action_scroll_home(self) -> None:
        self._scroll_by_key(super().action_scroll_home)

    def action_scroll_end(self) -> None:
        self._scroll_by_key(super().action_scroll_end)
