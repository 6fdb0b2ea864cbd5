"""The side tabs, built on first view: a hidden tab costs nothing at start-up.

Each side pane imports its engine module (numpy for the pipeline and collectives simulators) and
mounts dozens of widgets. A :class:`LazyTabPane` names its pane's class by import path and mounts
it the first time its tab is active while the side pane is on screen, however it is activated
(F-key, click, palette, or ``active`` set in code). Where the side pane starts hidden (an
80-column terminal gives the lesson the room), not even the Ledger is built before it is shown.

Every tab stays visible: where the full names do not fit the pane's width, shortened ones (each
marked with a dot) are shown instead.

Data down, one path: the main screen hands the opened lesson and the learner's progress
(:class:`OpenedLesson`) to every :class:`LazyTabPane` with ``show_lesson``, when the lesson
opens and whenever another one does; the tab pane keeps it and hands it to its pane, at once
when the pane is built, else when it builds it. Each pane (a :class:`SidePane`) has the same
method and shows what it was given, whether it comes before the pane is mounted (it is shown
when it is) or after (shown at once). Choices remembered where the lesson was left
(``engine.resume``: Diagrams' strategy, Trade-offs' pickers, Collectives' step) come down the
same way (``restore_choices``), and are read back with ``choices()``; a pane posts
:class:`ChoicesChanged` when the learner changes one.
"""

from __future__ import annotations

import asyncio
import importlib
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol, cast

from rich.cells import cell_len
from textual import events
from textual.app import ComposeResult
from textual.content import Content
from textual.message import Message
from textual.widget import AwaitMount, Widget
from textual.widgets import TabbedContent, TabPane

from engine.lesson import Lesson
from engine.progress import LessonProgress
from tui import strings
from tui.styles import SIDE_PANES, use_stylesheet


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


class LazyTabPane(TabPane):
    """A tab pane whose content, ``module:ClassName`` (a :class:`SidePane` built with no
    arguments), is imported and mounted on first activation; it hands the content the opened
    lesson and the pane's remembered choices (see module docstring)."""

    def __init__(self, title: str, factory: str, *, id: str) -> None:
        super().__init__(title, id=id)
        self.factory = factory
        self._mounting: AwaitMount | None = None
        self._content: Widget | None = None
        self._opened = OpenedLesson()
        self._choices: Mapping[str, Any] = {}

    @property
    def built(self) -> bool:
        return self._mounting is not None

    def build(self) -> None:
        """Import and mount the content (once), with the lesson and choices handed down."""
        if self._mounting is not None:
            return
        use_stylesheet(self.app, SIDE_PANES)  # its rules, before its first widget is styled
        module_name, _, class_name = self.factory.partition(":")
        widget: Widget = getattr(importlib.import_module(module_name), class_name)()
        self._content = widget
        cast(SidePane, widget).show_lesson(self._opened)
        self._restore_content_choices()
        self._mounting = self.mount(widget)

    async def ready(self) -> None:
        """Build the content if needed and wait until it is mounted (its ``on_mount`` has run)."""
        self.build()
        assert self._mounting is not None
        await self._mounting

    def show_lesson(self, opened: OpenedLesson) -> None:
        """Hand ``opened`` to the pane: now when it is built, else when it is."""
        self._opened = opened
        if self._content is not None:
            cast(SidePane, self._content).show_lesson(opened)

    def restore_choices(self, choices: Mapping[str, Any]) -> None:
        """Hand the pane its ``choices`` as the lesson was left: now when it is built, else
        when it is (``{}``: the defaults)."""
        self._choices = choices
        if self._content is not None:
            self._restore_content_choices()

    def _restore_content_choices(self) -> None:
        restore = getattr(self._content, "restore_choices", None)
        if restore is not None:
            restore(self._choices)

    def choices(self) -> dict[str, Any] | None:
        """The pane's choices now; None while it is not built (or not yet mounted) and for a
        pane that remembers none."""
        content = self._content
        read = getattr(content, "choices", None)
        if content is None or not content.is_mounted or read is None:
            return None
        return dict(read())


class SideTabs(TabbedContent):
    """A TabbedContent that builds its tabs when the side pane is first on screen, and a
    :class:`LazyTabPane`'s content when its tab becomes active on screen, with tab labels that
    fit its width (see module docstring).

    Until the side pane is first shown, the tab row and the panes (16 widgets) are not built:
    the chosen tab is kept (:meth:`choose`, :attr:`current`), and the panes are reached through
    :meth:`panes`; :meth:`ready` waits until the tabs are built and one is active."""

    DEFAULT_CSS = """
    SideTabs Tabs { padding-left: 1; }
    SideTabs Tab { padding: 0 1 0 0; }
    """

    def __init__(self, *, id: str, initial: str, build_tabs: bool = False) -> None:
        """``build_tabs``: build the tabs with the widget (the side pane is in the first frame),
        not when it is first shown."""
        super().__init__(id=id, initial=initial)
        # False until the side pane is first on screen (see show_panes).
        self.on_screen = False
        self._labels: dict[str, str] = {}
        self._build_after_first_frame = False
        # The tabs are composed when the side pane is first shown (show_panes); set once they
        # are built and one of them is active (TabbedContent sets ``active`` then).
        self._composed = build_tabs
        self._built = False
        self._activated = asyncio.Event()

    def compose(self) -> ComposeResult:
        if self._composed:
            yield from super().compose()

    def panes(self) -> list[LazyTabPane]:
        """Every side tab's pane, built or not (before the tabs are built too)."""
        return [pane for pane in self._tab_content if isinstance(pane, LazyTabPane)]

    def has_pane(self, pane_id: str) -> bool:
        return any(pane.id == pane_id for pane in self.panes())

    @property
    def current(self) -> str:
        """The active tab's id; before the tabs are built, the one they will open on."""
        return self.active or self._initial

    def choose(self, pane_id: str) -> None:
        """Make ``pane_id`` the active tab: now if the tabs are built, else the one they are
        built with (a caller that shows the side pane chooses first)."""
        self._initial = pane_id
        if self._activated.is_set():
            self.active = pane_id

    async def ready(self) -> None:
        """Build the tabs if they are not yet, and wait until they are and one is active."""
        self._compose_tabs()
        await self._activated.wait()

    def build_after_first_frame(self) -> None:
        """Build the first tab shown after the frame that first shows the side pane, not
        before it (a tab restored where the lesson was left: the first frame stays as fast as
        with the side pane hidden; the tab's content follows in the next frames)."""
        self._build_after_first_frame = True

    def show_panes(self) -> None:
        """The side pane is on screen: build the tabs, and the active tab's pane, if they are
        not built yet."""
        self.on_screen = True
        if not self._composed:
            self._compose_tabs()  # the first active tab's pane is built when it is activated
            return
        self.watch_active(self.active)

    def _compose_tabs(self) -> None:
        if not self._composed:
            self._composed = True
            self.call_later(self._build_tabs)

    async def _build_tabs(self) -> None:
        await self.recompose()
        self._built = True  # every tab pane is mounted: one can be built in it
        self.fit_labels(self.size.width)  # built after the last resize
        self.watch_active(self.active)

    def watch_active(self, active: str) -> None:
        if not active or not self._built:
            return
        self._activated.set()
        if not self.on_screen:
            return
        if self._build_after_first_frame:
            self._build_after_first_frame = False
            self.call_after_refresh(lambda: self.watch_active(self.active))
            return
        pane = self.get_pane(active)
        if isinstance(pane, LazyTabPane):
            pane.build()

    def on_mount(self) -> None:
        self._built = self._composed  # built with the widget: its panes are mounted now

    def on_resize(self, event: events.Resize) -> None:
        self.fit_labels(event.size.width)

    def fit_labels(self, width: int) -> None:
        """Full tab names when they all fit in ``width`` cells, else the shortened ones."""
        if not self._labels:
            self._labels = {
                str(pane.id): self.get_tab(pane).label.plain for pane in self.query(TabPane)
            }
        # Each tab is its label plus one cell of padding; the tab row starts one cell in.
        full = 1 + sum(cell_len(label) + 1 for label in self._labels.values())
        for pane_id, label in self._labels.items():
            wanted = label if full <= width else strings.TAB_SHORT.get(pane_id, label)
            tab = self.get_tab(pane_id)
            if tab.label.plain != wanted:
                tab.label = Content(wanted)
