"""The learner's words in the app: hostile learner text kept byte for byte and drawn literally;
failing disks, a second window, ctrl+c, SIGTERM/SIGHUP and tiny or changing terminals lose nothing.
"""

from __future__ import annotations

import errno
import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest
from textual import events
from textual.widgets import TextArea

from engine.export import split_front_matter
from engine.progress import LessonProgress, ProgressStore
from tests.notes_render import quotes
from tests.pilot_helpers import (
    ROOT,
    SIZE,
    Notified,
    app_for,
    goto_section,
    key,
    keys,
    paste,
    screen_lines,
    settle,
    wait_until,
)
from tui.widgets.notes import SelfCheckBox

HOSTILE = (
    "[bold]not bold[/] a[/ [link=x]y[/link] \\[esc\\]\n"
    "esc \x1b[2J\x1b[31mred\x1b[0m bell \x07 del \x7f c1 \x9b\n"
    "\ttab\tseparated\t\n"
    "训练显存不只等于参数大小。 ❤️ ✔︎ 👩‍💻 🇨🇳 e\u0301\n"
    "bom \ufeff zwj\u200d end"
)
# Not here: CR, NEL, U+2028 and U+2029. A text box is a list of lines (Textual's Document splits
# on every Unicode line break), so a pasted one becomes "\n" as in any editor;
# tests/test_progress.py stores each of them byte for byte.
BIG = "".join(f"line {n:06d} 参数 [/] \t{'x' * 80}\n" for n in range(11_000))


async def test_hostile_and_huge_text_is_drawn_literally_saved_and_exported(tmp_path: Path) -> None:
    assert len(BIG.encode()) > 1_000_000
    app = app_for(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await goto_section(pilot, app, "self-check")
        first, second = list(app.query(SelfCheckBox))[:2]
        await paste(pilot, first.text_area, HOSTILE)
        await paste(pilot, second.text_area, BIG)
        assert first.text_area.text == HOSTILE and second.text_area.text == BIG
        first.text_area.focus()
        first.text_area.move_cursor((0, 0))
        await pilot.pause()
        drawn = "".join(
            "".join(segment.text for segment in first.text_area.render_line(y))
            for y in range(first.text_area.size.height)
        )
        # ESC and BEL are drawn as their control pictures; nothing reaches the terminal raw.
        assert "\u241b" in drawn and "\u2407" in drawn
        assert "\x1b" not in drawn and "\x07" not in drawn
        assert "[bold]not bold[/]" in drawn
        await pilot.press("ctrl+s")
        await pilot.press("f8", "m")  # F8 asks which format; m: Markdown
        await settle(pilot)
    saved = ProgressStore(tmp_path).load("S15").progress.answers
    assert saved[first.item.id] == HOSTILE and saved[second.item.id] == BIG
    exported = (tmp_path / "exports" / "S15-notes.md").read_bytes().decode("utf-8")
    assert split_front_matter(exported)[0]["lesson"] == "S15"
    # A Markdown renderer shows both exactly as typed.
    assert quotes(exported) == [HOSTILE, BIG]


def fail_in(folder: Path, code: int) -> object:
    """An os.replace that fails with ``code`` for files in ``folder`` (root ignores chmod)."""
    real = os.replace

    def replace(src: object, dst: object) -> None:
        if Path(str(dst)).resolve().is_relative_to(folder.resolve()):
            raise OSError(code, os.strerror(code))
        real(src, dst)  # type: ignore[arg-type]

    return replace


@pytest.mark.parametrize(
    ("code", "words"),
    [
        (errno.ENOSPC, "the disk is full"),
        (errno.EROFS, "read-only file system"),
        (errno.EACCES, "permission denied"),
    ],
)
async def test_a_failing_folder_keeps_the_text_offers_retry_and_export_elsewhere(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, code: int, words: str
) -> None:
    progress_dir, elsewhere = tmp_path / "progress", tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    app = app_for(progress_dir)
    notified = Notified()
    async with app.run_test(size=SIZE, message_hook=notified.hook) as pilot:
        await goto_section(pilot, app, "self-check")
        monkeypatch.setattr("engine.progress.files.os.replace", fail_in(progress_dir, code))
        box = app.query(SelfCheckBox).first()
        await paste(pilot, box.text_area, "words I must not lose")
        await wait_until(pilot, lambda: "NOT SAVED" in app.sub_title)
        messages = notified.messages
        assert any(words in m and "ctrl+s" in m and "F8" in m for m in messages)
        assert app.progress.answers[box.item.id] == "words I must not lose"
        # F8 exports where it can: the progress folder fails, the working folder works.
        await pilot.press("f8", "enter")  # the highlighted format: Markdown
        await settle(pilot)
        exported = elsewhere / "S15-notes.md"
        assert "words I must not lose" in exported.read_text(encoding="utf-8")
        # ctrl+q refuses to drop the text while it is unsaved.
        await pilot.press("ctrl+q")
        await pilot.pause()
        assert app.is_running
        monkeypatch.undo()
        monkeypatch.chdir(elsewhere)
        await pilot.press("ctrl+s")
        await pilot.pause()
        assert "NOT SAVED" not in app.sub_title
        await pilot.press("ctrl+q")
    assert ProgressStore(progress_dir).load("S15").progress.answers == {
        box.item.id: "words I must not lose"
    }


HOLDER = """
import sys
from engine.progress import ProgressStore
store = ProgressStore(sys.argv[1])
assert store.lock()
progress = store.load("S15").progress
progress.answers["sc-other"] = "from the first window"
store.save(progress)
print("locked", flush=True)
sys.stdin.readline()
"""


async def test_second_window_is_read_only_then_merges(tmp_path: Path) -> None:
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(tmp_path)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        cwd=ROOT,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline() == "locked\n"
        app = app_for(tmp_path)
        notified = Notified()
        async with app.run_test(size=SIZE, message_hook=notified.hook) as pilot:
            # The lock is tried once the first frame has settled (nothing writes before then).
            await wait_until(pilot, lambda: "READ-ONLY" in app.sub_title)
            assert any("read-only" in message for message in notified.messages)
            await goto_section(pilot, app, "self-check")
            box = app.query(SelfCheckBox).first()
            await paste(pilot, box.text_area, "from the second window")
            await pilot.press("ctrl+s")
            await pilot.pause()
            assert "NOT SAVED" in app.sub_title
            holder.kill()
            holder.wait()
            await pilot.press("ctrl+s")
            await pilot.pause()
            assert "READ-ONLY" not in app.sub_title and "NOT SAVED" not in app.sub_title
            await pilot.press("ctrl+q")
    finally:
        holder.kill()
        holder.wait()
    answers = ProgressStore(tmp_path).load("S15").progress.answers
    assert answers == {"sc-other": "from the first window", box.item.id: "from the second window"}


async def test_ctrl_c_copies_a_selection_and_otherwise_saves_and_quits(tmp_path: Path) -> None:
    app = app_for(tmp_path, delay=60)
    async with app.run_test(size=SIZE) as pilot:
        await goto_section(pilot, app, "self-check")
        area = app.query(SelfCheckBox).first().text_area
        await paste(pilot, area, "copy me")
        area.select_all()
        await pilot.press("ctrl+c")
        await pilot.pause()
        assert app.clipboard == "copy me" and app.is_running
        area.move_cursor((0, 0))
        await pilot.press("ctrl+c")
        await pilot.pause()
    assert app.return_code == 0
    assert "copy me" in ProgressStore(tmp_path).load("S15").progress.answers.values()


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM, signal.SIGHUP])
async def test_exit_signals_save_before_exit(tmp_path: Path, signum: int) -> None:
    app = app_for(tmp_path, delay=60)  # no autosave: only the signal handler can save
    async with app.run_test(size=SIZE) as pilot:
        await goto_section(pilot, app, "reflection")
        area = app.query("#reading NoteBox TextArea").first(TextArea)
        area.focus()
        app.post_message(events.Paste("typed just before the window closed"))
        # At once: the paste may not have reached the app yet; the handler waits for it.
        os.kill(os.getpid(), signum)
        await wait_until(pilot, lambda: app.return_code is not None)
    assert app.return_code == 128 + signum
    saved = ProgressStore(tmp_path).load("S15").progress.reflections
    assert "typed just before the window closed" in saved.values()


async def test_a_signal_saves_every_key_received_emoji_sequences_whole(tmp_path: Path) -> None:
    # The terminal closed right after a burst: the keys the app has received but not yet
    # handled (it handles them one at a time) are typed before the save, so a ZWJ sequence is
    # never saved cut after a joiner, and the last word is there.
    family = "\U0001f468\u200d\U0001f469\u200d\U0001f467"
    app = app_for(tmp_path, delay=60)  # no autosave: only the signal handler can save
    async with app.run_test(size=SIZE) as pilot:
        await goto_section(pilot, app, "reflection")
        area = app.query("#reading NoteBox TextArea").first(TextArea)
        area.focus()
        await pilot.pause()
        for name in keys(*"杀前 ", *family, *" kill"):
            app.post_message(key(name))
        os.kill(os.getpid(), signal.SIGHUP)
        await wait_until(pilot, lambda: app.return_code is not None)
    saved = ProgressStore(tmp_path).load("S15").progress.reflections
    assert f"杀前 {family} kill" in saved.values()


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGHUP])
def test_a_real_shardbook_process_saves_on_signal(tmp_path: Path, signum: int) -> None:
    import pty
    import select

    ProgressStore(tmp_path).save(LessonProgress("S15", answers={"sc-1": "kept"}))
    # `updated` has whole seconds: an older stamp, so the save on signal must change it.
    stored = tmp_path / "S15.yaml"
    stored.write_text(
        re.sub(
            r"^updated: .*$", "updated: '2000-01-01T00:00:00+00:00'", stored.read_text(), flags=re.M
        )
    )
    before = ProgressStore(tmp_path).load("S15").progress.updated
    assert before == "2000-01-01T00:00:00+00:00"
    main, child = pty.openpty()
    process = subprocess.Popen(
        [str(ROOT / ".venv" / "bin" / "shardbook"), "--progress-dir", str(tmp_path)],
        stdin=child,
        stdout=child,
        stderr=child,
        cwd=ROOT,
        env={**os.environ, "TERM": "xterm-256color", "COLUMNS": "80", "LINES": "24"},
        start_new_session=True,
    )
    os.close(child)
    output = b""
    try:
        while b"S15" not in output:  # the header's sub-title: the lesson is open
            ready, _, _ = select.select([main], [], [], 30)
            assert ready, output[-500:]
            output += os.read(main, 65536)
        process.send_signal(signum)
        while process.poll() is None:
            ready, _, _ = select.select([main], [], [], 0.2)
            if ready:
                try:
                    output += os.read(main, 65536)
                except OSError:
                    break
        assert process.wait(timeout=30) == 128 + signum
    finally:
        process.kill()
        os.close(main)
    assert b"Traceback" not in output
    progress = ProgressStore(tmp_path).load("S15").progress
    assert progress.answers == {"sc-1": "kept"} and progress.updated != before


async def test_tiny_terminals_and_live_resizes_keep_the_text(tmp_path: Path) -> None:
    app = app_for(tmp_path)
    async with app.run_test(size=(20, 5)) as pilot:
        await pilot.pause()
        await pilot.resize_terminal(80, 24)
        await goto_section(pilot, app, "self-check")
        area = app.query(SelfCheckBox).first().text_area
        await paste(pilot, area, "half a tho")
        for width, height in [(20, 5), (21, 6), (40, 10), (200, 60), (20, 5), (80, 24)]:
            await pilot.resize_terminal(width, height)
            await pilot.pause()
            if width == 20:
                for key in ("f2", "f5", "f1", "escape", "f5", "ctrl+p", "escape"):
                    await pilot.press(key)
            assert area.text == "half a tho"
        area.focus()
        area.move_cursor(area.document.end)
        await pilot.press(*"ught")
        await pilot.resize_terminal(20, 5)
        await wait_until(pilot, lambda: area.text == "half a thought")
        await pilot.press("ctrl+q")
    assert "half a thought" in ProgressStore(tmp_path).load("S15").progress.answers.values()


async def test_typing_after_a_long_paste_with_emoji_stays_in_view(tmp_path: Path) -> None:
    """A 12 kB line with an emoji pasted into the Trade-offs exercise 4 box (12 rows at most),
    then TAIL2 typed: the box stopped a row short of the cursor (Textual's TextArea scrolls to
    the cursor before the emoji's wrapped row can be scrolled to), so what was typed after the
    paste stayed under the box's bottom edge. The cursor's row is in the box once drawn."""
    app = app_for(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("f10")
        await settle(pilot)
        area = app.query_one("TradeoffsPane").query(TextArea).first()
        await paste(pilot, area, "line N 数据 all-reduce 😀 [b]x[/b] " * 300)
        await pilot.press(*keys("TAIL2"))
        await settle(pilot)
        await wait_until(
            pilot, lambda: area.content_region.contains_point(area.cursor_screen_offset)
        )
        assert area.text.endswith("[b]x[/b] TAIL2")
        row = area.cursor_screen_offset.y
        assert "TAIL2" in screen_lines(app)[row]
