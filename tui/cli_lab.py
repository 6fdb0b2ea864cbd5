"""``shardbook lab collectives`` and ``shardbook lab memory``: the formulas against PyTorch itself
(README "Lab"). Needs the ``lab`` extra (torch); without it, one line says how to install it
(exit 2).

The reports are built here from the engine's results (:mod:`engine.lab.gloo`,
:mod:`engine.lab.memory`) and shared with the app's Lab tab. No Textual import, and torch is
imported only when a lab command runs.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from typing import Any

from engine import units
from engine.collectives import OPERATIONS
from engine.errors import InputError
from engine.lab import INSTALL_HINT, LabError, torch_available
from tui.cli import CliError, flag_error, option_flags

COLLECTIVE_FLAGS = option_flags(
    "ranks", "op", "size", "repeats", timing_bytes="--bytes", timeout_s="--timeout"
)
MEMORY_FLAGS = option_flags(
    "layers", "hidden", "heads", "seq", "vocab", "dtype", "device", micro_batch_size="--micro-batch"
)


def register(
    commands: argparse._SubParsersAction,  # type: ignore[type-arg]
    add_paths: Callable[[argparse.ArgumentParser], None],
) -> None:
    """Add ``lab`` with its two sub-commands."""
    lab = commands.add_parser("lab", help="check the formulas against PyTorch (needs .[lab])")
    lab_commands = lab.add_subparsers(dest="experiment", metavar="EXPERIMENT", required=True)

    collectives = lab_commands.add_parser(
        "collectives",
        help="run each collective on R local Gloo processes beside the simulator",
        description=(
            "Start R local processes with torch.distributed on Gloo (loopback only), run each "
            "collective on small integers and compare every rank's output with the simulator's; "
            "time each one at --bytes beside the alpha-beta model (alpha and beta measured by a "
            "ping-pong in the same run)."
        ),
    )
    collectives.add_argument("--ranks", default="4", metavar="R", help="2 to 16 (default 4)")
    collectives.add_argument(
        "--op",
        action="append",
        metavar="{" + ",".join(OPERATIONS) + "}",
        help="an operation (repeat for several; default: all)",
    )
    collectives.add_argument("--size", metavar="N", help="elements, a multiple of R (default R)")
    collectives.add_argument(
        "--bytes", default="1MiB", metavar="S", help="timing payload (default 1MiB)"
    )
    collectives.add_argument("--repeats", default="20", metavar="K", help="timed calls (20)")
    collectives.add_argument("--timeout", default="60s", metavar="T", help="per run (60s)")
    collectives.add_argument("--json", action="store_true", help="print one JSON object")
    collectives.set_defaults(func=run_lab_collectives)

    memory = lab_commands.add_parser(
        "memory",
        help="one AdamW step of a small GPT: measured bytes beside the ledger",
        description=(
            "Build a small GPT-style model in torch, run one AdamW training step and measure "
            "parameter, gradient, optimizer-state and saved-activation bytes, beside the ledger "
            "for the same configuration, term by term."
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
        memory.add_argument(flag, default=str(default), help=f"default {default}")
    memory.add_argument("--dtype", default="fp32", help="fp32 (default) or bf16")
    memory.add_argument("--device", default="cpu", help="cpu (default) or cuda")
    memory.add_argument("--json", action="store_true", help="print one JSON object")
    memory.set_defaults(func=run_lab_memory)


def _require_torch() -> None:
    if not torch_available():
        raise CliError("lab", INSTALL_HINT)


def _whole(flag: str, text: str) -> int:
    try:
        return units.parse_int(flag, text, minimum=1)
    except InputError as error:
        raise CliError(flag, error.message) from None


# ----------------------------------------------------------------------------------------------
# Collectives


def _numbers(values: tuple[int, ...] | None) -> str:
    return "-" if values is None else " ".join(str(v) for v in values)


def collectives_report(run: Any) -> str:
    """A readable report of an :class:`engine.lab.gloo.GlooRun` (seconds and bytes labelled)."""
    loopback = {True: "yes", False: "NO", None: "unknown (no /proc)"}[run.loopback_only]
    bandwidth = (
        "not resolved at this S (latency hid it; the model keeps latency only)"
        if run.bandwidth_bytes_per_s is None
        else units.format_rate(run.bandwidth_bytes_per_s)
    )
    lines = [
        f"Gloo on {run.world} local ranks (torch {run.torch_version}); loopback only: {loopback}",
        f"measured alpha {units.format_seconds(run.alpha_s)} per message, bandwidth {bandwidth}"
        " (ping-pong, ranks 0-1)",
        "",
    ]
    for item in run.ops:
        verdict = "equal" if item.matches else "DIFFERENT"
        lines.append(f"{item.op}: Gloo output {verdict} to the simulator's")
        lines.append("  rank  input            Gloo output      simulator")
        for r in item.ranks:
            lines.append(
                f"  {r.rank:>4}  {_numbers(r.input):<16} {_numbers(r.output):<16} "
                f"{_numbers(r.predicted)}"
            )
    lines += [
        "",
        f"time per call at S = {run.timing_bytes:,} B ({run.repeats} calls, slowest rank)",
        "  op               measured     model (alg.)               measured/model",
    ]
    for item in run.ops:
        model = f"{units.format_seconds(item.model.time_s)} ({item.simulation.algorithm})"
        lines.append(
            f"  {item.op:<16} {units.format_seconds(item.measured_s):<12} {model:<26} "
            f"{item.ratio:.2f}"
        )
    lines.append(
        "  model: alpha-beta (MPICH algorithm notes) with the measured alpha and beta; Gloo "
        "chooses its own algorithms and R processes share the cores, so the ratio is a "
        "measurement, not a check."
    )
    return "\n".join(lines)


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


# ----------------------------------------------------------------------------------------------
# Memory


def _b(value: float) -> str:
    return f"{value:,.0f}"


def memory_report(result: Any) -> str:
    """A readable report of an :class:`engine.lab.memory.MemoryResult` (bytes, B)."""
    spec = result.spec
    lines = [
        f"GPT-style model: {spec.layers} layers, h={spec.hidden}, a={spec.heads}, "
        f"s={spec.seq}, b={spec.micro_batch_size}, V={spec.vocab}, {spec.dtype} on {spec.device} "
        f"(torch {result.torch_version}); N = {result.param_count:,} parameters",
        f"ledger spec: {result.ledger_note}",
        "",
        "model states (bytes)        measured          ledger    difference",
    ]
    for term in result.model_states:
        lines.append(
            f"  {term.name:<20} {_b(term.measured_bytes):>14} {_b(term.ledger_bytes):>15} "
            f"{_b(term.difference):>13}"
        )
        if term.note:
            lines.append(f"    {term.note}")
    lines += [
        "",
        "saved activations (bytes)        Korthikanti    measured   difference",
    ]
    for act in result.activations:
        lines.append(
            f"  {act.name:<32} {_b(act.formula_bytes):>11} {_b(act.measured_bytes):>11} "
            f"{_b(act.difference):>12}"
        )
        if act.saved:
            lines.append(f"    saved: {', '.join(act.saved)}")
        if act.note:
            lines.append(f"    {act.note}")
    ledger_act = result.ledger.per_rank_bytes["activations"]
    share = (result.activations_measured - ledger_act) / ledger_act * 100
    lines.append(
        f"  total{'':<27} {_b(ledger_act):>11} {_b(result.activations_measured):>11} "
        f"{_b(result.activations_measured - ledger_act):>12}  ({share:+.2f}%)"
    )
    lines.append(
        "  formula: Korthikanti et al. 2022 §4.1 Table 2 per layer, §4.3 embedding and output; "
        "each storage counted once, parameters left out"
    )
    if result.cuda_max_allocated_bytes is not None:
        lines.append(
            f"torch.cuda.max_memory_allocated: {_b(result.cuda_max_allocated_bytes)} B "
            f"({units.format_bytes(result.cuda_max_allocated_bytes)})"
        )
    lines.append(f"loss after the forward pass: {result.loss:.4f} (about ln V for a fresh model)")
    return "\n".join(lines)


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
