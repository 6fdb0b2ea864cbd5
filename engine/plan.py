"""The study plan of a lesson: its steps in the lesson's order, each with a state computed from the
learner's progress.

The plan is derived, never stored: the lesson says what there is to do (its sections, its
exercises and where each is worked, its self-check questions, its reflection fields) and the
progress file says what the learner did (:mod:`engine.progress`). Nothing here is written for one
lesson: any lesson with ``exercises``, ``self-check`` and ``reflection`` sections gets its plan.

Steps, in the lesson's order (a section's own steps follow its reading step), then the reviews:

========== ===================================== ==========================================
kind       id                                    done when
========== ===================================== ==========================================
read       ``read:<section id>``                 the section is in ``progress.read``: the
                                                 learner scrolled through it to its end
exercise   ``exercise:<item id>``                every note it lists is written; an exercise
                                                 worked in the Ledger also needs its last
                                                 good result to have its four columns, the
                                                 activations computed (a refused edit
                                                 undoes nothing)
self-check ``self-check:<item id>``              its answer is written
reflection ``reflection:<item id>``              its field is written
reviews    ``reviews``                           no review of the lesson is due
========== ===================================== ==========================================

"Written" means not blank. An exercise is ``started`` when part of its work is saved (some of
its notes, or a Ledger form without activations); every other step is ``todo`` or
``done``.

The module (about 630 lines) keeps the plan's model, its states, the places the app and
``shardbook plan`` go to next and the plan's text together: each is a reading of the same step
list, and apart they would each re-derive it.
"""

from __future__ import annotations

import copy
import datetime as dt
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, Literal, get_args

from engine.errors import InputError
from engine.exercises import LEDGER_FORM, get_note, ledger_exercise_done
from engine.i18n import N_
from engine.i18n import gettext as _
from engine.lesson import Item, Lesson
from engine.linebreak import pad_cells
from engine.progress import RATING_LABELS, LessonProgress, ObjectiveRating, Status
from engine.timefmt import local_text, relative, utc_iso, utc_now

StepKind = Literal["read", "exercise", "self-check", "reflection", "reviews"]
StepState = Literal["todo", "started", "done"]
STEP_KINDS: Final[tuple[StepKind, ...]] = get_args(StepKind)
STATES: Final[tuple[StepState, ...]] = get_args(StepState)
READER: Final = "reader"
"""``worked_in`` of the steps done in the reading pane (reading, self-check, reflection)."""
QUIZ: Final = "quiz"
"""``worked_in`` of the reviews step: the quiz and spaced review."""
REVIEWS_ID: Final = "reviews"
REVIEWS_TITLE: Final = N_("spaced review")
DAY: Final = dt.timedelta(days=1)


@dataclass(frozen=True)
class ReviewOutlook:
    """The lesson's spaced review at one moment (``at``, UTC).

    Attributes:
        due_now: reviewed items whose due time has come.
        next_due: the earliest due time after ``at``, or ``None`` when nothing else is scheduled.
        due_next_day: items that fall due after ``at`` and within 24 hours of it.
    """

    at: dt.datetime
    due_now: int = 0
    next_due: dt.datetime | None = None
    due_next_day: int = 0

    def as_dict(self) -> dict[str, Any]:
        """JSON-ready: times as ISO 8601 UTC."""
        return {
            "at": utc_iso(self.at),
            "due_now": self.due_now,
            "next_due": utc_iso(self.next_due) if self.next_due else None,
            "due_next_day": self.due_next_day,
        }


def review_outlook(lesson: Lesson, progress: LessonProgress, now: dt.datetime) -> ReviewOutlook:
    """When the lesson's quiz items fall due, from the review log in ``progress`` (not changed:
    the quiz state is read from a copy). Imports the quiz engine (and fsrs) on first use.

    Raises:
        ProgressError: the stored quiz data has the wrong shape.
        InputError: ``now`` has no timezone (field ``time``).
    """
    from engine.quiz import QuizState, lesson_items

    at = dt.datetime.fromisoformat(utc_iso(now))
    state = QuizState(LessonProgress(progress.lesson_id, quiz=copy.deepcopy(progress.quiz)))
    dues = sorted(
        card.due for item in lesson_items(lesson) if (card := state.card(item.id)) is not None
    )
    later = [due for due in dues if due > at]
    return ReviewOutlook(
        at=at,
        due_now=len(dues) - len(later),
        next_due=later[0] if later else None,
        due_next_day=sum(1 for due in later if due <= at + DAY),
    )


@dataclass(frozen=True)
class Step:
    """One step of the plan.

    Attributes:
        id: stable: ``read:<section id>``, ``exercise:<item id>``, ``self-check:<item id>``,
            ``reflection:<item id>`` or ``reviews``.
        kind: one of :data:`STEP_KINDS`.
        title: the lesson's own words: the section title, the exercise, the question, the
            reflection field's label; for the reviews step, :data:`REVIEWS_TITLE`.
        state: one of :data:`STATES`.
        worked_in: where the step is done: an exercise's pane (``ledger``, ``diagrams``,
            ``collectives``, ``tradeoffs``), :data:`READER` or :data:`QUIZ`.
        section_id: the section the step belongs to (``""`` for the reviews step).
        item_id: the exercise, question or field (``""`` for reading and reviews).
        number: the item's 1-based position in its section (exercise 2 is 2); 0 for reading
            and reviews.
        notes: for an exercise, the ids of the notes that record it.
    """

    id: str
    kind: StepKind
    title: str
    state: StepState
    worked_in: str
    section_id: str = ""
    item_id: str = ""
    number: int = 0
    notes: tuple[str, ...] = ()

    @property
    def done(self) -> bool:
        return self.state == "done"

    def as_dict(self) -> dict[str, Any]:
        """The step in ``shardbook plan --json``."""
        return {
            "id": self.id,
            "kind": self.kind,
            "title": self.title,
            "state": self.state,
            "worked_in": self.worked_in,
            "section": self.section_id,
            "item": self.item_id,
            "number": self.number,
        }


def describe_step(step: Step) -> str:
    """A step in a few words for a list: ``read 核心知识``, ``exercise 2: 分别画…``,
    ``self-check 1: …``, ``reflection: 我的训练内存账本``, ``spaced review``."""
    if step.kind == "read":
        return _("read {title}").format(title=step.title)
    if step.kind == "exercise":
        return _("exercise {number}: {title}").format(number=step.number, title=step.title)
    if step.kind == "self-check":
        return _("self-check {number}: {title}").format(number=step.number, title=step.title)
    if step.kind == "reflection":
        return _("reflection: {title}").format(title=step.title)
    return _(step.title)


@dataclass(frozen=True)
class PlanCounts:
    """How much of the plan is done. ``steps_done`` and ``steps_total`` count the lesson's own
    steps (reading, exercises, self-check, reflections), not the reviews, which come and go with
    the schedule: ``reviews_due`` counts those."""

    steps_done: int
    steps_total: int
    sections_read: int
    sections_total: int
    exercises_done: int
    exercises_started: int
    exercises_total: int
    self_check_answered: int
    self_check_revealed: int
    self_check_total: int
    reflections_written: int
    reflections_total: int
    reviews_due: int

    def as_dict(self) -> dict[str, Any]:
        """The ``counts`` object of ``shardbook plan --json``."""
        return {
            "steps": {"done": self.steps_done, "total": self.steps_total},
            "sections": {"read": self.sections_read, "total": self.sections_total},
            "exercises": {
                "done": self.exercises_done,
                "started": self.exercises_started,
                "total": self.exercises_total,
            },
            "self_check": {
                "answered": self.self_check_answered,
                "revealed": self.self_check_revealed,
                "total": self.self_check_total,
            },
            "reflections": {"written": self.reflections_written, "total": self.reflections_total},
            "reviews_due": self.reviews_due,
        }

    def line(self) -> str:
        """One line: ``sections 3/11 read, exercises 3/5, self-check 4/4 answered, 2 revealed,
        reflections 5/5, reviews due 3`` (``exercises 3/5 (1 started)`` when one is started)."""
        started = (
            _(" ({count} started)").format(count=self.exercises_started)
            if self.exercises_started
            else ""
        )
        return _(
            "sections {read}/{sections} read, exercises {done}/{exercises}{started}, "
            "self-check {answered}/{questions} answered, {revealed} revealed, "
            "reflections {written}/{reflections}, reviews due {due}"
        ).format(
            read=self.sections_read,
            sections=self.sections_total,
            done=self.exercises_done,
            exercises=self.exercises_total,
            started=started,
            answered=self.self_check_answered,
            questions=self.self_check_total,
            revealed=self.self_check_revealed,
            written=self.reflections_written,
            reflections=self.reflections_total,
            due=self.reviews_due,
        )


@dataclass(frozen=True)
class ObjectiveStatus:
    """A learning objective: what trains it, how much of that is done, and the learner's ratings.

    Attributes:
        trained_by: the ids of the plan steps that train it (``exercise:…``, ``self-check:…``).
        trained_done: how many of those are done.
    """

    id: str
    text: str
    trained_by: tuple[str, ...]
    trained_done: int
    rating: ObjectiveRating

    def as_dict(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "text": self.text,
            "trained_by": list(self.trained_by),
            "trained_done": self.trained_done,
            "rating": {"start": self.rating.start, "end": self.rating.end},
        }


@dataclass(frozen=True)
class Plan:
    """A lesson's study plan for one learner at one moment (see the module docstring)."""

    lesson_id: str
    title: str
    steps: tuple[Step, ...]
    counts: PlanCounts
    objectives: tuple[ObjectiveStatus, ...]
    reviews: ReviewOutlook

    def step(self, step_id: str) -> Step:
        """The step with this id.

        Raises:
            KeyError: no step has that id.
        """
        for step in self.steps:
            if step.id == step_id:
                return step
        raise KeyError(step_id)

    @property
    def unfinished(self) -> tuple[Step, ...]:
        """The steps not done, in order."""
        return tuple(step for step in self.steps if not step.done)

    @property
    def complete(self) -> bool:
        """Every step is done, the reviews included."""
        return not self.unfinished

    @property
    def next_step(self) -> Step | None:
        """The first step not done, or ``None`` when every step is done."""
        return self.next_after(None)

    def next_after(self, step_id: str | None) -> Step | None:
        """The first step not done after ``step_id`` in the plan's order, going round to the
        start; from the start when ``step_id`` is ``None`` or not in the plan. ``None`` when
        every step other than ``step_id`` is done (``ctrl+n`` from the step the learner is on).
        """
        ids = [step.id for step in self.steps]
        start = ids.index(step_id) + 1 if step_id in ids else 0
        for step in (*self.steps[start:], *self.steps[:start]):
            if not step.done and step.id != step_id:
                return step
        return None

    def section_state(self, section_id: str) -> str:
        """The state of a section's steps together (its reading and its items): ``done`` when
        all are done, ``todo`` when none is done or started, else ``started``."""
        states = [step.state for step in self.steps if step.section_id == section_id]
        if states and all(state == "done" for state in states):
            return "done"
        if any(state != "todo" for state in states):
            return "started"
        return "todo"

    @property
    def figure(self) -> str:
        """The lesson's progress in one short figure: the lesson's steps done / its steps
        (reviews not counted), e.g. ``12/25``."""
        return f"{self.counts.steps_done}/{self.counts.steps_total}"

    @property
    def implied_status(self) -> Status:
        """The lesson status the progress implies (``not-started`` or ``in-progress``), for a
        lesson not marked complete: ``in-progress`` once any step other than the reviews is
        started or done, or any objective is rated."""
        studied = any(step.state != "todo" for step in self.steps if step.kind != "reviews")
        rated = any(objective.rating != ObjectiveRating() for objective in self.objectives)
        return "in-progress" if studied or rated else "not-started"

    def as_dict(self) -> dict[str, Any]:
        """The JSON object of ``shardbook plan --json``."""
        following = self.next_step
        return {
            "lesson": self.lesson_id,
            "title": self.title,
            "figure": self.figure,
            "steps": [step.as_dict() for step in self.steps],
            "counts": self.counts.as_dict(),
            "next": following.id if following else None,
            "objectives": [objective.as_dict() for objective in self.objectives],
            "reviews": self.reviews.as_dict(),
        }


def _written(text: str | None) -> bool:
    return bool(text and text.strip())


def _exercise_state(item: Item, progress: LessonProgress) -> StepState:
    parts = [_written(progress.notes.get(note_id)) for note_id in item.notes]
    begun = False
    if item.worked_in == "ledger":
        parts.append(ledger_exercise_done(progress.forms, progress.figures))
        begun = LEDGER_FORM in progress.forms
    if parts and all(parts):
        return "done"
    return "started" if begun or any(parts) else "todo"


def _lesson_steps(lesson: Lesson, progress: LessonProgress) -> list[Step]:
    """Every step but the reviews, in the lesson's order."""
    read = set(progress.read)
    steps: list[Step] = []
    for section in lesson.sections:
        steps.append(
            Step(
                id=f"read:{section.id}",
                kind="read",
                title=section.title,
                state="done" if section.id in read else "todo",
                worked_in=READER,
                section_id=section.id,
            )
        )
        for number, item in enumerate(section.items, start=1):
            kind: StepKind
            state: StepState
            where: str
            if section.kind == "exercises":
                kind, state, where = "exercise", _exercise_state(item, progress), item.worked_in
            elif section.kind == "self-check":
                answered = _written(progress.answers.get(item.id))
                kind, state, where = "self-check", "done" if answered else "todo", READER
            elif section.kind == "reflection":
                written = _written(progress.reflections.get(item.id))
                kind, state, where = "reflection", "done" if written else "todo", READER
            else:
                continue
            steps.append(
                Step(
                    id=f"{kind}:{item.id}",
                    kind=kind,
                    title=item.text,
                    state=state,
                    worked_in=where,
                    section_id=section.id,
                    item_id=item.id,
                    number=number,
                    notes=item.notes,
                )
            )
    return steps


def step_states(lesson: Lesson, progress: LessonProgress) -> dict[str, str]:
    """Each step's state by id, the reviews step left out (it needs the quiz engine; see
    :func:`build_plan`). Cheap: for a snapshot at the start of a session."""
    return {step.id: step.state for step in _lesson_steps(lesson, progress)}


def build_plan(
    lesson: Lesson,
    progress: LessonProgress,
    now: dt.datetime | None = None,
    *,
    reviews: ReviewOutlook | None = None,
) -> Plan:
    """The study plan of ``lesson`` for ``progress`` (read only; nothing is changed).

    ``reviews``: the review outlook when the caller has it; otherwise it is computed at ``now``
    (default: the current time) with :func:`review_outlook`, which imports the quiz engine.

    Raises:
        ProgressError: the stored quiz data has the wrong shape (only when ``reviews`` is None).
        InputError: ``now`` has no timezone (field ``time``).
    """
    if reviews is None:
        reviews = review_outlook(lesson, progress, now or utc_now())
    steps = _lesson_steps(lesson, progress)
    steps.append(
        Step(
            id=REVIEWS_ID,
            kind="reviews",
            title=REVIEWS_TITLE,
            state="done" if reviews.due_now == 0 else "todo",
            worked_in=QUIZ,
        )
    )
    states = {step.id: step.state for step in steps}
    return Plan(
        lesson_id=lesson.id,
        title=lesson.title,
        steps=tuple(steps),
        counts=_counts(lesson, progress, steps, reviews),
        objectives=tuple(_objective(item, progress, states) for item in lesson.objectives),
        reviews=reviews,
    )


def _objective(
    item: Item, progress: LessonProgress, states: Mapping[str, StepState]
) -> ObjectiveStatus:
    trained_by = tuple(
        f"exercise:{trainer}" if f"exercise:{trainer}" in states else f"self-check:{trainer}"
        for trainer in item.trained_by
    )
    return ObjectiveStatus(
        id=item.id,
        text=item.text,
        trained_by=trained_by,
        trained_done=sum(1 for step_id in trained_by if states.get(step_id) == "done"),
        rating=progress.objective_rating(item.id),
    )


def _counts(
    lesson: Lesson, progress: LessonProgress, steps: Sequence[Step], reviews: ReviewOutlook
) -> PlanCounts:
    def of(kind: str, state: str | None = None) -> int:
        return sum(1 for s in steps if s.kind == kind and (state is None or s.state == state))

    questions = {item.id for item in lesson.self_check}
    return PlanCounts(
        steps_done=sum(1 for step in steps if step.done and step.kind != "reviews"),
        steps_total=sum(1 for step in steps if step.kind != "reviews"),
        sections_read=of("read", "done"),
        sections_total=of("read"),
        exercises_done=of("exercise", "done"),
        exercises_started=of("exercise", "started"),
        exercises_total=of("exercise"),
        self_check_answered=of("self-check", "done"),
        self_check_revealed=len(questions.intersection(progress.revealed)),
        self_check_total=of("self-check"),
        reflections_written=of("reflection", "done"),
        reflections_total=of("reflection"),
        reviews_due=reviews.due_now,
    )


@dataclass(frozen=True)
class Place:
    """Where a step is worked, one note at a time: what ``ctrl+n`` goes to.

    An exercise recorded in several notes (exercise 2: four of them) has one place per note, and
    one more for its Ledger form when it is worked in the Ledger; every other step is one place.

    Attributes:
        step: the step.
        note_id: the note to write at this place (``""``: the step as a whole, or its Ledger
            form).
        done: this place's part of the step is done (the note written; the Ledger's
            activations computed; else the step done).
    """

    step: Step
    note_id: str = ""
    done: bool = False

    @property
    def key(self) -> tuple[str, str]:
        """``(step id, note id)``: names the place across plans."""
        return (self.step.id, self.note_id)


def study_places(plan: Plan, progress: LessonProgress) -> tuple[Place, ...]:
    """Every place of the plan's steps (see :class:`Place`), in the plan's order, except the
    notes of consecutive exercises worked in one pane for the same strategies (S15's exercises
    2 and 3, in the Diagrams pane): those go strategy by strategy, each strategy's notes in the
    plan's order, as the pane shows them (a strategy's three boxes together). So ``ctrl+n``
    goes to the next box on screen: from TP's "one wait" (exercise 3) to PP's "which dimension
    is split" (exercise 2), not past it to PP's exercise 3 boxes."""
    places: list[Place] = []
    for step in plan.steps:
        if step.kind != "exercise" or not step.notes:
            places.append(Place(step, "", step.done))
            continue
        if step.worked_in == "ledger":
            places.append(Place(step, "", ledger_exercise_done(progress.forms, progress.figures)))
        places.extend(
            Place(step, note_id, _written(progress.notes.get(note_id))) for note_id in step.notes
        )
    return _strategy_by_strategy(places)


def _note_strategy(place: Place) -> str:
    """The strategy the note of ``place`` is about; ``""`` for none."""
    if not place.note_id:
        return ""
    try:
        return get_note(place.note_id).strategy
    except InputError:  # a lesson's own note id (check-content reports it)
        return ""


def _strategy_by_strategy(places: Sequence[Place]) -> tuple[Place, ...]:
    """``places`` with each run of notes about strategies, worked in one pane, grouped by
    strategy (in the order the strategies first come), keeping the order within a strategy."""
    ordered: list[Place] = []
    run: list[Place] = []

    def end_run() -> None:
        strategies = list(dict.fromkeys(_note_strategy(place) for place in run))
        ordered.extend(sorted(run, key=lambda place: strategies.index(_note_strategy(place))))
        run.clear()

    for place in places:
        if not _note_strategy(place):
            end_run()
            ordered.append(place)
            continue
        if run and run[0].step.worked_in != place.step.worked_in:
            end_run()
        run.append(place)
    end_run()
    return tuple(ordered)


def next_place(places: Sequence[Place], current: tuple[str, str] | None = None) -> Place | None:
    """The first place not done after ``current`` (a :attr:`Place.key`) in order, going round
    to the start, ``current`` itself left out; from the start when ``current`` is ``None`` or
    names no place. A place of a done step counts as done. ``None`` when nothing else is left.
    """
    keys = [place.key for place in places]
    start = keys.index(current) + 1 if current in keys else 0
    for place in (*places[start:], *places[:start]):
        if not (place.done or place.step.done) and place.key != current:
            return place
    return None


_STATE_COLUMN: Final = 8
_KIND_COLUMN: Final = 13
_WHERE_COLUMN: Final = 12


# The plan's columns as ``shardbook plan`` prints them: the ids, translated for the learner.
_COLUMN_WORDS: Final = {
    **{"todo": N_("todo"), "started": N_("started"), "done": N_("done")},
    **{"read": N_("read"), "exercise": N_("exercise"), "self-check": N_("self-check")},
    **{"reflection": N_("reflection"), "reviews": N_("reviews"), "reader": N_("reader")},
    **{"ledger": N_("ledger"), "diagrams": N_("diagrams"), "collectives": N_("collectives")},
    **{"tradeoffs": N_("tradeoffs"), "quiz": N_("quiz")},
}


def _word(value: str) -> str:
    return _(_COLUMN_WORDS[value]) if value in _COLUMN_WORDS else value


def _step_label(step: Step) -> str:
    return f"{_word(step.kind)} {step.number}" if step.number else _word(step.kind)


def render_plan(plan: Plan, tz: dt.tzinfo | None = None) -> str:
    """The plan as plain text for a terminal: a heading with the figure, the counts, the next
    step, one line per step (state, kind, where it is worked, then the lesson's words, last so
    that wide characters do not break the columns), the objectives with their ratings, and the
    reviews. Times are shown in ``tz`` (default: the local time zone)."""
    lines = [
        _("{lesson} {title}: {figure} steps done").format(
            lesson=plan.lesson_id, title=plan.title, figure=plan.figure
        ),
        plan.counts.line(),
    ]
    following = plan.next_step
    lines.append(
        _("next: {step}").format(step=describe_step(following))
        if following
        else _("next: every step is done")
    )
    lines.append("")
    state, kind = pad_cells(_("state"), _STATE_COLUMN), pad_cells(_("step"), _KIND_COLUMN)
    lines.append(f"{state} {kind} " + _("where"))
    for step in plan.steps:
        # The reviews step's title is the interface's (marked N_), the others the lesson's.
        title = _(step.title) if step.kind == REVIEWS_ID else step.title.replace("\n", " ")
        lines.append(
            f"{pad_cells(_word(step.state), _STATE_COLUMN)} "
            f"{pad_cells(_step_label(step), _KIND_COLUMN)} "
            f"{pad_cells(_word(step.worked_in), _WHERE_COLUMN)} {title}"
        )
    if plan.objectives:
        lines += ["", _("objectives (your rating at the start -> at the end; trained by)")]
        for number, objective in enumerate(plan.objectives, start=1):
            start = _(RATING_LABELS.get(objective.rating.start or "", "not rated"))
            end = _(RATING_LABELS.get(objective.rating.end or "", "not rated"))
            trained = _("{done}/{total} done").format(
                done=objective.trained_done, total=len(objective.trained_by)
            )
            lines.append(f"{number}. {objective.text}")
            lines.append(
                "   "
                + _("{start} -> {end}; trained by {trained}").format(
                    start=start, end=end, trained=trained
                )
            )
    lines += ["", review_line(plan.reviews, tz)]
    return "\n".join(lines) + "\n"


def review_line(reviews: ReviewOutlook, tz: dt.tzinfo | None = None) -> str:
    """``reviews: 3 due now; next due 2026-12-08 10:15 +0800, in 16 hours (2 within a day)``
    (times in ``tz``, default local; "in ..." from the outlook's moment)."""
    text = _("reviews: {count} due now").format(count=reviews.due_now)
    if reviews.next_due is not None:
        shown = local_text(reviews.next_due, tz, zone=True)
        when = relative(reviews.next_due, reviews.at)
        text += _("; next due {time}, {when} ({count} within a day)").format(
            time=shown, when=when, count=reviews.due_next_day
        )
    else:
        text += _("; none scheduled later")
    return text
