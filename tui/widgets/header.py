"""The header: Textual's Header with its line fitted to the width instead of cut.

Textual's Header draws ``title — sub_title`` on one line and cuts it with an ellipsis where it is
wider than the space between its icon and its clock space, which in Chinese (two cells a
character) happens from 60 columns down: the lesson's status ends in ``教材已备， …``. Here the
line drops whole parts instead, the least needed first: the app's name, then the status line's
parts from its end (the save time, the lesson's status, the plan figure), so that what is shown
is never cut; the name comes back where the parts left leave room for it. The same rule applies
in both languages, and to the quiz's status line (:class:`FittingLine`).
"""

from __future__ import annotations

from rich.cells import cell_len
from textual.app import ComposeResult
from textual.content import Content
from textual.visual import VisualType
from textual.widgets import Header, Static
from textual.widgets._header import HeaderClockSpace, HeaderIcon, HeaderTitle

PART_SEPARATOR = " · "
"""How the status line joins its parts (``ShardbookApp.compute_status_line``)."""


def header_forms(title: str, sub_title: str) -> list[tuple[str, str]]:
    """The header's (title, sub_title) forms, the most preferred first: the status line with
    all its parts, then less one part from its end at a time, down to its first; each with the
    app's name, then without it. The name goes before a part of the status line, and comes back
    where the parts left leave room for it (``shardbook — S15 · plan 0/25`` at 60 columns)."""
    parts = sub_title.split(PART_SEPARATOR) if sub_title else []
    if not parts:
        return [(title, sub_title)]
    forms = []
    for count in range(len(parts), 0, -1):
        shown = PART_SEPARATOR.join(parts[:count])
        forms.extend([(title, shown), ("", shown)] if title else [("", shown)])
    return forms


def fitted(parts: list[str], width: int, tail: str = "") -> str:
    """``parts`` joined by :data:`PART_SEPARATOR`, less whole parts from the end, each with its
    separator, until the line fits in ``width`` cells; ``tail`` (a passing state) after them
    while at least the first part fits beside it; the first part alone (cut by the widget)
    when even that does not fit."""
    for ending in ([tail] if tail else [], []):
        for count in range(len(parts), 0, -1):
            shown = PART_SEPARATOR.join([*parts[:count], *ending])
            if cell_len(shown) <= width:
                return shown
    return parts[0] if parts else ""


class FittingLine(Static):
    """One line of parts, shown literally as the longest run of its first parts that fits the
    widget's width, then its tail (see :func:`fitted`; fitted again when the width changes)."""

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(markup=False, id=id)
        self.parts: list[str] = []
        self.tail = ""

    def show(self, parts: list[str], tail: str = "") -> None:
        self.parts, self.tail = parts, tail
        # The whole line stays the Static's content; what is drawn is fitted (render).
        self.update(PART_SEPARATOR.join([*parts, tail] if tail else parts))

    def render(self) -> VisualType:
        width = self.content_size.width
        if not width:
            return self.visual
        return Content(fitted(self.parts, width, self.tail))


class OneLineTitle(HeaderTitle):
    """Textual's header title, which a new title repaints without laying the screen out again:
    it is one line (``text-wrap: nowrap``) as wide as the header, so a title of one line
    changes what it draws, never its size. The status line changes after every save (its
    time, the plan's figure), and each change laid out every widget of the screen."""

    def update(self, content: VisualType = "", *, layout: bool = True) -> None:
        text = content.plain if isinstance(content, Content) else content
        one_line = isinstance(text, str) and "\n" not in text
        super().update(content, layout=layout and not one_line)


class FittingHeader(Header):
    """A :class:`textual.widgets.Header` whose line is the longest form that fits whole (see
    module docstring); at a width where even the shortest does not fit, that one is cut."""

    def compose(self) -> ComposeResult:
        for widget in super().compose():
            yield OneLineTitle() if type(widget) is HeaderTitle else widget

    def _title_width(self) -> int:
        """Cells between the icon and the clock space (0 before the first layout)."""
        if not self.size.width:
            return 0
        beside = sum(widget.outer_size.width for widget in self.query(HeaderIcon).results()) + sum(
            widget.outer_size.width for widget in self.query(HeaderClockSpace).results()
        )
        return max(0, self.size.width - beside)

    def _form(self, title: str, sub_title: str) -> Content:
        if title:
            return self.app.format_title(title, sub_title)
        return Content(sub_title).stylize("dim")  # the status line as Textual styles it

    def format_title(self) -> Content:
        title, sub_title = self.screen_title, self.screen_sub_title
        width = self._title_width()
        if not width:
            return self._form(title, sub_title)
        forms = [self._form(*form) for form in header_forms(title, sub_title)]
        return next((form for form in forms if cell_len(form.plain) <= width), forms[-1])

    def on_resize(self) -> None:
        # Textual formats the line when the title changes; a new width may need another form.
        self.call_after_refresh(self._refit)

    def _refit(self) -> None:
        for title in self.query(HeaderTitle).results():
            title.update(self.format_title())
