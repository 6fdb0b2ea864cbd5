"""The parallel strategies of lesson S15 as data: what each rank holds, what is split, which
collectives run and when, their volume, one wait, and where a rank recovers from.

The lesson asks three questions of every strategy (深入学习提示:
每个 rank 持有什么、何时需要别人的数据、失败后从哪里恢复). The diagrams (:mod:`engine.diagrams`),
the quiz and exercises 2 and 3 all read these records, so a diagram cannot disagree with the
engine. Text shown inside the ASCII diagrams is kept pure ASCII (Psi for the parameter count); the
Chinese names sit in their own fields, and the sources (:mod:`engine.sources`) are written in ASCII
by the diagrams (:func:`engine.sources.ascii_text`).

Volumes per step, with their sources:

- Rajbhandari et al. 2020, "ZeRO" (arXiv:1910.02054) Sec. 7, in elements for Psi parameters:
  DP all-reduce 2 Psi; ZeRO-1 and ZeRO-2 2 Psi; ZeRO-3 3 Psi.
- Narayanan et al. 2021, "Efficient Large-Scale Language Model Training on GPU Clusters Using
  Megatron-LM" (arXiv:2104.04473) Sec. 3.2: PP sends b*s*h elements per micro-batch between
  consecutive stages; TP moves 8*b*s*h*(t-1)/t elements per layer per device per micro-batch.
- Korthikanti et al. 2022 (arXiv:2205.05198) Sec. 4.2.2: sequence parallelism replaces each TP
  all-reduce by a reduce-scatter and an all-gather of the same total volume.
- EP and CP volumes are derived here from the tensors moved (stated as such in their records).

The module is long (about 790 lines) because most of it is the records of nine strategies, side by
side so that one can be read against the next; the code is the few functions at the end.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType

from engine import sources
from engine.errors import InputError
from engine.i18n import N_, gettext
from engine.i18n import gettext as _

PHASES: tuple[str, ...] = (N_("forward"), N_("backward"), N_("optimizer step"))
"""When a collective runs within one training step."""

DIAGRAM_RANKS = 4
"""Every strategy record describes 4 ranks, as the lesson's exercise 2 asks (4 卡示意图)."""

THREE_QUESTIONS: tuple[tuple[str, str, str], ...] = (
    ("holds", "每个 rank 持有什么", "What does each rank hold?"),
    ("needs", "何时需要别人的数据", "When does it need other ranks' data?"),
    ("recovers", "失败后从哪里恢复", "Where does it recover from after a failure?"),
)
"""(key, the lesson's wording, English wording) of the three questions asked of every strategy."""


@dataclass(frozen=True)
class CollectiveUse:
    """One collective (or point-to-point transfer) a strategy runs.

    Attributes:
        collective: an operation of :data:`engine.collectives.OPERATIONS` (``send-recv`` for
            point-to-point transfers), so the app can open it in the collective simulator.
        phase: one of :data:`PHASES`.
        payload: what is moved (ASCII).
        volume: how much, in elements, per step or per the unit named (ASCII).
        source: where the volume comes from.
    """

    collective: str
    phase: str
    payload: str
    volume: str
    source: str


@dataclass(frozen=True)
class Strategy:
    """One parallel strategy on 4 ranks.

    Attributes:
        name: the key (``dp``, ``zero1``, ...).
        title: display name (ASCII), e.g. ``"DP - data parallel"``.
        name_zh: the lesson's Chinese term.
        split: which dimension is split (ASCII).
        holdings: what each rank holds, short lines (at most :data:`HOLDING_WIDTH` cells once
            filled in) as templates (msgids) using ``{k}`` (the rank), ``{lo}``/``{hi}`` (its
            layers), ``{e0}``/``{e1}`` (its experts); :attr:`rank_holdings` fills them in.
        holds: the answer to "what does each rank hold?" (ASCII).
        collectives: the collectives it runs, in the order they run within a step.
        point_to_point: ``True`` when its main transfer goes between neighbouring ranks
            (pipeline stages) instead of among all ranks.
        volume: the total communication volume per step (ASCII), with ``volume_sources``.
        volume_sources: where ``volume`` comes from: the works cited, each shown through
            gettext (a description after a work's title is translated).
        needs: the answer to "when does it need other ranks' data?" (ASCII).
        wait: one wait its communication can cause (ASCII).
        recovers: the answer to "where does it recover from after a failure?" (ASCII).
        shards: what it divides among the ranks, as keys of :data:`SHARDS` (the quiz's
            matching items compare these, not the wording of ``split``).
    """

    name: str
    title: str
    name_zh: str
    split: str
    holdings: tuple[str, ...]
    holds: str
    collectives: tuple[CollectiveUse, ...]
    point_to_point: bool
    volume: str
    volume_sources: tuple[str, ...]
    needs: str
    wait: str
    recovers: str
    shards: tuple[str, ...] = ()

    @property
    def rank_holdings(self) -> tuple[tuple[str, ...], ...]:
        """For rank 0..3, the lines saying what that rank holds, in the interface language."""
        return tuple(
            tuple(
                gettext(template).format(k=k, lo=6 * k, hi=6 * k + 5, e0=2 * k, e1=2 * k + 1)
                for template in self.holdings
            )
            for k in range(DIAGRAM_RANKS)
        )

    def answers(self) -> tuple[tuple[str, str, str], ...]:
        """The three questions with this strategy's answers: (lesson wording, English, answer)."""
        by_key = {"holds": self.holds, "needs": self.needs, "recovers": self.recovers}
        return tuple((zh, en, by_key[key]) for key, zh, en in THREE_QUESTIONS)

    def collective_names(self) -> tuple[str, ...]:
        """The distinct collectives it runs, in order of first use."""
        return tuple(dict.fromkeys(use.collective for use in self.collectives))


HOLDING_WIDTH = 15
"""Widest line of :attr:`Strategy.rank_holdings` (the inside of a diagram box)."""


_DP_GRAD_ALL_REDUCE = CollectiveUse(
    "all-reduce",
    "backward",
    N_("gradients, bucket by bucket, overlapped with backward"),
    N_("2*Psi elements per step (a reduce-scatter of Psi + an all-gather of Psi)"),
    sources.ZERO_COMMUNICATION,
)

_ZERO12_COLLECTIVES = (
    CollectiveUse(
        "reduce-scatter",
        "backward",
        N_("gradients: each rank keeps the sum for its own shard"),
        N_("Psi elements per step"),
        sources.ZERO_COMMUNICATION,
    ),
    CollectiveUse(
        "all-gather",
        "optimizer step",
        N_("updated parameters: each rank's shard to all"),
        N_("Psi elements per step"),
        sources.ZERO_COMMUNICATION,
    ),
)

_STRATEGY_LIST: tuple[Strategy, ...] = (
    Strategy(
        name="dp",
        title=N_("DP - data parallel"),
        name_zh="数据并行",
        split=N_("the batch: each rank runs 1/4 of the samples; weights are not split"),
        holdings=(
            N_("params: all"),
            N_("grads: all"),
            N_("optim: all"),
            N_("batch: part {k}"),
        ),
        holds=(
            N_(
                "A full replica of the model: parameters, gradients and optimizer states; "
                "a different quarter of each batch."
            )
        ),
        collectives=(_DP_GRAD_ALL_REDUCE,),
        point_to_point=False,
        volume=N_("2*Psi elements per step"),
        volume_sources=(sources.ZERO_COMMUNICATION,),
        needs=(
            N_(
                "Only in backward: gradients are all-reduced before the optimizer step; "
                "forward needs nothing from other ranks."
            )
        ),
        wait=(
            N_(
                "The gradient all-reduce cannot finish before the slowest rank (a straggler) "
                "has produced its gradients, so every rank waits for it before the optimizer step."
            )
        ),
        recovers=(
            N_(
                "All replicas are identical: a replacement copies parameters and optimizer states "
                "from any surviving rank or from the last checkpoint, and the step is redone."
            )
        ),
        shards=("batch",),
    ),
    Strategy(
        name="zero1",
        title=N_("ZeRO-1 - optimizer states sharded"),
        name_zh="ZeRO-1 优化器状态分片",
        split=(
            N_(
                "optimizer states (fp32 master weights, Adam moments) in 4 shards; "
                "the batch as in DP; parameters and gradients replicated"
            )
        ),
        holdings=(
            N_("params: all"),
            N_("grads: all"),
            N_("optim: shard {k}"),
            N_("batch: part {k}"),
        ),
        holds=(
            N_(
                "Full parameters and gradients, one quarter (shard k) of the optimizer states, "
                "and a quarter of each batch."
            )
        ),
        collectives=_ZERO12_COLLECTIVES,
        point_to_point=False,
        volume=N_("2*Psi elements per step, the same as DP"),
        volume_sources=(sources.ZERO_COMMUNICATION,),
        needs=(
            N_(
                "After backward: the summed gradients of its shard (reduce-scatter); after the "
                "optimizer step, every rank's updated parameter shard (all-gather)."
            )
        ),
        wait=(
            N_(
                "The parameter all-gather after the optimizer step: the next forward cannot start "
                "until every shard's update has arrived."
            )
        ),
        recovers=(
            N_(
                "Its optimizer-state shard exists on no other rank: restart from the last "
                "checkpoint, which holds every rank's shard (parameters could be copied from any "
                "rank)."
            )
        ),
        shards=("batch", "optimizer-states"),
    ),
    Strategy(
        name="zero2",
        title=N_("ZeRO-2 - optimizer states and gradients sharded"),
        name_zh="ZeRO-2 优化器状态与梯度分片",
        split=(
            N_(
                "optimizer states and gradients in 4 shards; the batch as in DP; parameters "
                "replicated"
            )
        ),
        holdings=(
            N_("params: all"),
            N_("grads: shard {k}"),
            N_("optim: shard {k}"),
            N_("batch: part {k}"),
        ),
        holds=(
            N_(
                "Full parameters, one quarter (shard k) of the gradients and of the optimizer "
                "states, and a quarter of each batch."
            )
        ),
        collectives=_ZERO12_COLLECTIVES,
        point_to_point=False,
        volume=N_("2*Psi elements per step, the same as DP"),
        volume_sources=(sources.ZERO_COMMUNICATION,),
        needs=(
            N_(
                "During backward: each gradient bucket is reduce-scattered to its shard's owner; "
                "after the optimizer step, every rank's updated parameters (all-gather)."
            )
        ),
        wait=(
            N_(
                "Backward cannot free a gradient bucket until its reduce-scatter has finished, "
                "so a slow link or a straggler stalls backward on memory."
            )
        ),
        recovers=(
            N_(
                "Its gradient and optimizer-state shards exist on no other rank: restart from the "
                "last checkpoint (gradients are recomputed by redoing the step)."
            )
        ),
        shards=("batch", "optimizer-states", "gradients"),
    ),
    Strategy(
        name="zero3",
        title=N_("FSDP/ZeRO-3 - parameters, gradients, optimizer states sharded"),
        name_zh="FSDP/ZeRO-3 参数、梯度与优化器状态全分片",
        split=(
            N_(
                "parameters, gradients and optimizer states in 4 shards (each flat parameter "
                "split along its elements); the batch as in DP"
            )
        ),
        holdings=(
            N_("params: shard {k}"),
            N_("grads: shard {k}"),
            N_("optim: shard {k}"),
            N_("batch: part {k}"),
        ),
        holds=(
            N_(
                "Shard k of the parameters, gradients and optimizer states, a quarter of each "
                "batch, and for a moment the full parameters of the layer being computed."
            )
        ),
        collectives=(
            CollectiveUse(
                "all-gather",
                "forward",
                N_("parameters of the next layer (freed after use)"),
                N_("Psi elements per step"),
                sources.ZERO_COMMUNICATION,
            ),
            CollectiveUse(
                "all-gather",
                "backward",
                N_("parameters of the layer again (freed in forward)"),
                N_("Psi elements per step"),
                sources.ZERO_COMMUNICATION,
            ),
            CollectiveUse(
                "reduce-scatter",
                "backward",
                N_("gradients: each rank keeps the sum for its own shard"),
                N_("Psi elements per step"),
                sources.ZERO_COMMUNICATION,
            ),
        ),
        point_to_point=False,
        volume=N_("3*Psi elements per step, 1.5 times DP"),
        volume_sources=(sources.ZERO_COMMUNICATION,),
        needs=(
            N_(
                "Before every layer, in forward and again in backward: that layer's full "
                "parameters are gathered from all ranks, used, then freed; gradients are "
                "reduce-scattered in backward."
            )
        ),
        wait=(
            N_(
                "A layer's forward waits for its parameter all-gather whenever prefetching has "
                "not hidden it behind the previous layer's compute."
            )
        ),
        recovers=(
            N_(
                "Every shard lives on one rank only: all ranks reload the last sharded checkpoint "
                "(a rank's shard cannot be rebuilt from the others)."
            )
        ),
        shards=("batch", "optimizer-states", "gradients", "parameters"),
    ),
    Strategy(
        name="tp",
        title=N_("TP - tensor parallel"),
        name_zh="张量并行",
        split=N_(
            "inside each layer: weight matrices split by columns (W1, the first matmul of "
            "attention and MLP) and by rows (W2, the second matmul); attention heads split"
        ),
        holdings=(
            N_("W1: col slice {k}"),
            N_("W2: row slice {k}"),
            N_("heads: part {k}"),
            N_("batch: same"),
        ),
        holds=(
            N_(
                "A column slice of each layer's first weight matrix and a row slice of its second "
                "(a quarter of the attention heads and MLP), their gradients and optimizer "
                "states; every rank sees the same batch."
            )
        ),
        collectives=(
            CollectiveUse(
                "all-reduce",
                "forward",
                N_("partial outputs of the row-parallel matmuls (2 per layer, b*s*h each)"),
                N_("4*b*s*h*(t-1)/t elements per layer per device per micro-batch"),
                sources.MEGATRON_COMMUNICATION,
            ),
            CollectiveUse(
                "all-reduce",
                "backward",
                N_("activation gradients of the column-parallel matmuls (2 per layer)"),
                N_("4*b*s*h*(t-1)/t elements per layer per device per micro-batch"),
                sources.MEGATRON_COMMUNICATION,
            ),
        ),
        point_to_point=False,
        volume=N_("8*b*s*h*(t-1)/t elements per layer per device per micro-batch"),
        volume_sources=(sources.MEGATRON_COMMUNICATION,),
        needs=(
            N_(
                "Inside every layer, in forward and in backward: the partial results of the "
                "split matmul must be summed over all ranks before the next operation."
            )
        ),
        wait=(
            N_(
                "Each layer's all-reduce sits on the critical path: compute stops until the sum "
                "arrives, so a slow link slows every layer (keep TP inside a node)."
            )
        ),
        recovers=(
            N_(
                "Its slices of every layer exist on no other rank: all TP ranks reload the last "
                "TP-sharded checkpoint together, and the step is lost."
            )
        ),
        shards=("matmuls",),
    ),
    Strategy(
        name="tp-sp",
        title=N_("TP+SP - tensor parallel with sequence parallelism"),
        name_zh="张量并行 + 序列并行",
        split=N_(
            "inside each layer: weight matrices split by columns (W1, the first matmul of "
            "attention and MLP) and by rows (W2); plus the sequence in the LayerNorm and dropout "
            "regions"
        ),
        holdings=(
            N_("W1: col slice {k}"),
            N_("W2: row slice {k}"),
            N_("LN: seq part {k}"),
            N_("batch: same"),
        ),
        holds=(
            N_(
                "The TP slices of every layer, plus a quarter of the sequence's activations in "
                "the LayerNorm and dropout regions (activation memory there divided by t)."
            )
        ),
        collectives=(
            CollectiveUse(
                "all-gather",
                "forward",
                N_("sequence-split activations before attention and MLP (2 per layer)"),
                N_("2*b*s*h*(t-1)/t elements per layer per device per micro-batch"),
                sources.SEQUENCE_PARALLEL_COMMUNICATION,
            ),
            CollectiveUse(
                "reduce-scatter",
                "forward",
                N_("partial outputs after attention and MLP, back to sequence parts"),
                N_("2*b*s*h*(t-1)/t elements per layer per device per micro-batch"),
                sources.SEQUENCE_PARALLEL_COMMUNICATION,
            ),
            CollectiveUse(
                "all-gather",
                "backward",
                N_("gradients entering the row-parallel matmuls (2 per layer)"),
                N_("2*b*s*h*(t-1)/t elements per layer per device per micro-batch"),
                sources.SEQUENCE_PARALLEL_COMMUNICATION,
            ),
            CollectiveUse(
                "reduce-scatter",
                "backward",
                N_("gradients leaving the column-parallel matmuls (2 per layer)"),
                N_("2*b*s*h*(t-1)/t elements per layer per device per micro-batch"),
                sources.SEQUENCE_PARALLEL_COMMUNICATION,
            ),
        ),
        point_to_point=False,
        volume=(
            N_("8*b*s*h*(t-1)/t elements per layer per device per micro-batch, the same as TP")
        ),
        volume_sources=(sources.SEQUENCE_PARALLEL_COMMUNICATION, sources.MEGATRON_COMMUNICATION),
        needs=(
            N_(
                "At the entry and exit of every attention and MLP block, in forward and in "
                "backward: the sequence parts are gathered, and the partial sums scattered back."
            )
        ),
        wait=(
            N_(
                "The all-gather before each attention or MLP block: the block cannot start until "
                "every rank's part of the sequence has arrived."
            )
        ),
        recovers=(
            N_(
                "As TP: its weight slices exist on no other rank, so all TP ranks reload the last "
                "TP-sharded checkpoint; the activations are recomputed."
            )
        ),
        shards=("matmuls", "sequence-norm"),
    ),
    Strategy(
        name="pp",
        title=N_("PP - pipeline parallel"),
        name_zh="流水线并行",
        split=(
            N_(
                "the layers: 24 layers in 4 stages of 6; each batch in micro-batches that flow "
                "through the stages"
            )
        ),
        holdings=(
            N_("layers {lo}-{hi}"),
            N_("their params"),
            N_("their grads"),
            N_("their optim"),
        ),
        holds=(
            N_(
                "Stage k: the parameters, gradients and optimizer states of layers 6k to 6k+5, "
                "and the activations of the micro-batches in flight."
            )
        ),
        collectives=(
            CollectiveUse(
                "send-recv",
                "forward",
                N_("activations to the next stage"),
                N_("b*s*h elements per micro-batch between consecutive stages"),
                sources.MEGATRON_COMMUNICATION,
            ),
            CollectiveUse(
                "send-recv",
                "backward",
                N_("activation gradients to the previous stage"),
                N_("b*s*h elements per micro-batch between consecutive stages"),
                sources.MEGATRON_COMMUNICATION,
            ),
        ),
        point_to_point=True,
        volume=N_("2*b*s*h elements per micro-batch per stage boundary (forward and backward)"),
        volume_sources=(sources.MEGATRON_COMMUNICATION,),
        needs=(
            N_(
                "Per micro-batch: the previous stage's activations before its forward, and the "
                "next stage's activation gradients before its backward."
            )
        ),
        wait=(
            N_(
                "The pipeline bubble: rank 3 idles until the first micro-batch has passed ranks "
                "0-2, and rank 0 idles while the last backward drains (bubble/ideal = (p-1)/m)."
            )
        ),
        recovers=(
            N_(
                "Its layers exist only on its stage: it reloads their parameters and optimizer "
                "states from the last checkpoint, and the step's micro-batches are redone."
            )
        ),
        shards=("layers",),
    ),
    Strategy(
        name="ep",
        title=N_("EP - expert parallel"),
        name_zh="专家并行",
        split=(
            N_(
                "the experts of each MoE layer: 8 experts, 2 per rank; tokens are routed to the "
                "rank holding their expert"
            )
        ),
        holdings=(
            N_("experts {e0},{e1}"),
            N_("attn: all"),
            N_("router: all"),
            N_("tokens: part {k}"),
        ),
        holds=(
            N_(
                "Two of the 8 experts of every MoE layer (parameters, gradients, optimizer "
                "states), a replica of the shared layers, and a quarter of the tokens."
            )
        ),
        collectives=(
            CollectiveUse(
                "all-to-all",
                "forward",
                N_("tokens to their experts (dispatch), expert outputs back (combine)"),
                N_(
                    "2*b*s*k*h*(e-1)/e elements per MoE layer per device per micro-batch "
                    "(k experts per token, e = EP size)"
                ),
                sources.EXPERT_PARALLEL_COMMUNICATION,
            ),
            CollectiveUse(
                "all-to-all",
                "backward",
                N_("gradients of the combine and of the dispatch, in reverse"),
                N_("2*b*s*k*h*(e-1)/e elements per MoE layer per device per micro-batch"),
                sources.EXPERT_PARALLEL_COMMUNICATION,
            ),
            CollectiveUse(
                "all-reduce",
                "backward",
                N_("gradients of the shared (non-expert) layers, as in DP"),
                N_("2*Psi_shared elements per step"),
                sources.ZERO_COMMUNICATION,
            ),
        ),
        point_to_point=False,
        volume=(
            N_(
                "4*b*s*k*h*(e-1)/e elements per MoE layer per device per micro-batch, plus "
                "2*Psi_shared per step"
            )
        ),
        volume_sources=(sources.EXPERT_PARALLEL_COMMUNICATION, sources.ZERO_COMMUNICATION),
        needs=(
            N_(
                "In every MoE layer, in forward and backward: tokens go to the ranks of their "
                "experts and the outputs come back (two all-to-alls each way)."
            )
        ),
        wait=(
            N_(
                "The all-to-all waits for the busiest expert: when routing is uneven, one rank "
                "gets more tokens and every rank waits for it (expert load imbalance)."
            )
        ),
        recovers=(
            N_(
                "Its experts exist on no other rank (unless replicated): reload them and their "
                "optimizer states from the last checkpoint; shared layers come from any rank."
            )
        ),
        shards=("experts", "batch"),
    ),
    Strategy(
        name="cp",
        title=N_("CP - context parallel"),
        name_zh="上下文并行",
        split=(
            N_(
                "the sequence: s tokens in 4 chunks of s/4 in every layer (with a causal mask, "
                "chunks are paired to balance the work)"
            )
        ),
        holdings=(
            N_("seq: chunk {k}"),
            N_("params: all"),
            N_("Q: own chunk"),
            N_("K,V: gathered"),
        ),
        holds=(
            N_(
                "A full replica of the parameters and the activations of its quarter of the "
                "sequence; in attention, the keys and values of the other chunks as they arrive."
            )
        ),
        collectives=(
            CollectiveUse(
                "all-gather",
                "forward",
                N_("keys and values of all chunks (run as a ring of send/recv, overlapped)"),
                N_("2*b*s*h*(c-1)/c elements per attention layer per device per micro-batch"),
                sources.CONTEXT_PARALLEL_COMMUNICATION,
            ),
            CollectiveUse(
                "reduce-scatter",
                "backward",
                N_("key and value gradients back to the chunk that owns them"),
                N_("2*b*s*h*(c-1)/c elements per attention layer per device per micro-batch"),
                sources.CONTEXT_PARALLEL_COMMUNICATION,
            ),
            CollectiveUse(
                "all-reduce",
                "backward",
                N_("parameter gradients across the CP ranks, as in DP"),
                N_("2*Psi elements per step"),
                sources.ZERO_COMMUNICATION,
            ),
        ),
        point_to_point=False,
        volume=(
            N_(
                "4*b*s*h*(c-1)/c elements per attention layer per device per micro-batch, plus "
                "2*Psi per step"
            )
        ),
        volume_sources=(sources.CONTEXT_PARALLEL_COMMUNICATION, sources.ZERO_COMMUNICATION),
        needs=(
            N_(
                "In every attention layer: its queries need the keys and values of the other "
                "chunks (forward), and key/value gradients go back to their owners (backward)."
            )
        ),
        wait=(
            N_(
                "Attention on a chunk waits for the next K,V block around the ring whenever "
                "computing one block takes less time than receiving the next."
            )
        ),
        recovers=(
            N_(
                "Parameters are replicated across CP ranks (copy from any rank or the checkpoint); "
                "its sequence chunk is re-read from the data loader position of the step."
            )
        ),
        shards=("sequence",),
    ),
)

STRATEGIES: Mapping[str, Strategy] = MappingProxyType({s.name: s for s in _STRATEGY_LIST})
"""Every strategy by name: dp, zero1, zero2, zero3, tp, tp-sp, pp, ep, cp."""

SHARDS: Mapping[str, str] = MappingProxyType(
    {
        "batch": N_("the batch"),
        "optimizer-states": N_("optimizer states (flat shards)"),
        "gradients": N_("gradients (flat shards)"),
        "parameters": N_("parameters (flat shards)"),
        "matmuls": N_("each layer's matmuls (column/row slices)"),
        "layers": N_("the layers (whole layers per stage)"),
        "experts": N_("the experts (whole experts per rank)"),
        "sequence": N_("the sequence (every layer, attention too)"),
        "sequence-norm": N_("the sequence (LayerNorm/dropout regions)"),
    }
)
"""What a strategy can divide among its ranks (:attr:`Strategy.shards`), with the words the quiz
shows. Each label says how the thing is divided, so a strategy that divides it differently does not
"also" split it: ZeRO's flat shards are not TP's matmul slices, nor PP's whole layers."""

SHARD_IMPLIES: Mapping[str, frozenset[str]] = MappingProxyType(
    {"sequence": frozenset({"sequence-norm"})}
)
"""Dividing the sequence in every layer (CP) divides it in the LayerNorm/dropout regions too."""

DECOMPOSITIONS: Mapping[str, tuple[str, ...]] = MappingProxyType(
    {"all-reduce": ("reduce-scatter", "all-gather")}
)
"""A collective and the collectives it is equivalent to in sequence: an all-reduce is a
reduce-scatter followed by an all-gather (Patarasuk and Yuan 2009, "Bandwidth optimal all-reduce
algorithms for clusters of workstations", JPDC 69(2); NCCL documentation, Collective Operations:
ReduceScatter then AllGather equals AllReduce). Implementations use either form: DeepSpeed's
first ZeRO-1 all-reduced the gradients where the ZeRO paper reduce-scatters them (DeepSpeed
tutorial "ZeRO stage 1 with reduced communication"), and Megatron-LM's sequence parallelism
replaces each TP all-reduce by the pair (Korthikanti et al. 2022, Sec. 4.2.2)."""


def covered_shards(strategy: Strategy) -> frozenset[str]:
    """What ``strategy`` divides, with what that implies (:data:`SHARD_IMPLIES`)."""
    covered = set(strategy.shards)
    for shard in strategy.shards:
        covered |= SHARD_IMPLIES.get(shard, frozenset())
    return frozenset(covered)


def collective_signature(collectives: tuple[str, ...] | list[str]) -> tuple[str, ...]:
    """``collectives`` (distinct names, each one collective the strategy runs) with every
    collective replaced by its :data:`DECOMPOSITIONS`, sorted: two lists with the same signature
    describe the same communication (``("all-reduce",)`` and ``("all-gather",
    "reduce-scatter")``)."""
    expanded: list[str] = []
    for name in collectives:
        expanded.extend(DECOMPOSITIONS.get(name, (name,)))
    return tuple(sorted(expanded))


ALIASES: Mapping[str, str] = MappingProxyType({"fsdp": "zero3"})
"""Other names a learner may use: FSDP is ZeRO-3's sharding (PyTorch's implementation)."""


def get_strategy(name: str) -> Strategy:
    """The strategy called ``name`` (case-insensitive; ``fsdp`` is ``zero3``).

    Raises:
        InputError: unknown name (field ``strategy``), listing the known names.
    """
    key = str(name).strip().lower()
    key = ALIASES.get(key, key)
    if key not in STRATEGIES:
        known = ", ".join([*STRATEGIES, *ALIASES])
        raise InputError(
            "strategy",
            _("unknown strategy {name!r}; use one of {known}").format(name=name, known=known),
        )
    return STRATEGIES[key]
