"""One huge request on a real server: how long everyone else waits while it is handled.

A real `jupyter server` (bench/server.py) with a pinger thread on `/api/status` every 5 ms
(bench/server_path.py). An authenticated agent sends, one at a time, bodies encoded before the
clock starts (the client's own JSON encoding is not the server's stall):
- 400,000 edits in the JSON form (13.6 MB; over `max_edits_per_patch`, refused with 413);
- 400,000 edits in the text form (4 MB of `delete 1` lines; refused with 413);
- 10,000 one-line edits, one in each cell of a 10,000-cell notebook (the most one patch may
  carry: applied, every diff and undo plan recorded).
Beside each, Jupyter's own handling of a request of the same size: a contents PUT of a notebook
model of that many bytes (Jupyter parses and validates it on its event loop). A ping's wait
counts while the request is handled; after each request the bench waits for a ping sent after
the reply, so a stall is never cut short. Targets (issue "every read and edit costs what it
touches"): refused requests stall others <= 100 ms; the applied one, reported beside them, has
the same target.

Run `python -m bench.hostile` (`--smoke`: smaller bodies; the figures are not measurements).
"""

from __future__ import annotations

import json
import shutil
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import nbformat

from bench.harness import RESULTS_DIR, parse_args
from bench.server import Client, LocalServer
from bench.server_path import Pinger

STALL_TARGET_MS = 100.0


@dataclass(frozen=True)
class Sent:
    status: int
    seconds: float
    stall_s: float


def send(client: Client, pinger: Pinger, method: str, url: str, body: bytes) -> Sent:
    """`body` sent as it is; the worst stall while it was handled (see the module docstring)."""
    start = time.perf_counter()
    client.conn.request(method, url, body=body, headers=client.headers)
    response = client.conn.getresponse()
    response.read()
    end = time.perf_counter()
    pinger.settle(end)  # no stall is cut short by the reply
    return Sent(response.status, end - start, pinger.worst(start, end))


def notebook(path: Path, cells: int) -> None:
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "language": "python", "display_name": "P"}
    nb.cells = [
        nbformat.v4.new_code_cell(f"value_{i} = {i}\nprint(value_{i})", id=f"cell-{i}")
        for i in range(cells)
    ]
    nbformat.write(nb, path)


def same_size_model(size: int) -> bytes:
    """A contents PUT body of about `size` bytes: a notebook of small code cells."""
    cell = {"cell_type": "code", "source": "x = 1", "metadata": {}, "outputs": []}
    cell["execution_count"] = None
    one = len(json.dumps(cell)) + 2
    nb = nbformat.v4.new_notebook()
    content = {**nb, "cells": [dict(cell, id=f"c{i}") for i in range(max(1, size // (one + 8)))]}
    return json.dumps({"type": "notebook", "format": "json", "content": content}).encode()


def bodies(client: Client, cells: int, scale: int) -> list[tuple[str, int, bytes]]:
    """(what, expected status, body) of each hostile request."""
    view = client.read("big.ipynb")
    header = view["header"]
    path, tag = header[1:-1].rsplit("#", 1)
    edits = [{"op": "delete", "start": 1, "end": 1}] * (400_000 // scale)
    numbers = [
        int(row.split(":", 1)[0]) + 1 for row in view["view"].split("\n")[1:] if "# %% [" in row
    ][:cells]
    spread = "".join(f"replace {n}:\n+value = {n}\n" for n in numbers)
    return [
        (
            f"{len(edits):,} edits, JSON form: refused",
            413,
            json.dumps({"edits": {"path": path, "tag": tag, "edits": edits}}).encode(),
        ),
        (
            f"{len(edits):,} edits, text form: refused",
            413,
            json.dumps({"patch": header + "\n" + "delete 1\n" * len(edits)}).encode(),
        ),
        (
            f"{len(numbers):,} edits in {cells:,} cells: applied",
            200,
            json.dumps({"patch": f"{header}\n{spread}"}).encode(),
        ),
    ]


def main() -> None:
    args = parse_args("one huge request on a real server: the stall everyone else waits")
    cells, scale = (200, 20) if args.smoke else (10_000, 1)
    work = Path(tempfile.mkdtemp(prefix="hashline-bench-hostile-"))
    rows: list[dict[str, Any]] = []
    try:
        root = work / "root"
        root.mkdir()
        notebook(root / "big.ipynb", cells)
        with LocalServer(root, work / "home") as server, Pinger(server) as pinger:
            client = server.client()
            for what, expected, body in bodies(client, cells, scale):
                ours = send(client, pinger, "POST", "/hashline/patch", body)
                if ours.status != expected:
                    raise RuntimeError(f"{what}: answered {ours.status}, expected {expected}")
                theirs = send(client, pinger, "PUT", "/api/contents/same.ipynb",
                              same_size_model(len(body)))  # fmt: skip
                stall_ms = ours.stall_s * 1e3
                rows.append({
                    "name": f"{what} ({len(body) / 1e6:.1f} MB)",
                    "latency_ms": ours.seconds * 1e3,
                    "stall_ms": stall_ms,
                    "jupyter_put_ms": theirs.seconds * 1e3,
                    "jupyter_stall_ms": theirs.stall_s * 1e3,
                    "stall_target_ms": STALL_TARGET_MS,
                    "met": stall_ms <= STALL_TARGET_MS,
                })  # fmt: skip
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print("hostile requests on a real server (a pinger on /api/status every 5 ms)")
    for row in rows:
        verdict = "MET" if row["met"] else "MISSED"
        print(
            f"  {row['name']}: {row['latency_ms']:.0f} ms, others stalled "
            f"{row['stall_ms']:.1f} ms (target <= {STALL_TARGET_MS:g} ms: {verdict}); Jupyter's "
            f"contents PUT of the same size {row['jupyter_put_ms']:.0f} ms, stall "
            f"{row['jupyter_stall_ms']:.1f} ms"
        )
    path = args.json or RESULTS_DIR / "hostile.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"table": "requests", "rows": rows}, indent=1))


if __name__ == "__main__":
    main()
