"""Communication buffers on a rank: a DDP gradient bucket, or FSDP's gathered units (the text is
:func:`engine.ledger.terms.buffer_term`).
"""

from __future__ import annotations

from typing import Literal, NamedTuple

from engine.i18n import N_
from engine.i18n import gettext as _
from engine.ledger.model import LedgerSpec
from engine.ledger.states import Sharding, StageParams, weight_bytes_per_param


class Buffer(NamedTuple):
    """The communication-buffer term's bytes and what its text needs (``case`` names the
    branch of :func:`comm_buffers`)."""

    bytes: float
    case: Literal["single", "ddp", "deepspeed", "fsdp", "unknown"]
    origin: str = ""
    unit: float = 0.0
    weight: float = 0.0
    grad: float = 0.0


def comm_buffers(spec: LedgerSpec, shard: Sharding, stage: StageParams, notes: list[str]) -> Buffer:
    """Communication buffers on the rank; :func:`buffer_term` formats the text."""
    if shard.n_d == 1:
        return Buffer(0.0, "single")
    if spec.zero_stage < 3:
        return Buffer(spec.bucket_bytes, "ddp")
    if spec.convention == "deepspeed":
        return Buffer(0.0, "deepspeed")
    w = weight_bytes_per_param(spec)
    g = (
        spec.grad_bytes
        if spec.grad_bytes is not None and spec.convention == "zero-paper"
        else (4.0 if spec.fp32_grads or spec.convention != "zero-paper" else w)
    )
    if shard.size is not None:
        size = shard.size
        unit = (size.layer_dense + size.experts * size.layer_mlp / spec.ep) / spec.tp
        origin = N_("one layer")
    elif stage.layers:
        unit = (stage.dense + stage.expert) / stage.layers
        origin = N_("one layer")
    elif spec.largest_layer_params is not None:
        unit = spec.largest_layer_params / spec.tp
        origin = N_("largest layer")
    else:
        notes.append(_("FSDP unit size unknown (give layers): gathered-parameter buffer left out"))
        return Buffer(0.0, "unknown")
    return Buffer(unit * ((1 + spec.prefetch) * w + g), "fsdp", origin, unit, w, g)
