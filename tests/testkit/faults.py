"""Fault injection for the disk and the snapshot store, shared by the reliability tests.

`DiskFaults` wraps the `os` calls `DiskFilesystem` makes while writing (open of the temp file,
write, fsync, replace) and raises a chosen `OSError` at one of those points, only for files
under one root, so nothing else in the process is disturbed. `store_state` captures everything
a snapshot store knows about one path, to prove a failed write left it unadvanced.
`QuickSqliteStore`, `hold_exclusive_lock` and `garble` make a store busy or corrupt.
`TALLY` counts what the reliability and security tests did (faults injected and survived,
inputs tried and clean errors, requests and lost edits); as a pytest plugin (listed in the
top-level conftest) this module prints it at the end of any run that counted something.
"""

from __future__ import annotations

import errno
import os
import sqlite3
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from jupyter_hashline.hashline import SqliteSnapshotStore, disk

TALLY: Counter[str] = Counter()
TEMP_SUFFIX = ".hashline-tmp"
POINTS = ("open", "write", "fsync", "replace")
ERRNOS = {
    "ENOSPC": errno.ENOSPC,
    "EIO": errno.EIO,
    "EACCES": errno.EACCES,
    "EROFS": errno.EROFS,
    "EDQUOT": errno.EDQUOT,
}


@dataclass
class DiskFaults:
    """Raise `OSError(code)` at `point` of every write under `root` while armed."""

    root: Path
    point: str
    code: int
    armed: bool = True
    injected: int = 0
    _temp_fds: set[int] = field(default_factory=set)

    def _fail(self) -> None:
        self.injected += 1
        TALLY["faults injected"] += 1
        raise OSError(self.code, os.strerror(self.code))

    def install(self, monkeypatch: pytest.MonkeyPatch) -> None:
        real_open, real_write = os.open, os.write
        real_fsync, real_replace = os.fsync, os.replace

        def ours(path: object) -> bool:
            text = os.fspath(path) if isinstance(path, (str, os.PathLike)) else ""
            return self.armed and str(text).startswith(str(self.root))

        def fake_open(path: Any, flags: int, mode: int = 0o777, **kw: Any) -> int:
            is_temp = ours(path) and str(path).endswith(TEMP_SUFFIX)
            if is_temp and self.point == "open":
                self._fail()
            fd = real_open(path, flags, mode, **kw)
            if is_temp:
                self._temp_fds.add(fd)
            return fd

        def fake_write(fd: int, data: Any) -> int:
            if self.armed and fd in self._temp_fds and self.point == "write":
                real_write(fd, bytes(data[: max(1, len(data) // 2)]))  # half lands, then ENOSPC
                self._temp_fds.discard(fd)
                self._fail()
            return real_write(fd, data)

        def fake_fsync(fd: int) -> None:
            if self.armed and fd in self._temp_fds and self.point == "fsync":
                self._temp_fds.discard(fd)
                self._fail()
            real_fsync(fd)

        def fake_replace(src: Any, dst: Any, **kw: Any) -> None:
            if ours(dst) and self.point == "replace":
                self._fail()
            real_replace(src, dst, **kw)

        monkeypatch.setattr(disk.os, "open", fake_open)
        monkeypatch.setattr(disk.os, "write", fake_write)
        monkeypatch.setattr(disk.os, "fsync", fake_fsync)
        monkeypatch.setattr(disk.os, "replace", fake_replace)


def injected(count: int = 1) -> None:
    TALLY["faults injected"] += count


def survived(count: int = 1) -> None:
    """Call after every check of a fault test has passed."""
    TALLY["faults survived"] += count


def temp_files(root: Path) -> list[Path]:
    """Temp files a write left behind (there must be none after a failure it survived)."""
    return sorted(p for p in root.rglob(f"*{TEMP_SUFFIX}"))


def tree_bytes(root: Path) -> dict[str, bytes]:
    """Every regular file under `root` and its bytes."""
    return {
        str(p.relative_to(root)): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and not p.is_symlink()
    }


def store_state(store: Any, key: str) -> list[tuple[str, str, int, frozenset[int]]]:
    """(tag, text, recorded_at_ms, seen lines) of every version of `key`, newest first."""
    return [
        (snap.tag, snap.text, snap.recorded_at_ms, store.seen_lines(key, snap.tag))
        for snap in store.history(key)
    ]


class QuickSqliteStore(SqliteSnapshotStore):
    """The server's default store with a short busy timeout, for lock tests through REST
    (configured as `store_class = "testkit.faults.QuickSqliteStore"`)."""

    def __init__(self, path: str, max_versions_per_path: int = 64) -> None:
        super().__init__(path, max_versions_per_path, busy_timeout_s=0.2)


def hold_exclusive_lock(db: Path) -> sqlite3.Connection:
    """Another process's view: a connection holding the store's write lock until rollback."""
    holder = sqlite3.connect(db, isolation_level=None, check_same_thread=False)
    holder.execute("BEGIN EXCLUSIVE")
    return holder


def garble(db: Path) -> bytes:
    """Overwrite every page of a SQLite file but the header with 0xFF; returns the bytes."""
    data = bytearray(db.read_bytes())
    for offset in range(100, len(data), 4096):
        data[offset : offset + 4096] = b"\xff" * min(4096, len(data) - offset)
    for suffix in ("-wal", "-shm"):
        db.with_name(db.name + suffix).unlink(missing_ok=True)
    db.write_bytes(bytes(data))
    return bytes(data)


_TALLY_ROWS = (
    ("faults injected / survived", "faults injected", "faults survived"),
    ("inputs tried / clean errors", "inputs tried", "inputs clean errors"),
    ("requests / lost edits", "requests", "lost edits"),
    ("requests / 5xx answers", "requests", "5xx"),
)


def pytest_terminal_summary(terminalreporter: Any) -> None:
    """The reliability tally at the end of a run, when the run counted anything."""
    if not TALLY:
        return
    terminalreporter.section("reliability tally (issue 13)")
    for label, left, right in _TALLY_ROWS:
        terminalreporter.write_line(f"{label:<30} {TALLY[left]:>8} / {TALLY[right]}")
