"""Hostile load on one real server, bounded: nothing lost, no unexpected 5xx, the stall reported.

A Jupyter server with jupyter-collaboration; a person has `shared.ipynb` open in its room (a
real Yjs client, as JupyterLab is) and types into their own cell throughout. At the same time:
agents patch their own cells of that notebook (re-reading on 409), one runs a cell in the
notebook's kernel, and hostile clients send what no agent should: a deeply nested JSON body,
a patch of 10^5 edit operations, a read of a 10^6-line file, a body over the size limit, and a
slowloris-style body that dribbles in a byte at a time. A pinger times `GET /api/status`
all along.

Judged from the files and the answers, counted by the shared recorder before any assert:
every hostile request gets a clear 4xx, nothing gets an unexpected 5xx, every row an agent was
told landed is in the saved notebook exactly once, and every line the person typed is there.
The worst `/api/status` latency is reported (recorder figures, printed at the end of the run),
never asserted: time belongs to benchmarks.
"""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from typing import Any

import nbformat
import pytest
from testkit.recorder import RECORDER, Ledger
from testkit.rest import Api, Fetch, write_notebook
from testkit.rooms import OpenInLab, until
from tornado.httpclient import HTTPClientError
from traitlets.config import Config

pytestmark = pytest.mark.slow

NB = "shared.ipynb"
AGENTS = 4
PATCHES = 6  # per agent
PERSON_LINES = 12
RUN_CELL = f"cell-{AGENTS + 1}"


@pytest.fixture
def jp_server_config(collaboration_server_config: Config) -> Config:
    return collaboration_server_config


class Pinger:
    """`GET /api/status` every 20 ms until stopped; the worst latency seen."""

    def __init__(self, fetch: Fetch) -> None:
        self.fetch, self.worst_s, self.pings = fetch, 0.0, 0
        self.stop = asyncio.Event()

    async def run(self) -> None:
        while not self.stop.is_set():
            started = time.monotonic()
            await self.fetch("api", "status")
            self.worst_s = max(self.worst_s, time.monotonic() - started)
            self.pings += 1
            await asyncio.sleep(0.02)


def last_row(view: str) -> int:
    return max(int(r.split(":", 1)[0]) for r in view.split("\n")[1:] if r.split(":")[0].isdigit())


async def agent(api: Api, who: int, ledger: Ledger) -> None:
    """Append PATCHES rows to cell `cell-{who+1}`, re-reading whenever the answer is 409."""
    cell = f"cell-{who + 1}"
    done = 0
    while done < PATCHES:
        _, view = await api("read", params={"path": NB, "cells": cell})
        row = f"agent_{who}_{done} = {done}"
        patch = f"{view['header']}\ninsert after {last_row(view['view'])}:\n+{row}\n"
        status, body = await api("patch", method="POST", body={"patch": patch}, expect=409)
        if status == 200:
            ledger.acknowledge(NB, row)
            done += 1
        assert status in (200, 409), body


async def runner(api: Api) -> list[int]:
    """Run the last cell twice in the notebook's kernel; the statuses."""
    statuses = []
    for _ in range(2):
        _, view = await api("read", params={"path": NB, "cells": RUN_CELL})
        body = {"path": NB, "tag": view["tag"], "cells": [RUN_CELL], "timeout_s": 60}
        status, reply = await api("run", method="POST", body=body, expect=409)
        assert status in (200, 409), reply
        statuses.append(status)
    return statuses


async def person_types(person: Any, typed: list[str]) -> None:
    """The person adds a line to their cell every 50 ms, as typing does (unsaved until the
    room saves)."""
    for n in range(PERSON_LINES):
        line = f"person_{n} = {n}"
        text = person.ycells[0]["source"]
        text.insert(len(str(text)), f"\n{line}")
        typed.append(line)
        await asyncio.sleep(0.05)


async def hostile(fetch: Fetch, route: str, expected: int, **kwargs: Any) -> int:
    """One hostile request; its status, counted before anything checks it."""
    try:
        response = await fetch("hashline", route, **kwargs)
        status = response.code
    except HTTPClientError as err:
        status = err.code
    RECORDER.answer(route, status, expect=expected)
    return status


async def hostile_bodies(fetch: Fetch, tag: str) -> dict[str, int]:
    deep = b"[" * 100_000 + b"]" * 100_000
    many = [{"op": "replace", "start": 2, "end": 2, "lines": ["x"]}] * 100_000
    huge_body = json.dumps({"patch": "x" * (17 * 1024 * 1024)})
    got = {
        "deep JSON": await hostile(fetch, "patch", 400, method="POST", body=deep),
        "10^5 edits": await hostile(
            fetch, "patch", 413, method="POST",
            body=json.dumps({"edits": {"path": NB, "tag": tag, "edits": many}}),
        ),
        "10^6-line view": await hostile(fetch, "read", 413, params={"path": "huge.py"}),
        "17 MiB body": await hostile(fetch, "patch", 413, method="POST", body=huge_body),
    }  # fmt: skip
    return got


async def slow_body(port: int, base_url: str, auth: dict[str, str], seconds: float) -> bytes:
    """Announce a 100 kB patch body, then send one byte every 100 ms for `seconds`; whatever
    the server answers (it may close the connection) once the client gives up."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    head = (
        f"POST {base_url}hashline/patch HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
        f"Authorization: {auth['Authorization']}\r\nContent-Type: application/json\r\n"
        "Content-Length: 100000\r\n\r\n"
    )
    writer.write(head.encode())
    deadline = time.monotonic() + seconds
    try:
        while time.monotonic() < deadline:
            writer.write(b" ")
            await writer.drain()
            await asyncio.sleep(0.1)
    except ConnectionError:
        pass  # the server may hang up on a slow body: allowed
    writer.close()
    try:
        return await asyncio.wait_for(reader.read(), 5)
    except (ConnectionError, TimeoutError):
        return b""


def saved_lines(path: Path) -> list[str] | None:
    try:
        nb = nbformat.read(path, as_version=4)
    except Exception:  # mid-save: try again
        return None
    return [line for cell in nb.cells for line in cell.source.split("\n")]


async def test_hostile_load_loses_nothing_and_reports_the_worst_stall(
    api: Api,
    jp_fetch: Fetch,
    jp_root_dir: Path,
    jp_http_port: int,
    jp_base_url: str,
    jp_auth_header: dict[str, str],
    open_in_lab: OpenInLab,
) -> None:
    cells = ["person_start = 0", *(f"agent_{a}_start = 0" for a in range(AGENTS)), "ran = 1"]
    write_notebook(jp_root_dir / NB, *cells, outputs=True)
    (jp_root_dir / "huge.py").write_text("".join(f"r{n}\n" for n in range(1_000_000)))
    ledger, typed = RECORDER.ledger(), []
    pinger = Pinger(jp_fetch)
    before = len(RECORDER.unexpected)
    async with open_in_lab(NB) as person:
        pinging = asyncio.create_task(pinger.run())
        _, read = await api("read", params={"path": NB, "cells": "cell-0"})
        outcomes = await asyncio.gather(
            *(agent(api, a, ledger) for a in range(AGENTS)),
            runner(api),
            person_types(person, typed),
            hostile_bodies(jp_fetch, read["tag"]),
            slow_body(jp_http_port, jp_base_url, jp_auth_header, 3.0),
        )
        pinger.stop.set()
        await pinging
        want = {*typed, *(row for rows in ledger.rows.values() for row in rows)}
        await until(
            lambda: want <= set(saved_lines(jp_root_dir / NB) or ()), "the room to save", 30
        )
    found = ledger.check({NB: (jp_root_dir / NB).read_bytes()})  # counted first
    stall_ms = pinger.worst_s * 1000
    RECORDER.figures["hostile load: worst /api/status"] = f"{stall_ms:,.0f} ms"
    RECORDER.figures["hostile load: pings"] = f"{pinger.pings:,}"
    print(f"hostile load: worst /api/status latency {stall_ms:.0f} ms over {pinger.pings} pings")
    assert found.ok, found
    assert found.checked == AGENTS * PATCHES
    assert set(typed) <= set(saved_lines(jp_root_dir / NB) or ())
    hostile_statuses = outcomes[AGENTS + 2]
    assert hostile_statuses == {
        "deep JSON": 400, "10^5 edits": 413, "10^6-line view": 413, "17 MiB body": 413,
    }, hostile_statuses  # fmt: skip
    assert b" 500 " not in outcomes[-1][:20]  # the slow body is refused or timed out, never a 5xx
    assert RECORDER.unexpected[before:] == []
