"""A corrupted or locked snapshot store is reported and rebuilt; editing never stops working.

- Locked (another process holds the SQLite write lock): a read answers `StoreBusyError` (503)
  and changes nothing. A write that already landed is never reported as failed because the
  store could not record it afterwards: the reply says the file WAS written and to re-read, a
  retry is never applied twice, and once the lock goes editing carries on.
- Corrupted (garbage pages found when the store opens, e.g. at a server restart): the file is
  moved aside with a warning, old headers are answered "not from this session" without
  touching the file, and a fresh read makes edits land again. Also through a real server.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import pytest
from testkit.faults import (
    Edit,
    QuickSqliteStore,
    garble,
    hold_exclusive_lock,
    store_state,
)
from testkit.rest import Api, write_notebook

from jupyter_hashline.hashline import (
    DiskFilesystem,
    InMemorySnapshotStore,
    Patcher,
    SqliteSnapshotStore,
    StaleTagError,
    StoreBusyError,
    UnknownTagError,
)
from jupyter_hashline.notebook import NotebookFilesystem

TEXT = "alpha = 1\nbeta = 2\ngamma = 3\n"


@pytest.fixture
def root(tmp_path: Path) -> Path:
    folder = tmp_path / "root"
    folder.mkdir()
    (folder / "a.py").write_text(TEXT)
    write_notebook(folder / "nb.ipynb", "alpha = 1\nbeta = 2", "gamma = 3")
    return folder


def engine(root: Path, store: Any) -> Patcher:
    return Patcher(NotebookFilesystem(DiskFilesystem(root)), store)


INSERTED = {
    "a.py": Edit("a.py", "insert_after", 2, "inserted = True"),
    "nb.ipynb": Edit("nb.ipynb", "insert_after", 2, "inserted = True", cell=0),
}
TAILS = {
    "a.py": Edit("a.py", "append", text="# after the lock"),
    "nb.ipynb": Edit("nb.ipynb", "append", text="# after the lock", cell=1),
}


@pytest.mark.parametrize(
    ("path", "edit"), [("a.py", "insert after 2:"), ("nb.ipynb", "insert after 3:")]
)
async def test_locked_store_never_turns_a_landed_write_into_an_error(
    root: Path, tmp_path: Path, fault: Any, path: str, edit: str
) -> None:
    with fault(root) as trial:
        await _locked_store(root, tmp_path / "s.sqlite3", path, edit, trial)


async def _locked_store(root: Path, db: Path, path: str, edit: str, trial: Any) -> None:
    with SqliteSnapshotStore(db, busy_timeout_s=0.2) as store:
        patcher = engine(root, store)
        view = await patcher.read(path)
        recorded = store_state(store, path)
        patch = f"{view.header}\n{edit}\n+inserted = True\n"
        holder = hold_exclusive_lock(db)
        try:
            before = (root / path).read_bytes()
            with pytest.raises(StoreBusyError) as busy:
                await patcher.read(path)
            assert busy.value.status == 503 and "retry" in busy.value.message
            assert (root / path).read_bytes() == before

            result = await patcher.apply(patch)  # the file lands; the store cannot record it
        finally:
            holder.rollback()
            holder.close()
        [section] = result.sections
        assert section.written
        trial.acknowledge(INSERTED[path])
        assert any("WAS written" in w and "re-read" in w for w in section.warnings)
        assert (root / path).read_bytes().count(b"inserted = True") == 1
        assert store_state(store, path) == recorded

        with pytest.raises(StaleTagError):  # a retry of that edit is not applied twice
            await patcher.apply(patch)
        assert (root / path).read_bytes().count(b"inserted = True") == 1
        fresh = await patcher.read(path)
        again = await patcher.apply(f"{fresh.header}\ninsert tail:\n+# after the lock\n")
        assert again.sections[0].written and not again.sections[0].warnings
        trial.acknowledge(TAILS[path])


class BrokenAfterReads(InMemorySnapshotStore):
    """A store whose disk fails once reads are done: every record raises."""

    broken = False

    def record(self, path: str, full_text: str) -> str:
        if self.broken:
            raise OSError(5, "Input/output error")
        return super().record(path, full_text)


async def test_any_store_failure_after_a_write_is_a_warning(root: Path, fault: Any) -> None:
    store = BrokenAfterReads()
    patcher = engine(root, store)
    view = await patcher.read("a.py")
    with fault(root) as trial:
        store.broken = True
        result = await patcher.apply(f"{view.header}\nreplace 1:\n+alpha = 10\n")
        assert result.sections[0].written
        trial.acknowledge(Edit("a.py", "replace", 1, "alpha = 10"))
        assert "Input/output error" in result.to_text() and "WAS written" in result.to_text()
        write = await patcher.write("b.py", "b = 1\n")
        assert write.sections[0].written and "WAS written" in write.to_text()
        trial.acknowledge(Edit("b.py", "create", text="b = 1\n"))


async def test_store_corrupted_at_restart_is_moved_aside_and_editing_resumes(
    root: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture, fault: Any
) -> None:
    with fault(root) as trial:
        await _corrupted_at_restart(root, tmp_path, caplog, trial)


async def _corrupted_at_restart(
    root: Path, tmp_path: Path, caplog: pytest.LogCaptureFixture, trial: Any
) -> None:
    db = tmp_path / "s.sqlite3"
    with SqliteSnapshotStore(db) as store:
        old_view = await engine(root, store).read("nb.ipynb")
        for n in range(50):
            store.record(f"other{n}.py", f"text {n}\n" * 100)
    garbage = garble(db)
    before = (root / "nb.ipynb").read_bytes()

    with caplog.at_level(logging.WARNING), SqliteSnapshotStore(db) as store:
        assert store.recovered_from is not None and store.recovered_from.read_bytes() == garbage
        patcher = engine(root, store)
        with pytest.raises(UnknownTagError) as unknown:
            await patcher.apply(f"{old_view.header}\nreplace 2:\n+alpha = 10\n")
        assert "not from this session" in unknown.value.message
        assert (root / "nb.ipynb").read_bytes() == before
        view = await patcher.read("nb.ipynb")
        result = await patcher.apply(f"{view.header}\nreplace 2:\n+alpha = 10\n")
        assert result.sections[0].written
        trial.acknowledge(Edit("nb.ipynb", "replace", 1, "alpha = 10", cell=0))
    assert "re-read" in caplog.text and "moved it to" in caplog.text


@pytest.fixture
def hashline_config(request: pytest.FixtureRequest, tmp_path: Path) -> dict[str, Any]:
    """The server's store: a quick-to-give-up SQLite file, garbage before start if asked."""
    db = tmp_path / "store" / "q.sqlite3"
    db.parent.mkdir()
    if getattr(request, "param", None) == "garbage":
        db.write_bytes(b"SQLite format 3\x00" + b"\xff" * 8192)
    return {"store_class": "testkit.faults.QuickSqliteStore", "store_path": str(db)}


async def test_locked_store_through_rest(
    api: Api, jp_root_dir: Path, jp_serverapp: Any, fault: Any
) -> None:
    service = jp_serverapp.web_app.settings["jupyter_hashline_service"]
    assert isinstance(service.store, QuickSqliteStore)
    write_notebook(jp_root_dir / "nb.ipynb", "alpha = 1", "beta = 2")
    _, read = await api("read", params={"path": "nb.ipynb"})
    assert service.store.path is not None
    with fault(jp_root_dir) as trial:
        await _locked_through_rest(api, service, read, trial)
    status, body = await api("read", params={"path": "nb.ipynb"})
    assert status == 200 and "2:alpha = 10" in body["view"]


async def _locked_through_rest(api: Api, service: Any, read: dict[str, Any], trial: Any) -> None:
    holder = hold_exclusive_lock(service.store.path)
    try:
        status, body = await api("read", params={"path": "nb.ipynb"})
        assert (status, body["error"]) == (503, "store_busy")
        assert "retry" in body["message"]
        patch = {"patch": f"{read['header']}\nreplace 2:\n+alpha = 10\n"}
        status, body = await api("patch", method="POST", body=patch, schema="PatchResponse")
    finally:
        holder.rollback()
        holder.close()
    assert status == 200 and "WAS written" in body["text"]
    trial.acknowledge(Edit("nb.ipynb", "replace", 1, "alpha = 10", cell=0))


@pytest.mark.parametrize("hashline_config", ["garbage"], indirect=True)
async def test_server_starting_on_a_corrupt_store_rebuilds_it(
    api: Api, jp_root_dir: Path, jp_serverapp: Any, fault: Any
) -> None:
    service = jp_serverapp.web_app.settings["jupyter_hashline_service"]
    moved = service.store.recovered_from
    assert moved is not None and moved.read_bytes().startswith(b"SQLite format 3")
    write_notebook(jp_root_dir / "nb.ipynb", "alpha = 1")
    with fault(jp_root_dir) as trial:
        _, read = await api("read", params={"path": "nb.ipynb"})
        patch = {"patch": f"{read['header']}\nreplace 2:\n+alpha = 10\n"}
        status, body = await api("patch", method="POST", body=patch, schema="PatchResponse")
        assert status == 200 and body["sections"][0]["written"]
        trial.acknowledge(Edit("nb.ipynb", "replace", 1, "alpha = 10", cell=0))
    assert service.store.path.exists() and service.store.head("nb.ipynb") is not None
