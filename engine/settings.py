"""The learner's settings: one ``settings.yaml`` in the progress folder.

Everything the app remembers that is not a lesson's progress lives here: layout choices, the
theme, the interface language, review settings and where each lesson was left (resume state).
Each setting is declared once in :data:`SETTINGS` with its default and a check; a value that
fails its check (hand-edited, or written by an older shardbook) is ignored in favour of the
default and reported, never a crash. Keys this version does not know are kept as they are, so a
newer shardbook's settings survive a round trip through an older one.

The file is written like a progress file (``engine.progress.atomic_write_text``: temp file,
fsync, ``os.replace``), and only by the window that holds the progress folder's lock: a
read-only second window keeps its changes in memory (the app checks ``ProgressStore.read_only``
before :meth:`SettingsStore.save`). A file that cannot be parsed is moved aside under a
timestamped name and reported, like a progress file.

File layout (``schema_version: 1``)::

    schema_version: 1
    layout: {side: auto | shown | hidden, reading: false}
    hints: {first_run_seen: true}
    theme: textual-dark
    language: auto
    review: {desired_retention: 0.9}
    resume: {S15: {section: core, block: 4, line: 2, side_tab: diagrams, ...}}
    ...any other key declared in SETTINGS, dotted names nested as mappings...
"""

from __future__ import annotations

import copy
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from engine.errors import ProgressError
from engine.i18n import LANGUAGES
from engine.i18n import gettext as _
from engine.progress import atomic_write_text, describe_os_error, dump_yaml
from engine.resume import is_resume_setting
from engine.timefmt import file_stamp, utc_now
from engine.yaml_cache import YamlSyntaxError, load_yaml, parse_yaml, remember

SETTINGS_NAME = "settings.yaml"
SETTINGS_SCHEMA_VERSION = 1


@dataclass(frozen=True)
class SettingSpec:
    """One setting.

    Attributes:
        key: dotted name (``"layout.side"``); each dot is one level of mapping in the file.
        default: the value when the file has none, or a value that fails ``check``.
        check: True for an acceptable value.
        description: what it holds, for ``shardbook where`` and the README.
    """

    key: str
    default: Any
    check: Callable[[Any], bool]
    description: str


def _is_bool(value: Any) -> bool:
    return isinstance(value, bool)


def _is_text(value: Any) -> bool:
    return isinstance(value, str) and 0 < len(value) <= 200


def one_of(*choices: str) -> Callable[[Any], bool]:
    """A check accepting exactly ``choices``."""
    return lambda value: isinstance(value, str) and value in choices


def number_between(low: float, high: float) -> Callable[[Any], bool]:
    """A check accepting an int or float (not a bool) in ``[low, high]``."""
    return lambda value: (
        isinstance(value, int | float) and not isinstance(value, bool) and low <= value <= high
    )


DESIRED_RETENTION_DEFAULT = 0.9
"""py-fsrs 6's ``Scheduler`` default desired retention (tests/test_quiz.py checks it against the
library, which is not imported here: the settings load before the first frame)."""
DESIRED_RETENTION_RANGE = (0.70, 0.97)
"""The range FSRS's authors allow for desired retention (open-spaced-repetition/fsrs4anki,
docs/tutorial.md, "Step 2: Configure FSRS settings"): above it the workload grows steeply, below
it most reviews are lapses."""

SETTINGS: tuple[SettingSpec, ...] = (
    SettingSpec(
        "layout.side",
        "auto",
        one_of("auto", "shown", "hidden"),
        "side pane (F6): auto shows it only where the lesson keeps 60 columns beside it",
    ),
    SettingSpec(
        "layout.reading", False, _is_bool, "reading mode (F7): the lesson takes the screen"
    ),
    SettingSpec("theme", "textual-dark", _is_text, "Textual theme name (ctrl+p: Change theme)"),
    SettingSpec(
        "language",
        "auto",
        one_of("auto", *LANGUAGES),
        "interface language: zh, en, or auto (the locale: LANGUAGE, LC_ALL, LC_MESSAGES, LANG); "
        "--lang overrides it, the palette's language command saves it",
    ),
    SettingSpec(
        "hints.first_run_seen", False, _is_bool, "the first-run hint (five keys) was shown"
    ),
    SettingSpec(
        "resume",
        {},
        is_resume_setting,
        "per lesson id: where it was left (section, scroll, side tab, pane choices; "
        "engine/resume.py)",
    ),
    SettingSpec(
        "review.desired_retention",
        DESIRED_RETENTION_DEFAULT,
        number_between(*DESIRED_RETENTION_RANGE),
        "FSRS desired retention (0.70-0.97): the chance of recall at which a review falls due; "
        "higher means shorter intervals and more reviews",
    ),
)
_SPECS = {spec.key: spec for spec in SETTINGS}


def _lookup(data: dict[str, Any], key: str) -> tuple[bool, Any]:
    node: Any = data
    for part in key.split("."):
        if not isinstance(node, dict) or part not in node:
            return False, None
        node = node[part]
    return True, node


class Settings:
    """The settings as loaded: read with :meth:`get`, change with :meth:`set`.

    ``problems`` lists, in plain words, each value that was ignored because it failed its
    check. ``changed`` is True after a :meth:`set` that changed a value, until the next save.
    """

    def __init__(self, data: dict[str, Any] | None = None) -> None:
        self._data: dict[str, Any] = copy.deepcopy(data) if data else {}
        self.problems: list[str] = []
        self.changed = False
        for spec in SETTINGS:
            found, value = _lookup(self._data, spec.key)
            if found and not spec.check(value):
                self.problems.append(
                    _("{key}: {value!r} is not accepted; using the default").format(
                        key=spec.key, value=value
                    )
                )
                self._remove(spec.key)

    def get(self, key: str) -> Any:
        """The value of setting ``key`` (a copy of a mapping, so edits go through :meth:`set`).

        Raises:
            KeyError: ``key`` is not declared in :data:`SETTINGS`.
        """
        spec = _SPECS[key]
        found, value = _lookup(self._data, key)
        return copy.deepcopy(value if found else spec.default)

    def set(self, key: str, value: Any) -> None:
        """Change setting ``key``.

        Raises:
            KeyError: ``key`` is not declared in :data:`SETTINGS`.
            ValueError: ``value`` fails the setting's check.
        """
        spec = _SPECS[key]
        if not spec.check(value):
            raise ValueError(f"{key}: {value!r} is not accepted")
        if self.get(key) == value:
            return
        *parents, last = key.split(".")
        node = self._data
        for part in parents:
            child = node.get(part)
            if not isinstance(child, dict):
                child = node[part] = {}
            node = child
        node[last] = copy.deepcopy(value)
        self.changed = True

    def _remove(self, key: str) -> None:
        *parents, last = key.split(".")
        node: Any = self._data
        for part in parents:
            node = node[part]
        del node[last]

    def to_data(self) -> dict[str, Any]:
        """The YAML document: ``schema_version`` first, then every key kept or set."""
        return {"schema_version": SETTINGS_SCHEMA_VERSION, **copy.deepcopy(self._data)}


def saved_language(folder: Path | str) -> str | None:
    """The ``language`` setting saved in ``folder`` (``zh`` or ``en``), read without writing or
    moving anything in the folder (a headless command only reads it; the file's parsed data may
    be kept in the cache, :mod:`engine.yaml_cache`); None when there is no file, the setting is
    ``auto``, or the file or the value cannot be read (the app reports those when it opens)."""
    path = Path(folder) / SETTINGS_NAME
    try:
        data = load_yaml(path.read_bytes().decode("utf-8-sig"), path)
    except (OSError, UnicodeDecodeError, YamlSyntaxError, RecursionError):
        return None
    language = data.get("language") if isinstance(data, dict) else None
    return language if language in LANGUAGES else None


class SettingsStore:
    """Reads and writes ``settings.yaml`` in one folder (the progress folder)."""

    def __init__(self, folder: Path | str) -> None:
        self.folder = Path(folder)
        # Set by load() when the file came from a newer shardbook: never written over.
        self._newer = False

    @property
    def path(self) -> Path:
        return self.folder / SETTINGS_NAME

    def load(self) -> Settings:
        """The settings on disk; defaults when there is no file.

        A file that is not valid YAML, or not a mapping, is moved aside as
        ``settings.yaml.unreadable-<UTC stamp>`` and reported in ``problems``. A file of a
        newer ``schema_version`` is read for the keys this version knows and never written over
        (:meth:`save` refuses).

        Raises:
            ProgressError: the file exists but cannot be opened, or cannot be moved aside.
        """
        try:
            raw = self.path.read_bytes()
        except FileNotFoundError:
            return Settings()
        except OSError as error:
            raise ProgressError(str(self.path), describe_os_error(error)) from None
        try:
            data = load_yaml(raw.decode("utf-8-sig"), self.path)
        except (UnicodeDecodeError, YamlSyntaxError, RecursionError):
            data = None
        if data is None and not raw.strip():
            return Settings()
        if not isinstance(data, dict):
            aside = self._quarantine()
            settings = Settings()
            settings.problems.append(
                _(
                    "{file} could not be read; it was kept as {aside} and the defaults are used"
                ).format(file=self.path.name, aside=aside.name)
            )
            return settings
        version = data.pop("schema_version", SETTINGS_SCHEMA_VERSION)
        settings = Settings(data)
        if not isinstance(version, int) or version > SETTINGS_SCHEMA_VERSION:
            settings.problems.append(
                _("{file} was written by a newer shardbook; it will not be saved over").format(
                    file=self.path.name
                )
            )
            self._newer = True
        return settings

    def save(self, settings: Settings) -> None:
        """Write ``settings`` atomically (temp file, fsync, ``os.replace``).

        Raises:
            ProgressError: the folder refuses the write, or the file was written by a newer
                shardbook.
        """
        if self._newer:
            raise ProgressError(str(self.path), _("written by a newer shardbook; not saved over"))
        data = settings.to_data()
        text = dump_yaml(data)
        try:
            atomic_write_text(self.path, text)
        except OSError as error:
            raise ProgressError(str(self.path), describe_os_error(error)) from None
        settings.changed = False
        if parse_yaml(text) == data:  # kept for the next start only as the text reads back
            remember(self.path, text, data)

    def _quarantine(self) -> Path:
        stamp = file_stamp(utc_now())
        aside = self.path.with_name(f"{SETTINGS_NAME}.unreadable-{stamp}")
        try:
            os.replace(self.path, aside)
        except OSError as error:
            raise ProgressError(
                str(self.path),
                _("is unreadable and could not be moved aside ({reason})").format(
                    reason=describe_os_error(error)
                ),
            ) from None
        return aside
