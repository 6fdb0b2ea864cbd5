"""The side tabs, built on first view: a hidden tab costs nothing at start-up.

Each side pane imports its engine module (numpy for the pipeline and collectives simulators) and
mounts dozens of widgets; the first screen shows only the Ledger. A :class:`LazyTabPane` names
its pane's class by import path and mounts it the first time its tab becomes active, however it
is activated (F-key, click, palette, or ``active`` set in code). The pane restores the learner's
saved state itself when it mounts (see ``CalculatorPane.on_mount``).
"""

from __future__ import annotations

import importlib

from textual.widget import AwaitMount, Widget
from textual.widgets import TabbedContent, TabPane


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
    """A TabbedContent that builds a :class:`LazyTabPane` when its tab becomes active."""

    def watch_active(self, active: str) -> None:
        if not active:
            return
        pane = self.get_pane(active)
        if isinstance(pane, LazyTabPane):
            pane.build()
