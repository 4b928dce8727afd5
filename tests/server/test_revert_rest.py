"""`POST hashline/revert` on a real server (no collaboration room): the undo lands through the
engine on the notebook on disk, a person's later save elsewhere is kept, a conflicting undo is
a 409 with nothing written, and a read-only server or an overlay refuses it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import nbformat
import pytest
from testkit.rest import Api, write_notebook

NB = "work/undo.ipynb"


async def agent_edit(api: Api, body: str, agent: str = "claude-code") -> dict[str, Any]:
    named = {"X-Hashline-Agent": agent}
    status, read = await api("read", params={"path": NB}, headers=named, schema="ReadResponse")
    assert status == 200, read
    status, reply = await api(
        "patch",
        method="POST",
        body={"patch": f"{read['header']}\n{body}"},
        headers=named,
        schema="PatchResponse",
    )
    assert status == 200, reply
    return dict(reply["activity"][0])


async def revert(api: Api, **body: Any) -> tuple[int, dict[str, Any]]:
    return await api("revert", method="POST", body=body, schema="RevertResponse")


def sources(root: Path) -> list[str]:
    return [cell.source for cell in nbformat.read(root / NB, as_version=4).cells]


def person_saves(root: Path, index: int, text: str) -> None:
    nb = nbformat.read(root / NB, as_version=4)
    nb.cells[index].source = text
    nbformat.write(nb, root / NB)


async def test_an_undo_lands_on_disk_and_keeps_the_persons_later_save(
    api: Api, jp_root_dir: Path
) -> None:
    write_notebook(jp_root_dir / NB, "a = 1\nb = 2", "c = 3", outputs=True)
    record = await agent_edit(api, "replace 3:\n+b = 20\n")
    assert record["undoable"] and record["who"] == "claude-code"
    person_saves(jp_root_dir, 1, "c = 30  # person")
    status, body = await revert(api, activity=record["id"])
    assert status == 200, body
    assert sources(jp_root_dir) == ["a = 1\nb = 2", "c = 30  # person"]
    (undo,) = body["activity"]
    assert (undo["source"], undo["reverts"], undo["who"]) == ("revert", [record["id"]], "ada")
    status, feed = await api("activity", schema="ActivityResponse")
    assert [e["source"] for e in feed["edits"]][:2] == ["revert", "patch"]
    nb = nbformat.read(jp_root_dir / NB, as_version=4)
    assert nb.cells[0].outputs[0]["text"] == "hello\n"  # the untouched cell keeps its outputs


async def test_a_conflicting_undo_is_409_and_writes_nothing(api: Api, jp_root_dir: Path) -> None:
    write_notebook(jp_root_dir / NB, "a = 1\nb = 2", "c = 3")
    record = await agent_edit(api, "replace 3:\n+b = 20\n")
    person_saves(jp_root_dir, 0, "a = 1\nb = 21  # person")
    before = (jp_root_dir / NB).read_bytes()
    status, body = await revert(api, activity=record["id"])
    assert (status, body["error"]) == (409, "revert_refused")
    assert "*3:b = 21  # person" in body["message"]
    assert (jp_root_dir / NB).read_bytes() == before


async def test_a_deleted_cell_comes_back_with_its_id_and_outputs(
    api: Api, jp_root_dir: Path
) -> None:
    write_notebook(jp_root_dir / NB, "a = 1", "c = 3", outputs=True)
    original = nbformat.read(jp_root_dir / NB, as_version=4)
    record = await agent_edit(api, "delete 1..2\n")
    assert sources(jp_root_dir) == ["c = 3"]
    status, body = await revert(api, activity=record["id"])
    assert status == 200, body
    assert nbformat.read(jp_root_dir / NB, as_version=4).cells == original.cells


async def test_all_edits_of_an_agent_since_a_time(api: Api, jp_root_dir: Path) -> None:
    write_notebook(jp_root_dir / NB, "a = 1", "c = 3")
    first = await agent_edit(api, "replace 2:\n+a = 10\n")
    await agent_edit(api, "replace 4:\n+c = 4\n", agent="someone-else")
    last = await agent_edit(api, "insert after 4:\n+# %% [markdown]\n+Done\n")
    status, body = await revert(api, agent="claude-code", since_ms=first["at_ms"])
    assert status == 200, body
    assert body["reverted"] == [last["id"], first["id"]]
    assert sources(jp_root_dir) == ["a = 1", "c = 4"]


async def test_bad_and_unknown_reverts(api: Api) -> None:
    status, body = await api("revert", method="POST", body={"agent": "x"})
    assert (status, body["error"]) == (400, "bad_arguments")
    status, body = await api("revert", method="POST", body={"activity": 4242})
    assert (status, body["error"]) == (404, "unknown_activity")


@pytest.mark.parametrize("hashline_config", [{"allow_revert": False}], indirect=True)
async def test_a_server_may_turn_undo_off(api: Api, jp_root_dir: Path) -> None:
    write_notebook(jp_root_dir / NB, "a = 1")
    record = await agent_edit(api, "replace 2:\n+a = 2\n")
    status, body = await revert(api, activity=record["id"])
    assert (status, body["error"]) == (403, "revert_not_allowed")
    assert sources(jp_root_dir) == ["a = 2"]


@pytest.mark.parametrize("hashline_config", [{"read_only": True}], indirect=True)
async def test_a_read_only_server_refuses_undo(api: Api) -> None:
    status, body = await api("revert", method="POST", body={"activity": 1})
    assert (status, body["error"]) == (403, "revert_not_allowed")
    assert "read-only" in body["message"]


def test_an_overlay_may_turn_undo_off_never_on() -> None:
    from jupyter_hashline.server.config import HashlineSettings, apply_workspace_overlay

    off = apply_workspace_overlay(HashlineSettings(), {"allow_revert": False})
    assert off.settings.allow_revert is False and not off.refused
    on = apply_workspace_overlay(off.settings, json.loads('{"allow_revert": true}'))
    assert on.settings.allow_revert is False and on.refused
