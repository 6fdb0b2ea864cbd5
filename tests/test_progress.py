"""engine.progress: atomic, exact, and never overwriting what it cannot read."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import engine.progress.files
from engine.errors import ProgressError
from engine.progress import LessonProgress, ProgressStore, dump_checked, dump_yaml

HOSTILE = [
    "[/]",
    "a[/",
    "[bold]x",
    "[link=x]y[/link]",
    "训练显存不只等于参数大小。",
    "emoji 👩‍💻 ✔️ 🇨🇳",
    "tab\there",
    "esc \x1b[31mred\x1b[0m",
    "no",
    "3.10",
    "  leading and trailing  \n\n",
    "line1\r\nline2\rline3",
    "---\n...\n# not a comment",
    "",
    "nel \x85 ls \u2028 ps \u2029 bom \ufeff",
]


def test_missing_file_gives_fresh_progress(tmp_path: Path) -> None:
    result = ProgressStore(tmp_path).load("S15")
    assert result.progress == LessonProgress("S15")
    assert result.quarantined is None


@pytest.mark.parametrize("text", HOSTILE)
def test_hostile_text_round_trips_byte_for_byte(tmp_path: Path, text: str) -> None:
    store = ProgressStore(tmp_path)
    progress = LessonProgress("S15", answers={"sc-1": text}, reflections={"r-1": text})
    store.save(progress)
    loaded = store.load("S15").progress
    assert loaded.answers["sc-1"] == text
    assert loaded.reflections["r-1"] == text


@settings(max_examples=300, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(text=st.text(st.characters(exclude_categories=("Cs",)), max_size=200))
def test_any_text_round_trips(tmp_path: Path, text: str) -> None:
    store = ProgressStore(tmp_path)
    store.save(LessonProgress("S15", answers={"q": text}))
    assert store.load("S15").progress.answers["q"] == text


def test_save_leaves_no_temporary_files(tmp_path: Path) -> None:
    store = ProgressStore(tmp_path)
    for i in range(5):
        store.save(LessonProgress("S15", answers={"q": str(i)}))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["S15.yaml"]
    data = yaml.safe_load((tmp_path / "S15.yaml").read_text(encoding="utf-8"))
    assert data["schema_version"] == 3
    assert data["answers"] == {"q": "4"}


@pytest.mark.parametrize(
    "content",
    [
        b"answers: [unclosed",
        b"\xff\xfe not utf-8",
        b"- a list\n",
        b"schema_version: 0\n",
        b"schema_version: '1'\nlesson: S15\n",
        b"schema_version: 1\nlesson: S16\n",
        pytest.param(b"[" * 5000, id="deep-nesting"),
    ],
)
def test_unreadable_file_is_moved_aside_not_overwritten(tmp_path: Path, content: bytes) -> None:
    (tmp_path / "S15.yaml").write_bytes(content)
    store = ProgressStore(tmp_path)
    result = store.load("S15")
    assert result.quarantined is not None
    assert result.quarantined.read_bytes() == content
    assert "S15.yaml" in result.message and result.quarantined.name in result.message
    store.save(result.progress)
    assert result.quarantined.read_bytes() == content


def test_status_moves_from_not_started_to_in_progress() -> None:
    progress = LessonProgress("S15")
    progress.touch()
    assert progress.status == "in-progress"
    progress.status = "complete"
    progress.touch()
    assert progress.status == "complete"


@pytest.mark.parametrize("bad_id", ["../x", "a/b", "", ".hidden", "x" * 65])
def test_unsafe_lesson_ids_are_refused(tmp_path: Path, bad_id: str) -> None:
    with pytest.raises(ProgressError):
        ProgressStore(tmp_path).path_for(bad_id)


def test_unwritable_folder_is_a_named_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import errno
    import os

    def full_disk(*_args: object, **_kwargs: object) -> None:
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    monkeypatch.setattr("engine.progress.files.os.replace", full_disk)
    with pytest.raises(ProgressError, match="No space left"):
        ProgressStore(tmp_path).save(LessonProgress("S15", answers={"q": "kept"}))
    assert list(tmp_path.iterdir()) == []


# ------------------------------------------------------------------ schema versions
# One file of every schema version this shardbook has known, as that version wrote it. A new
# version adds its file here and a migration in engine.progress.MIGRATIONS.
VERSION_FILES = {
    1: """\
schema_version: 1
lesson: S15
status: in-progress
updated: '2026-11-29T10:15:00+00:00'
answers:
  sc-1: 参数、梯度和 Adam 状态
revealed:
- sc-1
reflections:
  r-1: "two\\nlines"
forms:
  ledger:
    params: 1B
figures:
  exercise1:
    parameters: 2000000000.0
notes:
  ex2.dp.split: my note
quiz: {}
""",
    2: """\
schema_version: 2
lesson: S15
status: in-progress
updated: '2026-12-07T11:40:02+00:00'
answers:
  sc-1: 参数、梯度和 Adam 状态
revealed:
- sc-1
reflections:
  r-1: "two\\nlines"
forms:
  ledger:
    params: 1B
figures:
  exercise1:
    parameters: 2000000000.0
notes:
  ex2.dp.split: my note
quiz: {}
read:
- definition
- objectives
ratings:
  objective-memory-sources:
    start: partly
    end: can
  objective-collectives:
    start: not-yet
looked:
  ex2.tp.split: '2026-12-07T10:20:00+00:00'
sessions:
- start: '2026-12-07T10:15:00+00:00'
  end: '2026-12-07T11:40:02+00:00'
  steps_finished:
  - read:definition
  - read:objectives
  answers_written:
  - sc-1
  - ex2.dp.split
""",
    3: """\
schema_version: 3
lesson: S15
status: in-progress
updated: '2026-12-07T11:40:02+00:00'
answers:
  sc-1: 参数、梯度和 Adam 状态
revealed:
- sc-1
reflections:
  r-1: "two\\nlines"
forms:
  ledger:
    params: 1B
figures:
  exercise1:
    parameters: 2000000000.0
notes:
  ex2.dp.split: my note
quiz: {}
read:
- definition
- objectives
ratings:
  objective-memory-sources:
    start: partly
    end: can
  objective-collectives:
    start: not-yet
looked:
  ex2.tp.split: '2026-12-07T10:20:00+00:00'
sessions:
- start: '2026-12-07T10:15:00+00:00'
  end: '2026-12-07T11:40:02+00:00'
  steps_finished:
  - read:definition
  - read:objectives
  answers_written:
  - sc-1
  - ex2.dp.split
drafts:
  self-check:sc-1:
    text: "typed, not submitted\\n第二行"
    params: {}
  drill:zero-memory:
    text: '42'
    params: {params: 3000000000.0, dp: 32, zero: 0}
""",
}


def test_every_earlier_version_has_a_file_and_a_migration() -> None:
    from engine.progress import MIGRATIONS, SCHEMA_VERSION

    assert set(VERSION_FILES) == set(range(1, SCHEMA_VERSION + 1))
    assert set(MIGRATIONS) == set(range(1, SCHEMA_VERSION))


@pytest.mark.parametrize("version", sorted(VERSION_FILES))
def test_a_file_of_every_version_loads(tmp_path: Path, version: int) -> None:
    (tmp_path / "S15.yaml").write_text(VERSION_FILES[version], encoding="utf-8")
    store = ProgressStore(tmp_path)
    progress = store.load("S15").progress
    assert progress.status == "in-progress"
    assert progress.answers == {"sc-1": "参数、梯度和 Adam 状态"}
    assert progress.reflections == {"r-1": "two\nlines"}
    assert progress.figures == {"exercise1": {"parameters": 2e9}}
    assert progress.notes == {"ex2.dp.split": "my note"}
    store.save(progress)
    saved = yaml.safe_load((tmp_path / "S15.yaml").read_text(encoding="utf-8"))
    from engine.progress import SCHEMA_VERSION

    assert saved["schema_version"] == SCHEMA_VERSION
    assert saved["answers"] == progress.answers
    if version == 1:
        # Nothing in a version-1 file says what was read, rated, looked at or when.
        assert (progress.read, progress.ratings, progress.looked, progress.sessions) == (
            [],
            {},
            {},
            [],
        )
    else:
        assert progress.read == ["definition", "objectives"]
        assert progress.objective_rating("objective-memory-sources").end == "can"
        assert progress.objective_rating("objective-collectives").start == "not-yet"
        assert progress.objective_rating("objective-collectives").end is None
        assert progress.looked_before_answering("ex2.tp.split")
        assert not progress.looked_before_answering("ex2.dp.split")
        assert progress.sessions[0]["answers_written"] == ["sc-1", "ex2.dp.split"]
    for key in ("read", "ratings", "looked", "sessions", "drafts"):
        assert saved[key] == getattr(progress, key)
    if version < 3:
        # No earlier version kept a quiz answer that was not submitted.
        assert progress.drafts == {}
    else:
        assert progress.drafts["self-check:sc-1"] == {
            "text": "typed, not submitted\n第二行",
            "params": {},
        }
        assert progress.drafts["drill:zero-memory"]["params"]["dp"] == 32


def test_a_version_1_file_is_saved_in_the_current_layout_keeping_every_word(
    tmp_path: Path,
) -> None:
    (tmp_path / "S15.yaml").write_text(VERSION_FILES[1], encoding="utf-8")
    store = ProgressStore(tmp_path)
    store.save(store.load("S15").progress)
    saved = yaml.safe_load((tmp_path / "S15.yaml").read_text(encoding="utf-8"))
    old = yaml.safe_load(VERSION_FILES[1])
    assert saved["schema_version"] == 3
    for key in ("status", "answers", "revealed", "reflections", "forms", "figures", "notes"):
        assert saved[key] == old[key], key
    assert (saved["read"], saved["ratings"], saved["looked"], saved["sessions"]) == ([], {}, {}, [])
    assert saved["drafts"] == {}


def test_migrations_run_in_order_and_the_file_is_saved_in_the_new_layout(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A made-up version 2 that renames 'notes' to 'exercise_notes' and back again in version
    # 3 proves the chain: each step runs once, in order, and the save writes version 3.
    steps: list[int] = []

    def v1_to_v2(data: dict[str, object]) -> dict[str, object]:
        steps.append(1)
        data["exercise_notes"] = data.pop("notes")
        return data

    def v2_to_v3(data: dict[str, object]) -> dict[str, object]:
        steps.append(2)
        data["notes"] = data.pop("exercise_notes")
        return data

    monkeypatch.setattr("engine.progress.document.SCHEMA_VERSION", 3)
    monkeypatch.setattr("engine.progress.document.MIGRATIONS", {1: v1_to_v2, 2: v2_to_v3})
    (tmp_path / "S15.yaml").write_text(VERSION_FILES[1], encoding="utf-8")
    store = ProgressStore(tmp_path)
    progress = store.load("S15").progress
    assert steps == [1, 2]
    assert progress.notes == {"ex2.dp.split": "my note"}
    store.save(progress)
    assert yaml.safe_load((tmp_path / "S15.yaml").read_bytes())["schema_version"] == 3


def test_a_newer_version_is_left_untouched_and_never_saved_over(tmp_path: Path) -> None:
    content = b"schema_version: 99\nlesson: S15\nanswers: {q: from the future}\n"
    (tmp_path / "S15.yaml").write_bytes(content)
    store = ProgressStore(tmp_path)
    with pytest.raises(ProgressError, match="newer shardbook"):
        store.load("S15")
    with pytest.raises(ProgressError, match="not saved"):
        store.save(LessonProgress("S15", answers={"q": "mine"}))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["S15.yaml"]
    assert (tmp_path / "S15.yaml").read_bytes() == content


def test_a_file_that_cannot_be_opened_is_never_saved_over(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import errno

    content = b"schema_version: 1\nlesson: S15\nanswers: {q: precious}\n"
    (tmp_path / "S15.yaml").write_bytes(content)
    real_read = Path.read_bytes

    def denied(self: Path) -> bytes:
        if self.name == "S15.yaml":
            raise PermissionError(errno.EACCES, "Permission denied")
        return real_read(self)

    monkeypatch.setattr(Path, "read_bytes", denied)
    store = ProgressStore(tmp_path)
    with pytest.raises(ProgressError, match="permission denied"):
        store.load("S15")
    with pytest.raises(ProgressError, match="not saved"):
        store.save(LessonProgress("S15", answers={"q": "empty"}))
    monkeypatch.undo()
    assert (tmp_path / "S15.yaml").read_bytes() == content


# ------------------------------------------------------------------ failing disks
ERRORS = [
    (28, "the disk is full"),  # ENOSPC
    (30, "read-only file system"),  # EROFS
    (13, "permission denied"),  # EACCES
]


@pytest.mark.parametrize(("code", "words"), ERRORS)
@pytest.mark.parametrize("where", ["mkstemp", "fsync", "replace"])
def test_write_errors_are_named_and_nothing_is_lost(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, code: int, words: str, where: str
) -> None:
    # Root ignores chmod, so the OSErrors are injected where the kernel would raise them.
    import os

    store = ProgressStore(tmp_path)
    store.save(LessonProgress("S15", answers={"q": "old"}))
    old_bytes = (tmp_path / "S15.yaml").read_bytes()

    def fail(*_args: object, **_kwargs: object) -> None:
        raise OSError(code, os.strerror(code))

    target = {
        "mkstemp": "engine.progress.files.tempfile.mkstemp",
        "fsync": "engine.progress.files.os.fsync",
        "replace": "engine.progress.files.os.replace",
    }[where]
    monkeypatch.setattr(target, fail)
    progress = LessonProgress("S15", answers={"q": "new words"})
    with pytest.raises(ProgressError, match=words) as raised:
        store.save(progress)
    assert os.strerror(code) in str(raised.value)
    assert progress.answers == {"q": "new words"} and progress.updated == ""
    assert (tmp_path / "S15.yaml").read_bytes() == old_bytes
    assert sorted(p.name for p in tmp_path.iterdir()) == ["S15.yaml"]
    monkeypatch.undo()
    store.save(progress)
    assert store.load("S15").progress.answers == {"q": "new words"}


# ------------------------------------------------------------------ two instances
def test_second_store_is_read_only_then_merges_when_the_first_quits(tmp_path: Path) -> None:
    first, second = ProgressStore(tmp_path), ProgressStore(tmp_path)
    assert first.lock() and not first.read_only
    assert not second.lock() and second.read_only
    mine = first.load("S15").progress
    theirs = second.load("S15").progress
    mine.answers["q1"] = "written in the first window"
    first.save(mine)
    theirs.answers["q2"] = "written in the second window"
    with pytest.raises(ProgressError, match="read-only"):
        second.save(theirs)
    first.unlock()
    second.save(theirs)
    assert second.merged
    both = {"q1": "written in the first window", "q2": "written in the second window"}
    assert theirs.answers == both
    assert ProgressStore(tmp_path).load("S15").progress.answers == both
    second.unlock()


def test_a_locking_store_reads_before_it_locks_and_writes_only_holding_the_lock(
    tmp_path: Path,
) -> None:
    # The app's store (locking=True) reads a readable file without the lock (it locks after
    # the first frame); a window that saved meanwhile is merged, not overwritten.
    ProgressStore(tmp_path).save(LessonProgress("S15", answers={"q1": "first"}))
    other = ProgressStore(tmp_path)
    assert other.lock()
    store = ProgressStore(tmp_path, locking=True)
    progress = store.load("S15").progress
    assert not store.read_only  # not asked yet
    theirs = other.load("S15").progress
    theirs.answers["q2"] = "the other window's last words"
    other.save(theirs)
    progress.answers["q3"] = "mine"
    with pytest.raises(ProgressError, match="read-only"):
        store.save(progress)  # a save asks for the lock, held by the other window
    assert store.read_only
    other.unlock()
    store.save(progress)
    assert ProgressStore(tmp_path).load("S15").progress.answers == {
        "q1": "first",
        "q2": "the other window's last words",
        "q3": "mine",
    }
    store.unlock()


def test_a_locking_store_moves_an_unreadable_file_aside_only_holding_the_lock(
    tmp_path: Path,
) -> None:
    (tmp_path / "S15.yaml").write_bytes(b"answers: [unclosed")
    other = ProgressStore(tmp_path)
    assert other.lock()
    store = ProgressStore(tmp_path, locking=True)
    with pytest.raises(ProgressError, match="cannot be read"):
        store.load("S15")
    assert sorted(p.name for p in tmp_path.iterdir() if not p.name.startswith(".")) == ["S15.yaml"]
    other.unlock()
    result = store.load("S15")  # takes the lock, then moves the file aside
    assert result.quarantined is not None and not store.read_only
    assert result.quarantined.read_bytes() == b"answers: [unclosed"
    store.unlock()


def test_merge_keeps_each_side_s_change_and_deletions() -> None:
    from engine.progress import merge_progress

    base = {"answers": {"a": "1", "b": "2", "c": "3"}, "status": "in-progress", "revealed": []}
    mine = {"answers": {"a": "mine", "b": "2"}, "status": "complete", "revealed": ["a"]}
    disk = {"answers": {"a": "1", "b": "disk", "c": "3", "d": "new"}, "status": "in-progress"}
    disk["revealed"] = ["d"]
    merged = merge_progress(base, mine, disk)
    assert merged["answers"] == {"a": "mine", "b": "disk", "d": "new"}
    assert merged["status"] == "complete"
    assert merged["revealed"] == ["d", "a"]


def test_quiz_drafts_merge_per_item_and_a_submitted_one_stays_dropped() -> None:
    from engine.progress import merge_progress

    typed = {"text": "typed here", "params": {}}
    other = {"text": "typed in the other window", "params": {"p": 4}}
    base = {"drafts": {"self-check:a": typed}}
    mine: dict[str, object] = {"drafts": {}}  # this window submitted item a
    disk = {"drafts": {"self-check:a": typed, "drill:b": other}}
    assert merge_progress(base, mine, disk)["drafts"] == {"drill:b": other}


HOLDER = """
import sys
from engine.progress import LessonProgress, ProgressStore
store = ProgressStore(sys.argv[1])
assert store.lock()
progress = store.load("S15").progress
progress.answers["q1"] = "from the other process"
store.save(progress)
print("locked", flush=True)
sys.stdin.readline()
"""


def test_two_processes_one_folder(tmp_path: Path) -> None:
    import signal
    import subprocess
    import sys

    holder = subprocess.Popen(
        [sys.executable, "-c", HOLDER, str(tmp_path)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        cwd=Path(__file__).resolve().parent.parent,
    )
    try:
        assert holder.stdout is not None
        assert holder.stdout.readline() == "locked\n"
        store = ProgressStore(tmp_path)
        assert not store.lock() and store.read_only
        progress = store.load("S15").progress
        assert progress.answers == {"q1": "from the other process"}
        progress.answers["q2"] = "from this process"
        with pytest.raises(ProgressError, match="another shardbook window"):
            store.save(progress)
        # The kernel releases the lock of a killed process: no stale lock to clean by hand.
        holder.send_signal(signal.SIGKILL)
        holder.wait()
        store.save(progress)
        assert not store.read_only
        assert ProgressStore(tmp_path).load("S15").progress.answers == {
            "q1": "from the other process",
            "q2": "from this process",
        }
        store.unlock()
    finally:
        holder.kill()
        holder.wait()


def test_lock_holder_removes_temp_files_a_killed_writer_left(tmp_path: Path) -> None:
    (tmp_path / ".S15.yaml.abc123_x.tmp").write_text("half", encoding="utf-8")
    (tmp_path / "S15.yaml.unreadable-20260101T000000000000Z").write_text("x", encoding="utf-8")
    store = ProgressStore(tmp_path)
    assert store.lock()
    names = sorted(p.name for p in tmp_path.iterdir())
    assert names == [".shardbook.lock", "S15.yaml.unreadable-20260101T000000000000Z"]
    store.unlock()


# ------------------------------------------------------------------ crash safety
WRITER = """
import sys
from engine.progress import LessonProgress, ProgressStore
store = ProgressStore(sys.argv[1])
start = int(sys.argv[2])
progress = store.load("S15").progress
print("ready", flush=True)
for number in range(start, start + 1000):
    progress.answers["q"] = f"version {number} " + "字" * (number % 50) * 200
    store.save(progress)
    print(number, flush=True)
"""


def expected_text(number: int) -> str:
    return f"version {number} " + "字" * (number % 50) * 200


def test_sigkill_during_autosaves_leaves_old_or_new_text(tmp_path: Path) -> None:
    import random
    import signal
    import subprocess
    import sys
    import time

    rng = random.Random(8)
    root = Path(__file__).resolve().parent.parent
    store = ProgressStore(tmp_path)
    store.save(LessonProgress("S15", answers={"q": expected_text(0)}))
    saved, kills = 0, 0
    # At least 10 kills however fast the machine saves (a loaded machine saves more per kill).
    while saved < 200 or kills < 10:
        writer = subprocess.Popen(
            [sys.executable, "-c", WRITER, str(tmp_path), str(saved + 1)],
            stdout=subprocess.PIPE,
            text=True,
            cwd=root,
        )
        assert writer.stdout is not None
        assert writer.stdout.readline() == "ready\n"
        # Let it finish a random number of saves, then kill it at a random moment of the next.
        done = [int(writer.stdout.readline()) for _ in range(rng.randint(0, 15))]
        time.sleep(rng.uniform(0, 0.05))
        writer.send_signal(signal.SIGKILL)
        out, _ = writer.communicate()
        kills += 1
        done += [int(line) for line in out.split()]
        acknowledged = done[-1] if done else saved
        leftovers = {p.name for p in tmp_path.iterdir() if not p.name.endswith(".tmp")}
        assert leftovers == {"S15.yaml"}
        text = ProgressStore(tmp_path).load("S15", quarantine=False).progress.answers["q"]
        # The file holds the last save the writer finished, or the one it was inside.
        assert text in (expected_text(acknowledged), expected_text(acknowledged + 1))
        saved = acknowledged + 1 if text == expected_text(acknowledged + 1) else acknowledged
    store = ProgressStore(tmp_path)
    assert store.lock()
    assert {p.name for p in tmp_path.iterdir()} == {"S15.yaml", ".shardbook.lock"}
    store.unlock()


_TEXT = st.text(st.characters(exclude_categories=("Cs",)), max_size=40)
_SCALAR = st.one_of(_TEXT, st.floats(allow_nan=False), st.integers(), st.booleans(), st.none())
_VALUE = st.recursive(
    _SCALAR,
    lambda inner: st.one_of(st.lists(inner, max_size=4), st.dictionaries(_TEXT, inner, max_size=4)),
    max_leaves=12,
)


@pytest.mark.long
@settings(max_examples=200)
@given(data=st.dictionaries(_TEXT, _VALUE, max_size=6), edits=st.lists(st.tuples(_TEXT, _VALUE)))
def test_dump_checked_equals_the_whole_dump_after_any_edits(
    data: dict[str, object], edits: list[tuple[str, object]]
) -> None:
    # The sectioned, cached text must be exactly what dumping the whole document gives, even
    # after edits that reuse some keys' cached text.
    cache: dict[str, tuple[str, str]] = {}
    assert dump_checked(data, cache, Path("p.yaml")) == dump_yaml(data)
    for key, value in edits:
        data[key] = value
        assert dump_checked(data, cache, Path("p.yaml")) == dump_yaml(data)


def test_a_save_dumps_only_the_keys_that_changed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = ProgressStore(tmp_path)
    log = [
        {"card": f"sc-{n % 9}", "rating": 3, "at": "2026-12-07T10:00:00+00:00"} for n in range(50)
    ]
    progress = LessonProgress("S15", answers={"a": "one"}, quiz={"log": log})
    store.save(progress)
    dumped: list[list[str]] = []
    real = engine.progress.dump_yaml

    def counting(data: dict[str, object]) -> str:
        dumped.append(list(data))
        return real(data)

    monkeypatch.setattr(engine.progress.files, "dump_yaml", counting)
    progress.answers["a"] = "two"
    store.save(progress)
    # The answers were edited; "updated" changes when the clock's second did; nothing else.
    keys = {key for keys in dumped for key in keys}
    assert "answers" in keys and keys <= {"answers", "updated"}
    assert store.load("S15").progress == progress


# ------------------------------------------------------------------ guided-study records
@pytest.mark.parametrize(
    ("content", "field"),
    [
        ("read: [definition, 3]\n", "'read'"),
        ("ratings: {objective-x: {start: maybe}}\n", "'ratings.objective-x'"),
        ("ratings: {objective-x: {middle: can}}\n", "'ratings.objective-x'"),
        ("looked: {ex4: yesterday}\n", "'looked.ex4'"),
        ("looked: {ex4: '2026-12-07T10:00:00'}\n", "'looked.ex4'"),
        ("sessions: [{start: '2026-12-07T10:00:00+00:00'}]\n", "'sessions[0]'"),
        (
            "sessions: [{start: '2026-12-07T10:00:00+00:00', end: 'later', "
            "steps_finished: [], answers_written: []}]\n",
            "'sessions[0]'",
        ),
        ("drafts: [typed]\n", "'drafts'"),
        ("drafts: {self-check:q: typed}\n", "'drafts.self-check:q'"),
        ("drafts: {self-check:q: {text: 42, params: {}}}\n", "'drafts.self-check:q'"),
    ],
)
def test_a_malformed_study_record_is_named_and_the_file_kept(
    tmp_path: Path, content: str, field: str
) -> None:
    text = f"schema_version: 3\nlesson: S15\nanswers: {{q: kept}}\n{content}"
    (tmp_path / "S15.yaml").write_text(text, encoding="utf-8")
    result = ProgressStore(tmp_path).load("S15")
    assert field in result.message
    assert result.quarantined is not None
    assert result.quarantined.read_text(encoding="utf-8") == text


def test_objective_ratings_are_set_cleared_and_checked() -> None:
    from engine.errors import InputError

    progress = LessonProgress("S15")
    progress.rate_objective("objective-tradeoffs", "start", "not-yet")
    progress.rate_objective("objective-tradeoffs", "end", "can")
    assert progress.ratings == {"objective-tradeoffs": {"start": "not-yet", "end": "can"}}
    progress.rate_objective("objective-tradeoffs", "start", None)
    progress.rate_objective("objective-tradeoffs", "end", None)
    assert progress.ratings == {}
    with pytest.raises(InputError, match="not-yet, partly, can"):
        progress.rate_objective("objective-tradeoffs", "start", "expert")
    with pytest.raises(InputError, match="start, end"):
        progress.rate_objective("objective-tradeoffs", "middle", "can")


def test_looking_first_is_marked_only_for_notes_not_yet_written() -> None:
    import datetime as dt

    progress = LessonProgress("S15", notes={"ex2.dp.split": "the batch", "ex2.tp.split": "  "})
    at = dt.datetime(2026, 12, 7, 18, 30, tzinfo=dt.timezone(dt.timedelta(hours=8)))
    marked = progress.mark_looked(["ex2.dp.split", "ex2.tp.split", "ex2.pp.split"], at)
    assert marked == ["ex2.tp.split", "ex2.pp.split"]
    # Stored in UTC: 18:30 at +08:00 is 10:30 UTC.
    assert progress.looked == {
        "ex2.tp.split": "2026-12-07T10:30:00+00:00",
        "ex2.pp.split": "2026-12-07T10:30:00+00:00",
    }
    later = dt.datetime(2026, 12, 7, 11, 0, tzinfo=dt.UTC)
    assert progress.mark_looked(["ex2.pp.split"], later) == []
    assert progress.looked["ex2.pp.split"] == "2026-12-07T10:30:00+00:00"
    assert not progress.looked_before_answering("ex2.dp.split")


def test_two_windows_keep_each_other_s_study_records(tmp_path: Path) -> None:
    first, second = ProgressStore(tmp_path), ProgressStore(tmp_path)
    mine, theirs = first.load("S15").progress, second.load("S15").progress
    mine.mark_read("definition")
    mine.rate_objective("objective-collectives", "start", "partly")
    mine.looked = {"ex4": "2026-12-07T10:00:00+00:00"}
    mine.sessions = [_session("2026-12-07T10:00:00+00:00", "2026-12-07T10:05:00+00:00")]
    first.save(mine)
    theirs.mark_read("core")
    theirs.rate_objective("objective-collectives", "end", "can")
    theirs.sessions = [_session("2026-12-07T10:01:00+00:00", "2026-12-07T10:02:00+00:00")]
    second.save(theirs)
    assert second.merged
    # The first window goes on: its own session's entry is updated, not duplicated.
    mine.sessions = [_session("2026-12-07T10:00:00+00:00", "2026-12-07T10:30:00+00:00")]
    first.save(mine)
    saved = ProgressStore(tmp_path).load("S15").progress
    assert saved.read == ["definition", "core"]
    assert saved.ratings == {"objective-collectives": {"start": "partly", "end": "can"}}
    assert saved.looked == {"ex4": "2026-12-07T10:00:00+00:00"}
    assert [(entry["start"], entry["end"]) for entry in saved.sessions] == [
        ("2026-12-07T10:00:00+00:00", "2026-12-07T10:30:00+00:00"),
        ("2026-12-07T10:01:00+00:00", "2026-12-07T10:02:00+00:00"),
    ]


def _session(start: str, end: str) -> dict[str, object]:
    return {"start": start, "end": end, "steps_finished": [], "answers_written": []}


@settings(max_examples=100)
@given(
    shared=st.lists(st.integers(0, 50), unique=True, max_size=4),
    mine_new=st.lists(st.integers(51, 99), unique=True, max_size=4),
    theirs_new=st.lists(st.integers(100, 150), unique=True, max_size=4),
)
def test_merging_keeps_every_window_s_sessions(
    shared: list[int], mine_new: list[int], theirs_new: list[int]
) -> None:
    from engine.progress import merge_progress

    def entry(minute: int, end: int = 0) -> dict[str, object]:
        start = f"2026-12-07T{10 + minute // 60:02d}:{minute % 60:02d}:00+00:00"
        return _session(start, f"2026-12-08T00:{end:02d}:00+00:00")

    base = {"sessions": [entry(m) for m in shared]}
    # This window ends (updates) every shared session it holds and adds its own.
    mine = {"sessions": [entry(m, end=1) for m in shared] + [entry(m) for m in mine_new]}
    disk = {"sessions": [entry(m) for m in shared] + [entry(m) for m in theirs_new]}
    merged = merge_progress(base, mine, disk)["sessions"]
    expected = mine["sessions"] + disk["sessions"][len(shared) :]
    assert merged == sorted(expected, key=lambda e: str(e["start"]))
    assert [e["start"] for e in merged] == sorted(e["start"] for e in merged)
