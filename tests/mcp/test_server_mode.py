"""`jupyter-hashline mcp --server URL --token T`: the same agent story through a real Jupyter
server process's REST API (its snapshot store, its activity feed); a wrong token is refused."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from testkit.scenario import CHECKS, NOTEBOOK, run_edit_scenario, run_run_scenario

from bench.server import TOKEN, LocalServer
from jupyter_hashline.tools import RestWorkspace, run_tool


def server_mode(url: str, token: str) -> StdioServerParameters:
    args = ["-m", "jupyter_hashline.cli", "--server", url, "--token", token, "mcp"]
    return StdioServerParameters(command=sys.executable, args=args)


@pytest.mark.slow
async def test_an_mcp_client_edits_through_a_running_jupyter_server(
    root: Path, tmp_path: Path
) -> None:
    with LocalServer(root, tmp_path / "home") as server:
        url = f"http://127.0.0.1:{server.port}/"
        async with Client(server_mode(url, TOKEN)) as client:

            async def call(tool: str, arguments: dict[str, Any]) -> tuple[bool, str]:
                result = await client.call_tool(tool, arguments)
                return result.is_error, result.content[0].text

            await run_edit_scenario(call, root)
        stranger = RestWorkspace(url, "not-the-token")
        refused = await run_tool(stranger, "notebook_read", {"path": NOTEBOOK}, agent="stranger")
        await stranger.aclose()
        status, activity = server.client().request("GET", "/hashline/activity")
    assert (refused.is_error, refused.kind) == (True, "forbidden")
    assert "send this server's token" in refused.text
    assert status == 200
    assert [edit["path"] for edit in activity["edits"]] == [NOTEBOOK] * 3
    # the agent is named from the client's initialize info (the SDK client's name is "mcp")
    assert {edit["who"] for edit in activity["edits"]} == {"mcp"}


@pytest.mark.slow
async def test_an_mcp_client_runs_cells_in_the_servers_kernel(root: Path, tmp_path: Path) -> None:
    """With --server the server decides: no --allow-run, the cells run in its kernel."""
    with LocalServer(root, tmp_path / "home") as server:
        url = f"http://127.0.0.1:{server.port}/"
        async with Client(server_mode(url, TOKEN)) as client:

            async def call(tool: str, arguments: dict[str, Any]) -> tuple[bool, str]:
                result = await client.call_tool(tool, arguments)
                return result.is_error, result.content[0].text

            await run_run_scenario(call, root)
        status, sessions = server.client().request("GET", "/api/sessions")
        _, activity = server.client().request("GET", "/hashline/activity")
    assert status == 200 and [s["path"] for s in sessions] == [CHECKS]
    runs = [edit for edit in activity["edits"] if edit["op"] == "run"]
    assert [[r["status"] for r in edit["runs"]] for edit in runs] == [["error"], ["ok"]]
