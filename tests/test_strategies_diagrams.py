"""engine.strategies and engine.diagrams: the structured descriptions, and diagrams that agree
with them.

Every diagram is pure ASCII, fits 80 columns, labels its ranks rank 0 to
rank 3, names its collectives, and is checked against the strategy's structured description.
Volumes come from ZeRO (Rajbhandari et al. 2020) Sec. 7 (DP 2 Psi, ZeRO-1/2 2 Psi, ZeRO-3 3 Psi)
and Narayanan et al. 2021 Sec. 3.2 (PP b*s*h per micro-batch, TP 8*b*s*h*(t-1)/t per layer).
"""

from __future__ import annotations

import re

import pytest

from engine.collectives import ALGORITHMS, OPERATIONS
from engine.diagrams import (
    COLLECTIVE_NAMES,
    MAX_DIAGRAM_RANKS,
    STRATEGY_NAMES,
    WIDTH,
    collective_diagram,
    collective_step_count,
    strategy_diagram,
)
from engine.errors import InputError
from engine.strategies import (
    HOLDING_WIDTH,
    PHASES,
    STRATEGIES,
    THREE_QUESTIONS,
    Strategy,
    get_strategy,
)


def _flat(text: str) -> str:
    return " ".join(text.split())


def _box_columns(diagram: str) -> list[tuple[int, int]]:
    """(start, end) columns of the 4 rank boxes, found from the row that labels them."""
    label_row = next(line for line in diagram.splitlines() if "rank 0" in line)
    starts = [m.start() for m in re.finditer(r"\|", label_row)][0::2]
    ends = [m.start() for m in re.finditer(r"\|", label_row)][1::2]
    return list(zip(starts, ends, strict=True))


def _box_text(diagram: str, rank: int) -> list[str]:
    """The lines inside rank ``rank``'s box, stripped."""
    start, end = _box_columns(diagram)[rank]
    lines = diagram.splitlines()
    top = next(i for i, line in enumerate(lines) if "rank 0" in line) - 1
    inside = []
    for line in lines[top + 1 :]:
        cell = line[start : end + 1]
        if cell.startswith("+"):
            break
        inside.append(cell.strip("|").strip())
    return inside


# --- strategies as data -----------------------------------------------------------------------


def test_every_strategy_of_the_lesson_is_described() -> None:
    assert set(STRATEGIES) == {"dp", "zero1", "zero2", "zero3", "tp", "tp-sp", "pp", "ep", "cp"}
    assert get_strategy("fsdp") is STRATEGIES["zero3"]
    assert get_strategy("FSDP") is STRATEGIES["zero3"]


def test_unknown_strategy_lists_the_names() -> None:
    with pytest.raises(InputError) as info:
        get_strategy("ddp")
    assert info.value.field == "strategy"
    for name in ("dp", "fsdp", "tp-sp", "cp"):
        assert name in info.value.message


@pytest.mark.parametrize("strategy", STRATEGIES.values(), ids=list(STRATEGIES))
def test_strategy_record_is_complete(strategy: Strategy) -> None:
    assert len(strategy.rank_holdings) == 4
    assert all(0 < len(line) <= HOLDING_WIDTH for rank in strategy.rank_holdings for line in rank)
    # The ranks hold different things or the same thing, but never an empty box.
    assert all(rank for rank in strategy.rank_holdings)
    assert strategy.collectives
    for use in strategy.collectives:
        assert use.collective in OPERATIONS
        assert use.phase in PHASES
        assert use.payload and use.volume and use.source
    for field in (strategy.split, strategy.holds, strategy.needs, strategy.wait, strategy.recovers):
        assert field.strip()
    assert strategy.name_zh and not strategy.name_zh.isascii()
    assert [zh for zh, _en, _answer in strategy.answers()] == [q[1] for q in THREE_QUESTIONS]


def test_three_questions_are_the_lessons() -> None:
    # The lesson's 深入学习提示: 每个 rank 持有什么、何时需要别人的数据、失败后从哪里恢复.
    assert [q[1] for q in THREE_QUESTIONS] == [
        "每个 rank 持有什么",
        "何时需要别人的数据",
        "失败后从哪里恢复",
    ]


@pytest.mark.parametrize(
    ("name", "volume"),
    [
        ("dp", "2*Psi"),
        ("zero1", "2*Psi"),
        ("zero2", "2*Psi"),
        ("zero3", "3*Psi"),
        ("tp", "8*b*s*h*(t-1)/t"),
        ("tp-sp", "8*b*s*h*(t-1)/t"),
        ("pp", "b*s*h"),
    ],
)
def test_volumes_per_step_match_the_papers(name: str, volume: str) -> None:
    strategy = STRATEGIES[name]
    assert strategy.volume.startswith(volume) or volume in strategy.volume
    source = " ".join(strategy.volume_sources)
    if name in ("dp", "zero1", "zero2", "zero3"):
        assert "ZeRO" in source and "§7" in source
    else:
        assert "Narayanan et al. 2021" in source and "§3.2" in source


def test_collectives_and_their_timing() -> None:
    def uses(name: str) -> set[tuple[str, str]]:
        return {(u.collective, u.phase) for u in STRATEGIES[name].collectives}

    assert uses("dp") == {("all-reduce", "backward")}
    assert uses("zero1") == {("reduce-scatter", "backward"), ("all-gather", "optimizer step")}
    assert uses("zero3") == {
        ("all-gather", "forward"),
        ("all-gather", "backward"),
        ("reduce-scatter", "backward"),
    }
    assert uses("tp") == {("all-reduce", "forward"), ("all-reduce", "backward")}
    assert ("all-gather", "forward") in uses("tp-sp")
    assert ("all-reduce", "forward") not in uses("tp-sp")
    assert uses("pp") == {("send-recv", "forward"), ("send-recv", "backward")}
    assert STRATEGIES["pp"].point_to_point
    assert ("all-to-all", "forward") in uses("ep")
    assert ("all-gather", "forward") in uses("cp")


def test_split_dimensions_differ() -> None:
    # ZeRO shards state, TP splits inside a layer (the lesson's misconception: not the same).
    assert "optimizer" in STRATEGIES["zero1"].split
    assert "gradients" in STRATEGIES["zero2"].split
    assert "parameters" in STRATEGIES["zero3"].split
    assert "columns" in STRATEGIES["tp"].split
    assert "layers" in STRATEGIES["pp"].split
    assert "experts" in STRATEGIES["ep"].split
    assert "sequence" in STRATEGIES["cp"].split
    assert "batch" in STRATEGIES["dp"].split


# --- strategy diagrams ------------------------------------------------------------------------


@pytest.mark.parametrize("name", STRATEGY_NAMES)
def test_strategy_diagram_is_ascii_80_columns_4_ranks(name: str) -> None:
    diagram = strategy_diagram(name)
    assert diagram.isascii()
    assert max(len(line) for line in diagram.splitlines()) <= WIDTH
    assert all(line == line.rstrip() for line in diagram.splitlines())
    for rank in range(4):
        assert f"rank {rank}" in diagram
    assert "rank 4" not in diagram


@pytest.mark.parametrize("name", STRATEGY_NAMES)
def test_strategy_diagram_agrees_with_description(name: str) -> None:
    strategy = get_strategy(name)
    diagram = strategy_diagram(name)
    flat = _flat(diagram)
    # What each rank holds: the box under "rank k" holds exactly rank k's lines.
    for rank in range(4):
        box = _box_text(diagram, rank)
        assert box[0] == f"rank {rank}"
        assert box[1:] == list(strategy.rank_holdings[rank])
    # Split, collectives with their phase, payload and volume, wait, three answers.
    assert _flat(strategy.split) in flat
    for use in strategy.collectives:
        assert use.collective in diagram
        assert _flat(f"{use.phase}: {use.collective} of {use.payload}; {use.volume}") in flat
    assert _flat(strategy.volume) in flat
    assert _flat(strategy.wait) in flat
    for _zh, english, answer in strategy.answers():
        assert _flat(f"{english} {answer}") in flat


@pytest.mark.parametrize("name", [n for n in STRATEGY_NAMES if not get_strategy(n).point_to_point])
def test_collective_arrows_span_all_ranks(name: str) -> None:
    diagram = strategy_diagram(name)
    buses = [line for line in diagram.splitlines() if line.lstrip().startswith("<-")]
    assert len(buses) == len(get_strategy(name).collectives)
    for bus, use in zip(buses, get_strategy(name).collectives, strict=True):
        assert bus.rstrip().endswith(">")
        assert use.collective in bus and use.phase in bus


def test_pipeline_arrows_go_between_neighbours() -> None:
    diagram = strategy_diagram("pp")
    assert diagram.count("|--->|") == 3  # forward activations: 0->1->2->3
    assert diagram.count("|<---|") == 3  # backward gradients: 3->2->1->0
    assert "layers 0-5" in diagram and "layers 18-23" in diagram


def test_fsdp_diagram_is_zero3_titled_fsdp() -> None:
    assert strategy_diagram("fsdp") == strategy_diagram("zero3")
    assert strategy_diagram("fsdp").startswith("FSDP/ZeRO-3")


def test_diagrams_show_what_each_rank_holds() -> None:
    assert "W1: col slice 2" in strategy_diagram("tp")
    assert "params: shard 3" in strategy_diagram("fsdp")
    assert "experts 6,7" in strategy_diagram("ep")
    assert "seq: chunk 1" in strategy_diagram("cp")


# --- collective diagrams ----------------------------------------------------------------------


@pytest.mark.parametrize("op", COLLECTIVE_NAMES)
@pytest.mark.parametrize("ranks", [2, 3, 4, 8])
def test_collective_diagram_every_step_ascii_80(op: str, ranks: int) -> None:
    for algorithm in ALGORITHMS[op]:
        if algorithm == "halving-doubling" and op != "all-reduce" and ranks & (ranks - 1):
            continue
        total = collective_step_count(op, ranks, algorithm)
        for step in range(total + 1):
            text = collective_diagram(op, step, ranks, algorithm)
            assert text.isascii()
            assert max(len(line) for line in text.splitlines()) <= WIDTH
            assert f"step {step} of {total}" in text
            for rank in range(ranks):
                assert f"rank {rank} " in text
        assert "Done:" in collective_diagram(op, total, ranks, algorithm)


def test_collective_diagram_shows_the_sum_a_learner_can_check() -> None:
    # Ring all-reduce on 4 ranks: after step 6 every slot holds the column sum of step 0.
    start = collective_diagram("all-reduce", 0)
    end = collective_diagram("all-reduce", 6)

    def rows(text: str) -> list[list[int]]:
        found = re.findall(r"rank \d+\s+\[(.*)\]", text)
        return [[int(v.strip(" *+")) for v in row.split("|")] for row in found]

    inputs, outputs = rows(start), rows(end)
    sums = [sum(col) for col in zip(*inputs, strict=True)]
    assert all(row == sums for row in outputs)


def test_collective_diagram_lists_the_arrows_of_the_step() -> None:
    text = collective_diagram("all-gather", 1)
    for src in range(4):
        assert f"rank {src} --> rank {(src + 1) % 4}: slot {src} (copied)" in text


def test_collective_diagram_errors() -> None:
    with pytest.raises(InputError) as info:
        collective_diagram("all-reduce", 7)
    assert info.value.field == "step"
    with pytest.raises(InputError) as info:
        collective_diagram("all-reduce", 0, ranks=MAX_DIAGRAM_RANKS + 1)
    assert info.value.field == "ranks"
    with pytest.raises(InputError) as info:
        collective_diagram("gather", 0)
    assert info.value.field == "op"


@pytest.mark.parametrize("name", STRATEGY_NAMES)
def test_a_diagram_in_parts_is_the_whole_diagram(name: str) -> None:
    from engine.diagrams import STRATEGY_DIAGRAM_PARTS, strategy_diagram_parts

    parts = strategy_diagram_parts(name)
    assert [part for part, _text in parts] == list(STRATEGY_DIAGRAM_PARTS)
    assert "".join(text for _part, text in parts) == strategy_diagram(name)
    # Without its transfers the picture gives no collective away: no bus, no arrow.
    picture = dict(strategy_diagram_parts(name, transfers=False))["picture"]
    assert "--->" not in picture and "<---" not in picture and "(1)" not in picture
    assert "rank 0" in picture
