"""The interface in Chinese and English: the catalogs, how the language is chosen, and what the
screens show in each language.

The catalogs are checked against the code (every text marked for translation has a Chinese and an
English entry with the same placeholders; the committed ``.mo`` files are the ``.po`` files
compiled). The screens are driven with Pilot and read back as plain text: in Chinese no English
word of the interface may be left outside the lesson's own text (the lesson quotes English terms
such as activation and micro-batch; those are allowed, as are the keys' names and the field's
abbreviations listed below); in English no Chinese outside the lesson's text.
"""

from __future__ import annotations

import datetime as dt
import functools
import io
import json
import random
import re
import string
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest
import yaml
from babel.messages.extract import extract_from_dir
from babel.messages.mofile import write_mo
from babel.messages.pofile import read_po
from rich.console import Console
from textual.command import CommandPalette
from textual.containers import ScrollableContainer
from textual.pilot import Pilot
from textual.widgets import OptionList, Select

from cli.main import choose_cli_language, main
from engine import sources
from engine.collectives import ALGORITHMS, OPERATIONS
from engine.diagrams import (
    COLLECTIVE_NAMES,
    STRATEGY_NAMES,
    collective_diagram,
    collective_step_count,
    strategy_diagram,
)
from engine.i18n import (
    LOCALE_DIR,
    choose_language,
    current_language,
    fill,
    gettext,
    language_from_environment,
    language_from_locale,
    ngettext,
    set_language,
)
from engine.lab import install_command
from engine.ledger import (
    DTYPE_BYTES,
    OPTIMIZER_STATE_BYTES,
    LedgerSpec,
    compute_ledger,
)
from engine.lesson import Lesson
from engine.linebreak import cell_width
from engine.model_presets import get_preset, model_presets
from engine.pipeline import SCHEDULES
from engine.progress import LessonProgress
from engine.quiz import QuizItem, make_drill
from engine.search import learner_places
from engine.session import describe_answer
from engine.settings import SettingsStore
from tests.pilot_helpers import result_text, screen_lines, wait_until
from tui import strings
from tui.app import ShardbookApp, make_app
from tui.screens.help import HelpScreen
from tui.screens.main import MainScreen
from tui.screens.quiz import QuizScreen
from tui.widgets.ledger import LedgerPane
from tui.widgets.notes import SelfCheckBox
from tui.widgets.reader import BrokenText

ROOT = Path(__file__).resolve().parents[1]
LESSON = ROOT / "content" / "S15.yaml"
# The source the lesson was transcribed from: its header labels (内容类型, 总路线：Day 105 / 360)
# are shown as the source writes them, from engine/lesson.py.
SOURCE = ROOT / "content" / "source" / "S15.txt"
NOW = dt.datetime(2026, 12, 7, 10, 15, tzinfo=dt.UTC)
CJK = re.compile(r"[\u3000-\u303f\u3400-\u9fff\uff00-\uffef]+")
LATIN_WORD = re.compile(r"[A-Za-z][A-Za-z'-]*[A-Za-z]")

# English words a Chinese screen may show: key names, the program, file formats, units and the
# field's abbreviations and names, written as their sources write them.
KEEP_IN_ZH = {
    *("ctrl", "shift", "esc", "escape", "enter", "Enter", "Tab", "tab", "home", "end", "End"),
    *(
        "shardbook",
        "Markdown",
        "JSON",
        "HTML",
        "SVG",
        "Anki",
        "FSRS",
        "TeX",
        "ZeRO",
        "GB",
        "GiB",
        "Gb",  # a network link in gigabits per second, as NICs are sold (400 Gb/s)
        "KV",
    ),
    *("NVLink", "GPU", "GPUs", "LoRA", "QLoRA", "FFN", "seq", "heads", "hidden", "top-k"),
    *("palette", "shell", "fg"),
    "lab",  # the optional extra as pip names it (.[lab])
    "English",  # the palette's switch names each language in its own words
    # The side panes' symbols and the names their sources use: NCCL-tests' algbw and busbw,
    # the MPICH notes' alpha-beta model, the op times t_F, t_B, t_W of the Zero-Bubble paper,
    # the lab's model and optimizer, time units.
    *("algbw", "busbw", "alpha", "beta", "alpha-beta", "tF", "tB", "tW", "AdamW", "GPT"),
    *("ms", "us"),
    *("Megatron", "Playbook", "GPipe", "Zero-Bubble"),  # the Bubble's conventions, by source
    # The diagrams' terms: attention's query, key and value, LayerNorm, sequence parallelism,
    # MoE's router, a collective's root, PyTorch's DDP (the parameter count is Ψ in Chinese, as
    # the lesson writes it; Psi only in the English diagrams, which are ASCII).
    *("query", "key", "value", "LN", "LayerNorm", "SP", "router", "root", "DDP"),
}
# What a pane draws with letters: the Ledger's bar (P, G, M, O, A, B, N) and the Bubble's
# timeline (F, B, W, their lower-case runs).
DRAWING = re.compile(r"[PGMOABN]+|[FBWfbw]+")


@functools.cache
def identifiers() -> set[str]:
    """Values a field takes and the sources' own words, shown as they are in both languages:
    the sources' titles (never translated), the schedules, algorithms and the model presets'
    names."""
    cited = [
        citation
        for value in vars(sources).values()
        if isinstance(value, str | tuple)
        for citation in sources.flattened(value)
        if isinstance(citation, str) and citation
    ]
    names = [*cited, *map(sources.ascii_text, cited), *OPERATIONS]
    # The conventions are shown by their labels and the model presets by their titles (a model's
    # name: Llama 2 7B), not by the ids --convention and --model take.
    names += [*SCHEDULES, *OPTIMIZER_STATE_BYTES, *DTYPE_BYTES]
    names += [preset.title for preset in model_presets().values()]
    names += [algorithm for choices in ALGORITHMS.values() for algorithm in choices]
    # A shell command to type (the Lab without torch: how to install the extra).
    names += [
        install_command(checkout=True),
        install_command(checkout=False, prefix="/home/u/.local/share/pipx/venvs/shardbook"),
        install_command(checkout=False, prefix="/home/u/.local/share/uv/tools/shardbook"),
        install_command(checkout=False, prefix="/v", executable="/v/bin/python"),
    ]
    return set(LATIN_WORD.findall(" ".join(names)))


@functools.cache
def lesson_latin_words() -> set[str]:
    """Every Latin word of the lesson (its text quotes the field's English terms)."""
    return set(LATIN_WORD.findall(lesson_text()))


@functools.cache
def lesson_text() -> str:
    """The lesson's own text: every string value of its YAML file and its source text (read
    once: the files do not change during a run, and each screen checked reads them)."""

    def strings_of(node: object) -> Iterator[str]:
        if isinstance(node, str):
            yield node
        elif isinstance(node, dict):
            for value in node.values():
                yield from strings_of(value)
        elif isinstance(node, list):
            for value in node:
                yield from strings_of(value)

    lesson = yaml.safe_load(LESSON.read_text(encoding="utf-8"))
    return "\n".join([*strings_of(lesson), SOURCE.read_text(encoding="utf-8")])


def screen_text(app: ShardbookApp) -> str:
    """What the terminal shows now, as plain text (read from Textual's SVG screenshot)."""
    return "\n".join(screen_lines(app))


def english_left(text: str) -> set[str]:
    """The English words of ``text`` that are not the lesson's, not kept (:data:`KEEP_IN_ZH`,
    :func:`identifiers`), not a single symbol and not a drawing; a word cut by the edge of its
    column (``Playbo…``) counts as the word it begins, one whose start a dialog's edge hides
    (``█eta``) as the word it ends."""
    allowed = KEEP_IN_ZH | lesson_latin_words() | identifiers()
    left = set()
    # A name with an underscore is code or a symbol (largest_layer_params, Psi_shared, T_step).
    text = re.sub(r"\w*_\w*", " ", text)
    for match in LATIN_WORD.finditer(text):
        word = match.group()
        if word in allowed or re.fullmatch(r"[A-Za-z]\d*", word) or DRAWING.fullmatch(word):
            continue
        cut = text[match.end() : match.end() + 1] == "…"
        if cut and any(kept.startswith(word) for kept in allowed):
            continue
        # The end of a word behind a dialog, its start hidden by the dialog's edge.
        hidden = text[max(0, match.start() - 1) : match.start()] in ("█", "▌")
        if hidden and any(kept.endswith(word) for kept in allowed):
            continue
        left.add(word)
    return left


def chinese_left(text: str) -> set[str]:
    lesson = lesson_text()
    return {run for run in CJK.findall(text) if run not in lesson}


# ----------------------------------------------------------------- the catalogs
def catalog(locale: str):  # type: ignore[no-untyped-def]
    path = LOCALE_DIR / locale / "LC_MESSAGES" / "shardbook.po"
    with path.open("rb") as file:
        return read_po(file, locale=locale)


def fields(text: str) -> list[str]:
    return sorted(name for _, name, _, _ in string.Formatter().parse(text) if name is not None)


@functools.cache
def marked_messages() -> frozenset[str]:
    """Every text the code marks for translation (``N_``, ``gettext``), as Babel extracts it
    (once: both locales' tests compare against the same sources)."""
    found: set[str] = set()
    for folder in ("engine", "tui", "cli"):
        for _file, _line, message, _comments, _context in extract_from_dir(ROOT / folder):
            found.update(message if isinstance(message, tuple) else (message,))
    return frozenset(message for message in found if message)


def catalog_entries(locale: str) -> dict[str, tuple[str, ...]]:
    """Each msgid (a plural entry's singular and plural both) -> its translation's forms."""
    entries: dict[str, tuple[str, ...]] = {}
    for message in catalog(locale):
        if message.id:
            forms = message.string if isinstance(message.string, tuple) else (message.string,)
            ids = message.id if isinstance(message.id, tuple) else (message.id,)
            entries.update(dict.fromkeys(ids, tuple(forms)))
    return entries


@pytest.mark.parametrize("locale", ["zh_CN", "en"])
def test_every_marked_text_has_a_translation_with_the_same_placeholders(locale: str) -> None:
    entries = catalog_entries(locale)
    missing = sorted(marked_messages() - entries.keys())
    assert not missing, f"not in {locale}: run pybabel extract and update (README): {missing[:5]}"
    empty = sorted(msgid for msgid, forms in entries.items() if not all(forms))
    assert not empty, f"{locale}: no translation for {empty[:5]}"
    different = [
        msgid
        for msgid, forms in entries.items()
        if any(fields(msgid) != fields(form) for form in forms)
    ]
    assert not different, f"{locale}: placeholders differ in {different[:5]}"


@pytest.mark.parametrize(("locale", "forms"), [("zh_CN", 1), ("en", 2)])
def test_a_count_takes_the_languages_plural_forms(locale: str, forms: int) -> None:
    """A text with a count has an entry per plural form of the language (GNU gettext's
    Plural-Forms: English two, one and other; Chinese one), never an "(s)" in the text."""
    plurals = [message for message in catalog(locale) if isinstance(message.id, tuple)]
    assert plurals, "no plural entry: a count is written with ngettext"
    assert all(len(message.string) == forms for message in plurals)
    with_s = [
        message.id
        for message in catalog(locale)
        if isinstance(message.id, str) and re.search(r"[a-z]\((?:s|es)\)", message.id)
    ]
    assert with_s == []


def test_counts_read_in_the_right_form() -> None:
    assert strings.search_count(1) == "1 match"
    assert strings.search_count(3) == "3 matches"
    assert strings.plan_session("5 min", 1, 2) == (
        "This session: 5 min, 1 step finished, 2 answers written."
    )
    set_language("zh")
    assert strings.search_count(1) == "1 处匹配"
    assert strings.search_count(3) == "3 处匹配"


def test_english_catalog_is_the_source_text() -> None:
    assert all(message.string == message.id for message in catalog("en") if message.id)


def test_english_text_has_no_chinese_punctuation() -> None:
    """An English message (no Chinese in it) is punctuated the English way: a full-width colon
    or semicolon belongs to the Chinese catalog (``my status: …``, not ``my status：…``)."""
    full_width = [
        message.id
        for message in catalog("en")
        if message.id
        and not re.search(r"[\u3400-\u9fff]", str(message.id))
        and re.search(r"[：；，。（）]", str(message.id))
    ]
    assert full_width == []


def test_chinese_catalog_translates() -> None:
    """A Chinese entry is Chinese: only a few (keys, units, formulas) may equal the English."""
    entries = [message for message in catalog("zh_CN") if message.id]
    same = [message.id for message in entries if message.string == message.id]
    assert len(same) < len(entries) // 10, same
    assert gettext("Quiz") == "Quiz"
    set_language("zh")
    assert gettext("Quiz") == "测验"
    assert gettext("saved {time}").format(time="10:15") == "已保存 10:15"


def test_the_english_catalog_is_its_msgids() -> None:
    """English is the source language and is not looked up (engine.i18n reads no catalog for
    it): its catalog must say what the code says, or an English text changed only in the
    catalog would never be shown."""
    entries = [message for message in catalog("en") if message.id]
    assert len(entries) > 1000
    changed = [
        message.id
        for message in entries
        if (message.string if isinstance(message.id, str) else tuple(message.string)) != message.id
    ]
    assert changed == []
    assert ngettext("{count} step", "{count} steps", 1) == "{count} step"
    assert ngettext("{count} step", "{count} steps", 2) == "{count} steps"
    assert ngettext("{count} step", "{count} steps", 0) == "{count} steps"


@pytest.mark.parametrize("locale", ["zh_CN", "en"])
def test_compiled_catalogs_are_the_po_files(locale: str) -> None:
    compiled = io.BytesIO()
    write_mo(compiled, catalog(locale))
    shipped = (LOCALE_DIR / locale / "LC_MESSAGES" / "shardbook.mo").read_bytes()
    assert shipped == compiled.getvalue(), "run pybabel compile -d engine/locale -D shardbook"


def test_every_interface_string_constant_is_in_the_catalog() -> None:
    """A constant of tui/strings.py added without N_ would be shown in English in Chinese."""
    entries = {message.id for message in catalog("zh_CN") if message.id}

    def texts(value: object) -> Iterator[str]:
        if isinstance(value, str):
            yield value
        elif isinstance(value, tuple):
            for item in value:
                yield from texts(item)
        elif isinstance(value, dict):
            for item in value.values():
                yield from texts(item)

    kept = {strings.APP_TITLE, "{need}", "", *strings.STATE_GLYPHS.values()}
    untranslated = sorted(
        text
        for value in vars(strings.msgids).values()
        for text in texts(value)
        if text not in entries and text not in kept
    )
    assert not untranslated, untranslated


def test_strings_are_translated_when_read() -> None:
    assert strings.TAB_LEDGER == "Ledger"
    set_language("zh")
    assert strings.TAB_LEDGER == "账本"
    assert strings.TOO_SMALL[-2] == "需要 {need}"
    assert strings.STEP_SAY["read"].startswith("读一读")
    assert strings.msgids.TAB_LEDGER == "Ledger"


def test_diagrams_in_chinese_keep_their_columns() -> None:
    """Every strategy diagram and every step of every collective's data flow, in Chinese: no
    English left outside the field's terms, and each line of the rank boxes as wide in terminal
    cells as in English (a Chinese character takes two cells), so the boxes still line up."""
    english = {name: strategy_diagram(name) for name in STRATEGY_NAMES}
    set_language("zh")
    for name in STRATEGY_NAMES:
        text = strategy_diagram(name)
        assert english_left(text) == set(), name
        boxes = [line for line in text.splitlines() if line.startswith(("|", "+"))]
        english_boxes = [line for line in english[name].splitlines() if line.startswith(("|", "+"))]
        assert [cell_width(line) for line in boxes] == [cell_width(line) for line in english_boxes]
        assert all(line.count("|") == 8 for line in boxes if line.startswith("|")), name
        # A collective's bus names its phase after a full-width comma: (1) all-reduce，反向.
        buses = [line for line in text.splitlines() if re.search(r"-- \(\d\) ", line)]
        assert all("，" in line and ", " not in line for line in buses), (name, buses)
    assert "(1) all-reduce，反向" in strategy_diagram("dp")
    assert "每步 2Ψ 个元素" in strategy_diagram("dp")
    for op in COLLECTIVE_NAMES:
        for step in range(collective_step_count(op, 5) + 1):
            assert english_left(collective_diagram(op, step, 5)) == set(), (op, step)


def test_ledger_result_in_chinese() -> None:
    """The Ledger's notes and the labels of its formulas in Chinese (the formulas' own symbols
    and the sources stay as written): ZeRO-3 with DeepSpeed's estimator and offload, uneven
    pipeline stages."""
    set_language("zh")
    deepspeed = compute_ledger(
        LedgerSpec(params=7e9, dp=8, zero_stage=3, convention="deepspeed", offload="optimizer")
    )
    assert "收集的最大层已计入参数和梯度" in deepspeed.terms[-1].formula
    uneven = compute_ledger(
        LedgerSpec(params=7e9, layers=32, pp=3, dp=2, zero_stage=1, convention="megatron")
    )
    assert "32 层分到 3 个 stage 不均匀：数字对应第一个 stage，共 11 层，负载最重" in uneven.notes
    for result in (deepspeed, uneven):
        assert english_left("\n".join(result.notes)) == set()
        assert all(term.formula for term in result.terms)


# ----------------------------------------------------------------- choosing the language
@pytest.mark.parametrize(
    ("value", "language"),
    [
        ("zh_CN.UTF-8", "zh"),
        ("zh_TW", "zh"),
        ("zh", "zh"),
        ("en_US.UTF-8", "en"),
        ("C", "en"),
        ("POSIX", "en"),
        ("C.UTF-8", "en"),
        ("fr_FR.UTF-8", None),
        ("fr_FR:zh_CN:en", "zh"),
        ("", None),
    ],
)
def test_language_from_a_locale_name(value: str, language: str | None) -> None:
    assert language_from_locale(value) == language


def test_locale_variables_in_gettext_order() -> None:
    """GNU gettext's order (Python's gettext.find): LANGUAGE, LC_ALL, LC_MESSAGES, LANG."""
    assert language_from_environment({"LANG": "zh_CN.UTF-8"}) == "zh"
    assert language_from_environment({"LANG": "zh_CN.UTF-8", "LC_MESSAGES": "en_US"}) == "en"
    assert language_from_environment({"LC_MESSAGES": "en_US", "LC_ALL": "zh_CN"}) == "zh"
    assert language_from_environment({"LC_ALL": "en_US", "LANGUAGE": "zh_CN"}) == "zh"
    assert language_from_environment({}) is None


def test_flag_then_setting_then_locale() -> None:
    chinese = {"LANG": "zh_CN.UTF-8"}
    assert choose_language("en", "zh", chinese) == "en"
    assert choose_language(None, "en", chinese) == "en"
    assert choose_language(None, "auto", chinese) == "zh"
    assert choose_language(None, "auto", {}) == "en"


def test_unknown_language_is_refused() -> None:
    with pytest.raises(ValueError, match="language"):
        set_language("fr")


# ----------------------------------------------------------------- the command line
def test_command_line_help_and_errors_in_chinese(capsys: pytest.CaptureFixture[str]) -> None:
    """``--lang zh``: argparse's own words (usage, the help flag, a missing argument) and the
    command's help and errors in Chinese; flags, values and JSON keys unchanged."""
    with pytest.raises(SystemExit):
        main(["--lang", "zh", "calc", "bubble", "--help"])
    help_text = capsys.readouterr().out
    assert help_text.startswith("用法：shardbook calc bubble")
    assert "显示此帮助并退出" in help_text
    assert "流水线 stage 数 p" in help_text
    assert "show this help message" not in help_text
    assert "pipeline stages p" not in help_text
    with pytest.raises(SystemExit):
        main(["--lang", "zh", "diagram"])
    assert "缺少必需的参数：NAME" in capsys.readouterr().err
    assert main(["--lang", "zh", "calc", "bubble", "--stages", "4"]) == 2
    assert "--schedule: 是必需的：gpipe" in capsys.readouterr().err
    assert main(["--lang", "zh", "calc", "bubble", "--schedule", "gpipe", "--stages", "4",
                 "--micro-batches", "8", "--json"]) == 0  # fmt: skip
    assert set(json.loads(capsys.readouterr().out)) >= {"bubble_fraction", "micro_batches"}


def test_command_line_reads_the_saved_language(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """No --lang: the ``language`` setting of the progress folder, as in the app; --lang over
    it; the locale when the setting is ``auto``."""
    (tmp_path / "settings.yaml").write_text("schema_version: 1\nlanguage: zh\n", encoding="utf-8")
    folder = ["--progress-dir", str(tmp_path)]
    assert choose_cli_language(folder) == "zh"
    assert choose_cli_language(["--lang", "en", *folder]) == "en"
    with pytest.raises(SystemExit):
        main([*folder, "lessons", "--help"])
    assert "显示此帮助并退出" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        main([*folder, "--help"])
    assert "列出课程及其状态" in capsys.readouterr().out
    (tmp_path / "settings.yaml").write_text("schema_version: 1\nlanguage: auto\n", encoding="utf-8")
    assert choose_cli_language(folder) == "en"
    (tmp_path / "settings.yaml").write_text("[not a mapping", encoding="utf-8")
    assert choose_cli_language(folder) == "en"
    assert (tmp_path / "settings.yaml").exists()  # read only: nothing moved aside


# ----------------------------------------------------------------- the screens
async def settle(pilot: Pilot[int]) -> None:
    for _ in range(3):
        await pilot.pause()


SIDE_TABS = ("ledger", "bubble", "diagrams", "collectives", "tradeoffs", "lab")


async def side_pane_pages(app: ShardbookApp, pilot: Pilot[int]) -> AsyncIterator[tuple[str, str]]:
    """Each side tab shown in turn, scrolled a page at a time from its top to its end: the tab
    and what the terminal shows on each page."""
    for tab in SIDE_TABS:
        tab_pane = await app.main_screen.open_side_tab(tab)
        await settle(pilot)
        await app.workers.wait_for_complete()
        await settle(pilot)
        scrollers = tab_pane.query(ScrollableContainer)
        if not scrollers:  # the Lab without torch: one hint, how to install the extra
            yield tab, screen_text(app)
            continue
        scroller = scrollers.first()
        scroller.scroll_home(animate=False)
        await settle(pilot)
        while True:
            yield tab, screen_text(app)
            if scroller.scroll_y >= scroller.max_scroll_y:
                break
            scroller.scroll_page_down(animate=False)
            await settle(pilot)


async def test_lang_zh_screens_show_no_english_interface_text(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr("tui.app.utc_now", lambda: NOW)
    app = make_app(progress_dir=tmp_path, language="zh")
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        assert current_language() == "zh"
        assert "课程" in screen_text(app)
        assert english_left(screen_text(app)) == set()
        await pilot.press("ctrl+n")  # the first step: the cursor in the reading pane
        await settle(pilot)
        assert english_left(screen_text(app)) == set()
        for index, section in enumerate(app.sections, start=1):  # each section's first page
            app.main_screen.goto(index)
            await settle(pilot)
            assert english_left(screen_text(app)) == set(), section.title
        pages = 0
        async for tab, text in side_pane_pages(app, pilot):
            assert english_left(text) == set(), tab
            pages += 1
        assert pages > len(SIDE_TABS)  # the panes scrolled: their results were read too
        await pilot.press("f1")
        await settle(pilot)
        assert isinstance(app.screen, HelpScreen)
        assert english_left(screen_text(app)) == set()
        await pilot.press("escape", "ctrl+p")
        await settle(pilot)
        assert isinstance(app.screen, CommandPalette)
        assert english_left(screen_text(app)) == set()
        await pilot.press("escape", "f12")
        await settle(pilot)
        assert isinstance(app.screen, QuizScreen)
        assert english_left(screen_text(app)) == set()


async def test_lang_zh_step_messages_name_each_step_in_chinese(tmp_path: Path) -> None:
    """What ctrl+n says at each exercise and self-check step (a note's strategy included)."""
    app = make_app(progress_dir=tmp_path, language="zh")
    async with app.run_test(size=(120, 40), notifications=True) as pilot:
        await settle(pilot)
        guide = app.main_screen.guide
        said = []
        for step in guide.plan().steps:
            if step.kind in ("exercise", "self-check"):
                await guide.go_to_step(step.id)
                await settle(pilot)
                said += [str(toast.render()) for toast in app.screen.query("Toast")]
        assert any("练习 2·" in text for text in said), said
        assert any("自检 1" in text for text in said), said
        assert [text for text in said if english_left(text)] == []


@pytest.mark.long
async def test_lang_en_screens_show_no_chinese_outside_the_lesson(tmp_path: Path) -> None:
    app = make_app(progress_dir=tmp_path, language="en")
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        assert chinese_left(screen_text(app)) == set()
        async for tab, text in side_pane_pages(app, pilot):
            assert chinese_left(text) == set(), tab
        for key in ("f1", "escape", "ctrl+p", "escape", "f12"):
            await pilot.press(key)
            await settle(pilot)
            assert chinese_left(screen_text(app)) == set(), key


async def test_chinese_locale_opens_in_chinese_and_palette_switches(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``LANG=zh_CN.UTF-8`` and no setting: Chinese. The palette's language command switches to
    English and back, and the choice is saved in settings.yaml."""
    monkeypatch.setenv("LANG", "zh_CN.UTF-8")
    app = make_app(progress_dir=tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        await settle(pilot)
        assert current_language() == "zh"
        assert "f12 测验" in screen_text(app)
        await pilot.press("ctrl+p", *"English", "enter")
        await settle(pilot)
        assert current_language() == "en"
        assert isinstance(app.screen, MainScreen)
        assert "f12 Quiz" in screen_text(app)
        assert SettingsStore(tmp_path).load().get("language") == "en"
        await pilot.press("ctrl+p", *"中文", "enter")
        await settle(pilot)
        assert current_language() == "zh"
        assert "f12 测验" in screen_text(app)
        assert SettingsStore(tmp_path).load().get("language") == "zh"


async def test_switching_keeps_the_place_and_unsaved_text(tmp_path: Path) -> None:
    """Typed text not yet saved, a section and the side pane: the same after the switch, and
    the text is saved afterwards."""
    app = make_app(progress_dir=tmp_path, language="en", autosave_delay=30)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        screen = app.main_screen
        index = 1 + next(i for i, s in enumerate(app.sections) if s.kind == "self-check")
        screen.goto(index)
        await settle(pilot)
        box = screen.query(SelfCheckBox).first()
        box.text_area.focus()
        await pilot.press(*"ZeRO-2 分片梯度")
        await settle(pilot)
        assert app.dirty
        await pilot.press("f4")  # the Diagrams tab
        await settle(pilot)
        before = screen.place()
        await pilot.press("ctrl+p", *"中文", "enter")
        await settle(pilot)
        assert app.main_screen is not screen
        assert app.screen is app.main_screen
        await wait_until(pilot, lambda: app.main_screen.place() == before)
        new_box = app.main_screen.query(SelfCheckBox).first()
        assert new_box.text_area.text == "ZeRO-2 分片梯度"
        assert app.dirty
        await pilot.press("ctrl+s")
        await settle(pilot)
        assert not app.dirty
    saved = (tmp_path / "S15.yaml").read_text(encoding="utf-8")
    assert "ZeRO-2 分片梯度" in saved


@pytest.mark.parametrize(
    "command",
    [
        ["calc", "ledger", "--params", "-1"],
        ["calc", "bubble", "--schedule", "gpipe", "--stages", "0", "--micro-batches", "8"],
        ["plan", "S15", "--content-dir", "/no/such/folder"],
        ["calc", "collective", "--op", "all-reduce", "--ranks", "0", "--bytes", "1"],
    ],
)
def test_lang_after_the_command_is_accepted(
    command: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    """``--lang`` after the command works as before it (the app's global option on every
    command): the error in Chinese with ``zh``, in English with ``en``, exit 2 either way; the
    value given after the command wins over one given before it."""
    assert main([*command, "--lang", "zh"]) == 2
    chinese = capsys.readouterr().err
    assert re.search(r"[\u4e00-\u9fff]", chinese) and "--lang" not in chinese, chinese
    assert main(["--lang", "zh", *command, "--lang", "en"]) == 2
    english = capsys.readouterr().err
    assert not re.search(r"[\u4e00-\u9fff]", english) and "--lang" not in english, english
    assert main([*command, "--lang", "en"]) == 2
    assert capsys.readouterr().err == english


def test_chinese_command_help_fits_the_terminal_by_cells(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """``COLUMNS=80``: argparse's help is wrapped by terminal cells (a Chinese character takes
    two), so no line is wider than the terminal; the headings end with the full-width colon, as
    ``用法：`` does."""
    from rich.cells import cell_len

    monkeypatch.setenv("COLUMNS", "80")
    for command in (["calc", "ledger"], ["calc", "bubble"], ["calc", "collective"], ["plan"], []):
        with pytest.raises(SystemExit):
            main(["--lang", "zh", *command, "--help"])
        text = capsys.readouterr().out
        assert text.startswith("用法：")
        assert "选项：" in text and "选项:" not in text
        # Not one, but for a choice list argparse cannot break (`--op {all-reduce,...}`), as
        # wide in English.
        with pytest.raises(SystemExit):
            main(["--lang", "en", *command, "--help"])
        english = {line.strip() for line in capsys.readouterr().out.splitlines()}
        wide = [line for line in text.splitlines() if cell_len(line) > 80]
        assert [line for line in wide if line.strip() not in english] == [], command
        lines = text.partition("\n\n")[0].splitlines()
        if len(lines) > 1:  # the wrapped lines start under the first option, by cells
            first = lines[0].index(" [")
            assert cell_len(lines[0][:first]) + 1 == len(lines[1]) - len(lines[1].lstrip())


# ----------------------------------------------------------------- Textual's texts and the ids
async def test_palette_says_no_match_in_chinese(tmp_path: Path) -> None:
    """A query that finds nothing: Textual's palette writes its "No matches found" line in
    English inside its own code; here it is in the interface language."""
    app = make_app(progress_dir=tmp_path, language="zh")
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.press("ctrl+p", *"zzqqxx")
        palette = app.screen
        assert isinstance(palette, CommandPalette)
        command_list = palette.query_one(OptionList)
        await wait_until(
            pilot,
            lambda: bool(
                command_list.option_count and command_list.get_option_at_index(0).disabled
            ),
        )
        await settle(pilot)
        text = screen_text(app)
        assert "没有匹配的命令" in text
        assert english_left(text) == {"zzqqxx"}  # the query typed


async def test_select_list_key_in_chinese(tmp_path: Path) -> None:
    """An open Select list shows its escape key in the footer: Textual's own description, in
    the interface language."""
    app = make_app(progress_dir=tmp_path, language="zh")
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        pane = await app.main_screen.open_side_tab("ledger")
        await settle(pilot)
        pane.query_one("#field-convention", Select).focus()
        await pilot.press("enter")
        await settle(pilot)
        text = screen_text(app)
        assert "关闭列表" in text and "Dismiss" not in text


async def test_conventions_are_shown_by_their_labels_and_stored_by_id(tmp_path: Path) -> None:
    """The Ledger's convention picker shows each convention by name in the interface language
    (the ZeRO paper's, Megatron-LM's, DeepSpeed's), while the form, the settings and
    ``--convention`` keep the ids."""
    app = make_app(progress_dir=tmp_path, language="zh")
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        pane = await app.main_screen.open_side_tab("ledger")
        await settle(pilot)
        picker = pane.query_one("#field-convention", Select)
        assert picker.value == "zero-paper"
        assert [str(option.prompt) for option in picker.query_one(OptionList).options] == [
            "ZeRO 论文",
            "Megatron-LM",
            "DeepSpeed",
        ]
        text = screen_text(app)
        assert "ZeRO 论文" in text
        assert not re.search(r"zero-paper|megatron|deepspeed", text)
        pane.query_one("#field-params").focus()
        await pilot.press("ctrl+t")  # the three side by side
        await settle(pilot)
        text = result_text(pane.query_one(LedgerPane))
        assert "Megatron-LM" in text and not re.search(r"zero-paper|megatron\b|deepspeed", text)
        assert pane.query_one(LedgerPane).values()["convention"] == "zero-paper"


def test_a_preset_that_describes_its_model_is_translated() -> None:
    """A model's own name is the same in both languages; the lesson's 1B-class GPT is a
    description and is shown in Chinese (here in the drill that asks about it)."""
    set_language("zh")
    assert get_preset("llama2-7b").shown_title == "Llama 2 7B"
    drill = make_drill(
        QuizItem("drill:preset-memory", "S15", "drill", "preset-memory", "preset-memory"),
        {"model": "lesson-1b", "dp": 8, "zero": 2},
    )
    assert "本课的 1B 级 GPT" in drill.prompt
    assert "lesson's" not in drill.prompt
    set_language("en")
    assert get_preset("lesson-1b").shown_title == "the lesson's 1B-class GPT (GPT-3 XL shape)"


def test_where_labels_in_chinese(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    assert main(["--lang", "zh", "where", "--progress-dir", str(tmp_path)]) == 0
    labels = [line.split("\t")[0] for line in capsys.readouterr().out.splitlines()]
    assert labels == ["课程", "进度", "设置", "缓存"]
    assert main(["--lang", "en", "where", "--progress-dir", str(tmp_path)]) == 0
    labels = [line.split("\t")[0] for line in capsys.readouterr().out.splitlines()]
    assert labels == ["content", "progress", "settings", "cache"]


def test_exercise_notes_are_named_in_the_interface_language(lesson: Lesson) -> None:
    """The session summary and the search name a strategy's exercise note by the strategy's
    title and the note's question in the interface language, not by the strategy's id."""
    progress = LessonProgress("S15", notes={"ex2.dp.split": "the batch"})
    set_language("zh")
    assert describe_answer(lesson, "ex2.dp.split") == "练习 2，DP - 数据并行：哪一维被切分"
    [hit] = [place for place in learner_places(lesson, progress) if place.item_id == "ex2.dp.split"]
    assert hit.label == "DP - 数据并行：哪一维被切分"
    set_language("en")
    assert (
        describe_answer(lesson, "ex2.dp.split")
        == "exercise 2, DP - data parallel: which dimension is split"
    )


# ----------------------------------------------------------------- formulas and punctuation
def test_formula_words_in_chinese() -> None:
    """A parameter count's and an activation row's words around the symbols are Chinese; the
    symbols, the values and the row's name in Korthikanti et al.'s Table 2 stay as written."""
    set_language("zh")
    spec = LedgerSpec(params=None, model="mixtral-8x7b", seq=4096, dp=8, zero_stage=2)
    formulas = " ".join(term.formula for term in compute_ledger(spec).terms)
    assert "，其中 L=32, h=4096" in formulas and "8 个专家 ×" in formulas
    assert "，无 dropout" in formulas and "'no parallelism, eager attention'" in formulas
    assert not re.search(r"\b(with|experts|output|norms|biases)\b", formulas), formulas
    set_language("en")
    english = " ".join(term.formula for term in compute_ledger(spec).terms)
    assert " with L=32, h=4096" in english and "8 experts ×" in english


def test_bubble_and_collective_lines_in_chinese() -> None:
    """The Bubble's closed form parts its two conventions with the language's semicolon, and
    the Collectives' source line describes the paper in the interface language; the paper's
    title stays as written."""
    from engine.collectives import collective_cost
    from engine.pipeline import PipelineSpec, closed_form_bubble
    from tui.widgets.collectives import cost_renderable

    def source_line(cost_text: str) -> str:
        return next(line for line in cost_text.splitlines() if line.startswith(("来源", "source")))

    def rendered() -> str:
        cost = collective_cost("all-reduce", 8, 1e9, 100e9, 5e-6, "ring")
        console = Console(width=400, record=True, file=io.StringIO())
        console.print(cost_renderable(cost, "all-reduce", 8))
        return console.export_text()

    # GPipe with p = 4, m = 8: bubble/ideal (p-1)/m = 3/8 (Narayanan et al. 2021 §2.2.1),
    # bubble/total (p-1)/(m+p-1) = 3/11 (Huang et al. 2019).
    spec = PipelineSpec(schedule="gpipe", stages=4, num_microbatches=8)
    set_language("zh")
    assert closed_form_bubble(spec).formula == (
        "bubble/ideal = (p-1)/m = 3/8 = 0.375；bubble/total = (p-1)/(m+p-1) = 3/11"
    )
    assert closed_form_bubble(spec).source == (
        f"{sources.ONE_F_ONE_B_BUBBLE}；{sources.GPIPE_BUBBLE}"
    )
    line = source_line(rendered())
    paper, bus = sources.MPICH_COLLECTIVES_PAPER, sources.BUS_BANDWIDTH
    # NCCL-tests' doc/PERFORMANCE.md names its file as written, its words in the language.
    bus_zh = "NVIDIA/nccl-tests doc/PERFORMANCE.md（algbw = S/t，busbw = algbw × 系数）"
    assert line == f"来源：{paper}，MPICH 算法说明；{bus_zh}", line
    set_language("en")
    assert closed_form_bubble(spec).formula == (
        "bubble/ideal = (p-1)/m = 3/8 = 0.375; bubble/total = (p-1)/(m+p-1) = 3/11"
    )
    line = source_line(rendered())
    assert line == f"source: {paper}, the MPICH algorithm notes; {bus}", line
    assert sources.MPICH_COSTS.startswith(sources.MPICH_COLLECTIVES_PAPER)
    assert sources.BUS_BANDWIDTH.startswith(sources.NCCL_TESTS_REPO)


def test_several_sources_are_separated_by_the_languages_semicolon() -> None:
    """A figure that rests on several works lists them with the language's separator: ``；`` in
    Chinese, ``; `` in English, the works' own text as written. Megatron-LM's memory convention
    rests on its estimator and its distributed-optimizer guide (NVIDIA/Megatron-LM
    megatron/training/theoretical_memory_usage.py, docs/source/api-guide/dist_optimizer.md),
    DeepSpeed's on its two estimators (microsoft/DeepSpeed stage_1_and_2.py and stage3.py); these
    were one English string each, their ``; `` shown in the Chinese panes and quiz."""
    from engine.lesson import load_lesson
    from engine.quiz.items import ask, lesson_items
    from engine.quiz.misconceptions import MISCONCEPTIONS

    estimator = "NVIDIA/Megatron-LM megatron/training/theoretical_memory_usage.py"
    guide = "NVIDIA/Megatron-LM docs/source/api-guide/dist_optimizer.md"
    megatron = LedgerSpec(params=1e9, dp=8, zero_stage=1, convention="megatron")
    deepspeed = LedgerSpec(params=1e9, dp=8, zero_stage=3, convention="deepspeed")
    for language, separator in (("zh", "；"), ("en", "; ")):
        set_language(language)
        terms = {term.name: term.source for term in compute_ledger(megatron).terms}
        assert terms["params"].startswith(f"{estimator}{separator}{guide}"), terms["params"]
        for term in compute_ledger(deepspeed).terms:
            if "estimate_zero2_model_states_mem_needs" in term.source:
                assert f"estimate_zero2_model_states_mem_needs{separator}" in term.source
    set_language("zh")
    terms = {term.name: term.source for term in compute_ledger(megatron).terms}
    assert "; " not in terms["params"] and "; " not in terms["optimizer_states"]
    # The quiz lists a question's works one by one, and joins them in the language.
    lesson = load_lesson(LESSON)
    ref = "misconception-params-times-precision"
    assert ref in MISCONCEPTIONS
    item = next(item for item in lesson_items(lesson) if item.ref == ref)
    question = ask(item, lesson, random.Random(0))
    assert question.sources[-2:] == (estimator, guide)


def test_a_chinese_value_is_put_in_without_a_space_before_it() -> None:
    """Chinese sets no space between two Chinese words: a value that starts with one (练习 1,
    专家) follows its Chinese text directly or after punctuation (由练习 1, 切分：专家), never
    after a space (由 练习 1, 切分 专家)."""
    from engine.lesson import load_lesson
    from engine.quiz.items import ask, lesson_items

    apart = re.compile(r"[\u4e00-\u9fff] [\u4e00-\u9fff]")
    set_language("zh")
    trained = strings.OBJECTIVE_TRAINED.format(trainers="练习 1 ◌、自检 2 ✓", done=1, total=2)
    assert trained.startswith("由练习 1"), trained
    exported = gettext(
        "Your rating: at the start {start}; at the end {end}. Trained by {trainers}."
    ).format(start="部分能", end="未评", trainers="练习 1、自检 2")
    assert not apart.search(exported), exported
    assert "。 " not in exported and exported.endswith("由练习 1、自检 2 训练。"), exported
    lesson = load_lesson(LESSON)
    for item in lesson_items(lesson):
        if item.kind == "matching":
            options = ask(item, lesson, random.Random(0)).options
            assert not [option for option in options if apart.search(option)], options


def test_a_latin_value_is_spaced_from_the_chinese_beside_it() -> None:
    """A value that starts or ends with a Latin word gets a space from the Chinese text it meets
    (正在运行 collective……, collective 失败); a Chinese one, or one beside punctuation or a
    space, is put in as it is."""
    set_language("zh")
    experiment = gettext(strings.LAB_EXPERIMENTS["collectives"])
    assert experiment == "collective"
    assert fill(strings.LAB_RUNNING, what=experiment).startswith("正在运行 collective……")
    assert fill(strings.LAB_FAILED, what=experiment, error="超时") == "collective 失败：超时"
    assert fill(strings.LAB_RUNNING, what="内存").startswith("正在运行内存……")
    assert fill(strings.LAB_DONE, what=experiment) == "collective：完成。"
    assert fill("共{n:,}个", n=12345) == "共 12,345 个"
    assert fill("{a} {b}", a="x", b="中") == "x 中"


def test_provenance_and_notes_use_the_languages_punctuation() -> None:
    """A formula's note and what it rests on: full-width colon and semicolon in Chinese
    (``注：``, ``补充材料；来源：``), the ASCII ones in English; the sources' titles between them
    stay as written."""
    from engine.lesson import load_lesson
    from engine.reading import formula_blocks

    lesson = load_lesson(LESSON)
    formula = next(
        formula
        for section in lesson.sections
        for formula in section.formulas
        if formula.note.strip() and formula.sources and formula.added
    )
    set_language("zh")
    texts = {block.kind: block.text for block in formula_blocks(formula)}
    assert texts["note"].startswith("注：") and texts["label"] == "TeX："
    assert texts["provenance"].startswith("补充材料；来源：")
    set_language("en")
    texts = {block.kind: block.text for block in formula_blocks(formula)}
    assert texts["note"].startswith("Note: ") and texts["label"] == "TeX:"
    assert texts["provenance"].startswith("added material; sources: ")


# ----------------------------------------------------------------- layout in both languages
@pytest.mark.parametrize("language", ["zh", "en"])
async def test_form_labels_and_every_choice_of_a_calculator_read_whole_at_80x24(
    tmp_path: Path, language: str
) -> None:
    """Every calculator field's label is shown whole with at least one cell before its value
    (``micro-batch 数 m`` was cut to ``micro-batch 数`` and ran into its 8), the less-used
    Ledger fields included. Each option of every picker in the Ledger (its less-used fields
    included), Bubble, Collectives, Trade-offs and Diagrams fits the picker, so the value
    chosen is read whole (``节点内 NVLink，400`` and ``本课的 1B 级`` were cut at a space, the
    Diagrams pane's ``FSDP/ZeRO-3 - parameters, gr…``). Both in one app per language."""
    from rich.cells import cell_len
    from textual.widgets import Label, Static
    from textual.widgets._select import SelectOverlay

    app = make_app(progress_dir=tmp_path, language=language)
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        for tab in ("ledger", "bubble", "collectives", "tradeoffs", "diagrams"):
            tab_pane = await app.main_screen.open_side_tab(tab)
            await settle(pilot)
            if tab == "ledger":
                await tab_pane.query_one(LedgerPane).open_more()
                await settle(pilot)
            if tab in ("ledger", "bubble", "collectives"):
                labels = list(tab_pane.query(".form-label").results(Label))
                assert labels, tab
                for label in labels:
                    text = str(label.content)
                    assert label.size.width > cell_len(text), (tab, text, label.size.width)
            selects = list(tab_pane.query(Select).results(Select))
            assert selects, tab
            for select in selects:
                room = select.query_one("#label", Static).content_size.width
                options = select.query_one(SelectOverlay)
                for index in range(options.option_count):
                    prompt = str(options.get_option_at_index(index).prompt)
                    assert cell_len(prompt) <= room, (tab, select.id, prompt, room)


@pytest.mark.parametrize(
    ("language", "headers"),
    [
        (
            "zh",
            {
                (40, 12): "S15 · 计划 0/25",
                (120, 40): "shardbook — S15 · 计划 0/25 · 教材已备，尚未学习",
                (60, 20): "S15 · 计划 0/25 · 教材已备，尚未学习",
            },
        ),
        (
            "en",
            {
                (40, 12): "S15 · plan 0/25",
                (120, 40): "shardbook — S15 · plan 0/25 · material ready, not studied",
                # The status line less its last part leaves room for the app's name (it was
                # dropped).
                (60, 20): "shardbook — S15 · plan 0/25",
            },
        ),
    ],
)
async def test_header_drops_whole_parts_where_it_does_not_fit(
    tmp_path: Path, language: str, headers: dict[tuple[int, int], str]
) -> None:
    """The header's line is never cut with an ellipsis: where it does not fit, the app's name
    goes first, then the status line's parts from its end, the name coming back beside the
    parts left where it fits; a resize fits it again. One app, resized from 120x40 to each
    size in turn (40x12, back to 120x40, then 60x20)."""
    app = make_app(progress_dir=tmp_path, language=language)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        for size, header in headers.items():
            await pilot.resize_terminal(*size)
            await settle(pilot)
            await settle(pilot)
            first = screen_lines(app)[0]
            assert first.strip() == header and "…" not in first, size


@pytest.mark.parametrize(
    ("language", "width", "status"),
    [
        ("zh", 60, "测验 · S15 · 自检 · 本题之后还剩 28 题 · 已评分 0"),
        ("zh", 40, "测验 · S15 · 自检 · 本题之后还剩 28 题"),
        ("en", 60, "Quiz · S15 · self-check · 28 left after this · 0 rated"),
    ],
)
async def test_quiz_status_drops_whole_parts_where_it_does_not_fit(
    tmp_path: Path, language: str, width: int, status: str
) -> None:
    """The quiz's status line, like the header, drops whole parts from its end, each with its
    separator: no line ends in a dangling '·' or is cut; a wider terminal shows them again."""
    app = make_app(progress_dir=tmp_path, language=language)
    async with app.run_test(size=(width, 20)) as pilot:
        await settle(pilot)
        await pilot.press("f12")
        await wait_until(pilot, lambda: isinstance(app.screen, QuizScreen))
        await settle(pilot)
        first = screen_lines(app)[0].strip()
        assert first == status
        await pilot.resize_terminal(160, 20)
        await settle(pilot)
        assert screen_lines(app)[0].strip().startswith(status + " · ")


@pytest.mark.long
async def test_lang_zh_nothing_cut_on_a_narrow_screen(tmp_path: Path) -> None:
    """At 60x20 in Chinese no line of any side tab's page ends in an ellipsis: not the header
    (it drops whole parts), not a figure (``在途峰值 8 个 micro-batch`` is stacked or wrapped)."""
    app = make_app(progress_dir=tmp_path, language="zh")
    async with app.run_test(size=(60, 20)) as pilot:
        await settle(pilot)
        async for tab, text in side_pane_pages(app, pilot):
            assert [line for line in text.splitlines() if "…" in line] == [], tab


async def test_lang_zh_pane_titles_are_broken_by_the_lessons_rules(tmp_path: Path) -> None:
    """At 80x24 in Chinese, the Diagrams pane's notes title ("我的笔记，练习 2 和 3（…）") is
    broken by the lesson's rules, between Chinese characters where the line is full: drawn as
    a Static, it broke at its only spaces, "练习 2 和" on a half-empty line, "3（…" below."""
    app = make_app(progress_dir=tmp_path, language="zh")
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        pane = await app.main_screen.open_side_tab("diagrams")
        await settle(pilot)
        from rich.cells import cell_len

        title = pane.query_one(".more-title", BrokenText)
        width = title.content_region.width
        lines = title.lines_at(width)
        assert len(lines) > 1 and "练习 2 和 3" in lines[0], lines
        # Full lines: each but the last within 2 cells (a Chinese character) of the width.
        assert all(cell_len(line) >= width - 2 for line in lines[:-1]), lines


# ----------------------------------------------------------------- times in each language
def test_intervals_are_written_one_way_per_language() -> None:
    """The quiz's rating keys and the message after a rating write an interval the same way:
    ``10 分钟`` and ``10 分钟后`` in Chinese (humanize's Chinese wrote ``10分后``), ``10 min``
    and ``in 10 minutes`` in English. FSRS's first steps: 1, 5.5 and 10 minutes (py-fsrs 6)."""
    from engine.timefmt import duration_text, format_interval, relative

    steps = [dt.timedelta(minutes=m) for m in (1, 5.5, 10)] + [dt.timedelta(days=8)]
    set_language("zh")
    assert [format_interval(step) for step in steps] == ["1 分钟", "5.5 分钟", "10 分钟", "8 天"]
    assert [duration_text(step) for step in steps] == ["1 分钟", "5.5 分钟", "10 分钟", "8 天"]
    assert relative(NOW + steps[2], NOW) == "10 分钟后"
    assert (
        gettext(strings.msgids.QUIZ_RATED)
        .format(rating="良好", due="2026-12-07 18:25", interval=duration_text(steps[2]))
        .endswith("（10 分钟后）")
    )
    set_language("en")
    assert [format_interval(step) for step in steps] == ["1 min", "5.5 min", "10 min", "8 d"]
    assert relative(NOW + steps[2], NOW) == "in 10 minutes"


def test_export_next_due_in_local_time_in_chinese() -> None:
    """The notes' next review: the learner's local time with its offset (the JSON keeps UTC),
    its label in the interface language."""
    from engine.export.markdown import _quiz_markdown

    set_language("zh")
    summary = {
        "items": 3,
        "new": 1,
        "reviewed": 2,
        "reviews": 2,
        "due": 0,
        "recall": None,
        "retrievability": None,
        "next_due": "2026-12-07T10:25:00+00:00",
    }
    text = "\n".join(_quiz_markdown(summary))
    due = dt.datetime(2026, 12, 7, 10, 25, tzinfo=dt.UTC).astimezone()
    assert f"{due:%Y-%m-%d %H:%M %z}" in text and "+00:00" not in text


@pytest.mark.long
async def test_switching_gives_the_focus_and_the_diagrams_scroll_back(tmp_path: Path) -> None:
    """The palette's language switch builds the screen again: the focused widget (here a
    Ledger field) has the focus again and the Diagrams tab is scrolled where it was."""
    from textual.containers import ScrollableContainer

    app = make_app(progress_dir=tmp_path, language="en")
    async with app.run_test(size=(80, 24)) as pilot:
        await settle(pilot)
        await pilot.press("f4")  # the Diagrams tab
        await settle(pilot)
        tab = app.main_screen.query_one("#diagrams")
        scroller = tab.query(ScrollableContainer).first()
        await wait_until(pilot, lambda: scroller.max_scroll_y > 10)
        scroller.scroll_to(y=9, animate=False, immediate=True)
        await settle(pilot)
        focused = app.focused
        assert focused is not None and focused.id == "strategy"
        await pilot.press("ctrl+p", *"中文", "enter")
        await settle(pilot)
        assert current_language() == "zh"
        await wait_until(pilot, lambda: app.focused is not None and app.focused.id == "strategy")
        new_tab = app.main_screen.query_one("#diagrams")
        assert new_tab is not tab
        new_scroller = new_tab.query(ScrollableContainer).first()
        await wait_until(pilot, lambda: new_scroller.scroll_y == 9)
        # And a field of another pane, zoomed (F5): the Ledger's parameter count, in the pane
        # still zoomed (the switch took the zoom away).
        await pilot.press("f2")
        await settle(pilot)
        app.main_screen.query_one("#field-params").focus()
        await pilot.press("f5")
        await settle(pilot)
        assert app.main_screen.zoomed
        await pilot.press("ctrl+p", *"English", "enter")
        await settle(pilot)
        await wait_until(
            pilot, lambda: app.focused is not None and app.focused.id == "field-params"
        )
        assert app.main_screen.zoomed and app.main_screen.arrangement.side
        assert not app.main_screen.arrangement.reading


def test_chinese_text_brackets_a_figure_with_full_width_brackets() -> None:
    """A byte count in both conventions and a due date with how far off it is: ASCII brackets in
    English, full-width ones in Chinese text (the catalog's templates, as the rest of the
    Chinese text writes them). 80e9 B = 80.00 GB = 74.51 GiB (80e9 / 2**30)."""
    import datetime as dt

    from engine.quiz_stats import next_due_text
    from engine.units import format_bytes

    now = dt.datetime(2026, 12, 7, 10, 15, tzinfo=dt.UTC)
    due = "2026-12-10T10:15:00+00:00"
    assert format_bytes(80e9) == "80.00 GB (74.51 GiB)"
    assert next_due_text(due, dt.UTC, now) == "2026-12-10 10:15 (in 3 days)"
    set_language("zh")
    assert format_bytes(80e9) == "80.00 GB（74.51 GiB）"
    assert next_due_text(due, dt.UTC, now) == "2026-12-10 10:15（3 天后）"
