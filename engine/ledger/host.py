"""Host memory per node: the offloaded model states of a node's ranks, or DeepSpeed's estimate
(:data:`engine.sources.DEEPSPEED_ESTIMATORS`).
"""

from __future__ import annotations

from engine.ledger.model import DEEPSPEED_BUFFER_FACTOR, LedgerSpec
from engine.ledger.states import GatheredLayer, Sharding, StageParams


def host_per_node(
    spec: LedgerSpec,
    shard: Sharding,
    stage: StageParams,
    host_per_rank: float,
    gpus_per_node: int,
    nodes: int,
    largest: GatheredLayer | None,
) -> float:
    """Host memory per node: DeepSpeed's estimate (deepspeed convention, ZeRO-2/3, full
    fine-tuning), else the offloaded model states of the node's ranks."""
    case = deepspeed_host_case(spec)
    if case is None:
        return host_per_rank * gpus_per_node
    psi = stage.dense + stage.expert
    factor = DEEPSPEED_BUFFER_FACTOR
    total_gpus = gpus_per_node * nodes
    per_node = 1 / nodes
    largest_params = 0.0 if largest is None else largest.params
    if case == "zero2-optimizer":
        return psi * max(4 * total_gpus, 16) * factor
    if case == "zero2-none":
        return psi * 4 * gpus_per_node * factor
    if case == "zero3-none":
        return (largest_params if spec.zero_init else psi) * 4 * gpus_per_node * factor
    states = 18 if case == "zero3-optimizer+params" else 16
    if spec.zero_init:
        return psi * states * per_node * factor
    return psi * max(4 * gpus_per_node, states * per_node) * factor


def deepspeed_host_case(spec: LedgerSpec) -> str | None:
    """Which of DeepSpeed's host estimates applies (``zero2-optimizer``, ``zero3-none``, ...), or
    ``None`` outside the deepspeed convention's ZeRO-2/3 full fine-tuning."""
    if spec.convention != "deepspeed" or spec.zero_stage < 2 or spec.finetune != "full":
        return None
    return f"zero{min(spec.zero_stage, 3)}-{spec.offload}"
