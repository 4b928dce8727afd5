"""What a tool call returns, the interface every workspace offers, and the one dispatcher.

`run_tool(workspace, name, arguments, agent=...)` is what every surface calls with raw
arguments: it finds the catalog entry, validates the arguments into a request and runs it on
the workspace (the local `Workspace` or the `RestWorkspace` of a running server).

Invariants:
- A call never raises for an agent mistake, a rejection or an unreachable server: it returns a
  `ToolOutcome` with `is_error` set, whose `text` is the agent message, `kind` the error tree's
  name and `status` its HTTP hint. Only programming errors (and storage crashes the engine
  does not know) propagate.
- `reply` is the REST API's JSON reply for the call (the same fields on every workspace), so a
  REST handler writes it as it is.
- `images` are the figures attached to the call (outputs and runs asked with `images`); the
  text has one line per image output saying which were attached and why others were not, and
  the reply lists the attached ones under `images`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

from ..hashline.errors import HashlineError
from ..hashline.results import PatchResult
from ..notebook import Figure, Figures
from .activity import ActivityRecord
from .catalog import TOOL_NAMES, spec_for
from .errors import BadArgumentsError, UnknownToolError
from .requests import ToolRequest
from .validate import Source, tool_request

__all__ = ["ToolOutcome", "ToolWorkspace", "run_tool"]


@dataclass(frozen=True, slots=True)
class ToolOutcome:
    """What one tool call produced (see the module docstring)."""

    text: str
    is_error: bool = False
    kind: str | None = None
    status: int = 200
    reply: Mapping[str, Any] = field(default_factory=dict)
    result: PatchResult | None = None  # the engine's result, when this process ran the edit
    activity: tuple[ActivityRecord, ...] = ()  # the edits this call recorded
    images: tuple[Figure, ...] = ()  # the figures attached (see the module docstring)

    def with_figures(self, figures: Figures) -> ToolOutcome:
        """This outcome with `figures` attached: their lines added to the text (and the
        reply's `text`), the attached ones under the reply's `images`."""
        lines = figures.lines()
        text = "\n".join([self.text, *lines]) if lines else self.text
        reply = {
            **self.reply,
            "text": text,
            "images": [figure.to_json() for figure in figures.attached],
        }
        return replace(self, text=text, reply=reply, images=figures.attached)

    @classmethod
    def failure(
        cls,
        err: HashlineError,
        *,
        result: PatchResult | None = None,
        activity: tuple[ActivityRecord, ...] = (),
    ) -> ToolOutcome:
        """The error outcome of an error of the one tree."""
        return cls.error(err.message, err.kind, err.status, result=result, activity=activity)

    @classmethod
    def error(
        cls,
        text: str,
        kind: str,
        status: int,
        *,
        result: PatchResult | None = None,
        activity: tuple[ActivityRecord, ...] = (),
    ) -> ToolOutcome:
        reply = {"error": kind, "message": text}
        return cls(text, True, kind, status, reply, result, activity)


class ToolWorkspace(Protocol):
    """Runs validated tool requests: `Workspace` (this process) or `RestWorkspace` (a server)."""

    describe: str

    async def call(self, request: ToolRequest) -> ToolOutcome: ...

    async def aclose(self) -> None: ...


async def run_tool(
    workspace: ToolWorkspace,
    name: str,
    arguments: Mapping[str, Any],
    *,
    agent: str,
    names: tuple[str, ...] = TOOL_NAMES,
    source: Source = Source.JSON,
) -> ToolOutcome:
    """Validate `arguments` for tool `name` (one of `names`) and run it as `agent`."""
    spec = spec_for(name) if name in names else None
    if spec is None:
        message = f"Unknown tool {name!r}. Tools: {', '.join(names)}."
        return ToolOutcome.failure(UnknownToolError(message))
    try:
        request = tool_request(spec, arguments, agent=agent, source=source)
    except BadArgumentsError as err:
        return ToolOutcome.failure(err)
    return await workspace.call(request)
