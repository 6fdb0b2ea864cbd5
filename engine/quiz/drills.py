"""Numeric drills generated from the engines, one registered class per template.

Each drill (:class:`Drill`) draws realistic values (:meth:`Drill.draw`), asks the engine for the
answer (:meth:`Drill.expected`: one engine call, base units) and writes the question with its
worked solution and source (:meth:`Drill.question`). The item id is ``drill:<template>`` whatever
the values, which the review log keeps (``params``) so an asking can be replayed.

The drills: model-state memory per rank under a ZeRO stage (:func:`engine.ledger.compute_ledger`),
the same for a model preset (:mod:`engine.model_presets`), the pipeline bubble in both conventions
(:func:`engine.pipeline.closed_form_bubble`), the bus-bandwidth factor
(:func:`engine.collectives.bus_bandwidth_factor`) and the ring all-reduce time
(:func:`engine.collectives.collective_cost`). The stored parameter names (``zero``, ``p``, ``m``,
``v``, ``ranks``, ...) are part of the progress file: they keep their names.
"""

from __future__ import annotations

import random
from abc import ABC, abstractmethod
from collections.abc import Mapping
from typing import Any, ClassVar, Final

from engine import sources
from engine.checks import one_of
from engine.collectives import BUS_BANDWIDTH_FACTORS, bus_bandwidth_factor, collective_cost
from engine.errors import InputError
from engine.i18n import N_
from engine.i18n import gettext as _
from engine.ledger import CONVENTION_NOTES, LedgerResult, LedgerSpec, compute_ledger
from engine.model_presets import get_preset, model_presets
from engine.pipeline import SCHEDULES, ClosedForm, PipelineSpec, closed_form_bubble
from engine.quiz.grading import show_value
from engine.quiz.model import DRILL_TOLERANCE, DrillUnit, Params, Question, QuizItem
from engine.units import format_bytes, format_count, format_rate, format_seconds

_PARAM_COUNTS: Final = (1e9, 3e9, 7e9, 13e9, 30e9, 70e9)
_DP_SIZES: Final = (2, 4, 8, 16, 32, 64)
_STAGE_COUNTS: Final = (2, 4, 8, 16)
_COLLECTIVE_OPS: Final = ("all-reduce", "all-gather", "reduce-scatter", "all-to-all")
_RANK_COUNTS: Final = (2, 3, 4, 6, 8, 12, 16, 24, 32, 64, 128, 256)
_MESSAGE_SIZES: Final = (256e6, 1e9, 2e9, 4e9, 14e9)
_BANDWIDTHS: Final = (25e9, 50e9, 100e9, 200e9, 400e9)
_LATENCIES: Final = (0.0, 2e-6, 5e-6, 10e-6)


def _tolerance_text() -> str:
    """The sentence closing every drill's prompt, in the interface language."""
    return _("Answers within {tolerance} count as right.").format(
        tolerance=f"{DRILL_TOLERANCE:.0%}"
    )


class Drill(ABC):
    """One drill template. Subclasses set the class attributes and the three methods and are
    registered with :func:`register`.

    Attributes:
        template: the template id (``drill:<template>`` is the item id).
        title: a short label (an English msgid, translated where shown).
        formula: the formula the drill is worked from; drills from one formula give each other
            away and are asked apart (:func:`engine.quiz.items.pair_key`).
        unit: the unit a bare number is read in.
    """

    template: ClassVar[str]
    title: ClassVar[str]
    formula: ClassVar[str]
    unit: ClassVar[DrillUnit]

    @abstractmethod
    def draw(self, rng: random.Random) -> Params:
        """Random, realistic values for one asking."""

    @abstractmethod
    def expected(self, params: Params) -> float:
        """The engine's answer in base units (bytes, seconds, or a ratio).

        Raises:
            InputError: values the engine refuses.
        """

    @abstractmethod
    def question(self, item: QuizItem, params: Params) -> Question:
        """``item`` asked with ``params``: prompt, expected value, worked solution, sources.

        Raises:
            InputError: values the engine refuses.
        """

    def _number(
        self,
        item: QuizItem,
        params: Params,
        prompt: str,
        solution: str,
        *cited: str | sources.Citations,
    ) -> Question:
        return Question(
            item,
            prompt,
            "number",
            dict(params),
            self.expected(params),
            self.unit,
            DRILL_TOLERANCE,
            solution=solution,
            sources=sources.flattened(*cited),
        )


DRILLS: dict[str, Drill] = {}
"""The registered drills by template id, in the order they are listed and asked."""


def register(cls: type[Drill]) -> type[Drill]:
    """Class decorator: add a :class:`Drill` to :data:`DRILLS` under its ``template``."""
    DRILLS[cls.template] = cls()
    return cls


def get_drill(template: str) -> Drill:
    """The drill of ``template``.

    Raises:
        InputError: unknown template (field ``template``).
    """
    if template not in DRILLS:
        raise InputError(
            "template",
            _("unknown drill {template!r}; use one of {choices}").format(
                template=template, choices=tuple(DRILLS)
            ),
        )
    return DRILLS[template]


def _stage_text(zero_stage: int) -> str:
    return _("no ZeRO (replicated)") if zero_stage == 0 else f"ZeRO-{zero_stage}"


# The model-state terms by the keys the ledger gives them.
_TERM_NAMES: Final = {
    "params": N_("params"),
    "grads": N_("grads"),
    "master_weights": N_("master weights"),
    "optimizer_states": N_("optimizer states"),
}


def _model_states_lines(result: LedgerResult) -> list[str]:
    lines = [
        _("{term}: {formula}").format(term=_(_TERM_NAMES[term.name]), formula=term.formula)
        for term in result.terms[:4]
    ]
    lines.append(
        _("model states per rank = {bytes}").format(bytes=format_bytes(result.model_states_bytes))
    )
    return lines


class _ModelStatesDrill(Drill):
    """Model states per rank on DP ranks under a ZeRO stage (mixed-precision Adam, ZeRO paper
    convention): subclasses give the model (:meth:`model_fields`) and the prompt."""

    unit: ClassVar[DrillUnit] = "GB"

    @abstractmethod
    def model_fields(self, params: Params) -> dict[str, Any]:
        """The :class:`LedgerSpec` fields that give the model: ``params`` or a preset."""

    def ledger(self, params: Params) -> LedgerResult:
        """The ledger of ``params`` (the stored key ``zero`` is the ZeRO stage)."""
        spec = LedgerSpec(
            **self.model_fields(params), dp=int(params["dp"]), zero_stage=int(params["zero"])
        )
        return compute_ledger(spec)

    def expected(self, params: Params) -> float:
        return self.ledger(params).model_states_bytes


@register
class ZeroMemoryDrill(_ModelStatesDrill):
    """Model states per rank of an N-parameter model on DP ranks under a ZeRO stage."""

    template = "zero-memory"
    title = N_("Model states per rank under ZeRO")
    formula = "zero-memory"

    def draw(self, rng: random.Random) -> Params:
        return {
            "params": rng.choice(_PARAM_COUNTS),
            "dp": rng.choice(_DP_SIZES),
            "zero": rng.randrange(4),
        }

    def model_fields(self, params: Params) -> dict[str, Any]:
        return {"params": float(params["params"])}

    def question(self, item: QuizItem, params: Params) -> Question:
        result = self.ledger(params)
        prompt = _(
            "A {params}-parameter model trains with mixed-precision Adam (2 + 2 + 12 bytes per "
            "parameter, ZeRO paper) on DP = {dp} ranks, {stage}. How much memory do the model "
            "states (parameters, gradients, optimizer states) take on one rank? Answer in GB "
            "(10^9 bytes), e.g. 42.5 or 39.6GiB. {tolerance}"
        ).format(
            params=format_count(float(params["params"])),
            dp=params["dp"],
            stage=_stage_text(int(params["zero"])),
            tolerance=_tolerance_text(),
        )
        lines = [*_model_states_lines(result), _(CONVENTION_NOTES["zero-paper"])]
        return self._number(item, params, prompt, "\n".join(lines), sources.ZERO_MODEL_STATES)


def _closed_form(params: Params) -> ClosedForm:
    return closed_form_bubble(
        PipelineSpec(
            schedule=one_of("schedule", params["schedule"], SCHEDULES),
            stages=int(params["p"]),
            num_microbatches=int(params["m"]),
            virtual_stages=int(params["v"]),
        )
    )


def _bubble_solution(closed: ClosedForm, expected: float) -> str:
    answer = _("answer = {value}").format(value=show_value(expected, "fraction"))
    relation = "bubble/total = bubble/ideal / (1 + bubble/ideal)"
    return f"{closed.formula}\n" + _("; ").join((relation, answer))


@register
class BubbleOverIdealDrill(Drill):
    """The bubble of 1F1B or interleaved 1F1B over the ideal compute time."""

    template = "bubble-over-ideal"
    title = N_("Pipeline bubble (bubble/ideal)")
    formula = "pipeline-bubble"
    unit: ClassVar[DrillUnit] = "fraction"

    def draw(self, rng: random.Random) -> Params:
        p = rng.choice(_STAGE_COUNTS)
        if rng.random() < 0.5:
            return {"schedule": "1f1b", "p": p, "m": rng.randint(p, 8 * p), "v": 1}
        return {
            "schedule": "interleaved-1f1b",
            "p": p,
            "m": p * rng.randint(1, 8),
            "v": rng.choice((2, 4)),
        }

    def expected(self, params: Params) -> float:
        return _closed_form(params).bubble_over_ideal

    def question(self, item: QuizItem, params: Params) -> Question:
        closed = _closed_form(params)
        p, m, v = params["p"], params["m"], params["v"]
        shape = _("p = {p} stages, m = {m} micro-batches").format(p=p, m=m) + (
            _(", v = {v} chunks").format(v=v) if v > 1 else ""
        )
        prompt = _(
            "Pipeline schedule {schedule} with {shape}, no p2p time. What is the bubble in the "
            "bubble/ideal convention (idle time over the ideal compute time m(t_F + t_B + t_W))? "
            "Answer as a fraction (0.25 or 1/4) or a percentage (25%). {tolerance}"
        ).format(schedule=params["schedule"], shape=shape, tolerance=_tolerance_text())
        solution = _bubble_solution(closed, closed.bubble_over_ideal)
        return self._number(item, params, prompt, solution, closed.source)


@register
class BubbleFractionDrill(Drill):
    """GPipe's bubble as a share of the iteration time."""

    template = "bubble-fraction"
    title = N_("GPipe bubble (bubble/total)")
    formula = "pipeline-bubble"
    unit: ClassVar[DrillUnit] = "fraction"

    def draw(self, rng: random.Random) -> Params:
        p = rng.choice(_STAGE_COUNTS)
        return {"schedule": "gpipe", "p": p, "m": rng.randint(p, 8 * p), "v": 1}

    def expected(self, params: Params) -> float:
        return _closed_form(params).bubble_fraction

    def question(self, item: QuizItem, params: Params) -> Question:
        closed = _closed_form(params)
        prompt = _(
            "GPipe with p = {p} stages and m = {m} micro-batches, no p2p time. What share of the "
            "iteration time is bubble (bubble/total convention)? Answer as a fraction (0.25 or "
            "1/4) or a percentage (25%). {tolerance}"
        ).format(p=params["p"], m=params["m"], tolerance=_tolerance_text())
        solution = _bubble_solution(closed, closed.bubble_fraction)
        return self._number(item, params, prompt, solution, closed.source)


@register
class BusBandwidthFactorDrill(Drill):
    """The NCCL-tests factor from algorithm bandwidth to bus bandwidth."""

    template = "busbw-factor"
    title = N_("Bus-bandwidth factor")
    formula = "ring-collective"
    unit: ClassVar[DrillUnit] = ""

    def draw(self, rng: random.Random) -> Params:
        return {"op": rng.choice(_COLLECTIVE_OPS), "ranks": rng.choice(_RANK_COUNTS)}

    def expected(self, params: Params) -> float:
        return bus_bandwidth_factor(str(params["op"]), int(params["ranks"]))

    def question(self, item: QuizItem, params: Params) -> Question:
        op, ranks = str(params["op"]), int(params["ranks"])
        prompt = _(
            "NCCL-tests reports bus bandwidth = algorithm bandwidth x a factor. What is the "
            "factor for {op} on R = {ranks} ranks? Answer as a number (1.75 or 7/4). {tolerance}"
        ).format(op=op, ranks=ranks, tolerance=_tolerance_text())
        solution = (
            _("{op}: factor {factor} with R = {ranks} = {value}").format(
                op=op,
                factor=BUS_BANDWIDTH_FACTORS[op],
                ranks=ranks,
                value=f"{self.expected(params):.6g}",
            )
            + "\n"
            + _("The factor makes bus bandwidth comparable with the link speed whatever R is.")
        )
        return self._number(item, params, prompt, solution, sources.BUS_BANDWIDTH)


@register
class RingAllReduceTimeDrill(Drill):
    """The alpha-beta time of a ring all-reduce."""

    template = "allreduce-time"
    title = N_("Ring all-reduce time")
    formula = "ring-collective"
    unit: ClassVar[DrillUnit] = "ms"

    def draw(self, rng: random.Random) -> Params:
        return {
            "ranks": rng.choice(_RANK_COUNTS),
            "size_bytes": rng.choice(_MESSAGE_SIZES),
            "bandwidth": rng.choice(_BANDWIDTHS),
            "latency": rng.choice(_LATENCIES),
        }

    def expected(self, params: Params) -> float:
        return collective_cost(
            "all-reduce",
            int(params["ranks"]),
            float(params["size_bytes"]),
            float(params["bandwidth"]),
            float(params["latency"]),
            "ring",
        ).time_s

    def question(self, item: QuizItem, params: Params) -> Question:
        cost = collective_cost(
            "all-reduce",
            int(params["ranks"]),
            float(params["size_bytes"]),
            float(params["bandwidth"]),
            float(params["latency"]),
            "ring",
        )
        p, size_bytes = cost.ranks, cost.size_bytes
        alpha, bandwidth = cost.latency_s, cost.bandwidth_bytes_per_s
        alpha_text = format_seconds(alpha) if alpha else "0"
        prompt = _(
            "Ring all-reduce of {size} per rank on R = {p} ranks, link bandwidth {bandwidth} "
            "(beta = 1/bandwidth), latency alpha = {alpha} per message. How long does it take in "
            "the alpha-beta model? Answer in ms (e.g. 17.6 or 0.0176s). {tolerance}"
        ).format(
            size=format_bytes(size_bytes),
            p=p,
            bandwidth=format_rate(bandwidth),
            alpha=alpha_text,
            tolerance=_tolerance_text(),
        )
        solution = (
            f"t = {cost.formula}\n"
            f"  = 2*{p - 1}*{alpha_text} + 2*{size_bytes:.4g} B*{p - 1}/{p} / {bandwidth:.4g} B/s\n"
            f"  = {format_seconds(cost.time_s)}"
        )
        return self._number(item, params, prompt, solution, sources.MPICH_COSTS)


@register
class PresetMemoryDrill(_ModelStatesDrill):
    """Model states per rank of a published model (a preset) under a ZeRO stage."""

    template = "preset-memory"
    title = N_("Model states of a published model")
    formula = "preset-memory"

    def draw(self, rng: random.Random) -> Params:
        return {
            "model": rng.choice(tuple(model_presets())),
            "dp": rng.choice(_DP_SIZES),
            "zero": rng.randrange(4),
        }

    def model_fields(self, params: Params) -> dict[str, Any]:
        return {"model": str(params["model"])}

    def question(self, item: QuizItem, params: Params) -> Question:
        result = self.ledger(params)
        prompt = _(
            "{title} ({params} parameters; model {model}) trains with mixed-precision Adam "
            "(2 + 2 + 12 bytes per parameter, ZeRO paper) on DP = {dp} ranks, {stage}. How much "
            "memory do the model states take on one rank? Answer in GB (10^9 bytes). {tolerance}"
        ).format(
            title=get_preset(str(params["model"])).shown_title,
            params=f"{result.params_total:,.0f}",
            model=params["model"],
            dp=params["dp"],
            stage=_stage_text(int(params["zero"])),
            tolerance=_tolerance_text(),
        )
        solution = "\n".join(_model_states_lines(result))
        return self._number(
            item, params, prompt, solution, sources.ZERO_MODEL_STATES, sources.PARAM_COUNT
        )


DRILL_TEMPLATES: Final[tuple[str, ...]] = tuple(DRILLS)
"""Drill templates; ``drill:<template>`` is the item id whatever the random parameters."""

DRILL_TITLES: Final[Mapping[str, str]] = {name: drill.title for name, drill in DRILLS.items()}


def drill_params(template: str, rng: random.Random) -> Params:
    """Random, realistic parameters for drill ``template`` (one of :data:`DRILL_TEMPLATES`).

    Memory: N in 1B-70B (or a model preset), DP 2-64, ZeRO stage 0-3. Bubble: p in 2-16, m in
    p-8p (a multiple of p for interleaved, v 2 or 4). Collectives: 2-256 ranks; 256 MB to 14 GB
    (a 7B model's bf16 gradients), 25-400 GB/s links, alpha 0-10 us.

    Raises:
        InputError: unknown template (field ``template``).
    """
    return get_drill(template).draw(rng)


def drill_expected(template: str, params: Params) -> float:
    """The engine's answer to drill ``template`` with ``params`` (base units: bytes, seconds,
    or a ratio).

    Raises:
        InputError: unknown template, or parameters the engine refuses.
    """
    return get_drill(template).expected(params)


def make_drill(item: QuizItem, params: Params) -> Question:
    """The drill ``item`` asked with ``params`` (from :func:`drill_params`, or replayed from the
    log): prompt, the engine's expected value, unit, tolerance and worked solution.

    Raises:
        InputError: unknown template or parameters the engine refuses.
    """
    return get_drill(item.ref).question(item, params)
