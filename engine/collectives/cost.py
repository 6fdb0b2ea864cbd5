"""The alpha-beta cost model: time, bytes sent, algorithm and bus bandwidth of a collective at any
size (Thakur, Rabenseifner, Gropp 2005; NCCL-tests ``doc/PERFORMANCE.md``).
"""

from __future__ import annotations

import math

from engine import sources
from engine.collectives.model import (
    MAX_COST_RANKS,
    CollectiveCost,
    ceil_log2,
    check_algorithm,
    check_op,
    is_power_of_two,
)
from engine.errors import InputError
from engine.i18n import gettext as _
from engine.units import parse_bytes, parse_int, parse_rate, parse_time


def bus_bandwidth_factor(op: str, ranks: int) -> float:
    """The NCCL-tests factor that turns algorithm bandwidth into bus bandwidth.

    all-reduce 2(p-1)/p; reduce-scatter, all-gather, all-to-all (p-1)/p; broadcast, reduce and
    send/recv 1 (NCCL-tests ``doc/PERFORMANCE.md``, ``src/sendrecv.cu``). One rank: 0 for the
    first four (nothing crosses a link).

    Raises:
        InputError: unknown ``op`` or ``ranks`` below 1.
    """
    check_op(op)
    p = parse_int("ranks", ranks, minimum=1)
    if op == "all-reduce":
        return 2.0 * (p - 1) / p
    if op in ("all-gather", "reduce-scatter", "all-to-all"):
        return (p - 1) / p
    return 1.0


def closed_form(op: str, algorithm: str, p: int, n: float) -> tuple[int, float, float, str]:
    """(steps, bytes on the wire that set the time, bytes the busiest rank sends, formula).

    ``p`` is the rank count and ``n`` the size in bytes; the formula names them as the
    interface does: R (``--ranks``, the pane's ranks R) and S (``--bytes S``, size S)."""
    lg = ceil_log2(p)
    if algorithm == "ring" and op == "all-reduce":
        wire = 2.0 * n * (p - 1) / p
        return 2 * (p - 1), wire, wire, "2(R-1)*alpha + 2*S*(R-1)/R*beta"
    if algorithm == "ring":
        wire = n * (p - 1) / p
        return p - 1, wire, wire, "(R-1)*alpha + S*(R-1)/R*beta"
    if algorithm == "halving-doubling" and op == "all-reduce":
        if is_power_of_two(p):
            wire = 2.0 * n * (p - 1) / p
            return 2 * lg, wire, wire, "2*lg(R)*alpha + 2*S*(R-1)/R*beta"
        # Rabenseifner's fold: the p - r extra ranks hand their vector to a partner first and get
        # the result back last, so r = 2^floor(lg p) ranks do the halving and doubling.
        r = 1 << (p.bit_length() - 1)
        lr = r.bit_length() - 1
        inner = 2.0 * n * (r - 1) / r
        return (
            2 * lr + 2,
            inner + 2.0 * n,
            inner + n,
            "(2*lg(R')+2)*alpha + (2*S*(R'-1)/R' + 2*S)*beta, R' = 2^floor(lg R)",
        )
    if algorithm == "halving-doubling":
        wire = n * (p - 1) / p
        return lg, wire, wire, "lg(R)*alpha + S*(R-1)/R*beta"
    if algorithm == "binomial" and op == "all-reduce":
        return 2 * lg, 2.0 * lg * n, lg * n, "2*ceil(lg R)*(alpha + S*beta)"
    if algorithm == "double-binary-tree":
        # The busiest rank: an inner node of one tree (n/2 up, n/2 to each of two children)
        # and a leaf of the other (n/2 up); with 2 or 3 ranks no node has two children.
        busiest = {2: 1.0, 3: 1.5}.get(p, 2.0) * n
        return 2 * lg, 2.0 * n, busiest, "2*ceil(lg R)*alpha + 2*S*beta (pipelined, fill left out)"
    if algorithm == "binomial":
        busiest = lg * n if op == "broadcast" else n
        return lg, lg * n, busiest, "ceil(lg R)*(alpha + S*beta)"
    if algorithm == "pairwise":
        wire = n * (p - 1) / p
        return p - 1, wire, wire, "(R-1)*alpha + S*(R-1)/R*beta"
    return 1, n, n, "alpha + S*beta"


def collective_cost(
    op: str,
    ranks: int | float | str,
    size_bytes: float | str,
    bandwidth_bytes_per_s: float | str,
    latency_s: float | str = 0.0,
    algorithm: str | None = None,
) -> CollectiveCost:
    """Alpha-beta time and bandwidths of ``op`` on ``ranks`` ranks.

    Args:
        op: one of :data:`OPERATIONS`.
        ranks: number of ranks, 1 or more (one rank costs nothing).
        size_bytes: S in bytes, in the size convention of :data:`SIZE_CONVENTIONS` (for
            all-gather and reduce-scatter, the whole array), 0 or more (0 costs nothing). Text
            such as ``"1GB"`` is accepted.
        bandwidth_bytes_per_s: link bandwidth in bytes/s (``"100GB/s"`` accepted); beta = 1/it.
        latency_s: alpha, seconds per message (``"5us"`` accepted).
        algorithm: one of :func:`algorithm_choices` (or a former name); ``None`` picks the first.

    Returns:
        The cost. ``time_s`` counts every step's alpha plus the bytes of the step's largest
        message times beta (MPICH algorithm notes); ``bytes_sent_per_rank`` is the busiest rank's.
        With nothing to move (one rank, zero bytes) the time, steps and bytes are 0 and the two
        bandwidths ``None`` (S / 0 has no value).

    Raises:
        InputError: naming the field (``op``, ``ranks``, ``size_bytes``,
            ``bandwidth_bytes_per_s``, ``latency_s``, ``algorithm``) that is invalid, or
            ``latency_s`` or ``size_bytes`` when the time would overflow.
    """
    check_op(op)
    p = parse_int("ranks", ranks, minimum=1, maximum=MAX_COST_RANKS)
    n = parse_bytes("size_bytes", size_bytes, allow_zero=True)
    bandwidth = parse_rate("bandwidth_bytes_per_s", bandwidth_bytes_per_s)
    alpha = parse_time("latency_s", latency_s)
    name = check_algorithm(op, algorithm, max(p, 2))
    factor = bus_bandwidth_factor(op, p)
    # The works' descriptions are in the interface language, their titles as written.
    cited = sources.DOUBLE_BINARY_TREE if name == "double-binary-tree" else sources.MPICH_COSTS
    source = sources.joined(cited, sources.BUS_BANDWIDTH)
    if p == 1 or n == 0:
        # NCCL returns at once for one rank or a count of 0: nothing is sent.
        reason = _("one rank") if p == 1 else _("zero bytes")
        return CollectiveCost(
            op=op,
            algorithm=name,
            ranks=p,
            size_bytes=n,
            bandwidth_bytes_per_s=bandwidth,
            latency_s=alpha,
            time_s=0.0,
            bytes_sent_per_rank=0.0,
            algbw_bytes_per_s=None,
            busbw_bytes_per_s=None,
            bus_bandwidth_factor=factor,
            steps=0,
            formula="0 (" + _("{reason}: nothing to send").format(reason=reason) + ")",
            source=source,
        )
    steps, wire, busiest, formula = closed_form(op, name, p, n)
    latency_time = steps * alpha
    if not math.isfinite(latency_time):
        # 1e308 s per message: the bytes are not what overflowed.
        raise InputError("latency_s", _("is too large or too small for a finite time"))
    time_s = latency_time + wire / bandwidth
    if not math.isfinite(time_s) or time_s <= 0.0:
        raise InputError("size_bytes", _("is too large or too small for a finite time"))
    algbw = n / time_s
    return CollectiveCost(
        op=op,
        algorithm=name,
        ranks=p,
        size_bytes=n,
        bandwidth_bytes_per_s=bandwidth,
        latency_s=alpha,
        time_s=time_s,
        bytes_sent_per_rank=busiest,
        algbw_bytes_per_s=algbw,
        busbw_bytes_per_s=algbw * factor,
        bus_bandwidth_factor=factor,
        steps=steps,
        formula=formula,
        source=source,
    )


def step_count(op: str, ranks: int, algorithm: str | None = None) -> int:
    """Communication rounds of ``op`` on ``ranks`` ranks (what :func:`simulate` records).

    Raises:
        InputError: as :func:`check_algorithm` (a costed-only algorithm included), or ``ranks``
            below 2.
    """
    check_op(op)
    p = parse_int("ranks", ranks, minimum=2, maximum=MAX_COST_RANKS)
    return closed_form(op, check_algorithm(op, algorithm, p, simulated=True), p, 1.0)[0]
