"""The public names of jupyter_hashline.tools: pinned, and importable without Jupyter's server."""

from __future__ import annotations

import subprocess
import sys

import jupyter_hashline.tools as tools


def test_exported_members() -> None:
    assert sorted(tools.__all__) == [
        "AGENT_HEADER",
        "ActivityLog",
        "ActivityRecord",
        "BadArgumentsError",
        "CATALOG",
        "ChangedDuringWriteError",
        "DEFAULT_OUTPUT_CHARS",
        "DecisionRequest",
        "DirectoryWorkspace",
        "EDIT_LANGUAGE",
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
        "REVIEW_CATALOG",
        "REVIEW_TOOL_NAMES",
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
        "TOOL_NAMES",
        "TOOL_SPECS",
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
    for name in tools.__all__:
        assert getattr(tools, name) is not None


def test_importing_tools_loads_no_jupyter_server_tornado_or_widgets() -> None:
    probe = (
        "import sys, jupyter_hashline.tools; "
        "print(sorted(m for m in ('jupyter_server', 'tornado', 'ipywidgets', 'jupyter_client') "
        "if m in sys.modules))"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"
