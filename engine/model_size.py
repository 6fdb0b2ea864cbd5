"""Parameter count of a GPT-style transformer from its architecture, and the input checks shared
by the memory modules (:mod:`engine.activations`, :mod:`engine.ledger`).

Formula (Narayanan et al. 2021, "Efficient Large-Scale Language Model Training on GPU Clusters
Using Megatron-LM", arXiv:2104.04473, §5.1 Eq. 2): with FFN hidden size 4h,

    P = 12·l·h²·(1 + 13/(12·h) + (V + s)/(12·l·h))  =  l·(12·h² + 13·h) + (V + s)·h

Per layer that is attention 4h² + 4h (QKV and output projection with biases), MLP 2·h·f + f + h,
two layer norms 4h; the embedding holds V·h word and s·h learned position embeddings (tied with
the output layer). Here the MLP is written with its own hidden size f (``ffn_hidden``); f = 4h
gives the paper's expression exactly. A mixture-of-experts layer (Switch/GShard style, every layer)
holds ``experts`` copies of the MLP; its router (h·E) is left out, as Megatron-LM's
``theoretical_memory_usage.py`` also leaves it out.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from engine.errors import InputError

# Larger counts than this are typing errors, and keeping every input below it keeps every product
# the ledger forms (at most four counts multiplied) far from float overflow.
MAX_COUNT = 10**12
PARAM_COUNT_SOURCE = (
    "Narayanan et al. 2021 (arXiv:2104.04473) §5.1 Eq. 2, FFN size f in place of 4h"
)


def whole_number(field: str, value: object, *, minimum: int = 1) -> int:
    """Check that ``value`` is a whole number in ``[minimum, MAX_COUNT]`` and return it.

    Raises:
        InputError: a boolean, a non-integer, NaN/inf, below ``minimum`` or above ``MAX_COUNT``.
    """
    if type(value) is int and minimum <= value <= MAX_COUNT:
        return value
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise InputError(field, f"expected a whole number, got {value!r}")
    if isinstance(value, float):
        if not math.isfinite(value) or value != math.floor(value):
            raise InputError(field, f"must be a whole number, got {value!r}")
        value = int(value)
    if value < minimum:
        raise InputError(field, f"must be at least {minimum}, got {value}")
    if value > MAX_COUNT:
        raise InputError(field, f"must be at most {MAX_COUNT:.0e}, got {value}")
    return value


def finite_number(
    field: str, value: object, *, allow_zero: bool = False, maximum: float = 1e24
) -> float:
    """Check that ``value`` is a finite, positive (or zero if allowed) number up to ``maximum``.

    Raises:
        InputError: a boolean or non-number, NaN/inf, negative, zero unless allowed, too large.
    """
    # Fast path for the common case; NaN and inf fail these comparisons and fall through.
    if type(value) is float and (value > 0.0 or (allow_zero and value == 0.0)) and value <= maximum:
        return value
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise InputError(field, f"expected a number, got {value!r}")
    number = float(value)
    if math.isnan(number):
        raise InputError(field, "is not a number (NaN)")
    if math.isinf(number) or number > maximum:
        raise InputError(field, f"must be at most {maximum:g}")
    if number < 0:
        raise InputError(field, "must not be negative")
    if number == 0 and not allow_zero:
        raise InputError(field, "must be greater than zero")
    return number


@dataclass(frozen=True)
class ModelSize:
    """Parameter counts of a transformer (counts, not bytes).

    Attributes:
        total: all parameters, experts included.
        layers: transformer layers l.
        layer_dense: one layer without its MLP(s): attention and layer norms.
        layer_mlp: one MLP (one expert's MLP in an MoE layer).
        experts: MLP copies per layer (1 for a dense model).
        embedding: word (V·h) plus position (s·h) embeddings; position only when ``seq`` is given.
        largest_module: the largest single module (embedding or one MLP weight matrix with its
            bias), DeepSpeed's ``largest_layer_params`` (``deepspeed/runtime/zero/stage3.py``
            ``model_to_params``: the most parameters any one module owns directly).
        formula: the formula with the numbers filled in.
    """

    total: float
    layers: int
    layer_dense: float
    layer_mlp: float
    experts: int
    embedding: float
    largest_module: float
    formula: str

    @property
    def per_layer(self) -> float:
        """Parameters in one layer, all experts' MLPs included."""
        return self.layer_dense + self.experts * self.layer_mlp

    @property
    def expert_params(self) -> float:
        """Parameters in expert MLPs over all layers (0 for a dense model)."""
        if self.experts == 1:
            return 0.0
        return self.layers * self.experts * self.layer_mlp


def transformer_param_count(
    *,
    layers: int,
    hidden: int,
    vocab: int,
    ffn_hidden: int | None = None,
    seq: int | None = None,
    experts: int = 1,
) -> ModelSize:
    """Parameters of a GPT-style transformer; formula and source in the module docstring.

    Args:
        layers: transformer layers l. hidden: hidden size h. vocab: vocabulary V.
        ffn_hidden: MLP hidden size f (default 4h). seq: sequence length s, for learned position
            embeddings (left out when ``None``). experts: MLP copies per layer (MoE).

    Raises:
        InputError: any size not a whole number >= 1 (named by its field).
    """
    layers = whole_number("layers", layers)
    hidden = whole_number("hidden", hidden)
    vocab = whole_number("vocab", vocab)
    experts = whole_number("experts", experts)
    ffn = 4 * hidden if ffn_hidden is None else whole_number("ffn_hidden", ffn_hidden)
    positions = 0 if seq is None else whole_number("seq", seq)
    h = float(hidden)
    layer_dense = 4 * h * h + 4 * h + 4 * h
    layer_mlp = 2 * h * ffn + ffn + h
    embedding = (vocab + positions) * h
    total = layers * (layer_dense + experts * layer_mlp) + embedding
    largest = max(vocab * h, h * ffn + ffn, 3 * h * h + 3 * h)
    formula = (
        f"l·(4h² + 8h + E·(2·h·f + f + h)) + (V + s)·h = {layers}·(4·{hidden}² + 8·{hidden}"
        f" + {experts}·(2·{hidden}·{ffn} + {ffn} + {hidden})) + ({vocab} + {positions})·{hidden}"
        f" = {total:,.0f}"
    )
    return ModelSize(
        total=total,
        layers=layers,
        layer_dense=layer_dense,
        layer_mlp=layer_mlp,
        experts=experts,
        embedding=embedding,
        largest_module=largest,
        formula=formula,
    )
