"""Data down, messages up (README "Architecture"): no widget or screen of the interface reaches up
into the app or the screen above it for their own state or methods. A pane gets the lesson and
the progress handed down by its owner, and tells its owner of a change by a message or through a
callback it was given; it uses only the public API Textual gives every App, Screen and Widget
(``notify``, ``push_screen``, ``run_action``, ``size``...).

Each class of ``tui.widgets`` and ``tui.screens`` that is a Textual node is read as source, and
every ``self.app.NAME``, ``self.screen.NAME``, ``self.parent.NAME`` and ``self.app.screen.NAME``
(also through ``getattr``) must name an attribute of Textual's ``App``, ``Screen`` or ``Widget``;
``cast(..., self.app)`` (reading the app as this project's app) is refused outright.
"""

from __future__ import annotations

import ast
import importlib
import inspect
import pkgutil
import textwrap

import pytest
from textual.app import App
from textual.dom import DOMNode
from textual.screen import Screen
from textual.widget import Widget

import tui.screens
import tui.widgets


def _public(node: object) -> frozenset[str]:
    """The public names of a Textual object, its instance attributes (``App.console``)
    included."""
    return frozenset(name for name in dir(node) if not name.startswith("_"))


# What each ancestor offers every node: Textual's public API, nothing of this project's.
ALLOWED = {
    "app": _public(App()),
    "screen": _public(Screen()),
    "parent": _public(Widget()),
}


def _ancestor(node: ast.expr) -> str | None:
    """``"app"``, ``"screen"`` or ``"parent"`` when ``node`` is ``self.app``, ``self.screen``,
    ``self.parent`` or ``self.app.screen``; else None."""
    if not isinstance(node, ast.Attribute):
        return None
    if isinstance(node.value, ast.Name) and node.value.id == "self" and node.attr in ALLOWED:
        return node.attr
    if node.attr == "screen" and _ancestor(node.value) == "app":
        return "screen"
    return None


def reaches_up(source: str) -> list[str]:
    """Each place in ``source`` (a class's code) where it uses an ancestor's own attribute:
    ``"line: self.app.lesson"``."""
    found = []
    for node in ast.walk(ast.parse(textwrap.dedent(source))):
        name: str | None = None
        target: ast.expr | None = None
        if isinstance(node, ast.Attribute):
            target, name = node.value, node.attr
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            args = node.args
            if node.func.id in ("getattr", "hasattr") and len(args) >= 2:
                if isinstance(args[1], ast.Constant) and isinstance(args[1].value, str):
                    target, name = args[0], args[1].value
            elif node.func.id == "cast" and len(args) == 2 and _ancestor(args[1]) == "app":
                found.append(f"{node.lineno}: cast(..., self.app)")
                continue
        if target is None or name is None:
            continue
        ancestor = _ancestor(target)
        if ancestor is None or name in ALLOWED[ancestor]:
            continue
        # self.app.screen is itself an ancestor, checked as one.
        if ancestor == "app" and name == "screen":
            continue
        found.append(f"{node.lineno}: self.{ancestor}.{name}")
    return sorted(found, key=lambda place: int(place.split(":")[0]))


def _node_classes() -> list[type[DOMNode]]:
    classes: list[type[DOMNode]] = []
    for package in (tui.widgets, tui.screens):
        for info in pkgutil.iter_modules(package.__path__, prefix=f"{package.__name__}."):
            module = importlib.import_module(info.name)
            classes.extend(
                cls
                for _name, cls in inspect.getmembers(module, inspect.isclass)
                if cls.__module__ == module.__name__ and issubclass(cls, DOMNode)
            )
    return classes


def test_the_check_finds_each_way_up() -> None:
    source = """
    class Pane(Widget):
        def on_mount(self):
            self.show(self.app.lesson, getattr(self.app, "progress", None))
            cast("ShardbookApp", self.app).save_now()
            self.screen.go_to_step("x")
            getattr(self.app.screen, "go_to_step")("x")
            self.parent.load_notes()
            self.app.notify("fine")
            self.app.push_screen(self.screen.focused)
    """
    assert reaches_up(source) == [
        "4: self.app.lesson",
        "4: self.app.progress",
        "5: cast(..., self.app)",
        "6: self.screen.go_to_step",
        "7: self.screen.go_to_step",
        "8: self.parent.load_notes",
    ]


def test_the_interface_has_widgets_and_screens_to_check() -> None:
    names = {cls.__name__ for cls in _node_classes()}
    assert {"MainScreen", "QuizScreen", "PlanScreen", "DiagramsPane", "TradeoffsPane"} <= names
    assert {"CalculatorPane", "ExerciseItem", "PaneExercises", "LazyTabPane"} <= names


@pytest.mark.parametrize("cls", _node_classes(), ids=lambda cls: cls.__qualname__)
def test_no_widget_or_screen_reaches_up(cls: type[DOMNode]) -> None:
    """Where one is found: hand the value down (a constructor argument, ``show_lesson``) or
    tell the owner with a message or a callback it gave (see README "Architecture")."""
    assert reaches_up(inspect.getsource(cls)) == []
