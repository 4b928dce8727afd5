"""`jupyter-hashline` (also `jupyter hashline`): the notebook tools from a shell.

    jupyter-hashline [--root DIR | --server URL [--token T]] [--store FILE] [--agent NAME]
                     [--allow-run] COMMAND ...

Commands: `read PATH [--offset N] [--limit N] [--cells ID,ID]`, `patch [FILE|-]` (edit text
or the JSON form), `write PATH [FILE|-]`, `outputs PATH CELL [--max-chars N]`,
`run PATH --tag TAG [--cell ID ...] [--timeout S] [--max-chars N]` (run code cells whose
sources are as they were at TAG), `eval PATH [CODE|-] [--timeout S] [--max-chars N]` (run
code in the notebook's kernel without adding a cell), `revert ID` or `revert --by AGENT
--since-ms T` (with `--server`: undo recorded edits, safely), `mcp` (the MCP server on stdio),
`demo [--provider P]` and
`simulator` (the offline provider simulator).

The notebook commands run the same tools as MCP and agent sessions (`jupyter_hashline.tools`),
as the agent `--agent` (default: the user's login name; seen lines are the agent's own), on a
directory (`--root`, default the current directory; every path is confined to it) or on a
running Jupyter server's REST API (`--server`, token from `--token` or `$JUPYTER_TOKEN`).
Snapshots persist between invocations (a SQLite file, by default the one a Jupyter server on
the same root uses; `--store` or `$JUPYTER_HASHLINE_STORE` overrides), so `read` in one
process and `patch` in the next works.

Running cells on a directory needs the global `--allow-run` (for `run` and for `mcp`): code
runs with your rights, so it is never on by default. Each `run` or `eval` starts the
notebook's kernel and shuts it down when it ends (its reply says so: variables do not persist
between commands) (an `mcp` session keeps one kernel per notebook until it
ends); with `--server` the server's kernels run the cells and the server decides whether runs
are allowed.

Exit codes: 0 done (applied, or a no-op reported as such; for `run`, the cells ran, even when
one raised: its status says `error`); 1 rejected: the engine refused the edit or the run
(stale or unknown tag, changed or unseen cells, bad anchors, a cell that is not code, an
invalid notebook, too large, runs not allowed) and wrote and ran nothing; its agent-readable
message is on stderr; 2 usage or I/O error (bad arguments, an edit that cannot be parsed,
missing or forbidden files, an unreachable server, a kernel that would not start or died),
message on stderr. When stdout is closed early (`... | head`) the command stops quietly with
141, as git does.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence

# jsonschema (which nbformat imports) loads rfc3987_syntax, where it is installed (Jupyter's
# jupyter-events pulls it in), for its optional `iri` format checks, and that module builds a
# grammar as it is imported: 3 of the 4.6 s a command took here (python-jsonschema #1392,
# #1521). Nothing a command validates has an `iri` format, so a command goes without it and
# starts in about 1.5 s. Only when nothing imported jsonschema yet: a process that did keeps it.
if "jsonschema" not in sys.modules:
    sys.modules.setdefault("rfc3987_syntax", None)  # type: ignore[arg-type]

from .common import DONE, PROG, REJECTED, USAGE
from .parser import build_parser
from .tools import REJECTION_KINDS, default_agent, exit_code, patch_arguments

__all__ = [
    "DONE",
    "PROG",
    "REJECTED",
    "REJECTION_KINDS",
    "USAGE",
    "build_parser",
    "default_agent",
    "exit_code",
    "main",
    "patch_arguments",
]


SIGPIPE_EXIT = 141
"""128 + SIGPIPE: the status a shell shows for a process the closed pipe ended."""


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args, extra = parser.parse_known_args(argv)
    if extra and args.command != "demo":  # the demo parses its own options
        parser.error(f"unrecognized arguments: {' '.join(extra)}")
    args.extra = extra
    try:
        code = int(args.run(args))
        sys.stdout.flush()  # a closed pipe shows here, not at exit
    except BrokenPipeError:
        return quiet_broken_pipe()
    return code


def quiet_broken_pipe() -> int:
    """The reader of stdout went away (`... | head`): stop quietly, as git does, with the
    status of a process ended by SIGPIPE. Whatever the command did is done."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())  # nothing more reaches the closed pipe at exit
    os.close(devnull)
    return SIGPIPE_EXIT
