"""Search over the lesson and the learner's own words (engine/search.py): literal, case- and
width-insensitive, CJK without word boundaries, offsets into the original text, every hit where
the reader shows it, in the lesson's order."""

from __future__ import annotations

import itertools
import re

from hypothesis import assume, given
from hypothesis import strategies as st
from rich.cells import cell_len

from engine.lesson import load_lesson
from engine.paths import resolve_content_dir
from engine.progress import LessonProgress
from engine.search import (
    ELLIPSIS,
    HEADER_ID,
    Hit,
    Place,
    find_all,
    fold,
    learner_places,
    reader_texts,
    search,
    search_places,
    searchable_places,
    snippet,
)

LESSON = load_lesson(resolve_content_dir(None) / "S15.yaml")
SECTION_IDS = [section.id for section in LESSON.sections]

texts = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), max_size=60)


def progress(**fields: dict[str, str]) -> LessonProgress:
    return LessonProgress("S15", **fields)  # type: ignore[arg-type]


# ----------------------------------------------------------------- matching
def test_reduce_scatter_is_found_where_the_lesson_names_it() -> None:
    hits = search(LESSON, progress(), "reduce-scatter")
    sections = [hit.place.section_id for hit in hits]
    # The learning objectives (item 3), the core knowledge's collectives paragraph, the third
    # self-check question, and the PyTorch Distributed reading (content/S15.yaml).
    assert sections == ["objectives", "core", "self-check", "course-alignment"]
    for hit in hits:
        assert hit.place.source == "lesson"
        assert hit.place.text[hit.start : hit.end] == "reduce-scatter"
    # Any case: what the learner typed is folded, never the lesson.
    assert [(h.start, h.end) for h in search(LESSON, progress(), "REDUCE-Scatter")] == [
        (h.start, h.end) for h in hits
    ]


def test_a_note_about_zero_is_found_with_its_field_and_pane() -> None:
    mine = progress(
        notes={"ex2.fsdp.split": "Zero-3 shards params, grads and optimizer states"},
        answers={"self-check-fsdp-vs-tp": "FSDP: model states (ZeRO-3)"},
    )
    learner = [hit for hit in search(LESSON, mine, "zero") if hit.place.source != "lesson"]
    assert [(h.place.source, h.place.item_id) for h in learner] == [
        ("notes", "ex2.fsdp.split"),
        ("answers", "self-check-fsdp-vs-tp"),
    ]
    note, answer = (hit.place for hit in learner)
    assert note.section_id == "exercises" and note.number == 2
    assert note.pane == "diagrams" and note.strategy == "fsdp"  # exercise 2's worked_in
    assert "which dimension is split" in note.label
    assert answer.section_id == "self-check" and answer.number == 2
    assert answer.label == LESSON.section("self-check").items[1].text
    assert learner[0].place.text[learner[0].start : learner[0].end] == "Zero"


def test_hits_come_in_the_lessons_order_with_the_learners_text_in_its_section() -> None:
    mine = progress(
        reflections={"reflection-tradeoff": "通信 is the bottleneck"},
        answers={"self-check-more-devices": "more 通信"},
    )
    order = [HEADER_ID, *SECTION_IDS]
    hits = search(LESSON, mine, "通信")
    positions = [order.index(hit.place.section_id) for hit in hits]
    assert positions == sorted(positions)
    assert ("answers", "self-check") in [(h.place.source, h.place.section_id) for h in hits]
    assert hits[-1].place.source == "reflections"  # the reflection section comes last


def test_chinese_needs_no_word_boundaries() -> None:
    hits = search(LESSON, progress(), "显存")  # inside 训练显存不只等于参数大小
    assert any(hit.place.section_id == "core" for hit in hits)
    assert find_all("训练显存不只等于参数大小", "存不") == [(3, 5)]


def test_width_and_case_are_ignored_but_offsets_are_the_texts() -> None:
    # A full-width query, as a Chinese input method types it, finds the ASCII text.
    assert find_all("FSDP/ZeRO 进一步", "ｚｅｒｏ") == [(5, 9)]
    # ß folds to ss: a match inside it takes the whole character.
    assert find_all("Straße", "STRASSE") == [(0, 6)]
    assert find_all("Straße", "s") == [(0, 1), (4, 5)]


def test_a_query_is_never_a_pattern() -> None:
    text = "a[/ and [/] and [bold]x and a.*b and \\d"
    for query in ("[/]", "a[/", "[bold]x", ".*", "\\d", "(", "*"):
        assert find_all(text, query) == [
            (m.start(), m.end()) for m in re.finditer(re.escape(query), text)
        ], query
    assert find_all("abc", ".*") == []


def test_blank_queries_find_nothing() -> None:
    for query in ("", " ", "\n\t"):
        assert search(LESSON, progress(answers={"self-check-adam-memory": " x "}), query) == []


def test_emoji_and_flags_are_found_whole_in_the_learners_text() -> None:
    family, flag = (
        "👨\u200d👩\u200d👧",
        "🏴\U000e0067\U000e0062\U000e0065\U000e006e\U000e0067\U000e007f",
    )
    mine = progress(notes={"ex4": f"team {family} and {flag}"})
    for query in (family, flag):
        (hit,) = search(LESSON, mine, query)
        assert hit.place.text[hit.start : hit.end] == query


@given(texts, st.data())
def test_a_slice_of_any_text_is_found_there(text: str, data: st.DataObject) -> None:
    start = data.draw(st.integers(0, len(text)))
    end = data.draw(st.integers(start, len(text)))
    query = text[start:end]
    assume(query.strip())
    matches = find_all(text, query)
    assert matches
    for begin, finish in matches:
        assert 0 <= begin < finish <= len(text)
        assert fold(query) in fold(text[begin:finish])
    # Left to right, not overlapping.
    assert all(a[1] <= b[0] for a, b in itertools.pairwise(matches))


@given(texts, texts)
def test_every_match_holds_the_query_folded(text: str, query: str) -> None:
    for start, end in find_all(text, query):
        assert fold(query) in fold(text[start:end])
    if query.strip() and fold(query) and fold(query) not in fold(text):
        assert find_all(text, query) == []


@given(st.lists(texts, max_size=6), texts)
def test_searching_many_texts_finds_what_each_text_holds(
    texts_searched: list[str], query: str
) -> None:
    # The query is folded once for all the texts: the hits are still each text's own matches.
    places = [Place("core", "lesson", text) for text in texts_searched]
    assert search_places(places, query) == [
        Hit(place, start, end) for place in places for start, end in find_all(place.text, query)
    ]


# ----------------------------------------------------------------- what is searched
def test_key_points_are_searched_only_once_revealed() -> None:
    item = LESSON.section("self-check").items[0]
    phrase = "master weights"  # in its key points, not in the question
    assert phrase not in item.text and any(phrase in point for point in item.key_points)
    hidden = [h for h in search(LESSON, progress(), phrase) if h.place.section_id == "self-check"]
    assert hidden == []
    shown = LessonProgress("S15", revealed=[item.id])
    found = [h for h in search(LESSON, shown, phrase) if h.place.section_id == "self-check"]
    assert found and all(h.place.source == "lesson" for h in found)
    assert reader_texts(LESSON, "self-check", frozenset({item.id}))[2] == item.key_points[0]


def test_the_notes_view_lists_written_text_in_the_lessons_order() -> None:
    mine = progress(
        answers={"self-check-more-devices": "stragglers", "self-check-adam-memory": " "},
        reflections={"reflection-memory-ledger": "16 B/param"},
        notes={"ex5": "failures", "ex3.pp.wait": "bubble", "ex2.dp.split": "batch", "old": "x"},
    )
    places = learner_places(LESSON, mine)
    assert [p.item_id for p in places] == [
        "ex2.dp.split",
        "ex3.pp.wait",
        "ex5",
        "self-check-more-devices",  # a blank answer is left out
        "reflection-memory-ledger",
        "old",  # a note of no known exercise: last, never dropped
    ]
    assert [p.pane for p in places[:3]] == ["diagrams", "diagrams", "tradeoffs"]
    assert places[-1].section_id == "" and places[-1].pane == ""


# ----------------------------------------------------------------- snippets
def test_a_snippet_centres_the_match_on_one_line() -> None:
    text = LESSON.section("core").items[2].text
    start = text.index("reduce-scatter")
    found = snippet(text, start, start + len("reduce-scatter"), 50)
    assert found.match == "reduce-scatter"
    assert found.before.startswith(ELLIPSIS) and found.after.endswith(ELLIPSIS)
    assert cell_len(found.before + found.match + found.after) <= 50
    assert snippet("a\nb", 0, 1, 10).after == " b"


# A Latin word, identifier or number, as the reader keeps it whole (README, "How the lesson's
# lines are broken").
WORD_CHARS = re.compile(r"[A-Za-z0-9_./-]")


def cuts_a_word(text: str, cut: int) -> bool:
    return 0 < cut < len(text) and all(WORD_CHARS.match(text[i]) for i in (cut - 1, cut))


def test_a_snippet_is_cut_between_words() -> None:
    """At 80x24 the hits read `context paral…`, `…handari et al.`, `…eRO-2`: each cut is now
    between words (and no `…` is followed by `，`), at the widths of the search at 80, 100 and
    120 columns."""
    cuts = 0
    for place in searchable_places(LESSON, LessonProgress("S15")):
        text = " ".join(place.text.split("\n"))
        for query in ("ZeRO", "all-gather", "memory", "bubble", "rank", "FSDP"):
            for start in (m.start() for m in re.finditer(re.escape(query), text)):
                for width in (74, 94, 114):
                    found = snippet(text, start, start + len(query), width)
                    assert found.match == query
                    if found.before.startswith(ELLIPSIS):
                        kept = found.before[1:]
                        assert kept and not kept.startswith(("，", "、", "；", "。")), found
                        assert not cuts_a_word(text, start - len(kept)), found
                        cuts += 1
                    if found.after.endswith(ELLIPSIS):
                        kept = found.after[:-1]
                        assert not cuts_a_word(text, start + len(query) + len(kept)), found
                        cuts += 1
    assert cuts > 20


@given(texts, st.data(), st.integers(1, 80))
def test_snippets_fit_their_width(text: str, data: st.DataObject, width: int) -> None:
    start = data.draw(st.integers(0, len(text)))
    end = data.draw(st.integers(start, len(text)))
    found = snippet(text, start, end, width)
    line = found.before + found.match + found.after
    assert "\n" not in line
    assert cell_len(line) <= width
    # On one line, each line break, carriage return and tab is a space of one cell (a "\r"
    # takes no cell as Rich counts it, but is written as a space).
    one_line = text[start:end].replace("\n", " ").replace("\r", " ").replace("\t", " ")
    if cell_len(one_line) <= width:
        assert found.match == one_line


def test_a_carriage_return_in_a_match_takes_a_cell() -> None:
    assert snippet("0\r", 0, 2, 1).match == ELLIPSIS
    assert snippet("0\r", 0, 2, 2).match == "0 "
