"""Modal screens of guided study: the study plan (F11) and the session summary (the yes/no
confirmation they share a frame with is :class:`tui.widgets.confirm.ConfirmScreen`).

Every text is shown literally (lesson text, the learner's counts): :class:`BrokenText` and
``Content``, never markup.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical, VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import OptionList
from textual.widgets.option_list import Option

from engine.i18n import N_, gettext
from engine.linebreak import cell_width, pad_cells
from engine.plan import Plan, describe_step, review_line
from engine.progress import RATING_LABELS
from tui import strings
from tui.widgets.confirm import MODAL_CSS
from tui.widgets.reader import BrokenLines, BrokenText


class SummaryLine(BrokenText):
    """A line of the session summary: broken at the widget's width, its continuation lines two
    cells deeper than it, as :func:`engine.session.render_summary` breaks it for the terminal
    (its ``marker``: the line's own indent)."""

    def hang(self, width: int) -> str | None:
        return self.marker + "  "


class SummaryScreen(ModalScreen[None]):
    """The session summary (:func:`engine.session.render_summary`); escape closes it."""

    DEFAULT_CSS = (
        MODAL_CSS.format(name="SummaryScreen")
        + "SummaryScreen VerticalScroll { height: auto; max-height: 30; }"
    )
    BINDINGS = [
        Binding("escape,s,q", "dismiss(None)", N_("Close"), id="summary_close"),
    ]

    def __init__(self, text: str) -> None:
        super().__init__()
        self.text = text

    def compose(self) -> ComposeResult:
        with Vertical():
            yield BrokenText(strings.SUMMARY_TITLE, classes="section-title")
            with VerticalScroll():
                for line in self.text.rstrip("\n").split("\n"):
                    text = line.lstrip(" ")
                    yield SummaryLine(
                        text, marker=line[: len(line) - len(text)], classes="summary-text"
                    )
            yield BrokenText(strings.SUMMARY_HINT, classes="hint")


def step_line(plan: Plan, index: int) -> str:
    """A step as the plan view lists it: state glyph and word, then what it is and where."""
    step = plan.steps[index]
    glyph = strings.STATE_GLYPHS[step.state]
    words = strings.STATE_WORDS[step.state]
    where = ""
    if step.kind == "exercise":
        where = f" · {strings.PANE_WORDS.get(step.worked_in, step.worked_in)}"
    state = pad_cells(words, state_column_width())
    return f"{glyph} {state} {describe_step(step)}{where}".replace("\n", " ")


def state_column_width() -> int:
    """Cells the state words take in the interface language (their widest): padded by terminal
    cells, so a step's text starts at one column whether its state is 已完成 or 待做."""
    return max(cell_width(words) for words in strings.STATE_WORDS.values())


def step_indent() -> str:
    """The indent of a step's wrapped lines: under its text, past the glyph and the state."""
    return " " * (cell_width("◌ ") + state_column_width() + 1)


def objective_lines(plan: Plan) -> list[str]:
    """Each objective with both of the learner's ratings and what trains it."""
    return [
        strings.PLAN_OBJECTIVE.format(
            number=number,
            # Its full stop dropped before the colon (``来源。:`` read as two stops).
            text=objective.text.rstrip("。. "),
            start=gettext(RATING_LABELS.get(objective.rating.start or "", strings.NOT_RATED)),
            end=gettext(RATING_LABELS.get(objective.rating.end or "", strings.NOT_RATED)),
            done=objective.trained_done,
            total=len(objective.trained_by),
        )
        for number, objective in enumerate(plan.objectives, start=1)
    ]


class PlanScreen(ModalScreen[str | None]):
    """The study plan: the counts, the next step, every step with its state, the objectives
    with both ratings and the reviews. Enter on a step goes to it (the screen is dismissed with
    its id); ``s`` shows the session summary; escape closes."""

    DEFAULT_CSS = (
        MODAL_CSS.format(name="PlanScreen")
        + """
    PlanScreen > Vertical { height: 100%; }
    PlanScreen OptionList { height: 1fr; border: none; padding: 0; }
    PlanScreen .plan-head { margin: 0; }
    PlanScreen .plan-title { text-style: bold; color: $accent; margin: 0 0 1 0; }
    PlanScreen .plan-hint { color: $text-muted; margin: 0 0 1 0; }
    PlanScreen.-short .plan-counts { display: none; }
    PlanScreen.-short .plan-title, PlanScreen.-short .plan-hint { margin: 0; }
    PlanScreen.-short OptionList, PlanScreen.-short OptionList:focus { border: none; }
    """
    )
    # Under 18 rows the counts, the next step and the session line would leave the steps no row
    # (40x12: none at all): the title keeps the steps done, the next step is highlighted, and
    # the margins and the list's border give their rows to the steps (the title and the hint
    # have classes of their own: the app's `.section-title` and `.hint` margins would win over
    # this default CSS).
    VERTICAL_BREAKPOINTS = [(0, "-short"), (18, "-tall")]
    BINDINGS = [
        Binding("escape,f11", "dismiss(None)", N_("Close"), id="plan_close"),
        Binding("s", "summary", N_("Session summary"), id="plan_summary"),
        Binding("ctrl+home", "edge('first')", show=False, id="plan_top"),
        Binding("ctrl+end", "edge('last')", show=False, id="plan_bottom"),
        # Handled here, not through the list's own enter: the step is reached (its field
        # focused) before the next key is looked at.
        Binding("enter", "go", N_("Go there"), priority=True, id="plan_go"),
    ]
    HELP = N_(
        "The study plan: every step of the lesson in its order with its state (◌ to do, ◔ "
        "started, ✓ done), the counts, your ratings of the objectives and the reviews. Arrows "
        "move, enter goes to the step with the cursor where it is done; s shows what this "
        "session did; escape closes. The line 'next, ctrl+n from here' names the step ctrl+n "
        "goes to from where you were: the next unfinished one after that place, going round "
        "to the start."
    )

    def __init__(
        self,
        plan: Plan,
        session_line: str = "",
        go_to_step: Callable[[str], Awaitable[None]] | None = None,
        following: tuple[str, str | None] | None = None,
    ) -> None:
        """``go_to_step``: what enter on a step runs once the plan is closed, given by the
        screen that opens the plan (its step is reached before the next key is looked at);
        None: the screen is dismissed with the step's id instead. ``following``: what ctrl+n
        does next from where the learner is (:meth:`tui.screens.guide.StudyGuide.following`:
        the line naming it, and its step, highlighted); None: the plan's first unfinished
        step."""
        super().__init__()
        self.plan = plan
        self.session_line = session_line
        self._go_to_step = go_to_step
        if following is None:
            first = plan.next_step
            following = (
                (strings.PLAN_FIRST.format(step=describe_step(first)), first.id)
                if first
                else (strings.PLAN_NEXT_NONE, None)
            )
        self.following = following

    def compose(self) -> ComposeResult:
        plan = self.plan
        head = [plan.counts.line(), self.following[0]]
        if self.session_line:
            head.append(self.session_line)
        indent = step_indent()
        options: list[Option | None] = [
            Option(BrokenLines(step_line(plan, index), indent), id=step.id)
            for index, step in enumerate(plan.steps)
        ]
        options.append(None)
        # The lines below the steps can be highlighted (enter does nothing there): OptionList's
        # keys move the cursor and scroll with it, and they skip disabled options, so End,
        # PageDown and Down could not show the ratings and the reviews.
        options.append(Option(BrokenLines(strings.PLAN_OBJECTIVES)))
        options.extend(
            Option(BrokenLines(line, "   "), id=f"objective:{plan.objectives[n].id}")
            for n, line in enumerate(objective_lines(plan))
        )
        options.append(None)
        options.append(Option(BrokenLines(review_line(plan.reviews))))
        with Vertical():
            title = strings.PLAN_TITLE.format(lesson=plan.lesson_id, figure=plan.figure)
            yield BrokenText(title, classes="plan-title")
            yield BrokenText("\n".join(head), classes="plan-head plan-counts")
            yield OptionList(*options, id="plan-steps")
            yield BrokenText(strings.PLAN_HINT, classes="plan-hint")

    def on_mount(self) -> None:
        # The plan says where each step is: a toast of the last ctrl+n would cover its counts.
        self.app.clear_notifications()
        steps = self.query_one(OptionList)
        ids = [step.id for step in self.plan.steps]
        step_id = self.following[1]
        steps.highlighted = ids.index(step_id) if step_id in ids else 0
        self.set_focus(steps)

    async def action_go(self) -> None:
        """Close the plan and go to the highlighted step (see ``go_to_step``)."""
        steps = self.query_one("#plan-steps", OptionList)
        index = steps.highlighted
        option = steps.get_option_at_index(index) if index is not None else None
        if option is None or option.id not in {step.id for step in self.plan.steps}:
            return
        if self._go_to_step is None:
            self.dismiss(option.id)
            return
        await self.app.pop_screen()
        await self._go_to_step(option.id)

    @on(OptionList.OptionSelected, "#plan-steps")
    def _chosen(self, event: OptionList.OptionSelected) -> None:
        # A click on a step (enter is the binding above); a click below the steps does nothing.
        event.stop()
        if event.option.id in {step.id for step in self.plan.steps}:
            self.dismiss(event.option.id)

    async def action_edge(self, edge: str) -> None:
        """ctrl+home / ctrl+end: the first / last line of the plan, as home / end."""
        await self.query_one("#plan-steps", OptionList).run_action(edge)

    async def action_summary(self) -> None:
        await self.app.run_action("session_summary")
