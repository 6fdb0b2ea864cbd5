"""The side tabs, built on first view: a hidden tab costs nothing at start-up.

Each side pane imports its engine module (numpy for the pipeline and collectives simulators) and
mounts dozens of widgets. A :class:`LazyTabPane` names its pane's class by import path and mounts
it the first time its tab is active while the side pane is on screen, however it is activated
(F-key, click, palette, or ``active`` set in code). Where the side pane starts hidden (an
80-column terminal gives the lesson the room), not even the Ledger is built before it is shown.
The pane restores the learner's saved state itself when it mounts (see
``CalculatorPane.on_mount``).

Every tab stays visible: where the full names do not fit the pane's width, shortened ones (each
marked with a dot) are shown instead.

Panes whose choices are remembered where the lesson was left (``engine.resume``: Diagrams'
strategy, Trade-offs' link and model picker, Collectives' step) read them when they are built
(:func:`resumed_choices`), give them back with ``choices()``, take new ones with
``restore_choices()`` and post :class:`ChoicesChanged` when the learner changes one.
"""

from __future__ import annotations

import importlib
from collections.abc import Mapping
from typing import Any

from rich.cells import cell_len
from textual import events
from textual.content import Content
from textual.message import Message
from textual.widget import AwaitMount, Widget
from textual.widgets import TabbedContent, TabPane

from engine.resume import ResumeState
from tui import strings


class ChoicesChanged(Message):
    """A side pane's remembered choice changed (a strategy, a link, a step): the app writes where
    the lesson was left a moment later."""


def resumed_choices(widget: Widget, pane: str) -> Mapping[str, Any]:
    """The choices of side pane ``pane`` as the lesson was left (``{}``: the defaults)."""
    resumed: ResumeState | None = getattr(widget.app, "resumed", None)
    return resumed.panes.get(pane, {}) if resumed is not None else {}


class LazyTabPane(TabPane):
    """A tab pane whose content, ``module:ClassName`` (built with no arguments), is imported and
    mounted on first activation."""

    def __init__(self, title: str, factory: str, *, id: str) -> None:
        super().__init__(title, id=id)
        self.factory = factory
        self._mounting: AwaitMount | None = None

    @property
    def built(self) -> bool:
        return self._mounting is not None

    def build(self) -> None:
        """Import and mount the content (once)."""
        if self._mounting is not None:
            return
        module_name, _, class_name = self.factory.partition(":")
        widget: Widget = getattr(importlib.import_module(module_name), class_name)()
        self._mounting = self.mount(widget)

    async def ready(self) -> None:
        """Build the content if needed and wait until it is mounted (its ``on_mount`` has run)."""
        self.build()
        assert self._mounting is not None
        await self._mounting


class SideTabs(TabbedContent):
    """A TabbedContent that builds a :class:`LazyTabPane` when its tab becomes active on screen,
    with tab labels that fit its width (see module docstring)."""

    DEFAULT_CSS = """
    SideTabs Tabs { padding-left: 1; }
    SideTabs Tab { padding: 0 1 0 0; }
    """

    def __init__(self, *, id: str, initial: str) -> None:
        super().__init__(id=id, initial=initial)
        # False until the side pane is first on screen (see show_panes).
        self.on_screen = False
        self._labels: dict[str, str] = {}
        self._build_after_first_frame = False

    def build_after_first_frame(self) -> None:
        """Build the first tab shown after the frame that first shows the side pane, not
        before it (a tab restored where the lesson was left: the first frame stays as fast as
        with the side pane hidden; the tab's content follows in the next frames)."""
        self._build_after_first_frame = True

    def show_panes(self) -> None:
        """The side pane is on screen: build the active tab's pane if it is not built yet."""
        self.on_screen = True
        if self._build_after_first_frame:
            self._build_after_first_frame = False
            self.call_after_refresh(lambda: self.watch_active(self.active))
            return
        self.watch_active(self.active)

    def watch_active(self, active: str) -> None:
        if not active or not self.on_screen:
            return
        pane = self.get_pane(active)
        if isinstance(pane, LazyTabPane):
            pane.build()

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
