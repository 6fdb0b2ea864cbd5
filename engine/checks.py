"""The engine's input checks, one style for every calculator.

A calculator takes a spec (a frozen dataclass whose field names are the command line's flags in
snake case) and checks each field with these functions before it computes: a whole number, a
finite number, one of a set of names, a flag. Each returns the value normalized (``2.0`` typed for
a count becomes ``2``) or raises :class:`~engine.errors.InputError` naming the field, so the
command line maps it to its flag and the panes to their field. Text typed by a learner (``7.5B``,
``80GB``, ``5us``) is parsed by :mod:`engine.units` first.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Final, TypeVar

from engine.errors import InputError, typed_value
from engine.i18n import gettext as _

MAX_COUNT: Final = 10**12
"""Larger counts than this are typing errors; keeping every input below it keeps every product
the ledger forms (at most four counts multiplied) far from float overflow."""

MAX_PIPELINE_STAGES: Final = 4096
"""More pipeline stages than this are typing errors (the deepest published models have under 200
layers, and a stage holds at least one); the per-stage figures are computed for every stage."""

MAX_NUMBER: Final = 1e24
"""The largest number a calculator takes where no tighter bound applies (a parameter count, a
size in bytes, a bandwidth): larger is a typing error, and products of a few such numbers stay
far from a float's 1.8e308."""

T = TypeVar("T")


def whole_number(field: str, value: object, *, minimum: int = 1, maximum: int = MAX_COUNT) -> int:
    """``value`` as an ``int`` in ``[minimum, maximum]`` (a float such as ``2.0`` is accepted).

    Raises:
        InputError: a boolean, a non-integer, NaN/inf, below ``minimum`` or above ``maximum``.
    """
    if type(value) is int and minimum <= value <= maximum:
        return value
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise InputError(field, _("expected a whole number, got {value}").format(value=repr(value)))
    if isinstance(value, float):
        if not math.isfinite(value) or value != math.floor(value):
            raise InputError(
                field, _("must be a whole number, got {value}").format(value=repr(value))
            )
        value = int(value)
    if value < minimum:
        raise InputError(
            field, _("must be at least {minimum}, got {value}").format(minimum=minimum, value=value)
        )
    if value > maximum:
        # A count far past the bound (10**300) is quoted by its beginning, not its digits.
        raise InputError(
            field,
            _("must be at most {maximum}, got {value}").format(
                maximum=count_limit(maximum), value=typed_value(str(value))
            ),
        )
    return value


def count_limit(maximum: int) -> str:
    """A whole number's bound as a message writes it: with thousands separators, as every
    count's (``4,096``; :data:`MAX_COUNT` ``1,000,000,000,000``, not the float's ``1e+12``)."""
    return f"{maximum:,}"


def finite_number(
    field: str,
    value: object,
    *,
    allow_zero: bool = False,
    maximum: float = MAX_NUMBER,
    written: Callable[[float], str] | None = None,
) -> float:
    """``value`` as a ``float``: finite, positive (or zero if allowed), at most ``maximum``.
    ``written`` writes a number in the field's unit for the refusal of one too large
    (``engine.units.format_bytes``: ``1e+15 GB (9.313e+14 GiB)``); without it, a plain number.

    Raises:
        InputError: a boolean or non-number, NaN/inf, negative, zero unless allowed, too large.
    """
    # Fast path for the common case; NaN and inf fail these comparisons and fall through.
    if (
        type(value) is float
        and (value > 0.0 or (allow_zero and value == 0.0))
        and value <= maximum
        and value < math.inf
    ):
        return value
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise InputError(field, _("expected a number, got {value}").format(value=repr(value)))
    number = float(value)
    if math.isnan(number):
        raise InputError(field, _("is not a number (NaN)"))
    write = written if written is not None else (lambda number: f"{number:g}")
    if math.isinf(number):
        raise InputError(field, _("must be at most {maximum}").format(maximum=write(maximum)))
    if number > maximum:
        raise InputError(
            field,
            _("must be at most {maximum}, got {value}").format(
                maximum=write(maximum), value=write(number)
            ),
        )
    if number < 0:
        raise InputError(field, _("must not be negative"))
    if number == 0 and not allow_zero:
        raise InputError(field, _("must be greater than zero"))
    return number


ZERO_STAGES: Final = (0, 1, 2, 3)
"""ZeRO stages (Rajbhandari et al. 2020 §5): 0 replicated, 1 optimizer states, 2 and gradients,
3 and parameters (FSDP's full sharding)."""


def zero_stage(field: str, value: object) -> int:
    """``value`` as a ZeRO stage 0-3 (``2.0`` is stage 2; ``True``, ``2.5`` or ``"2"`` are not).

    Raises:
        InputError: anything else.
    """
    if type(value) is int and value in ZERO_STAGES:
        return value
    if type(value) is float and value in ZERO_STAGES:
        return int(value)
    raise InputError(
        field,
        _("must be 0, 1, 2 or 3 (3 = FSDP full shard), got {value}").format(value=repr(value)),
    )


def one_of(field: str, value: object, choices: Sequence[T]) -> T:
    """The choice equal to ``value`` (typed as the choices are: a ``Literal`` of names).

    Raises:
        InputError: any other value, listing the choices.
    """
    for choice in choices:
        if type(value) is type(choice) and value == choice:
            return choice
    raise InputError(
        field,
        _("{value} is not one of {choices}").format(
            value=repr(value), choices=", ".join(map(str, choices))
        ),
    )


def flag(field: str, value: object) -> bool:
    """``value`` when it is ``True`` or ``False`` (not 1, 0 or ``"yes"``).

    Raises:
        InputError: anything else.
    """
    # bool cannot be subclassed: a type test is isinstance's answer.
    if type(value) is not bool:
        raise InputError(field, _("must be true or false"))
    return value
