"""Headless commands about lessons and the learner's notes: ``lessons``, ``where``, ``export``.

Exit status: 0; 1 when ``lessons`` found lesson files it could not list (each reported); 2 when
the content folder is missing or the input is bad (one line)."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from pathlib import Path

from cli.main import CliError, check_lesson_id, content_folder, progress_folder
from engine.errors import ProgressError
from engine.export import EXTENSIONS, FORMATS, export_bytes, write_export
from engine.i18n import N_
from engine.i18n import gettext as _
from engine.lesson import discover_lessons, load_lesson
from engine.paths import cache_dir, resolve_content_dir, resolve_progress_dir
from engine.progress import STATUS_LABELS, ProgressStore, describe_os_error
from engine.settings import SettingsStore


def register(
    commands: argparse._SubParsersAction[argparse.ArgumentParser],
    add_paths: Callable[[argparse.ArgumentParser], None],
) -> None:
    lessons = commands.add_parser("lessons", help=_("list lessons with their status"))
    lessons.add_argument("--json", action="store_true", help=_("one JSON object on stdout"))
    add_paths(lessons)
    lessons.set_defaults(func=run_lessons)

    where = commands.add_parser(
        "where",
        help=_("print the content and progress folders, the settings file and the cache folder"),
    )
    where.add_argument(
        "--json",
        action="store_true",
        help=_('one JSON object: {"content_dir", "progress_dir", "settings", "cache_dir"}'),
    )
    add_paths(where)
    where.set_defaults(func=run_where)

    export = commands.add_parser("export", help=_("write a lesson's filled-in notes"))
    export.add_argument("lesson", metavar="LESSON", help=_("lesson id, e.g. S15"))
    export.add_argument(
        "--format",
        choices=FORMATS,
        default="md",
        help=_(
            "md (default), json, html (one web page) or anki (the quiz items as a deck; needs -o)"
        ),
    )
    export.add_argument(
        "-o",
        "--output",
        metavar="FILE",
        help=_("file to write (default: stdout; for anki a .apkg)"),
    )
    add_paths(export)
    export.set_defaults(func=run_export)


_UNREADABLE = N_("unreadable")
"""The status shown for a progress file that cannot be read (``unreadable`` in the JSON)."""


def _dirs(args: argparse.Namespace) -> tuple[Path, Path]:
    return content_folder(args), progress_folder(args)


def run_lessons(args: argparse.Namespace) -> int:
    """List the lessons; 1 when a lesson file could not be listed, 2 without a content folder."""
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
            status = row["status"]
            label = _(STATUS_LABELS.get(status, _UNREADABLE if status == "unreadable" else status))
            print(f"{row['id']}\t{label}\t{row['title']}")
        for error in errors:
            print(error, file=sys.stderr)
    return 1 if errors else 0


WHERE_LABELS = {
    "content_dir": N_("content"),
    "progress_dir": N_("progress"),
    "settings": N_("settings"),
    "cache_dir": N_("cache"),
}
"""``shardbook where``'s line labels (in the interface language; ``--json`` keeps its keys)."""


def run_where(args: argparse.Namespace) -> int:
    """Print the folders in use, whether or not they exist yet (the progress folder is made on
    the first save); exit 0."""
    progress_dir = resolve_progress_dir(args.progress_dir)
    folders = {
        "content_dir": str(resolve_content_dir(args.content_dir)),
        "progress_dir": str(progress_dir),
        "settings": str(SettingsStore(progress_dir).path),
        "cache_dir": str(cache_dir()),
    }
    if args.json:
        print(json.dumps(folders, ensure_ascii=False))
    else:
        for key, value in folders.items():
            print(f"{_(WHERE_LABELS[key])}\t{value}")
    return 0


def run_export(args: argparse.Namespace) -> int:
    if args.format == "anki":
        # A zip file is no use on a terminal, and Anki imports only files named *.apkg.
        suffix = f".{EXTENSIONS['anki']}"
        if not args.output:
            raise CliError(
                "-o", _("--format anki writes a file: give -o FILE{suffix}").format(suffix=suffix)
            )
        if not args.output.endswith(suffix):
            raise CliError(
                "-o",
                _("an Anki deck file must end in {suffix} (Anki imports only those)").format(
                    suffix=suffix
                ),
            )
    content_dir, progress_dir = _dirs(args)
    refs, _errors = discover_lessons(content_dir)
    check_lesson_id(args.lesson, [ref.id for ref in refs], content_dir, "LESSON")
    matches = [ref for ref in refs if ref.id == args.lesson]
    lesson = load_lesson(matches[0].path)
    loaded = ProgressStore(progress_dir).load(lesson.id, quarantine=False)
    data = export_bytes(lesson, loaded.progress, args.format)
    if args.output:
        try:
            write_export(Path(args.output), data, lesson_id=lesson.id)
        except OSError as error:
            reason = describe_os_error(error)
            # Named by the flag, as every usage error is: the path is what -o gave.
            raise CliError(
                "-o",
                _("{path}: could not write ({reason})").format(path=args.output, reason=reason),
            ) from None
        print(_("wrote {path}").format(path=args.output), file=sys.stderr)
    else:
        sys.stdout.write(data.decode("utf-8"))
    return 0
