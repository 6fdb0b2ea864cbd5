"""The lesson format's study-plan data (content/README.md): objectives that list what trains
them, exercises that say where they are worked and which notes record them, and public links
marked as added material. Every mistake is one ``FILE:LINE: field: message``."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import urlsplit

import pytest

from cli.main import main
from engine.errors import ContentError
from engine.lesson import PANES, check_file, links_markdown, load_lesson, section_markdown

ROOT = Path(__file__).resolve().parent.parent
S15 = ROOT / "content" / "S15.yaml"

STUDY = """\
schema_version: 1
id: T2
title: 计划课
meta:
  kind: 预习教材
  date: 2026-12-07
  phase: P2
  day: 1
  days_total: 10
  week: W1
  rhythm: 周一
  status: 未开始
  topics:
    - a
sections:
  - id: goals
    title: 学习目标
    kind: objectives
    items:
      - id: goal-memory
        text: 能拆解内存来源。
        trained_by: [ex-ledger, q1]
  - id: work
    title: 练习
    kind: exercises
    numbered: true
    items:
      - id: ex-ledger
        text: 列出四栏。
        worked_in: ledger
      - id: ex-notes
        text: 写下切分。
        worked_in: diagrams
        notes: [ex2.dp.split, ex2.tp.split]
  - id: reading
    title: 课程对齐
    kind: list
    items:
      - id: course
        text: 阅读课程。
        links:
          added: true
          sources: [course site]
          urls:
            - label: course site
              url: https://example.org/course/
  - id: questions
    title: 自检问题
    kind: self-check
    items:
      - id: q1
        text: 为什么？
"""


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "lesson.yaml"
    path.write_text(text, encoding="utf-8")
    return path


def line_of(text: str, needle: str) -> int:
    return next(n for n, line in enumerate(text.splitlines(), start=1) if needle in line)


def only_error(path: Path) -> ContentError:
    errors = check_file(path)
    assert len(errors) == 1, [str(e) for e in errors]
    return errors[0]


def test_the_study_fields_load(tmp_path: Path) -> None:
    lesson = load_lesson(write(tmp_path, STUDY))
    assert [item.id for item in lesson.objectives] == ["goal-memory"]
    assert lesson.objectives[0].trained_by == ("ex-ledger", "q1")
    assert [(e.id, e.worked_in, e.notes) for e in lesson.exercises] == [
        ("ex-ledger", "ledger", ()),
        ("ex-notes", "diagrams", ("ex2.dp.split", "ex2.tp.split")),
    ]
    course = lesson.section("reading").items[0]
    assert [(link.label, link.url) for link in course.links] == [
        ("course site", "https://example.org/course/")
    ]
    assert course.link_sources == ("course site",)


@pytest.mark.parametrize(
    ("old", "new", "needle", "message"),
    [
        (
            "worked_in: diagrams",
            "worked_in: notebook",
            "notebook",
            "sections[1].items[1].worked_in: 'notebook' is not a pane; use one of ledger, "
            "diagrams, collectives, tradeoffs",
        ),
        (
            "        worked_in: ledger\n",
            "",
            "id: ex-ledger",
            "sections[1].items[0].worked_in: missing required field",
        ),
        (
            "        notes: [ex2.dp.split, ex2.tp.split]\n",
            "",
            "id: ex-notes",
            "sections[1].items[1].notes: missing required field (an exercise worked in "
            "'diagrams' is done when the notes it lists are written)",
        ),
        (
            "ex2.tp.split]",
            "ex2.tp.splits]",
            "ex2.tp.splits",
            "sections[1].items[1].notes[1]: 'ex2.tp.splits' is not an exercise note id",
        ),
        (
            "ex2.tp.split]",
            "ex2.dp.split]",
            "notes: [ex2.dp.split, ex2.dp.split]",
            "sections[1].items[1].notes[1]: 'ex2.dp.split' is listed twice",
        ),
        (
            "trained_by: [ex-ledger, q1]",
            "trained_by: [ex-ledger, q2]",
            "trained_by",
            "sections[0].items[0].trained_by[1]: 'q2' is not the id of an exercise or a "
            "self-check question of this lesson",
        ),
        (
            # An item that exists but trains nothing: the course reading.
            "trained_by: [ex-ledger, q1]",
            "trained_by: [course]",
            "trained_by",
            "sections[0].items[0].trained_by[0]: 'course' is not the id of an exercise or a "
            "self-check question of this lesson",
        ),
        (
            "trained_by: [ex-ledger, q1]",
            "trained_by: []",
            "trained_by",
            "sections[0].items[0].trained_by: give at least one id",
        ),
        (
            "        text: 阅读课程。\n",
            "        text: 阅读课程。\n        worked_in: tradeoffs\n",
            "worked_in: tradeoffs",
            "sections[2].items[0].worked_in: only items of an exercises section have this field",
        ),
        (
            "        text: 为什么？\n",
            "        text: 为什么？\n        trained_by: [q1]\n",
            "trained_by: [q1]",
            "sections[3].items[0].trained_by: only items of an objectives section have this field",
        ),
        (
            "    kind: list\n",
            "    kind: objectives\n",
            "id: reading",
            # Reported on the second section of the kind, naming the first.
            "sections[2].kind: only one 'objectives' section is allowed (another starts on "
            "line 16)",
        ),
        (
            "          added: true\n          sources: [course site]",
            "          added: false\n          sources: [course site]",
            "added: false",
            "sections[2].items[0].links.added: links are never the source lesson's text: "
            "write 'added: true'",
        ),
        (
            "sources: [course site]",
            "sources: []",
            "sources: []",
            "sections[2].items[0].links.sources: added material must name a source",
        ),
        (
            "              url: https://example.org/course/\n",
            "",
            "label: course site",
            "sections[2].items[0].links.urls[0].url: missing required field",
        ),
    ],
)
def test_study_field_mistakes_name_file_line_and_field(
    tmp_path: Path, old: str, new: str, needle: str, message: str
) -> None:
    assert old in STUDY
    text = STUDY.replace(old, new, 1)
    path = write(tmp_path, text)
    errors = check_file(path)
    assert message in [e.message[: len(message)] for e in errors], [str(e) for e in errors]
    error = next(e for e in errors if e.message.startswith(message))
    if "missing required field" not in message:
        assert error.line == line_of(text, needle)
    assert str(error).startswith(f"{path}:{error.line}: ")


@pytest.mark.parametrize(
    ("url", "words"),
    [
        ("ftp://example.org/file", "start it with https://"),
        ("javascript:alert(1)", "start it with https://"),
        ("file:///etc/passwd", "start it with https://"),
        ("example.org/course", "start it with https://"),
        ("https:///no-host", "has no host name"),
        ('"https://example.org/a b"', "without spaces"),
        ("https://例子.中国/", "printable ASCII"),
        ("'https://example.org/<b>'", "must not contain <"),
        ("http://[::1", "not a valid web address"),
    ],
)
def test_a_bad_link_is_named(tmp_path: Path, url: str, words: str) -> None:
    text = STUDY.replace("url: https://example.org/course/", f"url: {url}")
    path = write(tmp_path, text)
    error = only_error(path)
    assert error.line == line_of(text, "url: ")
    assert error.message.startswith("sections[2].items[0].links.urls[0].url: ")
    assert words in error.message


def test_check_content_reports_study_mistakes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text = STUDY.replace("worked_in: diagrams", "worked_in: sidebar")
    path = write(tmp_path, text)
    assert main(["check-content", str(path)]) == 1
    out = capsys.readouterr().out
    line = line_of(text, "sidebar")
    assert f"{path}:{line}: sections[1].items[1].worked_in: 'sidebar' is not a pane" in out


def test_links_render_as_autolinks_marked_added(tmp_path: Path) -> None:
    lesson = load_lesson(write(tmp_path, STUDY))
    course = lesson.section("reading").items[0]
    assert links_markdown(course) == (
        "- course site: <https://example.org/course/>\n- *added material; sources: course site*"
    )
    # Under the list entry, indented as its continuation so the links nest inside it.
    rendered = section_markdown(lesson.section("reading"))
    assert rendered == (
        "- 阅读课程。\n"
        "  - course site: <https://example.org/course/>\n"
        "  - *added material; sources: course site*\n"
    )


# --------------------------------------------------------------------------------- S15 itself


def test_s15_exercises_say_where_they_are_worked() -> None:
    lesson = load_lesson(S15)
    # Exercise 1 is the Ledger (F2); the note boxes of exercises 2-3 are in the Diagrams pane,
    # those of 4-5 in Trade-offs (F10).
    assert [item.worked_in for item in lesson.exercises] == [
        "ledger",
        "diagrams",
        "diagrams",
        "tradeoffs",
        "tradeoffs",
    ]
    assert set(PANES) >= {item.worked_in for item in lesson.exercises}
    # Exercise 2 names four strategies (分别画 DP、FSDP、TP、PP): one note each; exercise 3 asks,
    # for each of those pictures, the communication and one wait.
    strategies = ("dp", "fsdp", "tp", "pp")
    assert lesson.exercises[1].notes == tuple(f"ex2.{s}.split" for s in strategies)
    assert lesson.exercises[2].notes == tuple(
        f"ex3.{s}.{part}" for s in strategies for part in ("comm", "wait")
    )
    assert (lesson.exercises[3].notes, lesson.exercises[4].notes) == (("ex4",), ("ex5",))


def test_s15_objectives_list_what_trains_them() -> None:
    lesson = load_lesson(S15)
    assert len(lesson.objectives) == 4
    trainers = {item.id for item in (*lesson.exercises, *lesson.self_check)}
    trained = [trainer for item in lesson.objectives for trainer in item.trained_by]
    assert set(trained) <= trainers
    # Every exercise and every question trains some objective.
    assert set(trained) == trainers


def test_s15_course_readings_have_public_links_marked_added() -> None:
    lesson = load_lesson(S15)
    items = {item.id: item for item in lesson.section("course-alignment").items}
    hosts = {
        "course-cmu-dlsys": "dlsyscourse.org",
        "course-pytorch-distributed": "docs.pytorch.org",
        "course-mit-6-5840": "pdos.csail.mit.edu",
    }
    for item_id, host in hosts.items():
        item = items[item_id]
        assert item.links and item.link_sources, item_id
        assert all(urlsplit(link.url).scheme == "https" for link in item.links)
        assert urlsplit(item.links[0].url).hostname == host
    assert items["course-mit-6-5840"].links[0].url == "https://pdos.csail.mit.edu/6.824/"
    assert items["course-pytorch-distributed"].links[0].url == (
        "https://docs.pytorch.org/docs/stable/distributed.html"
    )
