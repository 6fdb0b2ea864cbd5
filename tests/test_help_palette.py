"""F1 and the command palette list the keys as the app, the main screen and the panes declare
them (their ``BINDINGS``): nothing is kept in a second list that could drift from the keys."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from rich.cells import cell_len
from textual import events
from textual.command import CommandInput, CommandList, CommandPalette
from textual.pilot import Pilot
from textual.widgets import OptionList, TextArea

from tests.pilot_helpers import (
    ROOT,
    SIZE,
    Notified,
    app_for,
    goto_section,
    screen_lines,
    settle,
    wait_until,
)
from tui import strings
from tui.app import ShardbookApp
from tui.screens.help import HelpScreen

# README "Keys": every key the help lists over the lesson (typed keys as they are typed).
README_KEYS = (
    *("f1", "?", "f12", "ctrl+n", "]", "[", "f11", "ctrl+o", "f6", "f7", "f5", "f2", "f3"),
    *("f4", "f10", "ctrl+l", "ctrl+r", "ctrl+g", "ctrl+t", "left", "right", "/", "ctrl+f"),
    *("ctrl+e", "f8", "f9", "ctrl+s", "ctrl+q", "ctrl+z", "ctrl+home", "ctrl+end", "ctrl+p"),
)


async def test_help_lists_the_typed_keys_while_a_text_box_takes_them(tmp_path: Path) -> None:
    app = app_for(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await goto_section(pilot, app, "self-check")
        app.query("#reading TextArea").first(TextArea).focus()
        await pilot.pause()
        # The answer box takes ? and ]: Textual's active bindings leave them out now.
        active = app.screen.active_bindings
        assert not {"question_mark", "right_square_bracket"} & set(active)
        await pilot.press("f1")
        await pilot.pause()
        help_screen = app.screen
        assert isinstance(help_screen, HelpScreen)
        listed = [key for key, _text in help_screen.keys]
        assert [key for key in README_KEYS if key not in listed] == []
        rows = dict(help_screen.keys)
        assert rows["?"] == "Help (when the focus is not in a text box, where ? is typed)"
        assert rows["ctrl+g"] == "Ledger: 1B example"
        # The table on screen starts with the quiz, the footer's first key.
        assert any("f12" in line and "Quiz" in line for line in screen_lines(app))


async def test_help_adds_the_focused_panes_own_keys(tmp_path: Path) -> None:
    app = app_for(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await pilot.press("f10", "f1")  # the Trade-offs pane's first picker has the focus
        await pilot.pause()
        help_screen = app.screen
        assert isinstance(help_screen, HelpScreen)
        assert [key for key, _text in help_screen.focused_keys] == ["1", "2", "3", "ctrl+r"]
        await pilot.press("f1")  # F1 again closes it
        await pilot.pause()
        assert not isinstance(app.screen, HelpScreen)


async def test_help_over_the_quiz_lists_its_keys_not_the_lessons(tmp_path: Path) -> None:
    app = app_for(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await pilot.press("f12")
        await pilot.pause()
        await pilot.press("escape", "f1")  # out of the answer box, then help
        await pilot.pause()
        help_screen = app.screen
        assert isinstance(help_screen, HelpScreen)
        listed = [key for key, _text in help_screen.keys]
        assert {"u", "r", "s", "ctrl+r", "f1", "ctrl+q"} <= set(listed)
        assert "f2" not in listed and "ctrl+n" not in listed  # the lesson's keys wait


async def first_palette_hit(app: ShardbookApp, pilot: Pilot[int], query: str) -> str:
    """ctrl+p, ``query`` typed: the first hit's text (its title, then its help line)."""
    await pilot.pause()
    await pilot.press("ctrl+p")
    await pilot.pause()
    palette = app.screen
    assert isinstance(palette, CommandPalette)
    await pilot.press(*query)
    commands = palette.query_one(CommandList)
    await wait_until(pilot, lambda: commands.option_count > 0)
    return str(commands.get_option_at_index(0).prompt)


async def test_palette_search_finds_a_command_and_runs_it(tmp_path: Path) -> None:
    app = app_for(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        first = await first_palette_hit(app, pilot, "outline")
        assert "Go to the lesson outline" in first and "(ctrl+o)" in first
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.focused, OptionList))
        assert app.focused is not None and app.focused.id == "outline"


async def test_a_query_pasted_on_two_lines_into_the_palette_is_searched_whole(
    tmp_path: Path, notified: Notified
) -> None:
    app = app_for(tmp_path)
    async with app.run_test(size=SIZE, message_hook=notified.hook) as pilot:
        await pilot.pause()
        await pilot.press("ctrl+p")
        await pilot.pause()
        palette = app.screen
        assert isinstance(palette, CommandPalette)
        app.post_message(events.Paste("lesson\noutline\n"))
        query = palette.query_one(CommandInput)
        await wait_until(pilot, lambda: query.value == "lesson outline")
        assert notified.messages == [strings.PASTE_JOINED]
        commands = palette.query_one(CommandList)
        await wait_until(pilot, lambda: commands.option_count > 0)
        assert "Go to the lesson outline" in str(commands.get_option_at_index(0).prompt)


async def test_palette_search_reads_the_help_line_too(tmp_path: Path) -> None:
    """The title names the command and its key once; a word of its help line finds it."""
    app = app_for(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        first = await first_palette_hit(app, pilot, "widen")
        assert first.startswith("Zoom (f5)")
        assert first.count("Widen the side pane") == 1


async def test_palette_offers_each_command_once(tmp_path: Path) -> None:
    """``?`` runs F1's help and ``/`` ctrl+f's search: the palette offers each action once,
    with the key that works everywhere."""
    from tui.commands import CommandsProvider
    from tui.screens.main import LessonCommands

    app = app_for(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        screen = app.screen
        titles = [
            str(hit.text)
            for provider in (CommandsProvider(screen), LessonCommands(screen))
            async for hit in provider.discover()
        ]
        assert sum("(f1)" in title for title in titles) == 1
        assert not any("(?)" in title or "(/)" in title for title in titles)
        assert sum("(ctrl+f)" in title for title in titles) == 1
        assert "Zoom (f5)" in titles


@pytest.mark.parametrize(
    ("language", "quit", "summary", "keys"),
    [
        ("zh", "退出（ctrl+q）", "本次小结", "按键"),
        ("en", "Quit (ctrl+q)", "Session summary", "Keys"),
    ],
)
async def test_palette_titles_are_distinct_and_apart_from_their_help(
    tmp_path: Path, language: str, quit: str, summary: str, keys: str
) -> None:
    """Every command the palette lists has a title of its own (ctrl+q, ctrl+c and Textual's
    own Quit were three 退出 doing the same thing: one is offered), and its help line says
    more than the title (the session summary's said the same words twice). The key after a
    command's name is in the language's brackets: full-width in Chinese (退出（ctrl+q）)."""
    from tui.app import make_app

    app = make_app(progress_dir=tmp_path, language=language)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        await pilot.press("ctrl+p")
        commands = app.screen.query_one(CommandList)

        def prompts() -> list[tuple[str, str]]:
            texts = (
                str(commands.get_option_at_index(n).prompt) for n in range(commands.option_count)
            )
            return [(text.split("\n")[0], text.partition("\n")[2]) for text in texts]

        def answered() -> bool:
            # Each provider has answered: Textual's (Keys), the app's (quit), the lesson's (F12).
            titles = [title for title, _ in prompts()]
            return quit in titles and keys in titles and any("f12" in t for t in titles)

        await wait_until(pilot, answered)
        await settle(pilot)
        listed = prompts()
        titles = [title for title, _ in listed]
        assert len(titles) == len(set(titles)), sorted(t for t in titles if titles.count(t) > 1)
        assert quit in titles and summary in titles
        name = quit.split(" (")[0].split("（")[0]
        assert sum(title.startswith(name) for title in titles) == 1
        if language == "zh":
            assert not [title for title in titles if " (" in title], titles
        assert all(title != help_line for title, help_line in listed), listed


@pytest.mark.parametrize("size", [(40, 12), (40, 24), (60, 20)])
async def test_palette_help_lines_are_broken_by_the_lessons_rules(
    tmp_path: Path, size: tuple[int, int]
) -> None:
    """In Chinese at 40 columns Textual wrapped a help line at its spaces only (保存并挂起到
    shell；fg, then 恢复 on a line of its own, the rest of the line left empty): the palette's
    help lines are the lesson's line breaks (engine.linebreak.break_text) at the list's width."""
    from engine.linebreak import break_text
    from tui.app import make_app

    app = make_app(progress_dir=tmp_path, language="zh")
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        first = await first_palette_hit(app, pilot, "suspend")
        title, _, help_text = first.partition("\n")
        assert title == "挂起（ctrl+z）"
        await settle(pilot)
        lines = [line.strip() for line in screen_lines(app)]
        start = lines.index(title) + 1
        shown = []
        for line in lines[start:]:
            if not line or line.startswith("▁"):
                break
            shown.append(line)
        assert "".join(shown).replace(" ", "") == help_text.replace(" ", ""), shown
        widths = range(20, size[0] + 1)
        assert any(shown == break_text(help_text, width) for width in widths), shown


@pytest.mark.parametrize("size", [(80, 24), (60, 20), (40, 12), (120, 40)])
@pytest.mark.parametrize("language", ["zh", "en"])
async def test_help_wraps_every_key_and_text_whole(
    tmp_path: Path, size: tuple[int, int], language: str
) -> None:
    """Nothing in the help is cut: every key whole in its column, every text wrapped (Chinese
    between characters, by the lesson's rules), no ellipsis anywhere on screen."""
    from tui.app import make_app
    from tui.screens.help import KeyTable

    app = make_app(progress_dir=tmp_path, language=language)
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        await pilot.press("f1")
        await settle(pilot)
        help_screen = app.screen
        assert isinstance(help_screen, HelpScreen)
        table = help_screen.query(KeyTable).first()
        width = table.size.width
        lines = table.lines_at(width)
        assert all(cell_len(key + text) <= width for key, text in lines)
        # Each row's key, then its text from the lines under it, joined: the row as given.
        drawn: list[tuple[str, str]] = []
        for key, text in lines:
            if key.strip():
                drawn.append((key.strip(), text))
            else:
                drawn[-1] = (drawn[-1][0], drawn[-1][1] + text)
        given = [(key, text.replace(" ", "")) for key, text in table.rows]
        assert [(key, text.replace(" ", "")) for key, text in drawn[1:]] == given
        body = help_screen.query_one("#help-body")
        top, bottom = body.region.y, body.region.bottom
        # Within the help's own columns: the screen under it shows at its sides at 120x40 (a
        # picker's choice cut with its ellipsis is not the help's).
        columns = (body.region.x, body.region.right)
        for _ in range(80):
            assert not any("…" in row for row in screen_lines(app, columns)[top:bottom])
            if body.scroll_y >= body.max_scroll_y:
                break
            body.scroll_page_down(animate=False)
            await settle(pilot)


@pytest.mark.parametrize(("size", "keys"), [((40, 12), ()), ((60, 20), ()), ((80, 24), ("f2",))])
async def test_the_help_is_the_one_scroll_bar_on_screen(
    tmp_path: Path, size: tuple[int, int], keys: tuple[str, ...]
) -> None:
    """F1 at 40x12 showed two scroll bar thumbs: the help's own, and in the columns its 90%
    width left at its side, the lesson's, through the dialog's translucent backdrop (at 60x20
    too, and at 80x24 beside the Ledger's long form). Every scroll bar of the lesson screen
    under it is now covered by the help, whose own bar is the only one on screen; scrolled to
    its end, it shows its last line."""
    app = app_for(tmp_path)
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        await pilot.press(*keys)
        await settle(pilot)
        screen = app.main_screen
        bars = [
            widget.vertical_scrollbar.region
            for widget in screen.query("*")
            if widget.show_vertical_scrollbar and widget.vertical_scrollbar.region
        ]
        assert bars  # the lesson (and the Ledger) scroll at this size
        await pilot.press("f1")
        await wait_until(pilot, lambda: isinstance(app.screen, HelpScreen))
        await settle(pilot)
        body = app.screen.query_one("#help-body")
        assert body.show_vertical_scrollbar and app.screen.max_scroll_y == 0
        assert [bar for bar in bars if not body.region.contains_region(bar)] == []
        body.scroll_end(animate=False)
        await wait_until(pilot, lambda: body.scroll_y == body.max_scroll_y > 0)
        await settle(pilot)
        shown = " ".join(screen_lines(app)[body.region.y : body.region.bottom])
        assert " ".join(strings.HELP_CLOSE.split()[-3:]) in " ".join(shown.split())
        await pilot.press("escape", "ctrl+q")


def test_help_rows_name_a_command_once() -> None:
    """A row whose help names its label shows the help alone (not ``Quiz: Quiz and spaced
    review``, ``测验：测验与间隔复习``); a label the help does not name stays in front of it."""
    from engine.i18n import current_language, set_language
    from tui.app import ShardbookApp
    from tui.commands import key_rows
    from tui.screens.main import MainScreen

    rows = dict(key_rows([MainScreen, ShardbookApp]))
    assert rows["f12"] == "Quiz and spaced review: every lesson's due items"
    assert rows["f7"] == "Reading mode: the lesson takes the whole screen"
    assert rows["f11"].startswith("The study plan: ")
    assert rows["f10"].startswith("Open the trade-offs: ")
    assert rows["f5"].startswith("Zoom: ")
    before = current_language()
    set_language("zh")
    try:
        rows = dict(key_rows([MainScreen, ShardbookApp]))
    finally:
        set_language(before)
    assert rows["f12"] == "测验与间隔复习：所有课程的到期题目"
    assert rows["f11"].startswith("学习计划：")
    assert rows["f10"].startswith("打开权衡（")
    assert rows["["].startswith("返回：")


@pytest.mark.parametrize("language", ["en", "zh"])
def test_no_help_row_reads_label_text_text(language: str) -> None:
    """F1's row for F10 read ``Trade-offs: Open step time and scaling: slow links, …`` (``权衡：
    打开 step 时间与扩展性：慢速互联…``): a label before a help that had a label of its own. Each
    row has at most one colon outside its brackets (``(works everywhere: …)`` is an aside)."""
    import re

    from engine.i18n import set_language
    from tui.app import ShardbookApp
    from tui.commands import key_rows
    from tui.screens.help import pane_key_rows
    from tui.screens.main import MainScreen

    set_language(language)
    rows = key_rows([MainScreen, ShardbookApp]) + pane_key_rows()
    asides = re.compile(r"[（(][^（）()]*[）)]")
    twice = [text for _key, text in rows if len(re.findall("[:：]", asides.sub("", text))) > 1]
    assert len(rows) > 30 and twice == []


@pytest.mark.parametrize(
    ("query", "title"),
    [("export", "导出"), ("ledger", "账本"), ("quiz", "测验"), ("language", "界面语言")],
)
async def test_palette_in_chinese_finds_a_command_by_its_english_name(
    tmp_path: Path, query: str, title: str
) -> None:
    """A learner who knows the English word finds the command in the Chinese interface; the
    hit shows the Chinese title."""
    from tui.app import make_app

    app = make_app(progress_dir=tmp_path, language="zh")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        first = await first_palette_hit(app, pilot, query)
        assert title in first, first
        assert query not in first.casefold()


async def test_palette_help_lines_are_shown_literally(tmp_path: Path) -> None:
    """An entry's help line is shown as it is: a lesson's path (here a folder named like
    markup) is the help of "Open lesson", and Textual would read it as markup."""
    from tui.app import make_app

    content = tmp_path / "a[/ [bold]x[/bold]"  # folders a[, " [bold]x[" and bold]
    content.mkdir(parents=True)
    shutil.copy(ROOT / "content" / "S15.yaml", content / "S15.yaml")
    app = make_app(content_dir=content, progress_dir=tmp_path / "progress", autosave_delay=0.05)
    async with app.run_test(size=(120, 30)) as pilot:
        first = await first_palette_hit(app, pilot, "open lesson")
        assert first.startswith("Open lesson: S15")
        assert str(content / "S15.yaml") in first.replace("\n", "")


def test_a_keys_label_and_its_sentence_read_as_one_line() -> None:
    """The help writes a key's label, a colon, then its tooltip: "Zoom: Widen the side pane"
    read as two sentences glued. After the colon the sentence goes on in lower case, where its
    first word is not a name or an acronym (NVLink, F1)."""
    import re

    from tui.commands import key_rows
    from tui.screens.main import MainScreen

    rows = dict(key_rows([MainScreen]))
    assert rows["f5"] == "Zoom: widen the side pane to the whole screen, or back"
    # A key's label is the text's first word(s) up to the colon ("Zoom", "My notes"); a
    # sentence's own colon ("Export the filled-in notes: Markdown, ...") is not a label's.
    glued = [text for text in rows.values() if re.match(r"[A-Z][a-z]+( [a-z]+)?: [A-Z][a-z]", text)]
    assert not glued, glued
