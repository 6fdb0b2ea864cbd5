"""The lab's reports as text: what ``shardbook lab collectives|memory`` prints and the app's Lab tab
shows (one presentation for both). Plain text, seconds and bytes labelled; no torch import (the
results are built by :mod:`engine.lab.gloo` and :mod:`engine.lab.memory`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from engine import units

if TYPE_CHECKING:
    from engine.lab.gloo import GlooRun
    from engine.lab.memory import MemoryResult


def _numbers(values: tuple[int, ...] | None) -> str:
    return "-" if values is None else " ".join(str(v) for v in values)


def collectives_report(run: GlooRun) -> str:
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


def _b(value: float) -> str:
    return f"{value:,.0f}"


def memory_report(result: MemoryResult) -> str:
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
