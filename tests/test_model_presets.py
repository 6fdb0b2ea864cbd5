"""Model presets and shapes (engine.model_presets, engine.model_size): every preset reproduces the
parameter count its source publishes, a custom shape typed with the flags reproduces the same
counts, and the presets file is read strictly. Counts and shapes are written here with their
sources (config.json of each Hugging Face repository; the Hub's safetensors metadata; papers)."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from cli.main import main
from engine.errors import InputError
from engine.ledger import LedgerSpec, compute_ledger
from engine.model_presets import get_preset, model_presets, parse_presets, resolve_shape
from engine.model_size import ModelShape, shape_param_count
from tests.cli_helpers import calc_json

# Published counts. Exact ones: the Hugging Face Hub's safetensors metadata of each repository
# (the model page's "Model size"; PEFT's print_trainable_parameters prints the same "all params"
# before adapters). Rounded ones: the paper's figure and its significant digits.
PUBLISHED: dict[str, tuple[float, int | None]] = {
    # Brown et al. 2020 (arXiv:2005.14165) Table 2.1 "175.0B"; Narayanan et al. 2021 Table 1: 175.
    "gpt3-175b": (175e9, 3),
    # Brown et al. 2020 Table 2.1, GPT-3 XL: "1.3B".
    "lesson-1b": (1.3e9, 2),
    "llama2-7b": (6_738_415_616, None),  # meta-llama/Llama-2-7b-hf
    "llama2-13b": (13_015_864_320, None),  # meta-llama/Llama-2-13b-hf
    "llama2-70b": (68_976_648_192, None),  # meta-llama/Llama-2-70b-hf
    "llama3.1-8b": (8_030_261_248, None),  # meta-llama/Llama-3.1-8B
    "llama3.1-70b": (70_553_706_496, None),  # meta-llama/Llama-3.1-70B
    "llama3.1-405b": (405_853_388_800, None),  # meta-llama/Llama-3.1-405B
    "llama3.2-1b": (1_235_814_400, None),  # meta-llama/Llama-3.2-1B
    "llama3.2-3b": (3_212_749_824, None),  # meta-llama/Llama-3.2-3B
    "mixtral-8x7b": (46_702_792_704, None),  # mistralai/Mixtral-8x7B-v0.1
}

# The custom-shape flags of each Llama-class preset, from its config.json (hidden_size,
# intermediate_size, num_hidden_layers, num_attention_heads, num_key_value_heads, vocab_size,
# tie_word_embeddings, num_local_experts, num_experts_per_tok).
CONFIGS: dict[str, tuple[int, int, int, int, int, int]] = {
    # layers, hidden, heads, key/value heads, MLP size, vocabulary
    "llama2-7b": (32, 4096, 32, 32, 11008, 32000),
    "llama2-13b": (40, 5120, 40, 40, 13824, 32000),
    "llama2-70b": (80, 8192, 64, 8, 28672, 32000),
    "llama3.1-8b": (32, 4096, 32, 8, 14336, 128256),
    "llama3.1-70b": (80, 8192, 64, 8, 28672, 128256),
    "llama3.1-405b": (126, 16384, 128, 8, 53248, 128256),
    "mixtral-8x7b": (32, 4096, 32, 8, 14336, 32000),
}
MIXTRAL_EXPERTS = ["--experts", "8", "--top-k", "2"]


def _llama_flags(name: str) -> list[str]:
    layers, hidden, heads, kv_heads, ffn, vocab = CONFIGS[name]
    flags = ["--layers", str(layers), "--hidden", str(hidden), "--heads", str(heads)]
    flags += ["--kv-heads", str(kv_heads), "--ffn-hidden", str(ffn), "--vocab", str(vocab)]
    return flags + (MIXTRAL_EXPERTS if name == "mixtral-8x7b" else [])


LLAMA_LAYOUT = ["--mlp", "swiglu", "--norm", "rmsnorm", "--no-bias", "--untied-embeddings"]


def _rounded(value: float, digits: int) -> float:
    return float(f"{value:.{digits}g}")


@pytest.mark.parametrize("name", sorted(PUBLISHED))
def test_each_preset_reproduces_its_published_count(name: str) -> None:
    published, digits = PUBLISHED[name]
    preset = get_preset(name)
    assert preset.published == published and preset.digits == digits
    count = preset.size.total
    if digits is None:
        assert count == published
    else:
        assert _rounded(count, digits) == published
    assert preset.source


def test_every_preset_is_listed_here() -> None:
    # The required presets are there, and none escapes the published-count check above.
    assert set(model_presets()) == set(PUBLISHED)


def test_llama2_7b_count_by_hand() -> None:
    # Llama 2 7B (config.json): per layer q, k, v, o 4·h² + SwiGLU 3·h·f + two RMSNorms 2h;
    # untied embedding and output layer 2·V·h; final RMSNorm h.
    h, f, layers, vocab = 4096, 11008, 32, 32000
    by_hand = layers * (4 * h * h + 3 * h * f + 2 * h) + 2 * vocab * h + h
    assert by_hand == 6_738_415_616
    assert get_preset("llama2-7b").size.total == by_hand


def test_gqa_and_moe_by_hand() -> None:
    # Mixtral 8x7B (config.json): GQA 8 of 32 heads (K and V 1024 wide), 8 SwiGLU experts of
    # 14336 and a router h·E per layer (Megatron-LM theoretical_memory_usage.py router_params).
    h, f, layers, experts, vocab = 4096, 14336, 32, 8, 32000
    attention = h * (h + 2 * 1024) + h * h
    per_layer = attention + experts * 3 * h * f + h * experts + 2 * h
    assert layers * per_layer + 2 * vocab * h + h == 46_702_792_704


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_custom_shape_flags_reproduce_the_llama_presets(
    capsys: pytest.CaptureFixture[str], name: str
) -> None:
    data = calc_json(capsys, "ledger", *_llama_flags(name), *LLAMA_LAYOUT)
    assert data["params_total"] == PUBLISHED[name][0]


def test_calc_ledger_model_llama2_7b(capsys: pytest.CaptureFixture[str]) -> None:
    data = calc_json(capsys, "ledger", "--model", "llama2-7b")
    assert data["params_total"] == 6_738_415_616
    assert data["model"] == "llama2-7b"
    # Full fine-tuning, mixed-precision Adam (ZeRO paper §3.1): 16 B per parameter.
    assert data["per_rank_bytes"]["total"] == 16 * 6_738_415_616
    assert data["trainable_params"] == 6_738_415_616


def test_the_old_gpt_flags_keep_their_count(capsys: pytest.CaptureFixture[str]) -> None:
    # Without a preset the shape is the GPT of Narayanan et al. 2021 Eq. 2: Llama 2 7B's sizes
    # typed that way give 23 % fewer parameters (two MLP matrices, tied embeddings).
    flags = ["--layers", "32", "--hidden", "4096", "--heads", "32", "--ffn-hidden", "11008"]
    data = calc_json(capsys, "ledger", *flags, "--vocab", "32000")
    assert data["params_total"] == 32 * (
        4 * 4096**2 + 8 * 4096 + 2 * 4096 * 11008 + 11008 + 4096
    ) + (32000 * 4096)
    assert data["params_total"] == 5_165_768_704


def test_flags_after_model_override_it(capsys: pytest.CaptureFixture[str]) -> None:
    # Llama 2 7B with 16 of its 32 layers: 16 layers fewer of 202,383,360 each.
    data = calc_json(capsys, "ledger", "--model", "llama2-7b", "--layers", "16")
    assert data["params_total"] == 6_738_415_616 - 16 * (4 * 4096**2 + 3 * 4096 * 11008 + 8192)
    tied = calc_json(capsys, "ledger", "--model", "llama2-7b", "--norm", "layernorm")
    # LayerNorm has a bias: 2h per norm instead of h, 65 norms (2 per layer and the final one).
    assert tied["params_total"] == 6_738_415_616 + 65 * 4096


def test_unknown_model_is_one_line_naming_the_flag(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["calc", "ledger", "--model", "llama9-1t", "--json"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--model" in err[0] and "llama2-7b" in err[0]


def test_sequence_beyond_the_models_context_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    # Llama 2 was trained with 4,096-token sequences (its config.json max_position_embeddings).
    assert main(["calc", "ledger", "--model", "llama2-7b", "--seq", "8192", "--json"]) == 2
    assert "--seq" in capsys.readouterr().err
    data = calc_json(capsys, "ledger", "--model", "llama2-7b", "--seq", "4096")
    assert data["activations_computed"] is True


def test_models_json(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["models", "--json"]) == 0
    out = capsys.readouterr().out
    assert out.count("\n") == 1
    payload = json.loads(out)
    assert list(payload) == ["models"]  # one object, as every --json output
    data = payload["models"]
    assert [item["name"] for item in data] == list(model_presets())
    by_name = {item["name"]: item for item in data}
    for name, (published, digits) in PUBLISHED.items():
        item = by_name[name]
        assert {"name", "params_total", "source", "shape"} <= set(item)
        if digits is None:
            assert item["params_total"] == published
        assert item["source"]
    assert by_name["llama3.1-8b"]["shape"]["kv_heads"] == 8
    assert by_name["mixtral-8x7b"]["shape"]["experts"] == 8


def test_models_table(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["models"]) == 0
    out = capsys.readouterr().out
    assert "6,738,415,616" in out and "mixtral-8x7b" in out


# --- The presets file is read strictly ---------------------------------------------------------

GOOD = """
tiny:
  title: a tiny model
  published: 1000
  source: this test
  shape: {layers: 1, hidden: 4, vocab: 10}
"""


def test_parse_presets_reads_a_good_file() -> None:
    presets = parse_presets(GOOD, "test.yaml")
    assert presets["tiny"].shape.layers == 1


@pytest.mark.parametrize(
    ("text", "words"),
    [
        (GOOD + GOOD, "duplicate key"),
        (GOOD.replace("title:", "titel:"), "unknown key"),
        (GOOD.replace("  source: this test\n", ""), "missing source"),
        (GOOD.replace("layers: 1", "layers: 0"), "layers"),
        (GOOD.replace("vocab: 10", "vocab: 10, mlp: relu"), "mlp"),
        (GOOD.replace("vocab: 10", "vocab: 10, width: 3"), "unknown fields"),
        ("- a list", "mapping"),
        ("tiny: [unclosed", "test.yaml"),
        ("tiny: !!python/object:os.system x", "test.yaml"),
    ],
)
def test_parse_presets_refuses_bad_files(text: str, words: str) -> None:
    with pytest.raises(InputError) as info:
        parse_presets(text, "test.yaml")
    assert info.value.field == "model"
    assert words in info.value.message and "test.yaml" in info.value.message


# --- Shapes -----------------------------------------------------------------------------------


def test_resolve_shape_layouts() -> None:
    # The norm kind names the layout of what is left out (engine.model_size docstring).
    gpt = resolve_shape({}, None)
    assert (gpt["positions"], gpt["final_norm"], gpt["dropout"]) == ("learned", False, True)
    llama = resolve_shape({"norm": "rmsnorm"}, None)
    assert (llama["positions"], llama["final_norm"], llama["dropout"]) == ("rotary", True, False)
    # A given field beats the preset's.
    assert resolve_shape({"layers": 3}, "llama2-7b")["layers"] == 3


@pytest.mark.parametrize(
    ("values", "field"),
    [
        ({"kv_heads": 8}, "kv_heads"),
        ({"heads": 32, "kv_heads": 5}, "kv_heads"),
        ({"heads": 4, "kv_heads": 8}, "kv_heads"),
        ({"hidden": 100, "heads": 16}, "heads"),
        ({"head_dim": 64}, "head_dim"),
        ({"experts": 2, "top_k": 3}, "top_k"),
        ({"shared_experts": 1}, "shared_experts"),
        ({"mlp": "relu"}, "mlp"),
        ({"bias": "no"}, "bias"),
        ({"layers": 2.5}, "layers"),
    ],
)
def test_bad_shapes_name_the_field(values: dict[str, Any], field: str) -> None:
    with pytest.raises(InputError) as info:
        resolve_shape(values, None)
    assert info.value.field == field


@given(
    layers=st.integers(1, 64),
    heads=st.sampled_from([8, 16, 32]),
    groups=st.sampled_from([1, 2, 4, 8]),
    head_dim=st.sampled_from([32, 64, 128]),
    ffn=st.integers(1, 20000),
    vocab=st.integers(1, 200000),
    mlp=st.sampled_from(["gelu", "swiglu"]),
)
def test_fewer_kv_heads_never_add_parameters(
    layers: int, heads: int, groups: int, head_dim: int, ffn: int, vocab: int, mlp: str
) -> None:
    # GQA shares K and V between heads: the count falls by 2·h·(q - kv) per layer exactly.
    hidden = heads * head_dim
    common = {"layers": layers, "hidden": hidden, "heads": heads, "ffn_hidden": ffn}
    mha = shape_param_count(ModelShape(**common, vocab=vocab, mlp=mlp))
    gqa = shape_param_count(ModelShape(**common, vocab=vocab, mlp=mlp, kv_heads=heads // groups))
    saved = layers * 2 * (hidden * (hidden - hidden // groups) + (hidden - hidden // groups))
    assert mha.total - gqa.total == saved


def test_preset_through_the_engine_spec() -> None:
    result = compute_ledger(LedgerSpec(model="llama3.1-405b"))
    assert result.params_total == 405_853_388_800
    assert result.spec.kv_heads == 8 and result.spec.mlp == "swiglu"
