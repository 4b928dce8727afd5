"""The peer's live path in the safety table: jupyter-mcp-server editing an open notebook.

A real Jupyter server with jupyter-collaboration runs in a temporary root. For each scenario,
the notebook as the agent read it is written there; a person opens its collaboration room with
a real websocket client (as JupyterLab does) and makes their change through the room; the room
saves. jupyter-mcp-server's own tools then apply the agent's change through their MCP_SERVER
mode: a collaboration client of their own joins the same room and edits the shared document
(bench/peer_worker.py, `live`). When the room has saved again, the file is judged by the same
oracle as the rest of the table (bench/safety_oracle.py).

The room normalizes what it saves (it adds ids to cells without one and default `kernelspec`
and `language_info` metadata), so the person's notebook the oracle starts from is the file as
the room saved it after the person's change: the same cells, in the same order, with the line
identities of the scenario. A scenario where the room changed more than that is skipped and
counted in the note.

Invariants: only runs with the real package (no model of a live path is offered); every
scenario gets its own file, so no room carries state from one scenario to the next; waits are
bounded and poll observable state (the file on disk, the person's copy of the document).
"""

from __future__ import annotations

import asyncio
import json
import os
import secrets
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import AsyncIterator, Callable, Iterator, Mapping, Sequence
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from bench.safety import Result
from bench.safety_oracle import judge, normalized
from bench.safety_scenarios import PersonKind, Scenario, TCell, Tracked, source_of
from bench.safety_strategies import IndexTools, RealPeer, peer_python

SETTLE_S = 10.0
QUIET_S = 0.8


@dataclass(frozen=True, slots=True)
class LiveServer:
    url: str
    token: str
    root: Path


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@contextmanager
def live_server(
    *, env: Mapping[str, str] | None = None, save_delay_s: float = 0.2
) -> Iterator[LiveServer]:
    """A Jupyter server with collaboration on a temporary root (token auth), stopped after.

    `env` is added to the server's environment (its kernels inherit it); rooms save
    `save_delay_s` after the last change."""
    with tempfile.TemporaryDirectory(prefix="hashline-live-peer-") as tmp:
        root, port, token = Path(tmp), _free_port(), secrets.token_hex(16)
        args = [
            sys.executable, "-m", "jupyter_server", "--no-browser", "--allow-root",
            f"--port={port}", "--ip=127.0.0.1", f"--ServerApp.token={token}",
            f"--ServerApp.root_dir={root}",
            f"--YDocExtension.document_save_delay={save_delay_s}",
            "--YDocExtension.file_poll_interval=0.2",
            f"--BaseFileIdManager.db_path={root / '.fileid.db'}",
        ]  # fmt: skip
        env = {**os.environ, **(env or {}), "JUPYTER_RUNTIME_DIR": str(root / ".runtime")}
        log = (root / ".server.log").open("w")
        proc = subprocess.Popen(args, stdout=log, stderr=subprocess.STDOUT, env=env)
        server = LiveServer(f"http://127.0.0.1:{port}", token, root)
        try:
            _wait_ready(server, proc)
            yield server
        finally:
            proc.terminate()
            try:
                proc.wait(timeout=15)
            except subprocess.TimeoutExpired:
                proc.kill()
            log.close()


def _wait_ready(server: LiveServer, proc: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError("the Jupyter server for the live peer exited at start")
        try:
            request = urllib.request.Request(
                f"{server.url}/api/status", headers={"Authorization": f"token {server.token}"}
            )
            with urllib.request.urlopen(request, timeout=2) as answer:
                if answer.status == 200:
                    return
        except OSError:
            time.sleep(0.2)
    raise RuntimeError("the Jupyter server for the live peer did not answer within 60 s")


@asynccontextmanager
async def person_in_room(server: LiveServer, name: str) -> AsyncIterator[Any]:
    """A person with the notebook open: a Yjs client in its collaboration room."""
    import httpx
    from httpx_ws import AsyncWebSocketSession, aconnect_ws
    from jupyter_ydoc import YNotebook
    from pycrdt import Provider
    from pycrdt.websocket.websocket import HttpxWebsocket

    headers = {"Authorization": f"token {server.token}"}
    async with httpx.AsyncClient(headers=headers) as http:
        body = {"format": "json", "type": "notebook"}
        reply = await http.put(f"{server.url}/api/collaboration/session/{name}", json=body)
        reply.raise_for_status()
        session = reply.json()
    room = f"json:notebook:{session['fileId']}"
    url = f"{server.url.replace('http', 'ws', 1)}/api/collaboration/room/{room}"
    person = YNotebook()
    connecting = aconnect_ws(
        f"{url}?sessionId={session['sessionId']}",
        session_class=AsyncWebSocketSession,
        headers=headers,
    )
    async with connecting as ws, Provider(person.ydoc, HttpxWebsocket(ws, room)):
        await _until(lambda: person.cell_number > 0, "the room to sync")
        yield person


async def _until(check: Callable[[], bool], what: str, limit_s: float = SETTLE_S) -> None:
    deadline = time.monotonic() + limit_s
    while time.monotonic() < deadline:
        if check():
            return
        await asyncio.sleep(0.05)
    raise TimeoutError(f"timed out waiting for {what}")


def _sources(text: str) -> list[tuple[str, str]] | None:
    try:
        cells = json.loads(text)["cells"]
    except (ValueError, KeyError, TypeError):
        return None
    return [(str(c.get("cell_type")), source_of(c)) for c in cells]


def _shown(person: Any) -> list[tuple[str, str]]:
    return [(str(c["cell_type"]), str(c["source"])) for c in person.ycells]


async def _saved(path: Path, want: Callable[[list[tuple[str, str]]], bool], since: str) -> str:
    """The file once the room saved what `want` accepts, and nothing changed for a moment."""
    last, stable_since = "", time.monotonic()
    deadline = time.monotonic() + SETTLE_S
    while time.monotonic() < deadline:
        text = path.read_text(encoding="utf-8")
        if text != last:
            last, stable_since = text, time.monotonic()
        sources = _sources(text)
        quiet = time.monotonic() - stable_since >= QUIET_S
        if sources is not None and want(sources) and quiet and (text != since or not since):
            return text
        await asyncio.sleep(0.05)
    return last


def as_saved_by_the_room(scenario: Scenario, saved: str) -> Scenario | None:
    """The scenario with the person's notebook as the room saved it (same cells and sources,
    the room's ids and default metadata), or None when the room changed more than that."""
    nb = json.loads(saved)
    cells = nb["cells"]
    if len(cells) != len(scenario.tracked.cells) or any(
        source_of(c) != t.source for c, t in zip(cells, scenario.tracked.cells, strict=True)
    ):
        return None
    tracked = Tracked(
        {k: v for k, v in nb.items() if k != "cells"},
        [
            TCell({k: v for k, v in c.items() if k != "source"}, list(t.lines), t.origin)
            for c, t in zip(cells, scenario.tracked.cells, strict=True)
        ],
    )
    return replace(scenario, person=saved, tracked=tracked)


def _joined(nb: dict[str, Any]) -> dict[str, Any]:
    """The notebook with multi-line strings joined, as a document model takes it."""
    cells = []
    for cell in nb["cells"]:
        joined = normalized(cell, "cell")
        if "id" in cell:
            joined["id"] = cell["id"]
        if isinstance(cell.get("metadata"), dict) and "trusted" in cell["metadata"]:
            joined["metadata"]["trusted"] = cell["metadata"]["trusted"]
        cells.append(joined)
    return {**nb, "cells": cells}


async def run_live_one(
    server: LiveServer, tools: IndexTools, scenario: Scenario, name: str
) -> Result | None:
    path = server.root / name
    path.write_text(scenario.before, encoding="utf-8")
    person_nb = _joined(json.loads(scenario.person))
    wanted = [(str(c.get("cell_type")), source_of(c)) for c in person_nb["cells"]]
    async with person_in_room(server, name) as person:
        person.set(person_nb)  # the person's change, made in the room
        saved = await _saved(path, lambda s: s == wanted, "")
        moved = as_saved_by_the_room(scenario, saved)
        if moved is None:
            return None
        attempt = await asyncio.to_thread(lambda: asyncio.run(tools.apply(path, moved)))
        final = await _saved(path, lambda s: s == _shown(person), "" if attempt.refused else saved)
    return Result.of(tools.name, scenario, attempt, judge(moved, attempt.refused, final))


async def _run(server: LiveServer, scenarios: Sequence[Scenario]) -> tuple[list[Result], int]:
    python = peer_python()
    assert python is not None
    peer = RealPeer(python, "live", (server.url, server.token, server.root))
    strategies = [
        IndexTools(peer, replace=False, label=" (live room)"),
        IndexTools(peer, replace=True, label=" (live room)"),
    ]
    results: list[Result] = []
    skipped = 0
    try:
        for k, strategy in enumerate(strategies):
            for n, scenario in enumerate(scenarios):
                result = await run_live_one(server, strategy, scenario, f"s{k}-{n}.ipynb")
                if result is None:
                    skipped += 1
                else:
                    results.append(result)
    finally:
        peer.close()
    return results, skipped


def live_scenarios(scenarios: Sequence[Scenario]) -> list[Scenario]:
    """The scenarios a room can stage: not a pasted copy keeping its id (a room holds one cell
    per id, and JupyterLab gives a pasted cell a fresh one: that paste comes from a text
    editor or a git merge, a change of the file, not of the room)."""
    return [s for s in scenarios if s.person_kind is not PersonKind.PASTE_COPY]


def run_live(scenarios: Sequence[Scenario]) -> tuple[list[Result], str]:
    """The live peer's results on `scenarios`, and a note saying how they were run."""
    with live_server() as server:
        results, skipped = asyncio.run(_run(server, scenarios))
    note = (
        f"live room: jupyter-mcp-server's MCP_SERVER mode (its own collaboration client) against "
        f"a running Jupyter server with the notebook open by a person, on {len(scenarios)} "
        f"scenarios spread over person changes and classes (no duplicate-id pastes: a room "
        f"holds one cell per id)"
    )
    if skipped:
        note += f"; {skipped} skipped (the room saved a different notebook than the person's)"
    return results, note
