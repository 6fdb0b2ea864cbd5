"""Every engine entry point, fed arbitrary input: it returns a result or raises a
named validation error (InputError, ContentError), never anything else; no NaN or inf result."""

from __future__ import annotations

import contextlib
import math
from dataclasses import fields
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from engine import collectives, diagrams, pipeline, strategies, units
from engine.errors import ContentError, InputError
from engine.ledger import LedgerSpec, compare_conventions, compute_ledger
from engine.lesson import load_lesson

NAMED = (InputError, ContentError)
FUZZ = settings(max_examples=150, deadline=None)

# Numbers and texts a form or a flag can hand the engine.
numbers = st.one_of(
    st.integers(-5, 10**4),
    st.integers(),
    st.floats(allow_nan=True, allow_infinity=True),
    st.sampled_from([0, 1, 2, 4, 8, 1e9, 7.5e9, -1, 0.5, float("nan"), float("inf")]),
)
texts = st.one_of(
    st.text(max_size=20),
    st.sampled_from(["1B", "7.5B", "80GB", "100GB/s", "5us", "1e400", "nan", "-3", "0", "", "[/"]),
)
anything = st.one_of(numbers, texts, st.none(), st.booleans())


def finite(value: Any) -> None:
    """No NaN or inf anywhere in a result's numbers."""
    if isinstance(value, float):
        assert math.isfinite(value), value
    elif isinstance(value, dict):
        for item in value.values():
            finite(item)
    elif isinstance(value, list | tuple):
        for item in value:
            finite(item)


@FUZZ
@given(
    parser=st.sampled_from(
        ["parse_number", "parse_count", "parse_bytes", "parse_rate", "parse_time", "parse_int"]
    ),
    value=st.one_of(numbers, texts),
)
def test_unit_parsers(parser: str, value: Any) -> None:
    try:
        result = getattr(units, parser)("field", value)
    except NAMED as error:
        assert isinstance(error, InputError) and error.field == "field"
        return
    assert math.isfinite(result)


LEDGER_FIELDS = [f.name for f in fields(LedgerSpec)]


@settings(max_examples=200, deadline=None)
@given(values=st.dictionaries(st.sampled_from(LEDGER_FIELDS), anything, max_size=8))
def test_compute_ledger(values: dict[str, Any]) -> None:
    base: dict[str, Any] = {"params": 1e9}
    try:
        result = compute_ledger(LedgerSpec(**{**base, **values}))
        finite(result.per_rank_bytes)
        finite(result.model_states_bytes)
        compare_conventions(result.spec)
    except NAMED:
        return


@FUZZ
@given(
    schedule=st.one_of(st.sampled_from(pipeline.SCHEDULES), st.text(max_size=8)),
    stages=st.one_of(st.integers(-2, 12), anything),
    micro_batches=st.one_of(st.integers(-2, 24), anything),
    virtual_stages=st.one_of(st.integers(-1, 4), anything),
    times=st.lists(st.one_of(st.floats(-1, 5), numbers), min_size=4, max_size=4),
)
def test_pipeline_simulate(
    schedule: str, stages: Any, micro_batches: Any, virtual_stages: Any, times: list[Any]
) -> None:
    try:
        spec = pipeline.PipelineSpec(
            schedule=schedule,
            stages=stages,
            num_microbatches=micro_batches,
            virtual_stages=virtual_stages,
            t_forward=times[0],
            t_backward_input=times[1],
            t_backward_weight=times[2],
            p2p_time=times[3],
        )
        result = pipeline.simulate(spec)
        pipeline.closed_form_bubble(spec)
        pipeline.render_timeline(result)
    except NAMED:
        return


@FUZZ
@given(
    op=st.one_of(st.sampled_from(collectives.OPERATIONS), st.text(max_size=12)),
    ranks=anything,
    size=anything,
    bandwidth=anything,
    latency=anything,
    algorithm=st.one_of(st.none(), st.sampled_from(["ring", "tree", "pairwise", "x"])),
)
def test_collective_cost(
    op: str, ranks: Any, size: Any, bandwidth: Any, latency: Any, algorithm: str | None
) -> None:
    try:
        cost = collectives.collective_cost(op, ranks, size, bandwidth, latency, algorithm)
    except NAMED:
        return
    finite(vars(cost) if hasattr(cost, "__dict__") else [])


@FUZZ
@given(
    op=st.one_of(st.sampled_from(collectives.OPERATIONS), st.text(max_size=12)),
    ranks=st.one_of(st.integers(-2, 20), anything),
    size=st.one_of(st.none(), st.integers(-2, 100), anything),
    algorithm=st.one_of(st.none(), st.sampled_from(["ring", "halving-doubling", "tree", "x"])),
    step=st.one_of(st.integers(-2, 40), anything),
)
def test_collective_simulation_and_diagrams(
    op: str, ranks: Any, size: Any, algorithm: str | None, step: Any
) -> None:
    with contextlib.suppress(NAMED):
        collectives.simulate(op, ranks, size, algorithm)
    with contextlib.suppress(NAMED):
        diagrams.collective_diagram(op, step, ranks, algorithm)


@FUZZ
@given(name=st.one_of(st.sampled_from(list(strategies.STRATEGIES)), st.text(max_size=12)))
def test_strategy_and_diagram_lookups(name: str) -> None:
    for lookup in (strategies.get_strategy, diagrams.strategy_diagram):
        try:
            lookup(name)
        except NAMED:
            continue


@settings(
    max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(data=st.one_of(st.binary(max_size=400), st.text(max_size=400).map(str.encode)))
def test_load_lesson_on_random_bytes(tmp_path: Path, data: bytes) -> None:
    path = tmp_path / "random.yaml"
    path.write_bytes(data)
    with pytest.raises(ContentError) as raised:
        load_lesson(path)
    assert str(raised.value).startswith(f"{path}:")
