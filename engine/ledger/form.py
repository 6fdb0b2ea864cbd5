"""The ledger's numeric inputs as typed (command-line flags, the Ledger pane's form): text to
:class:`~engine.ledger.model.LedgerSpec` fields.

The inputs keep the names they were typed under: the flags (``--micro-batch``, ``--zero``) and the
Ledger form's keys, which progress files store. Three of them name spec fields differently
(:data:`SPEC_FIELDS`): the spec uses Megatron-LM's terms, ``micro_batch_size`` and
``num_microbatches``, and says ``zero_stage``.
"""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

from engine.checks import MAX_NUMBER
from engine.errors import InputError, quoted
from engine.i18n import gettext as _
from engine.ledger.model import DEFAULT_LORA_TARGETS
from engine.ledger.validate import checked_targets
from engine.units import parse_bytes, parse_count, parse_int

SPEC_FIELDS: Mapping[str, str] = MappingProxyType(
    {"micro_batch": "micro_batch_size", "micro_batches": "num_microbatches", "zero": "zero_stage"}
)
"""Input name -> :class:`~engine.ledger.model.LedgerSpec` field, where the two differ."""
INPUT_NAMES: Mapping[str, str] = MappingProxyType({v: k for k, v in SPEC_FIELDS.items()})
"""Spec field -> the input that sets it, where the two differ (an error on ``zero_stage`` is
shown on the ``zero`` input)."""

# LedgerSpec's numeric fields as typed (CLI flags, the Ledger pane's form): how each is parsed.
# Optional ones may be empty or None (not given); the others always carry a value.
OPTIONAL_COUNT_FIELDS = (
    "layers",
    "hidden",
    "heads",
    "ffn_hidden",
    "vocab",
    "seq",
    "micro_batches",
    "kv_heads",
    "head_dim",
    "experts",
    "top_k",
    "expert_ffn_hidden",
    "vocab_multiple",
    "gpus_per_node",
    "nodes",
)


SIZE_FIELDS = ("micro_batch", "dp", "tp", "pp", "cp", "ep", "virtual_stages", "lora_rank")


# Whole numbers that may be 0, or empty (not given).
OPTIONAL_ZERO_FIELDS = ("shared_experts",)


def numeric_fields_from_text(texts: dict[str, str | None]) -> dict[str, Any]:
    """Parse the numeric inputs present in ``texts`` (input name -> text) into
    :class:`LedgerSpec` fields (renamed by :data:`SPEC_FIELDS`).

    ``params`` and ``largest_layer_params`` are counts (``7.5B``), ``gpu_memory`` a size
    (``80GB``), ``zero`` a whole number 0-3, ``shared_experts`` a whole number from 0, the others
    whole numbers >= 1 (:mod:`engine.units`). ``params``, ``largest_layer_params``,
    ``gpu_memory``, ``shared_experts`` and :data:`OPTIONAL_COUNT_FIELDS` left empty or ``None``
    are omitted (not given).

    Raises:
        InputError: naming the input whose text does not parse.
    """
    values: dict[str, Any] = {}
    for name, text in texts.items():
        optional = (
            name in OPTIONAL_COUNT_FIELDS
            or name in _OPTIONAL_UNIT_FIELDS
            or name in OPTIONAL_ZERO_FIELDS
        )
        if optional and (text is None or not text.strip()):
            continue
        assert text is not None
        field = SPEC_FIELDS.get(name, name)
        if name in _OPTIONAL_UNIT_FIELDS:
            values[field] = _OPTIONAL_UNIT_FIELDS[name](name, text)
        elif name == "zero":
            values[field] = parse_int(name, text, minimum=0, maximum=3)
        elif name in OPTIONAL_ZERO_FIELDS:
            values[field] = parse_int(name, text, minimum=0)
        elif name in OPTIONAL_COUNT_FIELDS or name in SIZE_FIELDS:
            values[field] = parse_int(name, text)
    return values


def parse_lora_targets(text: str | None) -> tuple[str, ...]:
    """LoRA targets from a comma list (``q,v``; empty or ``None``: the default q, v).

    Raises:
        InputError: (field ``lora_targets``) a name not in :data:`LORA_TARGETS`, or one twice.
    """
    if text is None or not text.strip():
        return DEFAULT_LORA_TARGETS
    names = tuple(part.strip().lower() for part in text.split(","))
    return checked_targets(names)


# No accelerator has less than this; "80" typed for 80 GB would otherwise be 80 bytes.
MIN_DEVICE_MEMORY_BYTES = 2**20


def parse_device_memory(field: str, text: str) -> float:
    """A device's memory in bytes from ``80GB``, ``141GB``, ``80GiB``, ``80e9``.

    Raises:
        InputError: as :func:`engine.units.parse_bytes`, or under 1 MiB (a unit left out).
    """
    value = parse_bytes(field, text, maximum=MAX_NUMBER)
    if value < MIN_DEVICE_MEMORY_BYTES:
        raise InputError(
            field,
            _(
                "{text} is {value:g} bytes, less than any accelerator has; was the unit left "
                "out? (80GB = 80e9 bytes, 80GiB = 80 x 2^30)"
            ).format(text=quoted(text.strip()), value=value),
        )
    return value


def _parse_params(field: str, text: str) -> float:
    """A parameter count, a whole number once its unit is applied (``1.5B``, never ``1.5``);
    under one parameter is refused (``0.5`` was surely ``0.5B``).

    Raises:
        InputError: as :func:`engine.units.parse_count`, a count under 1, or a fraction of a
            parameter.
    """
    value = parse_count(field, text, maximum=MAX_NUMBER)
    if value < 1:
        raise InputError(
            field,
            _(
                "{text} is less than one parameter; was the suffix left out? (0.5B = 0.5e9 "
                "parameters)"
            ).format(text=quoted(text.strip())),
        )
    whole = round(value)
    # A unit's scaling leaves float noise (a few ulps): 1.1B is 1,100,000,000 parameters.
    if abs(value - whole) > value * 1e-12:
        raise InputError(
            field,
            _(
                "{text} is not a whole number of parameters; a count with a unit may have "
                "decimals (1.5B = 1,500,000,000)"
            ).format(text=quoted(text.strip())),
        )
    return float(whole)


_OPTIONAL_UNIT_FIELDS = {
    "params": _parse_params,
    "largest_layer_params": _parse_params,
    "gpu_memory": parse_device_memory,
}
