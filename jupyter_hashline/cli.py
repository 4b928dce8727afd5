"""`jupyter-hashline` (also `jupyter hashline`): the command line.

Today it serves the offline provider simulator; the notebook commands (read, patch, write,
outputs), `demo` and `mcp` build on the same parser. Exit codes: 0 done, 2 usage or I/O error.
"""

from __future__ import annotations

import argparse
import json
import signal
import sys
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from .agent.simulator import PROVIDER_PATHS, ProviderSimulator


def _simulator(args: argparse.Namespace) -> int:
    try:
        script: Any = json.loads(Path(args.script).read_text()) if args.script else []
    except (OSError, ValueError) as err:
        print(f"jupyter-hashline simulator: cannot read the script: {err}", file=sys.stderr)
        return 2
    if not isinstance(script, list) or not all(isinstance(t, dict) for t in script):
        print(
            "jupyter-hashline simulator: the script must be a JSON list of turns", file=sys.stderr
        )
        return 2
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
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="jupyter-hashline", description=__doc__)
    commands = parser.add_subparsers(dest="command", required=True)
    sim = commands.add_parser("simulator", help="serve the offline provider simulator")
    sim.add_argument("--script", help="JSON file: a list of turns ({text} or {tool_calls})")
    sim.add_argument("--port", type=int, default=0, help="port on 127.0.0.1 (default: any)")
    sim.add_argument("--block-tokens", type=int, default=64)
    sim.add_argument("--min-tokens", type=int, default=1024)
    sim.add_argument("--ttl", type=float, default=300.0, help="cache TTL in seconds")
    sim.set_defaults(run=_simulator)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return int(args.run(args))


if __name__ == "__main__":
    raise SystemExit(main())
