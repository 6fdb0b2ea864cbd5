"""content/S15.yaml against its source lesson (``content/README.md``).

The expected strings are parsed out of the source text (``content/source/S15.txt``, the lesson as
its authors wrote it) by its headings, numbering and bullets, so they are written down once. The
last test rebuilds the whole source from the YAML: nothing of the source may be dropped or reworded.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from engine.lesson import (
    Lesson,
    Section,
    escape_markdown,
    key_points_markdown,
    meta_lines,
    section_markdown,
)

ROOT = Path(__file__).resolve().parent.parent
LESSON_FILE = ROOT / "content" / "S15.yaml"
SOURCE_COPY = ROOT / "content" / "source" / "S15.txt"

# The source's headings are short runs of CJK ideographs on a line of their own.
HEADING_RE = re.compile(r"[\u4e00-\u9fff]{2,12}")
NUMBERED_RE = re.compile(r"(\d+)\. (.+)")
BULLET = "• "
# Sections the source writes as one paragraph but the YAML splits into addressable items.
ONE_PARAGRAPH_SECTIONS = {"deep-study"}


def _source_text() -> str:
    return SOURCE_COPY.read_text(encoding="utf-8")


def _blocks(lines: list[str]) -> list[str]:
    """Paragraphs: runs of non-empty lines, joined by newlines."""
    text = "\n".join(lines).strip("\n")
    return [block for block in re.split(r"\n\s*\n", text) if block]


def _parse_source() -> tuple[str, list[str], list[tuple[str, list[str]]]]:
    """(first line, header lines, [(heading, body lines)]) of the source lesson."""
    lines = _source_text().split("\n")
    first = lines[0]
    header_end = lines.index("", 2)
    header = lines[2:header_end]
    sections: list[tuple[str, list[str]]] = []
    for line in lines[header_end:]:
        if HEADING_RE.fullmatch(line):
            sections.append((line, []))
        elif sections:
            sections[-1][1].append(line)
        else:
            assert not line, f"text before the first heading: {line!r}"
    return first, header, sections


def _list_entries(body: list[str]) -> tuple[list[str], bool]:
    """The entries of a numbered or bulleted list, markers removed, and whether it is numbered."""
    entries: list[str] = []
    numbered: set[bool] = set()
    for line in body:
        if not line:
            continue
        match = NUMBERED_RE.fullmatch(line)
        if match:
            assert int(match.group(1)) == len(entries) + 1, f"numbering breaks at {line!r}"
            entries.append(match.group(2))
            numbered.add(True)
        else:
            assert line.startswith(BULLET), f"not a list entry: {line!r}"
            entries.append(line.removeprefix(BULLET))
            numbered.add(False)
    assert len(numbered) == 1
    return entries, numbered.pop()


@pytest.fixture(scope="module")
def source_sections() -> dict[str, list[str]]:
    return dict(_parse_source()[2])


def _texts(section: Section) -> list[str]:
    return [item.text for item in section.items]


def test_sections_are_the_source_headings_in_order(lesson: Lesson) -> None:
    headings = [heading for heading, _ in _parse_source()[2]]
    assert len(headings) == 11
    assert [section.title for section in lesson.sections] == headings


def test_id_title_and_meta(lesson: Lesson) -> None:
    first, header, _ = _parse_source()
    assert first == f"{lesson.id}：{lesson.title}"
    assert list(meta_lines(lesson)) == header
    meta = lesson.meta
    assert meta.kind == "预习教材（不代表已完成）"
    assert meta.date == "2026-12-07"
    assert meta.phase == "P2 · AI Systems Engineering 90"
    assert (meta.day, meta.days_total) == (105, 360)
    assert (meta.week, meta.rhythm) == ("W3", "周一概念与阅读")
    assert meta.status == "教材已备；学习未完成"
    assert meta.topics == ("training memory", "collectives", "DP/FSDP/TP/PP/EP/CP")


@pytest.mark.parametrize(
    ("section_id", "heading", "count"),
    [
        ("objectives", "学习目标", 4),
        ("exercises", "最小练习或观察步骤", 5),
        ("misconceptions", "常见误区与边界", 5),
        ("self-check", "自检问题", 4),
        ("course-alignment", "专业课程对齐", 3),
    ],
)
def test_list_sections_match_the_source(
    lesson: Lesson, source_sections: dict[str, list[str]], section_id: str, heading: str, count: int
) -> None:
    entries, numbered = _list_entries(source_sections[heading])
    section = lesson.section(section_id)
    assert len(entries) == count
    assert _texts(section) == entries
    assert section.numbered is numbered


def test_reflection_fields_are_the_source_labels(
    lesson: Lesson, source_sections: dict[str, list[str]]
) -> None:
    entries, numbered = _list_entries(source_sections["学后填写区"])
    assert len(entries) == 5 and not numbered
    # The source writes each field as "label：" followed by the space to fill in.
    assert all(entry.endswith("：") for entry in entries)
    assert [item.text for item in lesson.reflection_fields] == [
        e.removesuffix("：") for e in entries
    ]
    assert lesson.reflection_fields[0].text == "我的训练内存账本"


@pytest.mark.parametrize(
    ("section_id", "heading", "count"),
    [("definition", "一句话定义", 1), ("core", "核心知识", 3), ("scenario", "系统场景连接", 1)],
)
def test_prose_sections_match_the_source(
    lesson: Lesson, source_sections: dict[str, list[str]], section_id: str, heading: str, count: int
) -> None:
    paragraphs = _blocks(source_sections[heading])
    assert len(paragraphs) == count
    assert _texts(lesson.section(section_id)) == paragraphs


def test_mechanism_paragraphs_and_the_source_formula(
    lesson: Lesson, source_sections: dict[str, list[str]]
) -> None:
    section = lesson.section("mechanism")
    blocks = _blocks(source_sections["机制与推导"])
    display = [block for block in blocks if block.startswith("[")]
    assert display == ["[ M_{state}\\approx N(b_p+b_g+b_o) ]"]
    assert [block for block in blocks if block not in display] == _texts(section)
    formulas = {formula.id: formula for formula in section.formulas}
    state = formulas["formula-state"]
    assert state.source == display[0] and not state.added
    # The display formula follows the paragraph it follows in the source.
    assert blocks[blocks.index(display[0]) - 1] == section.items[0].text
    assert state.after == section.items[0].id
    step = formulas["formula-step"]
    assert step.source in section.items[2].text and not step.added
    for formula_id in ("formula-zero", "formula-bubble"):
        assert formulas[formula_id].added and formulas[formula_id].sources


def test_formulas_have_a_terminal_form(lesson: Lesson) -> None:
    formulas = {f.id: f for f in lesson.section("mechanism").formulas}
    assert formulas["formula-state"].text == "M_state ≈ N · (b_p + b_g + b_o)"
    zero = formulas["formula-zero"].text
    for line in ("ZeRO-1", "ZeRO-2", "ZeRO-3/FSDP", "/ P"):
        assert line in zero
    bubble = formulas["formula-bubble"].text
    assert "(p − 1) / m" in bubble and "(p − 1) / (m + p − 1)" in bubble
    assert formulas["formula-step"].text == (
        "T_step = T_compute + T_comm_unhidden + T_input + T_sync_wait"
    )


def test_deep_study_hints_are_the_source_paragraph(
    lesson: Lesson, source_sections: dict[str, list[str]]
) -> None:
    (paragraph,) = _blocks(source_sections["深入学习提示"])
    section = lesson.section("deep-study")
    assert "".join(_texts(section)) == paragraph
    assert [item.id for item in section.items] == [
        "deep-reading-order",
        "deep-three-questions",
        "deep-counterexamples",
        "deep-no-ranking",
    ]


def test_self_check_key_points_are_marked_added_material(lesson: Lesson) -> None:
    cjk = re.compile(r"[\u4e00-\u9fff]")
    for item in lesson.self_check:
        assert 3 <= len(item.key_points) <= 6, item.id
        assert item.added, item.id
        assert item.key_point_sources, item.id
        assert all(cjk.search(point) for point in item.key_points), item.id
    first = " ".join(lesson.self_check[0].key_points)
    assert "16" in first and "18" in first  # both conventions named (ZeRO paper, Megatron-LM)


def test_self_check_markdown_hides_the_key_points(lesson: Lesson) -> None:
    rendered = section_markdown(lesson.section("self-check"))
    for item in lesson.self_check:
        assert item.text in rendered
        for point in item.key_points:
            assert escape_markdown(point) not in rendered


def test_key_points_markdown_shows_points_and_sources(lesson: Lesson) -> None:
    item = lesson.self_check[0]
    rendered = key_points_markdown(item)
    assert all(escape_markdown(point) in rendered for point in item.key_points)
    assert "added material" in rendered
    assert escape_markdown(item.key_point_sources[0]) in rendered


def test_the_yaml_rebuilds_the_source_exactly(lesson: Lesson) -> None:
    """Every character of the source is in the lesson file: rebuild it and compare."""
    parts = [f"{lesson.id}：{lesson.title}", "", *meta_lines(lesson)]
    for section in lesson.sections:
        parts += ["", section.title, ""]
        display = {
            f.after: f.source
            for f in section.formulas
            if not f.added and all(f.source not in item.text for item in section.items)
        }
        if section.id in ONE_PARAGRAPH_SECTIONS:
            parts.append("".join(_texts(section)))
        elif section.kind == "prose":
            blocks: list[str] = []
            for item in section.items:
                blocks.append(item.text)
                if item.id in display:
                    blocks.append(display[item.id])
            parts.append("\n\n".join(blocks))
        else:
            for number, item in enumerate(section.items, start=1):
                label = item.text + ("：" if section.kind == "reflection" else "")
                parts.append(f"{number}. {label}" if section.numbered else f"{BULLET}{label}")
    assert "\n".join(parts) == _source_text()
