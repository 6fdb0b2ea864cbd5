"""Where lessons and progress live (README "Where your progress is stored", "Command line").

Content folder: ``--content-dir``, else ``$SHARDBOOK_CONTENT_DIR``, else the ``content/`` folder of
the checkout this package runs from (so a lesson edited in a clone is the one shown), else the
lessons installed with the package (``engine/content/`` in an installed wheel: setuptools maps the
repository's ``content/`` to the data-only package ``engine.content``, see ``pyproject.toml``).

Cache folder (the lesson index, the line-break analyses; always safe to delete):
``$SHARDBOOK_CACHE_DIR``, else the platform's user cache folder
(``platformdirs.user_cache_dir("shardbook")``).

Progress folder: ``--progress-dir``, else ``$SHARDBOOK_PROGRESS_DIR``, else the top-level
``progress/`` of the checkout this package runs from, else the platform's user data folder
(``platformdirs.user_data_dir("shardbook") / "progress"``).
"""

from __future__ import annotations

import os
import zlib
from pathlib import Path

import platformdirs

CHECKOUT_ROOT = Path(__file__).resolve().parent.parent
PACKAGED_CONTENT_DIR = Path(__file__).resolve().parent / "content"
"""Where an installed wheel holds the lessons (absent in a checkout, which has ``content/``)."""
DEFAULT_LESSON = "S15"
"""The lesson opened when none is named (the app, ``shardbook plan``)."""


def is_checkout(root: Path = CHECKOUT_ROOT) -> bool:
    """Whether ``root`` (by default the folder above this package) is a source checkout: it
    holds ``pyproject.toml`` beside ``engine/``. False for an installed wheel, whose packages sit
    in ``site-packages``."""
    return (root / "pyproject.toml").is_file() and (root / "engine").is_dir()


def resolve_content_dir(explicit: str | os.PathLike[str] | None = None) -> Path:
    """The folder lessons are read from (see module docstring for the order)."""
    if explicit:
        return Path(explicit).expanduser()
    env = os.environ.get("SHARDBOOK_CONTENT_DIR")
    if env:
        return Path(env).expanduser()
    if is_checkout() and (CHECKOUT_ROOT / "content").is_dir():
        return CHECKOUT_ROOT / "content"
    return PACKAGED_CONTENT_DIR


def resolve_progress_dir(explicit: str | os.PathLike[str] | None = None) -> Path:
    """The folder progress files are written to (see module docstring for the order)."""
    if explicit:
        return Path(explicit).expanduser()
    env = os.environ.get("SHARDBOOK_PROGRESS_DIR")
    if env:
        return Path(env).expanduser()
    if is_checkout() and (CHECKOUT_ROOT / "progress").is_dir():
        return CHECKOUT_ROOT / "progress"
    return Path(platformdirs.user_data_dir("shardbook", appauthor=False)) / "progress"


def cache_dir() -> Path:
    """The folder of caches that are always safe to delete (the lesson index, the parsed
    lessons, the line-break analyses): ``$SHARDBOOK_CACHE_DIR``, else the platform's user cache
    folder."""
    env = os.environ.get("SHARDBOOK_CACHE_DIR")
    if env:
        return Path(env).expanduser()
    return Path(platformdirs.user_cache_dir("shardbook", appauthor=False))


def content_key(data: bytes) -> str:
    """A key for ``data`` in the caches (a cache file's name, an entry): its CRC-32, Adler-32
    and length, in hex. Two different byte strings share it with a chance of about 2^-64 (20,000
    entries: about 1e-11 that any two do), enough to tell versions of a text apart; no defence
    against a forged file. zlib, which the interpreter has loaded already, rather than hashlib:
    loading OpenSSL's digests cost the first frame over a millisecond."""
    return f"{zlib.crc32(data):08x}{zlib.adler32(data):08x}{len(data):x}"
