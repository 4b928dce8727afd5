"""Jupytext formats as the projection: a py:percent read/patch/write round trip."""

from __future__ import annotations

import jupytext
import pytest
from testkit.nb_files import analysis, dumps, loads

from jupyter_hashline.hashline.errors import HashlineError
from jupyter_hashline.hashline.memory_fs import InMemoryFilesystem
from jupyter_hashline.hashline.memory_store import InMemorySnapshotStore
from jupyter_hashline.hashline.patcher import Patcher
from jupyter_hashline.notebook import NotebookFilesystem


async def test_py_percent_read_patch_write_round_trip() -> None:
    inner = InMemoryFilesystem({"a.ipynb": dumps(analysis())})
    fs = NotebookFilesystem(inner, projection="py:percent")
    patcher = Patcher(fs, InMemorySnapshotStore())
    read = await patcher.read("a.ipynb")
    assert read.text == jupytext.writes(loads(inner.get("a.ipynb")), fmt="py:percent")
    number = read.text.split("\n").index("df.plot()") + 1
    result = await patcher.apply(f"[a.ipynb#{read.tag}]\nreplace {number}:\n+df.plot(kind='bar')\n")
    (section,) = result.sections
    assert section.written
    nb = loads(inner.get("a.ipynb"))
    assert inner.get("a.ipynb") == dumps(nb)
    assert [c.id for c in nb.cells] == ["intro", "load-data", "clean", "plot"]
    assert nb.cells[3].source == "df.plot(kind='bar')"
    assert nb.cells[1].outputs[0]["text"] == "a\nb\nc\n" and nb.cells[1].execution_count == 1
    assert section.after == jupytext.writes(nb, fmt="py:percent")
    assert await fs.read_text("a.ipynb") == section.after


async def test_md_projection_reports_what_jupytext_produced() -> None:
    inner = InMemoryFilesystem({"a.ipynb": dumps(analysis(minor=4))})
    fs = NotebookFilesystem(inner, projection="md")
    text = await fs.read_text("a.ipynb")
    result = await fs.write_text("a.ipynb", text.replace("# Sales analysis", "# Sales\n\n\n"))
    assert result.text == jupytext.writes(loads(inner.get("a.ipynb")), fmt="md")
    assert loads(inner.get("a.ipynb")).nbformat_minor >= 4


async def test_cells_selection_needs_the_hashline_projection() -> None:
    fs = NotebookFilesystem(InMemoryFilesystem({"a.ipynb": dumps(analysis())}), projection="md")
    with pytest.raises(HashlineError, match="needs the hashline projection"):
        fs.select_cells("a.ipynb", await fs.read_text("a.ipynb"), ("plot",))
    assert fs.rebase_lines("a.ipynb", "a", "b", frozenset({1})) is None
    assert fs.annotate_view("a.ipynb", await fs.read_text("a.ipynb")) == {}
