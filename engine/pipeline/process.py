"""Simulations in a child process, so that a long one never holds the caller's interpreter.

A thread of the caller's process would hold the caller's GIL while it simulates (numpy releases
it only inside large array operations, and the simulator makes many small ones): every time the
caller's event loop waits for input it must win the GIL back, and a key typed during a
2-million-op simulation then waits one switch interval (5 ms) several times over. A child
process has its own interpreter; the caller's thread only waits on a pipe.

:class:`SimulationProcess` starts ``python -m engine.pipeline.process`` on first use and keeps it
for the next requests. The two sides exchange length-prefixed pickles over the child's stdin and
stdout (both written by this module only). The child serves one request at a time and answers
each: the results, ``cancelled``, or an error message. While it simulates it stops as soon as
anything arrives on its stdin (a newer request, a cancel, or the end of the pipe when the caller
is gone), so it never outlives the caller by more than a few milliseconds of work: closing the
window, a signal or a crash of the caller all close the pipe.
"""

from __future__ import annotations

import contextlib
import ctypes
import dataclasses
import os
import pickle
import select
import struct
import subprocess
import sys
import threading
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import IO, Any

from engine.errors import InputError
from engine.i18n import current_language, set_language
from engine.pipeline.simulate import PipelineResult, SimulationCancelled, simulate
from engine.pipeline.spec import PipelineSpec
from engine.pipeline.timeline import TimelineDrawing, draw_timeline

_HEADER = struct.Struct("!Q")
NICENESS = 10
"""Added to the child's scheduling niceness (POSIX ``nice``): on a busy machine the caller's
event loop gets the CPU first, and the simulation the rest."""
# How often a waiting caller asks its own ``cancelled`` (seconds): the child is then told to stop.
_POLL_S = 0.02

Simulated = tuple[PipelineResult, TimelineDrawing | str]
"""One schedule simulated: its result and its drawing, or why it is not drawn."""


def simulate_and_draw(
    specs: Sequence[PipelineSpec], width: int, cancelled: Callable[[], bool] = lambda: False
) -> list[Simulated]:
    """Simulate each of ``specs`` and draw it ``width`` columns wide.

    Returns:
        Per spec, its :class:`PipelineResult` and its :class:`TimelineDrawing`, or the message of
        the :class:`InputError` that refused the drawing (too many ops to draw).

    Raises:
        InputError: as :func:`simulate` (a spec larger than the simulator runs).
        SimulationCancelled: when ``cancelled()`` returned true.
    """
    simulated: list[Simulated] = []
    for spec in specs:
        result = simulate(spec, cancelled)
        drawing: TimelineDrawing | str
        try:
            drawing = draw_timeline(result, width, cancelled)
        except InputError as error:
            drawing = error.message
        simulated.append((result, drawing))
    return simulated


def _without_trace(pair: Simulated) -> Simulated:
    """``pair`` without the per-op arrays (tens of MB at 2 million ops), which the figures and
    the drawn rows no longer need."""
    result, drawing = pair
    light = dataclasses.replace(result, _trace=None)
    if isinstance(drawing, TimelineDrawing):
        drawing = dataclasses.replace(
            drawing, drawn=dataclasses.replace(drawing.drawn, _trace=None)
        )
    return light, drawing


def _write(stream: IO[bytes], message: object) -> None:
    data = pickle.dumps(message, protocol=pickle.HIGHEST_PROTOCOL)
    stream.write(_HEADER.pack(len(data)) + data)
    stream.flush()


def _read_exactly(fd: int, size: int) -> bytes:
    chunks = []
    while size:
        chunk = os.read(fd, size)
        if not chunk:
            raise EOFError
        chunks.append(chunk)
        size -= len(chunk)
    return b"".join(chunks)


def _read(fd: int) -> Any:
    (size,) = _HEADER.unpack(_read_exactly(fd, _HEADER.size))
    return pickle.loads(_read_exactly(fd, size))


def _readable(fd: int) -> bool:
    return bool(select.select([fd], [], [], 0)[0])


def _release_memory() -> None:
    """Hand the memory a simulation freed back to the system (glibc's ``malloc_trim``; a
    no-op elsewhere): the process waits between requests for as long as the pane lives, and
    after 2 million ops glibc kept about 80 MiB of freed heap."""
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None).malloc_trim(0)


def serve(requests: int, replies: IO[bytes]) -> None:
    """The child's loop: read requests from the file descriptor ``requests`` (unbuffered, so
    that a message waiting there is seen by ``select``), answer each on ``replies``, and return
    at the end of the requests (the caller closed the pipe or is gone)."""
    while True:
        try:
            message = _read(requests)
        except EOFError:
            return
        if message[0] != "run":  # a cancel that came after its request was answered
            continue
        _, language, specs, width = message
        set_language(language)
        reply: tuple[Any, ...]
        try:
            # The per-op arrays (tens of MB) are dropped here, not kept until the next request.
            reply = (
                "done",
                [
                    _without_trace(pair)
                    for pair in simulate_and_draw(specs, width, lambda: _readable(requests))
                ],
            )
        except SimulationCancelled:
            reply = ("cancelled",)
        except Exception as error:  # the caller shows it; the child serves the next request
            reply = ("error", f"{type(error).__name__}: {error}")
        try:
            _write(replies, reply)
        except BrokenPipeError:
            return
        del reply
        _release_memory()


class SimulationProcess:
    """A child process that runs :func:`simulate_and_draw` for the threads of this process.

    :meth:`run` may be called from several threads; a newer call stops the one in progress.
    :meth:`close` ends the child (it also ends by itself when this process is gone).
    """

    def __init__(self) -> None:
        self._process: subprocess.Popen[bytes] | None = None
        self._write_lock = threading.Lock()
        self._exchange_lock = threading.Lock()
        self._closed = False

    @property
    def pid(self) -> int | None:
        """The child's process id, or None before the first request and after :meth:`close`."""
        process = self._process
        return process.pid if process is not None and process.poll() is None else None

    def _started(self) -> subprocess.Popen[bytes]:
        if self._process is None or self._process.poll() is not None:
            root = str(Path(__file__).resolve().parents[2])
            path = os.environ.get("PYTHONPATH")
            env = {**os.environ, "PYTHONPATH": root + (os.pathsep + path if path else "")}
            self._process = subprocess.Popen(
                [sys.executable, "-m", "engine.pipeline.process", str(NICENESS)],
                stdin=subprocess.PIPE,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                env=env,
            )
        return self._process

    def _send(self, process: subprocess.Popen[bytes], message: object) -> None:
        assert process.stdin is not None
        with self._write_lock:
            _write(process.stdin, message)

    def cancel(self) -> None:
        """Stop the simulation in progress, if any (its :meth:`run` raises
        :class:`SimulationCancelled`)."""
        process = self._process
        if process is not None and process.poll() is None:
            with contextlib.suppress(OSError, ValueError):
                self._send(process, ("cancel",))

    def run(
        self,
        specs: Sequence[PipelineSpec],
        width: int,
        cancelled: Callable[[], bool] = lambda: False,
    ) -> list[Simulated]:
        """:func:`simulate_and_draw` in the child, in the current interface language; blocks
        the calling thread (not its GIL) until the answer.

        Returns:
            As :func:`simulate_and_draw`; the results carry no op-by-op timeline
            (``PipelineResult.timeline`` is empty; the drawing's rows are there).

        Raises:
            SimulationCancelled: ``cancelled()`` returned true, a newer :meth:`run` or a
                :meth:`cancel` came, or the process was closed.
            RuntimeError: the child failed (its error's type and message).
        """
        if cancelled():
            raise SimulationCancelled
        self.cancel()  # a request in progress is for older input
        with self._exchange_lock:
            if self._closed or cancelled():
                raise SimulationCancelled
            process = self._started()
            try:
                self._send(process, ("run", current_language(), list(specs), width))
                reply = self._wait(process, cancelled)
            except (OSError, EOFError, ValueError) as error:
                if self._closed:
                    raise SimulationCancelled from error
                raise RuntimeError(f"the simulation process ended: {error}") from error
            finally:
                if self._closed:
                    _close_output(process)
        if reply[0] == "cancelled":
            raise SimulationCancelled
        if reply[0] == "error":
            raise RuntimeError(reply[1])
        simulated: list[Simulated] = reply[1]
        return simulated

    def _wait(self, process: subprocess.Popen[bytes], cancelled: Callable[[], bool]) -> Any:
        assert process.stdout is not None
        fd = process.stdout.fileno()
        told = False
        while not select.select([fd], [], [], _POLL_S)[0]:
            if not told and (self._closed or cancelled()):
                self.cancel()
                told = True
        return _read(fd)

    def close(self) -> None:
        """End the child (killed: it holds nothing to save) and reap it; takes a moment, never
        waits for a simulation. Later :meth:`run` calls raise :class:`SimulationCancelled`."""
        self._closed = True
        process, self._process = self._process, None
        if process is None:
            return
        process.kill()
        process.wait()
        if process.stdin is not None:
            with contextlib.suppress(OSError):
                process.stdin.close()
        # A thread waiting for an answer reads the end of the pipe and closes it itself.
        if self._exchange_lock.acquire(blocking=False):
            try:
                _close_output(process)
            finally:
                self._exchange_lock.release()


def _close_output(process: subprocess.Popen[bytes]) -> None:
    if process.stdout is not None:
        process.stdout.close()


def main(argv: Sequence[str] | None = None) -> None:
    """Entry point of the child: lower its priority by the niceness given as the first
    argument (where the platform has ``os.nice``), serve requests from stdin, answer on
    stdout."""
    args = sys.argv[1:] if argv is None else argv
    if args and hasattr(os, "nice"):
        with contextlib.suppress(OSError):
            os.nice(int(args[0]))
    serve(sys.stdin.fileno(), sys.stdout.buffer)


if __name__ == "__main__":
    main()
