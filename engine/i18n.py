"""The interface's language: gettext message catalogs for Chinese (zh_CN) and English.

English is the source language: every interface text is written in English in the code (the
msgid) and looked up in the catalog of the current language when it is shown. The catalogs are
``engine/locale/<locale>/LC_MESSAGES/shardbook.po`` (the translations) compiled to ``.mo`` files
with Babel (README "Interface language"); both ship in the package. Lesson text, the sources'
titles and formulas never go through a catalog.

The language is chosen once per process (:func:`set_language`) from, in order: the ``--lang``
flag, the saved ``language`` setting, the locale (``LC_ALL``, ``LC_MESSAGES``, ``LANG``,
``LANGUAGE``, as :func:`language_from_environment` reads them). Code marks a text for the
catalog with :func:`N_` where it is defined (a module constant, a class attribute) and
translates it with :func:`gettext` where it is shown, so switching the language changes
every text read after the switch.
"""

from __future__ import annotations

import gettext as _gettext
import os
import re
import string
from collections.abc import Mapping
from pathlib import Path
from typing import Final

DOMAIN: Final = "shardbook"
LOCALE_DIR: Final = Path(__file__).with_name("locale")
"""``engine/locale``: one folder per locale, each with ``LC_MESSAGES/shardbook.mo``."""
LANGUAGES: Final = ("zh", "en")
"""The interface languages, as ``--lang`` and the ``language`` setting name them."""
DEFAULT_LANGUAGE: Final = "en"
SOURCE_LANGUAGE: Final = "en"
"""The language the msgids are written in."""
LOCALES: Final = {"zh": "zh_CN", "en": "en"}
"""Each language's catalog folder under :data:`LOCALE_DIR`."""
LANGUAGE_NAMES: Final = {"zh": "中文", "en": "English"}
"""Each language in its own words (the palette offers a switch to the other one by this name)."""
ENVIRONMENT_VARIABLES: Final = ("LANGUAGE", "LC_ALL", "LC_MESSAGES", "LANG")
"""Read in this order, the first one set and not empty deciding: the order of GNU gettext and
of Python's ``gettext.find`` (GNU's ``LANGUAGE`` list, then POSIX's ``LC_ALL`` over
``LC_MESSAGES`` over ``LANG``)."""

_translations: dict[str, _gettext.NullTranslations] = {}
_current: list[str] = [DEFAULT_LANGUAGE]


def _catalog(language: str) -> _gettext.NullTranslations:
    """The compiled catalog of ``language``; a missing ``.mo`` file (a checkout whose catalogs
    were never compiled) falls back to the English source texts.

    English is the source language and its catalog holds every msgid unchanged (a test checks
    it), so English looks nothing up: reading its 170 kB ``.mo`` file took 6 ms of every
    start-up. Its plural rule is English's, as ``NullTranslations`` has it (``n != 1``)."""
    if language not in _translations:
        if language == SOURCE_LANGUAGE:
            _translations[language] = _gettext.NullTranslations()
        else:
            _translations[language] = _gettext.translation(
                DOMAIN, LOCALE_DIR, languages=[LOCALES[language]], fallback=True
            )
    return _translations[language]


def set_language(language: str) -> None:
    """Make ``language`` (one of :data:`LANGUAGES`) the interface language of this process.

    Raises:
        ValueError: ``language`` is not one of :data:`LANGUAGES`.
    """
    if language not in LANGUAGES:
        raise ValueError(f"language: {language!r} is not one of {', '.join(LANGUAGES)}")
    _current[0] = language


def current_language() -> str:
    """The interface language now (``"zh"`` or ``"en"``)."""
    return _current[0]


def gettext(message: str) -> str:
    """``message`` (an English msgid) in the current language; itself when not in the catalog.
    The empty string stays empty (gettext would return the catalog's header)."""
    if not message:
        return message
    return _catalog(_current[0]).gettext(message)


def ngettext(singular: str, plural: str, count: int) -> str:
    """The form of a text for ``count`` things in the current language (English msgids:
    ``singular`` for 1, ``plural`` otherwise; the catalog's ``Plural-Forms`` rule chooses among
    its forms, one in Chinese)."""
    return _catalog(_current[0]).ngettext(singular, plural, count)


_HAN = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff]")
_LATIN = re.compile(r"[A-Za-z0-9]")
_FORMATTER = string.Formatter()


def _apart(left: str, right: str) -> bool:
    """Whether a Han character meets a Latin letter or digit where ``left`` ends and ``right``
    starts (Chinese sets a space there: 已将 Markdown 笔记)."""
    if not left or not right:
        return False
    a, b = left[-1], right[0]
    return bool((_HAN.match(a) and _LATIN.match(b)) or (_LATIN.match(a) and _HAN.match(b)))


def fill(template: str, /, **values: object) -> str:
    """``template.format(**values)``, with a space where a value and the text beside it meet as
    Han and Latin (Chinese spaces a Latin word from the Chinese around it): for a template
    whose values start with a Chinese word in one case and a Latin one in another
    (``已将{what}导出到``: 笔记（一个网页） / Markdown 笔记). Text that already has a space or
    punctuation there is kept as it is. Raises what ``str.format`` raises (KeyError for a
    missing value)."""
    out = ""
    for literal, field, spec, conversion in _FORMATTER.parse(template):
        if literal:
            out += " " + literal if _apart(out, literal) else literal
        if field is None:
            continue
        value, _ = _FORMATTER.get_field(field, (), values)
        value = _FORMATTER.convert_field(value, conversion)
        text = _FORMATTER.format_field(value, _FORMATTER.vformat(spec or "", (), values))
        out += " " + text if _apart(out, text) else text
    return out


def N_(message: str) -> str:
    """Mark ``message`` for the catalog without translating it now: it is translated where
    it is shown (a module constant or a class attribute is defined before the language is
    chosen)."""
    return message


def language_from_locale(value: str) -> str | None:
    """The interface language a locale name asks for: ``zh_CN.UTF-8``, ``zh_TW``, ``zh`` ->
    ``"zh"``; ``en_US.UTF-8``, ``C``, ``POSIX`` -> ``"en"``; ``""`` or a language without a
    catalog -> None. A ``LANGUAGE`` list (``zh_CN:en``) gives its first language with one."""
    for entry in value.split(":"):
        name = entry.split(".")[0].split("@")[0].strip().lower()
        if not name:
            continue
        if name in ("c", "posix"):
            return "en"
        base = name.replace("-", "_").split("_")[0]
        if base in LANGUAGES:
            return base
    return None


def language_from_environment(environ: Mapping[str, str] | None = None) -> str | None:
    """The language the locale variables ask for (:data:`ENVIRONMENT_VARIABLES`, in order), or
    None when none is set or none names a language with a catalog."""
    environ = os.environ if environ is None else environ
    for variable in ENVIRONMENT_VARIABLES:
        value = environ.get(variable, "")
        if value:
            return language_from_locale(value)
    return None


def choose_language(
    flag: str | None, setting: str | None, environ: Mapping[str, str] | None = None
) -> str:
    """The interface language: ``--lang`` (``flag``), else the saved setting (``"auto"``: none
    chosen), else the locale, else English."""
    for choice in (flag, setting):
        if choice in LANGUAGES:
            return choice
    return language_from_environment(environ) or DEFAULT_LANGUAGE
