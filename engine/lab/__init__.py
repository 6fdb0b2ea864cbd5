"""The lab: check the formulas against PyTorch itself (the optional ``lab`` extra, torch 2.13 CPU).

- :mod:`engine.lab.gloo` runs every collective on R local processes with ``torch.distributed`` on
  the Gloo backend, loopback only, beside :func:`engine.collectives.simulate` and
  :func:`engine.collectives.collective_cost`.
- :mod:`engine.lab.memory` trains a small GPT-style model for one AdamW step and measures its
  parameter, gradient, optimizer-state and saved-activation bytes beside
  :func:`engine.ledger.compute_ledger`.

Only modules of this package may import torch, and only inside functions: importing any engine
module, this package included, never loads torch (``tests/test_lab_imports.py``), so the app and the
calculators start fast and work without the extra.
"""

from __future__ import annotations

import importlib.util
import shlex
import sys
from pathlib import Path, PurePath

from engine.errors import ShardbookError
from engine.i18n import gettext
from engine.paths import is_checkout

TORCH_PIN = "2.13.0"
CHECKOUT_INSTALL_COMMAND = ".venv/bin/pip install -e '.[lab]'"
"""The extra in a clone (README "Lab"): the editable install of the first command there."""


def install_command(
    checkout: bool | None = None, prefix: str | None = None, executable: str | None = None
) -> str:
    """The shell command that installs the lab extra for the way shardbook was installed.

    A source checkout gets the editable install of the README. An installed package (README
    "Installing as a tool") has no checkout: in a pipx environment (``.../pipx/venvs/NAME``)
    ``pipx inject`` adds torch to it; in a uv tool environment (``.../uv/tools/NAME``) uv has no
    inject, and ``uv tool install --with`` from the clone (the README's folder ``shardbook``)
    replaces the tool with one that has torch; in any other
    environment this interpreter's pip installs torch into it. Arguments default to this process:
    ``checkout`` to :func:`engine.paths.is_checkout`, ``prefix`` to ``sys.prefix``, ``executable``
    to ``sys.executable``.
    """
    if checkout if checkout is not None else is_checkout():
        return CHECKOUT_INSTALL_COMMAND
    torch = f"torch=={TORCH_PIN}"
    parts = PurePath(prefix if prefix is not None else sys.prefix).parts
    if len(parts) >= 3 and parts[-3:-1] == ("pipx", "venvs"):
        return f"pipx inject {shlex.quote(parts[-1])} {torch}"
    if len(parts) >= 3 and parts[-3:-1] == ("uv", "tools"):
        return f"uv tool install --with {torch} ./shardbook"
    python = executable if executable is not None else sys.executable
    return f"{shlex.quote(str(Path(python)))} -m pip install {torch}"


def install_hint() -> str:
    """What the lab needs and the command that installs it, in the interface language."""
    return gettext(
        "the lab needs PyTorch (the 'lab' extra, torch=={pin}, CPU build); install it with "
        "{command}"
    ).format(pin=TORCH_PIN, command=install_command())


class LabError(ShardbookError):
    """The lab could not run: torch is missing, a rank failed, or the run timed out.

    Attributes:
        message: what happened, one line.
        pids: the rank processes that were started (all ended when this is raised).
    """

    def __init__(self, message: str, pids: tuple[int, ...] = ()) -> None:
        super().__init__(message)
        self.message = message
        self.pids = pids


def torch_available() -> bool:
    """Whether torch can be imported, found without importing it (cheap)."""
    return importlib.util.find_spec("torch") is not None


def require_torch() -> None:
    """Raise :class:`LabError` with the install command when torch is missing."""
    if not torch_available():
        raise LabError(install_hint())
