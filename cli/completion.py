"""``shardbook completion bash|zsh|fish``: print a shell completion script.

The script is generated from the command's own argparse parser by shtab, so it always offers the
commands and flags this version has. Folder flags complete folder names, file flags file names.
How each shell loads it is in the README ("Shell completion"). No Textual import here.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable

from engine.i18n import gettext as _

SHELLS = ("bash", "zsh", "fish")
# Values that name a folder or a file, by argparse dest: their completion lists those.
_FOLDER_DESTS = frozenset({"content_dir", "progress_dir"})
_FILE_DESTS = frozenset({"output", "paths"})


def register(
    commands: argparse._SubParsersAction[argparse.ArgumentParser],
    add_paths: Callable[[argparse.ArgumentParser], None],
) -> None:
    """Add the ``completion`` command to the ``shardbook`` subcommands."""
    del add_paths  # the script does not depend on any folder
    parser = commands.add_parser(
        "completion",
        help=_("print a shell completion script (bash, zsh or fish)"),
        description=_(
            "Print the completion script of SHELL on stdout. bash: "
            'eval "$(shardbook completion bash)" in ~/.bashrc; zsh: the same in ~/.zshrc; fish: '
            "shardbook completion fish > ~/.config/fish/completions/shardbook.fish."
        ),
    )
    parser.add_argument("shell", choices=SHELLS, metavar="SHELL", help=_("bash, zsh or fish"))
    parser.set_defaults(func=run_completion)


def completion_script(shell: str) -> str:
    """The completion script of ``shell`` (one of :data:`SHELLS`) for the whole command line."""
    import shtab

    from cli.main import build_parser

    parser = build_parser()
    _mark_paths(parser, shtab.DIRECTORY, shtab.FILE)
    return str(shtab.complete(parser, shell=shell))


def _mark_paths(parser: argparse.ArgumentParser, folder: object, file: object) -> None:
    # shtab reads an action's ``complete`` attribute, and its ``choices``: those of the flags
    # that the engine checks (cli.main.add_choice_argument) are set on this parser only, which
    # parses nothing. argparse keeps a parser's actions, and a sub-command's parsers, where
    # shtab itself reads them.
    for action in parser._actions:
        listed = getattr(action, "completion_choices", None)
        if listed is not None:
            action.choices = list(listed() if callable(listed) else listed)
        if action.dest in _FOLDER_DESTS:
            action.complete = folder  # type: ignore[attr-defined]
        elif action.dest in _FILE_DESTS:
            action.complete = file  # type: ignore[attr-defined]
        if isinstance(action, argparse._SubParsersAction):
            for subparser in action.choices.values():
                _mark_paths(subparser, folder, file)


def run_completion(args: argparse.Namespace) -> int:
    """Print the script; exit 0."""
    sys.stdout.write(completion_script(args.shell))
    return 0
