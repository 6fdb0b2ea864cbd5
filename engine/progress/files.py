"""Reading and writing progress text: a safe YAML dump that round-trips any text, checked
dumps, atomic writes (temporary file, fsync, rename, fsync of the folder) and plain words for
an operating-system error.
"""

from __future__ import annotations

import contextlib
import errno
import functools
import os
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

from engine.errors import ProgressError
from engine.i18n import N_
from engine.i18n import gettext as _
from engine.yaml_cache import parse_yaml

if TYPE_CHECKING:
    import yaml

# What the learner can do about each error a save meets (errno -> plain words).
_ERRNO_WORDS = {
    errno.ENOSPC: N_("the disk is full"),
    errno.EDQUOT: N_("the disk quota is used up"),
    errno.EROFS: N_("the folder is on a read-only file system"),
    errno.EACCES: N_("permission denied"),
    errno.EPERM: N_("permission denied"),
}


@functools.cache
def _dumper() -> type[yaml.SafeDumper]:
    """The safe dumper (libyaml's C emitter where PyYAML has it: ~8x faster than the pure Python
    one on a progress file with a long review log), with text that holds line breaks or control
    characters double-quoted.

    PyYAML's plain and single-quoted styles fold or drop some characters (NEL ``\x85``,
    U+2028, a BOM, ``\r``); its double-quoted style escapes them, so they round-trip exactly.
    PyYAML is imported here, at the first save, not for the first frame (engine.yaml_cache).
    """
    import yaml

    base: type[yaml.SafeDumper] = getattr(yaml, "CSafeDumper", yaml.SafeDumper)

    def represent_str(dumper: yaml.SafeDumper, text: str) -> yaml.ScalarNode:
        style = None if text.isprintable() else '"'
        return dumper.represent_scalar("tag:yaml.org,2002:str", text, style=style)

    class ProgressDumper(base):  # type: ignore[valid-type,misc]
        pass

    ProgressDumper.add_representer(str, represent_str)
    return ProgressDumper


def dump_yaml(data: Any) -> str:
    """YAML text for ``data`` (safe dumper, Unicode kept, key order kept)."""
    import yaml

    return yaml.dump(
        data,
        Dumper=_dumper(),
        allow_unicode=True,
        sort_keys=False,
        default_flow_style=False,
        width=100,
    )


def dump_checked(data: dict[str, Any], cache: dict[str, tuple[str, str]], path: Path) -> str:
    """YAML text for the top-level mapping ``data``, checked to parse back to ``data`` exactly.

    A block mapping's text is the concatenation of its keys' texts, so each top-level key is
    dumped and checked on its own, and a key whose value is unchanged since the last call (same
    ``repr``, kept in ``cache``: key -> (repr, text)) reuses its checked text. An autosave then
    dumps and re-parses only what was edited, not the whole review log (README "Performance").

    Raises:
        ProgressError: a value's text would not parse back to the same value.
    """
    if not data:
        return dump_yaml(data)  # "{}", not an empty concatenation
    parts = []
    for key, value in data.items():
        fingerprint = repr(value)
        cached = cache.get(key)
        if cached is None or cached[0] != fingerprint:
            text = dump_yaml({key: value})
            if parse_yaml(text) != {key: value}:
                raise ProgressError(str(path), _("the text could not be stored exactly; not saved"))
            cached = cache[key] = (fingerprint, text)
        parts.append(cached[1])
    return "".join(parts)


def atomic_write_text(path: Path, text: str) -> None:
    """Write ``text`` (UTF-8) to ``path`` atomically (see :func:`atomic_write_bytes`).

    Raises:
        OSError: the folder cannot be created or written (disk full, read-only, permission).
    """
    atomic_write_bytes(path, text.encode("utf-8"))


def atomic_write_bytes(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` atomically: temp file in the same folder, fsync,
    ``os.replace``, fsync of the folder. Either the old or the new file remains, never half.

    Raises:
        OSError: the folder cannot be created or written (disk full, read-only, permission).
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp_name, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp_name)
        raise
    with contextlib.suppress(OSError):
        # Not every platform lets a folder be opened for fsync; the rename is done either way.
        dir_fd = os.open(path.parent, os.O_RDONLY)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)


def describe_os_error(error: OSError) -> str:
    """Plain words for a failed write: "the disk is full (No space left on device)"."""
    detail = error.strerror or str(error)
    words = _ERRNO_WORDS.get(error.errno or 0)
    if not words:
        return detail
    return _("{words} ({detail})").format(words=_(words), detail=detail)
