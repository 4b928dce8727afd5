"""A Jupyter server killed with SIGKILL while it saves agents' edits, 50 times over.

A real `jupyter server` with jupyter_hashline and the server's own contents manager (the stock
one, under jupytext's when jupytext is installed: the setup most people have), so agent edits
take the byte path (server/adapters/contents_fs.py): a temp file, fsync, rename. In each trial an
agent sends one-line edits as fast as the server acknowledges them, a reader thread reads the
notebook file from disk over and over (as any other program on the machine could), and the
server is killed with SIGKILL after a random moment, then restarted on the same root and store
for the next trial. Counted first, judged after: every read the reader made parsed as a
notebook (never empty, never partial); after every kill the file on disk is a valid notebook;
every edit acknowledged to the agent is in the final notebook exactly once; the edit in flight
at a kill is there at most once. Kills that landed inside a save (its temp file left beside
the notebook) are counted, so the trials are known to have hit the window they test.
"""

from __future__ import annotations

import contextlib
import json
import os
import random
import signal
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

import nbformat
import pytest

from bench.server import Client, LocalServer

TRIALS = 50
CELLS = 40
TEMP_SUFFIX = ".hashline-tmp"
pytestmark = pytest.mark.slow


def make_notebook(path: Path) -> None:
    """About 2 MB, so that a save takes long enough to be hit by a kill."""
    nb = nbformat.v4.new_notebook()
    for n in range(CELLS):
        cell = nbformat.v4.new_code_cell(f"v{n} = {n}", id=f"c{n}")
        text = "".join(f"output line {k} of cell {n}, padded to be long\n" for k in range(1000))
        cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text=text)]
        cell.execution_count = n + 1
        nb.cells.append(cell)
    nbformat.write(nb, path)


@dataclass
class Counts:
    """What the trials saw, counted before anything is asserted."""

    reads: int = 0
    torn_reads: list[str] = field(default_factory=list)
    torn_after_kill: list[int] = field(default_factory=list)
    acknowledged: list[str] = field(default_factory=list)
    in_flight: list[str] = field(default_factory=list)
    kills_mid_save: int = 0


class Reader(threading.Thread):
    """Reads the notebook file from disk in a loop and parses every read."""

    def __init__(self, path: Path, counts: Counts) -> None:
        super().__init__(daemon=True)
        self.path, self.counts = path, counts
        self.stop = threading.Event()

    def run(self) -> None:
        while not self.stop.is_set():
            data = self.path.read_bytes()
            self.counts.reads += 1
            try:
                nb = json.loads(data)
                assert len(nb["cells"]) == CELLS
            except (ValueError, KeyError, AssertionError, TypeError) as err:
                self.counts.torn_reads.append(f"{len(data)} bytes: {err!r}"[:200])


class Agent(threading.Thread):
    """Edits the first cell again and again, each edit adding one unique line, until killed."""

    def __init__(self, client: Client, trial: int, counts: Counts) -> None:
        super().__init__(daemon=True)
        self.client, self.trial, self.counts = client, trial, counts
        self.first_ack = threading.Event()

    def run(self) -> None:
        with contextlib.suppress(OSError):  # the server dies under this thread
            header = self.client.read("nb.ipynb")["header"]
            for k in range(10_000):
                mark = f"mark_{self.trial}_{k} = 1"
                self.counts.in_flight.append(mark)
                status, body = self.client.request(
                    "POST", "/hashline/patch", {"patch": f"{header}\ninsert after 1:\n+{mark}\n"}
                )
                if status != 200:
                    return
                self.counts.in_flight.remove(mark)
                self.counts.acknowledged.append(mark)
                header = body["sections"][0]["header"]
                self.first_ack.set()


def test_sigkill_during_saves_never_leaves_a_torn_notebook_or_loses_an_edit(
    tmp_path: Path,
) -> None:
    root, home = tmp_path / "root", tmp_path / "home"
    root.mkdir()
    notebook = root / "nb.ipynb"
    make_notebook(notebook)
    counts, chance = Counts(), random.Random(20261201)
    for trial in range(TRIALS):
        _one_trial(root, home, notebook, trial, counts, chance.uniform(0.02, 0.4))
    final = notebook.read_text(encoding="utf-8")
    lost = [mark for mark in counts.acknowledged if final.count(f'"{mark}') != 1]
    doubled = [mark for mark in counts.in_flight if final.count(f'"{mark}') > 1]
    print(
        f"\n{TRIALS} kills ({counts.kills_mid_save} inside a save), {counts.reads} reads of the "
        f"file, {len(counts.torn_reads)} torn; {len(counts.acknowledged)} acknowledged edits, "
        f"{len(lost)} lost or duplicated; {len(counts.in_flight)} in flight, "
        f"{len(doubled)} applied twice"
    )
    assert counts.torn_reads == [] and counts.torn_after_kill == []
    assert lost == [] and doubled == []
    assert counts.acknowledged, "no edit was acknowledged: the trials tested nothing"
    assert counts.kills_mid_save > 0, "no kill landed inside a save: the window was never hit"
    nbformat.validate(nbformat.reads(final, as_version=4))


def _one_trial(
    root: Path, home: Path, notebook: Path, trial: int, counts: Counts, delay_s: float
) -> None:
    reader = Reader(notebook, counts)
    with LocalServer(root, home) as server:
        agent = Agent(server.client(), trial, counts)
        reader.start()
        agent.start()
        assert agent.first_ack.wait(60), "the agent's first edit was never acknowledged"
        deadline = time.monotonic() + delay_s
        while time.monotonic() < deadline and agent.is_alive():
            time.sleep(0.001)  # the kill's moment is random: that is the test
        assert server.proc is not None
        os.kill(server.proc.pid, signal.SIGKILL)
        server.proc.wait(timeout=30)
        agent.join(timeout=30)
    reader.stop.set()
    reader.join(timeout=30)
    left = sorted(root.glob(f".*{TEMP_SUFFIX}"))
    counts.kills_mid_save += bool(left)
    for temp in left:  # what a killed save leaves; the next trial starts clean
        temp.unlink()
    try:
        nbformat.reads(notebook.read_text(encoding="utf-8"), as_version=4)
    except Exception:
        counts.torn_after_kill.append(trial)
