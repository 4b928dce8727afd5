"""The ways an agent can apply its intended change, for the stale-edit safety table.

Each strategy sees the notebook once as the agent read it (`prepare`, before the person's
change) and then applies the intent to whatever is on disk (`apply`), returning an `Attempt`:
refused or not, the tool's message, and the bytes of the tool-call arguments the agent had to
emit (JSON, as a tool call carries them; the proxy for output tokens).

- hashline: this project, through the real `Patcher` + `NotebookFilesystem` over disk.
- cell-index overwrite / cell-index string replace: jupyter-mcp-server's `overwrite_cell_source`
  and `edit_cell_source`. With the real package installed in a separate virtualenv
  (`PEER_VENV`, made by `install_peer`), its tools' own file-mode code runs in a worker process
  (bench/peer_worker.py), no server involved; without it, `ModelPeer` reproduces that code's
  behaviour: nbformat read, index range check, `old_string` must occur exactly once (literal),
  first occurrence replaced, nbformat write.
- cell-id overwrite: a model of Claude Code's NotebookEdit (replace mode): find the cell by
  id (ids `cell-N` address cells by index where the notebook stores none), set its source,
  write the JSON back; no check against the read.
- whole-notebook write-back: the agent edits its copy of the JSON it read and writes the file.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import nbformat

from bench.safety_scenarios import Scenario, source_of
from jupyter_hashline.hashline import HashlineError, InMemorySnapshotStore, Patcher
from jupyter_hashline.hashline.disk import DiskFilesystem
from jupyter_hashline.notebook import NotebookFilesystem, parse_projection

PEER_PACKAGE = "jupyter-mcp-server==2.2.4"
PEER_VENV = Path(os.environ.get("HASHLINE_PEER_VENV", "/tmp/hashline-bench-peer-venv"))
WORKER = Path(__file__).resolve().parent / "peer_worker.py"


@dataclass(frozen=True, slots=True)
class Attempt:
    refused: bool
    message: str
    payload_bytes: int


def _payload(args: dict[str, Any]) -> int:
    return len(json.dumps(args, ensure_ascii=False).encode("utf-8"))


class Strategy(Protocol):
    name: str

    async def prepare(self, path: Path, scenario: Scenario) -> None: ...

    async def apply(self, path: Path, scenario: Scenario) -> Attempt: ...


class HashlineStrategy:
    """Read through the projection, then send a `replace` patch under the read's header."""

    name = "hashline"

    def __init__(self) -> None:
        self._patcher: Patcher | None = None
        self._patch = ""

    async def prepare(self, path: Path, scenario: Scenario) -> None:
        self._patcher = Patcher(
            NotebookFilesystem(DiskFilesystem(path.parent)), InMemorySnapshotStore()
        )
        read = await self._patcher.read(path.name)
        intent = scenario.intent
        marker = parse_projection(read.text)[intent.cell_index].line
        first, last = marker + 1 + intent.first, marker + 1 + intent.last
        shown = read.text.split("\n")[first - 1 : last]
        old = source_of(json.loads(scenario.before)["cells"][intent.cell_index]).split("\n")
        if shown != old[intent.first : intent.last + 1]:
            raise AssertionError(f"{scenario.name}: the projection does not show the lines")
        span = f"{first}" if first == last else f"{first}..{last}"
        rows = "".join(f"+{line}\n" for line in intent.new_lines)
        self._patch = f"{read.header}\nreplace {span}:\n{rows}"

    async def apply(self, path: Path, scenario: Scenario) -> Attempt:
        assert self._patcher is not None
        payload = _payload({"patch": self._patch})
        try:
            result = await self._patcher.apply(self._patch)
        except HashlineError as error:
            return Attempt(True, str(error), payload)
        return Attempt(False, result.to_text(), payload)


class Peer(Protocol):
    kind: str  # "jupyter-mcp-server X.Y.Z (real code)" or "model of ..."

    def overwrite(self, path: Path, index: int, source: str) -> tuple[bool, str]: ...

    def edit(self, path: Path, index: int, old: str, new: str) -> tuple[bool, str]: ...


class ModelPeer:
    """jupyter-mcp-server's file-mode cell writers, modelled on their code (2.2.4)."""

    kind = "model of jupyter-mcp-server 2.2.4 (the real package is not installed)"

    def _write(self, path: Path, index: int, change: Any) -> tuple[bool, str]:
        nb = nbformat.read(path, as_version=4)
        if index >= len(nb.cells):
            return False, f"Cell index {index} is out of range. Notebook has {len(nb.cells)} cells."
        try:
            nb.cells[index].source = change(nb.cells[index].source)
        except Exception as error:  # as the real tool does: its exception is the agent's reply
            return False, f"{type(error).__name__}: {error}"
        nbformat.write(nb, path)
        return True, f"Cell {index} edited successfully"

    def overwrite(self, path: Path, index: int, source: str) -> tuple[bool, str]:
        return self._write(path, index, lambda _: source)

    def edit(self, path: Path, index: int, old: str, new: str) -> tuple[bool, str]:
        def replace(source: str) -> str:
            first = source.find(old)
            if first == -1:
                raise ValueError("old_string not found in cell source")
            if source.find(old, first + 1) != -1:
                raise ValueError("old_string is not unique in cell source")
            return source.replace(old, new, 1)

        return self._write(path, index, replace)


class RealPeer:
    """jupyter-mcp-server's own code, run by bench/peer_worker.py in the peer virtualenv."""

    def __init__(self, python: Path) -> None:
        self.proc = subprocess.Popen(
            [str(python), str(WORKER)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        ok, version = self._reply()
        if not ok:
            raise RuntimeError(f"the jupyter-mcp-server worker failed to start: {version}")
        self.kind = f"jupyter-mcp-server {version} (its real tool code, in process, no server)"

    def _reply(self) -> tuple[bool, str]:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            if line.startswith("@@peer "):
                reply = json.loads(line[len("@@peer ") :])
                return bool(reply["ok"]), str(reply["message"])
        raise RuntimeError("the jupyter-mcp-server worker exited")

    def _call(self, request: dict[str, Any]) -> tuple[bool, str]:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps(request) + "\n")
        self.proc.stdin.flush()
        return self._reply()

    def overwrite(self, path: Path, index: int, source: str) -> tuple[bool, str]:
        return self._call(
            {"op": "overwrite", "path": str(path), "cell_index": index, "cell_source": source}
        )

    def edit(self, path: Path, index: int, old: str, new: str) -> tuple[bool, str]:
        request = {"path": str(path), "cell_index": index, "old_string": old, "new_string": new}
        return self._call({"op": "edit", **request})

    def close(self) -> None:
        if self.proc.stdin is not None:
            self.proc.stdin.close()
        self.proc.wait(timeout=30)


def peer_python(venv: Path = PEER_VENV) -> Path | None:
    """The peer virtualenv's interpreter, where the virtualenv exists."""
    python = venv / "bin" / "python"
    return python if python.exists() else None


def install_peer(venv: Path = PEER_VENV) -> str | None:
    """Make the peer virtualenv with `pip`; None when done, else why it failed."""
    steps = [
        [sys.executable, "-m", "venv", str(venv)],
        [str(venv / "bin" / "python"), "-m", "pip", "install", "-q", PEER_PACKAGE],
    ]
    for step in steps:
        done = subprocess.run(step, capture_output=True, text=True, check=False, timeout=900)
        if done.returncode != 0:
            return (done.stderr or done.stdout).strip().splitlines()[-1:][0]
    return None


def _old_snippet(lines: list[str], first: int, last: int) -> tuple[int, int]:
    """The smallest run of lines around first..last that occurs once in the cell (as an agent
    following edit_cell_source's instructions would choose its `old_string`)."""
    source = "\n".join(lines)
    lo, hi = first, last
    while True:
        snippet = "\n".join(lines[lo : hi + 1])
        if source.count(snippet) == 1 or (lo == 0 and hi == len(lines) - 1):
            return lo, hi
        lo, hi = max(0, lo - 1), min(len(lines) - 1, hi + 1)


class IndexOverwrite:
    name = "cell-index overwrite"

    def __init__(self, peer: Peer) -> None:
        self.peer = peer

    async def prepare(self, path: Path, scenario: Scenario) -> None:
        return None

    async def apply(self, path: Path, scenario: Scenario) -> Attempt:
        i = scenario.intent
        source = i.apply_to(source_of(json.loads(scenario.before)["cells"][i.cell_index]))
        ok, message = self.peer.overwrite(path, i.cell_index, source)
        return Attempt(
            not ok, message, _payload({"cell_index": i.cell_index, "cell_source": source})
        )


class IndexStringReplace:
    name = "cell-index string replace"

    def __init__(self, peer: Peer) -> None:
        self.peer = peer

    async def prepare(self, path: Path, scenario: Scenario) -> None:
        return None

    async def apply(self, path: Path, scenario: Scenario) -> Attempt:
        i = scenario.intent
        lines = source_of(json.loads(scenario.before)["cells"][i.cell_index]).split("\n")
        lo, hi = _old_snippet(lines, i.first, i.last)
        old = "\n".join(lines[lo : hi + 1])
        new = "\n".join([*lines[lo : i.first], *i.new_lines, *lines[i.last + 1 : hi + 1]])
        ok, message = self.peer.edit(path, i.cell_index, old, new)
        args = {"cell_index": i.cell_index, "old_string": old, "new_string": new}
        return Attempt(not ok, message, _payload(args))


class CellIdOverwrite:
    """Claude Code's NotebookEdit (edit_mode=replace), modelled: by id, no staleness check."""

    name = "cell-id overwrite"

    async def prepare(self, path: Path, scenario: Scenario) -> None:
        return None

    async def apply(self, path: Path, scenario: Scenario) -> Attempt:
        i = scenario.intent
        cell_id = i.cell_id if i.cell_id is not None else f"cell-{i.cell_index}"
        source = i.apply_to(source_of(json.loads(scenario.before)["cells"][i.cell_index]))
        args = {"notebook_path": path.name, "cell_id": cell_id, "new_source": source}
        nb = json.loads(path.read_text(encoding="utf-8"))
        found = [n for n, c in enumerate(nb["cells"]) if c.get("id") == cell_id]
        if not found and i.cell_id is None and i.cell_index < len(nb["cells"]):
            found = [i.cell_index]
        if not found:
            return Attempt(True, f"Cell with ID {cell_id} not found in notebook", _payload(args))
        nb["cells"][found[0]]["source"] = source
        path.write_text(json.dumps(nb, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
        return Attempt(False, "updated", _payload(args))


class WholeNotebookWrite:
    name = "whole-notebook write-back"

    async def prepare(self, path: Path, scenario: Scenario) -> None:
        return None

    async def apply(self, path: Path, scenario: Scenario) -> Attempt:
        i = scenario.intent
        nb = json.loads(scenario.before)
        cell = nb["cells"][i.cell_index]
        cell["source"] = i.apply_to(source_of(cell))
        text = json.dumps(nb, indent=1, sort_keys=True, ensure_ascii=False) + "\n"
        path.write_text(text, encoding="utf-8")
        return Attempt(False, "written", _payload({"path": path.name, "content": text}))
