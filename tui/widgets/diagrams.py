"""The Diagrams pane: each strategy's 4-rank ASCII diagram, drawn by ``engine.diagrams``.

The text comes from the engine's structured strategy descriptions, so the picture can never
disagree with the calculators; this pane only shows it, literally (``markup=False``).
"""

from __future__ import annotations

from textual import on
from textual.app import ComposeResult
from textual.containers import ScrollableContainer, Vertical
from textual.widgets import Select, Static

from engine.diagrams import STRATEGY_NAMES, strategy_diagram
from engine.strategies import get_strategy
from tui import strings


class DiagramsPane(Vertical):
    """Pick a strategy; see what each of 4 ranks holds, what is split, what moves, what waits."""

    HELP = (
        "Choose a strategy with the selector (enter opens it, arrows move). The diagram shows "
        "4 ranks: what each holds, which dimension is split, the collective or point-to-point "
        "transfer, one wait it can cause, and the lesson's three questions answered. Diagrams "
        "are up to 80 columns wide: press F5 to zoom the pane to the whole screen."
    )

    def compose(self) -> ComposeResult:
        options = [(f"{get_strategy(name).title} ({name})", name) for name in STRATEGY_NAMES]
        yield Select(
            options, value=STRATEGY_NAMES[0], allow_blank=False, id="strategy", compact=True
        )
        yield Static(strings.DIAGRAM_ZOOM_HINT, classes="hint")
        with ScrollableContainer(id="diagram-scroll"):
            yield Static(
                strategy_diagram(STRATEGY_NAMES[0]), markup=False, id="diagram", classes="diagram"
            )

    @on(Select.Changed, "#strategy")
    def _strategy_changed(self, event: Select.Changed) -> None:
        event.stop()
        self.show(str(event.value))

    def show(self, name: str) -> None:
        """Show strategy ``name`` (one of ``engine.diagrams.STRATEGY_NAMES``)."""
        self.query_one("#diagram", Static).update(strategy_diagram(name))

    def focus_first(self) -> None:
        self.query_one("#strategy").focus()
