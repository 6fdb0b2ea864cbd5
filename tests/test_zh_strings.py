"""The Chinese interface as good as the English one where a learner's trial found it was not:
sources joined with ASCII ``;`` (a section's supplement line, the Anki export), a refused value in
ASCII quotes, English descriptions after the works a figure cites, an ASCII colon in the Bubble
pane's heading; and lines broken inside the two-character mark ``未评`` or starting with the
separator ``·`` (in English too)."""

from __future__ import annotations

import itertools
import random
import re
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from rich.console import Console

from engine import sources
from engine.collectives import collective_cost
from engine.diagrams import STRATEGY_NAMES, strategy_diagram, strategy_diagram_parts
from engine.errors import InputError
from engine.exercises import strategy_notes
from engine.export.anki import anki_cards
from engine.export.notes import engine_answer
from engine.i18n import gettext, set_language
from engine.ledger.form import parse_device_memory
from engine.ledger.validate import checked_targets
from engine.lesson import load_lesson
from engine.linebreak import break_text
from engine.plan import build_plan, describe_step
from engine.progress import RATING_LABELS, RATING_LEVELS, LessonProgress
from engine.quiz import ask, lesson_items
from engine.quiz.grading import parse_answer
from engine.reading import section_blocks
from engine.units import parse_bytes, parse_count, parse_int, parse_number, parse_time
from tests.test_i18n import catalog_entries
from tui import strings
from tui.screens.quiz_dialogs import parse_retention
from tui.screens.study import objective_lines, step_line
from tui.widgets.bubble import closed_form_renderable, spec_from_form
from tui.widgets.study import ObjectiveItem

LESSON = load_lesson(Path(__file__).resolve().parent.parent / "content" / "S15.yaml")


@pytest.fixture
def zh() -> Iterator[None]:
    set_language("zh")
    yield
    set_language("en")


def test_a_supplement_line_joins_its_sources_as_the_language_does(zh: None) -> None:
    """``补充材料；来源：A；B`` (the mechanism section cites the GPipe paper and Megatron-LM on one
    line), never ``A; B`` inside the Chinese line; ``A; B`` in English."""

    def gpipe_lines() -> list[str]:
        return [
            block.text
            for section in LESSON.sections
            for block in section_blocks(section)
            if block.kind == "provenance" and "GPipe" in block.text
        ]

    blocks = gpipe_lines()
    assert blocks and all("；" in text and "; " not in text for text in blocks)
    set_language("en")
    blocks = gpipe_lines()
    assert blocks and all("; " in text and "；" not in text for text in blocks)


def test_a_refused_value_is_quoted_with_the_languages_quotes(zh: None) -> None:
    with pytest.raises(InputError) as error:
        parse_count("ranks", "abc")
    assert "“abc”" in error.value.message and "'abc'" not in error.value.message
    set_language("en")
    with pytest.raises(InputError) as error:
        parse_count("ranks", "abc")
    assert "'abc'" in error.value.message


@pytest.mark.parametrize(
    ("refuse", "message"),
    [
        pytest.param(lambda: parse_int("ranks", "4 GPUs"), "“4 GPUs”不是整数", id="whole"),
        pytest.param(
            lambda: parse_number("x", "1e999"), "“1e999”太大（超出浮点数范围）", id="large"
        ),
        pytest.param(lambda: parse_number("x", "5kg"), "多余的单位“kg”；请只输入数字", id="unit"),
        pytest.param(lambda: parse_count("x", "5Q"), "未知后缀“Q”；", id="suffix"),
        pytest.param(lambda: parse_bytes("x", "5QB"), "未知单位“QB”；", id="bytes"),
        pytest.param(lambda: parse_time("x", "5m"), "未知单位“m”；", id="time"),
        pytest.param(
            lambda: parse_number("x", "1,5"), "“1,5”：小数点请用“.”；“,”只能用于", id="comma"
        ),
        pytest.param(lambda: parse_device_memory("x", "80"), "“80”是 80 字节，", id="memory"),
        pytest.param(lambda: checked_targets(["q", "z"]), "“z”不是 q, k, v", id="lora"),
        pytest.param(lambda: parse_answer("1/0", "GB"), "“1/0”除以零", id="zero"),
        pytest.param(
            lambda: parse_retention("abc"),
            "“abc”不是数字：请输入 0.70 到 0.97 之间的数",
            id="retention",
        ),
    ],
)
def test_a_quoted_value_joins_the_chinese_around_it_without_a_space(
    zh: None, refuse: Callable[[], object], message: str
) -> None:
    """As “abc”不是数字 and 请填写“序列长度 s”: no space between a Chinese quote and the Chinese
    beside it, and the quotes are Chinese (the retention dialog said 'abc' 不是数字)."""
    with pytest.raises(InputError) as error:
        refuse()
    assert error.value.message.startswith(message), error.value.message


def test_a_reading_step_quotes_the_sections_title(zh: None) -> None:
    """阅读“核心知识”, as the other steps are joined (练习 2：…, 反思：…); 阅读 核心知识 put a
    space between two Chinese words."""
    plan = build_plan(LESSON, LessonProgress(LESSON.id))
    (step,) = (step for step in plan.steps if step.id == "read:core")
    assert describe_step(step) == "阅读“核心知识”"
    set_language("en")
    assert describe_step(step) == "read 核心知识"


def test_what_is_derived_after_a_works_title_is_translated(zh: None) -> None:
    """The EP and CP diagrams' volume sources and the double binary tree's cost source said
    "volume derived here, assuming uniform routing" and "(tree all-reduce: algorithm bandwidth
    = bus bandwidth / 2 ...)" in the Chinese interface; the works' titles stay as written."""
    for name in ("ep", "cp"):
        diagram = strategy_diagram(name)
        assert "derived here" not in diagram and "本项目推导" in diagram, name
    assert "Lepikhin et al. 2020, GShard (arXiv:2006.16668)" in strategy_diagram("ep")
    cost = collective_cost("all-reduce", 8, "1GB", "100GB/s", "5us", "double-binary-tree")
    assert "tree all-reduce：算法带宽 = 总线带宽 / 2" in cost.source
    assert cost.source.startswith(sources.TWO_TREE_PAPER)
    assert "double binary tree" not in cost.source
    set_language("en")
    cost = collective_cost("all-reduce", 8, "1GB", "100GB/s", "5us", "double-binary-tree")
    assert "(tree all-reduce: algorithm bandwidth = bus bandwidth / 2" in cost.source
    # The whole texts are their msgids: each starts with the works it cites, as written.
    assert sources.EXPERT_PARALLEL_COMMUNICATION.startswith(sources.GSHARD_PAPER)
    assert sources.CONTEXT_PARALLEL_COMMUNICATION.startswith(
        f"{sources.MEGATRON_CP_DOCS}; {sources.RING_ATTENTION_PAPER}"
    )
    assert sources.DOUBLE_BINARY_TREE.startswith(f"{sources.TWO_TREE_PAPER}; {sources.NCCL_REPO}")


def test_the_bubble_heading_uses_the_languages_colon(zh: None) -> None:
    form = {
        "stages": "4",
        "micro_batches": "8",
        "virtual_stages": "2",
        "t_forward": "1",
        "t_backward_input": "1",
        "t_backward_weight": "1",
        "p2p_time": "0",
    }
    console = Console(width=60, record=True, color_system=None)
    console.print(closed_form_renderable(spec_from_form(form, "gpipe")))
    assert console.export_text().splitlines()[0] == "gpipe：p=4，m=8"
    set_language("en")
    console = Console(width=60, record=True, color_system=None)
    console.print(closed_form_renderable(spec_from_form(form, "gpipe")))
    assert console.export_text().splitlines()[0] == "gpipe: p=4, m=8"


def test_the_anki_export_joins_sources_as_the_language_does(zh: None) -> None:
    """A card citing several works joins them with ``；`` in Chinese, as the quiz screen does
    (``; `` inside one work's citation stays as the citation is written); a card on EP cites
    GShard with what is derived from it, translated."""
    cited = {
        item.id: ask(item, LESSON, random.Random(f"{LESSON.id}/{item.id}")).sources
        for item in lesson_items(LESSON)
    }
    several = {item_id for item_id, works in cited.items() if len(works) > 1}
    cards = {card["id"]: card["sources"] for card in anki_cards(LESSON)}
    assert several
    for item_id in several:
        assert cards[item_id].count("；") >= len(cited[item_id]) - 1, cards[item_id]
    gshard = [text for text in cards.values() if "GShard" in text]
    assert gshard and all("derived here" not in text for text in gshard)
    set_language("en")
    cards = {card["id"]: card["sources"] for card in anki_cards(LESSON)}
    for item_id in several:
        assert cards[item_id] == "; ".join(cited[item_id])


def _lines_at_every_width(text: str) -> Iterator[tuple[int, list[str]]]:
    # From 16 cells: narrower, a word and the separator after it may not fit one line.
    for width in range(16, 90):
        yield width, break_text(text, width)


@pytest.mark.parametrize("language", ["zh", "en"])
def test_no_line_starts_with_a_separator_and_no_mark_is_split(language: str) -> None:
    """The self-rating line under an objective and a step of the plan view (F11), at every
    width: ``·`` stays at the end of the line before, and ``未评`` is never split in two."""
    set_language(language)
    try:
        rating = strings.OBJECTIVE_RATING.format(start=strings.NOT_RATED, end=strings.NOT_RATED)
        focused = strings.OBJECTIVE_RATING_FOCUSED.format(
            start_mark="▸", end_mark="", start=strings.NOT_RATED, end=strings.NOT_RATED
        )
        plan = build_plan(LESSON, LessonProgress(LESSON.id))
        steps = [step_line(plan, index) for index in range(len(plan.steps))]
        for text in (rating, focused, *steps):
            for width, lines in _lines_at_every_width(text):
                assert not any(line.startswith("·") for line in lines), (width, lines)
                if language == "zh":
                    assert not any(
                        before.rstrip().endswith("未") and after.startswith("评")
                        for before, after in itertools.pairwise(lines)
                    ), (width, lines)
    finally:
        set_language("en")


def test_no_rating_word_is_split(zh: None) -> None:
    """The ratings 还不能 (not yet) and 部分能 (partly), words of three ideographs, are never
    broken inside at any width from 20 cells (a break between any two ideographs is allowed by
    UAX #14; the glue for marks such as ``未评`` holds two): in an objective's rating line,
    focused or not, in the plan view (F11), in ctrl+n's messages asking for the ratings, in the
    objectives' hint and in an objective's help (F1). Each is glued to the word or key before
    it (and in F11 around the arrow) by a no-break space in the catalog."""
    levels = [gettext(label) for label in RATING_LABELS.values()]
    rated = [
        text
        for start, end in itertools.product(levels, repeat=2)
        for text in (
            strings.OBJECTIVE_RATING.format(start=start, end=end),
            *(
                strings.OBJECTIVE_RATING_FOCUSED.format(
                    start_mark=mark, end_mark=other, start=start, end=end
                )
                for mark, other in (("▸", ""), ("", "▸"))
            ),
        )
    ]
    progress = LessonProgress(LESSON.id)
    for number, objective in enumerate(LESSON.objectives):
        progress.ratings[objective.id] = {
            "start": RATING_LEVELS[number % 3],
            "end": RATING_LEVELS[(number + 1) % 3],
        }
    asked = [
        template.format(number=4, unrated=4)
        for template in (strings.RATE_AT_THE_START, strings.RATE_AT_THE_END)
    ]
    texts = [
        *rated,
        *objective_lines(build_plan(LESSON, progress)),
        *asked,
        strings.OBJECTIVE_HINT,
        gettext(ObjectiveItem.HELP),
    ]
    words = ("还不能", "部分能")
    for text in texts:
        for width, lines in _lines_at_every_width(text):
            if width < 20:
                continue
            # Nor is the focus mark on a phase word (▸结束) left at a line's end.
            assert not any(line.rstrip().endswith("▸") for line in lines), (width, lines)
            for before, after in itertools.pairwise(lines):
                for word, cut in itertools.product(words, (1, 2)):
                    parted = before.rstrip().endswith(word[:cut]) and after.startswith(word[cut:])
                    assert not parted, (width, lines)


# Chinese entries with a colon the English has none of, where Chinese reads it as a label (the
# Lab's help names its two buttons, 本次学习：…), or before a command to copy.
_LABELLED_IN_CHINESE = (
    "Collectives starts 4 local processes",
    "Session on {lesson} {title}",
    "the lab needs PyTorch",
)


def _colons(text: str) -> int:
    return text.count("：") + text.count(":")


def test_no_chinese_entry_puts_a_colon_where_the_english_has_none() -> None:
    """A Chinese entry with a colon the English has none of is read as ``label：text：``: a
    matching question's choice ``切分：batch | 运行：all-reduce`` in the quiz's verdict
    (``你的答案：a) 切分：…``), ``点对点：`` before the engine's answer for PP (``引擎的答案
    （…）：点对点：前向中的 send-recv``), ``all-gather，内容：参数…`` in a diagram. No entry has two
    colons together (``：：``) or ends with one the English does not end with."""
    added: list[tuple[str, str]] = []
    for msgid, forms in catalog_entries("zh_CN").items():
        for form in forms:
            if _colons(form) > _colons(msgid) and not msgid.startswith(_LABELLED_IN_CHINESE):
                added.append((msgid, form))
            assert not re.search(r"[：:]\s*[：:]", form), form
            assert not form.endswith("：") or msgid.rstrip().endswith(":"), form
    assert added == []


def _joined_lines() -> list[str]:
    """Lines where the interface joins its own label and text: the quiz's verdict on each
    matching question's choices (``yours: a) …``); the engine's answer to each note of
    exercises 2 and 3 (Diagrams pane and export); each strategy's collectives in its diagram (at
    a width where each is one line)."""
    lines: list[str] = []
    for item in lesson_items(LESSON):
        question = ask(item, LESSON, random.Random(item.id))
        lines += [
            strings.QUIZ_YOUR_ANSWER + question.choice_text(index)
            for index in range(len(question.options))
        ]
    for name in STRATEGY_NAMES:
        for note in strategy_notes(name):
            answer, source = engine_answer(note)
            lines.append(
                gettext("Engine's answer ({source}): {answer}").format(source=source, answer=answer)
            )
        lines += dict(strategy_diagram_parts(name, width=1000))["comm"].splitlines()
    return lines


def test_a_joined_line_has_no_colon_more_in_chinese_than_in_english(zh: None) -> None:
    """Each line above, in Chinese and in English (the same questions, notes and diagrams):
    the Chinese has a colon only where the English has one (``你的答案：a) 切分数据 batch |
    运行 all-reduce``, one colon as ``yours: a) splits the batch | runs all-reduce``)."""
    chinese = _joined_lines()
    set_language("en")
    english = _joined_lines()
    assert len(chinese) == len(english) > 40
    more = [
        (zh_line, en_line)
        for zh_line, en_line in zip(chinese, english, strict=True)
        if _colons(zh_line) > _colons(en_line)
    ]
    assert more == []
    assert all("：" not in line for line in english)


@pytest.mark.parametrize(("language", "term"), [("en", "desired retention"), ("zh", "目标保持率")])
def test_the_desired_retention_has_one_name(language: str, term: str) -> None:
    """FSRS's desired retention (the chance of recall a review is due at) is named one way in
    the quiz's header, its key, its dialog, the palette and the help; recall (the share of
    reviews rated Good or Easy, a figure of the statistics) keeps its own name. The header said
    目标回忆率 / target recall, the key 保持率, the dialog 目标记忆保持率."""
    set_language(language)
    try:
        named = [
            strings.QUIZ_STATUS,
            strings.QUIZ_RETENTION_TITLE,
            strings.QUIZ_RETENTION_SET,
            strings.QUIZ_RETENTION_NOT_SAVED,
            strings.QUIZ_PALETTE_RETENTION,
            strings.QUIZ_DONE_HINT,
            strings.QUIZ_HELP,
        ]
        for text in named:
            assert term in text.lower(), text
            assert "回忆率" not in text and "recall {" not in text, text
        key = gettext(strings.msgids.QUIZ_RETENTION)
        assert key.lower() == ("retention" if language == "en" else term)
        assert term not in strings.QUIZ_STATS_ROW.lower()
        if language == "zh":
            assert "回忆率" in strings.QUIZ_STATS_ROW
    finally:
        set_language("en")
