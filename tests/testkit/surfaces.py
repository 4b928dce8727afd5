"""Every surface an agent or a person reaches the tools through, behind one call: REST (the
server's routes), MCP over stdio (`--root` or `--server`), the command line (`--root` or
`--server`, one process per call) and `Session` (a scripted model over the provider
simulator, on a directory or through a server). `call(tool, args)` takes the catalog's
argument names and answers what that surface shows: whether it succeeded (a 2xx status, exit
code 0, a result that is not an error) and the text it shows.

Tools are named without their prefix: read, edit, write, outputs, run, eval, kernel, revert.
`offered` is what the surface lists (MCP's tools/list, the session's catalog): a surface that
does not offer a tool is asked nothing about it."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from collections import deque
from collections.abc import Mapping
from contextlib import AsyncExitStack
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from unittest import mock

import httpx
from mcp import Client
from mcp.client.stdio import StdioServerParameters

from jupyter_hashline.agent import ProviderSimulator, Session, where
from jupyter_hashline.agent.registration import ServerInfo
from jupyter_hashline.tools import TOOL_NAMES
from jupyter_hashline.tools.catalog import CATALOG

AGENT = "matrix-agent"
EVERY_TOOL = ("read", "edit", "write", "outputs", "run", "eval", "kernel", "revert")


@dataclass(frozen=True, slots=True)
class Reply:
    ok: bool
    text: str
    status: str  # "200", "exit 1", "error": as the surface says it


@dataclass(frozen=True, slots=True)
class Target:
    """Where a surface's calls go: a directory, or a server (URL and token) over one."""

    root: Path
    data_dir: Path  # the Jupyter data dir a --root process keeps its snapshot store in
    url: str | None = None
    token: str | None = None
    server_root: Path | None = None  # the server's root directory (a session finds it so)


def _tool(name: str) -> str:
    return f"notebook_{name}"


class Surface:
    name = ""
    offered: frozenset[str] = frozenset(EVERY_TOOL)

    async def open(self) -> None:
        """Start what the surface needs for its calls (a process, a session)."""

    async def aclose(self) -> None:
        """Stop it."""

    async def call(self, tool: str, args: Mapping[str, Any]) -> Reply:
        raise NotImplementedError


class RestSurface(Surface):
    name = "rest"

    def __init__(self, target: Target) -> None:
        assert target.url is not None
        self.http = httpx.AsyncClient(
            base_url=target.url + "hashline/",
            headers={"Authorization": f"token {target.token}", "X-Hashline-Agent": AGENT},
            timeout=120,
        )

    async def aclose(self) -> None:
        await self.http.aclose()

    async def call(self, tool: str, args: Mapping[str, Any]) -> Reply:
        spec = next((s for s in CATALOG if s.name == _tool(tool)), None)
        route, method = (spec.rest.route, spec.rest.http_method) if spec else (tool, "POST")
        if method == "GET":
            query = {k: ",".join(v) if isinstance(v, list) else str(v) for k, v in args.items()}
            response = await self.http.get(route, params=query)
        else:
            response = await self.http.post(route, json=dict(args))
        body = response.json()
        ok = response.status_code < 300
        text = body.get(spec.rest.text_key, "") if ok and spec else json.dumps(body)
        return Reply(
            ok, str(text) if ok else str(body.get("message", body)), str(response.status_code)
        )


class CliSurface(Surface):
    """One `jupyter-hashline` process per call, as a person or a shell-using agent runs it."""

    def __init__(self, target: Target) -> None:
        where_args = (
            ["--server", target.url, "--token", str(target.token)]
            if target.url
            else ["--root", str(target.root), "--allow-run"]
        )
        self.name = "cli --server" if target.url else "cli --root"
        self.base = [sys.executable, "-m", "jupyter_hashline.cli", *where_args, "--agent", AGENT]
        self.env = dict(os.environ, JUPYTER_DATA_DIR=str(target.data_dir))
        self.cwd = target.root

    def argv(self, tool: str, args: Mapping[str, Any]) -> tuple[list[str], str | None]:
        path = str(args.get("path", ""))
        if tool == "read":
            return ["read", path], None
        if tool == "edit":
            return ["patch", "-"], str(args["patch"])
        if tool == "write":
            tag = ["--tag", str(args["tag"])] if args.get("tag") else []
            return ["write", path, "-", *tag], str(args["content"])
        if tool == "outputs":
            return ["outputs", path, str(args["cell"])], None
        if tool == "run":
            cells = [part for cell in args.get("cells", []) for part in ("--cell", cell)]
            return ["run", path, "--tag", str(args["tag"]), *cells], None
        if tool == "eval":
            return ["eval", path, "-"], str(args["code"])
        if tool == "kernel":
            return ["kernel", path, str(args["action"])], None
        if tool == "revert":
            return ["revert", str(args["activity"])], None
        raise ValueError(f"no command for {tool}")

    async def call(self, tool: str, args: Mapping[str, Any]) -> Reply:
        argv, stdin = self.argv(tool, args)
        done = await asyncio.to_thread(
            subprocess.run,
            [*self.base, *argv],
            input=stdin or "",
            capture_output=True,
            text=True,
            timeout=180,
            check=False,
            env=self.env,
            cwd=self.cwd,
        )
        return Reply(done.returncode == 0, done.stdout + done.stderr, f"exit {done.returncode}")


class McpSurface(Surface):
    """One MCP server over stdio for the surface's life, as an MCP host keeps it."""

    def __init__(self, target: Target) -> None:
        where_args = (
            ["--server", target.url, "--token", str(target.token)]
            if target.url
            else ["--root", str(target.root), "--allow-run"]
        )
        self.name = "mcp --server" if target.url else "mcp --root"
        self.params = StdioServerParameters(
            command=sys.executable,
            args=["-m", "jupyter_hashline.cli", *where_args, "--agent", AGENT, "mcp"],
            env=dict(os.environ, JUPYTER_DATA_DIR=str(target.data_dir)),
            cwd=str(target.root),
        )
        self.stack = AsyncExitStack()
        self.client: Any = None

    async def open(self) -> None:
        self.client = await self.stack.enter_async_context(Client(self.params))
        listed = await self.client.list_tools()
        self.offered = frozenset(t.name.removeprefix("notebook_") for t in listed.tools)

    async def aclose(self) -> None:
        await self.stack.aclose()

    async def call(self, tool: str, args: Mapping[str, Any]) -> Reply:
        result = await self.client.call_tool(_tool(tool), dict(args))
        text = "\n".join(getattr(block, "text", "") for block in result.content)
        return Reply(not result.is_error, text, "error" if result.is_error else "ok")


class SessionSurface(Surface):
    """A `Session` whose model (the provider simulator) makes exactly the call asked, one per
    turn; the reply is the tool result the model is sent back."""

    def __init__(self, target: Target) -> None:
        self.target = target
        self.name = "session (server)" if target.url else "session (directory)"
        self.offered = frozenset(name.removeprefix("notebook_") for name in TOOL_NAMES)
        self.calls: deque[dict[str, Any]] = deque()
        self.results: deque[Reply] = deque()
        self.simulator = ProviderSimulator([self._ask, self._answer] * 200)
        self.session: Session | None = None

    def _ask(self, messages: list[Any]) -> dict[str, Any]:
        return {"tool_calls": [self.calls.popleft()]}

    def _answer(self, messages: list[Any]) -> dict[str, Any]:
        block = messages[-1]["content"][-1]
        content = block["content"]
        text = (
            content
            if isinstance(content, str)
            else "\n".join(part.get("text", "") for part in content if isinstance(part, dict))
        )
        self.results.append(
            Reply(not block.get("is_error"), text, "error" if block.get("is_error") else "ok")
        )
        return {"text": "done"}

    async def open(self) -> None:
        await self.simulator.__aenter__()
        target = self.target
        via = "server" if target.url else "directory"
        parent = (
            ServerInfo(target.url, str(target.token), str(target.server_root))
            if target.url
            else None
        )
        with mock.patch.object(where, "find_parent_server", lambda: parent):
            self.session = Session(
                target.root,
                base_url=self.simulator.base_url("anthropic"),
                provider="anthropic",
                api_key="k",
                label=AGENT,
                via=via,
                register=False,
            )

    async def aclose(self) -> None:
        if self.session is not None:
            await self.session.aclose()
        await self.simulator.__aexit__(None, None, None)

    async def call(self, tool: str, args: Mapping[str, Any]) -> Reply:
        assert self.session is not None
        self.calls.append({"name": _tool(tool), "input": dict(args)})
        await self.session.run_turn(f"call {tool}")
        return self.results.popleft()
