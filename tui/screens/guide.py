"""Guided study on the main screen: the study plan (``engine.plan``) turned into places to go.

:class:`StudyGuide` belongs to the :class:`~tui.screens.main.MainScreen` and does what its keys
ask: ``ctrl+n`` goes to the next unfinished place of the plan and puts the cursor where that
place is worked (a section in the reader, an answer box, the Ledger's first field, the strategy
and its note box in the Diagrams pane, a note box in Trade-offs); the plan view (F11) goes to the
step chosen in it. It also draws the plan's states where the learner reads: the outline's marks,
the exercises, objectives and reading links in the reader, and each side pane's line saying which
exercises it serves.

Nothing here decides what a step is or when it is done (``engine.plan`` does), and nothing here
writes the progress: reading a section is posted as :class:`SectionRead` and the app records it;
an objective rated is recorded by the app's callable the screen hands to the objective.
A section is read only when the learner went through it: its end was on screen while they
scrolled the reader themselves (keys, the wheel, the scroll bar, ctrl+n's page down; in a section
shown whole, trying to scroll is enough). Showing a section (the outline's highlight, ``]``, a
search match, where the lesson was left) reads nothing.

The module (about 700 lines) keeps the two halves of guided study together: the reader that
decides when a section was read, and the guide that goes to each kind of place and draws the
plan's states; both follow the same plan and the same ``SectionRead`` message.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable
from typing import TYPE_CHECKING, cast

from textual import events
from textual.actions import SkipAction
from textual.containers import VerticalScroll
from textual.message import Message
from textual.scrollbar import ScrollDown, ScrollTo, ScrollUp
from textual.widget import Widget
from textual.widgets import OptionList
from textual.widgets.option_list import OptionDoesNotExist

from engine.exercises import get_note
from engine.i18n import gettext
from engine.lesson import Item, Lesson, Section
from engine.plan import (
    ObjectiveStatus,
    Place,
    Plan,
    ReviewOutlook,
    Step,
    build_plan,
    describe_step,
    next_place,
    study_places,
)
from engine.progress import LessonProgress
from engine.reading import BULLET, section_blocks
from engine.strategies import get_strategy
from engine.timefmt import utc_now
from tui import strings
from tui.toasts import withdraw_text
from tui.widgets.reader import BrokenLines, BrokenText, block_widget
from tui.widgets.scrolling import FocusFollowsScroll
from tui.widgets.side import SideTabs
from tui.widgets.study import ExerciseItem, ObjectiveItem, PaneExercises, ReadingLink

if TYPE_CHECKING:
    from tui.screens.main import MainScreen
    from tui.widgets.diagrams import DiagramsPane
    from tui.widgets.notes import NoteBox

# How long the message saying where ctrl+n went stays (seconds): it covers the lesson's first
# lines, so not long.
SAY_SECONDS = 4
# How long ctrl+n waits for a section just shown to be laid out (see _section_laid_out).
LAYOUT_WAIT_SECONDS = 1.0


class SectionRead(Message):
    """The learner scrolled to the end of section ``section_id`` (the app marks it read)."""

    def __init__(self, section_id: str) -> None:
        super().__init__()
        self.section_id = section_id


# Frames a scroll key waits at most for a section just shown to be laid out (one or two).
LAYOUT_FRAMES = 10


class ReadingPane(FocusFollowsScroll, VerticalScroll):
    """The reading pane. It says when the learner scrolls it themselves (a key, the wheel, the
    scroll bar), so the app's own scrolling (a section shown, a search match, the place
    restored) reads nothing. A scroll key in a section shown whole says it too: the learner
    is reading there, though nothing moves."""

    class LearnerScrolled(Message):
        """The learner scrolled the reading pane, or tried to."""

    def _by_learner(self) -> None:
        self.post_message(self.LearnerScrolled())

    def _laid_out(self) -> bool:
        """Whether the content shown is laid out: its first block has a height (a section just
        shown has none until its first layout; a hidden pane has none either, and waits for
        nothing)."""
        shown = next((child for child in self.children if child.display), None)
        return shown is None or bool(shown.region.height) or not self.region.height

    def _scroll_key(self, scroll: Callable[[], None], frames: int = LAYOUT_FRAMES) -> None:
        """A scroll key, applied once the content is laid out (``frames`` more frames at most):
        typed in one burst with the key that showed a section, it scrolls that section instead
        of the empty pane before its layout."""
        if frames and not self._laid_out():
            self.call_after_refresh(self._scroll_later, scroll, frames - 1)
            return
        self._by_learner()
        scroll()  # SkipAction when there is nothing to scroll: the key goes on to the screen

    def _scroll_later(self, scroll: Callable[[], None], frames: int) -> None:
        # The key has been handled: nothing to scroll is nothing to do.
        with contextlib.suppress(SkipAction):
            self._scroll_key(scroll, frames)

    def action_scroll_down(self) -> None:
        self._scroll_key(super().action_scroll_down)

    def action_scroll_up(self) -> None:
        self._scroll_key(super().action_scroll_up)

    def action_page_down(self) -> None:
        self._scroll_key(super().action_page_down)

    def action_page_up(self) -> None:
        self._scroll_key(super().action_page_up)

    def action_scroll_end(self) -> None:
        self._scroll_key(super().action_scroll_end)

    def action_scroll_home(self) -> None:
        self._scroll_key(super().action_scroll_home)

    # Textual calls these as well as Widget's own handlers, which do the scrolling.
    def _on_mouse_scroll_down(self, event: events.MouseScrollDown) -> None:
        self._by_learner()

    def _on_mouse_scroll_up(self, event: events.MouseScrollUp) -> None:
        self._by_learner()

    def _on_scroll_to(self, message: ScrollTo) -> None:
        self._by_learner()

    def _on_scroll_down(self, message: ScrollDown) -> None:
        self._by_learner()

    def _on_scroll_up(self, message: ScrollUp) -> None:
        self._by_learner()


def _option_index(outline: OptionList, option_id: str) -> int | None:
    """The outline's entry for ``option_id``; None before the lesson fills the outline."""
    try:
        return outline.get_option_index(option_id)
    except OptionDoesNotExist:
        return None


def _states(plan: Plan) -> dict[str, str]:
    return {step.id: step.state for step in plan.steps}


def _marks(plan: Plan) -> tuple[dict[str, str], tuple[object, ...]]:
    """What the marks show: each step's state and each objective's ratings."""
    return _states(plan), tuple(objective.rating for objective in plan.objectives)


class SectionEnd(Widget):
    """The last line of a section in the reader, empty: once it is laid out (its first
    resize), the reader's height is the section's and can tell whether its end is on screen."""

    DEFAULT_CSS = "SectionEnd { height: 1; }"

    def __init__(self, section_id: str) -> None:
        super().__init__()
        self.section_id = section_id

    class LaidOut(Message):
        """The section in the reader has been laid out."""

    def render(self) -> str:
        return ""

    def on_resize(self) -> None:
        self.post_message(self.LaidOut())


class StudyGuide:
    """The main screen's guided study (see module docstring)."""

    def __init__(self, screen: MainScreen) -> None:
        self.screen = screen
        # The place ctrl+n last went to: where the learner is when the focus does not say.
        self.last_place: tuple[str, str] | None = None
        # The plan whose states are drawn: marks are redrawn only when they change.
        self._plan: Plan | None = None
        # Whether ctrl+n has said how a section is read (once: then it would hide the text).
        self._said_read = False
        # The place ctrl+n last said was the step to do, and what it said: withdrawn once that
        # place is done (see _withdraw_said).
        self._said: tuple[tuple[str, str], str] | None = None
        # The section the learner scrolled in since it was shown (only there can an end on
        # screen mean it was read).
        self.scrolled_in: str | None = None
        # Objectives ctrl+n has put the learner on to rate at the start and at the end, this
        # session: each is asked once, so ctrl+n moves on past one the learner leaves unrated.
        self._asked_at_start: set[str] = set()
        self._asked_at_end: set[str] = set()
        # The objective ctrl+n last put the learner on to rate: ctrl+n from it goes on from
        # the plan's start (the learner is rating, not reading the objectives section).
        self._rating: str | None = None

    @property
    def lesson(self) -> Lesson | None:
        return self.screen.lesson

    @property
    def progress(self) -> LessonProgress:
        return self.screen.progress

    # ----------------------------------------------------------------- the plan
    def plan(self, reviews: bool = False) -> Plan:
        """The plan now. ``reviews``: with the real review outlook (imports the quiz engine);
        otherwise the reviews step counts as done, which changes no lesson step's state."""
        assert self.lesson is not None
        outlook = None if reviews else ReviewOutlook(at=utc_now())
        return build_plan(self.lesson, self.progress, reviews=outlook)

    def refresh(self) -> str:
        """Draw the plan's states where they show (outline, reader, side panes) if they
        changed since last drawn; returns the header's figure (``""`` without a lesson)."""
        if self.lesson is None:
            self._plan = None
            return ""
        plan = self.plan()
        if not self.screen.query("#reading"):
            # A save before the screen is composed: the marks are drawn on the next refresh.
            return plan.figure
        drawn = self._plan
        self._plan = plan
        self._withdraw_said(plan)
        if drawn is None or _marks(drawn) != _marks(plan):
            self._draw_states()
        else:
            # A strategy's notes are marked in the Diagrams picker, finer than the plan's steps:
            # its last note can leave exercises 2 and 3 as they were ("started").
            self._draw_strategy_marks()
        return plan.figure

    def _withdraw_said(self, plan: Plan) -> None:
        """Take ctrl+n's message off the screen once the place it asked for is done: "Not done
        yet: activations still need 'heads a'" stayed up, for its 4 seconds, under a header and
        an exercise that said done."""
        if self._said is None:
            return
        key, text = self._said
        place = next((p for p in study_places(plan, self.progress) if p.key == key), None)
        if place is None or place.done or place.step.done:
            self._said = None
            withdraw_text(self.screen.app, text)

    def forget_states(self) -> None:
        """A lesson was opened: every mark is drawn again at the next refresh."""
        self._plan = None
        self.last_place = None

    @property
    def drawn(self) -> Plan:
        """The plan whose states are drawn (computed now if none is yet)."""
        if self._plan is None:
            self._plan = self.plan()
        return self._plan

    def state(self, step_id: str) -> str:
        """A step's state as drawn (``todo`` for an id the plan does not have)."""
        try:
            return self.drawn.step(step_id).state
        except KeyError:
            return "todo"

    def _draw_states(self) -> None:
        screen = self.screen
        outline = screen.outline()  # one built later is drawn with the states of then
        if outline is not None:
            for section in screen.sections:
                if _option_index(outline, section.id) is not None:
                    outline.replace_option_prompt(section.id, self.outline_prompt(section))
        for item in screen.query(ExerciseItem):
            item.show_state(self.state(item.step_id))
        for meta in screen.query(".meta-next").results(BrokenText):
            meta.update(self._meta_text())
        for objective in screen.query(ObjectiveItem):
            trained, all_done = self._trained(objective.item.id)
            objective.show(trained, self.progress.objective_rating(objective.item.id), all_done)
        for banner in screen.query(PaneExercises):
            banner.show_states(self.lesson, _states(self.drawn))
        self._draw_strategy_marks()

    def _draw_strategy_marks(self) -> None:
        for diagrams in self.screen.query("DiagramsPane"):
            if diagrams.is_mounted:
                cast("DiagramsPane", diagrams).refresh_marks()

    def outline_prompt(self, section: Section) -> BrokenLines:
        """A section's outline entry: the state of its steps together (its glyph), then its
        title."""
        if self.lesson is None:
            return BrokenLines(section.title)
        state = self.drawn.section_state(section.id)
        return BrokenLines(f"{strings.STATE_GLYPHS[state]} {section.title}")

    def _trained(self, objective_id: str) -> tuple[str, bool]:
        """What trains an objective, each with its state's glyph; and whether all are done."""
        plan = self.drawn
        objective = next((o for o in plan.objectives if o.id == objective_id), None)
        if objective is None or not objective.trained_by:
            return "", False
        parts = []
        for step_id in objective.trained_by:
            step = plan.step(step_id)
            kind = strings.STEP_KINDS.get(step.kind, step.kind)
            parts.append(f"{kind} {step.number} {strings.STATE_GLYPHS[step.state]}")
        total = len(objective.trained_by)
        text = strings.OBJECTIVE_TRAINED.format(
            trainers=strings.LIST_SEPARATOR.join(parts), done=objective.trained_done, total=total
        )
        return text, objective.trained_done == total

    # ----------------------------------------------------------------- the reader
    def section_widgets(self, section: Section) -> list[Widget] | None:
        """The reader's widgets for a section whose items are worked or followed from the
        reader (exercises, objectives, items with links); None for any other section."""
        if self.lesson is None:
            return None
        kinds = ("exercises", "objectives")
        if section.kind not in kinds and not any(item.links for item in section.items):
            return None
        widgets: list[Widget] = []
        items = iter(enumerate(section.items, start=1))
        for block in section_blocks(section):
            if block.kind != "item":
                widgets.append(block_widget(block))
                continue
            number, item = next(items)
            widgets.extend(self._item_widgets(section, item, number, block.marker))
        hint = {"exercises": strings.EXERCISE_HINT, "objectives": strings.OBJECTIVE_HINT}
        widgets.append(BrokenText(hint.get(section.kind, strings.LINK_HINT), classes="hint"))
        return widgets

    def meta_widgets(self) -> list[Widget]:
        """On the lesson's first page: how far the plan is and what comes next."""
        return [BrokenText(self._meta_text(), classes="hint meta-next")]

    def _meta_text(self) -> str:
        """The first page's line about the plan: redrawn with the marks (a step done or undone
        while the page is shown changes it)."""
        plan = self.drawn
        # What ctrl+n does from here, as the plan view (F11) names it: after ctrl+n went on to
        # a later step, the plan's first unfinished step is not where it goes.
        kind, following = self._following(plan)
        if following is None:
            return strings.META_DONE
        step = describe_step(following).replace("\n", " ")
        said = strings.META_RATE_FIRST if kind == "rate-start" else strings.META_NEXT
        text = said.format(figure=plan.figure, counts=plan.counts.line(), step=step)
        return strings.single_stops(text)

    def _item_widgets(self, section: Section, item: Item, number: int, marker: str) -> list[Widget]:
        if section.kind == "exercises":
            state = self.state(f"exercise:{item.id}")
            return [ExerciseItem(item, number, state, self.go_to_step)]
        if section.kind == "objectives":
            trained, all_done = self._trained(item.id)
            rating = self.progress.objective_rating(item.id)
            objective = ObjectiveItem(item, number, trained, rating, self.screen.rate_objective)
            objective.show(trained, objective.rating, all_done)
            return [objective]
        widgets: list[Widget] = [BrokenText(item.text, marker=marker or BULLET)]
        indent = " " * len(marker or BULLET)
        widgets.extend(ReadingLink(link.label, link.url, indent) for link in item.links)
        return widgets

    def _section_end(self, reading: Widget) -> SectionEnd | None:
        """The current section's end in the reader once laid out (it has a size), else None."""
        section_id = self.screen.current_section
        ends = [end for end in reading.query_children(SectionEnd) if end.section_id == section_id]
        return ends[-1] if ends and ends[-1].size.height else None

    async def _section_laid_out(self, reading: Widget) -> None:
        """Wait (a second at most) until the current section is laid out: a ctrl+n that came
        right after the one that showed it (two in a burst) measures the section, rather than
        finding no end on screen and going on with the section unread."""
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(LAYOUT_WAIT_SECONDS):
                while self._section_end(reading) is None:
                    await reading.wait_for_refresh()

    def check_section_end(self) -> None:
        """Post :class:`SectionRead` when the reader shows the end of the current section
        (laid out: its :class:`SectionEnd` has a size; scrolled to its end, or short enough to
        need no scrolling) and the learner scrolled in it since it was shown."""
        screen = self.screen
        section_id = screen.current_section
        if self.lesson is None or section_id in self.progress.read:
            return
        if self.scrolled_in != section_id:
            return
        if not any(section.id == section_id for section in screen.sections):
            return
        reading = screen.query_one("#reading")
        # The section's own end: the one before it may not be removed yet.
        if not screen.arrangement.reading or self._section_end(reading) is None:
            return
        if reading.scroll_y >= reading.max_scroll_y:
            screen.post_message(SectionRead(section_id))

    # ----------------------------------------------------------------- ctrl+n
    def current_place(self) -> tuple[str, str] | None:
        """Where the learner is: the answer or note box that has the focus, else the section
        the reader shows when the focus is in it, else where ctrl+n last went while the focus
        stays in that place's side pane (a calculator's field says nothing: the learner may be
        trying it out, not working an exercise). None once the learner went to another side
        pane themselves: they left that place, and ctrl+n starts from the plan's start."""
        screen = self.screen
        focused = screen.focused
        if focused is not None and self.lesson is not None:
            from textual.widgets import TabPane

            from tui.widgets.notes import NoteBox

            for node in focused.ancestors_with_self:
                if isinstance(node, ObjectiveItem) and node.item.id == self._rating:
                    return None
                if isinstance(node, NoteBox):
                    return self._box_place(node)
                if node.id == "reading":
                    section = screen.current_section
                    if any(s.id == section for s in screen.sections):
                        return (f"read:{section}", "")
                    return self.last_place
                if isinstance(node, TabPane):
                    return self.last_place if node.id == self._last_pane() else None
        return self.last_place

    def _last_pane(self) -> str | None:
        """The side pane where ctrl+n last went (an exercise's), else None."""
        if self.last_place is None:
            return None
        try:
            step = self.drawn.step(self.last_place[0])
        except KeyError:
            return None
        return step.worked_in if step.kind == "exercise" else None

    def _box_place(self, box: NoteBox) -> tuple[str, str] | None:
        item_id = box.item.id
        if box.kind == "answers":
            return (f"self-check:{item_id}", "")
        if box.kind == "reflections":
            return (f"reflection:{item_id}", "")
        for item in self.lesson.exercises if self.lesson else ():
            if item_id in item.notes:
                return (f"exercise:{item.id}", item_id)
        return self.last_place

    async def next_step(self) -> None:
        """ctrl+n: the next unfinished place, with the cursor where it is done. On a section
        not read to its end it pages down first."""
        screen = self.screen
        if self.lesson is None:
            screen.notify(screen.lesson_error or strings.LESSON_ERROR_TITLE, severity="error")
            return
        if screen.current_section not in screen.section_ids():
            return  # a key before the lesson is on screen
        self.refresh()
        plan = self.drawn
        if await self._rate_at_the_start(plan):
            return
        current = self.current_place()
        section_step = f"read:{screen.current_section}"
        if current is not None and current[0] == section_step and not plan.step(section_step).done:
            # A section not read to its end: ctrl+n reads on (the lesson back on screen first).
            reading = screen.query_one("#reading")
            self.last_place = current
            if not screen.arrangement.reading:
                await self.show_in_reader(screen.current_section)
                screen.set_focus(reading)
                return
            self.scrolled_in = screen.current_section  # ctrl+n reads on, as a page down does
            await self._section_laid_out(reading)
            if reading.scroll_y < reading.max_scroll_y:
                page = reading.scrollable_content_region.height
                last_page = reading.scroll_y + page >= reading.max_scroll_y
                reading.scroll_page_down(animate=False)
                if last_page:  # this page down reads the section: say what comes next
                    self.say_read(plan, current)
                return
            self.check_section_end()  # its end on screen already: read, and on to the next
        place, last = self._place_after(plan, current)
        if place is None:
            await self._all_done()
            return
        await self.go(place, plan, last=last)

    def _place_after(
        self, plan: Plan, current: tuple[str, str] | None
    ) -> tuple[Place | None, bool]:
        """The place ctrl+n goes to from ``current``, and whether it is the only one left (the
        place the learner is on: then that is the step to do, not "every step is done", and the
        ratings at the end come after it); ``(None, False)`` when every place is done."""
        places = study_places(plan, self.progress)
        here = next((p for p in places if p.key == current), None)
        if here is not None and not (here.done or here.step.done) and self._inputs_left(here):
            # Begun and not done (exercise 1 with some activation inputs given, one still
            # empty): ctrl+n stays, in the next input to fill, not on to exercise 2's note,
            # where a fast typist's next keys would land. One not begun is passed by.
            return here, next_place(places, current) is None
        place = next_place(places, current)
        if place is not None:
            return place, False
        here = next((p for p in places if p.key == current and not p.step.done), None)
        if here is not None and not here.done:
            return here, True
        return None, False

    def _pane_content(self, place: Place) -> Widget | None:
        """The content of the side pane where ``place``'s exercise is worked, once built (None
        for another kind of step, or a pane not built yet)."""
        if place.step.kind != "exercise" or not place.step.worked_in:
            return None
        return self.screen.query_one(SideTabs).content(place.step.worked_in)

    def _inputs_left(self, place: Place) -> tuple[str, ...]:
        """The inputs of ``place`` its pane says are still to give, the place begun
        (``study_left``; a pane without it, or not built: none)."""
        left = getattr(self._pane_content(place), "study_left", None)
        return tuple(left(place.note_id)) if left is not None else ()

    def _end_rating_to_ask(self, plan: Plan) -> ObjectiveStatus | None:
        """The lesson asks for each objective to be rated again at the end: once every step is
        done, ctrl+n puts the learner on each one not rated at the end yet (once a session
        each), then says done. None once none is left to ask, or the lesson is complete."""
        if self.progress.status == "complete":
            return None
        unrated = (o for o in plan.objectives if not o.rating.end)
        return next((o for o in unrated if o.id not in self._asked_at_end), None)

    async def _all_done(self) -> None:
        plan = self.plan(reviews=True)
        reviews = plan.step("reviews")
        if not reviews.done:
            await self.go(Place(reviews), plan)
            return
        assert self.lesson is not None
        asking = self._end_rating_to_ask(plan)
        if asking is not None:
            unrated = sum(1 for o in plan.objectives if not o.rating.end)
            self._asked_at_end.add(asking.id)
            await self._rate(asking.id, "end", strings.RATE_AT_THE_END, unrated)
            return
        if self.progress.status == "complete":
            self.screen.notify(strings.ALL_DONE_COMPLETE.format(lesson=self.lesson.id))
        else:
            text = strings.ALL_DONE.format(lesson=self.lesson.id, counts=plan.counts.line())
            self.screen.notify(text, timeout=SAY_SECONDS)

    def following(self) -> tuple[str, str | None]:
        """What ctrl+n does next from where the learner is, for the plan view (F11) to name:
        the line saying so, and the id of the step it goes to (None when it goes to none)."""
        if self.lesson is None:
            return strings.PLAN_NEXT_NONE, None
        kind, step = self._following(self.plan())
        if kind == "rate-start" and step is not None:
            return strings.PLAN_NEXT_RATE.format(step=describe_step(step)), step.id
        if kind == "step" and step is not None:
            return strings.PLAN_NEXT.format(step=describe_step(step)), step.id
        if kind == "rate-end":
            return strings.PLAN_NEXT_RATE_END, None
        return strings.PLAN_NEXT_NONE, None

    def _following(self, plan: Plan) -> tuple[str, Step | None]:
        """What ctrl+n does next from where the learner is: ``("rate-start", first step)``,
        ``("step", step)``, ``("rate-end", None)`` or ``("none", None)``. The same decisions
        as :meth:`next_step`, without acting on them: the ratings at the start first, then on
        in the section being read, then the next place after the one the learner is at
        (:meth:`current_place`), then the reviews and the ratings at the end."""
        first = plan.next_step
        if self._start_rating_to_ask(plan) is not None and first is not None:
            return "rate-start", first
        current = self.current_place()
        section_step = f"read:{self.screen.current_section}"
        if current is not None and current[0] == section_step and not plan.step(section_step).done:
            return "step", plan.step(section_step)
        place, _ = self._place_after(plan, current)
        if place is not None:
            return "step", place.step
        full = self.plan(reviews=True)
        if not full.step("reviews").done:
            return "step", full.step("reviews")
        if self._end_rating_to_ask(full) is not None:
            return "rate-end", None
        return "none", None

    async def _rate_at_the_start(self, plan: Plan) -> bool:
        """The lesson asks for each objective to be rated before studying: ctrl+n's first steps
        put the learner on each one not rated at the start, once a session each, while nothing
        of the plan is done or started (then it is still "before"; a learner already at work
        is not taken from it, and rates at the start in the objectives section if they wish).
        Returns whether it did."""
        asking = self._start_rating_to_ask(plan)
        if asking is None:
            return False
        unrated = self._unrated_at_start(plan)
        self._asked_at_start.add(asking.id)
        await self._rate(asking.id, "start", strings.RATE_AT_THE_START, len(unrated))
        return True

    def _start_rating_to_ask(self, plan: Plan) -> ObjectiveStatus | None:
        """The objective ctrl+n asks to rate at the start next (not asked yet this session);
        the first page says so while there is one."""
        unrated = self._unrated_at_start(plan)
        return next((o for o in unrated if o.id not in self._asked_at_start), None)

    def _unrated_at_start(self, plan: Plan) -> list[ObjectiveStatus]:
        """The objectives ctrl+n asks to rate at the start (not rated at the start, nothing
        that trains them done), while nothing of the plan is done or started; else none."""
        counts = plan.counts
        if self.progress.status == "complete" or counts.steps_done or counts.exercises_started:
            return []
        return [o for o in plan.objectives if not o.rating.start and not o.trained_done]

    async def _rate(self, objective_id: str, phase: str, say: str, unrated: int) -> None:
        """Put the learner on objective ``objective_id`` in the reader, ready to rate it for
        ``phase`` (``start`` or ``end``), and say so with ``say`` (``unrated``: how many are
        not rated for that phase yet)."""
        assert self.lesson is not None
        section = next(s for s in self.lesson.sections if s.kind == "objectives")
        await self.show_in_reader(section.id)
        screen = self.screen
        items = list(screen.query("#reading ObjectiveItem").results(ObjectiveItem))
        number, item = next((n, i) for n, i in enumerate(items, 1) if i.item.id == objective_id)
        self.last_place = None
        self._rating = objective_id
        screen.set_focus(item, scroll_visible=False)
        item.action_phase(phase)
        from tui.widgets.notes import scroll_into_view

        scroll_into_view(item, center=True)
        screen.notify(say.format(number=number, unrated=unrated), timeout=SAY_SECONDS)

    async def go_to_step(self, step_id: str) -> None:
        """Go to step ``step_id`` (the plan view, Enter on an exercise): its first place not
        done, or its first place."""
        if self.lesson is None:
            return
        plan = self.plan(reviews=step_id == "reviews")
        places = [place for place in study_places(plan, self.progress) if place.step.id == step_id]
        if not places:
            return
        await self.go(next((p for p in places if not p.done), places[0]), plan)

    async def go(self, place: Place, plan: Plan, last: bool = False) -> None:
        """Put the learner at ``place``: the pane opened, the field focused, and say so
        (``last``: it is the only place left to do)."""
        screen = self.screen
        step = place.step
        self.last_place = place.key
        target: Widget | None = None
        if step.kind == "reviews":
            await self.screen.app.run_action("quiz")
        elif step.kind == "exercise":
            pane = await screen.open_side_tab(step.worked_in)
            content = next(iter(pane.children), None)
            find = getattr(content, "study_target", None)
            if find is not None:
                target = await find(place.note_id)
        else:
            await self.show_in_reader(step.section_id)
            target = screen.query_one("#reading")
            if step.kind in ("self-check", "reflection"):
                from tui.widgets.notes import NoteBox

                for box in screen.query("#reading NoteBox").results(NoteBox):
                    if box.item.id == step.item_id:
                        target = box.text_area
        if target is not None:
            from textual.widgets import TextArea

            from tui.widgets.notes import scroll_into_view

            # Scrolled to once laid out: a pane just built has no regions to scroll to yet. An
            # answer box in the lesson goes to the middle of the reader, its question above
            # it: the message saying where ctrl+n went covers the reader's top rows, and the
            # question to answer must stay in sight while it is shown.
            screen.set_focus(target, scroll_visible=False)
            shown = target.parent if isinstance(target, TextArea) else target
            if isinstance(shown, Widget):
                scroll_into_view(shown, center=step.kind in ("self-check", "reflection"))
        self.say(place, plan, last)

    async def show_in_reader(self, section_id: str) -> None:
        """Show section ``section_id`` in the reader, on screen, and wait until it is built."""
        screen = self.screen
        screen.zoomed = False
        if screen.size_class == "narrow":
            screen.side_shown = False
        screen.outline_open = False
        if section_id != screen.current_section:
            await screen.show_section(section_id)  # the outline follows

    @staticmethod
    def _number(plan: Plan, step_id: str) -> tuple[int, int]:
        """Step ``step_id``'s number among the lesson's steps (0 for the reviews), and their
        count."""
        lesson_steps = [s for s in plan.steps if s.kind != "reviews"]
        number = next((n for n, s in enumerate(lesson_steps, 1) if s.id == step_id), 0)
        return number, len(lesson_steps)

    def say_read(self, plan: Plan, current: tuple[str, str]) -> None:
        """ctrl+n paged to the end of the section at ``current`` (it is read now): say so, and
        which step ctrl+n goes to next, as a ctrl+n that moves says where it went."""
        section = plan.step(current[0]).title
        place = next_place(study_places(plan, self.progress), current)
        number, total = self._number(plan, place.step.id) if place is not None else (0, 0)
        if place is None or not number:
            text = strings.STEP_SECTION_READ_END.format(section=section)
        else:
            text = strings.STEP_SECTION_READ.format(
                section=section, number=number, total=total, step=describe_step(place.step)
            )
        self.screen.notify(strings.single_stops(text.replace("\n", " ")), timeout=SAY_SECONDS)

    def say(self, place: Place, plan: Plan, last: bool = False) -> None:
        """Tell the learner which step this is and what to do here (for a section to read, what
        to do only the first time; after it, which step alone: a line over the text); ``last``:
        that nothing else is left."""
        step = place.step
        number, total = self._number(plan, step.id)
        if step.kind == "read" and not last:
            if self._said_read:
                text = strings.STEP_READ_ON.format(
                    number=number, total=total, step=describe_step(step)
                )
                self._notify_step(place, strings.single_stops(text.replace("\n", " ")))
                return
            self._said_read = True
        # Short: the pane or the box's label shows the lesson's own words.
        numbered = strings.STEP_NUMBERED.get(step.kind)
        what = numbered.format(number=step.number) if numbered and step.number else None
        what = what or describe_step(step)
        if place.note_id:
            note = get_note(place.note_id)
            if note.strategy:
                short = get_strategy(note.strategy).title.split(" - ")[0]
                what = strings.STEP_NOTE.format(
                    step=what, strategy=short, label=gettext(note.label)
                )
            say = strings.STEP_SAY["note" if note.answered_by else "free-note"]
        elif step.kind == "exercise":
            pane_say = getattr(self._pane_content(place), "study_say", None)
            left: str | None = pane_say(place.note_id) if pane_say is not None else None
            say = left or strings.STEP_SAY["ledger" if step.worked_in == "ledger" else "pane"]
        else:
            say = strings.STEP_SAY[step.kind]
        if step.kind == "reflection":
            what = describe_step(step)
        places = study_places(plan, self.progress)
        keys = [other.key for other in places if other.step.id == step.id]
        if step.kind == "reviews":
            text = say
        elif len(keys) > 1 and place.key in keys:
            text = strings.STEP_PART_HERE.format(
                number=number,
                total=total,
                part=keys.index(place.key) + 1,
                parts=len(keys),
                step=what.replace("\n", " "),
                say=say,
            )
        else:
            text = strings.STEP_HERE.format(
                number=number, total=total, step=what.replace("\n", " "), say=say
            )
        if last:
            text = strings.STEP_ONLY_ONE_LEFT.format(step=text)
        self._notify_step(place, strings.single_stops(text))

    def _notify_step(self, place: Place, text: str) -> None:
        """Say ``text``, ctrl+n's message for ``place``; withdrawn when that place is done (one
        already done when said, the plan view's Enter on it, is not followed)."""
        done = place.done or place.step.done
        self._said = None if done else (place.key, text)
        self.screen.notify(text, timeout=SAY_SECONDS)
