"""The tools an agent can run a cell with, for the stale-run table.

Each contender reads the notebook as the agent does (`read`, before the person's change) and
then asks to run the agent's cell (`run`, after it), answering with what its tool told the
agent, classed as an `Answer` (bench/safety_run_oracle.py judges what really ran).

- hashline over REST: `notebook_read` then `notebook_run` with the read's tag and the cell's
  id, through the tools layer's `RestWorkspace` against a running Jupyter server with this
  project's extension: the server's kernel runner, in the notebook's session kernel (one kernel
  bound to every notebook of the table by a session, as JupyterLab binds a notebook to a
  running kernel), live through the room when the notebook is open.
- hashline in a directory: the same two tools on a `Workspace` over the folder, cells run by a
  `DirectoryKernelPool` (the CLI's and MCP `--root`'s runner); one notebook path for every
  scenario, so one kernel serves them all. Saved-file scenarios only (no room).
- jupyter-mcp-server's `execute_cell`: its own MCP server (its stdio transport, started from
  its own virtualenv, never imported here) connected to the same Jupyter server, as an agent
  host runs it; `use_notebook` and `read_notebook` (detailed) to read, then `execute_cell` by
  the cell's id (as its tool description recommends) or by its index at the read.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from contextlib import AsyncExitStack
from pathlib import Path
from typing import Any, Protocol

import httpx

from bench.safety_run_oracle import Answer, Reply
from bench.safety_run_scenarios import RunScenario, Where
from jupyter_hashline.kernels.pool import DirectoryKernelPool
from jupyter_hashline.tools import (
    RestWorkspace,
    ToolOutcome,
    ToolWorkspace,
    open_directory,
    run_tool,
)

RUN_TIMEOUT_S = 30
PEER_TOOL_TIMEOUT_S = 90.0


class Contender(Protocol):
    name: str
    root: Path  # where its notebooks are (the server's root, or its directory)
    wheres: tuple[Where, ...]  # where it can be staged
    uses_room: bool  # reads the notebook through its collaboration room even when saved

    def notebook_path(self, n: int) -> str: ...

    async def prepare(self, path: str) -> None: ...

    async def read(self, path: str, scenario: RunScenario) -> None: ...

    async def run(self, path: str, scenario: RunScenario) -> Answer: ...

    async def aclose(self) -> None: ...


# -- hashline ----------------------------------------------------------------------------------


def hashline_answer(outcome: ToolOutcome) -> Answer:
    if outcome.is_error:
        broken = outcome.kind == "unreachable" or outcome.status >= 500
        return Answer(Reply.FAILED if broken else Reply.REFUSED, outcome.text)
    statuses = [str(c.get("status")) for c in outcome.reply.get("cells", [])]
    ran = any(s in ("ok", "error", "timeout") for s in statuses)
    return Answer(Reply.RAN if ran else Reply.NOTHING, outcome.text)


class _HashlineTools:
    """Read, then run the agent's cell under the read's tag; one agent name per scenario."""

    workspace: ToolWorkspace

    def __init__(self) -> None:
        self._tags: dict[str, str] = {}

    async def read(self, path: str, scenario: RunScenario) -> None:
        read = await run_tool(self.workspace, "notebook_read", {"path": path}, agent=scenario.name)
        if read.is_error:
            raise RuntimeError(f"hashline could not read {path}: {read.text}")
        self._tags[scenario.name] = str(read.reply["tag"])

    async def run(self, path: str, scenario: RunScenario) -> Answer:
        arguments = {
            "path": path,
            "tag": self._tags.pop(scenario.name),
            "cells": [scenario.target],
            "timeout_s": RUN_TIMEOUT_S,
        }
        outcome = await run_tool(self.workspace, "notebook_run", arguments, agent=scenario.name)
        return hashline_answer(outcome)


class HashlineRest(_HashlineTools):
    name = "hashline notebook_run (REST, server kernel)"
    wheres = (Where.FILE, Where.ROOM)
    uses_room = False

    def __init__(self, url: str, token: str, root: Path) -> None:
        super().__init__()
        self.url, self.token, self.root = url, token, root
        self.workspace = RestWorkspace(url, token, timeout_s=RUN_TIMEOUT_S + 30)
        self._kernel: str | None = None

    def notebook_path(self, n: int) -> str:
        return f"hashline-{n}.ipynb"

    async def prepare(self, path: str) -> None:
        """Bind the notebook to the table's one kernel with a session (started on first use)."""
        headers = {"Authorization": f"token {self.token}"}
        async with httpx.AsyncClient(base_url=self.url, headers=headers, timeout=60) as http:
            if self._kernel is None:
                started = await http.post("/api/kernels", json={"name": "python3"})
                started.raise_for_status()
                self._kernel = str(started.json()["id"])
            body = {"path": path, "name": path, "type": "notebook", "kernel": {"id": self._kernel}}
            (await http.post("/api/sessions", json=body)).raise_for_status()

    async def aclose(self) -> None:
        await self.workspace.aclose()


class HashlineDirectory(_HashlineTools):
    name = "hashline notebook_run (directory kernel)"
    wheres = (Where.FILE,)
    uses_room = False

    def __init__(self, root: Path) -> None:
        super().__init__()
        self.root = root
        self.workspace = open_directory(root, ":memory:", run_with=DirectoryKernelPool)

    def notebook_path(self, n: int) -> str:
        return "notebook.ipynb"  # one path: the pool keeps one kernel per notebook

    async def prepare(self, path: str) -> None:
        return None

    async def aclose(self) -> None:
        await self.workspace.aclose()


# -- jupyter-mcp-server ------------------------------------------------------------------------


class PeerSession:
    """jupyter-mcp-server's MCP server over stdio, started from its own virtualenv."""

    def __init__(self, python: Path, url: str, token: str, root: Path) -> None:
        self.command = python.parent / "jupyter-mcp-server"
        self.env = {**os.environ, "JUPYTER_URL": url, "JUPYTER_TOKEN": token}
        self.root = root
        self._stack = AsyncExitStack()
        self.session: Any = None
        self.version = "?"

    async def start(self) -> None:
        from mcp import ClientSession, StdioServerParameters
        from mcp.client.stdio import stdio_client

        params = StdioServerParameters(command=str(self.command), args=[], env=self.env)
        errlog = self._stack.enter_context(open(os.devnull, "w"))  # noqa: SIM115
        streams = await self._stack.enter_async_context(stdio_client(params, errlog=errlog))
        self.session = await self._stack.enter_async_context(ClientSession(*streams))
        started = await self.session.initialize()
        self.version = str(started.server_info.version)

    async def call(self, tool: str, arguments: Mapping[str, Any]) -> tuple[bool, str]:
        """(is the result an error, its text)."""
        try:
            result = await self.session.call_tool(
                tool, dict(arguments), read_timeout_seconds=PEER_TOOL_TIMEOUT_S
            )
        except Exception as error:  # the protocol broke: a failure, not the tool's refusal
            raise PeerBroke(f"{type(error).__name__}: {error}") from error
        texts = [getattr(part, "text", f"<{part.type}>") for part in result.content]
        return bool(result.is_error), "\n".join(texts)

    async def aclose(self) -> None:
        await self._stack.aclose()


class PeerBroke(RuntimeError):
    """The MCP exchange with the peer failed (not an error result of its tool)."""


class PeerExecuteCell:
    """`execute_cell` by id or by index, after `use_notebook` and a detailed `read_notebook`."""

    wheres = (Where.FILE, Where.ROOM)
    uses_room = True

    def __init__(self, peer: PeerSession, *, by_id: bool) -> None:
        self.peer = peer
        self.root = peer.root
        self.by_id = by_id
        self.name = f"jupyter-mcp-server execute_cell ({'cell_id' if by_id else 'cell_index'})"
        self._slug = "peer-id" if by_id else "peer-index"

    def notebook_path(self, n: int) -> str:
        return f"{self._slug}-{n}.ipynb"

    async def prepare(self, path: str) -> None:
        return None

    async def aclose(self) -> None:
        return None  # the session is the table's, closed by it

    async def read(self, path: str, scenario: RunScenario) -> None:
        used, text = await self.peer.call(
            "use_notebook", {"notebook_name": path, "notebook_path": path}
        )
        if used:
            raise RuntimeError(f"jupyter-mcp-server could not use {path}: {text}")
        arguments = {"notebook_name": path, "response_format": "detailed"}
        failed, text = await self.peer.call("read_notebook", arguments)
        if failed or scenario.nonce not in text:
            raise RuntimeError(f"jupyter-mcp-server could not read {path}: {text}")

    async def run(self, path: str, scenario: RunScenario) -> Answer:
        address = {"cell_id": scenario.target} if self.by_id else {"cell_index": scenario.index}
        try:
            failed, text = await self.peer.call(
                "execute_cell", {**address, "timeout": RUN_TIMEOUT_S}
            )
        except PeerBroke as error:
            return Answer(Reply.FAILED, str(error))
        if failed:
            return Answer(Reply.REFUSED, text)
        broke = text.startswith("[ERROR:")  # its own failure, reported as an ordinary result
        return Answer(Reply.FAILED if broke else Reply.RAN, text)
