"""A real model's training memory, measured in torch, beside :func:`engine.ledger.compute_ledger`.

:func:`measure_memory` builds a GPT-style model exactly as Narayanan et al. 2021 (arXiv:2104.04473)
§5.1 Eq. 2 counts it (:data:`engine.sources.PARAM_COUNT`): learned position embeddings,
pre-LayerNorm layers with biases, MLP hidden size 4h, GeLU, the output layer tied to the word
embedding, and no final layer norm (Eq. 2 has none). It runs one AdamW training step and measures,
in bytes:

- parameters, gradients: ``numel x element_size`` of every parameter and its ``.grad``;
- optimizer states: every tensor in ``optimizer.state``, split into the per-element states
  (``exp_avg``, ``exp_avg_sq``) and AdamW's ``step`` counters (one 4-byte float per parameter
  tensor, which no ledger counts);
- saved activations: every tensor autograd saves for backward, through
  ``torch.autograd.graph.saved_tensors_hooks``, each storage counted once (views and re-saves of a
  storage add nothing) and parameters left out (they are the parameter term). The forward pass is
  split into the regions of Korthikanti et al. 2022 (arXiv:2205.05198) §4.1, so each measured
  region stands beside the formula's term for it.

To meet the formula's assumptions, dropout (p = 0.1) is ``torch.native_dropout``, whose mask is 1
byte per element as on CUDA (``F.dropout`` on the CPU saves a noise tensor of the activation
dtype instead), attention is written out (no fused kernel), the causal mask is added (an addition
saves nothing), and the loss is computed on fp32 logits (§4.3: 4·s·b·V bytes).

Ledger spec chosen to match what torch does (:func:`ledger_spec_for`): an fp32 model keeps fp32
params 4 B, grads 4 B and AdamW's two fp32 states 8 B (no master weights); a bf16 model trained
directly in bf16 keeps params 2 B, grads 2 B and AdamW's states in the parameter dtype, 2 + 2 B,
and has no fp32 master weights (``optimizer_bytes = 4``, the ZeRO paper's K without master).
"""

from __future__ import annotations

import math
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from engine import sources
from engine.checks import one_of, whole_number
from engine.errors import InputError
from engine.i18n import N_
from engine.i18n import gettext as _
from engine.lab import LabError, require_torch
from engine.ledger import LedgerResult, LedgerSpec, compute_ledger

DTYPES = ("fp32", "bf16")
DEVICES = ("cpu", "cuda")
DROPOUT = 0.1
MAX_ELEMENTS = 2 * 10**8
SOURCE = sources.ACTIVATIONS_MEASURED_REGIONS


@dataclass(frozen=True)
class MemorySpec:
    """The model and batch. Sizes are counts; ``dtype`` is the parameter and activation dtype."""

    layers: int = 2
    hidden: int = 64
    heads: int = 4
    seq: int = 64
    micro_batch_size: int = 2
    vocab: int = 128
    dtype: str = "fp32"
    device: str = "cpu"
    seed: int = 0


@dataclass(frozen=True)
class ActivationTerm:
    """One line of the saved-activation comparison.

    Attributes:
        name: the region, e.g. ``"layer: GeLU input"``; per-layer lines are summed over layers.
        formula_bytes: what Korthikanti §4.1/§4.3 counts for it (0: not counted).
        measured_bytes: the storages autograd saved in that region, each counted once.
        saved: what was saved, ``dtype[shape]`` per storage (one layer's, for per-layer lines).
        note: why the two differ, where they do.
    """

    name: str
    formula_bytes: float
    measured_bytes: int
    saved: tuple[str, ...]
    note: str = ""

    @property
    def difference(self) -> float:
        """measured - formula, bytes."""
        return self.measured_bytes - self.formula_bytes


@dataclass(frozen=True)
class ModelStateTerm:
    """A model-state line: ``params``, ``grads``, ``optimizer_states`` or ``optimizer_steps``."""

    name: str
    measured_bytes: int
    ledger_bytes: float
    note: str

    @property
    def difference(self) -> float:
        """measured - ledger, bytes."""
        return self.measured_bytes - self.ledger_bytes


@dataclass(frozen=True)
class MemoryResult:
    """The measurement beside the ledger.

    Attributes:
        spec: what was built.
        ledger: :func:`compute_ledger` of :func:`ledger_spec_for` ``(spec)``.
        ledger_note: why that ledger spec matches this model.
        param_count: parameters counted by torch (equals the ledger's N).
        model_states: params, grads, optimizer states, step counters.
        activations: per-region lines; their ``formula_bytes`` sum to the ledger's activations.
        activations_measured: all saved bytes (sum of ``measured_bytes``).
        cuda_max_allocated_bytes: ``torch.cuda.max_memory_allocated`` over the step on CUDA;
            ``None`` on the CPU.
        loss: the step's loss (a sanity figure: about ln V for a fresh model).
        torch_version: the torch that ran.
    """

    spec: MemorySpec
    ledger: LedgerResult
    ledger_note: str
    param_count: int
    model_states: tuple[ModelStateTerm, ...]
    activations: tuple[ActivationTerm, ...]
    activations_measured: int
    cuda_max_allocated_bytes: int | None
    loss: float
    torch_version: str
    notes: tuple[str, ...] = field(default=())

    def as_dict(self) -> dict[str, Any]:
        """The JSON object of ``shardbook lab memory --json`` (bytes)."""
        spec = self.spec
        return {
            "spec": {
                "layers": spec.layers,
                "hidden": spec.hidden,
                "heads": spec.heads,
                "seq": spec.seq,
                "micro_batch": spec.micro_batch_size,
                "vocab": spec.vocab,
                "dtype": spec.dtype,
                "device": spec.device,
            },
            "param_count": self.param_count,
            "ledger_note": self.ledger_note,
            "model_states": [
                {
                    "name": t.name,
                    "measured_bytes": t.measured_bytes,
                    "ledger_bytes": t.ledger_bytes,
                    "difference": t.difference,
                    "note": t.note,
                }
                for t in self.model_states
            ],
            "activations": {
                "measured_bytes": self.activations_measured,
                "ledger_bytes": self.ledger.per_rank_bytes["activations"],
                "terms": [
                    {
                        "name": t.name,
                        "formula_bytes": t.formula_bytes,
                        "measured_bytes": t.measured_bytes,
                        "difference": t.difference,
                        "saved": list(t.saved),
                        "note": t.note,
                    }
                    for t in self.activations
                ],
            },
            "cuda_max_allocated_bytes": self.cuda_max_allocated_bytes,
            "loss": self.loss,
            "torch": self.torch_version,
            "ledger": self.ledger.as_dict(),
            "notes": list(self.notes),
        }


def check_spec(spec: MemorySpec) -> MemorySpec:
    """Validate ``spec``.

    Raises:
        InputError: a size not a whole number >= 1 (named by its field); ``heads`` not dividing
            ``hidden``; ``dtype`` not fp32/bf16; ``device`` not cpu/cuda; a model or batch too
            large for a lab run (over 2e8 elements in one tensor).
    """
    for name in ("layers", "hidden", "heads", "seq", "micro_batch_size", "vocab"):
        whole_number(name, getattr(spec, name))
    if isinstance(spec.seed, bool) or not isinstance(spec.seed, int) or spec.seed < 0:
        raise InputError("seed", _("must be a whole number, 0 or more"))
    if spec.hidden % spec.heads:
        raise InputError(
            "heads",
            _("must divide hidden ({hidden}); {heads} do not").format(
                hidden=spec.hidden, heads=spec.heads
            ),
        )
    one_of("dtype", spec.dtype, DTYPES)
    one_of("device", spec.device, DEVICES)
    largest = max(
        spec.heads * spec.seq * spec.seq * spec.micro_batch_size,
        spec.seq * spec.micro_batch_size * spec.vocab,
        4 * spec.hidden * spec.hidden,
        spec.vocab * spec.hidden,
    )
    if largest > MAX_ELEMENTS:
        raise InputError("hidden", _("the model or batch is too large for a lab run; use smaller"))
    return spec


def ledger_spec_for(spec: MemorySpec) -> tuple[LedgerSpec, str]:
    """The :class:`LedgerSpec` that describes what torch does with ``spec``, and why."""
    common: dict[str, Any] = {
        "layers": spec.layers,
        "hidden": spec.hidden,
        "heads": spec.heads,
        "vocab": spec.vocab,
        "seq": spec.seq,
        "micro_batch_size": spec.micro_batch_size,
        "optimizer": "adamw",
        "master_weights": False,
    }
    if spec.dtype == "fp32":
        note = N_(
            "fp32 model, plain AdamW: params 4 B, grads 4 B, exp_avg + exp_avg_sq 4 + 4 B, no "
            "master weights (ledger dtype fp32, master weights off)"
        )
        return LedgerSpec(dtype="fp32", **common), note
    note = N_(
        "bf16 model trained in bf16, no fp32 master weights: params 2 B, grads 2 B; torch's "
        "AdamW keeps exp_avg and exp_avg_sq in the parameter dtype, 2 + 2 B (ledger dtype bf16, "
        "master weights off, optimizer bytes K = 4). Mixed precision would keep fp32 master "
        "weights and states instead (K = 12)."
    )
    return LedgerSpec(dtype="bf16", optimizer_bytes=4.0, **common), note


# ----------------------------------------------------------------------------------------------
# The formula's terms, region by region (Korthikanti §4.1 with w bytes per activation element)

# (region, formula coefficient of s·b·h, of a·s²·b, measured region counted per layer, note)
_LAYER_TERMS: tuple[tuple[str, str, float, float, str], ...] = (
    ("ln1", N_("layer norm 1 input"), 1, 0, ""),
    ("qkv", N_("QKV projection input"), 1, 0, ""),
    ("qk", N_("Q and K for QKᵀ"), 2, 0, ""),
    ("softmax", N_("softmax output"), 0, 1, ""),
    ("attn_drop", N_("attention dropout mask (1 B)"), 0, 0, ""),
    ("av", N_("dropout output and V"), 1, 1, ""),
    ("proj", N_("output projection input"), 1, 0, ""),
    ("proj_drop", N_("projection dropout mask (1 B)"), 0, 0, ""),
    ("ln2", N_("layer norm 2 input"), 1, 0, ""),
    ("fc1", N_("MLP first linear input"), 1, 0, ""),
    ("gelu", N_("GeLU input (4h)"), 4, 0, ""),
    ("fc2", N_("MLP second linear input (4h)"), 4, 0, ""),
    ("mlp_drop", N_("MLP dropout mask (1 B)"), 0, 0, ""),
)
_MASKS = {"attn_drop": (0.0, 1.0), "proj_drop": (1.0, 0.0), "mlp_drop": (1.0, 0.0)}
_LAYER_NORM_NOTE = N_(
    "native_layer_norm also saves its mean and 1/std, s·b values each; §4.1 leaves them out"
)


def _formula_bytes(region: str, spec: MemorySpec, w: float) -> float:
    sbh = float(spec.seq) * spec.micro_batch_size * spec.hidden
    scores = float(spec.heads) * spec.seq * spec.seq * spec.micro_batch_size
    if region in _MASKS:
        per_sbh, per_score = _MASKS[region]
        return per_sbh * sbh + per_score * scores
    for key, _label, k_sbh, k_scores, _note in _LAYER_TERMS:
        if key == region:
            return w * (k_sbh * sbh + k_scores * scores)
    raise KeyError(region)


# ----------------------------------------------------------------------------------------------
# Measurement


class _Recorder:
    """A pack hook that attributes each newly saved storage to the region running."""

    def __init__(self, param_storages: set[int]) -> None:
        self.param_storages = param_storages
        self.region = "other"
        self.owner: dict[int, str] = {}
        self.bytes: dict[str, int] = {}
        self.saved: dict[str, list[str]] = {}

    @contextmanager
    def within(self, region: str) -> Iterator[None]:
        previous, self.region = self.region, region
        try:
            yield
        finally:
            self.region = previous

    def pack(self, tensor: Any) -> Any:
        storage = tensor.untyped_storage()
        key = storage.data_ptr()
        if key in self.param_storages or (key and key in self.owner):
            return tensor
        if key:
            self.owner[key] = self.region
        size = int(storage.nbytes())
        self.bytes[self.region] = self.bytes.get(self.region, 0) + size
        dtype = str(tensor.dtype).removeprefix("torch.")
        self.saved.setdefault(self.region, []).append(f"{dtype}{list(tensor.shape)}")
        return tensor


def _build(torch: Any, spec: MemorySpec, dtype: Any, device: str) -> dict[str, Any]:
    """Parameters of the model in the module docstring, GPT-2 initialisation (std 0.02)."""
    generator = torch.Generator().manual_seed(spec.seed)
    h, f = spec.hidden, 4 * spec.hidden

    def normal(*shape: int) -> Any:
        return torch.randn(*shape, generator=generator) * 0.02

    raw: dict[str, Any] = {"wte": normal(spec.vocab, h), "wpe": normal(spec.seq, h)}
    for i in range(spec.layers):
        raw |= {
            f"{i}.ln1.w": torch.ones(h),
            f"{i}.ln1.b": torch.zeros(h),
            f"{i}.qkv.w": normal(3 * h, h),
            f"{i}.qkv.b": torch.zeros(3 * h),
            f"{i}.proj.w": normal(h, h),
            f"{i}.proj.b": torch.zeros(h),
            f"{i}.ln2.w": torch.ones(h),
            f"{i}.ln2.b": torch.zeros(h),
            f"{i}.fc1.w": normal(f, h),
            f"{i}.fc1.b": torch.zeros(f),
            f"{i}.fc2.w": normal(h, f),
            f"{i}.fc2.b": torch.zeros(h),
        }
    return {
        name: torch.nn.Parameter(value.to(device=device, dtype=dtype))
        for name, value in raw.items()
    }


def _forward(
    torch: Any, p: dict[str, Any], tokens: Any, targets: Any, spec: MemorySpec, rec: _Recorder
) -> Any:
    functional = torch.nn.functional
    b, s = tokens.shape
    h, a = spec.hidden, spec.heads
    d = h // a

    def dropout(x: Any) -> Any:
        return torch.native_dropout(x, DROPOUT, True)[0]

    causal = torch.full((s, s), float("-inf"), device=tokens.device, dtype=p["wte"].dtype)
    causal = torch.triu(causal, diagonal=1)
    positions = torch.arange(s, device=tokens.device)
    with rec.within("embedding"):
        x = functional.embedding(tokens, p["wte"]) + functional.embedding(positions, p["wpe"])
    with rec.within("embedding_drop"):
        x = dropout(x)
    for i in range(spec.layers):

        def region(name: str, layer: int = i) -> Any:
            return rec.within(f"{layer}.{name}")

        with region("ln1"):
            y = functional.layer_norm(x, (h,), p[f"{i}.ln1.w"], p[f"{i}.ln1.b"])
        with region("qkv"):
            qkv = functional.linear(y, p[f"{i}.qkv.w"], p[f"{i}.qkv.b"])
        q, k, v = (t.view(b, s, a, d).transpose(1, 2) for t in qkv.split(h, dim=-1))
        with region("qk"):
            scores = torch.matmul(q, k.transpose(-2, -1)) * (1.0 / math.sqrt(d))
        with region("softmax"):
            probs = torch.softmax(scores + causal, dim=-1)
        with region("attn_drop"):
            probs = dropout(probs)
        with region("av"):
            context = torch.matmul(probs, v)
        context = context.transpose(1, 2).reshape(b, s, h)
        with region("proj"):
            out = functional.linear(context, p[f"{i}.proj.w"], p[f"{i}.proj.b"])
        with region("proj_drop"):
            x = x + dropout(out)
        with region("ln2"):
            y = functional.layer_norm(x, (h,), p[f"{i}.ln2.w"], p[f"{i}.ln2.b"])
        with region("fc1"):
            y = functional.linear(y, p[f"{i}.fc1.w"], p[f"{i}.fc1.b"])
        with region("gelu"):
            y = functional.gelu(y)
        with region("fc2"):
            y = functional.linear(y, p[f"{i}.fc2.w"], p[f"{i}.fc2.b"])
        with region("mlp_drop"):
            x = x + dropout(y)
    with rec.within("output"):
        logits = functional.linear(x, p["wte"])
    with rec.within("loss"):
        loss = functional.cross_entropy(logits.float().view(b * s, -1), targets.view(b * s))
    return loss


def measure_memory(spec: MemorySpec | None = None) -> MemoryResult:
    """Build the model of ``spec``, run one AdamW step, measure; see the module docstring.

    Returns:
        A :class:`MemoryResult`: every figure in bytes, beside the ledger of
        :func:`ledger_spec_for` ``(spec)``.

    Raises:
        InputError: as :func:`check_spec`, or ``device`` cuda without a CUDA device.
        LabError: torch is not installed.
    """
    spec = check_spec(spec or MemorySpec())
    ledger_spec, ledger_note = ledger_spec_for(spec)
    ledger = compute_ledger(ledger_spec)
    require_torch()
    import torch

    if spec.device == "cuda" and not torch.cuda.is_available():
        raise InputError("device", _("CUDA is not available on this machine; use cpu"))
    dtype = torch.float32 if spec.dtype == "fp32" else torch.bfloat16
    if spec.device == "cuda":
        torch.cuda.reset_peak_memory_stats()
    params = _build(torch, spec, dtype, spec.device)
    generator = torch.Generator().manual_seed(spec.seed + 1)
    tokens = torch.randint(
        0, spec.vocab, (spec.micro_batch_size, spec.seq + 1), generator=generator
    )
    tokens = tokens.to(spec.device)
    inputs, targets = tokens[:, :-1].contiguous(), tokens[:, 1:].contiguous()
    optimizer = torch.optim.AdamW(list(params.values()), lr=1e-3)
    storages = {int(t.untyped_storage().data_ptr()) for t in params.values()}
    recorder = _Recorder(storages)
    torch.manual_seed(spec.seed)
    try:
        with torch.autograd.graph.saved_tensors_hooks(recorder.pack, lambda t: t):
            loss = _forward(torch, params, inputs, targets, spec, recorder)
        loss.backward()
        optimizer.step()
    except RuntimeError as error:
        raise LabError(
            _("the training step failed: {error}").format(error=str(error).splitlines()[0])
        ) from None
    cuda_peak = int(torch.cuda.max_memory_allocated()) if spec.device == "cuda" else None

    def nbytes(t: Any) -> int:
        return int(t.numel()) * int(t.element_size())

    param_count = sum(int(t.numel()) for t in params.values())
    param_bytes = sum(nbytes(t) for t in params.values())
    grad_bytes = sum(nbytes(t.grad) for t in params.values() if t.grad is not None)
    state_bytes = step_bytes = step_tensors = 0
    for parameter, state in optimizer.state.items():
        for value in state.values():
            if not torch.is_tensor(value):
                continue
            if value.shape == parameter.shape:
                state_bytes += nbytes(value)
            else:
                step_bytes += nbytes(value)
                step_tensors += 1
    per_rank = ledger.per_rank_bytes
    model_states = (
        ModelStateTerm("params", param_bytes, per_rank["params"], ""),
        ModelStateTerm("grads", grad_bytes, per_rank["grads"], ""),
        ModelStateTerm(
            "optimizer_states",
            state_bytes,
            per_rank["master_weights"] + per_rank["optimizer_states"],
            _("exp_avg and exp_avg_sq (ledger: master weights + optimizer states)"),
        ),
        ModelStateTerm(
            "optimizer_steps",
            step_bytes,
            0.0,
            _(
                "AdamW's 'step' counter: {count} scalar tensors, one per parameter tensor; "
                "bookkeeping no ledger counts"
            ).format(count=step_tensors),
        ),
    )
    activations = _activation_terms(spec, recorder, 4.0 if spec.dtype == "fp32" else 2.0)
    measured = sum(t.measured_bytes for t in activations)
    formula_total = math.fsum(t.formula_bytes for t in activations)
    if not math.isclose(formula_total, per_rank["activations"], rel_tol=1e-12):
        raise AssertionError("the term table disagrees with engine.activations")
    return MemoryResult(
        spec=spec,
        ledger=ledger,
        ledger_note=ledger_note,
        param_count=param_count,
        model_states=model_states,
        activations=activations,
        activations_measured=measured,
        cuda_max_allocated_bytes=cuda_peak,
        loss=float(loss.item()),
        torch_version=str(torch.__version__),
    )


def _activation_terms(spec: MemorySpec, rec: _Recorder, w: float) -> tuple[ActivationTerm, ...]:
    """One line per region (per-layer regions summed over the layers), in forward order."""
    sbh = float(spec.seq) * spec.micro_batch_size * spec.hidden
    sbv = float(spec.seq) * spec.micro_batch_size * spec.vocab
    layers = spec.layers
    terms = [
        ActivationTerm(
            _("embedding: token and position ids"),
            0.0,
            rec.bytes.get("embedding", 0),
            tuple(rec.saved.get("embedding", ())),
            _("int64 indices for the embedding backward; §4.3 does not count them"),
        ),
        ActivationTerm(
            _("embedding dropout mask (1 B)"),
            sbh,
            rec.bytes.get("embedding_drop", 0),
            tuple(rec.saved.get("embedding_drop", ())),
        ),
    ]
    for key, label, _k_sbh, _k_scores, _note in _LAYER_TERMS:
        measured = sum(rec.bytes.get(f"{i}.{key}", 0) for i in range(layers))
        note = _LAYER_NORM_NOTE if key in ("ln1", "ln2") else ""
        terms.append(
            ActivationTerm(
                _("layers × {layers}: {region}").format(layers=layers, region=_(label)),
                layers * _formula_bytes(key, spec, w),
                measured,
                tuple(rec.saved.get(f"0.{key}", ())),
                note,
            )
        )
    terms += [
        ActivationTerm(
            _("final layer norm input"),
            w * sbh,
            0,
            (),
            _("§4.3 counts a final layer norm; this model, like Eq. 2's parameter count, has none"),
        ),
        ActivationTerm(
            _("output layer input"),
            w * sbh,
            rec.bytes.get("output", 0),
            tuple(rec.saved.get("output", ())),
        ),
        ActivationTerm(
            _("loss: fp32 log-softmax of the logits"),
            4.0 * sbv,
            rec.bytes.get("loss", 0),
            tuple(rec.saved.get("loss", ())),
            _(
                "cross_entropy also saves the int64 targets and a scalar weight; §4.3 counts the "
                "fp32 logits only"
            ),
        ),
    ]
    other = rec.bytes.get("other", 0)
    if other:
        terms.append(
            ActivationTerm(
                _("outside every region"), 0.0, other, tuple(rec.saved.get("other", ())), ""
            )
        )
    return tuple(terms)
