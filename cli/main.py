"""The ``shardbook`` command: opens the TUI, or runs a headless command.

Names are a public interface (README "Command line"); scripts and tests rely on them.
Headless commands never import Textual, so they start fast. A learner's mistake (a bad flag
value, an unknown flag, a missing folder, a bad lesson file) is one line on stderr naming the
command and the flag, exit status 2; a check that found problems (``check-content``) exits 1.
Never a traceback.
"""

from __future__ import annotations

import argparse
import gc
import re
import shutil
import sys
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, NoReturn

from engine.errors import InputError, ShardbookError, quoted
from engine.i18n import LANGUAGES, N_, choose_language, gettext, set_language
from engine.i18n import gettext as _
from tui.terminal import hold_keys, release_keys

# Each headless calculator lives in its own module with ``register(calc_subparsers)``; it sets
# ``func`` on its parser. Kept as import paths so ``shardbook --help`` stays cheap.
CALC_MODULES: tuple[str, ...] = (
    "cli.ledger",
    "cli.collective",
    "cli.bubble",
    "cli.step",
)
COMMAND_MODULES: tuple[str, ...] = (
    "cli.content",
    "cli.diagram",
    "cli.lessons",
    "cli.quiz",
    "cli.lab",
    "cli.plan",
    "cli.models",
    "cli.completion",
)
# The attributes that name the sub-command chosen at each level (``calc ledger``, ``lab memory``).
_COMMAND_DESTS = ("command", "calculator", "experiment")
# Python 3.11's argparse takes an argument that starts with "-" for a flag unless it is a plain
# negative number (``-1``, ``-0.5``), so ``--params -7B`` left --params without a value. No flag of
# shardbook starts with "-" and a digit, so anything that does is a value, given to its parser to
# judge (later CPython releases of argparse use this same rule); so are ``-inf`` and ``-nan``,
# which Python's float() reads as numbers (no flag is ``-i`` or ``-n``).
_NEGATIVE_VALUE = re.compile(r"^-(?:\.?\d|inf|nan)", re.IGNORECASE)


class CliError(InputError):
    """A usage error naming a flag: one line on stderr, exit status 2.

    An :class:`InputError`, so that ``main`` catches it even when ``python -m cli.main`` has
    loaded this module twice (as ``__main__`` and as ``cli.main``)."""


class CellHelpFormatter(argparse.HelpFormatter):
    """argparse's help wrapped by terminal cells (a Chinese character takes two; argparse counts
    characters and gave 87-103 cell lines at 80 columns) and broken by the lesson's rules
    (:func:`engine.linebreak.break_text`: Chinese between characters, never before a ``，``);
    a section heading ends with the interface language's colon (``选项：``)."""

    def _split_lines(self, text: str, width: int) -> list[str]:
        from engine.linebreak import break_paragraph

        paragraph = " ".join(text.split())
        return [line.rstrip(" ") for line in break_paragraph(paragraph, max(width, 1))]

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        lines = self._split_lines(text, width - len(indent))
        return "\n".join(indent + line for line in lines)

    def start_section(self, heading: str | None) -> None:
        if heading:
            # The language's own colon (English: none here, argparse adds ":"); where it is
            # another colon, argparse's ":" after it is taken off in format_help.
            heading = gettext("{label}: {text}").format(label=heading, text="").rstrip()
            heading = heading.removesuffix(":")
        super().start_section(heading)

    def format_help(self) -> str:
        return super().format_help().replace("\uff1a:\n", "\uff1a\n")

    def _format_usage(self, usage: Any, actions: Any, groups: Any, prefix: str | None) -> str:
        # argparse indents the usage's wrapped lines by the prefix's characters: "用法：" is
        # three of them and six cells. Wrapped that much narrower, then indented by cells.
        from engine.linebreak import cell_width

        shown = gettext("usage: ") if prefix is None else prefix
        extra = cell_width(shown) - len(shown)
        width = self._width
        self._width -= extra
        try:
            text = super()._format_usage(usage, actions, groups, prefix)
        finally:
            self._width = width
        return re.sub(r"\n(?= )", "\n" + " " * extra, text) if extra else text


class ShardbookParser(argparse.ArgumentParser):
    """argparse with shardbook's conventions: a usage error is one line naming the command
    (``shardbook: calc ledger: argument --params: ...``), exit 2; a value such as ``-7B`` reaches
    the flag's own parser. Sub-command parsers are of this class too (argparse uses the
    parent's class)."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        kwargs.setdefault("formatter_class", CellHelpFormatter)
        super().__init__(*args, **kwargs)
        self._negative_number_matcher = _NEGATIVE_VALUE

    def error(self, message: str) -> NoReturn:
        fail(self.prog, message)


def one_line(prog: str, message: str) -> str:
    """``shardbook: COMMAND: message`` on one line (``prog`` is ``shardbook calc ledger``)."""
    command = prog.partition(" ")[2]
    where = f"shardbook: {command}: " if command else "shardbook: "
    return where + " ".join(message.split())


def fail(prog: str, message: str) -> NoReturn:
    """Print :func:`one_line` on stderr and exit 2."""
    print(one_line(prog, message), file=sys.stderr)
    sys.exit(2)


class _VersionAction(argparse.Action):
    """``--version``: the installed distribution's version (read only when asked: importing
    ``importlib.metadata`` costs every command's start-up)."""

    def __init__(self, option_strings: Sequence[str], dest: str, **kwargs: Any) -> None:
        super().__init__(option_strings, dest=argparse.SUPPRESS, nargs=0, **kwargs)

    def __call__(self, parser: argparse.ArgumentParser, *_args: Any, **_kwargs: Any) -> None:
        print(f"shardbook {version()}")
        parser.exit(0)


def version() -> str:
    """The version of the installed ``shardbook`` distribution (``pyproject.toml``)."""
    from importlib import metadata

    try:
        return metadata.version("shardbook")
    except metadata.PackageNotFoundError:
        return "(not installed: pip install -e . in the clone)"


def add_choice_argument(
    parser: argparse.ArgumentParser,
    *names: str,
    choices: Sequence[str] | Callable[[], Sequence[str]],
    **kwargs: Any,
) -> argparse.Action:
    """Add an argument whose value is one of ``choices``, shown as ``{a,b}`` in the usage unless
    a ``metavar`` is given, and offered by shell completion (:mod:`cli.completion`).

    The value is checked where it is used (the engine, as the app's forms are), not by argparse:
    its message names the flag as every bad value's does, and values argparse would refuse
    though they mean a choice still count (``--zero 1.0``). ``choices`` may be a function,
    called only when a completion script is made (the model presets are read from a file).
    """
    if not callable(choices):
        kwargs.setdefault("metavar", "{" + ",".join(choices) + "}")
    action = parser.add_argument(*names, **kwargs)
    action.completion_choices = choices  # type: ignore[attr-defined]
    return action


def add_recompute_argument(parser: argparse.ArgumentParser) -> None:
    """``--recompute``: activation recomputation (Korthikanti et al. 2022), the same flag for
    ``calc ledger`` and ``calc step``."""
    from engine.activations import RECOMPUTE_CHOICES  # with the calc commands, not at start-up

    add_choice_argument(
        parser,
        "--recompute",
        default="none",
        choices=RECOMPUTE_CHOICES,
        help=_("activation recomputation (default none)"),
    )


def option_flags(*fields: str, **renamed: str) -> dict[str, str]:
    """Spec field -> the CLI flag that sets it: ``--`` and the field with ``-`` for ``_``
    (``micro_batch`` -> ``--micro-batch``), except the ``renamed`` ones (``size_bytes="--bytes"``).
    Engine errors name spec fields; :func:`flag_error` turns them into what the user typed."""
    flags = {field: "--" + field.replace("_", "-") for field in fields}
    flags.update(renamed)
    return flags


def flag_error(error: InputError, flags: dict[str, str]) -> CliError:
    """Turn an engine :class:`InputError` on a spec field into one naming the CLI flag, the
    other fields its message names too (``--layers``)."""
    return CliError(
        flags.get(error.field, error.field),
        error.naming(lambda key: flags.get(key, key)),
    )


def _add_paths(parser: argparse.ArgumentParser, top_level: bool = False) -> None:
    # A subcommand's own defaults would overwrite the values given before it
    # (`shardbook --content-dir X export S15`): only the top-level parser sets a default.
    default = None if top_level else argparse.SUPPRESS
    parser.add_argument(
        "--content-dir", default=default, metavar="DIR", help=_("folder of lesson YAML files")
    )
    parser.add_argument(
        "--progress-dir", default=default, metavar="DIR", help=_("folder for progress files")
    )


def _app_arguments(argv: Sequence[str]) -> argparse.Namespace | None:
    """The arguments of a command line that opens the app (no command, no ``--help`` or
    ``--version``, nothing wrong), read without building the commands' parsers: their modules
    import the calculators' engines (numpy among them), 0.1-0.3 s before the app's first frame.
    None for any other command line, which the full parser reads (and reports)."""
    parser = ShardbookParser(prog="shardbook", add_help=False, exit_on_error=False)
    parser.add_argument("--lesson", default=None)
    _add_language(parser, top_level=True)
    _add_paths(parser, top_level=True)
    try:
        args, rest = parser.parse_known_args(argv)
    except argparse.ArgumentError:
        return None
    return None if rest else args


def build_parser() -> argparse.ArgumentParser:
    import importlib

    parser = ShardbookParser(
        prog="shardbook",
        description=_(
            "A keyboard-driven terminal study companion. Without a command, opens the app."
        ),
    )
    parser.add_argument("--version", action=_VersionAction, help=_("print the version and exit"))
    parser.add_argument("--lesson", default=None, help=_("lesson id to open (default: S15)"))
    _add_language(parser, top_level=True)
    _add_paths(parser, top_level=True)
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")

    calc = commands.add_parser("calc", help=_("run a calculator headless"))
    calc_commands = calc.add_subparsers(dest="calculator", metavar="CALCULATOR", required=True)
    for name in CALC_MODULES:
        importlib.import_module(name).register(calc_commands)
    for name in COMMAND_MODULES:
        importlib.import_module(name).register(commands, _add_paths)
    for command in _subcommands(parser):
        _add_language(command)
    return parser


def _add_language(parser: argparse.ArgumentParser, top_level: bool = False) -> None:
    # On every command too (`shardbook calc ledger ... --lang zh`): the language was chosen
    # before the parser was built (choose_cli_language, the last --lang given); here it is only
    # accepted. As with the folders, only the top-level parser sets a default.
    parser.add_argument(
        "--lang",
        choices=LANGUAGES,
        default=None if top_level else argparse.SUPPRESS,
        help=_("interface language (default: the saved setting, else the locale)"),
    )


def _subcommands(parser: argparse.ArgumentParser) -> list[argparse.ArgumentParser]:
    """Every command's parser under ``parser``, at any depth (``calc``, ``calc ledger``)."""
    found: list[argparse.ArgumentParser] = []
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for command in dict.fromkeys(action.choices.values()):
                found += [command, *_subcommands(command)]
    return found


def run_tui(args: argparse.Namespace) -> int:
    """Open the app; a missing content folder or an unknown ``--lesson`` is one line, exit 2,
    before the full screen starts. Once the app has quit (exit 0), the session's summary is
    printed to stdout (never after a signal: the terminal may be gone, and the session is
    logged in the progress file either way)."""
    # Paused while the app's modules are imported and until its first frame: what start-up
    # makes lives as long as the app (see tui.app.ShardbookApp.run, which resumes it).
    gc.disable()
    from engine.lesson import discover_lessons, lesson_index_path

    content_dir = content_folder(args)
    if args.lesson is not None:
        # The index the app reads next: listing is cheap, and the app's own listing is cached.
        refs, _errors = discover_lessons(content_dir, lesson_index_path(content_dir))
        check_lesson_id(args.lesson, [ref.id for ref in refs], content_dir)
    from tui.app import make_app

    app = make_app(
        lesson_id=args.lesson,
        content_dir=args.content_dir,
        progress_dir=args.progress_dir,
        language=args.lang,
    )
    app.run()
    code = app.return_code or 0
    if code == 0:
        # Broken to the terminal's width with indented continuations (a pipe gets whole lines).
        width = shutil.get_terminal_size().columns if sys.stdout.isatty() else None
        summary = app.session_summary_text(width)
        if summary:
            sys.stdout.write(summary)
            sys.stdout.flush()
    return code


def content_folder(args: argparse.Namespace) -> Path:
    """The content folder the command reads (``--content-dir``, ``$SHARDBOOK_CONTENT_DIR``, the
    checkout's or the installed lessons).

    Raises:
        CliError: the folder does not exist (exit 2).
    """
    from engine.paths import resolve_content_dir

    folder = resolve_content_dir(getattr(args, "content_dir", None))
    if not folder.is_dir():
        raise CliError("--content-dir", gettext("{folder}: no such folder").format(folder=folder))
    return folder


def progress_folder(args: argparse.Namespace, *, must_exist: bool = True) -> Path:
    """The progress folder the command uses (``--progress-dir``, ``$SHARDBOOK_PROGRESS_DIR``,
    the checkout's or the user's data folder).

    A command that only reads progress (``must_exist``) needs a folder given by the flag to
    exist: a mistyped one would read as "no progress yet". The variable is a standing setting,
    like the default folder, and may name a folder not made yet (nothing saved so far, as on a
    new machine); the app creates any folder it is given.

    Raises:
        CliError: the path is not a folder, or (``must_exist``) a folder given by the flag does
            not exist (exit 2).
    """
    from engine.paths import resolve_progress_dir

    given = getattr(args, "progress_dir", None)
    flag = "--progress-dir" if given else "$SHARDBOOK_PROGRESS_DIR"
    folder = resolve_progress_dir(given)
    if folder.exists() and not folder.is_dir():
        raise CliError(flag, gettext("{folder}: not a folder").format(folder=folder))
    if must_exist and given and not folder.exists():
        raise CliError(flag, gettext("{folder}: no such folder").format(folder=folder))
    return folder


def check_lesson_id(
    lesson_id: str, known: Sequence[str], content_dir: Path, name: str = "--lesson"
) -> None:
    """Raise a :class:`CliError` on ``name`` (the flag ``--lesson``, or a command's ``LESSON``)
    unless ``lesson_id`` is one of ``known``; the id is quoted as every message quotes what was
    typed (:func:`engine.errors.quoted`)."""
    if lesson_id not in known:
        listed = ", ".join(known) or gettext("none")
        raise CliError(
            name,
            gettext("no lesson {lesson} in {folder} (lessons: {listed})").format(
                lesson=quoted(lesson_id), folder=content_dir, listed=listed
            ),
        )


# argparse's own texts (Python 3.11's Lib/argparse.py), put in the catalog so that usage lines,
# help headings and usage errors read in the interface language: argparse passes each through
# its module's ``_`` and ``ngettext``, which :func:`_translate_argparse` points at the catalog.
ARGPARSE_TEXTS = (
    N_("usage: "),
    N_("positional arguments"),
    N_("options"),
    N_("show this help message and exit"),
    N_("the following arguments are required: %s"),
    N_("unrecognized arguments: %s"),
    N_("expected one argument"),
    N_("invalid choice: %(value)r (choose from %(choices)s)"),
    N_("argument %(argument_name)s: %(message)s"),
    N_("invalid %(type)s value: %(value)r"),
    N_("ambiguous option: %(option)s could match %(matches)s"),
    N_("not allowed with argument %s"),
    N_("one of the arguments %s is required"),
    N_("ignored explicit argument %r"),
)


def _translate_argparse() -> None:
    """argparse's texts through the catalog of the interface language (see ARGPARSE_TEXTS)."""
    argparse._ = gettext  # type: ignore[attr-defined]
    argparse.ngettext = lambda singular, plural, count: gettext(  # type: ignore[attr-defined]
        singular if count == 1 else plural
    )


def choose_cli_language(argv: Sequence[str]) -> str:
    """The language of a command, chosen as the app chooses it: ``--lang``, else the
    ``language`` setting in the progress folder (``--progress-dir`` or the default one), else
    the locale. Read before the parser is built, so that ``--help`` is in that language."""
    from engine.paths import resolve_progress_dir
    from engine.settings import saved_language

    lang = _early_value(argv, "--lang")
    try:
        setting = saved_language(resolve_progress_dir(_early_value(argv, "--progress-dir")))
    except ShardbookError:
        setting = None
    return choose_language(lang if lang in LANGUAGES else None, setting)


def _early_value(argv: Sequence[str], flag: str) -> str | None:
    """The value of ``flag`` in ``argv``, None when absent or given none. Tolerant: a bad or
    missing value is reported by the full parser, in the one line every usage error gets (an
    argparse parser of its own would print its own usage line)."""
    early = argparse.ArgumentParser(add_help=False, exit_on_error=False)
    early.add_argument(flag, dest="value", default=None)
    try:
        known, _rest = early.parse_known_args(argv)
    except argparse.ArgumentError:
        return None
    value: str | None = known.value
    return value


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``shardbook`` console script. Returns the exit status: 0 ok, 1 a check
    found problems, 2 bad input (a usage error exits 2 through :class:`SystemExit`)."""
    # First of all: keys typed while the app starts wait unedited for it (tui/terminal.py).
    hold_keys()
    try:
        return _run(sys.argv[1:] if argv is None else argv)
    finally:
        release_keys()


def _run(arguments: Sequence[str]) -> int:
    set_language(choose_cli_language(arguments))
    _translate_argparse()
    prog = "shardbook"
    args = _app_arguments(arguments)
    if args is None:
        parser = build_parser()
        args, unknown = parser.parse_known_args(arguments)
        command = [str(getattr(args, dest)) for dest in _COMMAND_DESTS if getattr(args, dest, None)]
        prog = " ".join(["shardbook", *command])
        if unknown:
            # A sub-command leaves what it does not know to the top-level parser, whose error
            # would not name the sub-command.
            fail(
                prog,
                gettext("unrecognized arguments: {arguments} (see {prog} --help)").format(
                    arguments=" ".join(unknown), prog=prog
                ),
            )
    func: Callable[[argparse.Namespace], int] = getattr(args, "func", run_tui)
    if func is not run_tui:
        release_keys()  # a command's output and prompts go to a terminal as it was
    try:
        # Every command reads the progress folder's language setting, and the app and some
        # commands read or write there: a file named as it is refused alike by all of them.
        progress_folder(args, must_exist=False)
        return func(args)
    except ShardbookError as error:
        print(one_line(prog, str(error)), file=sys.stderr)
        return 2
    except BrokenPipeError:
        return 0


if __name__ == "__main__":
    sys.exit(main())
