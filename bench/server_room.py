"""An agent's edit of a notebook a person has open in JupyterLab (a collaboration room).

A real `jupyter server` runs in a subprocess on 127.0.0.1 (loopback only) with jupyter_hashline
and jupyter-collaboration. A person's Yjs client (the one JupyterLab uses: jupyter_ydoc's
`YNotebook` over the room's websocket) holds the 1,000-cell notebook open and types into a cell
between the agent's edits (unsaved typing the agent's edit must keep). Timed, with the
event-loop stall beside it (a pinger on `/api/status`, as in bench/server_path.py):
- hashline: `GET hashline/read?cells=ID` of one cell + `POST hashline/patch` of one line, which
  lands in the shared document as a granular change, on two servers: `live_save = "wait"` (the
  default: the reply comes once the file on disk holds the edit; with jupyter_server's own
  local-disk manager hashline writes the document's bytes itself, off the event loop, and tells
  the room its file is current, so the room neither saves the whole document again nor reloads
  it) and `live_save = "room"` (the reply comes once the edit is in the shared document; the
  room saves it as it saves typing; printed for comparison). The targets are the default's.
- apart, without a target, on each server: the room's own save of a person's typing (the
  whole document converted and saved on the event loop, `document_save_delay` after the last
  keystroke): the worst stall from the keystroke until the file holds it. The agent's edits in
  the default mode cause none of these saves (the file holds each edit when the reply comes).
Printed beside it, for scale (no ratio): the same change made directly in the person's own
shared document (what a keystroke costs), and, with `--peer` where jupyter-mcp-server 2.2.4 is
installed in its benchmark virtualenv (bench/safety.py installs it), the peer's
`overwrite_cell_source` on the same open notebook.

Targets (issue 39, "open rooms fast by default"): latency <= 30 ms, worst stall <= 20 ms, with
the default config. Run `python -m bench.server_room` (`--smoke`: 40 cells, two repeats;
`--targeted`: only the default's row, as `python -m bench --quick` runs it).
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
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.harness import RESULTS_DIR, parse_args
from bench.server import TOKEN, LocalServer, make_notebook
from bench.server_path import Pinger

LATENCY_TARGET_MS, STALL_TARGET_MS = 30.0, 20.0
MODES = ("wait", "room")  # HashlineExtension.live_save, the default first
DEFAULT_MODE = MODES[0]
ROOM_SAVE_TIMEOUT_S = 60.0


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


@dataclass(frozen=True, slots=True)
class Timed:
    agent_s: list[float]
    stalls_s: list[float]
    direct_s: list[float]
    room_save_stall_s: list[float]


def timed_edits(cells: int, repeats: int, live_save: str) -> Timed:
    """The agent's read + patch beside a person typing, on a server with `live_save`."""
    work = Path(tempfile.mkdtemp(prefix="hashline-bench-room-"))
    timed = Timed([], [], [], [])
    try:
        root = work / "root"
        root.mkdir()
        make_notebook(root / "room.ipynb", cells)
        target = cells // 2
        extra = (f"--HashlineExtension.live_save={live_save}",)
        with (
            LocalServer(root, work / "home", extra_args=extra) as server,
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
                    timed.agent_s.append(end - start)
                    timed.stalls_s.append(pinger.worst(start, end))
                    timed.direct_s.append(person.direct_edit(target + 1, count))
            timed.room_save_stall_s.append(room_save_stall(root / "room.ipynb", person, pinger))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    return timed


def room_save_stall(path: Path, person: Person, pinger: Pinger) -> float:
    """The worst stall from a person's keystroke until the room's own save put it on disk."""
    mark = f"# saved by the room {time.monotonic_ns()}"
    person.type_into(3, f"\n{mark}")
    start = time.perf_counter()
    while mark not in path.read_text(encoding="utf-8", errors="replace"):
        if time.perf_counter() - start > ROOM_SAVE_TIMEOUT_S:
            raise RuntimeError(f"the room kept the typing unsaved for {ROOM_SAVE_TIMEOUT_S} s")
        time.sleep(0.01)
    return pinger.worst(start, time.perf_counter())


def room_row(cells: int, live_save: str, timed: Timed) -> dict[str, Any]:
    """A row; only the default (`live_save = "wait"`) has the issue's targets (see the module
    docstring)."""
    latency_ms = statistics.median(timed.agent_s) * 1e3
    stall_ms = max(timed.stalls_s) * 1e3
    targeted = live_save == DEFAULT_MODE
    return {
        "name": f"room, {cells:,} cells, live_save={live_save}: read one cell + patch",
        "latency_ms": latency_ms,
        "stall_ms": stall_ms,
        "direct_ms": statistics.median(timed.direct_s) * 1e3,
        "room_save_stall_ms": max(timed.room_save_stall_s) * 1e3,
        "latency_target_ms": LATENCY_TARGET_MS if targeted else None,
        "stall_target_ms": STALL_TARGET_MS if targeted else None,
        "met": latency_ms <= LATENCY_TARGET_MS and stall_ms <= STALL_TARGET_MS
        if targeted
        else None,
    }


def main() -> None:
    args = parse_args(
        "an agent's REST edit of a notebook open in a collaboration room",
        lambda parser: parser.add_argument(
            "--targeted", action="store_true", help="only the row with targets (the default)"
        ),
    )
    cells, repeats = (40, 2) if args.smoke else (1_000, args.repeats)
    modes = [mode for mode in MODES if mode == DEFAULT_MODE or not args.targeted]
    rows = [room_row(cells, mode, timed_edits(cells, repeats, mode)) for mode in modes]
    print(f"\n== an agent's edit of a {cells:,}-cell notebook open in a room, {repeats} repeats")
    for row in rows:
        goal = (
            f"(target <= {row['latency_target_ms']:g} / {row['stall_target_ms']:g} ms) "
            f"{'MET' if row['met'] else 'MISSED'}"
            if row["met"] is not None
            else "(for comparison: the room saves the edit as it saves typing)"
        )
        print(
            f"  {row['name']}: {row['latency_ms']:.1f} ms median, worst event-loop stall "
            f"{row['stall_ms']:.1f} ms {goal}; apart, the room's own save of a person's "
            f"typing stalls {row['room_save_stall_ms']:.1f} ms"
        )
    direct = f"{rows[-1]['direct_ms']:.2f} ms"
    print(f"  beside it: the same change in the person's own shared document {direct}")
    path = args.json or RESULTS_DIR / "server_room.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"table": "room", "rows": rows}, indent=1))


if __name__ == "__main__":
    main()
