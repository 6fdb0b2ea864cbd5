"""Shared test settings.

Hypothesis's per-example deadline is a timing assertion: on a loaded 2-core machine it fails
tests whose code is correct. Speed is measured in benches/, so no test has a deadline.
Every test starts with the interface in English (:func:`english_locale`).
"""

from collections.abc import Iterator

import pytest
from hypothesis import settings

from engine.i18n import set_language

settings.register_profile("shardbook", deadline=None)
settings.load_profile("shardbook")


@pytest.fixture(autouse=True)
def english_locale(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    """Every test starts in English with an English locale, whatever the machine's locale (a
    test of another language sets its own); the language is English again after it."""
    for variable in ("LANGUAGE", "LC_ALL", "LC_MESSAGES"):
        monkeypatch.delenv(variable, raising=False)
    monkeypatch.setenv("LANG", "C.UTF-8")
    set_language("en")
    yield
    set_language("en")
