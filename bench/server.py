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
  GET+PUT round trips (which, unlike the patches, lose each other's updates); patches/s printed.

Run `python -m bench.server` (`--smoke` for one tiny run of each case). `LocalServer` is also
used by the tests that need a server process they can stop and start again.
"""

from __future__ import annotations

import http.client
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
from collections.abc import Callable
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

    def __init__(self, root: Path, home: Path, *, extra_args: tuple[str, ...] = ()) -> None:
        self.root, self.home, self.extra_args = root, home, extra_args
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


class PatchAgent:
    """Replaces line 2 of its own cell again and again, chaining on each reply's header."""

    def __init__(self, client: Client, path: str, cell: int) -> None:
        self.client, self.path, self.cell, self.count = client, path, cell, 0
        view = client.read(path, cells=f"cell-{cell}")
        self.header = view["header"]
        self.line = int(view["view"].split("\n")[2].split(":", 1)[0])

    def step(self) -> None:
        self.count += 1
        body = self.client.patch(
            f"{self.header}\nreplace {self.line}:\n+value_{self.cell}_0 = {self.count}  # patched\n"
        )
        self.header = body["sections"][0]["header"]


class ContentsPeer:
    """The peer's round trip: GET the notebook model, change one line of a cell, PUT it back.

    Under concurrency a GET can catch another client's save half-written (the contents manager
    writes in place), and simultaneous PUTs can collide; failed round trips are counted, not
    retried. (Round trips that succeed still overwrite each other's edits: the peer has no
    way to know.)
    """

    def __init__(self, client: Client, path: str, cell: int) -> None:
        self.client, self.url, self.cell, self.count = client, f"/api/contents/{path}", cell, 0
        self.failures = 0

    def step(self) -> None:
        self.count += 1
        status, model = self.client.request("GET", f"{self.url}?content=1&type=notebook")
        if status != 200:
            self.failures += 1
            return
        nb = model["content"]
        lines = nb["cells"][self.cell]["source"].split("\n")
        lines[0] = f"value_{self.cell}_0 = {self.count}  # patched"
        nb["cells"][self.cell]["source"] = "\n".join(lines)
        status, _ = self.client.request(
            "PUT", self.url, {"type": "notebook", "format": "json", "content": nb}
        )
        self.failures += status != 200


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


def throughput_case(
    server: LocalServer, clients: int, steps: int, repeats: int
) -> tuple[Comparison, int]:
    """The comparison and how many peer round trips failed (a GET caught a save mid-write)."""
    agents = [PatchAgent(server.client(), "rest.ipynb", 10 + c) for c in range(clients)]
    peers = [ContentsPeer(server.client(), "peer.ipynb", 10 + c) for c in range(clients)]
    row = compare(
        f"{clients} concurrent clients x {steps} edits",
        ("hashline patches", lambda: run_clients([a.step for a in agents], steps)),
        ("contents GET + PUT", lambda: run_clients([p.step for p in peers], steps)),
        repeats=repeats,
    )
    return row, sum(p.failures for p in peers)


def main() -> None:
    args = parse_args("REST patch latency and throughput vs the contents API")
    cells, steps, repeats = (20, 2, 1) if args.smoke else (300, 10, args.repeats)
    work = Path(tempfile.mkdtemp(prefix="hashline-bench-"))
    try:
        root = work / "root"
        root.mkdir()
        make_notebook(root / "rest.ipynb", cells)
        shutil.copy(root / "rest.ipynb", root / "peer.ipynb")
        size_kb = (root / "rest.ipynb").stat().st_size // 1024
        with LocalServer(root, work / "home") as server:
            rows = [person_saving_case(server, repeats), latency_case(server, repeats)]
            loads = {n: throughput_case(server, n, steps, max(1, repeats // 3)) for n in (1, 4, 8)}
        rows += [row for row, _ in loads.values()]
        report(f"server REST, notebook of {cells} cells ({size_kb} KB), loopback", rows, args.json)
        for clients, (row, failures) in loads.items():
            rate = clients * steps / statistics.median(row.candidate_s)
            peer = clients * steps / statistics.median(row.baseline_s)
            print(
                f"  {clients} client(s): {rate:7.1f} patches/s  vs  {peer:7.1f} GET+PUT/s "
                f"({failures} peer round trips failed)"
            )
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
