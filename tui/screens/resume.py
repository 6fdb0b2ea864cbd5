"""Where the lesson was left, on the main screen: read back and restored.

:class:`PlaceKeeper` belongs to the :class:`~tui.screens.main.MainScreen`: it reads where the
lesson is now (section, the reading pane's top as block and line, side tab, side pane shown, each
side pane's choices) as an ``engine.resume.ResumeState``, and shows the lesson at such a place
again. The screen posts ``MainScreen.PlaceChanged`` when the place moved; the App writes it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.containers import VerticalScroll
from textual.widgets import OptionList

from engine.resume import SIDE_SIZES, ResumeState
from tui.screens.layout import META_ID
from tui.widgets.side import SideTabs

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

    def restore(self, state: ResumeState) -> None:
        """Show the lesson at ``state`` (see :meth:`MainScreen.restore_place`)."""
        screen = self.screen
        self.state = state
        if not screen.is_mounted:
            return
        self.restore_layout(state, initial=False)
        self.restore_section(state)
        self.restore_choices(state)

    def restore_choices(self, state: ResumeState) -> None:
        """Hand each side tab its pane's choices of ``state`` (a pane not built yet takes them
        when it is)."""
        for pane in self.screen.query_one(SideTabs).panes():
            pane.restore_choices(state.panes.get(str(pane.id), {}))

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
        if state.side_shown is None or state.side_size != screen.size_class:
            return
        if initial:
            screen.set_reactive(type(screen).side_shown, state.side_shown)
        else:
            screen.side_shown = state.side_shown

    def restore_section(self, state: ResumeState) -> None:
        """The section, and the reading pane's top once the section is laid out."""
        screen = self.screen
        ids = [META_ID, *(section.id for section in screen.sections)]
        if screen.lesson is None or state.section not in ids:
            return
        screen.query_one("#outline", OptionList).highlighted = ids.index(state.section)
        if state.section != screen.current_section:
            screen.show_section(state.section)
        if state.block or state.line:
            self._pending_scroll = (state.section, state.block, state.line)
            # In the reading pane's queue: after the scroll home that show_section queued there.
            screen.query_one("#reading").call_after_refresh(self._restore_scroll, 5)

    def _restore_scroll(self, tries: int) -> None:
        """Scroll the reading pane to the block and line of ``_pending_scroll`` once the section
        is laid out (``tries`` more frames at most)."""
        if self._pending_scroll is None:
            return
        section, block, line = self._pending_scroll
        reading = self.screen.query_one("#reading", VerticalScroll)
        children = [child for child in reading.children if child.display]
        if section != self.screen.current_section or block >= len(children):
            self._pending_scroll = None
            return
        region = children[block].region
        if not region.height and tries > 0:  # not laid out yet
            reading.call_after_refresh(self._restore_scroll, tries - 1)
            return
        self._pending_scroll = None
        if region.height:
            top = region.y - reading.scrollable_content_region.y + reading.scroll_offset.y
            reading.scroll_to(y=top + min(line, region.height - 1), animate=False, immediate=True)

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
        for pane in side.panes():
            choices = pane.choices()
            if choices is not None:
                panes[str(pane.id)] = choices
        block, line = self._reading_anchor()
        usable = screen.size_class in SIDE_SIZES
        return ResumeState(
            section=screen.current_section,
            block=block,
            line=line,
            side_tab=side.current,
            side_shown=screen.side_shown if usable else self.state.side_shown,
            side_size=screen.size_class if usable else self.state.side_size,
            panes=panes,
        )
