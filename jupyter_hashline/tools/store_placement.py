"""Where a root's snapshot store goes by default: the Jupyter data dir, unless that is on a
network filesystem, where SQLite's WAL mode does not work (hosted hubs keep homes on NFS).

Invariants:
- The file is `<folder>/snapshots-<root id>.sqlite3`, `<root id>` the first 12 hex digits of
  the SHA-256 of the root's real path. The folder is the first of these that is on local disk
  (by the mount table, hashline/mounts.py):
  1. `<data dir>/jupyter_hashline`, the default (so also wherever no mount table is known:
     macOS, Windows);
  2. `<runtime dir>/jupyter_hashline`;
  3. `<temp dir>/jupyter-hashline-<uid>` (POSIX only), when it is ours: created here with mode
     0700, or already a real directory (no symlink) owned by this user and writable by no one
     else (then made 0700 if others could read it). Another user's folder, or one others may
     write to, is refused: they could read snapshots of our files or plant a store.
  If none is, the data dir after all: the store then opens with a rollback journal.
- Deterministic: the server, the command line and the MCP server on one machine, given the
  same dirs, choose the same file (they share tags through it). Nothing but the temp folder is
  created here.
- `StorePlacement.note` is the one line to log when the store is not in the data dir, saying
  where it is, why, and what that costs; None when it is.
"""

from __future__ import annotations

import hashlib
import os
import stat
import tempfile
from dataclasses import dataclass
from pathlib import Path

from ..hashline import MountTable

__all__ = ["StorePlacement", "place_store", "private_temp_folder", "store_file_name"]

FOLDER = "jupyter_hashline"
SETTING = "c.HashlineExtension.store_path (the command line: --store)"


@dataclass(frozen=True, slots=True)
class StorePlacement:
    """The default store file of a root, and why it is there when not in the data dir."""

    path: Path
    note: str | None = None


def store_file_name(root: str | os.PathLike[str]) -> str:
    """`snapshots-<root id>.sqlite3`: one file per root, whatever folder holds it."""
    root_id = hashlib.sha256(os.path.realpath(root).encode()).hexdigest()[:12]
    return f"snapshots-{root_id}.sqlite3"


def place_store(
    root: str | os.PathLike[str],
    *,
    data_dir: str | os.PathLike[str],
    runtime_dir: str | os.PathLike[str],
    mount_table: MountTable,
    temp_dir: str | os.PathLike[str] | None = None,
) -> StorePlacement:
    """The default store file of `root` (see the module docstring); `temp_dir` defaults to
    `tempfile.gettempdir()`."""
    name = store_file_name(root)
    data = Path(data_dir) / FOLDER
    if not mount_table.is_network(data):
        return StorePlacement(data / name)
    found = mount_table.filesystem_of(data)
    assert found is not None  # a network filesystem is a mount the table knows
    why = (
        f"the Jupyter data dir {data_dir} is on a network filesystem ({found[1]} at "
        f"{found[0]}), where SQLite's WAL mode does not work"
    )
    runtime = Path(runtime_dir) / FOLDER
    if not mount_table.is_network(runtime):
        return StorePlacement(runtime / name, _moved(runtime / name, why))
    temp = Path(temp_dir if temp_dir is not None else tempfile.gettempdir())
    if not mount_table.is_network(temp):
        private, refusal = private_temp_folder(temp)
        if private is not None:
            return StorePlacement(private / name, _moved(private / name, why))
        why += f"; {refusal}"
    return StorePlacement(
        data / name,
        f"jupyter_hashline: snapshot store {data / name} stays in the data dir: {why}, and no "
        f"local folder was found (the runtime dir is on a network filesystem too). It uses a "
        f"rollback journal instead of WAL; to put it on local disk set {SETTING}.",
    )


def _moved(path: Path, why: str) -> str:
    return (
        f"jupyter_hashline: snapshot store {path}, on local disk, since {why}. Tags last as "
        f"long as that file (a temporary folder may not outlive the machine or container); "
        f"to keep them elsewhere set {SETTING}."
    )


def private_temp_folder(temp_dir: str | os.PathLike[str]) -> tuple[Path | None, str | None]:
    """(`<temp_dir>/jupyter-hashline-<uid>`, None) when that folder is this user's alone
    (created 0700 if missing); (None, why not) otherwise, and on a system without uids."""
    if os.name != "posix":
        return None, "no private temporary folder on this system"
    folder = Path(temp_dir) / f"jupyter-hashline-{os.getuid()}"
    try:
        folder.mkdir(mode=0o700)  # the umask may narrow this, never widen it
    except FileExistsError:
        pass
    except OSError as err:
        return None, f"could not create {folder} ({err})"
    try:
        info = os.lstat(folder)
    except OSError as err:
        return None, f"could not inspect {folder} ({err})"
    refusal = _unsafe(folder, info)
    if refusal:
        return None, refusal
    if stat.S_IMODE(info.st_mode) != 0o700:  # ours, no one else could write in it: make it 0700
        os.chmod(folder, 0o700)
    return folder, None


def _unsafe(folder: Path, info: os.stat_result) -> str | None:
    """Why `folder` must not hold our snapshots; None when it may."""
    if not stat.S_ISDIR(info.st_mode):
        return f"refused {folder}: not a directory (a symlink or a file)"
    if info.st_uid != os.getuid():
        return f"refused {folder}: owned by uid {info.st_uid}, not by this user"
    if info.st_mode & (stat.S_IWGRP | stat.S_IWOTH):
        return f"refused {folder}: writable by others (mode {stat.S_IMODE(info.st_mode):o})"
    return None
