"""Merging two windows' progress field by field: what this window changed keeps its text, the
rest takes the disk's (module docstring of :mod:`engine.progress`).
"""

from __future__ import annotations

from typing import Any

_MISSING = object()


def _merge_maps(base: dict[str, Any], mine: dict[str, Any], disk: dict[str, Any]) -> dict[str, Any]:
    """Per key: this instance's value where it changed it since ``base``, else the disk's."""
    merged: dict[str, Any] = {}
    for key in dict.fromkeys([*disk, *mine, *base]):
        ours = mine.get(key, _MISSING)
        value = ours if ours != base.get(key, _MISSING) else disk.get(key, _MISSING)
        if value is not _MISSING:
            merged[key] = value
    return merged


def merge_progress(
    base: dict[str, Any], mine: dict[str, Any], disk: dict[str, Any]
) -> dict[str, Any]:
    """Three-way merge of progress documents (:meth:`LessonProgress.to_data` layout).

    ``base`` is what this instance loaded, ``mine`` what it holds now, ``disk`` what another
    instance saved meanwhile. Text maps (answers, reflections, notes), forms, figures, quiz,
    looked-first marks and quiz drafts merge per id; ratings per objective and phase; revealed
    and read ids are united; the session logs are joined (:func:`_merge_sessions`); status keeps
    this instance's change, if any.
    """
    merged = dict(disk)
    for key in ("answers", "reflections", "notes", "forms", "figures", "quiz", "looked", "drafts"):
        merged[key] = _merge_maps(base.get(key) or {}, mine.get(key) or {}, disk.get(key) or {})
    for key in ("revealed", "read"):
        united = list(disk.get(key) or [])
        united += [x for x in mine.get(key) or [] if x not in united]
        merged[key] = united
    merged["ratings"] = _merge_ratings(
        base.get("ratings") or {}, mine.get("ratings") or {}, disk.get("ratings") or {}
    )
    merged["sessions"] = _merge_sessions(
        base.get("sessions") or [], mine.get("sessions") or [], disk.get("sessions") or []
    )
    if mine.get("status") != base.get("status"):
        merged["status"] = mine.get("status")
    return merged


def _merge_ratings(
    base: dict[str, dict[str, str]], mine: dict[str, dict[str, str]], disk: dict[str, Any]
) -> dict[str, dict[str, str]]:
    """Per objective and phase: this instance's rating where it changed it, else the disk's."""
    merged: dict[str, dict[str, str]] = {}
    for objective_id in dict.fromkeys([*disk, *mine, *base]):
        rating = _merge_maps(
            base.get(objective_id) or {}, mine.get(objective_id) or {}, disk.get(objective_id) or {}
        )
        if rating:
            merged[objective_id] = rating
    return merged


def _merge_sessions(
    base: list[dict[str, Any]], mine: list[dict[str, Any]], disk: list[dict[str, Any]]
) -> list[dict[str, Any]]:
    """The disk's session log plus this instance's new or updated entries, by start time.

    An instance updates its own session's entry as it goes (same ``start``): an entry it
    updated replaces the version it had loaded or saved before; every other window's entry is
    kept, so two windows' sessions are both logged.
    """
    merged = list(disk)
    for entry in mine:
        if entry in base:
            continue
        older = [old for old in base if old["start"] == entry["start"]]
        merged = [kept for kept in merged if kept not in older]
        if entry not in merged:
            merged.append(entry)
    return sorted(merged, key=lambda entry: str(entry["start"]))
