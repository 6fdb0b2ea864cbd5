"""A calculator's message names every field it mentions as the learner sees it: by the field's
label on the form (in the interface language, quoted) in the app, by its flag on the command
line; never by the engine's spec key (``layers``, ``seq``) on a form that labels it otherwise.
Every text field of the Ledger, Bubble and Collectives panes is given each kind of bad input in
both languages."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from textual.pilot import Pilot
from textual.widgets import Input, Static

from cli.main import main
from engine.errors import FieldName, InputError, quoted
from engine.i18n import set_language
from engine.ledger import INPUT_NAMES
from engine.linebreak import NO_BREAK_SPACE
from engine.progress import ProgressStore
from tests.pilot_helpers import paste_into, screen_lines, settle, shown, wait_until
from tui import strings
from tui.app import ShardbookApp, make_app
from tui.widgets.calculator import CalculatorPane, ResultView
from tui.widgets.tradeoffs import picker_error

CJK = re.compile(r"[\u3400-\u9fff\uff00-\uffef\u3000-\u303f]")
# A value pasted 2,003 characters long (past a float's range): quoted by its beginning only.
LONG_INPUT = "9" * 2003
BAD_INPUTS = ("", "0", "-1", "abc", "1e400", LONG_INPUT)
PANES = {"ledger": "LedgerPane", "bubble": "BubblePane", "collectives": "CollectivesPane"}


def test_an_error_names_other_fields_in_the_callers_words() -> None:
    error = InputError(
        "params",
        "give the parameter count, or the architecture ({missing} is missing)",
        missing=FieldName("layers"),
    )
    assert error.message == "give the parameter count, or the architecture (layers is missing)"
    assert str(error) == f"params: {error.message}"
    assert error.naming(lambda key: "--" + key).endswith("(--layers is missing)")
    assert error.for_field("--params").naming(str.upper).endswith("(LAYERS is missing)")
    # Without values the text is final: braces a message quotes stay as they are.
    assert InputError("shape", "{not a placeholder}").message == "{not a placeholder}"


def test_command_line_names_its_flags(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["--lang", "zh", "calc", "ledger", "--dp", "1"]) == 2
    assert "--params: 请给出参数量或模型结构（缺少 --layers）" in capsys.readouterr().err
    ledger = ["calc", "ledger", "--params", "1B", "--seq", "2048", "--layers", "24"]
    assert main([*ledger, "--hidden", "2048", "--heads", "16", "--tp", "3"]) == 2
    assert "--tp: must divide --heads (16); TP 3 does not" in capsys.readouterr().err


def spec_keys() -> set[str]:
    """Every name the engine gives a calculator input (form keys and spec fields)."""
    keys = {field.name for pane in CalculatorPane.__subclasses__() for field in pane.all_fields()}
    return keys | set(INPUT_NAMES) | {"num_microbatches", "size_bytes", "seq", "layers"}


def unnamed_keys(message: str, labels: set[str], led_by_label: bool = True) -> set[str]:
    """The spec keys ``message`` names outside the labels it quotes (and its leading label).
    A label's spaces may be no-break spaces (it is kept on one line): read as spaces."""
    message = message.replace(NO_BREAK_SPACE, " ")
    rest = message
    if led_by_label:
        head, _colon, rest = re.split("(: |：)", message, maxsplit=1)
        assert head in labels, f"not led by a field's label: {message!r}"
    for label in labels:
        rest = rest.replace(strings.FIELD_NAMED.format(label=label), "")
    keys = spec_keys()
    return {key for key in keys if re.search(rf"(?<![\w-]){re.escape(key)}(?![\w-])", rest)}


async def error_after(pilot: Pilot[int], pane: CalculatorPane, box: Input, text: str) -> str:
    await paste_into(pilot, box, text)
    error = pane.query_one(".calc-error", Static)
    return " ".join(shown(error, 300).split()) if error.display else ""


async def open_pane(app: ShardbookApp, pilot: Pilot[int], tab: str) -> CalculatorPane:
    await app.main_screen.open_side_tab(tab)
    await settle(pilot)
    pane = app.query_one(PANES[tab], CalculatorPane)
    if pane.MORE_FIELDS:
        await pane.open_more()
        await settle(pilot)
    return pane


@pytest.mark.parametrize("language", ["en", "zh"])
async def test_a_refused_long_value_is_quoted_by_its_beginning_and_kept_whole(
    tmp_path: Path, language: str
) -> None:
    """2,003 nines pasted into the Ledger's parameter count were quoted in full under the
    form: the message quotes its first characters and an ellipsis, led by the field's label;
    the field keeps every character, and the form is saved as typed."""
    app = make_app(progress_dir=tmp_path, autosave_delay=0.05, language=language)
    async with app.run_test(size=(80, 24)) as pilot:
        pane = await open_pane(app, pilot, "ledger")
        field = pane.query_one("#field-params", Input)
        error = await error_after(pilot, pane, field, LONG_INPUT)
        assert error.startswith(pane.label_of("params"))
        assert "9" * 31 + "…" in error and "9" * 33 not in error
        assert len(error) < 200
        assert field.value == LONG_INPUT
        await pilot.press("ctrl+q")
    saved = ProgressStore(tmp_path).load("S15").progress.forms["ledger"]
    assert saved["params"] == LONG_INPUT


def drawn_lines(widget: Static | ResultView) -> list[str]:
    """The lines ``widget`` draws at its width, as the learner sees them."""
    return [
        widget.render_line(y).text.replace(NO_BREAK_SPACE, " ").rstrip()
        for y in range(widget.size.height)
    ]


@pytest.mark.parametrize("size", [(80, 24), (120, 40)])
async def test_a_label_is_never_parted_from_its_symbol(
    tmp_path: Path, size: tuple[int, int]
) -> None:
    """In Chinese, the Ledger's message and the line listing the fields the activations need
    name the fields by their labels (`参数量 N`, `序列长度 s`); each label is drawn whole on one
    line (at 80x24 the list was broken as `“序列长度` / `s”、…`)."""
    app = make_app(progress_dir=tmp_path, autosave_delay=0.05, language="zh")
    async with app.run_test(size=size) as pilot:
        pane = await open_pane(app, pilot, "ledger")
        labels = [pane.label_of(name) for name in ("params", "layers", "seq", "hidden", "heads")]
        notes = pane.query_one(".calc-result", ResultView)
        error = pane.query_one(".calc-error", Static)
        await error_after(pilot, pane, pane.query_one("#field-params", Input), "")
        drawn = {"error": drawn_lines(error)}
        await paste_into(pilot, pane.query_one("#field-params", Input), "1B")
        await wait_until(pilot, lambda: "▸" in "".join(drawn_lines(notes)))
        drawn["notes"] = drawn_lines(notes)
        named = 0
        for where, lines in drawn.items():
            flat = "".join(lines).replace(" ", "")
            for label in labels:
                anywhere = flat.count(label.replace(" ", ""))
                whole = sum(line.count(label) for line in lines)
                assert whole == anywhere, (where, label, lines)
                named += anywhere
        assert named >= 6, drawn


@pytest.mark.parametrize(("language", "quote"), [("en", "'{}'"), ("zh", "“{}”")])
async def test_fields_are_quoted_as_typed_text_is_in_the_language(
    tmp_path: Path, language: str, quote: str
) -> None:
    """The Ledger's line listing the fields the activations need quotes their labels as every
    message of the language quotes (what was typed: ``'abc'`` in English, ``“abc”`` in Chinese);
    in English it had the Chinese ``“”``."""
    app = make_app(progress_dir=tmp_path, autosave_delay=0.05, language=language)
    async with app.run_test(size=(120, 40)) as pilot:
        pane = await open_pane(app, pilot, "ledger")
        notes = pane.query_one(".calc-result", ResultView)
        await wait_until(pilot, lambda: "▸" in "".join(drawn_lines(notes)))
        line = " ".join(line.strip() for line in drawn_lines(notes) if line.strip())
        label = pane.label_of("seq")
        assert quote.format(label) in line, line
        assert quoted("abc") == quote.format("abc")
        if language == "en":
            assert "“" not in line and "”" not in line, line


async def ledger_errors_name_fields_by_their_labels(app: ShardbookApp, pilot: Pilot[int]) -> None:
    """The Ledger's messages on screen as fields are pasted into, from its default form."""
    pane = await open_pane(app, pilot, "ledger")
    label = pane.label_of
    labels = {label(field.name) for field in pane.all_fields()}

    def box(name: str) -> Input:
        return pane.query_one(f"#field-{name}", Input)

    # The parameter count left empty, no architecture: the missing shape field by its label.
    error = await error_after(pilot, pane, box("params"), "")
    assert error.startswith(label("params"))
    assert strings.FIELD_NAMED.format(label=label("layers")) in error
    assert not unnamed_keys(error, labels)
    await paste_into(pilot, box("params"), "1B")
    # No seq: the line under the figures and the activations term list the fields to fill.
    wanted = [strings.FIELD_NAMED.format(label=label(k)) for k in ("seq", "layers", "hidden")]
    for view in pane.query(".calc-result, .calc-details"):
        text = " ".join(shown(view, 300).split())
        line = text[text.index(wanted[0]) - 30 : text.index(wanted[-1]) + 30]
        assert all(name in line for name in wanted), line
        assert not unnamed_keys(line, labels, led_by_label=False), line
    # seq without the architecture: every field the activations need, by its label.
    error = await error_after(pilot, pane, box("seq"), "2048")
    assert all(name in error for name in wanted), error
    assert not unnamed_keys(error, labels)
    # TP that does not divide the heads: the heads by their label.
    for name, value in (("layers", "24"), ("hidden", "2048"), ("heads", "16")):
        await paste_into(pilot, box(name), value)
    error = await error_after(pilot, pane, box("tp"), "3")
    assert error.startswith(label("tp"))
    assert strings.FIELD_NAMED.format(label=label("heads")) in error
    assert not unnamed_keys(error, labels)


@pytest.mark.parametrize("language", ["zh", "en"])
async def test_every_bad_input_is_named_by_the_forms_labels(tmp_path: Path, language: str) -> None:
    """Empty, zero, negative, text and an overflowing number in every text field of the
    Ledger, Bubble and Collectives forms, the others as they open: each message, as the pane
    words it, is led by a label of its form, names no field by its key (in English, no key
    with an underscore: the others are words too), shows no NaN or inf, and (in English) no
    Chinese. (The form's computation is called directly, as a key in the field calls it.)
    Then, in the same app, the Ledger's messages on screen as the learner pastes into its
    fields (:func:`ledger_errors_name_fields_by_their_labels`)."""
    app = make_app(progress_dir=tmp_path, autosave_delay=0.05, language=language)
    async with app.run_test(size=(160, 50)) as pilot:
        messages = 0
        for tab in PANES:
            pane = await open_pane(app, pilot, tab)
            labels = {pane.label_of(field.name) for field in pane.all_fields()}
            form = pane.values()
            for field in pane.all_fields():
                for bad in () if field.options else BAD_INPUTS:
                    try:
                        pane.compute({**form, field.name: bad})
                    except InputError as refused:
                        error = pane.error_text(refused)
                    else:
                        continue
                    messages += 1
                    where = f"{tab}.{field.name}={bad!r}: {error}"
                    unnamed = unnamed_keys(error, labels)
                    if language == "en":  # "zero", "heads" are English words too
                        unnamed = {key for key in unnamed if "_" in key}
                    assert not unnamed, where
                    assert not re.search(r"\b(nan|inf)\b", error, re.IGNORECASE), where
                    if bad in ("abc", "1e400"):  # what was typed, quoted as typed
                        assert quoted(bad) in error, where
                    if bad == LONG_INPUT:  # its beginning, never the whole of it
                        assert "9" * 31 + "…" in error and "9" * 33 not in error, where
                    assert language == "zh" or not CJK.search(error), where
        assert messages > 100
        await ledger_errors_name_fields_by_their_labels(app, pilot)


async def test_collectives_names_every_refused_field_at_once(tmp_path: Path) -> None:
    """R = 0 and S = 'abc' on the Collectives form: both fields are named under it at once, each
    led by its label, on screen at 80x24 (it named R alone, and S only once R was fixed); with
    R fixed, S alone; with both fixed, the figures: a ring all-reduce of 1 GB on 4 ranks at
    100 GB/s and 5 us per message takes 2·3·5 us + 2·(3/4)·1 GB / (100 GB/s) = 15.03 ms."""
    app = make_app(progress_dir=tmp_path, autosave_delay=0.05)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("f4", "f4")
        await wait_until(pilot, lambda: bool(app.main_screen.query("#field-ranks")))
        pane = app.main_screen.query_one("CollectivesPane", CalculatorPane)
        ranks, size = (pane.query_one(f"#field-{name}", Input) for name in ("ranks", "bytes"))
        await paste_into(pilot, ranks, "0")
        error = await error_after(pilot, pane, size, "abc")
        assert "ranks R: must be at least 1, got 0" in error, error
        assert "size S: 'abc' is not a number" in error, error
        lines = [line.strip() for line in drawn_lines(pane.query_one(".calc-error", Static))]
        assert lines[0] == "ranks R: must be at least 1, got 0", lines
        assert lines[1].startswith("size S: 'abc' is not a number"), lines
        await settle(pilot)
        on_screen = "\n".join(screen_lines(app))
        assert "ranks R: must be at least 1" in on_screen and "size S: 'abc'" in on_screen
        error = await error_after(pilot, pane, ranks, "4")
        assert error.startswith("size S: 'abc' is not a number") and "ranks R" not in error
        assert await error_after(pilot, pane, size, "1GB") == ""
        assert "15.03 ms" in shown(pane.query_one(".calc-result", ResultView))
        await pilot.press("ctrl+q")


async def test_bubble_names_every_refused_field_at_once(tmp_path: Path) -> None:
    """p = 0 and m = 'x' on the Bubble form: both named at once, each led by its label; with
    both fixed (p = 4, m = 8), 1F1B's bubble is (p - 1)/m = 3/8 of the ideal time (Narayanan
    et al. 2021, section 2.2), shown as 0.375."""
    app = make_app(progress_dir=tmp_path, autosave_delay=0.05)
    async with app.run_test(size=(80, 24)) as pilot:
        pane = await open_pane(app, pilot, "bubble")
        stages, micro_batches = (
            pane.query_one(f"#field-{name}", Input) for name in ("stages", "micro_batches")
        )
        await paste_into(pilot, stages, "0")
        error = await error_after(pilot, pane, micro_batches, "x")
        assert error.startswith("stages p: must be at least 1, got 0"), error
        assert "micro-batches m: 'x' is not a number" in error, error
        error = await error_after(pilot, pane, stages, "4")
        assert error.startswith("micro-batches m: 'x'") and "stages p" not in error, error
        assert await error_after(pilot, pane, micro_batches, "8") == ""
        assert "0.375" in shown(pane.query_one(".calc-result", ResultView))
        await pilot.press("ctrl+q")


async def test_ledger_names_every_refused_field_at_once(tmp_path: Path) -> None:
    """N = 'abc' and P = 0 on the Ledger form: both named at once; with both fixed (N = 7B,
    P = 1), mixed-precision Adam's model states are 16 bytes a parameter (ZeRO, Rajbhandari et
    al. 2020, section 3.1): 16 x 7e9 = 112 GB."""
    app = make_app(progress_dir=tmp_path, autosave_delay=0.05)
    async with app.run_test(size=(80, 24)) as pilot:
        pane = await open_pane(app, pilot, "ledger")
        params, dp = (pane.query_one(f"#field-{name}", Input) for name in ("params", "dp"))
        await paste_into(pilot, params, "abc")
        error = await error_after(pilot, pane, dp, "0")
        assert error.startswith("params N: 'abc' is not"), error
        assert "DP size P: must be at least 1, got 0" in error, error
        error = await error_after(pilot, pane, params, "7B")
        assert error.startswith("DP size P: must be at least 1") and "params N" not in error
        assert await error_after(pilot, pane, dp, "1") == ""
        assert "112.00" in shown(pane.query_one(".calc-result", ResultView))
        await pilot.press("ctrl+q")


def test_tradeoffs_names_its_pickers() -> None:
    error = InputError(
        "seq",
        "{model} takes at most {longest} tokens per sequence",
        model="llama2-7b",
        longest=4096,
    )
    # Each label is kept on one line: its spaces are no-break spaces.
    assert picker_error(error) == (
        "seq\xa0len\xa0s: llama2-7b takes at most 4096 tokens per sequence"
    )
    set_language("zh")
    assert picker_error(error).startswith("序列长度\xa0s：")


@pytest.mark.parametrize(
    ("language", "by_stages", "by_micro_batches"),
    [
        ("en", "stages p: 2*p*m", "micro-batches m: 2*p*m"),
        ("zh", "stage 数 p：2*p*m", "micro-batch 数 m：2*p*m"),
    ],
)
async def test_the_bubble_size_limit_is_said_on_the_field_edited(
    tmp_path: Path, language: str, by_stages: str, by_micro_batches: str
) -> None:
    """The simulator's limit is on p·m: its message is labelled by the one of them the learner
    changed (it was always labelled by m, even after an edit of p)."""
    app = make_app(progress_dir=tmp_path, language=language)
    async with app.run_test(size=(80, 24)) as pilot:
        await pilot.press("f3")
        await settle(pilot)
        pane = app.query_one("BubblePane", CalculatorPane)
        error = pane.query_one(".calc-error", Static)
        # 2·p·m = 2 × 2,000 × 1,000 = 4,000,000 ops, over 2^21 (the stages themselves, under
        # 16,384, are not what is refused), then 2 × 2,000 × 999.
        await paste_into(pilot, pane.query_one("#field-micro_batches", Input), "1000")
        await paste_into(pilot, pane.query_one("#field-stages", Input), "2000")
        assert shown(error).startswith(by_stages), shown(error)
        await paste_into(pilot, pane.query_one("#field-micro_batches", Input), "999")
        assert shown(error).startswith(by_micro_batches), shown(error)
