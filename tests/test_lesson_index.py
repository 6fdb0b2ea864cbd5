"""The lesson index (``discover_lessons(folder, index)``): the same lessons as a fresh listing,
files read again exactly when they changed, were added or removed; a bad or unwritable index is
ignored (README "Performance")."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

import engine.lesson.index
from engine.lesson import discover_lessons, lesson_index_path

S15 = Path(__file__).resolve().parents[1] / "content" / "S15.yaml"
HOUR_AGO = time.time() - 3600


def write_lesson(folder: Path, lesson_id: str, title: str = "A lesson") -> Path:
    text = S15.read_text(encoding="utf-8")
    text = text.replace("\nid: S15\n", f"\nid: {lesson_id}\n", 1)
    text = text.replace("\ntitle: 训练内存、Collective 与并行轴全景\n", f"\ntitle: {title}\n", 1)
    path = folder / f"{lesson_id}.yaml"
    path.write_text(text, encoding="utf-8")
    # Dated an hour ago: a file changed within the last 2 s is never cached (racy-git rule).
    os.utime(path, (HOUR_AGO, HOUR_AGO))
    return path


@pytest.fixture
def reads(monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    """The files whose head is actually parsed."""
    seen: list[Path] = []
    real = engine.lesson.index.read_head

    def counting(path: Path) -> engine.lesson.index.LessonRef:
        seen.append(path)
        return real(path)

    monkeypatch.setattr(engine.lesson.index, "read_head", counting)
    return seen


def listing(folder: Path, index: Path | None) -> tuple[list[tuple[str, str, Path]], list[str]]:
    refs, errors = discover_lessons(folder, index)
    return [(r.id, r.title, r.path) for r in refs], [str(e) for e in errors]


def test_index_gives_the_same_listing_and_skips_unchanged_files(
    tmp_path: Path, reads: list[Path]
) -> None:
    content = tmp_path / "content"
    content.mkdir()
    for number in range(5):
        write_lesson(content, f"L{number}", f"title {number}")
    (content / "broken.yaml").write_text("id: [\n", encoding="utf-8")
    os.utime(content / "broken.yaml", (HOUR_AGO, HOUR_AGO))
    index = tmp_path / "cache" / "index.json"

    fresh = listing(content, None)
    reads.clear()
    first = listing(content, index)
    assert first == fresh and len(fresh[0]) == 5 and len(fresh[1]) == 1
    assert len(reads) == 6 and index.is_file()
    reads.clear()
    assert listing(content, index) == fresh
    assert reads == []  # every entry came from the index, the broken file's error too


def test_changed_added_and_removed_files_are_seen(tmp_path: Path, reads: list[Path]) -> None:
    content = tmp_path / "content"
    content.mkdir()
    for number in range(3):
        write_lesson(content, f"L{number}", f"title {number}")
    index = tmp_path / "index.json"
    listing(content, index)

    # Changed: same size and the old mtime put back; the ctime and the text still differ.
    changed = write_lesson(content, "L1", "title X")
    write_lesson(content, "L3", "added")
    (content / "L0.yaml").unlink()
    reads.clear()
    refs, errors = listing(content, index)
    assert [(ref_id, title) for ref_id, title, _ in refs] == [
        ("L1", "title X"),
        ("L2", "title 2"),
        ("L3", "added"),
    ]
    assert errors == []
    assert sorted(reads) == [changed, content / "L3.yaml"]
    assert listing(content, index) == listing(content, None)


def test_a_file_modified_just_now_is_not_cached(tmp_path: Path, reads: list[Path]) -> None:
    content = tmp_path / "content"
    content.mkdir()
    path = write_lesson(content, "L0")
    os.utime(path)  # now: a second write in the same clock tick would not change the mtime
    index = tmp_path / "index.json"
    listing(content, index)
    reads.clear()
    listing(content, index)
    assert reads == [path]


@pytest.mark.parametrize(
    "text",
    [
        "not json",
        json.dumps({"version": 999, "files": {}}),
        "[]",
    ],
)
def test_a_bad_index_is_ignored_and_rewritten(tmp_path: Path, text: str) -> None:
    content = tmp_path / "content"
    content.mkdir()
    write_lesson(content, "L0", "zero")
    index = tmp_path / "index.json"
    index.write_text(text, encoding="utf-8")
    assert listing(content, index) == listing(content, None)
    stored = json.loads(index.read_text(encoding="utf-8"))
    assert stored["version"] == engine.lesson.index.INDEX_VERSION


def test_a_tampered_entry_is_read_again(tmp_path: Path) -> None:
    content = tmp_path / "content"
    content.mkdir()
    write_lesson(content, "L0", "zero")
    index = tmp_path / "index.json"
    listing(content, index)
    data = json.loads(index.read_text(encoding="utf-8"))
    data["files"]["L0.yaml"]["id"] = "../../etc"
    index.write_text(json.dumps(data), encoding="utf-8")
    refs, _errors = listing(content, index)
    assert [ref_id for ref_id, _, _ in refs] == ["L0"]


def test_an_unwritable_index_is_ignored(tmp_path: Path) -> None:
    content = tmp_path / "content"
    content.mkdir()
    write_lesson(content, "L0", "zero")
    blocker = tmp_path / "file"
    blocker.write_text("", encoding="utf-8")
    # The index's folder would have to be created inside a regular file: it cannot be.
    assert listing(content, blocker / "index.json") == listing(content, None)


def test_index_path_is_in_the_user_cache_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("SHARDBOOK_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    first = lesson_index_path(tmp_path / "a")
    assert first.is_relative_to(tmp_path / "cache") and first.suffix == ".json"
    assert lesson_index_path(tmp_path / "b") != first
    assert lesson_index_path(tmp_path / "a") == first


def test_shardbook_cache_dir_names_the_cache_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    monkeypatch.setenv("SHARDBOOK_CACHE_DIR", str(tmp_path / "mine"))
    assert lesson_index_path(tmp_path / "a").is_relative_to(tmp_path / "mine")
