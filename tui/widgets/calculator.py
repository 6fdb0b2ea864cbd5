"""The shared shape of a calculator pane: a form, a result, an inline error.

A pane subclass declares its fields and one ``compute`` method that turns the form's text into
an engine spec, calls one engine function and returns what to show. Bad input raises the
engine's ``InputError``; the pane then shows the message under the form and keeps the last
good result on screen. The pane holds no formula.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from rich.console import RenderableType
from textual import on
from textual.app import ComposeResult
from textual.containers import Horizontal, VerticalScroll
from textual.message import Message
from textual.widgets import Input, Label, Select, Static

from engine.errors import InputError
from tui import strings
from tui.widgets.literal import LiteralInput


@dataclass(frozen=True)
class Field:
    """One form field: an Input, or a Select when ``options`` is given (label, value)."""

    name: str
    label: str
    default: str
    options: tuple[tuple[str, str], ...] = ()
    tooltip: str = ""


@dataclass(frozen=True)
class Outcome:
    """What ``compute`` returns: the renderable, and figures to save with the progress."""

    renderable: RenderableType
    figures: dict[str, float] | None = None


class CalculatorPane(VerticalScroll):
    """Base class of the Ledger and Bubble panes (see module docstring)."""

    form_name: ClassVar[str] = ""
    figure_name: ClassVar[str] = ""
    FIELDS: ClassVar[tuple[Field, ...]] = ()
    # Shown below the result, so the figures stay on screen at 80x24 while the main fields change.
    MORE_FIELDS: ClassVar[tuple[Field, ...]] = ()
    MORE_TITLE: ClassVar[str] = ""

    class FormChanged(Message):
        """The form changed: its values as typed, and figures when the result is good."""

        def __init__(
            self,
            form_name: str,
            values: dict[str, str],
            figure_name: str,
            figures: dict[str, float] | None,
            by_learner: bool,
        ) -> None:
            super().__init__()
            self.by_learner = by_learner
            self.form_name = form_name
            self.values = values
            self.figure_name = figure_name
            self.figures = figures

    def __init__(self) -> None:
        super().__init__(classes="calculator")
        self.last_error = ""
        self._last_values: dict[str, str] = {}

    @classmethod
    def all_fields(cls) -> tuple[Field, ...]:
        return cls.FIELDS + cls.MORE_FIELDS

    def compose(self) -> ComposeResult:
        yield from self.compose_header()
        yield from self._compose_fields(self.FIELDS)
        yield Static("", classes="calc-error", markup=False)
        yield Static(strings.CALC_ENTER_VALUES, classes="calc-result")
        if self.MORE_FIELDS:
            yield Static(self.MORE_TITLE, classes="more-title", markup=False)
            yield from self._compose_fields(self.MORE_FIELDS)
        yield from self.compose_footer()

    def _compose_fields(self, fields: tuple[Field, ...]) -> ComposeResult:
        for field in fields:
            with Horizontal(classes="form-row"):
                yield Label(field.label, markup=False, classes="form-label")
                if field.options:
                    yield Select(
                        list(field.options),
                        value=field.default,
                        allow_blank=False,
                        id=f"field-{field.name}",
                        compact=True,
                        classes="form-field",
                    )
                else:
                    widget = LiteralInput(
                        field.default, id=f"field-{field.name}", compact=True, classes="form-field"
                    )
                    if field.tooltip:
                        widget.tooltip = field.tooltip
                    yield widget

    def compose_header(self) -> ComposeResult:
        yield from ()

    def compose_footer(self) -> ComposeResult:
        yield from ()

    def on_mount(self) -> None:
        # Side panes are built on first view (tui.widgets.side), after the lesson opened: show
        # the form as the learner saved it, or the defaults.
        progress = getattr(self.app, "progress", None)
        self.restore(progress.forms.get(self.form_name, {}) if progress is not None else {})

    def values(self) -> dict[str, str]:
        """The form as typed: field name -> text."""
        result: dict[str, str] = {}
        for field in self.all_fields():
            widget = self.query_one(f"#field-{field.name}")
            if isinstance(widget, Select):
                result[field.name] = str(widget.value)
            else:
                assert isinstance(widget, Input)
                result[field.name] = widget.value
        return result

    def set_values(self, values: dict[str, str], by_learner: bool = False) -> None:
        """Fill the form (unknown names ignored, bad Select values left as they are), then
        compute once. The fields' own Changed messages are suppressed: they would arrive later
        and be taken for the learner's typing."""
        with self.prevent(Input.Changed, Select.Changed):
            for field in self.all_fields():
                if field.name not in values:
                    continue
                widget = self.query_one(f"#field-{field.name}")
                if isinstance(widget, Select):
                    if any(value == values[field.name] for _label, value in field.options):
                        widget.value = values[field.name]
                else:
                    assert isinstance(widget, Input)
                    widget.value = values[field.name]
        self.recompute(by_learner=by_learner)

    def restore(self, values: dict[str, str]) -> None:
        """Show the form as the learner left it (or the defaults)."""
        defaults = {field.name: field.default for field in self.all_fields()}
        defaults.update(values)
        self.set_values(defaults)

    def focus_first(self) -> None:
        if self.FIELDS:
            self.query_one(f"#field-{self.FIELDS[0].name}").focus()

    def compute(self, values: dict[str, str]) -> Outcome:
        """Turn the form into an engine spec, call the engine, return what to show.

        Raises:
            InputError: a field is invalid (``field`` names it).
        """
        raise InputError("form", "this pane has no calculator")

    def label_of(self, name: str) -> str:
        for field in self.all_fields():
            if field.name == name:
                return field.label
        return name

    @on(Input.Changed, ".form-field")
    @on(Select.Changed, ".form-field")
    def _field_changed(self, event: Input.Changed | Select.Changed) -> None:
        event.stop()
        # Widgets also post Changed when they mount; only a real change is the learner's.
        if self._last_values and self.values() != self._last_values:
            self.recompute(by_learner=True)

    def recompute(self, by_learner: bool = False) -> None:
        """Compute from the form; on bad input show the message and keep the last result.

        ``by_learner`` is True when the learner changed a field (then the app saves the form).
        """
        values = self.values()
        self._last_values = values
        error_widget = self.query_one(".calc-error", Static)
        figures: dict[str, float] | None = None
        try:
            outcome = self.compute(values)
        except InputError as error:
            self.last_error = f"{self.label_of(error.field)}: {error.message}"
            error_widget.update(f"{self.last_error} {strings.CALC_LAST_GOOD}")
            error_widget.display = True
        else:
            self.last_error = ""
            error_widget.update("")
            error_widget.display = False
            self.query_one(".calc-result", Static).update(outcome.renderable)
            figures = outcome.figures
        self.post_message(
            self.FormChanged(self.form_name, values, self.figure_name, figures, by_learner)
        )
