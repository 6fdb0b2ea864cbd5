"""``shardbook calc bubble``: simulate a pipeline schedule, measure its bubble, headless.

Flags and JSON keys are fixed; scripts and tests rely on them. Counts are parsed by
:func:`engine.units.parse_int`, times (in op-time units) by :func:`engine.units.parse_number`, and
the spec is checked by :class:`engine.pipeline.PipelineSpec`; a bad value is one line on stderr
naming the flag, exit 2. The schedule is checked by the engine rather than by argparse so that a
wrong choice is one line too. No Textual import here: the headless command must start fast.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
from typing import Any

from cli.main import CliError, add_choice_argument, flag_error, option_flags
from engine import units
from engine.checks import one_of
from engine.errors import InputError
from engine.i18n import gettext as _
from engine.i18n import ngettext
from engine.pipeline import (
    CONVENTIONS,
    MAX_OP_TIME,
    SCHEDULES,
    PipelineResult,
    PipelineSpec,
    micro_batches_from_batch,
    render_timeline,
    simulate,
    unused_virtual_stages_note,
)
from engine.pipeline.timeline import chunks_note

# Engine field -> the flag that sets it, so engine errors name what the user typed.
FLAGS = option_flags(
    "schedule",
    "stages",
    "micro_batches",
    "global_batch",
    "micro_batch_size",
    "dp",
    "virtual_stages",
    "t_forward",
    "t_backward_input",
    "t_backward_weight",
    "p2p_time",
    num_microbatches="--micro-batches",
)
_BATCH_FLAGS = ("global_batch", "micro_batch_size", "dp")


def register(calc_subparsers: Any) -> None:
    """Add ``bubble`` to the ``shardbook calc`` sub-commands."""
    parser: argparse.ArgumentParser = calc_subparsers.add_parser(
        "bubble",
        help=_("pipeline schedule: timeline, bubble (two conventions), micro-batches in flight"),
        description=(
            _(
                "Simulate a pipeline-parallel schedule and report its bubble as bubble/ideal "
                "(Narayanan et al. 2021) and bubble/total (GPipe; Qi et al. 2023), the peak "
                "micro-batches in flight per stage, and the paper's closed form. Times are in "
                "op-time units (any unit, the same for every time flag)."
            )
        ),
    )
    add_choice_argument(
        parser, "--schedule", choices=SCHEDULES, help=_("the pipeline schedule (required)")
    )
    parser.add_argument("--stages", help=_("pipeline stages p"))
    parser.add_argument("--micro-batches", help=_("micro-batches per iteration m"))
    parser.add_argument(
        "--global-batch", help=_("global batch size G (instead of --micro-batches)")
    )
    parser.add_argument("--micro-batch-size", help=_("micro-batch size b (with --global-batch)"))
    parser.add_argument("--dp", help=_("data-parallel size (with --global-batch; default 1)"))
    parser.add_argument("--virtual-stages", default="1", help=_("chunks per stage v (interleaved)"))
    parser.add_argument("--t-forward", default="1", help=_("forward time t_F per micro-batch"))
    parser.add_argument("--t-backward-input", default="1", help=_("input-gradient time t_B"))
    parser.add_argument("--t-backward-weight", default="1", help=_("weight-gradient time t_W"))
    parser.add_argument("--p2p-time", default="0", help=_("stage-to-stage transfer time"))
    parser.add_argument("--timeline", action="store_true", help=_("print the timeline"))
    parser.add_argument("--json", action="store_true", help=_("one JSON object on stdout"))
    parser.set_defaults(func=run)


def spec_from_args(args: argparse.Namespace) -> PipelineSpec:
    """Parse the flags into a :class:`PipelineSpec`.

    Raises:
        CliError: a missing flag, or a value the engine rejects (naming the flag).
    """
    if args.schedule is None:
        raise CliError(
            "--schedule", _("is required: one of {choices}").format(choices=", ".join(SCHEDULES))
        )
    try:
        # A wrong choice is named before any flag that is missing: it is what was typed.
        one_of("schedule", args.schedule, SCHEDULES)
    except InputError as error:
        raise flag_error(error, FLAGS) from None
    if args.stages is None:
        raise CliError("--stages", _("is required: the number of pipeline stages p"))
    batch_given = [name for name in _BATCH_FLAGS if getattr(args, name) is not None]
    try:
        if args.micro_batches is not None:
            if batch_given:
                raise CliError(
                    FLAGS[batch_given[0]],
                    _("give either --micro-batches or --global-batch with --micro-batch-size"),
                )
            micro_batches = units.parse_int("micro_batches", args.micro_batches)
        elif args.global_batch is None:
            raise CliError(
                "--micro-batches",
                _("is required (or --global-batch with --micro-batch-size and --dp)"),
            )
        elif args.micro_batch_size is None:
            raise CliError("--micro-batch-size", _("is required with --global-batch"))
        else:
            micro_batches = micro_batches_from_batch(
                units.parse_int("global_batch", args.global_batch),
                units.parse_int("micro_batch_size", args.micro_batch_size),
                units.parse_int("dp", "1" if args.dp is None else args.dp),
            )
        virtual = units.parse_int("virtual_stages", args.virtual_stages)
        return PipelineSpec(
            schedule=args.schedule,
            stages=units.parse_int("stages", args.stages),
            num_microbatches=micro_batches,
            # v is interleaved 1F1B's alone: another schedule runs with 1 (run() says so).
            virtual_stages=virtual if args.schedule == "interleaved-1f1b" else 1,
            t_forward=units.parse_number("t_forward", args.t_forward, maximum=MAX_OP_TIME),
            t_backward_input=units.parse_number(
                "t_backward_input", args.t_backward_input, maximum=MAX_OP_TIME
            ),
            t_backward_weight=units.parse_number(
                "t_backward_weight", args.t_backward_weight, allow_zero=True, maximum=MAX_OP_TIME
            ),
            p2p_time=units.parse_number(
                "p2p_time", args.p2p_time, allow_zero=True, maximum=MAX_OP_TIME
            ),
        )
    except InputError as error:
        raise flag_error(error, FLAGS) from None


def result_to_json(result: PipelineResult, *, timeline: bool) -> dict[str, Any]:
    """The JSON object of ``calc bubble --json``, in op-time units; ``timeline`` only when asked."""
    closed = result.closed_form
    data: dict[str, Any] = {
        "bubble_time": list(result.bubble_time),
        "bubble_over_ideal": result.bubble_over_ideal,
        "bubble_fraction": result.bubble_fraction,
        "makespan": result.makespan,
        "ideal_time": result.ideal_time,
        "micro_batches": result.num_microbatches,
        "peak_in_flight_microbatches": list(result.peak_in_flight_microbatches),
        "closed_form": {"formula": closed.formula, "value": closed.value, "source": closed.source},
    }
    if timeline:
        data["timeline"] = [
            [
                {
                    "kind": op.kind,
                    "micro_batch": op.micro_batch,
                    "chunk": op.chunk,
                    "start": op.start,
                    "end": op.end,
                }
                for op in ops
            ]
            for ops in result.timeline
        ]
    return data


def report(result: PipelineResult) -> str:
    """A short readable report that names both bubble conventions and the closed form's source."""
    spec = result.spec
    closed = result.closed_form
    backward = _("B and W split") if spec.split_backward else _("B and W as one op of t_B+t_W")
    peaks = " ".join(map(units.format_figure, result.peak_in_flight_microbatches))
    agreement = (
        _("simulation agrees")
        if closed.applies
        else _("formula assumes {assumptions}; simulation differs where they fail").format(
            assumptions=closed.assumptions
        )
    )
    # Each count in its own phrase, so that 1 reads in the singular (p=1 stage).
    counts = {
        "stages": ngettext("p={count} stage", "p={count} stages", spec.stages).format(
            count=spec.stages
        ),
        "micro_batches": ngettext(
            "m={count} micro-batch", "m={count} micro-batches", spec.num_microbatches
        ).format(count=spec.num_microbatches),
        "chunks": ngettext(
            "v={count} chunk per stage", "v={count} chunks per stage", spec.virtual_stages
        ).format(count=spec.virtual_stages),
    }
    if spec.virtual_stages > 1:
        shape = _("schedule {schedule}: {stages}, {micro_batches}, {chunks}")
    else:
        shape = _("schedule {schedule}: {stages}, {micro_batches}")
    lines = [
        shape.format(schedule=spec.schedule, **counts),
        _(
            "times (op-time units): t_F={forward} t_B={backward} t_W={weight} p2p={p2p}; {how}"
        ).format(
            forward=f"{spec.t_forward:g}",
            backward=f"{spec.t_backward_input:g}",
            weight=f"{spec.t_backward_weight:g}",
            p2p=f"{spec.p2p_time:g}",
            how=backward,
        ),
        _(
            "makespan {makespan}; iteration time {iteration} (longest stage span); ideal {ideal} "
            "per stage"
        ).format(
            makespan=units.format_figure(result.makespan),
            iteration=units.format_figure(result.iteration_time),
            ideal=units.format_figure(result.ideal_time),
        ),
        _("bubble per stage {bubble}").format(bubble=units.format_figure(max(result.bubble_time))),
        _("bubble/ideal {value}  (Narayanan et al. 2021; HF Playbook)").format(
            value=units.format_figure(result.bubble_over_ideal)
        ),
        _("bubble/total {value}  (GPipe (p-1)/(m+p-1); Qi et al. 2023)").format(
            value=units.format_figure(result.bubble_fraction)
        ),
        _("peak micro-batches in flight per stage: {peaks}").format(peaks=peaks),
        *(["  " + chunks_note(result)] if spec.virtual_stages > 1 else []),
        _("closed form: {formula}").format(formula=closed.formula),
        "  " + _("source: {source}; {agreement}").format(source=closed.source, agreement=agreement),
        _("conventions: {conventions}").format(conventions=CONVENTIONS),
    ]
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    """Run ``calc bubble``; returns the exit status."""
    spec = spec_from_args(args)
    try:
        result = simulate(spec)
    except InputError as error:
        raise flag_error(error, FLAGS) from None
    # Parsed already by spec_from_args; a v other schedules do not use is said, not refused.
    virtual = units.parse_int("virtual_stages", args.virtual_stages)
    unused = unused_virtual_stages_note([spec.schedule], virtual)
    if args.json:
        if unused:
            print(_("note: {note}").format(note=unused), file=sys.stderr)
        print(json.dumps(result_to_json(result, timeline=args.timeline)))
        return 0
    if unused:
        print(_("note: {note}").format(note=unused))
    print(report(result))
    if args.timeline:
        print()
        # One column per time unit at least: rows wider than the terminal are not squeezed
        # (pipe through `less -S` to scroll them).
        width = max(40, shutil.get_terminal_size((80, 24)).columns)
        try:
            print(render_timeline(result, width))
        except InputError as error:
            print(error.message)
    return 0
