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
- Figures: where the host has an image content type (fastmcp's `Image`), `images` defaults to
  on and a tool with figures returns its text, then per figure a caption and the image; else
  text only, with the placeholders.
- A rejected edit or any agent mistake raises the hosting MCP server's `ToolError` (fastmcp's,
  as jupyter-server-mcp uses, else the `mcp` SDK's) carrying the agent message: MCP servers
  show a ToolError's text to the model as an `is_error` result, where other exceptions may be
  masked.
"""

from __future__ import annotations

import base64
import importlib
import inspect
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, Literal

from ..hashline import HashlineError
from ..tools import CATALOG, Field, FieldKind, ToolSpec, run_tool, spec_for

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


_MCP_HOSTS = ("fastmcp", "mcp.server.mcpserver", "mcp.server.fastmcp")
"""Where an MCP server hosting the tools keeps its classes: fastmcp (as jupyter-server-mcp
uses), then the SDK's server under its 2.x and 1.x names."""


def _host_class(module: str, name: str, base: type) -> type | None:
    """Class `name` of `<host>.<module>` in the first MCP host that has it as a `base`."""
    for host in _MCP_HOSTS:
        try:
            found = getattr(importlib.import_module(f"{host}.{module}"), name)
        except (ImportError, AttributeError):
            continue
        if isinstance(found, type) and issubclass(found, base):
            return found
    return None


def tool_error_class() -> type[Exception]:
    """The ToolError of the MCP server hosting the tools (fastmcp first, then the SDK)."""
    found = _host_class("exceptions", "ToolError", Exception)
    return found if found is not None else HashlineError


async def call(name: str, arguments: dict[str, Any]) -> str | list[Any]:
    """Run tool `name` on the running server; errors become the host's ToolError. Figures
    (default on where the host has an image type) follow the text as image content."""
    service = _service()
    if service is None:
        error = ExtensionNotRunningError(
            "The jupyter_hashline server extension is not running in this Jupyter server. "
            "Enable it (`jupyter server extension enable jupyter_hashline`) and restart."
        )
        raise tool_error_class()(error.message) from error
    given = {key: value for key, value in arguments.items() if value is not None}
    image = host_image_class()
    spec = spec_for(name)
    if image is not None and spec is not None and spec.field("images") and "images" not in given:
        given["images"] = True
    outcome = await run_tool(
        service.workspace, name, given, agent=AGENT, names=service.settings.server_mcp_tools
    )
    if outcome.is_error:
        raise tool_error_class()(outcome.text)
    if image is None or not outcome.images:
        return outcome.text
    blocks: list[Any] = [outcome.text]
    for figure in outcome.images:
        data = base64.b64decode(figure.data)
        blocks += [figure.caption(), image(data=data, format=figure.mime.split("/")[1])]
    return blocks


def host_image_class() -> type | None:
    """The image content type of the MCP server hosting the tools (fastmcp's, as
    jupyter-server-mcp uses, else the SDK's), or None: then figures stay text placeholders."""
    return _host_class("utilities.types", "Image", object)


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
    FieldKind.LAYOUT: Literal["keep", "nbformat"],
    FieldKind.FLAG: bool,
}


def _parameter(field: Field) -> inspect.Parameter:
    """The keyword-only parameter of one argument: optional ones default to None."""
    kind = inspect.Parameter.KEYWORD_ONLY
    annotation = _ANNOTATIONS[field.kind]
    if field.required:
        return inspect.Parameter(field.name, kind, annotation=annotation)
    return inspect.Parameter(field.name, kind, annotation=annotation | None, default=None)


def _tool_function(spec: ToolSpec) -> Callable[..., Awaitable[Any]]:
    """An async function named and documented like `spec`, one parameter per argument."""

    async def tool(**arguments: Any) -> Any:
        return await call(spec.name, arguments)

    parameters = [_parameter(field) for field in spec.fields]
    tool.__name__ = tool.__qualname__ = spec.name
    tool.__doc__ = spec.description
    # The return is the text, or the text then figures (image content): no output schema.
    tool.__signature__ = inspect.Signature(parameters, return_annotation=Any)  # type: ignore[attr-defined]
    tool.__annotations__ = {p.name: p.annotation for p in parameters} | {"return": Any}
    return tool


TOOLS: dict[str, Callable[..., Awaitable[Any]]] = {
    spec.name: _tool_function(spec) for spec in CATALOG
}
globals().update(TOOLS)  # `module:function` strings name these
