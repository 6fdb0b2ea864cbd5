"""The papers' closed forms of the bubble, in both conventions, and when each applies."""

from __future__ import annotations

from dataclasses import dataclass

from engine import sources
from engine.i18n import gettext as _
from engine.pipeline.spec import PipelineSpec
from engine.units import format_figure


@dataclass(frozen=True)
class ClosedForm:
    """The paper's closed-form bubble for a spec, with its convention and source.

    Attributes:
        formula: the formula as the paper states it, with the quantity it gives and its value
            (written by :func:`engine.units.format_figure`, as the figures are).
        value: the formula's value: bubble/ideal (GPipe, 1F1B, interleaved) or the bubble time per
            stage in op-time units (ZB-H1, ZB-H2), as ``formula`` names it.
        source: paper and section or table.
        bubble_time: the same bubble as idle time per stage (op-time units).
        bubble_over_ideal: the same bubble over the ideal time m(t_F + t_B + t_W).
        bubble_fraction: the same bubble over the iteration time (bubble/total).
        assumptions: the conditions under which the schedule's timeline reaches the formula.
        applies: whether ``assumptions`` hold for this spec (then the simulation equals it).
    """

    formula: str
    value: float
    source: str
    bubble_time: float
    bubble_over_ideal: float
    bubble_fraction: float
    assumptions: str
    applies: bool


def bubble_over_ideal(bubble: float, ideal: float) -> float:
    """Bubble time over the ideal compute time, the convention of Narayanan et al. 2021 §2.2.1
    and the Ultra-Scale Playbook (``(p-1)/m`` for GPipe and 1F1B). Both in op-time units."""
    return bubble / ideal


def bubble_fraction(bubble: float, ideal: float) -> float:
    """Bubble time over the whole iteration, ``bubble / (bubble + ideal)``: GPipe's
    ``(p-1)/(m+p-1)`` and the Zero-Bubble paper's measured bubble rate. Equal to
    f_ideal / (1 + f_ideal) of :func:`bubble_over_ideal`."""
    return bubble / (bubble + ideal)


def closed_form_bubble(spec: PipelineSpec) -> ClosedForm:
    """The paper's closed-form bubble for ``spec``, with its source.

    - GPipe, 1F1B: bubble/ideal (p−1)/m (Narayanan et al. 2021 §2.2.1); bubble/total
      (p−1)/(m+p−1) (GPipe, Huang et al. 2019).
    - Interleaved 1F1B: bubble/ideal (p−1)/(m·v) (Narayanan et al. 2021 §2.2.2).
    - ZB-H1: bubble time (p−1)(T_F+T_B−T_W); ZB-H2: (p−1)(T_F+T_B−2T_W), both clipped at 0
      (Qi et al. 2023, Table 2).

    Returns:
        A :class:`ClosedForm` giving the bubble in both conventions and whether the formula's
        assumptions hold for ``spec``. Nothing is simulated, so any size is accepted.
    """
    p, m, v = spec.stages, spec.num_microbatches, spec.virtual_stages
    tf, tb, tw = spec.t_forward, spec.t_backward_input, spec.t_backward_weight
    ideal = spec.ideal_time
    no_p2p = spec.p2p_time == 0
    if spec.schedule in ("gpipe", "1f1b"):
        over_ideal = (p - 1) / m
        # The two conventions' formulas, parted as a formula text's parts are (full-width in
        # Chinese).
        formula = _("; ").join(
            (
                f"bubble/ideal = (p-1)/m = {p - 1}/{m} = {_num(over_ideal)}",
                f"bubble/total = (p-1)/(m+p-1) = {p - 1}/{m + p - 1}",
            )
        )
        source = sources.joined(sources.ONE_F_ONE_B_BUBBLE, sources.GPIPE_BUBBLE)
        return _closed(
            formula, over_ideal, source, over_ideal * ideal, ideal, _("no p2p time"), no_p2p
        )
    if spec.schedule == "interleaved-1f1b":
        over_ideal = (p - 1) / (m * v)
        formula = f"bubble/ideal = (p-1)/(m*v) = {p - 1}/({m}*{v}) = {_num(over_ideal)}"
        return _closed(
            formula,
            over_ideal,
            sources.INTERLEAVED_BUBBLE,
            over_ideal * ideal,
            ideal,
            _("m a multiple of p, no p2p time"),
            no_p2p,
        )
    if spec.schedule == "zb-h1":
        bubble = max(0.0, (p - 1) * (tf + tb - tw))
        formula = _("bubble time per stage") + f" = max(0, (p-1)(T_F+T_B-T_W)) = {_num(bubble)}"
        return _closed(
            formula,
            bubble,
            sources.ZERO_BUBBLE_TABLE2,
            bubble,
            ideal,
            _("m >= p, T_W <= T_F, no p2p time"),
            m >= p and tw <= tf and no_p2p,
        )
    bubble = max(0.0, (p - 1) * (tf + tb - 2 * tw))
    formula = _("bubble time per stage") + f" = max(0, (p-1)(T_F+T_B-2T_W)) = {_num(bubble)}"
    return _closed(
        formula,
        bubble,
        sources.ZERO_BUBBLE_TABLE2,
        bubble,
        ideal,
        _("m >= 2p-1, T_W <= T_F, no p2p time"),
        m >= 2 * p - 1 and tw <= tf and no_p2p,
    )


def _closed(
    formula: str,
    value: float,
    source: str,
    bubble: float,
    ideal: float,
    assumptions: str,
    applies: bool,
) -> ClosedForm:
    return ClosedForm(
        formula=formula,
        value=value,
        source=source,
        bubble_time=bubble,
        bubble_over_ideal=bubble_over_ideal(bubble, ideal),
        bubble_fraction=bubble_fraction(bubble, ideal),
        assumptions=assumptions,
        applies=applies,
    )


def _num(value: float) -> str:
    # As the figures' tables write it (format_figure): a value written with more digits here
    # (99999/8 = 12499.9 beside a table's 12,500) read as a second, contradicting figure.
    return format_figure(value)
