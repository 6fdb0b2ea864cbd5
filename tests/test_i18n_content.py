"""A lesson file's problems in the interface language: ``shardbook --lang zh check-content``
and a broken lesson on the main screen say what is wrong in Chinese, the field path, the
file's path and the values quoted from the file as the file writes them; ``--lang en`` keeps
the English wording (tests/test_lesson_loader.py and tests/test_malformed_content.py)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from cli.main import main
from engine.i18n import set_language
from engine.lesson import check_file, discover_lessons
from tests.pilot_helpers import SIZE, reading_text, wait_until
from tests.test_lesson_loader import VALID
from tests.test_malformed_content import LINE, MALFORMED, swap, write_all
from tui.app import make_app

CJK = re.compile(r"[\u3400-\u9fff]")
# One file per kind of problem, each with the message it must give in Chinese (the field path
# and the values from the file stay literal).
IN_CHINESE = {
    "missing-id": "id：缺少必填字段",
    "tab-indent": "YAML 不能用制表符缩进；请用空格缩进",
    "duplicate-top-key": "title：重复的键（第一次出现在第 3 行）；只保留一个",
    "wrong-type-day": "meta.day：应为不小于 1 的整数，得到的是 'one'",
    "top-level-list": "应为映射，得到的是列表",
    "anchor-alias": "不允许锚点（&p）；请把文本完整写出",
    "empty": "文件是空的；课程以 'schema_version: 1' 开头",
    "invalid-utf8": "不是有效的 UTF-8（文件的第 32 字节）；请把文件存为 UTF-8",
    "lone-surrogate": "含有孤立的代理码位（U+D800），它不是文本",
    "wrong-kind": (
        "sections[0].kind：'essay' 不是章节类型；请用 "
        "prose, list, objectives, exercises, self-check, reflection 之一"
    ),
}
IN_ENGLISH = {
    "missing-id": "id: missing required field",
    "tab-indent": "a tab character cannot indent YAML; indent with spaces",
    "wrong-type-day": "meta.day: expected a whole number of at least 1, got 'one'",
}
# A lesson whose id and title are fine (it is listed) but whose meta has no date.
NO_DATE = swap("  date: 2026-12-07\n", "")


def test_every_malformed_file_is_explained_in_chinese(tmp_path: Path) -> None:
    paths = write_all(tmp_path)
    set_language("zh")
    for name, path in paths.items():
        errors = check_file(path)
        assert errors, name
        for error in errors:
            assert CJK.search(error.message), (name, error.message)
            assert LINE.match(str(error)), str(error)  # FILE:LINE: stays as editors read it
    for name, message in IN_CHINESE.items():
        assert check_file(paths[name])[0].message == message
    set_language("en")
    for name, message in IN_ENGLISH.items():
        assert check_file(paths[name])[0].message == message


def test_check_content_in_chinese(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Each problem and the summary line; then a folder where every lesson is valid."""
    paths = write_all(tmp_path / "bad")
    assert main(["--lang", "zh", "check-content", str(tmp_path / "bad")]) == 1
    out = capsys.readouterr().out.splitlines()
    problems = out[:-1]
    assert out[-1] == (
        f"已检查 {len(MALFORMED)} 个课程文件：{len(MALFORMED)} 个文件中有 {len(problems)} 个问题"
    )
    for line in problems:
        match = LINE.match(line)
        assert match and CJK.search(match["message"]), line
    assert f"{paths['missing-id']}:1: id：缺少必填字段" in problems
    good = tmp_path / "good"
    good.mkdir()
    (good / "T1.yaml").write_text(VALID, encoding="utf-8")
    assert main(["check-content", str(good), "--lang", "zh"]) == 0
    assert capsys.readouterr().out.splitlines() == ["已检查 1 个课程文件：全部有效"]
    empty = tmp_path / "empty"
    empty.mkdir()
    assert main(["--lang", "zh", "check-content", str(empty)]) == 1
    assert capsys.readouterr().out.splitlines() == [
        f"{empty}: 文件夹中没有课程文件（*.yaml）",
        "已检查 0 个课程文件：1 个文件中有 1 个问题",
    ]


def test_the_index_reads_a_cached_error_again_in_another_language(tmp_path: Path) -> None:
    content = tmp_path / "content"
    content.mkdir()
    (content / "T1.yaml").write_text(swap("id: T1\n", ""), encoding="utf-8")
    index = tmp_path / "index.json"
    _refs, errors = discover_lessons(content, index)
    assert [error.message for error in errors] == ["id: missing required field"]
    set_language("zh")
    _refs, errors = discover_lessons(content, index)
    assert [error.message for error in errors] == ["id：缺少必填字段"]


async def test_a_broken_lesson_is_explained_in_chinese(tmp_path: Path) -> None:
    """Opened under ``--lang zh``: a lesson listed but broken further down, then one that
    could not even be listed (from the palette); switched to English and back, the message
    follows the language."""
    content = tmp_path / "content"
    content.mkdir()
    (content / "T1.yaml").write_text(NO_DATE, encoding="utf-8")
    unlisted = content / "nul-bytes.yaml"
    unlisted.write_bytes(MALFORMED["nul-bytes"])
    app = make_app(
        lesson_id="T1", content_dir=content, progress_dir=tmp_path / "progress", language="zh"
    )
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        text = reading_text(app)
        assert "无法打开这门课程" in text
        assert f"{content / 'T1.yaml'}:5: meta.date：缺少必填字段" in text
        assert "missing" not in text and "cannot be opened" not in text
        entries = {entry[0]: entry for entry in app.palette_entries()}
        title, help_text, show = next(e for t, e in entries.items() if "nul-bytes.yaml" in t)
        assert title == "打开课程：nul-bytes.yaml （无法读取）"
        assert help_text == "含有 YAML 不允许的控制字符（U+0000）"
        show()
        await pilot.pause()
        assert f"{unlisted}:1: 含有 YAML 不允许的控制字符（U+0000）" in reading_text(app)
        await pilot.press("ctrl+p", *"English", "enter")  # the palette's language switch
        await wait_until(pilot, lambda: "This lesson cannot be opened" in reading_text(app))
        english = f"{unlisted}:1: contains a control character (U+0000) that YAML does not allow"
        assert english in reading_text(app)
        app.open_lesson("T1")
        await pilot.pause()
        assert f"{content / 'T1.yaml'}:5: meta.date: missing required field" in reading_text(app)
        await pilot.press("ctrl+p", *"中文", "enter")
        await wait_until(pilot, lambda: "无法打开这门课程" in reading_text(app))
        assert f"{content / 'T1.yaml'}:5: meta.date：缺少必填字段" in reading_text(app)
        await pilot.press("ctrl+q")
    assert app.return_code == 0
