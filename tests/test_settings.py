"""The settings file: defaults, checks, unknown keys kept, atomic and safe writes."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from engine.errors import ProgressError
from engine.progress import dump_yaml
from engine.settings import SETTINGS, Settings, SettingsStore


def test_a_missing_file_gives_every_default(tmp_path: Path) -> None:
    settings = SettingsStore(tmp_path).load()
    assert settings.problems == []
    assert settings.get("layout.side") == "auto"
    assert settings.get("layout.reading") is False
    assert not (tmp_path / "settings.yaml").exists()


def test_set_and_reload_nests_dotted_keys(tmp_path: Path) -> None:
    store = SettingsStore(tmp_path)
    settings = store.load()
    settings.set("layout.side", "hidden")
    assert settings.changed
    store.save(settings)
    assert not settings.changed
    on_disk = yaml.safe_load((tmp_path / "settings.yaml").read_text(encoding="utf-8"))
    assert on_disk == {"schema_version": 1, "layout": {"side": "hidden"}}
    assert store.load().get("layout.side") == "hidden"


def test_setting_the_current_value_changes_nothing() -> None:
    settings = Settings()
    settings.set("layout.side", "auto")
    assert not settings.changed


def test_a_bad_value_is_refused_when_set() -> None:
    with pytest.raises(ValueError, match=r"layout\.side"):
        Settings().set("layout.side", "sideways")
    with pytest.raises(KeyError):
        Settings().set("no.such.key", 1)


def test_a_bad_value_on_disk_falls_back_to_the_default_and_is_reported(tmp_path: Path) -> None:
    (tmp_path / "settings.yaml").write_text(
        "schema_version: 1\nlayout: {side: sideways, reading: true}\n", encoding="utf-8"
    )
    settings = SettingsStore(tmp_path).load()
    assert settings.get("layout.side") == "auto"
    assert settings.get("layout.reading") is True
    assert any("layout.side" in problem for problem in settings.problems)


def test_unknown_keys_survive_a_round_trip(tmp_path: Path) -> None:
    (tmp_path / "settings.yaml").write_text(
        "schema_version: 1\nfuture: {x: 1}\nlayout: {side: hidden, later: 2}\n", encoding="utf-8"
    )
    store = SettingsStore(tmp_path)
    settings = store.load()
    settings.set("layout.reading", True)
    store.save(settings)
    on_disk = yaml.safe_load((tmp_path / "settings.yaml").read_text(encoding="utf-8"))
    assert on_disk["future"] == {"x": 1}
    assert on_disk["layout"] == {"side": "hidden", "later": 2, "reading": True}


def test_an_unreadable_file_is_kept_aside_never_overwritten(tmp_path: Path) -> None:
    (tmp_path / "settings.yaml").write_bytes(b"layout: [unclosed")
    store = SettingsStore(tmp_path)
    settings = store.load()
    assert settings.get("layout.side") == "auto"
    assert len(settings.problems) == 1
    aside = list(tmp_path.glob("settings.yaml.unreadable-*"))
    assert len(aside) == 1
    assert aside[0].read_bytes() == b"layout: [unclosed"


def test_a_newer_file_is_read_but_never_written_over(tmp_path: Path) -> None:
    text = "schema_version: 99\nlayout: {side: hidden}\n"
    (tmp_path / "settings.yaml").write_text(text, encoding="utf-8")
    store = SettingsStore(tmp_path)
    settings = store.load()
    assert settings.get("layout.side") == "hidden"
    settings.set("layout.reading", True)
    with pytest.raises(ProgressError, match="newer"):
        store.save(settings)
    assert (tmp_path / "settings.yaml").read_text(encoding="utf-8") == text


def test_a_read_only_folder_is_a_progress_error(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a folder", encoding="utf-8")
    with pytest.raises(ProgressError):
        SettingsStore(blocker).save(Settings())


def test_get_returns_a_copy_of_mappings() -> None:
    settings = Settings()
    settings.get("resume")["S15"] = {"section": "x"}
    assert settings.get("resume") == {}


def test_every_default_passes_its_own_check() -> None:
    for spec in SETTINGS:
        assert spec.check(spec.default), spec.key


@given(st.text(max_size=50), st.booleans())
def test_text_values_round_trip_exactly(theme: str, reading: bool) -> None:
    settings = Settings()
    if theme:
        settings.set("theme", theme)
    settings.set("layout.reading", reading)
    data = settings.to_data()
    del data["schema_version"]
    again = Settings(yaml.safe_load(dump_yaml(data)))
    assert again.get("theme") == settings.get("theme")
    assert again.get("layout.reading") is reading
