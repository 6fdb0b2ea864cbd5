"""Every error message a learner can read goes through the catalog.

An ``InputError`` or ``ProgressError`` (``NewerVersionError``, ``CliError``) raised by the
engine or the command line reaches the learner as ``str(error)``: on a pane, in a toast, on the
command line's stderr; a ``LabError`` in the Lab pane and ``shardbook lab``. Each call that
builds one is read as source: its message must be a ``gettext`` call (``_("...")``, its
``.format(...)`` with named values), or a value made elsewhere; a string with a letter in it
outside a ``gettext`` call (an f-string, a literal, ``" or ".join``) is English the catalog never
sees. The field or file the error names (the first argument) stays literal: it is the flag or the
key the learner types.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
GETTEXT = frozenset({"_", "gettext", "N_"})
# Each error class and the position of its message argument.
MESSAGE_ARGUMENT = {
    "InputError": 1,
    "ProgressError": 1,
    "NewerVersionError": 1,
    "CliError": 1,
    "LabError": 0,
}


def _is_gettext(node: ast.AST) -> bool:
    return (
        isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in GETTEXT
    )


def _english_outside_gettext(node: ast.AST) -> list[str]:
    """Literal text with a letter in ``node`` that no ``gettext`` call wraps, followed where
    text is made: the message itself, an f-string's parts, ``+`` and ``%``, either branch of
    ``a if c else b``, and ``.join``/``.format`` with their arguments. A format spec (``:g``), a
    separator (``", "``) and a key handed to another call (``data.get("lesson")``) are not
    words shown."""
    found: list[str] = []

    def visit(child: ast.AST) -> None:
        if _is_gettext(child):
            assert isinstance(child, ast.Call)
            for argument in child.args[1:]:
                visit(argument)
        elif isinstance(child, ast.Constant):
            if isinstance(child.value, str) and any(c.isalpha() for c in child.value):
                found.append(child.value)
        elif isinstance(child, ast.JoinedStr):
            for part in child.values:
                visit(part.value if isinstance(part, ast.FormattedValue) else part)
        elif isinstance(child, ast.BinOp):
            visit(child.left)
            visit(child.right)
        elif isinstance(child, ast.IfExp):
            visit(child.body)
            visit(child.orelse)
        elif (
            isinstance(child, ast.Call)
            and isinstance(child.func, ast.Attribute)
            and child.func.attr in ("join", "format")
        ):
            visit(child.func.value)
            for argument in (*child.args, *(keyword.value for keyword in child.keywords)):
                visit(argument)

    visit(node)
    return found


def _message(call: ast.Call) -> ast.expr | None:
    for keyword in call.keywords:
        if keyword.arg == "message":
            return keyword.value
    assert isinstance(call.func, ast.Name)
    position = MESSAGE_ARGUMENT[call.func.id]
    return call.args[position] if len(call.args) > position else None


def untranslated_errors(source: str) -> list[str]:
    """``"line: text"`` for each error in ``source`` whose message has English outside the
    catalog: a literal or f-string message, or words joined around a translated part."""
    found = []
    for node in ast.walk(ast.parse(source)):
        if not (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id in MESSAGE_ARGUMENT
        ):
            continue
        message = _message(node)
        if message is None:
            continue
        words = _english_outside_gettext(message)
        if isinstance(message, ast.JoinedStr) and not words:
            words = [ast.unparse(message)]
        found.extend(f"{node.lineno}: {text!r}" for text in words)
    return found


def test_the_check_finds_an_untranslated_message() -> None:
    """The check itself: what it must refuse and what it must accept."""
    refused = [
        'raise InputError("tp", f"must divide heads ({heads})")',
        'raise ProgressError(str(path), "not a progress file")',
        'raise InputError("op", _("use {x}").format(x=" or ".join(names)))',
        'raise LabError(f"rank {rank} wrote no result", pids)',
        'raise InputError("x", message=f"{value} is too large")',
        'raise InputError("x", "too large" if big else _("too small"))',
        'raise InputError("x", _("no {k}").format(k=data.get("k")) + " here")',
    ]
    accepted = [
        'raise InputError("tp", _("must divide heads ({heads})").format(heads=heads))',
        'raise InputError("op", _("use {x}").format(x=", ".join(names)))',
        'raise InputError("v", _("at least {v}").format(v=f"{value:g}"))',
        "raise ProgressError(str(path), describe_os_error(error))",
        'raise LabError(gettext("the step failed"))',
        'raise InputError("op", _("use {x}").format(x=_(" or ").join(names)))',
    ]
    for source in refused:
        assert untranslated_errors(source), source
    for source in accepted:
        assert not untranslated_errors(source), source


@pytest.mark.parametrize("package", ["engine", "cli"])
def test_every_error_message_is_marked_for_the_catalog(package: str) -> None:
    found = {
        str(path.relative_to(ROOT)): problems
        for path in sorted((ROOT / package).rglob("*.py"))
        if (problems := untranslated_errors(path.read_text(encoding="utf-8")))
    }
    assert not found, f"wrap each message in _() with named values (README): {found}"
