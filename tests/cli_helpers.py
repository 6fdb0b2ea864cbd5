"""Shared helper of the command-line tests."""

from __future__ import annotations

import json
from typing import Any

import pytest

from cli.main import main


def calc_json(capsys: pytest.CaptureFixture[str], calculator: str, *args: str) -> dict[str, Any]:
    """Run ``shardbook calc CALCULATOR ARGS --json`` in process; assert exit 0 and that stdout is
    one JSON object on one line (README "Command line"), and return it."""
    status = main(["calc", calculator, *args, "--json"])
    out, err = capsys.readouterr()
    assert status == 0, err
    assert out.count("\n") == 1  # one object on one line
    data = json.loads(out)
    assert isinstance(data, dict)
    return data
