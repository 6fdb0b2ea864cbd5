"""Time in the quiz: every moment inside is timezone-aware UTC; the learner reads local time
(:mod:`engine.timefmt` writes both).

The clock is injectable (:data:`Clock`) so a session, and the tests, can replay a schedule.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Callable

from engine.errors import InputError
from engine.i18n import gettext as _
from engine.timefmt import utc_iso

Clock = Callable[[], dt.datetime]
"""Returns the current time, timezone-aware (the default: :func:`engine.timefmt.utc_now`)."""


def as_utc(moment: dt.datetime, field_name: str = "clock") -> dt.datetime:
    """``moment`` in UTC.

    Raises:
        InputError: ``moment`` is naive (field ``field_name``).
    """
    if moment.tzinfo is None:
        raise InputError(field_name, _("needs a timezone-aware datetime (UTC)"))
    return moment.astimezone(dt.UTC)


def iso_utc(moment: dt.datetime) -> str:
    """``moment`` as stored in a progress file: ISO 8601 in UTC (``2026-03-01T09:00:00+00:00``),
    to the microsecond where it has some: replaying the log must give the schedule fsrs computed
    live.

    Raises:
        InputError: ``moment`` is naive (field ``time``).
    """
    return utc_iso(moment, timespec="auto")
