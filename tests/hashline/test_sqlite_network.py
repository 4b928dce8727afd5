"""The SQLite store on a network filesystem: never WAL, one warning, locks as typed errors.

Each test plants a mount table saying the test's folder is NFS (or local), so what the store
does on a hub's NFS home is seen on any machine.
"""

from __future__ import annotations

import logging
import os
import shutil
import sqlite3
from pathlib import Path

import pytest

from jupyter_hashline.hashline import MountTable, StoreBusyError, sqlite_store
from jupyter_hashline.hashline.messages import CHOOSE_STORE
from jupyter_hashline.hashline.sqlite_store import SqliteSnapshotStore

LOGGER = sqlite_store.__name__


def nfs_at(folder: Path) -> MountTable:
    return MountTable.parse(
        f"/dev/root / ext4 rw 0 0\nfiler:/export/home {os.path.realpath(folder)} nfs4 rw 0 0\n"
    )


def local_at(folder: Path) -> MountTable:
    return MountTable.parse(f"/dev/root / ext4 rw 0 0\n/dev/sdb1 {folder} xfs rw 0 0\n")


def file_journal_mode(db: Path) -> str:
    """The journal mode the file itself is in, asked on a connection of its own."""
    conn = sqlite3.connect(db)
    try:
        mode: str = conn.execute("PRAGMA journal_mode").fetchone()[0]
        return mode
    finally:
        conn.close()


def companions(db: Path) -> list[str]:
    return sorted(p.name for p in db.parent.iterdir() if p.name.startswith(db.name + "-"))


def network_warnings(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [
        r.getMessage()
        for r in caplog.records
        if r.name == LOGGER and r.levelno == logging.WARNING and "network" in r.getMessage()
    ]


def test_on_nfs_the_store_uses_a_rollback_journal_and_says_so_once(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    db = tmp_path / "jupyter_hashline" / "snapshots.sqlite3"
    with caplog.at_level(logging.WARNING, logger=LOGGER):
        store = SqliteSnapshotStore(db, mount_table=nfs_at(tmp_path), delta_min_bytes=0)
        with store:
            assert store.journal_mode == "delete"
            assert store.network_filesystem == (os.path.realpath(tmp_path), "nfs4")
            for n in range(20):
                tag = store.record("a.py", f"version {n}\n" * 2000)
                store.record_seen_lines("a.py", tag, range(1, 50))
            assert companions(db) == []  # no -wal, no -shm, no journal left between writes
            assert file_journal_mode(db) == "delete"
    assert companions(db) == []
    (line,) = network_warnings(caplog)
    assert str(db) in line and "nfs4" in line and os.path.realpath(tmp_path) in line
    assert "shared memory" in line and CHOOSE_STORE in line  # the core names no surface
    assert "HashlineExtension" not in line


def test_the_advice_names_how_its_surface_chooses_the_store_file(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, logger=LOGGER)
    db = tmp_path / "s.sqlite3"
    with SqliteSnapshotStore(db, mount_table=nfs_at(tmp_path), choose_file="--the-flag"):
        pass
    (line,) = network_warnings(caplog)
    assert "put the store on local disk (--the-flag)" in line
    assert CHOOSE_STORE not in line


def test_snapshots_round_trip_on_nfs(tmp_path: Path) -> None:
    db = tmp_path / "s.sqlite3"
    with SqliteSnapshotStore(db, mount_table=nfs_at(tmp_path)) as store:
        first = store.record("f.py", "one\n")
        second = store.record("f.py", "one\ntwo\n")
        store.record_seen_lines("f.py", second, [2], agent="a1")
    with SqliteSnapshotStore(db, mount_table=nfs_at(tmp_path)) as reopened:
        assert [s.text for s in reopened.history("f.py")] == ["one\ntwo\n", "one\n"]
        assert reopened.by_hash("f.py", first) is not None
        assert reopened.seen_lines("f.py", second, "a1") == frozenset({2})


def test_no_checkpoint_runs_in_delete_mode(tmp_path: Path) -> None:
    db = tmp_path / "s.sqlite3"
    with SqliteSnapshotStore(db, mount_table=nfs_at(tmp_path), checkpoint_bytes=1024) as store:
        for n in range(30):
            store.record("f.py", f"{n}\n" * 4000)
        assert store.wait_for_checkpoint(timeout_s=5)
        assert store.checkpoints_run == 0


def test_a_store_left_in_wal_mode_is_switched_with_its_wal_copied_back(tmp_path: Path) -> None:
    """A crash image of a store written in WAL mode (its last writes only in `-wal`), as an
    older version left it on an NFS home: opened there, the WAL is folded in and gone."""
    local, home = tmp_path / "local", tmp_path / "home"
    local.mkdir()
    home.mkdir()
    db = local / "s.sqlite3"
    with SqliteSnapshotStore(db, mount_table=local_at(local)) as store:
        assert store.journal_mode == "wal"
        store.record("f.py", "kept in the file\n")
        store.record("f.py", "only in the wal\n")
        assert companions(db) == ["s.sqlite3-shm", "s.sqlite3-wal"]
        for name in ("s.sqlite3", "s.sqlite3-wal"):
            shutil.copy(local / name, home / name)
    moved = home / "s.sqlite3"
    assert file_journal_mode(moved) == "wal"
    with SqliteSnapshotStore(moved, mount_table=nfs_at(home)) as store:
        assert store.journal_mode == "delete"
        assert companions(moved) == []
        texts = [s.text for s in store.history("f.py")]
        assert texts == ["only in the wal\n", "kept in the file\n"]
    assert file_journal_mode(moved) == "delete"


def test_a_wal_file_another_process_holds_open_stays_wal_until_opened_alone(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    db = tmp_path / "s.sqlite3"
    SqliteSnapshotStore(db, mount_table=local_at(tmp_path)).close()
    other = sqlite3.connect(db)  # another process's connection, in WAL mode
    other.execute("SELECT count(*) FROM versions").fetchone()
    try:
        with caplog.at_level(logging.WARNING, logger=LOGGER):
            store = SqliteSnapshotStore(db, mount_table=nfs_at(tmp_path), busy_timeout_s=5)
        with store:
            assert store.journal_mode == "wal"
            store.record("f.py", "still works\n")
            assert text_of_head(store) == "still works\n"
    finally:
        other.close()
    (line,) = network_warnings(caplog)
    assert "still in WAL mode" in line
    with SqliteSnapshotStore(db, mount_table=nfs_at(tmp_path)) as alone:
        assert alone.journal_mode == "delete"
        assert text_of_head(alone) == "still works\n"
    assert file_journal_mode(db) == "delete"


def text_of_head(store: SqliteSnapshotStore) -> str | None:
    head = store.head("f.py")
    return None if head is None else head.text


def test_on_local_disk_the_store_keeps_wal_and_says_nothing(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    db = tmp_path / "s.sqlite3"
    local = local_at(tmp_path)
    with (
        caplog.at_level(logging.WARNING, logger=LOGGER),
        SqliteSnapshotStore(db, mount_table=local) as store,
    ):
        store.record("f.py", "x\n")
        assert store.journal_mode == "wal" and store.network_filesystem is None
        assert file_journal_mode(db) == "wal"
    assert network_warnings(caplog) == []


def test_an_empty_mount_table_means_local(tmp_path: Path) -> None:
    with SqliteSnapshotStore(tmp_path / "s.sqlite3", mount_table=MountTable()) as store:
        assert store.journal_mode == "wal"


def test_a_locked_store_on_nfs_names_the_filesystem_and_the_fix(tmp_path: Path) -> None:
    db = tmp_path / "s.sqlite3"
    with SqliteSnapshotStore(db, mount_table=nfs_at(tmp_path), busy_timeout_s=0.2) as store:
        store.record("f.py", "before\n")
        holder = sqlite3.connect(db, isolation_level=None)
        holder.execute("BEGIN EXCLUSIVE")
        try:
            with pytest.raises(StoreBusyError) as caught:
                store.record("f.py", "during\n")
        finally:
            holder.rollback()
            holder.close()
        assert "network filesystem (nfs4 at" in caught.value.message
        assert CHOOSE_STORE in caught.value.message
        store.record("f.py", "after\n")
        assert text_of_head(store) == "after\n"


def lock_failure() -> sqlite3.OperationalError:
    """What SQLite raises when the filesystem's lock service fails (SQLITE_IOERR_LOCK)."""
    err = sqlite3.OperationalError("disk I/O error")
    err.sqlite_errorcode = 3850  # type: ignore[attr-defined]
    return err


def test_a_failed_file_lock_is_a_typed_error(tmp_path: Path) -> None:
    with SqliteSnapshotStore(tmp_path / "s.sqlite3", mount_table=nfs_at(tmp_path)) as store:

        def fails(conn: sqlite3.Connection) -> None:
            raise lock_failure()

        with pytest.raises(StoreBusyError) as caught:
            store._run(fails)
    assert "could not lock its file" in caught.value.message
    assert "nfs4" in caught.value.message


def test_a_failed_file_lock_on_open_does_not_move_the_store_aside(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = tmp_path / "s.sqlite3"
    with SqliteSnapshotStore(db, mount_table=nfs_at(tmp_path)) as store:
        store.record("f.py", "kept\n")

    def prepare(conn: sqlite3.Connection) -> None:
        raise lock_failure()

    monkeypatch.setattr(sqlite_store, "_prepare", prepare)
    with pytest.raises(StoreBusyError):
        SqliteSnapshotStore(db, mount_table=nfs_at(tmp_path))
    monkeypatch.undo()
    assert list(tmp_path.glob("*.corrupt-*")) == []
    with SqliteSnapshotStore(db, mount_table=nfs_at(tmp_path)) as reopened:
        assert text_of_head(reopened) == "kept\n"
