"""`open_workspace`: the one way a storage becomes a `Workspace` that runs the tools here.

Every surface that runs tools in its own process wires the same stack: its storage (the server's
contents manager, a folder on disk, a filesystem object) under the notebook layer
(`NotebookFilesystem`), a snapshot store, and the cell runner the surface gives, or the reason
it refuses runs. The server (`server.service`), an agent `Session` on a directory
(`agent.where`) and the directory mode of the CLI and MCP server (`tools.directory`) all call it.

Invariants:
- The runner is made from the very notebook filesystem the workspace edits through, so outputs
  land where edits land.
- With a `notary` (Jupyter's signature store), a trusted notebook stays trusted across the
  workspace's writes (notebook/trust.py); without one nothing is signed.
- A workspace whose runs are refused (`run_refusal`) builds no runner at all (nothing is
  started for runs that will be refused).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, TypeVar

from ..hashline import Filesystem, SnapshotStore
from ..kernels import CellRunner
from ..notebook import Notary, NotebookFilesystem, WriteGuard
from .workspace import Workspace

__all__ = ["NotebookRunner", "open_workspace"]

NotebookRunner = Callable[[NotebookFilesystem], CellRunner]
"""Makes a runner that writes outputs through the given notebook filesystem."""

W = TypeVar("W", bound=Workspace)


def open_workspace(
    storage: Filesystem,
    store: SnapshotStore,
    *,
    projection: str = "hashline",
    layout: str = "keep",
    guard: WriteGuard | None = None,
    notary: Notary | None = None,
    runner: NotebookRunner | None = None,
    run_refusal: str | None = None,
    kind: type[W] = Workspace,  # type: ignore[assignment]
    **options: Any,
) -> W:
    """A `kind` workspace over `storage` seen through the notebook layer (see the module
    docstring); `options` are the workspace's own (`seen_lines`, limits, `describe`, ...)."""
    fs = NotebookFilesystem(
        storage, projection=projection, layout=layout, guard=guard, notary=notary
    )
    made = runner(fs) if runner is not None and run_refusal is None else None
    return kind(fs, store, runner=made, run_refusal=run_refusal, **options)
