"""Fine-tuning (LoRA, QLoRA, pure bf16), offload (ZeRO-Offload/Infinity, DeepSpeed's estimators)
and pipeline stages holding what they really hold, in engine.ledger and ``calc ledger``. Every
expected figure is derived here from its source: LoRA (Hu et al. 2021), QLoRA (Dettmers et al.
2023), the DeepSpeed estimators' code and the printouts in DeepSpeed's docs, torchtune's measured
peaks, the models' config.json."""

from __future__ import annotations

from typing import Any

import pytest

from cli.main import main
from engine.errors import InputError
from engine.ledger import LedgerSpec, compute_ledger
from tests.cli_helpers import calc_json

GIB = 2**30
LLAMA2_7B = 6_738_415_616  # Hugging Face Hub safetensors metadata, meta-llama/Llama-2-7b-hf
LLAMA32_3B = 3_212_749_824  # meta-llama/Llama-3.2-3B
LLAMA31_8B = 8_030_261_248  # meta-llama/Llama-3.1-8B
# QLoRA §3: 4-bit NF4 plus double-quantized constants, 8 bits per 64 weights and 32 bits per
# 64·256 weights.
NF4 = (4 + 8 / 64 + 32 / (64 * 256)) / 8


def _ledger(**kwargs: Any) -> Any:
    return compute_ledger(LedgerSpec(**kwargs))


# --- LoRA --------------------------------------------------------------------------------------


def test_lora_rank8_on_q_v_of_llama2_7b(capsys: pytest.CaptureFixture[str]) -> None:
    # Hu et al. 2021 §4.1: r·(d_in + d_out) per adapted matrix; q and v are 4096 × 4096 in each of
    # 32 layers: 32 × 2 × 8 × (4096 + 4096) = 4,194,304. PEFT prints the same for
    # LoraConfig(r=8, target_modules=["q_proj", "v_proj"]) on Llama-2-7b-hf ("trainable params:
    # 4,194,304 || all params: 6,742,609,920", the base plus the adapters).
    assert 32 * 2 * 8 * (4096 + 4096) == 4_194_304
    data = calc_json(capsys, "ledger", "--model", "llama2-7b", "--finetune", "lora")
    assert data["trainable_params"] == 4_194_304
    assert data["params_total"] + data["trainable_params"] == 6_742_609_920
    flags = ["--finetune", "lora", "--lora-rank", "8", "--lora-targets", "q,v"]
    assert calc_json(capsys, "ledger", "--model", "llama2-7b", *flags) == data


def test_lora_bytes_frozen_base_and_trained_adapters() -> None:
    # The frozen base keeps only its bf16 weights; the adapters carry mixed-precision Adam
    # (ZeRO paper §3.1: 2 + 2 + 12).
    result = _ledger(model="llama2-7b", finetune="lora")
    per_rank = result.per_rank_bytes
    assert per_rank["params"] == 2 * LLAMA2_7B + 2 * 4_194_304
    assert per_rank["grads"] == 2 * 4_194_304
    assert per_rank["master_weights"] == 4 * 4_194_304
    assert per_rank["optimizer_states"] == 8 * 4_194_304


def test_lora_with_gqa_targets_every_projection() -> None:
    # Llama 3.1 8B (config.json): K and V are 4096 → 1024 (8 of 32 heads), the MLP 4096 → 14336.
    # Per layer with r = 8: q, o 8·(4096 + 4096); k, v 8·(4096 + 1024); gate, up, down
    # 8·(4096 + 14336); 32 layers.
    per_layer = 2 * 8 * 8192 + 2 * 8 * 5120 + 3 * 8 * (4096 + 14336)
    result = _ledger(
        model="llama3.1-8b",
        finetune="lora",
        lora_targets=("q", "k", "v", "o", "gate", "up", "down"),
    )
    assert result.trainable_params == 32 * per_layer


def test_qlora_stores_linear_layers_in_nf4() -> None:
    # Llama 2 7B: the linear layers of the 32 layers (4·h² + 3·h·f) in NF4; the embedding, the
    # output layer and the norms (2·V·h + 65·h) stay bf16; adapters as LoRA.
    h, f = 4096, 11008
    linear = 32 * (4 * h * h + 3 * h * f)
    rest = 2 * 32000 * h + 65 * h
    assert linear + rest == LLAMA2_7B
    result = _ledger(model="llama2-7b", finetune="qlora")
    assert result.per_rank_bytes["params"] == pytest.approx(
        NF4 * linear + 2 * rest + 2 * 4_194_304, rel=1e-12
    )
    bits = NF4 * 8
    assert bits == pytest.approx(4.127, abs=5e-4)  # QLoRA §3: 0.127 bits of constants


def test_pure_bf16_training_as_torchtune_runs_it() -> None:
    # torchtune's recipes (dtype: bf16) keep no fp32 copy: bf16 weights 2, gradients 2, and
    # torch.optim.AdamW's two states like the parameters, 2 + 2: 8 bytes per parameter.
    result = _ledger(model="llama2-7b", master_weights=False)
    assert result.model_states_bytes == 8 * LLAMA2_7B
    assert result.per_rank_bytes["optimizer_states"] == 4 * LLAMA2_7B


def test_fp32_gradients_both_ways() -> None:
    # --fp32-grads: gradients kept in fp32, 2 + 4 + 12 = 18; --fp32-grad-accumulation: the
    # Ultra-Scale Playbook's fp32 accumulation buffer beside the bf16 gradients, 2 + 2 + 4 + 12.
    assert _ledger(params=1e9, fp32_grads=True).model_states_bytes == 18e9
    assert _ledger(params=1e9, fp32_grad_accumulation=True).model_states_bytes == 20e9
    # ZeRO-2 shards both gradient buffers: 2 + (2 + 4 + 12)/8.
    zero2 = _ledger(params=1e9, fp32_grad_accumulation=True, dp=8, zero_stage=2)
    assert zero2.model_states_bytes == pytest.approx((2 + 18 / 8) * 1e9)


# torchtune README, "Memory and training speed" (batch 2, packed to 2048 tokens, compile) and
# "Optimization flags" (Llama 3.2 3B, batch 2, 4096 tokens, A100, with compile, chunked cross
# entropy, activation checkpointing and offloading): peak memory per GPU in GiB. The recipes'
# configs (recipes/configs/llama3_1/8B_{lora,qlora}_single_device.yaml: rank 8;
# llama3_2/3B_lora_single_device.yaml: rank 64) adapt q, v, the output projection and the MLP.
TORCHTUNE_PEAKS = [
    ("llama3.1-8b", "lora", 8, 16.2),
    ("llama3.1-8b", "qlora", 8, 7.4),
    ("llama3.2-3b", "lora", 64, 8.5),
    ("llama3.2-3b", "qlora", 64, 4.6),
]
TORCHTUNE_TARGETS = ("q", "v", "o", "gate", "up", "down")


@pytest.mark.parametrize(("model", "finetune", "rank", "peak_gib"), TORCHTUNE_PEAKS)
def test_ledger_sits_below_torchtune_measured_peaks(
    model: str, finetune: str, rank: int, peak_gib: float
) -> None:
    # The ledger's model states are part of what a real run holds: never above the measured
    # peak, and not far below it (the README says what the rest is).
    result = _ledger(
        model=model,
        finetune=finetune,
        lora_rank=rank,
        lora_targets=TORCHTUNE_TARGETS,
        master_weights=False,
    )
    states = result.model_states_bytes / GIB
    assert 0.55 * peak_gib <= states <= peak_gib


def test_llama32_3b_lora_rank64_by_hand() -> None:
    # config.json: h 3072, 24 heads of 128 (K, V 1024 wide), MLP 8192, 28 layers. Rank 64 on q, v,
    # o, gate, up, down; pure bf16: frozen 2 B, adapters 2 + 2 + 4.
    per_layer = 64 * ((3072 + 3072) * 2 + (3072 + 1024) + 3 * (3072 + 8192))
    adapters = 28 * per_layer
    assert adapters == 89_915_392
    result = _ledger(
        model="llama3.2-3b",
        finetune="lora",
        lora_rank=64,
        lora_targets=TORCHTUNE_TARGETS,
        master_weights=False,
    )
    assert result.trainable_params == adapters
    assert result.model_states_bytes == 2 * LLAMA32_3B + 8 * adapters


def test_fine_tuning_needs_the_architecture() -> None:
    with pytest.raises(InputError) as info:
        _ledger(params=7e9, finetune="lora")
    assert info.value.field == "finetune"
    with pytest.raises(InputError) as info:
        _ledger(model="lesson-1b", finetune="lora", lora_targets=("gate",))
    assert info.value.field == "lora_targets"  # a GeLU MLP has no gate


@pytest.mark.parametrize("text", ["q,x", "q,q", " , "])
def test_bad_lora_targets_are_one_line(capsys: pytest.CaptureFixture[str], text: str) -> None:
    argv = ["calc", "ledger", "--model", "llama2-7b", "--finetune", "lora"]
    assert main([*argv, "--lora-targets", text, "--json"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--lora-targets" in err[0]


# --- Offload: DeepSpeed's estimators -----------------------------------------------------------

# DeepSpeed docs/code-docs/source/memory.rst, estimate_zero3_model_states_mem_needs_all_cold(
# total_params=2851e6, largest_layer_params=32e6, num_gpus_per_node=8, num_nodes=1) prints
# "per CPU | per GPU" in GiB (its "GB"). The bytes below are estimate_zero3_model_states_mem_needs
# (deepspeed/runtime/zero/stage3.py) worked by hand: largest_layer_memory = 4·32e6, buffer factor
# 1.5, gpus_factor = 1/num_nodes.
ZERO3_CASES = [
    # offload, zero_init, host bytes, device bytes, printed host GiB, printed device GiB
    ("optimizer+params", True, 2851e6 * 18 * 1.5, 4 * 32e6, 71.69, 0.12),
    ("optimizer+params", False, 2851e6 * max(4 * 8, 18) * 1.5, 4 * 32e6, 127.45, 0.12),
    ("optimizer", True, 2851e6 * 16 * 1.5, 4 * 32e6 + 2 * 2851e6 / 8, 63.72, 0.78),
    ("optimizer", False, 2851e6 * max(4 * 8, 16) * 1.5, 4 * 32e6 + 2 * 2851e6 / 8, 127.45, 0.78),
    ("none", True, 32e6 * 4 * 8 * 1.5, 4 * 32e6 + 18 * 2851e6 / 8, 1.43, 6.09),
    ("none", False, 2851e6 * 4 * 8 * 1.5, 4 * 32e6 + 18 * 2851e6 / 8, 127.45, 6.09),
]


@pytest.mark.parametrize(
    ("offload", "zero_init", "host", "device", "host_gib", "device_gib"), ZERO3_CASES
)
def test_deepspeed_zero3_estimator_every_offload_case(
    capsys: pytest.CaptureFixture[str],
    offload: str,
    zero_init: bool,
    host: float,
    device: float,
    host_gib: float,
    device_gib: float,
) -> None:
    flags = ["--params", "2851e6", "--largest-layer-params", "32e6", "--zero", "3", "--dp", "8"]
    flags += ["--gpus-per-node", "8", "--convention", "deepspeed", "--offload", offload]
    if not zero_init:
        flags.append("--no-zero-init")
    data = calc_json(capsys, "ledger", *flags)
    assert data["model_states_bytes"] == pytest.approx(device, rel=1e-12)
    assert data["offloaded_bytes"] == pytest.approx(host, rel=1e-12)
    assert round(data["model_states_bytes"] / GIB, 2) == device_gib
    assert round(data["offloaded_bytes"] / GIB, 2) == host_gib
    assert data["host"]["per"] == "node" and data["host"]["nodes"] == 1
    assert "1.5" in data["host"]["formula"]


@pytest.mark.parametrize(
    ("offload", "host", "device", "host_gib", "device_gib"),
    [
        # estimate_zero2_model_states_mem_needs (stage_1_and_2.py): offload: GPU 2·Ψ, CPU
        # Ψ·max(4·total_gpus, 16)·1.5; memory.rst prints 127.45 / 5.31 for 2851e6 on 8 GPUs.
        ("optimizer", 2851e6 * 32 * 1.5, 2 * 2851e6, 127.45, 5.31),
        # No offload: GPU 2·Ψ + 18·Ψ/N since DeepSpeed PR #5099 (memory.rst still prints the
        # older 4·Ψ + 16·Ψ/N = 15.93); CPU Ψ·4·gpus_per_node·1.5.
        ("none", 2851e6 * 4 * 8 * 1.5, 2 * 2851e6 + 18 * 2851e6 / 8, 127.45, 11.28),
    ],
)
def test_deepspeed_zero2_estimator(
    offload: str, host: float, device: float, host_gib: float, device_gib: float
) -> None:
    result = _ledger(
        params=2851e6,
        zero_stage=2,
        dp=8,
        gpus_per_node=8,
        convention="deepspeed",
        offload=offload,
    )
    assert result.model_states_bytes == pytest.approx(device, rel=1e-12)
    assert result.offloaded_bytes == pytest.approx(host, rel=1e-12)
    assert (round(result.offloaded_bytes / GIB, 2), round(result.model_states_bytes / GIB, 2)) == (
        host_gib,
        device_gib,
    )


def test_deepspeed_host_memory_is_per_node() -> None:
    # stage3.py: with zero_init the CPU figure is Ψ·18·(1/num_nodes)·1.5, per node.
    result = _ledger(
        params=2851e6,
        largest_layer_params=32e6,
        zero_stage=3,
        dp=16,
        gpus_per_node=8,
        convention="deepspeed",
        offload="optimizer+params",
    )
    assert result.nodes == 2
    assert result.offloaded_bytes == pytest.approx(2851e6 * 18 / 2 * 1.5, rel=1e-12)


def test_offload_in_the_zero_paper_convention_moves_terms_to_the_host() -> None:
    # ZeRO-Offload (Ren et al. 2021 §4): gradients, fp32 master weights and Adam on the host;
    # the device keeps the 16-bit parameters. ZeRO-2 at DP 4 (ZeRO paper §5.1): the host holds
    # (2 + 12)·Ψ/4 per rank, four ranks on the node.
    result = _ledger(params=1e9, zero_stage=2, dp=4, offload="optimizer")
    assert result.model_states_bytes == 2e9
    assert result.offloaded_bytes == pytest.approx(4 * 14e9 / 4)
    assert result.per_rank_bytes["grads"] == 0


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"offload": "optimizer"}, "offload"),
        ({"offload": "optimizer+params", "zero_stage": 2, "dp": 2}, "offload"),
        ({"offload": "disk"}, "offload"),
        ({"zero_stage": 1, "dp": 8, "gpus_per_node": 3}, "gpus_per_node"),
        ({"zero_stage": 1, "dp": 8, "gpus_per_node": 4, "nodes": 3}, "nodes"),
        ({"finetune": "prefix"}, "finetune"),
        ({"zero_init": "yes"}, "zero_init"),
    ],
)
def test_offload_and_node_errors_name_the_field(kwargs: dict[str, Any], field: str) -> None:
    with pytest.raises(InputError) as info:
        _ledger(params=1e9, **kwargs)
    assert info.value.field == field


# --- Pipeline stages hold what they hold ---------------------------------------------------------

# Llama 3.1 8B (config.json): one layer holds 4096·(4096 + 2·1024) + 4096² (attention) +
# 3·4096·14336 (SwiGLU) + 2·4096 (RMSNorms) = 218,112,000; the embedding and the untied output
# layer 128256·4096 = 525,336,576 each; the final RMSNorm 4096.
LAYER_8B = 4096 * (4096 + 2 * 1024) + 4096 * 4096 + 3 * 4096 * 14336 + 2 * 4096
EMBEDDING_8B = 128256 * 4096


def test_pp8_stages_hold_embedding_and_output_layer(capsys: pytest.CaptureFixture[str]) -> None:
    assert 32 * LAYER_8B + 2 * EMBEDDING_8B + 4096 == LLAMA31_8B
    data = calc_json(capsys, "ledger", "--model", "llama3.1-8b", "--pp", "8")
    stages = data["per_stage_bytes"]
    assert len(stages) == 8
    first = 2 * (4 * LAYER_8B + EMBEDDING_8B)
    last = 2 * (4 * LAYER_8B + EMBEDDING_8B + 4096)
    middle = 2 * 4 * LAYER_8B
    assert [stage["params"] for stage in stages] == [first, *[middle] * 6, last]
    # The most loaded stage is the last (its final norm), by 4096 parameters.
    assert data["most_loaded_stage"] == 7
    assert data["per_rank_bytes"]["params"] == last
    # Spread evenly, N/8 per stage under-counts the most loaded one by 28 %.
    assert 1 - (LLAMA31_8B / 8) / (last / 2) == pytest.approx(0.282, abs=1e-3)


def test_no_per_stage_bytes_without_pipeline(capsys: pytest.CaptureFixture[str]) -> None:
    data = calc_json(capsys, "ledger", "--model", "llama3.1-8b")
    assert "per_stage_bytes" not in data and "most_loaded_stage" not in data


def test_uneven_split_puts_extra_layers_first() -> None:
    # 32 layers on 5 stages: 7, 7, 6, 6, 6.
    result = _ledger(model="llama2-7b", pp=5)
    assert [stage["layers"] for stage in result.per_stage_bytes] == [7, 7, 6, 6, 6]
    assert result.most_loaded_stage == 0


def test_tied_embedding_is_copied_to_the_last_stage() -> None:
    # Megatron-LM keeps a copy of a tied word embedding on the last stage for the output layer
    # (language_module.py setup_embeddings_and_output_layer). lesson-1b at PP 2: 12 layers each,
    # the first adds V·h + the 2048 learned positions, the last V·h.
    layer = 12 * 2048**2 + 13 * 2048
    result = _ledger(model="lesson-1b", pp=2)
    first, last = (stage["params"] for stage in result.per_stage_bytes)
    assert first == 2 * (12 * layer + (50304 + 2048) * 2048)
    assert last == 2 * (12 * layer + 50304 * 2048)


def test_1f1b_stages_hold_fewer_micro_batches_down_the_pipeline() -> None:
    # Korthikanti et al. 2022 §4.2.3: stage i of p holds p - i micro-batches with 1F1B; the layer
    # activations per stage fall as 4, 3, 2, 1 (same layers per stage, no vocab).
    result = _ledger(params=1e9, layers=8, hidden=256, heads=4, seq=128, pp=4, num_microbatches=8)
    activations = [stage["activations"] for stage in result.per_stage_bytes]
    assert activations[0] / activations[3] == pytest.approx(4.0)
    assert activations[1] / activations[3] == pytest.approx(3.0)
