"""Directory mode (CLI, MCP) keeps notebook trust in the notary a local Jupyter uses: the
Jupyter data dir's signature database, never created where it is absent, off on request."""

from __future__ import annotations

import warnings
from pathlib import Path

import nbformat
import pytest
from nbformat.sign import NotebookNotary

from jupyter_hashline.tools.directory import TRUST_ENV, open_directory

HTML = {"text/html": "<b>rich</b>", "text/plain": "rich"}


def write_notebook(path: Path) -> nbformat.NotebookNode:
    new = nbformat.v4
    nb = new.new_notebook(
        cells=[
            new.new_code_cell("x = 1", id="a", outputs=[new.new_output("display_data", data=HTML)]),
            new.new_code_cell("y = 2", id="b"),
        ]
    )
    nbformat.write(nb, path)
    return nb


def signed(data: Path, path: Path) -> bool:
    with NotebookNotary(data_dir=str(data)) as notary, warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return bool(notary.check_signature(nbformat.read(path, as_version=4)))


async def edit(root: Path) -> None:
    workspace = open_directory(root, ":memory:")
    try:
        view = await workspace.fs.read_text("t.ipynb")
        await workspace.fs.write_text("t.ipynb", view.replace("y = 2", "y = 3"))
    finally:
        await workspace.aclose()
    assert "y = 3" in (root / "t.ipynb").read_text("utf-8")


@pytest.fixture
def dirs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    root, data = tmp_path / "root", tmp_path / "data"
    root.mkdir()
    data.mkdir()
    monkeypatch.setenv("JUPYTER_DATA_DIR", str(data))
    monkeypatch.delenv(TRUST_ENV, raising=False)
    return root, data


async def test_an_edit_keeps_a_notebook_signed_in_the_local_notary_trusted(
    dirs: tuple[Path, Path],
) -> None:
    root, data = dirs
    nb = write_notebook(root / "t.ipynb")
    with NotebookNotary(data_dir=str(data)) as notary:
        notary.sign(nb)  # `jupyter trust t.ipynb`
    await edit(root)
    assert signed(data, root / "t.ipynb")


async def test_a_machine_that_never_signed_gets_nothing_created(dirs: tuple[Path, Path]) -> None:
    root, data = dirs
    write_notebook(root / "t.ipynb")
    await edit(root)
    assert list(data.iterdir()) == []


async def test_trust_can_be_left_to_jupyter(
    dirs: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    root, data = dirs
    nb = write_notebook(root / "t.ipynb")
    with NotebookNotary(data_dir=str(data)) as notary:
        notary.sign(nb)
    monkeypatch.setenv(TRUST_ENV, "off")
    await edit(root)
    assert not signed(data, root / "t.ipynb")
