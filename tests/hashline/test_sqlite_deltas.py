"""Versions stored as deltas in the SQLite store (sqlite_deltas.py, sqlite_store.py).

The property runs random records, seen lines, writes by a second store on the same file and
reopens against `InMemorySnapshotStore`, with a small ring and short chains, and counts the
deltas, the hidden bases and the chains read back from the file that the runs really made.
"""

from __future__ import annotations

import hashlib
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from jupyter_hashline.hashline import sqlite_store
from jupyter_hashline.hashline.memory_store import InMemorySnapshotStore
from jupyter_hashline.hashline.sqlite_deltas import BlobCache, Delta, plan_delta
from jupyter_hashline.hashline.sqlite_store import SCHEMA_VERSION, SqliteSnapshotStore
from jupyter_hashline.hashline.text import section_tag

LINES = [f"line {n} = {n * n}" for n in range(12)]

# An operation: ("record", path, line to change, how many texts back to go, or None for a new
# one), ("seen", path, line), ("other", path, line) (a second store on the file records),
# ("forget", path) (the second store forgets the path: its ids may then name other texts),
# ("reopen",). Three paths, two kept: recording the third evicts one.
records = st.tuples(
    st.just("record"),
    st.sampled_from("abc"),
    st.integers(0, 11),
    st.one_of(st.none(), st.none(), st.integers(0, 5)),
)
operations = st.lists(
    st.one_of(
        records,
        records,
        records,
        st.tuples(st.just("seen"), st.sampled_from("ab"), st.integers(1, 12)),
        st.tuples(st.just("other"), st.sampled_from("abc"), st.integers(0, 11)),
        st.tuples(st.just("forget"), st.sampled_from("abc")),
        st.tuples(st.just("reopen")),
    ),
    min_size=8,
    max_size=40,
)


class Run:
    """One store under test beside the in-memory model, driven by `operations`."""

    def __init__(self, db: Path) -> None:
        self.db = db
        self.model = InMemorySnapshotStore(2, 3)
        self.store = self._open()
        self.texts = {"a": ["\n".join(LINES) + "\n"], "b": ["b\n" * 12], "c": ["c\n" * 12]}

    def _open(self) -> SqliteSnapshotStore:
        return SqliteSnapshotStore(self.db, 3, max_paths=2, delta_min_bytes=0)

    def text(self, path: str, line: int, back: int | None) -> str:
        made = self.texts[path]
        if back is not None:
            return made[max(0, len(made) - 1 - back)]
        rows = made[-1].split("\n")
        rows[line] = f"{rows[line]} changed {len(made)}"
        made.append("\n".join(rows))
        return made[-1]

    def apply(self, operation: tuple[Any, ...]) -> None:
        kind = operation[0]
        if kind == "reopen":
            self.store.close()
            self.store = self._open()
        elif kind == "forget":
            with self._open() as other:
                other.invalidate(operation[1])
            self.model.invalidate(operation[1])
        elif kind == "seen":
            head = self.model.head(operation[1])
            if head is not None:
                self.store.record_seen_lines(operation[1], head.tag, [operation[2]])
                self.model.record_seen_lines(operation[1], head.tag, [operation[2]])
        else:
            text = self.text(operation[1], operation[2], operation[3] if kind == "record" else 0)
            if kind == "other":
                text = self.text(operation[1], operation[2], None)
                with self._open() as other:
                    assert other.record(operation[1], text) == section_tag(text)
            else:
                assert self.store.record(operation[1], text) == section_tag(text)
            self.model.record(operation[1], text)

    def check(self) -> None:
        assert self.store.paths() == self.model.paths()
        for path in "abc":
            mine = [(s.text, s.tag) for s in self.store.history(path)]
            assert mine == [(s.text, s.tag) for s in self.model.history(path)]
            for _, tag in mine:
                found = self.store.by_hash(path, tag)
                expected = self.model.by_hash(path, tag)
                assert found is not None and expected is not None
                assert found.text == expected.text
                assert self.store.seen_lines(path, tag) == self.model.seen_lines(path, tag)

    def counts(self) -> tuple[int, int]:
        """(deltas, hidden rows) in the file now, after checking the rows themselves: chains
        no deeper than allowed, and no seen lines left on a hidden version."""
        conn = sqlite3.connect(self.db)
        try:
            deepest = conn.execute(_DEEPEST).fetchone()[0] or 0
            assert deepest <= sqlite_store.MAX_DEPTH
            stale = (
                "SELECT count(*) FROM seen_runs JOIN versions ON id = version_id WHERE hidden = 1"
            )
            assert conn.execute(stale).fetchone()[0] == 0
            assert conn.execute(_UNNEEDED).fetchone()[0] == 0  # a hidden version nothing needs
            deltas = conn.execute("SELECT count(*) FROM versions WHERE base_id IS NOT NULL")
            hidden = conn.execute("SELECT count(*) FROM versions WHERE hidden = 1")
            return deltas.fetchone()[0], hidden.fetchone()[0]
        finally:
            conn.close()


_UNNEEDED = """
WITH RECURSIVE needed (id) AS (
    SELECT base_id FROM versions WHERE hidden = 0 AND base_id IS NOT NULL
    UNION
    SELECT v.base_id FROM versions AS v JOIN needed ON v.id = needed.id WHERE v.base_id IS NOT NULL
)
SELECT count(*) FROM versions WHERE hidden = 1 AND id NOT IN (SELECT id FROM needed)
"""
"""The hidden versions no kept version's chain of bases leads through (the definition the
trim is held to, walked over the whole file): a trim leaves none."""

_DEEPEST = """
WITH RECURSIVE chain (id, length) AS (
    SELECT id, 0 FROM versions WHERE base_id IS NULL
    UNION ALL
    SELECT v.id, chain.length + 1 FROM versions AS v JOIN chain ON v.base_id = chain.id
)
SELECT max(length) FROM chain
"""


def test_deltas_read_back_as_the_model_stores_them(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sqlite_store, "MAX_DEPTH", 2)  # chains of two, then a whole version
    seen = {"with deltas": 0, "with hidden bases": 0, "examples": 0}

    # derandomized: the coverage counts below hold for this fixed draw, not for every one (a
    # random draw once made 7 hidden bases, under the floor of 10)
    @settings(
        max_examples=150,
        deadline=None,
        suppress_health_check=list(HealthCheck),
        derandomize=True,
    )
    @given(operations)
    def check(ops: list[tuple[Any, ...]]) -> None:
        run = Run(tmp_path_factory.mktemp("deltas") / "store.db")
        made = {"deltas": False, "hidden": False}
        try:
            for operation in ops:
                run.apply(operation)
                run.check()
                deltas, hidden = run.counts()
                made["deltas"] |= deltas > 0
                made["hidden"] |= hidden > 0
            run.store.close()
            run.store = run._open()  # read back with nothing cached: every chain from the file
            run.check()
        finally:
            run.store.close()
        seen["examples"] += 1
        seen["with deltas"] += made["deltas"]
        seen["with hidden bases"] += made["hidden"]

    check()
    assert seen["examples"] >= 100
    # A run of 150 makes deltas in 90-110 examples and hidden bases in 25-40.
    assert seen["with deltas"] >= seen["examples"] // 3, seen
    assert seen["with hidden bases"] >= seen["examples"] // 15, seen


def test_plan_delta_applies_back_and_refuses_a_delta_that_does_not_pay() -> None:
    base = b"0123456789" * 10
    blob = base[:40] + b"changed" + base[45:]
    delta = plan_delta(base, blob)
    assert delta == Delta(40, 55, b"changed")
    assert delta.applied_to(base) == blob
    assert plan_delta(base, b"x" * 100) is None  # nothing shared: stored whole
    grown = plan_delta(b"abab", b"abababab")
    assert grown is not None and grown.applied_to(b"abab") == b"abababab"


def test_a_one_line_change_of_a_big_text_stores_that_line(tmp_path: Path) -> None:
    """40 versions of a 1 MB text, one line changed each time: the file holds a few whole
    copies (one every `MAX_DEPTH + 1` versions), not 40. Reading the history between records
    does not make the next record whole (it leaves the newest version's bytes known)."""
    text = "".join(f"x{n} = {n}  # a line of code\n" for n in range(35_000))
    with SqliteSnapshotStore(tmp_path / "s.db", 64) as store:
        for n in range(40):
            store.record("big.ipynb", text.replace("x17000 =", f"x17000 = {n} +"))
            if n % 4 == 3:
                assert len(store.history("big.ipynb")) == n + 1
    conn = sqlite3.connect(tmp_path / "s.db")
    stored = conn.execute("SELECT sum(length(text)), count(*) FROM versions").fetchone()
    conn.close()
    assert stored[1] == 40
    assert stored[0] < 40 * len(text) / 5, f"{stored[0]:,} bytes stored of {40 * len(text):,}"


def test_a_base_cannot_be_deleted_under_a_delta(tmp_path: Path) -> None:
    """The schema's foreign key is the safety net under the trim: a base goes only with the
    versions based on it."""
    with SqliteSnapshotStore(tmp_path / "s.db", 8, delta_min_bytes=0) as store:
        store.record("f.py", "one\ntwo\nthree\nfour\n")
        store.record("f.py", "one\ntwo\nTHREE\nfour\n")
    conn = sqlite3.connect(tmp_path / "s.db")
    conn.execute("PRAGMA foreign_keys = ON")
    base = conn.execute("SELECT base_id FROM versions WHERE base_id IS NOT NULL").fetchone()
    assert base is not None
    with pytest.raises(sqlite3.IntegrityError):
        conn.execute("DELETE FROM versions WHERE id = ?", base)
    conn.close()


def test_a_version_2_file_gets_the_delta_columns_and_keeps_its_versions(tmp_path: Path) -> None:
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
        CREATE INDEX versions_by_path ON versions (path, seq);
        CREATE TABLE seen (version_id INTEGER NOT NULL REFERENCES versions (id) ON DELETE CASCADE,
            agent BLOB NOT NULL, line INTEGER NOT NULL, PRIMARY KEY (version_id, agent, line))
            WITHOUT ROWID;
        PRAGMA user_version = 2;
        """
    )
    text = "a\nb\nc\nd\n"
    conn.execute("INSERT INTO paths VALUES (?, 1)", (b"f.py",))
    conn.execute(
        "INSERT INTO versions VALUES (1, ?, ?, ?, ?, 5, 1)",
        (b"f.py", text.encode(), hashlib.sha256(text.encode()).digest(), section_tag(text)),
    )
    conn.execute("INSERT INTO seen VALUES (1, X'', 2)")
    conn.commit()
    conn.close()
    with SqliteSnapshotStore(db, delta_min_bytes=0) as store:
        assert store.recovered_from is None
        assert store.seen_lines("f.py", section_tag(text)) == frozenset({2})
        assert [s.text for s in store.history("f.py")] == [text]  # read: now known here
        store.record("f.py", "a\nb\nC\nd\n")
        assert [s.text for s in store.history("f.py")] == ["a\nb\nC\nd\n", text]
    conn = sqlite3.connect(db)
    assert conn.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION == 4
    assert conn.execute("SELECT count(*) FROM versions WHERE base_id = 1").fetchone()[0] == 1
    conn.close()


def test_a_cached_version_is_a_base_only_while_its_id_still_names_it(tmp_path: Path) -> None:
    """Another store on the file forgets the path and records another text, which gets the
    very id this store cached: the digest tells the cached bytes are not that version's."""
    db = tmp_path / "s.db"
    text = "".join(f"line {n}\n" for n in range(40))
    theirs = text.replace("line 5\n", "line 5 by them\n")
    mine = text.replace("line 30\n", "line 30 by me\n")
    with SqliteSnapshotStore(db, delta_min_bytes=0) as store:
        store.record("f.py", text)
        with SqliteSnapshotStore(db, delta_min_bytes=0) as other:
            other.invalidate("f.py")
            other.record("f.py", theirs)
        store.record("f.py", mine)
    with SqliteSnapshotStore(db) as fresh:
        assert [s.text for s in fresh.history("f.py")] == [mine, theirs]


def test_seen_lines_go_with_a_version_dropped_from_the_ring(tmp_path: Path) -> None:
    """A dropped version stays, hidden, while a kept delta needs it; its seen lines do not."""
    text = "".join(f"line {n}\n" for n in range(12))
    with SqliteSnapshotStore(tmp_path / "s.db", 2, delta_min_bytes=0) as store:
        first = store.record("f.py", text)
        store.record_seen_lines("f.py", first, [3])
        for n in range(2):
            store.record("f.py", text.replace(f"line {n}\n", "changed\n"))
    conn = sqlite3.connect(tmp_path / "s.db")
    rows = conn.execute("SELECT hidden, base_id FROM versions ORDER BY id").fetchall()
    lines = conn.execute("SELECT count(*) FROM seen_runs").fetchone()[0]
    conn.close()
    assert rows == [(1, None), (0, 1), (0, 2)]  # the first is needed by the second, hidden
    assert lines == 0


@pytest.mark.parametrize("delta_min_bytes", [0, 10**9])
def test_the_file_keeps_the_ring_and_the_bases_it_needs_and_nothing_more(
    tmp_path: Path, delta_min_bytes: int
) -> None:
    """200 records of one path through a ring of 4: with deltas the file holds the ring and
    the hidden bases its chains lead through; without, the ring alone."""
    text = "".join(f"line {n}\n" for n in range(40))
    with SqliteSnapshotStore(tmp_path / "s.db", 4, delta_min_bytes=delta_min_bytes) as store:
        for n in range(200):
            store.record("f.py", text.replace(f"line {n % 40}\n", f"changed {n}\n"))
    conn = sqlite3.connect(tmp_path / "s.db")
    counted = "SELECT count(*) - sum(hidden), sum(hidden) FROM versions"
    kept, hidden = conn.execute(counted).fetchone()
    unneeded = conn.execute(_UNNEEDED).fetchone()[0]
    conn.close()
    assert (kept, unneeded) == (4, 0)
    assert hidden <= (sqlite_store.MAX_DEPTH if delta_min_bytes == 0 else 0)


def test_the_blob_cache_is_bounded_by_entries_and_bytes() -> None:
    cache = BlobCache(size=3, max_bytes=100)
    for n in range(4):
        cache.put(n, b"d%d" % n, b"x" * 10)
    assert cache.get(0, b"d0") is None and cache.get(3, b"d3") == b"x" * 10  # 3 entries
    assert cache.get(3, b"other digest") is None
    cache.put(4, b"d4", b"y" * 90)  # 90 + 10 (entry 3, used last) fit; entries 1, 2 go
    assert cache.get(1, b"d1") is None and cache.get(2, b"d2") is None
    assert cache.get(3, b"d3") is not None and cache.get(4, b"d4") is not None
    cache.put(5, b"d5", b"z" * 101)  # over the budget alone: not kept, nothing else dropped
    assert cache.get(5, b"d5") is None and cache.get(4, b"d4") is not None
    cache.put(4, b"d4", b"w" * 50)  # put again: its old bytes leave the count
    cache.put(6, b"d6", b"v" * 40)
    assert cache.get(3, b"d3") is not None and cache.get(6, b"d6") is not None
