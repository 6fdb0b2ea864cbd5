"""Search (``/``, ctrl+f) and the notes view (ctrl+e) in the app, driven by keys through
Textual's Pilot at 80x24: hits listed with their section and field, Enter shows the match marked
in the reader or selected in the box it was written in, hostile queries stay literal."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual import events
from textual.pilot import Pilot
from textual.widgets import Input, OptionList, TextArea

from engine.progress import LessonProgress, ProgressStore
from engine.search import HEADER_ID, Hit, Place, reader_texts, search_places
from tests.pilot_helpers import (
    SIZE,
    Notified,
    burst,
    goto_section,
    key,
    screen_lines,
    wait_until,
)
from tui import strings
from tui.app import ShardbookApp, make_app
from tui.screens import search as search_screen
from tui.screens.layout import META_ID
from tui.screens.search import NotesScreen, SearchScreen
from tui.widgets.diagrams import DiagramsPane
from tui.widgets.notes import NoteBox, SelfCheckBox
from tui.widgets.reader import MATCH_STYLE, BrokenText

ZERO_NOTE = "ZeRO-3 shards parameters too, so each layer is all-gathered before use"
ANSWER = "FSDP 切模型状态；TP 切层内矩阵。[/] a[/ [bold]x 👨‍👩‍👧 通信 stays"


def app_with(tmp_path: Path, progress: LessonProgress | None = None) -> ShardbookApp:
    """The app on a progress folder that holds ``progress`` (saved before it starts)."""
    if progress is not None:
        store = ProgressStore(tmp_path)
        store.lock()
        store.save(progress)
        store.unlock()
    return make_app(progress_dir=tmp_path, autosave_delay=0.05)


def written() -> LessonProgress:
    return LessonProgress(
        "S15",
        status="in-progress",
        answers={"self-check-fsdp-vs-tp": ANSWER},
        reflections={"reflection-hardest-collective": "reduce-scatter, for ZeRO-2"},
        notes={"ex2.fsdp.split": ZERO_NOTE, "ex4": "slow links: TP suffers first"},
    )


def marked(app: ShardbookApp) -> list[tuple[BrokenText, str]]:
    """Each reader text with a marked match, and the text marked (checked in what it draws)."""
    found = []
    for text in app.query("#reading BrokenText").results(BrokenText):
        if text.highlighted is None:
            continue
        content = text.render()
        spans = [span for span in content.spans if span.style == MATCH_STYLE]
        found.append((text, "".join(content.plain[span.start : span.end] for span in spans)))
    return found


async def search_for(pilot: Pilot[int], query: str) -> SearchScreen:
    await pilot.press("ctrl+f")
    screen = pilot.app.screen
    assert isinstance(screen, SearchScreen)
    field = screen.query_input
    assert pilot.app.focused is field
    await pilot.press("ctrl+u")
    pilot.app.post_message(events.Paste(query))  # as a terminal pastes it: one event
    await pilot.pause()
    assert field.value == query
    return screen


def listed(screen: SearchScreen) -> list[str]:
    options = screen.query_one("#search-hits", OptionList)
    return [str(options.get_option_at_index(i).prompt) for i in range(options.option_count)]


async def test_search_finds_reduce_scatter_and_enter_marks_it_in_the_reader(
    tmp_path: Path,
) -> None:
    app = app_with(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("/")  # the focus is on the reading pane, not in a text box
        assert isinstance(app.screen, SearchScreen)
        await pilot.press(*"REDUCE-SCATTER")
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, SearchScreen)
        # The learning objectives, core knowledge, the self-check questions and the readings
        # name it (content/S15.yaml); each hit is headed by its section.
        prompts = listed(screen)
        assert [p.splitlines()[0] for p in prompts] == [
            "学习目标",
            "核心知识",
            "自检问题",
            "专业课程对齐",
        ]
        assert all("reduce-scatter" in p.splitlines()[1] for p in prompts)
        assert "4 matches" in "\n".join(screen_lines(app))
        await pilot.press("down", "enter")
        await pilot.pause()
        await pilot.pause()
        assert not isinstance(app.screen, SearchScreen)
        assert app.main_screen.current_section == "core"
        ((text, match),) = marked(app)
        assert match == "reduce-scatter"
        # The marked line is on screen, and the reading pane has the focus (arrows scroll).
        line = text.lines[text.line_of(text.text.index("reduce-scatter"))]
        assert line.strip() in "\n".join(screen_lines(app))
        assert app.focused is app.query_one("#reading")
        # The query is there again next time.
        await pilot.press("/")
        assert isinstance(app.screen, SearchScreen)
        assert app.screen.query_input.value == "REDUCE-SCATTER"


async def test_a_note_about_zero_opens_its_pane_with_the_match_selected(tmp_path: Path) -> None:
    app = app_with(tmp_path, written())
    async with app.run_test(size=SIZE) as pilot:
        screen = await search_for(pilot, "zero-3 SHARDS")
        (prompt,) = listed(screen)
        heading, snippet = prompt.splitlines()
        assert heading.startswith("最小练习或观察步骤 · your note, exercise 2: FSDP/ZeRO-3")
        assert "ZeRO-3 shards" in snippet
        await pilot.press("enter")
        await pilot.pause()
        pane = app.query_one(DiagramsPane)
        assert pane.strategy == "fsdp"
        area = app.focused
        assert isinstance(area, TextArea)
        box = next(node for node in area.ancestors if isinstance(node, NoteBox))
        assert box.item.id == "ex2.fsdp.split"
        assert area.selected_text == "ZeRO-3 shards"
        # Typing replaces the selection, and the note is saved as edited.
        await pilot.press(*"It")
        await pilot.pause()
        assert area.text == ZERO_NOTE.replace("ZeRO-3 shards", "It")
        await pilot.press("ctrl+q")
    notes = ProgressStore(tmp_path).load("S15").progress.notes
    assert notes["ex2.fsdp.split"] == ZERO_NOTE.replace("ZeRO-3 shards", "It")


async def test_hostile_queries_are_literal_text(tmp_path: Path) -> None:
    app = app_with(tmp_path, written())
    async with app.run_test(size=SIZE) as pilot:
        for query in ("[/]", "a[/", "[bold]x", "👨‍👩‍👧", "通信 stays", "切层内"):
            screen = await search_for(pilot, query)
            answers = [h for h in screen.hits if h.place.source == "answers"]
            assert len(answers) == 1, query
            (hit,) = answers
            assert hit.place.text[hit.start : hit.end] == query
            index = screen.hits.index(hit)
            prompt = listed(screen)[index]
            assert prompt.splitlines()[0].startswith("自检问题 · your answer to question 2")
            assert query in prompt.splitlines()[1]
            screen.query_one("#search-hits", OptionList).highlighted = index
            await pilot.press("enter")
            await pilot.pause()
            area = app.focused
            assert isinstance(area, TextArea)
            box = next(node for node in area.ancestors if isinstance(node, SelfCheckBox))
            assert box.item.id == "self-check-fsdp-vs-tp"
            assert area.selected_text == query
        # Nothing was typed over: the answer is as it was.
        assert app.progress.answers["self-check-fsdp-vs-tp"] == ANSWER


async def test_slash_types_in_a_text_box_and_ctrl_f_searches_everywhere(tmp_path: Path) -> None:
    app = app_with(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await goto_section(pilot, app, "self-check")
        area = app.query("#reading TextArea").first(TextArea)
        area.focus()
        await pilot.press("/", "slash")
        assert area.text == "//"
        assert not isinstance(app.screen, SearchScreen)
        await pilot.press("ctrl+f")
        assert isinstance(app.screen, SearchScreen)
        await pilot.press("escape")
        assert not isinstance(app.screen, SearchScreen)
        # In a calculator's field too.
        await pilot.press("f2")
        assert isinstance(app.focused, Input)
        await pilot.press("ctrl+f")
        assert isinstance(app.screen, SearchScreen)


async def test_keys_typed_right_after_ctrl_f_are_the_query(tmp_path: Path) -> None:
    app = app_with(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        # Posted back to back with the keys after it, before the app handles any of them.
        app.post_message(key("ctrl+f"))
        await burst(app, "bubble")
        screen = app.screen
        assert isinstance(screen, SearchScreen)
        assert screen.query_input.value == "bubble"


async def test_the_notes_view_lists_what_i_wrote_and_enter_edits_it(tmp_path: Path) -> None:
    app = app_with(tmp_path, written())
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("ctrl+e")
        screen = app.screen
        assert isinstance(screen, NotesScreen)
        entries = screen.query_one("#notes-entries", OptionList)
        prompts = [str(entries.get_option_at_index(i).prompt) for i in range(entries.option_count)]
        # In the lesson's order: exercise notes (exercises section), the self-check answer,
        # the reflection; each literally.
        assert [p.split("\n")[0].split(" · ")[1].split(":")[0] for p in prompts] == [
            "your note, exercise 2",
            "your note, exercise 4",
            "your answer to question 2",
            "your reflection",
        ]
        text = "\n".join(screen_lines(app))
        assert "[/] a[/ [bold]x" in text and "reduce-scatter, for ZeRO-2" in text
        await pilot.press("down", "down", "enter")
        await pilot.pause()
        assert app.main_screen.current_section == "self-check"
        area = app.focused
        assert isinstance(area, TextArea)
        assert area.text == ANSWER and area.cursor_location == area.document.end
        await pilot.press("ctrl+e", "down", "enter")
        await pilot.pause()
        assert app.query_one("#side").display
        area = app.focused
        assert isinstance(area, TextArea) and area.text == "slow links: TP suffers first"


async def test_nothing_written_yet_says_so(tmp_path: Path) -> None:
    app = app_with(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("ctrl+e")
        assert isinstance(app.screen, NotesScreen)
        assert "Nothing written yet" in "\n".join(screen_lines(app))
        await pilot.press("escape")
        assert not isinstance(app.screen, NotesScreen)


async def test_the_search_covers_exactly_what_the_reader_shows(tmp_path: Path) -> None:
    """Every text the search reads for a section is drawn by the reader there, and every text
    the reader draws (its hints and the steps' state lines aside) is searched, key points once
    revealed."""
    progress = written()
    progress.revealed = ["self-check-fsdp-vs-tp"]
    app = app_with(tmp_path, progress)
    async with app.run_test(size=SIZE) as pilot:
        assert app.lesson is not None
        assert HEADER_ID == META_ID
        for section_id in (META_ID, *(section.id for section in app.lesson.sections)):
            await goto_section(pilot, app, section_id)
            drawn = [
                text.text
                for text in app.query("#reading BrokenText").results(BrokenText)
                if text.display
                and text.parent is not None
                and text.parent.display
                and not text.has_class("first-run")
                and not text.has_class("hint")
                and not text.has_class("study-line")  # a step's state, under its text
            ]
            searched = reader_texts(app.lesson, section_id, frozenset(progress.revealed))
            for text in searched:
                assert any(text in shown for shown in drawn), (section_id, text)
            for shown in drawn:
                assert any(text in shown for text in searched), (section_id, shown)


async def test_on_a_narrow_screen_a_jump_brings_its_pane_and_the_box_into_view(
    tmp_path: Path,
) -> None:
    app = app_with(tmp_path, written())
    async with app.run_test(size=(60, 20)) as pilot:
        # From the lesson to a note in the Diagrams pane, which replaces the lesson here.
        await pilot.press("ctrl+e", "enter")
        await pilot.pause()
        area = app.focused
        assert isinstance(area, TextArea) and area.text == ZERO_NOTE
        assert app.query_one("#side").display and not app.query_one("#reading").display
        # In view once the pane is laid out and scrolled to the box (a few frames on a busy
        # machine: tui.widgets.notes.scroll_into_view).
        await wait_until(pilot, lambda: ZERO_NOTE[:30] in "\n".join(screen_lines(app)))
        # From the side pane back to the lesson: the answer box gets the focus and shows.
        await search_for(pilot, "切层内")
        await pilot.press("enter")
        await pilot.pause()
        area = app.focused
        assert isinstance(area, TextArea) and area.selected_text == "切层内"
        assert app.query_one("#reading").display and not app.query_one("#side").display
        await wait_until(pilot, lambda: "切层内矩阵" in "\n".join(screen_lines(app)))


async def test_search_at_40x12_shows_several_hits(tmp_path: Path) -> None:
    """At 40x12 the margins and the query's border left the hits one row (one section's name,
    no line of its text): now the query, the count and at least two hits with their lines."""
    app = make_app(progress_dir=tmp_path)
    async with app.run_test(size=(40, 12)) as pilot:
        await pilot.pause()
        await pilot.press("ctrl+f", *"ZeRO")
        await pilot.pause()
        screen = app.screen
        assert isinstance(screen, SearchScreen)
        hits = screen.query_one("#search-hits", OptionList)
        assert hits.option_count > 2 and hits.region.height >= 5
        text = "\n".join(screen_lines(app))
        assert "ZeRO" in text and "matches" in text and "escape: close" in text


# The sections whose text names reduce-scatter (content/S15.yaml), as the first test lists them.
REDUCE_SCATTER_SECTIONS = ["学习目标", "核心知识", "自检问题", "专业课程对齐"]


def count_searches(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every query the search screen searches from now on, in order."""
    queries: list[str] = []

    def counted(places: list[Place], query: str) -> list[Hit]:
        queries.append(query)
        return search_places(places, query)

    monkeypatch.setattr(search_screen, "search_places", counted)
    return queries


async def test_a_burst_of_keys_is_searched_once_it_is_typed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    queries = count_searches(monkeypatch)
    app = app_with(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("/")
        screen = app.screen
        assert isinstance(screen, SearchScreen)
        searched_before = len(queries)
        # Keys as a terminal sends a fast typist's or an unbracketed paste's: all at once.
        typed = ["all-gather " * 8, *["backspace"] * 88, "REDUCE-SCATTER"]
        await burst(app, *typed)
        await pilot.pause()  # the last key's change climbs to the screen after the key is done
        assert screen.query_input.value == "REDUCE-SCATTER"
        key_count = 88 + 88 + len("REDUCE-SCATTER")
        assert len(queries) - searched_before < key_count // 10
        assert queries[-1] == "REDUCE-SCATTER"  # searched once no key waits
        assert [p.splitlines()[0] for p in listed(screen)] == REDUCE_SCATTER_SECTIONS
        assert "4 matches" in "\n".join(screen_lines(app))


async def test_down_and_enter_in_the_burst_use_the_hits_of_the_query_typed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    queries = count_searches(monkeypatch)
    app = app_with(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("/")
        # The last character's search waits for down and enter, which run it first.
        await burst(app, "REDUCE-SCATTER", "down", "enter")
        await pilot.pause()
        assert not isinstance(app.screen, SearchScreen)
        assert queries[-1] == "REDUCE-SCATTER"
        assert app.main_screen.current_section == "core"  # the second hit, as in the first test
        ((_text, match),) = marked(app)
        assert match == "reduce-scatter"


async def test_escape_right_after_a_burst_closes_the_search(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    queries = count_searches(monkeypatch)
    app = app_with(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("/")
        searched_before = len(queries)
        await burst(app, "all-gather " * 10, "escape")
        assert not isinstance(app.screen, SearchScreen)
        assert len(queries) - searched_before < 110 // 10
        await pilot.press("/")  # the query typed is there again
        assert isinstance(app.screen, SearchScreen)
        assert app.screen.query_input.value == "all-gather " * 10


async def test_a_query_is_cut_at_200_characters_and_the_screen_says_so(tmp_path: Path) -> None:
    app = app_with(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("/")
        screen = app.screen
        assert isinstance(screen, SearchScreen)
        cut_note = "Only the first 200 characters are kept."
        await burst(app, "zero " * 50)
        await pilot.pause()
        assert screen.query_input.value == ("zero " * 50)[:200]
        assert cut_note in "\n".join(screen_lines(app))
        await pilot.press("backspace")
        assert screen.query_input.value == ("zero " * 50)[:199]
        assert cut_note not in "\n".join(screen_lines(app))
        # A paste that does not fit keeps what fits, not nothing.
        await pilot.press("ctrl+u")
        app.post_message(events.Paste("REDUCE-SCATTER " * 20))
        await pilot.pause()
        assert screen.query_input.value == ("REDUCE-SCATTER " * 20)[:200]
        assert cut_note in "\n".join(screen_lines(app))


async def test_a_query_pasted_on_several_lines_is_searched_whole(tmp_path: Path) -> None:
    notified = Notified()
    app = app_with(tmp_path, written())
    async with app.run_test(size=SIZE, message_hook=notified.hook) as pilot:
        await pilot.press("ctrl+f")
        screen = app.screen
        assert isinstance(screen, SearchScreen)
        # The end of one line and the start of the next, copied from the note.
        app.post_message(events.Paste("all-gathered\nbefore use\n"))
        await wait_until(pilot, lambda: len(listed(screen)) == 1)
        assert screen.query_input.value == "all-gathered before use"
        assert notified.messages == [strings.PASTE_JOINED]
        assert "exercise" in listed(screen)[0]


def test_a_tab_in_the_notes_view_takes_the_cells_it_is_drawn_in() -> None:
    # A reflection holding a tab was broken as if the tab took no cell, then drawn 8 wide: the
    # line's end ("ed] <b>html</b>") was cut off the screen.
    import io

    from rich.console import Console

    from tui.screens.search import EntryPrompt

    text = "🇨🇳\tTAB-here \\[escaped] <b>html</b> end"
    console = Console(width=40, file=io.StringIO(), color_system=None, legacy_windows=False)
    with console.capture() as capture:
        console.print(EntryPrompt("your reflection", text))
    lines = capture.get().splitlines()
    assert all(len(line) <= 40 for line in lines), lines
    shown = " ".join(line.strip() for line in lines[1:])
    for word in text.split():
        assert word in shown, (word, lines)
