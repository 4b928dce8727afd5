"""The tool commands: `read`, `patch`, `write`, `outputs`, `run`, `eval`, `kernel` and
`revert`, translated to the tools.

Each command turns its command-line values into a tool call's arguments (text, validated by
the tools layer as a REST query is) and runs it as the agent `--agent` on the workspace the
global options name: a directory (`--root`, snapshots in SQLite so `read` in one process and
`patch` in the next works; cells run only with `--allow-run`) or a running Jupyter server's
REST API (`--server`). The outcome's text goes to stdout, or to stderr with exit 1 for a
rejection and 2 for anything else that went wrong.

On a directory, `run` and `eval` start a kernel that is shut down when the command exits: the
next command starts a fresh one, and the reply says so (`FRESH_KERNEL`).
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import getpass
import json
import os
import sqlite3
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..hashline import (
    AmbiguousEditError,
    AnchorError,
    CodeDoesNotParseError,
    HashlineError,
    RepeatedNoOpError,
    StaleTagError,
    TooLargeError,
    UnseenLinesError,
)
from ..kernels import NotRunnableError
from ..notebook import InvalidNotebookError
from ..tools import (
    RestWorkspace,
    RevertNotAllowedError,
    RevertRefusedError,
    RevertRequest,
    RunNotAllowedError,
    Source,
    ToolOutcome,
    open_directory,
    revert_request,
    run_tool,
)
from .common import DONE, PROG, REJECTED, USAGE, fail
from .explain import unknown_tag

if TYPE_CHECKING:
    from ..tools import ToolWorkspace

REFUSALS: tuple[type[HashlineError], ...] = (
    StaleTagError,
    UnseenLinesError,
    RepeatedNoOpError,
    AnchorError,
    AmbiguousEditError,
    CodeDoesNotParseError,
    InvalidNotebookError,
    TooLargeError,
    NotRunnableError,
    RunNotAllowedError,
    RevertRefusedError,
    RevertNotAllowedError,
)
"""The branches of the error tree meaning "the engine refused this edit or run; nothing was
written or ran" (exit 1), each with every error class below it. A malformed edit
(`PatchSyntaxError`) is a usage error, like a malformed command line: exit 2."""

CONFLICT_KIND = "conflict"
"""What a server names a 409 that carries no engine kind (a refusal, like every 409)."""


def _kinds_below(root: type[HashlineError]) -> set[str]:
    kinds = {root.kind}
    for sub in root.__subclasses__():
        kinds |= _kinds_below(sub)
    return kinds


def rejection_kinds(refusals: tuple[type[HashlineError], ...] = REFUSALS) -> frozenset[str]:
    """Every error kind in the tree under `refusals` (plus the server's bare `conflict`)."""
    kinds = {CONFLICT_KIND}
    for root in refusals:
        kinds |= _kinds_below(root)
    return frozenset(kinds)


REJECTION_KINDS = rejection_kinds()
"""The error kinds that exit 1; every other kind (missing or forbidden paths, I/O, an
unreachable server, bad arguments or edit syntax, kernels that fail) exits 2."""


MCP_KERNEL_IDLE_S = 1800.0
"""An MCP server on a directory shuts a notebook's kernel down after this long without use."""

KERNEL_TOOLS = frozenset({"notebook_run", "notebook_eval"})
FRESH_KERNEL = (
    "this command's kernel was shut down when it ended: variables do not persist between "
    "commands on a directory (each starts a fresh kernel). To keep them, run through a "
    "Jupyter server (--server URL) or an MCP session (`mcp`), which keep one kernel per "
    "notebook."
)

RUN_OFF = (
    f"Run refused, nothing ran: running cells on a directory is off unless you allow it. "
    f"Code runs with your rights: to allow it, give the global option --allow-run before the "
    f"command (`{PROG} --root DIR --allow-run run PATH --tag TAG`, or `{PROG} --allow-run mcp` "
    "for an MCP server whose agents may run cells)."
)


def exit_code(outcome: ToolOutcome) -> int:
    """0 for a result, 1 for a rejected edit or run, 2 for anything else that went wrong."""
    if not outcome.is_error:
        return DONE
    return REJECTED if outcome.kind in REJECTION_KINDS else USAGE


def workspace_for(args: argparse.Namespace) -> ToolWorkspace:
    """The workspace the global options name; raises HashlineError/OSError/sqlite3.Error."""
    if args.server:
        token = args.token or os.environ.get("JUPYTER_TOKEN")
        return RestWorkspace(args.server, token)
    root = args.root or os.getcwd()
    check = args.syntax_check
    if not args.allow_run:
        return open_directory(root, args.store, syntax_check=check, run_refusal=RUN_OFF)
    from ..kernels import DirectoryKernelPool  # jupyter_client: only when cells may run

    if args.command == "mcp":  # one kernel per notebook for the session, shut when idle
        pool = functools.partial(DirectoryKernelPool, idle_timeout_s=MCP_KERNEL_IDLE_S)
        return open_directory(root, args.store, syntax_check=check, run_with=pool)
    return open_directory(root, args.store, syntax_check=check, run_with=DirectoryKernelPool)


async def _call(
    args: argparse.Namespace, name: str, arguments: Mapping[str, Any], source: Source
) -> ToolOutcome:
    workspace = workspace_for(args)
    agent = args.agent or default_agent()
    try:
        return await run_tool(workspace, name, arguments, agent=agent, source=source)
    finally:
        await workspace.aclose()


def default_agent() -> str:
    """The agent of a CLI call without `--agent`: the user's login name."""
    try:
        return getpass.getuser()
    except (KeyError, OSError):  # no login name for this uid (e.g. a container)
        return "cli"


def _run_tool(
    args: argparse.Namespace,
    name: str,
    arguments: Mapping[str, Any],
    source: Source = Source.QUERY,
) -> int:
    """Run one tool; command-line values are text, validated like a REST query."""
    try:
        outcome = asyncio.run(_call(args, name, arguments, source))
    except HashlineError as err:
        return fail(args.command, err.message)
    except (OSError, sqlite3.Error) as err:
        return fail(args.command, f"{err}. Check --root and --store.")
    stream = sys.stderr if outcome.is_error else sys.stdout
    text = outcome.text
    if name in KERNEL_TOOLS and not args.server and not outcome.is_error:
        text += f"\nnote: {FRESH_KERNEL}"
    if outcome.kind == "unknown_tag":
        text = unknown_tag(args, text)
    print(text, file=stream)
    return exit_code(outcome)


def _input_text(source: str) -> str:
    """The text of FILE, or of stdin for `-`, as UTF-8 with line endings untouched."""
    data = sys.stdin.buffer.read() if source == "-" else Path(source).read_bytes()
    return data.decode("utf-8")


def _read_input(args: argparse.Namespace) -> str | None:
    try:
        return _input_text(args.source)
    except (OSError, UnicodeDecodeError) as err:
        fail(args.command, f"cannot read {args.source}: {err}")
        return None


def _given(**values: str | None) -> dict[str, str]:
    return {name: value for name, value in values.items() if value is not None}


def read(args: argparse.Namespace) -> int:
    arguments = _given(path=args.path, offset=args.offset, limit=args.limit, cells=args.cells)
    return _run_tool(args, "notebook_read", arguments)


def patch_arguments(text: str) -> dict[str, Any]:
    """`{"edits": ...}` when `text` is the JSON form, else `{"patch": text}` (edit text)."""
    if text.lstrip()[:1] in ("{", "["):
        try:
            return {"edits": json.loads(text)}
        except ValueError:
            pass  # edit text starts with "[path#TAG]"
    return {"patch": text}


def patch(args: argparse.Namespace) -> int:
    text = _read_input(args)
    if text is None:
        return USAGE
    return _run_tool(args, "notebook_edit", patch_arguments(text), Source.JSON)


def write(args: argparse.Namespace) -> int:
    text = _read_input(args)
    if text is None:
        return USAGE
    overwrite = "true" if args.overwrite else None
    arguments = _given(path=args.path, content=text, tag=args.tag, overwrite=overwrite)
    return _run_tool(args, "notebook_write", arguments)


def outputs(args: argparse.Namespace) -> int:
    arguments = _given(path=args.path, cell=args.cell, max_chars=args.max_chars)
    return _run_tool(args, "notebook_outputs", arguments)


def run(args: argparse.Namespace) -> int:
    cells = ",".join(args.cell) if args.cell else None
    arguments = _given(
        path=args.path,
        tag=args.tag,
        cells=cells,
        timeout_s=args.timeout,
        max_chars=args.max_chars,
    )
    return _run_tool(args, "notebook_run", arguments)


def eval_code(args: argparse.Namespace) -> int:
    code = _input_text("-") if args.code == "-" else args.code
    arguments = _given(path=args.path, code=code, timeout_s=args.timeout, max_chars=args.max_chars)
    return _run_tool(args, "notebook_eval", arguments)


def kernel(args: argparse.Namespace) -> int:
    return _run_tool(args, "notebook_kernel", {"path": args.path, "action": args.action})


REVERT_NEEDS_SERVER = (
    "revert needs --server: the activity an undo names is kept by a running Jupyter server "
    "(a directory keeps none between commands). Nothing was changed."
)


def revert_body(args: argparse.Namespace) -> dict[str, Any]:
    """The `POST revert` body the command line asks for (validated by the tools layer)."""
    body: dict[str, Any] = {}
    for name, value in (("activity", args.activity), ("since_ms", args.since_ms)):
        if value is not None:
            body[name] = int(value) if value.isdigit() else value
    if args.by is not None:
        body["agent"] = args.by
    return body


def revert(args: argparse.Namespace) -> int:
    if not args.server:
        return fail(args.command, REVERT_NEEDS_SERVER)
    try:
        request = revert_request(revert_body(args), agent=args.agent or default_agent())
    except HashlineError as err:
        return fail(args.command, err.message)
    outcome = asyncio.run(_revert(args, request))
    print(outcome.text, file=sys.stderr if outcome.is_error else sys.stdout)
    return exit_code(outcome)


async def _revert(args: argparse.Namespace, request: RevertRequest) -> ToolOutcome:
    token = args.token or os.environ.get("JUPYTER_TOKEN")
    workspace = RestWorkspace(args.server, token)
    try:
        return await workspace.revert(request)
    finally:
        await workspace.aclose()
