"""The ``shardbook`` command: opens the TUI, or runs a headless command.

Names are a public interface (README "Command line"); scripts and tests rely on them.
Headless commands never import Textual, so they start fast. A learner's mistake (a bad flag
value, a bad lesson file) is one line on stderr and exit status 2 (1 for ``check-content``
findings), never a traceback.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from typing import NoReturn

from engine.errors import InputError, ShardbookError

# Each headless calculator lives in its own module with ``register(calc_subparsers)``; it sets
# ``func`` on its parser. Kept as import paths so ``shardbook --help`` stays cheap.
CALC_MODULES: tuple[str, ...] = (
    "tui.cli_ledger",
    "tui.cli_collective",
    "tui.cli_bubble",
    "tui.cli_step",
)
COMMAND_MODULES: tuple[str, ...] = (
    "tui.cli_content",
    "tui.cli_diagram",
    "tui.cli_lessons",
    "tui.cli_quiz",
    "tui.cli_lab",
    "tui.cli_plan",
    "tui.cli_models",
)


class CliError(Exception):
    """A usage error to print as one line and exit with status 2."""

    def __init__(self, flag: str, message: str) -> None:
        super().__init__(f"{flag}: {message}")


def one_line_errors(parser: argparse.ArgumentParser, command: str) -> None:
    """Make argparse's own errors (a missing or malformed flag) one line on stderr, exit 2."""

    def error(message: str) -> NoReturn:
        print(f"shardbook: {command}: {message}", file=sys.stderr)
        sys.exit(2)

    parser.error = error  # type: ignore[method-assign]


def option_flags(*fields: str, **renamed: str) -> dict[str, str]:
    """Spec field -> the CLI flag that sets it: ``--`` and the field with ``-`` for ``_``
    (``micro_batch`` -> ``--micro-batch``), except the ``renamed`` ones (``size_bytes="--bytes"``).
    Engine errors name spec fields; :func:`flag_error` turns them into what the user typed."""
    flags = {field: "--" + field.replace("_", "-") for field in fields}
    flags.update(renamed)
    return flags


def flag_error(error: InputError, flags: dict[str, str]) -> CliError:
    """Turn an engine :class:`InputError` on a spec field into one naming the CLI flag."""
    return CliError(flags.get(error.field, error.field), error.message)


def _add_paths(parser: argparse.ArgumentParser, top_level: bool = False) -> None:
    # A subcommand's own defaults would overwrite the values given before it
    # (`shardbook --content-dir X export S15`): only the top-level parser sets a default.
    default = None if top_level else argparse.SUPPRESS
    parser.add_argument("--content-dir", default=default, help="folder of lesson YAML files")
    parser.add_argument("--progress-dir", default=default, help="folder for progress files")


def build_parser() -> argparse.ArgumentParser:
    import importlib

    parser = argparse.ArgumentParser(
        prog="shardbook",
        description="A keyboard-driven terminal study companion. Without a command, opens the app.",
    )
    parser.add_argument("--lesson", default=None, help="lesson id to open (default: S15)")
    _add_paths(parser, top_level=True)
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")

    calc = commands.add_parser("calc", help="run a calculator headless")
    calc_commands = calc.add_subparsers(dest="calculator", metavar="CALCULATOR", required=True)
    for name in CALC_MODULES:
        importlib.import_module(name).register(calc_commands)
    for name in COMMAND_MODULES:
        importlib.import_module(name).register(commands, _add_paths)
    return parser


def run_tui(args: argparse.Namespace) -> int:
    from tui.app import make_app

    app = make_app(
        lesson_id=args.lesson,
        content_dir=args.content_dir,
        progress_dir=args.progress_dir,
    )
    app.run()
    return app.return_code or 0


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``shardbook`` console script. Returns the exit status."""
    parser = build_parser()
    args = parser.parse_args(argv)
    func: Callable[[argparse.Namespace], int] = getattr(args, "func", run_tui)
    try:
        return func(args)
    except CliError as error:
        print(f"shardbook: {error}", file=sys.stderr)
        return 2
    except InputError as error:
        print(f"shardbook: {error}", file=sys.stderr)
        return 2
    except ShardbookError as error:
        print(f"shardbook: {error}", file=sys.stderr)
        return 2
    except BrokenPipeError:
        return 0


if __name__ == "__main__":
    sys.exit(main())
