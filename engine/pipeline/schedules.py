"""Each schedule as the typed actions every stage runs, in order (module docstring of
:mod:`engine.pipeline`: GPipe, 1F1B, interleaved 1F1B, ZB-H1, ZB-H2).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from engine.pipeline.spec import (
    B_CODE,
    F_CODE,
    JOINED_KINDS,
    SPLIT_KINDS,
    W_CODE,
    IntArray,
    PipelineAction,
    PipelineSpec,
)


def schedule_actions(spec: PipelineSpec) -> tuple[tuple[PipelineAction, ...], ...]:
    """The schedule of ``spec``: per stage, the actions in the order the stage runs them."""
    kinds = SPLIT_KINDS if spec.split_backward else JOINED_KINDS
    return tuple(
        tuple(
            PipelineAction(kinds[code], mb, chunk)
            for code, mb, chunk in zip(
                stage.codes.tolist(),
                stage.micro_batches.tolist(),
                stage.chunks.tolist(),
                strict=True,
            )
        )
        for stage in stage_actions(spec)
    )


@dataclass(frozen=True)
class StageActions:
    """One stage's schedule as parallel arrays: kind code, micro-batch and chunk of each action."""

    codes: IntArray
    micro_batches: IntArray
    chunks: IntArray


def stage_actions(spec: PipelineSpec) -> list[StageActions]:
    """Every stage's actions, in the order it runs them, as parallel arrays (the simulator's
    input; :func:`schedule_actions` gives the same as tuples)."""
    p, m = spec.stages, spec.num_microbatches
    if spec.schedule == "gpipe":
        return [_gpipe(m) for _ in range(p)]
    if spec.schedule == "interleaved-1f1b":
        return [_interleaved(p, m, spec.virtual_stages, r) for r in range(p)]
    if spec.schedule == "1f1b":
        return [_flush(m, min(p - r, m), None) for r in range(p)]
    if spec.schedule == "zb-h1":
        return [_flush(m, min(p - r, m), r) for r in range(p)]
    return [_flush(m, min(2 * (p - r) - 1, m), 2 * r) for r in range(p)]


def _gpipe(m: int) -> StageActions:
    """All m forwards, then all m backwards, in micro-batch order (as PyTorch's ScheduleGPipe)."""
    every = np.arange(m)
    codes = np.repeat(np.array([F_CODE, B_CODE]), m)
    return StageActions(codes, np.concatenate([every, every]), np.zeros(2 * m, dtype=np.int64))


def _flush(m: int, warm_forwards: int, w_lag: int | None) -> StageActions:
    """1F1B-shaped order: ``warm_forwards`` forwards, then cycles of B, (W), F.

    ``w_lag`` is None when B and W run as one op. Otherwise cycle j runs W of micro-batch j − lag
    (when j >= lag), so ``w_lag`` weight gradients wait and fill the idle time at the end.
    """
    cycle = np.arange(m)
    codes = np.empty((m, 3), dtype=np.int64)
    batches = np.empty((m, 3), dtype=np.int64)
    codes[:, 0], batches[:, 0] = B_CODE, cycle
    codes[:, 1], batches[:, 1] = W_CODE, cycle - (w_lag or 0)
    codes[:, 2], batches[:, 2] = F_CODE, cycle + warm_forwards
    keep = np.empty((m, 3), dtype=bool)
    keep[:, 0] = True
    keep[:, 1] = w_lag is not None and cycle >= (w_lag or 0)
    keep[:, 2] = cycle + warm_forwards < m
    head = np.arange(warm_forwards)
    tail = np.arange(max(0, m - w_lag), m) if w_lag is not None else np.arange(0)
    all_codes = np.concatenate(
        [np.full(head.size, F_CODE), codes[keep], np.full(tail.size, W_CODE)]
    )
    all_batches = np.concatenate([head, batches[keep], tail])
    return StageActions(all_codes, all_batches, np.zeros(all_codes.size, dtype=np.int64))


def _interleaved(p: int, m: int, v: int, r: int) -> StageActions:
    """Megatron-LM's interleaved 1F1B order for stage r: groups of p micro-batches per chunk.

    The k-th forward runs chunk (k // p) mod v of micro-batch (k // pv)·p + k mod p; the k-th
    backward the same micro-batch on chunk v − 1 − (k // p) mod v.
    """
    total = m * v
    warm = min((p - r - 1) * 2 + (v - 1) * p, total)
    steady = total - warm
    k = np.arange(total)
    batch = (k // (p * v)) * p + k % p
    chunk = (k // p) % v
    codes = np.empty(2 * total, dtype=np.int64)
    batches = np.empty(2 * total, dtype=np.int64)
    chunks = np.empty(2 * total, dtype=np.int64)
    middle = slice(warm, warm + 2 * steady)
    for array, forward, backward in (
        (codes, np.full(total, F_CODE), np.full(total, B_CODE)),
        (batches, batch, batch),
        (chunks, chunk, v - 1 - chunk),
    ):
        array[:warm] = forward[:warm]
        array[middle][0::2] = forward[warm:]
        array[middle][1::2] = backward[:steady]
        array[warm + 2 * steady :] = backward[steady:]
    return StageActions(codes, batches, chunks)
