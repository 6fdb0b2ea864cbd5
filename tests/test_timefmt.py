"""One way to show time (engine/timefmt.py): UTC with +00:00 in files and JSON, the learner's
zone on screen, relative phrasing from humanize; and no other module formats a time itself."""

from __future__ import annotations

import datetime as dt
import json
import re
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from cli.main import main
from engine.errors import InputError
from engine.paths import CHECKOUT_ROOT
from engine.progress import LessonProgress, ProgressStore
from engine.timefmt import (
    file_stamp,
    local_clock,
    local_iso,
    local_span,
    local_text,
    parse_utc,
    relative,
    utc_iso,
)

# China Standard Time is UTC+8 all year; New York moves between -05:00 and -04:00.
BEIJING = ZoneInfo("Asia/Shanghai")
NEW_YORK = ZoneInfo("America/New_York")
MOMENT = dt.datetime(2026, 12, 7, 10, 15, 2, 984184, tzinfo=dt.UTC)
ISO_UTC = re.compile(r"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d{6})?\+00:00$")


def test_files_and_json_get_utc_with_an_explicit_offset() -> None:
    in_beijing = MOMENT.astimezone(BEIJING)
    assert utc_iso(in_beijing) == "2026-12-07T10:15:02+00:00"
    assert utc_iso(in_beijing, timespec="auto") == "2026-12-07T10:15:02.984184+00:00"
    assert parse_utc("2026-12-07T18:15:02+08:00") == MOMENT.replace(microsecond=0)
    assert parse_utc("2026-12-07T10:15:02") is None  # no offset: which zone is unknown
    assert parse_utc("yesterday") is None


def test_a_naive_time_is_refused_everywhere() -> None:
    naive = dt.datetime(2026, 12, 7, 10, 15)
    for write in (utc_iso, local_text, local_clock, local_iso, file_stamp):
        with pytest.raises(InputError, match="timezone"):
            write(naive)
    with pytest.raises(InputError):
        relative(naive, MOMENT)


def test_the_screen_shows_the_learners_zone() -> None:
    assert local_text(MOMENT, BEIJING) == "2026-12-07 18:15"
    assert local_text(MOMENT, BEIJING, zone=True) == "2026-12-07 18:15 +0800"
    # 10:15 UTC in December is 05:15 in New York (EST, UTC-5); in July 06:15 (EDT, UTC-4).
    assert local_text(MOMENT, NEW_YORK, zone=True) == "2026-12-07 05:15 -0500"
    july = MOMENT.replace(month=7)
    assert local_text(july, NEW_YORK, zone=True) == "2026-07-07 06:15 -0400"
    assert local_clock(MOMENT, BEIJING) == "18:15:02"
    assert local_iso(MOMENT, BEIJING) == "2026-12-07T18:15:02+08:00"


def test_a_span_names_the_second_date_only_when_the_day_changes() -> None:
    end = MOMENT + dt.timedelta(minutes=42)
    assert local_span(MOMENT, end, BEIJING) == "2026-12-07 18:15-18:57 +0800"
    late = MOMENT + dt.timedelta(hours=6)  # 00:15 the next day in Beijing
    assert local_span(MOMENT, late, BEIJING) == "2026-12-07 18:15-2026-12-08 00:15 +0800"


@pytest.mark.parametrize(
    ("offset", "phrase"),
    [
        (dt.timedelta(days=3), "in 3 days"),
        (dt.timedelta(days=-2), "2 days ago"),
        (dt.timedelta(hours=5), "in 5 hours"),
        (dt.timedelta(seconds=60), "in a minute"),
        (dt.timedelta(days=30), "in a month"),
        (dt.timedelta(milliseconds=300), "now"),
        # An 8-day interval seen a few seconds after the rating is still "in 8 days".
        (dt.timedelta(days=8, seconds=-5), "in 8 days"),
        (dt.timedelta(days=1, hours=20), "in 2 days"),
    ],
)
def test_relative_phrasing_comes_from_humanize(offset: dt.timedelta, phrase: str) -> None:
    assert relative(MOMENT + offset, MOMENT) == phrase


@given(
    st.datetimes(timezones=st.just(dt.UTC)),
    st.timedeltas(min_value=dt.timedelta(days=-3650), max_value=dt.timedelta(days=3650)),
)
def test_relative_says_which_side_of_now(now: dt.datetime, offset: dt.timedelta) -> None:
    try:
        moment = now + offset
    except OverflowError:
        return
    phrase = relative(moment, now)
    if offset >= dt.timedelta(seconds=1):
        assert phrase.startswith("in ") and not phrase.endswith(" ago")
    elif offset <= dt.timedelta(seconds=-1):
        assert phrase.endswith(" ago") and not phrase.startswith("in ")
    else:
        assert phrase == "now"


@given(st.datetimes(timezones=st.just(dt.UTC)), st.datetimes(timezones=st.just(dt.UTC)))
def test_file_stamps_sort_as_their_times(first: dt.datetime, second: dt.datetime) -> None:
    a, b = file_stamp(first), file_stamp(second)
    assert re.fullmatch(r"\d{8}T\d{12}Z", a) or first.year < 1000
    if first.year >= 1000 and second.year >= 1000:
        assert (a < b) == (first < second)


def test_saved_progress_and_json_outputs_hold_utc(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    progress = LessonProgress("S15")
    progress.mark_looked(["ex4"], MOMENT.astimezone(BEIJING))
    ProgressStore(tmp_path).save(progress)
    saved = yaml.safe_load((tmp_path / "S15.yaml").read_text(encoding="utf-8"))
    assert saved["looked"] == {"ex4": "2026-12-07T10:15:02+00:00"}
    assert ISO_UTC.match(saved["updated"])
    assert main(["stats", "--json", "--progress-dir", str(tmp_path)]) == 0
    assert ISO_UTC.match(json.loads(capsys.readouterr().out)["now"])
    assert main(["plan", "--json", "--progress-dir", str(tmp_path)]) == 0
    assert ISO_UTC.match(json.loads(capsys.readouterr().out)["reviews"]["at"])
    assert main(["export", "S15", "--format", "json", "--progress-dir", str(tmp_path)]) == 0
    assert ISO_UTC.match(json.loads(capsys.readouterr().out)["exported"])


# A time formatted by hand (strftime, isoformat with a timespec, the clock read directly) belongs
# in engine/timefmt.py; dates (``date.isoformat()``) are not times and may be written anywhere.
_BY_HAND = re.compile(r"\.strftime\(|isoformat\(timespec|datetime\.now\(|%H:%M")


def test_no_module_formats_a_time_itself() -> None:
    found = [
        f"{path.relative_to(CHECKOUT_ROOT)}:{number}: {line.strip()}"
        for folder in ("engine", "tui")
        for path in sorted((CHECKOUT_ROOT / folder).rglob("*.py"))
        if path.name != "timefmt.py"
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1)
        if _BY_HAND.search(line)
    ]
    assert found == []
