"""Control characters a learner pastes are drawn visibly, never sent to the terminal."""

from __future__ import annotations

from rich.segment import Segment
from textual.strip import Strip

from tui.widgets.literal import visible_controls


def test_escape_sequences_are_drawn_as_control_pictures() -> None:
    strip = Strip([Segment("clear \x1b[2J\x1b[H home"), Segment("      ")])
    shown = visible_controls(strip)
    text = "".join(segment.text for segment in shown)
    assert "\x1b" not in text
    assert text.startswith("clear \u241b[2J\u241b[H home")
    assert shown.cell_length == strip.cell_length


def test_plain_text_is_untouched() -> None:
    strip = Strip([Segment("[bold]x a[/ 训练 👩‍💻")])
    assert visible_controls(strip) is strip
