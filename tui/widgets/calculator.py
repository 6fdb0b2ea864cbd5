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
from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.containers import Horizontal, VerticalScroll
from textual.geometry import Size
from textual.message import Message
from textual.strip import Strip
from textual.widget import Widget
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
    # Long text below the figures (each term's formula and source, a timeline): drawn one frame
    # after them, so the frame that answers a key renders only the figures (issue 10).
    details: RenderableType | None = None


class FormInput(LiteralInput):
    """A form field that tells its pane of an edit while the key is being handled.

    Input.Changed reaches the pane a few message hops later, after Textual may already have
    drawn the frame that shows the typed character; the result then waited for the next frame
    (up to 1/60 s). Recomputing here puts the new result in the same frame (issue 10).
    """

    def _watch_value(self, value: str) -> None:
        # Textual's Input sets ``virtual_size`` (a reactive that re-lays out the whole screen,
        # about 140 widgets with the Ledger open) to the text's width on every edit. A field of
        # fixed size only needs a repaint, so the size is stored without the layout request.
        if not self.styles.auto_dimensions:
            self.set_reactive(Widget.virtual_size, Size(self.content_width, 1))
        super()._watch_value(value)

    def watch_value(self, value: str) -> None:
        for node in self.ancestors:
            if isinstance(node, CalculatorPane):
                node.field_edited()
                return


class ResultView(Widget):
    """A calculator's result: a Rich renderable drawn once per change, through the Line API.

    ``Static.update`` renders the result twice per change (once to measure its height, once to
    paint) and re-lays out the whole screen (about 140 widgets with the Ledger open, then a
    second pass for the scroll view). Here :meth:`show` renders it once into strips, and asks
    for a layout only when the number of lines changed. While the learner types the result
    never gets shorter (blank lines keep its height), so a key costs a repaint of this widget
    alone and the fields below it do not jump; when the form is filled or the view changes
    (``typing=False``) the height fits exactly (issue 10).
    """

    DEFAULT_CSS = "ResultView { height: auto; }"

    def __init__(
        self, renderable: RenderableType, *, id: str | None = None, classes: str = ""
    ) -> None:
        super().__init__(id=id, classes=classes)
        self._renderable = self._literal(renderable)
        self._lines: list[Strip] = []
        self._lines_width = -1

    @staticmethod
    def _literal(renderable: RenderableType) -> RenderableType:
        # A plain string would go through Rich's markup parser; the result is shown literally.
        return Text(renderable) if isinstance(renderable, str) else renderable

    @property
    def content(self) -> RenderableType:
        """What is shown (the renderable last given to :meth:`show`)."""
        return self._renderable

    def _render_strips(self, width: int) -> list[Strip]:
        options = self.app.console_options.update_width(width).update(highlight=False)
        style = self.rich_style
        lines = self.app.console.render_lines(self._renderable, options, style=style)
        return [Strip(line, width) for line in lines]

    def _strips(self, width: int) -> list[Strip]:
        if width != self._lines_width:
            self._lines, self._lines_width = self._render_strips(width), width
        return self._lines

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        return len(self._strips(width))

    def render_line(self, y: int) -> Strip:
        # The width of the last layout (get_content_height); asking for the region instead
        # would rebuild the compositor's map of every widget.
        lines = self._lines
        return lines[y] if y < len(lines) else Strip.blank(self._lines_width, self.rich_style)

    def notify_style_update(self) -> None:
        super().notify_style_update()
        if self._lines_width > 0:  # colours changed (theme): draw again at the same width
            self._lines = self._render_strips(self._lines_width)

    def show(self, renderable: RenderableType, typing: bool = False) -> None:
        """Show ``renderable``; ``typing`` keeps the current height if it would shrink."""
        self._renderable = self._literal(renderable)
        # The size as of the last layout, which drew ``_lines`` at this width.
        width, height = self._lines_width, len(self._lines)
        if width <= 0:
            self._lines_width = -1
            self.refresh(layout=True)
            return
        lines = self._render_strips(width)
        if typing and len(lines) < height:
            lines += [Strip.blank(width, self.rich_style)] * (height - len(lines))
        self._lines, self._lines_width = lines, width
        self.refresh(layout=len(lines) != height)


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
        self._filling = False
        self._details: tuple[RenderableType | None, bool] = (None, False)
        self._details_pending = False

    @classmethod
    def all_fields(cls) -> tuple[Field, ...]:
        return cls.FIELDS + cls.MORE_FIELDS

    def compose(self) -> ComposeResult:
        yield from self.compose_header()
        yield from self._compose_fields(self.FIELDS)
        yield Static("", classes="calc-error", markup=False)
        yield ResultView(strings.CALC_ENTER_VALUES, classes="calc-result")
        yield ResultView("", classes="calc-details")
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
                    widget = FormInput(
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
        self._filling = True
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
        self._filling = False
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

    def _show_details(self) -> None:
        self._details_pending = False
        details, typing = self._details
        view = self.query_one(".calc-details", ResultView)
        if details is None:
            view.display = False
            return
        view.display = True
        view.show(details, typing=typing)
        # Drawing a widget that is scrolled out of view makes Textual rebuild its map of every
        # widget's region at the next refresh (about 5 ms with the Ledger open). Rebuild it now,
        # after this frame, rather than in the next key's frame.
        self.call_after_refresh(lambda: view.region)

    def field_edited(self) -> None:
        """A field's value changed: recompute, unless the form is being filled or not yet
        computed (widgets also change when they mount; only a real change is the learner's)."""
        if not self._filling and self._last_values and self.values() != self._last_values:
            self.recompute(by_learner=True)

    @on(Input.Changed, ".form-field")
    @on(Select.Changed, ".form-field")
    def _field_changed(self, event: Input.Changed | Select.Changed) -> None:
        event.stop()
        self.field_edited()

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
            if error_widget.display:  # setting it, even to the same value, re-lays out
                error_widget.update("")
                error_widget.display = False
            self.query_one(".calc-result", ResultView).show(outcome.renderable, typing=by_learner)
            self._details = (outcome.details, by_learner)
            if not self._details_pending:
                self._details_pending = True
                self.call_after_refresh(self._show_details)
            figures = outcome.figures
        self.post_message(
            self.FormChanged(self.form_name, values, self.figure_name, figures, by_learner)
        )
