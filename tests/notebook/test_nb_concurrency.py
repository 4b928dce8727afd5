"""An agent and a person editing one notebook: the real Patcher over NotebookFilesystem.

The agent reads; the person edits other cells (or the same lines) and saves; the agent's patch
against its old header lands on the right cells with the person's work intact, or is rejected
with the current state of the contested cell and nothing written.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from nbformat.v4 import new_code_cell
from testkit.nb_files import Storage, analysis, dumps, loads

from jupyter_hashline.hashline.errors import StaleTagError
from jupyter_hashline.hashline.memory_store import InMemorySnapshotStore
from jupyter_hashline.hashline.patcher import Patcher
from jupyter_hashline.notebook import NotebookFilesystem

EDIT_LOAD = 'replace 5:\n+df = pd.read_csv("sales.csv", parse_dates=["date"])\n'
NEW_LOAD = 'df = pd.read_csv("sales.csv", parse_dates=["date"])'


@pytest.fixture(params=["memory", "disk"])
def storage(request: pytest.FixtureRequest, tmp_path: Path) -> Storage:
    return Storage(request.param, tmp_path)


async def agent_reads(storage: Storage, minor: int = 5) -> tuple[Patcher, str]:
    storage.put("a.ipynb", dumps(analysis(minor)))
    patcher = Patcher(NotebookFilesystem(storage.fs), InMemorySnapshotStore())
    return patcher, (await patcher.read("a.ipynb")).tag


def by_id(storage: Storage) -> dict[str, Any]:
    return {cell.id: cell for cell in loads(storage.get("a.ipynb")).cells}


def edit_plot(nb: Any) -> None:
    nb.cells[3].source = "df.plot(kind='bar')"


def insert_above(nb: Any) -> None:
    nb.cells.insert(0, new_code_cell("import numpy as np\nimport os", id="person"))


def delete_clean(nb: Any) -> None:
    del nb.cells[2]


def move_load_last(nb: Any) -> None:
    nb.cells.append(nb.cells.pop(1))


def comment_clean(nb: Any) -> None:
    nb.cells[2].source = "# cleaning\n" + nb.cells[2].source


PERSON_EDITS: dict[str, Callable[[Any], None]] = {
    "edits another cell": edit_plot,
    "inserts a cell above": insert_above,
    "deletes another cell": delete_clean,
    "moves the cell": move_load_last,
}


@pytest.mark.parametrize("person", list(PERSON_EDITS), ids=list(PERSON_EDITS))
async def test_the_agents_patch_lands_and_the_persons_change_survives(
    storage: Storage, person: str
) -> None:
    patcher, tag = await agent_reads(storage)
    storage.person_edits("a.ipynb", PERSON_EDITS[person])
    expected = loads(storage.get("a.ipynb"))
    result = await patcher.apply(f"[a.ipynb#{tag}]\n{EDIT_LOAD}")
    (section,) = result.sections
    assert section.written and "recovered" in section.banner
    after = loads(storage.get("a.ipynb"))
    assert [c.id for c in after.cells] == [c.id for c in expected.cells]
    for cell, before in zip(after.cells, expected.cells, strict=True):
        if cell.id == "load-data":
            assert cell.source == f"import pandas as pd\n{NEW_LOAD}"
            assert cell.outputs == before.outputs and cell.metadata == before.metadata
        else:
            assert cell == before


async def test_a_move_is_named_in_the_reply(storage: Storage) -> None:
    patcher, tag = await agent_reads(storage)
    storage.person_edits("a.ipynb", insert_above)
    result = await patcher.apply(f"[a.ipynb#{tag}]\n{EDIT_LOAD}")
    assert "cell load-data moved from line 3 to 6" in result.to_text()


async def test_an_edit_elsewhere_in_the_same_cell_is_rebased_inside_the_cell(
    storage: Storage,
) -> None:
    patcher, tag = await agent_reads(storage)
    storage.person_edits("a.ipynb", comment_clean)
    result = await patcher.apply(f"[a.ipynb#{tag}]\nreplace 9:\n+total = round(df.amount.sum())\n")
    assert "cell clean changed since your read; your lines in it moved by +1" in result.to_text()
    assert by_id(storage)["clean"].source.split("\n") == [
        "# cleaning",
        "df = df.dropna()",
        "df = df[df.amount > 0]",
        "total = round(df.amount.sum())",
    ]


async def test_an_edit_next_to_the_persons_line_lands_beside_it(storage: Storage) -> None:
    patcher, tag = await agent_reads(storage)
    storage.person_edits("a.ipynb", comment_clean)  # a new first line, right above line 7
    result = await patcher.apply(f"[a.ipynb#{tag}]\nreplace 7:\n+df = df.dropna(how='all')\n")
    assert "cell clean changed since your read; your lines in it moved by +1" in result.to_text()
    assert by_id(storage)["clean"].source.split("\n") == [
        "# cleaning",
        "df = df.dropna(how='all')",
        "df = df[df.amount > 0]",
        "total = df.amount.sum()",
    ]


async def test_an_insert_into_the_gap_the_person_filled_is_rejected(storage: Storage) -> None:
    patcher, tag = await agent_reads(storage)
    storage.person_edits("a.ipynb", comment_clean)
    before = storage.get("a.ipynb")
    with pytest.raises(
        StaleTagError, match=r"cell clean changed where you edit it \(lines were added before"
    ):
        await patcher.apply(f"[a.ipynb#{tag}]\ninsert before 7:\n+# mine\n")
    assert storage.get("a.ipynb") == before


async def test_the_same_line_edited_by_both_is_rejected_and_nothing_is_written(
    storage: Storage,
) -> None:
    patcher, tag = await agent_reads(storage)

    def same_line(nb: Any) -> None:
        nb.cells[1].source = 'import pandas as pd\ndf = pd.read_csv("sales_2026.csv")'
        nb.cells.insert(0, new_code_cell("x = 1", id="person"))

    storage.person_edits("a.ipynb", same_line)
    before = storage.get("a.ipynb")
    with pytest.raises(StaleTagError) as info:
        await patcher.apply(f"[a.ipynb#{tag}]\n{EDIT_LOAD}")
    message = str(info.value)
    assert "cell load-data" in message and "Nothing was written" in message
    assert '*7:df = pd.read_csv("sales_2026.csv")' in message
    assert " 5:# %% [code] id=load-data" in message
    assert storage.get("a.ipynb") == before


async def test_a_structure_edit_needs_its_neighbours_unchanged(storage: Storage) -> None:
    patcher, tag = await agent_reads(storage)
    storage.person_edits("a.ipynb", edit_plot)
    new_cell = "insert before 6:\n+# %% [markdown]\n+## Cleaning\n"
    await patcher.apply(f"[a.ipynb#{tag}]\n{new_cell}")
    cells = loads(storage.get("a.ipynb")).cells
    assert [c.source for c in cells[2:4]] == ["## Cleaning", cells[3].source]
    assert cells[4].source == "df.plot(kind='bar')"

    patcher, tag = await agent_reads(storage)

    def edit_load(nb: Any) -> None:
        nb.cells[1].source += "\ndf.info()"

    storage.person_edits("a.ipynb", edit_load)
    before = storage.get("a.ipynb")
    with pytest.raises(StaleTagError, match="the cell before cell clean changed"):
        await patcher.apply(f"[a.ipynb#{tag}]\n{new_cell}")
    assert storage.get("a.ipynb") == before


async def test_a_deleted_target_cell_is_rejected(storage: Storage) -> None:
    patcher, tag = await agent_reads(storage)

    def delete_load(nb: Any) -> None:
        del nb.cells[1]

    storage.person_edits("a.ipynb", delete_load)
    before = storage.get("a.ipynb")
    with pytest.raises(StaleTagError, match=r"cell load-data .* was deleted"):
        await patcher.apply(f"[a.ipynb#{tag}]\n{EDIT_LOAD}")
    assert storage.get("a.ipynb") == before


async def test_legacy_notebook_edits_find_their_cells_by_content(storage: Storage) -> None:
    patcher, tag = await agent_reads(storage, minor=4)

    def insert_legacy(nb: Any) -> None:
        nb.cells.insert(0, new_code_cell("import os"))
        del nb.cells[0]["id"]

    storage.person_edits("a.ipynb", insert_legacy)
    assert loads(storage.get("a.ipynb")).nbformat_minor == 4
    await patcher.apply(f"[a.ipynb#{tag}]\n{EDIT_LOAD}")
    after = loads(storage.get("a.ipynb"))
    assert after.nbformat_minor == 4  # minimal diffs: no upgrade, no ids stored
    assert all("id" not in cell for cell in after.cells)
    assert after.cells[0].source == "import os"
    assert after.cells[2].source == f"import pandas as pd\n{NEW_LOAD}"
    assert after.cells[2].outputs[0]["text"] == "a\nb\nc\n"
