"""Collectives on real ranks: ``torch.distributed`` with the Gloo backend, on this machine only.

:func:`run_collectives` starts R local processes (:mod:`engine.lab.ranks`), runs every
operation once on the small integer inputs of :func:`engine.collectives.simulate` and compares each
rank's output with the simulator's (they must be equal: the data an operation leaves on each rank
does not depend on the algorithm). It then times each operation on a payload of S bytes (in the
size convention of :data:`engine.collectives.SIZE_CONVENTIONS`) and sets the time beside the
alpha-beta model of :func:`engine.collectives.collective_cost`, with alpha and beta measured in the
same run by a ping-pong between ranks 0 and 1 (alpha: half the round trip of 8 bytes; beta: the
extra one-way time of S bytes, per byte). The ratio is shown, never asserted: Gloo picks its own
algorithms, and R processes on a few cores share them.

Loopback only (see :mod:`engine.lab.ranks`): a FileStore for the rendezvous and Gloo bound to the
loopback interface; each rank's TCP sockets are reported so this can be checked.
"""

from __future__ import annotations

import contextlib
import ipaddress
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import engine
from engine.collectives import (
    OPERATIONS,
    CollectiveCost,
    Simulation,
    check_op,
    collective_cost,
    simulate,
)
from engine.errors import InputError
from engine.i18n import gettext as _
from engine.lab import LabError, require_torch
from engine.lab.ranks import EXIT_ORPHANED, EXIT_RANK_FAILED, EXIT_TIMEOUT, loopback_interface
from engine.units import parse_bytes, parse_int, parse_time

MAX_LAB_RANKS = 16
MAX_LAB_ELEMENTS = 1024
MAX_TIMING_BYTES = 64 * 2**20
DEFAULT_TIMING_BYTES = 2**20
DEFAULT_TIMEOUT_S = 60.0
# Time allowed to start Python and import torch before the launcher's own timeout starts.
STARTUP_ALLOWANCE_S = 120.0
INJECT_KINDS = ("raise", "hang")
UNRESOLVED_BANDWIDTH = 1e18


@dataclass(frozen=True)
class RankOutcome:
    """One rank in one operation: what it gave, what Gloo left, what the simulator predicts.

    ``output`` and ``predicted`` are ``None`` where the operation defines nothing (reduce on a
    rank other than the root).
    """

    rank: int
    input: tuple[int, ...]
    output: tuple[int, ...] | None
    predicted: tuple[int, ...] | None


@dataclass(frozen=True)
class OpOutcome:
    """One operation on Gloo.

    Attributes:
        op: one of :data:`engine.collectives.OPERATIONS`.
        simulation: the simulator's run on the same inputs (default algorithm).
        ranks: every rank's input, Gloo output and prediction.
        matches: every defined output equals the prediction.
        measured_s: seconds per call at the timing payload, the slowest rank's mean.
        model: the alpha-beta cost at the same payload with the measured alpha and beta.
        ratio: measured_s / model.time_s (shown, not asserted).
    """

    op: str
    simulation: Simulation
    ranks: tuple[RankOutcome, ...]
    matches: bool
    measured_s: float
    model: CollectiveCost
    ratio: float


@dataclass(frozen=True)
class GlooRun:
    """The whole run.

    Attributes:
        world: number of ranks R.
        ops: one :class:`OpOutcome` per operation, in the order asked.
        size: elements per rank in the correctness run (simulator size convention).
        timing_bytes: S of the timing run, bytes.
        repeats: timed calls per operation.
        alpha_s: measured latency per message, seconds.
        bandwidth_bytes_per_s: measured 1/beta, bytes/s; ``None`` when S bytes went no slower
            than 8 bytes (latency hid them; the model then keeps its latency terms only).
        sockets: each rank's TCP sockets (``None`` where /proc is unavailable).
        loopback_only: every socket's addresses are loopback (``None`` when unknown).
        torch_version: the torch that ran.
        pids: the rank processes (all ended by the time this is returned).
    """

    world: int
    ops: tuple[OpOutcome, ...]
    size: int
    timing_bytes: int
    repeats: int
    alpha_s: float
    bandwidth_bytes_per_s: float | None
    sockets: tuple[tuple[dict[str, str], ...], ...] | None
    loopback_only: bool | None
    torch_version: str
    pids: tuple[int, ...]

    def as_dict(self) -> dict[str, Any]:
        """The JSON object of ``shardbook lab collectives --json`` (bytes and seconds)."""
        return {
            "ranks": self.world,
            "size": self.size,
            "timing_bytes": self.timing_bytes,
            "repeats": self.repeats,
            "alpha_s": self.alpha_s,
            "bandwidth_bytes_per_s": self.bandwidth_bytes_per_s,
            "loopback_only": self.loopback_only,
            "torch": self.torch_version,
            "all_match": all(item.matches for item in self.ops),
            "ops": [
                {
                    "op": item.op,
                    "algorithm": item.simulation.algorithm,
                    "matches": item.matches,
                    "measured_s": item.measured_s,
                    "model_s": item.model.time_s,
                    "ratio": item.ratio,
                    "formula": item.model.formula,
                    "ranks": [
                        {
                            "rank": r.rank,
                            "input": list(r.input),
                            "output": None if r.output is None else list(r.output),
                            "predicted": None if r.predicted is None else list(r.predicted),
                        }
                        for r in item.ranks
                    ],
                }
                for item in self.ops
            ],
            "sockets": None if self.sockets is None else [list(s) for s in self.sockets],
        }


def is_loopback_socket(entry: dict[str, str]) -> bool:
    """Whether a socket of :func:`engine.lab.ranks.own_tcp_sockets` stays on loopback: its local
    address is loopback, and its remote one too unless it is a listener (remote unspecified)."""

    def address(text: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address:
        host = text.rsplit(":", 1)[0].strip("[]")
        ip = ipaddress.ip_address(host)
        if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
            return ip.ipv4_mapped
        return ip

    local = address(entry["local"])
    remote = address(entry["remote"])
    if not local.is_loopback:
        return False
    return remote.is_loopback or (entry.get("state") == "listen" and remote.is_unspecified)


def _checked_ops(ops: Sequence[str] | None) -> tuple[str, ...]:
    if ops is None:
        return OPERATIONS
    if isinstance(ops, str) or not ops:
        raise InputError(
            "op", _("give one or more of {choices}").format(choices=", ".join(OPERATIONS))
        )
    return tuple(dict.fromkeys(check_op(op) for op in ops))


def run_collectives(
    ranks: int = 4,
    ops: Sequence[str] | None = None,
    size: int | None = None,
    timing_bytes: float | str = DEFAULT_TIMING_BYTES,
    repeats: int = 20,
    timeout_s: float | str = DEFAULT_TIMEOUT_S,
    inject: tuple[int, str] | None = None,
) -> GlooRun:
    """Run ``ops`` (default: all) on ``ranks`` Gloo processes; see the module docstring.

    Args:
        ranks: R, 2 to :data:`MAX_LAB_RANKS`.
        ops: operations to run, from :data:`engine.collectives.OPERATIONS`.
        size: elements in the correctness run (simulator convention), a multiple of R, at most
            :data:`MAX_LAB_ELEMENTS`; default R (one element per slot, as ``shardbook diagram``).
        timing_bytes: S of the timing run in bytes (``"1MiB"`` accepted), 8 B to 64 MiB; rounded
            down to whole int64 elements, a multiple of R.
        repeats: timed calls per operation, 1 to 1000.
        timeout_s: seconds the ranks may take once started (``"30s"`` accepted).
        inject: ``(rank, "raise" | "hang")`` makes that rank fail or hang after joining the group,
            to see (and test) that every process is ended.

    Raises:
        InputError: naming ``ranks``, ``op``, ``size``, ``timing_bytes``, ``repeats``,
            ``timeout_s`` or ``inject``.
        LabError: torch missing; a rank failed (the first failure's exception, in one line); the
            run timed out. Every rank process has ended when it is raised (``pids``).
    """
    world = parse_int("ranks", ranks, minimum=2, maximum=MAX_LAB_RANKS)
    names = _checked_ops(ops)
    n = world if size is None else parse_int("size", size, minimum=world, maximum=MAX_LAB_ELEMENTS)
    if n % world:
        raise InputError(
            "size",
            _("must be a multiple of the rank count {world}, got {n}").format(world=world, n=n),
        )
    payload = parse_bytes("timing_bytes", timing_bytes)
    if not 8 <= payload <= MAX_TIMING_BYTES:
        raise InputError("timing_bytes", _("must be between 8 B and 64 MiB"))
    elements = max(world, int(payload) // 8 // world * world)
    count = parse_int("repeats", repeats, minimum=1, maximum=1000)
    timeout = parse_time("timeout_s", timeout_s)
    if not 0 < timeout <= 3600:
        raise InputError("timeout_s", _("must be more than 0 and at most 3600 seconds"))
    if inject is not None and (
        not 0 <= inject[0] < world or inject[1] not in INJECT_KINDS or isinstance(inject[0], bool)
    ):
        raise InputError(
            "inject",
            _("must be (rank below {world}, one of {kinds})").format(
                world=world, kinds=INJECT_KINDS
            ),
        )
    require_torch()
    simulations = {op: simulate(op, world, n) for op in names}
    config = {
        "ranks": world,
        "timeout_s": timeout,
        "interface": loopback_interface(),
        "parent": os.getpid(),
        "ops": [
            {
                "op": op,
                "size": n,
                "inputs": [[int(v) for v in simulations[op].input_array(r)] for r in range(world)],
            }
            for op in names
        ],
        "timing": {"elements": elements, "repeats": count, "warmup": 2},
        "inject": None if inject is None else {"rank": inject[0], "kind": inject[1]},
    }
    with tempfile.TemporaryDirectory(prefix="shardbook-lab-") as folder_name:
        folder = Path(folder_name)
        (folder / "config.json").write_text(json.dumps(config), encoding="utf-8")
        reports, pids = _launch(folder, timeout)
    return _assemble(world, names, simulations, n, elements * 8, count, reports, pids)


def _launch(folder: Path, timeout: float) -> tuple[list[dict[str, Any]], tuple[int, ...]]:
    """Start the launcher, wait for it, end every process; return each rank's report."""
    root = str(Path(engine.__file__).resolve().parent.parent)
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [root, env.get("PYTHONPATH")]))
    with (folder / "launcher.log").open("w", encoding="utf-8") as log:
        process = subprocess.Popen(
            [sys.executable, "-m", "engine.lab.ranks", str(folder)],
            stdin=subprocess.DEVNULL,
            stdout=log,
            stderr=subprocess.STDOUT,
            env=env,
            start_new_session=True,
        )
        try:
            code = process.wait(timeout=timeout + STARTUP_ALLOWANCE_S)
        except subprocess.TimeoutExpired:
            code = EXIT_TIMEOUT
        finally:
            _end_session(process)
    pids = _read_pids(folder)
    _end_stragglers(pids)
    if code == EXIT_TIMEOUT:
        raise LabError(
            _("the ranks did not finish within {timeout:g} s; all were ended").format(
                timeout=timeout
            ),
            pids,
        )
    if code == EXIT_RANK_FAILED:
        rank, message = _first_failure(folder)
        raise LabError(
            _("rank {rank} failed: {message}; all ranks were ended").format(
                rank=rank, message=message
            ),
            pids,
        )
    if code != 0:
        tail = (folder / "launcher.log").read_text(encoding="utf-8", errors="replace")
        last = tail.strip().splitlines()[-1] if tail.strip() else ""
        if code == EXIT_ORPHANED:
            failure = _("the rank launcher lost its parent")
        else:
            failure = _("the rank launcher exited with status {code}").format(code=code)
        raise LabError(
            _("{failure}: {last}").format(failure=failure, last=last) if last else failure, pids
        )
    reports = []
    for rank in range(len(pids)):
        path = folder / f"rank_{rank}.json"
        if not path.is_file():
            raise LabError(_("rank {rank} wrote no result").format(rank=rank), pids)
        reports.append(json.loads(path.read_text(encoding="utf-8")))
    return reports, pids


def _end_session(process: subprocess.Popen[bytes]) -> None:
    # The launcher and its forked ranks share one process group (start_new_session).
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(process.pid, signal.SIGKILL)
    process.wait()


def _read_pids(folder: Path) -> tuple[int, ...]:
    try:
        return tuple(int(p) for p in json.loads((folder / "pids.json").read_text("utf-8")))
    except (OSError, ValueError):
        return ()


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    status = Path(f"/proc/{pid}/stat")
    if status.is_file():
        # A zombie waiting for init to reap it has ended.
        fields = status.read_text(encoding="ascii", errors="replace").rsplit(")", 1)[-1].split()
        return bool(fields) and fields[0] != "Z"
    return True


def _end_stragglers(pids: Sequence[int]) -> None:
    """SIGKILL any rank still alive (one whose launcher was killed first), then wait briefly."""
    for pid in pids:
        if _alive(pid):
            with contextlib.suppress(ProcessLookupError):
                os.kill(pid, signal.SIGKILL)
    deadline = time.monotonic() + 5.0
    while any(_alive(pid) for pid in pids) and time.monotonic() < deadline:
        time.sleep(0.02)


def _first_failure(folder: Path) -> tuple[int, str]:
    failures = []
    for path in folder.glob("rank_*.error"):
        report = json.loads(path.read_text(encoding="utf-8"))
        failures.append((float(report["time"]), int(path.stem.split("_")[1]), report["error"]))
    if not failures:
        return -1, "it ended without a report"
    _time, rank, message = min(failures)
    return rank, str(message)


def _assemble(
    world: int,
    names: tuple[str, ...],
    simulations: dict[str, Simulation],
    size: int,
    timing_bytes: int,
    repeats: int,
    reports: list[dict[str, Any]],
    pids: tuple[int, ...],
) -> GlooRun:
    # Rank 0 sends first in the ping-pong; both ranks time the same exchanges.
    alpha = max(float(reports[0]["ping_small_s"]), 1e-9)
    large = float(reports[0]["ping_large_s"])
    # When S bytes go no slower than 8 (latency hides them), beta is not resolved: the model
    # keeps the latency terms only (an effectively infinite bandwidth).
    resolved = large > alpha * 1.05
    beta = (large - alpha) / timing_bytes if resolved else 1.0 / UNRESOLVED_BANDWIDTH
    outcomes = []
    for op in names:
        sim = simulations[op]
        rows = []
        for rank in range(world):
            got = reports[rank]["outputs"][op]
            expected = sim.output(rank)
            rows.append(
                RankOutcome(
                    rank=rank,
                    input=tuple(int(v) for v in sim.input_array(rank)),
                    output=None if got is None else tuple(int(v) for v in got),
                    predicted=None if expected is None else tuple(int(v) for v in expected),
                )
            )
        measured = max(float(report["seconds"][op]) for report in reports)
        model = collective_cost(op, world, timing_bytes, 1.0 / beta, alpha)
        outcomes.append(
            OpOutcome(
                op=op,
                simulation=sim,
                ranks=tuple(rows),
                matches=all(r.predicted is None or r.output == r.predicted for r in rows),
                measured_s=measured,
                model=model,
                ratio=measured / model.time_s,
            )
        )
    socket_lists = [report.get("sockets") for report in reports]
    sockets = (
        None
        if any(s is None for s in socket_lists)
        else tuple(tuple(s) for s in socket_lists if s is not None)
    )
    loopback = (
        None
        if sockets is None
        else all(is_loopback_socket(entry) for rank in sockets for entry in rank)
    )
    return GlooRun(
        world=world,
        ops=tuple(outcomes),
        size=size,
        timing_bytes=timing_bytes,
        repeats=repeats,
        alpha_s=alpha,
        bandwidth_bytes_per_s=1.0 / beta if resolved else None,
        sockets=sockets,
        loopback_only=loopback,
        torch_version=str(reports[0].get("torch", "")),
        pids=pids,
    )
