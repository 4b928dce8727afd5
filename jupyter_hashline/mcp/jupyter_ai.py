"""The notebook tools for Jupyter AI's MCP server (the `jupyter_server_mcp.tools` entry point).

jupyter-server-mcp runs inside the Jupyter server process. It loads the entry point's value,
`TOOLS` (a list of `module:function` strings), and registers each function as an MCP tool
named after the function, with its signature as the input schema and its docstring as the
description. The functions here carry the catalog's names and descriptions (`TOOL_SPECS`)
and run on the running server's `HashlineService`: the same snapshot store, path locks,
activity feed and live collaborative editing as the REST API.

Invariants:
- Importing this module imports nothing from Jupyter; the server is looked up per call.
- A rejected edit or any agent mistake raises the hosting MCP server's `ToolError` (fastmcp's,
  as jupyter-server-mcp uses, else the `mcp` SDK's) carrying the agent message, chained to the
  `HashlineError`: MCP servers show a ToolError's text to the model as an `is_error` result,
  where other exceptions may be masked.
"""

from __future__ import annotations

import importlib
import json
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from ..agent.tools import TOOL_SPECS
from ..hashline.errors import HashlineError

if TYPE_CHECKING:
    from ..server.service import HashlineService

WHO = "jupyter-ai"
SETTINGS_KEY = "jupyter_hashline_service"

TOOLS = [
    f"{__name__}:notebook_read",
    f"{__name__}:notebook_edit",
    f"{__name__}:notebook_write",
    f"{__name__}:notebook_outputs",
]


class ExtensionNotRunningError(HashlineError):
    """No jupyter_hashline server extension in this process."""

    status = 503
    kind = "extension_not_running"


def _service() -> HashlineService:
    from jupyter_server.serverapp import ServerApp

    if ServerApp.initialized():
        web_app = getattr(ServerApp.instance(), "web_app", None)
        service = getattr(web_app, "settings", {}).get(SETTINGS_KEY)
        if service is not None:
            return service
    raise ExtensionNotRunningError(
        "The jupyter_hashline server extension is not running in this Jupyter server. Enable "
        "it (`jupyter server extension enable jupyter_hashline`) and restart the server."
    )


def tool_error_class() -> type[Exception]:
    """The ToolError of the MCP server hosting the tools (fastmcp first, then the SDK)."""
    for module in ("fastmcp.exceptions", "mcp.server.mcpserver.exceptions"):
        try:
            found = importlib.import_module(module).ToolError
        except (ImportError, AttributeError):
            continue
        if isinstance(found, type) and issubclass(found, Exception):
            return found
    return HashlineError


@contextmanager
def _agent_errors() -> Iterator[None]:
    """Re-raise engine errors as the host's ToolError with the agent message."""
    try:
        yield
    except HashlineError as err:
        raise tool_error_class()(err.message) from err


def _positive(name: str, value: int | None) -> int | None:
    if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
        raise HashlineError(f"{name} must be a whole number >= 1, not {value!r}.")
    return value


async def notebook_read(
    path: str, offset: int | None = None, limit: int | None = None, cells: list[str] | None = None
) -> str:
    from ..server.requests import ReadRequest

    with _agent_errors():
        shown = tuple(cells) if cells else None
        request = ReadRequest(path, _positive("offset", offset), _positive("limit", limit), shown)
        return str((await _service().read(request))["view"])


async def notebook_edit(
    patch: str | None = None, edits: dict[str, Any] | list[Any] | None = None
) -> str:
    from ..server.requests import PatchRequest

    with _agent_errors():
        reply = await _service().patch(PatchRequest(_patch_body(patch, edits)), WHO)
        return str(reply["text"])


async def notebook_write(path: str, content: str) -> str:
    from ..server.requests import WriteRequest

    with _agent_errors():
        return str((await _service().write(WriteRequest(path, content), WHO))["text"])


async def notebook_outputs(path: str, cell: str, max_chars: int | None = None) -> str:
    from ..server.requests import OutputsRequest

    with _agent_errors():
        request = OutputsRequest(path, cell, _positive("max_chars", max_chars))
        return str((await _service().outputs(request))["text"])


def _patch_body(patch: str | None, edits: Any) -> Any:
    """The edit text, or the JSON form (parsed when a client sent it as a string)."""
    if (patch is None) == (edits is None):
        raise HashlineError("Give either 'patch' (edit text) or 'edits' (the JSON form).")
    if patch is not None:
        return patch
    if isinstance(edits, str):
        try:
            return json.loads(edits)
        except ValueError as err:
            raise HashlineError(f"'edits' is not valid JSON: {err}. Send the JSON form.") from None
    return edits


def _describe() -> None:
    """Give each function its catalog description (the MCP tool description)."""
    functions = [notebook_read, notebook_edit, notebook_write, notebook_outputs]
    by_name = {function.__name__: function for function in functions}
    for spec in TOOL_SPECS:
        by_name[spec["name"]].__doc__ = spec["description"]


_describe()
