"""Paired notebooks in directory mode (CLI, MCP `--root`, Sessions outside a server): read and
written through jupytext's library as a server with jupytext does it."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

import jupytext
import nbformat
import pytest

from jupyter_hashline.tools import open_directory, run_tool

FORMATS = ["py:percent", "md", "md:myst"]
TWIN = {"py:percent": "paired.py", "md": "paired.md", "md:myst": "paired.md"}


def paired_notebook(root: Path, fmt: str | None, *, in_metadata: bool = True) -> Any:
    nb = nbformat.v4.new_notebook(
        cells=[
            nbformat.v4.new_markdown_cell("# Title", id="intro"),
            nbformat.v4.new_code_cell("a = 1\nb = 2", id="code"),
        ],
        metadata={
            "kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}
        },
    )
    if fmt is not None and in_metadata:
        nb.metadata["jupytext"] = {"formats": f"ipynb,{fmt}"}
    nbformat.write(nb, root / "paired.ipynb")
    if fmt is not None:
        jupytext.write(nb, root / TWIN[fmt], fmt=fmt)
    return nb


async def edit(root: Path, old: str, new: str) -> Any:
    workspace = open_directory(root, ":memory:")
    try:
        read = await run_tool(workspace, "notebook_read", {"path": "paired.ipynb"}, agent="a")
        assert not read.is_error, read.text
        rows = read.text.split("\n")
        line = next(n for n, row in enumerate(rows) if row.endswith(old))
        patch = f"{rows[0]}\nreplace {line}:\n+{new}\n"
        result = await run_tool(workspace, "notebook_edit", {"patch": patch}, agent="a")
        assert not result.is_error, result.text
        return read
    finally:
        await workspace.aclose()


@pytest.mark.parametrize("fmt", FORMATS)
def test_an_edit_updates_the_notebook_and_its_twin(tmp_path: Path, fmt: str) -> None:
    paired_notebook(tmp_path, fmt)
    asyncio.run(edit(tmp_path, "b = 2", "b = 3"))
    nb = nbformat.read(tmp_path / "paired.ipynb", as_version=4)
    assert nb.cells[1].source == "a = 1\nb = 3"
    twin = (tmp_path / TWIN[fmt]).read_text()
    assert "b = 3" in twin and "b = 2" not in twin
    assert jupytext.read(tmp_path / TWIN[fmt], fmt=fmt).cells[1].source == "a = 1\nb = 3"
    ipynb, text = (os.stat(tmp_path / name).st_mtime for name in ("paired.ipynb", TWIN[fmt]))
    assert text >= ipynb  # the twin is the most recent: jupytext opens the pair as it is


@pytest.mark.parametrize("fmt", FORMATS)
def test_a_persons_edit_of_the_twin_is_read_and_kept(tmp_path: Path, fmt: str) -> None:
    paired_notebook(tmp_path, fmt)
    twin = tmp_path / TWIN[fmt]
    twin.write_text(twin.read_text().replace("a = 1", "a = 100"))
    later = os.stat(tmp_path / "paired.ipynb").st_mtime + 5
    os.utime(twin, (later, later))
    read = asyncio.run(edit(tmp_path, "b = 2", "b = 3"))
    assert any(row.endswith("a = 100") for row in read.text.split("\n"))
    nb = nbformat.read(tmp_path / "paired.ipynb", as_version=4)
    assert nb.cells[1].source == "a = 100\nb = 3"
    assert "a = 100" in twin.read_text() and "b = 3" in twin.read_text()


@pytest.mark.parametrize(
    ("name", "config"),
    [
        ("jupytext.toml", 'formats = "ipynb,py:percent"\n'),
        ("pyproject.toml", '[tool.jupytext]\nformats = "ipynb,py:percent"\n'),
    ],
)
def test_pairing_comes_from_jupytexts_configuration_files(
    tmp_path: Path, name: str, config: str
) -> None:
    (tmp_path / name).write_text(config)
    paired_notebook(tmp_path, "py:percent", in_metadata=False)
    asyncio.run(edit(tmp_path, "b = 2", "b = 3"))
    assert "b = 3" in (tmp_path / "paired.py").read_text()
    assert nbformat.read(tmp_path / "paired.ipynb", as_version=4).cells[1].source.endswith("b = 3")


def test_an_unpaired_notebook_gets_no_twin(tmp_path: Path) -> None:
    paired_notebook(tmp_path, None)
    asyncio.run(edit(tmp_path, "b = 2", "b = 3"))
    assert sorted(p.name for p in tmp_path.iterdir()) == ["paired.ipynb"]


def test_an_outdated_twin_is_refused_not_overwritten(tmp_path: Path) -> None:
    paired_notebook(tmp_path, "py:percent")
    nb = nbformat.read(tmp_path / "paired.ipynb", as_version=4)
    nb.cells[1].source = "a = 1\nb = 20"
    nbformat.write(nb, tmp_path / "paired.ipynb")
    earlier = os.stat(tmp_path / "paired.ipynb").st_mtime - 60
    os.utime(tmp_path / "paired.py", (earlier, earlier))
    before = (tmp_path / "paired.py").read_text()

    async def read() -> Any:
        workspace = open_directory(tmp_path, ":memory:")
        try:
            return await run_tool(workspace, "notebook_read", {"path": "paired.ipynb"}, agent="a")
        finally:
            await workspace.aclose()

    outcome = asyncio.run(read())
    assert outcome.is_error and "is more recent than its paired paired.py" in outcome.text
    assert (tmp_path / "paired.py").read_text() == before
