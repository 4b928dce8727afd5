"""`Session(via=...)`: a session whose kernel a Jupyter server started edits through that
server (its activity feed and snapshots show the edits, named by the session id), with paths
relative to the session's folder; `"server"` without a server is a clear error."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import nbformat
import pytest
from testkit.rest import Api

from jupyter_hashline.agent import ProviderSimulator, Session, SessionPlacementError, Via, where
from jupyter_hashline.agent.registration import ServerInfo
from jupyter_hashline.tools import RestWorkspace, Workspace


def notebook(folder: Path) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("x = 1\ny = 2")])
    nb.cells[0]["id"] = "only"
    (folder / "n.ipynb").write_text(nbformat.writes(nb) + "\n")


def edit_from_read(messages: list[Any]) -> dict[str, Any]:
    """Edit line 3 (`y = 2`) with the header of the newest tool result."""
    results = [
        block["content"]
        for message in messages
        if isinstance(message.get("content"), list)
        for block in message["content"]
        if isinstance(block, dict) and block.get("type") == "tool_result"
    ]
    tag = re.findall(r"\[n\.ipynb#([0-9A-F]{4})\]", results[-1])[-1]
    patch = f"[n.ipynb#{tag}]\nreplace 3:\n+y = 3\n"
    return {"tool_calls": [{"name": "notebook_edit", "input": {"patch": patch}}]}


async def test_a_session_under_a_server_edits_through_it(
    jp_root_dir: Path,
    jp_http_port: int,
    jp_base_url: str,
    jp_auth_header: dict[str, str],
    api: Api,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    folder = jp_root_dir / "work"
    notebook(folder)
    token = jp_auth_header["Authorization"].split()[-1]
    server = ServerInfo(f"http://localhost:{jp_http_port}{jp_base_url}", token, str(jp_root_dir))
    monkeypatch.setattr(where, "find_parent_server", lambda: server)
    script: list[Any] = [
        {"tool_calls": [{"name": "notebook_read", "input": {"path": "n.ipynb"}}]},
        edit_from_read,
        {"text": "done"},
    ]
    async with ProviderSimulator(script) as sim:
        session = Session(
            folder,
            base_url=sim.base_url("anthropic"),
            api_key="k",
            session_id="s-1",
            register=False,
        )
        assert session.via is Via.SERVER and isinstance(session.workspace, RestWorkspace)
        await session.run_turn("edit it")
        await session.aclose()
    assert nbformat.read(folder / "n.ipynb", as_version=4).cells[0].source == "x = 1\ny = 3"
    _, activity = await api("activity", schema="ActivityResponse")
    assert [(e["path"], e["who"]) for e in activity["edits"]] == [("work/n.ipynb", "s-1")]
    _, snapshots = await api("snapshots", schema="SnapshotsResponse")
    assert "work/n.ipynb" in [entry["path"] for entry in snapshots["paths"]]
    # the session's own panel has the edit too, with the path as the agent knows it
    assert [(r.path, r.who) for r in session.edits.recent()] == [("n.ipynb", "s-1")]
    assert session.snapshot()["session"]["via"] == "server"


def test_placement_rules(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(where, "find_parent_server", lambda: None)
    with pytest.raises(SessionPlacementError, match="no Jupyter server started this kernel"):
        Session(tmp_path, via="server", register=False)
    assert Session(tmp_path, register=False).via is Via.DIRECTORY
    server = ServerInfo("http://127.0.0.1:9/", "t", str(tmp_path / "elsewhere"))
    monkeypatch.setattr(where, "find_parent_server", lambda: server)
    auto = Session(tmp_path, register=False)
    assert auto.via is Via.DIRECTORY and isinstance(auto.workspace, Workspace)
    with pytest.raises(SessionPlacementError, match="outside the server's root"):
        Session(tmp_path, via="server", register=False)
    inside = ServerInfo("http://127.0.0.1:9/", "t", str(tmp_path.parent))
    monkeypatch.setattr(where, "find_parent_server", lambda: inside)
    placed = Session(tmp_path, register=False)
    assert placed.via is Via.SERVER and isinstance(placed.workspace, RestWorkspace)
    assert placed.workspace.base_path == tmp_path.name
    assert Session(tmp_path, via="directory", register=False).via is Via.DIRECTORY


def run_edited(messages: list[Any]) -> dict[str, Any]:
    """Run what the last edit touched, with the header of that edit's reply."""
    results = [
        block["content"]
        for message in messages
        if isinstance(message.get("content"), list)
        for block in message["content"]
        if isinstance(block, dict) and block.get("type") == "tool_result"
    ]
    tag = re.findall(r"\[n\.ipynb#([0-9A-F]{4})\]", results[-1])[-1]
    return {"tool_calls": [{"name": "notebook_run", "input": {"path": "n.ipynb", "tag": tag}}]}


async def test_a_session_under_a_server_runs_cells_in_the_notebooks_server_kernel(
    jp_root_dir: Path,
    jp_http_port: int,
    jp_base_url: str,
    jp_auth_header: dict[str, str],
    jp_serverapp: Any,
    api: Api,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    folder = jp_root_dir / "work"
    notebook(folder)
    token = jp_auth_header["Authorization"].split()[-1]
    server = ServerInfo(f"http://localhost:{jp_http_port}{jp_base_url}", token, str(jp_root_dir))
    monkeypatch.setattr(where, "find_parent_server", lambda: server)
    script: list[Any] = [
        {"tool_calls": [{"name": "notebook_read", "input": {"path": "n.ipynb"}}]},
        edit_from_read,
        run_edited,
        {"text": "done"},
    ]
    async with (
        ProviderSimulator(script) as sim,
        Session(
            folder, base_url=sim.base_url("anthropic"), api_key="k", session_id="s-2"
        ) as session,
    ):
        await session.run_turn("edit it, then run it")
    run = session.zones.log[-2]["content"][0]
    assert "is_error" not in run, run
    assert run["content"].startswith("[n.ipynb#") and "cell only: ok" in run["content"]
    sessions = await jp_serverapp.session_manager.list_sessions()
    assert [s["path"] for s in sessions] == ["work/n.ipynb"]  # the notebook's own kernel
    stored = nbformat.read(folder / "n.ipynb", as_version=4).cells[0]
    assert stored.execution_count == 1
    _, activity = await api("activity", schema="ActivityResponse")
    assert [(e["op"], e["who"]) for e in activity["edits"]] == [("run", "s-2"), ("update", "s-2")]
    assert [(r.op, r.path) for r in session.edits.recent()] == [
        ("run", "n.ipynb"),
        ("update", "n.ipynb"),
    ]
