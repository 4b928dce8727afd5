"""An agent's edit of a notebook a person has open in JupyterLab (a collaboration room).

A real `jupyter server` runs in a subprocess on 127.0.0.1 (loopback only) with jupyter_hashline
and jupyter-collaboration. A person's Yjs client (the one JupyterLab uses: jupyter_ydoc's
`YNotebook` over the room's websocket) holds the 1,000-cell notebook open and types into a cell
between the agent's edits (unsaved typing the agent's edit must keep). Timed, with the
event-loop stall beside it (a pinger on `/api/status`, as in bench/server_path.py):
- hashline: `GET hashline/read?cells=ID` of one cell + `POST hashline/patch` of one line, which
  lands in the shared document as a granular change and saves the room.
Printed beside it, for scale (no ratio): the same change made directly in the person's own
shared document (what a keystroke costs), and, with `--peer` where jupyter-mcp-server 2.2.4 is
installed in its benchmark virtualenv (bench/safety.py installs it), the peer's
`overwrite_cell_source` on the same open notebook.

Targets (issue "the server path at engine speed"): latency <= 30 ms, worst stall <= 20 ms.
Run `python -m bench.server_room` (`--smoke`: 40 cells, two repeats).
"""

from __future__ import annotations

import asyncio
import json
import shutil
import statistics
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench.harness import RESULTS_DIR, parse_args
from bench.server import TOKEN, LocalServer, make_notebook
from bench.server_path import Pinger

LATENCY_TARGET_MS, STALL_TARGET_MS = 30.0, 20.0


class Person:
    """A Yjs client in the notebook's room, on its own event loop in a thread."""

    def __init__(self, server: LocalServer, path: str) -> None:
        self.server, self.path = server, path
        self.loop = asyncio.new_event_loop()
        self.ready = threading.Event()
        self.done: asyncio.Event | None = None
        self.notebook: Any = None
        self.error: BaseException | None = None
        self.thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> Person:
        self.thread.start()
        if not self.ready.wait(60):
            raise RuntimeError(f"the person never joined the room: {self.error!r}")
        return self

    def __exit__(self, *exc: object) -> None:
        if self.done is not None:
            self.loop.call_soon_threadsafe(self.done.set)
        self.thread.join(timeout=30)

    def _run(self) -> None:
        try:
            self.loop.run_until_complete(self._session())
        except BaseException as err:  # reported by __enter__
            self.error = err
            self.ready.set()

    async def _session(self) -> None:
        from httpx_ws import AsyncWebSocketSession, aconnect_ws
        from jupyter_ydoc import YNotebook
        from pycrdt import Provider
        from pycrdt.websocket.websocket import HttpxWebsocket

        client = self.server.client()
        status, session = client.request(
            "PUT",
            f"/api/collaboration/session/{self.path}",
            {"format": "json", "type": "notebook"},
        )
        assert status in (200, 201), session
        room = f"json:notebook:{session['fileId']}"
        url = (
            f"http://127.0.0.1:{self.server.port}/api/collaboration/room/{room}"
            f"?sessionId={session['sessionId']}"
        )
        self.notebook = YNotebook()
        self.done = asyncio.Event()
        headers = {"Authorization": f"token {TOKEN}"}
        connect = aconnect_ws(url, session_class=AsyncWebSocketSession, headers=headers)
        async with connect as ws, Provider(self.notebook.ydoc, HttpxWebsocket(ws, room)):
            while self.notebook.cell_number == 0:
                await asyncio.sleep(0.02)
            self.ready.set()
            await self.done.wait()

    def call(self, work: Callable[[], Any]) -> Any:
        """Run `work` on the person's loop (their document lives there)."""

        async def run() -> Any:
            return work()

        return asyncio.run_coroutine_threadsafe(run(), self.loop).result(timeout=30)

    def type_into(self, index: int, text: str) -> None:
        """Unsaved typing: append `text` to cell `index`'s source in the shared document."""

        def work() -> None:
            source = self.notebook.ycells[index]["source"]
            source.insert(len(str(source).encode("utf-8")), text)

        self.call(work)

    def direct_edit(self, index: int, count: int) -> float:
        """Replace the first line of cell `index` in the person's own document; seconds."""

        def work() -> float:
            source = self.notebook.ycells[index]["source"]
            start = time.perf_counter()
            first = str(source).split("\n", 1)[0]
            del source[0 : len(first.encode("utf-8"))]
            source.insert(0, f"direct_{count} = 1")
            return time.perf_counter() - start

        return float(self.call(work))


def main() -> None:
    args = parse_args("an agent's REST edit of a notebook open in a collaboration room")
    cells, repeats = (40, 2) if args.smoke else (1_000, args.repeats)
    work = Path(tempfile.mkdtemp(prefix="hashline-bench-room-"))
    agent_s: list[float] = []
    stalls_s: list[float] = []
    direct_s: list[float] = []
    try:
        root = work / "root"
        root.mkdir()
        make_notebook(root / "room.ipynb", cells)
        target = cells // 2
        with (
            LocalServer(root, work / "home") as server,
            Person(server, "room.ipynb") as person,
            Pinger(server) as pinger,
        ):
            client = server.client()
            for count in range(repeats + 1):
                person.type_into(3, f"\n# typed {count}")
                start = time.perf_counter()
                view = client.read("room.ipynb", cells=f"cell-{target}")
                line = int(view["view"].split("\n")[2].split(":", 1)[0])
                reply = client.patch(f"{view['header']}\nreplace {line}:\n+agent_{count} = 1\n")
                end = time.perf_counter()
                assert reply["sections"][0]["written"], reply
                if count:  # the first is the warm-up
                    agent_s.append(end - start)
                    stalls_s.append(pinger.worst(start, end))
                    direct_s.append(person.direct_edit(target + 1, count))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    latency_ms = statistics.median(agent_s) * 1e3
    stall_ms = max(stalls_s) * 1e3
    row = {
        "name": f"room, {cells:,} cells: REST read of one cell + one-line patch",
        "latency_ms": latency_ms,
        "stall_ms": stall_ms,
        "direct_ms": statistics.median(direct_s) * 1e3,
        "latency_target_ms": LATENCY_TARGET_MS,
        "stall_target_ms": STALL_TARGET_MS,
        "met": latency_ms <= LATENCY_TARGET_MS and stall_ms <= STALL_TARGET_MS,
    }
    print(f"\n== {row['name']}, {repeats} repeats, a person typing between edits")
    print(
        f"  hashline: {latency_ms:.1f} ms median (target <= {LATENCY_TARGET_MS:g}), worst "
        f"event-loop stall {stall_ms:.1f} ms (target <= {STALL_TARGET_MS:g})  "
        f"{'MET' if row['met'] else 'MISSED'}"
    )
    direct = f"{row['direct_ms']:.2f} ms"
    print(f"  beside it: the same change in the person's own shared document {direct}")
    path = args.json or RESULTS_DIR / "server_room.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"table": "room", "rows": [row]}, indent=1))


if __name__ == "__main__":
    main()
