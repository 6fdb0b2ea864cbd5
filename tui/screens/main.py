"""The main screen: the lesson's outline, the reading pane and the side pane (the calculators),
laid out for the terminal's size.

The layout is state, held in reactive attributes and applied by their watchers, never kept in
step by hand: ``size_class`` (from the terminal's size), ``side_shown`` (F6), ``reading_mode``
(F7), ``zoomed`` (F5) and ``outline_open`` (ctrl+o where the outline is not a column). From them
:func:`arrange` decides what is on screen, and the screen sets one CSS class per decision:

- wide (120 columns and more): outline | lesson | side pane;
- medium (80-119): the lesson alone, at least 76 columns wide at 80; the outline opens over it
  (ctrl+o), the side pane beside it when asked for (F2-F4, F10, ctrl+l, F6);
- narrow (under 80): one pane at a time, the lesson or the side pane (F6 switches);
- too small (under :data:`MIN_WIDTH` x :data:`MIN_HEIGHT`): one line saying the size needed.

Data flows down and messages up: the App hands the opened lesson and the learner's progress to
:meth:`MainScreen.show_lesson`; the widgets' edits (``NoteBox.Edited``, ``CalculatorPane.
FormChanged``...) bubble up to the App, which saves them, and a layout choice to remember is
posted as :class:`MainScreen.SettingChanged`. The lesson's keys are this screen's bindings, so
the quiz and help screens pushed over it simply do not have them.

Where the lesson was left (``engine.resume``) is read back with :meth:`MainScreen.place` and
restored with :meth:`MainScreen.restore_place`; :class:`MainScreen.PlaceChanged` tells the App
when it moved. Search (``/``, ctrl+f) and the notes view (ctrl+e) are screens of their own
(``tui.screens.search``); :meth:`MainScreen.jump_to` shows what they chose.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, cast

from textual import events, on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.message import Message
from textual.reactive import reactive
from textual.screen import Screen
from textual.widget import AwaitMount, Widget
from textual.widgets import Header, OptionList, Static, TabPane, Tabs
from textual.widgets.option_list import Option

from engine.lesson import Lesson, Section
from engine.progress import STATUS_LABELS, LessonProgress
from engine.reading import meta_blocks, section_blocks
from engine.resume import SIDE_SIZES, ResumeState
from tui import strings
from tui.commands import CommandsProvider, PaletteEntry, bindings
from tui.screens.guide import SectionEnd, SectionMoved, StudyGuide
from tui.widgets.calculator import CalculatorPane
from tui.widgets.footer import KeysFooter
from tui.widgets.literal import LiteralTextArea
from tui.widgets.notes import NoteBox, SelfCheckBox
from tui.widgets.reader import BrokenLines, BrokenText, block_widget
from tui.widgets.side import LazyTabPane, SideTabs
from tui.widgets.study import StepChosen

if TYPE_CHECKING:
    from engine.search import Place
    from tui.app import ShardbookApp
    from tui.screens.search import SearchResult
    from tui.widgets.diagrams import DiagramsPane
    from tui.widgets.tradeoffs import TradeoffsPane

META_ID = "__meta__"
WIDE_WIDTH = 120
MEDIUM_WIDTH = 80
MIN_WIDTH = 40
MIN_HEIGHT = 10

SizeClass = Literal["wide", "medium", "narrow", "too-small"]
SidePreference = Literal["auto", "shown", "hidden"]


def size_class(width: int, height: int) -> SizeClass:
    """The layout for a terminal of ``width`` x ``height`` cells (see module docstring)."""
    if width < MIN_WIDTH or height < MIN_HEIGHT:
        return "too-small"
    if width < MEDIUM_WIDTH:
        return "narrow"
    return "medium" if width < WIDE_WIDTH else "wide"


def too_small_message(width: int, height: int) -> str:
    """One line saying the size needed: the longest wording that fits ``width`` columns."""
    need, now = f"{MIN_WIDTH}x{MIN_HEIGHT}", f"{width}x{height}"
    wordings = [wording.format(need=need, now=now) for wording in strings.TOO_SMALL]
    return next((text for text in wordings if len(text) <= width), wordings[-1])


@dataclass(frozen=True)
class Arrangement:
    """What is on screen: the outline (a column, over the lesson, or not at all), the lesson,
    the side pane, or only the too-small message."""

    outline: Literal["column", "overlay", "hidden"]
    reading: bool
    side: bool
    too_small: bool = False


def arrange(
    size: SizeClass, side_shown: bool, reading_mode: bool, zoomed: bool, outline_open: bool
) -> Arrangement:
    """The panes on screen for a layout state. Zoom (the side pane alone) wins over reading mode
    (the lesson alone); on a narrow screen the side pane replaces the lesson."""
    if size == "too-small":
        return Arrangement("hidden", False, False, too_small=True)
    overlay: Literal["overlay", "hidden"] = "overlay" if outline_open else "hidden"
    if zoomed:
        return Arrangement(overlay, reading=False, side=True)
    if reading_mode:
        return Arrangement(overlay, reading=True, side=False)
    if size == "wide":
        return Arrangement("column", reading=True, side=side_shown)
    if size == "narrow":
        return Arrangement(overlay, reading=not side_shown, side=side_shown)
    return Arrangement(overlay, reading=True, side=side_shown)


def side_default(size: SizeClass, preference: SidePreference) -> bool:
    """Whether the side pane shows when the screen takes layout ``size``: on a narrow screen the
    lesson comes first; elsewhere the learner's F6 choice, and by default only where the lesson
    keeps its room (wide)."""
    if size == "narrow":
        return False
    if preference == "auto":
        return size == "wide"
    return preference == "shown"


class LessonCommands(CommandsProvider):
    """The palette over the lesson: its keys' commands, every section, every lesson and the
    study entries with no key of their own."""

    scope = "main"

    def extra_entries(self) -> list[PaletteEntry]:
        return cast("ShardbookApp", self.app).palette_entries()


class MainScreen(Screen[None]):
    """The lesson: outline, reading pane, side pane (see module docstring)."""

    COMMANDS = {LessonCommands}

    BINDINGS = [
        *bindings("main"),
        Binding("escape", "close_outline", "Close outline", show=False, id="close_outline"),
    ]

    size_class: reactive[SizeClass] = reactive[SizeClass]("medium", init=False)
    side_shown = reactive(False, init=False)
    reading_mode = reactive(False, init=False)
    zoomed = reactive(False, init=False)
    outline_open = reactive(False, init=False)

    class SettingChanged(Message):
        """A layout choice the learner made, to remember in ``settings.yaml``."""

        def __init__(self, key: str, value: Any) -> None:
            super().__init__()
            self.key = key
            self.value = value

    def __init__(
        self,
        *,
        side: SidePreference = "auto",
        reading: bool = False,
        first_run: bool = False,
    ) -> None:
        super().__init__()
        self.side_preference: SidePreference = side
        self.set_reactive(MainScreen.reading_mode, reading)
        self.first_run = first_run
        self.lesson: Lesson | None = None
        self.lesson_error = ""
        self.progress = LessonProgress("")
        self.current_section = META_ID
        # The last usable size class: coming back from too small keeps the layout as it was.
        self._usable: SizeClass | None = None
        # Where the lesson was left (restore_place), and the reading pane's top still to be
        # scrolled to: (section, block, line).
        self._resume = ResumeState()
        self._pending_scroll: tuple[str, int, int] | None = None
        # The last search, shown again when search opens.
        self.search_query = ""
        # Guided study: ctrl+n, the plan view, the plan's marks (tui/screens/guide.py).
        self.guide = StudyGuide(self)

    # ----------------------------------------------------------------- composition
    def compose(self) -> ComposeResult:
        yield Header(icon="")
        with Horizontal(id="main"):
            yield OptionList(id="outline")
            yield VerticalScroll(id="reading")
            # Every tab is built on first view (tui.widgets.side): start-up stays fast.
            with SideTabs(id="side", initial="ledger"):
                yield LazyTabPane(strings.TAB_LEDGER, "tui.widgets.ledger:LedgerPane", id="ledger")
                yield LazyTabPane(strings.TAB_BUBBLE, "tui.widgets.bubble:BubblePane", id="bubble")
                yield LazyTabPane(
                    strings.TAB_DIAGRAMS, "tui.widgets.diagrams:DiagramsPane", id="diagrams"
                )
                yield LazyTabPane(
                    strings.TAB_COLLECTIVES,
                    "tui.widgets.collectives:CollectivesPane",
                    id="collectives",
                )
                yield LazyTabPane(
                    strings.TAB_TRADEOFFS, "tui.widgets.tradeoffs:TradeoffsPane", id="tradeoffs"
                )
                yield LazyTabPane(strings.TAB_LAB, "tui.widgets.lab:LabPane", id="lab")
        yield Static("", id="too-small", markup=False)
        # The palette's own hint would overflow 80 columns; ctrl+p is in F1 and the README.
        yield KeysFooter(compact=True, show_command_palette=False)

    def on_mount(self) -> None:
        width, height = self.app.size
        first = size_class(width, height)
        self.set_reactive(MainScreen.size_class, first)
        self.add_class(f"-{first}")
        if first != "too-small":
            self._usable = first
            self.set_reactive(MainScreen.side_shown, side_default(first, self.side_preference))
        self._resized(width, height)
        # Before the first arrangement, so only the side tab shown is built.
        self._restore_layout(self._resume, initial=True)
        self._arrange()
        self._show_opened_lesson()
        self._restore_section(self._resume)
        reading = self.query_one("#reading")
        self.watch(reading, "scroll_y", self._reading_scrolled, init=False)

    def on_resize(self, event: events.Resize) -> None:
        self._resized(event.size.width, event.size.height)

    def _resized(self, width: int, height: int) -> None:
        self.size_class = size_class(width, height)
        self.query_one("#too-small", Static).update(too_small_message(width, height))

    # ----------------------------------------------------------------- layout state
    def watch_size_class(self, old: SizeClass, new: SizeClass) -> None:
        self.remove_class(f"-{old}")
        self.add_class(f"-{new}")
        if new != "too-small" and new != self._usable:
            self._usable = new
            self.outline_open = False
            self.side_shown = side_default(new, self.side_preference)
        self._arrange()

    def watch_side_shown(self) -> None:
        self._arrange()

    def watch_reading_mode(self, reading: bool) -> None:
        self.post_message(self.SettingChanged("layout.reading", reading))
        self._arrange()

    def watch_zoomed(self) -> None:
        self._arrange()

    def watch_outline_open(self) -> None:
        self._arrange()

    @property
    def arrangement(self) -> Arrangement:
        """What is on screen now (see :func:`arrange`)."""
        return arrange(
            self.size_class, self.side_shown, self.reading_mode, self.zoomed, self.outline_open
        )

    def _arrange(self) -> None:
        shown = self.arrangement
        self.set_class(shown.outline == "column", "-outline-column")
        self.set_class(shown.outline == "overlay", "-outline-overlay")
        self.set_class(not shown.reading, "-reading-hidden")
        self.set_class(shown.side, "-side-shown")
        self.set_class(self.zoomed, "-zoom")
        if shown.side:
            self.query_one(SideTabs).show_panes()
        self.call_after_refresh(self._keep_focus_on_screen)

    async def _keep_focus_on_screen(self) -> None:
        """Move the focus out of a pane that was just hidden, to the pane now in its place."""
        focused = self.focused
        shown = self.arrangement
        if shown.too_small:
            return
        hidden = [
            pane
            for pane, on_screen in (
                ("#outline", shown.outline != "hidden"),
                ("#reading", shown.reading),
                ("#side", shown.side),
            )
            if not on_screen
        ]
        if focused is not None and not any(
            self.query_one(pane) in focused.ancestors_with_self for pane in hidden
        ):
            return
        if shown.reading:
            # At once (Widget.focus is deferred): a jump that focuses a field meanwhile wins.
            self.set_focus(self.query_one("#reading"))
        elif shown.side:
            await self._focus_side_pane()

    async def _focus_side_pane(self) -> None:
        """Focus the active side tab's first field, once its pane is built."""
        side = self.query_one(SideTabs)
        pane = side.get_pane(side.active)
        if isinstance(pane, LazyTabPane):
            await pane.ready()
        self._focus_tab_pane(pane)

    # ----------------------------------------------------------------- the lesson
    def show_lesson(self, lesson: Lesson | None, error: str, progress: LessonProgress) -> None:
        """Show ``lesson`` (None: ``error`` says why it cannot be opened) with the learner's
        ``progress``, from its first page; the side panes already built show its saved forms
        and notes (the others read them when first shown)."""
        self.lesson = lesson
        self.lesson_error = error
        self.progress = progress
        if self.is_mounted:  # else on_mount shows it
            self._show_opened_lesson()

    def _show_opened_lesson(self) -> None:
        self.guide.forget_states()
        self._fill_outline()
        self.current_section = ""
        self.show_section(META_ID)
        # A pane still being built reads the progress itself when it mounts.
        progress = self.progress
        for calculator in self.query(CalculatorPane):
            if calculator.is_mounted:
                calculator.restore(progress.forms.get(calculator.form_name, {}))
        for diagrams in self.query("DiagramsPane"):
            if diagrams.is_mounted:
                cast("DiagramsPane", diagrams).refresh_notes()
        for tradeoffs in self.query("TradeoffsPane"):
            if tradeoffs.is_mounted:
                cast("TradeoffsPane", tradeoffs).load_notes(self.lesson, progress.notes)

    @property
    def sections(self) -> tuple[Section, ...]:
        return self.lesson.sections if self.lesson is not None else ()

    def _fill_outline(self) -> None:
        outline = self.query_one("#outline", OptionList)
        outline.clear_options()
        options = [Option(BrokenLines(strings.META_SECTION), id=META_ID)]
        options.extend(
            Option(self.guide.outline_prompt(section), id=section.id) for section in self.sections
        )
        outline.add_options(options)
        outline.highlighted = 0

    @on(OptionList.OptionHighlighted, "#outline")
    def _outline_moved(self, event: OptionList.OptionHighlighted) -> None:
        if event.option_index != event.option_list.highlighted:
            return  # the outline moved on since (a section restored or jumped to)
        if event.option.id and event.option.id != self.current_section:
            self.show_section(event.option.id)

    @on(OptionList.OptionSelected, "#outline")
    def _outline_chosen(self) -> None:
        if self.outline_open:
            self.outline_open = False
        self.query_one("#reading").focus()

    def show_section(self, section_id: str) -> AwaitMount:
        """Fill the reading pane with one section, and its answer boxes where it has them.
        Moving forward past a section reads it (posted as a :class:`SectionMoved`). Returns the
        mount of its widgets, for a caller that must wait until they are there."""
        left = self.current_section
        if section_id != left and left:
            self.first_run = False  # the hint was seen on the lesson's first page
            self.post_message(SectionMoved(left, section_id))
        self.current_section = section_id
        reading = self.query_one("#reading", VerticalScroll)
        reading.remove_children()
        reading.scroll_home(animate=False)
        widgets = self._section_widgets(section_id)
        if any(section.id == section_id for section in self.sections):
            # Once laid out, a section that fits on screen is read as soon as it is shown.
            widgets.append(SectionEnd(section_id))
        return reading.mount_all(widgets)

    def refresh_section(self) -> None:
        """Show the current section again (the progress it shows changed underneath)."""
        self.show_section(self.current_section)

    def _section_widgets(self, section_id: str) -> list[Widget]:
        if self.lesson is None:
            return [
                Static(strings.LESSON_ERROR_TITLE, classes="section-title"),
                BrokenText(self.lesson_error, classes="error"),
                Static(strings.LESSON_ERROR_HINT, markup=False),
            ]
        widgets: list[Widget] = []
        if section_id == META_ID:
            if self.first_run:
                widgets.append(BrokenText(strings.FIRST_RUN_HINT, classes="hint first-run"))
            widgets.append(BrokenText(self.lesson.title, classes="section-title"))
            status = strings.MY_STATUS.format(status=STATUS_LABELS[self.progress.status])
            widgets.extend(block_widget(block) for block in meta_blocks(self.lesson, status))
            widgets.extend(self.guide.meta_widgets())
            return widgets
        section = self.lesson.section(section_id)
        widgets.append(BrokenText(section.title, classes="section-title"))
        study = self.guide.section_widgets(section)
        if study is not None:
            return widgets + study
        if section.kind == "self-check":
            widgets.append(Static(strings.SELF_CHECK_HINT, classes="hint"))
            widgets.extend(
                SelfCheckBox(
                    item,
                    number,
                    self.progress.answers.get(item.id, ""),
                    item.id in self.progress.revealed,
                )
                for number, item in enumerate(section.items, start=1)
            )
            return widgets
        widgets.extend(block_widget(block) for block in section_blocks(section))
        if section.kind == "reflection":
            widgets.append(Static(strings.REFLECTION_HINT, classes="hint"))
            widgets.extend(
                NoteBox(
                    "reflections",
                    item,
                    self.progress.reflections.get(item.id, ""),
                    item.text,
                    strings.REFLECTION_PLACEHOLDER,
                )
                for item in section.items
            )
        return widgets

    def goto(self, index: int) -> None:
        """Read the outline's entry ``index`` (0: the lesson's header) and focus its first text
        box, or the reading pane so arrows scroll it."""
        self.zoomed = False
        if self.size_class == "narrow":
            self.side_shown = False
        self.outline_open = False
        outline = self.query_one("#outline", OptionList)
        outline.highlighted = index
        option_id = outline.get_option_at_index(index).id
        mounting = None
        if option_id is not None and option_id != self.current_section:
            mounting = self.show_section(option_id)
        self.call_later(self._focus_reading, mounting)

    async def _focus_reading(self, mounting: AwaitMount | None = None) -> None:
        if mounting is not None:
            await mounting  # the section's boxes are there to focus
        boxes = self.query("#reading TextArea")
        self.set_focus(boxes.first() if boxes else self.query_one("#reading"))

    # ----------------------------------------------------------------- actions
    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if self.size_class == "too-small":
            return False  # nothing of the lesson is on screen to act on
        if action == "close_outline":
            return self.outline_open
        return True

    async def action_side_tab(self, tab: str) -> None:
        """Show side tab ``tab`` and focus its first field (F4 on Diagrams: Collectives)."""
        side = self.query_one(SideTabs)
        if tab == "diagrams" and side.active == "diagrams" and self.arrangement.side:
            tab = "collectives"
        self._focus_tab_pane(await self.open_side_tab(tab))

    async def open_side_tab(self, tab: str) -> TabPane:
        """Show side tab ``tab`` and return its pane once its content is built."""
        side = self.query_one(SideTabs)
        self.reading_mode = False
        self.side_shown = True
        side.active = tab
        pane = side.get_pane(tab)
        if isinstance(pane, LazyTabPane):
            await pane.ready()
        return pane

    def _focus_tab_pane(self, pane: TabPane) -> None:
        for child in pane.children:
            focus_first = getattr(child, "focus_first", None)
            if focus_first is not None:
                focus_first()
                return
        self.query_one(SideTabs).focus()

    async def action_toggle_side(self) -> None:
        """F6: hide the side pane, or show it (on a narrow screen: switch pane). Remembered."""
        showing = self.arrangement.side
        self.zoomed = False
        self.reading_mode = False
        self.side_shown = not showing
        if self.size_class != "narrow":
            self.side_preference = "shown" if self.side_shown else "hidden"
            self.post_message(self.SettingChanged("layout.side", self.side_preference))
        if self.side_shown:
            await self._focus_side_pane()

    def action_toggle_reading(self) -> None:
        """F7: the lesson takes the whole screen, or back. Remembered."""
        self.zoomed = False
        self.reading_mode = not self.reading_mode

    def action_toggle_zoom(self) -> None:
        """F5: the side pane takes the whole screen, or back."""
        self.reading_mode = False
        self.zoomed = not self.zoomed

    def action_focus_outline(self) -> None:
        """ctrl+o: go to the outline (over the lesson where it is not a column); again: back."""
        outline = self.query_one("#outline", OptionList)
        if self.outline_open and self.focused is outline:
            self.action_close_outline()
            return
        self.zoomed = False
        if self.size_class != "wide" or self.reading_mode:
            self.outline_open = True
            self.call_after_refresh(outline.focus)  # focusable once the overlay is drawn
        else:
            # At once, not queued: a key that follows ctrl+o in the same burst goes to the outline.
            self.set_focus(outline)

    def action_close_outline(self) -> None:
        self.outline_open = False
        self.query_one("#reading").focus()

    def action_next_section(self, step: int = 1) -> None:
        """``]`` (``[``: ``step`` -1): read the next (previous) section; the lesson comes back
        on screen if it was not."""
        outline = self.query_one("#outline", OptionList)
        self.zoomed = False
        if self.size_class == "narrow":
            self.side_shown = False
        if outline.option_count:
            outline.highlighted = ((outline.highlighted or 0) + step) % outline.option_count
        reading = self.query_one("#reading")
        if self.focused is None or reading in self.focused.ancestors:
            # The focused item goes with the section it was in; the reader keeps the focus.
            self.set_focus(reading)

    # ----------------------------------------------------------------- where the lesson was left
    class PlaceChanged(Message):
        """The section, the side tab or the scroll position changed (the App writes where the
        lesson was left a moment after the last change, never on every scroll)."""

    def restore_place(self, state: ResumeState) -> None:
        """Show the lesson where it was left (``state``): its section and scroll position, the
        side tab and, where the layout shows one there, the side pane, and each side pane's
        choices. A section or a choice that no longer exists is left at its default, without a
        word. Before the screen is mounted, this happens when it is (and before its first frame
        builds any side tab)."""
        self._resume = state
        if not self.is_mounted:
            return
        self._restore_layout(state, initial=False)
        self._restore_section(state)
        side = self.query_one(SideTabs)
        for pane in side.query(LazyTabPane):
            for child in pane.children:
                restore = getattr(child, "restore_choices", None)
                if restore is not None:
                    restore(state.panes.get(str(pane.id), {}))

    def _restore_layout(self, state: ResumeState, initial: bool) -> None:
        """The side tab, and the side pane shown or hidden when the layout is the one it was
        left at (elsewhere the layout's rule and F6's choice decide). ``initial``: before the
        first arrangement, which builds the tab shown."""
        side = self.query_one(SideTabs)
        if state.side_tab and side.query(f"#{state.side_tab}"):
            side.active = state.side_tab
            if initial:
                side.build_after_first_frame()
        if state.side_shown is None or state.side_size != self.size_class:
            return
        if initial:
            self.set_reactive(MainScreen.side_shown, state.side_shown)
        else:
            self.side_shown = state.side_shown

    def _restore_section(self, state: ResumeState) -> None:
        ids = [META_ID, *(section.id for section in self.sections)]
        if self.lesson is None or state.section not in ids:
            return
        self.query_one("#outline", OptionList).highlighted = ids.index(state.section)
        if state.section != self.current_section:
            self.show_section(state.section)
        if state.block or state.line:
            self._pending_scroll = (state.section, state.block, state.line)
            # In the reading pane's queue: after the scroll home that show_section queued there.
            self.query_one("#reading").call_after_refresh(self._restore_scroll, 5)

    def _restore_scroll(self, tries: int) -> None:
        """Scroll the reading pane to the block and line of ``_pending_scroll`` once the section
        is laid out (``tries`` more frames at most)."""
        if self._pending_scroll is None:
            return
        section, block, line = self._pending_scroll
        reading = self.query_one("#reading", VerticalScroll)
        children = [child for child in reading.children if child.display]
        if section != self.current_section or block >= len(children):
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
        if self._pending_scroll is not None and self._pending_scroll[0] == self.current_section:
            return self._pending_scroll[1:]
        reading = self.query_one("#reading", VerticalScroll)
        top = reading.scrollable_content_region.y
        if not reading.region.height:
            previous = self._resume
            same = previous.section == self.current_section
            return (previous.block, previous.line) if same else (0, 0)
        children = [child for child in reading.children if child.display]
        for index, child in enumerate(children):
            if child.region.bottom > top:
                return index, max(0, top - child.region.y)
        return 0, 0

    def place(self) -> ResumeState | None:
        """Where the lesson is now (what :meth:`restore_place` restores); None while the lesson's
        panes are not there (being built, or taken down as the app exits): nothing to read."""
        sides = self.query(SideTabs)
        if not sides:
            return None
        side = sides.first(SideTabs)
        panes = {name: dict(choices) for name, choices in self._resume.panes.items()}
        for pane in side.query(LazyTabPane):
            for child in pane.children:
                choices = getattr(child, "choices", None)
                if choices is not None:
                    panes[str(pane.id)] = choices()
        block, line = self._reading_anchor()
        usable = self.size_class in SIDE_SIZES
        return ResumeState(
            section=self.current_section,
            block=block,
            line=line,
            side_tab=str(side.active or ""),
            side_shown=self.side_shown if usable else self._resume.side_shown,
            side_size=self.size_class if usable else self._resume.side_size,
            panes=panes,
        )

    @on(OptionList.OptionHighlighted, "#outline")
    def _section_place_changed(self) -> None:
        self.post_message(self.PlaceChanged())

    @on(SideTabs.TabActivated)
    def _tab_place_changed(self) -> None:
        self.post_message(self.PlaceChanged())

    # ----------------------------------------------------------------- search and my notes
    def _section_titles(self) -> dict[str, str]:
        return {META_ID: strings.META_SECTION, **{s.id: s.title for s in self.sections}}

    async def action_search(self) -> None:
        """``/`` or ctrl+f: search the lesson and the learner's text (tui.screens.search)."""
        from tui.screens.search import SearchScreen

        if self.lesson is None:
            self.app.notify(self.lesson_error, severity="error")
            return
        screen = SearchScreen(self.lesson, self.progress, self.search_query, self._section_titles())
        await self.app.push_screen(screen, self._search_closed)
        # At once, not on the screen's resume: a key typed right after ctrl+f is the query's.
        screen.set_focus(screen.query_input)

    async def _search_closed(self, result: SearchResult | None) -> None:
        if result is None:
            return
        self.search_query = result.query
        if result.hit is not None:
            await self.jump_to(result.hit.place, (result.hit.start, result.hit.end))

    async def action_my_notes(self) -> None:
        """ctrl+e: every answer, reflection and exercise note, in the lesson's order."""
        from tui.screens.search import NotesScreen

        if self.lesson is None:
            self.app.notify(self.lesson_error, severity="error")
            return
        screen = NotesScreen(self.lesson, self.progress, self._section_titles())
        await self.app.push_screen(screen, self._notes_closed)

    async def _notes_closed(self, place: Place | None) -> None:
        if place is not None:
            await self.jump_to(place, None)

    async def jump_to(self, place: Place, span: tuple[int, int] | None) -> None:
        """Show ``place``: lesson text with ``span`` (offsets into ``place.text``) marked in
        the reader; the learner's text in its box, focused, with ``span`` selected (None: the
        cursor at the end); an exercise note in its side pane."""
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
        for box in reading.query(NoteBox):
            if box.kind == place.source and box.item.id == place.item_id:
                self._enter_box(box, span)
                return

    async def _read_section(self, section_id: str) -> VerticalScroll:
        """Show section ``section_id`` in the reading pane (on screen) and wait until its
        widgets are mounted."""
        self.zoomed = False
        self.outline_open = False
        if self.size_class == "narrow":
            self.side_shown = False
        # Now, into the pane shown: the focus then stays where the jump puts it (the layout's
        # own focus keeping moves it only out of a pane just hidden).
        reading = self.query_one("#reading", VerticalScroll)
        self.set_focus(reading, scroll_visible=False)
        ids = [META_ID, *(section.id for section in self.sections)]
        if section_id in ids:
            self.query_one("#outline", OptionList).highlighted = ids.index(section_id)
            if section_id != self.current_section:
                self.show_section(section_id)
        await AwaitMount(reading, list(reading.children))
        return reading

    def _mark_in_reader(self, reading: VerticalScroll, text: str, span: tuple[int, int]) -> None:
        target = next((t for t in reading.query(BrokenText) if text in t.text), None)
        if target is None:
            return
        offset = target.text.index(text)
        start, end = offset + span[0], offset + span[1]
        box = next((node for node in target.ancestors if isinstance(node, SelfCheckBox)), None)
        if box is not None and not box.query_one(".key-points", Vertical).display:
            box.show_key_points()  # a match in key points the learner had hidden again
        target.highlight(start, end)
        self.set_focus(reading)
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
        if not place.pane:
            self.app.notify(strings.NOTE_NOWHERE, severity="warning")
            return
        side = self.query_one(SideTabs)
        self.zoomed = False
        self.reading_mode = False
        self.outline_open = False
        self.side_shown = True
        side.active = place.pane
        self.set_focus(side.query_one(Tabs), scroll_visible=False)  # see _read_section
        tab = side.get_pane(place.pane)
        if isinstance(tab, LazyTabPane):
            await tab.ready()
        show_strategy = getattr(tab.children[0] if tab.children else None, "show_strategy", None)
        if place.strategy and show_strategy is not None:
            from engine.diagrams import STRATEGY_NAMES

            if place.strategy in STRATEGY_NAMES:
                await show_strategy(place.strategy)
        for box in tab.query(NoteBox):
            if box.item.id == place.item_id:
                self._enter_box(box, span)
                return
        self._focus_tab_pane(tab)

    # ----------------------------------------------------------------- guided study
    async def action_next_step(self) -> None:
        """ctrl+n: the next unfinished step of the plan, with the cursor where it is done."""
        await self.guide.next_step()

    def action_study_plan(self) -> None:
        """F11: the study plan; enter on a step goes to it."""
        from tui.screens.study import PlanScreen

        if self.lesson is None:
            self.notify(self.lesson_error, severity="error")
            return
        plan = self.guide.plan(reviews=True)
        session_line = getattr(self.app, "session_line", lambda: "")()
        self.app.push_screen(PlanScreen(plan, session_line), self._plan_chosen)

    async def _plan_chosen(self, step_id: str | None) -> None:
        if step_id:
            await self.guide.go_to_step(step_id)

    async def go_to_step(self, step_id: str) -> None:
        """Go to step ``step_id`` of the plan, with the cursor where it is done."""
        await self.guide.go_to_step(step_id)

    @on(StepChosen)
    async def _step_chosen(self, event: StepChosen) -> None:
        event.stop()
        await self.guide.go_to_step(event.step_id)

    def refresh_study(self) -> str:
        """The progress changed (saved): redraw the plan's marks where they changed; returns
        the plan's figure for the header."""
        if not self.is_mounted:
            return ""
        return self.guide.refresh()

    def _reading_scrolled(self) -> None:
        self.post_message(self.PlaceChanged())
        self.guide.check_section_end()

    @on(SectionEnd.LaidOut)
    def _section_laid_out(self, event: SectionEnd.LaidOut) -> None:
        event.stop()
        self.guide.check_section_end()
