"""Running notebook cells for agents, stale-safe: what may run, how it runs, what it printed.

- `plan_run` is the gate: a cell runs only if its source is exactly what the agent saw at its
  tag (`added_or_changed_cells` gives the default cells: those of the agent's last edit).
- A `CellRunner` runs the cleared cells and writes their outputs back: the directory one is
  `jupyter_hashline.kernels.pool.DirectoryKernelPool` (imported from there: it loads
  jupyter_client), the server one lives under `jupyter_hashline.server`.
- `KernelRun` / `CellRun` hold the results; their `to_text` is what an agent reads.

Importing this package loads neither jupyter_client nor tornado nor jupyter_server.
"""

from __future__ import annotations

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

__all__ = [
    "DEFAULT_TIMEOUT_S",
    "EVAL_CELL",
    "MAX_TIMEOUT_S",
    "CellRun",
    "CellRunner",
    "CellToRun",
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
    "plan_run",
    "with_note_appended",
    "write_back",
]
