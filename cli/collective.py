"""``shardbook calc collective``: alpha-beta cost and bus bandwidth of a collective, headless.

Flags and JSON keys are a public interface (README "Command line"); scripts and tests rely on them.
Sizes, rates and times are parsed by :mod:`engine.units` (``--bytes 1GB``, ``--bandwidth 100GB/s``,
``--latency 5us``) and checked by :func:`engine.collectives.collective_cost`; a bad value is one
line on stderr naming the flag, exit 2. Choices are checked by the engine, not by argparse, so a
wrong choice is one line too. No Textual import here: the headless command must start fast.
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from cli.main import CliError, add_choice_argument, flag_error, one_line, option_flags
from engine import units
from engine.collectives import (
    ALGORITHM_ALIASES,
    ALGORITHMS,
    BUS_BANDWIDTH_FACTORS,
    COST_ONLY_ALGORITHMS,
    OPERATIONS,
    SIZE_CONVENTIONS,
    CollectiveCost,
    check_algorithm,
    check_op,
    collective_cost,
)
from engine.errors import InputError, quoted
from engine.i18n import gettext as _
from engine.i18n import ngettext
from engine.linebreak import pad_cells

# Engine field -> the flag that sets it, so engine errors name what the user typed.
FLAGS = option_flags(
    "op",
    "ranks",
    "algorithm",
    size_bytes="--bytes",
    bandwidth_bytes_per_s="--bandwidth",
    latency_s="--latency",
)
DEFAULT_BANDWIDTH = "100GB/s"
DEFAULT_LATENCY = "5us"
_ALGORITHM_NAMES = tuple(
    dict.fromkeys(
        a for table in (ALGORITHMS, COST_ONLY_ALGORITHMS) for names in table.values() for a in names
    )
)
_ALIASES = ", ".join(
    f"{old} = {new} ({op})" for op, names in ALGORITHM_ALIASES.items() for old, new in names.items()
)


def register(calc_subparsers: Any) -> argparse.ArgumentParser:
    """Add ``collective`` to the ``shardbook calc`` sub-commands."""
    parser: argparse.ArgumentParser = calc_subparsers.add_parser(
        "collective",
        help=_("alpha-beta time, algorithm and bus bandwidth of a collective"),
        description=(
            _(
                "Alpha-beta time of a collective (MPICH algorithm notes) with algorithm and bus "
                "bandwidth (NCCL-tests). For all-gather and reduce-scatter --bytes is the whole "
                "array (all ranks' shards), as NCCL-tests counts it."
            )
        ),
    )
    add_choice_argument(parser, "--op", choices=OPERATIONS, help=_("the collective"))
    parser.add_argument("--ranks", metavar="R", help=_("number of ranks (1 costs nothing)"))
    parser.add_argument("--bytes", metavar="S", help=_("size: 1e9, 1GB, 1GiB (0 costs nothing)"))
    parser.add_argument(
        "--bandwidth",
        default=DEFAULT_BANDWIDTH,
        metavar="B",
        help=_("link bandwidth: 100GB/s, 400Gb/s (default {default})").format(
            default=DEFAULT_BANDWIDTH
        ),
    )
    parser.add_argument(
        "--latency",
        default=DEFAULT_LATENCY,
        metavar="A",
        help=_("latency per message alpha: 5us, 0 (default {default})").format(
            default=DEFAULT_LATENCY
        ),
    )
    add_choice_argument(
        parser,
        "--algorithm",
        choices=_ALGORITHM_NAMES,
        help="default: ring (all-reduce, all-gather, reduce-scatter), pairwise (all-to-all), "
        "binomial (broadcast, reduce), direct (send-recv); all-reduce also has binomial (MPICH's "
        f"reduce + broadcast) and double-binary-tree (NCCL's, pipelined); {_ALIASES}",
    )
    parser.add_argument("--json", action="store_true", help=_("print one JSON object"))
    parser.set_defaults(func=run_collective)
    return parser


def cost_from_args(args: argparse.Namespace) -> CollectiveCost:
    """Parse the flags and compute the cost.

    Raises:
        CliError: a flag is missing or invalid (the message names the flag).
    """
    try:
        # A wrong choice is named before any flag that is missing: it is what was typed.
        if args.op is not None:
            # Two ranks (a power of two) check the name alone; --ranks is checked below.
            check_algorithm(check_op(args.op), args.algorithm, 2)
    except InputError as error:
        raise flag_error(error, FLAGS) from None
    if args.op is None:
        raise CliError(
            "--op", _("is required: one of {choices}").format(choices=", ".join(OPERATIONS))
        )
    for flag, value in (("--ranks", args.ranks), ("--bytes", args.bytes)):
        if value is None:
            raise CliError(flag, _("is required"))
    try:
        check_bare_link(
            "shardbook calc collective",
            FLAGS,
            {"bandwidth_bytes_per_s": args.bandwidth},
            {"latency_s": args.latency},
        )
        return collective_cost(
            args.op,
            args.ranks,
            args.bytes,
            args.bandwidth,
            args.latency,
            args.algorithm,
        )
    except InputError as error:
        raise flag_error(error, FLAGS) from None


# A bare number is bytes per second, or seconds (as the app's Collectives pane reads it). Below
# 1 MB/s, or a second a message and more, no link comes near: the unit was surely left out
# ("2.5" meant 2.5 GB/s priced an all-reduce at 22 years). Between, the value is used and a
# note on stderr says how it was read, as the app's pane does.
_MIN_BARE_BANDWIDTH = 1e6
_MAX_BARE_LATENCY = 1.0


def check_bare_link(
    prog: str, flags: dict[str, str], rates: dict[str, str], times: dict[str, str]
) -> None:
    """Refuse a bare bandwidth (``rates``: spec field -> text) or latency (``times``) no link
    has; note on stderr how any other bare one was read (``prog``: ``shardbook calc step``).

    Raises:
        InputError: on the field, as the engine's parsers raise it, or for a bare value out of
            the range above (a unit left out).
    """
    notes = []
    for field, text in rates.items():
        if units.has_unit(text):
            continue
        rate = units.parse_rate(field, text)
        typed = quoted(text.strip())
        if rate < _MIN_BARE_BANDWIDTH:
            raise InputError(
                field,
                _(
                    "{typed} is {value:g} bytes per second, slower than any link; was the unit "
                    "left out? (100GB/s = 100e9 bytes per second, 400Gb/s = 400e9 bits)"
                ).format(typed=typed, value=rate),
            )
        notes.append(
            _("{flag} {typed} has no unit: read as bytes per second, {rate}").format(
                flag=flags.get(field, field), typed=typed, rate=units.format_rate(rate)
            )
        )
    for field, text in times.items():
        if units.has_unit(text):
            continue
        alpha = units.parse_time(field, text)
        typed = quoted(text.strip())
        if alpha >= _MAX_BARE_LATENCY:
            raise InputError(
                field,
                _(
                    "{typed} is {value:g} seconds a message, longer than any link takes; was "
                    "the unit left out? (5us = 5e-6 seconds)"
                ).format(typed=typed, value=alpha),
            )
        if alpha > 0:
            notes.append(
                _("{flag} {typed} has no unit: read as seconds, {time}").format(
                    flag=flags.get(field, field), typed=typed, time=units.format_seconds(alpha)
                )
            )
    for note in notes:
        print(one_line(prog, _("note: {text}").format(text=note)), file=sys.stderr)


_LABEL_CELLS = 20
"""The report's label column, in terminal cells (a Chinese label takes two a character)."""


def cost_json(cost: CollectiveCost) -> dict[str, Any]:
    """The JSON object: the cost's keys first, then the inputs, formula and source."""
    return {
        "time_s": cost.time_s,
        "bytes_sent_per_rank": cost.bytes_sent_per_rank,
        "algbw_bytes_per_s": cost.algbw_bytes_per_s,
        "busbw_bytes_per_s": cost.busbw_bytes_per_s,
        "bus_bandwidth_factor": cost.bus_bandwidth_factor,
        "steps": cost.steps,
        "algorithm": cost.algorithm,
        "op": cost.op,
        "ranks": cost.ranks,
        "size_bytes": cost.size_bytes,
        "bandwidth_bytes_per_s": cost.bandwidth_bytes_per_s,
        "latency_s": cost.latency_s,
        "formula": cost.formula,
        "size_convention": SIZE_CONVENTIONS[cost.op],
        "source": cost.source,
    }


def cost_report(cost: CollectiveCost) -> str:
    """A readable report, units named (GB = 1e9 bytes, GiB = 2**30 bytes)."""
    factor = BUS_BANDWIDTH_FACTORS[cost.op]

    def row(label: str, value: str) -> str:
        return "  " + pad_cells(label, _LABEL_CELLS) + " " + value

    rows = [
        ngettext(
            "{op} ({algorithm}) on {ranks} rank", "{op} ({algorithm}) on {ranks} ranks", cost.ranks
        ).format(op=cost.op, algorithm=cost.algorithm, ranks=cost.ranks),
        # The formula's symbols, R and S, as the flags and the Collectives pane name them.
        row(_("ranks R"), str(cost.ranks)),
        row(
            _("size S"),
            units.format_bytes(cost.size_bytes) + _("; ") + _(SIZE_CONVENTIONS[cost.op]),
        ),
        row(
            _("bandwidth"),
            _("{bandwidth} = 1/beta   latency alpha {latency}").format(
                bandwidth=units.format_rate(cost.bandwidth_bytes_per_s),
                latency=units.format_seconds(cost.latency_s),
            ),
        ),
        row(_("time"), f"{units.format_seconds(cost.time_s)}   = {cost.formula}"),
        row(_("steps"), str(cost.steps)),
        row(
            _("bytes sent per rank"),
            _("{size} (busiest rank)").format(size=units.format_bytes(cost.bytes_sent_per_rank)),
        ),
        row("algbw", _("{rate}   = S / time").format(rate=_rate(cost.algbw_bytes_per_s))),
        row(
            "busbw",
            f"{_rate(cost.busbw_bytes_per_s)}   "
            f"= algbw x {cost.bus_bandwidth_factor:.4g} ({factor})",
        ),
        "  " + _("source: {source}").format(source=cost.source),
    ]
    return "\n".join(rows)


def _rate(value: float | None) -> str:
    return _("- (nothing moves)") if value is None else units.format_rate(value)


def run_collective(args: argparse.Namespace) -> int:
    """Print the cost as JSON or as a report; return the exit status."""
    cost = cost_from_args(args)
    if args.json:
        print(json.dumps(cost_json(cost)))
    else:
        print(cost_report(cost))
    return 0
