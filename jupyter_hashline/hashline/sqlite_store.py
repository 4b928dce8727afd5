"""A persistent `SnapshotStore` in one SQLite file: tags and seen lines survive restarts.

Invariants (on top of the `SnapshotStore` contract in store.py):
- Same bounds and recency rules as `InMemorySnapshotStore`: at most `max_versions_per_path`
  versions per path (the least recently recorded goes first) and at most `max_paths` paths (the
  least recently used goes first; "used" = a version recorded or seen lines added).
- Order is kept by one counter stored in the file, never by the clock, so several processes
  sharing the file agree on "newest" even when their clocks tie or disagree.
- Texts and paths are stored as UTF-8 BLOBs with `surrogatepass`, so every Python `str`
  (lone surrogates from undecodable file names included) round-trips exactly. Dedup compares
  the full text (a SHA-256 column only narrows the search).
- A new version of at least `delta_min_bytes` is stored as a delta against the path's newest
  version when this store knows that version's bytes (it recorded or read it) and the two
  share most of their bytes (sqlite_deltas.py): a one-cell edit of a 5 MB notebook writes that
  cell, not 5 MB. A version dropped from the ring stays, hidden, while a kept delta needs it.
- Thread-safe: one connection guarded by a lock; every write is one `BEGIN IMMEDIATE`
  transaction, so other processes see all of it or none of it. WAL mode lets readers in other
  processes proceed while one writes.
- WAL only on local disk: WAL keeps its index in shared memory, which a network filesystem
  (NFS, SMB, FUSE..., see mounts.py; `mount_table` says which filesystem the file is on) does
  not share reliably. There the store never sets WAL: it uses a rollback journal
  (`journal_mode` DELETE, `synchronous` FULL), switches a file it finds in WAL back when no
  other process has it open (else it stays WAL until then), and logs one warning saying where
  the store is, on what, and how to move it. `journal_mode` says which mode the file is in.
- Checkpoints run only in WAL mode (a rollback journal has no WAL to copy back). A write
  does not checkpoint the WAL itself (a checkpoint copies and fsyncs megabytes: 15-18 ms
  here, on the writer's thread, which is a server's event loop). Once about `checkpoint_bytes`
  were written, a background thread checkpoints on a connection of its own, passively (writers
  go on meanwhile), pass after pass until the WAL is all copied (SQLite then starts it over) or
  `_CATCH_UP_PASSES` ran; at most one such thread runs, and `close` waits for it. When writes
  outrun it (the WAL file past `_BEHIND_FACTOR` thresholds), the writer waits for it and
  checkpoints the whole WAL away itself, as SQLite would: the WAL stays bounded at any load.
- Seen lines are kept per (version, agent) as runs of consecutive lines (line_runs.py:
  sorted, disjoint, never adjacent), so a whole read of 100,000 lines writes one row. A
  version-1 file (seen lines without agents) is migrated in place, in one transaction, its
  seen lines credited to the default agent; a version-2 file (every version whole) gets the
  delta columns the same way, its versions whole; a version-3 file (a row a seen line) gets
  its seen lines as runs the same way.
- The schema is versioned with `PRAGMA user_version`. A file that is not a usable store
  (garbage, corruption, a foreign or newer schema) is moved aside to `<name>.corrupt-<ms>`
  (with its `-wal`/`-shm` companions), a warning is logged, and a fresh store starts;
  `recovered_from` names the moved file. A database locked by another process past
  `busy_timeout_s` raises `StoreBusyError`, never hangs and never moves the file; so does a
  file lock the filesystem failed to take or keep (`SQLITE_PROTOCOL`, a locking I/O error: a
  network filesystem's lock service), its message naming that filesystem.
"""

from __future__ import annotations

import hashlib
import logging
import os
import sqlite3
import threading
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any, TypeVar

from .errors import StoreBusyError
from .line_runs import lines_of, merge_runs, runs_of
from .memory_store import Clock, wall_clock_ms
from .messages import CHOOSE_STORE
from .mounts import MountTable, is_network_type
from .sqlite_deltas import MAX_DEPTH, BlobCache, Delta, bytes_of, plan_delta
from .store import DEFAULT_AGENT, Snapshot
from .text import section_tag

__all__ = ["SCHEMA_VERSION", "SqliteSnapshotStore"]

SCHEMA_VERSION = 4
MEMORY = ":memory:"
CHECKPOINT_BYTES = 4 * 1024 * 1024
DELTA_MIN_BYTES = 16 * 1024  # a smaller text is stored whole: a delta would cost a query more
_WRITE_OVERHEAD = 4096  # a transaction writes at least a page or so besides its blobs
_CATCH_UP_PASSES = 8
_BEHIND_FACTOR = 4
_LEAVE_WAL_WAIT_S = 0.25

_log = logging.getLogger(__name__)
_T = TypeVar("_T")

_SEEN_RUNS = """
CREATE TABLE seen_runs (
    version_id INTEGER NOT NULL REFERENCES versions (id) ON DELETE CASCADE,
    agent BLOB NOT NULL,
    first INTEGER NOT NULL,
    last INTEGER NOT NULL,
    PRIMARY KEY (version_id, agent, first)
) WITHOUT ROWID;
"""
"""Seen lines as runs (line_runs.py): the table made new and by the version-3 migration."""
_SCHEMA = (
    """
CREATE TABLE counters (name TEXT PRIMARY KEY, value INTEGER NOT NULL);
INSERT INTO counters (name, value) VALUES ('seq', 0);
CREATE TABLE paths (path BLOB PRIMARY KEY, used_seq INTEGER NOT NULL);
CREATE TABLE versions (
    id INTEGER PRIMARY KEY,
    path BLOB NOT NULL REFERENCES paths (path) ON DELETE CASCADE,
    text BLOB NOT NULL,
    text_sha256 BLOB NOT NULL,
    tag TEXT NOT NULL,
    recorded_at_ms INTEGER NOT NULL,
    seq INTEGER NOT NULL,
    base_id INTEGER REFERENCES versions (id),
    prefix INTEGER NOT NULL DEFAULT 0,
    suffix INTEGER NOT NULL DEFAULT 0,
    depth INTEGER NOT NULL DEFAULT 0,
    hidden INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX versions_by_path ON versions (path, seq);
CREATE INDEX versions_by_tag ON versions (path, tag, seq);
CREATE INDEX versions_by_text ON versions (path, text_sha256);
CREATE INDEX versions_by_base ON versions (base_id);
"""
    + _SEEN_RUNS
)
_MIGRATE_FROM_1 = """
CREATE TABLE seen_v2 (
    version_id INTEGER NOT NULL REFERENCES versions (id) ON DELETE CASCADE,
    agent BLOB NOT NULL,
    line INTEGER NOT NULL,
    PRIMARY KEY (version_id, agent, line)
) WITHOUT ROWID;
INSERT INTO seen_v2 (version_id, agent, line) SELECT version_id, X'', line FROM seen;
DROP TABLE seen;
ALTER TABLE seen_v2 RENAME TO seen;
PRAGMA user_version = 2
"""
_MIGRATE_FROM_2 = """
ALTER TABLE versions ADD COLUMN base_id INTEGER REFERENCES versions (id);
ALTER TABLE versions ADD COLUMN prefix INTEGER NOT NULL DEFAULT 0;
ALTER TABLE versions ADD COLUMN suffix INTEGER NOT NULL DEFAULT 0;
ALTER TABLE versions ADD COLUMN depth INTEGER NOT NULL DEFAULT 0;
ALTER TABLE versions ADD COLUMN hidden INTEGER NOT NULL DEFAULT 0;
CREATE INDEX versions_by_base ON versions (base_id);
PRAGMA user_version = 3
"""
_MIGRATE_FROM_3 = (
    _SEEN_RUNS
    + """INSERT INTO seen_runs (version_id, agent, first, last)
    SELECT version_id, agent, MIN(line), MAX(line) FROM (
        SELECT version_id, agent, line,
            line - ROW_NUMBER() OVER (PARTITION BY version_id, agent ORDER BY line) AS island
        FROM seen
    ) GROUP BY version_id, agent, island;
DROP TABLE seen;
PRAGMA user_version = 4
"""
)
_MIGRATIONS = ((1, _MIGRATE_FROM_1), (2, _MIGRATE_FROM_2), (3, _MIGRATE_FROM_3))
# version-1 seen lines get agents; version-2 versions may be deltas; version-3 seen lines (one
# row a line) become runs (consecutive lines share a number less their rank: one island a run)
_UNNEEDED_BASE = """
SELECT base_id FROM versions WHERE id = ? AND hidden = 1
    AND NOT EXISTS (SELECT 1 FROM versions AS delta WHERE delta.base_id = ?)
"""
"""A hidden version no version is stored against: found, it goes (and this is its base)."""
_ROW = "id, tag, recorded_at_ms, text_sha256, base_id, prefix, suffix, text"
_TABLES = frozenset({"counters", "paths", "versions", "seen_runs"})
_OLD_TABLES = frozenset({"counters", "paths", "versions", "seen"})  # before version 4

_BUSY_CODES = frozenset({5, 6})  # SQLITE_BUSY, SQLITE_LOCKED
_LOCK_FAILED_CODE = 15  # SQLITE_PROTOCOL: a file lock that kept failing (WAL over a network)
_LOCK_IO_CODES = frozenset({2058, 2314, 3594, 3850, 4618, 4874, 5130, 5386})
# SQLITE_IOERR_ UNLOCK, RDLOCK, CHECKRESERVEDLOCK, LOCK, SHMOPEN, SHMSIZE, SHMLOCK, SHMMAP
_CORRUPT_CODES = frozenset({11, 26})  # SQLITE_CORRUPT, SQLITE_NOTADB


class _UnusableStore(sqlite3.DatabaseError):
    """A readable SQLite file that is not a store this version can use."""


def _encode(value: str) -> bytes:
    return value.encode("utf-8", "surrogatepass")


def _decode(blob: bytes) -> str:
    return blob.decode("utf-8", "surrogatepass")


def _error_code(err: sqlite3.Error) -> int | None:
    code = getattr(err, "sqlite_errorcode", None)
    return code & 0xFF if isinstance(code, int) else None


def _is_busy(err: sqlite3.Error) -> bool:
    code = _error_code(err)
    if code is not None:
        return code in _BUSY_CODES
    text = str(err).lower()
    return "locked" in text or "busy" in text


def _is_lock_failure(err: sqlite3.Error) -> bool:
    """The filesystem failed to take, keep or share a lock (not another process holding it)."""
    code = getattr(err, "sqlite_errorcode", None)
    if isinstance(code, int):
        return code & 0xFF == _LOCK_FAILED_CODE or code in _LOCK_IO_CODES
    return "locking protocol" in str(err).lower()


def _is_locking(err: sqlite3.Error) -> bool:
    return _is_busy(err) or _is_lock_failure(err)


def _is_corruption(err: sqlite3.Error) -> bool:
    if isinstance(err, _UnusableStore):
        return True
    code = _error_code(err)
    if code is not None:
        return code in _CORRUPT_CODES
    text = str(err).lower()
    return "malformed" in text or "not a database" in text


class SqliteSnapshotStore:
    """Snapshots in a SQLite file, shared by threads and processes; see the module docstring."""

    def __init__(
        self,
        path: str | os.PathLike[str],
        max_versions_per_path: int = 64,
        clock: Clock | None = None,
        *,
        max_paths: int = 512,
        busy_timeout_s: float = 5.0,
        checkpoint_bytes: int = CHECKPOINT_BYTES,
        delta_min_bytes: int = DELTA_MIN_BYTES,
        mount_table: MountTable | None = None,
        choose_file: str = CHOOSE_STORE,
    ) -> None:
        """`choose_file`: how the store's file is chosen, as its advice names it (the
        surface opening it says: the server its setting, the command line its flag)."""
        self.path = Path(path) if str(path) != MEMORY else None
        self.choose_file = choose_file
        self.max_versions_per_path = _positive("max_versions_per_path", max_versions_per_path)
        self.max_paths = _positive("max_paths", max_paths)
        self.busy_timeout_s = busy_timeout_s
        self.checkpoint_bytes = _positive("checkpoint_bytes", checkpoint_bytes)
        self.delta_min_bytes = delta_min_bytes
        self._unchecked = 0  # bytes written since the last checkpoint was started
        self._checkpointer: threading.Thread | None = None
        self._checkpoints_idle = threading.Condition()
        self.checkpoints_run = 0
        self.recovered_from: Path | None = None
        self.recovery_reason: str | None = None
        self._clock: Clock = clock or wall_clock_ms
        self._lock = threading.RLock()
        self._blobs = BlobCache()  # under the lock
        self.network_filesystem = self._network_filesystem(mount_table)
        self.journal_mode = "memory"  # set by _open: what the file is in (wal, delete)
        self._conn = self._open()
        if self.network_filesystem is not None:
            self._warn_network()

    def _network_filesystem(self, mount_table: MountTable | None) -> tuple[str, str] | None:
        """(mount point, type) of the network filesystem the file is on; None: local."""
        if self.path is None:
            return None
        table = mount_table if mount_table is not None else MountTable.read()
        found = table.filesystem_of(self.path)
        return found if found is not None and is_network_type(found[1]) else None

    def _warn_network(self) -> None:
        assert self.network_filesystem is not None
        point, fstype = self.network_filesystem
        if self.journal_mode == "wal":
            mode = (
                "it is still in WAL mode because another process has it open, and switches to "
                "a rollback journal (journal_mode DELETE) once opened alone"
            )
        else:
            mode = "it uses a rollback journal (journal_mode DELETE) instead of WAL"
        _log.warning(
            "Snapshot store %s is on a network filesystem (%s at %s): %s, since WAL needs "
            "shared memory that network filesystems do not provide; writers lock the whole "
            "file. For WAL, put the store on local disk (%s).",
            self.path,
            fstype,
            point,
            mode,
            self.choose_file,
        )

    def __repr__(self) -> str:
        return f"SqliteSnapshotStore({str(self.path or MEMORY)!r})"

    def close(self) -> None:
        """Close the connection (after a running checkpoint ends); the store cannot be used
        afterwards."""
        self.wait_for_checkpoint()
        with self._lock:
            self._conn.close()

    def wait_for_checkpoint(self, timeout_s: float | None = None) -> bool:
        """Wait until no background checkpoint runs; False if one still runs at `timeout_s`."""
        with self._checkpoints_idle:
            return self._checkpoints_idle.wait_for(lambda: self._checkpointer is None, timeout_s)

    def __enter__(self) -> SqliteSnapshotStore:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()

    # -- lookups -------------------------------------------------------------------------------

    def head(self, path: str) -> Snapshot | None:
        history = self._history(path, limit=1)
        return history[0] if history else None

    def history(self, path: str) -> list[Snapshot]:
        return self._history(path, limit=-1)

    def by_hash(self, path: str, tag: str) -> Snapshot | None:
        sql = (
            f"SELECT {_ROW} FROM versions WHERE path = ? AND tag = ? AND hidden = 0"
            " ORDER BY seq DESC LIMIT 1"
        )
        found = self._snapshots(path, sql, (_encode(path), tag))
        return found[0] if found else None

    def seen_lines(self, path: str, tag: str, agent: str | None = None) -> frozenset[int]:
        """Lines shown to `agent` (None: anyone) of the newest version of `path` with `tag`."""
        sql = (
            "SELECT first, last FROM seen_runs WHERE version_id = (SELECT id FROM versions"
            " WHERE path = ? AND tag = ? AND hidden = 0 ORDER BY seq DESC LIMIT 1)"
        )
        params: tuple[object, ...] = (_encode(path), tag)
        if agent is not None:
            sql, params = sql + " AND agent = ?", (*params, _encode(agent))
        return lines_of(self._read(sql, params))

    @property
    def where(self) -> str:
        """Where the tags live, as a refusal names it."""
        if self.path is None:
            return "this process's memory (an in-memory store, gone when it stops)"
        return f"the snapshot store {self.path}"

    def paths(self) -> list[str]:
        """Tracked paths, most recently used first."""
        rows = self._read("SELECT path FROM paths ORDER BY used_seq DESC", ())
        return [_decode(row[0]) for row in rows]

    # -- updates -------------------------------------------------------------------------------

    def record(self, path: str, full_text: str) -> str:
        """Store `full_text` as the newest version of `path` and return its tag (read fusion)."""
        tag = section_tag(full_text)
        key, blob, now = _encode(path), _encode(full_text), self._clock()
        digest = hashlib.sha256(blob).digest()

        stored = [len(blob)]

        def write(conn: sqlite3.Connection) -> None:
            seq = self._touch(conn, key)
            same = conn.execute(
                "SELECT id FROM versions WHERE path = ? AND text_sha256 = ? AND hidden = 0",
                (key, digest),
            ).fetchall()
            for (version_id,) in same:
                if self._bytes(conn, version_id, digest) == blob:
                    conn.execute(
                        "UPDATE versions SET seq = ?, recorded_at_ms = ? WHERE id = ?",
                        (seq, now, version_id),
                    )
                    self._blobs.put(version_id, digest, blob)
                    stored[0] = 0
                    return
            base_id, delta, depth = self._delta(conn, key, blob)
            middle = blob if delta is None else delta.middle
            cursor = conn.execute(
                "INSERT INTO versions (path, text, text_sha256, tag, recorded_at_ms, seq,"
                " base_id, prefix, suffix, depth) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (key, middle, digest, tag, now, seq, base_id, *_lengths(delta), depth),
            )
            assert cursor.lastrowid is not None
            self._blobs.put(cursor.lastrowid, digest, blob)
            stored[0] = len(middle)
            self._trim_versions(conn, key)
            self._evict_paths(conn)

        self._write(write, lambda: stored[0])
        return tag

    def _delta(
        self, conn: sqlite3.Connection, key: bytes, blob: bytes
    ) -> tuple[int | None, Delta | None, int]:
        """(base id, delta, depth) of `blob` against the path's newest version, when its bytes
        are known here and a delta pays; (None, None, 0): store it whole."""
        if len(blob) < self.delta_min_bytes:
            return None, None, 0
        head = conn.execute(
            "SELECT id, text_sha256, depth FROM versions WHERE path = ? AND hidden = 0"
            " ORDER BY seq DESC LIMIT 1",
            (key,),
        ).fetchone()
        if head is None or head[2] >= MAX_DEPTH:
            return None, None, 0
        base = self._blobs.get(head[0], head[1])
        delta = None if base is None else plan_delta(base, blob)
        return (None, None, 0) if delta is None else (head[0], delta, head[2] + 1)

    def record_seen_lines(
        self, path: str, tag: str, lines: Iterable[int], agent: str = DEFAULT_AGENT
    ) -> None:
        """Credit `agent` with `lines` of the newest version of `path` with `tag` (no such
        version: no-op). Kept as runs merged with those already credited."""
        key, runs, who = _encode(path), runs_of(lines), _encode(agent)

        def write(conn: sqlite3.Connection) -> None:
            found = conn.execute(
                "SELECT id FROM versions WHERE path = ? AND tag = ? AND hidden = 0"
                " ORDER BY seq DESC LIMIT 1",
                (key, tag),
            ).fetchone()
            if found is None:
                return
            where = (found[0], who)
            had = conn.execute(
                "SELECT first, last FROM seen_runs WHERE version_id = ? AND agent = ?", where
            ).fetchall()
            merged = merge_runs(had, runs)
            if merged != sorted(had):
                conn.execute("DELETE FROM seen_runs WHERE version_id = ? AND agent = ?", where)
                conn.executemany(
                    "INSERT INTO seen_runs (version_id, agent, first, last) VALUES (?, ?, ?, ?)",
                    [(*where, first, last) for first, last in merged],
                )
            self._touch(conn, key)

        self._write(write, 32 * len(runs))

    def invalidate(self, path: str) -> None:
        """Forget every version of `path` (and its seen lines)."""
        self._write(lambda conn: conn.execute("DELETE FROM paths WHERE path = ?", (_encode(path),)))

    def clear(self) -> None:
        """Forget everything (the file and its schema stay)."""
        self._write(lambda conn: conn.execute("DELETE FROM paths"))
        with self._lock:
            self._blobs.clear()

    # -- statements (caller is inside a write transaction) -------------------------------------

    def _touch(self, conn: sqlite3.Connection, key: bytes) -> int:
        conn.execute("UPDATE counters SET value = value + 1 WHERE name = 'seq'")
        seq: int = conn.execute("SELECT value FROM counters WHERE name = 'seq'").fetchone()[0]
        conn.execute(
            "INSERT INTO paths (path, used_seq) VALUES (?, ?)"
            " ON CONFLICT (path) DO UPDATE SET used_seq = excluded.used_seq",
            (key, seq),
        )
        return seq

    def _trim_versions(self, conn: sqlite3.Connection, key: bytes) -> None:
        """Versions past the ring are gone for every reader (with their seen lines); their rows
        stay, hidden, while a kept version is stored as a delta that leads through them."""
        rows = conn.execute(
            "SELECT id FROM versions WHERE path = ? AND hidden = 0 ORDER BY seq DESC"
            " LIMIT -1 OFFSET ?",
            (key, self.max_versions_per_path),
        ).fetchall()
        if not rows:
            return
        conn.executemany("UPDATE versions SET hidden = 1 WHERE id = ?", rows)
        conn.executemany("DELETE FROM seen_runs WHERE version_id = ?", rows)
        _drop_unneeded(conn, [row[0] for row in rows])

    def _evict_paths(self, conn: sqlite3.Connection) -> None:
        conn.execute(
            "DELETE FROM paths WHERE path NOT IN"
            " (SELECT path FROM paths ORDER BY used_seq DESC LIMIT ?)",
            (self.max_paths,),
        )

    def _history(self, path: str, limit: int) -> list[Snapshot]:
        sql = f"SELECT {_ROW} FROM versions WHERE path = ? AND hidden = 0 ORDER BY seq DESC LIMIT ?"
        return self._snapshots(path, sql, (_encode(path), limit))

    def _snapshots(self, path: str, sql: str, params: tuple[object, ...]) -> list[Snapshot]:
        """The versions `sql` selects (`_ROW` columns), newest first, their bytes made whole in
        one read: a delta whose base is among them is applied to that base's bytes (a history
        reads each version's bytes once). Only the newest is cached (see `_delta`)."""

        def run(conn: sqlite3.Connection) -> list[Snapshot]:
            rows = conn.execute(sql, params).fetchall()
            by_id = {row[0]: row for row in rows}
            made: dict[int, bytes] = {}

            def whole(version_id: int) -> bytes:
                blob = made.get(version_id)
                if blob is None:
                    row = by_id.get(version_id)
                    if row is None:  # a base the read did not select (older, or hidden)
                        blob = bytes_of(conn, version_id)
                    elif row[4] is None:
                        blob = row[7]
                    else:
                        blob = self._blobs.get(version_id, row[3])
                        if blob is None:
                            blob = Delta(row[5], row[6], row[7]).applied_to(whole(row[4]))
                    made[version_id] = blob
                return blob

            found = [Snapshot(path, _decode(whole(row[0])), row[1], row[2]) for row in rows]
            if rows:
                self._blobs.put(rows[0][0], rows[0][3], made[rows[0][0]])
            return found

        return self._run(run)

    def _bytes(self, conn: sqlite3.Connection, version_id: int, digest: bytes) -> bytes:
        """A version's whole bytes: cached, or followed through its bases."""
        known = self._blobs.get(version_id, digest)
        return known if known is not None else bytes_of(conn, version_id)

    # -- running statements: locking, busy and corruption handling -----------------------------

    def _read(self, sql: str, params: tuple[object, ...]) -> list[Any]:
        def run(conn: sqlite3.Connection) -> list[Any]:
            return conn.execute(sql, params).fetchall()

        return self._run(run)

    def _write(
        self, work: Callable[[sqlite3.Connection], object], size: int | Callable[[], int] = 0
    ) -> None:
        """Run `work` in one transaction; `size`: about how many bytes it adds to the WAL (or
        what says so once `work` ran)."""

        def run(conn: sqlite3.Connection) -> None:
            conn.execute("BEGIN IMMEDIATE")
            try:
                work(conn)
            except BaseException:
                conn.rollback()
                raise
            conn.commit()

        self._run(run)
        self._written((size() if callable(size) else size) + _WRITE_OVERHEAD)

    def _run(self, operation: Callable[[sqlite3.Connection], _T]) -> _T:
        """Run `operation` under the lock; recover once if the file turned out corrupt."""
        with self._lock:
            try:
                return self._guarded(operation)
            except sqlite3.DatabaseError as err:
                if not _is_corruption(err) or self.path is None:
                    raise
                self._conn.close()
                self._move_aside(err)
                self._conn = self._open()
                return self._guarded(operation)

    def _guarded(self, operation: Callable[[sqlite3.Connection], _T]) -> _T:
        try:
            return operation(self._conn)
        except sqlite3.OperationalError as err:
            if _is_locking(err):
                raise self._busy_error(err) from err
            raise

    def _busy_error(self, err: sqlite3.Error) -> StoreBusyError:
        if _is_lock_failure(err):
            message = (
                f"The snapshot store {self.path} could not lock its file ({err}): the "
                "filesystem failed to take or keep the lock. Nothing was recorded; retry the "
                "request."
            )
        else:
            message = (
                f"The snapshot store {self.path} stayed locked by another process for "
                f"{self.busy_timeout_s:g} s ({err}). Nothing was recorded; retry the request, "
                "or find the process holding the store open and let it finish."
            )
        if self.network_filesystem is not None:
            point, fstype = self.network_filesystem
            message += (
                f" The store is on a network filesystem ({fstype} at {point}), where locks are "
                f"slow and can fail: put the store on local disk ({self.choose_file})."
            )
        return StoreBusyError(message)

    # -- checkpoints, in the background --------------------------------------------------------

    def _written(self, size: int) -> None:
        """Count `size` bytes into the WAL; start a checkpoint when enough are unchecked."""
        if self.path is None or self.journal_mode != "wal":
            return
        with self._checkpoints_idle:
            self._unchecked += size
            if self._unchecked >= self.checkpoint_bytes and self._checkpointer is None:
                self._unchecked = 0
                self._checkpointer = threading.Thread(
                    target=self._checkpoint, name="hashline-store-checkpoint", daemon=True
                )
                self._checkpointer.start()
        if self._wal_size() > _BEHIND_FACTOR * self.checkpoint_bytes:
            self._catch_up()

    def _catch_up(self) -> None:
        """Writes outran the background: wait for it, then checkpoint the whole WAL away here
        (and empty its file), as SQLite would have on every threshold. It never waits for
        another process: a reader there makes it give up, and the next write tries again."""
        self.wait_for_checkpoint()

        def truncate(conn: sqlite3.Connection) -> None:
            conn.execute("PRAGMA busy_timeout = 0")
            try:
                conn.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
            finally:
                conn.execute(f"PRAGMA busy_timeout = {int(self.busy_timeout_s * 1000)}")

        try:
            self._run(truncate)
        except sqlite3.OperationalError as err:  # busy: the next write tries again
            _log.debug("Checkpoint of %s failed: %s", self.path, err)

    def _wal_size(self) -> int:
        try:
            return os.stat(f"{self.path}-wal").st_size
        except OSError:
            return 0

    def _checkpoint(self) -> None:
        """Passive checkpoints on a connection of its own (writers are not blocked), pass after
        pass while writes add frames meanwhile, so the WAL ends all copied and the next write
        starts it over; at most `_CATCH_UP_PASSES`."""
        try:
            conn = sqlite3.connect(str(self.path), timeout=self.busy_timeout_s)
            try:
                last = -1
                for _ in range(_CATCH_UP_PASSES):
                    busy, frames, copied = conn.execute("PRAGMA wal_checkpoint(PASSIVE)").fetchone()
                    if busy or copied != frames or frames == last:
                        break  # a reader holds frames back, or nothing came since the last pass
                    last = frames
            finally:
                conn.close()
        except sqlite3.Error as err:  # the next threshold, or the last close, tries again
            _log.debug("Background checkpoint of %s failed: %s", self.path, err)
        finally:
            with self._checkpoints_idle:
                self._checkpointer = None
                self.checkpoints_run += 1
                self._checkpoints_idle.notify_all()

    # -- opening and recovery ------------------------------------------------------------------

    def _open(self) -> sqlite3.Connection:
        try:
            return self._connect_and_prepare()
        except sqlite3.DatabaseError as err:
            if _is_locking(err):
                raise self._busy_error(err) from err
            if self.path is None:
                raise
            self._move_aside(err)
            return self._connect_and_prepare()

    def _connect_and_prepare(self) -> sqlite3.Connection:
        if self.path is not None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        target = str(self.path) if self.path is not None else MEMORY
        conn = sqlite3.connect(
            target, timeout=self.busy_timeout_s, isolation_level=None, check_same_thread=False
        )
        try:
            _prepare(conn)
            if self.network_filesystem is None:
                self.journal_mode = _use_wal(conn)
            else:
                self.journal_mode = _leave_wal(conn, self.busy_timeout_s)
            if self.journal_mode == "wal":  # checkpoints run in the background (see _written)
                conn.execute("PRAGMA wal_autocheckpoint = 0")
        except BaseException:
            conn.close()
            raise
        return conn

    def _move_aside(self, err: sqlite3.Error) -> None:
        assert self.path is not None
        stamp = self._clock()
        target = self.path.with_name(f"{self.path.name}.corrupt-{stamp}")
        counter = 0
        while target.exists():
            counter += 1
            target = self.path.with_name(f"{self.path.name}.corrupt-{stamp}-{counter}")
        for suffix in ("-wal", "-shm"):
            companion = self.path.with_name(self.path.name + suffix)
            if companion.exists():
                os.replace(companion, target.with_name(target.name + suffix))
        if self.path.exists():
            os.replace(self.path, target)
        self.recovered_from, self.recovery_reason = target, str(err)
        _log.warning(
            "Snapshot store %s was unusable (%s); moved it to %s and started a fresh store. "
            "Tags issued before this point are unknown: agents must re-read files.",
            self.path,
            err,
            target,
        )


def _prepare(conn: sqlite3.Connection) -> None:
    """Check the file is a usable store (creating the schema if it is new), then set pragmas."""
    conn.execute("PRAGMA foreign_keys = ON")
    check = conn.execute("PRAGMA quick_check").fetchone()
    if check is None or check[0] != "ok":
        raise _UnusableStore(f"integrity check failed: {check}")
    version, tables = _schema_state(conn)
    if version == 0 and not tables:
        _create_schema(conn)
        version, tables = _schema_state(conn)
    if version > SCHEMA_VERSION:
        raise _UnusableStore(f"schema version {version} is newer than {SCHEMA_VERSION}")
    for old, script in _MIGRATIONS:
        if version == old and _OLD_TABLES.issubset(tables):
            _migrate(conn, old, script)
            version, tables = _schema_state(conn)
    if version != SCHEMA_VERSION or not _TABLES.issubset(tables):
        raise _UnusableStore(f"not a jupyter-hashline snapshot store (tables: {sorted(tables)})")
    # Only now that the file is known to be ours may its journal mode be changed (WAL is
    # persistent): `_use_wal` or `_leave_wal` follows.


def _use_wal(conn: sqlite3.Connection) -> str:
    """WAL for the file; the journal mode it is in then (`memory` for an in-memory store)."""
    mode: str = conn.execute("PRAGMA journal_mode = WAL").fetchone()[0]
    conn.execute("PRAGMA synchronous = NORMAL")  # durable enough in WAL: a commit is one append
    return mode.lower()


def _leave_wal(conn: sqlite3.Connection, busy_timeout_s: float) -> str:
    """A rollback journal for this connection, and for the file if it is in WAL mode and no
    other process has it open; the journal mode the file is in then (`wal` or `delete`)."""
    conn.execute("PRAGMA synchronous = FULL")  # a rollback journal needs its fsyncs
    if conn.execute("PRAGMA journal_mode").fetchone()[0] != "wal":
        conn.execute("PRAGMA journal_mode = DELETE")  # this connection's mode: takes no lock
        return "delete"
    # Leaving WAL needs the file to itself. Another process holding it open will not let go
    # however long this waits, so wait only for a transaction to end.
    conn.execute(f"PRAGMA busy_timeout = {int(min(busy_timeout_s, _LEAVE_WAL_WAIT_S) * 1000)}")
    try:
        mode: str = conn.execute("PRAGMA journal_mode = DELETE").fetchone()[0]
    except sqlite3.OperationalError as err:
        if not _is_locking(err):
            raise
        return "wal"
    finally:
        conn.execute(f"PRAGMA busy_timeout = {int(busy_timeout_s * 1000)}")
    return mode.lower()


def _schema_state(conn: sqlite3.Connection) -> tuple[int, set[str]]:
    version: int = conn.execute("PRAGMA user_version").fetchone()[0]
    rows = conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'").fetchall()
    return version, {row[0] for row in rows}


def _create_schema(conn: sqlite3.Connection) -> None:
    """Create the tables in one transaction, unless another process just did."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        if _schema_state(conn) == (0, set()):
            for statement in _SCHEMA.split(";"):
                if statement.strip():
                    conn.execute(statement)
            conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
    except BaseException:
        conn.rollback()
        raise
    conn.commit()


def _migrate(conn: sqlite3.Connection, old: int, script: str) -> None:
    """Run `script`, which takes a version-`old` file to the next version, in one transaction,
    unless another process just did."""
    conn.execute("BEGIN IMMEDIATE")
    try:
        if _schema_state(conn)[0] == old:
            for statement in script.split(";"):
                if statement.strip():
                    conn.execute(statement)
    except BaseException:
        conn.rollback()
        raise
    conn.commit()


def _drop_unneeded(conn: sqlite3.Connection, hidden: list[int]) -> None:
    """Delete the versions just `hidden` that no version is stored against, then each one's
    base when that base, hidden too, is needed no more, and so on down the chain: a hidden
    version stays exactly while a kept version's chain of bases leads through it. (Only a trim
    hides versions, and every trim drops what it made unneeded: no other hidden version can
    have become unneeded.) One indexed lookup per version, never a walk over the path's
    versions, whose columns after each text cost its overflow pages to read."""
    while hidden:
        version_id = hidden.pop()
        unneeded = conn.execute(_UNNEEDED_BASE, (version_id, version_id)).fetchone()
        if unneeded is None:
            continue
        conn.execute("DELETE FROM versions WHERE id = ?", (version_id,))
        if unneeded[0] is not None:
            hidden.append(unneeded[0])


def _lengths(delta: Delta | None) -> tuple[int, int]:
    return (0, 0) if delta is None else (delta.prefix, delta.suffix)


def _positive(name: str, value: int) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        raise ValueError(f"{name} must be a positive integer, got {value!r}")
    return value
