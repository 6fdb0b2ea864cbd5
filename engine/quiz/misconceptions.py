"""The lesson's misconceptions as true/false statements (added material).

Each misconception of a lesson (its ``misconceptions`` section) with an entry in
:data:`MISCONCEPTIONS` gives two items: the mistaken belief, stated as a claim (false), and its
correct counterpart (true), each with an explanation; the lesson's own sentence is shown with the
explanation. The statements rest on the sources each entry names.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final

from engine import sources
from engine.i18n import gettext as _
from engine.lesson import Lesson
from engine.quiz.model import Question, QuizItem


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
            sources.cite(sources.ZERO_PAPER, "§3.1"),
            *sources.MEGATRON_MODEL_STATES,
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
            sources.cite(sources.ZERO_PAPER, "§3, §5"),
            sources.MPICH_COSTS,
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
            sources.cite(sources.ZERO_PAPER, "§5, §7"),
            sources.MEGATRON_COMMUNICATION,
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
            sources.MPICH_COSTS,
            sources.BUS_BANDWIDTH,
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
            f"{sources.PYTORCH_DISTRIBUTED_DOCS} (Backends: NCCL for CUDA, Gloo for CPU)",
            sources.PYTORCH_MPS_DOCS,
        ),
    ),
}
"""Correct counterparts of S15's five misconceptions, keyed by the lesson item id (added
material; the lesson lists only the mistaken beliefs)."""


def misconception_question(item: QuizItem, lesson: Lesson) -> Question:
    """The true/false question of ``item`` (``misconception:<lesson item id>:claim`` is the
    mistaken belief, ``...:truth`` its counterpart).

    Raises:
        KeyError: ``item.ref`` has no entry in :data:`MISCONCEPTIONS`.
    """
    data = MISCONCEPTIONS[item.ref]
    claim = item.id.endswith(":claim")
    lesson_text = next(
        (entry.text for entry in lesson.section("misconceptions").items if entry.id == item.ref),
        "",
    )
    verdict = _("False.") if claim else _("True.")
    solution = _(
        "{verdict} {explanation}\nCorrect: {truth}\nThe lesson's misconception: {misconception}"
    ).format(
        verdict=verdict, explanation=data.explanation, truth=data.truth, misconception=lesson_text
    )
    return Question(
        item,
        data.claim if claim else data.truth,
        "true-false",
        expected=not claim,
        solution=solution,
        sources=data.sources,
    )
