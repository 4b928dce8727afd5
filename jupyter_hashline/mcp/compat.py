"""The seam between the stdio server and the two generations of the `mcp` SDK (1.x and 2.x).

Both SDKs have a low-level `Server` run on stdio streams; they differ in how handlers are
registered (1.x decorators; 2.x `on_list_tools`/`on_call_tool` callables taking a request
context), where the request's session is found, and the module holding the types (1.x
`mcp.types`, camelCase attributes; 2.x `mcp_types`, snake_case). Values cross the seam in the
protocol's own wire form (camelCase JSON), which both SDKs parse.

Invariants:
- `build_low_level_server` returns a server whose `tools/list` answers `list_tools()` and
  whose `tools/call` answers `call_tool(name, arguments, client)` as a tool result: `client`
  is the `initialize` request's clientInfo in wire form (`{"name", "version"}`) or None.
- Neither SDK validates the arguments before our validator sees them (1.x would answer its own
  "Input validation error", which does not name the field the way ours does).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from importlib.metadata import version
from typing import Any

__all__ = ["SDK_MAJOR", "ToolCaller", "build_low_level_server", "run_stdio"]

SDK_MAJOR = int(version("mcp").split(".")[0])

ToolLister = Callable[[], list[dict[str, Any]]]
ToolCaller = Callable[
    [str, Mapping[str, Any], "Mapping[str, Any] | None"], Awaitable[dict[str, Any]]
]


def _client_info(session: Any) -> Mapping[str, Any] | None:
    params = getattr(session, "client_params", None)
    if params is None:
        return None
    info: Mapping[str, Any] | None = params.model_dump(by_alias=True, mode="json").get("clientInfo")
    return info


def build_low_level_server(
    name: str,
    version_text: str,
    instructions: str,
    list_tools: ToolLister,
    call_tool: ToolCaller,
) -> Any:
    """A low-level MCP server of the installed SDK (see the module docstring)."""
    if SDK_MAJOR >= 2:
        return _server_2(name, version_text, instructions, list_tools, call_tool)
    return _server_1(name, version_text, instructions, list_tools, call_tool)


def _server_2(
    name: str, version_text: str, instructions: str, list_tools: ToolLister, call_tool: ToolCaller
) -> Any:
    import mcp_types as types
    from mcp.server import Server

    async def on_list(ctx: Any, params: Any) -> Any:
        return types.ListToolsResult.model_validate({"tools": list_tools()})

    async def on_call(ctx: Any, params: Any) -> Any:
        client = _client_info(ctx.session)
        result = await call_tool(params.name, params.arguments or {}, client)
        return types.CallToolResult.model_validate(result)

    return Server(
        name,
        version=version_text,
        instructions=instructions,
        on_list_tools=on_list,
        on_call_tool=on_call,
    )


def _server_1(
    name: str, version_text: str, instructions: str, list_tools: ToolLister, call_tool: ToolCaller
) -> Any:
    from mcp import types
    from mcp.server.lowlevel import Server

    # Typed against the installed SDK, which may be the other generation: keep it dynamic.
    server: Any = Server(name, version=version_text, instructions=instructions)

    @server.list_tools()  # type: ignore[untyped-decorator,unused-ignore]
    async def on_list() -> Any:
        return [types.Tool.model_validate(tool) for tool in list_tools()]

    @server.call_tool(validate_input=False)  # type: ignore[untyped-decorator,unused-ignore]
    async def on_call(tool: str, arguments: dict[str, Any]) -> Any:
        client = _client_info(server.request_context.session)
        result = await call_tool(tool, arguments, client)
        return types.CallToolResult.model_validate(result)

    return server


async def run_stdio(server: Any) -> None:
    """Serve one client on stdin/stdout until it disconnects."""
    from mcp.server.stdio import stdio_server

    async with stdio_server() as (read_stream, write_stream):
        await server.run(read_stream, write_stream, server.create_initialization_options())
