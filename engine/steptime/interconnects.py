"""The links between GPUs: presets of in-node and between-node bandwidth and latency, each with
the datasheet it comes from.
"""

from __future__ import annotations

from dataclasses import dataclass

from engine.checks import finite_number
from engine.errors import InputError
from engine.i18n import N_
from engine.i18n import gettext as _
from engine.units import format_rate, format_seconds


@dataclass(frozen=True)
class Interconnect:
    """The links between GPUs.

    Attributes:
        name: a key of :data:`INTERCONNECTS`, or ``custom``.
        label: what a screen shows.
        intra_bandwidth: bytes/s of one GPU's link to a GPU in its node (one direction).
        inter_bandwidth: bytes/s of one GPU's link to another node (one direction).
        latency: alpha, seconds per message, on either link.
        source: where the figures come from.
        short_label: what a picker shows, in a few words (empty: :attr:`label`); the label
            with its figures is shown beside the results.
    """

    name: str
    label: str
    intra_bandwidth: float
    inter_bandwidth: float
    latency: float
    source: str
    short_label: str = ""

    @property
    def picker_label(self) -> str:
        """The msgid a picker shows: :attr:`short_label`, else :attr:`label`."""
        return self.short_label or self.label


_NVLINK = 450e9
INTERCONNECTS: dict[str, Interconnect] = {
    "nvlink": Interconnect(
        "nvlink",
        N_("NVLink-class everywhere (450 GB/s)"),
        _NVLINK,
        _NVLINK,
        3e-6,
        "NVIDIA H100 SXM: NVLink 4, 900 GB/s bidirectional = 450 GB/s per direction; "
        "one NVLink domain spans the nodes",
        N_("NVLink everywhere"),
    ),
    "400gbps": Interconnect(
        "400gbps",
        N_("NVLink in node, 400 Gb/s network (50 GB/s)"),
        _NVLINK,
        50e9,
        5e-6,
        "400 Gb/s InfiniBand NDR, one NIC per GPU (DGX H100) = 50 GB/s",
        N_("NVLink + 400 Gb/s"),
    ),
    "pcie": Interconnect(
        "pcie",
        N_("PCIe-class in node (32 GB/s), 100 Gb/s network"),
        32e9,
        12.5e9,
        10e-6,
        "PCIe 4.0 x16: 32 GB/s per direction; 100 Gb/s NIC = 12.5 GB/s",
        N_("PCIe + 100 Gb/s"),
    ),
    "100gbps": Interconnect(
        "100gbps",
        N_("NVLink in node, 100 Gb/s network (12.5 GB/s)"),
        _NVLINK,
        12.5e9,
        10e-6,
        "100 Gb/s Ethernet/InfiniBand EDR, one NIC per GPU = 12.5 GB/s",
        N_("NVLink + 100 Gb/s"),
    ),
}
"""Interconnect presets by name, fastest inter-node link first."""


def custom_interconnect(
    base: Interconnect,
    *,
    intra_bandwidth: float | None = None,
    inter_bandwidth: float | None = None,
    latency: float | None = None,
) -> Interconnect:
    """``base`` with the given figures replaced, named ``custom``.

    Raises:
        InputError: a bandwidth that is zero, negative or not finite (``intra_bandwidth``,
            ``inter_bandwidth``), or a negative latency (``latency``).
    """
    intra = finite_number(
        "intra_bandwidth",
        base.intra_bandwidth if intra_bandwidth is None else intra_bandwidth,
        written=format_rate,
    )
    inter = finite_number(
        "inter_bandwidth",
        base.inter_bandwidth if inter_bandwidth is None else inter_bandwidth,
        written=format_rate,
    )
    alpha = finite_number(
        "latency",
        base.latency if latency is None else latency,
        allow_zero=True,
        maximum=1.0,
        written=format_seconds,
    )
    # Built in the interface language (a preset's label is a msgid translated where shown).
    label = _("custom: {intra} GB/s in node, {inter} GB/s between nodes").format(
        intra=f"{intra / 1e9:.4g}", inter=f"{inter / 1e9:.4g}"
    )
    return Interconnect("custom", label, intra, inter, alpha, "given")


def get_interconnect(name: str) -> Interconnect:
    """The preset called ``name``.

    Raises:
        InputError: unknown name (field ``interconnect``), listing the presets.
    """
    if name not in INTERCONNECTS:
        known = ", ".join(INTERCONNECTS)
        raise InputError(
            "interconnect",
            _("unknown interconnect {name!r}; use one of {known}").format(name=name, known=known),
        )
    return INTERCONNECTS[name]
