"""Every side pane's fields through a switch of the interface language and a restart: the lesson
screen is built again (tui.app.ShardbookApp.switch_language), and each field must come back as
the learner left it, and the progress hold only what the learner typed or chose.

A Select posts Changed when it is built, with the value it was built with; that message arrives
after the pane has restored the saved form. The Ledger once took it for the learner choosing
the default precision, and wrote that precision's bytes over the typed ones (and saved them).
"""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from textual.pilot import Pilot
from textual.widgets import Input, Select

from engine.i18n import current_language
from tests.pilot_helpers import type_into, wait_until
from tui.app import ShardbookApp, make_app
from tui.widgets.calculator import CalculatorPane

SIZE = (80, 24)
# A step: ("type", field, text) keys the text into the field; ("choose", field, value) picks
# the value in the field's Select, as the learner's choice does; ("more", "", "") builds the
# less-used fields' rows.
Step = tuple[str, str, str]
# Mixed-precision Adam keeps 2 + 2 + 12 bytes per parameter, fp32 Adam 4 + 4 + 8 (ZeRO,
# Rajbhandari et al. 2020, section 3.1 and its 16-bytes-per-parameter count).
FORM_CASES: dict[str, tuple[str, list[Step], dict[str, str]]] = {
    # The learner's trial: a byte typed over the default precision's makes it custom.
    "ledger-typed-bytes": (
        "ledger",
        [("type", "weight_bytes", "5")],
        {"preset": "custom", "weight_bytes": "5", "grad_bytes": "2", "optimizer_bytes": "12"},
    ),
    # Another precision chosen (it fills its bytes), then every other main field changed.
    "ledger-preset-and-fields": (
        "ledger",
        [
            ("choose", "preset", "fp32-adam"),
            ("type", "params", "7B"),
            ("type", "dp", "8"),
            ("choose", "zero", "3"),
            ("choose", "convention", "megatron"),
            ("type", "gpu_memory", "141GB"),
        ],
        {
            "preset": "fp32-adam",
            "weight_bytes": "4",
            "grad_bytes": "4",
            "optimizer_bytes": "8",
            "params": "7B",
            "dp": "8",
            "zero": "3",
            "convention": "megatron",
            "gpu_memory": "141GB",
        },
    ),
    # Custom bytes typed after a precision was chosen.
    "ledger-preset-then-bytes": (
        "ledger",
        [
            ("choose", "preset", "sgd-momentum"),
            ("type", "grad_bytes", "4"),
            ("type", "optimizer_bytes", "6"),
        ],
        {"preset": "custom", "weight_bytes": "2", "grad_bytes": "4", "optimizer_bytes": "6"},
    ),
    # The less-used fields: a model preset (it fills the shape; Llama 2 7B has 32 layers of
    # hidden size 4096 and 32 heads: config.json of meta-llama/Llama-2-7b-hf), then more.
    "ledger-more-fields": (
        "ledger",
        [
            ("more", "", ""),
            ("choose", "model", "llama2-7b"),
            ("type", "seq", "4096"),
            ("type", "tp", "2"),
            ("choose", "recompute", "selective"),
        ],
        {
            "model": "llama2-7b",
            "layers": "32",
            "hidden": "4096",
            "heads": "32",
            "seq": "4096",
            "tp": "2",
            "recompute": "selective",
        },
    ),
    "bubble": (
        "bubble",
        [
            ("choose", "schedule", "interleaved-1f1b"),
            ("type", "stages", "8"),
            ("type", "micro_batches", "16"),
            ("type", "virtual_stages", "4"),
            ("choose", "compare", "1f1b"),
        ],
        {
            "schedule": "interleaved-1f1b",
            "stages": "8",
            "micro_batches": "16",
            "virtual_stages": "4",
            "compare": "1f1b",
        },
    ),
    "collectives": (
        "collectives",
        [
            ("choose", "op", "all-gather"),
            ("choose", "algorithm", "ring"),
            ("type", "ranks", "8"),
            ("type", "bytes", "2GiB"),
            ("type", "bandwidth", "400Gb/s"),
            ("type", "latency", "10us"),
        ],
        {
            "op": "all-gather",
            "algorithm": "ring",
            "ranks": "8",
            "bytes": "2GiB",
            "bandwidth": "400Gb/s",
            "latency": "10us",
        },
    ),
}


async def settle(pilot: Pilot[int]) -> None:
    for _ in range(3):
        await pilot.pause()


def calculator(app: ShardbookApp, tab: str) -> CalculatorPane:
    panes = [pane for pane in app.main_screen.query(CalculatorPane) if pane.form_name == tab]
    assert len(panes) == 1, tab
    return panes[0]


async def switch(app: ShardbookApp, pilot: Pilot[int], name: str, language: str) -> None:
    """The palette's language command, as the learner runs it; then the rebuilt screen."""
    old = app.main_screen
    await pilot.press("ctrl+p", *name, "enter")
    await wait_until(pilot, lambda: app.main_screen is not old and app.screen is app.main_screen)
    await settle(pilot)
    await app.workers.wait_for_complete()
    await settle(pilot)
    assert current_language() == language


def saved_form(folder: Path, form_name: str) -> dict[str, str]:
    """The form as saved in the lesson's progress file ({} while none is saved)."""
    path = folder / "S15.yaml"
    if not path.exists():
        return {}
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    form: dict[str, str] = data.get("forms", {}).get(form_name, {})
    return form


# The cases that share one app: each in its own pane (the Ledger's four are apart, one app
# each). Each pane is filled, then the language switched twice and the app restarted, and each
# pane's fields checked: one app, two switches and a restart for up to three panes.
RUNS = [
    ["ledger-typed-bytes", "bubble"],
    ["ledger-preset-and-fields", "collectives"],
    ["ledger-preset-then-bytes"],
    ["ledger-more-fields"],
]


async def fill(app: ShardbookApp, pilot: Pilot[int], case: str) -> dict[str, str]:
    """Open the case's pane, take its steps, check the fields show them; the form as typed."""
    tab, steps, expected = FORM_CASES[case]
    await app.main_screen.open_side_tab(tab)
    await settle(pilot)
    pane = calculator(app, tab)
    for action, field, text in steps:
        if action == "more":
            await pane.open_more()
            await settle(pilot)
            continue
        widget = pane.query_one(f"#field-{field}")
        if action == "type":
            assert isinstance(widget, Input)
            await type_into(pilot, widget, text)
        else:
            assert isinstance(widget, Select)
            widget.value = text
            await settle(pilot)
    typed = pane.values()
    assert {name: typed[name] for name in expected} == expected, case
    return typed


@pytest.mark.long
@pytest.mark.parametrize("cases", RUNS, ids=["+".join(run) for run in RUNS])
async def test_calculator_fields_come_back_after_a_switch_and_a_restart(
    tmp_path: Path, cases: list[str]
) -> None:
    assert sorted(case for run in RUNS for case in run) == sorted(FORM_CASES)
    tabs = [FORM_CASES[case][0] for case in cases]
    assert len(set(tabs)) == len(tabs)  # one case per pane
    app = make_app(progress_dir=tmp_path, language="en")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        typed = {tab: await fill(app, pilot, case) for tab, case in zip(tabs, cases, strict=True)}
        for tab in tabs:
            await wait_until(pilot, lambda tab=tab: saved_form(tmp_path, tab) == typed[tab])
        for name, language in (("中文", "zh"), ("English", "en")):
            await switch(app, pilot, name, language)
            # The pane open at the switch is rebuilt as it was; the others when shown again.
            for tab in reversed(tabs):
                if tab != tabs[-1]:
                    await app.main_screen.open_side_tab(tab)
                    await settle(pilot)
                assert calculator(app, tab).values() == typed[tab], tab
                # Nothing saved that the learner did not type: the form on disk is unchanged.
                assert saved_form(tmp_path, tab) == typed[tab], tab
            await app.main_screen.open_side_tab(tabs[-1])
            await settle(pilot)
    restarted = make_app(progress_dir=tmp_path, language="en")
    async with restarted.run_test(size=SIZE) as pilot:
        await settle(pilot)
        for tab in tabs:
            await restarted.main_screen.open_side_tab(tab)
            await settle(pilot)
            await restarted.workers.wait_for_complete()
            await settle(pilot)
            assert calculator(restarted, tab).values() == typed[tab], tab
    for tab in tabs:
        assert saved_form(tmp_path, tab) == typed[tab], tab


async def choose_other(pilot: Pilot[int], select: Select[str]) -> str:
    """Pick by keys, as the learner does, the last option that is not the Select's value now
    (the one above the last when the last is chosen already); return it."""
    before = select.value
    select.focus()
    await pilot.press("enter", "end", "enter")
    await pilot.pause()
    if select.value == before:
        await pilot.press("enter", "end", "up", "enter")
        await pilot.pause()
    assert select.value != before and isinstance(select.value, str), select.id
    return select.value


async def test_side_pane_choices_come_back_after_a_switch_and_a_restart(tmp_path: Path) -> None:
    """The Trade-offs and Diagrams panes' choices, both made in one app: each pane shows them
    again after each switch and after a restart."""
    tabs = ("tradeoffs", "diagrams")
    app = make_app(progress_dir=tmp_path, language="en")
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        chosen: dict[str, dict[str | None, str]] = {}
        for tab in tabs:
            tab_pane = await app.main_screen.open_side_tab(tab)
            await settle(pilot)
            chosen[tab] = {}
            for select in tab_pane.query(Select):
                assert select.id is not None
                chosen[tab][select.id] = await choose_other(pilot, select)
                await settle(pilot)
            assert chosen[tab], tab
        await app.workers.wait_for_complete()
        await settle(pilot)
        for name, language in (("中文", "zh"), ("English", "en")):
            place = app.main_screen.place()
            assert place is not None
            await switch(app, pilot, name, language)
            # The place as it was, the focus included: the last picker chosen, then the tab row
            # (the tabs opened below take it there).
            assert app.main_screen.place() == place
            for tab in tabs:
                tab_pane = await app.main_screen.open_side_tab(tab)
                await settle(pilot)
                shown = {select.id: select.value for select in tab_pane.query(Select)}
                assert shown == chosen[tab], tab
    restarted = make_app(progress_dir=tmp_path, language="en")
    async with restarted.run_test(size=SIZE) as pilot:
        await settle(pilot)
        for tab in tabs:
            tab_pane = await restarted.main_screen.open_side_tab(tab)
            await settle(pilot)
            shown = {select.id: select.value for select in tab_pane.query(Select)}
            assert shown == chosen[tab], tab


@pytest.mark.parametrize("size", [(60, 20), (80, 24), (120, 40)])
async def test_a_switch_keeps_the_side_pane_and_the_field_typed_in(
    tmp_path: Path, size: tuple[int, int]
) -> None:
    """A new learner's trial at 60x20: F2, 7B typed into params N, the language switched, then
    Y. The rebuilt screen showed the lesson (below 80 columns a restart shows the lesson
    first), the Y was refused and params N stayed 7B. The switch keeps the side pane and the
    field's focus at every size, so the next key lands in the field, and is saved."""
    app = make_app(progress_dir=tmp_path, language="en", autosave_delay=0.05)
    async with app.run_test(size=size) as pilot:
        await settle(pilot)
        await pilot.press("f2")
        await wait_until(pilot, lambda: bool(app.main_screen.query("#field-params")))
        await pilot.press("end", "backspace", "backspace", "7", "B")
        await wait_until(pilot, lambda: saved_form(tmp_path, "ledger").get("params") == "7B")
        await switch(app, pilot, "中文", "zh")
        screen = app.main_screen
        assert screen.arrangement.side
        params = screen.query_one("#field-params", Input)
        assert app.focused is params
        assert screen.query_one("LedgerPane").region.contains_region(params.region)
        await pilot.press("Y")
        await settle(pilot)
        assert params.value == "7BY"
        await wait_until(pilot, lambda: saved_form(tmp_path, "ledger").get("params") == "7BY")
