"""The quiz's two dialogs: the desired retention (typed, checked) and the review statistics
with their plots. Opened from :class:`tui.screens.quiz.QuizScreen` (the palette, and ``s``)."""

from __future__ import annotations

import math

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from engine.errors import InputError, quoted, typed_value
from engine.i18n import N_
from engine.quiz_stats import LessonStats
from engine.settings import DESIRED_RETENTION_DEFAULT, DESIRED_RETENTION_RANGE
from engine.units import parse_number
from tui import strings
from tui.widgets.literal import LiteralInput
from tui.widgets.reader import BrokenText


def parse_retention(text: str) -> float:
    """A desired retention typed by the learner: ``0.85`` or ``85%``.

    Raises:
        InputError: field ``desired retention``, its message saying what is wrong: nothing
            typed, not a number, or outside 0.70-0.97 (a negative number is outside too).
    """
    raw = text.strip()
    low, high = DESIRED_RETENTION_RANGE
    if not raw:
        raise InputError(
            "desired retention", strings.QUIZ_RETENTION_EMPTY.format(low=low, high=high)
        )
    scale = 100.0 if raw.endswith("%") else 1.0
    number = raw.removesuffix("%").strip()
    outside = strings.QUIZ_RETENTION_OUT_OF_RANGE.format(text=typed_value(raw), low=low, high=high)
    try:
        value = parse_number("desired retention", number.removeprefix("-"), allow_zero=True)
    except InputError:
        # A number past a float's range is called too large, as every other field calls it.
        template = (
            strings.QUIZ_RETENTION_TOO_LARGE
            if _overflows(number)
            else strings.QUIZ_RETENTION_NOT_NUMBER
        )
        message = template.format(text=quoted(raw), low=low, high=high)
        raise InputError("desired retention", message) from None
    if number.startswith("-") or not low <= value / scale <= high:
        raise InputError("desired retention", outside)
    return round(value / scale, 4)


def _overflows(number: str) -> bool:
    """True when ``number`` is written as a number whose value overflows a float (``1e400``)."""
    try:
        return math.isinf(float(number)) and not number.strip("+-").lower().startswith("inf")
    except ValueError:
        return False


class RetentionScreen(ModalScreen[float | None]):
    """Asks for the desired retention; dismissed with the new value, or None (escape)."""

    DEFAULT_CSS = """
    RetentionScreen {
        align: center middle;
    }
    #retention-box {
        width: 64;
        max-width: 100%;
        height: auto;
        padding: 1 2;
        border: round $primary;
        background: $surface;
    }
    #retention-error {
        color: $error;
    }
    """

    BINDINGS = [Binding("escape", "cancel", N_("Cancel"), id="retention_cancel")]

    def __init__(self, current: float) -> None:
        super().__init__()
        self.current = current

    def compose(self) -> ComposeResult:
        low, high = DESIRED_RETENTION_RANGE
        with Vertical(id="retention-box"):
            yield Static(strings.QUIZ_RETENTION_TITLE, classes="section-title")
            # Broken by the lesson's rules: Rich's wrap parts a word inside Chinese text
            # ("En" / "ter 保存").
            yield BrokenText(
                strings.QUIZ_RETENTION_HELP.format(
                    low=low, high=high, default=DESIRED_RETENTION_DEFAULT
                ),
                id="retention-help",
            )
            yield LiteralInput(f"{self.current:.2f}", id="retention-input")
            yield BrokenText("", id="retention-error")

    def on_mount(self) -> None:
        self.query_one("#retention-input", LiteralInput).focus()
        error = self.query_one("#retention-error", BrokenText)
        error.display = False
        # On a short screen (40x12) the dialog scrolls, and the message under the field came
        # below the fold: once it is laid out (its size changed), the dialog shows its end.
        self.watch(error, "virtual_size", self._error_laid_out, init=False)

    def _error_laid_out(self, _size: object) -> None:
        self.call_later(self.scroll_end, animate=False)

    def on_input_submitted(self, event: LiteralInput.Submitted) -> None:
        event.stop()
        try:
            value = parse_retention(event.value)
        except InputError as error:
            shown = self.query_one("#retention-error", BrokenText)
            shown.update(error.message)
            shown.display = True
            return
        self.dismiss(value)

    def action_cancel(self) -> None:
        self.dismiss(None)


class ReviewStatsScreen(ModalScreen[None]):
    """The statistics of every lesson in the quiz, with the forecast and recall plots."""

    DEFAULT_CSS = """
    #stats-body {
        padding: 0 1;
        background: $surface;
    }
    """

    BINDINGS = [
        Binding("escape", "dismiss", N_("Close"), id="stats_close"),
        Binding("s", "dismiss", N_("Close"), id="stats_close_s", show=False),
    ]

    def __init__(self, rows: list[LessonStats], text: str) -> None:
        super().__init__()
        self.rows = rows
        self.text = text

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="stats-body"):
            yield Static(strings.QUIZ_STATS_TITLE, classes="section-title")
            yield Static(self.text, markup=False)
            yield Vertical(id="stats-plots")
            yield BrokenText(strings.QUIZ_STATS_CLOSE, classes="hint")

    async def on_mount(self) -> None:
        from tui.widgets.review_plots import ReviewPlots  # textual-plotext: loaded when needed

        widget = ReviewPlots()
        await self.query_one("#stats-plots", Vertical).mount(widget)
        widget.show(self.rows)
        self.query_one("#stats-body", VerticalScroll).focus()
