"""SVG snapshots of the app (pytest-textual-snapshot; Textual pinned exactly): the main screen at
each layout (80x24, 120x40, 60x20, 40x12), reading mode, the hidden side pane, the too-small
message, the side panes, the help screen, the command palette and the error states (a broken
lesson file, a read-only second window, a save that failed).

Regenerate after an intended change with ``pytest tests/test_snapshots.py --snapshot-update`` and
look at the SVGs before committing them. Reading a section saves the progress, so the app's clock
is fixed: the header's "saved" time and the session's length are the same in every run. Only the
first snapshot is a first run (with its one-time hint); the others start from a progress folder
whose settings say the hint was seen.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest
from textual.pilot import Pilot
from textual.widgets import Input, TextArea

from tests.pilot_helpers import SIZE, wait_until
from tui import strings
from tui.app import ShardbookApp, make_app
from tui.screens.guide import SectionEnd

NOW = dt.datetime(2026, 12, 7, 10, 15, tzinfo=dt.UTC)
# The autosave delay of the apps whose snapshot waits for the save (:func:`settled`): the state
# shown is the saved one whatever the delay, and a short one ends the wait sooner.
SAVE_DELAY = 0.05


@pytest.fixture(autouse=True)
def fixed_clock(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("tui.app.utc_now", lambda: NOW)
    monkeypatch.setattr("tui.app.local_clock", lambda moment: "10:15")


# ctrl+n's first steps on a fresh folder: each of S15's 4 objectives to rate at the start, left
# unrated here (ctrl+n goes on).
START_RATINGS = ("ctrl+n",) * 4


def settled(*keys: str, read: int = 0) -> Callable[[Pilot[int]], Awaitable[None]]:
    """Press ``keys``, then wait until ``read`` sections are marked read (ctrl+n on a section
    shown whole reads it and goes on) and what changed is saved: the header shows
    the plan's figure and the time of that save."""

    async def run_before(pilot: Pilot[int]) -> None:
        await pilot.pause()  # the app's first screen is up, as before ``press``
        await pilot.press(*keys)
        app = pilot.app
        assert isinstance(app, ShardbookApp)
        await wait_until(pilot, lambda: len(app.progress.read) >= read)
        # A save clears ``dirty``; a save still pending keeps it set.
        await wait_until(pilot, lambda: not app.dirty)
        # The section shown laid out to its end: under load the snapshot caught the reader's
        # scroll bar sized for the part laid out so far.
        await wait_until(pilot, lambda: section_laid_out(app))
        steady_cursor(app)
        await pilot.pause()

    return run_before


def section_laid_out(app: ShardbookApp) -> bool:
    """Whether the section the reader shows has its end laid out (its :class:`SectionEnd` has
    a size; the lesson's first page, which has none, is laid out as it is shown)."""
    screen = app.main_screen
    if not any(section.id == screen.current_section for section in screen.sections):
        return True
    ends = [
        end
        for end in screen.query("#reading SectionEnd").results(SectionEnd)
        if end.section_id == screen.current_section
    ]
    return bool(ends) and ends[-1].size.height > 0


def steady_cursor(app: ShardbookApp) -> None:
    """Stop the focused field's cursor blinking, shown: waiting for a save can take longer than
    the blink's half second on a loaded machine, and the snapshot would catch it hidden."""
    focused = app.focused
    if isinstance(focused, Input | TextArea):
        focused.cursor_blink = False


def seen(folder: Path) -> Path:
    """A progress folder whose settings say the first-run hint was shown."""
    (folder / "settings.yaml").write_text(
        "schema_version: 1\nhints: {first_run_seen: true}\n", encoding="utf-8"
    )
    return folder


def test_main_screen(snap_compare, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    assert snap_compare(make_app(progress_dir=tmp_path), terminal_size=SIZE)


def test_main_screen_120x40(snap_compare, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    app = make_app(progress_dir=seen(tmp_path), autosave_delay=SAVE_DELAY)
    before = settled(*START_RATINGS, "ctrl+n", "ctrl+n", read=1)
    assert snap_compare(app, terminal_size=(120, 40), run_before=before)


def test_main_screen_60x20(snap_compare, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    app = make_app(progress_dir=seen(tmp_path), autosave_delay=SAVE_DELAY)
    assert snap_compare(
        app,
        terminal_size=(60, 20),
        run_before=settled(*START_RATINGS, "ctrl+n", "ctrl+n", "ctrl+n", read=1),
    )


def test_main_screen_40x12(snap_compare, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    app = make_app(progress_dir=seen(tmp_path), autosave_delay=SAVE_DELAY)
    assert snap_compare(
        app, terminal_size=(40, 12), run_before=settled(*START_RATINGS, "ctrl+n", "ctrl+n")
    )


def test_ledger_at_80x24(snap_compare, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    app = make_app(progress_dir=seen(tmp_path), autosave_delay=SAVE_DELAY)
    assert snap_compare(app, terminal_size=SIZE, run_before=settled(*START_RATINGS, "ctrl+n", "f2"))


def test_reading_mode(snap_compare, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    app = make_app(progress_dir=seen(tmp_path), autosave_delay=SAVE_DELAY)
    before = settled(*START_RATINGS, "ctrl+n", "ctrl+n", "f7", read=1)
    assert snap_compare(app, terminal_size=(120, 40), run_before=before)


def test_side_pane_hidden(snap_compare, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    app = make_app(progress_dir=seen(tmp_path), autosave_delay=SAVE_DELAY)
    before = settled(*START_RATINGS, "ctrl+n", "ctrl+n", "f6", read=1)
    assert snap_compare(app, terminal_size=(120, 40), run_before=before)


def test_too_small(snap_compare, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    app = make_app(progress_dir=seen(tmp_path))
    assert snap_compare(app, terminal_size=(30, 8))


def test_diagram_zoomed(snap_compare, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """DP's whole diagram (its notes are written, so nothing is folded) at 80 columns."""
    (seen(tmp_path) / "S15.yaml").write_text(
        "schema_version: 2\nlesson: S15\nstatus: in-progress\nnotes:\n"
        "  ex2.dp.split: the batch\n  ex3.dp.comm: all-reduce\n  ex3.dp.wait: a straggler\n",
        encoding="utf-8",
    )
    app = make_app(progress_dir=tmp_path)
    assert snap_compare(app, terminal_size=SIZE, press=["f4", "f5"])


def test_plan_view(snap_compare, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """F11 after the first two sections: their steps done, the next one highlighted."""
    app = make_app(progress_dir=seen(tmp_path), autosave_delay=SAVE_DELAY)
    before = settled(*START_RATINGS, "ctrl+n", "ctrl+n", "f11", read=1)
    assert snap_compare(app, terminal_size=SIZE, run_before=before)


def test_folded_answer(snap_compare, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """Exercise 2 from the plan: DP's diagram folded down to its title until the note is
    written, the cursor in the note box."""
    app = make_app(progress_dir=seen(tmp_path))

    async def run_before(pilot: Pilot[int]) -> None:
        await pilot.pause()
        await pilot.press("f11", *["down"] * 6, "enter")
        # The Diagrams tab is built and its note boxes mounted after the key: the cursor in one.
        await wait_until(
            pilot,
            lambda: (
                isinstance(pilot.app.focused, TextArea) and pilot.app.focused.has_class("note-text")
            ),
        )
        steady_cursor(app)
        await pilot.pause()

    assert snap_compare(app, terminal_size=(120, 40), run_before=run_before)


def test_bubble_pane(snap_compare, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    app = make_app(progress_dir=seen(tmp_path))
    assert snap_compare(app, terminal_size=SIZE, press=["f3", "f5"])


def test_quiz_feedback(snap_compare, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """A two-line self-check answer submitted: the question above, the key points below, each
    rating key with its interval (fixed clock and seed)."""
    import datetime as dt

    from tui.options import QuizOptions

    now = dt.datetime(2026, 3, 1, 9, 0, tzinfo=dt.UTC)
    options = QuizOptions(lesson="S15", open_at_start=True, clock=lambda: now, seed=11, tz=dt.UTC)
    app = make_app(progress_dir=seen(tmp_path), quiz=options)
    assert snap_compare(app, terminal_size=SIZE, press=["x", "enter", "y", "ctrl+r"])


def with_notes(folder: Path) -> Path:
    """A progress folder (hint seen) where the learner wrote an answer, a reflection and two
    exercise notes, hostile text included."""
    from engine.progress import LessonProgress, ProgressStore

    store = ProgressStore(seen(folder))
    store.save(
        LessonProgress(
            "S15",
            status="in-progress",
            answers={"self-check-fsdp-vs-tp": "FSDP 切模型状态 (ZeRO-3)；TP 切层内矩阵。[/] a[/"},
            reflections={"reflection-hardest-collective": "reduce-scatter: [bold]x 👨‍👩‍👧"},
            notes={
                "ex2.fsdp.split": "ZeRO-3 shards parameters, gradients and optimizer states",
                "ex4": "slow links: TP suffers first, then FSDP's all-gathers",
            },
        )
    )
    store.unlock()
    return folder


def test_search_with_hits(snap_compare, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """ctrl+f, "zero": the lesson's hits and the learner's note and answer, each with its
    section (and field), the first highlighted."""
    app = make_app(progress_dir=with_notes(tmp_path))
    assert snap_compare(app, terminal_size=SIZE, press=["ctrl+f", *"zero-3"])


def test_notes_view(snap_compare, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    app = make_app(progress_dir=with_notes(tmp_path))
    assert snap_compare(app, terminal_size=SIZE, press=["ctrl+e"])


def test_resumed_session(snap_compare, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """Reopened where it was left: section 机制与推导 scrolled to its seventh block, the
    Diagrams tab beside it on FSDP, at the 80-column layout it was left at."""
    (tmp_path / "settings.yaml").write_text(
        "schema_version: 1\nhints: {first_run_seen: true}\n"
        "resume:\n  S15:\n    section: mechanism\n    block: 6\n    line: 2\n"
        "    side_tab: diagrams\n    side_shown: true\n    side_size: medium\n"
        "    panes: {diagrams: {strategy: fsdp}}\n",
        encoding="utf-8",
    )
    assert snap_compare(make_app(progress_dir=tmp_path), terminal_size=SIZE)


def test_help_screen(snap_compare, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """F1 over the lesson: the keys of the screen below, grouped, with what each does."""
    app = make_app(progress_dir=seen(tmp_path))
    assert snap_compare(app, terminal_size=SIZE, press=["f1"])


def test_command_palette(snap_compare, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """ctrl+p with "zoom" typed: the matching commands, the best first."""
    app = make_app(progress_dir=seen(tmp_path))
    assert snap_compare(app, terminal_size=SIZE, press=["ctrl+p", *"zoom"])


def test_diagrams_pane(snap_compare, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """F4 at 120 columns: the Diagrams tab beside the lesson, not zoomed."""
    app = make_app(progress_dir=seen(tmp_path))
    assert snap_compare(app, terminal_size=(120, 40), press=["f4"])


def test_collectives_pane(snap_compare, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """F4 twice: the collectives' data flow beside the lesson."""
    app = make_app(progress_dir=seen(tmp_path))
    assert snap_compare(app, terminal_size=(120, 40), press=["f4", "f4"])


def test_tradeoffs_pane(snap_compare, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    app = make_app(progress_dir=seen(tmp_path))
    assert snap_compare(app, terminal_size=(120, 40), press=["f10"])


@pytest.mark.parametrize("torch_installed", [True, False])
def test_lab_pane(  # type: ignore[no-untyped-def]
    snap_compare, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, torch_installed: bool
) -> None:
    # The pane asks once, when it is built, whether torch is there; nothing runs until a
    # button is pressed, so both states draw the same with or without the lab extra.
    monkeypatch.setattr("tui.widgets.lab.torch_available", lambda: torch_installed)
    app = make_app(progress_dir=seen(tmp_path))
    assert snap_compare(app, terminal_size=(120, 40), press=["ctrl+l"])


def test_broken_lesson(  # type: ignore[no-untyped-def]
    snap_compare, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A lesson file that is not a mapping: the error page names the file and the line."""
    content, progress = tmp_path / "content", tmp_path / "progress"
    content.mkdir()
    progress.mkdir()
    (content / "S15.yaml").write_text("id: S15\ntitle: [unclosed\n", encoding="utf-8")
    monkeypatch.chdir(tmp_path)  # the file's name on screen is the same in every run
    app = make_app(lesson_id="S15", content_dir="content", progress_dir=seen(progress))
    assert snap_compare(app, terminal_size=SIZE)


def test_read_only_window(snap_compare, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """Another window holds the progress folder: this one says it is read-only."""
    from engine.progress import ProgressStore

    holder = ProgressStore(seen(tmp_path))
    assert holder.lock()
    app = make_app(progress_dir=tmp_path)

    async def read_only_said(pilot: Pilot[int]) -> None:
        # The lock is tried once the first frame has settled (a timer), not before.
        await wait_until(pilot, lambda: "READ-ONLY" in app.sub_title)

    try:
        assert snap_compare(app, terminal_size=SIZE, run_before=read_only_said)
    finally:
        holder.unlock()


def test_not_saved(  # type: ignore[no-untyped-def]
    snap_compare, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The progress folder refuses the save: NOT SAVED in the header, and what to do."""
    import errno
    import os

    def refuse(src: object, dst: object) -> None:
        raise OSError(errno.EACCES, os.strerror(errno.EACCES))

    async def run_before(pilot: Pilot[int]) -> None:
        # A section read and saved, then the folder refuses ctrl+s's save.
        await settled(*START_RATINGS, "ctrl+n", "ctrl+n", read=1)(pilot)
        monkeypatch.setattr("engine.progress.files.os.replace", refuse)
        await pilot.press("ctrl+s")
        assert strings.NOT_SAVED in pilot.app.sub_title
        await pilot.pause()

    seen(tmp_path)
    monkeypatch.chdir(tmp_path)  # the folder's name in the message is the same in every run
    app = make_app(progress_dir=".", autosave_delay=SAVE_DELAY)
    assert snap_compare(app, terminal_size=SIZE, run_before=run_before)


# The interface in Chinese (--lang zh): the lesson screen, F1 and the quiz.
def test_main_screen_zh(snap_compare, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    app = make_app(progress_dir=seen(tmp_path), language="zh", autosave_delay=SAVE_DELAY)
    assert snap_compare(
        app, terminal_size=SIZE, run_before=settled(*START_RATINGS, "ctrl+n", "ctrl+n", read=1)
    )


def test_help_zh(snap_compare, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    app = make_app(progress_dir=seen(tmp_path), language="zh")
    assert snap_compare(app, terminal_size=SIZE, press=["f1"])


def test_quiz_zh(snap_compare, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """The quiz feedback snapshot's state in Chinese: the ratings' names and the key points'
    title translated, the question and key points as the lesson writes them."""
    import datetime as dt

    from tui.options import QuizOptions

    now = dt.datetime(2026, 3, 1, 9, 0, tzinfo=dt.UTC)
    options = QuizOptions(lesson="S15", open_at_start=True, clock=lambda: now, seed=11, tz=dt.UTC)
    app = make_app(progress_dir=seen(tmp_path), quiz=options, language="zh")
    assert snap_compare(app, terminal_size=SIZE, press=["x", "enter", "y", "ctrl+r"])
