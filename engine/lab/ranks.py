"""The rank processes of ``shardbook lab collectives``: ``python -m engine.lab.ranks FOLDER``.

:mod:`engine.lab.gloo` starts this module once, in a new session (process group), with
``FOLDER/config.json``. It imports torch once, then forks the R ranks (so R processes cost one
torch import), writes their pids to ``FOLDER/pids.json`` and watches them: when one exits with an
error, when ``timeout_s`` passes, or when its own parent disappears, it kills every rank with
SIGKILL and reaps it before exiting. Each rank writes ``FOLDER/rank_<r>.json`` (its outputs,
times and sockets) or ``FOLDER/rank_<r>.error`` (JSON: the exception in one line, the traceback,
the time).

Loopback only: the ranks meet through a ``torch.distributed.FileStore`` in FOLDER, not a
TCPStore, because a TCPStore server listens on every interface (``::``) even when MASTER_ADDR is
127.0.0.1; Gloo's own sockets are bound to the loopback interface (``GLOO_SOCKET_IFNAME``). Each
rank reports its TCP sockets from ``/proc`` (Linux) so a test can check that claim.

Exit status: 0 all ranks succeeded; 3 a rank failed; 4 timeout; 5 the parent disappeared.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import socket
import sys
import threading
import time
import traceback
from pathlib import Path
from typing import Any

EXIT_RANK_FAILED = 3
EXIT_TIMEOUT = 4
EXIT_ORPHANED = 5
# Seconds that Gloo's own timeout runs past the launcher's deadline (see _child).
GLOO_GRACE_S = 5.0


def loopback_interface() -> str:
    """The name of the loopback interface (``lo`` on Linux, ``lo0`` on macOS)."""
    names = [name for _index, name in socket.if_nameindex()]
    for name in names:
        if name.startswith("lo"):
            return name
    return "lo"


def _write_json(path: Path, payload: object) -> None:
    temporary = path.with_suffix(".tmp")
    temporary.write_text(json.dumps(payload), encoding="utf-8")
    os.replace(temporary, path)


def _decode_address(text: str) -> str:
    """``/proc/net/tcp{,6}`` address ``HEX:PORT`` -> ``ip:port`` (the kernel's byte order)."""
    hex_ip, hex_port = text.split(":")
    port = int(hex_port, 16)
    raw = bytes.fromhex(hex_ip)
    if len(raw) == 4:
        return f"{socket.inet_ntop(socket.AF_INET, raw[::-1])}:{port}"
    # IPv6: four 32-bit words, each in host (little-endian) order.
    words = b"".join(raw[i : i + 4][::-1] for i in range(0, 16, 4))
    return f"[{socket.inet_ntop(socket.AF_INET6, words)}]:{port}"


def own_tcp_sockets() -> list[dict[str, str]] | None:
    """This process's TCP sockets as ``{"local", "remote", "state"}`` (None without /proc)."""
    fd_dir = Path("/proc/self/fd")
    if not fd_dir.is_dir():
        return None
    inodes = set()
    for entry in fd_dir.iterdir():
        try:
            target = os.readlink(entry)
        except OSError:
            continue
        if target.startswith("socket:["):
            inodes.add(target[8:-1])
    found = []
    for table in ("/proc/self/net/tcp", "/proc/self/net/tcp6"):
        try:
            lines = Path(table).read_text(encoding="ascii").splitlines()[1:]
        except OSError:
            continue
        for line in lines:
            fields = line.split()
            if len(fields) > 9 and fields[9] in inodes:
                state = "listen" if fields[3] == "0A" else "connected"
                found.append(
                    {
                        "local": _decode_address(fields[1]),
                        "remote": _decode_address(fields[2]),
                        "state": state,
                    }
                )
    return found


# ----------------------------------------------------------------------------------------------
# One rank


def _run_op(dist: Any, torch: Any, op: str, rank: int, world: int, data: Any, size: int) -> Any:
    """Run ``op`` once with this rank's ``data``; return its output tensor (None: undefined)."""
    if op == "all-reduce":
        out = data.clone()
        dist.all_reduce(out)
        return out
    if op == "all-gather":
        parts = [torch.empty_like(data) for _ in range(world)]
        dist.all_gather(parts, data)
        return torch.cat(parts)
    if op == "reduce-scatter":
        out = torch.empty(size // world, dtype=torch.int64)
        dist.reduce_scatter(out, list(data.chunk(world)))
        return out
    if op == "all-to-all":
        out = torch.empty_like(data)
        dist.all_to_all_single(out, data)
        return out
    if op == "broadcast":
        out = data.clone() if rank == 0 else torch.zeros(size, dtype=torch.int64)
        dist.broadcast(out, src=0)
        return out
    if op == "reduce":
        out = data.clone()
        dist.reduce(out, dst=0)
        return out if rank == 0 else None
    # send-recv as NCCL-tests runs it: send to the next rank, receive from the previous one.
    out = torch.empty_like(data)
    ops = [
        dist.P2POp(dist.isend, data, (rank + 1) % world),
        dist.P2POp(dist.irecv, out, (rank - 1) % world),
    ]
    for request in dist.batch_isend_irecv(ops):
        request.wait()
    return out


def _timing_input(torch: Any, op: str, world: int, elements: int) -> Any:
    # Every operation moves S = elements x 8 bytes in its size convention (engine.collectives).
    if op == "all-gather":
        return torch.ones(elements // world, dtype=torch.int64)
    return torch.ones(elements, dtype=torch.int64)


def _one_way_seconds(dist: Any, torch: Any, rank: int, elements: int, repeats: int) -> float:
    """Half the median round trip of a ping-pong between ranks 0 and 1 (after two warm-ups);
    the median, because a busy core stalls some round trips by milliseconds."""
    buffer = torch.ones(elements, dtype=torch.int64)
    trips = []
    for _ in range(repeats + 2):
        start = time.perf_counter()
        if rank == 0:
            dist.send(buffer, 1)
            dist.recv(buffer, 1)
        elif rank == 1:
            dist.recv(buffer, 0)
            dist.send(buffer, 0)
        trips.append(time.perf_counter() - start)
    trips = sorted(trips[2:])
    return trips[len(trips) // 2] / 2


def _rank_main(folder: Path, config: dict[str, Any], rank: int, launcher: int) -> None:
    def watchdog() -> None:
        while os.getppid() == launcher:
            time.sleep(0.2)
        os._exit(EXIT_ORPHANED)

    threading.Thread(target=watchdog, daemon=True).start()
    import datetime

    import torch
    import torch.distributed as dist

    torch.set_num_threads(1)
    world = int(config["ranks"])
    store = dist.FileStore(str(folder / "store"), world)
    dist.init_process_group(
        "gloo",
        store=store,
        rank=rank,
        world_size=world,
        # Gloo's own timeout is a backstop past the launcher's deadline, so a hung rank is
        # reported as the launcher's timeout, not as the other rank's failed receive.
        timeout=datetime.timedelta(seconds=float(config["timeout_s"]) + GLOO_GRACE_S),
    )
    inject = config.get("inject") or {}
    if inject.get("rank") == rank:
        if inject.get("kind") == "hang":
            time.sleep(3600)
        raise RuntimeError(f"injected failure on rank {rank}")
    outputs: dict[str, list[int] | None] = {}
    for item in config["ops"]:
        data = torch.tensor(item["inputs"][rank], dtype=torch.int64)
        out = _run_op(dist, torch, item["op"], rank, world, data, int(item["size"]))
        outputs[item["op"]] = None if out is None else [int(v) for v in out.tolist()]
    timing = config["timing"]
    elements, repeats, warmup = (int(timing[k]) for k in ("elements", "repeats", "warmup"))
    pings = max(repeats, 20)
    alpha = _one_way_seconds(dist, torch, rank, 1, pings)
    one_way = _one_way_seconds(dist, torch, rank, elements, pings)
    seconds: dict[str, float] = {}
    for item in config["ops"]:
        op = item["op"]
        data = _timing_input(torch, op, world, elements)
        for _ in range(warmup):
            _run_op(dist, torch, op, rank, world, data, elements)
        dist.barrier()
        start = time.perf_counter()
        for _ in range(repeats):
            _run_op(dist, torch, op, rank, world, data, elements)
        seconds[op] = (time.perf_counter() - start) / repeats
    dist.barrier()
    result = {
        "rank": rank,
        "pid": os.getpid(),
        "outputs": outputs,
        "seconds": seconds,
        "ping_small_s": alpha,
        "ping_large_s": one_way,
        "sockets": own_tcp_sockets(),
        "torch": torch.__version__,
    }
    _write_json(folder / f"rank_{rank}.json", result)
    dist.destroy_process_group()


def _child(folder: Path, config: dict[str, Any], rank: int, launcher: int) -> None:
    """Run one rank in a forked child; never returns."""
    code = 0
    try:
        _rank_main(folder, config, rank, launcher)
    except BaseException as error:
        # The time tells the first failure apart from the ranks that failed because of it.
        first = (f"{type(error).__name__}: {error}".splitlines() or [repr(error)])[0]
        report = {"error": first, "traceback": traceback.format_exc(), "time": time.time()}
        _write_json(folder / f"rank_{rank}.error", report)
        code = 1
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
    os._exit(code)


# ----------------------------------------------------------------------------------------------
# The launcher


def _kill_all(pids: dict[int, int]) -> None:
    for pid in pids.values():
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
    for pid in pids.values():
        with contextlib.suppress(ChildProcessError):
            os.waitpid(pid, 0)


def launch(folder: Path) -> int:
    """Fork the ranks, watch them, return the exit status (module docstring)."""
    config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
    parent = int(config["parent"])
    os.environ["GLOO_SOCKET_IFNAME"] = str(config["interface"])
    # Imported once here, so the forked ranks start without importing torch again. No torch
    # operation runs in this process: forking after one would copy a live thread pool.
    import torch.distributed  # noqa: F401

    launcher = os.getpid()
    running: dict[int, int] = {}
    for rank in range(int(config["ranks"])):
        pid = os.fork()
        if pid == 0:
            _child(folder, config, rank, launcher)
        running[rank] = pid
    _write_json(folder / "pids.json", list(running.values()))
    deadline = time.monotonic() + float(config["timeout_s"])
    while running:
        finished = False
        for rank, pid in list(running.items()):
            done, status = os.waitpid(pid, os.WNOHANG)
            if not done:
                continue
            finished = True
            del running[rank]
            if os.waitstatus_to_exitcode(status) != 0:
                _kill_all(running)
                return EXIT_RANK_FAILED
        if not running:
            break
        if os.getppid() != parent:
            _kill_all(running)
            return EXIT_ORPHANED
        if time.monotonic() > deadline:
            _kill_all(running)
            return EXIT_TIMEOUT
        if not finished:
            time.sleep(0.02)
    return 0


if __name__ == "__main__":
    sys.exit(launch(Path(sys.argv[1])))
