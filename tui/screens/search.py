"""Search (``/``, ctrl+f) and the notes view (ctrl+e), over the main screen.

:class:`SearchScreen` searches the lesson text as the reader shows it and the learner's own
answers, reflections and exercise notes (``engine.search``) as the query is typed, and lists the
hits, each with its section (and the field, for the learner's text) and a snippet with the match
marked. Keys that come in a burst (a paste without bracketed paste, a fast typist over SSH) are
each drawn in the query at once; the search runs when the burst is typed (no key left waiting),
or :data:`SEARCH_PAUSE_SECONDS` after the last change when the burst ends with a key that changes
no text, and before up/down or Enter uses the hits. The query holds :data:`MAX_QUERY` characters
at most (the count line says so when more were typed or pasted): Textual's Input measures its
whole value on each key, so thousands of characters slowed each further key. Enter takes the
highlighted hit; the main screen then shows it (``MainScreen.jump_to``).
:class:`NotesScreen` lists everything the learner wrote, in the lesson's order, read-only; Enter
goes to where the entry is edited.

Everything shown is literal: the query, the lesson's and the learner's text are never parsed as
markup or a pattern (``Content``, ``Text``; control characters drawn as visible symbols).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from rich.console import Console, ConsoleOptions, RenderResult
from rich.measure import Measurement
from rich.text import Text
from textual import events, on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.content import Content
from textual.message import Message
from textual.screen import ModalScreen
from textual.timer import Timer
from textual.widgets import Input, OptionList, Static
from textual.widgets.option_list import Option

from engine.lesson import Lesson
from engine.linebreak import hanging_lines, widest
from engine.progress import LessonProgress
from engine.search import (
    Hit,
    Place,
    clip,
    learner_places,
    search_places,
    searchable_places,
    snippet,
)
from tui import strings
from tui.keys import KeyOrderApp
from tui.widgets.literal import LiteralInput, visible_text
from tui.widgets.reader import MATCH_STYLE, BrokenText

MAX_LISTED = 200
"""Hits listed at most (a query of one common character matches thousands)."""

MAX_QUERY = 200
"""Characters a query holds at most: a sentence looked for fits; thousands slowed each key (see
the module docstring)."""

SEARCH_PAUSE_SECONDS = 0.15
"""How long after a change deferred in a burst the search runs if no later change ran it."""


def place_heading(place: Place, titles: Mapping[str, str]) -> str:
    """Where ``place`` is, in words: its section, and for the learner's text the field."""
    section = titles.get(place.section_id, strings.SEARCH_NO_SECTION)
    if place.source == "lesson":
        return section
    field = strings.SEARCH_FIELDS[place.source].format(number=place.number, label=place.label)
    return f"{section} · {field}"


class QueryInput(LiteralInput):
    """The query: :data:`MAX_QUERY` characters at most; what is typed or pasted past them is
    left out, and :class:`QueryInput.Cut` tells the screen (Input's own ``max_length`` refuses
    a whole paste that does not fit, with a bell for each key)."""

    class Cut(Message):
        """Characters typed or pasted past :data:`MAX_QUERY` were left out."""

    def replace(self, text: str, start: int, end: int) -> None:
        value = self.value
        start, end = sorted((max(0, start), min(len(value), end)))
        room = MAX_QUERY - (len(value) - (end - start))
        if len(text) > room:
            text = text[: max(room, 0)]
            self.post_message(self.Cut())
            if not text and start == end:
                return
        super().replace(text, start, end)


@dataclass(frozen=True)
class SearchResult:
    """What the search screen returns: the query as typed (shown again next time) and the hit
    chosen (None when the learner closed it)."""

    query: str
    hit: Hit | None


class SearchScreen(ModalScreen[SearchResult]):
    """Type to search; up/down choose a hit, Enter shows it, escape closes."""

    DEFAULT_CSS = """
    SearchScreen { align: center top; }
    #search-body {
        width: 100%; max-width: 110; height: 100%;
        background: $surface; border: thick $primary; padding: 0 1;
    }
    #search-query { margin: 0 0 0 0; }
    #search-count { color: $text-muted; }
    #search-hits { height: 1fr; border: none; }
    SearchScreen .search-title { text-style: bold; color: $accent; margin: 0 0 1 0; }
    SearchScreen .search-hint { color: $text-muted; margin: 0 0 1 0; }
    SearchScreen.-short .search-title, SearchScreen.-short .search-hint { margin: 0; }
    SearchScreen.-short #search-query { border: none; height: 1; }
    """
    # Under 18 rows (40x12) the margins and the query's border left the hits one row: there
    # they give their rows to the hits (the title and the hint have classes of their own: the
    # app's `.section-title` and `.hint` margins would win over this default CSS).
    VERTICAL_BREAKPOINTS = [(0, "-short"), (18, "-tall")]
    BINDINGS = [
        Binding("escape", "close", strings.msgids.SEARCH_CLOSE, id="search_close"),
        Binding("down", "move(1)", strings.msgids.SEARCH_NEXT, show=False, id="search_next"),
        Binding("up", "move(-1)", strings.msgids.SEARCH_PREVIOUS, show=False, id="search_previous"),
        Binding(
            "pagedown", "move(10)", strings.msgids.SEARCH_NEXT, show=False, id="search_page_down"
        ),
        Binding(
            "pageup", "move(-10)", strings.msgids.SEARCH_PREVIOUS, show=False, id="search_page_up"
        ),
        Binding(
            "ctrl+f", "focus_query", strings.msgids.SEARCH_QUERY, show=False, id="search_query"
        ),
    ]
    HELP = strings.msgids.SEARCH_HELP

    def __init__(
        self, lesson: Lesson, progress: LessonProgress, query: str, titles: Mapping[str, str]
    ) -> None:
        super().__init__()
        self.lesson = lesson
        self.progress = progress
        self.titles = titles
        self._query = query
        self.hits: list[Hit] = []
        # The texts searched, listed once: nothing else changes them while the search is open.
        self._places = list(searchable_places(lesson, progress))
        # The search of the query shown waits for the rest of a burst (False: the hits are its).
        self._search_due = False
        self._search_timer: Timer | None = None
        self._cut = False  # characters past MAX_QUERY were left out of the query shown

    def compose(self) -> ComposeResult:
        with Vertical(id="search-body"):
            yield Static(strings.SEARCH_TITLE, classes="search-title", markup=False)
            yield QueryInput(
                self._query[:MAX_QUERY], placeholder=strings.SEARCH_PLACEHOLDER, id="search-query"
            )
            yield Static("", id="search-count", markup=False)
            yield OptionList(id="search-hits")
            yield BrokenText(strings.SEARCH_KEYS, classes="search-hint")

    @property
    def query_input(self) -> Input:
        return self.query_one("#search-query", Input)

    def on_mount(self) -> None:
        self.run_search(self._query)

    def action_focus_query(self) -> None:
        self.set_focus(self.query_input)

    def action_close(self) -> None:
        self.dismiss(SearchResult(self.query_input.value, None))

    def action_move(self, delta: int) -> None:
        self._search_waiting()
        hits = self.query_one("#search-hits", OptionList)
        if hits.option_count:
            current = hits.highlighted if hits.highlighted is not None else -1
            hits.highlighted = max(0, min(hits.option_count - 1, current + delta))

    @on(Input.Changed, "#search-query")
    def _query_changed(self, event: Input.Changed) -> None:
        event.stop()
        app = self.app
        if isinstance(app, KeyOrderApp) and app.keys_waiting:
            # More keys of a burst wait: each is drawn at once, the search runs once after them.
            self._search_due = True
            if self._search_timer is None:
                self._search_timer = self.set_timer(SEARCH_PAUSE_SECONDS, self._search_after_pause)
            else:
                self._search_timer.reset()
            return
        self.run_search(event.value)

    @on(QueryInput.Cut)
    def _query_cut(self, event: QueryInput.Cut) -> None:
        event.stop()
        if not self._cut:
            self._cut = True
            self._show_count(self.query_input.value)

    def _search_after_pause(self) -> None:
        self._search_timer = None
        app = self.app
        if isinstance(app, KeyOrderApp) and app.keys_waiting:
            self._search_timer = self.set_timer(SEARCH_PAUSE_SECONDS, self._search_after_pause)
            return
        self._search_waiting()

    def _search_waiting(self) -> None:
        """Run the search a burst deferred, if any (the hits then match the query shown)."""
        if self._search_due:
            self.run_search(self.query_input.value)

    def on_resize(self, event: events.Resize) -> None:
        self.run_search(self.query_input.value)  # snippets fit the new width

    def _width(self) -> int:
        width = self.query_one("#search-hits", OptionList).scrollable_content_region.width
        return max(10, (width or self.app.size.width - 6) - 2)

    def run_search(self, query: str) -> None:
        """List the hits of ``query`` (all of them up to :data:`MAX_LISTED`)."""
        self._search_due = False
        if self._search_timer is not None:
            self._search_timer.stop()
            self._search_timer = None
        self.hits = search_places(self._places, query)
        if len(query) < MAX_QUERY:
            self._cut = False
        self._show_count(query)
        width = self._width()
        options = self.query_one("#search-hits", OptionList)
        options.clear_options()
        options.add_options(
            Option(self._prompt(hit, width), id=str(index))
            for index, hit in enumerate(self.hits[:MAX_LISTED])
        )
        if self.hits:
            options.highlighted = 0

    def _show_count(self, query: str) -> None:
        """How many hits (or why none), and whether the query was cut."""
        if not query.strip():
            said = strings.SEARCH_EMPTY
        elif not self.hits:
            said = strings.SEARCH_NONE
        elif len(self.hits) > MAX_LISTED:
            said = strings.SEARCH_MANY.format(count=len(self.hits), shown=MAX_LISTED)
        else:
            said = strings.search_count(len(self.hits))
        if self._cut:
            said = strings.SEARCH_CUT.format(limit=MAX_QUERY, found=said)
        self.query_one("#search-count", Static).update(Content(said))

    def _prompt(self, hit: Hit, width: int) -> Content:
        heading = Content(clip(visible_text(place_heading(hit.place, self.titles)), width))
        # Control characters become one-cell symbols first, so the snippet fits as measured.
        found = snippet(visible_text(hit.place.text), hit.start, hit.end, width)
        line = Content.assemble(found.before, (found.match, MATCH_STYLE), found.after)
        return Content("\n").join([heading.stylize("dim"), line])

    def _choose(self, index: int | None) -> None:
        if index is None or not 0 <= index < len(self.hits):
            return
        self.dismiss(SearchResult(self.query_input.value, self.hits[index]))

    @on(Input.Submitted, "#search-query")
    def _submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self._search_waiting()
        self._choose(self.query_one("#search-hits", OptionList).highlighted)

    @on(OptionList.OptionSelected, "#search-hits")
    def _selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self._choose(event.option_index)


class EntryPrompt:
    """One entry of the notes view: where it is (bold), then the learner's text broken by the
    reader's rule (``engine.linebreak``) and indented under it, literally."""

    def __init__(self, heading: str, text: str) -> None:
        self.heading = visible_text(heading)
        # A tab becomes the spaces to the next stop of 4 (the answer box's indent): the line
        # breaker counts a tab as no cell, and Rich would then draw it 8 wide, past the line.
        self.text = visible_text(text).expandtabs(4)

    def __str__(self) -> str:
        return f"{self.heading}\n{self.text}"

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        width = max(options.max_width, 1)
        heading = hanging_lines(self.heading, width, "", "  ")
        body = hanging_lines(self.text, width, "  ")
        yield Text("\n".join(heading), style="bold", no_wrap=True, overflow="crop")
        yield Text("\n".join(body), no_wrap=True, overflow="crop")

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> Measurement:
        lines = [*self.heading.splitlines(), *self.text.splitlines()]
        return Measurement(1, widest(lines or [""]) + 2)


class NotesScreen(ModalScreen[Place | None]):
    """Everything the learner wrote, read-only, in the lesson's order; Enter goes to where the
    highlighted entry is edited, escape closes."""

    DEFAULT_CSS = """
    NotesScreen { align: center top; }
    #notes-body {
        width: 100%; max-width: 110; height: 100%;
        background: $surface; border: thick $primary; padding: 0 1;
    }
    #notes-count { color: $text-muted; }
    #notes-entries { height: 1fr; border: none; }
    #notes-entries > .option-list--option { padding: 0 0 1 0; }
    """
    BINDINGS = [
        Binding("escape", "dismiss(None)", strings.msgids.SEARCH_CLOSE, id="notes_close"),
        Binding(
            "ctrl+e", "dismiss(None)", strings.msgids.SEARCH_CLOSE, show=False, id="notes_again"
        ),
    ]
    HELP = strings.msgids.NOTES_HELP

    def __init__(self, lesson: Lesson, progress: LessonProgress, titles: Mapping[str, str]) -> None:
        super().__init__()
        self.places = learner_places(lesson, progress)
        self.titles = titles

    def compose(self) -> ComposeResult:
        with Vertical(id="notes-body"):
            yield Static(strings.NOTES_TITLE, classes="section-title", markup=False)
            count = strings.NOTES_COUNT.format(count=len(self.places))
            yield Static(
                count if self.places else strings.NOTES_EMPTY, id="notes-count", markup=False
            )
            yield OptionList(
                *(
                    Option(
                        EntryPrompt(place_heading(place, self.titles), place.text), id=str(index)
                    )
                    for index, place in enumerate(self.places)
                ),
                id="notes-entries",
            )
            yield BrokenText(strings.NOTES_KEYS, classes="hint")

    def on_mount(self) -> None:
        entries = self.query_one("#notes-entries", OptionList)
        if self.places:
            entries.highlighted = 0
        self.set_focus(entries)

    @on(OptionList.OptionSelected, "#notes-entries")
    def _selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self.dismiss(self.places[event.option_index])
