"""Running notebook cells for agents, stale-safe: what may run, how it runs, what it printed.

- `plan_run` is the gate: a cell runs only if its source is exactly what the agent saw at its
  tag (`added_or_changed_cells` gives the default cells: those of the agent's last edit).
- A `CellRunner` runs the cleared cells and writes their outputs back: the directory one is
  `DirectoryKernelPool`, the server one lives under `jupyter_hashline.server` (it makes its
  kernel clients with `own_client`).
- `KernelRun` / `CellRun` hold the results; their `to_text` is what an agent reads.

Importing this package loads neither jupyter_client nor tornado nor jupyter_server: the two
names that need jupyter_client (`DirectoryKernelPool`, `own_client`) are on this face too, and
load it the first time one of them is used (`from jupyter_hashline.kernels import own_client`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .collect import OutputCollector, OutputEvent
from .control import KernelAction, KernelState
from .errors import (
    KernelDiedError,
    KernelError,
    KernelUnavailableError,
    NotRunnableError,
    StaleCellsError,
    UnseenCellsError,
)
from .execute import KernelOutcome, OutputListener, execute_cells
from .kernelspec import choose_kernel, notebook_metadata
from .results import CellRun, KernelRun, RunStatus, with_note_appended
from .runner import (
    DEFAULT_TIMEOUT_S,
    EVAL_CELL,
    MAX_TIMEOUT_S,
    CellRunner,
    OutputsWriter,
    WriteLock,
    checked_timeout,
    write_back,
)
from .selection import CellToRun, RunPlan, added_or_changed_cells, plan_run

if TYPE_CHECKING:
    from .clients import own_client
    from .pool import DirectoryKernelPool

_NEED_JUPYTER_CLIENT = {"DirectoryKernelPool": ".pool", "own_client": ".clients"}

__all__ = [
    "DEFAULT_TIMEOUT_S",
    "EVAL_CELL",
    "MAX_TIMEOUT_S",
    "CellRun",
    "CellRunner",
    "CellToRun",
    "DirectoryKernelPool",
    "KernelAction",
    "KernelDiedError",
    "KernelError",
    "KernelOutcome",
    "KernelRun",
    "KernelState",
    "KernelUnavailableError",
    "NotRunnableError",
    "OutputCollector",
    "OutputEvent",
    "OutputListener",
    "OutputsWriter",
    "RunPlan",
    "RunStatus",
    "StaleCellsError",
    "UnseenCellsError",
    "WriteLock",
    "added_or_changed_cells",
    "checked_timeout",
    "choose_kernel",
    "execute_cells",
    "notebook_metadata",
    "own_client",
    "plan_run",
    "with_note_appended",
    "write_back",
]


def __getattr__(name: str) -> Any:
    """The names that load jupyter_client, imported when first asked for."""
    module = _NEED_JUPYTER_CLIENT.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from importlib import import_module

    value = getattr(import_module(module, __name__), name)
    globals()[name] = value
    return value
