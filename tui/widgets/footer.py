"""The footer, in the interface language.

A ``Binding``'s description is fixed when its class is defined, before the language is chosen,
so BINDINGS hold the English msgids (``strings.msgids``) and this footer translates each key's
description, tooltip and group label as it builds them (:mod:`engine.i18n`).
"""

from __future__ import annotations

from textual.app import ComposeResult
from textual.widgets import Footer as TextualFooter
from textual.widgets._footer import FooterKey, FooterLabel

from engine.i18n import gettext


class Footer(TextualFooter):
    """Textual's footer with every description looked up in the message catalog."""

    def compose(self) -> ComposeResult:
        for widget in super().compose():
            if isinstance(widget, FooterKey):
                widget.description = gettext(widget.description)
                if isinstance(widget.tooltip, str):
                    widget.tooltip = gettext(widget.tooltip)
            elif isinstance(widget, FooterLabel):
                widget.update(gettext(str(widget.content)))
            yield widget
