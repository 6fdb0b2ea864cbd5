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
from typing import Any, Final

from cli.main import CliError, content_folder
from engine.i18n import N_
from engine.i18n import gettext as _
from engine.lesson import check_paths

# What check-content found, by (one problem, one file) (one problem is in one file): English
# has singular and plural nouns.
_FOUND: Final = {
    (True, True): N_("{problems} problem in {files} file"),
    (False, True): N_("{problems} problems in {files} file"),
    (False, False): N_("{problems} problems in {files} files"),
}


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
    checked = (
        _("{count} lesson file checked") if count == 1 else _("{count} lesson files checked")
    ).format(count=count)
    if errors:
        bad = len({error.path for error in errors})
        found = _FOUND[len(errors) == 1, bad == 1]
        summary = _("{checked}: {found}").format(
            checked=checked, found=_(found).format(problems=len(errors), files=bad)
        )
        print(summary, flush=True)
        return 1
    print(_("{checked}: all valid").format(checked=checked), flush=True)
    return 0
