"""Quizzes and spaced review: items from a lesson and from the engines, graded and scheduled.

Four kinds of items (:data:`KINDS`), each with a stable id that never contains its wording or its
random values, so editing a lesson keeps the learner's schedule:

- ``self-check``: the lesson's self-check questions (``self-check:<item id>``). The learner types an
  answer (the one written in the lesson is offered, :meth:`QuizSession.lesson_answer`), the key
  points are revealed, and the learner rates the recall Again/Hard/Good/Easy.
- ``drill``: numeric questions generated from the engines with random but realistic parameters
  (``drill:<template id>``, :data:`DRILL_TEMPLATES`): model-state memory per rank under a ZeRO stage
  (:func:`engine.ledger.compute_ledger`), the same for a model preset (:mod:`engine.model_presets`),
  the pipeline bubble for p/m/v
  (:func:`engine.pipeline.closed_form_bubble`), the bus-bandwidth factor
  (:func:`engine.collectives.bus_bandwidth_factor`) and the ring all-reduce time
  (:func:`engine.collectives.collective_cost`). The expected answer is the engine's output; an
  answer within :data:`DRILL_TOLERANCE` (relative) is correct, written as a number, a fraction
  (``3/11``), a percentage or in a unit of the prompt's kind (:func:`parse_answer`); the worked
  solution shows the engine's formula and its source.
- ``misconception``: the lesson's misconceptions (section ``misconceptions``) as true/false
  statements: the mistaken belief (false) and its correct counterpart (true), each with an
  explanation (``misconception:<item id>:claim`` / ``:truth``). The statements and explanations are
  added material grounded in the lesson and the sources named in :data:`MISCONCEPTIONS`; the
  lesson's own sentence is shown with the explanation.
- ``matching``: a strategy, to be matched with what it splits and the collectives it runs
  (``matching:<strategy>``), from :data:`engine.strategies.STRATEGIES`; four choices, the wrong ones
  keep one half of the right pair, so both halves are tested. A wrong option is wrong by the
  strategy data: its split names something the strategy does not divide
  (:attr:`~engine.strategies.Strategy.shards`), or its collectives differ from the strategy's even
  after writing each all-reduce as a reduce-scatter plus an all-gather
  (:func:`~engine.strategies.collective_signature`). An option that is right by that test is
  never offered as a wrong one, and graded right if a replayed asking holds one.

Order (:class:`QuizSession`): due items first, then new ones mixing the kinds. Items of one pair
(:func:`pair_key`: a misconception's claim and its counterpart; drills from one formula) are
*close* when fewer than :data:`PAIR_GAP` other questions come between them in one session; a
session never asks them that close (the later one waits, if need be for the next session). A
self-check answered in the lesson today (``quiz.lesson_reveals``, :mod:`engine.lesson_reveals`)
is not asked again today; "today" is the learner's local date.

Scheduling uses FSRS through the ``fsrs`` library (Ye et al., "A Stochastic Shortest Path Algorithm
for Optimizing Spaced Repetition Scheduling", KDD 2022; ``open-spaced-repetition/py-fsrs``):
:class:`fsrs.Scheduler` with fuzzing off and the learner's desired retention (the setting
``review.desired_retention``, :mod:`engine.settings`), which each log entry records, so replaying
the review log rebuilds the schedule exactly (:meth:`QuizState.rebuild_cards`). Every datetime
inside is timezone-aware UTC; the learner sees local time (:mod:`engine.timefmt`).

State lives in ``LessonProgress.quiz`` (:class:`QuizState` edits that dict in place)::

    version: 1
    cards: {item id: fsrs Card.to_dict()}         # the schedule, a cache of the log
    log: [{item, rating 1-4, at (ISO UTC), answer, correct (true/false/null), params,
           retention (desired retention of that review; absent: 0.9, fsrs's default)}]
    answers: {item id: {answer, correct, at, params}}   # the last submitted answer
    archived: {item id: {card, at}}               # items no longer in the lesson, kept
    lesson_reveals: {lesson item id: at (ISO UTC)}      # self-checks revealed in the lesson

:class:`QuizSession` runs one quiz over one or more lessons: one queue (due items first, then new
ones), submit/judge/choose, rate (with each rating's next interval shown first,
:meth:`QuizSession.intervals`), undo; it calls ``save`` after every answer and every rating.
Clock, time zone and random seed are injectable so runs are reproducible. Statistics for
``shardbook stats``, the app and the export: :func:`lesson_stats` (:class:`LessonStats`).
"""

from __future__ import annotations

import datetime as dt
import functools
import math
import random
import re
import zlib
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

from fsrs import Card, Rating, Scheduler

from engine.collectives import (
    BUS_BANDWIDTH_FACTORS,
    MPICH_SOURCE,
    NCCL_TESTS_SOURCE,
    CollectiveCost,
    bus_bandwidth_factor,
    collective_cost,
)
from engine.errors import InputError, ProgressError
from engine.ledger import CONVENTION_NOTES, ZERO_SOURCE, LedgerSpec, compute_ledger
from engine.lesson import Lesson
from engine.lesson_reveals import lesson_reveals
from engine.model_presets import get_preset, model_presets
from engine.model_size import PARAM_COUNT_SOURCE
from engine.pipeline import PipelineSpec, closed_form_bubble
from engine.progress import LessonProgress
from engine.quiz_stats import LessonStats, due_forecast, local_date, recall_history
from engine.settings import DESIRED_RETENTION_DEFAULT, DESIRED_RETENTION_RANGE
from engine.strategies import (
    DECOMPOSITION_SOURCE,
    SHARDS,
    STRATEGIES,
    Strategy,
    collective_signature,
    covered_shards,
)
from engine.timefmt import utc_iso, utc_now
from engine.units import (
    GB,
    format_bytes,
    format_count,
    format_rate,
    format_seconds,
    parse_bytes,
    parse_number,
    parse_time,
)

KINDS: Final = ("self-check", "drill", "misconception", "matching")
STATE_VERSION: Final = 1
RATINGS: Final = {1: "Again", 2: "Hard", 3: "Good", 4: "Easy"}
"""FSRS ratings by key: 1 Again, 2 Hard, 3 Good, 4 Easy (``fsrs.Rating`` values)."""
RECALLED: Final = frozenset({3, 4})
"""Ratings that count as recalled in :attr:`LessonStats.recall`: Good and Easy (Again is a lapse;
Hard is counted as not recalled, so recall never flatters the learner)."""

PAIR_GAP: Final = 5
"""Two items of one pair are close when fewer than this many other questions come between them
in one session (module docstring, "Order")."""

FORECAST_DAYS: Final = 30
"""Days of :attr:`LessonStats.due_forecast`, today (local) included."""

DRILL_TOLERANCE: Final = 0.02
"""A drill answer within 2 % of the expected value (relative) is correct."""

ENGINE_LESSONS: Final = ("S15",)
"""Lessons that get the engine-generated drills and matching items: the engines (ledger,
pipeline, collectives, strategies) were written for S15 (``engine/strategies.py``)."""

FSRS_SOURCE: Final = (
    "FSRS (Ye et al. 2022, KDD; open-spaced-repetition/py-fsrs Scheduler, default parameters)"
)

Clock = Callable[[], dt.datetime]
Params = dict[str, Any]


def _utc(moment: dt.datetime, field_name: str = "clock") -> dt.datetime:
    if moment.tzinfo is None:
        raise InputError(field_name, "needs a timezone-aware datetime (UTC)")
    return moment.astimezone(dt.UTC)


def _iso(moment: dt.datetime) -> str:
    # To the microsecond: replaying the log must give the schedule fsrs computed live.
    return utc_iso(moment, timespec="auto")


@functools.lru_cache(maxsize=16)
def scheduler_for(desired_retention: float = DESIRED_RETENTION_DEFAULT) -> Scheduler:
    """The FSRS scheduler for ``desired_retention`` (0.70-0.97): py-fsrs 6 defaults otherwise,
    fuzzing off (fuzz draws from the global random module, so a replayed log would give other
    dues).

    Raises:
        InputError: field ``desired_retention`` outside :data:`DESIRED_RETENTION_RANGE`.
    """
    low, high = DESIRED_RETENTION_RANGE
    if isinstance(desired_retention, bool) or not low <= desired_retention <= high:
        raise InputError(
            "desired_retention", f"{desired_retention!r} is outside {low:.2f}-{high:.2f}"
        )
    return Scheduler(desired_retention=float(desired_retention), enable_fuzzing=False)


# ----------------------------------------------------------------------------------------------
# Items


@dataclass(frozen=True)
class QuizItem:
    """One schedulable item of a lesson.

    Attributes:
        id: stable id (module docstring), unique within the lesson.
        lesson_id: the lesson it belongs to.
        kind: one of :data:`KINDS`.
        title: a short English label for lists and the CLI.
        ref: what the item is built from: the lesson item id (self-check, misconception), the
            drill template id, or the strategy name.
    """

    id: str
    lesson_id: str
    kind: str
    title: str
    ref: str


@dataclass(frozen=True)
class Misconception:
    """A misconception of the lesson as two true/false statements (added material).

    Attributes:
        claim: the mistaken belief, stated as a claim (false).
        truth: its correct counterpart (true).
        explanation: why, with a figure where one helps.
        sources: where the explanation rests (papers, documentation); the lesson's own
            misconception sentence is shown beside it.
    """

    claim: str
    truth: str
    explanation: str
    sources: tuple[str, ...]


MISCONCEPTIONS: Final[Mapping[str, Misconception]] = {
    "misconception-params-times-precision": Misconception(
        claim="训练所需的显存可以用“参数量 × 每参数字节数（精度）”来估算。",
        truth=(
            "混合精度 Adam 训练中，模型状态按 ZeRO 论文口径约为每参数 16 字节"
            "（参数 2 + 梯度 2 + FP32 master 与两份 Adam moment 12），此外还有 activation、"
            "通信 bucket 与临时 buffer 的峰值。"
        ),
        explanation=(
            "“参数×精度”只算了权重：1B 参数的 bf16 权重约 2 GB，而模型状态约 16 GB"
            "（GB = 10⁹ 字节），还没算 activation 和峰值 buffer；Megatron-LM 用 FP32 梯度，"
            "口径为每参数 18 字节。"
        ),
        sources=(
            "Rajbhandari et al. 2020, ZeRO (arXiv:1910.02054) §3.1",
            "Megatron-LM docs, Distributed Optimizer",
        ),
    ),
    "misconception-linear-scaling": Misconception(
        claim="world size 翻倍，吞吐必定翻倍，且每张卡的内存精确减半。",
        truth=(
            "纯数据并行下每个 rank 都保存完整的参数、梯度和优化器状态：world size 翻倍不会减少"
            "每卡的模型状态内存；同时通信、同步等待和 pipeline bubble 让吞吐通常低于翻倍。"
        ),
        explanation=(
            "只有被切分的状态（ZeRO/FSDP 的分片、TP/PP 的模型切分）才随并行度变小，复制的部分"
            "和峰值 buffer 不变；ring all-reduce 的时间 2(p-1)α + 2n(p-1)/p·β 随 p 增长而不减少，"
            "扩展效率因此小于 1。"
        ),
        sources=(
            "Rajbhandari et al. 2020, ZeRO (arXiv:1910.02054) §3, §5",
            "Thakur, Rabenseifner, Gropp 2005 (MPICH collectives)",
        ),
    ),
    "misconception-zero-vs-tp": Misconception(
        claim="ZeRO 与 tensor parallel 是同一种切分：两者都把每层的矩阵计算拆到多个 rank 上。",
        truth=(
            "ZeRO 主要切分模型状态（优化器状态、梯度、参数），每个 rank 仍完成整层计算；"
            "tensor parallel 切分层内的矩阵计算，每层内部都要通信。"
        ),
        explanation=(
            "ZeRO/FSDP 在用到某层前 all-gather 参数、backward 后 reduce-scatter 梯度，通信量随"
            "参数量走；Megatron 式 TP 每层 forward 与 backward 各 2 次 all-reduce activation，"
            "通信量随 b·s·h 走、在关键路径上。"
        ),
        sources=(
            "Rajbhandari et al. 2020, ZeRO (arXiv:1910.02054) §5, §7",
            "Narayanan et al. 2021 (arXiv:2104.04473) §3.2",
        ),
    ),
    "misconception-collective-is-algorithm": Misconception(
        claim="all-reduce 是一种具体算法，所以同样大小的 all-reduce 在任何集群上耗时都相同。",
        truth=(
            "all-reduce 是 collective 的语义（每个 rank 得到所有输入之和）；ring、tree、"
            "halving-doubling 等算法的步数和传输量不同，实际耗时还取决于硬件拓扑与带宽。"
        ),
        explanation=(
            "ring all-reduce 需 2(p-1) 步，halving-doubling 需 2·lg p 步，二者的 α 项不同；"
            "NCCL 会按拓扑（NVLink、PCIe、网络）选择 ring 或 tree，bus bandwidth 才可在不同"
            "rank 数之间比较。"
        ),
        sources=(
            "Thakur, Rabenseifner, Gropp 2005 (MPICH collectives)",
            "NCCL-tests doc/PERFORMANCE.md",
        ),
    ),
    "misconception-apple-silicon": Misconception(
        claim="一台 Apple Silicon Mac 可以当作多 GPU 环境，直接用 NCCL 运行多卡训练。",
        truth=(
            "Apple Silicon 只有一块与 CPU 共享统一内存的 GPU，PyTorch 的 NCCL 后端只支持 CUDA；"
            "本周可以用公式、CPU 上的 Gloo 后端或模拟器来学习 collective 与并行策略。"
        ),
        explanation=(
            "torch.distributed 在 CPU 上用 Gloo 后端可以启动多个进程来模拟多个 rank，"
            "足以验证 collective 的语义和数据流，但测不出 GPU 互联的带宽与延迟。"
        ),
        sources=(
            "PyTorch docs, torch.distributed (Backends: NCCL for CUDA, Gloo for CPU)",
            "PyTorch docs, MPS backend",
        ),
    ),
}
"""Correct counterparts of S15's five misconceptions, keyed by the lesson item id (added
material; the lesson lists only the mistaken beliefs)."""


DRILL_TEMPLATES: Final = (
    "zero-memory",
    "bubble-over-ideal",
    "bubble-fraction",
    "busbw-factor",
    "allreduce-time",
    "preset-memory",
)
"""Drill templates; ``drill:<template>`` is the item id whatever the random parameters."""

_DRILL_TITLES: Final = {
    "zero-memory": "Model states per rank under ZeRO",
    "bubble-over-ideal": "Pipeline bubble (bubble/ideal)",
    "bubble-fraction": "GPipe bubble (bubble/total)",
    "busbw-factor": "Bus-bandwidth factor",
    "allreduce-time": "Ring all-reduce time",
    "preset-memory": "Model states of a published model",
}


_DRILL_FORMULAS: Final = {
    "bubble-over-ideal": "pipeline-bubble",
    "bubble-fraction": "pipeline-bubble",
    "busbw-factor": "ring-collective",
    "allreduce-time": "ring-collective",
}
"""Drills worked from one formula, which :func:`pair_key` keeps apart: both bubble conventions
come from (p-1)/m (``closed_form_bubble``); the all-reduce bus-bandwidth factor 2(n-1)/n is the
bandwidth term of the ring all-reduce time (NCCL-tests doc/PERFORMANCE.md; Thakur, Rabenseifner,
Gropp 2005). A drill not listed is a pair of its own."""


def pair_key(item: QuizItem) -> str:
    """The pair ``item`` belongs to: items with one key give each other away when asked close
    together (module docstring, "Order"). A misconception's claim and its counterpart share a
    key, and so do drills from one formula (:data:`_DRILL_FORMULAS`); any other item is alone."""
    if item.kind == "misconception":
        return f"{item.lesson_id}/misconception:{item.ref}"
    if item.kind == "drill":
        return f"{item.lesson_id}/formula:{_DRILL_FORMULAS.get(item.ref, item.ref)}"
    return f"{item.lesson_id}/{item.id}"


def lesson_items(lesson: Lesson) -> tuple[QuizItem, ...]:
    """Every quiz item of ``lesson``, in a fixed order: self-check questions, misconception
    statements (lesson items of section ``misconceptions`` with an entry in
    :data:`MISCONCEPTIONS`), then, for :data:`ENGINE_LESSONS`, matching items and drills."""
    items: list[QuizItem] = [
        QuizItem(f"self-check:{item.id}", lesson.id, "self-check", item.text, item.id)
        for item in lesson.self_check
    ]
    for section in lesson.sections:
        if section.id != "misconceptions":
            continue
        for item in section.items:
            if item.id not in MISCONCEPTIONS:
                continue
            for side in ("claim", "truth"):
                items.append(
                    QuizItem(
                        f"misconception:{item.id}:{side}",
                        lesson.id,
                        "misconception",
                        f"{item.text} ({side})",
                        item.id,
                    )
                )
    if lesson.id in ENGINE_LESSONS:
        items.extend(
            QuizItem(f"matching:{name}", lesson.id, "matching", strategy.title, name)
            for name, strategy in STRATEGIES.items()
        )
        items.extend(
            QuizItem(f"drill:{name}", lesson.id, "drill", _DRILL_TITLES[name], name)
            for name in DRILL_TEMPLATES
        )
    return tuple(items)


# ----------------------------------------------------------------------------------------------
# Questions: an item asked once, with its random values


@dataclass(frozen=True)
class Question:
    """An item as asked: prompt, what counts as right, and what to show afterwards.

    Attributes:
        item: the item asked.
        prompt: the question (lesson text is kept verbatim; show it literally).
        answer_kind: ``text`` (self-check), ``number`` (drill), ``true-false`` or ``choice``.
        params: what makes this asking reproducible (drill values, choice order); JSON-like.
        expected: drills: the engine's value in base units (bytes, seconds, or a ratio);
            true-false: ``True``/``False``; choice: the index of the right option; text: None.
        unit: drills: the unit a bare number is read in (``GB``, ``ms``, ``fraction``, ``""``).
        tolerance: drills: the relative tolerance (:data:`DRILL_TOLERANCE`); else 0.
        options: choice: the options, in order (keys a-d).
        solution: shown after answering: key points, the worked solution, or the explanation.
        sources: where the solution rests.
        accepted: choice: every option graded right: ``expected`` and any option equivalent to
            it (only a replayed asking from an older version can hold one, see
            :func:`make_matching`).
    """

    item: QuizItem
    prompt: str
    answer_kind: str
    params: Params = field(default_factory=dict)
    expected: float | bool | int | None = None
    unit: str = ""
    tolerance: float = 0.0
    options: tuple[str, ...] = ()
    solution: str = ""
    sources: tuple[str, ...] = ()
    accepted: tuple[int, ...] = ()

    def expected_text(self) -> str:
        """The right answer as text (drills: in the unit asked, 4 significant digits)."""
        if self.answer_kind == "number" and isinstance(self.expected, float):
            return _show_value(self.expected, self.unit)
        if self.answer_kind == "true-false":
            return "true" if self.expected else "false"
        if self.answer_kind == "choice" and isinstance(self.expected, int):
            return f"{'abcd'[self.expected]}) {self.options[self.expected]}"
        return ""

    def grade(self, answer: str | bool | int) -> Grade:
        """Grade an answer: text for ``number`` and ``text``, a bool for ``true-false``, an
        option index (0-3) for ``choice``.

        Returns:
            A :class:`Grade`. A ``text`` answer is not graded (``correct`` None, no suggested
            rating: the learner rates it).

        Raises:
            InputError: field ``answer``: a drill answer that is not a number in an accepted
                unit, an empty self-check answer, or a choice out of range.
        """
        if self.answer_kind == "text":
            if not str(answer).strip():
                raise InputError("answer", "write your answer first, then reveal the key points")
            return Grade(None, str(answer), None)
        if self.answer_kind == "number":
            value = parse_answer(str(answer), self.unit)
            assert isinstance(self.expected, float)
            ok = within_tolerance(value, self.expected, self.tolerance)
            return Grade(ok, str(answer), 3 if ok else 1, value)
        if self.answer_kind == "true-false":
            ok = bool(answer) == self.expected
            return Grade(ok, "true" if answer else "false", 3 if ok else 1)
        if isinstance(answer, bool) or not isinstance(answer, int):
            raise InputError("answer", "choose an option a-d")
        if not 0 <= answer < len(self.options):
            raise InputError("answer", f"choose an option a-{'abcd'[len(self.options) - 1]}")
        ok = answer == self.expected or answer in self.accepted
        return Grade(ok, "abcd"[answer], 3 if ok else 1)


@dataclass(frozen=True)
class Grade:
    """The verdict on one answer.

    Attributes:
        correct: True/False for graded items; None for a self-check answer.
        answer: the answer as given (text, ``true``/``false`` or the option letter).
        suggested: the FSRS rating a graded answer implies (1 Again when wrong, 3 Good when
            right); None for a self-check answer.
        value: drills: the answer parsed into base units.
    """

    correct: bool | None
    answer: str
    suggested: int | None
    value: float | None = None


def within_tolerance(value: float, expected: float, tolerance: float) -> bool:
    """``|value - expected| <= tolerance * |expected|`` (relative tolerance)."""
    return abs(value - expected) <= tolerance * abs(expected)


_UNIT_SCALE: Final = {"GB": GB, "ms": 1e-3, "fraction": 1.0, "": 1.0}
_FRACTION_RE: Final = re.compile(
    r"^\s*(\d+(?:\.\d*)?|\.\d+)\s*/\s*(\d+(?:\.\d*)?|\.\d+)\s*(%?)\s*([^\s\d%/].*)?$"
)


def parse_answer(text: str, unit: str) -> float:
    """A drill answer in base units (bytes, seconds, or a ratio).

    A bare number is read in ``unit``: ``GB`` (1e9 bytes), ``ms``, ``fraction`` or ``""`` (a
    plain number). Also accepted:

    - a fraction of two numbers, as the worked solutions write them: ``3/11``, ``1/8``,
      ``3/8 %``, ``1/2 GB``;
    - a percentage where the answer has no unit (``fraction`` or ``""``): ``12.5%``;
    - for memory answers every size unit of :func:`engine.units.parse_bytes` (``39.6GiB``,
      ``16e9B``, ``16 GB``); for times every unit of :func:`engine.units.parse_time`
      (``0.018s``, ``17570us``).

    Raises:
        InputError: field ``answer``: empty, not a number, a zero denominator, or a unit that
            does not fit the question (the message names the units that do).
    """
    raw = text.strip()
    if not raw:
        raise InputError("answer", "is empty; type a number")
    fraction = _FRACTION_RE.match(raw)
    if fraction is not None:
        numerator, denominator, percent, suffix = fraction.groups()
        if float(denominator) == 0:
            raise InputError("answer", f"{raw!r} divides by zero")
        value = float(numerator) / float(denominator)
        return parse_answer(f"{value!r}{percent}{suffix or ''}", unit)
    if unit in ("fraction", "") and raw.endswith("%"):
        return parse_number("answer", raw[:-1], allow_zero=True) / 100.0
    try:
        return parse_number("answer", raw, allow_zero=True) * _UNIT_SCALE[unit]
    except InputError as error:
        if unit == "GB":
            return parse_bytes("answer", raw, allow_zero=True)
        if unit == "ms":
            return parse_time("answer", raw)
        if "unexpected unit" in error.message:
            raise InputError(
                "answer", f"{raw!r}: answer with a number, a fraction (3/11) or a percentage (25%)"
            ) from None
        raise


def _show_value(value: float, unit: str) -> str:
    if unit == "GB":
        return f"{value / GB:.4g} GB"
    if unit == "ms":
        return f"{value / 1e-3:.4g} ms"
    if unit == "fraction":
        return f"{value:.4g} ({value * 100:.4g} %)"
    return f"{value:.4g}"


# -- drills


_PARAM_COUNTS: Final = (1e9, 3e9, 7e9, 13e9, 30e9, 70e9)
_DP_SIZES: Final = (2, 4, 8, 16, 32, 64)
_STAGE_COUNTS: Final = (2, 4, 8, 16)
_COLLECTIVE_OPS: Final = ("all-reduce", "all-gather", "reduce-scatter", "all-to-all")
_RANK_COUNTS: Final = (2, 3, 4, 6, 8, 12, 16, 24, 32, 64, 128, 256)
_MESSAGE_SIZES: Final = (256e6, 1e9, 2e9, 4e9, 14e9)
_BANDWIDTHS: Final = (25e9, 50e9, 100e9, 200e9, 400e9)
_LATENCIES: Final = (0.0, 2e-6, 5e-6, 10e-6)


def drill_params(template: str, rng: random.Random) -> Params:
    """Random, realistic parameters for drill ``template`` (one of :data:`DRILL_TEMPLATES`).

    Memory: N in 1B-70B (or a model preset), DP 2-64, ZeRO stage 0-3. Bubble: p in 2-16, m in
    p-8p (a multiple of p for interleaved, v 2 or 4). Collectives: 2-256 ranks; 256 MB to 14 GB
    (a 7B model's bf16 gradients), 25-400 GB/s links, alpha 0-10 us.

    Raises:
        InputError: unknown template (field ``template``).
    """
    if template == "zero-memory":
        return {
            "params": rng.choice(_PARAM_COUNTS),
            "dp": rng.choice(_DP_SIZES),
            "zero": rng.randrange(4),
        }
    if template == "bubble-over-ideal":
        p = rng.choice(_STAGE_COUNTS)
        if rng.random() < 0.5:
            return {"schedule": "1f1b", "p": p, "m": rng.randint(p, 8 * p), "v": 1}
        return {
            "schedule": "interleaved-1f1b",
            "p": p,
            "m": p * rng.randint(1, 8),
            "v": rng.choice((2, 4)),
        }
    if template == "bubble-fraction":
        p = rng.choice(_STAGE_COUNTS)
        return {"schedule": "gpipe", "p": p, "m": rng.randint(p, 8 * p), "v": 1}
    if template == "busbw-factor":
        return {"op": rng.choice(_COLLECTIVE_OPS), "ranks": rng.choice(_RANK_COUNTS)}
    if template == "allreduce-time":
        return {
            "ranks": rng.choice(_RANK_COUNTS),
            "size_bytes": rng.choice(_MESSAGE_SIZES),
            "bandwidth": rng.choice(_BANDWIDTHS),
            "latency": rng.choice(_LATENCIES),
        }
    if template == "preset-memory":
        return {
            "model": rng.choice(tuple(model_presets())),
            "dp": rng.choice(_DP_SIZES),
            "zero": rng.randrange(4),
        }
    raise InputError("template", f"unknown drill {template!r}; use one of {DRILL_TEMPLATES}")


def drill_expected(template: str, params: Params) -> float:
    """The engine's answer to drill ``template`` with ``params`` (base units: bytes, seconds,
    or a ratio). One engine call each: :func:`~engine.ledger.compute_ledger` (model states per
    rank, ZeRO-paper convention), :func:`~engine.pipeline.closed_form_bubble` (bubble/ideal or
    bubble/total), :func:`~engine.collectives.bus_bandwidth_factor`,
    :func:`~engine.collectives.collective_cost` (ring all-reduce ``time_s``).

    Raises:
        InputError: unknown template, or parameters the engine refuses.
    """
    if template == "zero-memory":
        return compute_ledger(_ledger_spec(params)).model_states_bytes
    if template in ("bubble-over-ideal", "bubble-fraction"):
        closed = closed_form_bubble(_pipeline_spec(params))
        return (
            closed.bubble_over_ideal if template == "bubble-over-ideal" else closed.bubble_fraction
        )
    if template == "busbw-factor":
        return bus_bandwidth_factor(str(params["op"]), int(params["ranks"]))
    if template == "allreduce-time":
        return _allreduce(params).time_s
    if template == "preset-memory":
        return compute_ledger(_preset_spec(params)).model_states_bytes
    raise InputError("template", f"unknown drill {template!r}; use one of {DRILL_TEMPLATES}")


def _preset_spec(params: Params) -> LedgerSpec:
    return LedgerSpec(model=str(params["model"]), dp=int(params["dp"]), zero=int(params["zero"]))


def _ledger_spec(params: Params) -> LedgerSpec:
    return LedgerSpec(
        params=float(params["params"]), dp=int(params["dp"]), zero=int(params["zero"])
    )


def _pipeline_spec(params: Params) -> PipelineSpec:
    return PipelineSpec(
        schedule=str(params["schedule"]),
        stages=int(params["p"]),
        micro_batches=int(params["m"]),
        virtual_stages=int(params["v"]),
    )


def _allreduce(params: Params) -> CollectiveCost:
    return collective_cost(
        "all-reduce",
        int(params["ranks"]),
        float(params["size_bytes"]),
        float(params["bandwidth"]),
        float(params["latency"]),
        "ring",
    )


def make_drill(item: QuizItem, params: Params) -> Question:
    """The drill ``item`` asked with ``params`` (from :func:`drill_params`, or replayed from the
    log): prompt, the engine's expected value, unit, tolerance and worked solution.

    Raises:
        InputError: unknown template or parameters the engine refuses.
    """
    template = item.ref
    expected = drill_expected(template, params)
    tolerance_text = f"Answers within {DRILL_TOLERANCE:.0%} count as right."
    if template == "zero-memory":
        result = compute_ledger(_ledger_spec(params))
        stage = int(params["zero"])
        stage_text = "no ZeRO (replicated)" if stage == 0 else f"ZeRO-{stage}"
        prompt = (
            f"A {format_count(float(params['params']))}-parameter model trains with "
            "mixed-precision Adam (2 + 2 + 12 bytes per parameter, ZeRO paper) on "
            f"DP = {params['dp']} ranks, "
            f"{stage_text}. How much memory do the model states (parameters, gradients, optimizer "
            f"states) take on one rank? Answer in GB (10^9 bytes), e.g. 42.5 or 39.6GiB. "
            f"{tolerance_text}"
        )
        lines = [f"{term.name}: {term.formula}" for term in result.terms[:4]]
        lines.append(f"model states per rank = {format_bytes(expected)}")
        lines.append(CONVENTION_NOTES["zero-paper"])
        return Question(
            item, prompt, "number", dict(params), expected, "GB", DRILL_TOLERANCE,
            solution="\n".join(lines), sources=(ZERO_SOURCE,),
        )  # fmt: skip
    if template in ("bubble-over-ideal", "bubble-fraction"):
        closed = closed_form_bubble(_pipeline_spec(params))
        p, m, v = params["p"], params["m"], params["v"]
        if template == "bubble-over-ideal":
            shape = f"p = {p} stages, m = {m} micro-batches" + (
                f", v = {v} chunks" if v > 1 else ""
            )
            prompt = (
                f"Pipeline schedule {params['schedule']} with {shape}, no p2p time. What is the "
                f"bubble in the bubble/ideal convention (idle time over the ideal compute time "
                f"m(t_F + t_B + t_W))? Answer as a fraction (0.25 or 1/4) or a percentage (25%). "
                f"{tolerance_text}"
            )
        else:
            prompt = (
                f"GPipe with p = {p} stages and m = {m} micro-batches, no p2p time. What share of "
                f"the iteration time is bubble (bubble/total convention)? Answer as a fraction "
                f"(0.25 or 1/4) or a percentage (25%). {tolerance_text}"
            )
        solution = (
            f"{closed.formula}\nbubble/total = bubble/ideal / (1 + bubble/ideal); "
            f"answer = {_show_value(expected, 'fraction')}"
        )
        return Question(
            item, prompt, "number", dict(params), expected, "fraction", DRILL_TOLERANCE,
            solution=solution, sources=(closed.source,),
        )  # fmt: skip
    if template == "busbw-factor":
        op, n = str(params["op"]), int(params["ranks"])
        prompt = (
            "NCCL-tests reports bus bandwidth = algorithm bandwidth x a factor. What is the "
            f"factor for {op} on n = {n} ranks? Answer as a number (1.75 or 7/4). {tolerance_text}"
        )
        solution = (
            f"{op}: factor {BUS_BANDWIDTH_FACTORS[op]} with n = {n} = {expected:.6g}\n"
            "The factor makes bus bandwidth comparable with the link speed whatever n is."
        )
        return Question(
            item, prompt, "number", dict(params), expected, "", DRILL_TOLERANCE,
            solution=solution, sources=(NCCL_TESTS_SOURCE,),
        )  # fmt: skip
    if template == "allreduce-time":
        cost = _allreduce(params)
        p, size = cost.ranks, cost.size_bytes
        alpha, bandwidth = cost.latency_s, cost.bandwidth_bytes_per_s
        prompt = (
            f"Ring all-reduce of {format_bytes(size)} per rank on p = {p} ranks, link bandwidth "
            f"{format_rate(bandwidth)} (beta = 1/bandwidth), latency alpha = "
            f"{format_seconds(alpha) if alpha else '0'} per message. How long does it take in "
            f"the alpha-beta model? Answer in ms (e.g. 17.6 or 0.0176s). {tolerance_text}"
        )
        solution = (
            f"t = {cost.formula}\n"
            f"  = 2*{p - 1}*{format_seconds(alpha) if alpha else '0'} + "
            f"2*{size:.4g} B*{p - 1}/{p} / {bandwidth:.4g} B/s\n"
            f"  = {format_seconds(expected)}"
        )
        return Question(
            item, prompt, "number", dict(params), expected, "ms", DRILL_TOLERANCE,
            solution=solution, sources=(MPICH_SOURCE,),
        )  # fmt: skip
    if template == "preset-memory":
        result = compute_ledger(_preset_spec(params))
        stage = int(params["zero"])
        stage_text = "no ZeRO (replicated)" if stage == 0 else f"ZeRO-{stage}"
        prompt = (
            f"{get_preset(str(params['model'])).title} ({result.params_total:,.0f} parameters; "
            f"model {params['model']}) trains with mixed-precision Adam (2 + 2 + 12 bytes per "
            f"parameter, ZeRO paper) on DP = {params['dp']} ranks, {stage_text}. How much memory "
            f"do the model states take on one rank? Answer in GB (10^9 bytes). {tolerance_text}"
        )
        lines = [f"{term.name}: {term.formula}" for term in result.terms[:4]]
        lines.append(f"model states per rank = {format_bytes(expected)}")
        return Question(
            item, prompt, "number", dict(params), expected, "GB", DRILL_TOLERANCE,
            solution="\n".join(lines), sources=(ZERO_SOURCE, PARAM_COUNT_SOURCE),
        )  # fmt: skip
    raise InputError("template", f"unknown drill {template!r}; use one of {DRILL_TEMPLATES}")


# -- matching


def shards_summary(strategy: Strategy) -> str:
    """What ``strategy`` divides among its ranks, in the quiz's words (:data:`SHARDS`), joined
    with ' + '."""
    return " + ".join(SHARDS[shard] for shard in strategy.shards)


def collectives_summary(strategy: Strategy) -> str:
    """The collectives ``strategy`` runs, in order of first use, joined with ' + '."""
    return " + ".join(strategy.collective_names())


def split_is_wrong(option: Strategy, strategy: Strategy) -> bool:
    """Whether "``strategy`` splits what ``option`` splits" is false by the strategy data: the
    option names something ``strategy`` does not divide. Naming only part of what it divides
    (DP's "the batch" for ZeRO-1) is incomplete but true, so not wrong."""
    return not set(option.shards) <= covered_shards(strategy)


def collectives_are_wrong(option: Strategy, strategy: Strategy) -> bool:
    """Whether "``strategy`` runs ``option``'s collectives" is false by the strategy data: they
    differ even with every all-reduce written as a reduce-scatter plus an all-gather
    (:func:`~engine.strategies.collective_signature`). So DP's "all-reduce" and ZeRO's
    "reduce-scatter + all-gather" are each right for the other."""
    return collective_signature(option.collective_names()) != collective_signature(
        strategy.collective_names()
    )


def _matching_params(strategy_name: str, rng: random.Random) -> Params:
    """Four (split-of, collectives-of) strategy pairs, the right one among them, shuffled.

    The wrong options keep the right split with other collectives, the right collectives with
    another split, and neither, so each half of the pair is tested. Every other half comes from a
    strategy for which it is wrong (:func:`split_is_wrong`, :func:`collectives_are_wrong`), so no
    option but the right one is defensible."""
    right = STRATEGIES[strategy_name]
    others = [s for s in STRATEGIES.values() if s.name != strategy_name]
    wrong_split = [s for s in others if split_is_wrong(s, right)]
    wrong_coll = [s for s in others if collectives_are_wrong(s, right)]
    a = rng.choice(wrong_coll)
    b = rng.choice(wrong_split)
    c_split = rng.choice(
        [s for s in wrong_split if shards_summary(s) != shards_summary(b)] or wrong_split
    )
    c_coll = rng.choice(
        [
            s
            for s in wrong_coll
            if collective_signature(s.collective_names())
            != collective_signature(a.collective_names())
        ]
        or wrong_coll
    )
    pairs = [
        [right.name, right.name],
        [right.name, a.name],
        [b.name, right.name],
        [c_split.name, c_coll.name],
    ]
    rng.shuffle(pairs)
    return {"strategy": strategy_name, "options": pairs}


def make_matching(item: QuizItem, params: Params) -> Question:
    """The matching ``item`` asked with ``params`` (from the session's RNG or the log).

    The expected option is the one that states exactly what the strategy divides and runs. An
    option that is right by the strategy data too (:func:`split_is_wrong` and
    :func:`collectives_are_wrong` both false) is graded right as well: new askings never hold
    one, but a replayed asking from an older version may.

    Raises:
        InputError: field ``params`` when they do not name known strategies or hold no right
            option.
    """
    try:
        right = STRATEGIES[item.ref]
        pairs = [(STRATEGIES[str(s)], STRATEGIES[str(c)]) for s, c in params["options"]]
    except (KeyError, TypeError, ValueError):
        raise InputError("params", "matching options name unknown strategies") from None
    options = tuple(f"splits {shards_summary(s)} | runs {collectives_summary(c)}" for s, c in pairs)
    accepted = tuple(
        index
        for index, (s, c) in enumerate(pairs)
        if not split_is_wrong(s, right) and not collectives_are_wrong(c, right)
    )
    exact = [
        index
        for index in accepted
        if set(pairs[index][0].shards) == set(right.shards)
        and collectives_summary(pairs[index][1]) == collectives_summary(right)
    ]
    if not accepted:
        raise InputError("params", f"no option of {item.id} is right")
    expected = (exact or list(accepted))[0]
    prompt = (
        f"{right.title} ({right.name_zh}): what does it split, and which collectives does it "
        "run? Choose a-d."
    )
    uses = "\n".join(
        f"- {use.collective} ({use.phase}): {use.payload}; {use.volume}"
        for use in right.collectives
    )
    solution = f"Splits: {right.split}\nCollectives:\n{uses}\nHolds: {right.holds}"
    if {"all-reduce", "reduce-scatter", "all-gather"} & set(right.collective_names()):
        solution += (
            "\nAn all-reduce is a reduce-scatter followed by an all-gather, so either form is "
            "right where one is; no option here differs from the answer only by that."
        )
    sources = tuple(dict.fromkeys(use.source for use in right.collectives))
    if {"all-reduce", "reduce-scatter", "all-gather"} & set(right.collective_names()):
        sources += (DECOMPOSITION_SOURCE,)
    return Question(
        item, prompt, "choice", dict(params), expected, options=options,
        solution=solution, sources=sources, accepted=accepted,
    )  # fmt: skip


def ask(
    item: QuizItem, lesson: Lesson, rng: random.Random, params: Params | None = None
) -> Question:
    """The question for ``item``; ``params`` replays an earlier asking (drills, matching),
    otherwise fresh ones are drawn from ``rng``.

    Raises:
        InputError: ``item`` is not an item of ``lesson`` (field ``item``), or bad ``params``.
    """
    if item.kind == "drill":
        return make_drill(item, params if params else drill_params(item.ref, rng))
    if item.kind == "matching":
        return make_matching(item, params if params else _matching_params(item.ref, rng))
    if item.kind == "self-check":
        for entry in lesson.self_check:
            if entry.id == item.ref:
                return Question(
                    item,
                    entry.text,
                    "text",
                    solution="\n".join(f"• {point}" for point in entry.key_points),
                    sources=entry.key_point_sources,
                )
    if item.kind == "misconception" and item.ref in MISCONCEPTIONS:
        data = MISCONCEPTIONS[item.ref]
        claim = item.id.endswith(":claim")
        lesson_text = next(
            (
                entry.text
                for entry in lesson.section("misconceptions").items
                if entry.id == item.ref
            ),
            "",
        )
        solution = (
            f"{'False' if claim else 'True'}. {data.explanation}\n"
            f"Correct: {data.truth}\nThe lesson's misconception: {lesson_text}"
        )
        return Question(
            item,
            data.claim if claim else data.truth,
            "true-false",
            expected=not claim,
            solution=solution,
            sources=data.sources,
        )
    raise InputError("item", f"{item.id!r} is not an item of lesson {lesson.id}")


# ----------------------------------------------------------------------------------------------
# State: cards, the review log, archived items


def _card_id(lesson_id: str, item_id: str) -> int:
    return zlib.crc32(f"{lesson_id}/{item_id}".encode())


class QuizState:
    """The quiz part of one lesson's progress: ``progress.quiz``, read and written here only.

    Nested values of ``progress.quiz`` are replaced, never edited in place: the progress store
    keeps a shallow copy of the document it last saved as the base of a three-way merge, and an
    in-place edit would change that base too. After a merge the store may hand ``progress`` a new
    quiz mapping; every method reads it again when that happened.

    Args:
        progress: the lesson's progress.
        desired_retention: the FSRS desired retention of the reviews rated from now on
            (0.70-0.97; :func:`scheduler_for`). Replaying the log uses each entry's own.

    Raises (constructor and every method):
        ProgressError: the stored quiz data has the wrong shape (named by its key).
        InputError: field ``desired_retention`` outside 0.70-0.97.
    """

    def __init__(
        self, progress: LessonProgress, desired_retention: float = DESIRED_RETENTION_DEFAULT
    ) -> None:
        self.progress = progress
        self.lesson_id = progress.lesson_id
        self.scheduler = scheduler_for(desired_retention)
        self._seen: dict[str, Any] | None = None
        self._cards: dict[str, Card] = {}
        self._sync()

    @property
    def data(self) -> dict[str, Any]:
        """The quiz mapping of the progress (module docstring: layout)."""
        self._sync()
        return self.progress.quiz

    def _sync(self) -> None:
        data = self.progress.quiz
        if data is self._seen:
            return
        where = f"{self.lesson_id}.yaml: quiz"
        version = data.setdefault("version", STATE_VERSION)
        if version != STATE_VERSION:
            raise ProgressError(where, f"unknown quiz version {version!r}")
        for key in ("cards", "answers", "archived"):
            if not isinstance(data.setdefault(key, {}), dict):
                raise ProgressError(where, f"'{key}' must be a mapping")
        log = data.setdefault("log", [])
        if not isinstance(log, list) or not all(_valid_entry(entry) for entry in log):
            raise ProgressError(where, "'log' must be a list of {item, rating 1-4, at} entries")
        self._seen = data
        try:
            self._cards = {str(key): Card.from_dict(value) for key, value in data["cards"].items()}
        except (KeyError, TypeError, ValueError, AttributeError):
            # The cards are a cache of the log: rebuild them rather than fail.
            self._cards = self.rebuild_cards()
            self._store_cards()

    @property
    def log(self) -> list[dict[str, Any]]:
        """The review log, oldest first (entries as stored; do not edit)."""
        entries: list[dict[str, Any]] = self.data["log"]
        return entries

    def card(self, item_id: str) -> Card | None:
        """The item's FSRS card, or None when it was never rated."""
        self._sync()
        return self._cards.get(item_id)

    def reconcile(self, items: Sequence[QuizItem], now: dt.datetime) -> list[str]:
        """Archive cards of items no longer in the lesson, and restore archived cards of items
        that are back. Returns the ids archived now. Log entries are never removed."""
        current = {item.id for item in items}
        archived: dict[str, Any] = dict(self.data["archived"])
        moved: list[str] = []
        for item_id in list(self._cards):
            if item_id not in current:
                archived[item_id] = {"card": self._cards.pop(item_id).to_dict(), "at": _iso(now)}
                moved.append(item_id)
        restored = [item_id for item_id in archived if item_id in current]
        if restored:
            rebuilt = self.rebuild_cards()
            for item_id in restored:
                del archived[item_id]
                if item_id in rebuilt:
                    self._cards[item_id] = rebuilt[item_id]
        if moved or restored:
            self.progress.quiz["archived"] = archived
            self._store_cards()
        return moved

    def record_answer(self, question: Question, grade: Grade, now: dt.datetime) -> None:
        """Keep the learner's last answer to the question's item (saved before rating)."""
        answers = dict(self.data["answers"])
        answers[question.item.id] = {
            "answer": grade.answer,
            "correct": grade.correct,
            "at": _iso(now),
            "params": _deep_copy(question.params),
        }
        self.progress.quiz["answers"] = answers

    def review(
        self,
        question: Question,
        rating: int,
        now: dt.datetime,
        grade: Grade | None = None,
    ) -> Card:
        """Rate the item (1 Again, 2 Hard, 3 Good, 4 Easy), append it to the log, update the card.

        Raises:
            InputError: field ``rating`` outside 1-4.
        """
        if rating not in RATINGS:
            raise InputError("rating", "use 1 Again, 2 Hard, 3 Good or 4 Easy")
        now = _utc(now)
        item_id = question.item.id
        self._sync()
        card = self._cards.get(item_id) or Card(card_id=_card_id(self.lesson_id, item_id), due=now)
        card, _log = self.scheduler.review_card(card, Rating(rating), now)
        self._cards[item_id] = card
        entry = {
            "item": item_id,
            "rating": rating,
            "at": _iso(now),
            "answer": grade.answer if grade else "",
            "correct": grade.correct if grade else None,
            "params": _deep_copy(question.params),
            "retention": self.scheduler.desired_retention,
        }
        self.progress.quiz["log"] = [*self.log, entry]
        self._store_cards()
        return card

    def undo(self) -> dict[str, Any] | None:
        """Remove the last rating from the log and put its item's card back as it was before
        (rebuilt from the remaining log). Returns the removed entry, or None if the log is empty."""
        log = self.log
        if not log:
            return None
        entry = log[-1]
        self.progress.quiz["log"] = log[:-1]
        item_id = str(entry["item"])
        rebuilt = self.rebuild_cards(only=item_id)
        if item_id in rebuilt:
            self._cards[item_id] = rebuilt[item_id]
        else:
            self._cards.pop(item_id, None)
        self._store_cards()
        return entry

    def rebuild_cards(self, only: str | None = None) -> dict[str, Card]:
        """Replay the review log from scratch: the schedule it implies, by item id (archived
        items included). With fuzzing off this equals the stored cards."""
        cards: dict[str, Card] = {}
        for entry in self.progress.quiz.get("log", []):
            item_id = str(entry["item"])
            if only is not None and item_id != only:
                continue
            at = _utc(dt.datetime.fromisoformat(str(entry["at"])), "log.at")
            card = cards.get(item_id) or Card(card_id=_card_id(self.lesson_id, item_id), due=at)
            scheduler = scheduler_for(entry.get("retention", DESIRED_RETENTION_DEFAULT))
            cards[item_id], _log = scheduler.review_card(card, Rating(int(entry["rating"])), at)
        return cards

    def next_cards(self, item_id: str, now: dt.datetime) -> dict[int, Card]:
        """What each rating (1-4) would make of the item's card at ``now``: fsrs's
        ``review_card`` on the card as it is (a new card when never rated), nothing stored. The
        card's ``due`` minus ``now`` is the interval each rating key shows."""
        now = _utc(now)
        self._sync()
        card = self._cards.get(item_id) or Card(card_id=_card_id(self.lesson_id, item_id), due=now)
        return {
            rating: self.scheduler.review_card(card, Rating(rating), now)[0] for rating in RATINGS
        }

    def stats(
        self, items: Sequence[QuizItem], now: dt.datetime, tz: dt.tzinfo | None = None
    ) -> LessonStats:
        """Statistics of this lesson's current ``items`` at ``now``; dates in the forecast and
        the recall history are local dates in ``tz`` (None: this machine's time zone)."""
        now = _utc(now)
        self._sync()
        current = {item.id for item in items}
        cards = [card for item_id, card in self._cards.items() if item_id in current]
        archived = set(self.data["archived"]) | (set(self._cards) - current)
        retrievability = (
            math.fsum(self.scheduler.get_card_retrievability(card, now) for card in cards)
            / len(cards)
            if cards
            else None
        )
        log = self.log
        recalled = sum(1 for entry in log if int(entry["rating"]) in RECALLED)
        today = local_date(now, tz)
        reviews = (
            (dt.datetime.fromisoformat(str(entry["at"])), int(entry["rating"]) in RECALLED)
            for entry in log
        )
        return LessonStats(
            lesson_id=self.lesson_id,
            items=len(current),
            new=len(current) - len(cards),
            reviewed=len(cards),
            reviews=len(log),
            due=sum(1 for card in cards if card.due <= now),
            retention=retrievability,
            archived=len(archived),
            next_due=_iso(min(card.due for card in cards)) if cards else None,
            recalled=recalled,
            recall=recalled / len(log) if log else None,
            retrievability=retrievability,
            due_forecast=due_forecast((card.due for card in cards), today, tz, FORECAST_DAYS),
            recall_history=recall_history(reviews, today, tz, FORECAST_DAYS),
        )

    def _store_cards(self) -> None:
        self.progress.quiz["cards"] = {key: card.to_dict() for key, card in self._cards.items()}


def _valid_entry(entry: object) -> bool:
    if not isinstance(entry, dict):
        return False
    if not isinstance(entry.get("item"), str) or entry.get("rating") not in RATINGS:
        return False
    try:
        moment = dt.datetime.fromisoformat(str(entry.get("at")))
    except ValueError:
        return False
    retention = entry.get("retention", DESIRED_RETENTION_DEFAULT)
    low, high = DESIRED_RETENTION_RANGE
    if isinstance(retention, bool) or not isinstance(retention, int | float):
        return False
    return moment.tzinfo is not None and low <= retention <= high


# ----------------------------------------------------------------------------------------------
# A quiz session over one or more lessons


def _spread(items: Sequence[QuizItem]) -> list[QuizItem]:
    """``items`` with the members of each pair (:func:`pair_key`) as far apart as the list
    allows: the first member of every pair, then the second ones, and so on."""
    groups: dict[str, list[QuizItem]] = {}
    for item in items:
        groups.setdefault(pair_key(item), []).append(item)
    rounds = max((len(group) for group in groups.values()), default=0)
    return [group[n] for n in range(rounds) for group in groups.values() if n < len(group)]


def review_queue(
    entries: Sequence[tuple[QuizItem, QuizState]],
    now: dt.datetime,
    due_only: bool = False,
    skip: Collection[QuizItem] = (),
) -> list[QuizItem]:
    """One queue over all lessons: reviewed items that are due (earliest first), then, unless
    ``due_only``, new items, taking one of each kind in turn (self-check, misconception,
    matching, drill) so a session mixes them, and the members of a pair far apart within their
    kind. Items in ``skip`` are left out."""
    now = _utc(now)
    due: list[tuple[dt.datetime, int, QuizItem]] = []
    new_by_kind: dict[str, list[QuizItem]] = {}
    for index, (item, state) in enumerate(entries):
        if item in skip:
            continue
        card = state.card(item.id)
        if card is None:
            new_by_kind.setdefault(item.kind, []).append(item)
        elif card.due <= now:
            due.append((card.due, index, item))
    queue = [item for _due, _index, item in sorted(due, key=lambda x: (x[0], x[1]))]
    if not due_only:
        order = ("self-check", "misconception", "matching", "drill")
        lists = [_spread(new_by_kind.get(kind, [])) for kind in order]
        for round_index in range(max((len(x) for x in lists), default=0)):
            queue.extend(x[round_index] for x in lists if round_index < len(x))
    return queue


class QuizSession:
    """One quiz over ``lessons``: a queue, the current question, answers, ratings and undo.

    Args:
        lessons: the lessons to quiz (one queue over all of them).
        progress: each lesson's progress by lesson id; ``progress[id].quiz`` is edited in place.
        save: called with a lesson's progress after every answer, rating and undo (for
            example :meth:`engine.progress.ProgressStore.save`); its errors propagate.
        clock: returns the current time, timezone-aware (default :func:`utc_now`).
        seed: seeds the RNG that draws drill values and choice orders (None: random).
        due_only: only items already reviewed and now due; no new items.
        desired_retention: FSRS desired retention of the ratings (0.70-0.97; the setting
            ``review.desired_retention``); :meth:`set_desired_retention` changes it.
        tz: the learner's time zone, for "today" and local dates (None: this machine's).

    Attributes:
        asked: every item asked in this session, in order (an undone item twice).
        held_back: when the session ends with items left (:attr:`remaining`), how many wait
            because each is paired with an item asked close before (module docstring, "Order").
        answered_today: self-check items left out because the learner answered them in the
            lesson today.

    Raises:
        ProgressError: a lesson's stored quiz data has the wrong shape.
        InputError: a naive clock (field ``clock``) or a desired retention outside 0.70-0.97.
    """

    def __init__(
        self,
        lessons: Sequence[Lesson],
        progress: Mapping[str, LessonProgress],
        save: Callable[[LessonProgress], object],
        *,
        clock: Clock = utc_now,
        seed: int | None = None,
        due_only: bool = False,
        desired_retention: float = DESIRED_RETENTION_DEFAULT,
        tz: dt.tzinfo | None = None,
    ) -> None:
        self.lessons = {lesson.id: lesson for lesson in lessons}
        self.progress = dict(progress)
        self.save = save
        self.clock = clock
        self.rng = random.Random(seed)
        self.due_only = due_only
        self.tz = tz
        self.states: dict[str, QuizState] = {}
        self.items: dict[str, tuple[QuizItem, ...]] = {}
        now = self.now()
        for lesson in lessons:
            state = QuizState(self.progress[lesson.id], desired_retention)
            items = lesson_items(lesson)
            if state.reconcile(items, now):
                self.save(self.progress[lesson.id])
            self.states[lesson.id] = state
            self.items[lesson.id] = items
        self.queue: list[QuizItem] = []
        self.current: Question | None = None
        self.grade: Grade | None = None
        self.reviewed_this_session = 0
        self.asked: list[QuizItem] = []
        self.held_back = 0
        self.answered_today: list[QuizItem] = []
        self._undo_stack: list[str] = []
        self.refill()

    def now(self) -> dt.datetime:
        """The clock's time in UTC.

        Raises:
            InputError: field ``clock`` when the clock returns a naive datetime.
        """
        return _utc(self.clock())

    @property
    def desired_retention(self) -> float:
        """The desired retention new ratings are scheduled with."""
        return (
            next(iter(self.states.values())).scheduler.desired_retention
            if self.states
            else (DESIRED_RETENTION_DEFAULT)
        )

    def set_desired_retention(self, desired_retention: float) -> None:
        """Schedule the ratings from now on for ``desired_retention``; earlier reviews keep the
        retention they were rated with (the log records it).

        Raises:
            InputError: field ``desired_retention`` outside 0.70-0.97.
        """
        scheduler = scheduler_for(desired_retention)
        for state in self.states.values():
            state.scheduler = scheduler

    def refill(self) -> Question | None:
        """Rebuild the queue from what is due (and new) now, and ask its first item."""
        self._rebuild_queue()
        return self.next()

    def join(self, other: QuizSession) -> None:
        """Add ``other``'s lessons (built apart, for example in a worker thread while this
        session already asks) to this session: one queue over both, due items first, then new
        ones. The current question, its grade and the undo history stay; lessons this session
        already has are kept as they are. ``other`` must not be used afterwards."""
        for lesson_id, lesson in other.lessons.items():
            if lesson_id in self.lessons:
                continue
            self.lessons[lesson_id] = lesson
            self.progress[lesson_id] = other.progress[lesson_id]
            self.items[lesson_id] = other.items[lesson_id]
            self.states[lesson_id] = other.states[lesson_id]
        self._rebuild_queue()
        if self.current is None:
            self.next()
        elif self.current.item in self.queue:
            self.queue.remove(self.current.item)

    def _rebuild_queue(self) -> None:
        entries = [
            (item, self.states[lesson_id])
            for lesson_id, items in self.items.items()
            for item in items
        ]
        now = self.now()
        today = local_date(now, self.tz)
        skip = {item for item, _state in entries if self._answered_in_lesson(item, today)}
        self.queue = review_queue(entries, now, self.due_only, skip)
        self.answered_today = [
            item for item in review_queue(entries, now, self.due_only) if item in skip
        ]

    def _answered_in_lesson(self, item: QuizItem, today: dt.date) -> bool:
        if item.kind != "self-check":
            return False
        revealed = lesson_reveals(self.progress[item.lesson_id]).get(item.ref)
        return revealed is not None and local_date(revealed, self.tz) == today

    def next(self) -> Question | None:
        """Ask the first item in the queue that is not close to its pair (module docstring,
        "Order"); None when the queue is empty or every item left waits for that reason
        (:attr:`held_back`)."""
        self.grade = None
        self.held_back = 0
        recent = self.asked[-PAIR_GAP:]
        index = next(
            (
                index
                for index, item in enumerate(self.queue)
                if not any(pair_key(other) == pair_key(item) and other != item for other in recent)
            ),
            None,
        )
        if index is None:
            self.current = None
            self.held_back = len(self.queue)
            return None
        item = self.queue.pop(index)
        self.asked.append(item)
        self.current = ask(item, self.lessons[item.lesson_id], self.rng)
        return self.current

    @property
    def remaining(self) -> int:
        """Items left after the current one."""
        return len(self.queue)

    def lesson_answer(self) -> str:
        """The answer the learner wrote in the lesson to the current self-check question
        (``LessonProgress.answers``); ``""`` for other kinds or when there is none."""
        question = self.current
        if question is None or question.item.kind != "self-check":
            return ""
        return self.progress[question.item.lesson_id].answers.get(question.item.ref, "")

    def intervals(self) -> dict[int, dt.timedelta]:
        """Each rating's next interval for the current question (1 Again ... 4 Easy), as fsrs
        computes it now (:meth:`QuizState.next_cards`); empty when there is no question."""
        question = self.current
        if question is None:
            return {}
        now = self.now()
        cards = self.states[question.item.lesson_id].next_cards(question.item.id, now)
        return {rating: card.due - now for rating, card in cards.items()}

    def answer(self, answer: str | bool | int) -> Grade:
        """Grade an answer to the current question and save it at once (before any rating).

        Raises:
            InputError: no current question (field ``answer``) or an answer the question cannot
                read (see :meth:`Question.grade`).
            ProgressError: saving failed.
        """
        if self.current is None:
            raise InputError("answer", "there is no question to answer")
        grade = self.current.grade(answer)
        self.grade = grade
        lesson_id = self.current.item.lesson_id
        self.states[lesson_id].record_answer(self.current, grade, self.now())
        self.save(self.progress[lesson_id])
        return grade

    def rate(self, rating: int) -> Card:
        """Rate the current question (after answering), save at once, and move on.

        Raises:
            InputError: field ``rating``: not answered yet, or a rating outside 1-4.
            ProgressError: saving failed.
        """
        if self.current is None or self.grade is None:
            raise InputError("rating", "answer the question before rating it")
        question = self.current
        lesson_id = question.item.lesson_id
        card = self.states[lesson_id].review(question, rating, self.now(), self.grade)
        self.save(self.progress[lesson_id])
        self._undo_stack.append(lesson_id)
        self.reviewed_this_session += 1
        self.next()
        return card

    def undo(self) -> Question | None:
        """Undo the last rating (this session's, else the latest in any lesson's log): its log
        entry is removed, the card restored, and the item asked again first, with the same
        values. Returns that question, or None when there is nothing to undo.

        Raises:
            ProgressError: saving failed.
        """
        lesson_id = self._undo_stack.pop() if self._undo_stack else self._latest_lesson()
        if lesson_id is None:
            return None
        state = self.states[lesson_id]
        entry = state.undo()
        if entry is None:
            return None
        self.save(self.progress[lesson_id])
        self.reviewed_this_session = max(0, self.reviewed_this_session - 1)
        item = next((i for i in self.items[lesson_id] if i.id == entry["item"]), None)
        if item is None:
            return self.current
        if self.current is not None:
            self.queue.insert(0, self.current.item)
        params = entry.get("params")
        self.current = ask(
            item, self.lessons[lesson_id], self.rng, params if isinstance(params, dict) else None
        )
        self.asked.append(item)
        self.grade = None
        self.held_back = 0
        return self.current

    def _latest_lesson(self) -> str | None:
        latest: tuple[str, str] | None = None
        for lesson_id, state in self.states.items():
            if state.log:
                stamp = str(state.log[-1]["at"])
                if latest is None or stamp >= latest[0]:
                    latest = (stamp, lesson_id)
        return latest[1] if latest else None

    def stats(self) -> list[LessonStats]:
        """Per-lesson statistics now, in lesson order (local dates in :attr:`tz`)."""
        now = self.now()
        return [self.states[lid].stats(self.items[lid], now, self.tz) for lid in self.items]


def lesson_stats(
    lesson: Lesson,
    progress: LessonProgress,
    now: dt.datetime,
    tz: dt.tzinfo | None = None,
) -> LessonStats:
    """Statistics of one lesson from its progress at ``now``, without changing the progress (the
    stored progress is copied first, so a reader such as ``shardbook stats`` or the export never
    edits it). Dates of the forecast and the recall history are local dates in ``tz`` (None:
    this machine's time zone). :func:`engine.quiz_stats.stats_text` writes a list of them as text.

    Raises:
        ProgressError: the stored quiz data has the wrong shape.
    """
    copy = LessonProgress(progress.lesson_id, quiz=_deep_copy(progress.quiz))
    return QuizState(copy).stats(lesson_items(lesson), now, tz)


def _deep_copy(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _deep_copy(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_deep_copy(v) for v in value]
    return value
