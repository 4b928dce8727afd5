"""The tool catalog: the one source of every tool's name, title, description, arguments,
annotations and REST route.

Everything an agent or a client sees about the tools is derived from `CATALOG`:
`TOOL_SPECS` (the provider shape a `Session` pins in its frozen prompt prefix), the MCP tool
definitions (`mcp_definitions`), the REST request schemas (`rest_request_schema`) and the
validator's rules (validate.py). Adding a tool is one `ToolSpec` here, one request type and
one `Workspace` method.

Invariants:
- Constant data: the same tools in the same order with the same bytes on every call, so a
  frozen prefix built from `TOOL_SPECS` never drifts.
- Every property of every schema has a description; no schema uses a `type` array (unions are
  `anyOf`), and no input schema has a top-level combinator (providers refuse those).
- Each description alone says what the tool does and what its arguments are: some hosts drop
  property descriptions.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import Enum
from typing import Any

from ..hashline.edits import EditOp
from ..kernels.runner import DEFAULT_TIMEOUT_S, MAX_TIMEOUT_S
from ..notebook import LAYOUTS
from .requests import (
    EditRequest,
    EvalRequest,
    KernelRequest,
    OutputsRequest,
    ReadRequest,
    ReviewAcceptRequest,
    ReviewListRequest,
    ReviewRejectRequest,
    RunRequest,
    WriteRequest,
)

__all__ = [
    "CATALOG",
    "DEFAULT_OUTPUT_CHARS",
    "EDIT_LANGUAGE",
    "REVIEW_CATALOG",
    "REVIEW_TOOL_NAMES",
    "TOOL_NAMES",
    "TOOL_SPECS",
    "Annotations",
    "Field",
    "FieldKind",
    "RestRoute",
    "ToolSpec",
    "mcp_definitions",
    "rest_request_definitions",
    "spec_for",
    "spec_of",
]

DEFAULT_OUTPUT_CHARS = 4000


class FieldKind(Enum):
    """The closed set of argument types, each with its JSON Schema and its REST query form."""

    PATH = "path"  # a non-empty string
    TEXT = "text"  # any string (may be empty)
    NAME = "name"  # a non-empty string that names something (a cell id)
    TAG = "tag"  # the 4 hex digits of a read header
    POSITIVE_INT = "positive_int"  # a whole number >= 1
    POSITIVE_NUMBER = "positive_number"  # a number > 0
    SECONDS = "seconds"  # a number of seconds from 1 to MAX_TIMEOUT_S
    NAMES = "names"  # a list of non-empty strings (REST: comma-separated)
    JSON_EDITS = "json_edits"  # the JSON edit form
    LAYOUT = "layout"  # how a notebook file is laid out when written: keep | nbformat
    FLAG = "flag"  # true or false (REST query: QUERY_FLAGS, "1" / "0" too)


@dataclass(frozen=True, slots=True)
class Field:
    """One argument of a tool."""

    name: str
    kind: FieldKind
    description: str
    required: bool = False


@dataclass(frozen=True, slots=True)
class Annotations:
    """MCP tool annotations (hints to hosts, e.g. to auto-approve reads)."""

    read_only: bool
    destructive: bool
    idempotent: bool
    open_world: bool = False

    def to_mcp(self, title: str) -> dict[str, Any]:
        hints: dict[str, Any] = {"title": title, "readOnlyHint": self.read_only}
        if not self.read_only:  # destructiveHint only means something for writing tools
            hints["destructiveHint"] = self.destructive
        hints["idempotentHint"] = self.idempotent
        hints["openWorldHint"] = self.open_world
        return hints


@dataclass(frozen=True, slots=True)
class RestRoute:
    """Where a tool lives in the REST API under `{base_url}hashline/`."""

    route: str
    http_method: str  # "GET" (arguments in the query) or "POST" (a JSON body)
    request_def: str  # the REST schema definition of the query or body
    response_def: str  # the REST schema definition of the success reply
    text_key: str  # the reply field holding the agent's text
    summary: str


@dataclass(frozen=True, slots=True)
class ToolSpec:
    """One tool: what it is called and does, its arguments, its request type and routes."""

    name: str
    title: str
    description: str
    fields: tuple[Field, ...]
    request: type
    method: str  # the Workspace method that runs it
    annotations: Annotations
    rest: RestRoute
    exactly_one_of: tuple[str, ...] = ()

    def field(self, name: str) -> Field | None:
        return next((f for f in self.fields if f.name == name), None)

    def input_schema(self) -> dict[str, Any]:
        """The JSON Schema of the tool's arguments (providers and MCP)."""
        schema: dict[str, Any] = {
            "type": "object",
            "properties": {f.name: field_schema(f) for f in self.fields},
        }
        required = [f.name for f in self.fields if f.required]
        if required:
            schema["required"] = required
        schema["additionalProperties"] = False
        return schema

    def prompt_spec(self) -> dict[str, Any]:
        """The provider shape `{name, description, input_schema}` (a frozen prefix's tools)."""
        return {
            "name": self.name,
            "description": self.description,
            "input_schema": self.input_schema(),
        }

    def mcp_definition(self) -> dict[str, Any]:
        """The MCP `tools/list` entry, in the protocol's own (camelCase) wire form."""
        return {
            "name": self.name,
            "title": self.title,
            "description": self.description,
            "inputSchema": self.input_schema(),
            "annotations": self.annotations.to_mcp(self.title),
        }


# -- schemas of the argument kinds ---------------------------------------------------------------

_LINE = {"type": "integer", "minimum": 1}


def _edit_item_schema() -> dict[str, Any]:
    ops = [op.value for op in EditOp]
    return {
        "type": "object",
        "description": "One edit. Line numbers refer to the text as read under the header.",
        "properties": {
            "op": {
                "type": "string",
                "enum": ops,
                "description": "replace and delete take start (and end); insert_before and "
                "insert_after take line; insert_head and insert_tail take neither.",
            },
            "start": {**_LINE, "description": "First line replaced or deleted."},
            "end": {**_LINE, "description": "Last line replaced or deleted (default: start)."},
            "line": {**_LINE, "description": "The line to insert before or after."},
            "lines": {
                "type": "array",
                "items": {"type": "string", "description": "One line, without a line break."},
                "description": "The new lines (replace and inserts), one string per line.",
            },
        },
        "required": ["op"],
        "additionalProperties": False,
    }


def _section_schema() -> dict[str, Any]:
    return {
        "type": "object",
        "description": "The edits of one file.",
        "properties": {
            "path": {"type": "string", "description": "The path in your read header."},
            "tag": {
                "type": "string",
                "pattern": "^#?[0-9A-Fa-f]{4}$",
                "description": "The 4 hex digits after # in your read header.",
            },
            "edits": {
                "type": "array",
                "minItems": 1,
                "items": _edit_item_schema(),
                "description": "The edits, all against the text as read.",
            },
        },
        "required": ["path", "tag", "edits"],
        "additionalProperties": False,
    }


def _kind_schema(kind: FieldKind) -> dict[str, Any]:
    if kind is FieldKind.PATH or kind is FieldKind.NAME:
        return {"type": "string", "minLength": 1}
    if kind is FieldKind.TEXT:
        return {"type": "string"}
    if kind is FieldKind.TAG:
        return {"type": "string", "pattern": "^#?[0-9A-Fa-f]{4}$"}
    if kind is FieldKind.POSITIVE_INT:
        return {"type": "integer", "minimum": 1}
    if kind is FieldKind.POSITIVE_NUMBER:
        return {"type": "number", "exclusiveMinimum": 0}
    if kind is FieldKind.SECONDS:
        return {"type": "number", "minimum": 1, "maximum": int(MAX_TIMEOUT_S)}
    if kind is FieldKind.LAYOUT:
        return {"type": "string", "enum": list(LAYOUTS)}
    if kind is FieldKind.NAMES:
        item = {"type": "string", "minLength": 1, "description": "One id."}
        return {"type": "array", "items": item}
    if kind is FieldKind.FLAG:
        return {"type": "boolean"}
    section = _section_schema()
    several = {
        "type": "array",
        "minItems": 1,
        "items": section,
        "description": "Several files: one section per file.",
    }
    return {"anyOf": [section, several]}


def field_schema(field: Field) -> dict[str, Any]:
    """The JSON Schema of one argument, its description included."""
    return {**_kind_schema(field.kind), "description": field.description}


# -- the tools -----------------------------------------------------------------------------------

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
a new cell; delete or move markers to delete or move cells. Rows are written literally: give
each its full indentation as the file has it, never a stand-in like `# ... existing code ...`;
send the edit alone, with no ``` fence or N: prefixes. A Python cell or file that stops parsing
is named in the reply. If the file changed since your read, the edit is rebased when that is
safe, else rejected with what to re-read."""

_EDIT_ARGUMENTS = """
Arguments: send exactly one of patch (the edit text above, one or more [path#TAG] sections) or
edits (the JSON form: {"path": P, "tag": "9C2E", "edits": [{"op": "replace", "start": 5,
"end": 5, "lines": ["..."]}, {"op": "delete", "start": 7, "end": 9}, {"op": "insert_after",
"line": 5, "lines": ["..."]}, {"op": "insert_head", "lines": ["..."]}]}, or a list of such
objects for several files; ops: replace, delete, insert_before, insert_after, insert_head,
insert_tail). Optional: layout (keep, the default: a notebook file keeps its layout, so a
one-line edit is a one-line diff; nbformat: Jupyter's own layout) and propose (true: the edit
waits for a person's review and nothing is written until they accept it; a server in review
mode proposes every edit, and the reply says so)."""

READ = ToolSpec(
    name="notebook_read",
    title="Read a notebook or file",
    description=(
        "Read a notebook (.ipynb, shown as cell-marked text) or a text file: a [path#TAG] "
        "header, then numbered rows N:text. Output summaries appear as annotations after a "
        "cell, never as numbered rows. Arguments: path (required); offset (the 1-based number "
        "of the first line to show) and limit (how many lines) for a part; cells (a list of "
        "cell ids) for some cells. The tag always covers the whole file; edit with the header "
        "and line numbers of your latest read."
    ),
    fields=(
        Field("path", FieldKind.PATH, "The file, relative to the root.", required=True),
        Field("offset", FieldKind.POSITIVE_INT, "The 1-based number of the first line shown."),
        Field("limit", FieldKind.POSITIVE_INT, "How many lines to show."),
        Field("cells", FieldKind.NAMES, "Notebook cell ids: show only these cells' lines."),
    ),
    request=ReadRequest,
    method="read",
    annotations=Annotations(read_only=True, destructive=False, idempotent=True),
    rest=RestRoute(
        "read", "GET", "ReadQuery", "ReadResponse", "view", "Read a file or notebook as rows"
    ),
)

PROPOSE_FIELD = Field(
    "propose",
    FieldKind.FLAG,
    "True to propose the change for a person's review instead of making it: nothing is "
    "written until they accept it (a server in review mode proposes every change).",
)

LAYOUT_FIELD = Field(
    "layout",
    FieldKind.LAYOUT,
    "How a notebook file is laid out when written: keep (the default: the layout the file "
    "has, so a one-line edit is a one-line diff) or nbformat (Jupyter's own layout, the whole "
    "file rewritten).",
)

EDIT = ToolSpec(
    name="notebook_edit",
    title="Edit a notebook or file",
    description=EDIT_LANGUAGE + _EDIT_ARGUMENTS,
    fields=(
        Field("patch", FieldKind.TEXT, "The edit text: one or more [path#TAG] sections."),
        Field(
            "edits",
            FieldKind.JSON_EDITS,
            "The JSON form: {path, tag, edits: [...]} or a list of those (one per file).",
        ),
        LAYOUT_FIELD,
        PROPOSE_FIELD,
    ),
    request=EditRequest,
    method="edit",
    annotations=Annotations(read_only=False, destructive=True, idempotent=False),
    rest=RestRoute(
        "patch", "POST", "PatchRequest", "PatchResponse", "text", "Apply an edit (text or JSON)"
    ),
    exactly_one_of=("patch", "edits"),
)

WRITE = ToolSpec(
    name="notebook_write",
    title="Create or replace a file",
    description=(
        "Create a file or replace all of it. Arguments: path (required), content (required: "
        "the whole text; for a notebook, cell-marked text with `# %% [code]` and "
        "`# %% [markdown]` marker lines), tag (the 4 hex digits of your latest read of the "
        "file: needed to replace an existing file; if the file changed since, nothing is "
        "written and the reply gives the current header), overwrite (true: replace an "
        "existing file without a tag, where the server allows it; a new file needs neither) "
        "layout (optional: keep, the default, or nbformat: how a notebook file is laid "
        "out) and propose (true: wait for a person's review, nothing written until they "
        "accept). Prefer notebook_edit for changes to an existing file."
    ),
    fields=(
        Field("path", FieldKind.PATH, "The file to create or replace.", required=True),
        Field(
            "content",
            FieldKind.TEXT,
            "The whole new text (a notebook: cell-marked text).",
            required=True,
        ),
        LAYOUT_FIELD,
        Field(
            "tag",
            FieldKind.TAG,
            "The 4 hex digits of the header of your latest read of the file you replace "
            "(needed for an existing file unless overwrite is true).",
        ),
        Field(
            "overwrite",
            FieldKind.FLAG,
            "True to replace an existing file without a tag (a server may forbid it).",
        ),
        PROPOSE_FIELD,
    ),
    request=WriteRequest,
    method="write",
    annotations=Annotations(read_only=False, destructive=True, idempotent=True),
    rest=RestRoute(
        "write", "POST", "WriteRequest", "WriteResponse", "text", "Create or overwrite a file"
    ),
)

_IMAGES_TEXT = (
    "true to also get PNG and JPEG outputs as images, at most 1024 px on their longest side, "
    "each named by its cell and output number [N]; SVG and images over the size caps stay "
    "placeholders with the reason; default true over MCP, false elsewhere"
)
_IMAGES_FIELD = (
    "Also return PNG/JPEG outputs as images (default: true over MCP, false over REST and the "
    "command line)."
)

OUTPUTS = ToolSpec(
    name="notebook_outputs",
    title="Show a cell's outputs",
    description=(
        "Show the outputs of one notebook cell: text clipped to max_chars characters, images "
        "and other binary data as sized placeholders, errors without colour codes. Arguments: "
        "path (required), cell (required: the id in the cell's marker line "
        f"`# %% [code] id=ID`), max_chars (optional, a whole number >= 1; default "
        f"{DEFAULT_OUTPUT_CHARS}), images (optional: " + _IMAGES_TEXT + ")."
    ),
    fields=(
        Field("path", FieldKind.PATH, "The notebook.", required=True),
        Field("cell", FieldKind.NAME, "The cell id.", required=True),
        Field(
            "max_chars",
            FieldKind.POSITIVE_INT,
            f"Clip the text to this many characters (default {DEFAULT_OUTPUT_CHARS}).",
        ),
        Field("images", FieldKind.FLAG, _IMAGES_FIELD),
    ),
    request=OutputsRequest,
    method="outputs",
    annotations=Annotations(read_only=True, destructive=False, idempotent=True),
    rest=RestRoute(
        "outputs",
        "GET",
        "OutputsQuery",
        "OutputsResponse",
        "text",
        "The outputs of one notebook cell as text",
    ),
)

RUN = ToolSpec(
    name="notebook_run",
    title="Run notebook cells",
    description=(
        "Run code cells of a notebook in its kernel and read what they printed. A cell runs "
        "only if its source is exactly what you were shown under the header you name: if "
        "anyone changed it since, nothing runs and the reply shows the changed lines. "
        "Arguments: path (required: the notebook); tag (required: the 4 hex digits of the "
        "[path#TAG] header of your latest read or edit of it); cells (optional: the ids of "
        "the code cells to run, in that order; default: the code cells your last edit of this "
        "notebook touched); timeout_s (optional: seconds each cell may run, 1 to "
        f"{MAX_TIMEOUT_S:g}, default {DEFAULT_TIMEOUT_S:g}; a cell still running then is "
        "interrupted and reports timeout); max_chars (optional: clip each cell's output text "
        f"to this many characters, default {DEFAULT_OUTPUT_CHARS}). Cells run one after "
        "another in the notebook's kernel (variables persist between calls in a Jupyter server "
        "or an MCP session; a command-line call on a folder starts a fresh kernel and its "
        "reply says so) and stop at the "
        "first that does not end ok. The reply starts with the notebook's new header, then "
        "gives per cell its status (ok; error: it raised; timeout; busy: the kernel stayed "
        "busy with someone else's work; skipped: an earlier cell did not end ok), execution "
        "count, duration and outputs as text (images as placeholders). The outputs are saved "
        "in the notebook. images (optional: " + _IMAGES_TEXT + ")."
    ),
    fields=(
        Field(
            "path", FieldKind.PATH, "The notebook (.ipynb), relative to the root.", required=True
        ),
        Field(
            "tag",
            FieldKind.TAG,
            "The 4 hex digits of the header of your latest read or edit of the notebook.",
            required=True,
        ),
        Field(
            "cells",
            FieldKind.NAMES,
            "Ids of the code cells to run, in order (default: the code cells your last edit "
            "of the notebook touched).",
        ),
        Field(
            "timeout_s",
            FieldKind.SECONDS,
            f"Seconds each cell may run before it is interrupted (1 to {MAX_TIMEOUT_S:g}, "
            f"default {DEFAULT_TIMEOUT_S:g}).",
        ),
        Field(
            "max_chars",
            FieldKind.POSITIVE_INT,
            f"Clip each cell's output text to this many characters (default "
            f"{DEFAULT_OUTPUT_CHARS}).",
        ),
        Field("images", FieldKind.FLAG, _IMAGES_FIELD),
    ),
    request=RunRequest,
    method="run",
    # Running code can change anything the kernel reaches, and it replaces the cells' outputs:
    # hosts that ask before destructive tools should ask here too.
    annotations=Annotations(read_only=False, destructive=True, idempotent=False),
    rest=RestRoute(
        "run", "POST", "RunRequest", "RunResponse", "text", "Run notebook cells in its kernel"
    ),
)

EVAL = ToolSpec(
    name="notebook_eval",
    title="Evaluate code in a notebook's kernel",
    description=(
        "Run a snippet of code in a notebook's kernel without adding a cell: inspect a "
        "variable, check a dataframe's shape, try an expression. It sees the variables the "
        "notebook's cells defined in that kernel and may change them; the notebook file is "
        "never changed (no cell, no output is written). Arguments: path (required: the "
        "notebook); code (required: the code to run); timeout_s (optional: seconds it may "
        f"run, 1 to {MAX_TIMEOUT_S:g}, default {DEFAULT_TIMEOUT_S:g}; then it is "
        "interrupted); max_chars (optional: clip its output text, default "
        f"{DEFAULT_OUTPUT_CHARS}); images (optional: " + _IMAGES_TEXT + "). The reply gives "
        "its status (ok, error, timeout, busy), execution count and outputs as text."
    ),
    fields=(
        Field(
            "path", FieldKind.PATH, "The notebook (.ipynb), relative to the root.", required=True
        ),
        Field("code", FieldKind.TEXT, "The code to run in the notebook's kernel.", required=True),
        Field(
            "timeout_s",
            FieldKind.SECONDS,
            f"Seconds the code may run before it is interrupted (1 to {MAX_TIMEOUT_S:g}, "
            f"default {DEFAULT_TIMEOUT_S:g}).",
        ),
        Field(
            "max_chars",
            FieldKind.POSITIVE_INT,
            f"Clip the output text to this many characters (default {DEFAULT_OUTPUT_CHARS}).",
        ),
        Field("images", FieldKind.FLAG, _IMAGES_FIELD),
    ),
    request=EvalRequest,
    method="eval",
    # Code runs with the kernel's rights and may change its variables: as destructive as a run.
    annotations=Annotations(read_only=False, destructive=True, idempotent=False),
    rest=RestRoute(
        "eval",
        "POST",
        "EvalRequest",
        "EvalResponse",
        "text",
        "Run code in a notebook's kernel without adding a cell",
    ),
)

KERNEL = ToolSpec(
    name="notebook_kernel",
    title="Check, interrupt or restart a notebook's kernel",
    description=(
        "Ask what a notebook's kernel is doing, or interrupt or restart it. Arguments: path "
        "(required: the notebook); action (required: status, interrupt or restart). status "
        "says whether it is idle or busy and with whose work (an agent's run or eval, or an "
        "execution not started through these tools, such as a person's cell), its language "
        "and the last execution count seen; it never starts a kernel. interrupt stops what "
        "is running; restart starts the kernel afresh (every variable is gone). Both say "
        "whose execution they stopped."
    ),
    fields=(
        Field(
            "path", FieldKind.PATH, "The notebook (.ipynb), relative to the root.", required=True
        ),
        Field("action", FieldKind.NAME, "status, interrupt or restart.", required=True),
    ),
    request=KernelRequest,
    method="kernel",
    annotations=Annotations(read_only=False, destructive=True, idempotent=False),
    rest=RestRoute(
        "kernel",
        "POST",
        "KernelRequest",
        "KernelResponse",
        "text",
        "Check, interrupt or restart a notebook's kernel",
    ),
)

CATALOG: tuple[ToolSpec, ...] = (READ, EDIT, WRITE, OUTPUTS, RUN, EVAL, KERNEL)
TOOL_NAMES: tuple[str, ...] = tuple(spec.name for spec in CATALOG)
TOOL_SPECS: tuple[Mapping[str, Any], ...] = tuple(spec.prompt_spec() for spec in CATALOG)

# -- the reviewer's tools ------------------------------------------------------------------------
# Offered apart from the agent's tools (`jupyter-hashline mcp --review`): a person in an MCP
# client, or a reviewer agent, lists and decides the proposals other agents made. They are not in
# `TOOL_SPECS` (an agent's frozen prefix) nor in the tool routes: the REST API has its own
# proposal routes, which these name.

_DECIDE_ARGUMENTS = (
    "Arguments: exactly one of proposal (the number review_list shows) or path (every pending "
    "proposal of that file); cells (optional, with proposal: the cell keys to decide, as "
    "review_list names them; the others stay pending); note (optional: said to the agent that "
    "proposed it on its next call)."
)


def _decide_fields(verb: str) -> tuple[Field, ...]:
    return (
        Field("proposal", FieldKind.POSITIVE_INT, f"The number of the proposal to {verb}."),
        Field("path", FieldKind.PATH, f"{verb.capitalize()} every pending proposal of this file."),
        Field(
            "cells",
            FieldKind.NAMES,
            f"With proposal: {verb} only these cells (keys as review_list shows them).",
        ),
        Field("note", FieldKind.TEXT, "A note for the agent that proposed it."),
    )


REVIEW_LIST = ToolSpec(
    name="review_list",
    title="List agent edits waiting for review",
    description=(
        "List the edits agents proposed that wait for a review (a server in review mode, or "
        "an agent's propose: true): per proposal its number, agent, file and age, then each "
        "pending cell's change as a unified diff (a text file: one diff). Nothing is written. "
        "Arguments: path (optional: only this file's proposals). Decide with review_accept and "
        "review_reject."
    ),
    fields=(Field("path", FieldKind.PATH, "Only this file's proposals."),),
    request=ReviewListRequest,
    method="review_list",
    annotations=Annotations(read_only=True, destructive=False, idempotent=True),
    rest=RestRoute(
        "proposals", "GET", "ProposalsQuery", "ProposalsResponse", "text", "List proposals"
    ),
)

REVIEW_ACCEPT = ToolSpec(
    name="review_accept",
    title="Accept an agent's proposed edit",
    description=(
        "Accept a proposed edit: it is applied to the file as it is now, keeping whatever a "
        "person changed since on other lines; if they changed the same lines it is refused and "
        "nothing is written (it stays pending). The agent that proposed an edit cannot accept "
        "it. " + _DECIDE_ARGUMENTS
    ),
    fields=_decide_fields("accept"),
    request=ReviewAcceptRequest,
    method="review_accept",
    annotations=Annotations(read_only=False, destructive=True, idempotent=False),
    rest=RestRoute(
        "proposals/{proposal_id}/accept",
        "POST",
        "ProposalDecisionRequest",
        "ProposalDecisionResponse",
        "text",
        "Accept a proposal",
    ),
    exactly_one_of=("proposal", "path"),
)

REVIEW_REJECT = ToolSpec(
    name="review_reject",
    title="Reject an agent's proposed edit",
    description=(
        "Reject a proposed edit: nothing of it is written, and the agent that proposed it is "
        "told (with the note) on its next call. " + _DECIDE_ARGUMENTS
    ),
    fields=_decide_fields("reject"),
    request=ReviewRejectRequest,
    method="review_reject",
    annotations=Annotations(read_only=False, destructive=False, idempotent=True),
    rest=RestRoute(
        "proposals/{proposal_id}/reject",
        "POST",
        "ProposalDecisionRequest",
        "ProposalDecisionResponse",
        "text",
        "Reject a proposal",
    ),
    exactly_one_of=("proposal", "path"),
)

REVIEW_CATALOG: tuple[ToolSpec, ...] = (REVIEW_LIST, REVIEW_ACCEPT, REVIEW_REJECT)
REVIEW_TOOL_NAMES: tuple[str, ...] = tuple(spec.name for spec in REVIEW_CATALOG)
EVERY_TOOL: tuple[ToolSpec, ...] = CATALOG + REVIEW_CATALOG


def spec_for(name: str) -> ToolSpec | None:
    """The catalog entry named `name` (an agent's tool or a reviewer's), if any."""
    return next((spec for spec in EVERY_TOOL if spec.name == name), None)


def spec_of(request: object) -> ToolSpec:
    """The catalog entry whose request type `request` is."""
    return next(spec for spec in EVERY_TOOL if isinstance(request, spec.request))


def mcp_definitions(names: tuple[str, ...] = TOOL_NAMES) -> list[dict[str, Any]]:
    """MCP tool definitions (wire form) of the named tools, in catalog order."""
    return [spec.mcp_definition() for spec in EVERY_TOOL if spec.name in names]


# -- the REST request schemas --------------------------------------------------------------------

_WHOLE = "^[1-9][0-9]*$"
QUERY_FLAGS = {"true": True, "false": False, "1": True, "0": False, "True": True, "False": False}
"""Every spelling of a boolean a query string may carry: JSON's words (capitalised too, as
Python's `requests` sends a `bool`) and Jupyter's own `1`/`0` (as in `content=1`)."""
_POSITIVE_DECIMAL = "^(0*[1-9][0-9]*(\\.[0-9]+)?|0*\\.[0-9]*[1-9][0-9]*)$"


def _query_schema(field: Field) -> dict[str, Any]:
    """One argument as a query-string value (always a string)."""
    kind = field.kind
    if kind is FieldKind.POSITIVE_INT:
        schema: dict[str, Any] = {"type": "string", "pattern": _WHOLE}
    elif kind in (FieldKind.POSITIVE_NUMBER, FieldKind.SECONDS):
        schema = {"type": "string", "pattern": _POSITIVE_DECIMAL}
    elif kind is FieldKind.NAMES:
        return {"type": "string", "description": field.description + " Comma-separated."}
    elif kind is FieldKind.FLAG:
        schema = {"type": "string", "enum": list(QUERY_FLAGS)}
    elif kind is FieldKind.JSON_EDITS:
        raise ValueError(f"{field.name}: the JSON edit form cannot travel in a query string")
    else:
        schema = _kind_schema(kind)
    return {**schema, "description": field.description}


def _query_usage(spec: ToolSpec) -> str:
    required = "&".join(f"{f.name}={f.name.upper()}" for f in spec.fields if f.required)
    optional = "".join(f"&{f.name}=..." for f in spec.fields if not f.required)
    return f"GET {spec.rest.route}?{required}" + (f"[{optional}]" if optional else "")


def rest_request_definition(spec: ToolSpec) -> dict[str, Any]:
    """The REST schema of a tool's query (GET) or JSON body (POST)."""
    if spec.rest.http_method == "GET":
        schema: dict[str, Any] = {
            "description": _query_usage(spec),
            "type": "object",
            "required": [f.name for f in spec.fields if f.required],
            "properties": {f.name: _query_schema(f) for f in spec.fields},
            "additionalProperties": False,
        }
        return schema
    body = spec.input_schema()
    schema = {"description": f"POST {spec.rest.route}: {spec.title.lower()}.", **body}
    if spec.exactly_one_of:
        schema["description"] += " Exactly one of " + " or ".join(spec.exactly_one_of) + "."
        schema["oneOf"] = [
            {
                "required": [name],
                "not": {
                    "anyOf": [
                        {"required": [other]} for other in spec.exactly_one_of if other != name
                    ]
                },
            }
            for name in spec.exactly_one_of
        ]
    return schema


def rest_request_definitions() -> dict[str, dict[str, Any]]:
    """Every tool's REST request schema, by definition name (as in the REST schema)."""
    return {spec.rest.request_def: rest_request_definition(spec) for spec in CATALOG}
