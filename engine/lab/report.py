"""The lab's reports as text: what ``shardbook lab collectives|memory`` prints and the app's Lab tab
shows (one presentation for both). Plain text, seconds and bytes labelled; no torch import (the
results are built by :mod:`engine.lab.gloo` and :mod:`engine.lab.memory`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from engine import units
from engine.i18n import gettext as _
from engine.linebreak import pad_cells

if TYPE_CHECKING:
    from engine.lab.gloo import GlooRun
    from engine.lab.memory import MemoryResult


def _numbers(values: tuple[int, ...] | None) -> str:
    return "-" if values is None else " ".join(str(v) for v in values)


def collectives_report(run: GlooRun) -> str:
    """A readable report of an :class:`engine.lab.gloo.GlooRun` (seconds and bytes labelled)."""
    loopback = {True: _("yes"), False: _("NO"), None: _("unknown (no /proc)")}[run.loopback_only]
    bandwidth = (
        _("not resolved at this S (latency hid it; the model keeps latency only)")
        if run.bandwidth_bytes_per_s is None
        else units.format_rate(run.bandwidth_bytes_per_s)
    )
    lines = [
        _("Gloo on {ranks} local ranks (torch {version}); loopback only: {loopback}").format(
            ranks=run.world, version=run.torch_version, loopback=loopback
        ),
        _(
            "measured alpha {alpha} per message, bandwidth {bandwidth} (ping-pong, ranks 0-1)"
        ).format(alpha=units.format_seconds(run.alpha_s), bandwidth=bandwidth),
        "",
    ]
    for item in run.ops:
        verdict = (
            _("{op}: Gloo output equal to the simulator's")
            if item.matches
            else _("{op}: Gloo output DIFFERENT to the simulator's")
        )
        lines.append(verdict.format(op=item.op))
        lines.append(
            "  rank  "
            + pad_cells(_("input"), 17)
            + pad_cells(_("Gloo output"), 17)
            + _("simulator")
        )
        for r in item.ranks:
            lines.append(
                f"  {r.rank:>4}  {_numbers(r.input):<16} {_numbers(r.output):<16} "
                f"{_numbers(r.predicted)}"
            )
    lines += [
        "",
        _("time per call at S = {bytes} B ({calls} calls, slowest rank)").format(
            bytes=f"{run.timing_bytes:,}", calls=run.repeats
        ),
        "  op               "
        + pad_cells(_("measured"), 13)
        + pad_cells(_("model (alg.)"), 27)
        + _("measured/model"),
    ]
    for item in run.ops:
        model = f"{units.format_seconds(item.model.time_s)} ({item.simulation.algorithm})"
        lines.append(
            f"  {item.op:<16} {units.format_seconds(item.measured_s):<12} {model:<26} "
            f"{item.ratio:.2f}"
        )
    lines.append(
        "  "
        + _(
            "model: alpha-beta (MPICH algorithm notes) with the measured alpha and beta; Gloo "
            "chooses its own algorithms and R processes share the cores, so the ratio is a "
            "measurement, not a check."
        )
    )
    return "\n".join(lines)


def _b(value: float) -> str:
    return f"{value:,.0f}"


def memory_report(result: MemoryResult) -> str:
    """A readable report of an :class:`engine.lab.memory.MemoryResult` (bytes, B)."""
    spec = result.spec
    lines = [
        _(
            "GPT-style model: {layers} layers, h={hidden}, a={heads}, s={seq}, b={micro_batch}, "
            "V={vocab}, {dtype} on {device} (torch {version}); N = {params} parameters"
        ).format(
            layers=spec.layers,
            hidden=spec.hidden,
            heads=spec.heads,
            seq=spec.seq,
            micro_batch=spec.micro_batch_size,
            vocab=spec.vocab,
            dtype=spec.dtype,
            device=spec.device,
            version=result.torch_version,
            params=f"{result.param_count:,}",
        ),
        _("ledger spec: {note}").format(note=_(result.ledger_note)),
        "",
        pad_cells(_("model states (bytes)"), 22)
        + pad_cells(_("measured"), 14, right=True)
        + pad_cells(_("ledger"), 16, right=True)
        + pad_cells(_("difference"), 14, right=True),
    ]
    for term in result.model_states:
        lines.append(
            f"  {term.name:<20} {_b(term.measured_bytes):>14} {_b(term.ledger_bytes):>15} "
            f"{_b(term.difference):>13}"
        )
        if term.note:
            lines.append(f"    {_(term.note)}")
    lines += [
        "",
        pad_cells(_("saved activations (bytes)"), 33)
        + pad_cells("Korthikanti", 11, right=True)
        + pad_cells(_("measured"), 12, right=True)
        + pad_cells(_("difference"), 13, right=True),
    ]
    for act in result.activations:
        lines.append(
            f"  {pad_cells(act.name, 32)} {_b(act.formula_bytes):>11} "
            f"{_b(act.measured_bytes):>11} {_b(act.difference):>12}"
        )
        if act.saved:
            lines.append("    " + _("saved: {tensors}").format(tensors=", ".join(act.saved)))
        if act.note:
            lines.append(f"    {_(act.note)}")
    total = _("total")
    ledger_act = result.ledger.per_rank_bytes["activations"]
    share = (result.activations_measured - ledger_act) / ledger_act * 100
    lines.append(
        f"  {pad_cells(total, 32)} {_b(ledger_act):>11} {_b(result.activations_measured):>11} "
        f"{_b(result.activations_measured - ledger_act):>12}  ({share:+.2f}%)"
    )
    lines.append(
        "  "
        + _(
            "formula: Korthikanti et al. 2022 §4.1 Table 2 per layer, §4.3 embedding and "
            "output; each storage counted once, parameters left out"
        )
    )
    if result.cuda_max_allocated_bytes is not None:
        lines.append(
            f"torch.cuda.max_memory_allocated: {_b(result.cuda_max_allocated_bytes)} B "
            f"({units.format_bytes(result.cuda_max_allocated_bytes)})"
        )
    lines.append(
        _("loss after the forward pass: {loss} (about ln V for a fresh model)").format(
            loss=f"{result.loss:.4f}"
        )
    )
    return "\n".join(lines)
