"""The side pane, built on first view: a hidden side pane costs nothing at start-up.

Each side tab's content imports its engine module (numpy for the pipeline and collectives
simulators) and mounts dozens of widgets, and Textual's tab widgets (``TabbedContent``,
``Tabs``) are modules of their own. :class:`SideTabs` is a plain container, the side pane's
column: where the side pane starts hidden (an 80-column terminal gives the lesson the room),
neither the tab row nor Textual's tab modules are imported before it is first shown; it then
mounts :class:`~tui.widgets.side_tabs.LazyTabbedContent`, which builds a tab's content (a
:class:`SideTab`, named by import path) the first time that tab is active, however it is
activated (F-key, click, palette, or ``active`` set in code).

Every tab stays visible: where the full names do not fit the pane's width, shortened ones (each
marked with a dot) are shown instead.

Data down, one path: the main screen hands the opened lesson and the learner's progress
(:class:`OpenedLesson`) to :meth:`SideTabs.show_lesson`, when the lesson opens and whenever
another one does; each :class:`SideTab` keeps it and hands it to its content, at once when the
content is built, else when it builds it. Each content (a :class:`SidePane`) has the same method
and shows what it was given, whether it comes before the pane is mounted (it is shown when it
is) or after (shown at once). Choices remembered where the lesson was left (``engine.resume``:
Diagrams' strategy, Trade-offs' pickers, Collectives' step) come down the same way
(:meth:`SideTabs.restore_choices`), and are read back with :meth:`SideTabs.choices`; a pane
posts :class:`ChoicesChanged` when the learner changes one.

Each tab remembers the widget last focused in it (:meth:`SideTabs.focused_last`): the main screen
gives it the focus again when the learner comes back to the tab.
"""

from __future__ import annotations

import asyncio
import importlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol, cast

from textual import events
from textual.app import ComposeResult
from textual.dom import DOMNode
from textual.message import Message
from textual.widget import Widget

from engine.lesson import Lesson
from engine.progress import LessonProgress

if TYPE_CHECKING:
    from tui.widgets.side_tabs import LazyTabbedContent


class ChoicesChanged(Message):
    """A side pane's remembered choice changed (a strategy, a link, a step): the app writes where
    the lesson was left a moment later."""


@dataclass(frozen=True)
class OpenedLesson:
    """What the side panes show: the lesson opened (None: it could not be opened) and the
    learner's progress for it (the app edits it in place and saves it; the panes only read it
    and post their edits up)."""

    lesson: Lesson | None = None
    progress: LessonProgress = field(default_factory=lambda: LessonProgress(""))


class SidePane(Protocol):
    """What a side pane's class offers its tab (see module docstring). ``choices`` and
    ``restore_choices`` are optional: a pane with nothing to remember has neither."""

    def show_lesson(self, opened: OpenedLesson) -> None:
        """Show ``opened``: at once when mounted, else when the pane is mounted."""


class SideTab:
    """One side tab: its title, its id and its content, ``module:ClassName`` (a
    :class:`SidePane` built with no arguments), imported and built on first need. It keeps the
    opened lesson and the remembered choices until then (see module docstring)."""

    def __init__(self, title: str, factory: str, *, id: str) -> None:
        self.title = title
        self.factory = factory
        self.id = id
        self.content: Widget | None = None
        # The widget last focused in the content (see SideTabs.focused_last).
        self.last_focused: Widget | None = None
        self._opened = OpenedLesson()
        self._choices: Mapping[str, Any] = {}

    def build(self) -> Widget:
        """Import and build the content (once), the lesson and choices handed to it; the caller
        mounts it."""
        if self.content is None:
            module_name, _, class_name = self.factory.partition(":")
            widget: Widget = getattr(importlib.import_module(module_name), class_name)()
            self.content = widget
            cast(SidePane, widget).show_lesson(self._opened)
            self._restore_content_choices()
        return self.content

    def show_lesson(self, opened: OpenedLesson) -> None:
        """Hand ``opened`` to the content: now when it is built, else when it is."""
        self._opened = opened
        if self.content is not None:
            cast(SidePane, self.content).show_lesson(opened)

    def restore_choices(self, choices: Mapping[str, Any]) -> None:
        """Hand the content its ``choices`` as the lesson was left: now when it is built, else
        when it is (``{}``: the defaults)."""
        self._choices = choices
        if self.content is not None:
            self._restore_content_choices()

    def _restore_content_choices(self) -> None:
        restore = getattr(self.content, "restore_choices", None)
        if restore is not None:
            restore(self._choices)

    def choices(self) -> dict[str, Any] | None:
        """The content's choices now; None while it is not built (or not yet mounted) and for
        a pane that remembers none."""
        content = self.content
        read = getattr(content, "choices", None)
        if content is None or not content.is_mounted or read is None:
            return None
        return dict(read())


class SideTabs(Widget):
    """The side pane's column: the tab row and the tabs' contents once first shown, nothing
    before (see module docstring).

    Until then the chosen tab is kept (:meth:`choose`, :attr:`current`) and the tabs'
    lesson and choices are kept by their :class:`SideTab`; :meth:`ready` builds the tab row and
    waits until one tab is active, :meth:`open_tab` also until that tab's content is mounted."""

    DEFAULT_CSS = """
    SideTabs LazyTabbedContent { height: 1fr; }
    SideTabs Tabs { padding-left: 1; }
    SideTabs Tab { padding: 0 1 0 0; }
    """

    def __init__(
        self, tabs: Iterable[SideTab], *, id: str, initial: str, build_tabs: bool = False
    ) -> None:
        """``build_tabs``: build the tab row with the widget (the side pane is in the first
        frame), not when it is first shown."""
        super().__init__(id=id)
        self.tabs = list(tabs)
        self._initial = initial
        self._build_with_widget = build_tabs
        self._build_after_first_frame = False
        self._tabbed: LazyTabbedContent | None = None
        self._built = asyncio.Event()

    def compose(self) -> ComposeResult:
        if self._build_with_widget:
            yield self._make_tabbed()

    def _make_tabbed(self, on_screen: bool = False) -> LazyTabbedContent:
        from tui.widgets.side_tabs import LazyTabbedContent

        self._tabbed = LazyTabbedContent(
            self.tabs,
            initial=self._initial,
            build_after_first_frame=self._build_after_first_frame,
            activated=self._built.set,
            on_screen=on_screen,
        )
        return self._tabbed

    @property
    def current(self) -> str:
        """The active tab's id; before the tab row is built, the one it will open on."""
        return (self._tabbed.active if self._tabbed is not None else "") or self._initial

    @property
    def active(self) -> str:
        """The active tab's id; ``""`` while the tab row is not built or none is active yet."""
        return self._tabbed.active if self._tabbed is not None else ""

    def has_pane(self, pane_id: str) -> bool:
        return any(tab.id == pane_id for tab in self.tabs)

    def choose(self, pane_id: str) -> None:
        """Make ``pane_id`` the active tab: now if the tab row is built, else the one it is
        built with (a caller that shows the side pane chooses first)."""
        self._initial = pane_id
        if self._tabbed is not None:
            self._leave_for(pane_id)
            self._tabbed.choose(pane_id)

    def _leave_for(self, pane_id: str) -> None:
        """Before another tab is shown, move the focus off the tab left (its widget is
        remembered) to the tab row: Textual moves the focus of a widget hidden to a sibling of
        it, hidden too, and TabbedContent then shows that tab again for a frame (F3 from the
        Diagrams picker focused the picture's scroll, and F4 gave that the focus back)."""
        tabbed = self._tabbed
        focused = self.screen.focused
        if tabbed is None or not tabbed.active or pane_id == tabbed.active or focused is None:
            return
        if tabbed in focused.ancestors:
            self.screen.set_focus(tabbed.tab_row, scroll_visible=False)

    def build_after_first_frame(self) -> None:
        """Build the first tab's content after the frame that first shows the side pane, not
        before it (a tab restored where the lesson was left: the first frame stays as fast as
        with the side pane hidden; the tab's content follows in the next frames)."""
        self._build_after_first_frame = True
        if self._tabbed is not None:
            self._tabbed.build_after_first_frame = True

    def show_panes(self) -> None:
        """The side pane is on screen: build the tab row and the active tab's content if they
        are not built yet (a tab row built with the widget builds no content before this)."""
        if self._tabbed is None:
            self.mount(self._make_tabbed(on_screen=True))
        else:
            self._tabbed.show_panes()

    async def ready(self) -> LazyTabbedContent:
        """Build the tab row if it is not yet, and wait until it is and one tab is active."""
        self.show_panes()
        await self._built.wait()
        assert self._tabbed is not None
        return self._tabbed

    async def open_tab(self, pane_id: str | None = None) -> Widget:
        """Make ``pane_id`` the active tab (None: the active one stays), and return its pane
        (Textual's ``TabPane``) once its content is built and mounted."""
        tabbed = await self.ready()
        if pane_id is not None:
            self._leave_for(pane_id)
            tabbed.active = pane_id
        return await tabbed.ready_pane(tabbed.active)

    def content(self, pane_id: str) -> Widget | None:
        """Tab ``pane_id``'s content once built and mounted; None before (or no such tab)."""
        tab = next((tab for tab in self.tabs if tab.id == pane_id), None)
        content = tab.content if tab is not None else None
        return content if content is not None and content.is_mounted else None

    def active_pane(self) -> Widget | None:
        """The active tab's pane (Textual's ``TabPane``); None while the tab row is not built."""
        if self._tabbed is None or not self._tabbed.active:
            return None
        return self._tabbed.get_pane(self._tabbed.active)

    def on_descendant_focus(self, event: events.DescendantFocus) -> None:
        # Not where Textual moves the focus of a widget hidden with the side pane (F6): to a
        # sibling, hidden too (the Diagrams picker's went to the picture's scroll).
        if not _shown_within(event.widget, self):
            return
        for tab in self.tabs:
            if tab.content is not None and tab.content in event.widget.ancestors_with_self:
                tab.last_focused = event.widget
                return

    def focused_last(self, pane_id: str) -> Widget | None:
        """The widget that last had the focus in tab ``pane_id``, where it can have it again
        (still there, shown and enabled); None if none can (the tab never had the focus, or
        that widget was rebuilt since: another strategy's note boxes)."""
        tab = next((tab for tab in self.tabs if tab.id == pane_id), None)
        widget = tab.last_focused if tab is not None else None
        if tab is None or widget is None or tab.content is None:
            return None
        if not widget.is_attached or not widget.focusable:
            return None
        return widget if _shown_within(widget, tab.content) else None

    def show_lesson(self, opened: OpenedLesson) -> None:
        """Hand ``opened`` to every tab, built or not."""
        for tab in self.tabs:
            tab.show_lesson(opened)

    def restore_choices(self, by_tab: Mapping[str, Mapping[str, Any]]) -> None:
        """Hand each tab its choices in ``by_tab`` (keyed by tab id; a tab not named gets
        ``{}``, its defaults), built or not."""
        for tab in self.tabs:
            tab.restore_choices(by_tab.get(tab.id, {}))

    def choices(self) -> dict[str, dict[str, Any]]:
        """The choices of every tab whose content is built and remembers some, by tab id."""
        found = {tab.id: tab.choices() for tab in self.tabs}
        return {tab_id: choices for tab_id, choices in found.items() if choices is not None}


def _shown_within(widget: Widget, top: Widget) -> bool:
    """Whether ``widget`` and its ancestors up to ``top`` (one of them) are all displayed."""
    node: DOMNode | None = widget
    while node is not None and node is not top:
        if not node.display:
            return False
        node = node.parent
    return node is top and top.display
