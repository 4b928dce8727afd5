"""The notebook tool catalog an agent sees, and its executor over a Patcher.

One catalog serves every surface (agent sessions, MCP, Jupyter AI): four tools with JSON
schemas and descriptions that teach the edit language in a few lines. The executor turns each
call into one engine call and returns the text an agent reads.

Invariants:
- The catalog is constant data: the same tools in the same order with the same bytes on every
  call, so the frozen prompt prefix built from it never drifts.
- A call never raises for an agent mistake: an engine error becomes an error outcome whose text
  is the engine's agent message (MCP `is_error`); only programming errors propagate.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any

from ..hashline.errors import HashlineError
from ..hashline.patcher import Patcher
from ..hashline.results import PatchResult

OutputsReader = Callable[[str, str, int], Awaitable[str]]

EDIT_LANGUAGE = """\
Edit with the header of your last read and its line numbers, e.g.
[analysis.ipynb#9C2E]
replace 5:
+df = pd.read_csv("sales.csv", parse_dates=["date"])
insert after 5:
+df = df.dropna()
delete 7..9
Verbs: replace N: / replace N..M:, delete N / delete N..M, insert before N:, insert after N:,
insert head:, insert tail:. Body rows start with + (a bare + is an empty line). Line numbers
refer to the text you read and never shift while one edit applies. In a notebook each cell
starts with a marker line `# %% [code] id=ID`: edit sources freely; add a marker without id for
a new cell; delete or move markers to delete or move cells. If the file changed since your read,
the edit is rebased when that is safe, else rejected with what to re-read."""

TOOL_SPECS: tuple[Mapping[str, Any], ...] = (
    {
        "name": "notebook_read",
        "description": (
            "Read a notebook (.ipynb, shown as cell-marked text) or a text file with numbered "
            "lines under a [path#TAG] header. Output summaries appear as annotations, never as "
            "data. Use offset/limit (1-based first line, count) or cells (ids) for a part; the "
            "tag always covers the whole file."
        ),
        "input_schema": {
            "type": "object",
            "properties": {
                "path": {"type": "string", "description": "path relative to the root"},
                "offset": {"type": "integer", "minimum": 1},
                "limit": {"type": "integer", "minimum": 1},
                "cells": {"type": "array", "items": {"type": "string"}},
            },
            "required": ["path"],
            "additionalProperties": False,
        },
    },
    {
        "name": "notebook_edit",
        "description": EDIT_LANGUAGE,
        "input_schema": {
            "type": "object",
            "properties": {
                "patch": {"type": "string", "description": "edit text, one or more sections"},
                "edits": {
                    "description": "the JSON form: {path, tag, edits: [...]} or a list of them",
                    "type": ["object", "array"],
                },
            },
            "additionalProperties": False,
        },
    },
    {
        "name": "notebook_write",
        "description": (
            "Create a file or replace all of it. For a notebook, content is cell-marked text "
            "(`# %% [code]` / `# %% [markdown]` markers); prefer notebook_edit for changes."
        ),
        "input_schema": {
            "type": "object",
            "properties": {"path": {"type": "string"}, "content": {"type": "string"}},
            "required": ["path", "content"],
            "additionalProperties": False,
        },
    },
    {
        "name": "notebook_outputs",
        "description": (
            "Show the outputs of one notebook cell by id: text clipped to max_chars, images and "
            "other binary data as sized placeholders, errors without colour codes."
        ),
        "input_schema": {
            "type": "object",
            "properties": {
                "path": {"type": "string"},
                "cell": {"type": "string", "description": "cell id"},
                "max_chars": {"type": "integer", "minimum": 1},
            },
            "required": ["path", "cell"],
            "additionalProperties": False,
        },
    },
)

TOOL_NAMES = tuple(spec["name"] for spec in TOOL_SPECS)
DEFAULT_OUTPUT_CHARS = 4000


@dataclass(frozen=True, slots=True)
class ToolOutcome:
    """What one tool call produced: the agent's text, whether it is an error, and the patch
    result when files were written (for activity feeds and panels). `kind` names an error:
    the engine's `HashlineError.kind`, or `unknown_tool` / `bad_arguments`."""

    text: str
    is_error: bool = False
    result: PatchResult | None = None
    kind: str | None = None


class NotebookTools:
    """Executes the catalog's tools against one patcher."""

    def __init__(self, patcher: Patcher, outputs: OutputsReader) -> None:
        self.patcher = patcher
        self._outputs = outputs

    async def call(self, name: str, arguments: Mapping[str, Any]) -> ToolOutcome:
        """Run tool `name`; agent mistakes come back as error outcomes, never as exceptions."""
        handler = getattr(self, f"_{name}", None) if name in TOOL_NAMES else None
        if handler is None:
            text = f"Unknown tool {name!r}. Tools: {', '.join(TOOL_NAMES)}."
            return ToolOutcome(text, True, kind="unknown_tool")
        try:
            outcome: ToolOutcome = await handler(dict(arguments))
        except HashlineError as err:
            return ToolOutcome(err.message, True, kind=err.kind)
        except (KeyError, TypeError, ValueError) as err:
            text = f"Bad arguments for {name}: {err}. See the tool's schema."
            return ToolOutcome(text, True, kind="bad_arguments")
        return outcome

    async def _notebook_read(self, args: dict[str, Any]) -> ToolOutcome:
        read = await self.patcher.read(
            _text(args, "path"), args.get("offset"), args.get("limit"), args.get("cells")
        )
        return ToolOutcome(read.view)

    async def _notebook_edit(self, args: dict[str, Any]) -> ToolOutcome:
        if "patch" in args:
            patch: Any = _text(args, "patch")
        elif "edits" in args:
            patch = args["edits"]
            if isinstance(patch, str):
                patch = json.loads(patch)
        else:
            raise ValueError("give either 'patch' (edit text) or 'edits' (the JSON form)")
        result = await self.patcher.apply(patch)
        return ToolOutcome(result.to_text(), False, result)

    async def _notebook_write(self, args: dict[str, Any]) -> ToolOutcome:
        result = await self.patcher.write(_text(args, "path"), _text(args, "content"))
        return ToolOutcome(result.to_text(), False, result)

    async def _notebook_outputs(self, args: dict[str, Any]) -> ToolOutcome:
        max_chars = int(args.get("max_chars") or DEFAULT_OUTPUT_CHARS)
        text = await self._outputs(_text(args, "path"), _text(args, "cell"), max_chars)
        return ToolOutcome(text)


def _text(args: Mapping[str, Any], key: str) -> str:
    value = args[key]
    if not isinstance(value, str):
        raise TypeError(f"{key!r} must be a string, not {type(value).__name__}")
    return value
