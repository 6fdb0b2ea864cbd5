"""engine.pipeline: reference values from the papers, properties of the schedules, validation.

Sources:
- GPipe, Huang et al. 2019: bubble/total (p-1)/(m+p-1); peak activations m micro-batches.
- Narayanan et al. 2021 (SC'21) §2.2.1: 1F1B bubble/ideal (p-1)/m, at most p micro-batches in
  flight; §2.2.2: interleaved (p-1)/(m*v), m a multiple of p.
- Qi et al. 2023, Zero Bubble Pipeline Parallelism, Table 2 (p=8, T_F=T_B=T_W=1): bubble 1F1B 21,
  ZB-H1 7, ZB-H2 0; peak activations 1F1B and ZB-H1 p*M_B, ZB-H2 (2p-1)*M_B.
- Korthikanti et al. 2022: interleaving multiplies 1F1B's activations by 1 + (p-1)/(p*v).
"""

from __future__ import annotations

import importlib
import math

import numpy as np
import pytest
from hypothesis import given, reject, settings
from hypothesis import strategies as st

from engine.errors import InputError
from engine.pipeline import (
    ROUNDING_TOLERANCE,
    SCHEDULES,
    PipelineOp,
    PipelineResult,
    PipelineSpec,
    SimulationCancelled,
    check_simulated_size,
    closed_form_bubble,
    draw_timeline,
    micro_batches_from_batch,
    render_timeline,
    schedule_actions,
    simulate,
    validate_schedule,
)
from engine.pipeline.schedules import stage_actions


def _sim(schedule: str, p: int, m: int, v: int = 1, **times: float) -> PipelineResult:
    """Simulate and check the timeline is valid: every op once, after its inputs."""
    result = simulate(PipelineSpec(schedule, p, m, v, **times))
    assert validate_schedule(result) == []
    return result


# --- Values from the papers ----------------------------------------------------------------------


@pytest.mark.parametrize("schedule", ["gpipe", "1f1b"])
def test_p4_m8_bubble_both_conventions(schedule: str) -> None:
    # Narayanan et al. 2021 §2.2.1: (p-1)/m = 3/8; GPipe: (p-1)/(m+p-1) = 3/11.
    result = _sim(schedule, 4, 8)
    assert result.bubble_over_ideal == pytest.approx(0.375)
    assert result.bubble_fraction == pytest.approx(3 / 11)
    assert result.closed_form.bubble_over_ideal == pytest.approx(0.375)
    assert result.closed_form.bubble_fraction == pytest.approx(3 / 11)
    assert result.closed_form.value == pytest.approx(0.375)


def test_p4_m8_interleaved_v2() -> None:
    # Narayanan et al. 2021 §2.2.2: (p-1)/(m*v) = 3/16.
    result = _sim("interleaved-1f1b", 4, 8, 2)
    assert result.bubble_over_ideal == pytest.approx(0.1875)
    assert result.closed_form.value == pytest.approx(0.1875)


@pytest.mark.parametrize("schedule", ["gpipe", "1f1b"])
def test_p4_m16(schedule: str) -> None:
    result = _sim(schedule, 4, 16)
    assert result.bubble_over_ideal == pytest.approx(0.1875)
    assert result.bubble_fraction == pytest.approx(3 / 19)
    assert result.bubble_fraction == pytest.approx(0.1579, abs=5e-5)


@pytest.mark.parametrize(("schedule", "bubble"), [("1f1b", 21.0), ("zb-h1", 7.0), ("zb-h2", 0.0)])
def test_zero_bubble_table2_bubble(schedule: str, bubble: float) -> None:
    # Qi et al. 2023 Table 2 with p=8, T_F=T_B=T_W=1.
    result = _sim(schedule, 8, 24)
    assert result.bubble_time == pytest.approx((bubble,) * 8)
    assert result.closed_form.bubble_time == pytest.approx(bubble)
    assert "Qi et al. 2023" in closed_form_bubble(PipelineSpec("zb-h1", 8, 24)).source


@pytest.mark.parametrize(("schedule", "peak"), [("1f1b", 8), ("zb-h1", 8), ("zb-h2", 15)])
def test_zero_bubble_table2_peak_activations(schedule: str, peak: int) -> None:
    # Qi et al. 2023 Table 2: 1F1B and ZB-H1 p*M_B, ZB-H2 (2p-1)*M_B, on the first stage.
    result = _sim(schedule, 8, 24)
    assert max(result.peak_in_flight_microbatches) == peak
    assert result.peak_in_flight_microbatches[0] == peak


def test_gpipe_peak_is_m() -> None:
    assert _sim("gpipe", 4, 32).peak_in_flight_microbatches == (32.0,) * 4


def test_interleaved_peak_matches_korthikanti_factor() -> None:
    # Korthikanti et al. 2022: p * (1 + (p-1)/(p*v)) micro-batches on the first stage.
    p, v = 4, 2
    result = _sim("interleaved-1f1b", p, 16, v)
    assert result.peak_in_flight_microbatches[0] == pytest.approx(p * (1 + (p - 1) / (p * v)))


def test_interleaved_peak_per_stage_counts_chunks_as_1_over_v() -> None:
    """p = 4, m = 8, v = 2, the Bubble pane's defaults, stage by stage.

    Megatron-LM's interleaved schedule (Narayanan et al. 2021 §2.2.2; NVIDIA/Megatron-LM
    megatron/core/pipeline_parallel/schedules.py) runs on stage i a warm-up of
    2(p - i - 1) + (v - 1)p chunk forwards, then alternates one forward and one backward: one
    more forward comes before the first backward frees a chunk, so at most
    2(p - i - 1) + (v - 1)p + 1 chunks are in flight (fewer than the m·v = 16 chunks of the
    iteration here): 11, 9, 7, 5. A chunk is 1/v of the stage's layers and holds 1/v of a
    micro-batch's activations there: 5.5, 4.5, 3.5 and 2.5 micro-batches' worth. Stage 0's
    5.5 is p(1 + (p - 1)/(pv)), Korthikanti et al. 2022 §4.2.3's interleaving factor."""
    p, m, v = 4, 8, 2
    chunks = [2 * (p - i - 1) + (v - 1) * p + 1 for i in range(p)]
    assert chunks == [11, 9, 7, 5] and max(chunks) < m * v
    result = _sim("interleaved-1f1b", p, m, v)
    assert result.peak_in_flight_microbatches == (5.5, 4.5, 3.5, 2.5)
    assert result.peak_in_flight_microbatches[0] == p * (1 + (p - 1) / (p * v))


def test_zb_h2_parallelogram_makespan_longer_than_iteration() -> None:
    # Stages are shifted copies of one block: one iteration ends (p-1)*t_F after the ideal.
    result = _sim("zb-h2", 8, 24)
    assert result.iteration_time == pytest.approx(result.ideal_time)
    assert result.makespan == pytest.approx(result.ideal_time + 7)


def test_conventions_and_sources_named_in_every_result() -> None:
    for schedule in SCHEDULES:
        result = _sim(schedule, 4, 8)
        assert "bubble/ideal" in result.conventions and "bubble/total" in result.conventions
        assert result.closed_form.source
        assert result.closed_form.formula
    assert "Huang et al. 2019" in _sim("gpipe", 4, 8).closed_form.source
    assert "§2.2.2" in _sim("interleaved-1f1b", 4, 8, 2).closed_form.source


# --- properties ----------------------------------------------------------------------------------

stages = st.integers(min_value=1, max_value=9)
micro_batches = st.integers(min_value=1, max_value=40)
times = st.sampled_from([0.25, 0.5, 1.0, 1.5, 2.0, 3.0])


@settings(max_examples=60, deadline=None)
@given(
    p=stages, m=st.integers(min_value=1, max_value=39), schedule=st.sampled_from(["gpipe", "1f1b"])
)
def test_bubble_over_ideal_falls_as_m_grows(p: int, m: int, schedule: str) -> None:
    smaller, larger = _sim(schedule, p, m), _sim(schedule, p, m + 1)
    if p == 1:
        assert smaller.bubble_over_ideal == larger.bubble_over_ideal == 0
    else:
        assert larger.bubble_over_ideal < smaller.bubble_over_ideal
        assert larger.bubble_fraction < smaller.bubble_fraction


@settings(max_examples=60, deadline=None)
@given(p=stages, m=micro_batches, tf=times, tb=times, tw=times)
def test_gpipe_and_1f1b_same_bubble_but_1f1b_holds_at_most_p(
    p: int, m: int, tf: float, tb: float, tw: float
) -> None:
    durations = {"t_forward": tf, "t_backward_input": tb, "t_backward_weight": tw}
    gpipe, one_f_one_b = _sim("gpipe", p, m, **durations), _sim("1f1b", p, m, **durations)
    assert one_f_one_b.bubble_time == pytest.approx(gpipe.bubble_time)
    assert one_f_one_b.makespan == pytest.approx(gpipe.makespan)
    assert max(one_f_one_b.peak_in_flight_microbatches) <= p
    assert gpipe.peak_in_flight_microbatches == (float(m),) * p


@settings(max_examples=60, deadline=None)
@given(p=stages, groups=st.integers(1, 5), v=st.integers(1, 4), tf=times, tb=times, tw=times)
def test_interleaved_bubble_is_1f1b_bubble_over_v(
    p: int, groups: int, v: int, tf: float, tb: float, tw: float
) -> None:
    m = groups * p
    durations = {"t_forward": tf, "t_backward_input": tb, "t_backward_weight": tw}
    interleaved = _sim("interleaved-1f1b", p, m, v, **durations)
    one_f_one_b = _sim("1f1b", p, m, **durations)
    assert interleaved.bubble_time[0] == pytest.approx(one_f_one_b.bubble_time[0] / v)


@settings(max_examples=150, deadline=None)
@given(
    schedule=st.sampled_from(SCHEDULES),
    p=stages,
    m=micro_batches,
    v=st.integers(1, 4),
    tf=times,
    tb=times,
    tw=st.sampled_from([0.0, 0.25, 0.5, 1.0, 2.0]),
    hop=st.sampled_from([0.0, 0.0, 0.1, 1.0]),
)
def test_every_schedule_valid_finite_and_matches_closed_form_where_it_applies(
    schedule: str, p: int, m: int, v: int, tf: float, tb: float, tw: float, hop: float
) -> None:
    if schedule == "interleaved-1f1b":
        m = max(1, m // p) * p
    else:
        v = 1
    spec = PipelineSpec(schedule, p, m, v, tf, tb, tw, hop)
    result = simulate(spec)
    assert validate_schedule(result) == []
    numbers = [
        *result.bubble_time,
        result.bubble_over_ideal,
        result.bubble_fraction,
        result.makespan,
        result.iteration_time,
        *result.peak_in_flight_microbatches,
    ]
    assert all(math.isfinite(x) and x >= 0 for x in numbers)
    assert result.bubble_fraction < 1
    assert result.ideal_time == pytest.approx(m * (tf + tb + tw))
    assert result.bubble_fraction == pytest.approx(
        result.bubble_over_ideal / (1 + result.bubble_over_ideal)
    )
    closed = result.closed_form
    if closed.applies:
        assert result.bubble_time[0] == pytest.approx(closed.bubble_time, abs=1e-9)
        assert result.bubble_over_ideal == pytest.approx(closed.bubble_over_ideal, abs=1e-12)
        assert result.bubble_fraction == pytest.approx(closed.bubble_fraction, abs=1e-12)
    if hop == 0 and schedule in ("gpipe", "1f1b", "interleaved-1f1b"):
        assert closed.applies


@pytest.mark.parametrize("p", [1, 2, 3, 4, 8])
@pytest.mark.parametrize("m", [1, 2, 4, 8, 16, 24])
@pytest.mark.parametrize("v", [1, 2, 3])
def test_grid_simulated_equals_closed_form(p: int, m: int, v: int) -> None:
    for schedule in SCHEDULES:
        if schedule == "interleaved-1f1b" and m % p:
            continue
        spec = PipelineSpec(schedule, p, m, v if schedule == "interleaved-1f1b" else 1)
        result = simulate(spec)
        assert validate_schedule(result) == []
        if result.closed_form.applies:
            assert result.bubble_over_ideal == pytest.approx(
                result.closed_form.bubble_over_ideal, abs=1e-12
            ), schedule


def test_zero_bubble_formulas_clip_at_zero() -> None:
    # Qi et al. 2023 Table 2 gives (p-1)(T_F+T_B-2T_W); negative sizes mean no bubble.
    closed = closed_form_bubble(PipelineSpec("zb-h2", 4, 16, t_backward_input=0.5, t_forward=1))
    assert closed.value == 0
    assert closed_form_bubble(PipelineSpec("zb-h1", 4, 16, t_backward_weight=3)).value == 0


def test_closed_form_reports_when_assumptions_fail() -> None:
    assert not closed_form_bubble(PipelineSpec("zb-h1", 8, 4)).applies
    assert not closed_form_bubble(PipelineSpec("zb-h2", 8, 8)).applies
    assert not closed_form_bubble(PipelineSpec("1f1b", 4, 8, p2p_time=0.5)).applies
    # With a p2p hop the simulated bubble grows beyond the formula.
    assert _sim("1f1b", 4, 8, p2p_time=0.5).bubble_time[0] > 9


def test_schedule_actions_cover_each_op_once() -> None:
    actions = schedule_actions(PipelineSpec("zb-h1", 4, 8))
    assert len(actions) == 4
    for stage in actions:
        assert sorted((a.kind, a.micro_batch) for a in stage) == sorted(
            (kind, mb) for kind in "FBW" for mb in range(8)
        )


def test_gpipe_timeline_shape() -> None:
    # Stage 1 ends its forwards at 3 and runs BW0 in [3, 5]; stage 0 waits for it.
    result = _sim("gpipe", 2, 2)
    assert result.timeline[0] == (
        PipelineOp("F", 0, 0, 0.0, 1.0),
        PipelineOp("F", 1, 0, 1.0, 2.0),
        PipelineOp("BW", 0, 0, 5.0, 7.0),
        PipelineOp("BW", 1, 0, 7.0, 9.0),
    )


# --- the validator can fail ----------------------------------------------------------------------


def _with_timeline(result: PipelineResult, timeline: tuple[tuple[PipelineOp, ...], ...]) -> object:
    class Fake:
        spec = result.spec
        makespan = result.makespan

    fake = Fake()
    fake.timeline = timeline  # type: ignore[attr-defined]
    return fake


def test_validator_catches_missing_duplicate_and_early_ops() -> None:
    result = _sim("1f1b", 3, 4)
    rows = [list(ops) for ops in result.timeline]
    missing = [rows[0][:-1], *rows[1:]]
    problems = validate_schedule(_with_timeline(result, tuple(map(tuple, missing))))  # type: ignore[arg-type]
    assert any("never runs" in problem for problem in problems)
    duplicated = [[*rows[0], rows[0][-1]._replace(start=99.0, end=101.0)], *rows[1:]]
    problems = validate_schedule(_with_timeline(result, tuple(map(tuple, duplicated))))  # type: ignore[arg-type]
    assert any("runs twice" in problem for problem in problems)
    # Stage 1's first forward moved before stage 0's has ended.
    early = [rows[0], [rows[1][0]._replace(start=0.0, end=1.0), *rows[1][1:]], rows[2]]
    problems = validate_schedule(_with_timeline(result, tuple(map(tuple, early))))  # type: ignore[arg-type]
    assert any("starts before" in problem for problem in problems)


# --- inputs --------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"stages": 0}, "stages"),
        ({"stages": -2}, "stages"),
        ({"stages": 2.5}, "stages"),
        ({"num_microbatches": 0}, "num_microbatches"),
        ({"num_microbatches": 3.5}, "num_microbatches"),
        ({"num_microbatches": float("nan")}, "num_microbatches"),
        ({"num_microbatches": float("inf")}, "num_microbatches"),
        ({"num_microbatches": True}, "num_microbatches"),
        ({"virtual_stages": 0}, "virtual_stages"),
        ({"virtual_stages": 2}, "virtual_stages"),
        ({"t_forward": -1.0}, "t_forward"),
        ({"t_forward": 0.0}, "t_forward"),
        ({"t_backward_input": float("nan")}, "t_backward_input"),
        ({"t_backward_weight": float("inf")}, "t_backward_weight"),
        ({"t_backward_weight": -0.5}, "t_backward_weight"),
        ({"p2p_time": -1.0}, "p2p_time"),
        ({"schedule": "pipedream"}, "schedule"),
    ],
)
def test_invalid_spec_names_the_field(kwargs: dict[str, object], field: str) -> None:
    values: dict[str, object] = {"schedule": "1f1b", "stages": 4, "num_microbatches": 8, **kwargs}
    with pytest.raises(InputError) as caught:
        PipelineSpec(**values)  # type: ignore[arg-type]
    assert caught.value.field == field


@pytest.mark.parametrize(
    "field", ["t_forward", "t_backward_input", "t_backward_weight", "p2p_time"]
)
def test_an_op_time_that_would_overflow_the_figures_is_refused(field: str) -> None:
    """t_B = 1e308 is finite, but GPipe p=4, m=8 runs 8 F and 8 BW ops on a stage: its makespan
    (11 × (t_F + t_B + t_W) and more) overflows a float's 1.8e308 to inf, and the bubble
    inf - inf is NaN; the op time is refused, naming its field and the value."""
    with pytest.raises(InputError) as caught:
        PipelineSpec("gpipe", 4, 8, **{field: 1e308})  # type: ignore[arg-type]
    assert caught.value.field == field
    assert caught.value.message == "must be at most 1e+24, got 1e+308"


def test_a_spec_built_around_its_checks_never_gives_a_non_finite_figure() -> None:
    """A spec whose t_B was set past its checks to 1e308: GPipe's makespan overflows (see
    above), and the simulation refuses rather than report inf and nan."""
    spec = PipelineSpec("gpipe", 4, 8)
    object.__setattr__(spec, "t_backward_input", 1e308)
    with pytest.raises(InputError) as caught, np.errstate(over="ignore"):
        simulate(spec)
    assert caught.value.field == "t_forward"


def test_the_largest_op_times_give_finite_figures() -> None:
    """1F1B p=4, m=8 with every op time at the bound 1e24: each stage computes
    m(t_F + t_B + t_W) = 8 × 3e24 = 2.4e25, and the bubble/ideal is the paper's (p-1)/m = 3/8
    whatever the unit (Narayanan et al. 2021 §2.2.1); a p2p time of 1e24 only adds to it."""
    result = simulate(PipelineSpec("1f1b", 4, 8, 1, 1e24, 1e24, 1e24, 0.0))
    assert result.ideal_time == pytest.approx(2.4e25)
    assert result.bubble_over_ideal == pytest.approx(3 / 8)
    assert result.makespan == pytest.approx(11 * 3e24)
    slow = simulate(PipelineSpec("1f1b", 4, 8, 1, 1e24, 1e24, 1e24, 1e24))
    figures = (slow.makespan, slow.iteration_time, slow.bubble_over_ideal, slow.bubble_fraction)
    assert all(math.isfinite(figure) for figure in figures)
    assert slow.bubble_over_ideal > 3 / 8


def test_interleaved_needs_m_multiple_of_p() -> None:
    with pytest.raises(
        InputError, match="Interleaved 1F1B needs m to be a multiple of p"
    ) as caught:
        PipelineSpec("interleaved-1f1b", 4, 10, 2)
    assert caught.value.field == "num_microbatches"


def test_whole_floats_are_accepted() -> None:
    spec = PipelineSpec("1f1b", 4.0, 8.0)  # type: ignore[arg-type]
    assert (spec.stages, spec.num_microbatches) == (4, 8)
    assert isinstance(spec.stages, int)


def test_simulation_size_limit_is_a_named_error() -> None:
    with pytest.raises(InputError) as caught:
        simulate(PipelineSpec("gpipe", 64, 100_000))
    assert caught.value.field == "num_microbatches"


@pytest.mark.parametrize(
    ("spec", "shown"),
    [
        # GPipe and 1F1B run an F and a BW per stage and micro-batch: 2·p·m ops, no v.
        (PipelineSpec("gpipe", 100, 100_000), "2*p*m = 2 × 100 × 100000 = 20,000,000 ops"),
        (PipelineSpec("1f1b", 1100, 1000), "2*p*m = 2 × 1100 × 1000 = 2,200,000 ops"),
        # Interleaved: each of the v chunks per stage runs its own F and BW.
        (
            PipelineSpec("interleaved-1f1b", 100, 10_000, virtual_stages=2),
            "2*p*m*v = 2 × 100 × 10000 × 2 = 4,000,000 ops",
        ),
        # Zero bubble splits the backward into B and W: 3·p·m ops.
        (PipelineSpec("zb-h1", 100, 10_000), "3*p*m = 3 × 100 × 10000 = 3,000,000 ops"),
    ],
)
def test_size_limit_counts_and_shows_the_true_op_count(spec: PipelineSpec, shown: str) -> None:
    """The number the refusal shows is the product its formula names, and the op count the
    limit is checked against (2^21 = 2,097,152 ops)."""
    with pytest.raises(InputError) as caught:
        check_simulated_size(spec)
    assert shown in caught.value.message and "(2,097,152)" in caught.value.message
    assert f"{spec.num_ops:,} ops" in caught.value.message


def test_size_limit_bounds_the_stages_apart_from_the_ops() -> None:
    """1F1B with 1,000,000 stages of one micro-batch is 2,000,000 ops, under 2^21, yet took
    minutes: the stages are bounded on their own (2^14), on the stages field."""
    check_simulated_size(PipelineSpec("1f1b", 16_384, 1))
    for stages in (16_385, 1_000_000):
        with pytest.raises(InputError) as caught:
            check_simulated_size(PipelineSpec("1f1b", stages, 1))
        assert caught.value.field == "stages"
        assert f"p = {stages:,} stages" in caught.value.message


def test_size_limit_admits_what_it_counts_as_small_enough() -> None:
    """GPipe at p=100, m=10,000 runs 2,000,000 ops (2·p·m: a v typed in the form does not apply
    to it), under 2,097,152; the same with v = 2 interleaved is 4,000,000, refused."""
    check_simulated_size(PipelineSpec("gpipe", 100, 10_000))
    check_simulated_size(PipelineSpec("1f1b", 1024, 1024))  # 2·2^20 = 2^21 ops: the limit itself
    with pytest.raises(InputError):
        check_simulated_size(PipelineSpec("1f1b", 1024, 1025))


def test_micro_batches_from_batch() -> None:
    assert micro_batches_from_batch(512, 4, 8) == 16
    with pytest.raises(InputError) as caught:
        micro_batches_from_batch(100, 3, 2)
    assert caught.value.field == "global_batch"
    with pytest.raises(InputError) as caught:
        micro_batches_from_batch(4, 8, 1)  # m would be 0.5
    assert caught.value.field == "global_batch"
    for args, field in [((0, 1, 1), "global_batch"), ((8, 0, 1), "micro_batch_size")]:
        with pytest.raises(InputError) as caught:
            micro_batches_from_batch(*args)
        assert caught.value.field == field
    with pytest.raises(InputError) as caught:
        micro_batches_from_batch(8, 1, 1.5)  # type: ignore[arg-type]
    assert caught.value.field == "dp"


# --- rendering -----------------------------------------------------------------------------------


def _runs(row: str) -> list[tuple[str, int, int]]:
    """(kind, first column, width) of every op drawn in a row's cells: an upper-case letter,
    then its micro-batch digits and lower-case letters of the same kind."""
    runs: list[tuple[str, int, int]] = []
    for column, cell in enumerate(row):
        if cell.isupper():
            runs.append((cell, column, 1))
        elif cell != "." and runs:
            kind, first, width = runs[-1]
            assert cell.isdigit() or cell == kind.lower(), row
            runs[-1] = (kind, first, width + 1)
    return runs


def _cells(text: str, p: int) -> list[str]:
    rows = [line for line in text.splitlines() if line.startswith("stage ")]
    assert [row.split()[1] for row in rows] == [str(r) for r in range(p)]
    return [row[len(f"stage {p - 1} ") :] for row in rows]


@pytest.mark.parametrize("schedule", SCHEDULES)
@pytest.mark.parametrize("p", [1, 2, 4, 8, 16])
def test_render_is_ascii_with_one_row_per_stage(schedule: str, p: int) -> None:
    v = 2 if schedule == "interleaved-1f1b" else 1
    result = _sim(schedule, p, 2 * p, v)
    text = render_timeline(result)
    assert text.isascii()
    cells = _cells(text, p)
    assert len({len(row) for row in cells}) == 1
    # Fits 80 columns when the makespan does at one column per time unit (t_F = 1 here,
    # chunks 1/v); else one column per unit, wider than 80, and the reader scrolls.
    units, room = round(result.makespan * v), 80 - len(f"stage {p - 1} ")
    assert len(cells[0]) == (units * (room // units) if units <= room else units)
    assert "idle" in text.splitlines()[-1]


op_time = st.sampled_from([0.25, 0.5, 1.0, 1.5, 2.0, 3.0, 0.1, 0.3, 1.37, 2.5])


@settings(max_examples=150, deadline=None)
@given(
    schedule=st.sampled_from(SCHEDULES),
    p=st.integers(1, 6),
    groups=st.integers(1, 4),
    v=st.integers(1, 3),
    tf=op_time,
    tb=op_time,
    tw=st.one_of(st.just(0.0), op_time),
    p2p=st.sampled_from([0.0, 0.0, 0.05, 0.1, 0.5, 1.0]),
    width=st.integers(30, 200),
)
def test_equal_operations_have_equal_widths_in_every_timeline(
    schedule: str, p: int, groups: int, v: int, tf: float, tb: float, tw: float, p2p: float,
    width: int,
) -> None:  # fmt: skip
    v = v if schedule == "interleaved-1f1b" else 1
    result = _sim(schedule, p, p * groups, v, t_forward=tf, t_backward_input=tb,
                  t_backward_weight=tw, p2p_time=p2p)  # fmt: skip
    try:
        drawing = draw_timeline(result, width)
    except InputError as error:  # too fine to draw within MAX_TIMELINE_COLUMNS: said, not drawn
        assert "not drawn" in error.message
        reject()
    spec = result.spec
    # Each kind's width is its op time in grid units times the columns per unit; B includes W
    # when the schedule runs them as one op.
    backward = tb if spec.split_backward else tb + tw
    exact = {"F": tf / v, "B": backward / v, "W": tw / v}
    step = drawing.unit / drawing.columns_per_unit
    shortest = min(exact[kind] for kind in drawing.widths if exact[kind] > 0)
    tolerance = ROUNDING_TOLERANCE * shortest if drawing.rounded else 0.0
    for kind, columns in drawing.widths.items():
        assert abs(columns * step - exact[kind]) <= tolerance + 1e-9
    rows = _cells(drawing.text(), p)
    for row, ops in zip(rows, drawing.drawn.timeline, strict=True):
        runs = _runs(row)
        # Every op drawn once (a W of t_W = 0 takes no column), in order, where it runs and
        # exactly its kind's width.
        ops = tuple(op for op in ops if drawing.widths[op.kind[0]])
        assert [kind for kind, _first, _width in runs] == [op.kind[0] for op in ops]
        assert all(columns == drawing.widths[kind] for kind, _first, columns in runs)
        assert [first for _kind, first, _width in runs] == [round(op.start / step) for op in ops]
    assert len(rows[0]) == round(drawing.drawn.makespan / step)
    if len(rows[0]) > width - len(f"stage {p - 1} "):
        assert drawing.columns_per_unit == 1  # only at the finest scale is it wider


def test_render_draws_integer_columns_per_time_unit() -> None:
    # GPipe p=4, m=8, t_F = t_B = t_W = 1: makespan (m+p-1)(t_F + t_B + t_W) = 33 units; at 120
    # columns 3 columns per unit fit (3 x 33 = 99 <= 112): every F is 3 columns, every B+W 6.
    drawing = draw_timeline(_sim("gpipe", 4, 8), 120)
    assert (drawing.unit, drawing.columns_per_unit) == (1.0, 3)
    assert drawing.widths == {"F": 3, "B": 6}
    assert drawing.rows[0].split()[2] == "F0fF1fF2fF3fF4fF5fF6fF7f" + "." * 27 + "B0bbbb" + (
        "".join(f"B{n}bbbb" for n in range(1, 8))
    )
    assert "3 columns per op-time unit," in drawing.header
    # Half-unit chunks (interleaved, v = 2): the grid unit is 0.5, so F stays whole columns.
    interleaved = draw_timeline(_sim("interleaved-1f1b", 4, 8, 2), 80)
    assert interleaved.unit == 0.5 and interleaved.widths["F"] * 2 == interleaved.widths["B"]


def test_render_rounds_fine_op_times_and_says_so() -> None:
    # t_B + t_W = 1.87 needs a 0.01 grid (3,237 steps): drawn at 0.1 instead, B as 1.9.
    result = _sim("1f1b", 4, 8, t_forward=1, t_backward_input=1.37, t_backward_weight=0.5)
    drawing = draw_timeline(result, 80)
    assert drawing.rounded and drawing.unit == pytest.approx(0.1)
    assert drawing.widths == {"F": 10, "B": 19}
    assert "rounded to multiples of 0.1" in drawing.rounding
    with pytest.raises(InputError) as caught:
        draw_timeline(_sim("gpipe", 4, 800), 80)
    assert caught.value.field == "num_microbatches" and "not drawn" in caught.value.message


def test_render_shows_micro_batch_digits_when_they_fit() -> None:
    text = render_timeline(_sim("gpipe", 2, 3))
    assert "F0" in text and "F2" in text and "B1" in text
    assert "micro-batch" in text.splitlines()[-1]


def test_render_rejects_too_narrow() -> None:
    with pytest.raises(InputError) as caught:
        render_timeline(_sim("1f1b", 4, 8), width=12)
    assert caught.value.field == "width"


# --- the column simulator against the event-driven one ------------------------------------------

_simulate_module = importlib.import_module("engine.pipeline.simulate")
odd_times = st.sampled_from([0.1, 0.3, 0.7, 1.0, 1.3, 2.0])


@settings(max_examples=150, deadline=None)
@given(
    schedule=st.sampled_from(SCHEDULES),
    p=stages,
    m=micro_batches,
    v=st.integers(1, 3),
    tf=odd_times,
    tb=odd_times,
    tw=st.sampled_from([0.0, 0.4, 1.0]),
    p2p=st.sampled_from([0.0, 0.1, 0.25, 1.5]),
)
def test_columns_give_the_event_loops_start_times_to_the_bit(
    schedule: str, p: int, m: int, v: int, tf: float, tb: float, tw: float, p2p: float
) -> None:
    """Every op starts at exactly the float the event-driven loop computes, for every schedule,
    op time and p2p time (times such as 0.1 are not exact in binary: the same operations in
    the same order are needed, not the same value up to rounding)."""
    if schedule != "interleaved-1f1b":
        v = 1
    elif m % p:
        m = p * (m // p + 1)
    spec = PipelineSpec(schedule, p, m, v, tf, tb, tw, p2p)
    actions = stage_actions(spec)
    durations = np.array(_simulate_module.stage_op_times(spec))
    expected = _simulate_module._run(spec, actions, [durations[a.codes].tolist() for a in actions])
    got = _simulate_module._run_columns(spec, actions, durations)
    assert got is not None
    assert [stage.tolist() for stage in got] == expected


def test_1f1b_at_two_million_ops_runs_by_columns_and_reaches_the_formula() -> None:
    """1F1B at p = 100, m = 10,000 (the largest the Bubble pane is driven with): the column
    simulator takes it (the event loop would be five times slower) and the bubble is the
    paper's (p-1)/m = 99/10,000 (Narayanan et al. 2021 §2.2.1) exactly."""
    spec = PipelineSpec("1f1b", 100, 10_000)
    actions = stage_actions(spec)
    assert _simulate_module._run_columns(spec, actions, np.ones(3)) is not None
    result = simulate(spec)
    assert result.bubble_over_ideal == 99 / 10_000
    # Each stage computes m(t_F + t_B + t_W) = 30,000 and idles (p-1)(t_F + t_B + t_W) = 297.
    assert result.makespan == result.iteration_time == 30_000 + 297


@pytest.mark.parametrize(
    ("schedule", "stages", "micro_batches"),
    [("1f1b", 100, 10_000), ("gpipe", 2000, 5), ("interleaved-1f1b", 8, 64)],
)
def test_a_simulation_stops_when_its_caller_gives_up(
    schedule: str, stages: int, micro_batches: int
) -> None:
    """A caller that no longer wants the result (a newer input, the app closing) stops the
    simulation at the next check, whichever loop runs it, and the drawing too; asked and never
    told to stop, the simulation gives the same figures as without a caller."""
    spec = PipelineSpec(
        schedule, stages, micro_batches, virtual_stages=2 if "inter" in schedule else 1
    )
    asked: list[int] = []

    def after_first_question() -> bool:
        asked.append(1)
        return len(asked) > 1

    with pytest.raises(SimulationCancelled):
        simulate(spec, after_first_question)
    never = simulate(spec, lambda: False)
    assert never.bubble_over_ideal == simulate(spec).bubble_over_ideal
    assert never.makespan == simulate(spec).makespan
    with pytest.raises(SimulationCancelled):
        draw_timeline(never, 80, lambda: True)


@pytest.mark.parametrize(
    ("stages", "value"),
    [
        # (p-1)/m = 99999/8 = 12499.875: a figure of 1,000 and more is written to its whole
        # part, 12,500, in the table; the formula line wrote 12499.9 beside it.
        (100_000, "12,500"),
        # (p-1)/m = 3/8 = 0.375 (Narayanan et al. 2021 §2.2.1).
        (4, "0.375"),
    ],
)
def test_the_closed_forms_value_is_written_as_the_figures_table_writes_it(
    stages: int, value: str
) -> None:
    import io

    from rich.console import Console

    from tui.widgets.bubble import closed_form_renderable

    spec = PipelineSpec("1f1b", stages, 8)
    formula = closed_form_bubble(spec).formula
    assert formula.startswith(f"bubble/ideal = (p-1)/m = {stages - 1}/8 = {value};"), formula
    console = Console(width=60, file=io.StringIO(), record=True)
    console.print(closed_form_renderable(spec))
    rows = [" ".join(line.split()) for line in console.export_text().splitlines()]
    assert f"closed form b/ideal {value}" in rows, rows
