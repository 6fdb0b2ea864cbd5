"""YAML read at start-up (the progress file, the settings) without PyYAML on the first frame.

PyYAML's import takes about 8 ms on a 2-core machine (its reader compiles a large pattern, its
package imports every module), and a 20 kB progress file takes 2 ms more to parse: the first
frame paid both on every start. Each file's parsed data is kept in the cache folder
(:func:`engine.paths.cache_dir`) as JSON beside a key of the exact text it was parsed from: a read
whose text has that key (CRC-32, Adler-32 and length of its UTF-8 bytes) takes the data from
JSON; any other text is parsed by PyYAML (imported then) and its data kept for the next read. A
save keeps the data it wrote (:func:`remember`), so the start after a session finds it.

What comes back is what PyYAML's safe loader gives for the text: a data tree is kept only when
JSON gives it back equal (strings, numbers, booleans, None, lists, mappings with string keys); any
other (a date, an integer key) is parsed from the YAML at every read. A cache that cannot be read
or written costs a parse, nothing else; the YAML file is never written here.
"""

from __future__ import annotations

import contextlib
import json
import os
from pathlib import Path
from typing import Any, Final

from engine.paths import cache_dir, content_key

CACHE_FOLDER: Final = "yaml"
CACHE_VERSION: Final = 1


class YamlSyntaxError(ValueError):
    """The text is not valid YAML; the message is PyYAML's (its line and column)."""


def text_key(text: str) -> str:
    """The key of ``text`` (its UTF-8, surrogates escaped: :func:`engine.paths.content_key`)."""
    return content_key(text.encode("utf-8", "surrogatepass"))


def parse_yaml(text: str) -> Any:
    """``text`` parsed by PyYAML's safe loader (its C version where PyYAML has one).

    Raises:
        YamlSyntaxError: not valid YAML.
        RecursionError: nested too deeply for the parser.
    """
    import yaml

    loader: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
    try:
        return yaml.load(text, Loader=loader)
    except yaml.YAMLError as error:
        raise YamlSyntaxError(str(error)) from None


def load_yaml(text: str, source: Path) -> Any:
    """The data of ``text``, the YAML read from file ``source``: the kept copy when it was made
    from this very text, else :func:`parse_yaml` (the data then kept for the next read).

    Raises:
        YamlSyntaxError: not valid YAML.
        RecursionError: nested too deeply for the parser.
    """
    key = text_key(text)
    kept = _read(source, key)
    if kept is not None:
        return kept[0]
    data = parse_yaml(text)
    _write(source, key, data)
    return data


def remember(source: Path, text: str, data: Any) -> None:
    """Keep ``data`` as what ``text``, just written to file ``source``, parses to (the caller
    checked that it does: a checked dump). Never raises."""
    _write(source, text_key(text), data)


def _cache_file(source: Path) -> Path:
    name = str(source.absolute()).encode("utf-8", "surrogatepass")
    return cache_dir() / CACHE_FOLDER / f"{content_key(name)}.json"


def _read(source: Path, key: str) -> tuple[Any] | None:
    """The kept data of ``source`` for text ``key``, in a 1-tuple (the data may be None)."""
    with contextlib.suppress(OSError, ValueError, RecursionError):
        entry = json.loads(_cache_file(source).read_text(encoding="utf-8"))
        if (
            isinstance(entry, dict)
            and entry.get("version") == CACHE_VERSION
            and entry.get("source") == str(source.absolute())
            and entry.get("key") == key
            and "data" in entry
        ):
            return (entry["data"],)
    return None


def _write(source: Path, key: str, data: Any) -> None:
    entry = {"version": CACHE_VERSION, "source": str(source.absolute()), "key": key, "data": data}
    try:
        text = json.dumps(entry, ensure_ascii=False, allow_nan=False)
        if json.loads(text)["data"] != data:
            return  # JSON would give back other data (a date, an integer key): not kept
    except (TypeError, ValueError, RecursionError):
        return
    path = _cache_file(source)
    temp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        temp.write_text(text, encoding="utf-8")
        os.replace(temp, path)
    except OSError:
        with contextlib.suppress(OSError):
            temp.unlink(missing_ok=True)
