"""T_compute of one step: the ideal compute time of the hardware FLOPs at the achieved FLOP/s,
plus the pipeline bubble (idle time inside the compute timeline, from
:func:`engine.pipeline.simulate`).
"""

from __future__ import annotations

from typing import NamedTuple

from engine import sources
from engine.i18n import N_
from engine.model_size import ModelShape
from engine.pipeline import PipelineSpec
from engine.pipeline import simulate as simulate_pipeline
from engine.steptime.flops import Flops, korthikanti_flops, six_n_flops
from engine.steptime.spec import PIPELINE_SOURCE, StepSpec, StepTerm


class ComputeTime(NamedTuple):
    """The compute side of one step (seconds, FLOP/s).

    Attributes:
        flops: the step's FLOPs. achieved_flops: X, FLOP/s per GPU while computing.
        ideal_s: hardware FLOPs / (world × X). bubble_s: the pipeline's idle time.
        t_compute_s: ideal + bubble.
        t_forward_s, t_backward_s: one micro-batch's forward, and each half of its backward
            (input and weight gradients), on one rank.
        pipeline: the pipeline simulated (``None`` without pipeline stages).
        terms: the figures with their formulas and sources.
    """

    flops: Flops
    achieved_flops: float
    ideal_s: float
    bubble_s: float
    t_compute_s: float
    t_forward_s: float
    t_backward_s: float
    pipeline: PipelineSpec | None
    terms: tuple[StepTerm, ...]


def compute_time(
    spec: StepSpec,
    shape: ModelShape | None,
    params: float,
    world: int,
    num_microbatches: int,
    tokens_per_step: float,
) -> ComputeTime:
    """The compute side of a checked ``spec`` (``shape`` is ``None`` when only N is given).

    Raises:
        InputError: as :func:`~engine.steptime.flops.korthikanti_flops` and
            :class:`~engine.pipeline.PipelineSpec`.
    """
    assert spec.global_batch is not None and spec.top_k is not None
    if shape is not None:
        assert spec.layers is not None and spec.hidden is not None and spec.vocab is not None
        flops = korthikanti_flops(
            batch=spec.global_batch,
            layers=spec.layers,
            seq=spec.seq,
            hidden=spec.hidden,
            vocab=spec.vocab,
            ffn_hidden=spec.ffn_hidden,
            top_k=spec.top_k,
            recompute=spec.recompute,
            shape=shape,
        )
    else:
        flops = six_n_flops(params, tokens_per_step, spec.recompute)
    if spec.achieved_flops is not None:
        x = spec.achieved_flops
        x_text = f"X = {x:.4g} FLOP/s (given)"
    else:
        x = spec.peak_flops * spec.compute_utilization
        x_text = (
            f"X = peak {spec.peak_flops:.4g} × compute utilization "
            f"{spec.compute_utilization:g} = {x:.4g} FLOP/s"
        )
    ideal = flops.hardware / (world * x)
    terms = [
        StepTerm(N_("model FLOPs per step"), flops.model, flops.model_formula, flops.source),
        StepTerm(
            N_("hardware FLOPs per step"), flops.hardware, flops.hardware_formula, flops.source
        ),
        StepTerm(
            N_("ideal compute"),
            ideal,
            f"hardware FLOPs / (world {world} × X); {x_text}",
            sources.joined(flops.source, sources.A100_PEAK),
        ),
    ]
    per_micro_batch = ideal / num_microbatches
    # Forward share of one micro-batch's hardware time: one of three model passes.
    t_forward = per_micro_batch * (flops.model / flops.hardware) / 3
    t_backward = (per_micro_batch - t_forward) / 2
    bubble = 0.0
    pipeline: PipelineSpec | None = None
    if spec.pp > 1:
        pipeline = PipelineSpec(
            schedule=spec.schedule,
            stages=spec.pp,
            num_microbatches=num_microbatches,
            virtual_stages=spec.virtual_stages,
            t_forward=t_forward,
            t_backward_input=t_backward,
            t_backward_weight=t_backward,
        )
        piped = simulate_pipeline(pipeline)
        bubble = max(0.0, piped.iteration_time - ideal)
        interleaved = f", v={spec.virtual_stages}" if spec.virtual_stages > 1 else ""
        terms.append(
            StepTerm(
                N_("pipeline bubble"),
                bubble,
                f"{spec.schedule}, p={spec.pp}, m={num_microbatches}{interleaved}: simulated "
                f"bubble/ideal {piped.bubble_over_ideal:.4g} (closed form "
                f"{piped.closed_form.formula})",
                sources.joined(PIPELINE_SOURCE, piped.closed_form.source),
            )
        )
    return ComputeTime(
        flops, x, ideal, bubble, ideal + bubble, t_forward, t_backward, pipeline, tuple(terms)
    )
