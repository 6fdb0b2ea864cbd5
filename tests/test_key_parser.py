"""The keys the terminal driver (tui/driver.py) makes of what a terminal sends: an escape and the
key after it, arriving in one read, are those two keys, in that order.

A terminal sends Escape as ESC, and alt+X as ESC X (xterm's ``metaSendsEscape``; the kitty
keyboard protocol reports alt as modifier 3, https://sw.kovidgoyal.net/kitty/keyboard-protocol/).
Textual 8.2.8's parser reads ESC X arriving within its escape delay as one key, so Escape then
``]`` sent together (``tmux send-keys Escape ]``, a fast typist over SSH) was ``]`` alone.
"""

from __future__ import annotations

import pytest
from textual import constants, events
from textual._xterm_parser import XTermParser

from tui.driver import EscapeFirstParser

ESCAPE = ("escape", "\x1b")


@pytest.fixture(autouse=True)
def no_escape_delay(monkeypatch: pytest.MonkeyPatch) -> None:
    """The parser's wait for what may follow an ESC ends at the next tick: a lone ESC is read
    without a test sleeping through the delay. Bytes fed at once are read before any tick, as
    bytes the driver read at once are."""
    monkeypatch.setattr(constants, "ESCAPE_DELAY", 0.0)


def parsed(*reads: str, parser: XTermParser | None = None) -> list[tuple[str, str | None]]:
    """(key, character) of each key, or ("paste", text), the parser makes of ``reads``, each
    fed at once and followed by a tick, as the driver's input thread does."""
    parser = parser or EscapeFirstParser()
    messages = []
    for data in reads:
        messages += [*parser.feed(data), *parser.tick()]
    return [
        (message.key, message.character)
        if isinstance(message, events.Key)
        else ("paste", message.text)
        for message in messages
        if isinstance(message, events.Key | events.Paste)
    ]


@pytest.mark.parametrize(
    ("data", "keys"),
    [
        # Textual: right_square_bracket alone, the escape dropped.
        ("\x1b]", [ESCAPE, ("right_square_bracket", "]")]),
        ("\x1b[", [ESCAPE, ("left_square_bracket", "[")]),
        ("\x1b?", [ESCAPE, ("question_mark", "?")]),
        # Textual: alt+a, alt+shift+a and alt+中, their character typed into a text box.
        ("\x1ba", [ESCAPE, ("a", "a")]),
        ("\x1bA", [ESCAPE, ("A", "A")]),
        ("\x1b中", [ESCAPE, ("中", "中")]),
        # Textual's table: ¡ (a Mac's option+1; 1 rates an objective), and enter.
        ("\x1b1", [ESCAPE, ("1", "1")]),
        ("\x1b\r", [ESCAPE, ("enter", "\r")]),
        # alt+up as xterm reports it; alt+a and alt+shift+a in the kitty protocol.
        ("\x1b[1;3A", [ESCAPE, ("up", None)]),
        ("\x1b[97;3u", [ESCAPE, ("a", "a")]),
        ("\x1b[97;4u", [ESCAPE, ("A", "A")]),
    ],
)
def test_an_escape_and_the_key_after_it_are_two_keys(
    data: str, keys: list[tuple[str, str | None]]
) -> None:
    assert parsed(data) == keys


@pytest.mark.parametrize(
    ("reads", "keys"),
    [
        (["\x1b"], [ESCAPE]),  # a lone Escape, once the escape delay is over
        (["\x1b", "]"], [ESCAPE, ("right_square_bracket", "]")]),
        (["\x1b[A"], [("up", None)]),
        (["\x1b\x1b[A"], [ESCAPE, ("up", None)]),
        (["\x1bOP"], [("f1", None)]),
        (["\x1b[27u"], [("escape", None)]),  # Escape in the kitty protocol
        (["]"], [("right_square_bracket", "]")]),
        (["\x1b[200~[a] 中\x1b[201~"], [("paste", "[a] 中")]),
        # The text fields' word keys, kept whole: alt+backspace and alt+delete delete a word,
        # ESC b and ESC f (iTerm's option+left/right) move by one.
        (["\x1b\x7f"], [("ctrl+w", None)]),
        (["\x1bb"], [("ctrl+left", None)]),
        (["\x1bf"], [("ctrl+right", None)]),
        (["\x1b[127;3u"], [("alt+backspace", None)]),
        (["\x1b[3;3~"], [("alt+delete", None)]),
    ],
)
def test_other_keys_and_pastes_are_read_as_textual_reads_them(
    reads: list[str], keys: list[tuple[str, str | None]]
) -> None:
    assert parsed(*reads) == keys
    assert parsed(*reads, parser=XTermParser()) == keys


# A paste holding escapes, as tmux's ``paste-buffer -p`` sends it (the ESC passed on raw):
# Textual's parser sent the text from an ESC to the next one as keys, its ESC as ``^``, before
# the paste, which lost it (``abc`` and this paste were saved as ``abc^[1mzx\ty``).
PASTED = "x\ty\x1b[1mz"
END_BACKSPACES_7B = [("end", None), ("backspace", "\x7f"), ("backspace", "\x7f"), ("7", "7")]


@pytest.mark.parametrize(
    ("reads", "messages"),
    [
        (
            [f"abc\x1b[200~{PASTED}\x1b[201~"],
            [("a", "a"), ("b", "b"), ("c", "c"), ("paste", PASTED)],
        ),
        (["\x1b[200~A\x1bB\x1b[201~"], [("paste", "A\x1bB")]),
        # A paste that ends in an ESC, or is one; a key right after it.
        (["\x1b[200~a\x1b\x1b[201~\x1b[A"], [("paste", "a\x1b"), ("up", None)]),
        (["\x1b[200~\x1b\x1b[201~"], [("paste", "\x1b")]),
        # An Escape typed just before the paste stays a key of its own.
        (["\x1b\x1b[200~\x1b]x\x1b[201~"], [ESCAPE, ("paste", "\x1b]x")]),
        # The paste, then End, two backspaces and 7 in the same read.
        (
            ["\x1b[200~\x1b[31mred\x1b[0m\x1b[201~\x1b[F\x7f\x7f7"],
            [("paste", "\x1b[31mred\x1b[0m"), *END_BACKSPACES_7B],
        ),
        # Split across reads anywhere after the start marker, its end marker too.
        (
            ["\x1b[200~x\x1b", "[1m", "y\x1b[20", "1~\x1b[F", "\x7f\x7f7"],
            [("paste", "x\x1b[1my"), *END_BACKSPACES_7B],
        ),
    ],
)
def test_a_paste_is_the_text_between_its_markers_escapes_included(
    reads: list[str], messages: list[tuple[str, str | None]]
) -> None:
    assert parsed(*reads) == messages
