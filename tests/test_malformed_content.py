"""Malformed lesson files: each one gives ``FILE:LINE: message`` from
``shardbook check-content`` and a readable message in the app, never a traceback; the app
still opens the good lessons beside them."""

from __future__ import annotations

import random
import re
import shutil
from pathlib import Path

import pytest

from cli.main import main
from engine.lesson import check_file, discover_lessons
from tests.pilot_helpers import ROOT, SIZE, reading_text
from tests.test_lesson_loader import VALID
from tui.app import make_app

ALIAS_BOMB = "a: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(
    f"{chr(98 + i)}: &{chr(98 + i)} [{', '.join(['*' + chr(97 + i)] * 9)}]\n" for i in range(8)
)


def swap(old: str, new: str) -> str:
    assert old in VALID
    return VALID.replace(old, new, 1)


# name -> file bytes. Each is a different way a lesson file goes wrong.
MALFORMED: dict[str, bytes] = {
    "tab-indent": swap("  kind: 预习教材", "\tkind: 预习教材").encode(),
    "bom-then-tab": b"\xef\xbb\xbf" + swap("  date:", "\tdate:").encode(),
    "bom-duplicate-key": b"\xef\xbb\xbf" + swap("title: 测试课\n", "title: a\ntitle: b\n").encode(),
    "utf16-bom": VALID.encode("utf-16"),
    "duplicate-top-key": swap("title: 测试课\n", "title: 测试课\ntitle: 又一个\n").encode(),
    "duplicate-nested-key": swap("  phase: P2\n", "  phase: P2\n  phase: P3\n").encode(),
    "missing-id": swap("id: T1\n", "").encode(),
    "missing-title": swap("title: 测试课\n", "").encode(),
    "missing-meta-date": swap("  date: 2026-12-07\n", "").encode(),
    "missing-item-text": swap("        text: 为什么？\n", "").encode(),
    "unknown-top-field": (VALID + "author: me\n").encode(),
    "unknown-meta-field": swap("  phase: P2\n", "  phase: P2\n  colour: red\n").encode(),
    "wrong-type-sections": swap("sections:\n", "sections: none\nunused:\n").encode(),
    "wrong-type-day": swap("  day: 1\n", "  day: one\n").encode(),
    "wrong-type-title-list": swap("title: 测试课\n", "title: [a, b]\n").encode(),
    "wrong-type-topics": swap("  topics:\n    - a\n", "  topics: {a: b}\n").encode(),
    "wrong-kind": swap("kind: self-check", "kind: essay").encode(),
    "bad-date": swap("date: 2026-12-07", "date: 2026-13-45").encode(),
    "bad-id": swap("id: T1", "id: ../evil").encode(),
    "schema-version-2": swap("schema_version: 1", "schema_version: 2").encode(),
    "python-object-tag": swap("title: 测试课", "title: !!python/object:os.system ls").encode(),
    "python-apply-tag": swap(
        "title: 测试课", "title: !!python/object/apply:os.system [ls]"
    ).encode(),
    "int-tag": swap("  day: 1", "  day: !!int 1").encode(),
    "custom-tag": swap("title: 测试课", "title: !mine x").encode(),
    "alias-bomb": ALIAS_BOMB.encode(),
    "anchor-alias": swap("  phase: P2\n", "  phase: &p P2\n  week: *p\n").encode(),
    "ten-megabytes": VALID.encode() + b"#" * (10 * 1024 * 1024) + b"\n",
    "binary-garbage": bytes(random.Random(8).randrange(256) for _ in range(4096)),
    "nul-bytes": b"\x00" * 64,
    "invalid-utf8": swap("测试课", "X").encode().replace(b"X", b"\xff\xfe"),
    "empty": b"",
    "whitespace-only": b"  \n\n\t\n",
    "comment-only": b"# a lesson\n",
    "top-level-list": b"- id: T1\n- title: x\n",
    "top-level-text": b"just a sentence\n",
    "two-documents": (VALID + "---\nid: T2\n").encode(),
    "unclosed-flow": swap("  topics:\n    - a\n", "  topics: [a, b\n").encode(),
    "unclosed-quote": swap("title: 测试课", 'title: "测试课').encode(),
    "control-character": swap("title: 测试课", "title: a\x07b").encode(),
    "lone-surrogate": swap("title: 测试课", 'title: "\\ud800"').encode(),
    "deep-nesting": (VALID + "deep: " + "[" * 5000 + "]" * 5000 + "\n").encode(),
    "complex-key": (VALID + "? [a, b]\n: c\n").encode(),
    "duplicate-item-ids": swap("      - id: r1\n", "      - id: q1\n").encode(),
}
LINE = re.compile(r"^(?P<file>.+\.yaml):(?P<line>\d+): (?P<message>.+)$")


def write_all(folder: Path) -> dict[str, Path]:
    folder.mkdir(exist_ok=True)
    paths = {}
    for name, data in MALFORMED.items():
        paths[name] = folder / f"{name}.yaml"
        paths[name].write_bytes(data)
    return paths


def test_there_are_at_least_30_kinds() -> None:
    assert len(MALFORMED) >= 30


@pytest.mark.parametrize("name", sorted(MALFORMED))
def test_each_gives_file_line_message(tmp_path: Path, name: str) -> None:
    path = write_all(tmp_path)[name]
    errors = check_file(path)
    assert errors, f"{name} was accepted"
    for error in errors:
        match = LINE.match(str(error))
        assert match, str(error)
        assert match["file"] == str(path) and int(match["line"]) >= 1
        assert "Traceback" not in str(error) and "\n" not in str(error)


def test_check_content_prints_one_line_per_problem(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    paths = write_all(tmp_path / "bad")
    assert main(["check-content", str(tmp_path / "bad")]) == 1
    out = capsys.readouterr().out.splitlines()
    assert out[-1].startswith(f"{len(MALFORMED)} lesson files checked:")
    assert out[-1].endswith(f"in {len(MALFORMED)} files")
    for line in out[:-1]:
        assert LINE.match(line), line
    assert {LINE.match(line)["file"] for line in out[:-1]} == {str(p) for p in paths.values()}


async def test_app_opens_with_bad_files_beside_s15(tmp_path: Path) -> None:
    content = tmp_path / "content"
    write_all(content)
    shutil.copy(ROOT / "content" / "S15.yaml", content / "S15.yaml")
    refs, errors = discover_lessons(content)
    listed_bad = next(ref for ref in refs if ref.id == "T1")  # head fine, body broken
    unlisted = next(error for error in errors if "binary-garbage" in error.path)
    app = make_app(content_dir=content, progress_dir=tmp_path / "progress", autosave_delay=0.05)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert app.lesson is not None and app.lesson.id == "S15"
        assert app.lesson_file_errors
        entries = {entry[0]: entry[2] for entry in app.palette_entries()}
        # A listed lesson whose body is broken: opened from the palette, its message shows.
        bad_title = next(t for t in entries if t.startswith(f"Open lesson: T1 {listed_bad.title}"))
        entries[bad_title]()
        await pilot.pause()
        text = reading_text(app)
        assert "cannot be opened" in text and str(listed_bad.path) in text
        # A file that could not even be listed is in the palette too, with its message.
        garbage = next(t for t in entries if "binary-garbage.yaml" in t)
        entries[garbage]()
        await pilot.pause()
        assert unlisted.message in reading_text(app)
        # S15 still opens.
        entries[next(t for t in entries if t.startswith("Open lesson: S15"))]()
        await pilot.pause()
        assert app.lesson is not None and app.lesson.id == "S15"
        await pilot.press("ctrl+q")
    assert app.return_code == 0
