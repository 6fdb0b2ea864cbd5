"""Keys typed while shardbook starts reach the app as typed.

From the moment the shell starts the process until Textual's driver puts the terminal in raw
mode, the imports take a few hundred milliseconds, and the terminal is still in canonical
("cooked") mode: the kernel's line discipline echoes each key onto the shell's screen and edits
the pending line itself, so a backspace typed then erases the bytes of an arrow key instead of
reaching the app (POSIX.1-2017, General Terminal Interface, 11.1.6 "Canonical Mode Input
Processing"). :func:`hold_keys` turns canonical mode and echo off first thing, so the bytes wait
in the terminal's queue unchanged until the app reads them; the driver then restores the modes
from before (:func:`modes_before`) when the app ends, not the held ones.

No Textual import here: this runs before the app's modules are imported.
"""

from __future__ import annotations

import contextlib
import os
import termios
from typing import Any

# The terminal held, and its modes from before: (file descriptor, tcgetattr list).
_held: tuple[int, list[Any]] | None = None


def hold_keys(fd: int = 0) -> bool:
    """Turn off canonical input and echo on the terminal at ``fd`` (signals stay on: ctrl+c
    still interrupts the start-up), remembering its modes. Nothing happens when ``fd`` is not
    a terminal or keys are already held. Returns whether keys are held now."""
    global _held
    if _held is not None:
        return True
    try:
        if not os.isatty(fd):
            return False
        before = termios.tcgetattr(fd)
        held = termios.tcgetattr(fd)
        held[3] &= ~(termios.ICANON | termios.ECHO)
        held[6][termios.VMIN] = 1
        held[6][termios.VTIME] = 0
        termios.tcsetattr(fd, termios.TCSANOW, held)
    except (termios.error, OSError):
        return False
    _held = (fd, before)
    return True


def modes_before(fd: int) -> list[Any] | None:
    """The modes the terminal at ``fd`` had before :func:`hold_keys` (None when not held);
    the driver takes them over once, as what to restore at the end."""
    global _held
    if _held is None or _held[0] != fd:
        return None
    before = _held[1]
    _held = None
    return before


def release_keys() -> None:
    """Restore the modes from before :func:`hold_keys`, unless the driver took them over (a
    command that opened no app, or an app that failed before its driver started)."""
    global _held
    if _held is None:
        return
    fd, before = _held
    _held = None
    with contextlib.suppress(termios.error, OSError):
        termios.tcsetattr(fd, termios.TCSANOW, before)
