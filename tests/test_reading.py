"""What the reading pane shows of a section (engine.reading): every text of the lesson, literally,
in the lesson's order, with each formula after the item it belongs to."""

from __future__ import annotations

from engine.lesson import Formula, Item, Section, load_lesson
from engine.paths import resolve_content_dir
from engine.reading import BULLET, meta_blocks, section_blocks
from tui.widgets.reader import FormulaLine

LESSON = load_lesson(resolve_content_dir(None) / "S15.yaml")


def test_every_item_and_formula_of_s15_is_shown_literally_in_order() -> None:
    for section in LESSON.sections:
        blocks = section_blocks(section)
        texts = [block.text for block in blocks]
        positions = [texts.index(item.text) for item in section.items]
        assert positions == sorted(positions), section.id
        for formula in section.formulas:
            lines = formula.text.splitlines()
            first = texts.index(lines[0])
            assert texts[first : first + len(lines)] == lines
            assert formula.source in texts
            after = next(item for item in section.items if item.id == formula.after)
            assert texts.index(after.text) < first
            if formula.note:
                assert f"Note: {formula.note}" in texts
            for source in formula.sources:
                assert any(source in text for text in texts if text.startswith("added material"))


def test_lists_are_numbered_or_bulleted_and_prose_is_paragraphs() -> None:
    objectives = section_blocks(LESSON.section("objectives"))
    assert [block.marker for block in objectives] == ["1. ", "2. ", "3. ", "4. "]
    misconceptions = section_blocks(LESSON.section("misconceptions"))
    assert {block.marker for block in misconceptions if block.kind == "item"} == {BULLET}
    core = section_blocks(LESSON.section("core"))
    assert {block.kind for block in core} == {"paragraph"}


def test_body_and_items_are_text_not_markup() -> None:
    section = Section(
        id="s",
        title="t",
        kind="list",
        body="[b]粗[/b] *not emphasis*\n# not a heading\n\n第二段 <b>x</b>",
        items=(Item("i", "1. [link=x]y[/link] `code`"),),
        formulas=(Formula("f", "a  =  b", "\\frac{a}{b}", note="", after=""),),
    )
    blocks = section_blocks(section)
    assert [(block.kind, block.text) for block in blocks] == [
        ("paragraph", "[b]粗[/b] *not emphasis*\n# not a heading"),
        ("paragraph", "第二段 <b>x</b>"),
        ("item", "1. [link=x]y[/link] `code`"),
        ("formula", "a  =  b"),
        ("label", "TeX:"),
        ("tex", "\\frac{a}{b}"),
    ]


def test_meta_lines_and_the_learners_status() -> None:
    (block,) = meta_blocks(LESSON, "my status：in progress")
    lines = block.text.splitlines()
    assert lines[0] == "内容类型：预习教材（不代表已完成）"
    assert "总路线：Day 105 / 360" in lines
    assert lines[-1] == "my status：in progress"


def test_a_formula_lines_annotation_wraps_under_its_own_column() -> None:
    # S15, 机制与推导: the two bubble conventions, each with the works that use it after it.
    line = "bubble / ideal = (p − 1) / m              Megatron-LM、Ultra-Scale Playbook 的口径"
    column = line.index("Megatron")
    lines = FormulaLine(line).lines_at(70)
    assert len(lines) == 2 and lines[0].startswith("bubble / ideal")
    assert lines[1] == " " * column + "Playbook 的口径"
    # Too little room beside the column: the annotation continues under the line's start.
    assert FormulaLine(line).lines_at(50)[1][0] != " "
