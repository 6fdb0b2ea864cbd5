"""``shardbook quiz [--lesson ID] [--due]`` opens the app on the quiz screen;
``shardbook stats [--json]`` prints each lesson's review statistics (engine.quiz_stats.LessonStats):
recall, the model's retrievability, and the reviews due on each of the next 30 local dates; then
the session log (engine.session; JSON key ``sessions``). ``stats`` exits 1 when a lesson or progress
file could not be read (each reported), 2 without a content folder."""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from pathlib import Path

from cli.main import check_lesson_id, content_folder, progress_folder
from engine.errors import ContentError, ProgressError
from engine.i18n import gettext as _
from engine.lesson import discover_lessons, load_lesson_cached
from engine.progress import ProgressStore
from engine.quiz import lesson_stats
from engine.quiz_stats import stats_text
from engine.session import render_session_log, session_log_rows
from engine.timefmt import local_iso, utc_iso, utc_now


def register(
    commands: argparse._SubParsersAction[argparse.ArgumentParser],
    add_paths: Callable[[argparse.ArgumentParser], None],
) -> None:
    quiz = commands.add_parser("quiz", help=_("open the quiz and spaced review"))
    quiz.add_argument(
        "--lesson",
        default=argparse.SUPPRESS,
        help=_("quiz only this lesson (default: every lesson, one queue)"),
    )
    quiz.add_argument("--due", action="store_true", help=_("only items due for review now"))
    add_paths(quiz)
    quiz.set_defaults(func=run_quiz)

    stats = commands.add_parser("stats", help=_("print review statistics per lesson"))
    stats.add_argument("--json", action="store_true", help=_("one JSON object on stdout"))
    add_paths(stats)
    stats.set_defaults(func=run_stats)


def _dirs(args: argparse.Namespace, *, must_exist: bool) -> tuple[Path, Path]:
    # The quiz opens the app, which creates the folder; stats only reads it.
    return content_folder(args), progress_folder(args, must_exist=must_exist)


def run_quiz(args: argparse.Namespace) -> int:
    from tui.app import make_app
    from tui.options import QuizOptions

    content_dir, progress_dir = _dirs(args, must_exist=False)
    refs, _errors = discover_lessons(content_dir)
    if args.lesson is not None:
        check_lesson_id(args.lesson, [ref.id for ref in refs], content_dir)
    app = make_app(
        lesson_id=args.lesson,
        content_dir=content_dir,
        progress_dir=progress_dir,
        quiz=QuizOptions(lesson=args.lesson, due_only=args.due, open_at_start=True),
        language=args.lang,
    )
    app.run()
    return app.return_code or 0


def run_stats(args: argparse.Namespace) -> int:
    content_dir, progress_dir = _dirs(args, must_exist=True)
    refs, errors = discover_lessons(content_dir)
    store = ProgressStore(progress_dir)
    now = utc_now()
    local = now.astimezone()
    rows = []
    sessions: list[dict[str, object]] = []
    problems = [str(error) for error in errors]
    for ref in refs:
        try:
            lesson = load_lesson_cached(ref.path)
            # Reading only: an unreadable progress file stays where it is.
            progress = store.load(ref.id, quarantine=False).progress
            rows.append(lesson_stats(lesson, progress, now, local.tzinfo))
            sessions += session_log_rows(ref.id, progress)
        except (ContentError, ProgressError) as error:
            problems.append(str(error))
    if args.json:
        payload = {
            "now": utc_iso(now),
            # The zone the local dates (due_forecast, recall_history) are counted in.
            "local_now": local_iso(now),
            "lessons": [row.as_dict() for row in rows],
            "errors": problems,
            "sessions": sessions,
        }
        print(json.dumps(payload, ensure_ascii=False))
    else:
        print(stats_text(rows, local.tzinfo, now=now))
        log = render_session_log(sessions, local.tzinfo)
        if log:
            print(f"\n{log}", end="")
        for problem in problems:
            print(problem, file=sys.stderr)
    return 1 if problems else 0
