"""The wait an unbalanced mixture of experts adds to a step (Switch Transformer's capacity)."""

from __future__ import annotations

from engine import sources
from engine.i18n import N_
from engine.model_size import ModelSize
from engine.steptime.flops import Flops
from engine.steptime.spec import ASSUMPTION, CommTerm, MoeWait, StepSpec, StepTerm


def moe_wait(
    spec: StepSpec,
    size: ModelSize | None,
    flops: Flops,
    world: int,
    x: float,
    comm: list[CommTerm],
) -> MoeWait | None:
    """Expert load imbalance (:class:`~engine.steptime.spec.MoeWait`): the hottest expert's load
    over the mean, capped by the capacity factor, and what the ranks wait for it; ``None``
    without experts or the architecture."""
    e = spec.experts or 1
    if e < 2 or size is None:
        return None
    hot = spec.hot_expert_share if spec.hot_expert_share is not None else 1 / e
    ratio = min(hot * e, spec.capacity_factor)
    ratio = max(ratio, 1.0)
    dropped = max(0.0, hot - spec.capacity_factor / e)
    if spec.ep == 1:
        # Every rank holds every expert: no rank waits for another rank's busier expert.
        return MoeWait(hot, ratio, dropped, 0.0)
    expert_compute = flops.mlp * (flops.hardware / flops.model) / (world * x)
    a2a = sum(c.time_s for c in comm if c.op == "all-to-all")
    wait = (ratio - 1.0) * (expert_compute + a2a)
    return MoeWait(hot, ratio, dropped, wait)


def moe_term(spec: StepSpec, moe: MoeWait) -> StepTerm:
    """The MoE imbalance wait as a step term."""
    return StepTerm(
        N_("MoE imbalance wait"),
        moe.wait_s,
        f"(min(hot share {moe.hot_share:.3g} × E {spec.experts}, capacity factor "
        f"{spec.capacity_factor:g}) − 1) × (expert MLP compute + all-to-all); "
        f"dropped {moe.dropped_share:.3g} of tokens",
        f"{sources.MOE_CAPACITY}; wait: {ASSUMPTION}",
    )
