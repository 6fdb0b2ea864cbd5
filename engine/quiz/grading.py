"""Reading and checking a drill's numeric answer.

A drill's expected value is in base units (bytes, seconds, or a ratio); an answer within a
relative tolerance of it is right. Learners write answers the way the worked solutions do: a
number in the unit the question names, a fraction, a percentage, or another unit of the same
kind (:func:`parse_answer`).
"""

from __future__ import annotations

import math
import re
from typing import Final

from engine.errors import InputError, quoted
from engine.i18n import gettext as _
from engine.units import GB, parse_bytes, parse_number, parse_time, too_large, unit_suffix

_UNIT_SCALE: Final = {"GB": GB, "ms": 1e-3, "fraction": 1.0, "": 1.0}
_FRACTION_RE: Final = re.compile(
    r"^\s*(\d+(?:\.\d*)?|\.\d+)\s*/\s*(\d+(?:\.\d*)?|\.\d+)\s*(%?)\s*([^\s\d%/].*)?$"
)


def within_tolerance(value: float, expected: float, tolerance: float) -> bool:
    """``|value - expected| <= tolerance * |expected|`` (relative tolerance)."""
    return abs(value - expected) <= tolerance * abs(expected)


def parse_answer(text: str, unit: str) -> float:
    """A drill answer in base units (bytes, seconds, or a ratio).

    A bare number is read in ``unit``: ``GB`` (1e9 bytes), ``ms``, ``fraction`` or ``""`` (a
    plain number). Also accepted:

    - a fraction of two numbers, as the worked solutions write them: ``3/11``, ``1/8``,
      ``3/8 %``, ``1/2 GB``;
    - a percentage where the answer has no unit (``fraction`` or ``""``): ``12.5%``;
    - for memory answers every size unit of :func:`engine.units.parse_bytes` (``39.6GiB``,
      ``16e9B``, ``16 GB``); for times every unit of :func:`engine.units.parse_time`
      (``0.018s``, ``17570us``).

    Raises:
        InputError: field ``answer``: empty, not a number, a zero denominator, or a unit that
            does not fit the question (the message names the units that do).
    """
    raw = text.strip()
    if not raw:
        raise InputError("answer", _("is empty; type a number"))
    fraction = _FRACTION_RE.match(raw)
    if fraction is not None:
        numerator, denominator, percent, suffix = fraction.groups()
        if float(denominator) == 0:
            raise InputError("answer", _("{text} divides by zero").format(text=quoted(raw)))
        value = float(numerator) / float(denominator)
        if math.isinf(value):  # a numerator of hundreds of digits
            raise too_large("answer", raw)
        if suffix is not None and "," in suffix:
            # Read as a number, the worked-out fraction's comma would be blamed on 0.1666…
            raise _not_an_answer(raw)
        return _in_unit(f"{value!r}{percent}{suffix or ''}", unit, raw)
    return _in_unit(raw, unit, raw)


def _in_unit(answer: str, unit: str, typed: str) -> float:
    """``answer`` (what was typed, or its fraction worked out: ``1/6 x`` is
    ``0.16666666666666666x``) in base units; a message quoting the whole answer quotes
    ``typed``, the learner's text, never the worked-out number."""
    if unit in ("fraction", "") and answer.endswith("%"):
        unit_suffix("answer", answer)  # its errors quote the answer as typed, the % included
        return parse_number("answer", answer[:-1], allow_zero=True) / 100.0
    try:
        return parse_number("answer", answer, allow_zero=True) * _UNIT_SCALE[unit]
    except InputError:
        if unit == "GB":
            return parse_bytes("answer", answer, allow_zero=True)
        if unit == "ms":
            return parse_time("answer", answer)
        if unit_suffix("answer", answer):
            raise _not_an_answer(typed) from None
        raise


def _not_an_answer(typed: str) -> InputError:
    return InputError(
        "answer",
        _("{text}: answer with a number, a fraction (3/11) or a percentage (25%)").format(
            text=quoted(typed)
        ),
    )


def show_value(value: float, unit: str) -> str:
    """``value`` (base units) in ``unit`` with 4 significant digits: ``16 GB``, ``17.57 ms``,
    ``0.25 (25 %)``."""
    if unit == "GB":
        return f"{value / GB:.4g} GB"
    if unit == "ms":
        return f"{value / 1e-3:.4g} ms"
    if unit == "fraction":
        return f"{value:.4g} ({value * 100:.4g} %)"
    return f"{value:.4g}"
