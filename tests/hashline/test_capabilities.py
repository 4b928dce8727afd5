"""Optional filesystem capabilities are found one way (`capabilities_of`), and a storage that
is not a `Filesystem` is refused where it is handed over, not at its first missing method."""

from __future__ import annotations

from pathlib import Path

import pytest

from jupyter_hashline.hashline import (
    DiskFilesystem,
    InMemoryFilesystem,
    InMemorySnapshotStore,
    Patcher,
    WriteResult,
    capabilities_of,
    checked_filesystem,
)
from jupyter_hashline.notebook import NotebookFilesystem


class TwoMethods:
    """Reads and writes, but none of the rest of the protocol."""

    async def read_text(self, path: str) -> str:
        return ""

    async def write_text(self, path: str, content: str) -> WriteResult:
        return WriteResult(content)


def test_each_capability_is_the_filesystem_itself_or_none(tmp_path: Path) -> None:
    disk = DiskFilesystem(tmp_path)
    on_disk = capabilities_of(disk)
    assert on_disk.bytes is disk
    assert (on_disk.rebaser, on_disk.annotator, on_disk.selector) == (None, None, None)
    notebooks = NotebookFilesystem(disk)
    of_notebooks = capabilities_of(notebooks)
    assert of_notebooks.bytes is None
    assert of_notebooks.rebaser is of_notebooks.annotator is of_notebooks.selector is notebooks
    assert capabilities_of(InMemoryFilesystem()).bytes is None


def test_a_storage_that_is_no_filesystem_is_refused_saying_what_it_lacks() -> None:
    with pytest.raises(TypeError, match=r"TwoMethods is not a Filesystem \(it lacks preflight"):
        checked_filesystem(TwoMethods())
    with pytest.raises(TypeError, match=r"subclass jupyter_hashline\.hashline\.Filesystem"):
        Patcher(TwoMethods(), InMemorySnapshotStore())  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="canonical_path, normalized_view"):
        NotebookFilesystem(TwoMethods())  # type: ignore[arg-type]
    fs = InMemoryFilesystem()
    assert checked_filesystem(fs) is fs
