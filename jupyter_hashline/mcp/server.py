"""The MCP server: the notebook tool catalog over stdio, for any MCP client.

`build_server(backend)` returns an `mcp` low-level `Server` whose tool list is `TOOL_SPECS`
(names, descriptions and JSON schemas byte for byte, so every surface shows an agent the same
catalog) and whose tool calls run on a `ToolBackend`. `serve_stdio(backend)` serves one client
on stdin/stdout until it disconnects.

Invariants:
- One backend, hence one snapshot store, per server process (one MCP session).
- An edit the engine rejects, or any other agent mistake, is a tool result with `is_error`
  set and the agent message as its only text; the MCP connection itself never fails for it.
- Nothing but MCP messages is written to stdout.
"""

from __future__ import annotations

from typing import Any

import mcp_types as types
from mcp.server import Server, ServerRequestContext
from mcp.server.stdio import stdio_server

from .. import __version__
from ..agent.tools import EDIT_LANGUAGE, TOOL_SPECS
from .backends import ToolBackend

SERVER_NAME = "jupyter-hashline"

INSTRUCTIONS = (
    "Notebook tools with hashline edits. Read a file with notebook_read: it shows a "
    "[path#TAG] header and numbered lines (a notebook as cell-marked text). Edit with "
    "notebook_edit, naming that header and line numbers; if the file changed since your "
    "read the edit is rebased when safe, else rejected with what to re-read.\n\n" + EDIT_LANGUAGE
)


def mcp_tools() -> list[types.Tool]:
    """The catalog as MCP tool definitions, in catalog order."""
    return [
        types.Tool(
            name=spec["name"],
            description=spec["description"],
            input_schema=dict(spec["input_schema"]),
        )
        for spec in TOOL_SPECS
    ]


def build_server(backend: ToolBackend) -> Server[Any]:
    """An MCP server offering the four notebook tools, run on `backend`."""
    tools = mcp_tools()

    async def list_tools(
        ctx: ServerRequestContext[Any], params: types.PaginatedRequestParams | None
    ) -> types.ListToolsResult:
        return types.ListToolsResult(tools=tools)

    async def call_tool(
        ctx: ServerRequestContext[Any], params: types.CallToolRequestParams
    ) -> types.CallToolResult:
        outcome = await backend.call(params.name, params.arguments or {})
        return types.CallToolResult(
            content=[types.TextContent(text=outcome.text)], is_error=outcome.is_error
        )

    return Server(
        SERVER_NAME,
        version=__version__,
        description=f"hashline notebook tools on {backend.describe}",
        instructions=INSTRUCTIONS,
        on_list_tools=list_tools,
        on_call_tool=call_tool,
    )


async def serve_stdio(backend: ToolBackend) -> None:
    """Serve one MCP client on stdin/stdout until it disconnects, then close the backend."""
    server = build_server(backend)
    try:
        async with stdio_server() as (read_stream, write_stream):
            await server.run(read_stream, write_stream, server.create_initialization_options())
    finally:
        await backend.aclose()
