"""The start-up holds typed keys unedited (tui/terminal.py), on a real pseudo-terminal."""

from __future__ import annotations

import os
import pty
import termios
from collections.abc import Iterator

import pytest

from tui import terminal

pytestmark = pytest.mark.skipif(not hasattr(os, "openpty"), reason="needs POSIX ptys")

CANONICAL_AND_ECHO = termios.ICANON | termios.ECHO


@pytest.fixture
def pty_fd() -> Iterator[int]:
    """The terminal side of a new pty, in the modes a shell leaves (canonical, echo)."""
    master, slave = pty.openpty()
    try:
        yield slave
    finally:
        terminal.release_keys()
        os.close(master)
        os.close(slave)


def test_holding_turns_canonical_input_and_echo_off_and_release_restores(pty_fd: int) -> None:
    before = termios.tcgetattr(pty_fd)
    assert before[3] & CANONICAL_AND_ECHO == CANONICAL_AND_ECHO
    assert terminal.hold_keys(pty_fd)
    held = termios.tcgetattr(pty_fd)
    assert held[3] & CANONICAL_AND_ECHO == 0
    assert held[3] & termios.ISIG, "ctrl+c still interrupts the start-up"
    assert terminal.hold_keys(pty_fd), "holding twice is holding"
    terminal.release_keys()
    assert termios.tcgetattr(pty_fd) == before


def test_the_driver_takes_the_modes_from_before_once(pty_fd: int) -> None:
    before = termios.tcgetattr(pty_fd)
    terminal.hold_keys(pty_fd)
    assert terminal.modes_before(pty_fd + 1000) is None, "another terminal's modes"
    assert terminal.modes_before(pty_fd) == before
    assert terminal.modes_before(pty_fd) is None
    # Taken over: the release leaves the modes to the driver (the held ones stay for now).
    terminal.release_keys()
    assert termios.tcgetattr(pty_fd)[3] & CANONICAL_AND_ECHO == 0


def test_nothing_is_held_on_what_is_not_a_terminal() -> None:
    read_end, write_end = os.pipe()
    try:
        assert not terminal.hold_keys(read_end)
        assert terminal.modes_before(read_end) is None
    finally:
        os.close(read_end)
        os.close(write_end)
