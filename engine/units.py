"""Parse and format the quantities shardbook works with.

Inside the engine everything is in base units: counts, bytes, seconds, bytes/second, FLOP/s. Input
text accepts what a learner types (README "Conventions the figures follow"): ``7.5e9``, ``7.5B``,
``350M``, ``80GB``, ``80GiB``, ``100GB/s``, ``5us``. Display always names the unit: GB is 1e9 bytes
and GiB is 2**30 bytes, never a bare "G".

Every parser takes the name of the field it reads so that its :class:`~engine.errors.InputError`
names it. No parser returns NaN or an infinity.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable

from engine.checks import MAX_COUNT, count_limit
from engine.errors import InputError, escaped, quoted, typed_value
from engine.i18n import gettext as _

GB = 1e9
GIB = float(2**30)

_COUNT_SUFFIX = {"": 1.0, "K": 1e3, "M": 1e6, "B": 1e9, "G": 1e9, "T": 1e12}
_BYTE_SUFFIX = {
    "": 1.0,
    "B": 1.0,
    "KB": 1e3,
    "MB": 1e6,
    "GB": 1e9,
    "TB": 1e12,
    "KIB": 2.0**10,
    "MIB": 2.0**20,
    "GIB": 2.0**30,
    "TIB": 2.0**40,
}
_TIME_SUFFIX = {
    "": 1.0,
    "S": 1.0,
    "MS": 1e-3,
    "US": 1e-6,
    "µS": 1e-6,
    "NS": 1e-9,
}
# Bits are for network links ("100Gb/s"): divided by 8 into bytes.
_RATE_BIT_SUFFIX = {"BIT": 1.0, "KBIT": 1e3, "MBIT": 1e6, "GBIT": 1e9, "TBIT": 1e12}

# Control characters (Unicode category Cc): a tab or a line break inside a number is a paste gone
# wrong (``7<TAB>B``), not a space, though the pattern below would read it as one.
_CONTROL_RE = re.compile(r"[\x00-\x1f\x7f-\x9f]")
_NUMBER_RE = re.compile(r"^\s*([+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?)\s*([^\s\d].*?)?\s*$")
# Commas only as thousands separators: 1,024 and 12,345.5 GB, not 1,5 or 1,,5.
_THOUSANDS_RE = re.compile(
    r"^\s*[+-]?\d{1,3}(?:,\d{3})+(?:\.\d*)?(?:[eE][+-]?\d+)?(?:\s*[^\s\d,].*)?\s*$"
)


def _split(field: str, text: str | float | int) -> tuple[float, str]:
    """Split ``'7.5 GB'`` into ``(7.5, 'GB')``; numbers pass through with an empty suffix."""
    if isinstance(text, bool):
        raise InputError(field, _("expected a number, got a boolean"))
    if isinstance(text, int | float):
        return _finite(field, float(text), text), ""
    raw = str(text)
    if not raw.strip():
        raise InputError(field, _("is empty; enter a number"))
    # Inside it: a newline a shell or an editor left at either end is no part of the value.
    control = _CONTROL_RE.search(raw.strip())
    if control:
        raise InputError(
            field,
            _("{text} holds a control character ({character}); type the number on one line").format(
                text=quoted(raw.strip()), character=escaped(control.group())
            ),
        )
    if "," in raw and not _THOUSANDS_RE.match(raw):
        # "1,5" is 1.5 to half the world and 15 to Python: say so rather than guess.
        raise InputError(
            field,
            _("{text}: use '.' for decimals; ',' only between groups of 3 digits").format(
                text=quoted(raw.strip())
            ),
        )
    match = _NUMBER_RE.match(raw.replace("_", "").replace(",", ""))
    if match is None:
        raise InputError(field, _("{text} is not a number").format(text=quoted(raw.strip())))
    try:
        value = float(match.group(1))
    except (ValueError, OverflowError):
        raise InputError(
            field, _("{text} is not a number").format(text=quoted(raw.strip()))
        ) from None
    return _finite(field, value, raw), (match.group(2) or "").strip()


def has_unit(text: str | float | int) -> bool:
    """Whether ``text`` is a number with a unit (``100GB/s``, ``5 us``); False for a bare number
    (``100``, ``1e11``: read as bytes, bytes per second or seconds) and for text that is no
    number at all (the parser's message says what is wrong with it). Raises nothing."""
    try:
        return bool(unit_suffix("value", str(text)))
    except InputError:
        return False


def too_large(field: str, text: str | float | int) -> InputError:
    """The error for ``text`` whose value overflows a float (``1e400``, ``1e300 TB``): typed
    text is quoted as typed, as every message quoting the learner's input does."""
    if isinstance(text, str):
        return InputError(
            field, _("{text} is too large (overflows a float)").format(text=quoted(text.strip()))
        )
    return InputError(field, _("is too large (overflows a float)"))


def _finite(field: str, value: float, text: str | float | int) -> float:
    if math.isnan(value):
        raise InputError(field, _("is not a number (NaN)"))
    if math.isinf(value):
        raise too_large(field, text)
    return value


def _scaled(field: str, value: float, scale: float, text: str | float | int) -> float:
    result = value * scale
    if math.isinf(result):
        raise too_large(field, text)
    if scale != 1.0 and result:
        # The decimal the learner wrote, to the digits a float keeps: 5 x 1e-6 is
        # 4.9999999999999996e-06 in binary, and the JSON wrote it so.
        result = float(f"{result:.{FLOAT_DIGITS}g}")
    return result


def unit_suffix(field: str, text: str) -> str:
    """The unit written after the number of ``text`` (``"25%"`` -> ``"%"``, ``"3"`` -> ``""``).

    Raises:
        InputError: empty, not a number, NaN/inf.
    """
    return _split(field, text)[1]


def parse_number(
    field: str,
    text: str | float | int,
    *,
    allow_zero: bool = False,
    maximum: float | None = None,
) -> float:
    """Parse a plain positive number (no unit).

    Raises:
        InputError: empty, not a number, NaN/inf, negative, zero unless ``allow_zero``, or above
            ``maximum`` (the message quotes the value as typed).
    """
    value, suffix = _split(field, text)
    if suffix:
        raise InputError(
            field, _("unexpected unit {unit}; enter a plain number").format(unit=quoted(suffix))
        )
    return _check_sign(field, _at_most(field, value, maximum, text), allow_zero)


def _at_most(
    field: str,
    value: float,
    maximum: float | None,
    text: str | float | int,
    written: Callable[[float], str] | None = None,
    bare: str = "{value}",
) -> float:
    """``value`` when ``maximum`` is ``None`` or not exceeded; the refusal quotes ``text`` as
    typed (``got 1e40``, not the float's ``1e+40``), through the template ``bare`` when it is a
    bare number (``{value} bytes``), and writes ``maximum`` with ``written`` (in its unit),
    else as a plain number."""
    if maximum is not None and value > maximum:
        typed = typed_value(str(text).strip())
        raise InputError(
            field,
            _("must be at most {maximum}, got {value}").format(
                maximum=f"{maximum:g}" if written is None else written(maximum),
                value=typed if has_unit(text) else bare.format(value=typed),
            ),
        )
    return value


def _check_sign(field: str, value: float, allow_zero: bool) -> float:
    if value < 0:
        raise InputError(field, _("must not be negative"))
    if value == 0 and not allow_zero:
        raise InputError(field, _("must be greater than zero"))
    return value


def parse_count(
    field: str,
    text: str | float | int,
    *,
    allow_zero: bool = False,
    maximum: float | None = None,
) -> float:
    """Parse a count such as a parameter count: ``1e9``, ``1B``, ``7.5B``, ``350M``, ``12K``.

    ``B`` means billion here (1e9), as in "a 7B model"; ``G`` is accepted as a synonym.

    Returns:
        The count as a float (parameter counts exceed 2**53 only for absurd models).

    Raises:
        InputError: empty, not a number, unknown suffix, negative, zero (unless allowed), NaN/inf,
            above ``maximum`` (quoted as typed).
    """
    value, suffix = _split(field, text)
    key = suffix.upper()
    if key not in _COUNT_SUFFIX:
        raise InputError(
            field, _("unknown suffix {unit}; use K, M, B (1e9) or T").format(unit=quoted(suffix))
        )
    count = _scaled(field, value, _COUNT_SUFFIX[key], text)
    return _check_sign(field, _at_most(field, count, maximum, text), allow_zero)


def parse_int(
    field: str, text: str | float | int, *, minimum: int = 1, maximum: int = MAX_COUNT
) -> int:
    """Parse a whole number such as a rank count or a micro-batch count.

    Accepts count suffixes (``1K``). A fractional value is an error, never truncated.

    Raises:
        InputError: not a whole number, below ``minimum`` or above ``maximum`` (by default
            :data:`~engine.checks.MAX_COUNT`, the most any spec takes, so that the message
            quotes ``1e300`` as typed, not its 301 digits).
    """
    value, suffix = _split(field, text)
    key = suffix.upper()
    if key not in _COUNT_SUFFIX:
        raise InputError(
            field, _("{text} is not a whole number").format(text=quoted(str(text).strip()))
        )
    value = _scaled(field, value, _COUNT_SUFFIX[key], text)
    # Messages show the value as typed (100000000), not its float's shortest form (1e+08).
    typed = typed_value(str(text).strip())
    if value != math.floor(value):
        raise InputError(field, _("must be a whole number, got {value}").format(value=typed))
    if value < minimum:
        raise InputError(
            field,
            _("must be at least {minimum}, got {value}").format(minimum=minimum, value=typed),
        )
    if value > maximum:
        raise InputError(
            field,
            _("must be at most {maximum}, got {value}").format(
                maximum=count_limit(maximum), value=typed
            ),
        )
    return int(value)


def parse_bytes(
    field: str,
    text: str | float | int,
    *,
    allow_zero: bool = False,
    maximum: float | None = None,
) -> float:
    """Parse a size: ``80GB`` (80e9), ``80GiB`` (80 * 2**30), ``512MB``, ``1e9`` (bytes).

    Raises:
        InputError: empty, not a number, unknown unit, negative, zero (unless allowed), NaN/inf,
            above ``maximum`` bytes (quoted as typed, the bound in GB and GiB).
    """
    value, suffix = _split(field, text)
    key = suffix.upper()
    if key not in _BYTE_SUFFIX:
        raise InputError(
            field,
            _("unknown unit {unit}; use B, KB, MB, GB, TB, KiB, MiB, GiB").format(
                unit=quoted(suffix)
            ),
        )
    size = _scaled(field, value, _BYTE_SUFFIX[key], text)
    # A bare number is bytes: the refusal says so (``got 1e40 bytes``), and writes the bound
    # as every size is shown, in GB and GiB.
    checked = _at_most(field, size, maximum, text, format_bytes, _("{value} bytes"))
    return _check_sign(field, checked, allow_zero)


def parse_rate(field: str, text: str | float | int) -> float:
    """Parse a bandwidth into bytes/second: ``100GB/s``, ``25GiB/s``, ``400Gbit/s``, ``1e11``.

    ``Gb/s`` (lower-case b) and ``Gbit/s`` are bits and are divided by 8.

    Raises:
        InputError: empty, not a number, unknown unit, a size without ``/s`` (``1GB`` is not a
            rate), zero or negative, NaN/inf.
    """
    value, suffix = _split(field, text)
    per_second = suffix.lower().endswith("/s")
    unit = suffix[:-2] if per_second else suffix
    if (
        unit.endswith("b")
        and not unit.lower().endswith("bit")
        and unit[:-1].upper()
        in (
            "",
            "K",
            "M",
            "G",
            "T",
        )
    ):
        unit = unit[:-1] + "bit"
    key = unit.upper()
    if unit and not per_second and (key in _RATE_BIT_SUFFIX or key in _BYTE_SUFFIX):
        # "1GB" is a size: taken as 1 GB/s it would price a transfer by a guess.
        raise InputError(
            field,
            _("{text} is a size, not a rate; add /s (e.g. 100GB/s, 400Gb/s)").format(
                text=quoted(str(text).strip())
            ),
        )
    if key in _RATE_BIT_SUFFIX:
        return _check_sign(field, _scaled(field, value, _RATE_BIT_SUFFIX[key] / 8.0, text), False)
    if key not in _BYTE_SUFFIX:
        raise InputError(
            field,
            _("unknown unit {unit}; use e.g. 100GB/s, 25GiB/s, 400Gb/s").format(
                unit=quoted(suffix)
            ),
        )
    return _check_sign(field, _scaled(field, value, _BYTE_SUFFIX[key], text), False)


def parse_time(field: str, text: str | float | int, *, allow_zero: bool = True) -> float:
    """Parse a duration into seconds: ``5us``, ``2ms``, ``1.5s``, ``1e-6`` (seconds).

    Raises:
        InputError: empty, not a number, unknown unit, negative, NaN/inf.
    """
    value, suffix = _split(field, text)
    key = suffix.upper()
    if key not in _TIME_SUFFIX:
        raise InputError(
            field, _("unknown unit {unit}; use s, ms, us or ns").format(unit=quoted(suffix))
        )
    return _check_sign(field, _scaled(field, value, _TIME_SUFFIX[key], text), allow_zero)


# The significant decimal digits a float always keeps (DBL_DIG): a figure is never written with
# more (1e24 bytes / 1e9 is not 999,999,999,999,999.94 GB).
FLOAT_DIGITS = 15


def format_fixed(value: float, digits: int = 2) -> str:
    """``value`` grouped by thousands with ``digits`` decimals (``1,234.50``), or in scientific
    notation (4 significant digits) where that would write more significant digits than a float
    holds (:data:`FLOAT_DIGITS`): ``2.5e+14``, never ``250,000,000,000,000.03``; with no
    decimals, ``1e+24``, never ``999,999,999,999,999,983,222,784``. A value that is not zero
    but would round to zero at ``digits`` decimals is written in scientific notation too
    (``1e-09`` for 1 byte in GB, never ``0.00``: a figure shown is never a wrong zero)."""
    magnitude = abs(value)
    if magnitude >= 10.0 ** (FLOAT_DIGITS - digits) or 0 < magnitude < 0.5 * 10.0**-digits:
        return f"{value:.4g}"
    return f"{value:,.{digits}f}"


def column_digits(values: Iterable[float], digits: int = 2, figures: int = 2) -> int:
    """The decimals one column of figures is written with (:func:`format_fixed`, the same for
    every cell): ``digits``, or more where a value that is not zero would show fewer than
    ``figures`` significant digits, up to 9. ``[2.0, 0.004194]`` -> 4 (``2.0000``,
    ``0.0042``), never ``0.004194`` beside ``0.01`` for 0.0126 (a cell to its own rule);
    ``[2.0, 0.0]`` -> 2. Values that are not finite are left out."""
    need = digits
    for value in values:
        magnitude = abs(value)
        if magnitude and math.isfinite(magnitude):
            need = max(need, figures - 1 - math.floor(math.log10(magnitude)))
    return min(need, 9)


def _format_in(value: float, unit: str, digits: int) -> str:
    """``value`` (already in ``unit``) as :func:`format_fixed` writes it, then ``unit``:
    ``1.5e+31 GB``, never ``15,000,000,000,000,001,705,644,256,131,...``."""
    return f"{format_fixed(value, digits)} {unit}"


def format_gb(num_bytes: float, digits: int = 2) -> str:
    """``16e9`` -> ``'16.00 GB'`` (GB = 1e9 bytes); ``1.5e40`` -> ``'1.5e+31 GB'``."""
    return _format_in(num_bytes / GB, "GB", digits)


def format_gib(num_bytes: float, digits: int = 2) -> str:
    """``16e9`` -> ``'14.90 GiB'`` (GiB = 2**30 bytes); ``1.5e40`` -> ``'1.397e+31 GiB'``."""
    return _format_in(num_bytes / GIB, "GiB", digits)


def format_bytes(num_bytes: float, digits: int = 2) -> str:
    """Both conventions, labelled: ``'16.00 GB (14.90 GiB)'`` (in Chinese with full-width
    brackets, ``'16.00 GB（14.90 GiB）'``: the catalog's template)."""
    return _("{gb} ({gib})").format(
        gb=format_gb(num_bytes, digits), gib=format_gib(num_bytes, digits)
    )


def format_figure(value: float) -> str:
    """A figure without a unit (a time in op-time units, a ratio, a count of micro-batches): 4
    significant digits below 1,000 (``0.375``, ``0.2727``, ``49.5``), every digit of a larger
    one's integer part, grouped by thousands (``300,009``, never ``3e+05``), and in scientific
    notation (4 significant digits) where that would write more digits than a float holds
    (about 15), as :func:`format_gb` does (``1.1e+25``)."""
    if abs(value) >= 1e3:
        return format_fixed(value, 0)
    return f"{value:.4g}"


def format_flops(flops_per_s: float) -> str:
    """``3.12e14`` -> ``'3.12e+14 FLOP/s'`` (4 significant digits)."""
    return f"{flops_per_s:.4g} FLOP/s"


def format_per_parameter(num_bytes: float) -> str:
    """``2`` -> ``'2 bytes per parameter'`` (a precision's size: bf16 is 2)."""
    return _("{value} bytes per parameter").format(value=f"{num_bytes:.4g}")


def format_per_element(num_bytes: float) -> str:
    """``2`` -> ``'2 bytes per element'`` (what a collective moves per gradient element)."""
    return _("{value} bytes per element").format(value=f"{num_bytes:.4g}")


def format_token_rate(tokens_per_s: float) -> str:
    """``5e4`` -> ``'5e+04 tokens/s'``."""
    return _("{value} tokens/s").format(value=f"{tokens_per_s:.4g}")


def format_count(count: float) -> str:
    """``7.5e9`` -> ``'7.5B'``; ``350e6`` -> ``'350M'`` (B = 1e9). From a thousand T up the
    count is written in plain scientific form (``1e24`` -> ``'1e+24'``, not ``'1e+12T'``)."""
    if abs(count) >= 1e15:
        return f"{count:.4g}"
    for suffix, scale in (("T", 1e12), ("B", 1e9), ("M", 1e6), ("K", 1e3)):
        if abs(count) >= scale:
            return f"{count / scale:.4g}{suffix}"
    return f"{count:.4g}"


def format_seconds(seconds: float) -> str:
    """``0.01757`` -> ``'17.57 ms'``; picks s, ms, us or ns."""
    for suffix, scale in (("s", 1.0), ("ms", 1e-3), ("us", 1e-6)):
        if abs(seconds) >= scale:
            return f"{seconds / scale:.4g} {suffix}"
    return f"{seconds / 1e-9:.4g} ns"


def format_rate(bytes_per_s: float) -> str:
    """``1e11`` -> ``'100 GB/s'`` (GB = 1e9 bytes, as NCCL-tests reports)."""
    return f"{bytes_per_s / GB:.4g} GB/s"
