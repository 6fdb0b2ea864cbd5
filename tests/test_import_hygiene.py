"""engine/ must never import Textual (README "Architecture"): every engine module, the packages'
modules and the lab's included, is imported in a fresh interpreter and the test asserts
``textual`` was not loaded. The static contracts (``.importlinter``, run by ``lint-imports``)
check the same of the import statements; this checks what importing really loads."""

from __future__ import annotations

import pkgutil
import subprocess
import sys

import engine


def _engine_modules() -> list[str]:
    return sorted(info.name for info in pkgutil.walk_packages(engine.__path__, prefix="engine."))


def test_engine_modules_are_found_at_every_depth() -> None:
    modules = set(_engine_modules())
    assert {"engine.units", "engine.lab.memory", "engine.quiz.drills", "engine.ledger.terms"} <= (
        modules
    )


def test_engine_imports_without_textual() -> None:
    modules = _engine_modules()
    code = (
        "import importlib, sys\n"
        f"for name in {modules!r}:\n"
        "    importlib.import_module(name)\n"
        "loaded = sorted(m for m in sys.modules if m.split('.')[0] in ('textual', 'tui'))\n"
        "print(len(loaded))\n"
        "sys.exit(1 if loaded else 0)\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.strip() == "0"


def test_headless_cli_does_not_import_textual() -> None:
    code = (
        "import sys\n"
        "from cli.main import build_parser\n"
        "build_parser()\n"
        "sys.exit(1 if 'textual' in sys.modules else 0)\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
