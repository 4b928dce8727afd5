"""The one interface every place that runs cells implements, and what they share.

A `CellRunner` runs cells that `plan_run` cleared, in the notebook's kernel, and writes their
outputs and execution counts back into the notebook. There are two: `DirectoryKernelPool`
(kernels of its own, for a directory) and the server's runner (the notebook's kernel in a
Jupyter server, live in an open collaborative document).

Invariants:
- `run` executes exactly the sources it is given (never re-reads the cells), one cell after
  the other, and stops at the first that does not finish ok. `evaluate` executes the code it
  is given in the same kernel and writes nothing: no cell, no output, no file.
- `timeout_s` is checked here once for all runners: at least 1 s, at most `MAX_TIMEOUT_S`.
- Outputs are written in one write per call, under the caller's `write_lock` when given
  (the lock of the notebook's path, held only while writing, never while cells run). A write
  that fails does not lose the run: the result carries the failure as a warning.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Mapping, Sequence
from contextlib import AbstractAsyncContextManager
from typing import Any, Protocol

from ..hashline.errors import HashlineError
from ..hashline.filesystem import WriteResult
from ..notebook.executed import Executed
from .control import KernelAction, KernelState
from .execute import OutputListener
from .results import KernelRun
from .selection import CellToRun

DEFAULT_TIMEOUT_S = 60.0
MAX_TIMEOUT_S = 600.0

EVAL_CELL = "(eval)"
"""The cell id an evaluation's run reports: code sent by `evaluate` belongs to no cell."""

WriteLock = Callable[[], AbstractAsyncContextManager[Any]]
"""Makes the context manager that holds the notebook's path lock while outputs are written."""


class CellRunner(Protocol):
    """Runs cleared cells of a notebook and writes their outputs (see the module docstring)."""

    async def run(
        self,
        path: str,
        cells: Sequence[CellToRun],
        *,
        timeout_s: float = DEFAULT_TIMEOUT_S,
        on_output: OutputListener | None = None,
        write_lock: WriteLock | None = None,
    ) -> KernelRun:
        """Run `cells` in `path`'s kernel; return each cell's run and the landed text."""
        ...

    async def evaluate(
        self, path: str, code: str, *, timeout_s: float = DEFAULT_TIMEOUT_S
    ) -> KernelRun:
        """Run `code` in `path`'s kernel as one cell `EVAL_CELL`; write nothing anywhere."""
        ...

    async def control(self, path: str, action: KernelAction) -> KernelState:
        """The notebook's kernel as it was, after doing `action` to it (see control.py)."""
        ...

    async def close(self) -> None:
        """Release what the runner started (its own kernels); idempotent."""
        ...


class OutputsWriter(Protocol):
    """Where outputs are written: `NotebookFilesystem.write_outputs`."""

    async def write_outputs(self, path: str, executed: Mapping[str, Executed]) -> WriteResult:
        """Write the outputs and execution counts of executed cells in one write."""
        ...


def checked_timeout(timeout_s: float | None) -> float:
    """`timeout_s` as a float in [1, MAX_TIMEOUT_S] (None: the default), else a clear error."""
    if timeout_s is None:
        return DEFAULT_TIMEOUT_S
    if isinstance(timeout_s, bool) or not isinstance(timeout_s, (int, float)):
        raise HashlineError(f"timeout_s must be a number of seconds, not {timeout_s!r}.")
    if not 1 <= timeout_s <= MAX_TIMEOUT_S:
        raise HashlineError(
            f"timeout_s must be between 1 and {MAX_TIMEOUT_S:g} seconds, not {timeout_s:g}."
        )
    return float(timeout_s)


async def write_back(
    writer: OutputsWriter,
    path: str,
    executed: Mapping[str, Executed],
    write_lock: WriteLock | None,
) -> tuple[str | None, tuple[str, ...]]:
    """Write the outputs (one write); the landed text and the write's warnings.

    A failed write becomes a warning (the cells did run; the agent must hear both).
    """
    if not executed:
        return None, ()
    lock = write_lock() if write_lock is not None else contextlib.nullcontext()
    try:
        async with lock:
            result = await writer.write_outputs(path, executed)
    except HashlineError as err:
        return None, (f"the outputs were not written to {path}: {err.message}",)
    return result.text, tuple(result.warnings)
