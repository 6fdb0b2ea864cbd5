"""``shardbook calc step`` and ``calc scaling``: step time and scaling, headless.

Flags and JSON keys are a public interface (README "Command line"); scripts and tests rely on them,
and a clearer name is added as an alias, never in place of the old one. ``--compute-utilization``
(``--mfu``, its older name) is the share of peak the kernels reach while computing; the ``mfu`` key
of the output is the whole step's model FLOPs utilization after communication, bubble and waits.
``--micro-batch`` is also ``--micro-batch-size`` and ``--zero`` also ``--zero-stage``; the JSON
gives ``t_comm_exposed_s`` and, under its older name, ``t_comm_unhidden_s``. ``--model`` and the
shape flags are those of ``calc ledger`` (:mod:`cli.models`). The flags beyond the core list
(``--schedule``, ``--top-k``, ``--capacity-factor``, ``--hot-expert-share``, ``--input-rate``,
``--straggler``) set the labelled assumptions of :mod:`engine.steptime`. A bad value is one line on
stderr naming the flag, exit 2. No Textual import here: the headless command must start fast.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from rich.console import Console
from rich.text import Text

from cli.collective import check_bare_link
from cli.main import (
    CliError,
    add_choice_argument,
    add_recompute_argument,
    flag_error,
    one_line,
    option_flags,
)
from cli.models import SHAPE_FLAGS, add_shape_flags, shape_values
from engine import units
from engine.checks import MAX_NUMBER
from engine.errors import FieldName, InputError
from engine.i18n import N_, ngettext
from engine.i18n import gettext as _
from engine.pipeline import SCHEDULES
from engine.scaling import (
    MODES,
    SCALING_STRATEGIES,
    ScalingPoint,
    ScalingSeries,
    scaling_all,
    world_sizes,
)
from engine.steptime import (
    DEFAULT_COMPUTE_UTILIZATION,
    DEFAULT_PEAK_FLOPS,
    INTERCONNECTS,
    StepResult,
    StepSpec,
    custom_interconnect,
    get_interconnect,
    resolve_step_spec,
    step_time,
)

# Spec field -> the flag that sets it, so engine errors name what the user typed.
FLAGS = option_flags(
    "params",
    "seq",
    "global_batch",
    "micro_batch",
    "dp",
    "tp",
    "pp",
    "cp",
    "ep",
    "zero",
    "gpus",
    "capacity_factor",
    "hot_expert_share",
    "peak_flops",
    "achieved_flops",
    "recompute",
    "schedule",
    "interconnect",
    "intra_bandwidth",
    "inter_bandwidth",
    "latency",
    "gpus_per_node",
    "input_rate",
    "straggler",
    "tokens",
    "strategy",
    "mode",
    "max_gpus",
    "virtual_stages",
    micro_batch_size="--micro-batch",
    zero_stage="--zero",
    compute_utilization="--compute-utilization",
    **SHAPE_FLAGS,
)
_INTS: tuple[str, ...] = ("seq", "global_batch", "micro_batch_size", "virtual_stages")
_INTS += ("dp", "tp", "pp", "cp", "ep", "gpus", "gpus_per_node")
_NUMBERS = ("capacity_factor", "hot_expert_share", "straggler")
_CUSTOM = ("intra_bandwidth", "inter_bandwidth", "latency")


def _add_common(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--params", help=_("parameter count N: 1.3B (6·N per token)"))
    add_shape_flags(parser)
    parser.add_argument("--capacity-factor", help=_("MoE capacity factor (default 1.25)"))
    parser.add_argument("--hot-expert-share", help=_("hottest expert's share of tokens"))
    parser.add_argument("--seq", help=_("sequence length s (default 2048)"))
    parser.add_argument("--global-batch", help=_("samples per step (default micro-batch × DP)"))
    parser.add_argument(
        "--micro-batch", "--micro-batch-size", dest="micro_batch_size", help=_("micro-batch size b")
    )
    for name in ("dp", "tp", "pp", "cp", "ep"):
        parser.add_argument(f"--{name}", help=_("{name} size").format(name=name.upper()))
    parser.add_argument(
        "--zero", "--zero-stage", dest="zero_stage", help=_("ZeRO stage 0-3 (FSDP 3)")
    )
    parser.add_argument("--gpus", help=_("GPUs; DP = GPUs / (TP·PP·CP) when --dp is not given"))
    parser.add_argument(
        "--peak-flops",
        help=_("peak FLOP/s per GPU (default {default})").format(default=f"{DEFAULT_PEAK_FLOPS:g}"),
    )
    parser.add_argument(
        "--compute-utilization",
        "--mfu",
        dest="compute_utilization",
        help=_(
            "share of peak while computing (default {default}); not the step's mfu, which "
            "counts the bubble, communication and waits"
        ).format(default=DEFAULT_COMPUTE_UTILIZATION),
    )
    parser.add_argument(
        "--achieved-flops", help=_("achieved FLOP/s per GPU (instead of --compute-utilization)")
    )
    add_recompute_argument(parser)
    add_choice_argument(
        parser,
        "--schedule",
        default="1f1b",
        choices=SCHEDULES,
        help=_("pipeline schedule (default 1f1b)"),
    )
    parser.add_argument(
        "--virtual-stages", help=_("model chunks per stage v (interleaved-1f1b; default 1)")
    )
    add_choice_argument(
        parser,
        "--interconnect",
        choices=tuple(INTERCONNECTS),
        help=_("a preset link in and between nodes"),
    )
    parser.add_argument("--intra-bandwidth", help=_("custom link in a node: 450GB/s"))
    parser.add_argument("--inter-bandwidth", help=_("custom link between nodes: 400Gb/s"))
    parser.add_argument("--latency", help=_("custom latency per message: 5us"))
    parser.add_argument("--gpus-per-node", help=_("GPUs per node (default 8)"))
    parser.add_argument("--input-rate", help=_("assumption: loader tokens/s per DP replica"))
    parser.add_argument("--straggler", help=_("assumption: straggler spread σ (default 0)"))
    parser.add_argument("--json", action="store_true", help=_("one JSON object on stdout"))


def register(calc_subparsers: Any) -> None:
    """Add ``step`` and ``scaling`` to the ``shardbook calc`` sub-commands."""
    step: argparse.ArgumentParser = calc_subparsers.add_parser(
        "step",
        help=_("step time: compute, exposed communication, input, waits; time to train"),
        description=(
            _(
                "T_step = T_compute + T_comm_exposed + T_input + T_sync_wait for one configuration "
                "on a device and an interconnect (seconds). FLOPs from Korthikanti et al. 2022 "
                "Eq. 7/8 with the architecture, else 6·N per token."
            )
        ),
    )
    _add_common(step)
    step.add_argument("--tokens", help=_("training tokens T: time to train (Narayanan Eq. 4)"))
    step.set_defaults(func=run_step)
    scaling: argparse.ArgumentParser = calc_subparsers.add_parser(
        "scaling",
        help=_("throughput and efficiency against world size, per strategy"),
        description=(
            _(
                "Throughput (tokens/s) and efficiency = throughput(n) / (n × throughput(1)) for "
                "each strategy alone at n = 1, 2, 4, ... GPUs; strong scaling keeps the global "
                "batch, "
                "weak scaling grows it with n."
            )
        ),
    )
    _add_common(scaling)
    add_choice_argument(
        scaling,
        "--strategy",
        action="append",
        choices=SCALING_STRATEGIES,
        help=_("a strategy (repeat for more; default all)"),
    )
    add_choice_argument(
        scaling,
        "--mode",
        default="strong",
        choices=("strong", "weak"),
        help=_("strong keeps the global batch, weak grows it with n (default strong)"),
    )
    scaling.add_argument("--max-gpus", default="64", help=_("largest world size (default 64)"))
    scaling.set_defaults(func=run_scaling)


def spec_from_args(args: argparse.Namespace) -> StepSpec:
    """Parse the flags into a :class:`StepSpec`.

    Raises:
        CliError: a value that does not parse or that the engine rejects, naming the flag.
    """
    values: dict[str, Any] = {}
    try:
        if args.params is not None:
            values["params"] = units.parse_count("params", args.params, maximum=MAX_NUMBER)
        for name in _INTS:
            text = getattr(args, name)
            if text is not None:
                values[name] = units.parse_int(name, text)
        values.update(shape_values(args, units.parse_int))
        if args.zero_stage is not None:
            values["zero_stage"] = units.parse_int(
                "zero_stage", args.zero_stage, minimum=0, maximum=3
            )
        for name in _NUMBERS:
            text = getattr(args, name)
            if text is not None:
                values[name] = units.parse_number(name, text, allow_zero=name == "straggler")
        if args.peak_flops is not None:
            values["peak_flops"] = units.parse_number("peak_flops", args.peak_flops)
        if args.compute_utilization is not None:
            values["compute_utilization"] = units.parse_number(
                "compute_utilization", args.compute_utilization
            )
        if args.achieved_flops is not None:
            values["achieved_flops"] = units.parse_number("achieved_flops", args.achieved_flops)
        if args.input_rate is not None:
            values["input_rate"] = units.parse_number("input_rate", args.input_rate)
        if getattr(args, "tokens", None) is not None:
            values["tokens"] = units.parse_count("tokens", args.tokens, maximum=MAX_NUMBER)
        custom = {name: getattr(args, name) for name in _CUSTOM if getattr(args, name) is not None}
        if args.interconnect is not None and custom:
            raise CliError(
                FLAGS[next(iter(custom))], _("give either --interconnect or custom link figures")
            )
        # Only an absent flag takes the default: `--interconnect ''` is an unknown name.
        link = get_interconnect("400gbps" if args.interconnect is None else args.interconnect)
        if custom:
            link = custom_interconnect(
                link,
                intra_bandwidth=_rate("intra_bandwidth", custom),
                inter_bandwidth=_rate("inter_bandwidth", custom),
                latency=None
                if "latency" not in custom
                else units.parse_time("latency", custom["latency"]),
            )
            # After the engine's own bounds (a latency over 1 s), which say more than a guess.
            check_bare_link(
                f"shardbook calc {args.calculator}",
                FLAGS,
                {n: custom[n] for n in ("intra_bandwidth", "inter_bandwidth") if n in custom},
                {n: custom[n] for n in ("latency",) if n in custom},
            )
        spec = StepSpec(
            recompute=args.recompute, schedule=args.schedule, interconnect=link, **values
        )
        _check_moe_flags(args, spec)
    except InputError as error:
        raise flag_error(error, FLAGS) from None
    return spec


def _check_moe_flags(args: argparse.Namespace, spec: StepSpec) -> None:
    """Refuse the expert-load flags for a model without routed experts: they set only the MoE
    imbalance wait, which a dense model does not have, so the step would be computed as if they
    were not given.

    Raises:
        InputError: on ``capacity_factor`` or ``hot_expert_share`` (naming ``--experts``).
    """
    given = [name for name in ("capacity_factor", "hot_expert_share") if getattr(args, name)]
    if given and (resolve_step_spec(spec).experts or 1) < 2:
        raise InputError(
            given[0],
            _("applies to a mixture of experts only ({experts} above 1)"),
            experts=FieldName("experts"),
        )


def _rate(name: str, custom: dict[str, str]) -> float | None:
    return units.parse_rate(name, custom[name]) if name in custom else None


def run_step(args: argparse.Namespace) -> int:
    """Run ``calc step``; returns the exit status."""
    spec = spec_from_args(args)
    try:
        result = step_time(spec)
    except InputError as error:
        raise flag_error(error, FLAGS) from None
    if args.json:
        print(json.dumps(result.as_dict(), allow_nan=False))
        return 0
    _print_step(result)
    return 0


_LINKS = {"intra": N_("intra node"), "inter": N_("inter node")}
"""Where a collective runs, as the step's communication lines say it."""


def _print_step(result: StepResult) -> None:
    console = Console(markup=False, highlight=False, emoji=False)
    spec = result.spec
    m, gpus = result.num_microbatches, spec.gpus_per_node
    shape = _(
        "world {world} (DP {dp} TP {tp} PP {pp} CP {cp} EP {ep}, ZeRO {zero}); "
        "{micro_batches}; {link}, {gpus}"
    ).format(
        world=result.world_size,
        dp=spec.dp,
        tp=spec.tp,
        pp=spec.pp,
        cp=spec.cp,
        ep=spec.ep,
        zero=spec.zero_stage,
        # Each count in its own phrase, so that 1 reads in the singular (1 GPU per node).
        micro_batches=ngettext("m = {count} micro-batch", "m = {count} micro-batches", m).format(
            count=m
        ),
        link=_(spec.interconnect.label),
        gpus=ngettext("{count} GPU per node", "{count} GPUs per node", gpus).format(count=gpus),
    )
    if spec.model:
        convention = _("FLOPs convention: {convention}; model {model}").format(
            convention=result.flops_convention, model=spec.model
        )
    else:
        convention = _("FLOPs convention: {convention}").format(convention=result.flops_convention)
    assumed = _("{time}  (assumption)")
    lines = [
        shape,
        convention,
        f"T_compute        {units.format_seconds(result.t_compute_s)}",
        f"T_comm (all)     {units.format_seconds(result.t_comm_s)}",
        f"T_comm_exposed   {units.format_seconds(result.t_comm_exposed_s)}",
        "T_input          " + assumed.format(time=units.format_seconds(result.t_input_s)),
        "T_sync_wait      " + assumed.format(time=units.format_seconds(result.t_sync_wait_s)),
        f"T_step           {units.format_seconds(result.t_step_s)}",
        _("tokens/s {tokens}; step MFU {mfu}").format(
            tokens=f"{result.tokens_per_s:.6g}", mfu=f"{result.mfu:.3f}"
        ),
    ]
    if result.time_to_train_s is not None:
        lines.append(
            _("time to train {time} ({days} days)").format(
                time=units.format_seconds(result.time_to_train_s),
                days=f"{result.time_to_train_s / 86400:.4g}",
            )
        )
    # A heading with nothing under it read as if the list had been lost (one rank: no group).
    lines.append(_("communication:") if result.comm else _("communication: none"))
    for c in result.comm:
        lines.append(
            "  "
            + _(
                "{name}: {op} over {group} ranks ({link}), {calls} × {size}: {time}, "
                "hidden {hidden}"
            ).format(
                name=_(c.name),
                op=c.op,
                group=c.group,
                link=_(_LINKS.get(c.link, c.link)),
                calls=c.calls,
                size=units.format_bytes(c.bytes),
                time=units.format_seconds(c.time_s),
                hidden=f"{c.hidden_share:.0%}",
            )
            + f"  [{c.formula}; {c.source}]"
        )
    lines.append(_("terms:"))
    for t in result.terms:
        lines.append(f"  {_(t.name)}: {t.value:.6g}  [{t.formula}; {t.source}]")
    lines.extend(_(note) for note in result.notes)
    for line in lines:
        console.print(Text(line))


def run_scaling(args: argparse.Namespace) -> int:
    """Run ``calc scaling``; returns the exit status."""
    spec = spec_from_args(args)
    strategies = tuple(args.strategy) if args.strategy else None
    try:
        if args.mode not in MODES:
            raise InputError(
                "mode", _("{mode!r} is not one of strong, weak").format(mode=args.mode)
            )
        for name in strategies or ():
            if name not in SCALING_STRATEGIES:
                known = ", ".join(SCALING_STRATEGIES)
                raise InputError(
                    "strategy",
                    _("unknown strategy {name!r}; use one of {known}").format(
                        name=name, known=known
                    ),
                )
        sizes = world_sizes(units.parse_int("max_gpus", args.max_gpus, maximum=2**20))
        series = scaling_all(spec, args.mode, sizes, strategies)
    except InputError as error:
        raise flag_error(error, FLAGS) from None
    _note_fixed_batch(spec, args.mode, sizes, series)
    data = {
        "mode": args.mode,
        "world_sizes": list(sizes),
        "series": [s.as_dict() for s in series],
    }
    if args.json:
        print(json.dumps(data, allow_nan=False))
        return 0
    console = Console(markup=False, highlight=False, emoji=False)
    for s in series:
        console.print(Text(f"{s.strategy} ({s.mode}): {_(s.formula)}"))
        for p in s.points:
            if p.skipped:
                console.print(
                    Text(
                        f"  n={p.world_size:<6} "
                        + _("skipped: {reason}").format(reason=_skip_reason(p))
                    )
                )
            else:
                console.print(
                    Text(
                        f"  n={p.world_size:<6} {p.tokens_per_s:12.6g} tokens/s  "
                        + _("efficiency {efficiency}").format(efficiency=f"{p.efficiency:.3f}")
                    )
                )
    return 0


def _skip_reason(point: ScalingPoint) -> str:
    """Why ``point`` was skipped, naming the flags (``--global-batch``), not the spec fields the
    engine's reason names (the JSON keeps those: its ``skipped`` values are unchanged)."""
    if point.error is None:
        return point.skipped
    return str(flag_error(point.error, FLAGS))


_DP_STRATEGIES = frozenset({"dp", "zero1", "zero2", "zero3", "ep"})
"""The strategies that put all n GPUs on data parallelism (the batch is split n ways)."""


def _note_fixed_batch(
    spec: StepSpec, mode: str, sizes: tuple[int, ...], series: tuple[ScalingSeries, ...]
) -> None:
    """Say once, on stderr, when strong scaling without --global-batch cannot run DP at any
    n > 1: the global batch is then one micro-batch, which DP cannot split (every such point
    is skipped, each saying why)."""
    if mode != "strong" or spec.global_batch is not None or max(sizes) < 2:
        return
    if not any(s.strategy in _DP_STRATEGIES for s in series):
        return
    b = spec.micro_batch_size
    note = _(
        "strong scaling keeps the global batch fixed, and without --global-batch it is one "
        "micro-batch (--micro-batch {batch}): DP cannot split it over more GPUs, so every n > 1 of "
        "{strategies} is skipped. Set --global-batch to a multiple of {largest} (micro-batch × "
        "the largest n), e.g. --global-batch {largest}"
    ).format(
        batch=b,
        strategies=", ".join(s.strategy for s in series if s.strategy in _DP_STRATEGIES),
        largest=b * max(sizes),
    )
    print(one_line("shardbook calc scaling", _("note: {text}").format(text=note)), file=sys.stderr)
