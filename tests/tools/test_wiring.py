"""`open_workspace`: the one wiring of a storage, the notebook layer, a store and a runner."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path

import pytest

from jupyter_hashline.hashline import DiskFilesystem, InMemorySnapshotStore
from jupyter_hashline.kernels import CellRunner
from jupyter_hashline.kernels.pool import DirectoryKernelPool
from jupyter_hashline.notebook import NotebookFilesystem
from jupyter_hashline.tools import (
    DirectoryWorkspace,
    Workspace,
    default_store_path,
    open_directory,
    open_workspace,
)


class NoGuard:
    def shown(self, path: str, text: str) -> None:
        pass

    async def before_write(self, path: str, read_now: Callable[[], Awaitable[str]]) -> None:
        pass


@pytest.fixture
def made() -> list[NotebookFilesystem]:
    return []


def pool_in(folder: Path, made: list[NotebookFilesystem]) -> Callable[..., CellRunner]:
    def make(fs: NotebookFilesystem) -> CellRunner:
        made.append(fs)
        return DirectoryKernelPool(fs, folder)  # starts no kernel until a run

    return make


async def test_the_runner_writes_through_the_workspaces_notebook_layer(
    tmp_path: Path, made: list[NotebookFilesystem]
) -> None:
    guard = NoGuard()
    workspace = open_workspace(
        DiskFilesystem(tmp_path),
        InMemorySnapshotStore(),
        layout="nbformat",
        guard=guard,
        runner=pool_in(tmp_path, made),
        describe="a test folder",
    )
    assert type(workspace) is Workspace
    assert made == [workspace.fs]  # outputs land where edits land
    assert isinstance(workspace.runner, DirectoryKernelPool)
    assert workspace.fs.guard is guard and workspace.fs.layout == "nbformat"
    assert workspace.describe == "a test folder"
    await workspace.aclose()


async def test_refused_runs_build_no_runner(tmp_path: Path, made: list[NotebookFilesystem]) -> None:
    workspace = open_workspace(
        DiskFilesystem(tmp_path),
        InMemorySnapshotStore(),
        runner=pool_in(tmp_path, made),
        run_refusal="runs are off here",
    )
    assert made == [] and workspace.runner is None
    assert workspace.run_refusal == "runs are off here"


async def test_the_directory_mode_is_wired_the_same_way(tmp_path: Path) -> None:
    workspace = open_directory(tmp_path, ":memory:", run_refusal="off")
    assert isinstance(workspace, DirectoryWorkspace) and workspace.runner is None
    assert isinstance(workspace.fs, NotebookFilesystem) and workspace.fs.guard is None
    await workspace.aclose()


def test_one_default_store_path_for_a_given_data_dir(tmp_path: Path) -> None:
    root, data = tmp_path / "root", tmp_path / "data"
    root.mkdir()
    path = default_store_path(root, data)
    assert path.parent == data / "jupyter_hashline"
    assert path.name == default_store_path(root).name  # the same root id, any data dir
