"""Search and the notes view, from the main screen: opening them and showing what they chose.

:class:`SearchJumps` belongs to the :class:`~tui.screens.main.MainScreen`. Search (``/``,
ctrl+f) and the notes view (ctrl+e) are screens of their own (``tui.screens.search``); the place
chosen there is shown here: lesson text marked in the reader, the learner's text in its box with
the match selected, an exercise note in its side pane.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.containers import Vertical, VerticalScroll
from textual.widget import AwaitMount

from tui import strings
from tui.screens.layout import META_ID
from tui.widgets.reader import BrokenText
from tui.widgets.side import SideTabs

if TYPE_CHECKING:
    from engine.search import Place
    from tui.screens.main import MainScreen
    from tui.screens.search import SearchResult
    from tui.widgets.notes import NoteBox


class SearchJumps:
    """The main screen's search and notes view (see module docstring)."""

    def __init__(self, screen: MainScreen) -> None:
        self.screen = screen

    def _section_titles(self) -> dict[str, str]:
        return {META_ID: strings.META_SECTION, **{s.id: s.title for s in self.screen.sections}}

    async def search(self) -> None:
        """Open search over the lesson and the learner's text, with the last query."""
        from tui.screens.search import SearchScreen

        screen = self.screen
        if screen.lesson is None:
            screen.app.notify(screen.lesson_error, severity="error")
            return
        search = SearchScreen(
            screen.lesson, screen.progress, screen.search_query, self._section_titles()
        )
        await screen.app.push_screen(search, self._search_closed)
        # At once, not on the screen's resume: a key typed right after ctrl+f is the query's.
        search.set_focus(search.query_input)

    async def _search_closed(self, result: SearchResult | None) -> None:
        if result is None:
            return
        self.screen.search_query = result.query
        if result.hit is not None:
            await self.jump_to(result.hit.place, (result.hit.start, result.hit.end))

    async def my_notes(self) -> None:
        """Open the notes view: every answer, reflection and exercise note."""
        from tui.screens.search import NotesScreen

        screen = self.screen
        if screen.lesson is None:
            screen.app.notify(screen.lesson_error, severity="error")
            return
        notes = NotesScreen(screen.lesson, screen.progress, self._section_titles())
        await screen.app.push_screen(notes, self._notes_closed)

    async def _notes_closed(self, place: Place | None) -> None:
        if place is not None:
            await self.jump_to(place, None)

    async def jump_to(self, place: Place, span: tuple[int, int] | None) -> None:
        """Show ``place`` (see :meth:`MainScreen.jump_to`)."""
        if place.source == "notes":
            await self._jump_to_note(place, span)
            return
        reading = await self._read_section(place.section_id)
        for text in reading.query(BrokenText):
            text.clear_highlight()
        if place.source == "lesson":
            if span is not None:
                self._mark_in_reader(reading, place.text, span)
            return
        # The boxes' module is imported with the first section that has boxes, not before the
        # first frame (a section just shown imported it).
        from tui.widgets.notes import NoteBox

        for box in reading.query(NoteBox):
            if box.kind == place.source and box.item.id == place.item_id:
                self._enter_box(box, span)
                return

    async def _read_section(self, section_id: str) -> VerticalScroll:
        """Show section ``section_id`` in the reading pane (on screen) and wait until its
        widgets are mounted."""
        screen = self.screen
        screen.zoomed = False
        screen.outline_open = False
        if screen.size_class == "narrow":
            screen.side_shown = False
        # Now, into the pane shown: the focus then stays where the jump puts it (the layout's
        # own focus keeping moves it only out of a pane just hidden).
        reading = screen.query_one("#reading", VerticalScroll)
        screen.set_focus(reading, scroll_visible=False)
        if section_id in screen.section_ids() and section_id != screen.current_section:
            screen.show_section(section_id)  # the outline follows
        await AwaitMount(reading, list(reading.children))
        return reading

    def _mark_in_reader(self, reading: VerticalScroll, text: str, span: tuple[int, int]) -> None:
        target = next((t for t in reading.query(BrokenText) if text in t.text), None)
        if target is None:
            return
        from tui.widgets.notes import SelfCheckBox

        offset = target.text.index(text)
        start, end = offset + span[0], offset + span[1]
        box = next((node for node in target.ancestors if isinstance(node, SelfCheckBox)), None)
        if box is not None and not box.query_one(".key-points", Vertical).display:
            box.show_key_points()  # a match in key points the learner had hidden again
        target.highlight(start, end)
        self.screen.set_focus(reading)
        # In the reading pane's queue: after the scroll home of a section just shown.
        reading.call_after_refresh(self._scroll_to_match, reading, target, start)

    def _scroll_to_match(self, reading: VerticalScroll, target: BrokenText, offset: int) -> None:
        """Scroll the line holding ``target.text[offset]`` to a third of the pane's height."""
        if not target.region.height:
            return
        content = reading.scrollable_content_region
        top = target.region.y - content.y + reading.scroll_offset.y + target.line_of(offset)
        reading.scroll_to(y=max(0, top - content.height // 3), animate=False, immediate=True)

    def _enter_box(self, box: NoteBox, span: tuple[int, int] | None) -> None:
        from tui.widgets.literal import LiteralTextArea

        area = box.text_area
        if not isinstance(area, LiteralTextArea):
            return
        start, end = span if span is not None else (len(area.text), len(area.text))
        if end > len(area.text):  # the text changed since the search: its end
            start = end = len(area.text)
        area.enter_with_selection(start, end)
        # Once laid out (a box just built has no place yet): the whole box in view.
        box.call_after_refresh(box.scroll_visible, animate=False)

    async def _jump_to_note(self, place: Place, span: tuple[int, int] | None) -> None:
        """Open the side pane where the exercise note ``place`` is written, on it."""
        screen = self.screen
        if not place.pane:
            screen.app.notify(strings.NOTE_NOWHERE, severity="warning")
            return
        side = screen.query_one(SideTabs)
        side.choose(place.pane)  # before the side pane is shown: its tabs may be built with it
        screen.zoomed = False
        screen.reading_mode = False
        screen.outline_open = False
        screen.side_shown = True
        tabbed = await side.ready()
        tabbed.active = place.pane
        screen.set_focus(tabbed.tab_row, scroll_visible=False)  # see _read_section
        tab = await side.open_tab(place.pane)
        show_strategy = getattr(tab.children[0] if tab.children else None, "show_strategy", None)
        if place.strategy and show_strategy is not None:
            from engine.diagrams import STRATEGY_NAMES

            if place.strategy in STRATEGY_NAMES:
                await show_strategy(place.strategy)
        from tui.widgets.notes import NoteBox

        for box in tab.query(NoteBox):
            if box.item.id == place.item_id:
                self._enter_box(box, span)
                return
        screen.focus_tab_pane(tab)
