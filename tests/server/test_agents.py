"""Agents over REST: `X-Hashline-Agent` names the agent whose seen lines and no-op streak a
request uses; without it, a token-only request is one fixed agent per token (jupyter_server
would invent a new anonymous user per request); repair warnings reach the reply.

This module runs jupyter_server's own identity provider (token auth, no named users)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from testkit.rest import Fetch, check_schema
from tornado.httpclient import HTTPClientError
from traitlets.config import Config

from jupyter_hashline.server.agent_names import client_name, server_owner, token_agent

TWENTY = "".join(f"line {n}\n" for n in range(1, 21))


@pytest.fixture
def jp_server_config() -> Config:
    return Config(
        {
            "ServerApp": {
                "jpserver_extensions": {
                    "jupyter_hashline": True,
                    "jupyter_server_terminals": False,
                },
                "allow_unauthenticated_access": False,
            }
        }
    )


async def call(
    jp_fetch: Fetch, route: str, agent: str | None = None, **kwargs: Any
) -> tuple[int, dict[str, Any]]:
    headers = {"X-Hashline-Agent": agent} if agent is not None else {}
    if "body" in kwargs:
        kwargs["body"] = json.dumps(kwargs["body"])
        kwargs["method"] = "POST"
    try:
        response = await jp_fetch("hashline", route, headers=headers, **kwargs)
    except HTTPClientError as err:
        assert err.response is not None
        payload = json.loads(err.response.body)
        check_schema("ErrorResponse", payload)
        return err.code, payload
    return response.code, json.loads(response.body)


async def test_two_named_agents_have_their_own_seen_lines(
    jp_fetch: Fetch, jp_root_dir: Path
) -> None:
    (jp_root_dir / "t.txt").write_text(TWENTY)
    _, a = await call(jp_fetch, "read", "A", params={"path": "t.txt", "offset": "1", "limit": "10"})
    await call(jp_fetch, "read", "B", params={"path": "t.txt", "offset": "11", "limit": "10"})
    edit = {"patch": f"{a['header']}\nreplace 3:\n+THREE\n"}
    status, rejected = await call(jp_fetch, "patch", "B", body=edit)
    assert (status, rejected["error"]) == (409, "unseen_lines")
    assert (jp_root_dir / "t.txt").read_text() == TWENTY
    status, applied = await call(jp_fetch, "patch", "A", body=edit)
    assert status == 200, applied
    check_schema("PatchResponse", applied)
    assert (jp_root_dir / "t.txt").read_text().split("\n")[2] == "THREE"
    assert [r["who"] for r in applied["activity"]] == ["A"]
    _, activity = await call(jp_fetch, "activity")
    assert [edit["who"] for edit in activity["edits"]] == ["A"]


async def test_without_the_header_a_token_is_one_agent(
    jp_fetch: Fetch, jp_root_dir: Path, jp_serverapp: Any
) -> None:
    (jp_root_dir / "t.txt").write_text(TWENTY)
    _, read = await call(jp_fetch, "read", params={"path": "t.txt"})
    for n in (1, 2, 3):  # three requests, three anonymous users to jupyter_server, one agent
        status, _ = await call(
            jp_fetch, "patch", body={"patch": f"{read['header']}\ninsert tail:\n+n{n}\n"}
        )
        assert status == 200
        _, read = await call(jp_fetch, "read", params={"path": "t.txt"})
    _, activity = await call(jp_fetch, "activity")
    token = jp_serverapp.identity_provider.token
    (who,) = {edit["who"] for edit in activity["edits"]}
    assert who == token_agent("Tornado/6") == f"{server_owner()} via Tornado"  # readable
    assert token not in json.dumps(activity)


def test_a_client_is_named_by_its_user_agent() -> None:
    assert client_name("curl/8.5.0") == "curl"
    assert client_name("python-httpx/0.28.1") == "python-httpx"
    assert client_name("Mozilla/5.0 (X11; Linux x86_64) Chrome/130") == "browser"
    assert client_name(None) == client_name("  ") == client_name("/// 7") == "client"
    assert token_agent("curl/8", owner="ada") == "ada via curl"


async def test_a_bad_agent_header_is_a_clear_400(jp_fetch: Fetch, jp_root_dir: Path) -> None:
    (jp_root_dir / "t.txt").write_text(TWENTY)
    status, body = await call(jp_fetch, "read", "x" * 65, params={"path": "t.txt"})
    assert (status, body["error"]) == (400, "bad_request")
    assert "X-Hashline-Agent" in body["message"]


async def test_repair_warnings_reach_the_reply_also_when_recovered(
    jp_fetch: Fetch, jp_root_dir: Path
) -> None:
    (jp_root_dir / "t.txt").write_text(TWENTY)
    _, read = await call(jp_fetch, "read", "A", params={"path": "t.txt"})
    status, fresh = await call(
        jp_fetch, "patch", "A", body={"patch": f"{read['header']}\nreplace 2:\n+2:TWO\n"}
    )
    assert status == 200 and "prefix" in fresh["text"]
    assert any("prefix" in w for w in fresh["sections"][0]["warnings"])
    (jp_root_dir / "t.txt").write_text("top\n" + (jp_root_dir / "t.txt").read_text())
    header = fresh["sections"][0]["header"]
    status, stale = await call(
        jp_fetch, "patch", "A", body={"patch": f"{header}\nreplace 5:\n+5:FIVE\n"}
    )
    assert status == 200, stale
    assert stale["sections"][0]["banner"].startswith("recovered") and "prefix" in stale["text"]
    assert (jp_root_dir / "t.txt").read_text().split("\n")[5] == "FIVE"
