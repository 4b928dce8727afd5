"""The notebook tools for jupyter-server-mcp (Jupyter AI's MCP server), which runs inside the
Jupyter server: the `jupyter_server_mcp.tools` entry point.

jupyter-server-mcp loads the entry point's value, `tool_specs` (a function returning a list of
`module:function` strings), when it starts, and registers each function as an MCP tool named
after the function, with its signature as the input schema and its docstring as the
description. The functions here are made from the tool catalog (name, description, one
parameter per argument) and run on the running server's workspace: the same snapshot store,
locks, activity feed and live collaborative editing as the REST API, as the agent `jupyter-ai`.

Invariants:
- Only the tools named by `HashlineExtension.server_mcp_tools` are listed (default: read,
  outputs and edit; no whole-file write, no run), and a call of any other is refused: the
  jupyter-server-mcp port takes no token. `notebook_run` has its function here like every
  tool, so a server that lists it in `server_mcp_tools` exposes it (and its own `allow_run`
  and read-only settings still decide whether cells run).
- Importing this module imports nothing from Jupyter; the server is looked up per call.
- A rejected edit or any agent mistake raises the hosting MCP server's `ToolError` (fastmcp's,
  as jupyter-server-mcp uses, else the `mcp` SDK's) carrying the agent message: MCP servers
  show a ToolError's text to the model as an `is_error` result, where other exceptions may be
  masked.
"""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

from ..hashline.errors import HashlineError
from ..tools import CATALOG, ToolSpec, run_tool
from ..tools.catalog import Field, FieldKind

if TYPE_CHECKING:
    from .service import HashlineService

AGENT = "jupyter-ai"
SETTINGS_KEY = "jupyter_hashline_service"
DEFAULT_TOOLS = ("notebook_read", "notebook_outputs", "notebook_edit")


class ExtensionNotRunningError(HashlineError):
    """No jupyter_hashline server extension in this process."""

    status = 503
    kind = "extension_not_running"


def _service() -> HashlineService | None:
    from jupyter_server.serverapp import ServerApp

    if ServerApp.initialized():
        web_app = getattr(ServerApp.instance(), "web_app", None)
        service: HashlineService | None = getattr(web_app, "settings", {}).get(SETTINGS_KEY)
        return service
    return None


def exposed_tools() -> tuple[str, ...]:
    """The tools this server exposes to jupyter-server-mcp (`server_mcp_tools`)."""
    service = _service()
    return service.settings.server_mcp_tools if service is not None else DEFAULT_TOOLS


def tool_specs() -> list[str]:
    """The entry point's value: `module:function` of every exposed tool, in catalog order."""
    exposed = exposed_tools()
    return [f"{__name__}:{spec.name}" for spec in CATALOG if spec.name in exposed]


def tool_error_class() -> type[Exception]:
    """The ToolError of the MCP server hosting the tools (fastmcp first, then the SDK)."""
    for module in (
        "fastmcp.exceptions",
        "mcp.server.mcpserver.exceptions",
        "mcp.server.fastmcp.exceptions",
    ):
        try:
            found = importlib.import_module(module).ToolError
        except (ImportError, AttributeError):
            continue
        if isinstance(found, type) and issubclass(found, Exception):
            return found
    return HashlineError


async def call(name: str, arguments: dict[str, Any]) -> str:
    """Run tool `name` on the running server; errors become the host's ToolError."""
    service = _service()
    if service is None:
        error = ExtensionNotRunningError(
            "The jupyter_hashline server extension is not running in this Jupyter server. "
            "Enable it (`jupyter server extension enable jupyter_hashline`) and restart."
        )
        raise tool_error_class()(error.message) from error
    given = {key: value for key, value in arguments.items() if value is not None}
    outcome = await run_tool(
        service.workspace, name, given, agent=AGENT, names=service.settings.server_mcp_tools
    )
    if outcome.is_error:
        raise tool_error_class()(outcome.text)
    return outcome.text


_ANNOTATIONS: dict[FieldKind, Any] = {
    FieldKind.PATH: str,
    FieldKind.TEXT: str,
    FieldKind.NAME: str,
    FieldKind.TAG: str,
    FieldKind.POSITIVE_INT: int,
    FieldKind.POSITIVE_NUMBER: float,
    FieldKind.SECONDS: float,
    FieldKind.NAMES: list[str],
    FieldKind.JSON_EDITS: dict[str, Any] | list[dict[str, Any]],
    FieldKind.FLAG: bool,
}


def _parameter(field: Field) -> inspect.Parameter:
    kind = inspect.Parameter.KEYWORD_ONLY
    annotation = _ANNOTATIONS[field.kind]
    if field.required:
        return inspect.Parameter(field.name, kind, annotation=annotation)
    return inspect.Parameter(field.name, kind, annotation=annotation | None, default=None)


def _tool_function(spec: ToolSpec) -> Callable[..., Awaitable[str]]:
    """An async function named and documented like `spec`, one parameter per argument."""

    async def tool(**arguments: Any) -> str:
        return await call(spec.name, arguments)

    parameters = [
        inspect.Parameter(
            field.name,
            inspect.Parameter.KEYWORD_ONLY,
            annotation=_ANNOTATIONS[field.kind]
            if field.required
            else _ANNOTATIONS[field.kind] | None,
            default=inspect.Parameter.empty if field.required else None,
        )
        for field in spec.fields
    ]
    tool.__name__ = tool.__qualname__ = spec.name
    tool.__doc__ = spec.description
    tool.__signature__ = inspect.Signature(parameters, return_annotation=str)  # type: ignore[attr-defined]
    tool.__annotations__ = {p.name: p.annotation for p in parameters} | {"return": str}
    return tool


TOOLS: dict[str, Callable[..., Awaitable[str]]] = {
    spec.name: _tool_function(spec) for spec in CATALOG
}
globals().update(TOOLS)  # `module:function` strings name these
