"""A real full filesystem: a small tmpfs the test mounts and fills until the kernel says ENOSPC.

No fault is simulated here: the disk is really full. An agent's edit to a notebook and to a
text file on it, through the engine (`DiskFilesystem`) and through a real Jupyter server whose
root is on that disk (the contents manager's own atomic writer), fails with a clear "disk is
full" error, leaves every file exactly as it was and the snapshot store unadvanced; once space
is freed the same edit lands. Judged by the fault oracle (testkit.faults.Trial).

Mounting needs root (CAP_SYS_ADMIN) and the `mount` command; elsewhere the tests skip and say
which of the two is missing.
"""

from __future__ import annotations

import errno
import os
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import nbformat
import pytest
from testkit.faults import Edit, store_state, temp_files, tree_bytes
from testkit.rest import Api

from jupyter_hashline.hashline import DiskFilesystem, Patcher, SqliteSnapshotStore, WriteFailedError
from jupyter_hashline.notebook import NotebookFilesystem

DISK = "512k"
FILLER = ".filler"  # hidden: the oracle compares the visible files only


def mount_tmpfs(where: Path) -> str | None:
    """Mount a small tmpfs at `where`; None when done, else why it cannot be."""
    if os.geteuid() != 0:
        return "mounting a tmpfs needs root; run the suite as root to fill a real disk"
    if shutil.which("mount") is None:
        return "the `mount` command is not installed"
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={DISK},mode=0755", "tmpfs", str(where)],
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        return f"this machine refuses to mount a tmpfs ({done.stderr.strip() or done.returncode})"
    return None


def mounted_small_disk(where: Path) -> Iterator[Path]:
    """`where` as a small tmpfs while the test runs (a skip that says why where it cannot be)."""
    where.mkdir()
    reason = mount_tmpfs(where)
    if reason is not None:
        pytest.skip(reason)
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], check=False)


@pytest.fixture
def small_disk(tmp_path: Path) -> Iterator[Path]:
    yield from mounted_small_disk(tmp_path / "small-disk")


def fill(root: Path) -> Path:
    """Grow a file until the filesystem refuses another byte (a real ENOSPC)."""
    filler = root / FILLER
    fd = os.open(filler, os.O_WRONLY | os.O_CREAT, 0o644)
    try:
        for size in (65536, 4096, 512, 1):
            chunk = b"\0" * size
            while True:
                try:
                    os.write(fd, chunk)
                except OSError as error:
                    assert error.errno == errno.ENOSPC, error
                    break
    finally:
        os.close(fd)
    with pytest.raises(OSError) as full:
        (root / ".probe").write_bytes(b"x")
    assert full.value.errno == errno.ENOSPC
    return filler


def make_files(root: Path) -> None:
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_code_cell(f"x_{n} = {n}\nprint(x_{n})", id=f"c{n}") for n in range(30)
    ]
    for cell in nb.cells:
        cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text="out\n" * 20)]
    nbformat.write(nb, root / "nb.ipynb")
    (root / "script.py").write_text("".join(f"line_{n} = {n}\n" for n in range(400)))


# (path, the patch's line and text, the same edit as the oracle applies it)
TARGETS = [
    (
        "nb.ipynb",
        2,
        "x_0 = 'a longer value'",
        Edit("nb.ipynb", "replace", 1, "x_0 = 'a longer value'", cell=0),
    ),
    (
        "script.py",
        1,
        "line_0 = 'a longer value'",
        Edit("script.py", "replace", 1, "line_0 = 'a longer value'"),
    ),
]


@pytest.mark.parametrize(("path", "line", "text", "edit"), TARGETS, ids=["notebook", "text"])
async def test_a_full_disk_refuses_the_write_and_keeps_everything(
    small_disk: Path, tmp_path: Path, fault: Any, path: str, line: int, text: str, edit: Edit
) -> None:
    make_files(small_disk)
    with SqliteSnapshotStore(tmp_path / "store.sqlite3") as store:
        patcher = Patcher(NotebookFilesystem(DiskFilesystem(small_disk)), store)
        view = await patcher.read(path)
        patch = f"{view.header}\nreplace {line}:\n+{text}\n"
        recorded = store_state(store, path)
        with fault(small_disk) as trial:
            filler = fill(small_disk)
            files = tree_bytes(small_disk)
            with pytest.raises(WriteFailedError) as full:
                await patcher.apply(patch)
            assert "the disk is full" in full.value.message and path in full.value.message
            assert tree_bytes(small_disk) == files and temp_files(small_disk) == []
            assert store_state(store, path) == recorded
            filler.unlink()
            result = await patcher.apply(patch)
            assert result.sections[0].written
            trial.acknowledge(edit)


@pytest.fixture
def jp_root_dir(tmp_path: Path) -> Iterator[Path]:
    """The Jupyter server's root on the small disk."""
    yield from mounted_small_disk(tmp_path / "root_dir")


@pytest.mark.parametrize(("path", "line", "text", "edit"), TARGETS, ids=["notebook", "text"])
async def test_a_full_disk_under_a_jupyter_server_is_a_clear_error(
    api: Api, jp_root_dir: Path, fault: Any, path: str, line: int, text: str, edit: Edit
) -> None:
    make_files(jp_root_dir)
    _, read = await api("read", params={"path": path})
    patch = {"patch": f"{read['header']}\nreplace {line}:\n+{text}\n"}
    with fault(jp_root_dir) as trial:
        filler = fill(jp_root_dir)
        files = {k: v for k, v in tree_bytes(jp_root_dir).items() if not k.startswith(".")}
        status, body = await api("patch", method="POST", body=patch)
        assert (status, body["error"]) == (500, "write_failed"), body
        assert path in body["message"] and "unchanged" in body["message"]
        assert os.strerror(errno.ENOSPC) in body["message"]
        now = {k: v for k, v in tree_bytes(jp_root_dir).items() if not k.startswith(".")}
        assert now == files
        filler.unlink()
        status, body = await api("patch", method="POST", body=patch, schema="PatchResponse")
        assert status == 200 and body["sections"][0]["written"], body
        trial.acknowledge(edit)
