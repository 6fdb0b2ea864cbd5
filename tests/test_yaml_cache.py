"""The parsed copies of the YAML read at start-up (engine/yaml_cache.py): whatever the cache holds,
a read gives exactly what PyYAML's safe loader gives for the text on disk."""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

import pytest
import yaml
from hypothesis import given
from hypothesis import strategies as st

from engine import yaml_cache
from engine.paths import cache_dir
from engine.progress import dump_yaml
from engine.yaml_cache import YamlSyntaxError, load_yaml, remember, text_key

# Text the progress file holds: any character a learner can type or paste, control characters,
# surrogates' neighbours and CJK included (NUL and lone surrogates cannot be written as UTF-8).
TEXT = st.text(st.characters(blacklist_categories=["Cs"], blacklist_characters="\x00"))
SCALARS = st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | TEXT
DATA = st.recursive(
    SCALARS,
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(TEXT, inner, max_size=4),
    max_leaves=12,
)


def _kept_files() -> list[Path]:
    return sorted((cache_dir() / yaml_cache.CACHE_FOLDER).glob("*.json"))


@given(data=st.dictionaries(TEXT, DATA, max_size=5))
def test_a_read_gives_what_pyyaml_gives_kept_or_not(
    tmp_path_factory: pytest.TempPathFactory, data: dict[str, object]
) -> None:
    source = tmp_path_factory.mktemp("progress") / "S15.yaml"
    text = dump_yaml(data)
    expected = yaml.safe_load(text)
    assert load_yaml(text, source) == expected  # parsed, then kept
    assert load_yaml(text, source) == expected  # from the kept copy where JSON keeps it
    remember(source, text, expected)
    assert load_yaml(text, source) == expected


def test_the_second_read_of_the_same_text_does_not_parse(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    source = tmp_path / "S15.yaml"
    text = "lesson: S15\nanswers:\n  definition: 'a[/ 列切分 👩‍💻'\n"
    assert load_yaml(text, source) == {
        "lesson": "S15",
        "answers": {"definition": "a[/ 列切分 👩‍💻"},
    }

    def refused(_text: str) -> object:
        raise AssertionError("parsed again")

    monkeypatch.setattr(yaml_cache, "parse_yaml", refused)
    assert load_yaml(text, source)["answers"]["definition"] == "a[/ 列切分 👩‍💻"


def test_any_other_text_is_parsed_even_of_the_same_length(tmp_path: Path) -> None:
    """An edit by hand that keeps the file's length (one letter for another) is a new text."""
    source = tmp_path / "S15.yaml"
    assert load_yaml("answer: abc\n", source) == {"answer": "abc"}
    assert text_key("answer: abc\n") != text_key("answer: abd\n")
    assert load_yaml("answer: abd\n", source) == {"answer": "abd"}
    assert load_yaml("answer: abc\n", source) == {"answer": "abc"}


def test_data_json_would_change_is_never_kept(tmp_path: Path) -> None:
    """YAML's dates and integer keys do not survive JSON: such a file is parsed at every read."""
    source = tmp_path / "S15.yaml"
    text = "day: 2026-12-02\n1: one\n"
    expected = {"day": dt.date(2026, 12, 2), 1: "one"}
    before = _kept_files()
    assert load_yaml(text, source) == expected
    assert _kept_files() == before
    assert load_yaml(text, source) == expected


def test_a_damaged_or_foreign_copy_is_ignored(tmp_path: Path) -> None:
    source = tmp_path / "S15.yaml"
    text = "answer: mine\n"
    assert load_yaml(text, source) == {"answer": "mine"}
    kept = yaml_cache._cache_file(source)
    entry = json.loads(kept.read_text(encoding="utf-8"))
    for damaged in (
        "{not json",
        json.dumps({**entry, "version": yaml_cache.CACHE_VERSION + 1, "data": "old"}),
        json.dumps({**entry, "source": "/elsewhere/S15.yaml", "data": "other"}),
        json.dumps({**entry, "key": "0", "data": "stale"}),
    ):
        kept.write_text(damaged, encoding="utf-8")
        assert load_yaml(text, source) == {"answer": "mine"}


def test_bad_yaml_is_a_syntax_error_with_pyyamls_words(tmp_path: Path) -> None:
    with pytest.raises(YamlSyntaxError, match="line 1, column"):
        load_yaml("a: [1, 2\n", tmp_path / "S15.yaml")


def test_a_cache_that_cannot_be_written_costs_nothing_but_a_parse(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    blocked = tmp_path / "cache-is-a-file"
    blocked.write_text("", encoding="utf-8")
    monkeypatch.setenv("SHARDBOOK_CACHE_DIR", str(blocked))
    source = tmp_path / "S15.yaml"
    assert load_yaml("answer: x\n", source) == {"answer": "x"}
    remember(source, "answer: y\n", {"answer": "y"})
    assert load_yaml("answer: y\n", source) == {"answer": "y"}
