"""torch is optional (the ``lab`` extra): importing any engine module, the lab's included, must not
load it, and only modules under engine/lab/ may import it at all (the same idea as
test_import_hygiene.py for Textual). Runs with and without torch installed."""

from __future__ import annotations

import pkgutil
import re
import subprocess
import sys
from pathlib import Path

import engine

ROOT = Path(__file__).resolve().parent.parent
TORCH_IMPORT = re.compile(r"^\s*(import torch|from torch[\s.])", re.MULTILINE)


def _all_engine_modules() -> list[str]:
    return sorted(info.name for info in pkgutil.walk_packages(engine.__path__, prefix="engine."))


def test_lab_modules_are_found() -> None:
    modules = _all_engine_modules()
    assert {"engine.lab", "engine.lab.gloo", "engine.lab.memory", "engine.lab.ranks"} <= set(
        modules
    )


def test_no_engine_module_loads_torch_on_import() -> None:
    code = (
        "import importlib, sys\n"
        f"for name in {_all_engine_modules()!r}:\n"
        "    importlib.import_module(name)\n"
        "import cli.main\n"
        "cli.main.build_parser()\n"
        "loaded = sorted(m for m in sys.modules if m == 'torch' or m.startswith('torch.'))\n"
        "print(len(loaded))\n"
    )
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "0"


def test_only_lab_modules_import_torch() -> None:
    offenders = [
        str(path.relative_to(ROOT))
        for path in sorted((ROOT / "engine").rglob("*.py"))
        if "lab" not in path.relative_to(ROOT / "engine").parts[:-1]
        and TORCH_IMPORT.search(path.read_text(encoding="utf-8"))
    ]
    assert offenders == []
    # The pattern does find the lab's own (lazy) imports, so the check above can fail.
    assert TORCH_IMPORT.search((ROOT / "engine" / "lab" / "memory.py").read_text("utf-8"))
