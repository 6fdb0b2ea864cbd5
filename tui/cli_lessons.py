"""Headless commands about lessons and the learner's notes: ``lessons``, ``where``, ``export``."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from pathlib import Path

from engine.errors import ContentError, ProgressError
from engine.export import EXTENSIONS, FORMATS, export_bytes, write_export
from engine.lesson import discover_lessons, load_lesson
from engine.paths import resolve_content_dir, resolve_progress_dir
from engine.progress import STATUS_LABELS, ProgressStore, describe_os_error
from engine.settings import SettingsStore
from tui.cli import CliError


def register(
    commands: argparse._SubParsersAction,  # type: ignore[type-arg]
    add_paths: Callable[[argparse.ArgumentParser], None],
) -> None:
    lessons = commands.add_parser("lessons", help="list lessons with their status")
    lessons.add_argument("--json", action="store_true", help="one JSON object on stdout")
    add_paths(lessons)
    lessons.set_defaults(func=run_lessons)

    where = commands.add_parser(
        "where", help="print the content and progress folders and the settings file"
    )
    add_paths(where)
    where.set_defaults(func=run_where)

    export = commands.add_parser("export", help="write a lesson's filled-in notes")
    export.add_argument("lesson", metavar="LESSON", help="lesson id, e.g. S15")
    export.add_argument(
        "--format",
        choices=FORMATS,
        default="md",
        help="md (default), json, html (one web page) or anki (the quiz items as a deck; needs -o)",
    )
    export.add_argument(
        "-o", "--output", help="file to write (default: stdout; for anki a FILE.apkg)"
    )
    add_paths(export)
    export.set_defaults(func=run_export)


def _dirs(args: argparse.Namespace) -> tuple[Path, Path]:
    return resolve_content_dir(args.content_dir), resolve_progress_dir(args.progress_dir)


def run_lessons(args: argparse.Namespace) -> int:
    content_dir, progress_dir = _dirs(args)
    refs, errors = discover_lessons(content_dir)
    store = ProgressStore(progress_dir)
    rows = []
    for ref in refs:
        # Listing never moves a file aside: only the app, which will save, does that.
        status: str
        try:
            status = store.load(ref.id, quarantine=False).progress.status
        except ProgressError:
            status = "unreadable"
        rows.append({"id": ref.id, "title": ref.title, "status": status, "path": str(ref.path)})
    if args.json:
        payload = {"lessons": rows, "errors": [str(error) for error in errors]}
        print(json.dumps(payload, ensure_ascii=False))
    else:
        for row in rows:
            label = STATUS_LABELS.get(row["status"], row["status"])
            print(f"{row['id']}\t{label}\t{row['title']}")
        for error in errors:
            print(error, file=sys.stderr)
    return 0


def run_where(args: argparse.Namespace) -> int:
    content_dir, progress_dir = _dirs(args)
    print(f"content\t{content_dir}")
    print(f"progress\t{progress_dir}")
    print(f"settings\t{SettingsStore(progress_dir).path}")
    return 0


def run_export(args: argparse.Namespace) -> int:
    if args.format == "anki":
        # A zip file is no use on a terminal, and Anki imports only files named *.apkg.
        suffix = f".{EXTENSIONS['anki']}"
        if not args.output:
            raise CliError("-o", f"--format anki writes a file: give -o FILE{suffix}")
        if not args.output.endswith(suffix):
            raise CliError(
                "-o", f"an Anki deck file must end in {suffix} (Anki imports only those)"
            )
    content_dir, progress_dir = _dirs(args)
    refs, _errors = discover_lessons(content_dir)
    matches = [ref for ref in refs if ref.id == args.lesson]
    if not matches:
        known = ", ".join(ref.id for ref in refs) or "none"
        raise ContentError(str(content_dir), None, f"no lesson {args.lesson!r} (lessons: {known})")
    lesson = load_lesson(matches[0].path)
    loaded = ProgressStore(progress_dir).load(lesson.id, quarantine=False)
    data = export_bytes(lesson, loaded.progress, args.format)
    if args.output:
        try:
            write_export(Path(args.output), data, lesson_id=lesson.id)
        except OSError as error:
            reason = describe_os_error(error)
            raise ProgressError(args.output, f"could not write ({reason})") from None
        print(f"wrote {args.output}", file=sys.stderr)
    else:
        sys.stdout.write(data.decode("utf-8"))
    return 0
