"""Where a `Session`'s tools run: through the Jupyter server of its kernel, or on a directory.

Invariants:
- `Via.AUTO` uses the parent Jupyter server (found as the session registration finds it) when
  the session's folder lies under that server's root, else the directory. It never guesses a
  server that is not this process's parent.
- `Via.SERVER` without a parent server, without a folder, or for a folder outside the
  server's root raises `SessionPlacementError` saying why and what to pass instead.
- On a server, the agent's paths stay relative to the session's folder (`RestWorkspace`'s
  `base_path`), exactly as on the directory, and cells run in the notebooks' own kernels of
  that server (the server decides whether runs are allowed).
- On a directory, cells run in kernels of the session's own (`DirectoryKernelPool`, one per
  notebook, started on its first run), shut down when the session's workspace is closed;
  `allow_run=False` refuses runs instead. A session over a filesystem object (no folder on
  disk) has no kernels: a run says it is not available there.
"""

from __future__ import annotations

import os
from enum import Enum
from pathlib import Path
from typing import Any, cast

from ..hashline import Filesystem, InMemorySnapshotStore, SnapshotStore
from ..kernels import CellRunner
from ..notebook import NotebookFilesystem, PairedDiskFilesystem, torn_notebook
from ..tools import NotebookRunner, RestWorkspace, ToolWorkspace, Workspace, open_workspace
from .registration import ServerInfo, find_parent_server

__all__ = ["SessionPlacementError", "Via", "session_workspace"]


class Via(str, Enum):
    """How a session reaches its notebooks."""

    AUTO = "auto"
    SERVER = "server"
    DIRECTORY = "directory"


class SessionPlacementError(ValueError):
    """`via="server"` asked for, but there is no server this session can edit through."""


def session_workspace(
    root_or_fs: str | Path | Any,
    via: Via,
    *,
    store: SnapshotStore | None = None,
    seen_lines: str = "reject",
    syntax_check: str = "warn",
    server: ServerInfo | None = None,
    allow_run: bool = True,
) -> tuple[ToolWorkspace, Via]:
    """The workspace a session uses, and whether it is the server's or the directory's."""
    folder = Path(root_or_fs) if isinstance(root_or_fs, (str, Path)) else None
    if via is not Via.DIRECTORY:
        parent = server if server is not None else find_parent_server()
        base = _api_folder(folder, parent, via)
        if parent is not None and base is not None:
            return RestWorkspace(parent.url, parent.token or None, base_path=base), Via.SERVER
    if folder is None:  # a filesystem object: no folder for kernels to start in
        storage = cast(Filesystem, root_or_fs)
        checks = (seen_lines, syntax_check)
        return _open(storage, store, checks, None, allow_run), Via.DIRECTORY
    storage = PairedDiskFilesystem(folder, unreadable=torn_notebook)
    checks = (seen_lines, syntax_check)
    return _open(storage, store, checks, _kernels(folder), allow_run), Via.DIRECTORY


def _open(
    storage: Filesystem,
    store: SnapshotStore | None,
    checks: tuple[str, str],
    runner: NotebookRunner | None,
    allow_run: bool,
) -> Workspace:
    seen_lines, syntax_check = checks
    return open_workspace(
        storage,
        store or InMemorySnapshotStore(),
        seen_lines=seen_lines,
        syntax_check=syntax_check,
        runner=runner,
        run_refusal=None if allow_run else RUN_OFF,
    )


RUN_OFF = (
    "Run refused, nothing ran: this session was made with allow_run=False, so it does not run "
    "cells. Read the outputs with notebook_outputs instead."
)


def _kernels(folder: Path) -> NotebookRunner:
    """The session's own kernels (jupyter_client is loaded only when they are made)."""

    def make(fs: NotebookFilesystem) -> CellRunner:
        from ..kernels import DirectoryKernelPool

        return DirectoryKernelPool(fs, folder)

    return make


def _api_folder(folder: Path | None, server: ServerInfo | None, via: Via) -> str | None:
    """The session folder as an API path under the server root (None: not reachable)."""
    problem = None
    if server is None:
        problem = "no Jupyter server started this kernel"
    elif folder is None:
        problem = "the session was given a filesystem object, not a folder"
    elif server.root_dir is None:
        problem = "the server did not say its root directory"
    else:
        relative = os.path.relpath(os.path.realpath(folder), os.path.realpath(server.root_dir))
        if relative != os.pardir and not relative.startswith(os.pardir + os.sep):
            return "" if relative == os.curdir else relative.replace(os.sep, "/")
        problem = f"{folder} is outside the server's root {server.root_dir}"
    if via is Via.SERVER:
        raise SessionPlacementError(
            f'Session(via="server") cannot edit through a Jupyter server: {problem}. Run the '
            'session in a notebook kernel of that server, or pass via="directory" (or "auto").'
        )
    return None
