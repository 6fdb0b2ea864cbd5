"""The app reopens where the lesson was left (engine/resume.py, settings ``resume.<lesson>``):
section, scroll position, side tab and side pane with its scroll position, each pane's choices,
the focused widget; bad or stale values fall
back quietly; written after the last move, on quit and on a signal, only by the lock holder."""

from __future__ import annotations

import signal
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st
from textual.containers import ScrollableContainer
from textual.pilot import Pilot
from textual.widget import Widget
from textual.widgets import Input, Select, Static

from engine.progress import ProgressStore
from engine.resume import SIDE_TABS, ResumeState, is_resume_setting
from engine.settings import Settings, SettingsStore
from tests.pilot_helpers import (
    SIZE,
    app_for,
    choose,
    goto_section,
    params_field,
    paste,
    paste_into,
    screen_lines,
    settle,
    wait_until,
)
from tests.test_lifecycle import shardbook, type_an_answer
from tests.test_switch_forms import switch
from tui import app as app_module
from tui.app import ShardbookApp, make_app
from tui.widgets.collectives import CollectivesPane
from tui.widgets.diagrams import DiagramsPane
from tui.widgets.literal import LiteralTextArea
from tui.widgets.notes import SelfCheckBox
from tui.widgets.tradeoffs import TradeoffsPane


def resume_on_disk(tmp_path: Path) -> dict[str, Any]:
    data = yaml.safe_load((tmp_path / "settings.yaml").read_text(encoding="utf-8"))
    assert isinstance(data, dict)
    resume = data.get("resume", {})
    assert isinstance(resume, dict)
    return resume


def with_settings(tmp_path: Path, text: str) -> Path:
    (tmp_path / "settings.yaml").write_text(
        "schema_version: 1\nhints: {first_run_seen: true}\n" + text, encoding="utf-8"
    )
    return tmp_path


def reading_part(lines: list[str]) -> list[str]:
    """The lines left of the side pane's border, below the header (which says when the
    progress was last saved)."""
    return [line.split("│")[0] for line in lines[1:]]


# ----------------------------------------------------------------- the stored state
def test_an_entry_round_trips_and_bad_values_are_left_out() -> None:
    state = ResumeState(
        section="core",
        block=4,
        line=2,
        side_tab="diagrams",
        side_shown=True,
        side_size="medium",
        panes={"diagrams": {"strategy": "fsdp"}, "collectives": {"step": 3}},
    )
    assert ResumeState.from_data(state.to_data()) == state
    assert is_resume_setting({"S15": state.to_data()})
    bad = {
        **state.to_data(),
        "block": -1,
        "side_tab": "sideways",
        "side_shown": "yes",
        "panes": {"diagrams": {"strategy": "[bold]x"}, "collectives": {"step": 2.5}},
    }
    assert ResumeState.from_data(bad) == ResumeState(section="core", line=2, side_size="medium")
    assert ResumeState.from_data(["core"]) == ResumeState()
    with pytest.raises(ValueError, match="side_tab"):
        ResumeState(side_tab="sideways").to_data()


def test_the_settings_check_is_precise_and_keeps_what_a_newer_version_adds() -> None:
    assert is_resume_setting({})
    assert is_resume_setting({"S15": {"section": "core", "later": {"any": 1}}})
    for bad in (
        [],
        {"../S15": {}},
        {"S15": "core"},
        {"S15": {"section": 3}},
        {"S15": {"block": True}},
        {"S15": {"line": 10**9}},
        {"S15": {"panes": {"tradeoffs": {"link": ["100gbps"]}}}},
        {"S15": {"panes": []}},
    ):
        assert not is_resume_setting(bad), bad
    settings = Settings({"resume": {"S15": {"side_tab": 7}}})
    assert settings.get("resume") == {}
    assert any(problem.startswith("resume:") for problem in settings.problems)


@given(
    st.builds(
        ResumeState,
        section=st.from_regex(r"[A-Za-z0-9_.:-]{1,20}", fullmatch=True) | st.just(""),
        block=st.integers(0, 100_000),
        line=st.integers(0, 1_000_000),
        side_tab=st.sampled_from(("", *SIDE_TABS)),
        side_shown=st.none() | st.booleans(),
        side_size=st.sampled_from(("", "wide", "medium")),
        side_scroll=st.integers(0, 1_000_000),
        zoomed=st.booleans(),
        focus=st.sampled_from(("", "reading", "strategy", "field-params", "diagrams")),
        panes=st.fixed_dictionaries(
            {},
            optional={
                "diagrams": st.fixed_dictionaries({"strategy": st.sampled_from(("dp", "zero3"))}),
                "collectives": st.fixed_dictionaries({"step": st.integers(0, 100)}),
            },
        ),
    )
)
def test_every_state_round_trips_through_the_settings_file(state: ResumeState) -> None:
    settings = Settings()
    settings.set("resume", {"S15": state.to_data()})
    text = yaml.safe_dump(settings.to_data())
    reloaded = Settings(yaml.safe_load(text))
    assert reloaded.problems == []
    assert ResumeState.from_data(reloaded.get("resume")["S15"]) == state


# ----------------------------------------------------------------- restarting the app
async def _leave_a_session(pilot: Pilot[int], app: ShardbookApp) -> list[str]:
    """Read in section mechanism, scrolled down; pick choices in three panes; end on
    Collectives. Returns the screen as it was just before quitting."""
    await goto_section(pilot, app, "mechanism")
    await pilot.press("f10")
    await pilot.pause()
    tradeoffs = app.query_one(TradeoffsPane)
    await choose(pilot, tradeoffs.query_one("#tradeoffs-link", Select), "100gbps", "NVLink + 100")
    await choose(pilot, tradeoffs.query_one("#tradeoffs-model", Select), "llama2-7b", "Llama 2 7B")
    await pilot.press("f4")
    await pilot.pause()
    await choose(pilot, app.query_one(DiagramsPane).query_one("#strategy", Select), "pp")
    await pilot.press("f4")  # again: Collectives
    await pilot.pause()
    app.query_one(CollectivesPane).query_one("#flow").focus()
    await pilot.press("right", "right", "right")
    app.query_one("#reading").focus()
    await pilot.press("pagedown", "down", "down")
    # A scroll key's scroll is animated and may start a frame after the key is handled: the
    # position is read once no animation is left.
    await pilot.pause()
    await pilot.wait_for_scheduled_animations()
    await pilot.pause()
    return screen_lines(app)


async def test_home_and_end_with_no_data_flow_picture_keep_the_step_and_the_app(
    tmp_path: Path,
) -> None:
    """Collectives with 16 ranks draws no data-flow picture (8 at most): home and end on it
    counted the step out to -999,995 and 1,000,000, and the app ended with a traceback when it
    recorded that place (a step is 0 or more, and no more than the flow's steps)."""
    app = app_for(tmp_path)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("f4", "f4")
        await wait_until(pilot, lambda: bool(app.query(CollectivesPane)))
        pane = app.query_one(CollectivesPane)
        ranks = pane.query_one("#field-ranks", Input)
        await paste_into(pilot, ranks, "16")
        await wait_until(pilot, lambda: pane.step_count == 0)
        # ctrl+y (the picture) says why there is none, and leaves the focus in the field.
        await pilot.press("ctrl+y")
        await pilot.pause()
        note = pane.query_one(".calc-note", Static)
        assert app.focused is ranks and note.display
        assert "draws up to 8 ranks" in str(note.render())
        pane.query_one("#flow").focus()
        await pilot.press("end", "home", "end", "tab")
        await pilot.pause()
        assert app.is_running
        assert pane.step == 0
        await pilot.press("ctrl+q")
    assert resume_on_disk(tmp_path)["S15"]["panes"]["collectives"] == {"step": 0}


async def test_restart_restores_section_scroll_side_tab_and_choices(tmp_path: Path) -> None:
    app = app_for(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        before = await _leave_a_session(pilot, app)
        scroll = app.query_one("#reading").scroll_y
        assert scroll > 0
        await pilot.press("ctrl+q")
    saved = resume_on_disk(tmp_path)["S15"]
    assert saved["section"] == "mechanism" and saved["side_tab"] == "collectives"
    assert saved["panes"]["diagrams"] == {"strategy": "pp"}
    assert saved["panes"]["collectives"] == {"step": 3}
    app = app_for(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        # The place is restored a frame or more after the first.
        reading = app.query_one("#reading")
        try:
            await wait_until(pilot, lambda: reading.scroll_y == scroll)
        except AssertionError:
            shown = [type(child).__name__ for child in reading.children]
            raise AssertionError(
                f"scroll_y {reading.scroll_y} (max {reading.max_scroll_y}), {scroll} wanted;"
                f" saved {saved}; reading pane holds {shown}"
            ) from None
        assert app.main_screen.current_section == "mechanism"
        assert app.query_one("#side").display
        assert app.query_one(CollectivesPane).step == 3
        # The lesson as it was (the side pane's own scroll position is not kept).
        assert reading_part(screen_lines(app)) == reading_part(before)
        await pilot.press("f10")
        await pilot.pause()
        choices = app.query_one(TradeoffsPane).choices()
        assert (choices["link"], choices["model"]) == ("100gbps", "llama2-7b")
        await pilot.press("f4")
        await pilot.pause()
        assert app.query_one(DiagramsPane).strategy == "pp"
        # The other panes were not built to restore anything.
        assert not app.query("LedgerPane") and not app.query("BubblePane")


async def test_the_side_pane_comes_back_only_at_the_layout_it_was_left_at(tmp_path: Path) -> None:
    with_settings(
        tmp_path,
        "resume: {S15: {section: core, side_tab: diagrams, side_shown: true, side_size: medium}}\n",
    )
    app = app_for(tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:  # wide: shown, as the default says
        # The tab's content is built after the first frame.
        await wait_until(pilot, lambda: bool(app.query(DiagramsPane)))
        assert app.query_one("#side").display
        assert not app.query("LedgerPane")  # only the tab shown is built
    with_settings(tmp_path, "resume: {S15: {section: core, side_shown: false, side_size: wide}}\n")
    app = app_for(tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.pause()
        assert not app.query_one("#side").display
    app = app_for(tmp_path)
    async with app.run_test(size=(60, 20)) as pilot:  # narrow: the lesson first, always
        await wait_until(pilot, lambda: app.main_screen.current_section == "core")
        assert app.query_one("#reading").display and not app.query_one("#side").display


async def test_f5_zoom_comes_back_after_a_restart_and_an_entry_without_it_is_not_zoomed(
    tmp_path: Path,
) -> None:
    """Left with the Ledger zoomed (F2, F5: the side pane alone on screen), the lesson reopens
    zoomed on the Ledger, its field focused; F5 gives the lesson back. An entry written before
    the zoom was kept (no ``zoomed`` key) opens with the lesson on screen, as before."""
    app = app_for(tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await pilot.press("f2", "f5")
        await wait_until(pilot, lambda: bool(app.query("LedgerPane")))
        assert not app.main_screen.arrangement.reading
        await pilot.press("ctrl+q")
    assert resume_on_disk(tmp_path)["S15"]["zoomed"] is True
    app = app_for(tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        field = await params_field(pilot, app)
        await wait_until(pilot, lambda: app.focused is field)
        shown = app.main_screen.arrangement
        assert app.main_screen.zoomed and shown.side and not shown.reading
        await pilot.press("f5")
        await wait_until(pilot, lambda: app.main_screen.arrangement.reading)
        await pilot.press("ctrl+q")
    assert "zoomed" not in resume_on_disk(tmp_path)["S15"]
    with_settings(tmp_path, "resume: {S15: {section: core, side_tab: ledger, side_shown: true}}\n")
    app = app_for(tmp_path)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_until(pilot, lambda: app.main_screen.current_section == "core")
        assert not app.main_screen.zoomed and app.main_screen.arrangement.reading


async def test_stale_values_fall_back_quietly_to_the_defaults(tmp_path: Path) -> None:
    with_settings(
        tmp_path,
        "resume:\n  S15:\n    section: removed-section\n    block: 40\n    side_tab: diagrams\n"
        "    side_shown: true\n    side_size: medium\n"
        "    panes:\n      diagrams: {strategy: zero4}\n"
        "      tradeoffs: {link: carrier-pigeon, world: '16', model: gpt-9, batch: '64'}\n",
    )
    app = app_for(tmp_path)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await pilot.pause()
        assert app.main_screen.current_section == "__meta__"
        assert app.query_one("#reading").scroll_y == 0
        # The side tab is built after the first frame, its strategy chosen once it is mounted.
        strategies = lambda: [pane.strategy for pane in app.query(DiagramsPane)]  # noqa: E731
        await wait_until(pilot, lambda: strategies() == ["dp"])
        await pilot.press("f10")
        await pilot.pause()
        choices = app.query_one(TradeoffsPane).choices()
        assert (choices["link"], choices["model"]) == ("400gbps", "lesson-1b")
        assert not app.screen.query("Toast")  # quietly


async def test_moves_are_written_after_the_last_one_never_per_scroll(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    writes: list[dict[str, Any]] = []
    save = SettingsStore.save

    def counted(store: SettingsStore, settings: Settings) -> None:
        writes.append(settings.get("resume"))
        save(store, settings)

    monkeypatch.setattr(SettingsStore, "save", counted)
    monkeypatch.setattr(app_module, "PLACE_DELAY", 3600.0)  # never within the test
    app = app_for(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await goto_section(pilot, app, "mechanism")
        app.query_one("#reading").focus()
        before = len(writes)
        for _ in range(12):
            await pilot.press("down")
        await pilot.pause()
        assert len(writes) == before  # twelve scroll steps, no write
        assert app.place_pending  # one write waits
        await pilot.press("ctrl+q")
    assert writes[-1]["S15"]["section"] == "mechanism"
    assert writes[-1]["S15"]["line"] + writes[-1]["S15"]["block"] > 0


async def test_a_move_is_written_once_the_delay_has_passed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import asyncio

    monkeypatch.setattr(app_module, "PLACE_DELAY", 0.05)
    app = app_for(tmp_path)
    written = asyncio.Event()
    record = app.record_place

    def recorded() -> None:
        record()
        if app.main_screen.current_section == "objectives":
            written.set()

    monkeypatch.setattr(app, "record_place", recorded)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("ctrl+n", "ctrl+n")
        await asyncio.wait_for(written.wait(), 10)
        assert resume_on_disk(tmp_path)["S15"]["section"] == "objectives"


async def test_a_read_only_window_keeps_its_place_in_memory(tmp_path: Path) -> None:
    other = ProgressStore(tmp_path)
    assert other.lock()
    try:
        app = app_for(tmp_path)
        async with app.run_test(size=SIZE) as pilot:
            await goto_section(pilot, app, "core")
            await pilot.press("ctrl+q")
            assert app.settings.get("resume")["S15"]["section"] == "core"
        assert not (tmp_path / "settings.yaml").exists()
    finally:
        other.unlock()


def test_a_signal_writes_where_the_lesson_was_left(tmp_path: Path) -> None:
    with shardbook(tmp_path) as terminal:
        type_an_answer(terminal)  # through the palette to the self-check section
        terminal.signal(signal.SIGTERM)
        assert terminal.wait_exit() == 128 + signal.SIGTERM
    assert resume_on_disk(tmp_path)["S15"]["section"] == "self-check"


def test_a_restored_side_tab_is_built_after_the_first_frame(tmp_path: Path) -> None:
    """The Diagrams tab restored beside the lesson: the first frame is drawn before the pane is
    built (numpy, which its diagrams import, is not loaded yet), and the pane follows."""
    with_settings(
        tmp_path,
        "resume: {S15: {section: core, side_tab: diagrams, side_shown: true, side_size: medium}}\n",
    )
    # Textual posts Ready to the app once its first frame is drawn (a fresh interpreter: numpy
    # must not be loaded before).
    code = (
        "import asyncio, sys\n"
        "from textual import events\n"
        "from tui.app import make_app\n"
        f"app = make_app(progress_dir={str(tmp_path)!r})\n"
        "first = []\n"
        "def hook(message):\n"
        "    if isinstance(message, events.Ready) and not first:\n"
        "        first.append(('numpy' in sys.modules, bool(app.query('DiagramsPane'))))\n"
        "async def run():\n"
        "    async with app.run_test(size=(80, 24), message_hook=hook) as pilot:\n"
        "        await pilot.pause()\n"
        "        print(first[0], app.query_one('#side').display, bool(app.query('DiagramsPane')))\n"
        "asyncio.run(run())\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.strip().splitlines()[-1] == "(False, False) True True"


async def test_each_lesson_reopens_where_it_was_left(tmp_path: Path) -> None:
    """Two lessons (S15 and a copy under another id): leaving one for the other keeps where
    each was, and coming back restores it, side pane choices included."""
    from engine.paths import resolve_content_dir

    content = tmp_path / "content"
    content.mkdir()
    text = (resolve_content_dir(None) / "S15.yaml").read_text(encoding="utf-8")
    copy = text.replace("\nid: S15\n", "\nid: S99\n", 1)
    assert copy != text
    (content / "S15.yaml").write_text(text, encoding="utf-8")
    (content / "S99.yaml").write_text(copy, encoding="utf-8")
    progress = tmp_path / "progress"
    app = make_app(content_dir=content, progress_dir=progress, autosave_delay=0.05)
    async with app.run_test(size=(120, 40)) as pilot:
        await goto_section(pilot, app, "core")
        await pilot.press("f4")
        await pilot.pause()
        await choose(pilot, app.query_one(DiagramsPane).query_one("#strategy", Select), "tp")
        app.open_lesson("S99")
        await pilot.pause()
        assert app.main_screen.current_section == "__meta__"  # S99 was never left anywhere
        assert app.query_one(DiagramsPane).strategy == "dp"
        await goto_section(pilot, app, "exercises")
        app.open_lesson("S15")
        await pilot.pause()
        assert app.main_screen.current_section == "core"
        assert app.query_one(DiagramsPane).strategy == "tp"
        await pilot.press("ctrl+q")
    saved = resume_on_disk(progress)
    assert (saved["S15"]["section"], saved["S99"]["section"]) == ("core", "exercises")


async def test_a_restored_field_takes_the_next_key_at_its_end(tmp_path: Path) -> None:
    """The Ledger's field that had the focus gets it back after a restart with the cursor at
    the end of its value, not the whole value selected: the learner's first key is added, it
    does not replace a value they did not choose to edit."""
    app = app_for(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("f2")
        field = await params_field(pilot, app)
        field.focus()
        await pilot.press("end", "ctrl+u", *"13B")
        await pilot.pause()
        await pilot.press("ctrl+q")
    assert resume_on_disk(tmp_path)["S15"]["focus"] == "field-params"
    app = app_for(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        field = await params_field(pilot, app)
        await wait_until(pilot, lambda: app.focused is field)
        await pilot.pause()
        await pilot.press("0")
        await wait_until(pilot, lambda: field.value == "13B0")


async def test_restart_gives_the_focus_back_to_a_self_check_answer_with_the_cursor_at_its_end(
    tmp_path: Path,
) -> None:
    """The focus in a self-check answer box was kept as the reading pane's (the box had no id
    to name it by), so after a restart no box had it: the box that had it gets it back, the
    cursor at the end of its two lines, and the next key typed goes there."""
    app = app_for(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await goto_section(pilot, app, "self-check")
        box = app.query(SelfCheckBox)[1]
        box.text_area.focus()
        await pilot.pause()
        await pilot.press(*"my", "enter", *"answer")
        await pilot.press("ctrl+q")
    assert resume_on_disk(tmp_path)["S15"]["focus"] == f"answers:{box.item.id}"
    app = app_for(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: isinstance(app.focused, LiteralTextArea))
        area = app.focused
        assert isinstance(area, LiteralTextArea)
        restored = next(node for node in area.ancestors if isinstance(node, SelfCheckBox))
        assert restored.item.id == box.item.id and area.text == "my\nanswer"
        assert area.cursor_location == (1, len("answer")) and not area.selected_text
        await pilot.press("s")
        await wait_until(pilot, lambda: area.text == "my\nanswers")


async def test_restart_gives_the_focus_and_the_side_scroll_back(tmp_path: Path) -> None:
    """The widget that had the focus (the Diagrams pane's strategy list) and how far the
    Diagrams tab was scrolled come back after a restart."""
    app = app_for(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await pilot.press("f4")  # Diagrams, its strategy list focused
        await pilot.pause()
        diagrams = app.query_one(DiagramsPane)
        tab = app.main_screen.query_one("#diagrams")
        pane_scroller = tab.query(ScrollableContainer).first()
        await wait_until(pilot, lambda: pane_scroller.max_scroll_y > 10)
        pane_scroller.scroll_to(y=7, animate=False, immediate=True)
        await pilot.pause()
        diagrams.query_one("#strategy").focus()
        await pilot.pause()
        scroll = pane_scroller.scroll_y
        assert scroll == 7
        await pilot.press("ctrl+q")
    saved = resume_on_disk(tmp_path)["S15"]
    assert (saved["focus"], saved["side_scroll"]) == ("strategy", 7)
    app = app_for(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, lambda: app.focused is not None and app.focused.id == "strategy")
        tab = app.main_screen.query_one("#diagrams")
        pane_scroller = tab.query(ScrollableContainer).first()
        await wait_until(pilot, lambda: pane_scroller.scroll_y == 7)


async def test_the_objectives_keep_their_scroll_position_through_switches_and_a_restart(
    tmp_path: Path,
) -> None:
    """The objectives section (80x24, the side pane shown), scrolled until objective 2's text
    is the reader's top line, came back at the section's first line after a switch of the
    interface language, also right after a restart that resumed there, where other sections
    kept their place: each objective is placed a few frames after the section's end has a size
    (it mounts the lines it composes first), and the place waited five frames for it."""
    app = make_app(progress_dir=tmp_path, language="zh")
    objective_2 = " 2. 能说清"  # its first words in S15.yaml, whatever the interface language

    def at_objective_2() -> bool:
        return reading_part(screen_lines(app))[0].startswith(objective_2)

    async with app.run_test(size=SIZE) as pilot:
        await goto_section(pilot, app, "objectives")
        await pilot.press("f6")  # the side pane: the reader is narrow enough to scroll
        await pilot.pause()
        app.main_screen.set_focus(app.query_one("#reading"))
        for _ in range(20):
            if at_objective_2():
                break
            await pilot.press("down")
            await pilot.pause()
            await pilot.wait_for_scheduled_animations()
        before = reading_part(screen_lines(app))
        assert before[0].startswith(objective_2) and "学习目标" not in before
        await switch(app, pilot, "English", "en")
        await wait_until(pilot, at_objective_2)
        assert app.main_screen.current_section == "objectives"
        await pilot.press("ctrl+q")
    app = app_for(tmp_path)
    async with app.run_test(size=SIZE) as pilot:
        await wait_until(pilot, at_objective_2)
        await switch(app, pilot, "中文", "zh")
        await wait_until(pilot, at_objective_2)
        assert app.main_screen.current_section == "objectives"


async def zoomed_ledger_with_more_fields(pilot: Pilot[int], app: ShardbookApp) -> Widget:
    """The Ledger zoomed (F2, F5), its less-used fields opened as the learner opens them."""
    await pilot.press("f2", "f5")
    ledger = app.query_one("LedgerPane")
    await wait_until(pilot, lambda: bool(ledger.query("#more-open")))
    ledger.query_one("#more-open").focus()
    await pilot.press("enter")
    await wait_until(pilot, lambda: bool(ledger.query("#field-lora_targets")))
    return ledger


async def ledger_shown_by_f6(pilot: Pilot[int], app: ShardbookApp) -> Widget:
    """At a size where the lesson is shown alone, F6 shows the side pane (the Ledger, left
    there), its less-used fields built."""
    await pilot.pause()
    await pilot.press("f6")
    ledger = app.query_one("LedgerPane")
    await wait_until(pilot, lambda: bool(ledger.query("#field-lora_targets")))
    return ledger


async def test_f6_after_a_restart_narrower_gives_back_the_side_field_the_learner_was_in(
    tmp_path: Path,
) -> None:
    """Left typing in the Ledger's LoRA targets at 160x50 (side pane zoomed), reopened at 40x12
    the lesson is shown alone; F6 shows the Ledger with LoRA targets focused and in view, and a
    key typed goes there, not into params N (the pane's first field, then off screen)."""
    app = app_for(tmp_path)
    async with app.run_test(size=(160, 50)) as pilot:
        ledger = await zoomed_ledger_with_more_fields(pilot, app)
        await choose(pilot, ledger.query_one("#field-model", Select), "llama2-7b", "Llama 2 7B")
        await choose(pilot, ledger.query_one("#field-finetune", Select), "qlora")
        targets = ledger.query_one("#field-lora_targets", Input)
        targets.focus()
        await pilot.pause()
        before = targets.value
        params_before = ledger.query_one("#field-params", Input).value
        await pilot.press("ctrl+q")
    saved = resume_on_disk(tmp_path)["S15"]
    assert (saved["side_size"], saved["focus"]) == ("wide", "field-lora_targets")
    app = app_for(tmp_path)
    async with app.run_test(size=(40, 12)) as pilot:
        ledger = await ledger_shown_by_f6(pilot, app)
        targets = ledger.query_one("#field-lora_targets", Input)
        await wait_until(pilot, lambda: app.focused is targets)
        await pilot.press("z")
        await wait_until(pilot, lambda: targets.value == before + "z")
        await pilot.pause()
        assert targets.region.height and app.screen.region.contains_region(targets.region)
        await pilot.press("ctrl+q")
    form = yaml.safe_load((tmp_path / "S15.yaml").read_text(encoding="utf-8"))["forms"]["ledger"]
    assert (form["params"], form["lora_targets"]) == (params_before, before + "z")


async def test_a_refused_value_restored_does_not_scroll_the_focused_field_away(
    tmp_path: Path,
) -> None:
    """A refused LoRA targets value is shown again after a restart, its message under its row
    far below params N. Reopened at 40x12, F6 focuses params N; placing that message scrolled
    the pane down to it afterwards, so params N was focused off screen and the next key went
    there unseen. The focused field stays in view and takes the key."""
    app = app_for(tmp_path)
    async with app.run_test(size=(160, 50)) as pilot:
        ledger = await zoomed_ledger_with_more_fields(pilot, app)
        targets = ledger.query_one("#field-lora_targets", Input)
        await paste_into(pilot, targets, "q,q,w")
        params = ledger.query_one("#field-params", Input)
        params.focus()
        await pilot.pause()
        await pilot.press("ctrl+q")
    assert resume_on_disk(tmp_path)["S15"]["focus"] == "field-params"
    app = app_for(tmp_path)
    async with app.run_test(size=(40, 12)) as pilot:
        ledger = await ledger_shown_by_f6(pilot, app)
        params = ledger.query_one("#field-params", Input)
        error = ledger.query_one(".calc-error")
        await wait_until(pilot, lambda: app.focused is params and bool(error.region.height))
        for _ in range(5):  # the frames in which the message's place is scrolled to
            await pilot.pause()
        assert params.region.height and ledger.region.contains_region(params.region)
        await pilot.press("0")
        await wait_until(pilot, lambda: params.value == "1B0")
        await pilot.press("ctrl+q")


async def test_f6_after_a_restart_narrower_gives_back_the_side_note_box(tmp_path: Path) -> None:
    """As for a field: left writing the Diagrams pane's DP note at 160x50, reopened at 40x12,
    F6 gives the focus back to that box (its boxes are built after the pane), and the next
    key is added to the note."""
    from tui.widgets.notes import NoteBox

    app = app_for(tmp_path)
    async with app.run_test(size=(160, 50)) as pilot:
        await pilot.press("f4")
        await wait_until(pilot, lambda: bool(app.query("DiagramsPane NoteBox")))
        box = app.query_one("DiagramsPane").query(NoteBox).first()
        assert box.item.id == "ex2.dp.split"
        await paste(pilot, box.text_area, "batch split")
        await pilot.press("ctrl+q")
    assert resume_on_disk(tmp_path)["S15"]["focus"] == "notes:ex2.dp.split"
    app = app_for(tmp_path)
    async with app.run_test(size=(40, 12)) as pilot:
        await pilot.pause()
        await pilot.press("f6")
        await wait_until(pilot, lambda: isinstance(app.focused, LiteralTextArea))
        area = app.focused
        assert isinstance(area, LiteralTextArea) and area.text == "batch split"
        await pilot.press("s")
        await wait_until(pilot, lambda: area.text == "batch splits")
        await pilot.press("ctrl+q")


F5_OVER_UNBUILT_OUTLINE = """
import asyncio, sys
from pathlib import Path
from tests.pilot_helpers import burst, screen_lines, settle, wait_until
from tui.app import make_app

async def main() -> None:
    app = make_app(progress_dir=Path(sys.argv[1]))
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await burst(app, "f5")
        await settle(pilot)
        pane = app.query_one("LedgerPane")
        assert app.focused is not None and pane in app.focused.ancestors, app.focused
        assert any("params N" in line for line in screen_lines(app)), screen_lines(app)
        await pilot.press("ctrl+q")
        await wait_until(pilot, lambda: app.return_code is not None)
    print("quit", app.return_code)

asyncio.run(main())
"""


def test_f5_with_the_focus_left_in_an_outline_not_built_shows_the_ledger_and_quits(
    tmp_path: Path,
) -> None:
    """Left at a width with the outline as a column, the focus in it (``focus: outline``) and
    the Ledger as the side tab; started at 80x24, where the outline is not built, F5 showed a
    blank screen and the app no longer answered: ctrl+q did nothing and SIGTERM did not end
    it. The screen waited, in its own task, for a frame only that task could draw. F5 shows the
    Ledger with the focus in it, and ctrl+q quits. In a process of its own, ended after 30 s:
    the hung app also hung its test's teardown."""
    with_settings(tmp_path, "resume: {S15: {side_tab: ledger, focus: outline}}\n")
    root = Path(__file__).resolve().parent.parent
    try:
        result = subprocess.run(
            [sys.executable, "-c", F5_OVER_UNBUILT_OUTLINE, str(tmp_path)],
            cwd=root,
            capture_output=True,
            text=True,
            timeout=30,
        )
    except subprocess.TimeoutExpired as error:
        raise AssertionError("the app did not answer F5 and ctrl+q within 30 s") from error
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "quit 0"


@pytest.mark.parametrize(("size", "zoomed"), [((120, 40), False), ((80, 24), True)])
async def test_the_focus_left_in_an_empty_less_used_field_comes_back_there(
    tmp_path: Path, size: tuple[int, int], zoomed: bool
) -> None:
    """ctrl+n put the cursor in the Ledger's ``seq len s`` (one of the fields folded under ``▸``)
    and the learner left without typing there: the pane shown again builds those rows only
    for a changed value, so the focus went to params N instead, its value selected and out of
    view, and the next keys replaced 1B unseen. The rows are built, the field is in view, and
    the keys land in it."""
    zoom = ", zoomed: true" if zoomed else ""
    with_settings(
        tmp_path,
        "resume: {S15: {side_tab: ledger, focus: field-seq, side_shown: true, "
        f"side_size: wide{zoom}}}}}\n",
    )
    app = make_app(progress_dir=tmp_path)
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        ledger = app.query_one("LedgerPane", Widget)
        await wait_until(pilot, lambda: bool(ledger.query("#field-seq")))
        seq = ledger.query_one("#field-seq", Input)
        await wait_until(pilot, lambda: app.focused is seq)
        await wait_until(pilot, lambda: ledger.region.contains_region(seq.region))
        await pilot.press(*"4096")
        await settle(pilot)
        assert seq.value == "4096"
        assert ledger.query_one("#field-params", Input).value == "1B"
