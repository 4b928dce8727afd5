"""The other commands: `mcp` (the MCP server on stdio, or `--print-config HOST`), `config`
(every configuration trait), `demo` and `simulator` (the offline provider simulator)."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import importlib
import json
import os
import signal
import sqlite3
import sys
import threading
from pathlib import Path
from typing import Any

from ..agent import PROVIDER_PATHS, ProviderSimulator
from ..hashline import HashlineError
from ..tools import REVIEW_TOOL_NAMES, TOOL_NAMES
from .common import DONE, PROG, fail
from .tools import workspace_for


def mcp(args: argparse.Namespace) -> int:
    from ..mcp import serve_stdio

    if args.print_config:
        return print_host_config(args)
    try:
        workspace = workspace_for(args)
    except HashlineError as err:
        return fail("mcp", err.message)
    except (OSError, sqlite3.Error) as err:
        return fail("mcp", f"{err}. Check --root and --store.")
    names = (*TOOL_NAMES, *REVIEW_TOOL_NAMES) if args.review else TOOL_NAMES
    what = "the notebook and review tools" if args.review else "the notebook tools"
    print(f"{PROG} mcp: serving {what} on {workspace.describe}", file=sys.stderr)
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(serve_stdio(workspace, agent=args.agent, names=names))
    return DONE


def print_host_config(args: argparse.Namespace) -> int:
    """Print what an agent host needs to start this very server (`mcp --print-config HOST`)."""
    from .. import __version__
    from ..mcp import (
        TOKEN_ENV,
        Host,
        Launch,
        default_executable,
        host_config,
        launch_command,
    )

    options: list[str] = []
    env: dict[str, str] = {}
    secrets: frozenset[str] = frozenset()
    if args.server:
        options += ["--server", args.server]
        secrets = frozenset({TOKEN_ENV})
        token = args.token or os.environ.get(TOKEN_ENV)
        if token:
            env[TOKEN_ENV] = token
    else:
        options += ["--root", str(Path(args.root or os.getcwd()).resolve())]
        if args.store:
            store = args.store if args.store == ":memory:" else str(Path(args.store).resolve())
            options += ["--store", store]
    if args.allow_run:
        options.append("--allow-run")
    program = default_executable(sys.executable, Path(sys.executable).parent / PROG)
    command, *rest = launch_command(program, options)
    if args.review:
        rest.append("--review")
    launch = Launch(command, tuple(rest), env, secrets)
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


def config(args: argparse.Namespace) -> int:
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


def demo(args: argparse.Namespace) -> int:
    try:
        demo = importlib.import_module("jupyter_hashline.demo")
    except ModuleNotFoundError as err:
        if err.name != "jupyter_hashline.demo":
            raise
        return fail(
            "demo",
            "the demo is missing from this install (jupyter_hashline/demo.py). "
            "Run the notebooks in examples/ instead, or reinstall jupyter-hashline.",
        )
    return int(demo.main(args.extra) or 0)


def simulator(args: argparse.Namespace) -> int:
    try:
        script: Any = json.loads(Path(args.script).read_text()) if args.script else []
    except (OSError, ValueError) as err:
        return fail("simulator", f"cannot read the script: {err}")
    if not isinstance(script, list) or not all(isinstance(t, dict) for t in script):
        return fail("simulator", "the script must be a JSON list of turns")
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
