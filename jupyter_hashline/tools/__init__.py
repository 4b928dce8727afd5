"""The application layer: what a tool call is, for every surface.

REST handlers, the MCP stdio server, the jupyter-server-mcp registration, the CLI and agent
`Session`s only translate to this package: raw arguments go through `run_tool` (one
validator, one catalog) to a workspace, which returns a `ToolOutcome`. `Workspace` runs the
tools in this process (locks, activity, per-agent seen lines and no-op streaks);
`RestWorkspace` runs them on a Jupyter server through its REST API; `open_directory` is the
workspace of a directory on this machine. A `Workspace` runs cells (`notebook_run`) with the
`kernels.CellRunner` its surface gives it; this package never starts a kernel itself.

This package imports no Jupyter server, tornado, ipywidgets or kernel client (a test checks).
"""

from __future__ import annotations

from .activity import ActivityLog, ActivityRecord, RunEntry
from .calls import ToolOutcome, ToolWorkspace, run_tool
from .catalog import (
    CATALOG,
    DEFAULT_OUTPUT_CHARS,
    EDIT_LANGUAGE,
    REVIEW_CATALOG,
    REVIEW_TOOL_NAMES,
    TOOL_NAMES,
    TOOL_SPECS,
    Field,
    FieldKind,
    ToolSpec,
    mcp_definitions,
    rest_request_definitions,
    spec_for,
)
from .directory import (
    DirectoryWorkspace,
    default_store_path,
    default_store_placement,
    open_directory,
    resolve_store_path,
)
from .errors import (
    BadArgumentsError,
    ChangedDuringWriteError,
    ProposalDecidedError,
    ProposalForbiddenError,
    ProposalRefusedError,
    RevertNotAllowedError,
    RevertRefusedError,
    RunNotAllowedError,
    RunUnavailableError,
    UnknownActivityError,
    UnknownProposalError,
    UnknownToolError,
)
from .proposals import Proposal, ProposalBook, ProposedCell, ReviewMode, ReviewPolicy
from .requests import (
    DecisionRequest,
    EditRequest,
    EvalRequest,
    KernelRequest,
    OutputsRequest,
    ReadRequest,
    RevertRequest,
    ReviewAcceptRequest,
    ReviewListRequest,
    ReviewRejectRequest,
    RunRequest,
    ToolRequest,
    WriteRequest,
)
from .rest_client import AGENT_HEADER, RestWorkspace
from .revert import UndoPlan, revert_request
from .review import decision_request
from .store_placement import StorePlacement
from .validate import Source, tool_request
from .wiring import NotebookRunner, open_workspace
from .workspace import Workspace

__all__ = [
    "AGENT_HEADER",
    "CATALOG",
    "DEFAULT_OUTPUT_CHARS",
    "EDIT_LANGUAGE",
    "REVIEW_CATALOG",
    "REVIEW_TOOL_NAMES",
    "TOOL_NAMES",
    "TOOL_SPECS",
    "ActivityLog",
    "ActivityRecord",
    "BadArgumentsError",
    "ChangedDuringWriteError",
    "DecisionRequest",
    "DirectoryWorkspace",
    "EditRequest",
    "EvalRequest",
    "Field",
    "FieldKind",
    "KernelRequest",
    "NotebookRunner",
    "OutputsRequest",
    "Proposal",
    "ProposalBook",
    "ProposalDecidedError",
    "ProposalForbiddenError",
    "ProposalRefusedError",
    "ProposedCell",
    "ReadRequest",
    "RestWorkspace",
    "RevertNotAllowedError",
    "RevertRefusedError",
    "RevertRequest",
    "ReviewAcceptRequest",
    "ReviewListRequest",
    "ReviewMode",
    "ReviewPolicy",
    "ReviewRejectRequest",
    "RunEntry",
    "RunNotAllowedError",
    "RunRequest",
    "RunUnavailableError",
    "Source",
    "StorePlacement",
    "ToolOutcome",
    "ToolRequest",
    "ToolSpec",
    "ToolWorkspace",
    "UndoPlan",
    "UnknownActivityError",
    "UnknownProposalError",
    "UnknownToolError",
    "Workspace",
    "WriteRequest",
    "decision_request",
    "default_store_path",
    "default_store_placement",
    "mcp_definitions",
    "open_directory",
    "open_workspace",
    "resolve_store_path",
    "rest_request_definitions",
    "revert_request",
    "run_tool",
    "spec_for",
    "tool_request",
]
