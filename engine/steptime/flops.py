"""FLOPs of one training step and the time to train, in two conventions.

- ``korthikanti`` (the architecture is given): per layer and sample, forward
  ``2·s·(4h² + 2·h·f·k) + 4·s²·h`` (QKV and output projections, k MLPs of hidden size f, the
  attention scores and their product with V), logits ``2·s·h·V``; for any
  :class:`~engine.model_size.ModelShape` the projections are ``2·s·(h·(q + 2kv) + q·h)`` (GQA
  widths), each of the k routed and the shared MLPs ``2·s·m·h·f`` (m = 3 when gated) and the
  scores ``4·s²·q`` (the router's h·E per token, under 0.1 %, is left out); model FLOPs are
  three passes (forward, two backward), which for f = 4h and k = 1 is Korthikanti et al. 2022
  (arXiv:2205.05198) Eq. 7, ``72·B·L·s·h²·(1 + s/(6h) + V/(12·h·L))``. Selective recomputation
  adds ``12·B·L·s²·h`` (Eq. 8, ``72·B·L·s·h²·(1 + s/(3h) + V/(12·h·L))``); full recomputation
  runs each layer's forward twice: ``4·layers + 3·logits``, Narayanan et al. 2021
  (arXiv:2104.04473) Eq. 3, ``96·B·s·L·h²·(1 + s/(6h) + V/(16·L·h))``.
- ``6N`` (only the parameter count is given): 6·N FLOPs per token (Kaplan et al. 2020,
  arXiv:2001.08361 §2.1), 8·N with full recomputation (Narayanan et al. 2021 §5.1, Eq. 4).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, get_args

from engine import sources
from engine.activations import RECOMPUTE_CHOICES
from engine.checks import finite_number, one_of, whole_number
from engine.i18n import N_
from engine.model_size import ModelShape
from engine.steptime.spec import StepTerm

FlopsConvention = Literal["korthikanti", "6N"]
FLOPS_CONVENTIONS: tuple[FlopsConvention, ...] = get_args(FlopsConvention)


@dataclass(frozen=True)
class Flops:
    """FLOPs of one step: model (no recomputation) and hardware (with it), and the formulas."""

    convention: FlopsConvention
    model: float
    hardware: float
    attention_core: float
    mlp: float
    model_formula: str
    hardware_formula: str
    source: str


def korthikanti_flops(
    *,
    batch: float,
    layers: int,
    seq: int,
    hidden: int,
    vocab: int,
    ffn_hidden: int | None = None,
    top_k: int = 1,
    recompute: str = "none",
    shape: ModelShape | None = None,
) -> Flops:
    """FLOPs of one step of ``batch`` samples (module docstring: Eq. 7, Eq. 8, Eq. 3).

    ``shape`` (its layers, hidden size and vocabulary must be ``layers``, ``hidden``, ``vocab``)
    gives the GQA widths, the MLP kind, the experts and the padded vocabulary; ``None`` is the
    GPT layer of Eq. 7 with MLP size ``ffn_hidden`` and ``top_k`` MLPs per token.

    Returns:
        :class:`Flops`; ``attention_core`` and ``mlp`` are the model FLOPs of the attention
        scores and of the MLPs (for overlap and MoE load).

    Raises:
        InputError: a size that is not a whole number >= 1, or an unknown ``recompute``.
    """
    b = finite_number("global_batch", batch)
    L = whole_number("layers", layers)
    s = float(whole_number("seq", seq))
    h = float(whole_number("hidden", hidden))
    V = float(whole_number("vocab", vocab))
    f = 4 * h if ffn_hidden is None else float(whole_number("ffn_hidden", ffn_hidden))
    k = whole_number("top_k", top_k)
    one_of("recompute", recompute, RECOMPUTE_CHOICES)
    projections = 2 * b * s * 4 * h * h
    attention = 4 * b * s * s * h
    mlp = 2 * b * s * 2 * h * f * k
    shared = 0.0
    generalized = shape is not None and (
        shape.q_width != shape.hidden
        or shape.kv_width != shape.hidden
        or shape.mlp != "gelu"
        or shape.shared_experts
        or shape.padded_vocab != shape.vocab
    )
    if shape is not None:
        q, kv, m = float(shape.q_width), float(shape.kv_width), shape.mlp_matrices
        f = float(shape.expert_ffn if shape.experts > 1 else shape.ffn)
        k = shape.top_k if shape.experts > 1 else 1
        V = float(shape.padded_vocab)
        projections = 2 * b * s * (h * (q + 2 * kv) + q * h)
        attention = 4 * b * s * s * q
        mlp = 2 * b * s * m * h * f * k
        shared = 2 * b * s * m * h * f * shape.shared_experts
    layer = projections + mlp + shared + attention
    logits = 2 * b * s * h * V
    model = 3 * (L * layer + logits)
    eq7 = f"72·B·L·s·h²·(1 + s/(6h) + V/(12·h·L)) = 72·{b:g}·{L}·{s:g}·{h:g}²·(...)"
    if generalized:
        assert shape is not None
        eq7 = (
            f"3·(L·(2Bs(h·(q + 2kv) + q·h + {shape.mlp_matrices}·h·f·(k + shared)) + 4Bs²q) + "
            f"2BshV), q={shape.q_width:g}, kv={shape.kv_width:g}, f={f:g}, k={k} (Eq. 7 "
            "generalized)"
        )
    elif f != 4 * h or k != 1:
        eq7 = f"3·(L·(2Bs(4h² + 2·h·f·k) + 4Bs²h) + 2BshV), f={f:g}, k={k} (Eq. 7 generalized)"
    if recompute == "selective":
        # Eq. 8 adds 12·B·L·s²·h, three times the attention core's forward (q in place of h).
        hardware = model + 3 * L * attention
        hw_formula = "72·B·L·s·h²·(1 + s/(3h) + V/(12·h·L)) = Eq. 7 + 12·B·L·s²·h"
        source = sources.joined(sources.MODEL_FLOPS_EQ7, sources.SELECTIVE_RECOMPUTE_FLOPS_EQ8)
    elif recompute == "full":
        hardware = 4 * L * layer + 3 * logits
        hw_formula = "96·B·s·L·h²·(1 + s/(6h) + V/(16·L·h)) = 4·layers + 3·logits"
        source = sources.joined(sources.MODEL_FLOPS_EQ7, sources.FULL_RECOMPUTE_FLOPS_EQ3)
    else:
        hardware = model
        hw_formula = "= model FLOPs (no recomputation)"
        source = sources.MODEL_FLOPS_EQ7
    return Flops(
        "korthikanti",
        model,
        hardware,
        3 * L * attention,
        3 * L * mlp,
        f"{eq7} = {model:.6g}",
        f"{hw_formula} = {hardware:.6g}",
        source,
    )


def six_n_flops(params: float, tokens: float, recompute: str = "none") -> Flops:
    """6·N FLOPs per token (8·N with full recomputation); selective recomputation's extra
    attention FLOPs need the architecture and count 0 here (said in the formula).

    Raises:
        InputError: ``params`` or ``tokens`` not a finite number > 0; unknown ``recompute``.
    """
    n = finite_number("params", params)
    t = finite_number("tokens", tokens)
    one_of("recompute", recompute, RECOMPUTE_CHOICES)
    model = 6 * n * t
    hardware = 8 * n * t if recompute == "full" else model
    hw_formula = {
        "none": "= model FLOPs",
        "selective": "= model FLOPs (its attention recompute needs the architecture: 0 here)",
        "full": f"8·N·tokens = {hardware:.6g}",
    }[recompute]
    source = (
        sources.SIX_N_FLOPS
        if recompute != "full"
        else sources.joined(sources.SIX_N_FLOPS, sources.TIME_TO_TRAIN_EQ4)
    )
    return Flops(
        "6N",
        model,
        hardware,
        0.0,
        model * 2 / 3,
        f"6·N·tokens = 6·{n:.6g}·{t:.6g} = {model:.6g}",
        hw_formula,
        source,
    )


def time_to_train(
    tokens: float, params: float, gpus: int, achieved_flops: float, recompute: str
) -> StepTerm:
    """Narayanan et al. 2021 Eq. 4: 8·T·P/(n·X) with (full) recomputation, 6·T·P/(n·X)
    without (T tokens, P parameters, n GPUs, X achieved FLOP/s per GPU). Seconds.

    Raises:
        InputError: any argument not a finite number > 0 (``tokens``, ``params``, ``gpus``,
            ``achieved_flops``), or an unknown ``recompute``.
    """
    t = finite_number("tokens", tokens)
    p = finite_number("params", params)
    n = whole_number("gpus", gpus)
    x = finite_number("achieved_flops", achieved_flops)
    one_of("recompute", recompute, RECOMPUTE_CHOICES)
    c = 8 if recompute == "full" else 6
    seconds = c * t * p / (n * x)
    note = "" if recompute != "selective" else " (selective recompute: Eq. 4's 8 is for full)"
    return StepTerm(
        N_("time to train"),
        seconds,
        f"{c}·T·P/(n·X) = {c}·{t:.4g}·{p:.4g}/({n}·{x:.4g}) = {seconds:.6g} s{note}",
        sources.TIME_TO_TRAIN_EQ4,
    )
