"""Accepting a proposal on a notebook open in a collaborative room: it lands through the room
(the person sees it live), their unsaved typing in another cell is kept in the room and on
disk; a proposal over a line they changed, even unsaved, is refused with nothing changed."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import nbformat
import pytest
from test_revert_live import disk_sources, server_document, source
from testkit.rest import Api, write_notebook
from testkit.rooms import OpenInLab, until
from traitlets.config import Config

NB = "work/live-undo.ipynb"  # the path test_revert_live's helpers read


pytestmark = pytest.mark.parametrize("hashline_config", [{"review": "on"}], indirect=True)


@pytest.fixture
def jp_server_config(collaboration_server_config: Config) -> Config:
    return collaboration_server_config


async def propose(api: Api, body: str, agent: str = "claude-code") -> dict[str, Any]:
    who = {"X-Hashline-Agent": agent}
    status, read = await api("read", params={"path": NB}, headers=dict(who))
    assert status == 200, read
    status, reply = await api(
        "patch", method="POST", body={"patch": f"{read['header']}\n{body}"}, headers=dict(who)
    )
    assert status == 200 and "PROPOSED, NOT written" in reply["text"], reply
    return dict(reply["proposals"][0])


async def test_accept_in_a_room_keeps_the_persons_unsaved_typing(
    api: Api, jp_root_dir: Path, jp_serverapp: Any, open_in_lab: OpenInLab
) -> None:
    write_notebook(jp_root_dir / NB, "a = 1", "b = 2\nc = 3")
    async with open_in_lab(NB) as person:
        shared = server_document(jp_serverapp)
        proposal = await propose(api, "replace 4:\n+b = 20\n")
        assert source(shared, 1) == "b = 2\nc = 3"  # nothing landed yet
        person.ycells[0]["source"].insert(5, "  # typed, not saved")
        await until(lambda: "typed" in source(shared, 0), "the keystrokes to reach the server")
        status, body = await api(
            f"proposals/{proposal['id']}/accept", method="POST", body={},
            schema="ProposalDecisionResponse",
        )  # fmt: skip
        assert status == 200, body
        await until(lambda: source(person, 1) == "b = 20\nc = 3", "the accepted edit")
        assert source(person, 0) == "a = 1  # typed, not saved"
        assert disk_sources(jp_root_dir) == ["a = 1  # typed, not saved", "b = 20\nc = 3"]


async def test_accept_over_the_persons_unsaved_change_of_the_line_is_refused(
    api: Api, jp_root_dir: Path, jp_serverapp: Any, open_in_lab: OpenInLab
) -> None:
    write_notebook(jp_root_dir / NB, "a = 1", "b = 2\nc = 3")
    async with open_in_lab(NB) as person:
        shared = server_document(jp_serverapp)
        proposal = await propose(api, "replace 5:\n+c = 30\n")
        person.ycells[1]["source"].insert(len("b = 2\nc = 3"), "00")  # the very line
        await until(lambda: source(shared, 1) == "b = 2\nc = 300", "the person's change")
        before = (jp_root_dir / NB).read_bytes()
        status, body = await api(
            f"proposals/{proposal['id']}/accept", method="POST", body={}, expect=409
        )
        assert (status, body["error"]) == (409, "proposal_refused")
        assert source(shared, 1) == "b = 2\nc = 300"
        assert (jp_root_dir / NB).read_bytes() == before
        status, body = await api(f"proposals/{proposal['id']}/reject", method="POST", body={})
        assert status == 200 and body["proposal"]["status"] == "rejected"
    assert nbformat.read(jp_root_dir / NB, as_version=4).cells[0].source == "a = 1"


async def test_two_agents_proposals_made_at_once_both_land_beside_the_persons_typing(
    api: Api, jp_root_dir: Path, jp_serverapp: Any, open_in_lab: OpenInLab
) -> None:
    write_notebook(jp_root_dir / NB, "a = 1", "b = 2", "c = 3")
    async with open_in_lab(NB) as person:
        shared = server_document(jp_serverapp)
        first, second = await asyncio.gather(
            propose(api, "replace 4:\n+b = 20\n", agent="claude-code"),
            propose(api, "replace 6:\n+c = 30\n", agent="cursor"),
        )
        assert (first["agent"], second["agent"]) == ("claude-code", "cursor")
        assert first["id"] != second["id"]
        person.ycells[0]["source"].insert(5, "  # typed, not saved")
        await until(lambda: "typed" in source(shared, 0), "the keystrokes to reach the server")
        for proposal in (second, first):  # the later one first: each rebases on the other
            status, body = await api(f"proposals/{proposal['id']}/accept", method="POST", body={})
            assert status == 200, body
        expected = ["a = 1  # typed, not saved", "b = 20", "c = 30"]
        await until(lambda: [source(person, i) for i in range(3)] == expected, "both edits")
        assert disk_sources(jp_root_dir) == expected
        _, activity = await api("activity")
    assert [(e["who"], e["source"]) for e in activity["edits"]][:2] == [
        ("claude-code", "proposal"),
        ("cursor", "proposal"),
    ]


async def test_of_two_agents_proposals_for_one_line_the_second_accept_is_refused(
    api: Api, jp_root_dir: Path, jp_serverapp: Any, open_in_lab: OpenInLab
) -> None:
    write_notebook(jp_root_dir / NB, "a = 1", "b = 2")
    async with open_in_lab(NB) as person:
        first, second = await asyncio.gather(
            propose(api, "replace 4:\n+b = 20\n", agent="claude-code"),
            propose(api, "replace 4:\n+b = 200\n", agent="cursor"),
        )
        status, body = await api(f"proposals/{first['id']}/accept", method="POST", body={})
        assert status == 200, body
        await until(lambda: source(person, 1) == "b = 20", "the first accept")
        before = (jp_root_dir / NB).read_bytes()
        status, body = await api(
            f"proposals/{second['id']}/accept", method="POST", body={}, expect=409
        )
        assert (status, body["error"]) == (409, "proposal_refused")
        assert "cannot be applied now" in body["message"]
        assert (jp_root_dir / NB).read_bytes() == before and source(person, 1) == "b = 20"
        status, listed = await api("proposals", params={"path": NB})
    assert status == 200
    assert {p["agent"]: p["status"] for p in listed["proposals"]} == {
        "claude-code": "accepted",
        "cursor": "pending",
    }
