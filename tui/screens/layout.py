"""The main screen's layout rules, apart from the screen: which layout a terminal's size gets
and which panes each layout state puts on screen. Pure functions of the state, so the rules are
tested without a screen; :class:`tui.screens.main.MainScreen` holds the state in reactive
attributes and applies :func:`arrange`'s answer with CSS classes.

- wide (120 columns and more): outline | lesson | side pane;
- medium (80-119): the lesson alone, at least 76 columns wide at 80; the outline opens over it
  (ctrl+o), the side pane beside it when asked for (F2-F4, F10, ctrl+l, F6);
- narrow (under 80): one pane at a time, the lesson or the side pane (F6 switches);
- too small (under :data:`MIN_WIDTH` x :data:`MIN_HEIGHT`): one line saying the size needed.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, get_args

from rich.cells import cell_len

from tui import strings

# The outline's first entry: the lesson's header page, before its sections.
META_ID = "__meta__"
WIDE_WIDTH = 120
MEDIUM_WIDTH = 80
MIN_WIDTH = 40
MIN_HEIGHT = 10

SizeClass = Literal["wide", "medium", "narrow", "too-small"]
SIZE_CLASSES: tuple[SizeClass, ...] = get_args(SizeClass)
SidePreference = Literal["auto", "shown", "hidden"]


def size_class(width: int, height: int) -> SizeClass:
    """The layout for a terminal of ``width`` x ``height`` cells (see module docstring)."""
    if width < MIN_WIDTH or height < MIN_HEIGHT:
        return "too-small"
    if width < MEDIUM_WIDTH:
        return "narrow"
    return "medium" if width < WIDE_WIDTH else "wide"


def too_small_message(width: int, height: int) -> str:
    """One line saying the size needed: the longest wording that fits ``width`` columns (by
    terminal cells: a Chinese character takes two)."""
    need, now = f"{MIN_WIDTH}x{MIN_HEIGHT}", f"{width}x{height}"
    wordings = [wording.format(need=need, now=now) for wording in strings.TOO_SMALL]
    return next((text for text in wordings if cell_len(text) <= width), wordings[-1])


@dataclass(frozen=True)
class Arrangement:
    """What is on screen: the outline (a column, over the lesson, or not at all), the lesson,
    the side pane, or only the too-small message."""

    outline: Literal["column", "overlay", "hidden"]
    reading: bool
    side: bool
    too_small: bool = False


def arrange(
    size: SizeClass, side_shown: bool, reading_mode: bool, zoomed: bool, outline_open: bool
) -> Arrangement:
    """The panes on screen for a layout state. Zoom (the side pane alone) wins over reading mode
    (the lesson alone); on a narrow screen the side pane replaces the lesson."""
    if size == "too-small":
        return Arrangement("hidden", False, False, too_small=True)
    overlay: Literal["overlay", "hidden"] = "overlay" if outline_open else "hidden"
    if zoomed:
        return Arrangement(overlay, reading=False, side=True)
    if reading_mode:
        return Arrangement(overlay, reading=True, side=False)
    if size == "wide":
        return Arrangement("column", reading=True, side=side_shown)
    if size == "narrow":
        return Arrangement(overlay, reading=not side_shown, side=side_shown)
    return Arrangement(overlay, reading=True, side=side_shown)


def side_default(size: SizeClass, preference: SidePreference) -> bool:
    """Whether the side pane shows when the screen takes layout ``size``: on a narrow screen the
    lesson comes first; elsewhere the learner's F6 choice, and by default only where the lesson
    keeps its room (wide)."""
    if size == "narrow":
        return False
    if preference == "auto":
        return size == "wide"
    return preference == "shown"
