"""The MCP server: the notebook tool catalog over stdio, for any MCP client.

`build_server(workspace)` returns an `mcp` low-level server (SDK 1.x or 2.x, see compat.py)
whose tool list is the catalog's MCP definitions (names, titles, descriptions, input schemas
and annotations) and whose tool calls go through `tools.run_tool` on `workspace` (a
directory, or a Jupyter server's REST API). `serve_stdio(workspace)` serves one client on
stdin/stdout until it disconnects.

Invariants:
- Identity is the agent's name, not the connection: `agent` (the CLI's `--agent`) when given,
  else the client's `initialize` clientInfo name. Seen lines are kept by that name in the
  workspace's store, so a new connection of the same agent keeps what it was shown (an MCP
  Inspector `--cli` call is a connection of its own).
- An edit or run the engine rejects, or any other agent mistake, is a tool result with
  `isError` set and the agent message as its only text; the MCP connection itself never fails
  for it. A run whose cell raised is a normal result: its text gives the cell's status `error`.
- Figures are on by default: a tool that takes `images` gets `images: true` unless the client
  sent it; each attached figure is a text block naming its cell and output number followed by
  an image block (base64, its MIME type), after the tool's text.
- Nothing but MCP messages is written to stdout.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from .. import __version__
from ..tools import (
    EDIT_LANGUAGE,
    TOOL_NAMES,
    ToolOutcome,
    ToolWorkspace,
    mcp_definitions,
    run_tool,
    spec_for,
)
from .compat import build_low_level_server, run_stdio

SERVER_NAME = "jupyter-hashline"

INSTRUCTIONS = (
    "Notebook tools with hashline edits. Read a file with notebook_read: it shows a "
    "[path#TAG] header and numbered lines (a notebook as cell-marked text). Edit with "
    "notebook_edit, naming that header and line numbers; if the file changed since your "
    "read the edit is rebased when safe, else rejected with what to re-read. Run the code "
    "cells you changed with notebook_run, naming the header of your latest read or edit: "
    "a cell runs only if it is still exactly what you saw.\n\n" + EDIT_LANGUAGE
)


def client_agent(client: Mapping[str, Any] | None) -> str:
    """The agent named by a client's clientInfo (`Claude Desktop` -> `Claude-Desktop`)."""
    raw = str((client or {}).get("name") or "mcp")
    return re.sub(r"[^A-Za-z0-9._-]+", "-", raw).strip("-")[:40] or "mcp"


def with_images(name: str, arguments: Mapping[str, Any]) -> Mapping[str, Any]:
    """`arguments` with `images: true` for a tool that takes it and was not told otherwise."""
    spec = spec_for(name)
    if spec is None or spec.field("images") is None or "images" in arguments:
        return arguments
    return {**arguments, "images": True}


def content_of(outcome: ToolOutcome) -> list[dict[str, Any]]:
    """The MCP content blocks of a tool result: its text, then each figure (see above)."""
    blocks: list[dict[str, Any]] = [{"type": "text", "text": outcome.text}]
    for figure in outcome.images:
        blocks.append({"type": "text", "text": figure.caption()})
        blocks.append({"type": "image", "data": figure.data, "mimeType": figure.mime})
    return blocks


def build_server(
    workspace: ToolWorkspace, *, names: tuple[str, ...] = TOOL_NAMES, agent: str | None = None
) -> Any:
    """An MCP server offering the notebook tools `names` on `workspace`, for one connection,
    as `agent` (default: the client's name)."""
    tools = mcp_definitions(names)

    async def call_tool(
        name: str, arguments: Mapping[str, Any], client: Mapping[str, Any] | None
    ) -> dict[str, Any]:
        who = agent or client_agent(client)
        outcome = await run_tool(
            workspace, name, with_images(name, arguments), agent=who, names=names
        )
        return {"content": content_of(outcome), "isError": outcome.is_error}

    return build_low_level_server(SERVER_NAME, __version__, INSTRUCTIONS, lambda: tools, call_tool)


async def serve_stdio(
    workspace: ToolWorkspace, *, agent: str | None = None, names: tuple[str, ...] = TOOL_NAMES
) -> None:
    """Serve one MCP client on stdin/stdout until it disconnects, then close the workspace."""
    try:
        await run_stdio(build_server(workspace, agent=agent, names=names))
    finally:
        await workspace.aclose()
