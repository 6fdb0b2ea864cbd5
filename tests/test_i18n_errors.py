"""Every error message a learner can read goes through the catalog.

An ``InputError`` or ``ProgressError`` (``NewerVersionError``, ``CliError``) raised by the
engine or the command line reaches the learner as ``str(error)``: on a pane, in a toast, on the
command line's stderr; a ``LabError`` in the Lab pane and ``shardbook lab``; a lesson file's
``ContentError`` (and the ``Refused`` YAML construct and the ``self.error(node, where,
message)`` of the lesson checker that become one) on the main screen and in ``shardbook
check-content``, which prints its summary line too. Each call that builds one is read as
source: its message must be a ``gettext`` call (``_("...")``, its ``.format(...)`` with named
values), or a value made elsewhere; a string with a letter in it outside a ``gettext`` call (an
f-string, a literal, ``" or ".join``, a module constant marked with ``N_`` but never passed
through ``gettext``) is English the catalog never sees. The functions that make the lesson
checker's messages (:data:`MESSAGE_FUNCTIONS`) are read the same way, at each ``return``. The
field or file the error names (the argument before the message) stays literal: it is the flag,
the key or the path the learner types.
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
    "ContentError": 2,
    "Refused": 1,
    "field_message": 1,
}
# A method call ``self.error(node, where, message)`` (the lesson checker's): the message's place.
METHOD_MESSAGE_ARGUMENT = {"error": 2}
# Functions whose return value is a message (read at each ``return``).
MESSAGE_FUNCTIONS = frozenset({"bad_character", "url_problem", "kind_of", "_cannot_read"})
# check-content's own lines (its summary) on stdout.
CHECK_CONTENT_ARGUMENT = {**MESSAGE_ARGUMENT, "print": 0}


def _is_gettext(node: ast.AST) -> bool:
    return (
        isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in GETTEXT
    )


def _marked_constants(tree: ast.AST) -> frozenset[str]:
    """Module constants whose value is ``N_("...")``: English until ``gettext`` reads them."""
    names = set()
    for node in getattr(tree, "body", []):
        if isinstance(node, ast.Assign | ast.AnnAssign) and _is_gettext(node.value):
            assert isinstance(node.value, ast.Call) and isinstance(node.value.func, ast.Name)
            if node.value.func.id == "N_":
                targets = node.targets if isinstance(node, ast.Assign) else [node.target]
                names.update(target.id for target in targets if isinstance(target, ast.Name))
    return frozenset(names)


def _english_outside_gettext(node: ast.AST, marked: frozenset[str] = frozenset()) -> list[str]:
    """Literal text with a letter in ``node`` that no ``gettext`` call wraps, followed where
    text is made: the message itself, an f-string's parts, ``+`` and ``%``, either branch of
    ``a if c else b``, and ``.join``/``.format`` with their arguments; a constant of ``marked``
    (``N_``) read without ``gettext``. A format spec (``:g``), a separator (``", "``) and a key
    handed to another call (``data.get("lesson")``) are not words shown."""
    found: list[str] = []

    def visit(child: ast.AST) -> None:
        if _is_gettext(child):
            assert isinstance(child, ast.Call)
            for argument in child.args[1:]:
                visit(argument)
        elif isinstance(child, ast.Constant):
            if isinstance(child.value, str) and any(c.isalpha() for c in child.value):
                found.append(child.value)
        elif isinstance(child, ast.Name) and child.id in marked:
            found.append(child.id)
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


def _message_position(call: ast.Call, arguments: dict[str, int]) -> int | None:
    """Where ``call``'s message is, or None when ``call`` makes no message."""
    if isinstance(call.func, ast.Name):
        return arguments.get(call.func.id)
    if (
        isinstance(call.func, ast.Attribute)
        and isinstance(call.func.value, ast.Name)
        and call.func.value.id == "self"
    ):
        return METHOD_MESSAGE_ARGUMENT.get(call.func.attr)
    return None


def _messages(tree: ast.AST, arguments: dict[str, int]) -> list[ast.expr]:
    """Each message ``tree`` makes: the message argument of an error (a ``message=`` keyword
    or its place), and what a message function returns."""
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef) and node.name in MESSAGE_FUNCTIONS:
            found.extend(
                child.value
                for child in ast.walk(node)
                if isinstance(child, ast.Return) and child.value is not None
            )
        if not isinstance(node, ast.Call):
            continue
        position = _message_position(node, arguments)
        if position is None:
            continue
        keyword = next((k.value for k in node.keywords if k.arg == "message"), None)
        if keyword is not None:
            found.append(keyword)
        elif len(node.args) > position:
            found.append(node.args[position])
    return found


def untranslated_errors(source: str, arguments: dict[str, int] = MESSAGE_ARGUMENT) -> list[str]:
    """``"line: text"`` for each error in ``source`` whose message has English outside the
    catalog: a literal or f-string message, or words joined around a translated part.
    ``arguments``: the calls that make a message, each with its message's place."""
    tree = ast.parse(source)
    marked = _marked_constants(tree)
    found = []
    for message in _messages(tree, arguments):
        words = _english_outside_gettext(message, marked)
        if isinstance(message, ast.JoinedStr) and not words:
            words = [ast.unparse(message)]
        found.extend(f"{message.lineno}: {text!r}" for text in words)
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
        'raise ContentError(shown, line, f"{key}: duplicate key")',
        'raise ContentError(shown, None, "no such folder")',
        'raise Refused(line, f"nested more than {MAX_DEPTH} levels deep")',
        'self.error(node, where, f"expected text, got {kind_of(node)}")',
        'ContentError(path, 1, field_message("id", "must not be empty"))',
        'EMPTY: Final = N_("the file is empty")\nraise ContentError(shown, 1, EMPTY)',
        'def url_problem(url):\n    return f"{url!r} has no host name"',
        'def kind_of(node):\n    return "a list" if node else _("text")',
    ]
    accepted = [
        'raise InputError("tp", _("must divide heads ({heads})").format(heads=heads))',
        'raise InputError("op", _("use {x}").format(x=", ".join(names)))',
        'raise InputError("v", _("at least {v}").format(v=f"{value:g}"))',
        "raise ProgressError(str(path), describe_os_error(error))",
        'raise LabError(gettext("the step failed"))',
        'raise InputError("op", _("use {x}").format(x=_(" or ").join(names)))',
        'raise ContentError(shown, line, field_message(key, _("duplicate key")))',
        'raise Refused(line, _("nested more than {depth} levels").format(depth=MAX_DEPTH))',
        'self.error(node, where, _("expected text, got {kind}").format(kind=kind_of(node)))',
        'self.error(node, f"{where}.sources", _("added material must name a source"))',
        'EMPTY: Final = N_("the file is empty")\nraise ContentError(shown, 1, _(EMPTY))',
        'def url_problem(url):\n    return _("{url!r} has no host name").format(url=url)',
        'def bad_character(text):\n    return ""',
        "parser.error(f'{flag} is not allowed')",
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


def test_check_content_prints_nothing_in_english_outside_the_catalog() -> None:
    """The summary line (``2 lesson files checked: all valid``) as well as each problem."""
    assert untranslated_errors(
        'print(f"{count} {noun} checked: all valid")', CHECK_CONTENT_ARGUMENT
    )
    source = (ROOT / "cli" / "content.py").read_text(encoding="utf-8")
    assert not untranslated_errors(source, CHECK_CONTENT_ARGUMENT)
