"""Activation memory of a transformer, per layer and on the most loaded pipeline stage (bytes).

Source: Korthikanti et al. 2022, "Reducing Activation Recomputation in Large Transformer Models"
(arXiv:2205.05198), §4.1 (per-layer breakdown), §4.2 (tensor and sequence parallel), Table 2,
§4.2.3 Eq. 5 (the first 1F1B stage holds p micro-batches of L/p layers), §4.3 (embedding and output
layer). Symbols: s sequence length, b micro-batch size, h hidden size, a attention heads, t TP size,
L layers, p pipeline stages, v virtual stages, V vocabulary.

Table 2 assumes 16-bit activations and 1-byte dropout masks. Its per-layer bytes split as (§4.1):
16-bit tensors 8·sbh kept whole without SP (layer-norm, QKV and MLP inputs), 24·sbh split by t,
4·as²b of attention scores split by t; 1-byte masks 2·sbh kept whole and as²b split by t. For
other activation sizes w (bytes per element) the 16-bit tensors scale by w/2 and the masks stay
1 byte; with w = 2 every row equals Table 2 exactly.

The same §4.1 terms, read for any :class:`~engine.model_size.ModelShape`
(:data:`engine.sources.ACTIVATIONS_GENERAL_SHAPE`): Q and the attention output have width q =
heads·head_dim, K and V width kv = kv_heads·head_dim (GQA), so the split 16-bit tensors are
``w·s·b·(2q + 2kv)`` for attention; a GeLU MLP of size f keeps its GeLU input and output,
``2w·s·b·f``; a gated MLP (SwiGLU, GeGLU: ``down(act(gate(x)) · up(x))``) keeps the gate output, the
activation, the up output and their product, ``4w·s·b·f``; an MoE layer does that for each of its
top-k routed experts and its shared experts (balanced routing: every rank holds as many tokens as a
dense layer). Without dropout the 1-byte masks and the dropout output go (the softmax output alone
feeds both backward paths: ``w·as²b``). With ``flash`` attention no score tensor is stored
(FlashAttention keeps Q, K, V, the output and the a·s·b fp32 log-sum-exp, under 0.1 % of a layer,
left out). For the GPT shape (q = kv = h, f = 4h, GeLU, dropout) this is Table 2 exactly.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Literal, get_args

from engine.checks import MAX_PIPELINE_STAGES, finite_number, one_of, whole_number
from engine.errors import FieldName, InputError
from engine.i18n import gettext as _
from engine.model_size import ModelShape
from engine.units import format_fixed

Recompute = Literal["none", "selective", "full"]
ActivationSchedule = Literal["1f1b", "gpipe"]
"""How the activations of in-flight micro-batches pile up: 1F1B (interleaved with ``v`` > 1) or
GPipe."""
RECOMPUTE_CHOICES: tuple[Recompute, ...] = get_args(Recompute)
SCHEDULE_CHOICES: tuple[ActivationSchedule, ...] = get_args(ActivationSchedule)


@dataclass(frozen=True)
class LayerActivations:
    """Activation bytes one transformer layer keeps for backward, for one micro-batch.

    Attributes:
        bytes: the bytes (>= 0, finite).
        row: the Table 2 row used (e.g. ``"tensor + sequence parallel + selective recompute"``).
        formula: the row's expression and its value with the numbers filled in.
        seq, micro_batch_size, hidden, heads, tp, activation_bytes, sequence_parallel, recompute,
            shape: the validated inputs (s, b, h, a, t, w; :func:`layer_activation_bytes`).
    """

    bytes: float
    row: str
    formula: str
    seq: int
    micro_batch_size: int
    hidden: int
    heads: int
    tp: int
    activation_bytes: float
    sequence_parallel: bool
    recompute: str
    shape: ModelShape | None = None


def _is_table2_shape(shape: ModelShape | None) -> bool:
    """Whether ``shape`` has Table 2's layer: q = kv = h, a GeLU MLP of 4h, dropout, eager."""
    return shape is None or (
        shape.q_width == shape.hidden
        and shape.kv_width == shape.hidden
        and shape.mlp == "gelu"
        and (shape.experts == 1 or (shape.top_k == 1 and shape.shared_experts == 0))
        and (shape.expert_ffn if shape.experts > 1 else shape.ffn) == 4 * shape.hidden
        and shape.dropout
        and shape.attention == "eager"
    )


def layer_activation_bytes(
    *,
    seq: int,
    micro_batch_size: int,
    hidden: int,
    heads: int,
    tp: int = 1,
    sequence_parallel: bool = False,
    recompute: str = "none",
    activation_bytes: float = 2.0,
    shape: ModelShape | None = None,
) -> LayerActivations:
    """Per-layer activation bytes, Korthikanti et al. 2022 Table 2 (see the module docstring).

    Rows: no parallelism s·b·h·(34 + 5·a·s/h); TP s·b·h·(10 + 24/t + 5·a·s/(h·t)); TP + SP
    s·b·h·(34/t + 5·a·s/(h·t)); selective recompute drops the 5·a·s/h attention-score term;
    full recompute keeps only the layer input, 2·s·b·h.

    Args:
        micro_batch_size: samples per micro-batch b (Megatron-LM's ``micro_batch_size``).
        activation_bytes: bytes per activation element w (2 for bf16/fp16, 4 for fp32).
        shape: the architecture (GQA, MLP size and kind, dropout, attention kernel, experts);
            ``None`` is Table 2's GPT layer. Its hidden size and heads must be ``hidden`` and
            ``heads``.

    Raises:
        InputError: a size that is not a whole number >= 1; ``tp`` not dividing ``heads`` (or
            the key/value heads); ``heads`` not dividing ``hidden`` (without a head size); an
            unknown ``recompute``.
    """
    s = whole_number("seq", seq)
    b = whole_number("micro_batch_size", micro_batch_size)
    h = whole_number("hidden", hidden)
    a = whole_number("heads", heads)
    t = whole_number("tp", tp)
    w = finite_number("activation_bytes", activation_bytes, maximum=8.0)
    one_of("recompute", recompute, RECOMPUTE_CHOICES)
    if h % a and (shape is None or shape.head_dim is None):
        raise InputError(
            "heads",
            _("must divide {field} ({hidden}); {heads} heads do not"),
            field=FieldName("hidden"),
            hidden=h,
            heads=a,
        )
    if a % t:
        raise InputError(
            "tp",
            _("must divide {field} ({heads}); TP {tp} does not"),
            field=FieldName("heads"),
            heads=a,
            tp=t,
        )
    if shape is not None and shape.kv_heads is not None and shape.kv_heads % t:
        raise InputError(
            "tp",
            _("must divide the key/value heads ({kv_heads}); TP {tp} does not").format(
                kv_heads=shape.kv_heads, tp=t
            ),
        )
    sbh = float(s) * b * h
    if recompute == "full":
        value = w * sbh
    elif _is_table2_shape(shape):
        kept_whole = 4 * w + 2
        whole_part = kept_whole / t if sequence_parallel else kept_whole
        value = sbh * (whole_part + 12 * w / t)
        if recompute != "selective":
            value += float(a) * s * s * b * (2 * w + 1) / t
    else:
        assert shape is not None
        whole, split, score = _general_terms(shape, w)
        sb = float(s) * b
        value = sb * (whole * h / (t if sequence_parallel else 1) + split / t)
        if recompute != "selective":
            value += float(a) * s * s * b * score / t
    if recompute != "full" and not _is_table2_shape(shape):
        assert shape is not None
        row, formula = _general_row(value, s, b, h, a, t, w, sequence_parallel, recompute, shape)
    else:
        row, formula = _table2_row(value, s, b, h, a, t, w, sequence_parallel, recompute)
    return LayerActivations(
        value, row, formula, s, b, h, a, t, w, sequence_parallel, recompute, shape
    )


def _general_terms(shape: ModelShape, w: float) -> tuple[float, float, float]:
    """(bytes per token per hidden unit kept whole, bytes per token split by TP, bytes per
    a·s²·b of stored scores) for ``shape`` (module docstring)."""
    masks = 2.0 if shape.dropout else 0.0
    whole = 4 * w + masks
    inner = (2 if shape.mlp == "gelu" else 4) * w
    if shape.experts > 1:
        mlp = inner * shape.expert_ffn * (shape.top_k + shape.shared_experts)
    else:
        mlp = inner * shape.ffn
    split = w * (2 * shape.q_width + 2 * shape.kv_width) + mlp
    # Eager attention keeps the softmax output (and with dropout its mask and output).
    score = 0.0 if shape.attention == "flash" else (2 * w + 1 if shape.dropout else w)
    return whole, split, score


def _table2_row(
    value: float,
    s: int,
    b: int,
    h: int,
    a: int,
    t: int,
    w: float,
    sequence_parallel: bool,
    recompute: str,
) -> tuple[str, str]:
    """The Table 2 row of a layer and its formula text."""
    if recompute == "full":
        formula = (
            f"{_coef(w)}·s·b·h "
            + _("(layer input only)")
            + _(" with {values}").format(values=f"s={s}, b={b}, h={h}")
            + f" = {_num(value)}"
        )
        return "full recompute", formula
    kept_whole = 4 * w + 2
    split = 12 * w
    score_bytes = 2 * w + 1
    sp = " + sequence parallel" if sequence_parallel else ""
    parallel = "no parallelism" if t == 1 and not sequence_parallel else "tensor parallel" + sp
    if w == 2.0 and not sequence_parallel:
        head = "s·b·h·(34" if t == 1 else f"s·b·h·(10 + 24/{t}"
    elif w == 2.0:
        head = f"s·b·h·(34/{t}"
    else:
        whole_text = f"{_coef(kept_whole)}/{t}" if sequence_parallel else _coef(kept_whole)
        head = f"s·b·h·({whole_text} + {_coef(split)}/{t}"
    if recompute == "selective":
        formula = f"{head})"
        row = f"{parallel} + selective recompute" if parallel != "no parallelism" else "selective"
    else:
        formula = f"{head} + {_coef(score_bytes)}·a·s/(h·{t}))"
        row = parallel
    values = f"s={s}, b={b}, h={h}, a={a}, t={t}"
    if w != 2.0:
        values += _("; {bytes}-byte activations, 1-byte dropout masks").format(bytes=f"{w:g}")
    where = _(" with {values}").format(values=values)
    return row, f"{formula}{where} = {_num(value)}"


def _general_row(
    value: float,
    s: int,
    b: int,
    h: int,
    a: int,
    t: int,
    w: float,
    sequence_parallel: bool,
    recompute: str,
    shape: ModelShape,
) -> tuple[str, str]:
    """The row of a layer of any shape (the §4.1 terms read for it) and its formula text."""
    whole, _split, score = _general_terms(shape, w)
    sp = " + sequence parallel" if sequence_parallel else ""
    parallel = "no parallelism" if t == 1 and not sequence_parallel else "tensor parallel" + sp
    kernel = "flash attention" if shape.attention == "flash" else "eager attention"
    row = f"{parallel}, {kernel}" + (", selective recompute" if recompute == "selective" else "")
    inner = "2w·f" if shape.mlp == "gelu" else "4w·f"
    if shape.experts > 1:
        inner = f"(k {shape.top_k} + shared {shape.shared_experts})·{inner}_e"
    whole_text = f"{_coef(whole)}·h" + (f"/{t}" if sequence_parallel else "")
    formula = f"s·b·({whole_text} + (w·(2q + 2kv) + {inner})/{t})"
    if recompute != "selective" and score:
        formula += f" + {_coef(score)}·a·s²·b/{t}"
    f_value = shape.expert_ffn if shape.experts > 1 else shape.ffn
    values = (
        f"s={s}, b={b}, h={h}, a={a}, t={t}, w={w:g}, q={shape.q_width}, "
        f"kv={shape.kv_width}, f={f_value}" + ("" if shape.dropout else _(", no dropout"))
    )
    where = _(" with {values}").format(values=values)
    return row, f"{formula}{where} = {_num(value)}"


@dataclass(frozen=True)
class StageActivations:
    """Activation bytes held by the most loaded pipeline stage (the first one) at its peak.

    Attributes:
        per_layer: one layer, one micro-batch (Table 2).
        layers_on_stage: layers on the first stage: ceil(L/p) (uneven stages put the extra layers
            first, so this stage is the heaviest).
        in_flight: micro-batches whose activations the stage holds at once.
        interleave_factor: 1 + (p-1)/(p·v) for interleaved 1F1B, else 1.
        layers_bytes: per_layer · layers_on_stage · in_flight · interleave_factor / cp.
        extra_bytes: input-embedding dropout mask, plus the output layer and loss when p = 1.
        total: layers_bytes + extra_bytes.
        formula: the whole computation with the numbers filled in.
        notes: what a reader should know (uneven stages, defaults taken).
        pp, cp, virtual_stages, schedule, num_microbatches, vocab: the validated inputs (p, c, v;
            m ``None`` when not given; V ``None`` when not given).
        split: t with sequence parallelism, else 1 (the embedding's share of a rank).
        dropout: whether the embedding's dropout mask is kept.
    """

    per_layer: LayerActivations
    layers_on_stage: int
    in_flight: int
    interleave_factor: float
    layers_bytes: float
    extra_bytes: float
    total: float
    formula: str
    notes: tuple[str, ...]
    pp: int
    cp: int
    virtual_stages: int
    schedule: str
    num_microbatches: int | None
    vocab: int | None
    split: int
    dropout: bool


def stage_activation_bytes(
    *,
    seq: int,
    micro_batch_size: int,
    hidden: int,
    heads: int,
    layers: int,
    vocab: int | None = None,
    tp: int = 1,
    pp: int = 1,
    cp: int = 1,
    sequence_parallel: bool = False,
    recompute: str = "none",
    schedule: str = "1f1b",
    num_microbatches: int | None = None,
    virtual_stages: int = 1,
    activation_bytes: float = 2.0,
    shape: ModelShape | None = None,
) -> StageActivations:
    """Peak activation bytes on the first pipeline stage of one model replica (per rank).

    Per-layer bytes (Table 2) times the layers on the stage, times the micro-batches in flight
    (1F1B: min(m, p), Korthikanti Eq. 5; GPipe: all m; no pipeline: 1 with 1F1B-style gradient
    accumulation), times 1 + (p-1)/(p·v) for interleaving, divided by CP (each CP rank keeps its
    1/cp of the sequence). Embedding and output-layer activations (§4.3) are added when ``vocab``
    is given. ``micro_batch_size`` is the micro-batch size b, ``num_microbatches`` the number of
    micro-batches m per step (Megatron-LM's ``num_microbatches``); ``None`` means m = p.
    ``shape`` as in :func:`layer_activation_bytes` (without dropout no embedding dropout mask is
    kept).

    Raises:
        InputError: bad sizes (see :func:`layer_activation_bytes`); ``pp`` above ``layers``;
            ``schedule`` unknown; ``virtual_stages`` > 1 without 1F1B or without pipeline stages,
            with fewer than p·v layers, or with m not a multiple of p (Narayanan et al. 2021
            §2.2.2).
    """
    per_layer = layer_activation_bytes(
        seq=seq,
        micro_batch_size=micro_batch_size,
        hidden=hidden,
        heads=heads,
        tp=tp,
        sequence_parallel=sequence_parallel,
        recompute=recompute,
        activation_bytes=activation_bytes,
        shape=shape,
    )
    n_layers = whole_number("layers", layers)
    p = whole_number("pp", pp, maximum=MAX_PIPELINE_STAGES)
    c = whole_number("cp", cp)
    v = whole_number("virtual_stages", virtual_stages)
    t = whole_number("tp", tp)
    m = None if num_microbatches is None else whole_number("num_microbatches", num_microbatches)
    one_of("schedule", schedule, SCHEDULE_CHOICES)
    if p > n_layers:
        raise InputError(
            "pp",
            _("{p} stages need at least {p} layers; the model has {n_layers}").format(
                p=p, n_layers=n_layers
            ),
        )
    notes: list[str] = []
    factor = 1.0
    if v > 1:
        if schedule != "1f1b":
            raise InputError("virtual_stages", _("interleaving applies to the 1F1B schedule only"))
        if p == 1:
            raise InputError("virtual_stages", _("interleaving needs more than one pipeline stage"))
        if p * v > n_layers:
            raise InputError(
                "virtual_stages",
                _("p·v = {chunks} chunks exceed {n_layers} layers").format(
                    chunks=p * v, n_layers=n_layers
                ),
            )
        if m is not None and m % p:
            raise InputError(
                "num_microbatches", _("interleaved 1F1B needs m a multiple of p = {p}").format(p=p)
            )
        factor = 1 + (p - 1) / (p * v)
    layers_on_stage = math.ceil(n_layers / p)
    if n_layers % p:
        notes.append(uneven_stages_note(n_layers, p))
    if p == 1 and schedule == "1f1b":
        in_flight = 1
    elif schedule == "gpipe":
        in_flight = p if m is None else m
        if m is None:
            notes.append(_("micro-batches not given: GPipe taken with m = p = {p}").format(p=p))
    else:
        in_flight = p if m is None else min(m, p)
    layers_bytes = per_layer.bytes * layers_on_stage * in_flight * factor / c
    extra = 0.0
    split = t if sequence_parallel else 1
    dropout = shape is None or shape.dropout
    vocab_size: int | None = None
    if vocab is not None:
        vocab_size = whole_number("vocab", vocab)
        sbh = float(per_layer.seq) * per_layer.micro_batch_size * per_layer.hidden
        embedding = sbh / split * in_flight * factor / c if dropout else 0.0
        extra = embedding
        if p == 1:
            logits = 4 * float(per_layer.seq) * per_layer.micro_batch_size * vocab_size / t
            extra += (2 * per_layer.activation_bytes * sbh / split + logits) * in_flight / c
    else:
        notes.append(_("vocab not given: embedding and output-layer activations left out"))
    formula = _(
        "per layer {bytes} × {layers} layers on stage × {in_flight} micro-batches in flight "
        "({schedule})"
    ).format(
        bytes=_num(per_layer.bytes), layers=layers_on_stage, in_flight=in_flight, schedule=schedule
    )
    if v > 1:
        formula += f" × (1 + ({p}-1)/({p}·{v})) = ×{factor:.4g} " + _("interleaving")
    if c > 1:
        formula += f" / cp {c}"
    formula += f" = {_num(layers_bytes)}"
    if vocab_size is not None:
        if dropout:
            formula += (
                _("; ")
                + _("embedding dropout mask")
                + (f" s·b·h{'/t' if split > 1 else ''}·{in_flight}")
            )
        else:
            formula += _("; ") + _("no embedding dropout mask (no dropout)")
        if p == 1:
            formula += " + " + _("output layer and fp32 logits") + " (2w·s·b·h + 4·s·b·V/t)"
        formula += f" = {_num(extra)}"
    return StageActivations(
        per_layer=per_layer,
        layers_on_stage=layers_on_stage,
        in_flight=in_flight,
        interleave_factor=factor,
        layers_bytes=layers_bytes,
        extra_bytes=extra,
        total=layers_bytes + extra,
        formula=formula,
        notes=tuple(notes),
        pp=p,
        cp=c,
        virtual_stages=v,
        schedule=schedule,
        num_microbatches=m,
        vocab=vocab_size,
        split=split,
        dropout=dropout,
    )


def uneven_stages_note(n_layers: int, p: int) -> str:
    """The note that ``n_layers`` layers do not divide evenly over ``p`` pipeline stages."""
    return _(
        "{layers} layers on {stages} stages are uneven: the first stage has {first} layers, "
        "the heaviest; figures are for it"
    ).format(layers=n_layers, stages=p, first=math.ceil(n_layers / p))


def stage_layer_counts(layers: int, pp: int) -> list[int]:
    """Layers on each of ``pp`` stages: the L mod p extra layers on the first stages."""
    base, extra = divmod(layers, pp)
    return [base + (1 if i < extra else 0) for i in range(pp)]


def per_stage_activation_bytes(stage: StageActivations, layer_counts: list[int]) -> list[float]:
    """Peak activation bytes of each pipeline stage, first stage first (its figure is
    ``stage.total``).

    Stage i of p holds min(m, p - i) micro-batches with 1F1B (Korthikanti et al. §4.2.3), all m
    with GPipe; interleaved, the equivalent of p + (p - 2i - 1)/v micro-batches of its layers
    (:data:`engine.sources.ACTIVATIONS_INTERLEAVED_STAGE`; p·(1 + (p-1)/(p·v)) on the first
    stage). The first stage keeps the embedding's dropout mask, the last the output layer's input
    and fp32 logits for the micro-batches it holds (§4.3).
    """
    p, c, v = stage.pp, stage.cp, stage.virtual_stages
    per_layer = stage.per_layer
    m = stage.num_microbatches
    totals = [stage.total]
    for i in range(1, p):
        if stage.schedule == "gpipe":
            held = float(p if m is None else m)
        elif v > 1:
            held = p + (p - 2 * i - 1) / v
        else:
            held = float(p - i if m is None else min(m, p - i))
        total = per_layer.bytes * layer_counts[i] * held / c
        if i == p - 1 and stage.vocab is not None:
            last = float(p if m is None else m) if stage.schedule == "gpipe" else 1.0
            w, t, split = per_layer.activation_bytes, per_layer.tp, stage.split
            sbh = float(per_layer.seq) * per_layer.micro_batch_size * per_layer.hidden
            logits = 4 * float(per_layer.seq) * per_layer.micro_batch_size * stage.vocab / t
            total += (2 * w * sbh / split + logits) * last / c
        totals.append(total)
    return totals


def _coef(value: float) -> str:
    return f"{value:g}"


def _num(value: float) -> str:
    return f"{format_fixed(value, 0)} B"
