"""The lesson loader's rules (content/README.md): safe YAML, text stays text, every error names
file, line and field; ``shardbook check-content``; ``discover_lessons``; Markdown escaping."""

from __future__ import annotations

import re
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st
from markdown_it import MarkdownIt

import engine.lesson.yaml_nodes as yaml_nodes
from cli.main import main
from engine.errors import ContentError
from engine.lesson import (
    MAX_FILE_BYTES,
    Section,
    check_file,
    discover_lessons,
    escape_markdown,
    lesson_markdown,
    load_lesson,
    section_markdown,
)

VALID = """\
schema_version: 1
id: T1
title: 测试课
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
  - id: questions
    title: 自检问题
    kind: self-check
    numbered: true
    items:
      - id: q1
        text: 为什么？
        key_points:
          added: true
          sources: [ZeRO §3.1]
          points:
            - 因为
  - id: notes
    title: 学后填写区
    kind: reflection
    items:
      - id: r1
        text: 我的账本
"""


def line_of(text: str, needle: str, occurrence: int = 1) -> int:
    """1-based line of the ``occurrence``-th line containing ``needle``."""
    hits = [n for n, line in enumerate(text.splitlines(), start=1) if needle in line]
    return hits[occurrence - 1]


def write(tmp_path: Path, text: str | bytes, name: str = "lesson.yaml") -> Path:
    path = tmp_path / name
    if isinstance(text, str):
        path.write_text(text, encoding="utf-8")
    else:
        path.write_bytes(text)
    return path


def only_error(path: Path) -> ContentError:
    errors = check_file(path)
    assert len(errors) == 1, [str(e) for e in errors]
    error = errors[0]
    assert error.path == str(path)
    assert str(error).startswith(f"{path}:")
    return error


def test_valid_lesson_loads(tmp_path: Path) -> None:
    path = write(tmp_path, VALID)
    assert check_file(path) == []
    lesson = load_lesson(path)
    assert lesson.id == "T1" and lesson.path == path
    assert lesson.meta.day == 1 and lesson.meta.days_total == 10
    assert [item.id for item in lesson.self_check] == ["q1"]
    assert lesson.self_check[0].key_points == ("因为",)
    assert lesson.self_check[0].key_point_sources == ("ZeRO §3.1",)
    assert lesson.self_check[0].added is True
    assert [item.text for item in lesson.reflection_fields] == ["我的账本"]
    assert lesson.section("notes").kind == "reflection"
    with pytest.raises(KeyError):
        lesson.section("absent")


def test_duplicate_key_is_an_error(tmp_path: Path) -> None:
    text = VALID.replace("title: 测试课\n", "title: 测试课\ntitle: 别的课\n")
    error = only_error(write(tmp_path, text))
    assert error.line == line_of(text, "别的课")
    assert "title" in error.message and "duplicate key" in error.message
    assert f"line {line_of(text, '测试课')}" in error.message


def test_duplicate_key_deep_inside_is_an_error(tmp_path: Path) -> None:
    text = VALID.replace(
        "        text: 我的账本\n", "        text: 我的账本\n        text: 又一个\n"
    )
    error = only_error(write(tmp_path, text))
    assert error.line == line_of(text, "又一个")
    assert error.message.startswith("sections[1].items[0].text: duplicate key")


@pytest.mark.parametrize(
    "scalar", ["no", "off", "yes", "on", "3.10", "null", "~", "0x1F", "1e3", "2026-12-07", "1_000"]
)
def test_scalars_stay_the_text_written(tmp_path: Path, scalar: str) -> None:
    text = (
        VALID.replace("text: 我的账本", f"text: {scalar}")
        .replace("    - a\n", f"    - {scalar}\n")
        .replace("- 因为", f"- {scalar}")
        .replace("title: 测试课", f"title: {scalar}")
    )
    lesson = load_lesson(write(tmp_path, text))
    assert lesson.reflection_fields[0].text == scalar
    assert lesson.meta.topics == (scalar,)
    assert lesson.self_check[0].key_points == (scalar,)
    assert lesson.title == scalar
    assert lesson.meta.date == "2026-12-07"


def test_utf8_bom_is_accepted_and_lines_still_count(tmp_path: Path) -> None:
    path = write(tmp_path, b"\xef\xbb\xbf" + VALID.encode())
    assert load_lesson(path).title == "测试课"
    broken = VALID.replace("  day: 1", "  day: one")
    error = only_error(write(tmp_path, b"\xef\xbb\xbf" + broken.encode(), "bom.yaml"))
    assert error.line == line_of(broken, "day: one")


def test_invalid_utf8_names_file_and_line(tmp_path: Path) -> None:
    data = VALID.encode().replace("我的账本".encode(), b"\xff\xfe bad")
    error = only_error(write(tmp_path, data))
    assert error.line == line_of(VALID, "我的账本")
    assert "UTF-8" in error.message


@pytest.mark.parametrize(
    ("replacement", "needle"),
    [
        ("text: !!python/object/apply:os.system ['echo owned']", "python/object"),
        ("text: !!python/object:builtins.dict {}", "python/object"),
        ("text: !!binary aGk=", "binary"),
        ("text: !local x", "!local"),
    ],
)
def test_tags_are_an_error(tmp_path: Path, replacement: str, needle: str) -> None:
    text = VALID.replace("text: 我的账本", replacement)
    error = only_error(write(tmp_path, text))
    assert error.line == line_of(text, needle)
    assert "tags" in error.message and "sections[1].items[0].text" in error.message


def test_typed_number_tag_is_an_error(tmp_path: Path) -> None:
    text = VALID.replace("  day: 1", "  day: !!int 1")
    error = only_error(write(tmp_path, text))
    assert error.line == line_of(text, "!!int")
    assert error.message.startswith("meta.day: tags")


def test_anchor_and_alias_are_errors(tmp_path: Path) -> None:
    text = VALID.replace("  topics:\n    - a\n", "  topics: &t\n    - a\n").replace(
        "text: 我的账本", "text: *t"
    )
    error = only_error(write(tmp_path, text))
    assert error.line == line_of(text, "&t")
    assert "anchors" in error.message


def test_alias_bomb_is_refused_quickly(tmp_path: Path) -> None:
    bomb = "a: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(
        f"{chr(98 + i)}: &{chr(98 + i)} [{', '.join(['*' + chr(97 + i)] * 9)}]\n" for i in range(8)
    )
    start = time.monotonic()
    error = only_error(write(tmp_path, bomb))
    assert time.monotonic() - start < 2
    assert error.line == 1 and "anchors" in error.message


def test_tab_indentation_is_an_error(tmp_path: Path) -> None:
    text = VALID.replace("  kind: 预习教材", "\tkind: 预习教材")
    error = only_error(write(tmp_path, text))
    assert error.line == line_of(text, "\tkind")
    assert "tab" in error.message and "spaces" in error.message


def test_missing_field_names_the_field(tmp_path: Path) -> None:
    text = VALID.replace("  phase: P2\n", "")
    error = only_error(write(tmp_path, text))
    assert error.message == "meta.phase: missing required field"
    assert error.line == line_of(text, "kind: 预习教材")  # where the meta mapping starts


def test_missing_item_text_names_the_item(tmp_path: Path) -> None:
    text = VALID.replace("        text: 我的账本\n", "")
    error = only_error(write(tmp_path, text))
    assert error.message == "sections[1].items[0].text: missing required field"
    assert error.line == line_of(text, "- id: r1")


def test_unknown_field_names_the_field(tmp_path: Path) -> None:
    text = VALID.replace("  week: W1\n", "  week: W1\n  colour: red\n")
    error = only_error(write(tmp_path, text))
    assert error.line == line_of(text, "colour")
    assert error.message.startswith("meta.colour: unknown field")


@pytest.mark.parametrize(
    ("old", "new", "needle", "message"),
    [
        (
            "text: 我的账本",
            "text: [a, b]",
            "[a, b]",
            "sections[1].items[0].text: expected text, got a list",
        ),
        ("title: 测试课", "title: {a: b}", "{a: b}", "title: expected text, got a mapping"),
        (
            "  topics:\n    - a",
            "  topics: a",
            "topics: a",
            "meta.topics: expected a list, got text",
        ),
        ("  day: 1", "  day: 1.5", "day: 1.5", "meta.day: expected a whole number"),
        ("  day: 1", "  day: 11", "day: 11", "meta.day: day 11 is after days_total 10"),
        ("date: 2026-12-07", "date: 2026-13-40", "2026-13-40", "meta.date: expected a date"),
        ("numbered: true", "numbered: yes", "numbered: yes", "sections[0].numbered: expected true"),
        ("kind: reflection", "kind: essay", "kind: essay", "sections[1].kind: 'essay' is not"),
        ("schema_version: 1", "schema_version: 2", "schema_version", "schema_version: unsupported"),
        (
            "text: 为什么？",
            "text: '  '",
            "text: '  '",
            "sections[0].items[0].text: must not be empty",
        ),
    ],
)
def test_wrong_type_or_value_names_field_and_line(
    tmp_path: Path, old: str, new: str, needle: str, message: str
) -> None:
    assert old in VALID
    text = VALID.replace(old, new)
    error = only_error(write(tmp_path, text))
    assert error.message.startswith(message), error.message
    assert error.line == line_of(text, needle)


@pytest.mark.parametrize("content", ["", "\n\n", "# only a comment\n", "---\n"])
def test_empty_file_is_an_error(tmp_path: Path, content: str) -> None:
    error = only_error(write(tmp_path, content))
    assert error.line == 1 and "empty" in error.message


def test_top_level_must_be_a_mapping(tmp_path: Path) -> None:
    error = only_error(write(tmp_path, "- a\n- b\n"))
    assert error.line == 1 and "expected a mapping, got a list" in error.message


def test_several_documents_are_an_error(tmp_path: Path) -> None:
    text = VALID + "---\nid: T2\n"
    error = only_error(write(tmp_path, text))
    assert error.line == line_of(text, "---")


@pytest.mark.parametrize("bad_id", ["../evil", "a b", "-x", "S15/x", "x" * 65, "'S15\\n'"])
def test_bad_lesson_id_is_an_error(tmp_path: Path, bad_id: str) -> None:
    text = VALID.replace("id: T1", f"id: {bad_id}")
    error = only_error(write(tmp_path, text))
    assert (
        error.line == 2 and error.message.startswith("id: ") and "not a valid id" in error.message
    )


def test_duplicate_item_ids_are_an_error(tmp_path: Path) -> None:
    text = VALID.replace("id: r1", "id: q1")
    error = only_error(write(tmp_path, text))
    assert error.line == line_of(text, "id: q1", occurrence=2)
    assert error.message.startswith("sections[1].items[0].id:")
    assert f"line {line_of(text, 'id: q1')}" in error.message


def test_key_points_only_in_self_check(tmp_path: Path) -> None:
    text = VALID.replace(
        "        text: 我的账本\n",
        "        text: 我的账本\n        key_points:\n          added: true\n"
        "          sources: [x]\n          points: [y]\n",
    )
    error = only_error(write(tmp_path, text))
    assert error.line == line_of(text, "added: true", occurrence=2)
    assert "only items of a self-check section" in error.message


def test_formula_must_follow_an_item_of_its_section(tmp_path: Path) -> None:
    text = VALID.replace(
        "    kind: reflection\n",
        "    kind: reflection\n    formulas:\n      - id: f1\n        text: a ≈ b\n"
        "        source: a \\approx b\n        after: q1\n",
    )
    error = only_error(write(tmp_path, text))
    assert error.line == line_of(text, "after: q1")
    assert error.message.startswith("sections[1].formulas[0].after: 'q1' is not the id")


def test_every_error_is_reported_in_line_order(tmp_path: Path) -> None:
    text = (
        VALID.replace("  week: W1\n", "")
        .replace("  day: 1", "  day: x")
        .replace("text: 我的账本", "text: [a]")
        .replace("kind: self-check", "kind: quiz")
    )
    path = write(tmp_path, text)
    errors = check_file(path)
    assert len(errors) == 4, [str(e) for e in errors]
    lines = [e.line or 0 for e in errors]
    assert 0 not in lines and lines == sorted(lines)
    with pytest.raises(ContentError) as raised:
        load_lesson(path)
    assert str(raised.value) == str(errors[0])


def test_file_over_the_limit_is_refused_with_a_message(tmp_path: Path) -> None:
    path = write(tmp_path, VALID + "#" * MAX_FILE_BYTES + "\n")
    error = only_error(path)
    assert error.line == 1
    assert "at most" in error.message and "2 MiB" in error.message


def test_missing_file_is_an_error(tmp_path: Path) -> None:
    error = only_error(tmp_path / "absent.yaml")
    assert "no such file" in error.message


# --------------------------------------------------------------------------------------------
# shardbook check-content

ERROR_LINE_RE = re.compile(r"^(?P<file>.+?):(?P<line>\d+): (?P<message>.+)$")


def test_check_content_valid_file_exits_0(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = write(tmp_path, VALID)
    assert main(["check-content", str(path)]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out == ["1 lesson file checked: all valid"]


def test_check_content_prints_file_line_message_and_exits_1(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    good = write(tmp_path, VALID, "good.yaml")
    text = VALID.replace("  day: 1", "  day: x").replace("id: r1", "id: q1")
    bad = write(tmp_path, text, "bad.yaml")
    assert main(["check-content", str(good), str(bad)]) == 1
    lines = capsys.readouterr().out.splitlines()
    assert len(lines) == 3
    found = [ERROR_LINE_RE.match(line) for line in lines[:2]]
    assert all(found)
    assert [(m["file"], int(m["line"])) for m in found if m] == [
        (str(bad), line_of(text, "day: x")),
        (str(bad), line_of(text, "id: q1", occurrence=2)),
    ]
    assert lines[2] == "2 lesson files checked: 2 problems in 1 file"


def test_check_content_folder_and_default_folder(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    write(tmp_path, VALID, "a.yaml")
    write(tmp_path, VALID.replace("id: T1", "id: T2"), "b.yml")
    (tmp_path / "notes.txt").write_text("not a lesson", encoding="utf-8")
    assert main(["check-content", str(tmp_path)]) == 0
    assert capsys.readouterr().out.splitlines() == ["2 lesson files checked: all valid"]
    assert main(["--content-dir", str(tmp_path), "check-content"]) == 0
    assert capsys.readouterr().out.splitlines() == ["2 lesson files checked: all valid"]
    monkeypatch.setenv("SHARDBOOK_CONTENT_DIR", str(tmp_path))
    write(tmp_path, "id: a: b\n", "c.yaml")
    assert main(["check-content"]) == 1
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith(f"{tmp_path / 'c.yaml'}:1: ")
    assert out[-1] == "3 lesson files checked: 1 problem in 1 file"


def test_check_content_default_is_the_shipped_content(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("SHARDBOOK_CONTENT_DIR", raising=False)
    assert main(["check-content"]) == 0
    assert capsys.readouterr().out.strip().endswith("all valid")


def test_check_content_duplicate_ids_and_missing_path(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    write(tmp_path, VALID, "a.yaml")
    write(tmp_path, VALID, "b.yaml")
    assert main(["check-content", str(tmp_path)]) == 1
    assert "lesson id 'T1' is also used by" in capsys.readouterr().out
    # A path that does not exist is bad input (exit 2, one line), not a finding of the check.
    missing = tmp_path / "absent.yaml"
    assert main(["check-content", str(tmp_path), str(missing)]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err.count("\n") == 1 and f"{missing}: no such file or folder" in err


# --------------------------------------------------------------------------------------------
# discover_lessons


def test_discover_lists_good_lessons_and_reports_bad_files(tmp_path: Path) -> None:
    write(tmp_path, VALID.replace("id: T1", "id: B2"), "z.yaml")
    write(tmp_path, VALID, "a.yaml")
    write(tmp_path, VALID.replace("id: T1\n", ""), "no_id.yaml")
    write(tmp_path, "id: [broken\n", "broken.yml")
    write(tmp_path, VALID, "twin.yaml")
    # A lesson whose later sections are broken is still listed; load_lesson reports those.
    write(tmp_path, VALID.replace("id: T1", "id: C3") + "  - oops: [\n", "late.yaml")
    (tmp_path / "README.md").write_text("# not a lesson", encoding="utf-8")
    refs, errors = discover_lessons(tmp_path)
    assert [(ref.id, ref.path.name) for ref in refs] == [
        ("B2", "z.yaml"),
        ("C3", "late.yaml"),
        ("T1", "a.yaml"),
    ]
    assert refs[2].title == "测试课"
    reported = {Path(error.path).name: error for error in errors}
    assert set(reported) == {"no_id.yaml", "broken.yml", "twin.yaml"}
    assert "id: missing required field" in reported["no_id.yaml"].message
    assert reported["broken.yml"].line == 1
    assert "also used by" in reported["twin.yaml"].message


def test_discover_missing_folder(tmp_path: Path) -> None:
    refs, errors = discover_lessons(tmp_path / "absent")
    assert refs == [] and len(errors) == 1


# --------------------------------------------------------------------------------------------
# Round trips


def _lesson_dict(text: str) -> dict[str, Any]:
    return {
        "schema_version": 1,
        "id": "RT",
        "title": text,
        "meta": {
            "kind": text,
            "date": "2026-12-07",
            "phase": "P2",
            "day": 1,
            "days_total": 2,
            "week": "W1",
            "rhythm": "r",
            "status": "s",
            "topics": [text],
        },
        "sections": [
            {
                "id": "q",
                "title": "自检问题",
                "kind": "self-check",
                "items": [
                    {
                        "id": "q1",
                        "text": text,
                        "key_points": {"added": True, "sources": [text], "points": [text]},
                    }
                ],
            }
        ],
    }


# Any text a YAML file can hold; surrogates cannot be encoded in UTF-8.
any_text = st.text(st.characters(blacklist_categories=("Cs",)), min_size=1).filter(
    lambda t: t.strip() != ""
)


@settings(max_examples=150, deadline=None)
@given(text=any_text, allow_unicode=st.booleans())
def test_arbitrary_text_survives_dump_and_load(
    tmp_path_factory: pytest.TempPathFactory, text: str, allow_unicode: bool
) -> None:
    if allow_unicode:
        # PyYAML's emitter writes NEL (U+0085) raw inside a quoted scalar, where YAML reads it as
        # a line break; its own safe_load changes such text too. Escaped (the default) it is kept.
        text = text.replace("\x85", "x")
    folder = tmp_path_factory.mktemp("rt")
    dumped = yaml.safe_dump(_lesson_dict(text), allow_unicode=allow_unicode, sort_keys=False)
    path = folder / "rt.yaml"
    path.write_text(dumped, encoding="utf-8")
    lesson = load_lesson(path)
    item = lesson.self_check[0]
    assert item.text == text
    assert item.key_points == (text,)
    assert item.key_point_sources == (text,)
    assert lesson.title == text and lesson.meta.kind == text
    assert lesson.meta.topics == (text,)


def test_lesson_markdown_heads_every_section(tmp_path: Path) -> None:
    lesson = load_lesson(
        write(tmp_path, VALID.replace("title: 学后填写区", "title: '[学后] *填写*'"))
    )
    tokens = MARKDOWN.parse(lesson_markdown(lesson))
    headings = [
        _inline_text(tokens[n + 1]) for n, t in enumerate(tokens) if t.type == "heading_open"
    ]
    assert headings == ["T1：测试课", "自检问题", "[学后] *填写*"]
    assert "为什么？" in lesson_markdown(lesson) and "因为" not in lesson_markdown(lesson)
    assert not section_markdown(lesson.section("notes")).startswith("#")


def _inline_text(tokens: Any) -> str:
    parts = []
    for child in tokens.children:
        assert child.type in ("text", "softbreak", "hardbreak"), child.type
        parts.append(child.content if child.type == "text" else "\n")
    return "".join(parts)


# Markdown cannot show control characters (other than tab and line breaks) or NUL literally.
shown_text = st.text(
    st.characters(
        blacklist_categories=("Cs", "Cc"),
        whitelist_characters="\t\n\r",
    ),
    min_size=1,
)
MARKDOWN = MarkdownIt("commonmark").enable(["table", "strikethrough"])


@pytest.mark.parametrize(
    "text",
    ["[/]", "[bold]x", "a[/", "\x1b[31mred", "<script>x</script>", "1. a\n- b\n# c", "a  \n  b"],
)
def test_hostile_text_renders_literally(text: str) -> None:
    tokens = MARKDOWN.parse(escape_markdown(text))
    assert [t.type for t in tokens] == ["paragraph_open", "inline", "paragraph_close"]
    assert _inline_text(tokens[1]) == text


@settings(max_examples=300, deadline=None)
@given(text=shown_text)
def test_escaped_text_renders_literally(text: str) -> None:
    tokens = MARKDOWN.parse(escape_markdown(text))
    assert [t.type for t in tokens] == ["paragraph_open", "inline", "paragraph_close"]
    expected = re.sub(r"\r\n|\r", "\n", text)
    assert _inline_text(tokens[1]) == expected


@settings(max_examples=100, deadline=None)
@given(texts=st.lists(shown_text, min_size=1, max_size=4), numbered=st.booleans())
def test_list_items_render_literally(texts: list[str], numbered: bool) -> None:
    from engine.lesson import Item

    section = Section(
        id="s",
        title="[标题](x) *a*",
        kind="list",
        body="",
        items=tuple(Item(id=f"i{n}", text=text) for n, text in enumerate(texts)),
        formulas=(),
        numbered=numbered,
    )
    tokens = MARKDOWN.parse(section_markdown(section))
    inlines = [t for t in tokens if t.type == "inline"]
    assert [_inline_text(t) for t in inlines] == [re.sub(r"\r\n|\r", "\n", t) for t in texts]
    list_type = "ordered_list_open" if numbered else "bullet_list_open"
    assert [t.type for t in tokens].count(list_type) == 1


def _nodes(node: yaml.Node, path: str = "") -> Iterator[tuple[object, ...]]:
    """Every node's place, kind, tag, line, column and text (plain style as None in both)."""
    text = node.value if isinstance(node, yaml.ScalarNode) else None
    mark = node.start_mark
    yield path, type(node).__name__, node.tag, mark.line, mark.column, text
    if isinstance(node, yaml.SequenceNode):
        for index, child in enumerate(node.value):
            yield from _nodes(child, f"{path}[{index}]")
    elif isinstance(node, yaml.MappingNode):
        for key, value in node.value:
            yield from _nodes(key, f"{path}.key")
            yield from _nodes(value, f"{path}.{key.value}")


@pytest.mark.parametrize(
    "text",
    [
        (Path(__file__).resolve().parent.parent / "content" / "S15.yaml").read_text("utf-8"),
        "a: 1\nb: [x, 'y', \"z\\t\"]\nc: |\n  block\n  text\nd: >\n  folded\n  text\n",
        "a: yes\nb: ~\nc: 0x1F\nd: 2026-01-01\ne: 中文，标点。\n",
    ],
)
def test_the_fast_composer_gives_the_same_nodes(text: str) -> None:
    fast_loader = yaml_nodes.FAST_LOADER
    assert fast_loader is not None  # PyYAML with libyaml is what the project installs
    slow, fast = yaml_nodes.TextOnlyLoader(text), fast_loader(text)
    try:
        assert list(_nodes(fast.get_single_node())) == list(_nodes(slow.get_single_node()))
    finally:
        slow.dispose()
        fast.dispose()
