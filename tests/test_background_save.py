"""The autosave writes the progress file in a thread: keys are handled while the disk works,
saves land in order, quitting finishes a write in flight and then writes the newest text, a
read-only window writes nothing, and a failed write is told (the failing-folder flows are in
test_never_lose_a_word.py).

The writes are held by a gate (a threading.Event) instead of being timed: a held write is
released only when the app waits for it, so each test checks the order of events, not a clock.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from pathlib import Path

import pytest

import engine.progress.store
from engine.progress import ProgressStore
from engine.progress.store import BackgroundSave
from tests.pilot_helpers import SIZE, app_for, goto_section, paste, wait_until
from tui.widgets.notes import SelfCheckBox


class HeldWrites:
    """Replaces the store's atomic write: each write records the text it was given, then waits
    for ``gate`` before writing it. The store's ``finish_background`` (what quitting, a
    signal, ctrl+s and the next save call to wait for a write in flight) opens the gate first
    when a write is held."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.gate = threading.Event()
        self.texts: list[str] = []
        self.threads: list[str] = []
        write = engine.progress.store.atomic_write_text
        finish = ProgressStore.finish_background

        def held_write(path: Path, text: str) -> None:
            self.texts.append(text)
            self.threads.append(threading.current_thread().name)
            assert self.gate.wait(timeout=30), "the held write was never waited for"
            write(path, text)

        def finish_background(store: ProgressStore) -> BackgroundSave | None:
            if store.writing:  # it is about to wait for the held write
                self.gate.set()
            return finish(store)

        monkeypatch.setattr(engine.progress.store, "atomic_write_text", held_write)
        monkeypatch.setattr(ProgressStore, "finish_background", finish_background)


def answer_on_disk(folder: Path, item_id: str) -> str:
    return ProgressStore(folder).load("S15").progress.answers.get(item_id, "")


async def test_keys_are_handled_while_a_write_is_in_flight_and_quit_saves_the_newest_text(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    held = HeldWrites(monkeypatch)
    app = app_for(tmp_path, delay=0.05)
    async with app.run_test(size=SIZE) as pilot:
        await goto_section(pilot, app, "self-check")
        box = app.query(SelfCheckBox).first()
        await paste(pilot, box.text_area, "first words")
        # The autosave's write is held in its thread: the event loop goes on.
        await wait_until(pilot, lambda: app.store.writing)
        assert held.threads == ["shardbook-save"]
        await pilot.press("end", *" and more")
        await pilot.pause()
        # Typed, shown and recorded while the write is still held (it cannot have ended).
        assert box.text_area.text == "first words and more"
        assert app.progress.answers[box.item.id] == "first words and more"
        assert app.store.writing and app.dirty
        assert not held.gate.is_set()
        await pilot.press("ctrl+q")
    assert app.return_code == 0
    # The write in flight landed first, then quitting wrote the newest text over it.
    assert len(held.texts) == 2
    assert "first words" in held.texts[0] and "and more" not in held.texts[0]
    assert "first words and more" in held.texts[1]
    assert answer_on_disk(tmp_path, box.item.id) == "first words and more"


async def test_an_autosave_during_a_write_waits_for_it_then_saves_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    held = HeldWrites(monkeypatch)
    app = app_for(tmp_path, delay=0.05)
    async with app.run_test(size=SIZE) as pilot:
        await goto_section(pilot, app, "self-check")
        box = app.query(SelfCheckBox).first()
        await paste(pilot, box.text_area, "one")
        await wait_until(pilot, lambda: app.store.writing)
        await pilot.press("end", "space", "t", "w", "o")
        # The autosave for "one two" came while "one" was being written: it waits for it.
        await wait_until(pilot, lambda: app._save_after_write)
        assert len(held.texts) == 1
        held.gate.set()
        await wait_until(pilot, lambda: not app.unsaved and not app.store.writing)
        assert app.last_saved and not app.save_error
        assert answer_on_disk(tmp_path, box.item.id) == "one two"
        await pilot.press("ctrl+q")
    # In the order typed: a later save is never overwritten by an earlier one (the last write
    # is quitting's, of the same text).
    assert "one" in held.texts[0] and "one two" not in held.texts[0]
    assert len(held.texts) >= 2 and all("one two" in text for text in held.texts[1:])


def _failing_write(message: str) -> Callable[[Path, str], None]:
    def write(path: Path, text: str) -> None:
        raise OSError(28, message)  # ENOSPC

    return write


async def test_a_failed_background_write_is_told_and_the_text_kept(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    app = app_for(tmp_path, delay=0.05)
    async with app.run_test(size=SIZE) as pilot:
        await goto_section(pilot, app, "self-check")
        box = app.query(SelfCheckBox).first()
        monkeypatch.setattr(
            engine.progress.store, "atomic_write_text", _failing_write("No space left on device")
        )
        await paste(pilot, box.text_area, "kept in memory")
        await wait_until(pilot, lambda: "NOT SAVED" in app.sub_title)
        assert "the disk is full" in app.save_error
        assert app.dirty and app.progress.answers[box.item.id] == "kept in memory"
        monkeypatch.undo()
        await pilot.press("ctrl+q")
    assert app.return_code == 0
    assert answer_on_disk(tmp_path, box.item.id) == "kept in memory"


async def test_a_read_only_window_starts_no_write(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    held = HeldWrites(monkeypatch)
    holder = ProgressStore(tmp_path)
    assert holder.lock()
    try:
        app = app_for(tmp_path, delay=0.05)
        async with app.run_test(size=SIZE) as pilot:
            await goto_section(pilot, app, "self-check")
            assert app.read_only
            box = app.query(SelfCheckBox).first()
            await paste(pilot, box.text_area, "only in memory")
            await wait_until(pilot, lambda: "NOT SAVED" in app.sub_title)
            assert not app.store.writing and held.texts == []
            assert not (tmp_path / "S15.yaml").exists()
    finally:
        holder.unlock()


def test_a_load_on_another_thread_as_a_background_write_starts_does_not_fail(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The quiz reads progress files in a worker thread; a load there finishes the write in
    # flight. One that came just as the event loop's autosave was starting its thread tried to
    # join a thread not started yet ("cannot join thread before it is started").
    from engine.progress import LessonProgress

    store = ProgressStore(tmp_path)
    errors: list[BaseException] = []
    start = BackgroundSave.start

    def start_while_another_thread_loads(background: BackgroundSave) -> None:
        def load() -> None:
            try:
                store.load("S15")
            except BaseException as error:  # any failure is the finding
                errors.append(error)

        loader = threading.Thread(target=load)
        loader.start()
        loader.join(timeout=30)
        start(background)

    monkeypatch.setattr(BackgroundSave, "start", start_while_another_thread_loads)
    store.save_in_background(LessonProgress("S15", answers={"sc-1": "kept"}), lambda: None)
    store.finish_background()
    assert errors == []
    assert ProgressStore(tmp_path).load("S15").progress.answers == {"sc-1": "kept"}
