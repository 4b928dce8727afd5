"""A process killed in the middle of a write never leaves a half-written file.

The test reads a file (recording its snapshot in a SQLite store), then a child process
applies an edit and SIGKILLs itself at one point of the write: halfway through the temp file,
after the temp file is synced, just before the rename, or just after the rename (before the
store records the new text). Afterwards the file holds exactly the old bytes or exactly the
new ones, never a mix; before the rename the old ones and the store is unadvanced; and a fresh
process can always edit again. A retry of an edit whose outcome the agent never learned is
never applied twice.
"""

from __future__ import annotations

import signal
import subprocess
import sys
import textwrap
from pathlib import Path
from typing import Any

import nbformat
import pytest
from testkit.faults import TEMP_SUFFIX, Edit, store_state, temp_files

from jupyter_hashline.hashline import (
    DiskFilesystem,
    Patcher,
    SqliteSnapshotStore,
    StaleTagError,
)
from jupyter_hashline.notebook import NotebookFilesystem

CHILD = textwrap.dedent(
    """
    import asyncio, os, signal, sys
    from jupyter_hashline.hashline import DiskFilesystem, Patcher, SqliteSnapshotStore
    from jupyter_hashline.notebook import NotebookFilesystem

    root, db, point = sys.argv[1:4]
    patch = sys.stdin.read()

    def die(*args, **kwargs):
        os.kill(os.getpid(), signal.SIGKILL)

    real_write = os.write
    def half_then_die(fd, data):
        real_write(fd, bytes(data[: len(data) // 2]))
        die()

    if point == "mid-write":
        os.write = half_then_die
    elif point == "synced":
        os.fsync = die
    elif point == "before-rename":
        os.replace = die
    elif point == "after-rename":
        SqliteSnapshotStore.record = die

    async def main():
        store = SqliteSnapshotStore(db)
        patcher = Patcher(NotebookFilesystem(DiskFilesystem(root)), store)
        await patcher.apply(patch)
        print("not killed")

    asyncio.run(main())
    """
)
POINTS_BEFORE_RENAME = ("mid-write", "synced", "before-rename")


def oracle_edit(path: str, text: str) -> Edit:
    """`replace 2:` as the oracle applies it (line 2 of the text; the notebook's line 2 is the
    first source line of its first cell)."""
    if path.endswith(".ipynb"):
        return Edit(path, "replace", 1, text, cell=0)
    return Edit(path, "replace", 2, text)


def make_files(root: Path) -> None:
    (root / "script.py").write_bytes(b"first = 1\nsecond = 2\nthird = 3\n" * 200)
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(f"x = {n}\n" * 50, id=f"c{n}") for n in range(20)]
    nbformat.write(nb, root / "nb.ipynb")


def patcher(root: Path, db: Path) -> tuple[Patcher, SqliteSnapshotStore]:
    store = SqliteSnapshotStore(db)
    return Patcher(NotebookFilesystem(DiskFilesystem(root)), store), store


def run_child(root: Path, db: Path, point: str, patch: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", CHILD, str(root), str(db), point],
        input=patch,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


@pytest.fixture
def workspace(tmp_path: Path) -> tuple[Path, Path]:
    root = tmp_path / "root"
    root.mkdir()
    make_files(root)
    return root, tmp_path / "snapshots.sqlite3"


# Notebooks reach the disk through the same atomic writer: one kill point covers them.
KILLS = [*((point, "script.py") for point in POINTS_BEFORE_RENAME), ("before-rename", "nb.ipynb")]


@pytest.mark.parametrize(("point", "path"), KILLS)
async def test_killed_before_the_rename_leaves_the_old_file(
    workspace: tuple[Path, Path], fault: Any, path: str, point: str
) -> None:
    root, db = workspace
    with fault(root, leftovers=True) as trial:
        await _killed_then_retried(root, db, path, point, trial)


async def _killed_then_retried(root: Path, db: Path, path: str, point: str, trial: Any) -> None:
    old = (root / path).read_bytes()
    engine, store = patcher(root, db)
    view = await engine.read(path)
    recorded = store_state(store, path)
    store.close()

    trial.outcome_unknown(oracle_edit(path, "killed = True"))
    child = run_child(root, db, point, f"{view.header}\nreplace 2:\n+killed = True\n")

    assert child.returncode == -signal.SIGKILL, child.stderr
    assert (root / path).read_bytes() == old
    with SqliteSnapshotStore(db) as reopened:
        assert store_state(reopened, path) == recorded
    # SIGKILL leaves no chance to clean up: one hidden temp file named after the target
    # stays behind; it never stands in for the file and does not block later writes.
    [leftover] = temp_files(root)
    assert leftover.name.startswith(f".{path}.") and leftover.name.endswith(TEMP_SUFFIX)

    engine, store = patcher(root, db)
    with store:
        result = await engine.apply(f"{view.header}\nreplace 2:\n+survived = True\n")
        assert result.sections[0].written
        trial.acknowledge(oracle_edit(path, "survived = True"))
        assert "survived = True" in (await engine.read(path)).text


@pytest.mark.parametrize("path", ["script.py", "nb.ipynb"])
async def test_killed_after_the_rename_never_applies_a_retry_twice(
    workspace: tuple[Path, Path], fault: Any, path: str
) -> None:
    root, db = workspace
    with fault(root) as trial:
        await _killed_after_the_rename(root, db, path, trial)


async def _killed_after_the_rename(root: Path, db: Path, path: str, trial: Any) -> None:
    old = (root / path).read_bytes()
    engine, store = patcher(root, db)
    view = await engine.read(path)
    recorded = store_state(store, path)
    store.close()
    patch = f"{view.header}\nreplace 2:\n+landed_once = True\n"

    trial.outcome_unknown(oracle_edit(path, "landed_once = True"))
    child = run_child(root, db, "after-rename", patch)

    assert child.returncode == -signal.SIGKILL, child.stderr
    new = (root / path).read_bytes()
    assert new != old and new.count(b"landed_once = True") == 1
    assert temp_files(root) == []
    engine, store = patcher(root, db)
    with store:
        assert store_state(store, path) == recorded  # the store never heard of the write
        with pytest.raises(StaleTagError) as stale:
            await engine.apply(patch)  # the agent retries: it never saw a reply
        assert "Nothing was written" in stale.value.message
        assert (root / path).read_bytes() == new
