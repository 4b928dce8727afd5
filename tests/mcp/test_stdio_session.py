"""`jupyter-hashline mcp` on a directory, driven by the `mcp` package's own stdio client."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Any

import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from testkit.scenario import run_edit_scenario

from jupyter_hashline.agent.tools import TOOL_SPECS
from jupyter_hashline.mcp.backends import default_store_path


def server_params(*args: str) -> StdioServerParameters:
    """`python -m jupyter_hashline.cli ARGS` with this test's Jupyter data dir."""
    return StdioServerParameters(
        command=sys.executable,
        args=["-m", "jupyter_hashline.cli", *args],
        env={"JUPYTER_DATA_DIR": os.environ["JUPYTER_DATA_DIR"]},
    )


def caller(client: Client) -> Any:
    async def call(tool: str, arguments: dict[str, Any]) -> tuple[bool, str]:
        result = await client.call_tool(tool, arguments)
        assert len(result.content) == 1
        return result.is_error, result.content[0].text

    return call


@pytest.mark.slow
async def test_a_client_lists_the_catalog_and_edits_through_stale_tags(root: Path) -> None:
    async with Client(server_params("--root", str(root), "mcp")) as client:
        listed = await client.list_tools()
        assert [(t.name, t.description, t.input_schema) for t in listed.tools] == [
            (spec["name"], spec["description"], dict(spec["input_schema"])) for spec in TOOL_SPECS
        ]
        assert "notebook_read" in (client.instructions or "")
        assert client.server_info is not None and client.server_info.name == "jupyter-hashline"
        await run_edit_scenario(caller(client), root)
    assert default_store_path(root).is_file()
