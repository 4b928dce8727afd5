"""The ways an agent can apply its intended change, for the stale-edit safety table.

Each strategy sees the notebook once as the agent read it (`prepare`, before the person's
change) and then applies the agent's edit to whatever is there (`apply`), returning an
`Attempt`: refused or not, the tool's message, and the bytes of the tool-call arguments the
agent had to emit (JSON, as a tool call carries them; the proxy for output tokens).

- hashline: this project, through the real `Patcher` + `NotebookFilesystem` over disk; the edit
  is written against the projection it read (line edits, cell markers for new, deleted and
  moved cells).
- cell-index overwrite / cell-index string replace: jupyter-mcp-server's tools
  (`overwrite_cell_source`, `edit_cell_source`, and `insert_cell`, `delete_cell`, `move_cell`
  for cells), addressed by the cell indices the agent read. With the real package installed in
  a separate virtualenv (`PEER_VENV`, made by `install_peer`), its tools' own code runs in a
  worker process (bench/peer_worker.py): their file-mode code, or (`LivePeer`) their live path,
  a collaboration client in the room of a running Jupyter server. Without it, `ModelPeer`
  reproduces the file-mode code: nbformat read, index range checks, `old_string` must occur
  exactly once, nbformat write.
- cell-id overwrite: a model of Claude Code's NotebookEdit: cells found by id (ids `cell-N`
  address cells by index where the notebook stores none); replace, insert after, delete; JSON
  written back; no check against the read.
- whole-notebook write-back: the agent edits its copy of the JSON it read and writes the file.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import nbformat

from bench.safety_scenarios import (
    AgentOp,
    CellOp,
    CellVerb,
    LineOp,
    LineVerb,
    Scenario,
    Tracked,
    apply_ops,
    dump,
    source_of,
)
from jupyter_hashline.hashline import HashlineError, InMemorySnapshotStore, Patcher
from jupyter_hashline.hashline.disk import DiskFilesystem
from jupyter_hashline.notebook import NotebookFilesystem, parse_projection
from jupyter_hashline.notebook.projection import ProjectedCell, escape_source

PEER_PACKAGE = "jupyter-mcp-server==2.2.4"
PEER_VENV = Path(os.environ.get("HASHLINE_PEER_VENV", "/tmp/hashline-bench-peer-venv"))
WORKER = Path(__file__).resolve().parent / "peer_worker.py"


@dataclass(frozen=True, slots=True)
class Attempt:
    refused: bool
    message: str
    payload_bytes: int


def _payload(args: Any) -> int:
    return len(json.dumps(args, ensure_ascii=False).encode("utf-8"))


class Strategy(Protocol):
    name: str

    async def prepare(self, path: Path, scenario: Scenario) -> None: ...

    async def apply(self, path: Path, scenario: Scenario) -> Attempt: ...


def base_notebook(scenario: Scenario) -> dict[str, Any]:
    return dict(json.loads(scenario.before))


def intended_source(scenario: Scenario, cell: int) -> str:
    """Cell `cell` of the read with the agent's line operations on it applied."""
    read = Tracked.of(base_notebook(scenario))
    ops = tuple(op for op in scenario.agent.ops if isinstance(op, LineOp) and op.cell == cell)
    assert apply_ops(read, ops)
    return read.cells[cell].source


# -- hashline ----------------------------------------------------------------------------------


class HashlineStrategy:
    """Read through the projection, then send the edit (the JSON form a tool call carries)
    under the read's tag."""

    name = "hashline"

    def __init__(self) -> None:
        self._patcher: Patcher | None = None
        self._patch: dict[str, Any] = {}

    async def prepare(self, path: Path, scenario: Scenario) -> None:
        self._patcher = Patcher(
            NotebookFilesystem(DiskFilesystem(path.parent)), InMemorySnapshotStore()
        )
        read = await self._patcher.read(path.name)
        cells = parse_projection(read.text)
        rows = read.text.split("\n")
        _check_shown(scenario, cells, rows)
        edits = [e for op in scenario.agent.ops for e in _hashline_edits(op, cells, rows)]
        self._patch = {"path": path.name, "tag": read.tag, "edits": edits}

    async def apply(self, path: Path, scenario: Scenario) -> Attempt:
        assert self._patcher is not None
        payload = _payload(self._patch)
        try:
            result = await self._patcher.apply(self._patch)
        except HashlineError as error:
            return Attempt(True, str(error), payload)
        return Attempt(False, result.to_text(), payload)


def _check_shown(scenario: Scenario, cells: tuple[ProjectedCell, ...], rows: list[str]) -> None:
    """The projection shows every cell of the read with its source, line for line."""
    read = base_notebook(scenario)["cells"]
    for cell, shown in zip(read, cells, strict=True):
        source = source_of(cell)
        if source and rows[shown.line : shown.last_line] != escape_source(source).split("\n"):
            raise AssertionError(f"{scenario.name}: the projection does not show cell {shown}")


def _hashline_edits(
    op: AgentOp, cells: tuple[ProjectedCell, ...], text: list[str]
) -> list[dict[str, Any]]:
    """The JSON-form edits for one operation, against the projection read."""
    if isinstance(op, LineOp):
        first = cells[op.cell].line + 1 + op.first
        last = cells[op.cell].line + 1 + op.last
        rows = [escape_source(row) for row in op.rows]
        if op.verb is LineVerb.DELETE:
            return [{"op": "delete", "start": first, "end": last}]
        if op.verb is LineVerb.REPLACE:
            return [{"op": "replace", "start": first, "end": last, "lines": rows}]
        verb = "insert_after" if op.verb is LineVerb.INSERT_AFTER else "insert_before"
        return [{"op": verb, "line": first, "lines": rows}]
    cell = cells[op.cell]
    if op.verb is CellVerb.ADD_AFTER:
        rows = [f"# %% [{op.cell_type}]", *(escape_source(row) for row in op.rows)]
        return [{"op": "insert_after", "line": cell.last_line, "lines": rows}]
    if op.verb is CellVerb.MARKER:  # the id of the named cell, as the read showed it
        marker = f"# %% [{op.cell_type}] id={cells[op.named].cell_id}"
        rows = [marker, *(escape_source(row) for row in op.rows)]
        return [{"op": "insert_after", "line": cell.line + 1 + op.line, "lines": rows}]
    delete = {"op": "delete", "start": cell.line, "end": cell.last_line}
    if op.verb is CellVerb.DELETE:
        return [delete]
    moved = text[cell.line - 1 : cell.last_line]  # the marker (with its id) and the source
    return [delete, {"op": "insert_after", "line": cells[op.dest].last_line, "lines": moved}]


# -- jupyter-mcp-server ------------------------------------------------------------------------


class Peer(Protocol):
    kind: str  # "jupyter-mcp-server X.Y.Z (real code)" or "model of ..."

    def call(self, path: Path, request: dict[str, Any]) -> tuple[bool, str]: ...


class ModelPeer:
    """jupyter-mcp-server's file-mode tools, modelled on their code (2.2.4)."""

    kind = "model of jupyter-mcp-server 2.2.4 (the real package is not installed)"

    def call(self, path: Path, request: dict[str, Any]) -> tuple[bool, str]:
        nb = nbformat.read(path, as_version=4)
        try:
            message = _MODEL_OPS[request["op"]](nb, request)
        except Exception as error:  # as the real tool does: its exception is the agent's reply
            return False, f"{type(error).__name__}: {error}"
        nbformat.write(nb, path)
        return True, message


def _index(nb: Any, index: int) -> int:
    if not 0 <= index < len(nb.cells):
        raise IndexError(f"Cell index {index} is out of range. Notebook has {len(nb.cells)} cells.")
    return index


def _model_overwrite(nb: Any, request: dict[str, Any]) -> str:
    nb.cells[_index(nb, request["cell_index"])].source = request["cell_source"]
    return "overwritten"


def _model_edit(nb: Any, request: dict[str, Any]) -> str:
    cell = nb.cells[_index(nb, request["cell_index"])]
    old, new = request["old_string"], request["new_string"]
    first = cell.source.find(old)
    if first == -1:
        raise ValueError("old_string not found in cell source")
    if cell.source.find(old, first + 1) != -1:
        raise ValueError("old_string is not unique in cell source")
    cell.source = cell.source.replace(old, new, 1)
    return "edited"


def _model_insert(nb: Any, request: dict[str, Any]) -> str:
    index = request["cell_index"]
    if not 0 <= index <= len(nb.cells):
        raise IndexError(f"Index {index} is outside valid range [-1, {len(nb.cells)}].")
    make = (
        nbformat.v4.new_code_cell
        if request["cell_type"] == "code"
        else nbformat.v4.new_markdown_cell
    )
    cell = make(source=request["cell_source"])
    if nb.nbformat_minor < 5:
        cell.pop("id", None)
    nb.cells.insert(index, cell)
    return "inserted"


def _model_delete(nb: Any, request: dict[str, Any]) -> str:
    for index in sorted(request["cell_indices"], reverse=True):
        nb.cells.pop(_index(nb, index))
    return "deleted"


def _model_move(nb: Any, request: dict[str, Any]) -> str:
    cells = list(nb.cells)
    cell = cells.pop(_index(nb, request["source_index"]))
    cells.insert(_index(nb, request["target_index"]), cell)
    nb.cells = cells
    return "moved"


_MODEL_OPS: dict[str, Callable[[Any, dict[str, Any]], str]] = {
    "overwrite": _model_overwrite,
    "edit": _model_edit,
    "insert": _model_insert,
    "delete": _model_delete,
    "move": _model_move,
}


class RealPeer:
    """jupyter-mcp-server's own code, run by bench/peer_worker.py in the peer virtualenv:
    `mode="file"` runs its file-mode code; `mode="live"` its collaboration client in the
    room of the running Jupyter server at `server_url` (the notebook is open there)."""

    def __init__(
        self, python: Path, mode: str = "file", server: tuple[str, str, Path] | None = None
    ) -> None:
        args = [str(python), str(WORKER), mode]
        if server is not None:
            args += [server[0], server[1], str(server[2])]
        self.proc = subprocess.Popen(
            args,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )
        ok, version = self._reply()
        if not ok:
            raise RuntimeError(f"the jupyter-mcp-server worker failed to start: {version}")
        where = (
            "its live path: a collaboration client in the room of a running Jupyter server"
            if mode == "live"
            else "its file-mode tool code, in process, no server"
        )
        self.kind = f"jupyter-mcp-server {version} ({where})"

    def _reply(self) -> tuple[bool, str]:
        assert self.proc.stdout is not None
        for line in self.proc.stdout:
            if line.startswith("@@peer "):
                reply = json.loads(line[len("@@peer ") :])
                return bool(reply["ok"]), str(reply["message"])
        raise RuntimeError("the jupyter-mcp-server worker exited")

    def call(self, path: Path, request: dict[str, Any]) -> tuple[bool, str]:
        assert self.proc.stdin is not None
        self.proc.stdin.write(json.dumps({**request, "path": str(path)}) + "\n")
        self.proc.stdin.flush()
        return self._reply()

    def close(self) -> None:
        if self.proc.stdin is not None:
            self.proc.stdin.close()
        self.proc.wait(timeout=60)


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


def old_snippet(lines: list[str], first: int, last: int) -> tuple[int, int]:
    """The smallest run of lines around first..last that occurs once in the cell (as an agent
    following edit_cell_source's instructions would choose its `old_string`)."""
    source = "\n".join(lines)
    lo, hi = first, last
    while True:
        snippet = "\n".join(lines[lo : hi + 1])
        if (snippet and source.count(snippet) == 1) or (lo == 0 and hi == len(lines) - 1):
            return lo, hi
        lo, hi = max(0, lo - 1), min(len(lines) - 1, hi + 1)


def _string_replace(scenario: Scenario, op: LineOp) -> dict[str, Any]:
    lines = source_of(base_notebook(scenario)["cells"][op.cell]).split("\n")
    first, last = op.first, op.last
    if op.verb is LineVerb.DELETE:  # keep a line next to the deleted ones, with its newline
        first, last = (first - 1, last) if first > 0 else (first, last + 1)
    lo, hi = old_snippet(lines, first, last)
    after = intended_lines_of(scenario, op)
    grown = len(after) - len(lines)
    return {
        "op": "edit",
        "cell_index": op.cell,
        "old_string": "\n".join(lines[lo : hi + 1]),
        "new_string": "\n".join(after[lo : hi + 1 + grown]),
    }


def intended_lines_of(scenario: Scenario, op: LineOp) -> list[str]:
    read = Tracked.of(base_notebook(scenario))
    assert apply_ops(read, (op,))
    return read.cells[op.cell].source.split("\n")


def split_sources(scenario: Scenario, op: CellOp) -> tuple[str, str]:
    """A marker's split, as the agent means it from its read: the cell's source above the
    marker and the new cell's source."""
    read = Tracked.of(base_notebook(scenario))
    assert apply_ops(read, (op,))
    return read.cells[op.cell].source, read.cells[op.cell + 1].source


def _cell_requests(op: CellOp, scenario: Scenario) -> list[dict[str, Any]]:
    if op.verb is CellVerb.MARKER:  # no marker in these tools: overwrite, then insert
        head, new = split_sources(scenario, op)
        return [
            {"op": "overwrite", "cell_index": op.cell, "cell_source": head},
            {
                "op": "insert",
                "cell_index": op.cell + 1,
                "cell_type": op.cell_type,
                "cell_source": new,
            },
        ]
    if op.verb is CellVerb.ADD_AFTER:
        source = "\n".join(op.rows)
        return [
            {
                "op": "insert",
                "cell_index": op.cell + 1,
                "cell_type": op.cell_type,
                "cell_source": source,
            }
        ]
    if op.verb is CellVerb.DELETE:
        return [{"op": "delete", "cell_indices": [op.cell]}]
    target = op.dest + 1 if op.dest < op.cell else op.dest
    return [{"op": "move", "source_index": op.cell, "target_index": target}]


class IndexTools:
    """jupyter-mcp-server's tools by cell index: whole-source overwrite or string replace."""

    def __init__(self, peer: Peer, *, replace: bool, label: str = "") -> None:
        self.peer = peer
        self.replace = replace
        kind = "string replace" if replace else "overwrite"
        self.name = f"cell-index {kind}{label}"

    async def prepare(self, path: Path, scenario: Scenario) -> None:
        return None

    def requests(self, scenario: Scenario) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        for op in scenario.agent.ops:
            if isinstance(op, CellOp):
                out += _cell_requests(op, scenario)
            elif self.replace:
                out.append(_string_replace(scenario, op))
            else:
                source = intended_source(scenario, op.cell)
                request = {"op": "overwrite", "cell_index": op.cell, "cell_source": source}
                if request not in out:
                    out.append(request)
        return out

    async def apply(self, path: Path, scenario: Scenario) -> Attempt:
        requests = self.requests(scenario)
        messages = []
        for request in requests:
            ok, message = self.peer.call(path, request)
            messages.append(message)
            if not ok:
                return Attempt(True, "\n".join(messages), _payload(requests))
        return Attempt(False, "\n".join(messages), _payload(requests))


# -- the models of other tools -----------------------------------------------------------------


class CellIdOverwrite:
    """Claude Code's NotebookEdit, modelled: by id, no staleness check."""

    name = "cell-id overwrite"

    async def prepare(self, path: Path, scenario: Scenario) -> None:
        return None

    async def apply(self, path: Path, scenario: Scenario) -> Attempt:
        read = base_notebook(scenario)["cells"]
        nb = json.loads(path.read_text(encoding="utf-8"))
        calls: list[dict[str, Any]] = []
        for op in scenario.agent.ops:
            cell_id = read[op.cell].get("id") or f"cell-{op.cell}"
            found = _by_id(nb, cell_id, op.cell, read)
            if found is None:
                return Attempt(
                    True, f"Cell with ID {cell_id} not found in notebook", _payload(calls)
                )
            calls.append(_notebook_edit(nb, found, op, scenario, cell_id))
        path.write_text(json.dumps(nb, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
        return Attempt(False, "updated", _payload(calls))


def _by_id(nb: dict[str, Any], cell_id: str, index: int, read: list[Any]) -> int | None:
    found = [n for n, c in enumerate(nb["cells"]) if c.get("id") == cell_id]
    if found:
        return found[0]
    if "id" not in read[index] and index < len(nb["cells"]):
        return index  # `cell-N` addresses cells by index where the notebook stores no ids
    return None


def _notebook_edit(
    nb: dict[str, Any], at: int, op: AgentOp, scenario: Scenario, cid: str
) -> dict[str, Any]:
    if isinstance(op, LineOp):
        source = intended_source(scenario, op.cell)
        nb["cells"][at]["source"] = source
        return {"cell_id": cid, "new_source": source}
    if op.verb is CellVerb.DELETE:
        del nb["cells"][at]
        return {"cell_id": cid, "edit_mode": "delete"}
    if op.verb is CellVerb.MARKER:
        head, new = split_sources(scenario, op)
        nb["cells"][at]["source"] = head
        nb["cells"].insert(at + 1, _plain_cell(op.cell_type, new))
        return {"cell_id": cid, "edit_mode": "replace+insert", "new_source": head + new}
    if op.verb is CellVerb.ADD_AFTER:
        nb["cells"].insert(at + 1, _plain_cell(op.cell_type, "\n".join(op.rows)))
        return {"cell_id": cid, "edit_mode": "insert", "new_source": "\n".join(op.rows)}
    moved = nb["cells"].pop(at)
    read = base_notebook(scenario)["cells"]
    dest = _by_id(nb, read[op.dest].get("id") or f"cell-{op.dest}", op.dest, read)
    fresh = _plain_cell(moved.get("cell_type", "code"), source_of(moved))
    nb["cells"].insert((dest if dest is not None else len(nb["cells"]) - 1) + 1, fresh)
    return {"cell_id": cid, "edit_mode": "delete+insert", "new_source": source_of(moved)}


def _plain_cell(cell_type: str, source: str) -> dict[str, Any]:
    cell: dict[str, Any] = {"cell_type": cell_type, "metadata": {}, "source": source}
    if cell_type == "code":
        cell |= {"execution_count": None, "outputs": []}
    return cell


class WholeNotebookWrite:
    name = "whole-notebook write-back"

    async def prepare(self, path: Path, scenario: Scenario) -> None:
        return None

    async def apply(self, path: Path, scenario: Scenario) -> Attempt:
        read = Tracked.of(base_notebook(scenario))
        assert apply_ops(read, scenario.agent.ops)
        text = dump(read.notebook())
        path.write_text(text, encoding="utf-8")
        return Attempt(False, "written", _payload({"path": path.name, "content": text}))
