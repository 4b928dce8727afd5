"""The command line's grammar: global options, commands and their arguments.

Each command's `run` is the function that does it: the tool commands in `tools.py`, the others
in `commands.py`. Values stay text here; the tools layer validates them as it validates a REST
query, so every surface refuses the same input with the same words.
"""

from __future__ import annotations

import argparse
from typing import Any

from . import commands as other_commands
from . import tools as tool_commands
from .common import PROG
from .explain import DOCS_LINK, EDIT_SYNTAX


def add_global_options(parser: argparse.ArgumentParser) -> None:
    where = parser.add_mutually_exclusive_group()
    where.add_argument(
        "--root", help="directory the paths are relative to and confined to (default: cwd)"
    )
    where.add_argument("--server", help="URL of a Jupyter server with jupyter_hashline enabled")
    parser.add_argument("--token", help="the server's token (default: $JUPYTER_TOKEN)")
    parser.add_argument(
        "--store",
        help="snapshot store file for --root (default: $JUPYTER_HASHLINE_STORE, else the "
        "Jupyter data dir's jupyter_hashline/snapshots-<root id>.sqlite3; :memory: for none)",
    )
    parser.add_argument(
        "--agent",
        help="the agent this call speaks for: its seen lines and the name in the activity "
        "feed (default: your login name; `mcp`: the MCP client's name)",
    )
    parser.add_argument(
        "--syntax-check",
        choices=("warn", "strict", "off"),
        default="warn",
        help="for --root: an edit that stops Python code parsing lands with a warning "
        "(warn, the default), is refused (strict), or is not checked (off); with --server "
        "the server decides",
    )
    parser.add_argument(
        "--allow-run",
        action="store_true",
        help="let `run` (and the agents of `mcp`) run notebook cells on the --root directory, "
        "with your rights; with --server the server decides",
    )


def add_tool_commands(commands: Any) -> None:
    read = commands.add_parser("read", help="show a file with numbered lines under [path#TAG]")
    read.add_argument("path")
    read.add_argument("--offset", help="1-based number of the first line shown")
    read.add_argument("--limit", help="how many lines to show")
    read.add_argument("--cells", help="comma-separated cell ids to show")
    read.set_defaults(run=tool_commands.read)
    patch = commands.add_parser(
        "patch",
        help="apply an edit (edit text or the JSON form)",
        description=EDIT_SYNTAX,
        epilog=f"{DOCS_LINK} Exit codes: 0 applied, 1 rejected (stale or unknown tag, unseen "
        "lines, ...; nothing was written), 2 the edit or the command line is malformed.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    patch.add_argument(
        "source", nargs="?", default="-", metavar="FILE|-", help="the edit (default -: stdin)"
    )
    patch.set_defaults(run=tool_commands.patch)
    write = commands.add_parser("write", help="create a file or replace all of it")
    write.add_argument("path")
    write.add_argument("source", nargs="?", default="-", metavar="FILE|-")
    write.add_argument(
        "--tag", help="the 4 hex digits of your read's header (to replace an existing file)"
    )
    write.add_argument(
        "--overwrite",
        action="store_true",
        help="replace an existing file without a tag (whatever changed in it since)",
    )
    write.set_defaults(run=tool_commands.write)
    outputs = commands.add_parser("outputs", help="show the outputs of one notebook cell")
    outputs.add_argument("path")
    outputs.add_argument("cell", help="cell id")
    outputs.add_argument("--max-chars", help="clip the text to this many characters (>= 1)")
    outputs.set_defaults(run=tool_commands.outputs)
    run = commands.add_parser(
        "run",
        help="run code cells whose sources are as at TAG; print each cell's status and outputs",
        description="Run code cells whose sources are as at TAG. On a directory (--root, with "
        "--allow-run) each command starts a fresh kernel, shut down when it ends: variables "
        "defined by earlier commands are gone, so run the cells that define them in the same "
        "command. Through --server the cells run in the notebook's server kernel.",
    )
    run.add_argument("path")
    run.add_argument("--tag", required=True, help="the 4 hex digits of your read's header")
    run.add_argument(
        "--cell",
        action="append",
        metavar="ID",
        help="a cell to run (repeat for several, in order). Without it: the cells your last "
        "edit of the notebook touched, which only a server (--server) remembers between "
        "commands; on a directory name the cells",
    )
    run.add_argument("--timeout", help="seconds each cell may run (1 to 600, default 60)")
    run.add_argument("--max-chars", help="clip each cell's output text to this many characters")
    run.set_defaults(run=tool_commands.run)
    evaluate = commands.add_parser(
        "eval",
        help="run code in a notebook's kernel without adding a cell; the file is not changed",
        description="Run CODE in the notebook's kernel and print its status and outputs. On a "
        "directory (--root) each command starts a fresh kernel, shut down when it ends: "
        "variables from earlier commands are gone. Through --server it is the notebook's "
        "server kernel, with the variables its cells defined.",
    )
    evaluate.add_argument("path")
    evaluate.add_argument("code", nargs="?", default="-", help="the code; - reads stdin")
    evaluate.add_argument("--timeout", help="seconds it may run (1 to 600, default 60)")
    evaluate.add_argument("--max-chars", help="clip its output text to this many characters")
    evaluate.set_defaults(run=tool_commands.eval_code)
    kernel = commands.add_parser(
        "kernel",
        help="status, interrupt or restart of a notebook's kernel (says whose work it stopped)",
        description="On a directory each command has its own kernel (none is running between "
        "commands, so status says so); through --server it is the notebook's server kernel.",
    )
    kernel.add_argument("path")
    kernel.add_argument("action", choices=["status", "interrupt", "restart"])
    kernel.set_defaults(run=tool_commands.kernel)
    revert = commands.add_parser(
        "revert",
        help="undo a recorded edit on the server (--server), or every edit of one agent since "
        "a time; it lands only where the lines the edit wrote are unchanged",
    )
    revert.add_argument("activity", nargs="?", help="the id of the activity record to undo")
    revert.add_argument("--by", metavar="AGENT", help="undo every edit this agent made...")
    revert.add_argument(
        "--since-ms", metavar="T", help="...at or after T (ms since the epoch, as at_ms)"
    )
    revert.set_defaults(run=tool_commands.revert)


def _hosts() -> list[Any]:
    from ..mcp import Host

    return list(Host)


def add_other_commands(commands: Any) -> None:
    mcp = commands.add_parser("mcp", help="serve the notebook tools to an MCP client on stdio")
    mcp.add_argument(
        "--print-config",
        metavar="HOST",
        choices=[host.value for host in _hosts()],
        help="print what HOST needs to start this server, with absolute paths, and exit: "
        + ", ".join(host.value for host in _hosts()),
    )
    mcp.add_argument(
        "--review",
        action="store_true",
        help="also offer review_list, review_accept and review_reject: a person's (or a "
        "reviewer agent's) decisions on the edits agents proposed (with --server, the "
        "server's proposals; the agent that proposed an edit cannot accept it)",
    )
    mcp.set_defaults(run=other_commands.mcp)
    config = commands.add_parser("config", help="list every configuration trait with its help")
    config.set_defaults(run=other_commands.config)
    demo = commands.add_parser("demo", help="a scripted agent editing a notebook, offline")
    demo.set_defaults(run=other_commands.demo)
    sim = commands.add_parser("simulator", help="serve the offline provider simulator")
    sim.add_argument("--script", help="JSON file: a list of turns ({text} or {tool_calls})")
    sim.add_argument("--port", type=int, default=0, help="port on 127.0.0.1 (default: any)")
    sim.add_argument("--block-tokens", type=int, default=64)
    sim.add_argument("--min-tokens", type=int, default=1024)
    sim.add_argument("--ttl", type=float, default=300.0, help="cache TTL in seconds")
    sim.set_defaults(run=other_commands.simulator)


class _ListTraits(argparse.Action):
    """`--help-all` as Jupyter applications have it: `jupyter server --help-all` cannot list an
    extension's traits (it prints before any extension is found), `jupyter hashline --help-all`
    lists ours."""

    def __call__(self, parser: argparse.ArgumentParser, *_: Any) -> None:
        parser.exit(other_commands.config(argparse.Namespace()))


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=PROG,
        description="Read and edit notebooks with hashline tags; serve the tools over MCP.",
        epilog="Exit codes: 0 done (run: the cells ran, even if one raised), 1 edit or run "
        "rejected (message on stderr), 2 usage or I/O error.",
    )
    add_global_options(parser)
    parser.add_argument(
        "--help-all",
        nargs=0,
        action=_ListTraits,
        help="list every configuration trait with its help and exit (as `config`; also "
        "`jupyter hashline --help-all`)",
    )
    commands = parser.add_subparsers(dest="command", required=True)
    add_tool_commands(commands)
    add_other_commands(commands)
    return parser
