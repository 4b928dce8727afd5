"""The notebook tools for MCP clients: a stdio server and Jupyter AI's registration.

`jupyter-hashline mcp` serves `TOOL_SPECS` over stdio (`serve_stdio`) on a backend: a directory
on this machine (`DirectoryBackend`, confined to the root, snapshots in SQLite) or a running
Jupyter server's REST API (`ServerBackend`). `jupyter_ai.TOOLS` is what the
`jupyter_server_mcp.tools` entry point hands to Jupyter AI's MCP server. Importing this
package does not import the `mcp` SDK; `build_server` and `serve_stdio` load it when called.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from .backends import (
    DirectoryBackend,
    ServerBackend,
    ToolBackend,
    default_store_path,
    resolve_store_path,
)

if TYPE_CHECKING:
    from mcp.server import Server


def build_server(backend: ToolBackend) -> Server[Any]:
    """An MCP server offering the notebook tools on `backend` (see `server.build_server`)."""
    from .server import build_server as build

    return build(backend)


async def serve_stdio(backend: ToolBackend) -> None:
    """Serve one MCP client on stdin/stdout (see `server.serve_stdio`)."""
    from .server import serve_stdio as serve

    await serve(backend)


__all__ = [
    "DirectoryBackend",
    "ServerBackend",
    "ToolBackend",
    "build_server",
    "default_store_path",
    "resolve_store_path",
    "serve_stdio",
]
