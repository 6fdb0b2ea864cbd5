"""engine.export and ``shardbook export``: notes byte for byte, front matter that round-trips."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.export import export_markdown, safe_file_name, split_front_matter
from engine.lesson import load_lesson
from engine.progress import LessonProgress, ProgressStore
from tui.cli import main

ROOT = Path(__file__).resolve().parent.parent
LESSON = load_lesson(ROOT / "content" / "S15.yaml")
HOSTILE = "[/] a[/ [bold]x\ttab \x1b[31mred 训练显存 ✔️ 👩‍💻\n---\nno"


def filled_progress() -> LessonProgress:
    progress = LessonProgress("S15", status="in-progress")
    for index, item in enumerate(LESSON.self_check):
        progress.answers[item.id] = f"{HOSTILE} answer {index}"
    for index, item in enumerate(LESSON.reflection_fields):
        progress.reflections[item.id] = f"{HOSTILE} reflection {index}"
    progress.figures["exercise1"] = {
        "parameters": 2e9,
        "gradients": 2e9,
        "adam_states": 12e9,
        "activations": 0.0,
    }
    progress.forms["ledger"] = {"params": "1B", "preset": "mixed-adam"}
    return progress


def test_markdown_has_every_text_byte_for_byte() -> None:
    progress = filled_progress()
    front, body = split_front_matter(export_markdown(LESSON, progress))
    assert front["lesson"] == "S15"
    assert front["status"] == "in-progress"
    for text in (*progress.answers.values(), *progress.reflections.values()):
        assert text in body
    for item in (*LESSON.self_check, *LESSON.reflection_fields):
        assert item.text in body
    # Exercise 1's four columns, in GB and GiB (ZeRO paper: 2 + 2 + 12 bytes x 1e9).
    assert "| 12000000000 | 12.00 GB | 11.18 GiB |" in body


@pytest.mark.parametrize(
    "title", ["S15: a title: with colons", "no", "3.10", "- [x] #1", "'q' \"q\""]
)
def test_front_matter_round_trips_awkward_titles(title: str) -> None:
    lesson = replace(LESSON, title=title)
    front, _body = split_front_matter(export_markdown(lesson, LessonProgress("S15")))
    assert front["title"] == f"{title} — notes"


def test_cli_export_markdown_and_json(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    progress = filled_progress()
    ProgressStore(tmp_path).save(progress)
    out = tmp_path / "notes.md"
    assert main(["export", "S15", "--progress-dir", str(tmp_path), "-o", str(out)]) == 0
    front, body = split_front_matter(out.read_text(encoding="utf-8"))
    assert front["lesson"] == "S15"
    assert all(text in body for text in progress.answers.values())
    capsys.readouterr()
    assert main(["export", "S15", "--progress-dir", str(tmp_path), "--format", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert [entry["answer"] for entry in data["self_check"]] == list(progress.answers.values())
    assert data["exercise1"]["adam_states"] == 12e9


def test_cli_export_unknown_lesson_is_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["export", "S99"]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "S99" in err


def test_cli_export_refuses_an_unreadable_progress_file_without_moving_it(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / "S15.yaml").write_bytes(b"answers: [unclosed")
    assert main(["export", "S15", "--progress-dir", str(tmp_path)]) == 2
    assert "cannot be read" in capsys.readouterr().err
    assert (tmp_path / "S15.yaml").read_bytes() == b"answers: [unclosed"


def test_lessons_and_where(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    ProgressStore(tmp_path).save(LessonProgress("S15", status="complete"))
    assert main(["lessons", "--json", "--progress-dir", str(tmp_path)]) == 0
    lessons = json.loads(capsys.readouterr().out)["lessons"]
    assert [(row["id"], row["status"]) for row in lessons] == [("S15", "complete")]
    assert main(["where", "--progress-dir", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert f"progress\t{tmp_path}" in out
    assert f"settings\t{tmp_path / 'settings.yaml'}" in out


@pytest.mark.parametrize(
    ("lesson_id", "expected"), [("S15", "S15-notes.md"), ("CON", "CON_-notes.md")]
)
def test_safe_file_names(lesson_id: str, expected: str) -> None:
    assert safe_file_name(lesson_id, "md") == expected
    assert "/" not in safe_file_name("../../etc/passwd", "md")


def test_cli_export_to_a_missing_folder_fails_and_creates_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = tmp_path / "no" / "such" / "notes.md"
    assert main(["export", "S15", "--progress-dir", str(tmp_path), "-o", str(target)]) == 2
    assert "could not write" in capsys.readouterr().err
    assert not (tmp_path / "no").exists()


def test_export_never_overwrites_another_lesson_s_notes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from engine.export import NotesConflict, export_path, write_export

    # "CON" and "CON_" share a safe file name; the second export gets its own file.
    con = replace(LESSON, id="CON")
    first = export_path(tmp_path, "CON", "md")
    write_export(first, export_markdown(con, LessonProgress("CON")), lesson_id="CON")
    assert first.name == "CON_-notes.md"
    other = export_path(tmp_path, "CON_", "md")
    assert other.name == "CON_-notes-2.md"
    assert export_path(tmp_path, "CON", "md") == first  # its own notes are refreshed in place
    before = first.read_bytes()
    with pytest.raises(NotesConflict, match="'CON'"):
        write_export(first, "new", lesson_id="S15")
    assert first.read_bytes() == before
    # The CLI refuses too, in one line, and leaves the file as it was.
    assert main(["export", "S15", "--progress-dir", str(tmp_path), "-o", str(first)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "CON" in err
    assert first.read_bytes() == before


@settings(max_examples=100, deadline=None)
@given(title=st.text(st.characters(exclude_categories=("Cs",)), min_size=1, max_size=60))
def test_front_matter_round_trips_any_title(title: str) -> None:
    lesson = replace(LESSON, title=title)
    front, _body = split_front_matter(export_markdown(lesson, LessonProgress("S15")))
    assert front["title"] == f"{title} — notes"
    assert front["lesson"] == "S15"
