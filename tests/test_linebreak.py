"""Line breaking for mixed Chinese/Latin text (engine.linebreak): UAX #14 opportunities through
uniseg, plus the project rule (Latin words, numbers and identifiers stay whole; no line starts
with closing punctuation or ends with opening punctuation).

The examples are the lesson's own sentences, at the widths where Textual's wrapping broke them:
the 80x24 reading pane was 29 cells wide, the 60x20 one 14, the 120x40 one about 46.
"""

from __future__ import annotations

import itertools
import json
import re
from pathlib import Path

import pytest
from hypothesis import assume, example, given, settings
from hypothesis import strategies as st
from rich.cells import cell_len
from uniseg.graphemecluster import grapheme_clusters

from engine import linebreak
from engine.lesson import load_lesson
from engine.linebreak import (
    break_paragraph,
    break_positions,
    break_text,
    hanging_lines,
    is_closing,
    is_opening,
    unbreakable,
    word_runs,
)
from engine.paths import resolve_content_dir

LESSON = load_lesson(resolve_content_dir(None) / "S15.yaml")
OBJECTIVES = [item.text for item in LESSON.section("objectives").items]
CORE = [item.text for item in LESSON.section("core").items]
LATIN_WORD = re.compile(r"[A-Za-z0-9][A-Za-z0-9_./-]*[A-Za-z0-9]")


def _lines_holding(lines: list[str], word: str) -> list[str]:
    return [line for line in lines if word in line]


@pytest.mark.parametrize("width", [18, 20, 29, 31, 46, 60, 76])
def test_the_words_the_old_reader_cut_stay_whole(width: int) -> None:
    # Textual's wrap gave `r` / `educe-scatter`, `FSDP/ZeR` / `O`, `checkpointi` / `ng`.
    for text, word in (
        (OBJECTIVES[2], "reduce-scatter"),
        (OBJECTIVES[1], "FSDP/ZeRO"),
        (CORE[0], "checkpointing"),
        (CORE[2], "all-to-all"),
        (OBJECTIVES[0], "buffer"),
    ):
        lines = hanging_lines(text, width, "3. ")
        assert _lines_holding(lines, word), (word, lines)


@pytest.mark.parametrize("width", [14, 16, 20, 29, 31, 46, 60, 76])
def test_no_lesson_line_starts_with_a_full_stop_or_comma(width: int) -> None:
    for section in LESSON.sections:
        for item in section.items:
            for line in hanging_lines(item.text, width, "1. ")[1:]:
                body = line.lstrip(" ")
                assert not body.startswith(("。", "，", "、", "；", "：", "！", "？", "）")), line


def test_every_latin_word_of_the_lesson_is_whole_at_80_columns() -> None:
    # The reading pane at 80x24 is 76 cells wide; a list item's text 73.
    for section in LESSON.sections:
        for item in section.items:
            lines = hanging_lines(item.text, 76, "1. ")
            for word in LATIN_WORD.findall(item.text):
                assert _lines_holding(lines, word), (word, lines)


def test_examples() -> None:
    assert break_paragraph("checkpointing 用额外重算换内存。", 16) == [
        "checkpointing 用",
        "额外重算换内存。",
    ]
    assert break_paragraph("重算 checkpointing 用", 16) == ["重算 ", "checkpointing 用"]
    # UAX #14 allows a break after '-' and '/'; the project rule keeps the run whole.
    assert break_paragraph("分 FSDP/ZeRO 与", 12) == ["分 FSDP/ZeRO ", "与"]
    assert break_paragraph("与 reduce-scatter", 14) == ["与 ", "reduce-scatter"]
    # A run wider than the line breaks where UAX #14 allows (after '-') before anywhere else.
    assert break_paragraph("all-to-all", 7) == ["all-to-", "all"]
    assert break_paragraph("T_comm_unhidden", 6) == ["T_comm", "_unhid", "den"]
    # The closing mark goes with the character before it, the opening one with the one after.
    assert break_paragraph("角色。", 4) == ["角", "色。"]
    assert break_paragraph("的（如", 4) == ["的", "（如"]
    # A line never ends with an opening quote, spaces after it aside.
    assert break_paragraph("00000000、“ 0", 12) == ["00000000、", "“ 0"]
    # A piece too wide for a line is cut after filling the line begun before it.
    assert break_paragraph("他说：“ 好的", 6) == ["他说：", "“ 好的"]
    assert break_paragraph("", 10) == [""]


@pytest.mark.parametrize("width", range(8, 40))
def test_a_figure_and_its_number_stay_on_one_line(width: int) -> None:
    """``Figure`` at a line's end with ``1`` on the next read as two things: a reference word
    and its number (the lesson's ZeRO 论文 Figure 1, a source's Table 2, Eq. 7) stay together
    where they fit."""
    lesson_text = next(
        formula.note
        for section in LESSON.sections
        for formula in section.formulas
        if "Figure 1" in formula.note
    )
    for text in (lesson_text, "Korthikanti et al. 2022 §4.1-4.2, Table 2; Eq. 7 (model FLOPs)"):
        for line in break_paragraph(text, width):
            assert not re.search(r"(Figure|Table|Eq\.) *$", line), (width, line)


@pytest.mark.parametrize("width", range(12, 40))
def test_a_number_and_its_unit_stay_on_one_line(width: int) -> None:
    """A unit or a value alone at a line's start reads as a new quantity: ``50`` / ``GB/s``,
    ``h`` / ``2048``, ``8 张`` / ``GPU`` (the Trade-offs pane's assumptions in Chinese) stay
    together where they fit; the text is kept whole."""
    texts = (
        "节点内 NVLink，400 Gb/s 网络（50 GB/s）",
        "模型 1.3B，h 2048，每步 8 张 GPU，序列 s 2048",
        "The link moves 12.5 GB/s; a step of 12 ms on 8 GPUs holds 80 GiB",
    )
    for text in texts:
        lines = break_paragraph(text, width)
        assert "".join(lines) == text
        for line, after in itertools.pairwise(lines):
            assert not re.match(r"(GB/s|Gb/s|GiB|ms|GPUs?)\b", after), (width, line, after)
            assert not re.search(r"(^|[ ，,])[hs] $", line), (width, line, after)
            assert not (re.search(r"[0-9] $", line) and after.startswith(("张", "GB", "Gb"))), (
                width,
                line,
                after,
            )


def test_break_text_keeps_each_line() -> None:
    assert break_text("第一行\n\nsecond line", 6) == ["第一行", "", "second ", "line"]


def test_hanging_lines_line_up_under_the_marker() -> None:
    lines = hanging_lines("能解释 all-reduce、all-gather 的角色。", 14, "3. ")
    assert lines[0].startswith("3. ")
    assert all(line.startswith("   ") for line in lines[1:])
    assert all(cell_len(line) <= 14 for line in lines)


def test_width_must_be_positive() -> None:
    with pytest.raises(ValueError, match="width"):
        break_paragraph("x", 0)
    with pytest.raises(ValueError, match="break_text"):
        break_paragraph("a\nb", 5)


def test_word_runs() -> None:
    assert word_runs("用 FSDP/ZeRO，T_step 与 7.5B") == [(2, 11), (12, 18), (21, 25)]
    assert is_closing("。") and is_closing("，") and is_closing("」") and is_closing("：")
    assert is_opening("（") and is_opening("「") and not is_opening("a")


# A calculator's message naming fields by their labels (the Ledger's, in Chinese): UAX #14 breaks
# at the space in `参数量 N` and between its Chinese characters, which left `参数量` at a line's
# end and `N：…` on the next.
LABELLED = "{params}：请给出参数量或模型结构（缺少 “{layers}”）；activation 未计算：请填写 “{seq}”"
LABELS = ("参数量 N", "层数 L", "序列长度 s")


# From 12 cells: `“层数 L”）；` (12 cells, no break allowed in it by UAX #14 or by the rule on
# punctuation) fits a line; narrower, a cut inside the label is the only one left.
@pytest.mark.parametrize("width", range(12, 60))
def test_a_label_set_unbreakable_stays_on_one_line(width: int) -> None:
    glued = [unbreakable(label) for label in LABELS]
    text = LABELLED.format(**dict(zip(("params", "layers", "seq"), glued, strict=True)))
    lines = break_paragraph(text, width)
    assert "".join(lines) == text
    assert all(cell_len(line.rstrip(" ")) <= width for line in lines), lines
    for label in glued:
        assert _lines_holding(lines, label), (label, lines)


def test_labels_with_plain_spaces_are_broken() -> None:
    """Without :func:`unbreakable`, the labels above are parted from their symbols at some of
    these widths (what the test above guards against)."""
    text = LABELLED.format(params=LABELS[0], layers=LABELS[1], seq=LABELS[2])
    parted = {
        width
        for width in range(12, 60)
        for lines in [break_paragraph(text, width)]
        if not all(_lines_holding(lines, label) for label in LABELS)
    }
    assert len(parted) > 10


# F11's objective line in Chinese: the ratings at the start and at the end, glued around the arrow
# by no-break spaces. 还不能 and 部分能 are words of three ideographs, which UAX #14 allows to
# break anywhere; unglued, `…来源：还` / `不能 -> 部分能` (80x24) and `-> 部` / `分能` (40x12).
RATED = "1. 能拆解参数的内存来源：还不能\u00a0->\u00a0部分能；训练它的步骤已完成 2/2"


# From 18 cells: `还不能 -> 部分能；` (16 cells, and the semicolon no line starts with) fits.
@pytest.mark.parametrize("width", range(18, 60))
def test_two_values_glued_around_an_arrow_stay_whole(width: int) -> None:
    lines = break_paragraph(RATED, width)
    assert "".join(lines) == RATED
    assert _lines_holding(lines, "还不能\u00a0->\u00a0部分能"), lines


# The reading pane beside the side pane at 80x24 cut a link `https:` / `//dlsyscourse.org/...`.
LINK = "▸ lectures (slides and videos): https://dlsyscourse.org/lectures/"
URL = "https://dlsyscourse.org/lectures/"


@pytest.mark.parametrize("width", [9, 12, 20, 24, 29, 31, 33, 46, 76])
def test_a_url_is_whole_where_it_fits_and_never_cut_in_its_scheme(width: int) -> None:
    lines = break_paragraph(LINK, width)
    assert "".join(lines) == LINK
    if width >= cell_len(URL):
        assert [line for line in lines if URL in line], lines
    assert not any(line.rstrip(" ").endswith(("https:", "https://", "https:/")) for line in lines)
    assert word_runs(f"见 {URL}。") == [(2, 2 + len(URL))]  # the full stop is not the URL's


# Text made of what the lessons mix: Latin words and identifiers, CJK, spaces, punctuation of
# both kinds, a wide emoji and a combining accent.
_LATIN = st.text(alphabet="abcXYZ019-/._", min_size=1, max_size=18)
_CJK = st.text(alphabet="训练显存内参数梯度", min_size=1, max_size=8)
_PUNCT = st.text(alphabet="。，、；：！？）」』（「『“”()", min_size=1, max_size=2)
_OTHER = st.sampled_from(
    [
        " ",
        "👩‍💻",
        "é",
        "e\u0301",
        "Ψ",
        "7.5B",
        "https://dlsyscourse.org/lectures/",
        "http://a.b/c?d=1&e",
    ]
)
_TEXT = st.lists(st.one_of(_LATIN, _CJK, _OTHER, _PUNCT), max_size=30).map("".join)


def _graphemes(text: str) -> int:
    return len(list(grapheme_clusters(text)))


def joining_the_lines_gives_back_the_text(text: str, width: int) -> None:
    assert "".join(break_paragraph(text, width)) == text


def no_line_is_wider_than_the_width_unless_one_character_is(text: str, width: int) -> None:
    for line in break_paragraph(text, width):
        visible = line.rstrip(" ")
        assert cell_len(visible) <= width or _graphemes(visible) == 1, (line, width)


def _punctuation_run(text: str) -> int:
    """The longest run of closing, or of opening, punctuation in ``text``."""
    longest = run = 0
    kind = None
    for char in text:
        now = "closing" if is_closing(char) else "opening" if is_opening(char) else None
        run = run + 1 if now is not None and now == kind else (1 if now else 0)
        kind = now
        longest = max(longest, run)
    return longest


@settings(max_examples=300, deadline=None)
@given(text=_TEXT, width=st.integers(min_value=12, max_value=40))
# A "scheme" wider than the line (letters and digits before ``://``): cut inside it, not
# before the colon.
@example(text="X000000https://dlsyscourse.org/lectures/", width=12)
def test_no_line_starts_with_closing_or_ends_with_opening_punctuation(
    text: str, width: int
) -> None:
    # Where every character and the punctuation glued to it fit a line (at most two marks of a
    # kind in a row, at most 2 cells each, on a line of 12 or more); a longer run of closing
    # marks, on a line narrower than it, has to start a line with one.
    assume(_punctuation_run(text) <= 2)
    lines = break_paragraph(text, width)
    for line in lines[1:]:
        assert not is_closing(line[0]), (lines, width)
        assert not line.startswith(" "), (lines, width)
    for line in lines[:-1]:
        visible = line.rstrip(" ")
        # Only a text that starts with spaces has a blank line: its first.
        assert not is_opening(visible[-1]) if visible else line is lines[0], (lines, width)


def a_word_run_that_fits_the_line_is_never_broken(text: str, width: int) -> None:
    """...unless the punctuation glued to it (no break allowed between) makes it too wide."""
    ends = []
    position = 0
    for line in break_paragraph(text, width)[:-1]:
        position += len(line)
        ends.append(position)
    allowed = [0, *break_positions(text, width), len(text)]
    for start, end in word_runs(text):
        if cell_len(text[start:end]) > width:
            continue
        for cut in ends:
            if start < cut < end:
                before = max(position for position in allowed if position <= start)
                after = min(position for position in allowed if position >= end)
                assert cell_len(text[before:after].rstrip(" ")) > width, (text, width, ends)


def a_line_ends_between_break_opportunities_only_inside_a_piece_too_wide(
    text: str, width: int
) -> None:
    allowed = [0, *break_positions(text, width), len(text)]
    position = 0
    for line in break_paragraph(text, width)[:-1]:
        position += len(line)
        if position in allowed:
            continue
        before = max(cut for cut in allowed if cut < position)
        after = min(cut for cut in allowed if cut > position)
        assert cell_len(text[before:after].rstrip(" ")) > width, (text, width, position)


@settings(max_examples=300, deadline=None)
@given(text=_TEXT, width=st.integers(min_value=1, max_value=40))
# A URL whose tail, read alone, looks like a URL of its own (``e0https://``): the cut followed
# that tail's scheme and ended a line before it, where the whole piece fitted.
@example(text="http://a.b/c?d=1&e0https://dlsyscourse.org/lectures/", width=14)
@example(text="http://a.b/c?d=1&e0https://dlsyscourse.org/lectures/", width=13)
def test_any_text_at_any_width_keeps_every_rule_of_the_line_breaker(text: str, width: int) -> None:
    """The four properties of the same inputs, each checked on all 300 examples: drawing a text
    and breaking it once (the UAX #14 analysis, most of the time) serves all four, where four
    tests drew and analysed 1,200 texts."""
    joining_the_lines_gives_back_the_text(text, width)
    no_line_is_wider_than_the_width_unless_one_character_is(text, width)
    a_word_run_that_fits_the_line_is_never_broken(text, width)
    a_line_ends_between_break_opportunities_only_inside_a_piece_too_wide(text, width)


def test_the_analysis_cache_serves_a_new_process_the_same_breaks(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The analyses written by one run are read by the next (no uniseg call) and give the same
    lines; an entry of the wrong shape, or a cache of another version, is analysed again."""
    monkeypatch.setenv("SHARDBOOK_CACHE_DIR", str(tmp_path / "shardbook"))
    text = "数据并行把样本切到各个 rank，梯度用 all-reduce 求和（ZeRO 再切优化器状态）。"
    monkeypatch.setattr(linebreak, "_disk", None)
    linebreak._analysis.cache_clear()
    expected = [break_paragraph(text, width) for width in (8, 13, 21)]
    linebreak.save_analysis_cache()
    saved = json.loads((tmp_path / "shardbook" / linebreak.ANALYSIS_CACHE_FILE).read_text("utf-8"))
    assert len(saved["entries"]) == 1

    def refused(text: str) -> linebreak.Analysis:
        raise AssertionError("analysed again instead of read from the cache")

    monkeypatch.setattr(linebreak, "_disk", None)
    monkeypatch.setattr(linebreak, "_analyse", refused)
    linebreak._analysis.cache_clear()
    assert [break_paragraph(text, width) for width in (8, 13, 21)] == expected

    (key,) = saved["entries"]
    for data in (
        {**saved, "entries": {key: [[1, "x"], []]}},
        {**saved, "version": linebreak.ANALYSIS_CACHE_VERSION + 1},
    ):
        (tmp_path / "shardbook" / linebreak.ANALYSIS_CACHE_FILE).write_text(json.dumps(data))
        monkeypatch.setattr(linebreak, "_disk", None)
        linebreak._analysis.cache_clear()
        with pytest.raises(AssertionError, match="analysed again"):
            break_paragraph(text, 8)
    linebreak._analysis.cache_clear()


def test_the_first_line_has_the_room_its_own_prefix_leaves() -> None:
    # No marker, continuation lines indented by 4: the first line may take all 10 cells.
    assert hanging_lines("aaaa bbbb cccc dddd", 10, "", "    ") == [
        "aaaa bbbb",
        "    cccc",
        "    dddd",
    ]
    # And the other way round: a wide marker, continuation lines flush left.
    assert hanging_lines("aaaa bbbb cccc", 10, "1234. ", "") == ["1234. aaaa", "bbbb cccc"]


# RFC 3986 section 3.1: a scheme is a letter, then letters, digits, "+", "-" or "."; then "://"
# and the characters this module counts as a URL's (the pattern written out in full, the
# definition the scan from each "://" must agree with).
URL_PATTERN = re.compile(
    r"[A-Za-z][A-Za-z0-9+.-]*://[A-Za-z0-9\-._~:/?#@!$&*+;=%]*[A-Za-z0-9\-_~/#=&%+]"
)


@given(
    st.lists(
        st.sampled_from(["a", "Z", "1", "+", ".", "-", ":", "/", "://", " ", "全", "?", ")"]),
        max_size=30,
    ).map("".join)
)
@example("see 1http://x.org/a-b.")
@example("x://y://z")
def test_urls_are_found_as_the_rfc_pattern_finds_them(text: str) -> None:
    found = [
        (url.start(), text.index("://", url.start()), url.end())
        for url in URL_PATTERN.finditer(text)
    ]
    assert linebreak._url_spans(text) == found


def test_a_long_word_is_cut_in_work_that_grows_with_its_length(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A 4,000-character word at 74 columns is 55 lines. Each cut measures the lines that fit
    from the last cut on, about 75 of them; measuring every end up to the word's end for each
    line (the cut once did) is 4,000 + 3,926 + ... + 74, about 110,000 measures, and a
    20,000-character paste froze the notes view (ctrl+e) for minutes."""
    measured = 0
    real = linebreak._visible_width

    def counting(text: str) -> int:
        nonlocal measured
        measured += 1
        return real(text)

    monkeypatch.setattr(linebreak, "_visible_width", counting)
    word = "x" * 4000
    lines = break_paragraph(word, 74)
    assert "".join(lines) == word and [len(line) for line in lines] == [74] * 54 + [4000 - 54 * 74]
    assert measured < 20 * len(word)


def test_a_quoted_label_breaks_from_the_chinese_before_and_after_it() -> None:
    """UAX #14 revision 51 (Unicode 15.1) LB19a allows a break beside a quotation mark only
    between East Asian characters: before “hidden (a Latin letter inside) it forbade one, so
    the Ledger's list of labels after 请填写 went to a line of its own, half a line left empty.
    The East Asian tailoring breaks before an opening quote after an East Asian character and
    after a closing one before an East Asian character; English text keeps UAX #14's breaks."""
    labels = ["序列长度 s", "层数 L", "hidden 维度 h", "head 数 a"]
    text = "activation：未计算：请填写" + "、".join(f"“{unbreakable(label)}”" for label in labels)
    # 10 + 2 + 6 + 2 + 6 cells up to 请填写, then the labels (a quote is 1 cell, a space 1):
    # 12 + 10 + 15 + 2 + 2 = 41 cells to “hidden 维度 h”、, 11 more for “head 数 a”.
    assert cell_len(text) == 78
    assert break_paragraph(text, 74) == [text[: text.index("“head")], text[text.index("“head") :]]
    assert break_paragraph("他说“hello”然后走了", 8) == ["他说", "“hello”", "然后走了"]
    assert break_paragraph("the “reduce” step", 8) == ["the ", "“reduce” ", "step"]
    # A closing quote before 、 still keeps it: no line starts with closing punctuation.
    assert "、" not in [line[0] for line in break_paragraph("写“序列长度 s”、“层数 L”", 9)]


_QUOTED = st.lists(
    st.sampled_from(["中文", "数", "、", "“", "”", "hidden", "a", " ", "（", "）", "。"]),
    max_size=14,
).map("".join)


@settings(max_examples=300, deadline=None)
@given(text=_QUOTED, width=st.integers(min_value=8, max_value=40))
def test_a_quote_beside_an_east_asian_character_is_a_break(text: str, width: int) -> None:
    """Property: before every “ right after an ideograph or 、, and after every ” right before an
    ideograph, a line may end (unless the other rules forbid it: the quote after an opening
    bracket, a closing mark after the quote)."""
    allowed = set(break_positions(text, width))
    for index in range(1, len(text)):
        before, after = text[index - 1], text[index]
        if after == "“" and (before in "、。" or "\u4e00" <= before <= "\u9fff"):
            assert index in allowed, (text, index)
        if before == "”" and "\u4e00" <= after <= "\u9fff":
            assert index in allowed, (text, index)
