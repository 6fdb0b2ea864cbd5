"""F1 and the command palette list the keys as the app, the main screen and the panes declare
them (their ``BINDINGS``): nothing is kept in a second list that could drift from the keys."""

from __future__ import annotations

from pathlib import Path

from textual.command import CommandList, CommandPalette
from textual.widgets import OptionList, TextArea

from tests.pilot_helpers import SIZE, app_for, goto_section, screen_lines, wait_until
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
        assert rows["?"] == "Help: Help (when the focus is not in a text box, where ? is typed)"
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


async def test_palette_search_finds_a_command_and_runs_it(tmp_path: Path) -> None:
    app = app_for(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await pilot.press("ctrl+p")
        await pilot.pause()
        palette = app.screen
        assert isinstance(palette, CommandPalette)
        await pilot.press(*"outline")
        commands = palette.query_one(CommandList)
        await wait_until(pilot, lambda: commands.option_count > 0)
        first = str(commands.get_option_at_index(0).prompt)
        assert "Go to the lesson outline" in first and "(ctrl+o)" in first
        await pilot.press("enter")
        await wait_until(pilot, lambda: isinstance(app.focused, OptionList))
        assert app.focused is not None and app.focused.id == "outline"


async def test_palette_search_reads_the_help_line_too(tmp_path: Path) -> None:
    """The title names the command and its key once; a word of its help line finds it."""
    app = app_for(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await pilot.press("ctrl+p")
        await pilot.pause()
        palette = app.screen
        assert isinstance(palette, CommandPalette)
        await pilot.press(*"widen")
        commands = palette.query_one(CommandList)
        await wait_until(pilot, lambda: commands.option_count > 0)
        first = str(commands.get_option_at_index(0).prompt)
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
