"""The command line's conventions: ``--version``, shell completion generated from the parser,
``--json`` on every command that prints data, exit codes (0 ok, 1 a check found problems, 2 bad
input or a missing folder) and every usage error as one line naming the command and the flag."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from cli.main import main
from engine import units
from engine.errors import InputError
from engine.paths import CHECKOUT_ROOT
from engine.progress import LessonProgress, ProgressStore

SHARDBOOK = shutil.which("shardbook") or str(Path(sys.executable).parent / "shardbook")
VERSION = tomllib.loads((CHECKOUT_ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"][
    "version"
]


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    """``main(argv)`` in process: its exit status (argparse's own errors exit through
    SystemExit), stdout and stderr."""
    try:
        status = main(list(argv))
    except SystemExit as exit_:
        status = int(exit_.code or 0)
    out, err = capsys.readouterr()
    return status, out, err


def test_version_prints_the_projects_version(capsys: pytest.CaptureFixture[str]) -> None:
    assert run(capsys, "--version") == (0, f"shardbook {VERSION}\n", "")


def test_the_console_script_prints_its_version_and_refuses_a_missing_folder() -> None:
    done = subprocess.run([SHARDBOOK, "--version"], capture_output=True, text=True, timeout=60)
    assert (done.returncode, done.stdout) == (0, f"shardbook {VERSION}\n")
    done = subprocess.run(
        [SHARDBOOK, "lessons", "--content-dir", "/nonexistent"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr == "shardbook: lessons: --content-dir: /nonexistent: no such folder\n"


# --- Shell completion ------------------------------------------------------------------------


def _script(capsys: pytest.CaptureFixture[str], shell: str, tmp_path: Path) -> Path:
    status, out, err = run(capsys, "completion", shell)
    assert (status, err) == (0, "")
    script = tmp_path / f"shardbook.{shell}"
    script.write_text(out, encoding="utf-8")
    return script


def test_bash_accepts_the_completion_script(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    script = _script(capsys, "bash", tmp_path)
    done = subprocess.run(["bash", "-n", str(script)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr


def _bash_complete(script: Path, words: list[str], cwd: Path) -> list[str]:
    # What bash offers at the last word, as a shell does on Tab: the completion function with
    # COMP_WORDS and COMP_CWORD set.
    line = " ".join(words)
    code = (
        f"source {script}\n"
        f"COMP_WORDS=({' '.join(repr(word) for word in words)})\n"
        f"COMP_CWORD={len(words) - 1}\n"
        f"COMP_LINE={line!r}; COMP_POINT={len(line)}\n"
        "_shtab_shardbook\n"
        'printf "%s\\n" "${COMPREPLY[@]}"\n'
    )
    done = subprocess.run(["bash", "-c", code], cwd=cwd, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    return sorted(done.stdout.split())


def test_bash_completes_commands_flags_and_folders(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    script = _script(capsys, "bash", tmp_path)
    assert _bash_complete(script, ["shardbook", "ca"], tmp_path) == ["calc"]
    assert _bash_complete(script, ["shardbook", "calc", "le"], tmp_path) == ["ledger"]
    assert _bash_complete(script, ["shardbook", "completion", ""], tmp_path) == [
        "bash",
        "fish",
        "zsh",
    ]
    assert "--json" in _bash_complete(script, ["shardbook", "where", "--"], tmp_path)
    (tmp_path / "lessons-here").mkdir()
    (tmp_path / "lessons-file").write_text("", encoding="utf-8")
    words = ["shardbook", "lessons", "--content-dir", "lessons-"]
    assert _bash_complete(script, words, tmp_path) == ["lessons-here"]


@pytest.mark.parametrize("shell", ["zsh", "fish"])
def test_zsh_and_fish_accept_their_scripts(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, shell: str
) -> None:
    if shutil.which(shell) is None:
        pytest.skip(f"{shell} is not installed here: its syntax check needs it")
    script = _script(capsys, shell, tmp_path)
    done = subprocess.run([shell, "-n", str(script)], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr


def test_fish_completes_commands(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    if shutil.which("fish") is None:
        pytest.skip("fish is not installed here")
    script = _script(capsys, "fish", tmp_path)
    done = subprocess.run(
        ["fish", "-c", f"source {script}; complete -C 'shardbook calc le'"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert [line.split("\t")[0] for line in done.stdout.splitlines()] == ["ledger"]


# The flags and the argument whose values the engine checks, with their choices (README "Shell
# completion" promises them): the names as the engine and README list them.
CHOICES = {
    ("calc ledger", "--convention"): ["zero-paper", "megatron", "deepspeed"],
    ("calc ledger", "--zero"): ["0", "1", "2", "3"],
    ("calc ledger", "--schedule"): ["1f1b", "gpipe"],
    ("calc ledger", "--offload"): ["none", "optimizer", "optimizer+params"],
    ("calc ledger", "--finetune"): ["full", "lora", "qlora"],
    ("calc ledger", "--mlp"): ["gelu", "swiglu", "geglu"],
    ("calc ledger", "--norm"): ["layernorm", "rmsnorm"],
    ("calc step", "--schedule"): ["gpipe", "1f1b", "interleaved-1f1b", "zb-h1", "zb-h2"],
    ("calc bubble", "--schedule"): ["gpipe", "1f1b", "interleaved-1f1b", "zb-h1", "zb-h2"],
    ("calc collective", "--op"): [
        "all-reduce",
        "all-gather",
        "reduce-scatter",
        "all-to-all",
        "broadcast",
        "reduce",
        "send-recv",
    ],
}


def test_bash_completes_the_choices_of_every_flag(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """Only --lang, export --format and the commands completed: the choices lived in metavars."""
    script = _script(capsys, "bash", tmp_path)
    for (command, flag), choices in CHOICES.items():
        words = ["shardbook", *command.split(), flag, ""]
        assert _bash_complete(script, words, tmp_path) == sorted(choices), (command, flag)
    models = _bash_complete(script, ["shardbook", "calc", "step", "--model", "llama3.1-"], tmp_path)
    assert models == ["llama3.1-405b", "llama3.1-70b", "llama3.1-8b"]
    assert _bash_complete(script, ["shardbook", "diagram", "zero"], tmp_path) == [
        "zero1",
        "zero2",
        "zero3",
    ]


def test_zsh_and_fish_scripts_hold_the_choices(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    """Checked in the scripts' text (zsh and fish may not be installed): zsh's ``:(a b)``
    action and fish's ``-xka "a b"`` list the values a flag takes."""
    zsh = _script(capsys, "zsh", tmp_path).read_text(encoding="utf-8")
    fish = _script(capsys, "fish", tmp_path).read_text(encoding="utf-8")
    for (command, flag), choices in CHOICES.items():
        listed = " ".join(choices)
        assert f':({listed})"' in zsh, flag
        # An alias's -l follows the flag's (--zero, --zero-stage).
        using = (
            re.escape(f"'_shtab_shardbook_using {command}' -l {flag[2:]}")
            + r"( -l \S+)* -xka "
            + re.escape(f'"{listed}"')
        )
        assert re.search(using, fish), (command, flag)
    assert '-ka "dp fsdp zero1' in fish and ":(dp fsdp zero1" in zsh


# --- JSON -------------------------------------------------------------------------------------


def test_where_json(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("SHARDBOOK_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    status, out, err = run(
        capsys, "where", "--json", "--content-dir", str(tmp_path / "c"), "--progress-dir", "p"
    )
    assert (status, err, out.count("\n")) == (0, "", 1)
    assert json.loads(out) == {
        "content_dir": str(tmp_path / "c"),
        "progress_dir": "p",
        "settings": str(Path("p") / "settings.yaml"),
        "cache_dir": str(tmp_path / "cache" / "shardbook"),
    }
    status, text, _err = run(capsys, "where", "--progress-dir", "p")
    assert text.splitlines()[1:3] == ["progress\tp", f"settings\t{Path('p') / 'settings.yaml'}"]


@pytest.mark.parametrize("argv", [["dp"], ["all-reduce", "--step", "2"], ["all-gather"]])
def test_diagram_json_holds_the_lines_of_the_text(
    capsys: pytest.CaptureFixture[str], argv: list[str]
) -> None:
    status, text, _err = run(capsys, "diagram", *argv)
    assert status == 0
    status, out, _err = run(capsys, "diagram", *argv, "--json")
    assert status == 0 and out.count("\n") == 1
    assert json.loads(out) == {"name": argv[0], "lines": text.splitlines()}


# --- Exit codes and one-line errors ------------------------------------------------------------


def test_lessons_without_a_content_folder_exits_2_with_one_line(
    capsys: pytest.CaptureFixture[str],
) -> None:
    status, out, err = run(capsys, "lessons", "--content-dir", "/nonexistent")
    assert (status, out) == (2, "")
    assert err == "shardbook: lessons: --content-dir: /nonexistent: no such folder\n"


@pytest.mark.parametrize(
    "command", [["lessons"], ["export", "S15"], ["plan"], ["stats"], ["check-content"]]
)
def test_every_command_reading_lessons_refuses_a_missing_folder(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, command: list[str]
) -> None:
    missing = tmp_path / "absent"
    status, out, err = run(capsys, *command, "--content-dir", str(missing))
    assert (status, out) == (2, "")
    assert err == f"shardbook: {command[0]}: --content-dir: {missing}: no such folder\n"


@pytest.mark.parametrize("command", [["lessons"], ["export", "S15"], ["plan"], ["stats"]])
def test_every_command_reading_progress_refuses_a_missing_or_file_progress_folder(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    command: list[str],
) -> None:
    """A mistyped --progress-dir read as "no progress yet" (every item new, exit 0). The
    variable $SHARDBOOK_PROGRESS_DIR is a standing setting and may name a folder not made yet
    (a new machine, before the first save): no progress yet."""
    missing = tmp_path / "absent"
    monkeypatch.setenv("SHARDBOOK_PROGRESS_DIR", str(missing))
    assert run(capsys, *command)[0] == 0
    monkeypatch.delenv("SHARDBOOK_PROGRESS_DIR")
    status, out, err = run(capsys, *command, "--progress-dir", str(missing))
    assert (status, out) == (2, "")
    assert err == f"shardbook: {command[0]}: --progress-dir: {missing}: no such folder\n"
    afile = tmp_path / "afile"
    afile.write_text("", encoding="utf-8")
    status, out, err = run(capsys, *command, "--progress-dir", str(afile))
    assert (status, out) == (2, "")
    assert err == f"shardbook: {command[0]}: --progress-dir: {afile}: not a folder\n"
    # An existing, empty folder is no progress yet.
    assert run(capsys, *command, "--progress-dir", str(tmp_path))[0] == 0


@pytest.mark.parametrize(
    "command",
    [
        ["where"],
        ["where", "--json"],
        ["check-content"],
        ["lessons"],
        ["plan"],
        ["stats"],
        ["export", "S15"],
        ["models"],
        ["diagram", "dp"],
        ["calc", "ledger", "--params", "7B"],
        ["completion", "bash"],
    ],
)
def test_every_command_refuses_a_file_as_progress_folder(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    command: list[str],
) -> None:
    """By the flag or the variable: ``where`` printed ``settings FILE/settings.yaml`` and
    ``check-content`` checked, both exit 0 (README: a file is refused by every command)."""
    afile = tmp_path / "afile"
    afile.write_text("", encoding="utf-8")
    name = " ".join(command[:2] if command[0] == "calc" else command[:1])
    status, out, err = run(capsys, "--progress-dir", str(afile), *command)
    assert (status, out) == (2, "")
    assert err == f"shardbook: {name}: --progress-dir: {afile}: not a folder\n"
    if command[0] in ("where", "check-content"):  # the flag after the command, as reported
        assert run(capsys, *command, "--progress-dir", str(afile)) == (2, "", err)
    monkeypatch.setenv("SHARDBOOK_PROGRESS_DIR", str(afile))
    status, out, err = run(capsys, *command)
    assert (status, out) == (2, "")
    assert err == f"shardbook: {name}: $SHARDBOOK_PROGRESS_DIR: {afile}: not a folder\n"


def test_the_app_refuses_a_file_as_progress_folder_but_creates_a_missing_one(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """The app said "Could not save: FILE: File exists." on the first save; now one line before
    it starts. A folder that does not exist yet is the app's first run: it creates it."""
    import tui.app

    started: list[object] = []

    def no_app(**kwargs: object) -> None:
        started.append(kwargs["progress_dir"])
        raise SystemExit(0)

    monkeypatch.setattr(tui.app, "make_app", no_app)
    # run_tui pauses the collector until the app's first frame, which never comes here.
    monkeypatch.setattr("gc.disable", lambda: None)
    afile = tmp_path / "afile"
    afile.write_text("", encoding="utf-8")
    assert run(capsys, "--progress-dir", str(afile)) == (
        2,
        "",
        f"shardbook: --progress-dir: {afile}: not a folder\n",
    )
    assert started == []
    assert run(capsys, "--progress-dir", str(tmp_path / "new"))[0] == 0
    assert started == [str(tmp_path / "new")]


def test_lessons_exits_1_when_a_lesson_file_cannot_be_listed(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    shutil.copy(CHECKOUT_ROOT / "content" / "S15.yaml", tmp_path / "S15.yaml")
    (tmp_path / "broken.yaml").write_text("id: [unclosed\n", encoding="utf-8")
    status, out, err = run(capsys, "lessons", "--content-dir", str(tmp_path), "--json")
    assert (status, err) == (1, "")  # the JSON holds the errors
    data = json.loads(out)
    assert [row["id"] for row in data["lessons"]] == ["S15"]
    assert len(data["errors"]) == 1 and "broken.yaml" in data["errors"][0]


def test_stats_exits_1_when_a_progress_file_cannot_be_read(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    (tmp_path / "S15.yaml").write_bytes(b"answers: [unclosed")
    status, out, err = run(capsys, "stats", "--json", "--progress-dir", str(tmp_path))
    assert (status, err) == (1, "")
    assert len(json.loads(out)["errors"]) == 1
    # Reading only: the unreadable file is where it was.
    assert (tmp_path / "S15.yaml").read_bytes() == b"answers: [unclosed"
    ProgressStore(tmp_path).save(LessonProgress("S15"))
    assert run(capsys, "stats", "--json", "--progress-dir", str(tmp_path))[0] == 0


def _parser_message(parse: object, field: str, text: str) -> str:
    assert callable(parse)
    with pytest.raises(InputError) as info:
        parse(field, text)
    return info.value.message


@pytest.mark.parametrize("value", ["-inf", "-Infinity", "-nan"])
def test_a_negative_infinity_reaches_the_flags_parser_as_minus_one_does(
    capsys: pytest.CaptureFixture[str], value: str
) -> None:
    """argparse took ``-inf`` for a flag ("expected one argument"); ``-1`` and ``--params=-inf``
    reached the units parser, which names what is wrong with the value."""
    assert run(capsys, "calc", "ledger", "--params", "-1") == (
        2,
        "",
        "shardbook: calc ledger: --params: must not be negative\n",
    )
    refused = (2, "", f"shardbook: calc ledger: --params: '{value}' is not a number\n")
    assert run(capsys, "calc", "ledger", f"--params={value}") == refused
    assert run(capsys, "calc", "ledger", "--params", value) == refused


@pytest.mark.parametrize(
    ("argv", "command", "flag", "message"),
    [
        # A flag the sub-command does not have: named with the sub-command, not the top usage.
        (["calc", "ledger", "--params", "7B", "--bytes", "-1"], "calc ledger", "--bytes", None),
        # Negative values reach the flag's own parser and get its message.
        (
            ["calc", "ledger", "--params", "-7B"],
            "calc ledger",
            "--params",
            _parser_message(units.parse_count, "params", "-7B"),
        ),
        (
            ["calc", "collective", "--op", "all-reduce", "--ranks", "8", "--bytes", "-1GB"],
            "calc collective",
            "--bytes",
            _parser_message(units.parse_bytes, "size_bytes", "-1GB"),
        ),
        (
            ["calc", "bubble", "--schedule", "1f1b", "--stages", "-4", "--micro-batches", "8"],
            "calc bubble",
            "--stages",
            _parser_message(units.parse_int, "stages", "-4"),
        ),
        (
            ["calc", "step", "--params", "1B", "--gpus", "-8"],
            "calc step",
            "--gpus",
            _parser_message(units.parse_int, "gpus", "-8"),
        ),
        (["calc", "scaling", "--mode", "sideways"], "calc scaling", "--mode", None),
        (["diagram", "all-reduce", "--step", "-1"], "diagram", "--step", None),
        (["export", "S15", "--format", "pdf"], "export", "--format", None),
        (["plan", "--bogus"], "plan", "--bogus", None),
        (["lab", "collectives", "--ranks", "-2"], "lab collectives", "--ranks", None),
        (["lab", "memory", "--layers"], "lab memory", "--layers", None),
        (["completion", "tcsh"], "completion", "SHELL", None),
        (["where", "--nope"], "where", "--nope", None),
        (["quiz", "--lesson", "S99"], "quiz", "--lesson", None),
        (["calc"], "calc", "CALCULATOR", None),
    ],
)
def test_a_usage_error_is_one_line_naming_the_command_and_the_flag(
    capsys: pytest.CaptureFixture[str],
    argv: list[str],
    command: str,
    flag: str,
    message: str | None,
) -> None:
    status, out, err = run(capsys, *argv)
    assert (status, out) == (2, "")
    assert err.count("\n") == 1, err
    assert err.startswith(f"shardbook: {command}: ")
    assert flag in err
    if message is not None:
        assert err.rstrip("\n").endswith(message)
    assert "usage:" not in err and "Traceback" not in err


@pytest.mark.parametrize(
    ("argv", "where"),
    [
        (["--lesson", "S99"], "--lesson"),
        (["quiz", "--lesson", "S99"], "quiz: --lesson"),
        (["plan", "S99"], "plan: LESSON"),
        (["export", "S99"], "export: LESSON"),
    ],
)
def test_every_command_names_an_unknown_lesson_alike(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    argv: list[str],
    where: str,
) -> None:
    """The flag or argument that named it, the id quoted as every message quotes what was typed,
    the folder looked in and the lessons there, whichever command was given."""
    import tui.app

    def no_app(**_kwargs: object) -> None:
        raise AssertionError("the app was started")

    monkeypatch.setattr(tui.app, "make_app", no_app)
    status, out, err = run(capsys, *argv)
    assert (status, out) == (2, "")
    content = CHECKOUT_ROOT / "content"
    assert err == f"shardbook: {where}: no lesson 'S99' in {content} (lessons: S15)\n"


def test_an_unknown_lesson_stops_before_the_app_starts(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    import tui.app

    def no_app(**_kwargs: object) -> None:
        raise AssertionError("the app was started")

    monkeypatch.setattr(tui.app, "make_app", no_app)
    status, out, err = run(capsys, "--lesson", "S99")
    assert (status, out) == (2, "")
    assert err == f"shardbook: --lesson: no lesson 'S99' in {CHECKOUT_ROOT / 'content'} " + (
        "(lessons: S15)\n"
    )
    status, _out, err = run(capsys, "--content-dir", "/nonexistent")
    assert status == 2 and err == "shardbook: --content-dir: /nonexistent: no such folder\n"
