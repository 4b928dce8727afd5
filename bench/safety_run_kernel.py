"""The stale-run table's eval and kernel family: what reaches a kernel when an agent evaluates
code in a notebook a person changed, and whether interrupting or restarting a person's work is
ever silent.

On one running Jupyter server (kernels inherit the oracle's IPython profile, so every execute
request a kernel gets is logged with how it ended: bench/safety_run_oracle.py), hashline over
REST:

- eval rows: the agent reads a notebook of three code cells, a person changes it on disk (no
  change; the cell next to the agent's interest edited; another cell edited; a cell inserted
  above), then the agent sends `POST hashline/eval` with a snippet of its own. Verdict from the
  kernel's log: `ran only the code given` (the snippet, nothing else), `ran cell code` (any
  notebook source reached the kernel) or `ran nothing` (an error).
- kernel rows: the agent's run starts the notebook's kernel; a person, from their own client (as
  JupyterLab does), starts a long cell (and, in the `queued` rows, queues a second one behind
  it); then the agent sends `POST hashline/kernel` with `interrupt` or `restart`. Verdict:
  `stopped, said whose` (the person's code was cut off and the reply names a person's
  execution, and, when the queued cell never reached the kernel, says queued cells are
  dropped), `stopped silently` (cut off, the reply does not say), `dropped the queued cell
  silently`, `stopped nothing` (the person's code ended normally).

Hashline's targets: every eval row `ran only the code given`; every kernel row `stopped, said
whose`. Run `python -m bench.safety_run_kernel [--json PATH]`.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import time
import uuid
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import httpx
from jupyter_client.asynchronous import AsyncKernelClient

from bench.harness import RESULTS_DIR
from bench.safety_live import LiveServer, live_server
from bench.safety_run_oracle import KernelRecorder, Received

SETTLE_S = 30.0
PERSON_SAID = "an execution not started through jupyter-hashline"
QUEUED_SAID = "cells queued behind it"
EVAL_CHANGES = ("none", "edited the cell", "edited another cell", "inserted a cell above")
KERNEL_ROWS = (("interrupt", False), ("interrupt", True), ("restart", False), ("restart", True))


@dataclass(frozen=True, slots=True)
class FamilyResult:
    family: str  # "eval" or "kernel"
    row: str
    verdict: str
    received: str
    reply: str


def notebook(nonce: str, change: str) -> dict[str, Any]:
    sources = [f"a = 1  # {nonce}", f"b = a + 1  # {nonce}", f"c = b * 2  # {nonce}"]
    if change == "edited the cell":
        sources[1] = f"b = a + 100  # {nonce} person"
    elif change == "edited another cell":
        sources[2] = f"c = b * 3  # {nonce} person"
    elif change == "inserted a cell above":
        sources.insert(0, f"import os  # {nonce} person")
    cells = [
        {"cell_type": "code", "id": f"c{n}", "metadata": {}, "outputs": [],
         "execution_count": None, "source": source}
        for n, source in enumerate(sources)
    ]  # fmt: skip
    meta = {"kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}}
    return {"cells": cells, "metadata": meta, "nbformat": 4, "nbformat_minor": 5}


def received_with(log: Sequence[Received], nonce: str) -> list[Received]:
    return [r for r in log if nonce in r.code]


async def eval_row(http: httpx.AsyncClient, server: LiveServer, change: str) -> tuple[str, str]:
    """Stage one eval row; returns (nonce, the reply's text)."""
    nonce = uuid.uuid4().hex[:12]
    path = f"eval-{nonce}.ipynb"
    (server.root / path).write_text(json.dumps(notebook(nonce, "none")), encoding="utf-8")
    (await http.get("hashline/read", params={"path": path})).raise_for_status()
    (server.root / path).write_text(json.dumps(notebook(nonce, change)), encoding="utf-8")
    snippet = f"print('probe {nonce}')"
    reply = await http.post("hashline/eval", json={"path": path, "code": snippet})
    return nonce, str(reply.json().get("text") or reply.json().get("message"))


def eval_verdict(received: Sequence[Received], nonce: str) -> str:
    codes = [r.code for r in received]
    if not codes:
        return "ran nothing"
    if codes == [f"print('probe {nonce}')"]:
        return "ran only the code given"
    return "ran cell code"


async def person_client(server: LiveServer, kernel_id: str) -> AsyncKernelClient:
    client = AsyncKernelClient()
    client.load_connection_file(str(server.root / ".runtime" / f"kernel-{kernel_id}.json"))
    client.start_channels()
    await client.wait_for_ready(timeout=SETTLE_S)
    return client


async def until_state(http: httpx.AsyncClient, kernel_id: str, want: str) -> None:
    deadline = time.monotonic() + SETTLE_S
    while time.monotonic() < deadline:
        model = (await http.get(f"api/kernels/{kernel_id}")).json()
        if model.get("execution_state") == want:
            return
        await asyncio.sleep(0.05)
    raise TimeoutError(f"kernel {kernel_id} never became {want}")


async def kernel_row(
    http: httpx.AsyncClient, server: LiveServer, action: str, queued: bool
) -> tuple[str, str]:
    """Stage one kernel row; returns (nonce, the reply's text)."""
    nonce = uuid.uuid4().hex[:12]
    path = f"kernel-{nonce}.ipynb"
    (server.root / path).write_text(json.dumps(notebook(nonce, "none")), encoding="utf-8")
    tag = (await http.get("hashline/read", params={"path": path})).json()["tag"]
    started = await http.post("hashline/run", json={"path": path, "tag": tag, "cells": ["c0"]})
    started.raise_for_status()
    sessions = (await http.get("api/sessions")).json()
    kernel_id = next(s["kernel"]["id"] for s in sessions if s["path"] == path)
    person = await person_client(server, kernel_id)
    try:
        person.execute(f"import time  # {nonce} person running\ntime.sleep(20)")
        if queued:
            person.execute(f"queued = 1  # {nonce} person queued")
        await until_state(http, kernel_id, "busy")
        reply = await http.post("hashline/kernel", json={"path": path, "action": action})
        await until_state(http, kernel_id, "idle")
    finally:
        person.stop_channels()
    return nonce, str(reply.json().get("text") or reply.json().get("message"))


def kernel_verdict(received: Sequence[Received], reply: str, queued: bool) -> str:
    running = [r for r in received if "person running" in r.code]
    stopped = not running or running[0].ended != "ok"
    if not stopped:
        return "stopped nothing"
    dropped = queued and not any("person queued" in r.code for r in received)
    if dropped and QUEUED_SAID not in reply:
        return "dropped the queued cell silently"
    return "stopped, said whose" if PERSON_SAID in reply else "stopped silently"


async def family() -> list[FamilyResult]:
    with KernelRecorder() as recorder, live_server(env=recorder.env()) as server:
        headers = {"Authorization": f"token {server.token}", "X-Hashline-Agent": "bench"}
        async with httpx.AsyncClient(
            base_url=server.url + "/", headers=headers, timeout=SETTLE_S * 2
        ) as http:
            staged = [("eval", c, *await eval_row(http, server, c)) for c in EVAL_CHANGES]
            for action, queued in KERNEL_ROWS:
                row = f"{action} a person's running cell" + (" with one queued" if queued else "")
                staged.append(("kernel", row, *await kernel_row(http, server, action, queued)))
        log = recorder.received()
    results = []
    for kind, row, nonce, reply in staged:
        mine = received_with(log, nonce)
        if kind == "eval":
            verdict = eval_verdict(mine, nonce)
        else:
            verdict = kernel_verdict(mine, reply, queued="queued" in row)
        got = "; ".join(f"{r.code[:40]!r} -> {r.ended}" for r in mine) or "nothing"
        results.append(FamilyResult(kind, row, verdict, got, reply[:300]))
    return results


def met(results: Sequence[FamilyResult]) -> bool:
    wanted = {"eval": "ran only the code given", "kernel": "stopped, said whose"}
    return all(r.verdict == wanted[r.family] for r in results)


def report(results: Sequence[FamilyResult]) -> list[str]:
    lines = ["Stale-run table, eval and kernel family (hashline over REST, kernel-log oracle)"]
    lines += [f"  {r.family:<7}{r.row:<50}{r.verdict}" for r in results]
    lines.append(f"  targets met: {'yes' if met(results) else 'NO'}")
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description="stale-run table: eval and kernel family")
    parser.add_argument("--json", type=Path, default=None, help="where to write raw figures")
    args = parser.parse_args()
    results = asyncio.run(family())
    print("\n".join(report(results)))
    path = args.json or RESULTS_DIR / "safety_run_kernel.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    summary = {"table": "run-kernel", "met": met(results)}
    path.write_text(json.dumps(summary | {"results": [asdict(r) for r in results]}, indent=1))


if __name__ == "__main__":
    main()
