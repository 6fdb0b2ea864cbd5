"""Every source the engine cites, each written once.

A *work* (``*_PAPER``, ``*_REPO``, ``*_DOCS``) is a paper, a repository or a document, named the
same way everywhere: authors, year, short title and arXiv id, or ``owner/repository``. A
*citation* is a work with the part a figure rests on (section, equation, table; file and
function) and, where it helps, what that part says. Modules import these names; a result's
``source`` text is built from them, so two calculators never cite one paper two ways.

A text that cites several works is a tuple of citations (:data:`Citations`), never one string
with the separator written in: :func:`joined` puts the interface language's separator between
them where the text is shown (``; `` in English, ``；`` in Chinese).

Text is Unicode (``§``, ``·``, ``×``). The ASCII diagrams write a citation with
:func:`ascii_text`.
"""

from __future__ import annotations

from typing import Final

from engine.i18n import N_, gettext

Citations = tuple[str, ...]
"""Several citations of one figure, in the order they are read."""


def cite(work: str, part: str) -> str:
    """``work`` followed by the part cited: ``cite(ZERO_PAPER, "§7")``."""
    return f"{work} {part}"


def joined(*citations: str | Citations) -> str:
    """The citations (single ones and :data:`Citations`, flattened) as one text in the current
    interface language: each translated where it is a marked text (:data:`MPICH_COSTS`), then
    separated by the language's separator (``; ``, ``；`` in Chinese)."""
    return gettext("; ").join(gettext(citation) for citation in flattened(*citations))


def flattened(*citations: str | Citations) -> Citations:
    """The citations, single ones and :data:`Citations`, as one tuple in order."""
    return tuple(
        part for item in citations for part in ((item,) if isinstance(item, str) else item)
    )


# -- Papers

ZERO_PAPER: Final = "Rajbhandari et al. 2020, ZeRO (arXiv:1910.02054)"
ZERO_OFFLOAD_PAPER: Final = "Ren et al. 2021, ZeRO-Offload (arXiv:2101.06840)"
ZERO_INFINITY_PAPER: Final = "Rajbhandari et al. 2021, ZeRO-Infinity (arXiv:2104.07857)"
MEGATRON_LM_PAPER: Final = "Narayanan et al. 2021, Megatron-LM (arXiv:2104.04473)"
"""Narayanan et al., "Efficient Large-Scale Language Model Training on GPU Clusters Using
Megatron-LM", SC'21."""
ACTIVATION_RECOMPUTATION_PAPER: Final = (
    "Korthikanti et al. 2022, Reducing Activation Recomputation (arXiv:2205.05198)"
)
GPIPE_PAPER: Final = "Huang et al. 2019, GPipe (arXiv:1811.06965)"
ZERO_BUBBLE_PAPER: Final = "Qi et al. 2023, Zero Bubble Pipeline Parallelism"
FSDP_PAPER: Final = "Zhao et al. 2023, PyTorch FSDP (arXiv:2304.11277)"
GSHARD_PAPER: Final = "Lepikhin et al. 2020, GShard (arXiv:2006.16668)"
SWITCH_PAPER: Final = "Fedus et al. 2021, Switch Transformer (arXiv:2101.03961)"
RING_ATTENTION_PAPER: Final = "Liu et al. 2023, Ring Attention (arXiv:2310.01889)"
SCALING_LAWS_PAPER: Final = "Kaplan et al. 2020, Scaling Laws (arXiv:2001.08361)"
PALM_PAPER: Final = "Chowdhery et al. 2022, PaLM (arXiv:2204.02311)"
LORA_PAPER: Final = "Hu et al. 2021, LoRA (arXiv:2106.09685)"
QLORA_PAPER: Final = "Dettmers et al. 2023, QLoRA (arXiv:2305.14314)"
ADAM_8BIT_PAPER: Final = "Dettmers et al. 2022, 8-bit Optimizers (arXiv:2110.02861)"
GLU_VARIANTS_PAPER: Final = "Shazeer 2020, GLU Variants (arXiv:2002.05202)"
FLASH_ATTENTION_2_PAPER: Final = "Dao 2023, FlashAttention-2 (arXiv:2307.08691)"
LLAMA_PAPER: Final = "Touvron et al. 2023, LLaMA (arXiv:2302.13971)"
MPICH_COLLECTIVES_PAPER: Final = (
    "Thakur, Rabenseifner, Gropp 2005, Optimization of Collective Communication Operations in "
    "MPICH (IJHPCA 19(1))"
)
TWO_TREE_PAPER: Final = (
    "Sanders, Speck, Träff 2009, Two-tree algorithms for full bandwidth broadcast, reduction and "
    "scan (Parallel Computing 35(12))"
)
BANDWIDTH_OPTIMAL_ALLREDUCE_PAPER: Final = (
    "Patarasuk and Yuan 2009, Bandwidth optimal all-reduce algorithms (JPDC 69(2))"
)
FSRS_PAPER: Final = (
    "Ye et al. 2022, A Stochastic Shortest Path Algorithm for Spaced Repetition (KDD)"
)

# -- Repositories and documents

MEGATRON_LM_REPO: Final = "NVIDIA/Megatron-LM"
DEEPSPEED_REPO: Final = "microsoft/DeepSpeed"
NCCL_REPO: Final = "NVIDIA/nccl"
NCCL_TESTS_REPO: Final = "NVIDIA/nccl-tests"
PEFT_REPO: Final = "huggingface/peft"
PY_FSRS_REPO: Final = "open-spaced-repetition/py-fsrs"
TRANSFORMER_MATH_DOCS: Final = "EleutherAI, Transformer Math 101"
ULTRA_SCALE_PLAYBOOK_DOCS: Final = "Hugging Face, The Ultra-Scale Playbook (2025)"
NCCL_DOCS: Final = "NCCL documentation, Collective Operations"
PYTORCH_DDP_DOCS: Final = "PyTorch docs, DistributedDataParallel"
PYTORCH_ADAMW_DOCS: Final = "PyTorch docs, torch.optim.AdamW"
PYTORCH_DISTRIBUTED_DOCS: Final = "PyTorch docs, torch.distributed"
PYTORCH_MPS_DOCS: Final = "PyTorch docs, MPS backend"
MEGATRON_CP_DOCS: Final = "Megatron Core docs, context parallelism"

MEGATRON_MEMORY_ESTIMATOR: Final = (
    f"{MEGATRON_LM_REPO} megatron/training/theoretical_memory_usage.py"
)
"""Megatron-LM's own estimate of weights, optimizer states and activations per GPU."""

# -- Model states (the memory ledger)

ZERO_MODEL_STATES: Final = cite(ZERO_PAPER, "§3.1, §5.1, Figure 1")
ADAM_STATES: Final = cite(ZERO_PAPER, "§3.1 (fp32 momentum 4 + variance 4)")
MEGATRON_MODEL_STATES: Final[Citations] = (
    MEGATRON_MEMORY_ESTIMATOR,
    f"{MEGATRON_LM_REPO} docs/source/api-guide/dist_optimizer.md",
)
DEEPSPEED_ESTIMATORS: Final[Citations] = (
    f"{DEEPSPEED_REPO} deepspeed/runtime/zero/stage_1_and_2.py "
    "estimate_zero2_model_states_mem_needs",
    f"{DEEPSPEED_REPO} deepspeed/runtime/zero/stage3.py estimate_zero3_model_states_mem_needs",
)
SGD_MOMENTUM_STATES: Final = cite(
    TRANSFORMER_MATH_DOCS, "(momentum 4 B/param; 8 with master weights)"
)
ADAM_8BIT_STATES: Final[Citations] = (
    TRANSFORMER_MATH_DOCS,
    f"{ADAM_8BIT_PAPER}: two 1-byte states, 6 B/param with master weights",
)
FP32_ADAM_STATES: Final = cite(TRANSFORMER_MATH_DOCS, "(fp32 AdamW: 4 + 4 + 8)")
FP32_GRAD_ACCUMULATION: Final = cite(
    ULTRA_SCALE_PLAYBOOK_DOCS,
    "memory usage: an fp32 gradient accumulation buffer adds 4 B/param to mixed precision "
    "(20 in all)",
)
PURE_BF16_STATES: Final = (
    f"{PYTORCH_ADAMW_DOCS}: exp_avg and exp_avg_sq are kept like the parameter, so without fp32 "
    "master weights they are 16-bit (torchtune's recipes, dtype bf16)"
)
DDP_BUCKET: Final = cite(PYTORCH_DDP_DOCS, "bucket_cap_mb (default 25 MiB)")
FSDP_UNITS: Final = cite(FSDP_PAPER, "§3: one unit gathered whole, plus prefetched units")
LORA_ADAPTERS: Final[Citations] = (
    f"{LORA_PAPER} §4.1: W0 + BA, B d×r and A r×k, r·(d + k) trainable per adapted matrix",
    f"default targets q, v as {PEFT_REPO} src/peft/utils/constants.py maps Llama",
)
QLORA_NF4: Final = cite(
    QLORA_PAPER,
    "§3: NF4 weights in blocks of 64 with double-quantized constants, 4 + 8/64 + 32/(64·256) "
    "bits per parameter; bitsandbytes quantizes the linear layers, the embeddings and the output "
    "layer stay 16-bit",
)
OFFLOAD: Final[Citations] = (
    f"{ZERO_OFFLOAD_PAPER} §4: gradients, fp32 master weights and optimizer states on the host",
    f"{ZERO_INFINITY_PAPER}: the parameters too",
)
STAGE_PLACEMENT: Final = (
    f"{MEGATRON_LM_REPO} megatron/core/models/common/language_module/language_module.py "
    "setup_embeddings_and_output_layer: embedding on the first stage, output layer (a copy of "
    "the embedding when tied) on the last"
)
PARAM_COUNT: Final[Citations] = (
    f"{cite(MEGATRON_LM_PAPER, '§5.1 Eq. 2')} (GPT layout)",
    f"{MEGATRON_MEMORY_ESTIMATOR} (GQA, gated MLP, RMSNorm, MoE, untied)",
)

# -- Activations

ACTIVATIONS_TABLE2: Final = cite(ACTIVATION_RECOMPUTATION_PAPER, "§4.1-4.2, Table 2")
ACTIVATIONS_FIRST_STAGE: Final[Citations] = (
    f"{cite(ACTIVATION_RECOMPUTATION_PAPER, '§4.2.3 Eq. 5')} (1F1B first stage: p micro-batches)",
    f"interleaving factor 1 + (p-1)/(p·v): {MEGATRON_MEMORY_ESTIMATOR}",
)
ACTIVATIONS_EMBEDDING_OUTPUT: Final = cite(
    ACTIVATION_RECOMPUTATION_PAPER, "§4.3 (input-embedding dropout; output layer and loss)"
)
ACTIVATIONS_GENERAL_SHAPE: Final = (
    f"{cite(ACTIVATION_RECOMPUTATION_PAPER, '§4.1')} terms read for GQA widths, the MLP size f "
    f"and a gated MLP ({cite(GLU_VARIANTS_PAPER, 'Eq. 6')}); flash: {FLASH_ATTENTION_2_PAPER}"
)
ACTIVATIONS_INTERLEAVED_STAGE: Final = (
    f"{MEGATRON_LM_REPO} megatron/core/pipeline_parallel/schedules.py: interleaved warm-up "
    "2·(p-i-1) + (v-1)·p chunks on stage i"
)
ACTIVATIONS_MEASURED_REGIONS: Final = cite(ACTIVATION_RECOMPUTATION_PAPER, "§4.1, §4.3")

# -- Communication volumes and overlap

ZERO_COMMUNICATION: Final = cite(ZERO_PAPER, "§7")
MEGATRON_COMMUNICATION: Final = cite(MEGATRON_LM_PAPER, "§3.2")
SEQUENCE_PARALLEL_COMMUNICATION: Final = cite(ACTIVATION_RECOMPUTATION_PAPER, "§4.2.2")
# Works as written, then what this project derives from them, translated where shown (gettext
# of the whole text, as MPICH_COSTS below); each starts with its works (tests/test_i18n.py
# checks it).
EXPERT_PARALLEL_COMMUNICATION: Final = N_(
    "Lepikhin et al. 2020, GShard (arXiv:2006.16668) §2-3 for dispatch/combine all-to-all; "
    "volume derived here, assuming uniform routing"
)
CONTEXT_PARALLEL_COMMUNICATION: Final = N_(
    "Megatron Core docs, context parallelism; Liu et al. 2023, Ring Attention "
    "(arXiv:2310.01889); volume derived here for K and V without grouped-query attention"
)
DDP_OVERLAP: Final = (
    f"{PYTORCH_DDP_DOCS}: bucketed all-reduce overlaps backward (bucket_cap_mb 25); no_sync "
    "defers it to the last micro-batch"
)
FSDP_PREFETCH: Final = cite(FSDP_PAPER, "§3: prefetch overlaps gathers")
ALL_REDUCE_DECOMPOSITION: Final[Citations] = (
    f"{BANDWIDTH_OPTIMAL_ALLREDUCE_PAPER}: all-reduce = reduce-scatter + all-gather",
    NCCL_DOCS,
)
MOE_CAPACITY: Final = cite(
    SWITCH_PAPER,
    "§2.2: expert capacity = capacity factor × tokens / experts; tokens above it are dropped",
)

# -- Collectives

# The paper's title as written, then a description translated where it is shown (gettext of
# this text: the collective's cost, the quiz); it starts with MPICH_COLLECTIVES_PAPER
# (tests/test_i18n.py checks it).
MPICH_COSTS: Final = N_(
    "Thakur, Rabenseifner, Gropp 2005, Optimization of Collective Communication Operations in "
    "MPICH (IJHPCA 19(1)), the MPICH algorithm notes"
)
# The file as written, then its definitions with their words translated where shown (gettext, as
# MPICH_COSTS); it starts with NCCL_TESTS_REPO (tests/test_i18n.py checks it).
BUS_BANDWIDTH: Final = N_(
    "NVIDIA/nccl-tests doc/PERFORMANCE.md (algbw = S/t, busbw = algbw × factor)"
)
DOUBLE_BINARY_TREE: Final = N_(
    "Sanders, Speck, Träff 2009, Two-tree algorithms for full bandwidth broadcast, reduction and "
    "scan (Parallel Computing 35(12)); NVIDIA/nccl src/graph/trees.cc (double binary tree), "
    "src/graph/tuning.cc (tree all-reduce: algorithm bandwidth = bus bandwidth / 2, 2·log2 hops "
    "of latency)"
)

# -- Pipeline bubble

GPIPE_BUBBLE: Final = f"{GPIPE_PAPER} (bubble/total (p-1)/(m+p-1))"
ONE_F_ONE_B_BUBBLE: Final = f"{cite(MEGATRON_LM_PAPER, '§2.2.1')} (bubble/ideal (p-1)/m)"
INTERLEAVED_BUBBLE: Final = f"{cite(MEGATRON_LM_PAPER, '§2.2.2')} (bubble/ideal (p-1)/(m·v))"
INTERLEAVED_SCHEDULE: Final = cite(MEGATRON_LM_PAPER, "§2.2.2")
"""The interleaved 1F1B schedule: v model chunks per device, each a 1/v share of its layers."""
ZERO_BUBBLE_TABLE2: Final = cite(ZERO_BUBBLE_PAPER, "Table 2")

# -- FLOPs and step time

MODEL_FLOPS_EQ7: Final = cite(ACTIVATION_RECOMPUTATION_PAPER, "Eq. 7 (model FLOPs)")
SELECTIVE_RECOMPUTE_FLOPS_EQ8: Final = cite(
    ACTIVATION_RECOMPUTATION_PAPER, "Eq. 8 (selective recompute hardware FLOPs)"
)
FULL_RECOMPUTE_FLOPS_EQ3: Final = cite(MEGATRON_LM_PAPER, "Eq. 3 (full recomputation)")
TIME_TO_TRAIN_EQ4: Final = cite(MEGATRON_LM_PAPER, "§5.1 Eq. 4")
SIX_N_FLOPS: Final = cite(SCALING_LAWS_PAPER, "§2.1: 6·N FLOPs per token")
MFU: Final = cite(PALM_PAPER, "App. B: MFU = model FLOP/s / peak")
A100_PEAK: Final[Citations] = (
    "NVIDIA A100 datasheet: 312 TFLOP/s dense BF16",
    f"{cite(MEGATRON_LM_PAPER, '§5.1')} reach 52% of peak",
)

# -- Spaced review

FSRS: Final = f"FSRS ({FSRS_PAPER}; {PY_FSRS_REPO} Scheduler, default parameters)"

_ASCII: Final = str.maketrans(
    {"§": "Sec. ", "·": "*", "×": "x", "Ψ": "Psi", "ä": "ae", "−": "-", "–": "-", "²": "^2"}
)


def ascii_text(text: str) -> str:
    """``text`` in ASCII for the ASCII diagrams: ``§7`` -> ``Sec. 7``, ``·`` -> ``*``,
    ``×`` -> ``x``, ``Ψ`` -> ``Psi``."""
    return text.translate(_ASCII)
