"""The cache of parsed lessons (engine/lesson/parsed.py): the same lesson as a fresh read, read
again when the file changes, never trusted when it is foreign or broken."""

from __future__ import annotations

import json
import os
import pickle
import shutil
import time
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import engine.lesson.parsed as parsed
from engine.errors import ContentError
from engine.lesson import load_lesson, load_lesson_cached, parsed_lesson_path
from tests.pilot_helpers import S15_FILE

HOUR_AGO = time.time() - 3600


@pytest.fixture(autouse=True)
def own_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "cache"
    monkeypatch.setenv("SHARDBOOK_CACHE_DIR", str(folder))
    return folder


def lesson_copy(folder: Path, text: str | None = None, name: str = "S15.yaml") -> Path:
    """S15 (or ``text``) in ``folder``, last changed an hour ago (older than the racy 2 s)."""
    folder.mkdir(parents=True, exist_ok=True)
    file = folder / name
    if text is None:
        shutil.copy(S15_FILE, file)
    else:
        file.write_text(text, encoding="utf-8")
    os.utime(file, (HOUR_AGO, HOUR_AGO))
    return file


def no_parsing(monkeypatch: pytest.MonkeyPatch) -> None:
    """Reading the YAML fails from now on: whatever is returned came from the cache."""

    def refused(path: Path | str) -> None:
        raise AssertionError(f"{path} was parsed")

    monkeypatch.setattr(parsed, "load_lesson", refused)


def test_a_cached_lesson_is_the_lesson_read_fresh(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    file = lesson_copy(tmp_path / "content")
    first = load_lesson_cached(file)
    assert parsed_lesson_path(file).is_file()
    no_parsing(monkeypatch)
    again = load_lesson_cached(file)
    assert again == first == load_lesson(file)
    assert again.id == "S15" and again.path == file
    assert [item.id for item in again.self_check] == [item.id for item in first.self_check]


def test_the_path_given_is_the_lessons_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    file = lesson_copy(tmp_path / "content")
    load_lesson_cached(file)
    no_parsing(monkeypatch)
    monkeypatch.chdir(tmp_path)
    relative = Path("content") / "S15.yaml"
    assert load_lesson_cached(relative).path == relative


def test_a_changed_file_is_read_again(tmp_path: Path) -> None:
    file = lesson_copy(tmp_path / "content")
    assert load_lesson_cached(file).id == "S15"
    text = file.read_text(encoding="utf-8")
    edited = text.replace("\nid: S15\n", "\nid: S15b\n", 1)
    assert edited != text
    file.write_text(edited, encoding="utf-8")
    os.utime(file, (HOUR_AGO + 60, HOUR_AGO + 60))
    assert load_lesson_cached(file).id == "S15b"


def test_a_file_changed_a_moment_ago_is_not_cached(tmp_path: Path) -> None:
    # Git's racy rule: within 2 s its mtime could stay the same through another edit.
    file = lesson_copy(tmp_path / "content")
    os.utime(file)  # now
    assert load_lesson_cached(file).id == "S15"
    assert not parsed_lesson_path(file).exists()


def test_a_lesson_with_errors_is_never_cached(tmp_path: Path) -> None:
    text = S15_FILE.read_text(encoding="utf-8").replace("\nid: S15\n", "\nid: 'no spaces'\n", 1)
    file = lesson_copy(tmp_path / "content", text)
    for _ in range(2):
        with pytest.raises(ContentError) as raised:
            load_lesson_cached(file)
        assert raised.value.path == str(file)
    assert not parsed_lesson_path(file).exists()


def test_a_missing_file_is_the_loaders_message(tmp_path: Path) -> None:
    missing = tmp_path / "content" / "S99.yaml"
    with pytest.raises(ContentError) as raised:
        load_lesson_cached(missing)
    with pytest.raises(ContentError) as expected:
        load_lesson(missing)
    assert str(raised.value) == str(expected.value)


@pytest.mark.parametrize(
    "content",
    [b"", b"not a pickle", b"\x80\x05\x95", pickle.dumps(("another key", None))],
    ids=["empty", "text", "truncated", "another-key"],
)
def test_an_unreadable_cache_file_is_a_miss_and_written_again(
    tmp_path: Path, content: bytes
) -> None:
    file = lesson_copy(tmp_path / "content")
    cache = parsed_lesson_path(file)
    cache.parent.mkdir(parents=True)
    cache.write_bytes(content)
    assert load_lesson_cached(file) == load_lesson(file)
    assert cache.read_bytes() != content


class _Payload:
    """A pickle that runs a command when it is loaded by an unrestricted unpickler."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self) -> tuple[object, tuple[str]]:
        return (os.system, (f"touch {self.marker}",))


def test_a_foreign_pickle_is_refused_not_run(tmp_path: Path) -> None:
    file = lesson_copy(tmp_path / "content")
    marker = tmp_path / "ran"
    cache = parsed_lesson_path(file)
    cache.parent.mkdir(parents=True)
    cache.write_bytes(pickle.dumps(_Payload(marker)))
    assert load_lesson_cached(file).id == "S15"
    assert not marker.exists()
    assert cache.read_bytes() != pickle.dumps(_Payload(marker))  # written again, as a lesson


def test_another_version_of_the_model_reads_the_file_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    file = lesson_copy(tmp_path / "content")
    load_lesson_cached(file)
    monkeypatch.setattr(parsed, "PARSED_CACHE_VERSION", parsed.PARSED_CACHE_VERSION + 1)
    calls: list[Path | str] = []

    def counted(path: Path | str) -> object:
        calls.append(path)
        return load_lesson(path)

    monkeypatch.setattr(parsed, "load_lesson", counted)
    load_lesson_cached(file)
    assert calls == [file]


@settings(
    max_examples=30, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(title=st.text(min_size=1).filter(lambda text: text.strip() and text.isprintable()))
def test_any_title_comes_back_from_the_cache_as_written(tmp_path: Path, title: str) -> None:
    # Any text the YAML holds (CJK, emoji, markup-like brackets, quotes) is the same after a
    # round trip through the cache as after a fresh read.
    text = S15_FILE.read_text(encoding="utf-8")
    head, rest = text.split("\ntitle: ", 1)
    line_end = rest.index("\n")
    quoted = json.dumps(title, ensure_ascii=False)  # a JSON string is a YAML double-quoted one
    folder = tmp_path / f"content-{abs(hash(title))}"
    file = lesson_copy(folder, f"{head}\ntitle: {quoted}{rest[line_end:]}")
    fresh = load_lesson(file)
    assert fresh.title == title
    load_lesson_cached(file)
    assert load_lesson_cached(file) == fresh
