"""Where a lesson was left: the section, the scroll position, the side tab and each side pane's
choices, kept per lesson in ``settings.yaml`` under ``resume.<lesson id>``.

Stored per lesson (every key optional)::

    resume:
      S15:
        section: core            # the section read last (__meta__: the lesson's header)
        block: 4                 # the reading pane's top: its 5th block (0-based) ...
        line: 2                  # ... from its 3rd line, so a resize keeps the same paragraph
        side_tab: diagrams       # ledger, bubble, diagrams, collectives, tradeoffs or lab
        side_shown: true         # the side pane was on screen ...
        side_size: medium        # ... at this layout (wide, medium): restored at the same one
        side_scroll: 12          # the side tab's scroll position (lines from its top)
        zoomed: true             # F5: the side pane had the whole screen (absent: it had not)
        focus: strategy          # the focused widget, or its nearest pane, by id
        panes:
          diagrams: {strategy: fsdp}
          tradeoffs: {link: 400gbps, world: '16', model: lesson-1b, batch: '64', seq: '2048'}
          collectives: {step: 3}

The calculators' forms (the Ledger, Bubble's schedule and sizes, Collectives' operation,
algorithm and ranks) are not here: they are the learner's work and live in the lesson's progress
file. Each key has a check (:data:`FIELD_CHECKS`, :data:`PANE_CHOICES`); :func:`is_resume_setting`
is the setting's check in :data:`engine.settings.SETTINGS`, and :meth:`ResumeState.from_data`
reads one lesson's entry, leaving out any value that fails its check. Whether a value still
means something (a section removed from the lesson, a strategy renamed) is for the app to judge
when it restores it: such a value falls back to the default without a word.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Final

SIDE_TABS: Final = ("ledger", "bubble", "diagrams", "collectives", "tradeoffs", "lab")
"""The side pane's tabs, by id."""
SIDE_SIZES: Final = ("wide", "medium")
"""The layouts (``tui.screens.layout.size_class``) where the side pane is shown or hidden by
choice (narrower, the lesson comes first)."""
MAX_BLOCK: Final = 100_000
MAX_LINE: Final = 1_000_000
MAX_STEP: Final = 100_000
_NAME: Final = re.compile(r"^[A-Za-z0-9_.:-]{1,100}$")
_LESSON_ID: Final = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_-]{0,63}$")


def _is_name(value: Any) -> bool:
    return isinstance(value, str) and bool(_NAME.match(value))


def _whole(high: int) -> Callable[[Any], bool]:
    return lambda value: (
        isinstance(value, int) and not isinstance(value, bool) and 0 <= value <= high
    )


def _is_bool(value: Any) -> bool:
    return isinstance(value, bool)


FIELD_CHECKS: Final[Mapping[str, Callable[[Any], bool]]] = {
    "section": _is_name,
    "block": _whole(MAX_BLOCK),
    "line": _whole(MAX_LINE),
    "side_tab": lambda value: isinstance(value, str) and value in SIDE_TABS,
    "side_shown": _is_bool,
    "side_size": lambda value: isinstance(value, str) and value in SIDE_SIZES,
    "side_scroll": _whole(MAX_LINE),
    "zoomed": _is_bool,
    "focus": _is_name,
}
"""Each top-level key of a lesson's entry and its check (``panes`` is checked per pane)."""

PANE_CHOICES: Final[Mapping[str, Mapping[str, Callable[[Any], bool]]]] = {
    "diagrams": {"strategy": _is_name},
    "tradeoffs": {
        "link": _is_name,
        "world": _is_name,
        "model": _is_name,
        "batch": _is_name,
        "seq": _is_name,
    },
    "collectives": {"step": _whole(MAX_STEP)},
}
"""Per side pane, each choice kept and its check."""


def _checked_panes(value: Any) -> dict[str, dict[str, Any]]:
    """The pane choices of ``value`` that pass their checks (others left out)."""
    if not isinstance(value, dict):
        return {}
    panes: dict[str, dict[str, Any]] = {}
    for pane, checks in PANE_CHOICES.items():
        raw = value.get(pane)
        if not isinstance(raw, dict):
            continue
        kept = {key: raw[key] for key, check in checks.items() if key in raw and check(raw[key])}
        if kept:
            panes[pane] = kept
    return panes


def _entry_ok(value: Any) -> bool:
    if not isinstance(value, dict) or not all(isinstance(key, str) for key in value):
        return False
    for key, check in FIELD_CHECKS.items():
        if key in value and not check(value[key]):
            return False
    panes = value.get("panes", {})
    if not isinstance(panes, dict):
        return False
    for pane, checks in PANE_CHOICES.items():
        raw = panes.get(pane, {})
        if not isinstance(raw, dict):
            return False
        if any(key in raw and not check(raw[key]) for key, check in checks.items()):
            return False
    return True


def is_resume_setting(value: Any) -> bool:
    """The check of setting ``resume``: a mapping from lesson ids to entries whose every known
    key passes its check (keys a newer shardbook may add are kept, unchecked)."""
    return isinstance(value, dict) and all(
        isinstance(lesson_id, str) and bool(_LESSON_ID.match(lesson_id)) and _entry_ok(entry)
        for lesson_id, entry in value.items()
    )


@dataclass(frozen=True)
class ResumeState:
    """Where one lesson was left (see module docstring); ``""``/``None`` where not known."""

    section: str = ""
    block: int = 0
    line: int = 0
    side_tab: str = ""
    side_shown: bool | None = None
    side_size: str = ""
    side_scroll: int = 0
    zoomed: bool = False
    focus: str = ""
    panes: Mapping[str, Mapping[str, Any]] = field(default_factory=dict)

    @classmethod
    def from_data(cls, data: Any) -> ResumeState:
        """One lesson's entry as stored; a value that fails its check is left out (the
        default is used), and anything but a mapping gives the defaults."""
        if not isinstance(data, dict):
            return cls()
        ok = {
            key: data[key]
            for key, check in FIELD_CHECKS.items()
            if key in data and check(data[key])
        }
        return cls(
            section=ok.get("section", ""),
            block=ok.get("block", 0),
            line=ok.get("line", 0),
            side_tab=ok.get("side_tab", ""),
            side_shown=ok.get("side_shown"),
            side_size=ok.get("side_size", ""),
            side_scroll=ok.get("side_scroll", 0),
            zoomed=ok.get("zoomed", False),
            focus=ok.get("focus", ""),
            panes=_checked_panes(data.get("panes")),
        )

    def to_data(self) -> dict[str, Any]:
        """The entry to store: only the keys that are known, each passing its check.

        Raises:
            ValueError: a value fails its check (a bug in the caller, never the learner's).
        """
        data: dict[str, Any] = {}
        candidates = {
            "section": self.section or None,
            "block": self.block,
            "line": self.line,
            "side_tab": self.side_tab or None,
            "side_shown": self.side_shown,
            "side_size": self.side_size or None,
            "side_scroll": self.side_scroll or None,
            "zoomed": self.zoomed or None,
            "focus": self.focus or None,
        }
        for key, value in candidates.items():
            if value is None:
                continue
            if not FIELD_CHECKS[key](value):
                raise ValueError(f"resume {key}: {value!r} is not accepted")
            data[key] = value
        panes = {pane: dict(choices) for pane, choices in self.panes.items() if choices}
        if panes:
            if _checked_panes(panes) != panes:
                raise ValueError(f"resume panes: {panes!r} is not accepted")
            data["panes"] = panes
        return data
