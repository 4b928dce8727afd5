"""The notebook tools for MCP clients over stdio (`jupyter-hashline mcp`).

`serve_stdio(workspace)` serves the tool catalog on a workspace: a directory on this machine
(`tools.open_directory`) or a running Jupyter server's REST API (`tools.RestWorkspace`). It
works with the `mcp` SDK 1.x and 2.x. Importing this package does not import the SDK;
`build_server` and `serve_stdio` load it when called. `host_config` and `launch_command` give
the configuration each MCP host (`Host`) reads to start it. (The registration for Jupyter AI's
MCP server runs inside the Jupyter server: `jupyter_hashline.server.mcp_tools`.)
"""

from __future__ import annotations

from typing import Any

from ..tools import TOOL_NAMES, ToolWorkspace
from .hosts import TOKEN_ENV, Host, Launch, default_executable, host_config, launch_command


def build_server(
    workspace: ToolWorkspace, *, names: tuple[str, ...] = TOOL_NAMES, agent: str | None = None
) -> Any:
    """An MCP server offering the notebook tools on `workspace` as `agent` (default: the
    client's name; see `server.build_server`)."""
    from .server import build_server as build

    return build(workspace, names=names, agent=agent)


async def serve_stdio(
    workspace: ToolWorkspace, *, agent: str | None = None, names: tuple[str, ...] = TOOL_NAMES
) -> None:
    """Serve the tools `names` to one MCP client on stdin/stdout as `agent` (see
    `server.serve_stdio`)."""
    from .server import serve_stdio as serve

    await serve(workspace, agent=agent, names=names)


__all__ = [
    "TOKEN_ENV",
    "Host",
    "Launch",
    "build_server",
    "default_executable",
    "host_config",
    "launch_command",
    "serve_stdio",
]
