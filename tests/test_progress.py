"""engine.progress: atomic, exact, and never overwriting what it cannot read."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine.errors import ProgressError
from engine.progress import LessonProgress, ProgressStore

HOSTILE = [
    "[/]",
    "a[/",
    "[bold]x",
    "[link=x]y[/link]",
    "训练显存不只等于参数大小。",
    "emoji 👩‍💻 ✔️ 🇨🇳",
    "tab\there",
    "esc \x1b[31mred\x1b[0m",
    "no",
    "3.10",
    "  leading and trailing  \n\n",
    "line1\r\nline2\rline3",
    "---\n...\n# not a comment",
    "",
    "nel \x85 ls \u2028 ps \u2029 bom \ufeff",
]


def test_missing_file_gives_fresh_progress(tmp_path: Path) -> None:
    result = ProgressStore(tmp_path).load("S15")
    assert result.progress == LessonProgress("S15")
    assert result.quarantined is None


@pytest.mark.parametrize("text", HOSTILE)
def test_hostile_text_round_trips_byte_for_byte(tmp_path: Path, text: str) -> None:
    store = ProgressStore(tmp_path)
    progress = LessonProgress("S15", answers={"sc-1": text}, reflections={"r-1": text})
    store.save(progress)
    loaded = store.load("S15").progress
    assert loaded.answers["sc-1"] == text
    assert loaded.reflections["r-1"] == text


@settings(max_examples=300, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=st.text(st.characters(exclude_categories=("Cs",)), max_size=200))
def test_any_text_round_trips(tmp_path: Path, text: str) -> None:
    store = ProgressStore(tmp_path)
    store.save(LessonProgress("S15", answers={"q": text}))
    assert store.load("S15").progress.answers["q"] == text


def test_save_leaves_no_temporary_files(tmp_path: Path) -> None:
    store = ProgressStore(tmp_path)
    for i in range(5):
        store.save(LessonProgress("S15", answers={"q": str(i)}))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["S15.yaml"]
    data = yaml.safe_load((tmp_path / "S15.yaml").read_text(encoding="utf-8"))
    assert data["schema_version"] == 1
    assert data["answers"] == {"q": "4"}


@pytest.mark.parametrize(
    "content",
    [b"answers: [unclosed", b"\xff\xfe not utf-8", b"- a list\n", b"schema_version: 99\n"],
)
def test_unreadable_file_is_moved_aside_not_overwritten(tmp_path: Path, content: bytes) -> None:
    (tmp_path / "S15.yaml").write_bytes(content)
    store = ProgressStore(tmp_path)
    result = store.load("S15")
    assert result.quarantined is not None
    assert result.quarantined.read_bytes() == content
    assert "S15.yaml" in result.message and result.quarantined.name in result.message
    store.save(result.progress)
    assert result.quarantined.read_bytes() == content


def test_status_moves_from_not_started_to_in_progress() -> None:
    progress = LessonProgress("S15")
    progress.touch()
    assert progress.status == "in-progress"
    progress.status = "complete"
    progress.touch()
    assert progress.status == "complete"


@pytest.mark.parametrize("bad_id", ["../x", "a/b", "", ".hidden", "x" * 65])
def test_unsafe_lesson_ids_are_refused(tmp_path: Path, bad_id: str) -> None:
    with pytest.raises(ProgressError):
        ProgressStore(tmp_path).path_for(bad_id)


def test_unwritable_folder_is_a_named_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import errno
    import os

    def full_disk(*_args: object, **_kwargs: object) -> None:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr("engine.progress.os.replace", full_disk)
    with pytest.raises(ProgressError, match="No space left"):
        ProgressStore(tmp_path).save(LessonProgress("S15", answers={"q": "kept"}))
    assert list(tmp_path.iterdir()) == []
