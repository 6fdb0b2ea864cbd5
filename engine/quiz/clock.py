"""Time in the quiz: every moment inside is timezone-aware UTC; the learner reads local time.

The clock is injectable (:data:`Clock`) so a session, and the tests, can replay a schedule.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable

from engine.errors import InputError

Clock = Callable[[], dt.datetime]
"""Returns the current time, timezone-aware."""


def utc_now() -> dt.datetime:
    """The current time, timezone-aware UTC (the default clock)."""
    return dt.datetime.now(dt.UTC)


def as_utc(moment: dt.datetime, field_name: str = "clock") -> dt.datetime:
    """``moment`` in UTC.

    Raises:
        InputError: ``moment`` is naive (field ``field_name``).
    """
    if moment.tzinfo is None:
        raise InputError(field_name, "needs a timezone-aware datetime (UTC)")
    return moment.astimezone(dt.UTC)


def iso_utc(moment: dt.datetime) -> str:
    """``moment`` as stored in a progress file: ISO 8601 in UTC (``2026-03-01T09:00:00+00:00``)."""
    return moment.astimezone(dt.UTC).isoformat()


def local_text(moment: dt.datetime, tz: dt.tzinfo | None = None) -> str:
    """``moment`` as the learner reads it: ``2026-03-01 17:10`` in ``tz`` (None: this machine's
    local time zone)."""
    return moment.astimezone(tz).strftime("%Y-%m-%d %H:%M")


def format_interval(interval: dt.timedelta) -> str:
    """A review interval in the largest unit that keeps it short: ``1 min``, ``5.5 min``,
    ``3 h``, ``8 d``, ``2.5 mo`` (30.44 days), ``1.2 y`` (365.25 days)."""
    seconds = max(interval.total_seconds(), 0.0)
    for unit, size in (("y", 365.25 * 86400), ("mo", 30.44 * 86400), ("d", 86400), ("h", 3600)):
        if seconds >= size:
            return f"{_short(seconds / size)} {unit}"
    return f"{_short(seconds / 60)} min" if seconds >= 60 else "<1 min"


def _short(value: float) -> str:
    return f"{value:.1f}".removesuffix(".0") if value < 10 else f"{value:.0f}"
