"""engine.export and ``shardbook export``: notes that render as typed in any CommonMark
renderer, in the lesson's order, as Markdown, JSON, HTML and an Anki deck."""

from __future__ import annotations

import datetime as dt
import html.parser
import json
import random
import sqlite3
import zipfile
from dataclasses import replace
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from cli.main import main
from engine.export import (
    ANKI_FIELDS,
    anki_deck_id,
    export_anki,
    export_data,
    export_html,
    export_markdown,
    export_path,
    notes_owner,
    safe_file_name,
    split_front_matter,
)
from engine.i18n import set_language
from engine.lesson import load_lesson
from engine.progress import LessonProgress, ProgressStore
from engine.quiz import QuizState, ask, lesson_items
from tests.notes_render import as_typed, block_kinds, lesson_outline, outline, quotes, tokens
from tui.widgets.ledger import EXAMPLE_1B

ROOT = Path(__file__).resolve().parent.parent
LESSON = load_lesson(ROOT / "content" / "S15.yaml")
HOSTILE = "[/] a[/ [bold]x\ttab \x1b[31mred 训练显存 ✔️ 👩‍💻\n---\nno"
NOW = dt.datetime(2026, 3, 1, 9, 0, tzinfo=dt.UTC)
# Exercise 1 (lesson S15): 1B parameters, mixed-precision Adam, ZeRO paper §3.1: 2 + 2 + 12 bytes
# per parameter, so 2e9 + 2e9 + 12e9 = 16e9 bytes (16.00 GB, 14.90 GiB) of model states.
# The Ledger's ctrl+g example, plus fields left empty or at their defaults.
EXAMPLE_FORM = {
    **EXAMPLE_1B,
    "gpu_memory": "80GB",
    "seq": "",
    "layers": "",
    "ffn_hidden": "",
    "vocab": "",
    "micro_batch": "1",
    "tp": "1",
    "recompute": "none",
    "schedule": "1f1b",
}
EXAMPLE_FIGURES = {"parameters": 2e9, "gradients": 2e9, "adam_states": 12e9, "activations": 0.0}


def filled_progress() -> LessonProgress:
    progress = LessonProgress("S15", status="in-progress")
    for index, item in enumerate(LESSON.self_check):
        progress.answers[item.id] = f"{HOSTILE} answer {index}"
    for index, item in enumerate(LESSON.reflection_fields):
        progress.reflections[item.id] = f"{HOSTILE} reflection {index}"
    progress.figures["exercise1"] = dict(EXAMPLE_FIGURES)
    progress.forms["ledger"] = dict(EXAMPLE_FORM)
    return progress


def test_markdown_renders_every_text_as_typed_under_the_lessons_headings() -> None:
    progress = filled_progress()
    markdown = export_markdown(LESSON, progress, NOW)
    front, _body = split_front_matter(markdown)
    assert front["lesson"] == "S15"
    assert front["status"] == "in-progress"
    assert outline(markdown) == lesson_outline(LESSON)
    assert quotes(markdown) == [*progress.answers.values(), *progress.reflections.values()]
    body = rendered_text(markdown)
    assert "| 12000000000 | 12.00 GB | 11.18 GiB |" in markdown
    assert "16.00 GB" in body and "14.90 GiB" in body


def rendered_text(markdown: str) -> str:
    """Every piece of text a renderer shows, joined."""
    return "\n".join(t.content for t in tokens(markdown) if t.type == "inline")


def test_two_lines_and_a_rule_stay_two_lines_and_a_rule_with_no_new_heading() -> None:
    answer = "first line\n---\nsecond line"
    item = LESSON.self_check[0]
    progress = LessonProgress("S15", answers={item.id: answer})
    markdown = export_markdown(LESSON, progress, NOW)
    assert quotes(markdown) == [answer]
    assert outline(markdown) == lesson_outline(LESSON)
    assert block_kinds(markdown)["hr"] == 0  # the front matter is not a rule either


# Markdown cannot show control characters other than tab and line breaks, nor NUL.
learner_text = st.text(
    st.characters(blacklist_categories=("Cs", "Cc"), whitelist_characters="\t\n\r"),
    min_size=1,
).filter(str.strip)
LINE_STARTS = ["# h", "---", "***", "* a", "- a", "+ a", "> q", "1. a", "2) a", "```", "    code",
               "<div>", "===", "| a | b |", "[x]: /url", "~~~"]  # fmt: skip


@settings(max_examples=150, deadline=None)
@given(
    text=st.one_of(
        learner_text,
        st.lists(st.sampled_from(LINE_STARTS) | learner_text, min_size=1, max_size=6).map(
            "\n".join
        ),
    )
)
def test_any_learner_text_renders_as_typed_and_adds_no_block(text: str) -> None:
    def notes_with(value: str) -> str:
        progress = LessonProgress(
            "S15",
            answers={LESSON.self_check[1].id: value},
            reflections={LESSON.reflection_fields[0].id: value},
            notes={"ex2.tp.split": value, "ex5": value},
        )
        return export_markdown(LESSON, progress, NOW)

    markdown = notes_with(text)
    assert quotes(markdown) == [as_typed(text)] * 4
    assert outline(markdown) == lesson_outline(LESSON)
    assert block_kinds(markdown) == block_kinds(notes_with("plain"))


def test_exercises_appear_once_each_in_the_lessons_order() -> None:
    notes = {
        f"ex{n}.{name}.{kind}": f"{name} {kind}"
        for name in ("cp", "dp", "tp", "pp")
        for n, kind in ((3, "wait"), (2, "split"), (3, "comm"))
    }
    progress = LessonProgress("S15", notes={**notes, "ex5": "five", "ex9.old": "kept"})
    markdown = export_markdown(LESSON, progress, NOW)
    headings = [text for _level, text in outline(markdown)]
    exercises = LESSON.section("exercises").items
    for number, item in enumerate(exercises, start=1):
        assert headings.count(f"{number}. {item.text}") == 1
    assert headings.count("Other notes") == 1  # an id of no exercise is kept, after them
    # Exercise 2's notes (DP, TP, PP, CP in the lesson's strategy order), then exercise 3's.
    assert quotes(markdown) == [
        "dp split", "tp split", "pp split", "cp split",
        "dp comm", "dp wait", "tp comm", "tp wait", "pp comm", "pp wait", "cp comm", "cp wait",
        "five", "kept",
    ]  # fmt: skip
    data = export_data(LESSON, progress, NOW)
    assert [entry["number"] for entry in data["exercises"]] == [1, 2, 3, 4, 5]
    assert data["exercises"][1]["notes"] == ["ex2.dp.split", "ex2.tp.split", "ex2.pp.split",
                                             "ex2.cp.split"]  # fmt: skip


def test_exercise1_is_a_table_of_the_inputs_set_with_a_total() -> None:
    markdown = export_markdown(LESSON, filled_progress(), NOW)
    rendered = rendered_text(markdown)
    for label, value in (("parameters N", "1B"), ("data-parallel size P", "1"),
                         ("precision", "mixed-precision Adam 2/2/12")):  # fmt: skip
        assert f"| {label} | {value} |" in markdown
    # Empty inputs and less-used ones left at their defaults are not shown; no raw form keys.
    for key in ("ffn_hidden", "vocab", "FFN hidden", "tensor-parallel", "micro-batch size"):
        assert key not in markdown
    assert "activation activations" not in markdown
    assert "| **total (these columns)** | **16000000000** | **16.00 GB** | **14.90 GiB** |" in (
        markdown
    )
    assert "No figures" not in rendered
    table = [t for t in tokens(markdown) if t.type == "table_open"]
    assert len(table) == 2  # inputs, then figures
    # The columns in the interface language: 2 + 2 + 12 bytes per parameter (ZeRO §3.1).
    assert "| parameters | 2000000000 | 2.00 GB | 1.86 GiB |" in markdown
    assert "| Adam states (master weights + moments) | 12000000000 |" in markdown
    set_language("zh")
    chinese = export_markdown(LESSON, filled_progress(), NOW)
    assert "| 参数 | 2000000000 | 2.00 GB | 1.86 GiB |" in chinese
    assert "| 梯度 | 2000000000 |" in chinese and "parameters |" not in chinese
    # The JSON's labels too (the notes' "which dimension is split" stayed English).
    progress = filled_progress()
    progress.notes["ex2.dp.split"] = "the batch"
    data = export_data(LESSON, progress, NOW)
    labels = {note["id"]: note["label"] for note in data["exercise_notes"]}
    assert labels == {"ex2.dp.split": "哪一维被切分"}, labels


def test_an_invalid_form_is_never_paired_with_figures() -> None:
    progress = filled_progress()
    progress.forms["ledger"]["params"] = "-1B"
    progress.figures["exercise1"] = {}  # what the Ledger saves while a field is invalid
    markdown = export_markdown(LESSON, progress, NOW)
    assert "| parameters N | \\-1B |" in markdown  # escaped: renders as "-1B"
    assert "16.00 GB" not in markdown and "No figures" in markdown
    assert export_data(LESSON, progress, NOW)["exercise1"] == {}


def test_a_refused_edit_exports_the_last_good_result_the_plan_counts() -> None:
    """The Ledger keeps its last good result on screen under a refused field and saves that
    form beside the typed one; the plan counts it. The export said "No figures" there: it now
    gives the last good inputs with their figures (1B with mixed-precision Adam: 2 + 2 + 12
    bytes a parameter, ZeRO section 3.1), says why, and never pairs them with the refused
    value."""
    progress = filled_progress()
    progress.save_form("ledger", {**EXAMPLE_FORM, "lora_targets": "q,q,v"}, dict(EXAMPLE_FORM))
    markdown = export_markdown(LESSON, progress, NOW)
    assert "exercise 1 is its last good result" in " ".join(markdown.split())
    assert "| parameters | 2000000000 | 2.00 GB | 1.86 GiB |" in markdown
    assert "16.00 GB" in markdown and "q,q,v" not in markdown
    data = export_data(LESSON, progress, NOW)
    assert data["ledger_inputs_last_good"] is True
    assert data["exercise1"] == EXAMPLE_FIGURES
    assert data["ledger_form"]["lora_targets"] == "q,q,v"  # the form as typed, as before


def test_revealed_key_points_and_the_quiz_summary_are_exported() -> None:
    first, second = LESSON.self_check[:2]
    progress = LessonProgress("S15", answers={first.id: "a", second.id: "b"}, revealed=[second.id])
    markdown = export_markdown(LESSON, progress, NOW)
    rendered = rendered_text(markdown)
    assert all(point in rendered for point in second.key_points)
    assert not any(point in rendered for point in first.key_points)
    # The second self-check, answered with its key points shown, counts as reviewed in the
    # lesson, as on the quiz screen.
    total = len(lesson_items(LESSON))
    assert f"No quiz reviews yet ({total} items; 1 self-check answered in the lesson)" in rendered
    assert export_data(LESSON, progress, NOW)["quiz"]["answered_in_lesson"] == 1

    state = QuizState(progress)
    items = lesson_items(LESSON)
    assert [item.ref for item in items[:2]] == [first.id, second.id]
    rng = random.Random(0)
    state.review(ask(items[0], LESSON, rng), 3, NOW)
    rendered = rendered_text(export_markdown(LESSON, progress, NOW))
    assert (
        f"reviews: 1 (2 of {total} items reviewed: 1 rated in the quiz, 1 self-check answered "
        f"in the lesson; {total - 2} not reviewed yet)"
    ) in " ".join(rendered.split())
    # Rated in the quiz, the revealed one counts there, once.
    state.review(ask(items[1], LESSON, rng), 1, NOW)
    later = NOW + dt.timedelta(minutes=5)
    data = export_data(LESSON, progress, later)
    # py-fsrs 6 defaults: a new card rated Again is due after the first learning step (1 min),
    # Good after the second (10 min); at +5 min one is due.
    assert data["quiz"]["reviews"] == 2 and data["quiz"]["due"] == 1
    assert data["quiz"]["answered_in_lesson"] == 0
    assert data["quiz"]["next_due"] == (NOW + dt.timedelta(minutes=1)).isoformat()
    # One Good (3) and one Again (1): half the reviews were recalled.
    assert data["quiz"]["recall"] == 0.5
    assert 0 < data["quiz"]["retrievability"] <= 1
    rendered = rendered_text(export_markdown(LESSON, progress, later))
    assert f"reviews: 2 (2 of {len(items)} items reviewed" in rendered
    assert "recall: 50% of reviews rated Good or Easy" in rendered
    due = (NOW + dt.timedelta(minutes=1)).astimezone()  # shown in the local time zone
    assert "due now: 1" in rendered and f"next due: {due:%Y-%m-%d %H:%M %z}" in rendered
    assert [entry["revealed"] for entry in data["self_check"]] == [False, True, False, False]


def test_the_next_due_time_is_written_like_every_other_time_of_the_export() -> None:
    # The review log keeps microseconds (its times replay the schedule exactly); the notes
    # write times as engine/timefmt.py does, to the second with the UTC offset.
    progress = LessonProgress("S15")
    reviewed = NOW + dt.timedelta(microseconds=29_661)
    QuizState(progress).review(ask(lesson_items(LESSON)[0], LESSON, random.Random(0)), 1, reviewed)
    later = NOW + dt.timedelta(minutes=5)
    # py-fsrs 6: a new card rated Again is due after the first learning step, 1 minute.
    assert export_data(LESSON, progress, later)["quiz"]["next_due"] == "2026-03-01T09:01:00+00:00"
    markdown = export_markdown(LESSON, progress, later)
    # On the page: the learner's local time with its offset, to the minute.
    due = dt.datetime(2026, 3, 1, 9, 1, tzinfo=dt.UTC).astimezone()
    assert f"- next due: {due:%Y-%m-%d %H:%M %z}\n" in markdown
    assert ".029661" not in markdown and "09:01:00+00:00" not in markdown


class _Page(html.parser.HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[str] = []
        self.headings: list[str] = []
        self.quotes: list[str] = []
        self.links: list[str] = []
        self._heading = self._quote = False

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        self.links.extend(value or "" for name, value in attrs if name in ("src", "href"))
        if tag in ("h1", "h2", "h3"):
            self._heading = True
            self.headings.append("")
        elif tag == "blockquote":
            self._quote = True
            self.quotes.append("")
        elif tag == "br" and self._quote:
            self.quotes[-1] += "\n"

    def handle_endtag(self, tag: str) -> None:
        if tag in ("h1", "h2", "h3"):
            self._heading = False
        elif tag == "blockquote":
            self._quote = False

    def handle_data(self, data: str) -> None:
        if self._heading:
            self.headings[-1] += data
        elif self._quote:
            self.quotes[-1] += data.strip("\n") if not data.strip() else data


def test_html_is_one_page_with_the_same_notes_and_escaped_text() -> None:
    progress = filled_progress()
    item = LESSON.reflection_fields[0]
    progress.reflections[item.id] = "<script>alert(1)</script>\n# not a heading\n&amp; <b>x</b>"
    page = export_html(LESSON, progress, NOW)
    parser = _Page()
    parser.feed(page)
    assert page.startswith("<!DOCTYPE html>") and "script" not in parser.tags
    # Self-contained: no external file; the only links are the lesson's readings, to follow.
    readings = [
        link.url for item in LESSON.section("course-alignment").items for link in item.links
    ]
    assert readings and parser.links == readings
    assert "src" not in page and "<link" not in page
    assert [text for _level, text in lesson_outline(LESSON)] == parser.headings
    expected = [*progress.answers.values(), *progress.reflections.values()]
    # HOSTILE's ESC is shown as its control picture (the next test).
    shown = [as_typed(text).replace("\x1b", "\u241b") for text in expected]
    assert [text.strip("\n") for text in parser.quotes] == shown
    assert "&lt;script&gt;" in page and "&amp;amp;" in page
    assert f"<title>S15 notes: {LESSON.title}</title>" in page


def test_html_title_is_in_the_interface_language() -> None:
    """The page's title, as its first heading, in Chinese when the interface is (the catalog's
    "{lesson} 笔记：{title}"): it stayed English."""
    set_language("zh")
    page = export_html(LESSON, filled_progress(), NOW)
    assert f"<title>S15 笔记：{LESSON.title}</title>" in page
    assert f"<h1>S15 笔记：{LESSON.title}</h1>" in page


def test_html_shows_a_pasted_control_character_as_its_picture_and_markdown_keeps_it() -> None:
    """A terminal's colour code pasted into an answer (ESC [31m) and a BEL: HTML forbids C0
    controls but tab and newline (WHATWG HTML, "Preprocessing the input stream"), so the page
    shows each as its Unicode control picture (U+2400 + code: ESC U+241B, BEL U+2407); tab and
    newline stay; the Markdown keeps the bytes as typed."""
    item = LESSON.self_check[0]
    typed = "\x1b[31mred\x1b[0m\tcol\x07 end\nnext"
    progress = LessonProgress("S15", answers={item.id: typed})
    page = export_html(LESSON, progress, NOW)
    assert not [char for char in page if ord(char) < 0x20 and char not in "\t\n"]
    parser = _Page()
    parser.feed(page)
    assert parser.quotes[0].strip("\n") == "\u241b[31mred\u241b[0m\tcol\u2407 end\nnext"
    markdown = export_markdown(LESSON, progress, NOW)
    assert markdown.count("\x1b") == 2 and markdown.count("\x07") == 1


def _collection(apkg: bytes, folder: Path) -> sqlite3.Connection:
    archive = zipfile.ZipFile(__import__("io").BytesIO(apkg))
    assert sorted(archive.namelist()) == ["collection.anki2", "media"]
    target = folder / "collection.anki2"
    target.write_bytes(archive.read("collection.anki2"))
    return sqlite3.connect(target)


def test_anki_deck_holds_every_quiz_item_with_stable_ids(tmp_path: Path) -> None:
    first = export_anki(LESSON, NOW)
    again = export_anki(LESSON, NOW + dt.timedelta(days=3))
    items = lesson_items(LESSON)
    rows = []
    for index, data in enumerate((first, again)):
        folder = tmp_path / str(index)
        folder.mkdir()
        with _collection(data, folder) as db:
            notes = db.execute("select guid, mid, flds, tags from notes order by id").fetchall()
            decks = json.loads(db.execute("select decks from col").fetchone()[0])
            models = json.loads(db.execute("select models from col").fetchone()[0])
            cards = db.execute("select count(*), min(did), max(did) from cards").fetchone()
        db.close()
        rows.append(notes)
        assert len(notes) == len(items) and cards == (len(items), *(anki_deck_id("S15"),) * 2)
        assert str(anki_deck_id("S15")) in decks
        (model,) = [m for m in models.values() if m["name"] == "shardbook quiz card"]
        assert [field["name"] for field in model["flds"]] == list(ANKI_FIELDS)
        fields = [note[2].split("\x1f") for note in notes]
        assert [f[3] for f in fields] == [item.id for item in items]
        assert all(f[0] and f[1] for f in fields)  # a question and an answer on every card
        # A self-check card: the lesson's question, its key points on the back.
        check = LESSON.self_check[0]
        assert fields[0][0] == check.text
        assert check.key_points[0] in fields[0][1]
        assert " S15 self-check " in notes[0][3]
    # Same ids and GUIDs in both exports: importing again updates the cards in place.
    assert [(g, m) for g, m, _f, _t in rows[0]] == [(g, m) for g, m, _f, _t in rows[1]]


def test_cli_writes_html_and_anki_files_browsers_and_anki_open(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ProgressStore(tmp_path).save(filled_progress())
    page, deck = tmp_path / "notes.html", tmp_path / "S15.apkg"
    base = ["export", "S15", "--progress-dir", str(tmp_path)]
    assert main([*base, "--format", "html", "-o", str(page)]) == 0
    assert main([*base, "--format", "anki", "-o", str(deck)]) == 0
    parser = _Page()
    parser.feed(page.read_text(encoding="utf-8"))
    assert parser.headings[0] == f"S15 notes: {LESSON.title}"
    assert zipfile.is_zipfile(deck)
    assert notes_owner(page) == "S15" and notes_owner(deck) == "S15"
    capsys.readouterr()
    # A deck is a file: without -o, or without .apkg, one line and exit 2, nothing written.
    assert main([*base, "--format", "anki"]) == 2
    assert main([*base, "--format", "anki", "-o", str(tmp_path / "deck.zip")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 2 and ".apkg" in err
    assert not (tmp_path / "deck.zip").exists()


def test_html_and_anki_exports_of_two_lessons_never_overwrite_each_other(tmp_path: Path) -> None:
    from engine.export import write_export

    con = replace(LESSON, id="CON")
    for fmt, data in (("html", export_html(con, LessonProgress("CON"), NOW).encode()),
                      ("anki", export_anki(con, NOW))):  # fmt: skip
        first = export_path(tmp_path, "CON", fmt)
        write_export(first, data, lesson_id="CON")
        assert notes_owner(first) == "CON"
        assert export_path(tmp_path, "CON_", fmt).name == first.name.replace(".", "-2.")


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
    markdown = out.read_text(encoding="utf-8")
    assert split_front_matter(markdown)[0]["lesson"] == "S15"
    assert quotes(markdown)[:4] == list(progress.answers.values())
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
    # Named by the flag, as every other error of export is (-o: --format anki writes a file).
    assert capsys.readouterr().err == (
        f"shardbook: export: -o: {target}: could not write (no such folder)\n"
    )
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


def test_ratings_readings_and_looks_are_exported() -> None:
    progress = LessonProgress("S15", notes={"ex2.dp.split": "the batch", "ex5": "data loading"})
    progress.rate_objective("objective-collectives", "start", "not-yet")
    progress.rate_objective("objective-collectives", "end", "can")
    progress.mark_looked(["ex3.dp.comm"], NOW)
    data = export_data(LESSON, progress, NOW)
    ratings = {item["id"]: item["rating"] for item in data["objectives"]}
    assert ratings["objective-collectives"] == {"start": "not-yet", "end": "can"}
    assert ratings["objective-memory-sources"] == {"start": None, "end": None}
    collectives = next(o for o in data["objectives"] if o["id"] == "objective-collectives")
    assert collectives["trained_by"] == ["exercise-communication", "self-check-collective-roles"]
    urls = [link["url"] for reading in data["readings"] for link in reading["links"]]
    assert "https://pdos.csail.mit.edu/6.824/" in urls and len(data["readings"]) == 3
    assert data["looked_before_answering"] == {"ex3.dp.comm": "2026-03-01T09:00:00+00:00"}
    flags = {note["id"]: note["looked_before_answering"] for note in data["exercise_notes"]}
    assert flags == {"ex2.dp.split": False, "ex5": None}
    markdown = export_markdown(LESSON, progress, NOW)
    assert "Your rating: at the start not yet; at the end can." in markdown
    assert "<https://pdos.csail.mit.edu/6.824/>" in markdown
    assert "no note written yet:_ DP - data parallel: main collective" in markdown


def test_the_chinese_export_names_the_ledger_inputs_as_the_ledger_pane_does() -> None:
    """The export's inputs table showed the Ledger's stored ids in Chinese (``| model | custom |``,
    ``zero-paper``): each row is labelled and valued as the pane shows it, in the interface
    language; a less-used input at its default is left out, as the others are."""
    from engine.exercises import LEDGER_FORM_DEFAULTS

    progress = LessonProgress("S15", status="in-progress")
    progress.forms["ledger"] = dict(LEDGER_FORM_DEFAULTS)
    set_language("zh")
    markdown = export_markdown(LESSON, progress, NOW)
    assert "| 每参数字节数口径 | ZeRO 论文 |" in markdown
    assert "zero-paper" not in markdown and "custom" not in markdown
    assert "| model |" not in markdown and "| 模型 |" not in markdown  # the default: unset
    progress.forms["ledger"].update(model="llama2-7b", bias="no", convention="megatron")
    markdown = export_markdown(LESSON, progress, NOW)
    assert "| 模型 | Llama 2 7B |" in markdown
    assert "| 线性层 bias | 否 |" in markdown
    assert "| 每参数字节数口径 | Megatron-LM |" in markdown
    assert "llama2-7b" not in markdown


def test_one_quiz_item_is_counted_in_the_singular() -> None:
    """A lesson may hold one quiz item: "(1 items" read wrong."""
    from engine.export.markdown import _quiz_markdown

    assert _quiz_markdown({"reviews": 0, "items": 1}) == [
        "No reviews yet (1 item, all new). F12 starts the quiz."
    ]
    assert _quiz_markdown({"reviews": 0, "items": 1, "answered_in_lesson": 1}) == [
        "No quiz reviews yet (1 item; 1 self-check answered in the lesson). F12 starts the quiz."
    ]
