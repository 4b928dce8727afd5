"""The `jupyter_server_mcp.tools` entry point: what it declares, and the tools it names running
inside a Jupyter server the way Jupyter AI's MCP server runs them (each function registered
by its signature and docstring, here on the `mcp` SDK's `MCPServer`); only the tools of
`HashlineExtension.server_mcp_tools` are exposed."""

from __future__ import annotations

import importlib.metadata
from pathlib import Path
from typing import Any

import pytest
import tomllib
from mcp import Client
from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ToolError
from testkit.scenario import NOTEBOOK, run_edit_scenario, run_run_scenario, write_analysis
from traitlets import TraitError

from jupyter_hashline.hashline.errors import HashlineError
from jupyter_hashline.server import mcp_tools
from jupyter_hashline.server.app import HashlineExtension
from jupyter_hashline.tools import CATALOG

REPO = Path(__file__).resolve().parents[2]
GROUP = "jupyter_server_mcp.tools"


def load_tools(value: str) -> list[Any]:
    """What jupyter-server-mcp does: load the entry point's list, import each module:function."""
    loaded = importlib.metadata.EntryPoint("jupyter_hashline", value, GROUP).load()
    specs = loaded() if callable(loaded) else loaded
    assert isinstance(specs, list) and all(isinstance(s, str) for s in specs)
    functions = []
    for spec in specs:
        module, _, name = spec.rpartition(":")
        functions.append(getattr(importlib.import_module(module), name))
    return functions


def test_the_entry_point_names_the_exposed_catalog_tools() -> None:
    declared = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["entry-points"]
    value = declared[GROUP]["jupyter_hashline"]
    functions = load_tools(value)
    exposed = [spec for spec in CATALOG if spec.name in mcp_tools.DEFAULT_TOOLS]
    assert [(f.__name__, f.__doc__) for f in functions] == [
        (spec.name, spec.description) for spec in exposed
    ]
    assert "notebook_write" not in [f.__name__ for f in functions]  # not by default
    assert "notebook_run" not in [f.__name__ for f in functions]
    installed = importlib.metadata.entry_points(group=GROUP)
    assert [ep.value for ep in installed if ep.name == "jupyter_hashline"] == [value], (
        "reinstall the package (pip install -e .) so its metadata has the entry point"
    )


def test_server_mcp_tools_names_only_catalog_tools() -> None:
    extension = HashlineExtension()
    assert extension.server_mcp_tools == ["notebook_read", "notebook_outputs", "notebook_edit"]
    extension.server_mcp_tools = ["notebook_read", "notebook_write"]
    with pytest.raises(TraitError, match=r"unknown tool\(s\) \['notebook_delete'\]; the tools"):
        extension.server_mcp_tools = ["notebook_read", "notebook_delete"]


async def test_without_the_extension_the_tools_say_how_to_enable_it() -> None:
    with pytest.raises(
        ToolError, match="jupyter server extension enable jupyter_hashline"
    ) as raised:
        await mcp_tools.notebook_read(path=NOTEBOOK)
    assert isinstance(raised.value.__cause__, HashlineError)


async def test_jupyter_ai_edits_through_the_running_server(
    jp_serverapp: Any, jp_root_dir: Path
) -> None:
    write_analysis(jp_root_dir)
    server = MCPServer("jupyter-ai-stand-in")
    for function in load_tools("jupyter_hashline.server.mcp_tools:tool_specs"):
        server.add_tool(function)
    async with Client(server) as client:
        listed = {tool.name: tool for tool in (await client.list_tools()).tools}
        assert list(listed) == ["notebook_read", "notebook_edit", "notebook_outputs"]
        assert listed["notebook_read"].input_schema["required"] == ["path"]
        edit_arguments = set(listed["notebook_edit"].input_schema["properties"])
        assert edit_arguments == {"patch", "edits", "layout", "propose"}

        async def call(tool: str, arguments: dict[str, Any]) -> tuple[bool, str]:
            result = await client.call_tool(tool, arguments)
            return result.is_error, result.content[0].text

        await run_edit_scenario(call, jp_root_dir)
        is_error, outputs = await call("notebook_outputs", {"path": NOTEBOOK, "cell": "load-data"})
        assert not is_error and "loaded 120 rows" in outputs
        is_error, text = await call("notebook_read", {"path": NOTEBOOK, "offset": 0})
        assert is_error and "`offset` must be a whole number >= 1" in text
        is_error, text = await call("notebook_write", {"path": "x.py", "content": "x\n"})
        assert is_error
        is_error, text = await call("notebook_run", {"path": NOTEBOOK, "tag": "ABCD"})
        assert is_error and "Unknown tool" in text
    service = jp_serverapp.web_app.settings["jupyter_hashline_service"]
    edits = service.activity()["edits"]
    assert len(edits) == 3 and {edit["who"] for edit in edits} == {"jupyter-ai"}


def test_the_trait_help_says_what_exposing_run_means() -> None:
    help_text = HashlineExtension.class_traits()["server_mcp_tools"].help
    assert "takes no token" in help_text and "notebook_run" in help_text
    assert "runs code" in help_text


@pytest.mark.parametrize(
    "hashline_config",
    [{"server_mcp_tools": ["notebook_read", "notebook_run"]}],
    indirect=True,
)
async def test_a_server_that_lists_notebook_run_lets_jupyter_ai_run_cells(
    jp_serverapp: Any, jp_root_dir: Path
) -> None:
    server = MCPServer("jupyter-ai-stand-in")
    for function in load_tools("jupyter_hashline.server.mcp_tools:tool_specs"):
        server.add_tool(function)
    async with Client(server) as client:
        listed = [tool.name for tool in (await client.list_tools()).tools]
        assert listed == ["notebook_read", "notebook_run"]

        async def call(tool: str, arguments: dict[str, Any]) -> tuple[bool, str]:
            result = await client.call_tool(tool, arguments)
            return result.is_error, result.content[0].text

        await run_run_scenario(call, jp_root_dir)
    service = jp_serverapp.web_app.settings["jupyter_hashline_service"]
    runs = [edit for edit in service.activity()["edits"] if edit["op"] == "run"]
    assert {edit["who"] for edit in runs} == {"jupyter-ai"} and len(runs) == 2


def test_the_hosts_error_and_image_classes_are_the_installed_sdks() -> None:
    # fastmcp is not installed here: both come from the SDK's server (its 2.x module)
    from mcp.server.mcpserver.utilities.types import Image

    assert mcp_tools.tool_error_class() is ToolError
    assert mcp_tools.host_image_class() is Image
