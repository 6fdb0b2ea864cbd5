"""F8 in the app: a small keyboard-driven question picks the format; the file lands in the
progress folder's exports/; an invalid Ledger form is exported without stale figures."""

from __future__ import annotations

import zipfile
from pathlib import Path

from textual.widgets import Input, OptionList

from engine.export import notes_owner, split_front_matter
from tests.notes_render import quotes
from tests.pilot_helpers import (
    SIZE,
    Notified,
    app_for,
    goto_section,
    paste_into,
    settle,
    wait_until,
    write,
)
from tui.app import make_app
from tui.screens.export import ExportScreen
from tui.widgets.notes import SelfCheckBox


async def test_f8_asks_which_format_and_writes_each_to_exports(
    tmp_path: Path, notified: Notified
) -> None:
    exports = tmp_path / "exports"
    app = app_for(tmp_path)
    async with app.run_test(size=SIZE, notifications=True, message_hook=notified.hook) as pilot:
        await goto_section(pilot, app, "self-check")
        box = app.query(SelfCheckBox).first()
        await write(pilot, box.text_area, "two lines\n---")
        await pilot.press("f8")
        await pilot.pause()
        assert isinstance(app.screen, ExportScreen)
        assert app.focused is app.screen.query_one(OptionList)
        await pilot.press("escape")
        await pilot.pause()
        assert not isinstance(app.screen, ExportScreen) and not exports.exists()
        # A letter picks its format; arrows and enter pick the highlighted one.
        await pilot.press("f8", "h")
        await settle(pilot)
        await pilot.press("f8", "a")
        await settle(pilot)
        # Each export's message replaces the one before (one information toast at a time).
        # The toast's lines joined (a path wider than the screen is broken after a '/' or '-').
        deck_toasts = [str(toast.render()).replace("\n", "") for toast in app.screen.query("Toast")]
        await pilot.press("f8", "down", "enter")
        await settle(pilot)
        await pilot.press("f8", "f8")
        await settle(pilot)
    names = sorted(path.name for path in exports.iterdir())
    assert names == ["S15-notes.apkg", "S15-notes.html", "S15-notes.json", "S15-notes.md"]
    assert all(notes_owner(exports / name) == "S15" for name in names)
    assert quotes((exports / "S15-notes.md").read_text(encoding="utf-8")) == ["ok two lines\n---"]
    assert "<blockquote>" in (exports / "S15-notes.html").read_text(encoding="utf-8")
    assert zipfile.is_zipfile(exports / "S15-notes.apkg")
    assert len(deck_toasts) == 1
    assert "Anki deck" in deck_toasts[0] and "S15-notes.apkg" in deck_toasts[0]
    assert any("Anki deck" in m and "S15-notes.apkg" in m for m in notified.messages)


async def test_an_invalid_ledger_input_exports_the_last_good_result_and_says_so(
    tmp_path: Path,
) -> None:
    """A refused value (params N = 1Q) keeps the last good figures on screen, and the plan
    counts them: the export gives those figures beside their own inputs (1B), says why, and
    never beside the refused value."""
    app = app_for(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("f2", "ctrl+g")
        await wait_until(pilot, lambda: "exercise1" in app.progress.figures)
        assert app.progress.figures["exercise1"]["adam_states"] == 12e9
        ledger = app.query_one("LedgerPane")
        await paste_into(pilot, ledger.query_one("#field-params", Input), "1Q")
        assert app.progress.forms["ledger"]["params"] == "1Q"
        assert app.progress.last_good_form("ledger") is not None
        assert app.progress.figures["exercise1"]["adam_states"] == 12e9
        await pilot.press("f8", "m")
        await settle(pilot)
    markdown = (tmp_path / "exports" / "S15-notes.md").read_text(encoding="utf-8")
    _front, body = split_front_matter(markdown)
    assert "exercise 1 is its last good result" in " ".join(body.split())
    # 1B x 12 bytes of Adam states (ZeRO section 3.1).
    assert "| parameters N | 1B |" in body and "12.00 GB" in body
    assert "1Q" not in body and "No figures" not in body


async def test_the_export_dialog_is_whole_at_40x12_and_exports(tmp_path: Path) -> None:
    """At 40x12 the dialog was taller than the screen: its title and the folder it writes to
    were cut off. Now every part of it is on screen, the formats scroll, and a key exports."""
    from tests.pilot_helpers import screen_lines

    app = app_for(tmp_path)
    async with app.run_test(size=(40, 12)) as pilot:
        await settle(pilot)
        await pilot.press("f8")
        await settle(pilot)
        screen = app.screen
        assert isinstance(screen, ExportScreen)
        body = screen.query_one("#export-body")
        assert body.region.y >= 0 and body.region.bottom <= 12
        formats = screen.query_one("#export-formats", OptionList)
        assert formats.region.height >= 3
        text = "\n".join(screen_lines(app))
        assert "Export your notes" in text and "m  Markdown (.md)" in text
        assert "escape: cancel." in text  # the hint's end: the folder is above it
        await pilot.press("end")
        await settle(pilot)
        assert "a  Anki deck (.apkg)" in "\n".join(screen_lines(app))
        await pilot.press("escape", "f8", "m")
        await wait_until(pilot, lambda: any((tmp_path / "exports").glob("*.md")))


async def test_chinese_export_message_spaces_a_latin_format_name(
    tmp_path: Path, notified: Notified
) -> None:
    """Chinese spaces a Latin word from the Chinese beside it: 已将 Markdown 笔记导出到, but
    已将笔记（一个网页）导出到 (the message read 已将Markdown 笔记导出到)."""
    app = make_app(progress_dir=tmp_path, language="zh")
    async with app.run_test(size=SIZE, notifications=True, message_hook=notified.hook) as pilot:
        await pilot.press("f8", "f8")
        await settle(pilot)
        await pilot.press("f8", "h")
        await settle(pilot)
    folder = tmp_path / "exports"
    assert f"已将 Markdown 笔记导出到 {folder / 'S15-notes.md'}" in notified.messages
    assert f"已将笔记（一个网页）导出到 {folder / 'S15-notes.html'}" in notified.messages
