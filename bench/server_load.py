"""Many agents on one server at once: 1, 4 and 16 concurrent agents, each reading its cell and
patching one line of it in a loop, on notebooks of their own and all on one shared notebook,
beside Jupyter's own contents GET + PUT under the same load.

A real `jupyter server` (bench/server.py) runs with jupyter_hashline; each agent is a thread
with its own connection. hashline's agent reads its cell (`GET hashline/read?cells=ID`) and
replaces one line of it (`POST hashline/patch`); the baseline's agent GETs the notebook model,
changes the same line and PUTs it back (what a contents-API tool does). While either runs, a
pinger sends `GET /api/status` every 5 ms (bench/server_path.py): its longest wait is the worst
stall a person on the server met. Per row: edits per second (all agents, wall clock), p50 and
p99 of one read + patch, the worst stall, and how many agents' last acknowledged edit the file
holds at the end (GET+PUT loses the others' on a shared notebook; hashline never does: a row
where it does fails loudly). Targets (issue "Where JupyterHub runs"): with 16 agents, worst
stall <= 100 ms and p99 <= 1 s, on own notebooks and on the shared one.

Run `python -m bench.server_load` (`--repeats N`: calls per agent, 15 by default; `--smoke`:
small notebooks, 3 calls).
"""

from __future__ import annotations

import json
import shutil
import statistics
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from bench.harness import RESULTS_DIR, parse_args
from bench.server import ContentsPeer, LocalServer, ReadPatchAgent, last_edits_kept, make_notebook
from bench.server_path import Pinger

AGENTS = (1, 4, 16)
CELLS, SMOKE_CELLS = 200, 20
SMOKE_STEPS = 3
STALL_TARGET_MS, P99_TARGET_MS = 100.0, 1000.0
TARGETED_AGENTS = 16


@dataclass(frozen=True, slots=True)
class Side:
    """One contender's figures in one row."""

    edits_per_s: float
    p50_ms: float
    p99_ms: float
    stall_ms: float
    failed: int  # calls that did not succeed (GET+PUT collisions; 0 for hashline)
    kept: int  # agents whose last acknowledged edit the file holds


@dataclass(frozen=True, slots=True)
class LoadRow:
    name: str
    agents: int
    shared: bool
    hashline: Side
    jupyter: Side
    met: bool | None  # None: no target at this many agents

    def line(self) -> str:
        ours, theirs = self.hashline, self.jupyter
        goal = (
            ""
            if self.met is None
            else f"  target stall <= {STALL_TARGET_MS:g} ms, p99 <= {P99_TARGET_MS:g} ms  "
            + ("MET" if self.met else "MISSED")
        )
        return (
            f"  {self.name:<28} hashline {_side(ours, self.agents)}  vs  GET+PUT "
            f"{_side(theirs, self.agents)} ({theirs.failed} failed){goal}"
        )


def _side(side: Side, agents: int) -> str:
    return (
        f"{side.edits_per_s:6.1f} edits/s p50 {side.p50_ms:6.1f} ms p99 {side.p99_ms:7.1f} ms "
        f"stall {side.stall_ms:6.1f} ms kept {side.kept}/{agents}"
    )


class Timed:
    """A stepper whose every call is timed (ms), failures counted where it counts them."""

    def __init__(self, step: Callable[[], None]) -> None:
        self.step, self.ms = step, []

    def __call__(self) -> None:
        start = time.perf_counter()
        self.step()
        self.ms.append((time.perf_counter() - start) * 1000)


def run_together(steppers: Sequence[Timed], steps: int) -> float:
    """Each stepper `steps` times in its own thread, all started at once: the wall time (s)."""
    barrier = threading.Barrier(len(steppers) + 1)

    def work(step: Timed) -> None:
        barrier.wait()
        for _ in range(steps):
            step()

    threads = [threading.Thread(target=work, args=(s,)) for s in steppers]
    for thread in threads:
        thread.start()
    barrier.wait()
    start = time.perf_counter()
    for thread in threads:
        thread.join()
    return time.perf_counter() - start


def p99(values: Sequence[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(0.99 * (len(ordered) - 1)))]


def measure(pinger: Pinger, writers: Sequence[Any], steps: int, paths: Sequence[Path]) -> Side:
    timed = [Timed(writer.step) for writer in writers]
    start = time.perf_counter()
    wall = run_together(timed, steps)
    pinger.settle(time.perf_counter())
    stall = pinger.worst(start, time.perf_counter()) * 1000
    times = [ms for t in timed for ms in t.ms]
    found = [
        last_edits_kept(path, [w for w in writers if w.path_on_disk == path]) for path in paths
    ]
    kept = sum(n for n in found if isinstance(n, int))  # a torn or missing file keeps none
    return Side(
        edits_per_s=len(times) / wall,
        p50_ms=statistics.median(times),
        p99_ms=p99(times),
        stall_ms=stall,
        failed=sum(getattr(w, "failures", 0) for w in writers),
        kept=kept,
    )


def load_row(
    server: LocalServer, pinger: Pinger, root: Path, agents: int, shared: bool, steps: int
) -> LoadRow:
    """`agents` hashline agents then as many GET+PUT agents, each on its own copy of the
    notebooks (own: one notebook per agent, cell 10; shared: one notebook, cell 10 + n)."""
    sides = []
    for kind in ("hashline", "jupyter"):
        names = [f"{kind}-{agents}-{'shared' if shared else n}.ipynb" for n in range(agents)]
        for name in set(names):
            shutil.copy(root / "pristine.ipynb", root / name)
        writers = []
        for n, name in enumerate(names):
            cell = 10 + n if shared else 10
            writer: Any = (
                ReadPatchAgent(server.client(), name, cell)
                if kind == "hashline"
                else ContentsPeer(server.client(), name, cell)
            )
            writer.path_on_disk = root / name
            writers.append(writer)
        sides.append(measure(pinger, writers, steps, sorted({root / n for n in names})))
    ours, theirs = sides
    if ours.kept != agents:
        raise AssertionError(
            f"hashline lost acknowledged edits with {agents} agents: kept {ours.kept}/{agents}"
        )
    met = None
    if agents == TARGETED_AGENTS:
        met = ours.stall_ms <= STALL_TARGET_MS and ours.p99_ms <= P99_TARGET_MS
    where = "one shared notebook" if shared else "own notebooks"
    return LoadRow(f"{agents} agent(s), {where}", agents, shared, ours, theirs, met)


def main() -> None:
    args = parse_args("Many agents on one server: 1, 4, 16 at once, vs contents GET+PUT.")
    cells = SMOKE_CELLS if args.smoke else CELLS
    steps = SMOKE_STEPS if args.smoke else args.repeats  # read + patch calls per agent
    rows: list[LoadRow] = []
    with tempfile.TemporaryDirectory(prefix="hashline-load-") as tmp:
        root, home = Path(tmp) / "root", Path(tmp) / "home"
        root.mkdir()
        make_notebook(root / "pristine.ipynb", max(cells, 10 + TARGETED_AGENTS + 1))
        with LocalServer(root, home) as server, Pinger(server) as pinger:
            for shared in (False, True):
                for agents in AGENTS:
                    rows.append(load_row(server, pinger, root, agents, shared, steps))
    print(f"\n== many agents on one server ({cells} cells, {steps} read + patch each)")
    print("\n".join(row.line() for row in rows))
    name = "server_load-smoke.json" if args.smoke else "server_load.json"
    path = args.json or RESULTS_DIR / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"table": "load", "rows": [asdict(r) for r in rows]}, indent=1))


if __name__ == "__main__":
    main()
