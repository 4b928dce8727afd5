"""Load: 16 concurrent REST clients on one notebook for a bounded time.

12 clients append to their own cells (every patch must land, rebased cell-aware), 4 race on
one shared cell (each patch lands or gets 409), and every client also reads, asks for
outputs, snapshots and activity in between. After every successful write the notebook on
disk is read back and validated. At the end: no 5xx, no lost edit (every row a 200 reported
is in its cell exactly once, and nothing else is), ids and the other cells unchanged. Every
answer and every acknowledged row is counted by the shared recorder before anything asserts.

Bounded: a few seconds by default; `HASHLINE_SOAK=1` runs the same scenario for 120 s
(see tests/reliability/README.md).
"""

from __future__ import annotations

import asyncio
import json
import os
import time
from pathlib import Path
from typing import Any

import nbformat
from testkit.recorder import RECORDER, Ledger
from testkit.rest import Fetch, write_notebook
from tornado.httpclient import HTTPClientError

OWN_CELL_CLIENTS = 12
RACERS = 4
SOAK = os.environ.get("HASHLINE_SOAK") == "1"
DURATION_S = 120.0 if SOAK else 3.0
MIN_PATCHES = 4  # per own-cell client, whatever the clock says


class Tracker:
    """Every answer the clients got, and what they claim landed."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.statuses: list[int] = []
        self.landed: dict[int, list[str]] = {}
        self.ledger: Ledger = RECORDER.ledger()

    async def call(self, fetch: Fetch, route: str, **kwargs: Any) -> tuple[int, dict[str, Any]]:
        if "body" in kwargs:
            kwargs = {**kwargs, "method": "POST", "body": json.dumps(kwargs["body"])}
        try:
            response = await fetch("hashline", route, **kwargs)
            status, payload = response.code, json.loads(response.body)
        except HTTPClientError as err:
            assert err.response is not None
            status, payload = err.code, json.loads(err.response.body)
        self.statuses.append(status)
        RECORDER.answer(route, status)
        assert status < 500, payload
        return status, payload

    def check_disk(self) -> None:
        nbformat.validate(nbformat.read(self.path, as_version=4))


def last_row(view: str) -> int:
    return max(int(r.split(":", 1)[0]) for r in view.split("\n")[1:] if r.split(":")[0].isdigit())


async def side_requests(tracker: Tracker, fetch: Fetch, cell: int) -> None:
    await tracker.call(fetch, "read", params={"path": "load.ipynb"})
    await tracker.call(fetch, "outputs", params={"path": "load.ipynb", "cell": f"cell-{cell}"})
    await tracker.call(fetch, "snapshots")
    await tracker.call(fetch, "activity", params={"limit": "5"})


async def own_cell_client(tracker: Tracker, fetch: Fetch, cell: int, deadline: float) -> None:
    _, view = await tracker.call(
        fetch, "read", params={"path": "load.ipynb", "cells": f"cell-{cell}"}
    )
    header, line = view["header"], last_row(view["view"])
    rows = tracker.landed.setdefault(cell, [])
    n = 0
    while n < MIN_PATCHES or time.monotonic() < deadline:
        row = f"own_{cell}_{n} = {n}"
        status, body = await tracker.call(
            fetch, "patch", body={"patch": f"{header}\ninsert after {line}:\n+{row}\n"}
        )
        if status == 200:
            rows.append(row)
            tracker.ledger.acknowledge(tracker.path.name, row)
        assert status == 200, body
        tracker.check_disk()
        [section] = body["sections"]
        header, line = section["header"], section["first_changed_line"]
        if n % 3 == 0:
            await side_requests(tracker, fetch, cell)
        n += 1


async def racer(tracker: Tracker, fetch: Fetch, who: int, deadline: float) -> None:
    rows = tracker.landed.setdefault(OWN_CELL_CLIENTS, [])
    n = 0
    while n < MIN_PATCHES or time.monotonic() < deadline:
        cell = f"cell-{OWN_CELL_CLIENTS}"
        _, view = await tracker.call(fetch, "read", params={"path": "load.ipynb", "cells": cell})
        row = f"race_{who}_{n} = {n}"
        patch = f"{view['header']}\ninsert after {last_row(view['view'])}:\n+{row}\n"
        status, body = await tracker.call(fetch, "patch", body={"patch": patch})
        if status == 200:
            rows.append(row)
            tracker.ledger.acknowledge(tracker.path.name, row)
        assert status in (200, 409), body
        if status == 200:
            tracker.check_disk()
        n += 1


async def test_sixteen_clients_lose_nothing_and_never_see_a_5xx(
    jp_fetch: Fetch, jp_root_dir: Path
) -> None:
    path = jp_root_dir / "load.ipynb"
    sources = [f"seed_{c} = {c}" for c in range(OWN_CELL_CLIENTS + 1)] + ["# untouched"]
    write_notebook(path, *sources, outputs=True)
    tracker = Tracker(path)
    deadline = time.monotonic() + DURATION_S
    clients = [own_cell_client(tracker, jp_fetch, c, deadline) for c in range(OWN_CELL_CLIENTS)]
    clients += [racer(tracker, jp_fetch, r, deadline) for r in range(RACERS)]
    await asyncio.wait_for(asyncio.gather(*clients), DURATION_S + 90)

    found = tracker.ledger.check({path.name: path.read_bytes()})  # counted first
    assert found.ok, found
    nb = nbformat.read(path, as_version=4)
    nbformat.validate(nb)
    assert [cell.id for cell in nb.cells] == [f"cell-{c}" for c in range(len(sources))]
    for c, rows in tracker.landed.items():
        lines = nb.cells[c].source.split("\n")
        assert lines[0] == f"seed_{c} = {c}"
        assert sorted(lines[1:]) == sorted(rows)  # in its own cell, nothing else, nothing twice
    assert nb.cells[-1].source == "# untouched" and nb.cells[0].outputs
    assert all(status < 500 for status in tracker.statuses)
    assert len(tracker.landed[OWN_CELL_CLIENTS]) >= 1
    assert sum(len(r) for r in tracker.landed.values()) >= OWN_CELL_CLIENTS * MIN_PATCHES
