"""The shared shape of a calculator pane: a form, a result, an inline error.

A pane subclass declares its fields and one ``compute`` method that turns the form's text into
an engine spec, calls one engine function and returns what to show: the figures, and details
(formulas, sources, a timeline) drawn one frame later. Bad input raises the engine's
``InputError``; the pane then shows the message under the form and keeps the last good result
on screen. The pane holds no formula. Each key is answered in one frame (README "Performance"): see
:class:`FormInput` and :class:`ResultView`.

Its length (about 640 lines) is the one shape every pane shares: the field, the result view that
answers a key in one frame and the pane's recompute and restore read the same form state, and
split apart each would need the others' internals.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar, TypeVar

from rich.cells import cell_len
from rich.console import RenderableType
from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, VerticalScroll
from textual.geometry import Region, Size
from textual.message import Message
from textual.strip import Strip
from textual.timer import Timer
from textual.widget import Widget
from textual.widgets import Button, Input, Label, Select, Static

from engine.errors import InputError, typed_value
from engine.i18n import N_, gettext
from engine.linebreak import hanging_lines, unbreakable
from tui import strings
from tui.compositor import in_view
from tui.widgets.literal import LiteralInput
from tui.widgets.picker import Picker
from tui.widgets.reader import BrokenLines, BrokenText
from tui.widgets.scrolling import FocusFollowsScroll
from tui.widgets.side import OpenedLesson
from tui.widgets.study import PaneExercises


@dataclass(frozen=True)
class Field:
    """One form field: an Input, or a Select when ``options`` is given (label, value)."""

    name: str
    label: str
    default: str
    options: tuple[tuple[str, str], ...] = ()
    tooltip: str = ""


T = TypeVar("T")


class FormErrors(InputError):
    """Several fields of a form refused at once: ``errors``, one per field in the form's order.
    As an :class:`InputError` it is the first of them (its ``field`` and message), so whatever
    handles one refused field handles it too; the pane names every one
    (:meth:`CalculatorPane.error_text`)."""

    def __init__(self, errors: list[InputError]) -> None:
        first = errors[0]
        super().__init__(first.field, first.template, **first.values)
        self.errors = tuple(errors)


class FieldChecks:
    """Parses a form's fields each on its own, so that ``compute`` can name every refused field
    at once: parsed one after another, the first InputError ended ``compute`` and the learner
    learnt of the next bad field only once the first was fixed."""

    def __init__(self) -> None:
        self.errors: list[InputError] = []

    def parse(self, parse: Callable[[], T], fallback: T) -> T:
        """``parse()``; when it raises InputError, the error is kept for :meth:`check` and
        ``fallback`` (never computed with) returned in place of the value."""
        try:
            return parse()
        except InputError as error:
            self.errors.append(error)
            return fallback

    def check(self) -> None:
        """Raises:
        InputError: the one field refused; :class:`FormErrors` when several were.
        """
        if len(self.errors) == 1:
            raise self.errors[0]
        if self.errors:
            raise FormErrors(self.errors)


@dataclass(frozen=True)
class Outcome:
    """What ``compute`` returns: the renderable, and figures to save with the progress."""

    renderable: RenderableType
    figures: dict[str, float] | None = None
    # Long text below the figures (each term's formula and source, a timeline): drawn one frame
    # after them, so the frame that answers a key renders only the figures.
    details: RenderableType | None = None


def is_stale(event: Select.Changed) -> bool:
    """True when ``event`` no longer says the Select's value: a Select posts Changed with the
    value it was built with when it mounts, and that message arrives after the pane has restored
    the saved form (a language switch or a start rebuilds the panes), which set another value.
    Such a message is no choice of the learner's; acting on it would overwrite the restored
    fields."""
    return event.value != event.select.value


# A number typed up to its decimal point (``2.`` on the way to ``2.5``).
_BARE_POINT = re.compile(r"[+-]?\d+\.")


def kept_value(text: str) -> str:
    """The field's value whose figures stay on screen, as the message names it: as typed
    (``1e4``, ``7B``), less a decimal point with no digit after it: typing ``2.5`` passes
    through ``2.``, and "(showing the result for 2.)" read as the end of a sentence."""
    return text[:-1] if _BARE_POINT.fullmatch(text) else text


class FormInput(LiteralInput):
    """A form field that tells its pane of an edit while the key is being handled, through the
    ``edited`` callback the pane gives it (the field knows nothing of its pane).

    Input.Changed reaches the pane a few message hops later, after Textual may already have
    drawn the frame that shows the typed character; the result then waited for the next frame
    (up to 1/60 s). Recomputing here puts the new result in the same frame.
    """

    def __init__(self, value: str, edited: Callable[[], None], **kwargs: Any) -> None:
        self._edited = edited  # before Input's own set-up, which sets the value
        super().__init__(value, **kwargs)

    def _watch_value(self, value: str) -> None:
        # Textual's Input sets ``virtual_size`` (a reactive that re-lays out the whole screen,
        # about 140 widgets with the Ledger open) to the text's width on every edit. A field of
        # fixed size only needs a repaint, so the size is stored without the layout request.
        if not self.styles.auto_dimensions:
            self.set_reactive(Widget.virtual_size, Size(self.content_width, 1))
        super()._watch_value(value)

    def watch_value(self, value: str) -> None:
        if self.parent is not None:  # in its pane's form, not while being built
            self._edited()


class ResultView(Widget):
    """A calculator's result: a Rich renderable drawn once per change, through the Line API.

    ``Static.update`` renders the result twice per change (once to measure its height, once to
    paint) and re-lays out the whole screen (about 140 widgets with the Ledger open, then a
    second pass for the scroll view). Here :meth:`show` renders it once into strips, and asks
    for a layout only when the number of lines changed. While the learner types the result
    never gets shorter (blank lines keep its height), so a key costs a repaint of this widget
    alone and the fields below it do not jump; when the form is filled or the view changes
    (``typing=False``) the height fits exactly.

    A view out of sight while the learner types (the formulas below the fold) is not drawn on
    every key: it keeps the renderable, is drawn when it is painted or laid out, and otherwise
    once typing pauses (:data:`SETTLE_S`), so its height and the pane's scroll range follow.
    """

    DEFAULT_CSS = "ResultView { height: auto; }"
    SETTLE_S = 0.3
    """Seconds after the last change before a view out of sight is drawn."""
    KEPT = 8
    """How many fixed renderables' lines are kept (see :meth:`show`)."""

    def __init__(
        self, renderable: RenderableType, *, id: str | None = None, classes: str = ""
    ) -> None:
        super().__init__(id=id, classes=classes)
        self._renderable = self._literal(renderable)
        self._lines: list[Strip] = []
        self._lines_width = -1
        # The renderable changed while out of sight and is not drawn yet.
        self._stale = False
        self._settle_timer: Timer | None = None
        # Fixed renderables' lines: id -> (renderable, width, lines).
        self._kept: dict[int, tuple[RenderableType, int, list[Strip]]] = {}

    @staticmethod
    def _literal(renderable: RenderableType) -> RenderableType:
        # A plain string would go through Rich's markup parser; the result is shown literally.
        return Text(renderable) if isinstance(renderable, str) else renderable

    @property
    def content(self) -> RenderableType:
        """What is shown (the renderable last given to :meth:`show`)."""
        return self._renderable

    def _render_strips(self, width: int) -> list[Strip]:
        kept = self._kept.get(id(self._renderable))
        if kept is not None and kept[0] is self._renderable and kept[1] == width:
            return list(kept[2])
        options = self.app.console_options.update_width(width).update(highlight=False)
        style = self.rich_style
        lines = self.app.console.render_lines(self._renderable, options, style=style)
        return [Strip(line, width) for line in lines]

    def _strips(self, width: int) -> list[Strip]:
        if width != self._lines_width:
            self._lines, self._lines_width = self._render_strips(width), width
            self._stale = False
        elif self._stale:  # laid out now: the height it returns is the new one
            self._draw_stale()
        return self._lines

    def _draw_stale(self) -> bool:
        """Draw the renderable shown while out of sight (never shorter than it was drawn).
        Returns whether its height changed."""
        self._stale = False
        width, height = self._lines_width, len(self._lines)
        lines = self._render_strips(width)
        if len(lines) < height:
            lines += [Strip.blank(width, self.rich_style)] * (height - len(lines))
        self._lines = lines
        return len(lines) != height

    def _settle(self) -> None:
        self._settle_timer = None
        if self._stale and self._draw_stale():
            self.refresh(layout=True)

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        return len(self._strips(width))

    def render_line(self, y: int) -> Strip:
        # The width of the last layout (get_content_height); asking for the region instead
        # would rebuild the compositor's map of every widget.
        if self._stale and self._draw_stale():
            self.refresh(layout=True)  # scrolled to before it was drawn, and it grew
        lines = self._lines
        width = max(self._lines_width, 0)
        return lines[y] if y < len(lines) else Strip.blank(width, self.rich_style)

    def notify_style_update(self) -> None:
        super().notify_style_update()
        self._kept.clear()
        if self._lines_width > 0:  # colours changed (theme): draw again at the same width
            self._lines = self._render_strips(self._lines_width)
            self._stale = False

    def show(self, renderable: RenderableType, typing: bool = False, fixed: bool = False) -> None:
        """Show ``renderable``; ``typing`` keeps the current height if it would shrink.

        ``fixed``: the renderable is never changed (one cached by its maker), so its lines are
        kept and drawn again from there when it is shown again at the same width.
        """
        self._renderable = self._literal(renderable)
        # The size as of the last layout, which drew ``_lines`` at this width.
        width, height = self._lines_width, len(self._lines)
        if width <= 0:
            self._lines_width = -1
            self._stale = False
            self.refresh(layout=True)
            return
        if typing and not in_view(self):
            self._stale = True
            # Repainted where it is (no lookup of its size, see render_line) when scrolled to.
            self.refresh(Region(0, 0, width, max(height, 1)))
            if self._settle_timer is None:
                self._settle_timer = self.set_timer(self.SETTLE_S, self._settle)
            else:
                self._settle_timer.reset()
            return
        self._stale = False
        lines = self._render_strips(width)
        if fixed:
            if len(self._kept) >= self.KEPT:
                self._kept.clear()
            self._kept[id(self._renderable)] = (self._renderable, width, list(lines))
        if typing and len(lines) < height:
            lines += [Strip.blank(width, self.rich_style)] * (height - len(lines))
        self._lines, self._lines_width = lines, width
        self.refresh(layout=len(lines) != height)


class CalculatorPane(FocusFollowsScroll, VerticalScroll):
    """Base class of the Ledger and Bubble panes (see module docstring)."""

    form_name: ClassVar[str] = ""
    figure_name: ClassVar[str] = ""
    FIELDS: ClassVar[tuple[Field, ...]] = ()
    # Built below the result when asked for (open_more), so the figures stay on screen at 80x24
    # while the main fields change.
    MORE_FIELDS: ClassVar[tuple[Field, ...]] = ()
    MORE_TITLE: ClassVar[str] = ""
    # The button that builds the MORE_FIELDS rows (see open_more).
    MORE_BUTTON: ClassVar[str] = ""
    # The side pane's id where lesson exercises may be worked (engine.lesson.PANES): the pane
    # then says which of them it serves, above its form.
    STUDY_PANE: ClassVar[str] = ""
    # Escape leaves a field for the pane, whose keys (and the lesson's: ], ?, /) then work; the
    # field keeps what was typed. Not in the footer: F1 lists it.
    BINDINGS: ClassVar = [
        Binding("escape", "leave_field", N_("Leave the field"), show=False, id="leave_field")
    ]

    class FormChanged(Message):
        """The form changed: its values as typed, and the figures of the result. While the form
        has an invalid field, ``figures`` are those kept on screen, of the form ``last_good``
        (saved too, so a restart shows them again, and the export pairs the two), or ``{}``
        when none are shown; None for a pane that saves none. ``last_good`` is None when the
        form is good or no figures are shown."""

        def __init__(
            self,
            form_name: str,
            values: dict[str, str],
            figure_name: str,
            figures: dict[str, float] | None,
            by_learner: bool,
            last_good: dict[str, str] | None = None,
        ) -> None:
            super().__init__()
            self.by_learner = by_learner
            self.form_name = form_name
            self.values = values
            self.figure_name = figure_name
            self.figures = figures
            self.last_good = last_good

    def __init__(self) -> None:
        super().__init__(classes="calculator")
        self.last_error = ""
        # Whether the result shows figures (else "Enter values above."): only then can a
        # refused edit keep them on screen as the last good result.
        self._showing_figures = False
        # The form the figures on screen were computed from, and the figures it saves.
        self._good_values: dict[str, str] = {}
        self._good_figures: dict[str, float] = {}
        self._last_values: dict[str, str] = {}
        # The change of the last compute, as posted: a key that reads the plan in the same
        # burst as an edit records it at once (MainScreen.take_in_focused_edit).
        self.last_change: CalculatorPane.FormChanged | None = None
        self._filling = False
        self._details: tuple[RenderableType | None, bool] = (None, False)
        self._details_pending = False
        self._widgets: dict[str, Widget] = {}
        self._parts: tuple[Static, ResultView] | None = None
        # The MORE_FIELDS' text while their rows are not built (see open_more).
        self._more_values = {field.name: field.default for field in self.MORE_FIELDS}
        self.more_open = not self.MORE_FIELDS
        self._more_requested = not self.MORE_FIELDS
        self._focus_more = False
        self._note_shown = False
        # The focused field and its row on screen before a recompute changed the figures'
        # height (see _hold_focused_row).
        self._held: tuple[Widget, int] | None = None
        # The fields marked as refused (class -refused), and the row of the refused field the
        # learner types in with whether its message is right under it (see _place_error).
        self._refused: set[str] = set()
        self._refusal: tuple[Widget, bool] | None = None
        self._main_field_ids = {f"field-{field.name}" for field in self.FIELDS}
        # The lesson and progress the main screen handed down (tui.widgets.side).
        self.opened = OpenedLesson()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "leave_field":
            # Only from one of this form's fields: elsewhere escape is another key's (an
            # outline to close, a dialog).
            focused = self.screen.focused
            return isinstance(focused, Input | Select) and self in focused.ancestors
        return True

    def action_leave_field(self) -> None:
        self.focus()

    @classmethod
    def all_fields(cls) -> tuple[Field, ...]:
        return cls.FIELDS + cls.MORE_FIELDS

    @classmethod
    def defaults(cls) -> dict[str, str]:
        """Every field's default text: field name -> text."""
        return {field.name: field.default for field in cls.all_fields()}

    def compose(self) -> ComposeResult:
        yield from self.compose_header()
        if self.STUDY_PANE:
            yield PaneExercises(self.STUDY_PANE, self.opened.lesson, self.opened.progress)
        yield from self._field_rows(self.FIELDS, {})
        yield Static("", classes="calc-note", markup=False)
        yield Static("", classes="calc-error", markup=False)
        yield ResultView(strings.CALC_ENTER_VALUES, classes="calc-result")
        yield ResultView("", classes="calc-details")
        if self.MORE_FIELDS:
            yield Button(Text(gettext(self.MORE_BUTTON)), id="more-open", compact=True)
        yield from self.compose_footer()

    @classmethod
    def label_width(cls) -> int:
        """The label column's width in cells: the longest label in the interface language and a
        cell before its field, so that no label is cut or runs into its value in either
        language; at least the 14 of ``.form-label``."""
        longest = max((cell_len(gettext(field.label)) for field in cls.all_fields()), default=0)
        return max(14, longest + 1)

    def _field_rows(self, fields: tuple[Field, ...], values: dict[str, str]) -> list[Horizontal]:
        """One row (label, Input or Select) per field, showing ``values`` or the default."""
        rows = []
        label_width = self.label_width()
        for field in fields:
            value = values.get(field.name, field.default)
            widget: Widget
            if field.options:
                widget = Picker(
                    [(gettext(label), option) for label, option in field.options],
                    value=value,
                    allow_blank=False,
                    id=f"field-{field.name}",
                    compact=True,
                    classes="form-field",
                )
            else:
                widget = FormInput(
                    value,
                    self.field_edited,
                    id=f"field-{field.name}",
                    compact=True,
                    classes="form-field",
                )
                if field.tooltip:
                    widget.tooltip = gettext(field.tooltip)
            label = Label(gettext(field.label), markup=False, classes="form-label")
            label.styles.width = label_width
            rows.append(Horizontal(label, widget, classes="form-row"))
        return rows

    async def open_more(self, focus: bool = False) -> None:
        """Build the rows of the less-used fields, below the result.

        They are not built with the pane: the Ledger's 18 are about 60 widgets, a third of
        the first screen's, and most learners never open them (README "Performance"). The pane
        builds them itself when the learner's saved form has any of them changed from its
        default.
        """
        self._focus_more = self._focus_more or focus
        if self._more_requested:  # a restore and a key press may both ask: build once
            return
        self._more_requested = True
        button = self.query_one("#more-open", Button)
        title = BrokenText(gettext(self.MORE_TITLE), classes="more-title")
        await self.mount_all(
            [title, *self._field_rows(self.MORE_FIELDS, self._more_values)], after=button
        )
        self.more_open = True
        self._widgets = {}
        await button.remove()
        if self.last_error:
            # Refused before the rows were built (a restart): the message goes under its row.
            self.recompute(typing=False)
        if self._focus_more:
            first = self.query_one(f"#field-{self.MORE_FIELDS[0].name}")
            first.focus()
            # Textual scrolls a focused widget into view before the rows just mounted are laid
            # out, within the pane's old height: with the button at the foot of the Bubble
            # pane zoomed at 80x24, only the title came into view, the fields below the screen.
            # Only while it still has the focus: a key of the same burst (Tab) or a jump may
            # have moved it, and the field focused then must stay in view.
            self.call_after_refresh(_scroll_visible_if_focused, first)

    @on(Button.Pressed, "#more-open")
    async def _more_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        await self.open_more(focus=True)

    def compose_header(self) -> ComposeResult:
        yield from ()

    def compose_footer(self) -> ComposeResult:
        yield from ()

    def on_mount(self) -> None:
        self._show_opened()

    def show_lesson(self, opened: OpenedLesson) -> None:
        """Show the form as the learner saved it in ``opened``'s progress, or the defaults
        (once mounted)."""
        self.opened = opened
        if self.is_mounted:
            self._show_opened()

    def _show_opened(self) -> None:
        for banner in self.query(PaneExercises):
            banner.show_lesson(self.opened.lesson, self.opened.progress)
        progress = self.opened.progress
        self.restore(
            progress.forms.get(self.form_name, {}), progress.last_good_form(self.form_name)
        )

    def _field_widgets(self) -> dict[str, Widget]:
        # Looked up once: values() runs on every key, and a query walks the pane's widgets.
        if not self._widgets:
            fields = self.all_fields() if self.more_open else self.FIELDS
            self._widgets = {field.name: self.query_one(f"#field-{field.name}") for field in fields}
            self._refused = set()  # new rows: marked again
        return self._widgets

    def values(self) -> dict[str, str]:
        """The form as typed: field name -> text (the MORE_FIELDS too, built or not)."""
        result: dict[str, str] = {}
        for name, widget in self._field_widgets().items():
            if isinstance(widget, Select):
                result[name] = str(widget.value)
            else:
                assert isinstance(widget, Input)
                result[name] = widget.value
        if not self.more_open:
            result.update(self._more_values)
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
                text = values[field.name]
                if field.options and not any(text == value for _label, value in field.options):
                    continue
                widget = self._field_widgets().get(field.name)
                if widget is None:  # a MORE field whose row is not built
                    self._more_values[field.name] = text
                elif isinstance(widget, Select):
                    widget.value = text
                else:
                    assert isinstance(widget, Input)
                    widget.value = text
        self._filling = False
        self.recompute(by_learner=by_learner, typing=False)

    def restore(self, values: dict[str, str], last_good: dict[str, str] | None = None) -> None:
        """Show the form as the learner left it (or the defaults); the MORE rows are built when
        any of them was changed from its default, so nothing the learner typed is hidden.

        ``last_good``: the form of the last good result, saved when the learner left a refused
        field: computed first, its figures stay under the message naming that field, as they
        did when the learner left (another form's figures never do)."""
        self._showing_figures = False
        self._good_values = {}
        self._good_figures = {}
        if last_good is not None and last_good != values:
            self.set_values({**self.defaults(), **last_good})
        self.set_values({**self.defaults(), **values})
        if any(self._more_values[f.name] != f.default for f in self.MORE_FIELDS):
            self.call_later(self.open_more)

    def first_focus(self) -> Widget | None:
        """The widget the pane's key focuses first: the form's first field."""
        return self.query_one(f"#field-{self.FIELDS[0].name}") if self.FIELDS else None

    async def study_target(self, note_id: str) -> Widget | None:
        """Where an exercise worked in this pane is done: its first field (ctrl+n)."""
        return self.query_one(f"#field-{self.FIELDS[0].name}") if self.FIELDS else None

    def compute(self, values: dict[str, str]) -> Outcome:
        """Turn the form into an engine spec, call the engine, return what to show.

        Raises:
            InputError: a field is invalid (``field`` names it).
        """
        raise InputError("form", "this pane has no calculator")

    def label_of(self, name: str) -> str:
        for field in self.all_fields():
            if field.name == name:
                return gettext(field.label)
        return name

    def error_text(self, error: InputError) -> str:
        """``error`` as the pane shows it: the field's label, then the message, which names the
        other fields it mentions by their labels too (each label kept on one line); for
        :class:`FormErrors`, each field's so, one a line."""
        if isinstance(error, FormErrors):
            return "\n".join(self.error_text(each) for each in error.errors)
        return gettext("{field}: {message}").format(
            field=unbreakable(self.label_of(error.field)), message=error.naming(self.field_named)
        )

    def field_named(self, name: str) -> str:
        """Input ``name`` as a message names it: its label on this form, quoted, never broken
        across lines (``“层数 L”``, not ``“层数`` then ``L”``)."""
        return strings.FIELD_NAMED.format(label=unbreakable(self.label_of(name)))

    def _result_parts(self) -> tuple[Static, ResultView]:
        # Looked up once, as the fields are (a query walks the pane's widgets on every key).
        if self._parts is None:
            self._parts = (
                self.query_one(".calc-error", Static),
                self.query_one(".calc-result", ResultView),
            )
        return self._parts

    def _queue_details(self, details: RenderableType | None, typing: bool) -> None:
        self._details = (details, typing)
        if not self._details_pending:
            self._details_pending = True
            self.call_after_refresh(self._show_details)

    def _show_details(self) -> None:
        self._details_pending = False
        details, typing = self._details
        view = self.query_one(".calc-details", ResultView)
        if details is None:
            view.display = False
            return
        view.display = True
        view.show(details, typing=typing)
        if self._held is not None:
            self.call_after_refresh(self._hold_focused_row)

    def _hold_focused_row(self) -> None:
        """Scroll so the field the learner chose in stays on the row it was on: a choice (a
        model preset) changes the figures' height above the less-used fields, which pushed the
        field off screen."""
        held, self._held = self._held, None
        if held is None:
            return
        widget, row = held
        if widget.is_attached and widget.region and widget.region.y != row:
            self.scroll_to(y=self.scroll_y + widget.region.y - row, animate=False)
            self.call_after_refresh(widget.scroll_visible, animate=False)

    def field_edited(self, typing: bool = True) -> None:
        """A field's value changed: recompute, unless the form is being filled or not yet
        computed (widgets also change when they mount; only a real change is the learner's).
        ``typing`` is False for a choice in a Select (see :meth:`recompute`)."""
        if not self._filling and self._last_values and self.values() != self._last_values:
            if self._note_shown:
                self.say("")
            self.recompute(by_learner=True, typing=typing)

    def say(self, message: str, warning: bool = False) -> None:
        """Show ``message`` under the form, next to the fields it is about (a toast could cover
        the figures); the learner's next edit clears it. ``""`` clears it now."""
        note = self.query_one(".calc-note", Static)
        note.update(message)
        note.set_class(warning, "-warning")
        note.display = self._note_shown = bool(message)

    @on(Input.Changed, ".form-field")
    def _input_changed(self, event: Input.Changed) -> None:
        event.stop()  # FormInput already called field_edited while the key was handled

    @on(Select.Changed, ".form-field")
    def _select_changed(self, event: Select.Changed) -> None:
        event.stop()
        if not is_stale(event):
            self.field_edited(typing=False)

    def _refused_fields(self, error: InputError) -> set[str]:
        """The form's fields ``error`` refuses (each of :class:`FormErrors`), by their labels:
        the engine may name a field by its spec's name (``num_microbatches``)."""
        errors = error.errors if isinstance(error, FormErrors) else (error,)
        labels = {self.label_of(each.field) for each in errors}
        return {name for name in self._field_widgets() if self.label_of(name) in labels}

    def _mark_refused(self, names: set[str]) -> None:
        """Class ``-refused`` on the fields ``names`` (tinted as Textual's invalid Input), off
        the others: the field says it was refused where the message is out of view."""
        if names == self._refused:
            return
        for name, widget in self._field_widgets().items():
            widget.set_class(name in names, "-refused")
        self._refused = set(names)

    def _typed_refusal(self, error_widget: Static, refused: set[str], text: str) -> bool | None:
        """Where the learner types in a refused main field: whether its message goes right under
        that field's row (True) rather than under the form, and, when just refused, a scroll
        that shows the field and the message. None where the focus is in no refused main field.

        Under the form, the message was out of view in a short pane (the Ledger at 40x12: the
        field, seven rows of form, then the message): it goes under the field when the form
        from the field's row down to the message's last line is taller than the pane."""
        focused = self.screen.focused
        name = (focused.id or "").removeprefix("field-") if focused is not None else ""
        row = focused.parent if focused is not None else None
        if (
            focused is None
            or focused.id not in self._main_field_ids
            or name not in refused
            or not isinstance(row, Widget)
        ):
            return None
        if self._refusal is not None and self._refusal[0] is row and error_widget.display:
            return self._refusal[1]  # decided when refused: the message does not jump per key
        # Just refused (the regions' lookups are once per refusal, not per key).
        last_row = self._field_widgets()[self.FIELDS[-1].name].parent
        assert isinstance(last_row, Widget)
        view = self.scrollable_content_region
        lines = len(hanging_lines(text, view.width, ""))
        tall = last_row.virtual_region.bottom + lines - row.virtual_region.y > view.height
        self._refusal = (row, tall)
        self.call_after_refresh(self._scroll_to_refusal, row, error_widget)
        return tall

    def _scroll_to_refusal(self, row: Widget, error_widget: Static) -> None:
        """Scroll so the refused field's row and its message are in view (the row first, where
        both do not fit)."""
        if row.is_attached and error_widget.display:
            both = row.virtual_region.union(error_widget.virtual_region)
            self.scroll_to_region(both, animate=False, origin_visible=True)

    def _place_error(self, error_widget: Static, error: InputError, text: str) -> None:
        """Put the message right under the bad field's row when that row is below the result
        (the less-used fields): there it would be a screen away from the field it names. A main
        field's message stays under the form, which is next to it, unless the learner types in
        it and the pane is too short for both (:meth:`_typed_refusal`). The refused fields are
        marked (:meth:`_mark_refused`)."""
        field_name = error.field
        refused = self._refused_fields(error)
        self._mark_refused(refused)
        widget = self._field_widgets().get(field_name) if self.more_open else None
        more = {field.name for field in self.MORE_FIELDS}
        row = widget.parent if widget is not None and field_name in more else None
        anchor = row if isinstance(row, Widget) else self.query_one(".calc-result", ResultView)
        if isinstance(row, Widget):
            if error_widget.parent is self and self.children.index(error_widget) == (
                self.children.index(row) + 1
            ):
                return
            self.move_child(error_widget, after=row)
            focused = self.screen.focused
            if focused is None or focused is widget or self not in focused.ancestors:
                # Not away from another field of the pane with the focus (params N after a
                # restart, the refused value restored): the next key would land there unseen.
                self.call_after_refresh(error_widget.scroll_visible, animate=False)
            return
        under_row = self._typed_refusal(error_widget, refused, text)
        if under_row and self._refusal is not None:
            typed_row = self._refusal[0]
            if self.children.index(error_widget) != self.children.index(typed_row) + 1:
                self.move_child(error_widget, after=typed_row)
        elif self.children.index(error_widget) + 1 != self.children.index(anchor):
            self.move_child(error_widget, before=anchor)

    def _last_good_text(self, values: dict[str, str], error: InputError) -> str:
        """The message for ``error`` above the figures kept on screen, saying which value they
        are for where the form differs from theirs in the bad field alone (typing ``1e40``
        passes through ``1e4``, whose figures stay: "showing the result for 1e4")."""
        changed = [name for name, text in values.items() if self._good_values.get(name) != text]
        if len(changed) == 1 and self.label_of(changed[0]) == self.label_of(error.field):
            good = self._good_values[changed[0]].strip()
            if good:
                return strings.CALC_LAST_GOOD_FOR.format(
                    error=self.last_error, value=typed_value(kept_value(good))
                )
        return strings.CALC_LAST_GOOD.format(error=self.last_error)

    def recompute(self, by_learner: bool = False, typing: bool | None = None) -> None:
        """Compute from the form and show the result, or the message naming the bad field.

        ``by_learner`` is True when the learner changed the form (then the app saves it). On
        bad input the figures on screen stay, labelled as the last good result (where there are
        none, the message alone): the same after a restart (:meth:`restore` computes the saved
        last good form first), a resize or a change of view. ``typing``
        (by default ``by_learner``) is True for an edit of a text field: the result keeps its
        height (see :class:`ResultView`).
        """
        typing = by_learner if typing is None else typing
        focused = self.screen.focused if by_learner else None
        # A main field is above the figures: they cannot move it, so its row is not looked up
        # while the learner types there (asking for a region can make Textual rebuild its map
        # of every widget, 2-5 ms of the key's frame).
        above = typing and focused is not None and focused.id in self._main_field_ids
        if focused is not None and not above and self in focused.ancestors and focused.region:
            self._held = (focused, focused.region.y)
        values = self.values()
        self._last_values = values
        error_widget, result = self._result_parts()
        figures: dict[str, float] | None = None
        last_good: dict[str, str] | None = None
        try:
            outcome = self.compute(values)
        except InputError as error:
            self.last_error = self.error_text(error)
            if self.figure_name:
                figures = {}
            if self._showing_figures:
                last_good = self._good_values
                if self.figure_name:
                    figures = dict(self._good_figures)
                self._held = None  # the last good figures stay: nothing moves
                text = self._last_good_text(values, error)
            else:
                text = self.last_error
                result.show(strings.CALC_ENTER_VALUES)
                self._showing_figures = False
                self._queue_details(None, typing=False)
            error_widget.update(BrokenLines(text, indent=""))
            self._place_error(error_widget, error, text)
            error_widget.display = True
        else:
            self.last_error = ""
            self._refusal = None
            self._mark_refused(set())
            if error_widget.display:  # setting it, even to the same value, re-lays out
                error_widget.update("")
                error_widget.display = False
            result.show(outcome.renderable, typing=typing)
            self._showing_figures = True
            self._good_values = values
            self._good_figures = dict(outcome.figures or {})
            self._queue_details(outcome.details, typing)
            figures = outcome.figures
        self.last_change = self.FormChanged(
            self.form_name, values, self.figure_name, figures, by_learner, last_good
        )
        self.post_message(self.last_change)


def _scroll_visible_if_focused(widget: Widget) -> None:
    """Scroll ``widget`` into view if it has the focus (see ``CalculatorPane``'s MORE rows)."""
    if widget.has_focus:
        widget.scroll_visible(animate=False)
