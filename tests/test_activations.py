"""engine.activations and engine.model_size: values from Korthikanti et al. 2022 (arXiv:2205.05198)
Table 2 and §4.2.3, Megatron-LM's estimator (megatron/training/theoretical_memory_usage.py), and
Narayanan et al. 2021 Eq. 2, each recomputed here from its formula."""

from __future__ import annotations

import math
from dataclasses import replace

import pytest
from hypothesis import given
from hypothesis import strategies as st

from engine.activations import layer_activation_bytes, stage_activation_bytes
from engine.errors import InputError
from engine.model_presets import get_preset
from engine.model_size import ModelShape, transformer_param_count

# GPT-3 175B as in Korthikanti et al. §4 (a=96, s=2048, h=12288), b=1.
GPT3 = {"seq": 2048, "micro_batch_size": 1, "hidden": 12288, "heads": 96}


def _table2(s: int, b: int, h: int, a: int, t: int, sp: bool, recompute: str) -> float:
    """Korthikanti et al. 2022 Table 2, written out row by row (bytes per layer)."""
    sbh = s * b * h
    score = 5 * a * s / h
    if recompute == "full":
        return 2 * sbh
    if recompute == "selective":
        return sbh * (34 / t if sp else 10 + 24 / t)
    if t == 1 and not sp:
        return sbh * (34 + score)
    return sbh * (34 / t + score / t if sp else 10 + 24 / t + score / t)


@pytest.mark.parametrize(
    ("tp", "sp", "recompute"),
    [
        (1, False, "none"),  # no parallelism
        (8, False, "none"),  # tensor parallel
        (8, True, "none"),  # tensor + sequence parallel
        (8, False, "selective"),  # tensor parallel + selective recompute
        (8, True, "selective"),  # tensor + sequence parallel + selective recompute
        (8, True, "full"),  # full recompute
        (1, False, "full"),
        (4, False, "none"),
        (2, True, "selective"),
    ],
)
def test_table2_rows(tp: int, sp: bool, recompute: str) -> None:
    # Korthikanti et al. 2022 Table 2 (16-bit activations, 1-byte dropout masks).
    got = layer_activation_bytes(**GPT3, tp=tp, sequence_parallel=sp, recompute=recompute)
    expected = _table2(2048, 1, 12288, 96, tp, sp, recompute)
    assert got.bytes == pytest.approx(expected, rel=1e-12)


def test_table2_no_parallelism_by_hand() -> None:
    # s·b·h·(34 + 5·a·s/h) with s=2, b=1, h=4, a=2: 8·(34 + 5·2·2/4) = 8·39 = 312 bytes.
    got = layer_activation_bytes(seq=2, micro_batch_size=1, hidden=4, heads=2)
    assert got.bytes == 312
    assert got.row == "no parallelism"


def test_gpt3_attention_term_is_80_and_selective_saves_70_percent() -> None:
    # Korthikanti et al. 2022 §5: 5as/h = 80 for GPT-3; selective recompute removes
    # 80/114 = 70.2 % of the no-recompute activations (the paper says 70 %).
    assert 5 * 96 * 2048 / 12288 == 80
    full = layer_activation_bytes(**GPT3).bytes
    selective = layer_activation_bytes(**GPT3, recompute="selective").bytes
    saved = (full - selective) / full
    assert saved == pytest.approx(80 / 114, rel=1e-12)
    assert round(saved * 100, 1) == 70.2


def test_toy_model_layers_alone() -> None:
    # Megatron-LM's 345M GPT-2 (its estimator; h=1024, a=16, L=24, s=1024, b=1, TP=PP=1, SP +
    # selective):
    # 34·s·h·L = 855,638,016 bytes for the layers alone.
    stage = stage_activation_bytes(
        seq=1024,
        micro_batch_size=1,
        hidden=1024,
        heads=16,
        layers=24,
        sequence_parallel=True,
        recompute="selective",
    )
    assert stage.layers_bytes == 855_638_016
    assert stage.extra_bytes == 0  # no vocab given: embedding/output left out and said so
    assert any("vocab" in note for note in stage.notes)


def test_toy_model_with_vocab_adds_output_layer() -> None:
    # Korthikanti §4.3 with p = 1: embedding dropout mask s·b·h plus 4·s·b·h·(1 + V/h) (t = 1).
    s, h, v = 1024, 1024, 50304
    stage = stage_activation_bytes(
        seq=s, micro_batch_size=1, hidden=h, heads=16, layers=24, vocab=v, recompute="selective"
    )
    assert stage.extra_bytes == s * h + 4 * s * h * (1 + v / h)


def test_1f1b_first_stage_holds_whole_model_layers() -> None:
    # Korthikanti et al. Eq. 5: with 1F1B the first stage holds p micro-batches of L/p layers,
    # i.e. the activations of all L layers.
    args = {"seq": 512, "micro_batch_size": 2, "hidden": 1024, "heads": 16, "layers": 24}
    no_pp = stage_activation_bytes(**args)
    for p in (2, 4, 8):
        staged = stage_activation_bytes(**args, pp=p, num_microbatches=4 * p)
        assert staged.in_flight == p
        assert staged.layers_bytes == pytest.approx(no_pp.layers_bytes, rel=1e-12)


def test_interleaving_factor() -> None:
    # Megatron-LM theoretical_memory_usage.py: interleaved 1F1B multiplies by 1 + (p-1)/(p·v).
    args = {"seq": 512, "micro_batch_size": 1, "hidden": 1024, "heads": 16, "layers": 32, "pp": 4}
    plain = stage_activation_bytes(**args, num_microbatches=8)
    interleaved = stage_activation_bytes(**args, num_microbatches=8, virtual_stages=2)
    assert interleaved.interleave_factor == 1 + 3 / 8
    assert interleaved.layers_bytes == pytest.approx(plain.layers_bytes * 1.375, rel=1e-12)


def test_gpipe_holds_all_micro_batches() -> None:
    # GPipe runs all m forwards before the backwards: m micro-batches in flight (Huang et al. 2019).
    args = {"seq": 128, "micro_batch_size": 1, "hidden": 256, "heads": 4, "layers": 8, "pp": 4}
    gpipe = stage_activation_bytes(**args, schedule="gpipe", num_microbatches=16)
    one_f_one_b = stage_activation_bytes(**args, num_microbatches=16)
    assert gpipe.in_flight == 16 and one_f_one_b.in_flight == 4
    assert gpipe.layers_bytes == pytest.approx(4 * one_f_one_b.layers_bytes)


def test_uneven_stages_report_the_heaviest() -> None:
    # 10 layers on 4 stages: 3, 3, 2, 2 -> the first stage holds ceil(10/4) = 3 layers.
    stage = stage_activation_bytes(
        seq=128, micro_batch_size=1, hidden=256, heads=4, layers=10, pp=4, num_microbatches=4
    )
    assert stage.layers_on_stage == 3
    assert stage.layers_bytes == pytest.approx(stage.per_layer.bytes * 3 * 4)
    assert any("uneven" in note for note in stage.notes)


def test_context_parallel_divides() -> None:
    args = {"seq": 4096, "micro_batch_size": 1, "hidden": 1024, "heads": 16, "layers": 4}
    assert stage_activation_bytes(**args, cp=4).total == pytest.approx(
        stage_activation_bytes(**args).total / 4
    )


def test_fp32_activations_keep_one_byte_masks() -> None:
    # §4.1 breakdown: 32·sbh + 4·as²b of 16-bit tensors, 2·sbh + as²b of 1-byte masks.
    s, b, h, a = 8, 1, 16, 2
    got = layer_activation_bytes(seq=s, micro_batch_size=b, hidden=h, heads=a, activation_bytes=4)
    assert got.bytes == 2 * 32 * s * b * h + 2 * 4 * a * s * s * b + 2 * s * b * h + a * s * s * b


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"tp": 3}, "tp"),
        ({"heads": 7}, "heads"),
        ({"seq": 0}, "seq"),
        ({"micro_batch_size": -1}, "micro_batch_size"),
        ({"hidden": 1.5}, "hidden"),
        ({"seq": math.nan}, "seq"),
        ({"seq": math.inf}, "seq"),
        ({"recompute": "some"}, "recompute"),
    ],
)
def test_layer_errors_name_the_field(kwargs: dict[str, object], field: str) -> None:
    args: dict[str, object] = {
        "seq": 128,
        "micro_batch_size": 1,
        "hidden": 256,
        "heads": 4,
        **kwargs,
    }
    with pytest.raises(InputError) as info:
        layer_activation_bytes(**args)  # type: ignore[arg-type]
    assert info.value.field == field


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"pp": 9}, "pp"),
        ({"schedule": "zb"}, "schedule"),
        ({"virtual_stages": 2, "schedule": "gpipe", "pp": 2}, "virtual_stages"),
        ({"virtual_stages": 2}, "virtual_stages"),
        ({"virtual_stages": 2, "pp": 4, "num_microbatches": 6}, "num_microbatches"),
        ({"virtual_stages": 4, "pp": 4}, "virtual_stages"),
    ],
)
def test_stage_errors_name_the_field(kwargs: dict[str, object], field: str) -> None:
    args: dict[str, object] = {
        "seq": 128,
        "micro_batch_size": 1,
        "hidden": 256,
        "heads": 4,
        "layers": 8,
        **kwargs,
    }
    with pytest.raises(InputError) as info:
        stage_activation_bytes(**args)  # type: ignore[arg-type]
    assert info.value.field == field


@given(
    s=st.integers(1, 8192),
    b=st.integers(1, 64),
    heads_per_tp=st.integers(1, 8),
    tp=st.sampled_from([1, 2, 4, 8]),
    head_dim=st.integers(1, 256),
    sp=st.booleans(),
    recompute=st.sampled_from(["none", "selective", "full"]),
)
def test_per_layer_finite_positive_and_never_above_unparallel(
    s: int, b: int, heads_per_tp: int, tp: int, head_dim: int, sp: bool, recompute: str
) -> None:
    heads = heads_per_tp * tp
    hidden = heads * head_dim
    got = layer_activation_bytes(
        seq=s,
        micro_batch_size=b,
        hidden=hidden,
        heads=heads,
        tp=tp,
        sequence_parallel=sp,
        recompute=recompute,
    ).bytes
    plain = layer_activation_bytes(seq=s, micro_batch_size=b, hidden=hidden, heads=heads).bytes
    assert math.isfinite(got) and 0 < got <= plain * (1 + 1e-12)


def test_param_count_matches_narayanan_eq2_for_gpt3() -> None:
    # Narayanan et al. 2021 Eq. 2: P = 12·l·h²·(1 + 13/(12h) + (V + s)/(12·l·h)); GPT-3 175B with
    # l=96, h=12288, V=51200, s=2048 (the paper's Table 1 row) is about 174.6e9.
    n_layers, h, v, s = 96, 12288, 51200, 2048
    paper = 12 * n_layers * h**2 * (1 + 13 / (12 * h) + (v + s) / (12 * n_layers * h))
    size = transformer_param_count(layers=n_layers, hidden=h, vocab=v, seq=s)
    assert size.total == pytest.approx(paper, rel=1e-12)
    assert round(size.total / 1e9, 1) == 174.6


def test_param_count_toy_345m() -> None:
    # Megatron-LM's "345M" GPT-2 (h=1024, L=24, FFN 4096, V=50304, s=1024):
    # 24·(12·1024² + 13·1024) + (50304 + 1024)·1024 = 354,869,248.
    size = transformer_param_count(layers=24, hidden=1024, vocab=50304, seq=1024)
    assert size.total == 354_869_248
    assert size.largest_module == 50304 * 1024  # the embedding is the largest module


def test_param_count_experts() -> None:
    # Megatron-LM theoretical_memory_usage.py: an MoE layer holds E expert MLPs and its router,
    # h·E weights plus E biases when linear layers have biases (router_params).
    size = transformer_param_count(layers=2, hidden=8, vocab=10, ffn_hidden=16, experts=4)
    mlp = 2 * 8 * 16 + 16 + 8
    router = 8 * 4 + 4
    assert size.total == 2 * (4 * 64 + 8 * 8 + 4 * mlp + router) + 10 * 8
    assert size.expert_params == 2 * 4 * mlp


# --- The same terms for any shape (GQA, MLP size, gated MLP, flash attention) ------------------


def test_ffn_size_enters_the_activations_as_megatron_counts_it() -> None:
    # Megatron-LM theoretical_memory_usage.py compute_activation_memory (sequence parallel and
    # selective recompute): s·b·h·(18 + 4·ffn/h)/t per layer; here f = 3h and f = 8h.
    s, b, h, a, t = 1024, 2, 1024, 16, 4
    for ffn in (3 * h, 8 * h):
        shape = ModelShape(layers=1, hidden=h, heads=a, ffn_hidden=ffn)
        got = layer_activation_bytes(
            seq=s,
            micro_batch_size=b,
            hidden=h,
            heads=a,
            tp=t,
            sequence_parallel=True,
            recompute="selective",
            shape=shape,
        )
        assert got.bytes == pytest.approx(s * b * h * (18 + 4 * ffn / h) / t, rel=1e-12)


def test_llama2_7b_flash_against_eager_at_8k() -> None:
    # Llama 2 7B (config.json: h 4096, 32 heads, MLP 11008, SwiGLU, no dropout) at s = 8192, b = 1.
    # Per layer, 2-byte tensors: the two norm inputs, QKV and MLP inputs 4·2·s·h; Q, K, V and the
    # attention output 2·s·(4·4096); the gated MLP's gate, up, activation and product 4·2·s·f.
    # Eager attention adds the softmax output 2·a·s² (no dropout: no mask, no dropout output).
    s, h, f, a = 8192, 4096, 11008, 32
    flash_layer = s * (8 * h + 2 * 4 * 4096 + 8 * f)
    eager_layer = flash_layer + 2 * a * s * s
    shape = get_preset("llama2-7b").shape
    common = {"seq": s, "micro_batch_size": 1, "hidden": h, "heads": a}
    flash = layer_activation_bytes(**common, shape=replace(shape, attention="flash"))
    eager = layer_activation_bytes(**common, shape=shape)
    assert flash.bytes == flash_layer and eager.bytes == eager_layer
    assert round(32 * flash_layer / 2**30, 1) == 37.5  # GiB for the 32 layers, not 165
    assert round(32 * eager_layer / 2**30, 1) == 165.5
    assert "flash" in flash.row


def test_gqa_keeps_smaller_keys_and_values() -> None:
    # Llama 2 70B: 8 key/value heads of 64 (config.json): K and V are 1024 wide, not 8192.
    s, h = 4096, 8192
    shape = get_preset("llama2-70b").shape
    gqa = layer_activation_bytes(seq=s, micro_batch_size=1, hidden=h, heads=64, shape=shape).bytes
    mha = layer_activation_bytes(
        seq=s, micro_batch_size=1, hidden=h, heads=64, shape=replace(shape, kv_heads=64)
    ).bytes
    assert mha - gqa == 2 * 2 * s * (h - 1024)


def test_the_gpt_shape_is_table2() -> None:
    # The default shape (q = kv = h, GeLU MLP of 4h, dropout, eager) is Table 2's layer.
    shape = ModelShape(layers=96, hidden=12288, heads=96)
    for recompute in ("none", "selective", "full"):
        plain = layer_activation_bytes(**GPT3, tp=8, recompute=recompute).bytes
        shaped = layer_activation_bytes(**GPT3, tp=8, recompute=recompute, shape=shape).bytes
        assert shaped == plain


def test_tp_must_divide_kv_heads() -> None:
    shape = get_preset("llama2-70b").shape  # 8 key/value heads
    with pytest.raises(InputError) as info:
        layer_activation_bytes(seq=8, micro_batch_size=1, hidden=8192, heads=64, tp=16, shape=shape)
    assert info.value.field == "tp"
