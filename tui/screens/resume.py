"""Where the lesson was left, on the main screen: read back and restored.

:class:`PlaceKeeper` belongs to the :class:`~tui.screens.main.MainScreen`: it reads where the
lesson is now (section, the reading pane's top as block and line, side tab, side pane shown and
its scroll position, each side pane's choices, the focused widget) as an
``engine.resume.ResumeState``, and shows the lesson at such a place again. The screen posts
``MainScreen.PlaceChanged`` when the place moved; the App writes it.
"""

from __future__ import annotations

import time
from typing import TYPE_CHECKING

from textual.containers import ScrollableContainer, VerticalScroll
from textual.css.query import InvalidQueryFormat, NoMatches
from textual.widget import Widget
from textual.widgets import Input

from engine.resume import FIELD_CHECKS, SIDE_SIZES, ResumeState
from tui.widgets.side import SideTabs

# How long a side tab's scroll position waits for its content to be laid out that tall (seconds).
SIDE_SCROLL_WAIT_S = 2.0
# How long F6 waits for the side field to give the focus back to to be built (seconds).
SIDE_FOCUS_WAIT_S = 0.5
# How long the reading pane's top waits for its section's blocks to be placed (seconds).
READING_SCROLL_WAIT_S = 2.0

if TYPE_CHECKING:
    from tui.screens.main import MainScreen


class PlaceKeeper:
    """The main screen's place in the lesson (see module docstring)."""

    def __init__(self, screen: MainScreen) -> None:
        self.screen = screen
        # Where the lesson was left (restore), and the reading pane's top still to be scrolled
        # to: (section, block, line).
        self.state = ResumeState()
        self._pending_scroll: tuple[str, int, int] | None = None
        # The side tab and the widget in it that had the focus, not given back because the side
        # pane was not on screen (a restart at a size where the lesson is shown instead): F6
        # or the tab's key gives it back when it shows that tab (:meth:`side_focus`).
        self._pending_side_focus: tuple[str, str] | None = None

    def restore(self, state: ResumeState) -> None:
        """Show the lesson at ``state`` (see :meth:`MainScreen.restore_place`)."""
        screen = self.screen
        self.state = state
        if not screen.is_mounted:
            return
        self.restore_layout(state, initial=False)
        self.restore_section(state)
        self.restore_choices(state)
        self.restore_focus_later(state)

    # ----------------------------------------------------------------- focus and side scroll
    def restore_focus_later(self, state: ResumeState) -> None:
        """After the next frame (the first one stays as fast), scroll the side tab to where it
        was and give the focus back to the widget that had it (:meth:`_restore_focus`)."""
        self._pending_side_focus = None  # another lesson's, or another place's
        if state.focus or state.side_scroll:
            self.screen.call_after_refresh(self._restore_focus, state)

    async def _restore_focus(self, state: ResumeState) -> None:
        """The side tab's scroll position, then the focus: the widget ``state.focus`` names,
        or its first focusable widget (a side tab by its id), built first when it is in the
        side tab shown. Nothing when that widget is gone or its pane is not on screen."""
        screen = self.screen
        side = screen.query_one(SideTabs)
        in_side = bool(side.active) and (screen.side_shown or screen.zoomed)
        if in_side and state.side_tab == side.active:
            pane = await side.open_tab()
            if state.side_scroll:
                deadline = time.monotonic() + SIDE_SCROLL_WAIT_S
                self._restore_side_scroll(pane, state.side_scroll, deadline)
        if not state.focus:
            return
        built = in_side and state.side_tab == side.active
        built = built and await self._build_folded_field(pane, state.focus)
        widget = self._named_widget(state.focus)
        if not in_side and (widget is None or side in widget.ancestors_with_self):
            # Not built, or not on screen: given back when the side pane shows its tab.
            if state.side_tab and side.has_pane(state.side_tab):
                self._pending_side_focus = (state.side_tab, state.focus)
            return
        target = self._focusable_in(widget)
        if target is not None:
            # In the side tab whose scroll position is being restored, the focus does not scroll
            # the tab to it: the learner's place is as it was, however the two were left.
            keep_scroll = bool(in_side and state.side_scroll and side in target.ancestors)
            self._give_focus(target, scroll_visible=not keep_scroll)
            if built and not keep_scroll:
                from tui.widgets.notes import scroll_into_view

                scroll_into_view(target)

    async def side_focus_built(self, pane_id: str) -> None:
        """Wait, one frame at a time for at most :data:`SIDE_FOCUS_WAIT_S`, until the widget
        :meth:`side_focus` would give the focus to in tab ``pane_id`` is built: a pane builds
        some of its widgets after it is mounted (the Ledger's less-used fields, the Diagrams
        notes). At once when there is none to give back, and when called in the screen's own
        task (a callback after its refresh): no frame comes while that task waits, and waiting
        for one hung the app (F5 at 80x24 with the focus left in the outline, which is not
        built there: the screen blank, ctrl+q and SIGTERM unanswered)."""
        pending = self._pending_side_focus
        if pending is None or pending[0] != pane_id:
            return
        deadline = time.monotonic() + SIDE_FOCUS_WAIT_S
        while self._named_widget(pending[1]) is None and time.monotonic() < deadline:
            if not await self.screen.wait_for_refresh():
                return

    def side_focus(self, pane_id: str) -> Widget | None:
        """The widget of side tab ``pane_id`` that had the focus where the lesson was left and
        did not get it back (its pane was not on screen), given the focus now with the cursor
        at a field's end; None when there is none (or it is gone). Given once: the learner's
        own moves decide afterwards."""
        pending = self._pending_side_focus
        if pending is None or pending[0] != pane_id:
            return None
        self._pending_side_focus = None
        widget = self._named_widget(pending[1])
        pane = self.screen.query_one(SideTabs).active_pane()
        if widget is None or pane is None or pane not in widget.ancestors:
            return None
        target = self._focusable_in(widget)
        if target is not None:
            self._give_focus(target, scroll_visible=False)
        return target

    def _named_widget(self, name: str) -> Widget | None:
        """The widget ``name`` (:attr:`ResumeState.focus`) names: an answer or note box, by its
        item (it has no widget id), else the widget by its id; None when there is none."""
        from tui.widgets.notes import NoteBox  # as where the boxes are built: off the start-up

        boxes = self.screen.query(NoteBox)
        widget: Widget | None = next((box for box in boxes if box.place_name == name), None)
        if widget is None:
            try:
                widget = self.screen.get_widget_by_id(name)
            except (NoMatches, InvalidQueryFormat):  # gone, or a name no widget id can be
                widget = None
        return widget

    async def _build_folded_field(self, pane: Widget, name: str) -> bool:
        """Build the rows of a calculator's less-used fields when ``name`` is one of them and
        they are folded: a pane shown again builds them only when a value there was changed,
        and the focus left in an empty one (``seq len s``, where ctrl+n puts the cursor) went
        to the first field instead, its value selected and out of view, so the next keys
        replaced it unseen. Returns whether it built them (they are laid out a frame later:
        the field is scrolled to then, :func:`tui.widgets.notes.scroll_into_view`)."""
        from tui.widgets.calculator import CalculatorPane

        calculators = [pane] if isinstance(pane, CalculatorPane) else pane.query(CalculatorPane)
        for calculator in calculators:
            folded = not calculator.more_open
            if folded and any(name == f"field-{field.name}" for field in calculator.MORE_FIELDS):
                await calculator.open_more()
                return True
        return False

    @staticmethod
    def _focusable_in(widget: Widget | None) -> Widget | None:
        """``widget`` if it can take the focus, else its first descendant that can."""
        if widget is None or widget.focusable:
            return widget
        return next((w for w in widget.query("*") if w.focusable), None)

    def _give_focus(self, target: Widget, *, scroll_visible: bool) -> None:
        """Focus ``target`` at once (Widget.focus is deferred: a focus chosen meanwhile would
        be undone)."""
        self.screen.set_focus(target, scroll_visible=scroll_visible)
        if isinstance(target, Input):
            # Textual's Input selects its whole value when it takes the focus, so the learner's
            # first key would replace a value they did not choose to edit (and the autosave keep
            # it): the cursor goes to its end instead, after the Focus event's selection.
            target.call_later(target.action_end)

    def _restore_side_scroll(self, pane: Widget, y: int, deadline: float) -> None:
        """Scroll ``pane``'s scroller to ``y`` once its content is that tall, looked at after
        each frame until ``deadline`` (``time.monotonic()``): a pane lays its content out over
        a few frames, and how many depends on the machine, not on a count of frames."""
        scrollers = pane.query(ScrollableContainer)
        if not scrollers:
            return
        scroller = scrollers.first()
        if scroller.max_scroll_y < y and time.monotonic() < deadline:
            pane.call_after_refresh(self._restore_side_scroll, pane, y, deadline)
            return
        scroller.scroll_to(y=y, animate=False, immediate=True)

    def _focus_place(self) -> str:
        """The focused widget as :class:`ResumeState` keeps it: its id, else the name of the
        answer or note box it is in (:attr:`NoteBox.place_name`), else the id of its nearest
        container with one (a field inside a pane: the pane); ``""`` for none."""
        focused = self.screen.focused
        if focused is None:
            return ""
        from tui.widgets.notes import NoteBox

        check = FIELD_CHECKS["focus"]
        for node in focused.ancestors_with_self:
            if node is self.screen:
                break
            if isinstance(node, NoteBox) and check(node.place_name):
                return node.place_name
            if node.id and check(node.id):
                return node.id
        return ""

    def _side_scroll(self, side: SideTabs) -> int:
        """The shown side tab's scroll position in lines (0 when it has none)."""
        pane = side.active_pane()
        if pane is None:
            return 0
        scrollers = pane.query(ScrollableContainer)
        return round(scrollers.first().scroll_y) if scrollers else 0

    def restore_choices(self, state: ResumeState) -> None:
        """Hand each side tab its pane's choices of ``state`` (a pane not built yet takes them
        when it is)."""
        self.screen.query_one(SideTabs).restore_choices(state.panes)

    def restore_layout(self, state: ResumeState, initial: bool) -> None:
        """The side tab, and the side pane shown or hidden when the layout is the one it was
        left at (elsewhere the layout's rule and F6's choice decide). ``initial``: before the
        first arrangement, which builds the tab shown."""
        screen = self.screen
        side = screen.query_one(SideTabs)
        if state.side_tab and side.has_pane(state.side_tab):
            side.choose(state.side_tab)
            if initial:
                side.build_after_first_frame()
        if state.zoomed and not screen.reading_mode and screen.size_class in SIDE_SIZES:
            # F5's zoom comes back where the side pane has room (below 80 columns the lesson
            # comes first, as for the side pane).
            if initial:
                screen.set_reactive(type(screen).zoomed, True)
            else:
                screen.zoomed = True
        if state.side_shown is None or state.side_size != screen.size_class:
            return
        if initial:
            screen.set_reactive(type(screen).side_shown, state.side_shown)
        else:
            screen.side_shown = state.side_shown

    def restore_section(self, state: ResumeState) -> None:
        """The section, and the reading pane's top once the section is laid out."""
        screen = self.screen
        if screen.lesson is None or state.section not in screen.section_ids():
            return
        if state.section != screen.current_section:
            screen.show_section(state.section)
        if state.block or state.line:
            self._pending_scroll = (state.section, state.block, state.line)
            # A section not laid out after the next frame is scrolled when it is.
            deadline = time.monotonic() + READING_SCROLL_WAIT_S
            screen.query_one("#reading").call_after_refresh(self._scroll_when_placed, deadline)

    def _scroll_when_placed(self, deadline: float) -> None:
        """:meth:`section_laid_out` now and after each frame while the place is pending and the
        layout shows the reading pane, until ``deadline`` (``time.monotonic()``). The section's
        end says when the section is laid out, but not every block is placed then: an
        objective (a container) is placed only once it has mounted the lines it composes, some
        frames after the end (how many depends on the machine), and the lesson's first page
        has no section end at all. A reading pane hidden is scrolled when its section's end is
        laid out, once shown."""
        self.section_laid_out()
        screen = self.screen
        if self._pending_scroll is None or not screen.arrangement.reading:
            return
        if time.monotonic() < deadline:
            screen.query_one("#reading").call_after_refresh(self._scroll_when_placed, deadline)

    def section_laid_out(self) -> None:
        """The reading pane's section has been laid out (or may have been): scroll it to the
        block and line still pending, if any. While the section has no height (not laid out
        yet, or the reading pane hidden) the place stays pending, and is what :meth:`place`
        says."""
        if self._pending_scroll is None:
            return
        section, block, line = self._pending_scroll
        reading = self.screen.query_one("#reading", VerticalScroll)
        children = [child for child in reading.children if child.display]
        if section != self.screen.current_section or block >= len(children):
            self._pending_scroll = None
            return
        region = children[block].region
        if not region.height:
            return
        self._pending_scroll = None
        top = region.y - reading.scrollable_content_region.y + reading.scroll_offset.y
        reading.scroll_to(y=top + min(line, region.height - 1), animate=False, immediate=True)

    def forget_pending_scroll(self) -> None:
        """The learner scrolled: a place still to be restored is not theirs any more."""
        self._pending_scroll = None

    def _reading_anchor(self) -> tuple[int, int]:
        """The reading pane's top as (block, line): the first block reaching below it and how
        many of that block's lines are above it (0, 0 when the pane is not laid out)."""
        current = self.screen.current_section
        if self._pending_scroll is not None and self._pending_scroll[0] == current:
            return self._pending_scroll[1:]
        reading = self.screen.query_one("#reading", VerticalScroll)
        top = reading.scrollable_content_region.y
        if not reading.region.height:
            previous = self.state
            same = previous.section == current
            return (previous.block, previous.line) if same else (0, 0)
        children = [child for child in reading.children if child.display]
        for index, child in enumerate(children):
            if child.region.bottom > top:
                return index, max(0, top - child.region.y)
        return 0, 0

    def place(self) -> ResumeState | None:
        """Where the lesson is now (see :meth:`MainScreen.place`)."""
        screen = self.screen
        sides = screen.query(SideTabs)
        if not sides:
            return None
        side = sides.first(SideTabs)
        panes = {name: dict(choices) for name, choices in self.state.panes.items()}
        panes.update(side.choices())
        block, line = self._reading_anchor()
        usable = screen.size_class in SIDE_SIZES
        return ResumeState(
            section=screen.current_section,
            block=block,
            line=line,
            side_tab=side.current,
            side_shown=screen.side_shown if usable else self.state.side_shown,
            side_size=screen.size_class if usable else self.state.side_size,
            side_scroll=self._side_scroll(side),
            zoomed=screen.zoomed if usable else self.state.zoomed,
            focus=self._focus_place(),
            panes=panes,
        )
