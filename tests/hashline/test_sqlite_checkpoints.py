"""The SQLite store checkpoints its WAL in the background, not on the writer's thread.

A checkpoint copies and fsyncs megabytes; run by SQLite at the end of a commit it lands on
whoever wrote last, which on the server is the event loop. These tests write well past the
threshold and check where checkpoints ran, that the WAL stays bounded when writes outrun the
background, and that nothing is lost.
"""

from __future__ import annotations

import sqlite3
import threading
from pathlib import Path

import pytest

from jupyter_hashline.hashline import sqlite_store
from jupyter_hashline.hashline.sqlite_store import SqliteSnapshotStore

TEXT_LINES = 4_000  # about 95 KB a version
THRESHOLD = 256 * 1024


def _text(n: int) -> str:
    return "".join(f"line {i} of version {n}\n" for i in range(TEXT_LINES))


def _wal_size(path: Path) -> int:
    return path.with_name(path.name + "-wal").stat().st_size


class Spied:
    """Where background checkpoints ran, and how often the writer had to catch up itself."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.ran_on: list[threading.Thread] = []
        self.catch_ups = 0
        checkpoint, catch_up = SqliteSnapshotStore._checkpoint, SqliteSnapshotStore._catch_up

        def spy_checkpoint(store: SqliteSnapshotStore) -> None:
            self.ran_on.append(threading.current_thread())
            checkpoint(store)

        def spy_catch_up(store: SqliteSnapshotStore) -> None:
            self.catch_ups += 1
            catch_up(store)

        monkeypatch.setattr(SqliteSnapshotStore, "_checkpoint", spy_checkpoint)
        monkeypatch.setattr(SqliteSnapshotStore, "_catch_up", spy_catch_up)


def test_paced_writes_leave_every_checkpoint_to_the_background(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A writer slower than the checkpointer (each write waits for it to be idle, as an edit's
    other work gives it time) never checkpoints itself, and the WAL starts over, not grows."""
    spied = Spied(monkeypatch)
    path = tmp_path / "store.sqlite3"
    store = SqliteSnapshotStore(path, max_versions_per_path=4, checkpoint_bytes=THRESHOLD)
    assert store._conn.execute("PRAGMA wal_autocheckpoint").fetchone()[0] == 0
    written = 0
    for n in range(120):  # about 11 MB: with no checkpoint at all, a WAL of twice that
        assert store.wait_for_checkpoint(timeout_s=30)
        text = _text(n)
        store.record("nb.ipynb", text)
        written += len(text)
    assert store.wait_for_checkpoint(timeout_s=30)
    assert written > 10 * 1024 * 1024
    assert store.checkpoints_run >= written // THRESHOLD // 2 and spied.ran_on
    assert threading.current_thread() not in spied.ran_on
    assert spied.catch_ups == 0
    assert _wal_size(path) <= 3 * THRESHOLD
    store.close()


def test_writes_that_outrun_the_background_still_keep_the_wal_bounded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    spied = Spied(monkeypatch)
    path = tmp_path / "store.sqlite3"
    store = SqliteSnapshotStore(path, max_versions_per_path=4, checkpoint_bytes=THRESHOLD)
    biggest = 0
    for n in range(120):  # back to back, no pause for the checkpointer
        store.record("nb.ipynb", _text(n))
        biggest = max(biggest, _wal_size(path))
    assert store.wait_for_checkpoint(timeout_s=30)
    # Each version takes about twice its text in the WAL (its pages, the index, freed pages).
    assert biggest <= sqlite_store._BEHIND_FACTOR * THRESHOLD + 4 * len(_text(0))
    assert spied.catch_ups >= 1  # the bound held because the writer caught up, as designed
    store.close()


@pytest.mark.timeout(120)
def test_catching_up_never_waits_for_a_reader_in_another_connection(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """While another connection holds an old snapshot, the WAL cannot be emptied: the writer's
    catch-up gives up at once (were it to wait, each write would take the store's 60 s busy
    timeout) and tries again on the next write, which empties it once the reader is gone."""
    spied = Spied(monkeypatch)
    path = tmp_path / "store.sqlite3"
    store = SqliteSnapshotStore(
        path, max_versions_per_path=4, checkpoint_bytes=THRESHOLD, busy_timeout_s=60
    )
    store.record("nb.ipynb", _text(0))
    reader = sqlite3.connect(path, isolation_level=None)
    reader.execute("BEGIN")
    held = reader.execute("SELECT count(*) FROM versions").fetchone()
    bound = sqlite_store._BEHIND_FACTOR * THRESHOLD
    for n in range(1, 40):
        store.record("nb.ipynb", _text(n))
    assert spied.catch_ups >= 2 and _wal_size(path) > bound  # gave up, and tried again
    assert reader.execute("SELECT count(*) FROM versions").fetchone() == held
    reader.execute("COMMIT")
    reader.close()
    store.record("nb.ipynb", _text(40))
    assert _wal_size(path) < bound
    head = store.head("nb.ipynb")
    assert head is not None and head.text == _text(40)
    store.close()


def test_versions_outlive_background_checkpoints_and_a_reopen(tmp_path: Path) -> None:
    path = tmp_path / "store.sqlite3"
    store = SqliteSnapshotStore(path, max_versions_per_path=3, checkpoint_bytes=128 * 1024)
    tags = [store.record("nb.ipynb", _text(n)) for n in range(20)]
    store.record_seen_lines("nb.ipynb", tags[-1], range(1, 11))
    store.close()
    assert store._checkpointer is None
    reopened = SqliteSnapshotStore(path, max_versions_per_path=3)
    assert [s.text for s in reopened.history("nb.ipynb")] == [_text(n) for n in (19, 18, 17)]
    assert reopened.seen_lines("nb.ipynb", tags[-1]) == frozenset(range(1, 11))
    reopened.close()


def test_a_memory_store_never_starts_a_checkpoint() -> None:
    store = SqliteSnapshotStore(":memory:", checkpoint_bytes=1)
    store.record("nb.ipynb", _text(0))
    assert store._checkpointer is None and store.checkpoints_run == 0
    store.close()
