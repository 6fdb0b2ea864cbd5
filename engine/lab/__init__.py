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

from engine.errors import ShardbookError
from engine.i18n import gettext

TORCH_PIN = "2.13.0"
INSTALL_COMMAND = ".venv/bin/pip install -e '.[lab]'"


def install_hint() -> str:
    """What the lab needs and the command that installs it, in the interface language."""
    return gettext(
        "the lab needs PyTorch (the 'lab' extra, torch=={pin}, CPU build); install it with "
        "{command}"
    ).format(pin=TORCH_PIN, command=INSTALL_COMMAND)


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
