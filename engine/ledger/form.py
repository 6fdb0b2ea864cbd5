"""The ledger's numeric inputs as typed (command-line flags, the Ledger pane's form): text to
:class:`~engine.ledger.model.LedgerSpec` fields.
"""

from __future__ import annotations

from typing import Any

from engine.errors import InputError
from engine.ledger.model import DEFAULT_LORA_TARGETS
from engine.ledger.validate import checked_targets
from engine.units import parse_bytes, parse_count, parse_int

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
    """Parse the numeric :class:`LedgerSpec` fields present in ``texts`` (field -> text).

    ``params`` and ``largest_layer_params`` are counts (``7.5B``), ``gpu_memory`` a size
    (``80GB``), ``zero`` a whole number 0-3, ``shared_experts`` a whole number from 0, the others
    whole numbers >= 1 (:mod:`engine.units`). ``params``, ``largest_layer_params``,
    ``gpu_memory``, ``shared_experts`` and :data:`OPTIONAL_COUNT_FIELDS` left empty or ``None``
    are omitted (not given).

    Raises:
        InputError: naming the spec field whose text does not parse.
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
        if name in _OPTIONAL_UNIT_FIELDS:
            values[name] = _OPTIONAL_UNIT_FIELDS[name](name, text)
        elif name == "zero":
            values[name] = parse_int(name, text, minimum=0, maximum=3)
        elif name in OPTIONAL_ZERO_FIELDS:
            values[name] = parse_int(name, text, minimum=0)
        elif name in OPTIONAL_COUNT_FIELDS or name in SIZE_FIELDS:
            values[name] = parse_int(name, text)
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
    value = parse_bytes(field, text)
    if value < MIN_DEVICE_MEMORY_BYTES:
        raise InputError(
            field,
            f"{text.strip()!r} is {value:g} bytes, less than any accelerator has; was the unit "
            "left out? (80GB = 80e9 bytes, 80GiB = 80 x 2^30)",
        )
    return value


_OPTIONAL_UNIT_FIELDS = {
    "params": parse_count,
    "largest_layer_params": parse_count,
    "gpu_memory": parse_device_memory,
}
