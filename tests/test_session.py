"""Study sessions (engine/session.py): the session log in the progress file, the summary printed
after the app exits, and the log in ``shardbook stats``."""

from __future__ import annotations

import datetime as dt
import json
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import yaml
from rich.cells import cell_len

from cli.main import main
from engine.i18n import set_language
from engine.lesson import Lesson
from engine.plan import ReviewOutlook
from engine.progress import LessonProgress, ProgressStore
from engine.session import (
    SessionRecord,
    StudySession,
    format_duration,
    render_summary,
    session_log,
    summarize,
)

ROOT = Path(__file__).resolve().parent.parent
START = dt.datetime(2026, 12, 7, 10, 15, 0, 400_000, tzinfo=dt.UTC)
BEIJING = dt.timezone(dt.timedelta(hours=8))


def studied(lesson: Lesson) -> tuple[StudySession, LessonProgress]:
    """A session on a progress that already had an answer, a note and a read section; during
    it the learner reads two sections, finishes exercise 4, rewrites the old answer, writes a
    reflection and half of exercise 2, and clears nothing."""
    progress = LessonProgress(
        "S15",
        answers={"self-check-adam-memory": "16 bytes"},
        notes={"ex4": "TP first"},
        read=["definition"],
    )
    session = StudySession(lesson, progress, START)
    progress.mark_read("objectives")
    progress.mark_read("core")
    progress.notes["ex5"] = "the data loader"
    progress.notes["ex2.dp.split"] = "the batch"
    progress.notes["ex4"] = "TP first"  # unchanged: not written in this session
    progress.answers["self-check-adam-memory"] = "16 bytes per parameter, 18 in Megatron"
    progress.answers["self-check-more-devices"] = "   "  # blank: not an answer
    progress.reflections["reflection-tradeoff"] = "ZeRO-3 on slow links"
    return session, progress


def test_a_session_records_what_it_finished_and_wrote(lesson: Lesson) -> None:
    session, progress = studied(lesson)
    end = START + dt.timedelta(minutes=42, seconds=10)
    record = session.record(progress, end)
    assert record.steps_finished == (
        "read:objectives",
        "read:core",
        "exercise:exercise-real-factor",
        "reflection:reflection-tradeoff",
    )
    # Lesson order: exercise notes, self-check answers, reflection fields.
    assert record.answers_written == (
        "ex2.dp.split",
        "ex5",
        "self-check-adam-memory",
        "reflection-tradeoff",
    )
    assert progress.sessions == [
        {
            "start": "2026-12-07T10:15:00+00:00",
            "end": "2026-12-07T10:57:10+00:00",
            "steps_finished": list(record.steps_finished),
            "answers_written": list(record.answers_written),
        }
    ]
    assert record.duration_s == 42 * 60 + 10


def test_recording_again_updates_the_session_s_entry(lesson: Lesson) -> None:
    session, progress = studied(lesson)
    earlier = {
        "start": "2026-12-06T09:00:00+00:00",
        "end": "2026-12-06T09:30:00+00:00",
        "steps_finished": ["read:definition"],
        "answers_written": [],
    }
    progress.sessions = [earlier]
    session.record(progress, START + dt.timedelta(minutes=5))
    progress.reflections["reflection-open-assumption"] = "overlap hides the all-gather"
    session.record(progress, START + dt.timedelta(minutes=9))
    assert len(progress.sessions) == 2 and progress.sessions[0] == earlier
    assert progress.sessions[1]["end"] == "2026-12-07T10:24:00+00:00"
    assert progress.sessions[1]["answers_written"][-1] == "reflection-open-assumption"


def test_a_short_session_that_did_nothing_is_not_logged(lesson: Lesson) -> None:
    progress = LessonProgress("S15")
    session = StudySession(lesson, progress, START)
    session.record(progress, START + dt.timedelta(seconds=50))
    assert progress.sessions == []
    # A long sitting of reading with nothing saved is a session all the same.
    record = session.record(progress, START + dt.timedelta(minutes=20))
    assert progress.sessions == [record.to_data()] and record.steps_finished == ()


def test_a_session_start_needs_a_timezone(lesson: Lesson) -> None:
    from engine.errors import InputError

    with pytest.raises(InputError, match="timezone"):
        StudySession(lesson, LessonProgress("S15"), dt.datetime(2026, 12, 7, 10, 0))


def test_the_log_survives_a_save_and_a_load(lesson: Lesson, tmp_path: Path) -> None:
    session, progress = studied(lesson)
    session.record(progress, START + dt.timedelta(minutes=30))
    store = ProgressStore(tmp_path)
    store.save(progress)
    text = (tmp_path / "S15.yaml").read_text(encoding="utf-8")
    entry = yaml.safe_load(text)["sessions"][0]
    assert entry["start"] == "2026-12-07T10:15:00+00:00"
    assert entry["end"] == "2026-12-07T10:45:00+00:00"
    loaded = store.load("S15").progress
    assert session_log(loaded) == (
        SessionRecord(
            START.replace(microsecond=0),
            START.replace(microsecond=0) + dt.timedelta(minutes=30),
            tuple(entry["steps_finished"]),
            tuple(entry["answers_written"]),
        ),
    )


def test_the_summary_says_what_was_done_and_what_comes_next(lesson: Lesson) -> None:
    session, progress = studied(lesson)
    end = START + dt.timedelta(hours=1, minutes=25, seconds=2)
    record = session.record(progress, end)
    reviews = ReviewOutlook(
        at=end, due_now=3, next_due=dt.datetime(2026, 12, 8, 2, 30, tzinfo=dt.UTC), due_next_day=2
    )
    summary = summarize(lesson, progress, record, reviews=reviews)
    assert summary.next_step is not None and summary.next_step.id == "read:mechanism"
    assert (
        summary.finished[2]
        == "exercise 5: 记录一个无法从公式单独判断的现实因素，如 kernel、拓扑或数据加载。"
    )
    assert summary.written[0] == "exercise 2, DP - data parallel: which dimension is split"
    assert summary.written[2] == "self-check 1: 混合精度 Adam 训练为何远大于仅存模型权重的内存？"
    assert summary.written[3] == "reflection: 一个通信/容量取舍"
    text = render_summary(summary, BEIJING)
    lines = text.splitlines()
    assert lines[0] == "Session on S15 训练内存、Collective 与并行轴全景"
    # 10:15 UTC is 18:15 in Beijing (UTC+8); stored in UTC, shown in the learner's zone.
    assert lines[1] == "2026-12-07 18:15-19:40 +0800 (1 h 25 min)"
    assert lines[2] == "steps finished: 4"
    assert lines[3] == "  read 学习目标"
    assert "answers written: 4" in lines
    assert (
        "plan: 7/25 steps done; sections 3/11 read, exercises 2/5 (1 started), "
        "self-check 1/4 answered, 0 revealed, reflections 1/5, reviews due 3"
    ) in lines
    assert "next: read 机制与推导" in lines
    # Due 02:30 UTC on the 8th, 14 h 50 min after the session's end: "in 15 hours" as humanize
    # rounds it.
    assert lines[-1] == (
        "reviews: 3 due now; next due 2026-12-08 10:30 +0800, in 15 hours (2 within a day)"
    )
    # Broken to a 40-column terminal: each line fits, and a wrapped item's continuation is
    # indented under it (the terminal's own wrap started it at the first column).
    narrow = render_summary(summary, BEIJING, width=40).splitlines()
    assert all(cell_len(line) <= 40 for line in narrow)
    item = next(n for n, line in enumerate(narrow) if line.startswith("  exercise 5: 记录"))
    # The first line has the room its own indent leaves (two cells more than the next lines):
    # it ends at the 40th cell or one before it (a Chinese character takes two).
    assert cell_len(narrow[item]) >= 39
    assert narrow[item + 1].startswith("    ") and not narrow[item + 1].startswith("     ")
    plan_line = next(n for n, line in enumerate(narrow) if line.startswith("plan: 7/25"))
    assert narrow[plan_line + 1].startswith("  ")
    data = summary.as_dict()
    assert data["session"]["start"] == "2026-12-07T10:15:00+00:00"
    assert data["session"]["duration_s"] == 85 * 60 + 2
    assert data["reviews"]["next_due"] == "2026-12-08T02:30:00+00:00"
    json.dumps(data)  # JSON-ready


@pytest.mark.parametrize(
    ("seconds", "shown"),
    [(0, "0 s"), (59.4, "59 s"), (60, "1 min"), (3599, "59 min"), (5400, "1 h 30 min")],
)
def test_durations(seconds: float, shown: str) -> None:
    assert format_duration(seconds) == shown


@pytest.mark.parametrize(
    ("seconds", "shown"), [(46, "46 秒"), (240, "4 分钟"), (5400, "1 小时 30 分钟")]
)
def test_durations_in_chinese(seconds: float, shown: str) -> None:
    set_language("zh")
    assert format_duration(seconds) == shown


@pytest.fixture
def beijing_local_time(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """This process's local time zone is UTC+8 (China has no daylight saving time)."""
    monkeypatch.setenv("TZ", "Asia/Shanghai")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


@pytest.mark.usefixtures("beijing_local_time")
def test_stats_shows_the_session_log_beside_the_review_figures(
    lesson: Lesson, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    session, progress = studied(lesson)
    session.record(progress, START + dt.timedelta(minutes=42))
    ProgressStore(tmp_path).save(progress)
    assert main(["stats", "--json", "--progress-dir", str(tmp_path)]) == 0
    data = json.loads(capsys.readouterr().out)
    assert {"now", "lessons", "errors"} <= set(data)
    assert data["sessions"] == [
        {
            "lesson": "S15",
            "start": "2026-12-07T10:15:00+00:00",
            "end": "2026-12-07T10:57:00+00:00",
            "duration_s": 2520.0,
            "steps_finished": progress.sessions[0]["steps_finished"],
            "answers_written": progress.sessions[0]["answers_written"],
        }
    ]
    assert main(["stats", "--progress-dir", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert out.splitlines()[0].startswith("lesson\titems\trated in quiz\t")
    assert out.splitlines()[0].endswith("\tanswered in lesson")
    # Stored in UTC (the JSON above), shown in the learner's time zone with its offset.
    assert "session log\nlesson\ttime\tduration\tsteps finished\tanswers written\n" in out
    assert "S15\t2026-12-07 18:15-18:57 +0800\t42 min\t4\t4\n" in out


def test_stats_without_sessions_prints_no_log(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["stats", "--progress-dir", str(tmp_path)]) == 0
    assert "session log" not in capsys.readouterr().out
    assert main(["stats", "--json", "--progress-dir", str(tmp_path)]) == 0
    assert json.loads(capsys.readouterr().out)["sessions"] == []
