"""Stylesheets added to the app's when first needed, not parsed before the first frame.

``app.tcss`` (the App's ``CSS_PATH``) holds what the first screen and every screen need; the side
panes' rules (``side.tcss``) and the quiz's (``quiz.tcss``) are added when the first side pane is
built and when the quiz first opens. They are added as the app's own CSS, not as a widget's
``DEFAULT_CSS`` (Textual parses that when the class's first widget is mounted too, but ranks every
default rule below every app rule, so a rule moved there could lose to one of ``app.tcss``):
after ``app.tcss`` in the stylesheet's order, with the same precedence. Textual parses a new
source alone (the others' rules are cached) and styles the widgets mounted after it; none of
these rules matches a widget mounted before.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from textual.app import App

STYLES = Path(__file__).resolve().parent
SIDE_PANES = "side.tcss"
QUIZ = "quiz.tcss"


def use_stylesheet(app: App[Any], name: str) -> None:
    """Add ``tui/<name>`` to ``app``'s stylesheet, once (Textual's ``Stylesheet.add_source``).

    Raises:
        OSError: the file cannot be read (it ships with the package).
    """
    path = STYLES / name
    if app.stylesheet.has_source(str(path)):
        return
    css = path.read_text(encoding="utf-8")
    app.stylesheet.add_source(css, read_from=(str(path), ""), is_default_css=False)
