"""The Diagrams pane: each strategy's 4-rank ASCII diagram, drawn by ``engine.diagrams``, and the
learner's exercise 2 and 3 notes for it.

The text comes from the engine's structured strategy descriptions, so the picture can never
disagree with the calculators; this pane only shows it, literally (``markup=False``). The
strategy shown is remembered where the lesson was left (``tui.widgets.side.resumed_choices``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from textual import on
from textual.app import ComposeResult
from textual.await_complete import AwaitComplete
from textual.containers import ScrollableContainer, Vertical, VerticalScroll
from textual.widgets import Select, Static

from engine.diagrams import STRATEGY_NAMES, strategy_diagram
from engine.exercises import strategy_notes
from engine.lesson import Item
from engine.strategies import get_strategy
from tui import strings
from tui.widgets.notes import NoteBox
from tui.widgets.side import ChoicesChanged, resumed_choices


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

    # The note boxes of the strategy shown, mounted once this is done (see refresh_notes).
    _notes_shown: AwaitComplete | None = None

    def compose(self) -> ComposeResult:
        options = [(f"{get_strategy(name).title} ({name})", name) for name in STRATEGY_NAMES]
        first = _known_strategy(resumed_choices(self, "diagrams"))
        yield Select(options, value=first, allow_blank=False, id="strategy", compact=True)
        yield Static(strings.DIAGRAM_ZOOM_HINT, classes="hint")
        with ScrollableContainer(id="diagram-scroll"):
            yield Static(strategy_diagram(first), markup=False, id="diagram", classes="diagram")
        yield Static(strings.EXERCISE_NOTES_TITLE, classes="more-title", markup=False)
        yield Vertical(id="strategy-notes")

    def on_mount(self) -> None:
        self.show(self.strategy)

    @on(Select.Changed, "#strategy")
    def _strategy_changed(self, event: Select.Changed) -> None:
        event.stop()
        self.show(str(event.value))
        self.post_message(ChoicesChanged())

    def choices(self) -> dict[str, Any]:
        """What is remembered where the lesson was left: the strategy shown."""
        return {"strategy": self.strategy}

    def restore_choices(self, choices: Mapping[str, Any]) -> None:
        """Show the strategy of ``choices`` (the first one when it names none that exists)."""
        self.show_strategy(_known_strategy(choices))

    def show_strategy(self, name: str) -> AwaitComplete:
        """Select and show strategy ``name``; await the result to have its note boxes."""
        select = self.query_one("#strategy", Select)
        if select.value == name and self._notes_shown is not None:
            return self._notes_shown
        with self.prevent(Select.Changed):
            select.value = name
        return self.show(name)

    @property
    def strategy(self) -> str:
        return str(self.query_one("#strategy", Select).value)

    def show(self, name: str) -> AwaitComplete:
        """Show strategy ``name`` (one of ``engine.diagrams.STRATEGY_NAMES``) and its notes;
        await the result to have the note boxes mounted."""
        self.query_one("#diagram", Static).update(strategy_diagram(name))
        return self.refresh_notes()

    def refresh_notes(self) -> AwaitComplete:
        """Rebuild the note boxes of the current strategy from the learner's saved notes;
        await the result to have them mounted."""
        notes_box = self.query_one("#strategy-notes", Vertical)
        removed = notes_box.remove_children()
        saved: dict[str, str] = getattr(self.app, "progress").notes  # noqa: B009
        title = get_strategy(self.strategy).title
        mounted = notes_box.mount_all(
            NoteBox(
                "notes",
                Item(note.id, note.label),
                saved.get(note.id, ""),
                f"ex{note.exercise} {title}: {note.label}",
                strings.REFLECTION_PLACEHOLDER,
            )
            for note in strategy_notes(self.strategy)
        )

        async def settled() -> None:
            await removed
            await mounted

        self._notes_shown = AwaitComplete(settled())
        return self._notes_shown

    def focus_first(self) -> None:
        self.query_one("#strategy").focus()


def _known_strategy(choices: Mapping[str, Any]) -> str:
    """The strategy of ``choices`` when it is one the diagrams draw, else the first."""
    name = choices.get("strategy")
    return name if isinstance(name, str) and name in STRATEGY_NAMES else STRATEGY_NAMES[0]
