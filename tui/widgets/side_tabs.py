"""The side pane's tab row and tab panes, mounted by :class:`~tui.widgets.side.SideTabs` when
the side pane is first shown (see that module's docstring): Textual's ``TabbedContent`` and
``Tabs`` are imported with this module, not for the first frame.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from rich.cells import cell_len
from textual import events
from textual.app import RenderResult
from textual.content import Content
from textual.renderables.blank import Blank
from textual.widget import AwaitMount, Widget
from textual.widgets import TabbedContent, TabPane, Tabs

from tui import strings
from tui.styles import SIDE_PANES, use_stylesheet

if TYPE_CHECKING:
    from tui.widgets.side import SideTab  # which imports this module when first shown


class LazyTabPane(TabPane):
    """A tab pane whose content (its :class:`SideTab`) is built and mounted on first
    activation."""

    def __init__(self, tab: SideTab) -> None:
        super().__init__(tab.title, id=tab.id)
        self.tab = tab
        self._mounting: AwaitMount | None = None

    @property
    def built(self) -> bool:
        return self._mounting is not None

    def render(self) -> RenderResult:
        # Blank until the content is mounted (a frame or two), not Textual's name of an empty
        # widget ("LazyTabPane#ledger").
        return Blank(self.background_colors[1])

    def build(self) -> None:
        """Build and mount the content (once)."""
        if self._mounting is not None:
            return
        use_stylesheet(self.app, SIDE_PANES)  # its rules, before its first widget is styled
        self._mounting = self.mount(self.tab.build())

    async def ready(self) -> None:
        """Build the content if needed and wait until it is mounted (its ``on_mount`` has run)."""
        self.build()
        assert self._mounting is not None
        await self._mounting


class LazyTabbedContent(TabbedContent):
    """The side tabs: a :class:`LazyTabPane` per :class:`SideTab`, the active one's content
    built when it becomes active, with tab labels that fit the width."""

    def __init__(
        self,
        tabs: Sequence[SideTab],
        *,
        initial: str,
        build_after_first_frame: bool,
        activated: Callable[[], None],
        on_screen: bool,
    ) -> None:
        """``activated`` is called once a tab is first active (every tab pane is mounted by
        then); ``build_after_first_frame``: see :meth:`SideTabs.build_after_first_frame`;
        ``on_screen``: the side pane is shown (else no content is built until
        :meth:`show_panes`)."""
        super().__init__(initial=initial)
        self.tabs = tabs
        self.on_screen = on_screen
        for tab in tabs:
            self.compose_add_child(LazyTabPane(tab))  # as ``with TabbedContent():`` would
        self.build_after_first_frame = build_after_first_frame
        self._activated = activated
        self._labels: dict[str, str] = {}
        self._mounted = False

    def choose(self, pane_id: str) -> None:
        """Make ``pane_id`` the active tab: now if one is active, else the one the tab row
        opens on (TabbedContent's ``initial``, read when it composes)."""
        if self.active:
            self.active = pane_id
        else:
            self._initial = pane_id

    def on_mount(self) -> None:
        self._mounted = True
        self.fit_labels(self.size.width)
        self.watch_active(self.active)

    def show_panes(self) -> None:
        """The side pane is on screen: build the active tab's content if it is not."""
        self.on_screen = True
        self.watch_active(self.active)

    def watch_active(self, active: str) -> None:
        if not active or not self._mounted:
            return
        self._activated()
        if not self.on_screen:
            return
        if self.build_after_first_frame:
            self.build_after_first_frame = False
            self.call_after_refresh(lambda: self.watch_active(self.active))
            return
        pane = self.get_pane(active)
        if isinstance(pane, LazyTabPane):
            pane.build()

    @property
    def tab_row(self) -> Tabs:
        return self.query_one(Tabs)

    async def ready_pane(self, pane_id: str) -> Widget:
        """Tab ``pane_id``'s pane once its content is built and mounted."""
        pane = self.get_pane(pane_id)
        if isinstance(pane, LazyTabPane):
            await pane.ready()
        return pane

    def on_resize(self, event: events.Resize) -> None:
        self.fit_labels(event.size.width)

    def fit_labels(self, width: int) -> None:
        """Full tab names when they all fit in ``width`` cells, else the shortened ones."""
        if not self._labels:
            self._labels = {tab.id: tab.title for tab in self.tabs}
        # Each tab is its label plus one cell of padding; the tab row starts one cell in.
        full = 1 + sum(cell_len(label) + 1 for label in self._labels.values())
        for pane_id, label in self._labels.items():
            wanted = label if full <= width else strings.TAB_SHORT.get(pane_id, label)
            tab = self.get_tab(pane_id)
            if tab.label.plain != wanted:
                tab.label = Content(wanted)
