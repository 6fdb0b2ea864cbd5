"""Step time (engine.steptime) and scaling (engine.scaling): values from the papers (Narayanan et
al. 2021 Eq. 3-4, Korthikanti et al. 2022 Eq. 7-8, Kaplan et al. 2020 §2.1), each test naming its
source, and the lesson's claims as
hypothesis properties (a slower inter-node link never shortens the step; TP's exposed
communication grows more than PP's when the link slows; efficiency < 1 beyond one rank when
communication is not fully hidden)."""

from __future__ import annotations

import itertools
import json
import math
from dataclasses import replace
from pathlib import Path

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from cli.main import main
from engine.collectives import collective_cost
from engine.errors import InputError
from engine.scaling import (
    MARKERS,
    SCALING_STRATEGIES,
    ScalingPoint,
    ScalingSeries,
    describe_assumptions,
    render_scaling_plot,
    scaling_all,
    scaling_plot,
    scaling_series,
    strategy_spec,
    world_sizes,
)
from engine.steptime import (
    INTERCONNECTS,
    Interconnect,
    StepSpec,
    custom_interconnect,
    korthikanti_flops,
    six_n_flops,
    step_time,
    time_to_train,
)
from engine.tradeoffs import (
    COUNTEREXAMPLES,
    compare_interconnects,
    get_counterexample,
    run_counterexample,
    tradeoffs_report,
)

CONTENT = Path(__file__).resolve().parents[1] / "content" / "S15.yaml"
SMALL = StepSpec(layers=24, hidden=2048, heads=16, vocab=50304, seq=2048, global_batch=64)
DAY = 86400.0


def _link(inter: float, latency: float = 5e-6) -> Interconnect:
    return custom_interconnect(INTERCONNECTS["nvlink"], inter_bandwidth=inter, latency=latency)


# ---------------------------------------------------------------------------------- FLOPs


def test_eq7_model_flops_gpt3() -> None:
    """Korthikanti et al. 2022 Eq. 7: 72·B·L·s·h²·(1 + s/(6h) + V/(12·h·L)), GPT-3 175B."""
    B, L, s, h, V = 1536, 96, 2048, 12288, 51200
    flops = korthikanti_flops(batch=B, **{"layers": L, "seq": s, "hidden": h, "vocab": V})
    expected = 72 * B * L * s * h**2 * (1 + s / (6 * h) + V / (12 * h * L))
    assert flops.model == pytest.approx(expected, rel=1e-12)
    assert flops.hardware == flops.model
    # By hand: 72·1536·96·2048·12288² = 3.2832e18, × (1 + 0.027778 + 0.003617) = 3.3862e18.
    assert flops.model == pytest.approx(3.3862e18, rel=1e-4)


def test_eq8_selective_recompute_hardware_flops() -> None:
    """Korthikanti et al. 2022 Eq. 8: 72·B·L·s·h²·(1 + s/(3h) + V/(12·h·L))."""
    B, L, s, h, V = 1, 96, 2048, 12288, 51200
    flops = korthikanti_flops(batch=B, layers=L, seq=s, hidden=h, vocab=V, recompute="selective")
    expected = 72 * B * L * s * h**2 * (1 + s / (3 * h) + V / (12 * h * L))
    assert flops.hardware == pytest.approx(expected, rel=1e-12)
    # Toy, by hand: B=1, L=2, s=4, h=8, V=16 -> 72·1·2·4·64·(1 + 4/48 + 16/192) = 43008.
    toy = korthikanti_flops(batch=1, layers=2, seq=4, hidden=8, vocab=16)
    assert toy.model == pytest.approx(43008.0)


def test_full_recompute_is_narayanan_eq3() -> None:
    """Narayanan et al. 2021 Eq. 3: 96·B·s·l·h²·(1 + s/(6h) + V/(16·l·h))."""
    B, L, s, h, V = 8, 24, 1024, 1024, 50304
    flops = korthikanti_flops(batch=B, layers=L, seq=s, hidden=h, vocab=V, recompute="full")
    assert flops.hardware == pytest.approx(
        96 * B * s * L * h**2 * (1 + s / (6 * h) + V / (16 * L * h)), rel=1e-12
    )


def test_six_n_convention() -> None:
    """6·N per token (Kaplan et al. 2020), 8·N with full recomputation (Narayanan Eq. 4)."""
    assert six_n_flops(1e9, 1e6).model == 6e15
    assert six_n_flops(1e9, 1e6, "full").hardware == 8e15
    result = step_time(StepSpec(params=1e9, seq=1000, global_batch=10))
    assert result.flops_convention == "6N"
    assert result.model_flops_per_step == pytest.approx(6e9 * 1e4)


# ---------------------------------------------------------------------------------- time to train


def test_time_to_train_gpt3_and_1t() -> None:
    """Narayanan et al. 2021 §5.1: GPT-3 175B on 300B tokens, 1024 A100s at 140 TFLOP/s is
    about 34 days; 1T on 450B tokens, 3072 GPUs at 163 TFLOP/s about 84 days (8·T·P/(n·X))."""
    gpt3 = time_to_train(300e9, 175e9, 1024, 140e12, "full")
    assert gpt3.value == pytest.approx(8 * 300e9 * 175e9 / (1024 * 140e12))
    assert gpt3.value / DAY == pytest.approx(33.9, abs=0.05)
    one_t = time_to_train(450e9, 1e12, 3072, 163e12, "full")
    assert one_t.value / DAY == pytest.approx(83.2, abs=0.05)
    # Without recomputation: 6·T·P/(n·X), three quarters of it.
    assert time_to_train(300e9, 175e9, 1024, 140e12, "none").value == pytest.approx(
        0.75 * gpt3.value
    )


def test_step_reports_time_to_train() -> None:
    spec = replace(SMALL, dp=8, tokens=1e9, recompute="full")
    result = step_time(spec)
    assert result.time_to_train_s is not None
    params = 24 * (12 * 2048**2 + 13 * 2048) + (50304 + 2048) * 2048  # Narayanan Eq. 2
    x = 312e12 * 0.5
    assert result.time_to_train_s == pytest.approx(8 * 1e9 * params / (8 * x), rel=1e-9)
    assert "time_to_train_s" in result.as_dict()


# ---------------------------------------------------------------------------------- terms


def test_step_is_the_sum_of_its_four_terms_and_figures_carry_sources() -> None:
    spec = replace(SMALL, dp=2, tp=2, pp=2, straggler=0.05, input_rate=1e5)
    r = step_time(spec)
    total = r.t_compute_s + r.t_comm_exposed_s + r.t_input_s + r.t_sync_wait_s
    assert r.t_step_s == pytest.approx(total)
    assert r.t_comm_s >= r.t_comm_exposed_s > 0
    assert r.tokens_per_s == pytest.approx(64 * 2048 / r.t_step_s)
    assert r.mfu == pytest.approx(r.model_flops_per_step / (r.t_step_s * 8 * 312e12))
    assert {c.name for c in r.comm} == {"DP gradients", "TP activations", "PP activations"}
    for term in (*r.terms, *r.comm):
        assert term.formula and term.source
    by_name = {t.name: t for t in r.terms}
    assert by_name["input"].source.startswith("assumption")
    assert by_name["straggler wait"].source.startswith("assumption")
    assert "pipeline bubble" in by_name


def test_volumes_follow_zero_and_megatron() -> None:
    """ZeRO §7: DP and ZeRO-1/2 move 2Ψ, ZeRO-3 3Ψ (per micro-batch here); Narayanan §3.2:
    TP 4 all-reduces of b·s·h per layer per micro-batch, PP b·s·h per micro-batch."""
    psi = step_time(replace(SMALL, dp=4)).comm[0].bytes / 2
    for zero, ops in ((1, ["reduce-scatter", "all-gather"]), (3, ["all-gather", "reduce-scatter"])):
        r = step_time(replace(SMALL, dp=4, zero_stage=zero))
        assert [c.op for c in r.comm] == ops
        assert all(c.bytes == pytest.approx(2 * psi) for c in r.comm)
    calls = sum(c.calls for c in step_time(replace(SMALL, dp=4, zero_stage=3)).comm)
    assert calls == 3 * 16  # 3Ψ per micro-batch, m = 64 / 4 = 16
    tp = step_time(replace(SMALL, tp=4)).comm[0]
    assert tp.bytes == 1 * 2048 * 2048 * 2 and tp.calls == 4 * 24 * 64
    one = collective_cost("all-reduce", 4, tp.bytes, 450e9, 5e-6).time_s  # 400gbps preset
    assert tp.time_s == pytest.approx(tp.calls * one)
    assert tp.hidden_share == 0.0


def test_link_follows_gpus_per_node() -> None:
    slow = replace(SMALL, tp=8, interconnect=INTERCONNECTS["100gbps"])
    assert step_time(replace(slow, gpus_per_node=8)).comm[0].link == "intra"
    assert step_time(replace(slow, gpus_per_node=4)).comm[0].link == "inter"
    assert (
        step_time(replace(slow, gpus_per_node=4)).t_step_s
        > step_time(replace(slow, gpus_per_node=8)).t_step_s
    )


def test_moe_imbalance_wait_and_drops() -> None:
    """Switch Transformer §2.2: capacity = factor × tokens / experts; the hottest expert sets
    the pace; a balanced router waits for nobody."""
    moe = replace(SMALL, experts=8, dp=8, ep=8)
    balanced = step_time(moe)
    assert balanced.moe is not None and balanced.moe.wait_s == 0
    assert any(c.op == "all-to-all" for c in balanced.comm)
    capped = step_time(replace(moe, hot_expert_share=0.5))
    assert capped.moe is not None
    assert capped.moe.load_ratio == 1.25
    assert capped.moe.dropped_share == pytest.approx(0.5 - 1.25 / 8)
    roomy = step_time(replace(moe, hot_expert_share=0.5, capacity_factor=4))
    assert roomy.moe is not None and roomy.moe.load_ratio == 4 and roomy.moe.dropped_share == 0
    assert roomy.t_sync_wait_s > capped.t_sync_wait_s > 0


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"params": None, "layers": None}, "params"),
        ({"tp": 3}, "tp"),
        ({"pp": 25}, "pp"),
        ({"dp": 3}, "global_batch"),
        ({"gpus": 6, "dp": 2}, "gpus"),
        ({"compute_utilization": float("nan")}, "compute_utilization"),
        ({"compute_utilization": 1.5}, "compute_utilization"),
        ({"achieved_flops": 1e15}, "achieved_flops"),
        ({"recompute": "some"}, "recompute"),
        ({"schedule": "x"}, "schedule"),
        ({"zero_stage": 4}, "zero_stage"),
        ({"experts": 8, "ep": 3}, "ep"),
        ({"straggler": -1.0}, "straggler"),
        ({"input_rate": float("inf")}, "input_rate"),
        ({"cp": 3}, "cp"),
        ({"hot_expert_share": 0.01, "experts": 8}, "hot_expert_share"),
    ],
)
def test_bad_input_names_the_field(change: dict[str, object], field: str) -> None:
    with pytest.raises(InputError) as info:
        step_time(replace(SMALL, **change))  # type: ignore[arg-type]
    assert info.value.field == field


def test_gpus_sets_dp() -> None:
    r = step_time(replace(SMALL, gpus=16, tp=2, pp=2))
    assert r.spec.dp == 4 and r.world_size == 16


# ---------------------------------------------------------------------------------- properties

sizes = st.sampled_from([2, 4, 8])
bandwidths = st.floats(min_value=1e9, max_value=1e12)


@st.composite
def configs(draw: st.DrawFn) -> StepSpec:
    strategy = draw(st.sampled_from(("dp", "zero1", "zero3", "tp", "pp", "cp")))
    n = draw(sizes)
    base = replace(
        SMALL,
        layers=draw(st.sampled_from([8, 24])),
        hidden=draw(st.sampled_from([512, 2048])),
        heads=8,
        seq=draw(st.sampled_from([512, 2048])),
        global_batch=draw(st.sampled_from([8, 64])),
        gpus_per_node=draw(st.sampled_from([1, 2, 8])),
        straggler=draw(st.sampled_from([0.0, 0.1])),
        input_rate=draw(st.sampled_from([None, 1e4, 1e6])),
        recompute=draw(st.sampled_from(["none", "selective", "full"])),
    )
    return strategy_spec(base, strategy, n)


@settings(max_examples=60, deadline=None)
@given(configs(), bandwidths, st.floats(min_value=1.0, max_value=100.0))
def test_slower_inter_node_link_never_shortens_the_step(
    spec: StepSpec, fast: float, slowdown: float
) -> None:
    """Lesson: 通信开销取决于...带宽 — a slower link can only add time."""
    quick = step_time(replace(spec, interconnect=_link(fast)))
    slow = step_time(replace(spec, interconnect=_link(fast / slowdown)))
    assert slow.t_step_s >= quick.t_step_s * (1 - 1e-12)
    assert slow.t_comm_exposed_s >= quick.t_comm_exposed_s * (1 - 1e-12)


@settings(max_examples=40, deadline=None)
@given(
    st.sampled_from([2, 4, 8]),
    st.sampled_from([8, 16, 32]),
    st.sampled_from([512, 1024, 4096]),
    st.sampled_from([1, 8, 32]),
    bandwidths,
    st.floats(min_value=1.5, max_value=50.0),
)
def test_tp_exposed_comm_grows_more_than_pp(
    n: int, layers: int, hidden: int, batch: int, fast: float, slowdown: float
) -> None:
    """Exercise 4: with every rank on its own node, TP's per-layer all-reduces sit on the
    critical path and grow with the link; PP's b·s·h per micro-batch mostly overlaps."""
    base = replace(
        SMALL, layers=layers, hidden=hidden, heads=8, global_batch=batch, gpus_per_node=1
    )

    def exposed(strategy: str, bandwidth: float) -> float:
        spec = replace(strategy_spec(base, strategy, n), interconnect=_link(bandwidth))
        return step_time(spec).t_comm_exposed_s

    tp_growth = exposed("tp", fast / slowdown) - exposed("tp", fast)
    pp_growth = exposed("pp", fast / slowdown) - exposed("pp", fast)
    assert tp_growth > pp_growth >= -1e-12


@settings(max_examples=40, deadline=None)
@given(configs(), bandwidths)
def test_efficiency_below_one_when_comm_is_exposed(spec: StepSpec, bandwidth: float) -> None:
    """Misconception 2 (world size 翻倍，吞吐必定翻倍): n ranks reach n × one rank only when
    nothing is exposed."""
    spec = replace(spec, interconnect=_link(bandwidth), input_rate=None)
    result = step_time(spec)
    one = step_time(strategy_spec(spec, "dp", 1))
    efficiency = result.tokens_per_s / (result.world_size * one.tokens_per_s)
    assert result.world_size > 1
    if result.t_comm_exposed_s > 0:
        assert efficiency < 1
    assert efficiency <= 1 + 1e-12


# ---------------------------------------------------------------------------------- scaling


def test_scaling_series_doubling_does_not_double() -> None:
    series = scaling_series(
        replace(SMALL, interconnect=INTERCONNECTS["100gbps"]), "dp", "strong", world_sizes(64)
    )
    points = series.points
    assert [p.world_size for p in points] == [1, 2, 4, 8, 16, 32, 64]
    assert points[0].efficiency == pytest.approx(1.0)
    assert points[-1].tokens_per_s < 2 * points[-2].tokens_per_s
    assert all(p.efficiency < 1 for p in points[1:])
    assert all(math.isfinite(p.tokens_per_s) for p in points)


def test_scaling_skips_what_cannot_run_and_weak_mode_grows_the_batch() -> None:
    tp = scaling_series(SMALL, "tp", "strong", world_sizes(32))
    assert tp.points[-1].skipped.startswith("tp")  # 16 heads: TP 32 cannot split them
    weak = scaling_series(replace(SMALL, global_batch=8), "dp", "weak", (1, 2, 4))
    assert weak.points[2].tokens_per_s > weak.points[1].tokens_per_s
    with pytest.raises(InputError):
        scaling_series(SMALL, "dp", "sideways", (1,))
    with pytest.raises(InputError):
        strategy_spec(SMALL, "magic", 2)
    assert {s.strategy for s in scaling_all(SMALL, "strong", (1, 2))} == set(SCALING_STRATEGIES) - {
        "ep"
    }


def test_plot_fits_the_width_and_shows_linear() -> None:
    series = scaling_all(SMALL, "strong", world_sizes(64), ("dp", "tp"))
    plot = render_scaling_plot(series, 40, 10)
    lines = plot.splitlines()
    assert all(len(line) <= 40 for line in lines)
    assert "." in plot and "D dp" in plot and "T tp" in plot


def _series(strategy: str, tokens: list[float]) -> ScalingSeries:
    sizes = [2**k for k in range(len(tokens))]
    points = tuple(
        ScalingPoint(n, value, value / (n * tokens[0]), 1.0, 0.0)
        for n, value in zip(sizes, tokens, strict=True)
    )
    return ScalingSeries(strategy, "strong", tokens[0], points, "", "")


def test_plot_axes_are_log_log_so_linear_scaling_is_a_straight_line() -> None:
    base = 1000.0
    linear = _series("dp", [base * 2**k for k in range(7)])
    flat = _series("tp", [base] * 7)
    plot = scaling_plot((linear, flat), 60, 13)
    rows = {}
    for row, start, _end, strategy in plot.marks:
        if row < 13:
            rows.setdefault(strategy, []).append((start, row))
    # 1 to 64 GPUs is six doublings over twelve row steps: two rows per doubling, so a series
    # that doubles with n climbs two rows per step right (a linear y axis would put n = 1, 2, 4
    # on the bottom row together).
    dp = sorted(rows["dp"])
    assert [row for _column, row in dp] == [10, 8, 6, 4, 2, 0]
    columns = [column for column, _row in dp]
    assert len({b - a for a, b in itertools.pairwise(columns)}) <= 2  # equal steps
    # A series that does not grow stays on one row; where both start (n = 1) they share a cell.
    assert {row for _column, row in rows["tp"]} == {12}
    assert plot.overlaps == ((1, ("dp", "tp")),)
    assert len(plot.shared) == 1
    assert "* in one cell: n=1 D/T" in plot.text()
    assert "log-log" in plot.text()


def test_plot_marks_every_strategy_for_colour_and_names_shared_cells() -> None:
    series = scaling_all(SMALL, "strong", world_sizes(64), ("dp", "zero3", "tp", "pp"))
    plot = scaling_plot(series, 34, 10)
    assert all(len(line) <= 34 for line in plot.lines)
    drawn = {strategy for _row, _start, _end, strategy in plot.marks}
    assert drawn == {"dp", "zero3", "tp", "pp"}
    for row, start, end, strategy in plot.marks:
        assert plot.lines[row][start:end] in (MARKERS[strategy], f"{MARKERS[strategy]} {strategy}")
    for row, column in plot.shared:
        assert plot.lines[row][column] == "*"
    # Every point drawn is a marker or part of a shared cell: none is hidden under another.
    points = sum(1 for s in series for p in s.points if not p.skipped)
    singles = sum(1 for row, _s, _e, _n in plot.marks if row < 10)
    assert singles + sum(len(names) for _n, names in plot.overlaps) == points


def test_tradeoffs_report_states_its_assumptions() -> None:
    report = tradeoffs_report("100gbps", 16)
    model, batch, device, link = report.assumptions
    # The default model is the lesson-1b preset (GPT-2's vocabulary, V 50257). GPT parameter count
    # (Narayanan et al. 2021 §5.1): 12·l·h² + 13·l·h + (V+s)·h = 1,207,959,552 + 638,976 +
    # 52305·2048 = 1,315,719,168 for l 24, h 2048, V 50257, s 2048.
    assert model == "model: lesson-1b, N = 1.316B params (24 layers, h 2048, 16 heads, V 50257)"
    assert batch.startswith("batch: 64 x sequence 2048 = 131,072 tokens per step")
    assert "312 TFLOP/s" in device and "50%" in device
    assert "100 Gb/s" in link


def test_exercise4_tp_grows_most_on_a_slow_network() -> None:
    rows = compare_interconnects(SMALL, INTERCONNECTS["100gbps"], 16)
    assert rows[0].strategy == "tp"
    by_name = {row.strategy: row for row in rows}
    assert by_name["tp"].growth > by_name["pp"].growth >= 1
    same = compare_interconnects(SMALL, INTERCONNECTS["nvlink"], 16)
    assert all(row.growth == pytest.approx(1.0) for row in same)
    report = tradeoffs_report("pcie", 8)
    assert report.world == 8 and report.series


# ---------------------------------------------------------------------------------- counterexamples


def test_counterexamples_quote_the_lesson_and_show_their_point() -> None:
    lesson = yaml.safe_load(CONTENT.read_text(encoding="utf-8"))
    texts = {
        item["id"]: item["text"]
        for section in lesson["sections"]
        for item in section.get("items", [])
    }
    for example in COUNTEREXAMPLES:
        assert example.quote in texts[example.quote_item]
        assert example.title in texts["deep-counterexamples"]
    slow, small, moe = (run_counterexample(e) for e in COUNTEREXAMPLES)
    dp, zero3, tp_pp = slow
    assert dp.fits is False and zero3.fits is True and tp_pp.fits is True
    assert tp_pp.step.t_step_s < zero3.step.t_step_s
    assert small[0].efficiency < small[1].efficiency < 1
    # Its text: the 16x batch is 16 micro-batches a GPU, gradients accumulated and reduced once,
    # so the same all-reduce leaves the same time exposed (DDP overlaps only the last
    # micro-batch's backward, PyTorch DistributedDataParallel's no_sync) over 16x the compute.
    one_sample, sixteen = (case.step for case in small)
    assert (one_sample.num_microbatches, sixteen.num_microbatches) == (1, 16)
    assert one_sample.t_comm_exposed_s > 0
    assert sixteen.t_comm_exposed_s == pytest.approx(one_sample.t_comm_exposed_s)
    assert sixteen.t_compute_s == pytest.approx(16 * one_sample.t_compute_s, rel=1e-3)
    balanced, capped, roomy = moe
    assert balanced.step.t_sync_wait_s == 0 < capped.step.t_sync_wait_s < roomy.step.t_sync_wait_s


def test_moe_counterexample_efficiency_falls_as_its_step_grows() -> None:
    """The MoE counterexample against a one-GPU baseline that waits for no other rank (a single
    GPU holds every expert): efficiency = ideal compute / T_step, every figure worked by hand.

    Model: 24 layers, h 2048, 16 heads, V 50304, s 2048, 8 GeLU experts of 4h, top-1, global
    batch 64 on DP 8 = EP 8 (m = 8 micro-batches); A100 peak 312e12 × 0.5; 400 Gb/s preset
    (450 GB/s in the node, alpha 5 us)."""
    B, L, s, h, V, f, E = 64, 24, 2048, 2048, 50304, 8192, 8
    x = 312e12 * 0.5
    # Korthikanti et al. 2022 Eq. 7 with k = 1 expert per token.
    flops = 72 * B * L * s * h**2 * (1 + s / (6 * h) + V / (12 * h * L))
    one_gpu = flops / x
    ideal = one_gpu / 8
    alpha, bw = 5e-6, 450e9
    # Parameters (Narayanan Eq. 2 per layer, E expert MLPs and the router h·E + E): Ψ on a rank
    # keeps 1 of the 8 experts per layer (EP 8).
    mlp = 2 * h * f + f + h
    dense = 12 * h * h + 13 * h - mlp + h * E + E
    psi = L * (dense + mlp) + (V + s) * h
    grad_bytes = 2 * psi
    # DP ring all-reduce (MPICH): 2(p-1)·alpha + 2n(p-1)/p·beta; the last 25 MiB bucket is
    # exposed, the rest overlaps the last micro-batch's backward (2/3 of its compute).
    allreduce = 14 * alpha + 2 * grad_bytes * 7 / 8 / bw
    bucket = 14 * alpha + 2 * 25 * 2**20 * 7 / 8 / bw
    exposed = max(bucket, allreduce - 2 * (ideal / 8) / 3)
    # EP: 4 all-to-alls per layer per micro-batch of b·s·k·h·2 bytes, pairwise: 7·alpha +
    # n·7/8·beta, on the critical path.
    a2a = 4 * L * 8 * (7 * alpha + s * h * 2 * 7 / 8 / bw)
    # Switch Transformer §2.2 capacity; the wait: (load ratio - 1) × (expert compute + a2a).
    expert_compute = 3 * L * (2 * B * s * 2 * h * f) / (8 * x)
    waits = [0.0, 0.25 * (expert_compute + a2a), 3 * (expert_compute + a2a)]
    steps = [ideal + exposed + a2a + wait for wait in waits]
    results = run_counterexample(get_counterexample("moe-imbalance"))
    for result, t_step in zip(results, steps, strict=True):
        assert result.step.t_step_s == pytest.approx(t_step, rel=1e-9)
        assert result.efficiency == pytest.approx(ideal / t_step, rel=1e-9)
    efficiencies = [r.efficiency for r in results]
    assert efficiencies[0] > efficiencies[1] > efficiencies[2]
    assert [round(e, 2) for e in efficiencies] == [0.96, 0.84, 0.36]


def test_moe_wait_needs_expert_parallelism() -> None:
    # With EP 1 every rank holds every expert: an uneven router makes no rank wait for another's
    # expert, though the hottest expert still drops what exceeds its capacity.
    moe = replace(SMALL, experts=8, dp=8, ep=1, hot_expert_share=0.5)
    result = step_time(moe)
    assert result.moe is not None and result.moe.wait_s == 0 and result.t_sync_wait_s == 0
    assert result.moe.dropped_share == pytest.approx(0.5 - 1.25 / 8)


def test_virtual_stages_shrink_the_bubble() -> None:
    # Narayanan et al. 2021 §2.2.2: bubble/ideal (p-1)/(m·v); p = 4, m = 8: 3/8 with one chunk per
    # stage, 3/16 with two. lesson-1b (24 layers, h 2048, V 50304, s 2048), batch 8, Eq. 7.
    B, L, s, h, V = 8, 24, 2048, 2048, 50304
    ideal = 72 * B * L * s * h**2 * (1 + s / (6 * h) + V / (12 * h * L)) / (4 * 312e12 * 0.5)
    plain = step_time(StepSpec(model="lesson-1b", pp=4, global_batch=B))
    interleaved = step_time(
        StepSpec(
            model="lesson-1b",
            pp=4,
            global_batch=B,
            schedule="interleaved-1f1b",
            virtual_stages=2,
        )
    )
    assert plain.t_compute_s == pytest.approx(ideal * (1 + 3 / 8), rel=1e-9)
    assert interleaved.t_compute_s == pytest.approx(ideal * (1 + 3 / 16), rel=1e-9)
    pp_sends = next(c for c in interleaved.comm if c.name == "PP activations")
    assert pp_sends.calls == 2 * 8 * 2  # 2·m·v sends per stage
    with pytest.raises(InputError) as info:
        step_time(StepSpec(model="lesson-1b", pp=4, global_batch=B, virtual_stages=2))
    assert info.value.field == "virtual_stages"


def test_llama_flops_read_the_shape() -> None:
    # Llama 2 7B: per layer and sample, forward 2·s·(4h² + 3·h·f) (q, k, v, o and the three SwiGLU
    # matrices) + 4·s²·h (scores), logits 2·s·h·V; three passes (Korthikanti Eq. 7's terms).
    B, L, s, h, f, V = 16, 32, 4096, 4096, 11008, 32000
    model = 3 * (L * (2 * B * s * (4 * h * h + 3 * h * f) + 4 * B * s * s * h) + 2 * B * s * h * V)
    result = step_time(StepSpec(model="llama2-7b", seq=s, global_batch=B, dp=8))
    assert result.model_flops_per_step == pytest.approx(model, rel=1e-12)
    # Kaplan's 6·N per token is the same count without the scores (N = 6,738,415,616, whose
    # embedding adds no FLOPs): within 15 % here.
    six_n = 6 * 6_738_415_616 * B * s
    assert 1 < model / six_n < 1.15


def test_scaling_json_skipped_points_are_null(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["calc", "scaling", "--model", "lesson-1b", "--strategy", "tp", "--max-gpus", "32"]
    assert main([*argv, "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    points = data["series"][0]["points"]
    assert points[-1]["skipped"].startswith("tp")  # 16 heads: TP 32 cannot split them
    for key in ("tokens_per_s", "efficiency", "t_step_s", "t_comm_unhidden_s"):
        assert points[-1][key] is None
    assert points[0]["efficiency"] == pytest.approx(1.0)


def test_calc_step_with_a_model_and_flags(capsys: pytest.CaptureFixture[str]) -> None:
    from tests.cli_helpers import calc_json

    preset = calc_json(
        capsys, "step", "--model", "llama3.1-8b", "--gpus", "8", "--global-batch", "8"
    )
    typed = calc_json(
        capsys,
        "step",
        *("--layers", "32", "--hidden", "4096", "--heads", "32", "--kv-heads", "8"),
        *("--ffn-hidden", "14336", "--vocab", "128256", "--mlp", "swiglu", "--norm", "rmsnorm"),
        *("--no-bias", "--untied-embeddings", "--gpus", "8", "--global-batch", "8"),
    )
    assert preset == typed


def test_a_one_layer_one_head_model_is_counted_in_the_singular() -> None:
    """The Trade-offs setup line said "(1 layers, ..., 1 heads". N (Narayanan et al. 2021
    §5.1): 12·l·h² + 13·l·h + (V+s)·h = 49,152 + 832 + 116·64 = 57,408 for l 1, h 64, V 100,
    s 16."""
    spec = StepSpec(layers=1, hidden=64, heads=1, vocab=100, seq=16, global_batch=1)
    model = describe_assumptions(spec)[0]
    assert model == "model: N = 57.41K params (1 layer, h 64, 1 head, V 100)"
