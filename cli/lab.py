"""``shardbook lab collectives`` and ``shardbook lab memory``: the formulas against PyTorch itself
(README "Lab"). Needs the ``lab`` extra (torch); without it, one line says how to install it
(exit 2).

The reports are those of :mod:`engine.lab.report`, the text the app's Lab tab shows too. No
Textual import, and torch is imported only when a lab command runs.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable

from cli.main import CliError, add_choice_argument, flag_error, option_flags
from engine import units
from engine.collectives import OPERATIONS
from engine.errors import InputError
from engine.i18n import gettext as _
from engine.lab import LabError, install_hint, torch_available
from engine.lab.report import collectives_report, memory_report

COLLECTIVE_FLAGS = option_flags(
    "ranks", "op", "size", "repeats", timing_bytes="--bytes", timeout_s="--timeout"
)
MEMORY_FLAGS = option_flags(
    "layers", "hidden", "heads", "seq", "vocab", "dtype", "device", micro_batch_size="--micro-batch"
)


def register(
    commands: argparse._SubParsersAction[argparse.ArgumentParser],
    add_paths: Callable[[argparse.ArgumentParser], None],
) -> None:
    """Add ``lab`` with its two sub-commands."""
    lab = commands.add_parser("lab", help=_("check the formulas against PyTorch (needs .[lab])"))
    lab_commands = lab.add_subparsers(dest="experiment", metavar="EXPERIMENT", required=True)

    collectives = lab_commands.add_parser(
        "collectives",
        help=_("run each collective on R local Gloo processes beside the simulator"),
        description=(
            _(
                "Start R local processes with torch.distributed on Gloo (loopback only), run each "
                "collective on small integers and compare every rank's output with the "
                "simulator's; "
                "time each one at --bytes beside the alpha-beta model (alpha and beta measured "
                "by a "
                "ping-pong in the same run)."
            )
        ),
    )
    collectives.add_argument("--ranks", default="4", metavar="R", help=_("2 to 16 (default 4)"))
    add_choice_argument(
        collectives,
        "--op",
        action="append",
        choices=OPERATIONS,
        help=_("an operation (repeat for several; default: all)"),
    )
    collectives.add_argument("--size", metavar="N", help=_("elements, a multiple of R (default R)"))
    collectives.add_argument(
        "--bytes", default="1MiB", metavar="S", help=_("timing payload (default 1MiB)")
    )
    collectives.add_argument("--repeats", default="20", metavar="K", help=_("timed calls (20)"))
    collectives.add_argument("--timeout", default="60s", metavar="T", help=_("per run (60s)"))
    collectives.add_argument("--json", action="store_true", help=_("print one JSON object"))
    collectives.set_defaults(func=run_lab_collectives)

    memory = lab_commands.add_parser(
        "memory",
        help=_("one AdamW step of a small GPT: measured bytes beside the ledger"),
        description=(
            _(
                "Build a small GPT-style model in torch, run one AdamW training step and measure "
                "parameter, gradient, optimizer-state and saved-activation bytes, beside the "
                "ledger "
                "for the same configuration, term by term."
            )
        ),
    )
    for flag, default in (
        ("--layers", 2),
        ("--hidden", 64),
        ("--heads", 4),
        ("--seq", 64),
        ("--micro-batch", 2),
        ("--vocab", 128),
    ):
        memory.add_argument(
            flag, default=str(default), help=_("default {default}").format(default=default)
        )
    memory.add_argument("--dtype", default="fp32", help=_("fp32 (default) or bf16"))
    memory.add_argument("--device", default="cpu", help=_("cpu (default) or cuda"))
    memory.add_argument("--json", action="store_true", help=_("print one JSON object"))
    memory.set_defaults(func=run_lab_memory)


def _require_torch() -> None:
    if not torch_available():
        raise CliError("lab", install_hint())


def _whole(flag: str, text: str) -> int:
    try:
        return units.parse_int(flag, text, minimum=1)
    except InputError as error:
        raise CliError(flag, error.message) from None


def run_lab_collectives(args: argparse.Namespace) -> int:
    from engine.lab.gloo import run_collectives

    ranks = _whole("--ranks", args.ranks)
    repeats = _whole("--repeats", args.repeats)
    size = None if args.size is None else _whole("--size", args.size)
    try:
        run = run_collectives(
            ranks=ranks,
            ops=args.op,
            size=size,
            timing_bytes=args.bytes,
            repeats=repeats,
            timeout_s=args.timeout,
        )
    except InputError as error:
        raise flag_error(error, COLLECTIVE_FLAGS) from None
    except LabError as error:
        # The flags are checked first, so a bad flag is named even without torch.
        _require_torch()
        print(f"shardbook: lab collectives: {error}", file=sys.stderr)
        return 1
    if args.json:
        print(json.dumps(run.as_dict()))
    else:
        print(collectives_report(run))
    return 0 if all(item.matches for item in run.ops) else 1


def run_lab_memory(args: argparse.Namespace) -> int:
    from engine.lab.memory import MemorySpec, check_spec, measure_memory

    sizes = {
        field: _whole(flag, getattr(args, flag.removeprefix("--").replace("-", "_")))
        for field, flag in MEMORY_FLAGS.items()
        if field not in ("dtype", "device")
    }
    try:
        spec = check_spec(MemorySpec(dtype=args.dtype, device=args.device, **sizes))
    except InputError as error:
        raise flag_error(error, MEMORY_FLAGS) from None
    # The flags are checked first, so a bad flag is named even without torch.
    _require_torch()
    try:
        result = measure_memory(spec)
    except InputError as error:
        raise flag_error(error, MEMORY_FLAGS) from None
    except LabError as error:
        print(f"shardbook: lab memory: {error}", file=sys.stderr)
        return 1
    if args.json:
        print(json.dumps(result.as_dict()))
    else:
        print(memory_report(result))
    return 0
