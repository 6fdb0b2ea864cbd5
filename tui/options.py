"""How the app opens, as the command line asks: options that cross from the ``cli`` package into
the interface (with :func:`tui.app.make_app`, the interface's one entry point)."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from typing import TYPE_CHECKING

from engine.timefmt import utc_now

if TYPE_CHECKING:
    # Only named: the quiz engine (fsrs, numpy) loads when the quiz opens, not with the app.
    from engine.quiz import Clock


@dataclass(frozen=True)
class QuizOptions:
    """How the quiz opens.

    Attributes:
        lesson: quiz only this lesson; None: every lesson in the content folder, one queue.
        due_only: only reviewed items that are due now (no new items).
        open_at_start: the app opens on the quiz screen (``shardbook quiz``).
        clock: the time source, timezone-aware (tests inject a fixed one).
        seed: seeds drill values and choice orders (None: random).
        tz: the learner's time zone for "today" and the times shown (None: this machine's).
    """

    lesson: str | None = None
    due_only: bool = False
    open_at_start: bool = False
    clock: Clock = utc_now
    seed: int | None = None
    tz: dt.tzinfo | None = None
