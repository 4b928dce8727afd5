"""REST benchmark: a one-line hashline patch vs the contents-API round trip a peer uses.

A real Jupyter server runs in a subprocess on 127.0.0.1 (loopback only) with jupyter_hashline
enabled. Cases, each measured side by side in one run (bench/harness.py):
- cold: a person saves the notebook through the contents API between two edits (as JupyterLab
  does), then the agent reads its cell and patches one line (`GET hashline/read` + `POST
  hashline/patch`) vs the peer's `GET api/contents` + `PUT` on an identical copy; target
  <= 0.6x.
- latency: one REST patch (`POST hashline/patch`, replacing one line of one cell, chained on
  the header of the previous reply) vs `GET api/contents/<nb>` + `PUT` of the model with that
  line changed, on two identical copies of one notebook; target <= 0.7x.
- throughput: 1, 4 and 8 concurrent clients, each on its own cell, REST patches vs contents
  GET+PUT round trips. Printed per client count: patches/s and GET+PUT round trips/s, counting
  only acknowledged ones (a GET that caught a save half-written, or a PUT that failed, is
  counted as failed: it took time and did nothing), and, read from the files the server saved
  once every client is done, how many clients' last acknowledged edit the file still holds
  (GET+PUT round trips overwrite each other's cells with what they read; a patch never does,
  and a hashline client's last edit missing from the file fails the benchmark).

Run `python -m bench.server` (`--smoke` for one tiny run of each case). `LocalServer` is also
used by the tests that need a server process they can stop and start again.
"""

from __future__ import annotations

import http.client
import itertools
import json
import os
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from types import TracebackType
from typing import Any

import nbformat

from bench.harness import Comparison, compare, parse_args, report

TOKEN = "hashline-bench-token"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class LocalServer:
    """A `jupyter server` subprocess on loopback with jupyter_hashline enabled.

    `home` holds its config, data (the snapshot store) and runtime dirs, so two servers started
    one after the other on the same `home` and `root` share the store: a restart.
    """

    def __init__(
        self,
        root: Path,
        home: Path,
        *,
        extra_args: tuple[str, ...] = (),
        extra_env: Mapping[str, str] | None = None,
    ) -> None:
        self.root, self.home, self.extra_args = root, home, extra_args
        self.extra_env = dict(extra_env or {})
        self.port = free_port()
        self.proc: subprocess.Popen[bytes] | None = None

    def __enter__(self) -> LocalServer:
        config = self.home / "config"
        config.mkdir(parents=True, exist_ok=True)
        enable = {"ServerApp": {"jpserver_extensions": {"jupyter_hashline": True}}}
        (config / "jupyter_server_config.json").write_text(json.dumps(enable))
        env = dict(
            os.environ,
            JUPYTER_CONFIG_DIR=str(config),
            JUPYTER_DATA_DIR=str(self.home / "data"),
            JUPYTER_RUNTIME_DIR=str(self.home / "runtime"),
            **self.extra_env,
        )
        args = [
            sys.executable, "-m", "jupyter_server", "--no-browser", "--allow-root",
            "--ip=127.0.0.1", f"--port={self.port}", "--ServerApp.port_retries=0",
            f"--ServerApp.root_dir={self.root}", f"--IdentityProvider.token={TOKEN}",
            *self.extra_args,
        ]  # fmt: skip
        log = (self.home / f"server-{self.port}.log").open("wb")
        self.proc = subprocess.Popen(args, env=env, stdout=log, stderr=subprocess.STDOUT)
        self._wait_ready(time.monotonic() + 60)
        return self

    def _wait_ready(self, deadline: float) -> None:
        while time.monotonic() < deadline:
            assert self.proc is not None
            if self.proc.poll() is not None:
                raise RuntimeError(f"the server exited; see {self.home}/server-{self.port}.log")
            try:
                if self.client().request("GET", "/api/status")[0] == 200:
                    return
            except OSError:
                time.sleep(0.1)
        raise RuntimeError("the server did not start within 60 s")

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self.proc is not None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()

    def client(self) -> Client:
        return Client(self.port)


class Client:
    """One keep-alive HTTP connection with the server's token."""

    def __init__(self, port: int) -> None:
        self.conn = http.client.HTTPConnection("127.0.0.1", port, timeout=60)
        self.headers = {"Authorization": f"token {TOKEN}", "Content-Type": "application/json"}

    def request(self, method: str, url: str, body: object = None) -> tuple[int, Any]:
        payload = None if body is None else json.dumps(body)
        self.conn.request(method, url, body=payload, headers=self.headers)
        response = self.conn.getresponse()
        data = response.read()
        try:
            return response.status, json.loads(data) if data else None
        except ValueError:  # an error page, not JSON
            return response.status, data.decode("utf-8", "replace")

    def read(self, path: str, cells: str | None = None) -> dict[str, Any]:
        query = f"path={path}" + (f"&cells={cells}" if cells else "")
        status, body = self.request("GET", f"/hashline/read?{query}")
        assert status == 200, body
        return dict(body)

    def patch(self, text: str) -> dict[str, Any]:
        status, body = self.request("POST", "/hashline/patch", {"patch": text})
        assert status == 200, body
        return dict(body)


def make_notebook(path: Path, cells: int) -> None:
    """`cells` code cells `cell-N` of ten lines; two in three have a stream output."""
    nb = nbformat.v4.new_notebook()
    for n in range(cells):
        source = "\n".join(f"value_{n}_{k} = {k} * {n}  # some code" for k in range(10))
        cell = nbformat.v4.new_code_cell(source, id=f"cell-{n}")
        if n % 3:
            text = "".join(f"output line {k} of cell {n}\n" for k in range(20))
            cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text=text)]
            cell.execution_count = n
        nb.cells.append(cell)
    nbformat.write(nb, path)


_WRITERS = itertools.count(1)  # every writer's lines name it: no two writers write alike


def edited_line(cell: int, count: int, writer: int) -> str:
    """The first line of `cell` as a writer's `count`-th edit leaves it."""
    return f"value_{cell}_0 = {count}  # patched by writer {writer}"


class PatchAgent:
    """Replaces line 2 of its own cell again and again, chaining on each reply's header.
    Every patch is acknowledged (`Client.patch` asserts it); `last` is the line the last one
    wrote."""

    def __init__(self, client: Client, path: str, cell: int) -> None:
        self.client, self.path, self.cell, self.count = client, path, cell, 0
        view = client.read(path, cells=f"cell-{cell}")
        self.header = view["header"]
        self.line = int(view["view"].split("\n")[2].split(":", 1)[0])
        self.writer, self.last = next(_WRITERS), ""

    def step(self) -> None:
        self.count += 1
        line = edited_line(self.cell, self.count, self.writer)
        body = self.client.patch(f"{self.header}\nreplace {self.line}:\n+{line}\n")
        self.header = body["sections"][0]["header"]
        self.last = line


def last_edits_kept(path: Path, writers: Sequence[PatchAgent | ContentsPeer]) -> int | str:
    """How many of `writers` (each on its own cell) find their last acknowledged line in
    their cell of the notebook saved at `path`; a writer with no acknowledged edit counts as
    not kept. When no notebook is there any more, what is there instead: "missing" or "not
    JSON" (torn by saves that overlapped)."""
    try:
        cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    except FileNotFoundError:
        return "missing"
    except (ValueError, KeyError, TypeError):
        return "not JSON"
    sources = ["".join(cell["source"]) for cell in cells]
    return sum(1 for w in writers if w.last and w.last in sources[w.cell].split("\n"))


class ContentsPeer:
    """The peer's round trip: GET the notebook model, change one line of a cell, PUT it back.

    Under concurrency a GET can catch another client's save half-written (the contents manager
    writes in place), and simultaneous PUTs can collide; failed round trips are counted, not
    retried. (Round trips that succeed still overwrite each other's edits: the peer has no
    way to know.) `done` counts the acknowledged ones; `last` is the line the last one wrote.
    """

    def __init__(self, client: Client, path: str, cell: int) -> None:
        self.client, self.url, self.cell, self.count = client, f"/api/contents/{path}", cell, 0
        self.failures = self.done = 0
        self.writer, self.last = next(_WRITERS), ""

    def step(self) -> None:
        self.count += 1
        status, model = self.client.request("GET", f"{self.url}?content=1&type=notebook")
        if status != 200:
            self.failures += 1
            return
        nb = model["content"]
        lines = nb["cells"][self.cell]["source"].split("\n")
        lines[0] = edited_line(self.cell, self.count, self.writer)
        nb["cells"][self.cell]["source"] = "\n".join(lines)
        status, _ = self.client.request(
            "PUT", self.url, {"type": "notebook", "format": "json", "content": nb}
        )
        if status == 200:
            self.done, self.last = self.done + 1, lines[0]
        else:
            self.failures += 1


def run_clients(steppers: list[Callable[[], None]], steps: int) -> None:
    """Each stepper runs `steps` times in its own thread; returns when all are done."""

    def work(step: Callable[[], None]) -> None:
        for _ in range(steps):
            step()

    threads = [threading.Thread(target=work, args=(s,)) for s in steppers]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()


def latency_case(server: LocalServer, repeats: int) -> Comparison:
    agent = PatchAgent(server.client(), "rest.ipynb", 5)
    peer = ContentsPeer(server.client(), "peer.ipynb", 5)
    return compare(
        "one-line REST patch vs contents GET+PUT",
        ("hashline POST patch", agent.step),
        ("contents GET + PUT", peer.step),
        repeats=repeats,
        target=0.7,
    )


class PersonSaves:
    """A person saving the notebook through the contents API (as JupyterLab does) between two
    edits: GET the model, change their own cells (one, or several far apart), PUT it back.
    Untimed."""

    def __init__(self, client: Client, path: str, *cells: int) -> None:
        self.client, self.url, self.cells, self.count = client, f"/api/contents/{path}", cells, 0

    def save(self) -> None:
        self.count += 1
        status, model = self.client.request("GET", f"{self.url}?content=1&type=notebook")
        assert status == 200, model
        nb = model["content"]
        for cell in self.cells:
            nb["cells"][cell]["source"] += f"\n# saved by a person {self.count}"
        status, body = self.client.request(
            "PUT", self.url, {"type": "notebook", "format": "json", "content": nb}
        )
        assert status == 200, body


class ReadPatchAgent(PatchAgent):
    """Reads its cell, then replaces its line 2: after a person's save its header is stale."""

    def step(self) -> None:
        view = self.client.read(self.path, cells=f"cell-{self.cell}")
        self.header = view["header"]
        self.line = int(view["view"].split("\n")[2].split(":", 1)[0])  # the person shifted it
        super().step()


def person_saving_case(server: LocalServer, repeats: int) -> Comparison:
    agent = ReadPatchAgent(server.client(), "rest.ipynb", 7)
    peer = ContentsPeer(server.client(), "peer.ipynb", 7)
    people = (
        PersonSaves(server.client(), "rest.ipynb", 3),
        PersonSaves(server.client(), "peer.ipynb", 3),
    )
    return compare(
        "cold REST read + patch vs GET+PUT, a person saves between",
        ("hashline GET read + POST patch", agent.step),
        ("contents GET + PUT", peer.step),
        repeats=repeats,
        target=0.6,
        prepare=(people[0].save, people[1].save),
    )


@dataclass(frozen=True)
class Throughput:
    """One client count's comparison and its tallies (see the module docstring)."""

    row: Comparison
    clients: int
    steps: int  # edits per client in one run (every patch is acknowledged: each is asserted)
    round_trips: int  # acknowledged GET+PUT round trips
    failed: int  # GET+PUT round trips that failed
    patches_kept: int  # hashline clients whose last acknowledged edit is in the file
    round_trips_kept: int | str  # the same for GET+PUT clients, or what the file is now

    def line(self) -> str:
        """Rates over the median run, the peer's scaled by its share of acknowledged round
        trips (the counts include the warm-up run; the times do not)."""
        edits = self.clients * self.steps
        ours = edits / statistics.median(self.row.candidate_s)
        acknowledged = self.round_trips / max(1, self.round_trips + self.failed)
        theirs = acknowledged * edits / statistics.median(self.row.baseline_s)
        return (
            f"  {self.clients} client(s): {ours:7.1f} patches/s, "
            f"{_kept(self.patches_kept, self.clients)}  vs  {theirs:7.1f} GET+PUT/s acknowledged "
            f"({self.failed} failed), {_kept(self.round_trips_kept, self.clients)}"
        )


def _kept(kept: int | str, clients: int) -> str:
    if isinstance(kept, str):
        return f"the saved notebook is {kept}: no edit is kept"
    return f"last edits kept {kept} of {clients}"


def throughput_case(
    server: LocalServer, clients: int, steps: int, repeats: int, pristine: Path
) -> Throughput:
    """The comparison, the acknowledged and failed round trips (a GET that caught a save
    mid-write fails), and whose last edits the saved files still hold. The peers start from
    `pristine` (a file an earlier case tore would fail every round trip)."""
    shutil.copy(pristine, server.root / "peer.ipynb")
    agents = [PatchAgent(server.client(), "rest.ipynb", 10 + c) for c in range(clients)]
    peers = [ContentsPeer(server.client(), "peer.ipynb", 10 + c) for c in range(clients)]
    row = compare(
        f"{clients} concurrent clients x {steps} edits",
        ("hashline patches", lambda: run_clients([a.step for a in agents], steps)),
        ("contents GET + PUT", lambda: run_clients([p.step for p in peers], steps)),
        repeats=repeats,
    )
    kept = last_edits_kept(server.root / "rest.ipynb", agents)
    if kept != clients:
        raise AssertionError(
            f"hashline's notebook after {clients} clients' patches: "
            f"{_kept(kept, clients)}: an acknowledged edit was lost"
        )
    return Throughput(
        row, clients, steps, sum(p.done for p in peers),
        sum(p.failures for p in peers), kept, last_edits_kept(server.root / "peer.ipynb", peers),
    )  # fmt: skip


def main() -> None:
    args = parse_args("REST patch latency and throughput vs the contents API")
    cells, steps, repeats = (20, 2, 1) if args.smoke else (300, 10, args.repeats)
    work = Path(tempfile.mkdtemp(prefix="hashline-bench-"))
    try:
        root = work / "root"
        root.mkdir()
        make_notebook(root / "rest.ipynb", cells)
        shutil.copy(root / "rest.ipynb", root / "peer.ipynb")
        shutil.copy(root / "rest.ipynb", work / "pristine.ipynb")
        size_kb = (root / "rest.ipynb").stat().st_size // 1024
        with LocalServer(root, work / "home") as server:
            rows = [person_saving_case(server, repeats), latency_case(server, repeats)]
            loads = [
                throughput_case(server, n, steps, max(1, repeats // 3), work / "pristine.ipynb")
                for n in (1, 4, 8)
            ]
        rows += [load.row for load in loads]
        report(f"server REST, notebook of {cells} cells ({size_kb} KB), loopback", rows, args.json)
        for load in loads:
            print(load.line())
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
