"""``shardbook check-content [PATH ...]``: validate lesson files (``content/README.md``).

Prints one ``FILE:LINE: message`` line per problem on stdout, then a one-line summary; exits 1
when any problem was found, 0 when every lesson is valid, 2 (one line, nothing checked) when a
PATH or the content folder does not exist. Without a PATH it checks every lesson in the resolved
content folder (``--content-dir``, ``$SHARDBOOK_CONTENT_DIR``, ``content/``). Never imports
Textual.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from pathlib import Path
from typing import Any

from cli.main import CliError, content_folder
from engine.i18n import gettext as _
from engine.lesson import check_paths


def register(
    commands: Any, add_paths: Callable[[argparse.ArgumentParser], None]
) -> argparse.ArgumentParser:
    """Add the ``check-content`` command to the ``shardbook`` subcommands."""
    parser: argparse.ArgumentParser = commands.add_parser(
        "check-content",
        help=_("validate lesson files (FILE:LINE: message; exit 1 on any error)"),
        description=_(
            "Validate lesson YAML files. A PATH may be a file or a folder of *.yaml "
            "files; without one, every lesson in the content folder is checked."
        ),
    )
    parser.add_argument("paths", nargs="*", metavar="PATH", help=_("lesson file or folder"))
    add_paths(parser)
    parser.set_defaults(func=run_check_content)
    return parser


def run_check_content(args: argparse.Namespace) -> int:
    """Check the paths given (or the content folder); print findings; return the exit status."""
    for path in args.paths:
        if not Path(path).exists():
            raise CliError("PATH", _("{path}: no such file or folder").format(path=path))
    paths = list(args.paths) or [content_folder(args)]
    files, errors = check_paths(paths)
    for error in errors:
        print(error)
    count = len(files)
    noun = "lesson file" if count == 1 else "lesson files"
    if errors:
        bad = len({error.path for error in errors})
        problems = "problem" if len(errors) == 1 else "problems"
        where = "file" if bad == 1 else "files"
        print(f"{count} {noun} checked: {len(errors)} {problems} in {bad} {where}", flush=True)
        return 1
    print(f"{count} {noun} checked: all valid", flush=True)
    return 0
