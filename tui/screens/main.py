"""The main screen: the lesson's outline, the reading pane and the side pane (the calculators),
laid out for the terminal's size.

The layout is state, held in reactive attributes and applied by their watchers, never kept in
step by hand: ``size_class`` (from the terminal's size), ``side_shown`` (F6), ``reading_mode``
(F7), ``zoomed`` (F5) and ``outline_open`` (ctrl+o where the outline is not a column). From them
:func:`~tui.screens.layout.arrange` decides what is on screen (the rules for wide, medium,
narrow and too small are in ``tui.screens.layout``), and the screen sets one CSS class per
decision.

Data flows down and messages up: the App hands the opened lesson and the learner's progress to
:meth:`MainScreen.show_lesson`, which hands them to every side tab (``tui.widgets.side``); the
App also gives the screen, as callables, what only it knows (the session line, its palette
entries, the recording of an objective's rating). The widgets' edits (``NoteBox.Edited``,
``CalculatorPane.FormChanged``...) bubble up to the App, which saves them, and a layout choice to
remember is posted as :class:`MainScreen.SettingChanged`. The lesson's keys are this screen's
bindings, so the quiz and help screens pushed over it simply do not have them.

Where the lesson was left (``engine.resume``) is read back with :meth:`MainScreen.place` and
restored with :meth:`MainScreen.restore_place` (by ``tui.screens.resume.PlaceKeeper``);
:class:`MainScreen.PlaceChanged` tells the App when it moved. Search (``/``, ctrl+f) and the
notes view (ctrl+e) are screens of their own (``tui.screens.search``); :meth:`MainScreen.jump_to`
shows what they chose (``tui.screens.jumps``). Guided study is ``tui.screens.guide``.

The module (about 720 lines) is the screen's layout state and its bindings together: each key
changes one of the reactive attributes above, and their watchers are the only code that lays
the screen out.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING, Any, cast

from textual import events, on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.dom import DOMNode
from textual.message import Message
from textual.reactive import reactive
from textual.screen import Screen
from textual.timer import Timer
from textual.widget import AwaitMount, Widget
from textual.widgets import Input, OptionList, Select, Static
from textual.widgets.option_list import Option

from engine.i18n import N_, gettext
from engine.lesson import Lesson, Section
from engine.progress import STATUS_LABELS, LessonProgress
from engine.reading import meta_blocks, section_blocks
from engine.resume import SIDE_SIZES, ResumeState
from tui import strings
from tui.commands import LESSON_BINDINGS, CommandsProvider, PaletteEntry
from tui.compositor import SpanCompositor
from tui.screens.guide import ReadingPane, SectionEnd, StudyGuide
from tui.screens.jumps import SearchJumps
from tui.screens.layout import (
    META_ID,
    SIZE_CLASSES,
    Arrangement,
    SidePreference,
    SizeClass,
    arrange,
    side_default,
    size_class,
    too_small_message,
)
from tui.screens.resume import PlaceKeeper
from tui.widgets.footer import KeysFooter
from tui.widgets.header import FittingHeader
from tui.widgets.reader import BrokenLines, BrokenText, block_widget
from tui.widgets.side import OpenedLesson, SideTab, SideTabs

if TYPE_CHECKING:
    from textual.widgets import TextArea

    from engine.search import Place
    from tui.widgets.calculator import CalculatorPane
    from tui.widgets.notes import SelfCheckBox


HINT_SEEN_SECONDS = 8.0
"""How long the first-run hint is on screen before it counts as seen (five keys to read)."""


class LessonCommands(CommandsProvider):
    """The palette over the lesson: its keys' commands, every section, every lesson and the
    study entries with no key of their own."""

    def commands_node(self) -> DOMNode:
        return self.screen

    def extra_entries(self) -> list[PaletteEntry]:
        screen = self.screen
        return screen.palette_entries() if isinstance(screen, MainScreen) else []


# The rows a Select's open list takes at most (Textual's SelectOverlay: 12, its border included).
OPEN_LIST_ROWS = 12


class MainScreen(Screen[None]):
    """The lesson: outline, reading pane, side pane (see module docstring)."""

    COMMANDS = {LessonCommands}
    # The first pane on screen takes the focus when the screen is composed (the layout's classes
    # are set by then): the outline where it is a column, else the lesson. Textual's default,
    # the first focusable widget, would focus the hidden outline and move it a frame later.
    AUTO_FOCUS = "MainScreen.-outline-column #outline, #reading"

    BINDINGS = [
        *LESSON_BINDINGS,
        Binding("escape", "close_outline", N_("Close outline"), show=False, id="close_outline"),
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
        zoomed: bool = False,
        keep_side: bool | None = None,
        first_run: bool = False,
        session_line: Callable[[], str] = str,
        app_entries: Callable[[], list[PaletteEntry]] = list,
        rate_objective: Callable[[str, str, str | None], None],
        record_text: Callable[[str, str, str], None],
        record_form: Callable[[CalculatorPane.FormChanged], None],
    ) -> None:
        """``side``, ``reading``: the layout choices remembered; ``zoomed``: the side pane
        takes the screen (F5; a language switch keeps it); ``keep_side``: the side pane shown or
        not as on the screen this one replaces (a language switch), at any size (None: the
        layout's rule, F6's choice and where the lesson was left decide); ``first_run``: the first
        page shows the first-run hint. The app that shows the screen gives it what only the
        app knows, as callables: ``session_line`` (this study session in one
        line, for the plan view), ``app_entries`` (the app's palette entries: lessons,
        languages, the session summary) and ``rate_objective`` (records an objective's rating:
        ``(objective id, phase, level or None)``, :meth:`tui.app.ShardbookApp.rate_objective`)
        ``record_text`` (records a box's text: ``(kind, item id, text)``,
        :meth:`tui.app.ShardbookApp.record_text`) and ``record_form`` (records a calculator's
        change, :meth:`tui.app.ShardbookApp.record_form`)."""
        super().__init__()
        self._compositor = SpanCompositor()
        self.session_line = session_line
        self.app_entries = app_entries
        self.rate_objective = rate_objective
        self.record_text = record_text
        self.record_form = record_form
        self.side_preference: SidePreference = side
        self.set_reactive(MainScreen.reading_mode, reading)
        self.set_reactive(MainScreen.zoomed, zoomed and not reading)
        self._keep_side = keep_side
        self.first_run = first_run
        # The first-run hint was put on screen, and its timer (HINT_SEEN_SECONDS) while it runs.
        self._hint_shown = False
        self._hint_timer: Timer | None = None
        self.lesson: Lesson | None = None
        self.lesson_error = ""
        self.progress = LessonProgress("")
        self.current_section = META_ID
        # The outline, built when first shown (see _arrange), and its mount while it is built.
        self._outline: OptionList | None = None
        self._outline_mounting: AwaitMount | None = None
        # The last usable size class: coming back from too small keeps the layout as it was.
        self._usable: SizeClass | None = None
        # Where the lesson was left (restore_place, place: tui/screens/resume.py).
        self.resume = PlaceKeeper(self)
        # The last search, shown again when search opens.
        self.search_query = ""
        # Search and the notes view (tui/screens/jumps.py).
        self.jumps = SearchJumps(self)
        # Guided study: ctrl+n, the plan view, the plan's marks (tui/screens/guide.py).
        self.guide = StudyGuide(self)

    # ----------------------------------------------------------------- composition
    def compose(self) -> ComposeResult:
        # The layout's classes before the widgets below exist: a class change restyles the
        # screen and every widget in it at once (Textual's update_styles), and on_mount finds
        # these already set.
        first = size_class(*self.app.size)
        shown = arrange(first, self._side_shown_at_start(), self.reading_mode, False, False)
        self._set_layout_classes(first, shown)
        yield FittingHeader(icon="")
        with Horizontal(id="main"):
            # The outline is built when first shown (a column, or ctrl+o over the lesson).
            if shown.outline != "hidden":
                yield self._make_outline()
            yield ReadingPane(id="reading")
            # The tabs are built when the side pane is first shown, and each tab's content on
            # its first view (tui.widgets.side): a side pane hidden at start costs nothing.
            tabs = [
                SideTab(strings.TAB_LEDGER, "tui.widgets.ledger:LedgerPane", id="ledger"),
                SideTab(strings.TAB_BUBBLE, "tui.widgets.bubble:BubblePane", id="bubble"),
                SideTab(strings.TAB_DIAGRAMS, "tui.widgets.diagrams:DiagramsPane", id="diagrams"),
                SideTab(
                    strings.TAB_COLLECTIVES,
                    "tui.widgets.collectives:CollectivesPane",
                    id="collectives",
                ),
                SideTab(
                    strings.TAB_TRADEOFFS, "tui.widgets.tradeoffs:TradeoffsPane", id="tradeoffs"
                ),
                SideTab(strings.TAB_LAB, "tui.widgets.lab:LabPane", id="lab"),
            ]
            yield SideTabs(tabs, id="side", initial="ledger", build_tabs=shown.side)
        yield Static("", id="too-small", markup=False)
        # The palette's own hint would overflow 80 columns; ctrl+p is in F1 and the README.
        yield KeysFooter(compact=True, show_command_palette=False)

    def _set_layout_classes(self, size: SizeClass, shown: Arrangement) -> None:
        """One class per layout decision, changed together: the screen and its widgets are
        restyled once, not once per class."""
        wanted = {
            f"-{size}": True,
            "-outline-column": shown.outline == "column",
            "-outline-overlay": shown.outline == "overlay",
            "-reading-hidden": not shown.reading,
            "-side-shown": shown.side,
            "-zoom": self.zoomed,
        }
        wanted.update({f"-{other}": False for other in SIZE_CLASSES if other != size})
        changed = False
        for name, add in wanted.items():
            if self.has_class(name) != add:
                self.set_class(add, name, update=False)
                changed = True
        if changed:
            self.update_node_styles()

    def _make_outline(self) -> OptionList:
        """The outline, with the lesson's entries and the section shown highlighted."""
        outline = OptionList(*self._outline_options(), id="outline")
        ids = self.section_ids()
        if self.current_section in ids and outline.option_count:
            outline.highlighted = ids.index(self.current_section)
        self._outline = outline
        return outline

    def outline(self) -> OptionList | None:
        """The outline; None until it is first shown (it is built then)."""
        return self._outline

    def _side_shown_at_start(self) -> bool:
        """Whether the first frame shows the side pane: what :meth:`on_mount` decides from the
        terminal's size, the learner's F6 choice and where the lesson was left."""
        first = size_class(*self.app.size)
        if first == "too-small":
            return False
        shown = side_default(first, self.side_preference)
        state = self.resume.state
        if state.side_shown is not None and state.side_size == first:
            shown = state.side_shown
        if self._keep_side is not None:
            shown = self._keep_side
        zoomed = state.zoomed and not self.reading_mode and first in SIDE_SIZES
        return arrange(first, shown, self.reading_mode, zoomed=zoomed, outline_open=False).side

    def on_mount(self) -> None:
        width, height = self.app.size
        first = size_class(width, height)
        self.set_reactive(MainScreen.size_class, first)
        if first != "too-small":
            self._usable = first
            self.set_reactive(MainScreen.side_shown, side_default(first, self.side_preference))
        self._resized(width, height)
        # Before the first arrangement, so only the side tab shown is built.
        self.resume.restore_layout(self.resume.state, initial=True)
        if self._keep_side is not None and first != "too-small":
            # A language switch is no restart: the side pane stays as it was at any size (below
            # 80 columns too, where a restart shows the lesson first), and with it the focus in
            # it, so the next key lands in the field typed in.
            self.set_reactive(MainScreen.side_shown, self._keep_side)
        self.resume.restore_choices(self.resume.state)
        self._arrange()
        self._show_opened_lesson()
        self.resume.restore_section(self.resume.state)
        self.resume.restore_focus_later(self.resume.state)
        reading = self.query_one("#reading")
        self.watch(reading, "scroll_y", self._reading_scrolled, init=False)

    def on_screen_resume(self) -> None:
        # Back from the quiz, whose self-check answer fills an empty answer of the lesson
        # (engine.quiz.session.QuizSession.answer): the box shown says what is stored.
        # By name: the answer boxes' module (and Textual's TextArea) is imported when a section
        # with boxes is first shown, not for the first frame.
        for box in self.query("SelfCheckBox"):
            text = self.progress.answers.get(cast("SelfCheckBox", box).item.id, "")
            # None yet in a box still being built.
            for area in cast("list[TextArea]", list(box.query("TextArea"))):
                if area.text != text:
                    area.load_text(text)

    def on_resize(self, event: events.Resize) -> None:
        self._resized(event.size.width, event.size.height)

    def _resized(self, width: int, height: int) -> None:
        self.size_class = size_class(width, height)
        # Written only while it is shown: Static.update lays the screen out again, even for
        # the same text, and a live resize sends many sizes.
        if self.size_class == "too-small":
            message = too_small_message(width, height)
            too_small = self.query_one("#too-small", Static)
            if too_small.content != message:
                too_small.update(message)

    # ----------------------------------------------------------------- layout state
    def watch_size_class(self, old: SizeClass, new: SizeClass) -> None:
        if new != "too-small" and new != self._usable:
            self._usable = new
            self.outline_open = False
            # The pane being worked in stays: a field typed in a moment ago must not vanish
            # under the next key (the layout's default decides only where the focus is not
            # in the side pane shown).
            side = self.query_one(SideTabs)
            working = self.focused is not None and side in self.focused.ancestors
            keep = working and self.arrangement.side
            self.side_shown = keep or side_default(new, self.side_preference)
        self._arrange()

    def watch_side_shown(self) -> None:
        self._arrange()

    def watch_reading_mode(self, reading: bool) -> None:
        self.post_message(self.SettingChanged("layout.reading", reading))
        self._arrange()

    def watch_zoomed(self) -> None:
        self._arrange()
        self.post_message(self.PlaceChanged())  # F5's zoom is kept where the lesson was left

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
        self._set_layout_classes(self.size_class, shown)
        if shown.side:
            self.query_one(SideTabs).show_panes()
        if shown.outline != "hidden" and self._outline is None:
            self._outline_mounting = self.query_one("#main").mount(
                self._make_outline(), before="#reading"
            )
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
                (self._outline, shown.outline != "hidden"),
                (self.query_one("#reading"), shown.reading),
                (self.query_one("#side"), shown.side),
            )
            if not on_screen and pane is not None
        ]
        if focused is not None and not any(pane in focused.ancestors_with_self for pane in hidden):
            return
        if shown.reading:
            # At once (Widget.focus is deferred): a jump that focuses a field meanwhile wins.
            self.set_focus(self.query_one("#reading"))
        elif shown.side:
            await self._focus_side_pane()

    async def _focus_side_pane(self) -> None:
        """Focus the active side tab's first field, once its pane is built."""
        side = self.query_one(SideTabs)
        pane = await side.open_tab()
        if pane.id is not None:
            await self.resume.side_focus_built(pane.id)
        focused = self.focused
        if focused is not None and side in focused.ancestors:
            return  # focused in the side pane meanwhile (a jump to a note there)
        self.focus_tab_pane(pane)

    # ----------------------------------------------------------------- the lesson
    def show_lesson(self, lesson: Lesson | None, error: str, progress: LessonProgress) -> None:
        """Show ``lesson`` (None: ``error`` says why it cannot be opened) with the learner's
        ``progress``, from its first page; every side pane is handed both (one built later
        shows them when it is)."""
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
        # Every side tab, built or not, the one way (tui.widgets.side): a pane not built yet
        # shows it when it is.
        self.query_one(SideTabs).show_lesson(OpenedLesson(self.lesson, self.progress))

    @property
    def sections(self) -> tuple[Section, ...]:
        return self.lesson.sections if self.lesson is not None else ()

    def section_ids(self) -> list[str]:
        """The outline's entries' ids in order: the lesson's header, then each section."""
        return [META_ID, *(section.id for section in self.sections)]

    def _outline_options(self) -> list[Option]:
        options = [Option(BrokenLines(strings.META_SECTION), id=META_ID)]
        options.extend(
            Option(self.guide.outline_prompt(section), id=section.id) for section in self.sections
        )
        return options

    def _fill_outline(self) -> None:
        outline = self._outline
        if outline is None:
            return  # filled when it is built
        outline.clear_options()
        outline.add_options(self._outline_options())
        outline.highlighted = 0

    @on(events.DescendantFocus)
    def _fit_open_list(self, event: events.DescendantFocus) -> None:
        # A Select's open list (an OptionList it holds, focused while open): Textual moves it up
        # to fit the screen, keeping its bottom margin (app.tcss) free for the footer, which
        # shows the key that closes it; on a short screen it is made short enough to fit.
        widget = event.widget
        if isinstance(widget, OptionList) and isinstance(widget.parent, Select):
            widget.styles.max_height = min(OPEN_LIST_ROWS, self.size.height - 1)

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
        Showing a section does not read it (:meth:`StudyGuide.check_section_end`). Returns the
        mount of its widgets, for a caller that must wait until they are there."""
        left = self.current_section
        if section_id != left and left:
            self.first_run = False  # the hint was seen on the lesson's first page
            if self._hint_shown:
                self.hint_seen()  # dismissed: the learner left the page it is on
        self.guide.scrolled_in = None
        self.current_section = section_id
        ids = self.section_ids()
        if self._outline is not None and section_id in ids:
            self._outline.highlighted = ids.index(section_id)  # the outline follows
        self.post_message(self.PlaceChanged())
        reading = self.query_one("#reading", VerticalScroll)
        reading.remove_children()
        reading.scroll_home(animate=False, immediate=True)
        widgets = self._section_widgets(section_id)
        if any(section.id == section_id for section in self.sections):
            # Once laid out, the reader can tell whether the section's end is on screen.
            widgets.append(SectionEnd(section_id))
        return reading.mount_all(widgets)

    def hint_seen(self) -> None:
        """The first-run hint was on screen :data:`HINT_SEEN_SECONDS`, or the learner left the
        page it is on: remembered (``hints.first_run_seen``), so it is not shown again. A window
        closed before then (a terminal closed a second after the start) shows it next time."""
        if self._hint_timer is not None:
            self._hint_timer.stop()
            self._hint_timer = None
            self.post_message(self.SettingChanged("hints.first_run_seen", True))

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
                if not self._hint_shown:
                    self._hint_shown = True
                    self._hint_timer = self.set_timer(HINT_SEEN_SECONDS, self.hint_seen)
            widgets.append(BrokenText(self.lesson.title, classes="section-title"))
            status = strings.MY_STATUS.format(status=gettext(STATUS_LABELS[self.progress.status]))
            widgets.extend(block_widget(block) for block in meta_blocks(self.lesson, status))
            widgets.extend(self.guide.meta_widgets())
            return widgets
        section = self.lesson.section(section_id)
        widgets.append(BrokenText(section.title, classes="section-title"))
        study = self.guide.section_widgets(section)
        if study is not None:
            return widgets + study
        from tui.widgets.notes import NoteBox, SelfCheckBox

        if section.kind == "self-check":
            widgets.append(BrokenText(strings.SELF_CHECK_HINT, classes="hint"))
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
            widgets.append(BrokenText(strings.REFLECTION_HINT, classes="hint"))
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
        section_id = self.section_ids()[index]
        mounting = None
        if section_id != self.current_section:
            mounting = self.show_section(section_id)
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
        """Show side tab ``tab`` and focus in it: the widget that had the focus there, else its
        first field; pressed with the focus in the tab, its first field (F4 on Diagrams:
        Collectives)."""
        side = self.query_one(SideTabs)
        if tab == "diagrams" and side.current == "diagrams" and self.arrangement.side:
            tab = "collectives"
        pane = side.active_pane()
        again = (
            side.current == tab
            and self.arrangement.side
            and pane is not None
            and self.focused is not None
            and pane in self.focused.ancestors
        )
        pane = await self.open_side_tab(tab)
        if not again:
            await self.resume.side_focus_built(tab)
        self.focus_tab_pane(pane, first=again, field=True)

    async def open_side_tab(self, tab: str) -> Widget:
        """Show side tab ``tab`` and return its pane (a ``TabPane``) once its content is
        built."""
        side = self.query_one(SideTabs)
        side.choose(tab)  # before the side pane is shown: its tabs may be built with it
        self.reading_mode = False
        self.side_shown = True
        return await side.open_tab(tab)

    def focus_tab_pane(self, pane: Widget, *, first: bool = False, field: bool = False) -> None:
        """Focus in side tab ``pane`` (a ``TabPane``): the widget that last had the focus there
        (the note box being written), else, or with ``first``, the pane's first field; then
        scroll the focused widget into view once laid out (a widget focused in a pane scrolled
        elsewhere, or laid out while hidden, is off screen: a key typed would land unseen).
        With ``field`` (the tab's key), a pane that had the focus itself gives its first field
        the focus instead."""
        back = None if first or pane.id is None else self.query_one(SideTabs).focused_last(pane.id)
        if back is None and not first and pane.id is not None:
            # The field the learner was in when the lesson was left, not given back then (the
            # side pane was not on screen at a narrower restart): their next key is meant for it.
            back = self.resume.side_focus(pane.id)
        content = next(iter(pane.children), None)
        if field and back is not None and back is content:
            # The pane itself had it: a scroll key or the wheel left its field out of view (or
            # Escape left the field). The tab's key asks for a field, as on a first visit; F6
            # shows the pane as it was left.
            back = None
        returning = back is not None
        if back is None:
            first_focus = getattr(content, "first_focus", None)
            back = first_focus() if first_focus is not None else None
        if back is not None:
            # At once, not with Widget.focus (deferred to the app's queue): this default focus is
            # chosen while ctrl+n may be placing the cursor in the same pane (the side pane
            # replacing the lesson at a narrow size calls it), and a deferred one landed after
            # ctrl+n's, in a field ctrl+n did not name: the learner's next keys replaced its
            # whole value (Textual's Input selects it on focus), out of sight.
            self.set_focus(back, scroll_visible=False)
            if returning and isinstance(back, Input):
                # Back in the field the learner was typing in: the cursor at its end, as after
                # a restart, not its whole value selected (Textual's Input on focus), which the
                # next key would replace.
                back.call_later(back.action_end)
        # Scrolled to once laid out: a pane just built, or scrolled elsewhere, has it off screen.
        self.app.call_later(self._scroll_to_focus, pane)

    def _scroll_to_focus(self, pane: Widget) -> None:
        focused = self.focused
        if focused is None or pane not in focused.ancestors:
            return
        # By name: the boxes' module (and Textual's TextArea) is imported by the panes that have
        # boxes, not by the others.
        if any(
            cls.__name__ == "NoteBox" for node in focused.ancestors for cls in type(node).__mro__
        ):
            # In a note box: the whole box, label included (its module is imported by then).
            from tui.widgets.notes import keep_focus_in_view

            keep_focus_in_view(pane)
        else:
            focused.call_after_refresh(focused.scroll_visible, animate=False)

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

    async def action_focus_outline(self) -> None:
        """ctrl+o: go to the outline (over the lesson where it is not a column); again: back."""
        outline = self._outline
        if outline is not None and self.outline_open and self.focused is outline:
            self.action_close_outline()
            return
        self.zoomed = False
        if self.size_class != "wide" or self.reading_mode:
            self.outline_open = True  # built now if it is not (see _arrange)
        outline = self._outline
        assert outline is not None  # shown, so built
        if self._outline_mounting is not None:
            await self._outline_mounting
        # At once, not queued: a key that follows ctrl+o in the same burst goes to the outline.
        self.set_focus(outline)

    def action_close_outline(self) -> None:
        self.outline_open = False
        self.query_one("#reading").focus()

    def action_next_section(self, step: int = 1) -> None:
        """``]`` (``[``: ``step`` -1): read the next (previous) section; the lesson comes back
        on screen if it was not."""
        self.zoomed = False
        if self.size_class == "narrow":
            self.side_shown = False
        ids = self.section_ids()
        if self.lesson is not None:
            index = ids.index(self.current_section) if self.current_section in ids else 0
            self.show_section(ids[(index + step) % len(ids)])
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
        self.resume.restore(state)

    def place(self) -> ResumeState | None:
        """Where the lesson is now (what :meth:`restore_place` restores); None while the lesson's
        panes are not there (being built, or taken down as the app exits): nothing to read."""
        return self.resume.place()

    def on_tabbed_content_tab_activated(self) -> None:
        # By name: the side tabs' module (and Textual's TabbedContent) is imported when the
        # side pane is first shown, not for the first frame.
        self.post_message(self.PlaceChanged())

    # ----------------------------------------------------------------- search and my notes
    async def action_search(self) -> None:
        """``/`` or ctrl+f: search the lesson and the learner's text (tui.screens.search)."""
        await self.jumps.search()

    async def action_my_notes(self) -> None:
        """ctrl+e: every answer, reflection and exercise note, in the lesson's order."""
        await self.jumps.my_notes()

    async def jump_to(self, place: Place, span: tuple[int, int] | None) -> None:
        """Show ``place``: lesson text with ``span`` (offsets into ``place.text``) marked in
        the reader; the learner's text in its box, focused, with ``span`` selected (None: the
        cursor at the end); an exercise note in its side pane."""
        await self.jumps.jump_to(place, span)

    # ----------------------------------------------------------------- guided study
    def take_in_focused_edit(self) -> None:
        """Record what was typed last in the answer or note box or the calculator with the
        focus, for a key that reads the plan (ctrl+n, F11, F9). The edit climbs to the app as a
        message, one queue per ancestor, and a priority key of the same burst ran before it
        arrived: ``g`` then ctrl+n said "write your note in the box" in the box just written,
        and the last activation input typed with ctrl+n left exercise 1 not done. The keys
        before it are in the box or field by then, and the field's pane computed with them
        (:class:`tui.keys.KeyOrderApp` hands out a key once the one before was handled)."""
        from tui.widgets.calculator import CalculatorPane
        from tui.widgets.notes import NoteBox

        focused = self.focused
        if focused is None:
            return
        box = focused.parent
        if isinstance(box, NoteBox) and focused is box.text_area:
            self.record_text(box.kind, box.item.id, box.text_area.text)
            return
        pane = next((node for node in focused.ancestors if isinstance(node, CalculatorPane)), None)
        if pane is not None and pane.last_change is not None:
            self.record_form(pane.last_change)

    async def action_next_step(self) -> None:
        """ctrl+n: the next unfinished step of the plan, with the cursor where it is done."""
        self.take_in_focused_edit()
        await self.guide.next_step()

    def action_study_plan(self) -> None:
        """F11: the study plan; enter on a step goes to it."""
        from tui.screens.study import PlanScreen

        if self.lesson is None:
            self.notify(self.lesson_error, severity="error")
            return
        self.take_in_focused_edit()
        plan = self.guide.plan(reviews=True)
        # Named before the plan takes the focus: ctrl+n goes on from where the learner is.
        following = self.guide.following()
        screen = PlanScreen(plan, self.session_line(), self.guide.go_to_step, following)
        self.app.push_screen(screen, self._plan_chosen)

    async def _plan_chosen(self, step_id: str | None) -> None:
        if step_id:
            await self.guide.go_to_step(step_id)

    def palette_entries(self) -> list[PaletteEntry]:
        """The palette's entries beyond the keys: the app's (``app_entries``), then every
        section of the lesson."""
        entries = self.app_entries()
        titles = [strings.META_SECTION, *(section.title for section in self.sections)]
        for index, title in enumerate(titles):
            entries.append(
                (
                    strings.PALETTE_GO_TO.format(title=title),
                    strings.PALETTE_GO_TO_HELP,
                    partial(self.goto, index),
                )
            )
        return entries

    def refresh_study(self) -> str:
        """The progress changed (saved): redraw the plan's marks where they changed; returns
        the plan's figure for the header."""
        if not self.is_mounted:
            return ""
        return self.guide.refresh()

    def _reading_scrolled(self) -> None:
        self.post_message(self.PlaceChanged())
        self.guide.check_section_end()

    @on(ReadingPane.LearnerScrolled)
    def _learner_scrolled(self, event: ReadingPane.LearnerScrolled) -> None:
        event.stop()
        self.resume.forget_pending_scroll()
        self.guide.scrolled_in = self.current_section
        self.guide.check_section_end()

    @on(SectionEnd.LaidOut)
    def _section_laid_out(self, event: SectionEnd.LaidOut) -> None:
        event.stop()
        self.resume.section_laid_out()
        self.guide.check_section_end()
