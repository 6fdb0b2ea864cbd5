"""The Lab pane: ``shardbook lab collectives`` and ``shardbook lab memory`` inside the app.

Each run happens in a Textual worker thread (torch and the rank processes never block the
screen) and posts :class:`LabPane.Finished` back; the report is the command line's own text
(:mod:`engine.lab.report`), shown literally. Without torch the pane only says how to install the
extra. The pane scrolls as a whole, like the other side panes (at 40x12 the install command was
below its bottom edge, out of reach), and its sentences are broken by the app's line breaker
(``BrokenText``), not Rich's wrap at spaces; the report keeps its columns and scrolls sideways.
"""

from __future__ import annotations

from textual import on, work
from textual.app import ComposeResult
from textual.containers import Horizontal, ScrollableContainer, VerticalScroll
from textual.message import Message
from textual.widget import Widget
from textual.widgets import Button, Static

from engine.errors import ShardbookError
from engine.i18n import N_, fill
from engine.lab import install_command, torch_available
from tui import strings
from tui.widgets.reader import BrokenText, ZoomHint
from tui.widgets.scrolling import FocusFollowsScroll
from tui.widgets.side import OpenedLesson

# What the buttons run: the command line's defaults (4 ranks; the 2-layer fp32 model).
EXPERIMENTS = ("collectives", "memory")


def run_experiment(name: str) -> str:
    """Run one experiment with its defaults and return the report (raises ShardbookError)."""
    from engine.lab.report import collectives_report, memory_report

    if name == "collectives":
        from engine.lab.gloo import run_collectives

        return collectives_report(run_collectives(ranks=4, repeats=10))
    from engine.lab.memory import measure_memory

    return memory_report(measure_memory())


class LabPane(FocusFollowsScroll, VerticalScroll):
    """Two buttons, a status line and the last report."""

    HELP = N_(
        "Collectives starts 4 local processes with torch.distributed on Gloo (loopback only), "
        "runs every collective on small integers and shows each rank's output beside the "
        "simulator's, then the measured time beside the alpha-beta model. Memory trains a small "
        "GPT for one AdamW step and sets the measured parameter, gradient, optimizer and "
        "saved-activation bytes beside the ledger, term by term. Needs the 'lab' extra."
    )

    DEFAULT_CSS = """
    LabPane { padding: 0 1; }
    #lab-buttons { height: auto; margin: 0 0 1 0; }
    #lab-buttons Button { margin: 0 1 0 0; }
    #lab-status { color: $text-muted; }
    #lab-command-scroll { margin: 1 0 0 0; }
    #lab-scroll, #lab-command-scroll {
        height: auto;
        overflow-x: auto;
        overflow-y: hidden;
        scrollbar-size-horizontal: 1;
    }
    #lab-report, #lab-command { width: auto; }
    """

    class Finished(Message):
        """A run ended: ``text`` is its report, or the error when ``ok`` is False."""

        def __init__(self, name: str, text: str, ok: bool) -> None:
            super().__init__()
            self.name = name
            self.text = text
            self.ok = ok

    def compose(self) -> ComposeResult:
        yield BrokenText(strings.LAB_TITLE, classes="section-title")
        if not torch_available():
            yield BrokenText(strings.LAB_NO_TORCH, id="lab-hint")
            # Its own line, never broken (a command to copy), scrolled sideways when wider.
            with ScrollableContainer(id="lab-command-scroll", can_focus=False):
                yield Static(install_command(), markup=False, id="lab-command")
            return
        yield ZoomHint(strings.LAB_INTRO)
        with Horizontal(id="lab-buttons"):
            yield Button(strings.LAB_RUN_COLLECTIVES, id="lab-collectives", compact=True)
            yield Button(strings.LAB_RUN_MEMORY, id="lab-memory", compact=True)
        yield BrokenText("", id="lab-status")
        with ScrollableContainer(id="lab-scroll"):
            yield Static("", markup=False, id="lab-report")

    @on(Button.Pressed, "#lab-collectives")
    def _collectives(self, event: Button.Pressed) -> None:
        event.stop()
        self.start("collectives")

    @on(Button.Pressed, "#lab-memory")
    def _memory(self, event: Button.Pressed) -> None:
        event.stop()
        self.start("memory")

    def start(self, name: str) -> None:
        """Run experiment ``name`` (one of :data:`EXPERIMENTS`) in a worker thread."""
        focused = self.screen.focused
        if focused is not None and self in focused.ancestors:
            # The buttons are disabled while it runs, and a disabled button loses the focus to
            # nothing: the scroll keys then reached no pane. The pane keeps it instead.
            self.screen.set_focus(self, scroll_visible=False)
        for button in self.query(Button):
            button.disabled = True
        self.query_one("#lab-status", BrokenText).update(
            fill(strings.LAB_RUNNING, what=strings.LAB_EXPERIMENTS[name])
        )
        self._run(name)

    @work(thread=True, exclusive=True, group="lab")
    def _run(self, name: str) -> None:
        try:
            message = self.Finished(name, run_experiment(name), True)
        except ShardbookError as error:
            message = self.Finished(name, str(error), False)
        self.post_message(message)

    @on(Finished)
    def _finished(self, event: Finished) -> None:
        event.stop()
        for button in self.query(Button):
            button.disabled = False
        status = self.query_one("#lab-status", BrokenText)
        if event.ok:
            status.update(fill(strings.LAB_DONE, what=strings.LAB_EXPERIMENTS[event.name]))
            self.query_one("#lab-report", Static).update(event.text)
        else:
            status.update(
                fill(strings.LAB_FAILED, what=strings.LAB_EXPERIMENTS[event.name], error=event.text)
            )

    def show_lesson(self, opened: OpenedLesson) -> None:
        """Nothing of the lesson or the progress shows here (the runs are the learner's own)."""

    def first_focus(self) -> Widget | None:
        """The widget the pane's key focuses first: the first experiment's button; without
        torch the pane itself, so that the scroll keys reach it."""
        return next(iter(self.query(Button)), self)
