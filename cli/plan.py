"""``shardbook plan [LESSON] [--json]``: a lesson's study plan, headless (engine.plan).

Prints each step of the plan with its state (todo / started / done) and where it is worked, the
counts, the next step, the learning objectives with the learner's ratings, and the reviews due.
Reads the progress file without changing it. Never imports Textual.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable

from cli.main import check_lesson_id, content_folder, progress_folder
from engine.i18n import gettext as _
from engine.lesson import discover_lessons, load_lesson
from engine.paths import DEFAULT_LESSON
from engine.plan import build_plan, render_plan
from engine.progress import ProgressStore


def register(
    commands: argparse._SubParsersAction[argparse.ArgumentParser],
    add_paths: Callable[[argparse.ArgumentParser], None],
) -> None:
    """Add the ``plan`` command to the ``shardbook`` subcommands."""
    plan = commands.add_parser(
        "plan",
        help=_("print a lesson's study plan: each step, its state and where it is worked"),
        description=_(
            "The study plan of a lesson, computed from the lesson and your progress: "
            "reading each section, the exercises, the self-check questions, the reflection fields "
            "and the reviews due, each todo, started or done."
        ),
    )
    plan.add_argument(
        "lesson", nargs="?", default=DEFAULT_LESSON, metavar="LESSON", help=_("lesson id (S15)")
    )
    plan.add_argument("--json", action="store_true", help=_("one JSON object on stdout"))
    add_paths(plan)
    plan.set_defaults(func=run_plan)


def run_plan(args: argparse.Namespace) -> int:
    """Print the plan of ``args.lesson``; exit 0, or 2 when the lesson or progress is bad."""
    content_dir = content_folder(args)
    refs, _errors = discover_lessons(content_dir)
    check_lesson_id(args.lesson, [ref.id for ref in refs], content_dir, "LESSON")
    matches = [ref for ref in refs if ref.id == args.lesson]
    lesson = load_lesson(matches[0].path)
    store = ProgressStore(progress_folder(args))
    # Reading only: an unreadable progress file stays where it is and is reported.
    progress = store.load(lesson.id, quarantine=False).progress
    plan = build_plan(lesson, progress)
    if args.json:
        print(json.dumps(plan.as_dict(), ensure_ascii=False))
    else:
        sys.stdout.write(render_plan(plan))
    return 0
