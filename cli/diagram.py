"""``shardbook diagram NAME [--step K] [--ranks R] [--algorithm A] [--json]``: print an ASCII
diagram (``--json``: one object, ``{"name", "lines"}``).

NAME is a strategy (dp, fsdp, zero1, zero2, zero3, tp, tp-sp, pp, ep, cp: the 4-rank diagram with
the three questions answered) or a collective (all-reduce, all-gather, ...: step K of its data flow
with every rank's buffer; without ``--step``, every step in turn). A bad value is one line on
stderr naming the argument, exit 2. No Textual import here.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from typing import Any

from cli.main import CliError, add_choice_argument, flag_error, option_flags
from engine import units
from engine.diagrams import (
    COLLECTIVE_NAMES,
    DIAGRAM_NAMES,
    MAX_DIAGRAM_RANKS,
    STRATEGY_NAMES,
    collective_diagram,
    collective_step_count,
    strategy_diagram,
)
from engine.errors import InputError, quoted
from engine.i18n import gettext as _
from engine.strategies import DIAGRAM_RANKS

FLAGS = option_flags("step", "ranks", "algorithm", op="NAME", strategy="NAME")


def register(
    commands: Any, add_paths: Callable[[argparse.ArgumentParser], None]
) -> argparse.ArgumentParser:
    """Add the ``diagram`` command to the ``shardbook`` subcommands."""
    parser: argparse.ArgumentParser = commands.add_parser(
        "diagram",
        help=_("print a 4-rank ASCII diagram of a strategy or a collective's data flow"),
        description=(
            "Strategies: "
            + ", ".join(STRATEGY_NAMES)
            + ". Collectives: "
            + ", ".join(COLLECTIVE_NAMES)
            + " (--step K shows step K; without it, every step)."
        ),
    )
    add_choice_argument(
        parser, "name", choices=DIAGRAM_NAMES, metavar="NAME", help=_("a strategy or a collective")
    )
    parser.add_argument("--step", metavar="K", help=_("collectives: the step to show (0 = inputs)"))
    parser.add_argument(
        "--ranks",
        metavar="R",
        help=_("collectives: ranks, 2 to {most} (default 4)").format(most=MAX_DIAGRAM_RANKS),
    )
    parser.add_argument("--algorithm", metavar="A", help=_("collectives: e.g. halving-doubling"))
    parser.add_argument(
        "--json", action="store_true", help=_('one JSON object: {"name", "lines"}, the text lines')
    )
    parser.set_defaults(func=run_diagram)
    return parser


def render(args: argparse.Namespace) -> str:
    """The diagram text for the parsed arguments.

    Raises:
        CliError: unknown NAME, or an invalid or inapplicable flag (the message names it).
    """
    name = str(args.name).strip().lower()
    try:
        if name in STRATEGY_NAMES:
            for flag, value in (("--step", args.step), ("--algorithm", args.algorithm)):
                if value is not None:
                    raise CliError(
                        flag, _("applies to collectives only, not to {name}").format(name=name)
                    )
            if args.ranks is not None and args.ranks.strip() != str(DIAGRAM_RANKS):
                raise CliError(
                    "--ranks",
                    _("strategy diagrams are drawn for {ranks} ranks").format(ranks=DIAGRAM_RANKS),
                )
            return strategy_diagram(name)
        if name not in COLLECTIVE_NAMES:
            raise CliError(
                "NAME",
                _("unknown diagram {name}; use one of {choices}").format(
                    name=quoted(args.name), choices=", ".join(DIAGRAM_NAMES)
                ),
            )
        ranks = 4
        if args.ranks is not None:
            ranks = units.parse_int("ranks", args.ranks, minimum=2, maximum=MAX_DIAGRAM_RANKS)
        total = collective_step_count(name, ranks, args.algorithm)
        if args.step is not None:
            step = units.parse_int("step", args.step, minimum=0, maximum=total)
            return collective_diagram(name, step, ranks, args.algorithm)
        return "\n".join(
            collective_diagram(name, step, ranks, args.algorithm) for step in range(total + 1)
        )
    except InputError as error:
        raise flag_error(error, FLAGS) from None


def run_diagram(args: argparse.Namespace) -> int:
    """Print the diagram; return the exit status."""
    text = render(args)
    if args.json:
        name = str(args.name).strip().lower()
        print(json.dumps({"name": name, "lines": text.splitlines()}, ensure_ascii=False))
    else:
        sys.stdout.write(text)
    return 0
