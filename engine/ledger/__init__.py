"""The training-memory ledger: what one rank holds, term by term, in a named convention (bytes).

Terms per rank (the most loaded rank where ranks differ: the pipeline stage with the largest
total): parameters, gradients, master weights, optimizer states, activations, communication
buffers. What is offloaded to the host (ZeRO-Offload, ZeRO-Infinity) is counted apart.

The sources disagree on bytes per parameter for mixed-precision Adam, so the convention is an
input and is named in every result:

- ``zero-paper`` (default): Rajbhandari et al. 2020, "ZeRO" (arXiv:1910.02054) §3.1 and §5.1,
  Figure 1: 16-bit params 2 + 16-bit grads 2 + K = 12 (fp32 master 4, momentum 4, variance 4);
  ZeRO-1 P_os = 4Ψ + KΨ/N_d, ZeRO-2 P_os+g = 2Ψ + (2+K)Ψ/N_d, ZeRO-3 P_os+g+p = (2+2+K)Ψ/N_d.
  ``fp32_grads`` keeps the gradients in fp32 instead (18); ``fp32_grad_accumulation`` adds an
  fp32 accumulation buffer beside the 16-bit gradients (20, the Ultra-Scale Playbook's count).
- ``megatron``: NVIDIA/Megatron-LM ``megatron/training/theoretical_memory_usage.py`` and
  ``docs/source/api-guide/dist_optimizer.md``: fp32 main gradients, 18 B/param for bf16 (20 for
  fp16, 16 for fp32); the distributed optimizer (ZeRO stage >= 1 here) 6 + 12/d (4 + 16/d, 8 + 8/d).
- ``deepspeed``: microsoft/DeepSpeed ``deepspeed/runtime/zero/stage_1_and_2.py``
  ``estimate_zero2_model_states_mem_needs`` (2 + 18/N: 16-bit grads 2 + fp32 grads 4 + fp32
  params 4 + Adam 8 sharded) and ``stage3.py`` ``estimate_zero3_model_states_mem_needs``
  (4·largest_layer_params + 18·Ψ/N), with their offload cases and host memory per node.

Without fp32 master weights (``master_weights`` false) the optimizer states are stored like the
parameters (:data:`engine.sources.PURE_BF16_STATES`): ``dtype bf16`` without master weights is
pure bf16 training.

The model is a preset (``model``, :mod:`engine.model_presets`) or its shape fields
(:mod:`engine.model_size`). Pipeline stages hold what they really hold: the embedding on the first,
the output layer (a copy of the embedding when tied) and the final norm on the last, the extra
layers of an uneven split on the first ones.

Fine-tuning (``finetune``): ``full`` trains every parameter; ``lora`` freezes the model at its
storage precision and trains r·(d_in + d_out) adapter parameters per adapted matrix
(:data:`engine.sources.LORA_ADAPTERS`); ``qlora`` also stores the frozen linear layers in 4-bit
NF4 with double-quantized constants (:data:`engine.sources.QLORA_NF4`). Adapters carry the
convention's gradients, master weights and optimizer states; frozen weights carry none.

Parallel axes: TP, PP and EP split the model (Ψ on a rank = the rank's model shard); ZeRO shards
across the N_d = DP·CP ranks that hold the same shard (Megatron-Core's distributed optimizer shards
over its data-parallel-with-context-parallel group); expert parameters shard over DP·CP/EP.
World size = DP·TP·PP·CP (EP is carved out of DP·CP, as in Megatron-Core).

The package, one concept a module: :mod:`~engine.ledger.model` (the spec, the result, the
tables), :mod:`~engine.ledger.validate`, :mod:`~engine.ledger.form` (text to spec fields),
:mod:`~engine.ledger.states` (where the parameters sit, bytes per state), :mod:`~engine.ledger.host`
(host memory), :mod:`~engine.ledger.buffers`, :mod:`~engine.ledger.terms` (the formula texts) and
:mod:`~engine.ledger.compute` (:func:`compute_ledger`).
"""

from engine.checks import ZERO_STAGES
from engine.ledger.compute import (
    bytes_per_param_note,
    compare_conventions,
    compute_ledger,
    exercise1_columns,
)
from engine.ledger.form import (
    INPUT_NAMES,
    MIN_DEVICE_MEMORY_BYTES,
    OPTIONAL_COUNT_FIELDS,
    OPTIONAL_ZERO_FIELDS,
    SIZE_FIELDS,
    SPEC_FIELDS,
    numeric_fields_from_text,
    parse_device_memory,
    parse_lora_targets,
)
from engine.ledger.model import (
    ACTIVATION_INPUTS,
    CONVENTION_LABELS,
    CONVENTION_NOTES,
    CONVENTION_SOURCES,
    CONVENTIONS,
    DEEPSPEED_BUFFER_FACTOR,
    DEFAULT_LORA_TARGETS,
    DEVICE_MEMORY_PRESETS,
    DTYPE_BYTES,
    DTYPE_CHOICES,
    FINETUNE_CHOICES,
    LORA_TARGETS,
    MODEL_STATE_KEYS,
    NF4_BYTES_PER_PARAM,
    OFFLOAD_CHOICES,
    OPTIMIZER_CHOICES,
    OPTIMIZER_SOURCES,
    OPTIMIZER_STATE_BYTES,
    PRECISION_PRESETS,
    TERM_KEYS,
    Convention,
    Dtype,
    LedgerResult,
    LedgerSpec,
    LedgerTerm,
    Optimizer,
    PrecisionPreset,
    convention_label,
)

__all__ = [
    "ACTIVATION_INPUTS",
    "CONVENTIONS",
    "CONVENTION_LABELS",
    "CONVENTION_NOTES",
    "CONVENTION_SOURCES",
    "DEEPSPEED_BUFFER_FACTOR",
    "DEFAULT_LORA_TARGETS",
    "DEVICE_MEMORY_PRESETS",
    "DTYPE_BYTES",
    "DTYPE_CHOICES",
    "FINETUNE_CHOICES",
    "INPUT_NAMES",
    "LORA_TARGETS",
    "MIN_DEVICE_MEMORY_BYTES",
    "MODEL_STATE_KEYS",
    "NF4_BYTES_PER_PARAM",
    "OFFLOAD_CHOICES",
    "OPTIMIZER_CHOICES",
    "OPTIMIZER_SOURCES",
    "OPTIMIZER_STATE_BYTES",
    "OPTIONAL_COUNT_FIELDS",
    "OPTIONAL_ZERO_FIELDS",
    "PRECISION_PRESETS",
    "SIZE_FIELDS",
    "SPEC_FIELDS",
    "TERM_KEYS",
    "ZERO_STAGES",
    "Convention",
    "Dtype",
    "LedgerResult",
    "LedgerSpec",
    "LedgerTerm",
    "Optimizer",
    "PrecisionPreset",
    "bytes_per_param_note",
    "compare_conventions",
    "compute_ledger",
    "convention_label",
    "exercise1_columns",
    "numeric_fields_from_text",
    "parse_device_memory",
    "parse_lora_targets",
]
