"""engine/ must never import Textual (README "Architecture"): every engine module is imported in a
fresh interpreter and the test asserts ``textual`` was not loaded."""

from __future__ import annotations

import pkgutil
import subprocess
import sys

import engine


def _engine_modules() -> list[str]:
    return sorted(f"engine.{info.name}" for info in pkgutil.iter_modules(engine.__path__))


def test_engine_has_modules() -> None:
    assert "engine.units" in _engine_modules()


def test_engine_imports_without_textual() -> None:
    modules = _engine_modules()
    code = (
        "import importlib, sys\n"
        f"for name in {modules!r}:\n"
        "    importlib.import_module(name)\n"
        "loaded = sorted(m for m in sys.modules if m == 'textual' or m.startswith('textual.'))\n"
        "print(len(loaded))\n"
        "sys.exit(1 if loaded else 0)\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.strip() == "0"


def test_headless_cli_does_not_import_textual() -> None:
    code = (
        "import sys\n"
        "from tui import cli\n"
        "cli.build_parser()\n"
        "sys.exit(1 if 'textual' in sys.modules else 0)\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
