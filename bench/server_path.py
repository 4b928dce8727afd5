"""The server path as people meet it: a REST read + one-line patch on a real `jupyter server`,
against Jupyter's own contents GET + PUT of the same notebook, with the event loop's stall
beside every figure.

A real Jupyter server runs in a subprocess on 127.0.0.1 (loopback only) with jupyter_hashline
enabled. Between two agent edits a person saves the notebook through the contents API (GET the
model, change two cells far apart, PUT it back: what JupyterLab does), so nothing the server
parsed before is reusable as it was (the cold path). For each notebook, side by side in one
run (bench/harness.py):
- hashline: `GET hashline/read?cells=ID` + `POST hashline/patch` replacing one line of that
  cell, on its own copy of the notebook; in the whole-notebook rows, `GET hashline/read`
  without `cells=` (the whole view) + the same patch;
- baseline: `GET api/contents/<nb>` + `PUT` of the model with the same line changed, on an
  identical copy. The PUT is jupyter_server 2.21's own writer (`atomic_writing`): it copies the
  old file to `.~NAME`, truncates and rewrites the notebook in place, fsyncs the file (not the
  directory) and deletes the copy. hashline's writer (server/contents_fs.py, through
  hashline/disk.py) writes a temp file beside the notebook, fsyncs it, renames it over the
  notebook and fsyncs the directory.
While either runs, a pinger thread sends `GET /api/status` every 5 ms on its own connection;
the longest a ping waits within a timed call (a ping sent before the call counts from the
call's start) is that call's event-loop stall: what everyone else on the server waits while
the edit runs. One-cell rows: 5,000 cells, 100 cells,
the shared corpus's largest notebook (image-heavy; the row fails loudly when the corpus is
absent, as a missing input must) and its notebook of median size (the small notebook people
mostly have, without a target: reported as it is). Whole-notebook rows (each on copies of its
own, with the same person's saves between edits): 5,000 cells and the image-heavy notebook.
Targets, printed beside Jupyter's own stall during its GET + PUT: one-cell rows (issue "the
server path at engine speed") ratio <= 0.15x / 0.5x / 0.3x, worst stall <= 50 ms (5,000
cells) and <= 30 ms (image-heavy); whole-notebook rows (issue 39, "every read and edit costs
what it touches") ratio <= 0.3x and worst stall <= 50 ms, both.

Run `python -m bench.server_path` (`--smoke`: tiny notebooks, two repeats).
"""

from __future__ import annotations

import json
import re
import shutil
import statistics
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import nbformat

from bench.cold import corpus_notebooks
from bench.harness import RESULTS_DIR, Comparison, compare, parse_args, report
from bench.notebook import largest_corpus_notebook
from bench.server import Client, ContentsPeer, LocalServer, PersonSaves, make_notebook

PING_EVERY_S = 0.005
ONE_CELL_GOALS: dict[str, tuple[float | None, float | None]] = {
    "nb5000": (0.15, 50.0),
    "nb100": (0.5, None),
    "corpus": (0.3, 30.0),
    "median": (None, None),
}  # (ratio, worst stall in ms) of each one-cell row: issue "the server path at engine speed"
WHOLE_GOALS: dict[str, tuple[float | None, float | None]] = {
    "nb5000": (0.3, 50.0),
    "corpus": (0.3, 50.0),
}  # the whole-notebook rows (issue 39): 5,000 cells and the image-heavy notebook


class Pinger:
    """A thread pinging `/api/status` every 5 ms; `worst(start, end)` is the longest ping that
    overlapped that window (the event loop's stall seen by everyone else on the server)."""

    def __init__(self, server: LocalServer) -> None:
        self._client = server.client()
        self._pings: list[tuple[float, float]] = []
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, daemon=True)

    def __enter__(self) -> Pinger:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    def _run(self) -> None:
        while not self._stop.is_set():
            start = time.perf_counter()
            status, _ = self._client.request("GET", "/api/status")
            end = time.perf_counter()
            if status != 200:
                raise RuntimeError(f"/api/status answered {status}")
            self._pings.append((start, end))
            pause = PING_EVERY_S - (end - start)
            if pause > 0:
                time.sleep(pause)

    def settle(self, after: float) -> None:
        """Wait until a ping sent after `after` has come back (a stall then ends before it)."""
        while not any(sent > after for sent, _ in self._pings[-3:]):
            time.sleep(0.005)

    def worst(self, start: float, end: float) -> float:
        """The longest wait of a ping inside `[start, end]`: a ping sent earlier (queued behind
        whatever the server did before this call) counts only from `start`."""
        waits = [b - max(a, start) for a, b in list(self._pings) if a < end and b > start]
        return max(waits, default=0.0)


@dataclass
class Stalls:
    """The worst event-loop stall of each timed call of one contender."""

    worst_s: list[float] = field(default_factory=list)

    def timed(self, pinger: Pinger, call: Callable[[], object]) -> Callable[[], None]:
        def run() -> None:
            start = time.perf_counter()
            call()
            self.worst_s.append(pinger.worst(start, time.perf_counter()))

        return run

    @property
    def worst_ms(self) -> float:
        return max(self.worst_s) * 1e3 if self.worst_s else 0.0


@dataclass
class Target:
    """A notebook copied twice into the server root (one per contender), the index of the cell
    both edit and the two cells far apart the person changes between edits."""

    name: str
    index: int
    person: tuple[int, int]


def median_corpus_notebook() -> Path:
    """The valid corpus notebook of median size that has a code cell to edit (the nearest
    larger one when the median has none)."""
    found = sorted(corpus_notebooks(), key=lambda p: p.stat().st_size)
    for path in found[len(found) // 2 :]:
        try:
            first_code_cell(nbformat.read(path, as_version=4))
        except ValueError:
            continue
        return path
    raise ValueError("no corpus notebook from the median size up has a code cell to edit")


def first_code_cell(nb: Any) -> int:
    for index, cell in enumerate(nb.cells):
        if cell.cell_type == "code" and cell.source.strip():
            return index
    raise ValueError("the notebook has no code cell with source to edit")


def prepare(root: Path, name: str, source: Path) -> Target:
    """Copy `source` to `<name>-rest.ipynb` and `<name>-peer.ipynb`; choose the cells."""
    nb = nbformat.read(source, as_version=4)
    index = first_code_cell(nb)
    for who in ("rest", "peer"):
        shutil.copyfile(source, root / f"{name}-{who}.ipynb")
    far = max(index + 1, len(nb.cells) - 2)
    near = 0 if index else min(len(nb.cells) - 1, 1)
    return Target(name, index, (near, far))


class RestAgent:
    """Reads its cell (or, `whole`, the whole notebook), then replaces the cell's first source
    line (the person's save between two steps makes its header stale: every step is a cold
    read + patch)."""

    def __init__(self, client: Client, path: str, index: int, *, whole: bool = False) -> None:
        self.client, self.path, self.count, self.whole = client, path, 0, whole
        view = client.read(path)["view"].split("\n")
        markers = [row for row in view[1:] if "# %% [" in row]
        self.cell = markers[index].split("id=", 1)[1].split()[0]
        self.marker = re.compile(
            rf"^(\d+):# %% \[[^\]\n]*\] id={re.escape(self.cell)}(?:\s|$)", re.M
        )

    def step(self) -> None:
        self.count += 1
        view = self.client.read(self.path, cells=None if self.whole else self.cell)
        found = self.marker.search(view["view"])
        assert found is not None, f"{self.cell} is not in the read"
        number = int(found.group(1)) + 1  # the cell's first source line
        status, body = self.client.request(
            "POST",
            "/hashline/patch",
            {"patch": f"{view['header']}\nreplace {number}:\n+edited_{self.count} = 1\n"},
        )
        assert status == 200 and body["sections"][0]["op"] == "update", body


@dataclass
class Row:
    """One notebook's comparison and the stalls of both contenders."""

    comparison: Comparison
    ours: Stalls
    jupyters: Stalls
    stall_target_ms: float | None

    def stall_line(self) -> str:
        target = "" if self.stall_target_ms is None else f"  target <= {self.stall_target_ms:g} ms"
        verdict = (
            ""
            if self.stall_target_ms is None
            else ("  MET" if self.ours.worst_ms <= self.stall_target_ms else "  MISSED")
        )
        return (
            f"  worst event-loop stall: hashline {self.ours.worst_ms:7.1f} ms (median "
            f"{statistics.median(self.ours.worst_s) * 1e3:.1f}), Jupyter's GET+PUT "
            f"{self.jupyters.worst_ms:7.1f} ms{target}{verdict}"
        )


def measure(
    server: LocalServer,
    pinger: Pinger,
    target: Target,
    *,
    repeats: int,
    ratio_target: float | None,
    stall_target_ms: float | None,
    label: str,
    whole: bool = False,
) -> Row:
    agent = RestAgent(server.client(), f"{target.name}-rest.ipynb", target.index, whole=whole)
    peer = ContentsPeer(server.client(), f"{target.name}-peer.ipynb", target.index)
    people = [PersonSaves(server.client(), f"{target.name}-{w}.ipynb", *target.person)
              for w in ("rest", "peer")]  # fmt: skip
    ours, jupyters = Stalls(), Stalls()
    comparison = compare(
        f"cold REST {'whole read' if whole else 'read'} + patch vs GET+PUT, {label}",
        ("hashline GET read + POST patch", ours.timed(pinger, agent.step)),
        ("contents GET + PUT", jupyters.timed(pinger, peer.step)),
        repeats=repeats,
        target=ratio_target,
        prepare=(people[0].save, people[1].save),
    )
    ours.worst_s, jupyters.worst_s = ours.worst_s[1:], jupyters.worst_s[1:]  # not the warm-up
    if peer.failures:
        raise RuntimeError(f"{peer.failures} of Jupyter's GET+PUT round trips failed")
    return Row(comparison, ours, jupyters, stall_target_ms)


def main() -> None:
    args = parse_args("REST read + patch vs contents GET+PUT on a real server, with stalls")
    corpus = largest_corpus_notebook()
    if corpus is None:
        raise SystemExit(
            "the shared corpus (../shared/corpus) is missing: the image-heavy row cannot run"
        )
    sizes = (("5000", 5000 if not args.smoke else 200), ("100", 100))
    repeats = 2 if args.smoke else args.repeats
    work = Path(tempfile.mkdtemp(prefix="hashline-bench-path-"))
    rows: list[Row] = []
    try:
        root = work / "root"
        root.mkdir()
        targets = []
        for name, cells in sizes:
            make_notebook(work / f"{name}.ipynb", cells)
            targets.append((prepare(root, f"nb{name}", work / f"{name}.ipynb"), f"{cells} cells"))
        for name, path in (("corpus", corpus), ("median", median_corpus_notebook())):
            size_kb = path.stat().st_size // 1024
            targets.append((prepare(root, name, path), f"{path.name[:28]} ({size_kb} KB)"))
        for name, label in [(t.name, label) for t, label in targets if t.name in WHOLE_GOALS]:
            source = root / f"{name}-rest.ipynb"  # as prepared, before any edit
            targets.append((prepare(root, f"whole-{name}", source), label))
        with LocalServer(root, work / "home") as server, Pinger(server) as pinger:
            for target, label in targets:
                whole = target.name.startswith("whole-")
                goals = WHOLE_GOALS if whole else ONE_CELL_GOALS
                ratio_goal, stall_goal = goals[target.name.removeprefix("whole-")]
                rows.append(measure(server, pinger, target, repeats=repeats,
                                    ratio_target=ratio_goal, stall_target_ms=stall_goal,
                                    label=label, whole=whole))  # fmt: skip
    finally:
        shutil.rmtree(work, ignore_errors=True)
    report("server_path REST, cold, loopback", [r.comparison for r in rows], args.json)
    for row in rows:
        print(f"{row.comparison.name}:\n{row.stall_line()}")
    payload = json.loads((args.json or RESULTS_DIR / "server_path.json").read_text())
    for entry, row in zip(payload, rows, strict=True):
        entry["stall"] = {
            "ours_ms": row.ours.worst_ms,
            "jupyter_ms": row.jupyters.worst_ms,
            "target_ms": row.stall_target_ms,
            "met": None
            if row.stall_target_ms is None
            else row.ours.worst_ms <= row.stall_target_ms,
        }
    (args.json or RESULTS_DIR / "server_path.json").write_text(json.dumps(payload, indent=1))


if __name__ == "__main__":
    main()
