"""Cell-aware recovery in notebooks without stored ids (nbformat < 4.5), whose shown ids are
positions: a twin cell must never receive an edit, and a swapped cell is found where it went.
(Both cases were found by the stale-edit safety benchmark.)"""

from __future__ import annotations

import nbformat

from jupyter_hashline.hashline.memory_fs import InMemoryFilesystem
from jupyter_hashline.hashline.memory_store import InMemorySnapshotStore
from jupyter_hashline.hashline.patcher import Patcher
from jupyter_hashline.notebook import NotebookFilesystem

TWIN = "a = 1\nb = 2\nc = 3"


def legacy(*sources: str) -> str:
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(s) for s in sources])
    nb.nbformat_minor = 4
    for cell in nb.cells:
        del cell["id"]
    return nbformat.writes(nb) + "\n"


def sources(raw: str) -> list[str]:
    return [cell["source"] for cell in nbformat.reads(raw, as_version=4).cells]


async def test_edit_to_a_twin_cell_lands_on_the_cell_the_agent_read() -> None:
    inner = InMemoryFilesystem({"n.ipynb": legacy("x = 0", TWIN, TWIN)})
    patcher = Patcher(NotebookFilesystem(inner), InMemorySnapshotStore())
    read = await patcher.read("n.ipynb")
    assert read.text.splitlines()[3] == "a = 1"  # line 4: first line of the first twin
    inner.set("n.ipynb", legacy(TWIN, TWIN))  # a person deletes the first cell
    result = await patcher.apply(f"{read.header}\nreplace 4:\n+a = 100\n")
    assert result.sections[0].written
    assert sources(inner.get("n.ipynb")) == [TWIN.replace("a = 1", "a = 100"), TWIN]


async def test_edit_to_a_swapped_cell_follows_it() -> None:
    inner = InMemoryFilesystem({"n.ipynb": legacy("x = 0", "y = 0", TWIN, "z = 0")})
    patcher = Patcher(NotebookFilesystem(inner), InMemorySnapshotStore())
    read = await patcher.read("n.ipynb")
    line = read.text.splitlines().index("b = 2") + 1
    inner.set("n.ipynb", legacy("x = 0", TWIN, "y = 0", "z = 0"))  # a person swaps two cells
    result = await patcher.apply(f"{read.header}\nreplace {line}:\n+b = 200\n")
    assert result.sections[0].written
    assert sources(inner.get("n.ipynb")) == [
        "x = 0",
        TWIN.replace("b = 2", "b = 200"),
        "y = 0",
        "z = 0",
    ]
