"""`Patcher.record_rewritten`: a text that landed outside an edit (a run's outputs written back)
is recorded as an edit's landed text is: seen lines carried over, a store failure a warning."""

from __future__ import annotations

from collections.abc import Iterable

from jupyter_hashline.hashline import (
    InMemoryFilesystem,
    InMemorySnapshotStore,
    Patcher,
    StoreBusyError,
    section_tag,
)

BEFORE = "a = 1\nb = 2\nc = 3\n"
AFTER = "a = 1\nb = 2\nprinted\nc = 3\n"  # a line landed between b and c


async def test_the_landed_text_gets_a_tag_and_keeps_what_the_agent_saw() -> None:
    store = InMemorySnapshotStore()
    patcher = Patcher(InMemoryFilesystem({"x.py": BEFORE}), store, agent="ada")
    read = await patcher.read("x.py", offset=1, limit=2)  # ada saw lines 1 and 2 only
    tag, warnings = patcher.record_rewritten("x.py", "x.py", read.tag, BEFORE, AFTER)
    assert warnings == ()
    assert tag == section_tag(AFTER)
    snapshot = store.by_hash("x.py", tag)
    assert snapshot is not None and snapshot.text == AFTER
    assert store.seen_lines("x.py", tag, agent="ada") == {1, 2}
    assert store.seen_lines("x.py", tag, agent="bob") == set()


class FailingStore(InMemorySnapshotStore):
    def record_seen_lines(
        self, path: str, tag: str, lines: Iterable[int], agent: str = "agent"
    ) -> None:
        raise StoreBusyError("the store is locked by another process")


async def test_a_store_failure_after_the_text_landed_is_a_warning() -> None:
    patcher = Patcher(InMemoryFilesystem({"x.py": BEFORE}), FailingStore(), agent="ada")
    tag, warnings = patcher.record_rewritten("x.py", "x.py", "ZZZZ", BEFORE, AFTER)
    assert tag == section_tag(AFTER)
    [warning] = warnings
    assert "x.py WAS written" in warning and "locked by another process" in warning
    assert "re-read x.py" in warning
