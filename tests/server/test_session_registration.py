"""A session running in a kernel registers with its parent Jupyter server; the sidebar's
`sessions` route then lists it with its latest snapshot."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import nbformat
from testkit.rest import Api

from jupyter_hashline.agent.registration import (
    ServerInfo,
    ServerRegistration,
    find_parent_server,
)
from jupyter_hashline.agent.session import Session
from jupyter_hashline.agent.simulator import ProviderSimulator


def test_find_parent_server_matches_the_parent_pid_only(tmp_path: Path) -> None:
    (tmp_path / "jpserver-1.json").write_text(
        json.dumps({"pid": 1, "url": "http://a/", "token": "x"})
    )
    (tmp_path / "jpserver-2.json").write_text("{not json")
    (tmp_path / "jpserver-3.json").write_text(
        json.dumps({"pid": 4242, "url": "http://127.0.0.1:9/base", "token": "t"})
    )
    assert find_parent_server(tmp_path, ppid=4242) == ServerInfo("http://127.0.0.1:9/base/", "t")
    assert find_parent_server(tmp_path, ppid=7) is None
    assert find_parent_server(tmp_path / "missing", ppid=4242) is None


async def test_unreachable_server_never_breaks_a_session(tmp_path: Path) -> None:
    registration = ServerRegistration(ServerInfo("http://127.0.0.1:9/", "t"), timeout=2)
    assert await registration.push("s1", "label", {"zones": {}}) is False


async def test_session_snapshot_reaches_the_sessions_route(
    tmp_path: Path,
    jp_root_dir: Path,
    jp_http_port: int,
    jp_base_url: str,
    jp_auth_header: dict[str, str],
    api: Api,
) -> None:
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("x = 1")])
    nb.cells[0]["id"] = "only"
    (jp_root_dir / "n.ipynb").write_text(nbformat.writes(nb) + "\n")
    token = jp_auth_header["Authorization"].split()[-1]
    server = ServerInfo(f"http://localhost:{jp_http_port}{jp_base_url}", token)
    script: list[Any] = [
        {"tool_calls": [{"name": "notebook_read", "input": {"path": "n.ipynb"}}]},
        {"text": "read"},
    ]
    async with ProviderSimulator(script) as sim:
        session = Session(
            jp_root_dir,
            base_url=sim.base_url("anthropic"),
            api_key="k",
            session_id="agent-1",
            label="test agent",
            register=ServerRegistration(server),
        )
        await session.run_turn("read n.ipynb")
    status, listing = await api("sessions", schema="SessionsResponse")
    assert status == 200
    ids = [entry["id"] for entry in listing["sessions"]]
    assert ids == ["agent-1"]
    status, detail = await api("sessions/agent-1", schema="SessionResponse")
    assert status == 200
    assert detail["snapshot"]["session"]["turns"] == 1
    assert (
        detail["snapshot"]["zones"]["prefix"]["short_id"]
        == session.snapshot()["zones"]["prefix"]["short_id"]
    )
