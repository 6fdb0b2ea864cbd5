"""The shape of a transformer (:class:`ModelShape`), the shape fields every calculator spec takes
(:class:`ShapeFields`) and the parameter count, shared by the ledger (:mod:`engine.ledger`),
activations (:mod:`engine.activations`) and step time (:mod:`engine.steptime`).

Count per layer (q = heads·head_dim and kv = kv_heads·head_dim are the query and key/value
widths, f the MLP size, m its matrices: 2 for ``gelu``, 3 for the gated ``swiglu``/``geglu``):

- attention ``h·(q + 2·kv) + q·h`` (+ ``q + 2·kv + h`` biases);
- MLP ``m·h·f`` (+ ``f + h`` biases, ``2f + h`` when gated); a mixture-of-experts layer holds
  ``experts`` routed MLPs of size f_e and ``shared_experts`` more, plus its router ``h·E``
  (+ ``E``);
- two norms: ``2h`` each for ``layernorm`` (weight and bias), ``h`` for ``rmsnorm``;

and once: the word embedding ``V·h`` (V padded up to a multiple of ``vocab_multiple``),
learned position embeddings ``P·h``, the output layer ``V·h`` when the embeddings are untied,
and the final norm. Sources: NVIDIA/Megatron-LM ``megatron/training/theoretical_memory_usage.py``
(``compute_weight_and_optimizer_memory``: GQA, the 3/2 gated multiplier, RMSNorm's 1 against
LayerNorm's 2, router, shared experts, final norm, untied embeddings); with the GPT layout below it
is Narayanan et al. 2021 (arXiv:2104.04473) §5.1 Eq. 2, ``P = l·(12h² + 13h) + (V + s)·h``.

The norm kind names the layout of what is not given:

- ``layernorm`` (the default): the GPT layout of Eq. 2: learned position embeddings (``P`` = the
  sequence length unless a preset fixes it), dropout masks as Korthikanti et al. 2022 count them,
  and no final norm (Eq. 2 leaves it out).
- ``rmsnorm``: the Llama layout (Touvron et al. 2023, arXiv:2302.13971 §2.2: pre-normalization
  with RMSNorm, SwiGLU, rotary embeddings): rotary positions (no parameters), a final RMSNorm,
  no dropout.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any, Literal, get_args

from engine.checks import MAX_COUNT, flag, one_of, whole_number
from engine.errors import FieldName, InputError
from engine.i18n import current_language
from engine.i18n import gettext as _
from engine.units import format_fixed

MlpKind = Literal["gelu", "swiglu", "geglu"]
NormKind = Literal["layernorm", "rmsnorm"]
AttentionKernel = Literal["eager", "flash"]
PositionKind = Literal["learned", "rotary"]
MLP_KINDS: tuple[MlpKind, ...] = get_args(MlpKind)
NORM_KINDS: tuple[NormKind, ...] = get_args(NormKind)
ATTENTION_KERNELS: tuple[AttentionKernel, ...] = get_args(AttentionKernel)
POSITION_KINDS: tuple[PositionKind, ...] = get_args(PositionKind)

# The shape fields of :class:`ShapeFields` (the ``calc ledger``/``calc step`` flags in snake case);
# ``model`` names a preset that fills the ones left as None.
SHAPE_FIELDS: tuple[str, ...] = (
    "layers",
    "hidden",
    "heads",
    "kv_heads",
    "head_dim",
    "ffn_hidden",
    "vocab",
    "vocab_multiple",
    "mlp",
    "norm",
    "bias",
    "tied_embeddings",
    "positions",
    "position_count",
    "final_norm",
    "dropout",
    "experts",
    "top_k",
    "shared_experts",
    "expert_ffn_hidden",
    "attention",
)
# (field, minimum) of the whole-number shape fields; all may be None (not given).
_SHAPE_COUNTS: tuple[tuple[str, int], ...] = (
    ("layers", 1),
    ("hidden", 1),
    ("heads", 1),
    ("kv_heads", 1),
    ("head_dim", 1),
    ("ffn_hidden", 1),
    ("vocab", 1),
    ("vocab_multiple", 1),
    ("position_count", 1),
    ("experts", 1),
    ("top_k", 1),
    ("shared_experts", 0),
    ("expert_ffn_hidden", 1),
)
_SHAPE_CHOICES: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("mlp", MLP_KINDS),
    ("norm", NORM_KINDS),
    ("attention", ATTENTION_KERNELS),
    ("positions", POSITION_KINDS),
)
_SHAPE_FLAGS = ("bias", "tied_embeddings", "final_norm", "dropout")
# What a field left out takes when no preset gives it (positions, final_norm and dropout follow
# the norm kind's layout, see the module docstring).
SHAPE_DEFAULTS: Mapping[str, Any] = {
    "vocab_multiple": 1,
    "mlp": "gelu",
    "norm": "layernorm",
    "bias": True,
    "tied_embeddings": True,
    "experts": 1,
    "top_k": 1,
    "shared_experts": 0,
    "attention": "eager",
}
LAYOUTS: Mapping[str, Mapping[str, Any]] = {
    "layernorm": {"positions": "learned", "final_norm": False, "dropout": True},
    "rmsnorm": {"positions": "rotary", "final_norm": True, "dropout": False},
}


@dataclass(frozen=True)
class ShapeFields:
    """The model fields every calculator spec takes (:class:`engine.ledger.LedgerSpec`,
    :class:`engine.steptime.StepSpec`): a preset ``model``, and the shape fields of
    :data:`SHAPE_FIELDS` (the ``calc`` flags in snake case). A field left ``None`` takes the
    preset's value, else the default of the norm kind's layout (module docstring); the meaning
    of each is that of :class:`ModelShape`'s field of the same name."""

    model: str | None = None
    layers: int | None = None
    hidden: int | None = None
    heads: int | None = None
    kv_heads: int | None = None
    head_dim: int | None = None
    ffn_hidden: int | None = None
    vocab: int | None = None
    vocab_multiple: int | None = None
    mlp: MlpKind | None = None
    norm: NormKind | None = None
    bias: bool | None = None
    tied_embeddings: bool | None = None
    positions: PositionKind | None = None
    position_count: int | None = None
    final_norm: bool | None = None
    dropout: bool | None = None
    experts: int | None = None
    top_k: int | None = None
    shared_experts: int | None = None
    expert_ffn_hidden: int | None = None
    attention: AttentionKernel | None = None


def check_shape_fields(values: Mapping[str, Any]) -> dict[str, Any]:
    """Validate the :data:`SHAPE_FIELDS` of ``values`` (None = not given) and their relations.

    Returns:
        The fields whose value changed type (a whole number typed as ``2.0`` becomes ``2``).

    Raises:
        InputError: naming the field: a count that is not a whole number (``shared_experts`` may
            be 0), an unknown MLP, norm, attention kernel or position kind, a flag that is not
            true or false, ``kv_heads`` not dividing ``heads`` (or given without ``heads``),
            ``heads`` not dividing ``hidden`` without a ``head_dim``, ``top_k`` above
            ``experts``, shared or expert-specific MLPs without experts.
    """
    changed: dict[str, Any] = {}
    for name, minimum in _SHAPE_COUNTS:
        value = values.get(name)
        if value is None or (type(value) is int and minimum <= value <= MAX_COUNT):
            continue
        changed[name] = whole_number(name, value, minimum=minimum)
    for name, allowed in _SHAPE_CHOICES:
        value = values.get(name)
        if value is not None:
            one_of(name, value, allowed)
    for name in _SHAPE_FLAGS:
        value = values.get(name)
        if value is not None:
            flag(name, value)

    def get(name: str) -> Any:
        return changed.get(name, values.get(name))

    heads, kv_heads, hidden = get("heads"), get("kv_heads"), get("hidden")
    if kv_heads is not None:
        if heads is None:
            raise InputError(
                "kv_heads",
                _("needs the number of attention heads ({heads})"),
                heads=FieldName("heads"),
            )
        if kv_heads > heads or heads % kv_heads:
            raise InputError(
                "kv_heads",
                _("must divide {field} ({heads}); {kv_heads} does not"),
                field=FieldName("heads"),
                heads=heads,
                kv_heads=kv_heads,
            )
    if get("head_dim") is not None and heads is None:
        raise InputError(
            "head_dim", _("needs the number of attention heads ({heads})"), heads=FieldName("heads")
        )
    if hidden is not None and heads is not None and get("head_dim") is None and hidden % heads:
        raise InputError(
            "heads",
            _("must divide {field} ({hidden}); {heads} heads do not"),
            field=FieldName("hidden"),
            hidden=hidden,
            heads=heads,
        )
    experts = get("experts") or 1
    if (get("top_k") or 1) > experts:
        raise InputError(
            "top_k",
            _("must not exceed {field} ({experts})"),
            field=FieldName("experts"),
            experts=experts,
        )
    if experts == 1 and (get("shared_experts") or get("expert_ffn_hidden") is not None):
        name = "shared_experts" if get("shared_experts") else "expert_ffn_hidden"
        raise InputError(
            name, _("needs a mixture of experts ({experts} above 1)"), experts=FieldName("experts")
        )
    return changed


@dataclass(frozen=True)
class ModelShape:
    """The architecture of a decoder-only transformer (counts; module docstring: the layouts).

    Attributes:
        layers: transformer layers L. hidden: hidden size h. vocab: vocabulary V (``None``: the
            embedding is unknown, only the layers can be counted).
        heads: attention heads a (``None``: query and key/value widths are h, as without GQA).
        kv_heads: key/value heads (GQA/MQA; ``None`` = ``heads``).
        head_dim: size of one head (``None`` = h / heads).
        ffn_hidden: MLP size f (``None`` = 4h).
        mlp: ``gelu`` (two matrices) or the gated ``swiglu``/``geglu`` (three).
        norm: ``layernorm`` (weight and bias) or ``rmsnorm`` (weight).
        bias: whether linear layers have biases.
        tied_embeddings: whether the output layer reuses the word embedding.
        vocab_multiple: V is padded up to a multiple of this (Megatron-LM pads to 128·TP).
        positions: ``learned`` (P·h parameters) or ``rotary`` (none).
        position_count: learned positions P (``None`` = the sequence length, as Eq. 2 counts).
        final_norm: whether a norm follows the last layer.
        dropout: whether dropout masks are kept for backward (activations only).
        experts: routed MLPs per layer E (1 = dense). top_k: experts per token.
        shared_experts: MLPs every token goes through beside the routed ones.
        expert_ffn_hidden: size of one expert's MLP (``None`` = ``ffn_hidden``).
        attention: ``eager`` (scores stored, Korthikanti's s² terms) or ``flash`` (not stored).
    """

    layers: int
    hidden: int
    vocab: int | None = None
    heads: int | None = None
    kv_heads: int | None = None
    head_dim: int | None = None
    ffn_hidden: int | None = None
    mlp: MlpKind = "gelu"
    norm: NormKind = "layernorm"
    bias: bool = True
    tied_embeddings: bool = True
    vocab_multiple: int = 1
    positions: PositionKind = "learned"
    position_count: int | None = None
    final_norm: bool = False
    dropout: bool = True
    experts: int = 1
    top_k: int = 1
    shared_experts: int = 0
    expert_ffn_hidden: int | None = None
    attention: AttentionKernel = "eager"

    @property
    def head_size(self) -> int:
        """Size of one head: ``head_dim``, else h / heads (h without heads)."""
        if self.head_dim is not None:
            return self.head_dim
        return self.hidden // self.heads if self.heads else self.hidden

    @property
    def q_width(self) -> int:
        """Query (and attention output) width: heads × head size (h without heads)."""
        return self.heads * self.head_size if self.heads else self.hidden

    @property
    def kv_width(self) -> int:
        """Key and value width each: kv_heads × head size (the query width without GQA)."""
        if not self.heads:
            return self.hidden
        return (self.kv_heads or self.heads) * self.head_size

    @property
    def ffn(self) -> int:
        """The dense MLP size f."""
        return 4 * self.hidden if self.ffn_hidden is None else self.ffn_hidden

    @property
    def expert_ffn(self) -> int:
        """One expert's MLP size (f when not given)."""
        return self.ffn if self.expert_ffn_hidden is None else self.expert_ffn_hidden

    @property
    def mlp_matrices(self) -> int:
        """Weight matrices in one MLP: 2 for gelu, 3 for a gated MLP."""
        return 2 if self.mlp == "gelu" else 3

    @property
    def padded_vocab(self) -> int:
        """V rounded up to a multiple of ``vocab_multiple`` (0 without a vocabulary)."""
        if self.vocab is None:
            return 0
        return -(-self.vocab // self.vocab_multiple) * self.vocab_multiple

    def as_dict(self) -> dict[str, Any]:
        """Every field by name, for JSON."""
        return {item.name: getattr(self, item.name) for item in fields(self)}

    def linear_layers(self) -> dict[str, tuple[int, int, int, int]]:
        """The linear layers LoRA can adapt, by target name: (d_in, d_out, dense copies,
        routed-expert copies) per transformer layer. ``gate`` exists in a gated MLP only; in an
        MoE layer the MLP targets are each routed expert's and each shared expert's."""
        h, q, kv = self.hidden, self.q_width, self.kv_width
        layers = {"q": (h, q, 1, 0), "k": (h, kv, 1, 0), "v": (h, kv, 1, 0), "o": (q, h, 1, 0)}
        if self.experts > 1:
            f, dense, routed = self.expert_ffn, self.shared_experts, self.experts
        else:
            f, dense, routed = self.ffn, 1, 0
        if self.mlp != "gelu":
            layers["gate"] = (h, f, dense, routed)
        layers["up"] = (h, f, dense, routed)
        layers["down"] = (f, h, dense, routed)
        return layers


def shape_from_fields(values: Mapping[str, Any]) -> ModelShape | None:
    """The :class:`ModelShape` of resolved spec fields (every :data:`SHAPE_FIELDS` key, checked);
    ``None`` when ``layers`` or ``hidden`` is missing."""
    if values.get("layers") is None or values.get("hidden") is None:
        return None
    return ModelShape(**{name: values[name] for name in SHAPE_FIELDS})


@dataclass(frozen=True)
class ModelSize:
    """Parameter counts of a transformer (counts, not bytes).

    Attributes:
        total: all parameters, experts included.
        layers: transformer layers l.
        layer_dense: one layer without its routed MLPs: attention, norms, router, shared experts
            (the whole layer but its MLP in a dense model).
        layer_mlp: one MLP (one routed expert's MLP in an MoE layer).
        experts: routed MLPs per layer (1 for a dense model).
        embedding: word (V·h) plus learned position (P·h) embeddings, on the first stage.
        largest_module: the largest single module (embedding, fused QKV or the first MLP matrix
            with its bias), DeepSpeed's ``largest_layer_params`` (``deepspeed/runtime/zero/
            stage3.py`` ``model_to_params``: the most parameters any one module owns directly).
        formula: the formula with the numbers filled in.
        output_layer: the untied output layer V·h on the last stage (0 when tied).
        final_norm: the final norm's parameters, on the last stage.
        word_embedding: V·h (the copy a tied output layer keeps on the last pipeline stage).
        layer_quantizable: weights of the linear layers of one layer (all experts, router
            included, biases not): what 4-bit QLoRA quantizes.
        expert_layer_quantizable: the routed experts' part of ``layer_quantizable``.
    """

    total: float
    layers: int
    layer_dense: float
    layer_mlp: float
    experts: int
    embedding: float
    largest_module: float
    formula: str
    output_layer: float = 0.0
    final_norm: float = 0.0
    word_embedding: float = 0.0
    layer_quantizable: float = 0.0
    expert_layer_quantizable: float = 0.0

    @property
    def per_layer(self) -> float:
        """Parameters in one layer, all experts' MLPs included."""
        return self.layer_dense + self.experts * self.layer_mlp

    @property
    def expert_params(self) -> float:
        """Parameters in routed expert MLPs over all layers (0 for a dense model)."""
        if self.experts == 1:
            return 0.0
        return self.layers * self.experts * self.layer_mlp


def _is_eq2_layout(shape: ModelShape) -> bool:
    """Whether ``shape`` is Narayanan et al.'s GPT, whose formula text is Eq. 2's."""
    return (
        shape.mlp == "gelu"
        and shape.norm == "layernorm"
        and shape.bias
        and shape.tied_embeddings
        and not shape.final_norm
        and shape.positions == "learned"
        and shape.experts == 1
        and shape.q_width == shape.hidden
        and shape.kv_width == shape.hidden
    )


def shape_param_count(shape: ModelShape, seq: int | None = None) -> ModelSize:
    """Parameters of ``shape``; formula and sources in the module docstring (cached: a sweep
    counts the same shape many times; one entry per interface language, since the formula's
    words are in it).

    Args:
        shape: the architecture; its vocabulary must be given.
        seq: sequence length s, the learned positions when ``shape.position_count`` is None.

    Raises:
        InputError: no vocabulary (field ``vocab``).
    """
    return _shape_param_count(shape, seq, current_language())


@functools.lru_cache(maxsize=1024)
def _shape_param_count(shape: ModelShape, seq: int | None, _language: str) -> ModelSize:
    if shape.vocab is None:
        raise InputError("vocab", _("the parameter count needs the vocabulary size"))
    h = float(shape.hidden)
    q, kv = float(shape.q_width), float(shape.kv_width)
    m = shape.mlp_matrices
    bias = shape.bias
    attention_weights = h * (q + 2 * kv) + q * h
    attention = attention_weights + (q + 2 * kv + h if bias else 0.0)
    norm_each = 2 * h if shape.norm == "layernorm" else h
    norms = 2 * norm_each

    def mlp(f: float) -> float:
        return m * h * f + (((m - 1) * f + h) if bias else 0.0)

    experts = shape.experts
    if experts > 1:
        f = float(shape.expert_ffn)
        router = h * experts + (experts if bias else 0.0)
        layer_mlp = mlp(f)
        layer_dense = attention + norms + router + shape.shared_experts * mlp(f)
        expert_quantizable = experts * m * h * f
        quantizable = (
            attention_weights + expert_quantizable + shape.shared_experts * m * h * f + h * experts
        )
    else:
        f = float(shape.ffn)
        layer_mlp = mlp(f)
        layer_dense = attention + norms
        expert_quantizable = 0.0
        quantizable = attention_weights + m * h * f
    vocab = shape.padded_vocab
    word = vocab * h
    positions = 0
    if shape.positions == "learned":
        positions = shape.position_count if shape.position_count is not None else (seq or 0)
    embedding = word + positions * h
    output = 0.0 if shape.tied_embeddings else word
    final = norm_each if shape.final_norm else 0.0
    layers = shape.layers
    total = layers * (layer_dense + experts * layer_mlp) + embedding + output + final
    qkv = h * (q + 2 * kv) + ((q + 2 * kv) if bias else 0.0)
    fc1 = (m - 1) * (h * f + (f if bias else 0.0))
    largest = max(word, qkv, fc1)
    if _is_eq2_layout(shape):
        hidden = shape.hidden
        formula = (
            f"l·(4h² + 8h + E·(2·h·f + f + h)) + (V + s)·h = {layers}·(4·{hidden}² + 8·{hidden}"
            f" + {experts}·(2·{hidden}·{shape.ffn} + {shape.ffn} + {hidden})) + ({vocab} + "
            f"{positions})·{hidden} = {format_fixed(total, 0)}"
        )
    else:
        formula = _general_formula(shape, layer_dense, layer_mlp, embedding, output, final, total)
    return ModelSize(
        total=total,
        layers=layers,
        layer_dense=layer_dense,
        layer_mlp=layer_mlp,
        experts=experts,
        embedding=embedding,
        largest_module=largest,
        formula=formula,
        output_layer=output,
        final_norm=final,
        word_embedding=word,
        layer_quantizable=quantizable,
        expert_layer_quantizable=expert_quantizable,
    )


def _general_formula(
    shape: ModelShape,
    layer_dense: float,
    layer_mlp: float,
    embedding: float,
    output: float,
    final: float,
    total: float,
) -> str:
    # The formula's symbols are the papers'; its words (biases, experts, output...) are in the
    # interface language.
    h, q, kv, m = shape.hidden, shape.q_width, shape.kv_width, shape.mlp_matrices
    bias = " + " + _("biases") if shape.bias else ""
    norm = "2·2h" if shape.norm == "layernorm" else "2·h"
    if shape.experts > 1:
        mlp = _("{experts} experts").format(experts=shape.experts)
        mlp += f" × {m}·h·f_e{bias} + router h·E"
        if shape.shared_experts:
            mlp += " + " + _("{shared} shared").format(shared=shape.shared_experts)
        f_text = f"f_e={shape.expert_ffn}"
    else:
        mlp = f"MLP {m}·h·f{bias}"
        f_text = f"f={shape.ffn}"
    values = f"L={shape.layers}, h={h}, q={q}, kv={kv}, {f_text}, V={shape.padded_vocab}"
    norms, output_text, final_text = _("norms"), _("output"), _("final norm")
    text = (
        f"L·(attention h·(q + 2kv) + q·h{bias} + {mlp} + {norms} {norm}) + V·h"
        + (" + P·h" if embedding > shape.padded_vocab * h else "")
        + (f" + {output_text} V·h" if output else "")
        + (f" + {final_text}" if final else "")
        + _(" with {values}: {sum}").format(
            values=values,
            sum=f"{shape.layers}·{format_fixed(layer_dense + shape.experts * layer_mlp, 0)} + "
            f"{format_fixed(embedding, 0)}",
        )
    )
    if output:
        text += f" + {format_fixed(output, 0)}"
    if final:
        text += f" + {format_fixed(final, 0)}"
    return f"{text} = {format_fixed(total, 0)}"


def transformer_param_count(
    *,
    layers: int,
    hidden: int,
    vocab: int,
    ffn_hidden: int | None = None,
    seq: int | None = None,
    experts: int = 1,
) -> ModelSize:
    """Parameters of a GPT-layout transformer (Narayanan et al. 2021 Eq. 2 with MLP size f; an
    MoE layer's router counted as Megatron-LM's estimator counts it).

    Args:
        layers: transformer layers l. hidden: hidden size h. vocab: vocabulary V.
        ffn_hidden: MLP hidden size f (default 4h). seq: sequence length s, for learned position
            embeddings (left out when ``None``). experts: MLP copies per layer (MoE).

    Raises:
        InputError: any size not a whole number >= 1 (named by its field).
    """
    shape = ModelShape(
        layers=whole_number("layers", layers),
        hidden=whole_number("hidden", hidden),
        vocab=whole_number("vocab", vocab),
        ffn_hidden=None if ffn_hidden is None else whole_number("ffn_hidden", ffn_hidden),
        experts=whole_number("experts", experts),
    )
    return shape_param_count(shape, None if seq is None else whole_number("seq", seq))
