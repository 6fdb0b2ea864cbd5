"""The command line's text output in Chinese: the tables' headings and labels are translated,
the numbers, units, flags and the field's terms are not, and ``--json`` keeps its keys and
figures in both languages. The rest of the suite reads the English output
(``tests/conftest.py``)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from cli.main import main

# The ZeRO paper (Rajbhandari et al. 2020, arXiv:1910.02054) Figure 1: Psi = 7.5B parameters,
# N_d = 64, K = 12; ZeRO-1 (P_os) needs 31.4 GB per device.
LEDGER = ["calc", "ledger", "--params", "7.5B", "--dp", "64", "--zero", "1"]


def test_ledger_table_in_chinese(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--lang", "zh", *LEDGER]) == 0
    out = capsys.readouterr().out
    assert "每个 rank 的显存，口径 zero-paper" in out
    for label in (
        "项",
        "参数",
        "梯度",
        "优化器状态",
        "合计",
        "模型状态",
        "朴素估计：参数量 x 精度",
    ):
        assert re.search(rf"[│┃] {re.escape(label)} +[│┃]", out), label
    # Units and the field's terms as the sources write them.
    assert "GB (1e9 B)" in out and "GiB (2^30 B)" in out
    assert "ZeRO-1/2/3" in out
    # The app's words: "master 权重" (as in "fp32 master 权重"), "activation 未计算".
    assert re.search(r"│ master 权重 +│", out)
    assert re.search(r"│ 合计 +│ +31\.406 │ +29\.249 │", out)
    assert "activation 未计算：请给出 --seq、--layers、--hidden 和 --heads" in out
    # Each formula headed by its row's label with the Chinese colon, never by the engine's key.
    heads = re.findall(r"^  ([^\s：]+(?: 权重)?)：", out, flags=re.MULTILINE)
    assert heads == ["参数", "梯度", "master 权重", "优化器状态", "activation", "buffer"]
    assert not re.search(r"^  [a-z_]+:", out, flags=re.MULTILINE)
    for english in (
        "per-rank memory",
        "term",
        "gradients",
        "optimizer states",
        "master weights",
        "total",
    ):
        assert english not in out


def test_ledger_json_keys_and_numbers_are_the_same_in_both_languages(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """``--json`` keeps its keys and its figures in both languages (only the formulas' words
    follow the language)."""
    assert main(["--lang", "en", *LEDGER, "--json"]) == 0
    english = json.loads(capsys.readouterr().out)
    assert main(["--lang", "zh", *LEDGER, "--json"]) == 0
    chinese = json.loads(capsys.readouterr().out)
    assert chinese.keys() == english.keys()
    assert chinese["per_rank_bytes"] == english["per_rank_bytes"]
    assert english["per_rank_bytes"]["total"] == pytest.approx(31.4e9, rel=2e-3)


def test_engine_error_in_chinese_names_the_flag(capsys: pytest.CaptureFixture[str]) -> None:
    """An engine check's message (the TP degree must divide the heads) in Chinese, the flags and
    the values literal; English as before."""
    bad = ["calc", "ledger", "--params", "7B", "--tp", "3", "--heads", "32", "--hidden", "4096"]
    assert main(["--lang", "zh", *bad, "--layers", "32"]) == 2
    assert "--tp: 必须整除 --heads（32）；TP 3 不能整除" in capsys.readouterr().err
    assert main(["--lang", "en", *bad, "--layers", "32"]) == 2
    assert "--tp: must divide --heads (32); TP 3 does not" in capsys.readouterr().err


def test_an_unknown_diagram_is_quoted_in_the_languages_quotes(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The name typed is quoted as every message quotes the learner's input: “xyz” beside the
    Chinese text with no space, 'xyz' in English (not Python's repr)."""
    assert main(["--lang", "zh", "diagram", "x[/]z"]) == 2
    assert "未知示意图“x[/]z”；请用 dp" in capsys.readouterr().err
    assert main(["--lang", "en", "diagram", "x[/]z"]) == 2
    assert "unknown diagram 'x[/]z'; use one of dp" in capsys.readouterr().err


def test_an_unknown_lesson_is_quoted_in_the_languages_quotes(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """As the diagram's name: the lesson id typed in “” beside the Chinese text, with no space."""
    assert main(["--lang", "zh", "plan", "S99"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("shardbook: plan: LESSON: ")
    assert err.rstrip("\n").endswith("中没有课程“S99”（现有课程：S15）")


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (
            ["calc", "ledger", "--params", "7e9", "--lora-rank", "16"],
            "shardbook: calc ledger: --lora-rank: 只适用于 --finetune lora 或 qlora",
        ),
        (
            ["calc", "step", "--model", "llama2-7b", "--gpus", "8", "--capacity-factor", "2"],
            "shardbook: calc step: --capacity-factor: 只适用于混合专家模型（--experts 大于 1）",
        ),
        (
            [
                "calc",
                "ledger",
                "--params",
                "7e9",
                "--dp",
                "16",
                "--nodes",
                "2",
                "--gpus-per-node",
                "1",
            ],
            "shardbook: calc ledger: --nodes: 2 个节点 × 每节点 1 个 GPU 不等于总 GPU 数 16",
        ),
    ],
)
def test_a_flag_with_no_effect_and_a_count_in_chinese(
    capsys: pytest.CaptureFixture[str], argv: list[str], expected: str
) -> None:
    assert main(["--lang", "zh", *argv]) == 2
    assert capsys.readouterr().err == expected + "\n"


def test_the_bubble_report_counts_in_chinese(capsys: pytest.CaptureFixture[str]) -> None:
    """One stage, one micro-batch, two chunks: the counts in Chinese's one form."""
    argv = ["calc", "bubble", "--schedule", "interleaved-1f1b", "--stages", "1"]
    assert main(["--lang", "zh", *argv, "--micro-batches", "1", "--virtual-stages", "2"]) == 0
    out = capsys.readouterr().out
    first = "调度 interleaved-1f1b：p=1 个 stage，m=1 个 micro-batch，每个 stage v=2 块"
    assert out.splitlines()[0] == first
    assert "2 个 chunk = 折合 1 个 micro-batch（" in out


def test_unreadable_progress_file_in_chinese(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A progress file that is not a mapping: ``shardbook plan`` says so in Chinese, naming the
    file, and leaves it where it is."""
    (tmp_path / "S15.yaml").write_text("- a list\n", encoding="utf-8")
    assert main(["--lang", "zh", "plan", "S15", "--progress-dir", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "S15.yaml" in err
    assert "不是进度文件（应为映射）" in err
    assert (tmp_path / "S15.yaml").read_text(encoding="utf-8") == "- a list\n"


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (
            ["--lang", "fr"],
            "shardbook: argument --lang: invalid choice: 'fr' (choose from 'zh', 'en')",
        ),
        (["--progress-dir"], "shardbook: argument --progress-dir: expected one argument"),
        (["--lang", "zh", "--progress-dir"], "shardbook: 参数 --progress-dir：需要一个参数值"),
    ],
)
def test_a_bad_language_or_folder_flag_is_one_line_like_every_usage_error(
    argv: list[str], expected: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """The flags read before the parser is built (to choose the language of ``--help``) once
    printed their own usage line, naming ``PROGRESS_DIR`` where ``--help`` says ``DIR``; a bad
    value is now reported by the full parser, in one line, in the language asked for."""
    with pytest.raises(SystemExit) as exited:
        main(argv)
    assert exited.value.code == 2
    assert capsys.readouterr().err.strip() == expected


def test_plan_in_chinese_names_the_reviews_step_in_chinese(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """The last step's title was the English ``spaced review`` (marked for translation, never
    translated when printed); ``--json`` keeps it as the engine gives it."""
    assert main(["--lang", "zh", "plan", "--progress-dir", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert re.search(r"^已完成 +复习 +测验 +间隔复习$", out, flags=re.MULTILINE), out
    assert "spaced review" not in out
    assert main(["--lang", "zh", "plan", "--progress-dir", str(tmp_path), "--json"]) == 0
    steps = json.loads(capsys.readouterr().out)["steps"]
    assert steps[-1]["title"] == "spaced review"


def test_export_to_a_missing_folder_names_the_flag_in_chinese(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """The reason was the English "no such folder" inside the Chinese sentence."""
    target = tmp_path / "absent" / "x.md"
    assert (
        main(["--lang", "zh", "export", "S15", "--progress-dir", str(tmp_path), "-o", str(target)])
        == 2
    )
    assert capsys.readouterr().err == (
        f"shardbook: export: -o: {target}：无法写入（没有这个文件夹）\n"
    )
