"""`POST hashline/revert` on a notebook open in a collaborative room: the person sees the undo
live, their unsaved typing in another cell is kept (in the room and on disk), and an undo of a
line they changed is refused with nothing changed."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import nbformat
import pytest
from jupyter_ydoc import YNotebook
from testkit.rest import Api, write_notebook
from testkit.rooms import OpenInLab, until
from traitlets.config import Config

NB = "work/live-undo.ipynb"


@pytest.fixture
def jp_server_config(collaboration_server_config: Config) -> Config:
    return collaboration_server_config


def source(document: YNotebook, index: int) -> str:
    return str(document.ycells[index]["source"])


def disk_sources(root: Path) -> list[str]:
    return [cell.source for cell in nbformat.read(root / NB, as_version=4).cells]


def server_document(jp_serverapp: Any) -> YNotebook:
    rooms = jp_serverapp.web_app.settings["jupyter_server_ydoc"].ywebsocket_server.rooms
    [room] = [r for key, r in rooms.items() if key.startswith("json:notebook:")]
    document: YNotebook = room._document
    return document


async def agent_edit(api: Api, body: str) -> dict[str, Any]:
    named = {"X-Hashline-Agent": "claude-code"}  # a fresh dict: jp_fetch adds its token
    status, read = await api("read", params={"path": NB}, headers=named, schema="ReadResponse")
    assert status == 200, read
    status, reply = await api(
        "patch", method="POST", body={"patch": f"{read['header']}\n{body}"}, headers=dict(named)
    )
    assert status == 200, reply
    return dict(reply["activity"][0])


async def test_undo_in_a_room_keeps_the_persons_unsaved_typing(
    api: Api, jp_root_dir: Path, jp_serverapp: Any, open_in_lab: OpenInLab
) -> None:
    write_notebook(jp_root_dir / NB, "a = 1", "b = 2\nc = 3")
    async with open_in_lab(NB) as person:
        shared = server_document(jp_serverapp)
        record = await agent_edit(api, "replace 4:\n+b = 20\n")
        await until(lambda: source(person, 1) == "b = 20\nc = 3", "the edit to reach the person")
        person.ycells[0]["source"].insert(5, "  # typed, not saved")
        await until(lambda: "typed" in source(shared, 0), "the keystrokes to reach the server")
        status, body = await api(
            "revert", method="POST", body={"activity": record["id"]}, schema="RevertResponse"
        )
        assert status == 200, body
        assert source(shared, 1) == "b = 2\nc = 3"
        await until(lambda: source(person, 1) == "b = 2\nc = 3", "the undo to reach the person")
        assert source(person, 0) == "a = 1  # typed, not saved"
        assert disk_sources(jp_root_dir) == ["a = 1  # typed, not saved", "b = 2\nc = 3"]

        second = await agent_edit(api, "replace 5:\n+c = 30\n")
        await until(lambda: source(person, 1) == "b = 2\nc = 30", "the second edit")
        person.ycells[1]["source"].insert(len("b = 2\nc = 30"), "0")  # the very line
        await until(lambda: source(shared, 1) == "b = 2\nc = 300", "the person's change")
        status, body = await api("revert", method="POST", body={"activity": second["id"]})
        assert (status, body["error"]) == (409, "revert_refused")
        assert "c = 300" in body["message"]
        assert source(shared, 1) == "b = 2\nc = 300"
        assert source(person, 0) == "a = 1  # typed, not saved"


async def test_a_deleted_cell_comes_back_whole_in_the_room(
    api: Api, jp_root_dir: Path, jp_serverapp: Any, open_in_lab: OpenInLab
) -> None:
    write_notebook(jp_root_dir / NB, "a = 1", "b = 2", outputs=True)
    async with open_in_lab(NB) as person:
        record = await agent_edit(api, "delete 1..2\n")
        await until(lambda: len(person.ycells) == 1, "the deletion to reach the person")
        status, body = await api("revert", method="POST", body={"activity": record["id"]})
        assert status == 200, body
        await until(lambda: len(person.ycells) == 2, "the cell to come back")
        cell = person.ycells[0].to_py()
        assert (cell["id"], cell["source"]) == ("cell-0", "a = 1")
        assert cell["outputs"][0]["text"] == "hello\n"
    nb = nbformat.read(jp_root_dir / NB, as_version=4)
    assert nb.cells[0].id == "cell-0" and nb.cells[0].outputs[0]["text"] == "hello\n"
