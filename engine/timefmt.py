"""One way to write a time: UTC in files and JSON, the learner's local time on screen.

- Stored files and JSON: ISO 8601 in UTC with an explicit offset, ``2026-12-07T10:15:00+00:00``
  (:func:`utc_iso`; read back with :func:`parse_utc`). The zone never depends on the machine
  that wrote the file.
- On screen (the app, the command line's text): the learner's local time zone (``tz=None`` is this
  machine's), ``2026-12-07 18:15`` (:func:`local_text`), with the UTC offset where a line is read
  on its own (``2026-12-07 18:15 +0800``), ``18:15:02`` for the header's clock
  (:func:`local_clock`), and relative phrasing where it helps, ``in 3 days`` or ``2 hours ago``
  (:func:`relative`, the amounts by the ``humanize`` library).
- File names (quarantined and rescue copies): ``20261207T101500123456Z`` (:func:`file_stamp`),
  UTC, sortable, no characters a file system refuses.

Light: ``humanize`` is imported only when a relative time is first written.
"""

from __future__ import annotations

import datetime as dt
from typing import Literal

from engine.errors import InputError
from engine.i18n import N_, current_language, gettext
from engine.i18n import gettext as _

Timespec = Literal["seconds", "auto"]


def utc_now() -> dt.datetime:
    """The current time, timezone-aware UTC."""
    return dt.datetime.now(dt.UTC)


def _aware(moment: dt.datetime) -> dt.datetime:
    if moment.tzinfo is None:
        raise InputError("time", _("needs a timezone-aware datetime (UTC)"))
    return moment


def utc_iso(moment: dt.datetime, timespec: Timespec = "seconds") -> str:
    """``moment`` as ISO 8601 UTC with an explicit offset: ``2026-12-07T10:15:00+00:00`` (to the
    second), or with its microseconds when it has some (``timespec="auto"``: the quiz's review
    log, whose times replay the schedule exactly).

    Raises:
        InputError: ``moment`` has no timezone (field ``time``).
    """
    return _aware(moment).astimezone(dt.UTC).isoformat(timespec=timespec)


def parse_utc(text: str) -> dt.datetime | None:
    """An ISO 8601 time with an offset as an aware UTC datetime; ``None`` when ``text`` is not
    one (no offset, or not a time)."""
    try:
        moment = dt.datetime.fromisoformat(text)
    except (TypeError, ValueError):
        return None
    if moment.tzinfo is None:
        return None
    return moment.astimezone(dt.UTC)


def local_text(moment: dt.datetime, tz: dt.tzinfo | None = None, *, zone: bool = False) -> str:
    """``moment`` as the learner reads it: ``2026-12-07 18:15`` in ``tz`` (None: this machine's
    local time zone); ``zone=True`` adds the UTC offset, ``2026-12-07 18:15 +0800``.

    Raises:
        InputError: ``moment`` has no timezone (field ``time``).
    """
    local = _aware(moment).astimezone(tz)
    return local.strftime("%Y-%m-%d %H:%M %z" if zone else "%Y-%m-%d %H:%M")


def local_iso(moment: dt.datetime, tz: dt.tzinfo | None = None) -> str:
    """``moment`` as ISO 8601 in ``tz`` with its offset, ``2026-12-08T10:30:00+08:00``: only
    where JSON must say which zone its local dates are counted in (``stats --json``'s
    ``local_now``); every other time in JSON is :func:`utc_iso`.

    Raises:
        InputError: ``moment`` has no timezone (field ``time``).
    """
    return _aware(moment).astimezone(tz).isoformat(timespec="seconds")


def local_span(start: dt.datetime, end: dt.datetime, tz: dt.tzinfo | None = None) -> str:
    """A stretch of time in ``tz`` with its offset: ``2026-12-07 18:15-19:40 +0800``; the end's
    date is written too when it is another day (``2026-12-07 23:50-2026-12-08 00:20 +0800``).

    Raises:
        InputError: a moment has no timezone (field ``time``).
    """
    first, last = _aware(start).astimezone(tz), _aware(end).astimezone(tz)
    until = last.strftime("%H:%M" if last.date() == first.date() else "%Y-%m-%d %H:%M")
    return f"{first:%Y-%m-%d %H:%M}-{until} {first:%z}"


def local_clock(moment: dt.datetime, tz: dt.tzinfo | None = None) -> str:
    """The time of day in ``tz``, to the second: ``18:15:02`` (the app's "saved" time).

    Raises:
        InputError: ``moment`` has no timezone (field ``time``).
    """
    return _aware(moment).astimezone(tz).strftime("%H:%M:%S")


def relative(moment: dt.datetime, now: dt.datetime) -> str:
    """``moment`` seen from ``now``: ``in 3 days``, ``2 hours ago``, ``now`` (under a second).
    The amount is humanize's ``naturaldelta`` (``a minute``, ``8 days``, ``1 year, 2 months``).

    Raises:
        InputError: a moment has no timezone (field ``time``).
    """
    delta = _aware(moment) - _aware(now)
    if abs(delta) < dt.timedelta(seconds=1):
        return gettext("now")
    amount = duration_text(abs(delta))
    if delta > dt.timedelta(0):
        return gettext("in {amount}").format(amount=amount)
    return gettext("{amount} ago").format(amount=amount)


def duration_text(delta: dt.timedelta) -> str:
    """A length of time in words: ``8 days``, ``a minute``, ``2 months`` (humanize's
    ``naturaldelta``). humanize rounds minutes and hours to the nearest but counts whole days
    down, so a review due in 7 days 23 hours would read ``7 days`` seconds after its rating said
    8: from a day on, the length is rounded to the nearest day first. In the interface language
    (humanize's own catalogs: ``8 天`` in Chinese)."""
    import humanize

    day = dt.timedelta(days=1)
    if abs(delta) >= day:
        delta = day * round(delta / day)
    if current_language() != "en":
        # humanize's Chinese abbreviates (10分, read as "10 points" as well); the same form as
        # the quiz's rating keys instead, so one screen writes one interval one way.
        return format_interval(abs(delta))
    return str(humanize.naturaldelta(delta))


_INTERVAL_UNITS = (
    (N_("{amount} y"), 365.25 * 86400),
    (N_("{amount} mo"), 30.44 * 86400),
    (N_("{amount} d"), 86400),
    (N_("{amount} h"), 3600),
    (N_("{amount} min"), 60),
)


def format_interval(interval: dt.timedelta) -> str:
    """A review interval in the largest unit that keeps it short: ``1 min``, ``5.5 min``,
    ``3 h``, ``8 d``, ``2.5 mo`` (30.44 days), ``1.2 y`` (365.25 days); in Chinese ``10 分钟``,
    ``8 天``. The quiz's rating keys show four of these on one line of an 80-column screen,
    which English words do not fit, and FSRS's first steps (1, 5.5 and 10 minutes) differ by
    less than the whole minutes words round to."""
    seconds = max(interval.total_seconds(), 0.0)
    for unit, size in _INTERVAL_UNITS:
        if seconds >= size:
            return gettext(unit).format(amount=_short(seconds / size))
    return gettext("<1 min")


def _short(value: float) -> str:
    return f"{value:.1f}".removesuffix(".0") if value < 10 else f"{value:.0f}"


def file_stamp(moment: dt.datetime) -> str:
    """``moment`` in UTC for a file name: ``20261207T101500123456Z`` (ISO 8601 basic format,
    with microseconds so that two in one second differ).

    Raises:
        InputError: ``moment`` has no timezone (field ``time``).
    """
    return _aware(moment).astimezone(dt.UTC).strftime("%Y%m%dT%H%M%S%fZ")
