"""One contract suite for every SnapshotStore, plus what only the SQLite store promises.

The shared tests run against `InMemorySnapshotStore` and `SqliteSnapshotStore` alike: each
clause of the store.py docstring, LRU over paths, the version ring and thread safety. The
SQLite-only tests cover persistence across reopen, recovery from a corrupted file, and a
database locked by another connection (a clear error or success, never a hang).
"""

from __future__ import annotations

import hashlib
import itertools
import logging
import sqlite3
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from jupyter_hashline.hashline.errors import HashlineError, StoreBusyError
from jupyter_hashline.hashline.memory_store import InMemorySnapshotStore
from jupyter_hashline.hashline.sqlite_store import (
    DELTA_MIN_BYTES,
    SCHEMA_VERSION,
    SqliteSnapshotStore,
)
from jupyter_hashline.hashline.store import Snapshot, SnapshotStore
from jupyter_hashline.hashline.text import section_tag

# Two different texts with the same tag (design §2.1 test vectors).
COLLIDING_A = "line one 263\nline two 4471\n"
COLLIDING_B = "line one 410\nline two 6970\n"

StoreFactory = Callable[..., Any]


def text_of(snapshot: Snapshot | None) -> str:
    assert snapshot is not None
    return snapshot.text


class TickClock:
    """A deterministic clock: 1000, 1001, 1002, ... milliseconds."""

    def __init__(self) -> None:
        self._ticks = itertools.count(1000)
        self._lock = threading.Lock()

    def __call__(self) -> int:
        with self._lock:
            return next(self._ticks)


@pytest.fixture(params=["memory", "sqlite", "sqlite-deltas"])
def make_store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[StoreFactory]:
    """A factory of fresh stores of one kind; `max_paths`/`max_versions` bound them.
    "sqlite-deltas" stores every text that shares most of its bytes with the version before as
    a delta, however small (the default keeps texts under 16 KB whole)."""
    opened: list[SqliteSnapshotStore] = []

    def factory(max_paths: int = 30, max_versions: int = 4, clock: Any = None) -> Any:
        clock = clock or TickClock()
        if request.param == "memory":
            return InMemorySnapshotStore(max_paths, max_versions, clock=clock)
        store = SqliteSnapshotStore(
            tmp_path / f"store{len(opened)}.db",
            max_versions,
            clock,
            max_paths=max_paths,
            delta_min_bytes=0 if request.param == "sqlite-deltas" else DELTA_MIN_BYTES,
        )
        opened.append(store)
        return store

    yield factory
    for store in opened:
        store.close()


@pytest.fixture
def store(make_store: StoreFactory) -> Any:
    return make_store()


# -- the protocol --------------------------------------------------------------------------------


def test_stores_satisfy_the_protocol(store: Any) -> None:
    assert isinstance(store, SnapshotStore)


def test_collision_vectors_really_collide() -> None:
    assert COLLIDING_A != COLLIDING_B
    assert section_tag(COLLIDING_A) == section_tag(COLLIDING_B) == "1D84"


def test_record_returns_the_section_tag(store: Any) -> None:
    for text in ["hello\n", "", "a \n b\t\r\nc", "ünïcødé ✓\n"]:
        assert store.record("f.py", text) == section_tag(text)


def test_unknown_path_is_empty(store: Any) -> None:
    assert store.head("nope.py") is None
    assert store.history("nope.py") == []
    assert store.by_hash("nope.py", "5BF9") is None
    assert store.seen_lines("nope.py", "5BF9") == frozenset()
    assert store.paths() == []


def test_snapshot_carries_path_text_tag_and_clock_time() -> None:
    store = InMemorySnapshotStore(clock=lambda: 42)
    store.record("f.py", "hello\n")
    assert store.head("f.py") == Snapshot("f.py", "hello\n", "5BF9", 42)


def test_snapshot_fields_in_every_store(make_store: StoreFactory) -> None:
    store = make_store(clock=lambda: 777)
    store.record("dir/f.py", "hello\n")
    assert store.head("dir/f.py") == Snapshot("dir/f.py", "hello\n", "5BF9", 777)


def test_new_text_prepends_and_history_is_newest_first(store: Any) -> None:
    for text in ["one\n", "two\n", "three\n"]:
        store.record("f.py", text)
    assert [s.text for s in store.history("f.py")] == ["three\n", "two\n", "one\n"]
    assert store.head("f.py") == store.history("f.py")[0]
    times = [s.recorded_at_ms for s in store.history("f.py")]
    assert times == sorted(times, reverse=True)


def test_read_fusion_refreshes_recency_without_a_copy(store: Any) -> None:
    store.record("f.py", "one\n")
    store.record("f.py", "two\n")
    before = store.by_hash("f.py", section_tag("one\n"))
    assert store.record("f.py", "one\n") == section_tag("one\n")
    history = store.history("f.py")
    assert [s.text for s in history] == ["one\n", "two\n"]
    assert history[0].recorded_at_ms > before.recorded_at_ms


def test_dedup_compares_full_text_not_the_tag(store: Any) -> None:
    assert store.record("f.py", COLLIDING_A) == store.record("f.py", COLLIDING_B)
    assert [s.text for s in store.history("f.py")] == [COLLIDING_B, COLLIDING_A]


def test_trailing_whitespace_shares_a_tag_but_is_another_version(store: Any) -> None:
    store.record("f.py", "x = 1\n")
    store.record("f.py", "x = 1   \n")
    assert len(store.history("f.py")) == 2
    assert store.head("f.py").text == "x = 1   \n"


def test_by_hash_returns_the_most_recent_among_colliding_tags(store: Any) -> None:
    store.record("f.py", COLLIDING_A)
    store.record("f.py", "other\n")
    store.record("f.py", COLLIDING_B)
    assert store.by_hash("f.py", "1D84").text == COLLIDING_B
    store.record("f.py", COLLIDING_A)  # fusion makes A the most recent again
    assert store.by_hash("f.py", "1D84").text == COLLIDING_A
    assert store.by_hash("f.py", section_tag("other\n")).text == "other\n"
    assert store.by_hash("f.py", "0000") is None


def test_paths_are_separate(store: Any) -> None:
    store.record("a.py", "same\n")
    store.record("b.py", "same\n")
    store.record("b.py", "more\n")
    assert [s.text for s in store.history("a.py")] == ["same\n"]
    assert [s.text for s in store.history("b.py")] == ["more\n", "same\n"]
    assert store.head("a.py").path == "a.py"


# -- seen lines ----------------------------------------------------------------------------------


def test_seen_lines_accumulate(store: Any) -> None:
    tag = store.record("f.py", "a\nb\nc\nd\n")
    store.record_seen_lines("f.py", tag, [1, 2])
    store.record_seen_lines("f.py", tag, range(2, 4))
    assert store.seen_lines("f.py", tag) == frozenset({1, 2, 3})
    assert store.seen_lines("f.py", "0000") == frozenset()
    assert store.seen_lines("g.py", tag) == frozenset()


def test_seen_lines_are_credited_per_agent(store: Any) -> None:
    tag = store.record("f.py", "a\nb\nc\nd\n")
    store.record_seen_lines("f.py", tag, [1, 2], agent="alice")
    store.record_seen_lines("f.py", tag, [3], agent="bob")
    store.record_seen_lines("f.py", tag, [4])
    assert store.seen_lines("f.py", tag, agent="alice") == frozenset({1, 2})
    assert store.seen_lines("f.py", tag, agent="bob") == frozenset({3})
    assert store.seen_lines("f.py", tag, agent="") == frozenset({4})
    assert store.seen_lines("f.py", tag, agent="carol") == frozenset()
    assert store.seen_lines("f.py", tag) == frozenset({1, 2, 3, 4})  # shown to anyone
    store.record("f.py", "a\nb\nc\nd\n")  # read fusion keeps every agent's lines
    assert store.seen_lines("f.py", tag, agent="alice") == frozenset({1, 2})


def test_seen_lines_for_an_unknown_tag_are_ignored(store: Any) -> None:
    store.record("f.py", "a\n")
    store.record_seen_lines("f.py", "0000", [1])
    store.record_seen_lines("never.py", "0000", [1])
    assert store.seen_lines("f.py", "0000") == frozenset()
    assert store.paths() == ["f.py"]


def test_seen_lines_belong_to_the_exact_text(store: Any) -> None:
    store.record("f.py", COLLIDING_A)
    store.record_seen_lines("f.py", "1D84", [1, 2])
    store.record("f.py", COLLIDING_B)  # same tag, other text: starts with nothing seen
    assert store.seen_lines("f.py", "1D84") == frozenset()
    store.record_seen_lines("f.py", "1D84", [2])
    store.record("f.py", COLLIDING_A)  # A is the most recent again, with its own lines
    assert store.seen_lines("f.py", "1D84") == frozenset({1, 2})
    store.record("f.py", COLLIDING_B)
    assert store.seen_lines("f.py", "1D84") == frozenset({2})


def test_read_fusion_keeps_seen_lines(store: Any) -> None:
    tag = store.record("f.py", "a\nb\n")
    store.record_seen_lines("f.py", tag, [1])
    store.record("f.py", "changed\n")
    store.record("f.py", "a\nb\n")
    assert store.seen_lines("f.py", tag) == frozenset({1})


# -- invalidate, clear, paths and bounds ---------------------------------------------------------


def test_invalidate_forgets_one_path(store: Any) -> None:
    tag = store.record("a.py", "a\n")
    store.record_seen_lines("a.py", tag, [1])
    store.record("b.py", "b\n")
    store.invalidate("a.py")
    store.invalidate("never.py")
    assert store.history("a.py") == []
    assert store.seen_lines("a.py", tag) == frozenset()
    assert store.paths() == ["b.py"]
    assert store.record("a.py", "a\n") == tag
    assert store.seen_lines("a.py", tag) == frozenset()


def test_clear_forgets_everything(store: Any) -> None:
    store.record("a.py", "a\n")
    store.record("b.py", "b\n")
    store.clear()
    assert store.paths() == []
    assert store.head("a.py") is None
    store.record("c.py", "c\n")
    assert store.paths() == ["c.py"]


def test_paths_are_most_recently_used_first(store: Any) -> None:
    for name in ["a.py", "b.py", "c.py"]:
        store.record(name, f"{name}\n")
    assert store.paths() == ["c.py", "b.py", "a.py"]
    store.record("a.py", "a.py\n")  # fusion is a use
    assert store.paths() == ["a.py", "c.py", "b.py"]
    store.record_seen_lines("b.py", section_tag("b.py\n"), [1])  # so is recording seen lines
    assert store.paths() == ["b.py", "a.py", "c.py"]
    store.head("c.py"), store.history("c.py"), store.by_hash("c.py", "0000")
    store.seen_lines("c.py", section_tag("c.py\n"))
    assert store.paths() == ["b.py", "a.py", "c.py"]  # lookups are not uses


def test_least_recently_used_path_is_evicted(make_store: StoreFactory) -> None:
    store = make_store(max_paths=3)
    for name in ["a", "b", "c"]:
        store.record(name, f"{name}\n")
    store.record("a", "a\n")
    store.record("d", "d\n")
    assert store.paths() == ["d", "a", "c"]
    assert store.head("b") is None
    assert store.seen_lines("b", section_tag("b\n")) == frozenset()


def test_version_ring_drops_the_oldest_with_its_seen_lines(make_store: StoreFactory) -> None:
    store = make_store(max_versions=3)
    first = store.record("f.py", "v1\n")
    store.record_seen_lines("f.py", first, [1])
    for text in ["v2\n", "v3\n", "v4\n"]:
        store.record("f.py", text)
    assert [s.text for s in store.history("f.py")] == ["v4\n", "v3\n", "v2\n"]
    assert store.by_hash("f.py", first) is None
    assert store.seen_lines("f.py", first) == frozenset()
    store.record("f.py", "v1\n")  # comes back as a new version, nothing seen
    assert [s.text for s in store.history("f.py")] == ["v1\n", "v4\n", "v3\n"]
    assert store.seen_lines("f.py", first) == frozenset()


def test_fusion_protects_a_version_from_the_ring(make_store: StoreFactory) -> None:
    store = make_store(max_versions=2)
    store.record("f.py", "keep\n")
    store.record("f.py", "other\n")
    store.record("f.py", "keep\n")
    store.record("f.py", "newest\n")
    assert [s.text for s in store.history("f.py")] == ["newest\n", "keep\n"]


def test_default_bounds() -> None:
    store = InMemorySnapshotStore()
    assert (store.max_paths, store.max_versions_per_path) == (30, 4)


def test_sqlite_default_bounds(tmp_path: Path) -> None:
    with SqliteSnapshotStore(tmp_path / "s.db") as store:
        assert store.max_versions_per_path == 64


@pytest.mark.parametrize("bad", [0, -1, True, 2.5])
def test_bounds_must_be_positive_integers(bad: Any, tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="positive integer"):
        InMemorySnapshotStore(max_paths=bad)
    with pytest.raises(ValueError, match="positive integer"):
        InMemorySnapshotStore(max_versions_per_path=bad)
    with pytest.raises(ValueError, match="positive integer"):
        SqliteSnapshotStore(tmp_path / "s.db", max_versions_per_path=bad)


def test_every_python_string_round_trips(store: Any) -> None:
    texts = ["", "\n", "\ufeffBOM\r\nCRLF\r\n", "lone \ud800 surrogate\n", "emoji 🐍\n", "\x00\x01"]
    for text in texts:
        store.record("weird \udcff name.py", text)
    stored = [s.text for s in store.history("weird \udcff name.py")]
    assert stored == list(reversed(texts))[: len(stored)]
    assert store.paths() == ["weird \udcff name.py"]


def test_large_text_round_trips(store: Any) -> None:
    text = "".join(f"line {i} {'x' * 80}\n" for i in range(20_000))
    tag = store.record("big.py", text)
    store.record_seen_lines("big.py", tag, range(1, 20_001))
    assert store.head("big.py").text == text
    assert len(store.seen_lines("big.py", tag)) == 20_000


# -- threads -------------------------------------------------------------------------------------


def test_concurrent_use_stays_consistent(make_store: StoreFactory) -> None:
    store = make_store(max_paths=50, max_versions=8)
    workers, rounds = 8, 40
    shared_texts = [f"shared {i}\n" for i in range(5)]
    barrier = threading.Barrier(workers)
    failures: list[BaseException] = []

    def work(worker: int) -> None:
        try:
            barrier.wait()
            own = f"own{worker}.py"
            for i in range(rounds):
                text = f"worker {worker} round {i}\n"
                tag = store.record(own, text)
                store.record_seen_lines(own, tag, [1])
                shared = shared_texts[i % len(shared_texts)]
                shared_tag = store.record("shared.py", shared)
                store.record_seen_lines("shared.py", shared_tag, [worker * 100 + i])
                assert store.head(own).text == text
                assert store.seen_lines(own, tag) == frozenset({1})
                assert store.by_hash("shared.py", shared_tag) is not None
                store.history("shared.py"), store.paths()
        except BaseException as err:
            failures.append(err)

    threads = [threading.Thread(target=work, args=(w,)) for w in range(workers)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert not any(thread.is_alive() for thread in threads)
    assert failures == []
    for worker in range(workers):
        expected = [f"worker {worker} round {i}\n" for i in reversed(range(rounds))][:8]
        assert [s.text for s in store.history(f"own{worker}.py")] == expected
    shared_history = [s.text for s in store.history("shared.py")]
    assert sorted(shared_history) == sorted(shared_texts)
    seen = set().union(*(store.seen_lines("shared.py", section_tag(t)) for t in shared_texts))
    assert seen == {w * 100 + i for w in range(workers) for i in range(rounds)}
    assert sorted(store.paths()) == sorted([f"own{w}.py" for w in range(workers)] + ["shared.py"])


# -- SQLite only: persistence --------------------------------------------------------------------


def test_sqlite_reopen_keeps_tags_history_seen_lines_and_order(tmp_path: Path) -> None:
    db = tmp_path / "nested" / "dir" / "snapshots.db"
    with SqliteSnapshotStore(db, clock=TickClock()) as store:
        tag = store.record("a.py", COLLIDING_A)
        store.record_seen_lines("a.py", tag, [1, 2])
        store.record("a.py", "newer\n")
        store.record("b.py", "b\n")
        before = (store.history("a.py"), store.paths())
    with SqliteSnapshotStore(db) as reopened:
        assert (reopened.history("a.py"), reopened.paths()) == before
        assert reopened.seen_lines("a.py", tag) == frozenset({1, 2})
        reopened.record("a.py", COLLIDING_B)  # order continues after a restart
        assert text_of(reopened.by_hash("a.py", tag)) == COLLIDING_B
        assert reopened.recovered_from is None


def test_sqlite_two_stores_on_one_file_see_each_other(tmp_path: Path) -> None:
    db = tmp_path / "s.db"
    with SqliteSnapshotStore(db) as first, SqliteSnapshotStore(db) as second:
        tag = first.record("f.py", "from first\n")
        second.record_seen_lines("f.py", tag, [1])
        second.record("f.py", "from second\n")
        assert [s.text for s in first.history("f.py")] == ["from second\n", "from first\n"]
        assert first.seen_lines("f.py", tag) == frozenset({1})


def test_sqlite_in_memory_database_works() -> None:
    with SqliteSnapshotStore(":memory:") as store:
        tag = store.record("f.py", "x\n")
        assert text_of(store.by_hash("f.py", tag)) == "x\n"


def test_sqlite_file_is_versioned_and_in_wal_mode(tmp_path: Path) -> None:
    db = tmp_path / "s.db"
    SqliteSnapshotStore(db).close()
    conn = sqlite3.connect(db)
    try:
        assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    finally:
        conn.close()


def test_sqlite_version_1_file_is_migrated_keeping_tags_and_seen_lines(tmp_path: Path) -> None:
    db = tmp_path / "s.db"
    conn = sqlite3.connect(db)
    conn.executescript(
        """
        CREATE TABLE counters (name TEXT PRIMARY KEY, value INTEGER NOT NULL);
        INSERT INTO counters (name, value) VALUES ('seq', 1);
        CREATE TABLE paths (path BLOB PRIMARY KEY, used_seq INTEGER NOT NULL);
        CREATE TABLE versions (id INTEGER PRIMARY KEY, path BLOB NOT NULL REFERENCES paths (path)
            ON DELETE CASCADE, text BLOB NOT NULL, text_sha256 BLOB NOT NULL, tag TEXT NOT NULL,
            recorded_at_ms INTEGER NOT NULL, seq INTEGER NOT NULL);
        CREATE TABLE seen (version_id INTEGER NOT NULL REFERENCES versions (id) ON DELETE CASCADE,
            line INTEGER NOT NULL, PRIMARY KEY (version_id, line)) WITHOUT ROWID;
        PRAGMA user_version = 1;
        """
    )
    text = "a\nb\n"
    digest = hashlib.sha256(text.encode()).digest()
    conn.execute("INSERT INTO paths VALUES (?, 1)", (b"f.py",))
    conn.execute(
        "INSERT INTO versions VALUES (1, ?, ?, ?, ?, 5, 1)",
        (b"f.py", text.encode(), digest, section_tag(text)),
    )
    conn.execute("INSERT INTO seen VALUES (1, 2)")
    conn.commit()
    conn.close()
    with SqliteSnapshotStore(db) as store:
        assert store.recovered_from is None
        assert text_of(store.by_hash("f.py", section_tag(text))) == text
        assert store.seen_lines("f.py", section_tag(text), agent="") == frozenset({2})
        store.record_seen_lines("f.py", section_tag(text), [1], agent="alice")
        assert store.seen_lines("f.py", section_tag(text)) == frozenset({1, 2})
    conn = sqlite3.connect(db)
    assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION == 4
    conn.close()


def test_sqlite_version_3_file_gets_its_seen_lines_as_runs(tmp_path: Path) -> None:
    """A version-3 file kept a row a seen line; migrated, each agent's consecutive lines are
    one run and no line is gained or lost."""
    db = tmp_path / "s.db"
    text = "".join(f"line {n}\n" for n in range(12))
    with SqliteSnapshotStore(db) as store:
        tag = store.record("f.py", text)
    conn = sqlite3.connect(db)
    conn.executescript(
        """
        DROP TABLE seen_runs;
        CREATE TABLE seen (version_id INTEGER NOT NULL REFERENCES versions (id) ON DELETE CASCADE,
            agent BLOB NOT NULL, line INTEGER NOT NULL, PRIMARY KEY (version_id, agent, line))
            WITHOUT ROWID;
        PRAGMA user_version = 3;
        """
    )
    lines = {b"": [1, 2, 3, 5, 7, 8], b"bob": [2, 3, 4, 12]}
    version = conn.execute("SELECT id FROM versions").fetchone()[0]
    rows = [(version, agent, n) for agent, numbers in lines.items() for n in numbers]
    conn.executemany("INSERT INTO seen VALUES (?, ?, ?)", rows)
    conn.commit()
    conn.close()
    with SqliteSnapshotStore(db) as store:
        assert store.recovered_from is None
        assert store.seen_lines("f.py", tag, agent="") == frozenset(lines[b""])
        assert store.seen_lines("f.py", tag, agent="bob") == frozenset(lines[b"bob"])
        assert store.seen_lines("f.py", tag) == frozenset({1, 2, 3, 4, 5, 7, 8, 12})
    conn = sqlite3.connect(db)
    runs = conn.execute("SELECT agent, first, last FROM seen_runs ORDER BY agent, first")
    assert runs.fetchall() == [
        (b"", 1, 3), (b"", 5, 5), (b"", 7, 8), (b"bob", 2, 4), (b"bob", 12, 12)
    ]  # fmt: skip
    assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION == 4
    conn.close()


def test_sqlite_a_whole_read_keeps_one_run(tmp_path: Path) -> None:
    """100,000 lines shown at once are one row; more lines shown later join it."""
    db = tmp_path / "s.db"
    text = "x\n" * 100_000
    with SqliteSnapshotStore(db) as store:
        tag = store.record("f.py", text)
        store.record_seen_lines("f.py", tag, range(1, 50_001))
        store.record_seen_lines("f.py", tag, [50_001, 70_000])
        store.record_seen_lines("f.py", tag, range(50_002, 100_001))
        assert store.seen_lines("f.py", tag) == frozenset(range(1, 100_001))
    conn = sqlite3.connect(db)
    assert conn.execute("SELECT first, last FROM seen_runs").fetchall() == [(1, 100_000)]
    conn.close()


# -- SQLite only: corruption ---------------------------------------------------------------------


def _assert_recovered(db: Path, store: SqliteSnapshotStore, original: bytes) -> None:
    assert store.recovered_from is not None
    assert store.recovered_from.name.startswith("snapshots.db.corrupt-")
    assert store.recovered_from.read_bytes() == original
    assert store.recovery_reason
    tag = store.record("f.py", "fresh\n")
    assert text_of(store.by_hash("f.py", tag)) == "fresh\n"
    assert db.exists()


def test_sqlite_garbage_file_is_moved_aside(tmp_path: Path, caplog: Any) -> None:
    db = tmp_path / "snapshots.db"
    garbage = b"this is not a database\x00" * 500
    db.write_bytes(garbage)
    with caplog.at_level(logging.WARNING), SqliteSnapshotStore(db) as store:
        _assert_recovered(db, store, garbage)
    assert "moved it to" in caplog.text and "re-read" in caplog.text


def test_sqlite_damaged_pages_are_moved_aside(tmp_path: Path, caplog: Any) -> None:
    db = tmp_path / "snapshots.db"
    with SqliteSnapshotStore(db) as store:
        for i in range(200):
            store.record(f"f{i}.py", f"text {i}\n" * 50)
    data = bytearray(db.read_bytes())
    for offset in range(4096, len(data), 4096):  # keep the header, trash every other page
        data[offset : offset + 4096] = b"\xff" * min(4096, len(data) - offset)
    db.write_bytes(bytes(data))
    with caplog.at_level(logging.WARNING), SqliteSnapshotStore(db) as store:
        _assert_recovered(db, store, bytes(data))
        assert store.paths() == ["f.py"]
    assert "unusable" in caplog.text


def test_sqlite_foreign_database_is_moved_aside(tmp_path: Path) -> None:
    db = tmp_path / "snapshots.db"
    conn = sqlite3.connect(db)
    conn.execute("CREATE TABLE users (name TEXT)")
    conn.commit()
    conn.close()
    original = db.read_bytes()
    with SqliteSnapshotStore(db) as store:
        _assert_recovered(db, store, original)
        assert "not a jupyter-hashline snapshot store" in (store.recovery_reason or "")


def test_sqlite_newer_schema_is_moved_aside(tmp_path: Path) -> None:
    db = tmp_path / "snapshots.db"
    SqliteSnapshotStore(db).close()
    conn = sqlite3.connect(db)
    conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION + 1}")
    conn.close()
    original = db.read_bytes()
    with SqliteSnapshotStore(db) as store:
        _assert_recovered(db, store, original)
        assert "newer" in (store.recovery_reason or "")


# -- SQLite only: locking ------------------------------------------------------------------------


def _hold_exclusive_lock(db: Path) -> sqlite3.Connection:
    holder = sqlite3.connect(db, isolation_level=None, check_same_thread=False)
    holder.execute("BEGIN EXCLUSIVE")
    return holder


def test_sqlite_locked_write_raises_a_clear_error_then_works(tmp_path: Path) -> None:
    db = tmp_path / "s.db"
    with SqliteSnapshotStore(db, busy_timeout_s=0.2) as store:
        tag = store.record("f.py", "before\n")
        holder = _hold_exclusive_lock(db)
        try:
            with pytest.raises(StoreBusyError) as caught:
                store.record("f.py", "during\n")
            assert caught.value.status == 503 and caught.value.kind == "store_busy"
            assert "locked" in caught.value.message and "retry" in caught.value.message
            assert text_of(store.head("f.py")) == "before\n"  # readers are not blocked (WAL)
        finally:
            holder.rollback()
            holder.close()
        store.record_seen_lines("f.py", tag, [1])
        store.record("f.py", "after\n")
        assert [s.text for s in store.history("f.py")] == ["after\n", "before\n"]
        assert store.recovered_from is None


def test_sqlite_waits_for_a_lock_released_in_time(tmp_path: Path) -> None:
    db = tmp_path / "s.db"
    with SqliteSnapshotStore(db, busy_timeout_s=30) as store:
        store.record("f.py", "before\n")
        holder = _hold_exclusive_lock(db)
        releaser = threading.Timer(0.3, holder.rollback)  # let go while the write waits
        releaser.start()
        store.record("f.py", "after\n")  # waits for the holder instead of failing
        releaser.join(timeout=30)
        holder.close()
        assert text_of(store.head("f.py")) == "after\n"


def test_sqlite_locked_on_open_is_busy_not_corrupt(tmp_path: Path) -> None:
    db = tmp_path / "s.db"
    holder = _hold_exclusive_lock(db)  # a brand new, empty database held by someone else
    try:
        with pytest.raises(StoreBusyError):
            SqliteSnapshotStore(db, busy_timeout_s=0.2)
        assert list(tmp_path.glob("*.corrupt-*")) == []
    finally:
        holder.rollback()
        holder.close()
    with SqliteSnapshotStore(db) as store:
        assert store.record("f.py", "x\n") == section_tag("x\n")
        assert store.recovered_from is None


def test_store_busy_error_is_a_hashline_error() -> None:
    assert issubclass(StoreBusyError, HashlineError)


class _FailingConnection:
    """Stands in for a connection whose file went bad while the store was open."""

    def execute(self, *args: object) -> Any:
        raise sqlite3.DatabaseError("database disk image is malformed")

    def close(self) -> None:
        pass


def test_sqlite_corruption_found_while_open_recovers_once(tmp_path: Path, caplog: Any) -> None:
    db = tmp_path / "snapshots.db"
    with SqliteSnapshotStore(db) as store:
        store.record("old.py", "old\n")
        store._conn.close()
        store._conn = _FailingConnection()  # type: ignore[assignment]
        with caplog.at_level(logging.WARNING):
            tag = store.record("new.py", "new\n")
        assert store.recovered_from is not None and store.recovered_from.exists()
        assert "malformed" in (store.recovery_reason or "")
        assert store.paths() == ["new.py"]
        assert text_of(store.by_hash("new.py", tag)) == "new\n"
    assert "started a fresh store" in caplog.text
