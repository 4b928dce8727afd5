"""The MCP server on a directory (`jupyter-hashline --root DIR mcp`) killed with SIGKILL while
it saves, 50 times; and the next read recovering what a killed Jupyter save left.

Each trial starts a real MCP process (stdio, JSON-RPC as any MCP client speaks it), reads the
notebook, sends edits (each appends one unique row to the first cell; the reply says it
landed), then sends one more and kills the process with SIGKILL a few milliseconds later,
before its reply. All along a watcher thread re-reads the notebook file as fast as it can:
no reader may ever see it empty, cut off or invalid. After the kill the fault oracle
(testkit.faults.Trial) judges the file: every acknowledged row there exactly once, the
unacknowledged one landed whole or not at all; the shared recorder counts the faults and the
acknowledged edits before anything asserts.

Jupyter's own atomic writer works otherwise (it copies the file to `.~NAME` and rewrites NAME
in place): a save killed there leaves NAME torn. The next read in directory mode (the CLI and
`mcp --root`) restores `.~NAME` as jupyter_server does, keeping the torn file as NAME.invalid.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import nbformat
import pytest
from testkit.faults import Edit
from testkit.recorder import RECORDER

pytestmark = pytest.mark.slow

TRIALS = 50
NB = "nb.ipynb"


def make_notebook(path: Path) -> None:
    """A few hundred kB (outputs included), so a save takes long enough to be interrupted."""
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell("rows = []", id="c0")]
    for n in range(1, 120):
        cell = nbformat.v4.new_code_cell(f"v{n} = {n}\nprint(v{n})", id=f"c{n}")
        cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text=f"{n}\n" * 200)]
        cell.execution_count = n
        nb.cells.append(cell)
    nbformat.write(nb, path)


class McpProcess:
    """`python -m jupyter_hashline.cli --root ROOT mcp`, spoken to over stdio."""

    def __init__(self, root: Path, data_dir: Path) -> None:
        env = dict(os.environ, JUPYTER_DATA_DIR=str(data_dir))
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "jupyter_hashline.cli", "--root", str(root), "mcp"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            env=env,
        )
        self.ids = 0
        self.send("initialize", {
            "protocolVersion": "2025-06-18", "capabilities": {},
            "clientInfo": {"name": "crash-test", "version": "1"},
        })  # fmt: skip

    def ready(self) -> McpProcess:
        """Wait for the answer to `initialize` (the process starts while another works)."""
        self.reply()
        self.notify("notifications/initialized")
        return self

    def send(self, method: str, params: dict[str, Any]) -> None:
        self.ids += 1
        self._write({"jsonrpc": "2.0", "id": self.ids, "method": method, "params": params})

    def notify(self, method: str) -> None:
        self._write({"jsonrpc": "2.0", "method": method})

    def _write(self, message: dict[str, Any]) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write((json.dumps(message) + "\n").encode())
        self.proc.stdin.flush()

    def reply(self) -> dict[str, Any]:
        assert self.proc.stdout is not None
        while True:
            line = self.proc.stdout.readline()
            assert line, "the MCP process closed its output"
            message: dict[str, Any] = json.loads(line)
            if message.get("id") == self.ids:
                return message

    def call(self, tool: str, arguments: dict[str, Any]) -> tuple[bool, str]:
        self.send("tools/call", {"name": tool, "arguments": arguments})
        result = self.reply()["result"]
        return bool(result.get("isError")), str(result["content"][0]["text"])

    def kill(self) -> None:
        os.kill(self.proc.pid, signal.SIGKILL)
        self.proc.wait(timeout=30)


class Watcher(threading.Thread):
    """Reads the notebook over and over until stopped; every moment a reader saw it torn."""

    def __init__(self, path: Path) -> None:
        super().__init__(daemon=True)
        self.path, self.reads, self.torn = path, 0, []
        self.stop = threading.Event()

    def run(self) -> None:
        while not self.stop.is_set():
            data = self.path.read_bytes()
            self.reads += 1
            try:
                nbformat.reads(data.decode("utf-8"), as_version=4)
            except Exception as error:
                self.torn.append(f"{len(data)} bytes: {type(error).__name__}")


def header_of(reply: str) -> str:
    """The `[path#TAG]` a read or an edit reply starts with."""
    first = reply.split("\n", 1)[0]
    return first[: first.index("]") + 1]


def marker_row(view: str, cell: str) -> int:
    """The number of the row holding cell `cell`'s marker."""
    rows = [r.split(":", 1) for r in view.split("\n")[1:] if r.split(":", 1)[0].isdigit()]
    return next(int(n) for n, text in rows if text.endswith(f"id={cell}"))


def last_row(view: str) -> int:
    numbers = [r.split(":", 1)[0] for r in view.split("\n")[1:]]
    return max(int(n) for n in numbers if n.isdigit())


def trial(root: Path, mcp: McpProcess, number: int, rng: random.Random, fault: Any) -> None:
    """One MCP process: acknowledged edits, then one in flight when SIGKILL lands."""
    with fault(root, f"trial {number}", leftovers=True) as judged:
        mcp.ready()
        is_error, view = mcp.call("notebook_read", {"path": NB, "cells": ["c0", "c1"]})
        assert not is_error, view
        header, end_of_c1 = header_of(view), last_row(view)
        last = marker_row(view, "c1") - 1  # the last line of c0
        acknowledged = rng.randint(0, 3)
        for k in range(acknowledged):
            row = f"rows.append('t{number}_{k}')"
            is_error, reply = mcp.call(
                "notebook_edit", {"patch": f"{header}\ninsert after {last}:\n+{row}\n"}
            )
            assert not is_error, reply
            judged.acknowledge(Edit(NB, "append", text=row, cell=0))
            header, last = header_of(reply), last + 1
        # The edit in flight goes to the next cell (its last line: after its marker and its
        # source), so whether it landed does not depend on the order of the others.
        row = f"print('t{number}_killed')"
        judged.outcome_unknown(Edit(NB, "append", text=row, cell=1))
        end_of_c1 += acknowledged
        mcp.send("tools/call", {
            "name": "notebook_edit",
            "arguments": {"patch": f"{header}\ninsert after {end_of_c1}:\n+{row}\n"},
        })  # fmt: skip
        time.sleep(rng.uniform(0.0, 0.08))
        mcp.kill()


def test_an_mcp_process_killed_mid_save_leaves_the_old_or_the_new_notebook(
    tmp_path: Path, fault: Any
) -> None:
    root, data_dir = tmp_path / "root", tmp_path / "data"
    root.mkdir()
    make_notebook(root / NB)
    watcher = Watcher(root / NB)
    watcher.start()
    rng = random.Random(25)
    before = len(RECORDER.faults)
    spare = McpProcess(root, data_dir)
    try:
        for number in range(TRIALS):
            mcp, spare = spare, McpProcess(root, data_dir)  # the next one starts meanwhile
            trial(root, mcp, number, rng, fault)
    finally:
        spare.kill()
        watcher.stop.set()
        watcher.join(timeout=10)
    RECORDER.figures["killed MCP: reads while saving"] = f"{watcher.reads:,}"
    RECORDER.figures["killed MCP: torn reads seen"] = f"{len(watcher.torn):,}"
    assert watcher.torn == [], watcher.torn[:5]
    judged = list(RECORDER.faults.values())[before:]
    assert len(judged) == TRIALS and all(judged)
    nb = nbformat.read(root / NB, as_version=4)
    rows = nb.cells[0].source.split("\n")[1:]
    assert len(rows) == len(set(rows))  # nothing twice


# -- Jupyter's `.~` intermediate, recovered on the next read in directory mode ------------------


def killed_jupyter_save(path: Path) -> bytes:
    """The files a Jupyter save killed halfway leaves: `.~NAME` holding the old notebook, NAME
    cut off in the middle of the new one. Returns the old bytes."""
    old = path.read_bytes()
    (path.parent / f".~{path.name}").write_bytes(old)
    path.write_bytes(old[: len(old) // 3])
    return old


def test_the_cli_recovers_a_killed_jupyter_saves_backup_on_read(tmp_path: Path) -> None:
    root = tmp_path / "root"
    root.mkdir()
    make_notebook(root / NB)
    old = killed_jupyter_save(root / NB)
    torn = (root / NB).read_bytes()
    env = dict(os.environ, JUPYTER_DATA_DIR=str(tmp_path / "data"))
    done = subprocess.run(
        [sys.executable, "-m", "jupyter_hashline.cli", "--root", str(root), "read", NB],
        capture_output=True, text=True, env=env, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "1:# %% [code] id=c0" in done.stdout
    assert (root / NB).read_bytes() == old
    assert (root / f"{NB}.invalid").read_bytes() == torn
    assert not (root / f".~{NB}").exists()


def test_mcp_on_a_directory_recovers_it_too_and_edits_the_restored_notebook(
    tmp_path: Path,
) -> None:
    root = tmp_path / "root"
    root.mkdir()
    make_notebook(root / NB)
    old = killed_jupyter_save(root / NB)
    mcp = McpProcess(root, tmp_path / "data").ready()
    try:
        is_error, view = mcp.call("notebook_read", {"path": NB, "cells": ["c0"]})
        assert not is_error, view
        assert (root / NB).read_bytes() == old and (root / f"{NB}.invalid").is_file()
        patch = f"{header_of(view)}\nreplace 2:\n+rows = ['restored']\n"
        is_error, reply = mcp.call("notebook_edit", {"patch": patch})
        assert not is_error, reply
    finally:
        mcp.kill()
    assert nbformat.read(root / NB, as_version=4).cells[0].source == "rows = ['restored']"
