"""Errors the learner can cause, each naming what to fix.

Every engine entry point raises one of these for bad input, never a bare ZeroDivisionError,
OverflowError or a NaN result. The UI and the CLI show ``str(error)`` as is.
"""

from __future__ import annotations


class ShardbookError(Exception):
    """Base class of every error shardbook reports to the learner."""


class InputError(ShardbookError, ValueError):
    """A calculator input is invalid.

    Attributes:
        field: the name of the input (a spec field such as ``num_microbatches``, or a CLI flag such
            as ``--micro-batches`` once the CLI has mapped it).
        message: what is wrong and what is accepted, without the field name.
    """

    def __init__(self, field: str, message: str) -> None:
        super().__init__(f"{field}: {message}")
        self.field = field
        self.message = message


class ContentError(ShardbookError):
    """A lesson file is invalid.

    Attributes:
        path: the file, as given.
        line: 1-based line number, or ``None`` when the problem is not tied to a line.
        message: what is wrong (it names the field when there is one).
    """

    def __init__(self, path: str, line: int | None, message: str) -> None:
        where = f"{path}:{line}" if line is not None else f"{path}"
        super().__init__(f"{where}: {message}")
        self.path = path
        self.line = line
        self.message = message


class ProgressError(ShardbookError):
    """The learner's progress file could not be read or written.

    Attributes:
        path: the progress file or folder concerned.
        message: what happened and what to do.
    """

    def __init__(self, path: str, message: str) -> None:
        super().__init__(f"{path}: {message}")
        self.path = path
        self.message = message
