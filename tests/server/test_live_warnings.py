"""Warnings agree: a notebook the write repairs reads the same warning whether the file is
written by the notebook layer, saved by the room it is open in, or reached by a stale edit
recovered after a person inserted a cell in JupyterLab (issue 40).

The room repairs the file as it loads it (a new id for a duplicate or missing one, outputs for a
code cell without them), and its save writes those repairs; the plain path repairs it in the
write itself. The new ids differ (the room picks random ones, the notebook layer `<id>-2` or
`cell-<n>`), so the comparison is of the warnings with the new ids set aside.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import nbformat
import pytest
from testkit.rest import Api, read_view
from testkit.rooms import OpenInLab, until
from traitlets.config import Config

NB = "work/odd.ipynb"
PROBLEMS = ("duplicate id", "missing id", "missing outputs")


@pytest.fixture
def jp_server_config(collaboration_server_config: Config) -> Config:
    return collaboration_server_config


def odd_notebook(path: Path, problem: str) -> None:
    """Three code cells `a`, `b`, `c`, the second with `problem` (as other tools write them)."""
    cells: list[dict[str, Any]] = [
        {"cell_type": "code", "id": cid, "metadata": {}, "source": src, "outputs": []}
        for cid, src in (("a", "x = 1"), ("b", "y = 2"), ("c", "z = 3"))
    ]
    for cell in cells:
        cell["execution_count"] = None
    if problem == "duplicate id":
        cells[1]["id"] = "a"
    elif problem == "missing id":
        del cells[1]["id"]
    else:
        del cells[1]["outputs"]
    nb = {"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(nb, indent=1))


def without_new_ids(warnings: list[str]) -> list[str]:
    return [re.sub(r"-> [^;,\s]+", "-> NEW", w) for w in warnings]


async def edit_last_cell(api: Api, header: str, value: int = 30) -> dict[str, Any]:
    text = f"{header}\nreplace 6:\n+z = {value}\n"
    status, body = await api("patch", method="POST", body={"patch": text})
    assert status == 200, body
    [section] = body["sections"]
    assert section["written"], section
    return dict(section)


async def plain_warnings(api: Api) -> list[str]:
    return list((await edit_last_cell(api, (await read_view(api, NB))["header"]))["warnings"])


def in_room(jp_serverapp: Any) -> int:
    """How many cells the server's shared document of the open notebook has."""
    rooms = jp_serverapp.web_app.settings["jupyter_server_ydoc"].ywebsocket_server.rooms
    [room] = [r for key, r in rooms.items() if key.startswith("json:notebook:")]
    return int(room._document.cell_number)


@pytest.mark.parametrize("problem", PROBLEMS)
async def test_a_repair_reads_the_same_warning_in_a_room_as_on_disk(
    api: Api, jp_root_dir: Path, open_in_lab: OpenInLab, problem: str
) -> None:
    odd_notebook(jp_root_dir / NB, problem)
    expected = await plain_warnings(api)
    assert len(expected) == 1 and problem.split()[-1] in expected[0], expected

    odd_notebook(jp_root_dir / NB, problem)
    async with open_in_lab(NB):
        first = await edit_last_cell(api, (await read_view(api, NB))["header"])
        assert without_new_ids(first["warnings"]) == without_new_ids(expected)
        again = await edit_last_cell(api, first["header"], 31)  # the file holds the repair now
        assert again["warnings"] == []
    saved = nbformat.read(jp_root_dir / NB, as_version=4)
    nbformat.validate(saved)
    assert len({cell.id for cell in saved.cells}) == 3


@pytest.mark.parametrize("problem", PROBLEMS)
async def test_a_stale_edit_recovered_after_a_person_inserted_a_cell_warns_the_same(
    api: Api, jp_root_dir: Path, jp_serverapp: Any, open_in_lab: OpenInLab, problem: str
) -> None:
    odd_notebook(jp_root_dir / NB, problem)
    expected = await plain_warnings(api)

    odd_notebook(jp_root_dir / NB, problem)
    async with open_in_lab(NB) as person:
        header = (await read_view(api, NB))["header"]
        new = {"cell_type": "markdown", "id": "intro", "metadata": {}, "source": "# Intro"}
        person.ycells.insert(0, person.create_ycell(new))
        await until(lambda: in_room(jp_serverapp) == 4, "the inserted cell to reach the room")
        section = await edit_last_cell(api, header)
        assert without_new_ids(section["warnings"]) == without_new_ids(expected)
    saved = nbformat.read(jp_root_dir / NB, as_version=4)
    assert [cell.source for cell in saved.cells] == ["# Intro", "x = 1", "y = 2", "z = 30"]
