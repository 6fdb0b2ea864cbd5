"""The Diagrams pane: each strategy's 4-rank ASCII diagram, drawn by ``engine.diagrams``, and the
learner's exercise 2 and 3 notes for it.

The text comes from the engine's structured strategy descriptions, so the picture can never
disagree with the calculators; this pane only shows it, literally (``markup=False``).
"""

from __future__ import annotations

from textual import on
from textual.app import ComposeResult
from textual.containers import ScrollableContainer, Vertical, VerticalScroll
from textual.widgets import Select, Static

from engine.diagrams import STRATEGY_NAMES, strategy_diagram
from engine.exercises import strategy_notes
from engine.lesson import Item
from engine.strategies import get_strategy
from tui import strings
from tui.widgets.notes import NoteBox


class DiagramsPane(VerticalScroll):
    """Pick a strategy; see what each of 4 ranks holds, what is split, what moves, what waits."""

    HELP = (
        "Choose a strategy with the selector (enter opens it, arrows move). The diagram shows "
        "4 ranks: what each holds, which dimension is split, the collective or point-to-point "
        "transfer, one wait it can cause, and the lesson's three questions answered. Diagrams "
        "are up to 80 columns wide: press F5 to zoom the pane to the whole screen. Below the "
        "diagram, write your own answers to exercises 2 and 3 for this strategy; they are saved "
        "and exported beside the engine's answers. F4 again opens the Collectives tab."
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
        yield Static(strings.EXERCISE_NOTES_TITLE, classes="more-title", markup=False)
        yield Vertical(id="strategy-notes")

    def on_mount(self) -> None:
        self.show(STRATEGY_NAMES[0])

    @on(Select.Changed, "#strategy")
    def _strategy_changed(self, event: Select.Changed) -> None:
        event.stop()
        self.show(str(event.value))

    @property
    def strategy(self) -> str:
        return str(self.query_one("#strategy", Select).value)

    def show(self, name: str) -> None:
        """Show strategy ``name`` (one of ``engine.diagrams.STRATEGY_NAMES``) and its notes."""
        self.query_one("#diagram", Static).update(strategy_diagram(name))
        self.refresh_notes()

    def refresh_notes(self) -> None:
        """Rebuild the note boxes of the current strategy from the learner's saved notes."""
        notes_box = self.query_one("#strategy-notes", Vertical)
        notes_box.remove_children()
        saved: dict[str, str] = getattr(self.app, "progress").notes  # noqa: B009
        title = get_strategy(self.strategy).title
        notes_box.mount_all(
            NoteBox(
                "notes",
                Item(note.id, note.label),
                saved.get(note.id, ""),
                f"ex{note.exercise} {title}: {note.label}",
                strings.REFLECTION_PLACEHOLDER,
            )
            for note in strategy_notes(self.strategy)
        )

    def focus_first(self) -> None:
        self.query_one("#strategy").focus()
