"""Writes that fail midway leave the old file intact and the snapshot store unadvanced.

A real `DiskFilesystem` under a real `SqliteSnapshotStore`, with `OSError`s injected at every
point of the atomic write (temp file open, write, fsync, rename), for plain text (with a BOM
and CRLF) and for notebooks (through `NotebookFilesystem`). After each fault: a clear
`HashlineError`, the exact old bytes, no temp file left, the store's versions and seen lines
unchanged; and, once the disk recovers, the same edit lands. Each fault is a `Trial` whose
verdict the oracle takes from the files and the acknowledged edits (testkit.faults).
(A real full disk, a tmpfs filled up: test_rel_full_disk.py.)
"""

from __future__ import annotations

import errno
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import nbformat
import pytest
from testkit.faults import (
    ERRNOS,
    POINTS,
    DiskFaults,
    Edit,
    store_state,
    temp_files,
    tree_bytes,
)

from jupyter_hashline.hashline import (
    DiskFilesystem,
    HashlineError,
    PartialWriteError,
    Patcher,
    SqliteSnapshotStore,
    WriteFailedError,
)
from jupyter_hashline.notebook import NotebookFilesystem

TEXT = "\ufeffimport os\r\nvalue = 1\r\nprint(value)\r\n"


def make_notebook(path: Path) -> None:
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_markdown_cell("# Title", id="intro"),
        nbformat.v4.new_code_cell("value = 1\nprint(value)", id="code"),
    ]
    nb.cells[1].outputs = [nbformat.v4.new_output("stream", name="stdout", text="1\n")]
    nbformat.write(nb, path)


@pytest.fixture
def root(tmp_path: Path) -> Path:
    folder = tmp_path / "root"
    folder.mkdir()
    (folder / "script.py").write_text(TEXT, encoding="utf-8", newline="")
    make_notebook(folder / "nb.ipynb")
    return folder


@pytest.fixture
def store(tmp_path: Path) -> Iterator[SqliteSnapshotStore]:
    with SqliteSnapshotStore(tmp_path / "snapshots.sqlite3") as opened:
        yield opened


def patcher_for(root: Path, store: SqliteSnapshotStore) -> Patcher:
    return Patcher(NotebookFilesystem(DiskFilesystem(root)), store)


# (path, the line to replace, its new text)
TARGETS = [("script.py", 2, "value = 2"), ("nb.ipynb", 4, "value = 2")]
# the same edits as the oracle applies them to the old bytes
ORACLE = {
    "script.py": Edit("script.py", "replace", 2, "value = 2"),
    "nb.ipynb": Edit("nb.ipynb", "replace", 1, "value = 2", cell=1),
}


@pytest.mark.parametrize(("path", "line", "new"), TARGETS)
@pytest.mark.parametrize("point", POINTS)
@pytest.mark.parametrize("code", ["ENOSPC", "EIO", "EACCES"])
async def test_failed_write_leaves_file_and_store_as_they_were(
    root: Path,
    store: SqliteSnapshotStore,
    monkeypatch: pytest.MonkeyPatch,
    fault: Any,
    path: str,
    line: int,
    new: str,
    point: str,
    code: str,
) -> None:
    patcher = patcher_for(root, store)
    view = await patcher.read(path)
    patch = f"{view.header}\nreplace {line}:\n+{new}\n"
    before_files, before_store = tree_bytes(root), store_state(store, path)
    faults = DiskFaults(root, point, ERRNOS[code])
    faults.install(monkeypatch)
    with fault(root) as trial:
        with pytest.raises(WriteFailedError) as failed:
            await patcher.apply(patch)

        assert faults.injected == 1
        message = failed.value.message
        assert path in message and "Nothing was changed" in message
        assert os.strerror(ERRNOS[code]) in message
        if code == "ENOSPC":
            assert "the disk is full" in message
        assert tree_bytes(root) == before_files
        assert temp_files(root) == []
        assert store_state(store, path) == before_store

        faults.armed = False
        result = await patcher.apply(patch)
        assert result.sections[0].written
        trial.acknowledge(ORACLE[path])
    assert f"{line}:{new}" in result.to_text()
    head = store.head(path)
    assert head is not None and head.tag == result.sections[0].tag


@pytest.mark.parametrize("code", sorted(ERRNOS))
async def test_failed_whole_write_creates_nothing_and_records_nothing(
    root: Path, store: SqliteSnapshotStore, monkeypatch: pytest.MonkeyPatch, fault: Any, code: str
) -> None:
    patcher = patcher_for(root, store)
    faults = DiskFaults(root, "write", ERRNOS[code])
    faults.install(monkeypatch)
    with fault(root):
        for path, content in [("new.py", "a = 1\n"), ("new.ipynb", "# %% [code]\na = 1\n")]:
            with pytest.raises(WriteFailedError):
                await patcher.write(path, content)
            assert not (root / path).exists()
            assert store.history(path) == []
    assert faults.injected == 2 and temp_files(root) == []


async def test_multi_file_patch_failing_midway_says_what_landed(
    root: Path, store: SqliteSnapshotStore, monkeypatch: pytest.MonkeyPatch, fault: Any
) -> None:
    (root / "a.py").write_text("a = 1\n")
    (root / "z.py").write_text("z = 1\n")
    patcher = patcher_for(root, store)
    a, z = await patcher.read("a.py"), await patcher.read("z.py")
    z_store = store_state(store, "z.py")
    real_replace = os.replace

    def replace_fails_for_z(src: str, dst: str) -> None:
        if str(dst).endswith("z.py"):
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        real_replace(src, dst)

    monkeypatch.setattr(os, "replace", replace_fails_for_z)
    patch = f"{a.header}\nreplace 1:\n+a = 2\n{z.header}\nreplace 1:\n+z = 2\n"
    with fault(root) as trial:
        with pytest.raises(PartialWriteError) as partial:
            await patcher.apply(patch)
        landed = [s.path for s in partial.value.result.sections if s.written]
        trial.acknowledge(*(Edit(p, "replace", 1, f"{p[0]} = 2") for p in landed))
    message = partial.value.message
    assert "Landed" in message and "[a.py#" in message and "NOT written: z.py" in message
    assert (root / "a.py").read_text() == "a = 2\n"
    assert (root / "z.py").read_text() == "z = 1\n"
    assert store_state(store, "z.py") == z_store
    assert [s.written for s in partial.value.result.sections] == [True, False]
    assert temp_files(root) == []


@pytest.mark.parametrize(("path", "line", "new"), TARGETS)
async def test_file_made_read_only_after_the_read_is_refused_untouched(
    root: Path, store: SqliteSnapshotStore, fault: Any, path: str, line: int, new: str
) -> None:
    patcher = patcher_for(root, store)
    view = await patcher.read(path)
    before_files, before_store = tree_bytes(root), store_state(store, path)
    with fault(root) as trial:
        (root / path).chmod(0o444)
        try:
            with pytest.raises(WriteFailedError) as failed:
                await patcher.apply(f"{view.header}\nreplace {line}:\n+{new}\n")
            assert "read-only" in failed.value.message
            assert tree_bytes(root) == before_files
            assert store_state(store, path) == before_store
        finally:
            (root / path).chmod(0o644)
        result = await patcher.apply(f"{view.header}\nreplace {line}:\n+{new}\n")
        assert result.sections[0].written
        trial.acknowledge(ORACLE[path])
    assert (root / path).stat().st_mode & 0o777 == 0o644


async def test_folder_replaced_by_a_file_after_the_read_fails_cleanly(
    root: Path, store: SqliteSnapshotStore, fault: Any
) -> None:
    (root / "pkg").mkdir()
    (root / "pkg" / "m.py").write_text("m = 1\n")
    patcher = patcher_for(root, store)
    view = await patcher.read("pkg/m.py")
    before = store_state(store, "pkg/m.py")
    (root / "pkg" / "m.py").unlink()
    (root / "pkg").rmdir()
    (root / "pkg").write_text("now a file\n")
    with fault(root), pytest.raises(HashlineError) as failed:
        await patcher.apply(f"{view.header}\nreplace 1:\n+m = 2\n")
    assert failed.value.status == 404 and "pkg/m.py" in failed.value.message
    assert (root / "pkg").read_text() == "now a file\n"
    assert store_state(store, "pkg/m.py") == before
