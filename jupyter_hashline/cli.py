"""`jupyter-hashline` (also `jupyter hashline`): the notebook tools from a shell.

    jupyter-hashline [--root DIR | --server URL [--token T]] [--store FILE] [--agent NAME]
                     [--allow-run] COMMAND ...

Commands: `read PATH [--offset N] [--limit N] [--cells ID,ID]`, `patch [FILE|-]` (edit text
or the JSON form), `write PATH [FILE|-]`, `outputs PATH CELL [--max-chars N]`,
`run PATH --tag TAG [--cell ID ...] [--timeout S] [--max-chars N]` (run code cells whose
sources are as they were at TAG), `mcp` (the MCP server on stdio), `demo [--provider P]` and
`simulator` (the offline provider simulator).

The notebook commands run the same tools as MCP and agent sessions (`jupyter_hashline.tools`),
as the agent `--agent` (default: the user's login name; seen lines are the agent's own), on a
directory (`--root`, default the current directory; every path is confined to it) or on a
running Jupyter server's REST API (`--server`, token from `--token` or `$JUPYTER_TOKEN`).
Snapshots persist between invocations (a SQLite file, by default the one a Jupyter server on
the same root uses; `--store` or `$JUPYTER_HASHLINE_STORE` overrides), so `read` in one
process and `patch` in the next works.

Running cells on a directory needs the global `--allow-run` (for `run` and for `mcp`): code
runs with your rights, so it is never on by default. Each `run` starts the notebook's kernel
and shuts it down when it ends (an `mcp` session keeps one kernel per notebook until it
ends); with `--server` the server's kernels run the cells and the server decides whether runs
are allowed.

Exit codes: 0 done (applied, or a no-op reported as such; for `run`, the cells ran, even when
one raised: its status says `error`); 1 rejected: the engine refused the edit or the run
(stale or unknown tag, changed or unseen cells, bad anchors or syntax, a cell that is not
code, an invalid notebook, too large, runs not allowed or read-only) and wrote and ran
nothing; its agent-readable message is on stderr; 2 usage or I/O error (bad arguments,
missing or forbidden files, an unreachable server, a kernel that would not start or died),
message on stderr.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import getpass
import importlib
import json
import os
import signal
import sqlite3
import sys
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .agent.simulator import PROVIDER_PATHS, ProviderSimulator
from .hashline.errors import HashlineError
from .tools import RestWorkspace, Source, ToolOutcome, open_directory, run_tool

if TYPE_CHECKING:
    from .tools import ToolWorkspace

PROG = "jupyter-hashline"
DONE, REJECTED, USAGE = 0, 1, 2

# Error kinds meaning "the engine refused this edit or run; nothing was written or ran" (exit
# 1). Every other kind (missing or forbidden paths, I/O, an unreachable server, bad arguments,
# kernels that fail) exits 2.
REJECTION_KINDS = frozenset(
    {
        "stale_tag",
        "unknown_tag",
        "unseen_lines",
        "repeated_noop",
        "bad_anchor",
        "patch_syntax",
        "invalid_notebook",
        "too_large",
        "conflict",
        "stale_cells",
        "unseen_cells",
        "not_runnable",
        "run_not_allowed",
    }
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


def _fail(command: str, message: str) -> int:
    print(f"{PROG} {command}: {message}", file=sys.stderr)
    return USAGE


# -- workspaces ----------------------------------------------------------------------------------


def _workspace(args: argparse.Namespace) -> ToolWorkspace:
    """The workspace the global options name; raises HashlineError/OSError/sqlite3.Error."""
    if args.server:
        token = args.token or os.environ.get("JUPYTER_TOKEN")
        return RestWorkspace(args.server, token)
    root = args.root or os.getcwd()
    if not args.allow_run:
        return open_directory(root, args.store, run_refusal=RUN_OFF)
    from .kernels.pool import DirectoryKernelPool  # jupyter_client: only when cells may run

    return open_directory(root, args.store, run_with=DirectoryKernelPool)


async def _call(
    args: argparse.Namespace, name: str, arguments: Mapping[str, Any], source: Source
) -> ToolOutcome:
    workspace = _workspace(args)
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
        return _fail(args.command, err.message)
    except (OSError, sqlite3.Error) as err:
        return _fail(args.command, f"{err}. Check --root and --store.")
    stream = sys.stderr if outcome.is_error else sys.stdout
    print(outcome.text, file=stream)
    return exit_code(outcome)


def _input_text(source: str) -> str:
    """The text of FILE, or of stdin for `-`, as UTF-8 with line endings untouched."""
    data = sys.stdin.buffer.read() if source == "-" else Path(source).read_bytes()
    return data.decode("utf-8")


def _read_input(args: argparse.Namespace) -> str | None:
    try:
        return _input_text(args.source)
    except (OSError, UnicodeDecodeError) as err:
        _fail(args.command, f"cannot read {args.source}: {err}")
        return None


# -- commands ------------------------------------------------------------------------------------


def _given(**values: str | None) -> dict[str, str]:
    return {name: value for name, value in values.items() if value is not None}


def _read(args: argparse.Namespace) -> int:
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


def _patch(args: argparse.Namespace) -> int:
    text = _read_input(args)
    if text is None:
        return USAGE
    return _run_tool(args, "notebook_edit", patch_arguments(text), Source.JSON)


def _write(args: argparse.Namespace) -> int:
    text = _read_input(args)
    if text is None:
        return USAGE
    return _run_tool(args, "notebook_write", {"path": args.path, "content": text})


def _outputs(args: argparse.Namespace) -> int:
    arguments = _given(path=args.path, cell=args.cell, max_chars=args.max_chars)
    return _run_tool(args, "notebook_outputs", arguments)


def _run(args: argparse.Namespace) -> int:
    cells = ",".join(args.cell) if args.cell else None
    arguments = _given(
        path=args.path,
        tag=args.tag,
        cells=cells,
        timeout_s=args.timeout,
        max_chars=args.max_chars,
    )
    return _run_tool(args, "notebook_run", arguments)


def _mcp(args: argparse.Namespace) -> int:
    from .mcp.server import serve_stdio

    if args.print_config:
        return _print_host_config(args)
    try:
        workspace = _workspace(args)
    except HashlineError as err:
        return _fail("mcp", err.message)
    except (OSError, sqlite3.Error) as err:
        return _fail("mcp", f"{err}. Check --root and --store.")
    print(f"{PROG} mcp: serving the notebook tools on {workspace.describe}", file=sys.stderr)
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(serve_stdio(workspace))
    return DONE


def _print_host_config(args: argparse.Namespace) -> int:
    """Print what an agent host needs to start this very server (`mcp --print-config HOST`)."""
    from . import __version__
    from .mcp.hosts import Host, Launch, default_executable, host_config, launch_command

    options: list[str] = []
    env: dict[str, str] = {}
    if args.server:
        options += ["--server", args.server]
        token = args.token or os.environ.get("JUPYTER_TOKEN")
        if token:
            env["JUPYTER_TOKEN"] = token
    else:
        options += ["--root", str(Path(args.root or os.getcwd()).resolve())]
        if args.store:
            store = args.store if args.store == ":memory:" else str(Path(args.store).resolve())
            options += ["--store", store]
    if getattr(args, "allow_run", False):
        options.append("--allow-run")
    program = default_executable(sys.executable, Path(sys.executable).parent / PROG)
    command, *rest = launch_command(program, options)
    launch = Launch(command, tuple(rest), env)
    config = host_config(Host(args.print_config), launch, version=__version__)
    print(config.text, end="")
    print(config.where, file=sys.stderr)
    return DONE


CONFIGURABLES = (
    "jupyter_hashline.server.app.HashlineExtension",
    "jupyter_hashline.agent.settings.HashlineSession",
)
"""The classes whose traits `config` lists (`jupyter server --help-all` lists only the server's
own classes: it prints help while parsing arguments, before any extension is found)."""


def _config(args: argparse.Namespace) -> int:
    """Print every jupyter-hashline configuration trait, as `--help-all` prints traits."""
    from traitlets.utils.importstring import import_item

    for dotted in CONFIGURABLES:
        cls = import_item(dotted)
        title = f"{cls.__name__} options (c.{cls.__name__}.NAME = value in a Jupyter config file)"
        print(f"{title}\n{'-' * len(title)}")
        for _, trait in sorted(cls.class_own_traits(config=True).items()):
            print(cls.class_get_trait_help(trait))
        print()
    return DONE


def _demo(args: argparse.Namespace) -> int:
    try:
        demo = importlib.import_module(f"{__package__}.demo")
    except ModuleNotFoundError as err:
        if err.name != f"{__package__}.demo":
            raise
        return _fail(
            "demo",
            "the demo is missing from this install (jupyter_hashline/demo.py). "
            "Run the notebooks in examples/ instead, or reinstall jupyter-hashline.",
        )
    return int(demo.main(args.extra) or 0)


def _simulator(args: argparse.Namespace) -> int:
    try:
        script: Any = json.loads(Path(args.script).read_text()) if args.script else []
    except (OSError, ValueError) as err:
        return _fail("simulator", f"cannot read the script: {err}")
    if not isinstance(script, list) or not all(isinstance(t, dict) for t in script):
        return _fail("simulator", "the script must be a JSON list of turns")
    stop = threading.Event()
    signal.signal(signal.SIGTERM, lambda *_: stop.set())
    sim = ProviderSimulator(
        script,
        block_tokens=args.block_tokens,
        min_tokens=args.min_tokens,
        ttl_s=args.ttl,
        port=args.port,
    )
    with sim:
        print(f"provider simulator on {sim.url} ({len(script)} scripted turns)", flush=True)
        for provider in PROVIDER_PATHS:
            print(f"  {provider:<9} base URL {sim.base_url(provider)}", flush=True)
        try:
            while not stop.wait(0.5):
                pass
        except KeyboardInterrupt:
            pass
    print(f"served {len(sim.requests)} requests, hit ratio {sim.hit_ratio:.3f}", flush=True)
    return DONE


# -- the parser ----------------------------------------------------------------------------------


def _add_global_options(parser: argparse.ArgumentParser) -> None:
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
        "feed (default: your login name; `mcp` names one agent per connection)",
    )
    parser.add_argument(
        "--allow-run",
        action="store_true",
        help="let `run` (and the agents of `mcp`) run notebook cells on the --root directory, "
        "with your rights; with --server the server decides",
    )


def _add_tool_commands(commands: Any) -> None:
    read = commands.add_parser("read", help="show a file with numbered lines under [path#TAG]")
    read.add_argument("path")
    read.add_argument("--offset", help="1-based number of the first line shown")
    read.add_argument("--limit", help="how many lines to show")
    read.add_argument("--cells", help="comma-separated cell ids to show")
    read.set_defaults(run=_read)
    patch = commands.add_parser("patch", help="apply an edit (edit text or the JSON form)")
    patch.add_argument("source", nargs="?", default="-", metavar="FILE|-")
    patch.set_defaults(run=_patch)
    write = commands.add_parser("write", help="create a file or replace all of it")
    write.add_argument("path")
    write.add_argument("source", nargs="?", default="-", metavar="FILE|-")
    write.set_defaults(run=_write)
    outputs = commands.add_parser("outputs", help="show the outputs of one notebook cell")
    outputs.add_argument("path")
    outputs.add_argument("cell", help="cell id")
    outputs.add_argument("--max-chars", help="clip the text to this many characters (>= 1)")
    outputs.set_defaults(run=_outputs)
    run = commands.add_parser(
        "run",
        help="run code cells whose sources are as at TAG; print each cell's status and outputs",
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
    run.set_defaults(run=_run)


def _hosts() -> list[Any]:
    from .mcp.hosts import Host

    return list(Host)


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=PROG,
        description="Read and edit notebooks with hashline tags; serve the tools over MCP.",
        epilog="Exit codes: 0 done (run: the cells ran, even if one raised), 1 edit or run "
        "rejected (message on stderr), 2 usage or I/O error.",
    )
    _add_global_options(parser)
    commands = parser.add_subparsers(dest="command", required=True)
    _add_tool_commands(commands)
    mcp = commands.add_parser("mcp", help="serve the notebook tools to an MCP client on stdio")
    mcp.add_argument(
        "--print-config",
        metavar="HOST",
        choices=[host.value for host in _hosts()],
        help="print what HOST needs to start this server, with absolute paths, and exit: "
        + ", ".join(host.value for host in _hosts()),
    )
    mcp.set_defaults(run=_mcp)
    config = commands.add_parser("config", help="list every configuration trait with its help")
    config.set_defaults(run=_config)
    demo = commands.add_parser("demo", help="a scripted agent editing a notebook, offline")
    demo.set_defaults(run=_demo)
    sim = commands.add_parser("simulator", help="serve the offline provider simulator")
    sim.add_argument("--script", help="JSON file: a list of turns ({text} or {tool_calls})")
    sim.add_argument("--port", type=int, default=0, help="port on 127.0.0.1 (default: any)")
    sim.add_argument("--block-tokens", type=int, default=64)
    sim.add_argument("--min-tokens", type=int, default=1024)
    sim.add_argument("--ttl", type=float, default=300.0, help="cache TTL in seconds")
    sim.set_defaults(run=_simulator)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args, extra = parser.parse_known_args(argv)
    if extra and args.command != "demo":  # the demo parses its own options
        parser.error(f"unrecognized arguments: {' '.join(extra)}")
    args.extra = extra
    return int(args.run(args))


if __name__ == "__main__":
    raise SystemExit(main())
