"""Review mode through a real Jupyter server: an agent's REST edit becomes a proposal (nothing
written, the reply says so); people list proposals, accept or reject them per cell, or all of
a notebook; the agent hears of each decision on its next call; every route is authenticated,
every body schema-checked, every change an event on the server's bus."""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import nbformat
import pytest
from test_events import Event, check_event, heard  # noqa: F401 (a fixture)
from testkit.rest import Api, write_notebook
from tornado.httpclient import HTTPClientError

from jupyter_hashline.server.events import ACTIVITY_EVENT, PROPOSAL_EVENT

NB = "work/review.ipynb"
AGENT = {"X-Hashline-Agent": "claude-code"}
REVIEW_ON = pytest.mark.parametrize("hashline_config", [{"review": "on"}], indirect=True)


def disk_sources(root: Path, path: str = NB) -> list[str]:
    return [cell.source for cell in nbformat.read(root / path, as_version=4).cells]


async def agent_patch(api: Api, body: str, path: str = NB) -> dict[str, Any]:
    status, read = await api("read", params={"path": path}, headers=dict(AGENT))
    assert status == 200, read
    status, reply = await api(
        "patch",
        method="POST",
        body={"patch": f"{read['header']}\n{body}"},
        headers=dict(AGENT),
        schema="PatchResponse",
    )
    assert status == 200, reply
    return reply


@REVIEW_ON
async def test_an_agents_edit_waits_and_a_person_accepts_one_cell_and_rejects_another(
    api: Api,
    jp_root_dir: Path,
    heard: Callable[[], Awaitable[list[Event]]],  # noqa: F811 (the fixture imported above)
) -> None:
    write_notebook(jp_root_dir / NB, "a = 1", "b = 2", "c = 3")
    before = (jp_root_dir / NB).read_bytes()
    reply = await agent_patch(api, "replace 2:\n+a = 10\nreplace 6:\n+c = 30\n")
    assert (jp_root_dir / NB).read_bytes() == before
    assert "PROPOSED, NOT written: proposal" in reply["text"] and reply["activity"] == []
    (proposal,) = reply["proposals"]
    events = await heard()
    assert [(s, d["action"]) for s, d in events] == [(PROPOSAL_EVENT, "proposed")]
    check_event(*events[0])

    status, listed = await api("proposals", params={"path": NB}, schema="ProposalsResponse")
    assert status == 200 and [p["id"] for p in listed["proposals"]] == [proposal["id"]]
    assert [c["cell"] for c in listed["proposals"][0]["cells"]] == ["cell-0", "cell-2"]

    nb = nbformat.read(jp_root_dir / NB, as_version=4)  # a person's save between the two
    nb.cells[1].source = "b = 2  # person"
    nbformat.write(nb, jp_root_dir / NB)

    status, accepted = await api(
        f"proposals/{proposal['id']}/accept",
        method="POST",
        body={"cells": ["cell-0"]},
        schema="ProposalDecisionResponse",
    )
    assert status == 200, accepted
    assert accepted["activity"][0]["source"] == "proposal"
    assert accepted["activity"][0]["who"] == "claude-code"
    status, rejected = await api(
        f"proposals/{proposal['id']}/reject",
        method="POST",
        body={"cells": ["cell-2"], "note": "keep c"},
        schema="ProposalDecisionResponse",
    )
    assert status == 200 and rejected["proposal"]["status"] == "partly accepted"
    assert disk_sources(jp_root_dir) == ["a = 10", "b = 2  # person", "c = 3"]
    kinds = [(s, d.get("action") or d.get("source")) for s, d in await heard()]
    assert kinds == [
        (ACTIVITY_EVENT, "proposal"),
        (PROPOSAL_EVENT, "accepted"),
        (PROPOSAL_EVENT, "rejected"),
    ]

    _, read = await api("read", params={"path": NB}, headers=dict(AGENT), schema="ReadResponse")
    assert read["review_updates"][0].startswith(f"Proposal {proposal['id']} ({NB}, cells cell-0)")
    assert "keep c" in read["review_updates"][1]


@REVIEW_ON
async def test_the_agent_may_not_accept_its_own_or_turn_review_off(
    api: Api, jp_root_dir: Path
) -> None:
    write_notebook(jp_root_dir / NB, "a = 1")
    (proposal,) = (await agent_patch(api, "replace 2:\n+a = 2\n"))["proposals"]
    status, body = await api(
        f"proposals/{proposal['id']}/accept", method="POST", body={}, headers=dict(AGENT),
        expect=403,
    )  # fmt: skip
    assert (status, body["error"]) == (403, "proposal_forbidden")
    status, body = await api(
        "review", method="POST", body={"mode": "off"}, headers=dict(AGENT), expect=403
    )
    assert (status, body["error"]) == (403, "review_forbidden")
    assert disk_sources(jp_root_dir) == ["a = 1"]
    status, mode = await api("review", schema="ReviewModeResponse")
    assert mode == {"mode": "on", "agents": {}}
    status, mode = await api(
        "review", method="POST", body={"mode": "off"}, schema="ReviewModeResponse"
    )  # a person (no agent header) turns it off
    assert mode["mode"] == "off"
    landed = await agent_patch(api, "replace 2:\n+a = 3\n")
    assert not landed.get("proposals") and disk_sources(jp_root_dir) == ["a = 3"]


async def test_review_per_agent_and_per_call_and_accept_all(api: Api, jp_root_dir: Path) -> None:
    write_notebook(jp_root_dir / NB, "a = 1", "b = 2")
    status, _ = await api(
        "review", method="POST", body={"mode": "on", "agent": "claude-code"},
        schema="ReviewModeResponse",
    )  # fmt: skip
    assert status == 200
    await agent_patch(api, "replace 2:\n+a = 10\n")
    other = {"X-Hashline-Agent": "other-agent"}  # not in review mode: it asks for one
    status, read = await api("read", params={"path": NB}, headers=dict(other))
    status, own = await api(
        "patch", method="POST",
        body={"patch": f"{read['header']}\nreplace 4:\n+b = 20\n", "propose": True},
        schema="PatchResponse", headers=dict(other),
    )  # fmt: skip
    assert own["proposals"] and disk_sources(jp_root_dir) == ["a = 1", "b = 2"]
    status, done = await api(
        "proposals/accept-all", method="POST", body={"path": NB},
        schema="ProposalsDecisionResponse",
    )  # fmt: skip
    assert status == 200 and [p["status"] for p in done["proposals"]] == ["accepted"] * 2
    assert disk_sources(jp_root_dir) == ["a = 10", "b = 20"]
    status, body = await api(
        "proposals/reject-all", method="POST", body={"path": NB},
        schema="ProposalsDecisionResponse",
    )  # fmt: skip
    assert body["proposals"] == [] and body["text"] == "No pending proposal there."


@REVIEW_ON
async def test_accept_after_the_person_changed_the_same_line_is_refused(
    api: Api, jp_root_dir: Path
) -> None:
    write_notebook(jp_root_dir / NB, "a = 1")
    (proposal,) = (await agent_patch(api, "replace 2:\n+a = 2\n"))["proposals"]
    nb = nbformat.read(jp_root_dir / NB, as_version=4)
    nb.cells[0].source = "a = 100  # person"
    nbformat.write(nb, jp_root_dir / NB)
    before = (jp_root_dir / NB).read_bytes()
    status, body = await api(
        f"proposals/{proposal['id']}/accept", method="POST", body={}, expect=409
    )
    assert (status, body["error"]) == (409, "proposal_refused")
    assert (jp_root_dir / NB).read_bytes() == before
    status, body = await api("proposals/999/accept", method="POST", body={}, expect=404)
    assert body["error"] == "unknown_proposal"
    status, body = await api(
        f"proposals/{proposal['id']}/accept", method="POST", body={"cells": "x"}, expect=400
    )
    assert body["error"] == "bad_arguments"


@pytest.mark.parametrize(
    ("route", "method"),
    [
        ("proposals", "GET"),
        ("proposals/1/accept", "POST"),
        ("proposals/1/reject", "POST"),
        ("proposals/accept-all", "POST"),
        ("proposals/reject-all", "POST"),
        ("review", "GET"),
        ("review", "POST"),
    ],
)
async def test_every_review_route_needs_the_token(
    jp_fetch: Any, jp_root_dir: Path, route: str, method: str
) -> None:
    write_notebook(jp_root_dir / NB, "a = 1")
    body = json.dumps({"path": NB, "mode": "on"} if "all" in route or route == "review" else {})
    with pytest.raises(HTTPClientError) as raised:
        await jp_fetch(
            "hashline", *route.split("/"), method=method,
            body=body if method == "POST" else None,
            headers={"Authorization": ""},
        )  # fmt: skip
    assert raised.value.code in (401, 403)
    assert disk_sources(jp_root_dir) == ["a = 1"]
