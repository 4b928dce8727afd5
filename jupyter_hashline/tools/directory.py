"""The tools over one directory on this machine (the CLI's and the MCP server's default).

`open_directory(root)` is a `Workspace` over `PairedDiskFilesystem(root)` (`open_workspace`):
every path is confined to the root, and notebooks paired by jupytext are read and written as
pairs (every paired file updated, a newer text twin honoured). Snapshots go to a
`SqliteSnapshotStore`, by default the very file a Jupyter server on the same root uses
(`default_store_path`), so tags survive between processes (CLI invocations, MCP sessions)
and a notebook read here can be edited through that server and the other way round.

Invariants:
- The default store path is a function of the root's real path and the machine's mounts,
  computed exactly as the server extension computes its own default: in the Jupyter data dir,
  or on local disk when that is on a network filesystem (store_placement.py; the choice is
  logged). An explicit store (`--store`, `$JUPYTER_HASHLINE_STORE`) always wins.
- `aclose()` closes the store this module opened and the workspace's runner (its kernels).
- A notebook a killed Jupyter save left torn is recovered on read from Jupyter's `.~NAME`
  intermediate, as jupyter_server does (the torn file kept as `NAME.invalid`).
- A trusted notebook stays trusted across edits here as through a server (notebook/trust.py),
  signed in the notary a local Jupyter uses (`nbsignatures.db` in the Jupyter data dir), unless
  `$JUPYTER_HASHLINE_TRUST` is `off` (or `keep_trust=False`). A machine without that
  database gets nothing created.
- Cells run only when the caller gives a runner (`run_with`): this package starts no kernel.
  Without one, `run_refusal` says why runs are refused (e.g. the CLI's missing `--allow-run`).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from pathlib import Path

from ..hashline import MountTable
from ..hashline.patcher import SeenLinesPolicy
from ..hashline.sqlite_store import SqliteSnapshotStore
from ..kernels import CellRunner
from ..notebook import (
    Notary,
    NotebookFilesystem,
    PairedDiskFilesystem,
    data_dir_notary,
    torn_notebook,
)
from .store_placement import StorePlacement, place_store
from .wiring import open_workspace
from .workspace import Workspace

__all__ = [
    "STORE_ENV",
    "TRUST_ENV",
    "DirectoryWorkspace",
    "RunnerFactory",
    "default_store_path",
    "default_store_placement",
    "local_notary",
    "open_directory",
    "resolve_store_path",
]

STORE_ENV = "JUPYTER_HASHLINE_STORE"
TRUST_ENV = "JUPYTER_HASHLINE_TRUST"
"""`off` (or `0`, `false`, `no`): edits in directory mode leave notebook signing to Jupyter."""
CHOOSE_STORE_FILE = f"--store or ${STORE_ENV}; a Jupyter server: c.HashlineExtension.store_path"
"""How the store file of a directory's tools is chosen, as the store's advice names it."""

_log = logging.getLogger(__name__)

RunnerFactory = Callable[[NotebookFilesystem, Path], CellRunner]
"""Makes the runner of a directory from its notebook filesystem and its root."""


def default_store_path(
    root: str | os.PathLike[str],
    data_dir: str | os.PathLike[str] | None = None,
    *,
    runtime_dir: str | os.PathLike[str] | None = None,
    mount_table: MountTable | None = None,
) -> Path:
    """The one default store file of a root, for the server and the directory mode alike:
    `<data dir>/jupyter_hashline/snapshots-<root id>.sqlite3`, or on local disk when the data
    dir is on a network filesystem (`default_store_placement`)."""
    return default_store_placement(
        root, data_dir, runtime_dir=runtime_dir, mount_table=mount_table
    ).path


def default_store_placement(
    root: str | os.PathLike[str],
    data_dir: str | os.PathLike[str] | None = None,
    *,
    runtime_dir: str | os.PathLike[str] | None = None,
    mount_table: MountTable | None = None,
) -> StorePlacement:
    """Where the store of `root` goes by default, and why (store_placement.py). The data and
    runtime dirs are Jupyter's (honouring `JUPYTER_DATA_DIR` and `JUPYTER_RUNTIME_DIR`)
    unless given (the server gives its own); the mount table is this process's unless given."""
    from jupyter_core.paths import jupyter_data_dir, jupyter_runtime_dir

    return place_store(
        root,
        data_dir=data_dir if data_dir is not None else jupyter_data_dir(),
        runtime_dir=runtime_dir if runtime_dir is not None else jupyter_runtime_dir(),
        mount_table=mount_table if mount_table is not None else MountTable.read(),
    )


def resolve_store_path(root: str | os.PathLike[str], store: str | None) -> str:
    """The store file to use: `store` if given, else `$JUPYTER_HASHLINE_STORE`, else the
    default for `root`. `:memory:` keeps snapshots for this process only."""
    chosen = store or os.environ.get(STORE_ENV) or ""
    if chosen:
        return chosen
    placement = default_store_placement(root)
    if placement.note is not None:
        _log.info("%s", placement.note)
    return str(placement.path)


def local_notary(keep_trust: bool | None = None) -> Notary | None:
    """The notary of this machine's Jupyter (its data dir, honouring `JUPYTER_DATA_DIR`), or
    None when trust is not kept: `keep_trust` False, or None and `$JUPYTER_HASHLINE_TRUST` off."""
    if keep_trust is None:
        keep_trust = os.environ.get(TRUST_ENV, "").strip().lower() not in {
            "0",
            "off",
            "false",
            "no",
        }
    if not keep_trust:
        return None
    from jupyter_core.paths import jupyter_data_dir

    return data_dir_notary(jupyter_data_dir())


class DirectoryWorkspace(Workspace):
    """A `Workspace` that owns its SQLite store (closed by `aclose`)."""

    store: SqliteSnapshotStore
    root: Path

    async def aclose(self) -> None:
        try:
            await super().aclose()
        finally:
            self.store.close()


def open_directory(
    root: str | os.PathLike[str],
    store_path: str | None = None,
    *,
    seen_lines: SeenLinesPolicy | str = SeenLinesPolicy.REJECT,
    syntax_check: str = "warn",
    run_with: RunnerFactory | None = None,
    run_refusal: str | None = None,
    keep_trust: bool | None = None,
) -> DirectoryWorkspace:
    """The tools over the files under `root` (see the module docstring)."""
    folder = Path(root).resolve()
    chosen = resolve_store_path(folder, store_path)
    if chosen != ":memory:":
        Path(chosen).parent.mkdir(parents=True, exist_ok=True)
    workspace = open_workspace(
        PairedDiskFilesystem(folder, unreadable=torn_notebook),
        SqliteSnapshotStore(chosen, choose_file=CHOOSE_STORE_FILE),
        notary=local_notary(keep_trust),
        seen_lines=seen_lines,
        syntax_check=syntax_check,
        describe=f"directory {folder} (snapshots in {chosen})",
        runner=(lambda fs: run_with(fs, folder)) if run_with is not None else None,
        run_refusal=run_refusal,
        kind=DirectoryWorkspace,
    )
    workspace.root = folder
    return workspace
