"""The conformance matrix: the same operations, as a new user and an agent make them, through
every surface over every storage, each checked by what everyone can observe (the surface's
success or refusal, the text it shows, the file on disk, the person's open document).

Rows: a surface over a storage. Surfaces: REST, MCP over stdio (`--root`, `--server`), the
command line (`--root`, `--server`), `Session` (directory, server). Storages: a directory, a
directory with a jupytext pair, and a real `jupyter server` (a subprocess, as installed) whose
notebooks are stored as bytes (the stock contents manager), as models (a custom manager with a
save hook), paired by jupytext (its manager), or open in a collaboration room (a person's Yjs
client holds it open). Columns, in the order a user meets them: `write new nb`, `write new
text` (create); `write, no folder` (a server refuses it naming the folder: contents managers
create no folders; a directory makes the folder inside its root); `write text (tag)` (replace
a file named by its read); `read nb`, `read text`; `edit nb` (the other cells' ids, outputs
and metadata kept; the jupytext twin, the save hook's stamp, the person's open document show
the edit); `edit text`; `move a cell` (its lines and marker cut and inserted elsewhere in one
edit: id, outputs, execution count and metadata go with it); `outputs`; `run` (the outputs
saved); `eval` (the file unchanged); `kernel` (status); `outputs of text`; `revert`.

A combination refused on purpose is `refused by design` only when the refusal was seen: undo
is a person's action (REST, the sidebar, the command line with `--server`), so MCP and
`Session` do not offer it (their tool lists are checked) and the command line on a directory
says it needs a server; outputs of a text file are refused saying it is not a notebook.
The matrix is printed at the end of the run (testkit.conformance); a
row fails when any of its cells is FAIL.
"""

from __future__ import annotations

import asyncio
import json
import re
import time
from collections.abc import Awaitable, Callable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import jupytext
import nbformat
import pytest
from testkit.conformance import FAIL, PASS, REFUSED, Verdict, record, render
from testkit.stamping_manager import STAMP
from testkit.surfaces import (
    CliSurface,
    McpSurface,
    Reply,
    RestSurface,
    SessionSurface,
    Surface,
    Target,
)

from bench.server import TOKEN, LocalServer
from bench.server_room import Person

TESTS = Path(__file__).resolve().parents[1]
TEXT = "a = 1\nb = 2\n"
NEW_NOTEBOOK = "# %% [code]\nz = 1\n"
UNDO_ON_SERVER = (
    "undo is a person's action on a server, which keeps the activity an undo names: "
    "the command line says revert needs --server"
)
UNDO_NOT_OFFERED = (
    "agents are not offered undo: people undo agents' edits (REST, the sidebar, the command "
    "line with --server); the tool list has no revert"
)
NOT_A_NOTEBOOK = "outputs, runs and kernels belong to notebooks: a text file is refused, saying so"
NO_JUPYTEXT = "--ServerApp.jpserver_extensions=jupyterlab_jupytext=False"
MISSING_FOLDER = "write, no folder"
HOOKED = "--ServerApp.contents_manager_class=testkit.stamping_manager.StampingContentsManager"


def notebook() -> nbformat.NotebookNode:
    """Three cells: c1 with an output, an execution count and metadata; markdown; c3."""
    first = nbformat.v4.new_code_cell(
        "x = 41\nprint(x + 1)",
        id="c1",
        execution_count=1,
        metadata={"tags": ["keep"]},
        outputs=[nbformat.v4.new_output("stream", name="stdout", text="42\n")],
    )
    cells = [first, nbformat.v4.new_markdown_cell("# Title", id="c2")]
    cells.append(nbformat.v4.new_code_cell("y = 2\nprint('y is', y)", id="c3"))
    nb = nbformat.v4.new_notebook(cells=cells)
    nb.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    return nb


@dataclass(frozen=True, slots=True)
class Storage:
    name: str
    server: str | None = None  # which server holds it: "stock", "hooked", "jupytext"
    paired: bool = False  # the notebook has a py:percent twin
    room: bool = False  # a person holds the notebook open in a collaboration room


STORAGES = (
    Storage("directory"),
    Storage("directory, jupytext pair", paired=True),
    Storage("server, stock manager", "stock"),
    Storage("server, manager with a save hook", "hooked"),
    Storage("server, jupytext pair", "jupytext", paired=True),
    Storage("server, open in a live room", "jupytext", room=True),
)
SURFACES: dict[str, Callable[[Target], Surface]] = {
    "rest": RestSurface,
    "mcp": McpSurface,
    "cli": CliSurface,
    "session": SessionSurface,
}
ROWS = [
    pytest.param(storage, surface, id=f"{surface}-{storage.name}")
    for storage in STORAGES
    for surface in SURFACES
    if not (surface == "rest" and storage.server is None)
]


@pytest.fixture(scope="module")
def servers(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, LocalServer]]:
    """One real server per kind of storage, started on first use, stopped after the module."""
    base = tmp_path_factory.mktemp("servers")
    started: dict[str, LocalServer] = {}
    kinds = {
        "stock": ((NO_JUPYTEXT,), {}),
        "hooked": ((NO_JUPYTEXT, HOOKED), {"PYTHONPATH": str(TESTS)}),
        "jupytext": ((), {}),
    }

    class Lazy(dict[str, LocalServer]):
        def __missing__(self, kind: str) -> LocalServer:
            args, env = kinds[kind]
            (base / kind / "root").mkdir(parents=True)
            server = LocalServer(
                base / kind / "root", base / kind / "home", extra_args=args, extra_env=env
            )
            started[kind] = server.__enter__()
            self[kind] = server
            return server

    yield Lazy()
    for server in started.values():
        server.__exit__(None, None, None)


def eventually(check: Callable[[], bool], within_s: float = 60) -> bool:
    """Whether `check` holds now or becomes true within `within_s` (a room saves on its own)."""
    deadline = time.monotonic() + within_s
    while not check():
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


class Row:
    """One surface over one storage: its files, its calls, its verdicts."""

    def __init__(self, row: str, storage: Storage, surface: Surface, folder: Path, prefix: str):
        self.row, self.storage, self.surface = row, storage, surface
        self.folder, self.prefix = folder, prefix
        self.person: Person | None = None
        self.server: LocalServer | None = None
        self.tags: dict[str, str] = {}
        self.verdicts: dict[str, Verdict] = {}

    def path(self, name: str) -> str:
        return self.prefix + name

    def disk_notebook(self) -> nbformat.NotebookNode:
        return nbformat.read(self.folder / "nb.ipynb", as_version=4)

    async def call(self, tool: str, **args: Any) -> Reply:
        return await self.surface.call(tool, args)

    async def read(self, name: str) -> tuple[Reply, str]:
        """A read, and the tag of its header (which must name the path as the agent sent it)."""
        reply = await self.call("read", path=self.path(name))
        match = re.match(rf"\[{re.escape(self.path(name))}#([0-9A-F]{{4}})\]", reply.text)
        assert reply.ok and match, f"read {name}: {reply.status} {reply.text[:300]}"
        return reply, match.group(1)

    def check(self, column: str, ok: bool, detail: str) -> None:
        self.verdicts[column] = Verdict(PASS) if ok else Verdict(FAIL, detail[:400])

    async def step(self, column: str, work: Callable[[], Awaitable[None]]) -> None:
        try:
            await work()
        except Exception as err:  # the matrix shows what broke, and goes on
            self.verdicts[column] = Verdict(FAIL, f"{type(err).__name__}: {err}"[:400])


def row_of(line: str, view: str) -> int:
    """The number of the row showing `line` in a read's view."""
    match = re.search(rf"^(\d+):{re.escape(line)}$", view, re.MULTILINE)
    assert match, f"no row {line!r} in:\n{view}"
    return int(match.group(1))


def cells_as_stored(nb: nbformat.NotebookNode) -> list[tuple[str, str]]:
    return [(cell.id, cell.source) for cell in nb.cells]


def keeps_c1(nb: nbformat.NotebookNode) -> bool:
    """c1 still has its id, output, execution count and metadata."""
    c1 = next((cell for cell in nb.cells if cell.get("id") == "c1"), None)
    return (
        c1 is not None
        and [o.get("text") for o in c1.outputs] == ["42\n"]
        and c1.execution_count == 1
        and c1.metadata.get("tags") == ["keep"]
    )


def storage_holds(row: Row, source_line: str) -> str:
    """What the storage itself shows beside the notebook file ('' when all is as it should)."""
    storage = row.storage
    if storage.paired:
        twin = row.folder / "nb.py"
        if not eventually(lambda: twin.exists() and source_line in twin.read_text(), 20):
            return f"the jupytext twin nb.py lacks {source_line!r}"
    if storage.server == "hooked" and row.disk_notebook().metadata.get("saved_by") != STAMP:
        return "the contents manager's save hook did not run (no stamp)"
    if row.person is not None:
        person = row.person
        sources = person.call(lambda: [str(c["source"]) for c in person.notebook.ycells])
        if not any(source_line in source for source in sources):
            return f"the person's open document lacks {source_line!r}: {sources}"
    return ""


async def scenario(row: Row) -> None:
    """Every operation once, in the order a user meets them."""
    folder = row.folder

    async def write_new_notebook() -> None:
        reply = await row.call("write", path=row.path("new.ipynb"), content=NEW_NOTEBOOK)
        stored = folder / "new.ipynb"
        cells = nbformat.read(stored, as_version=4).cells if stored.exists() else []
        ok = reply.ok and [(c.cell_type, c.source) for c in cells] == [("code", "z = 1")]
        row.check("write new nb", ok, f"{reply.status} {reply.text[:200]}; cells {cells}")

    async def write_new_text() -> None:
        reply = await row.call("write", path=row.path("new.py"), content="c = 3\n")
        stored = folder / "new.py"
        ok = reply.ok and stored.exists() and stored.read_text() == "c = 3\n"
        row.check("write new text", ok, f"{reply.status} {reply.text[:200]}")

    async def write_in_missing_folder() -> None:
        """On a server, refused naming the folder (contents managers create no folders); on a
        directory, the folder is made inside the root (disk.py's documented rule)."""
        reply = await row.call("write", path=row.path("missing/new.ipynb"), content=NEW_NOTEBOOK)
        made = (folder / "missing" / "new.ipynb").exists()
        if row.server is not None:
            ok = not reply.ok and "the folder" in reply.text and "missing" in reply.text
            ok = ok and not (folder / "missing").exists()
        else:
            ok = reply.ok and made
        row.check(MISSING_FOLDER, ok, f"{reply.status} {reply.text[:200]}")

    async def write_existing_text() -> None:
        _, tag = await row.read("new.py")
        reply = await row.call("write", path=row.path("new.py"), content="c = 4\n", tag=tag)
        ok = reply.ok and (folder / "new.py").read_text() == "c = 4\n"
        row.check("write text (tag)", ok, f"{reply.status} {reply.text[:200]}")

    async def read_notebook() -> None:
        reply, row.tags["nb"] = await row.read("nb.ipynb")
        ok = "x = 41" in reply.text and "# %% [code] id=c1" in reply.text
        row.check("read nb", ok, reply.text[:300])

    async def read_text() -> None:
        reply, row.tags["notes"] = await row.read("notes.py")
        row.check("read text", f"{row_of('b = 2', reply.text)}:b = 2" in reply.text, reply.text)

    async def edit_notebook() -> None:
        view, tag = await row.read("nb.ipynb")
        line = row_of("y = 2", view.text)
        patch = f"[{row.path('nb.ipynb')}#{tag}]\nreplace {line}:\n+y = 3\n"
        reply = await row.call("edit", patch=patch)
        stored = row.disk_notebook()
        source = next((c.source for c in stored.cells if c.get("id") == "c3"), None)
        extra = storage_holds(row, "y = 3") if reply.ok else ""
        ok = reply.ok and source == "y = 3\nprint('y is', y)" and keeps_c1(stored) and not extra
        row.check("edit nb", ok, f"{reply.status} {reply.text[:200]}; c3 {source!r} {extra}")

    async def edit_text() -> None:
        view, tag = await row.read("notes.py")
        patch = f"[{row.path('notes.py')}#{tag}]\nreplace {row_of('b = 2', view.text)}:\n+b = 3\n"
        reply = await row.call("edit", patch=patch)
        ok = reply.ok and (folder / "notes.py").read_text() == "a = 1\nb = 3\n"
        row.check("edit text", ok, f"{reply.status} {reply.text[:200]}")

    async def move_a_cell() -> None:
        view, tag = await row.read("nb.ipynb")
        first, last = row_of("# %% [code] id=c1", view.text), row_of("print(x + 1)", view.text)
        body = "+# %% [code] id=c1\n+x = 41\n+print(x + 1)\n"
        patch = f"[{row.path('nb.ipynb')}#{tag}]\ndelete {first}..{last}\ninsert tail:\n{body}"
        reply = await row.call("edit", patch=patch)
        stored = row.disk_notebook()
        order = [cell.id for cell in stored.cells]
        ok = reply.ok and order == ["c2", "c3", "c1"] and keeps_c1(stored)
        row.check("move a cell", ok, f"{reply.text[:200]}; {order}")

    async def outputs() -> None:
        reply = await row.call("outputs", path=row.path("nb.ipynb"), cell="c1")
        row.check("outputs", reply.ok and "42" in reply.text, f"{reply.status} {reply.text[:200]}")

    async def run() -> None:
        _, tag = await row.read("nb.ipynb")
        reply = await row.call("run", path=row.path("nb.ipynb"), tag=tag, cells=["c3"])

        def landed() -> bool:
            c3 = next(c for c in row.disk_notebook().cells if c.get("id") == "c3")
            return any("y is 3" in str(o.get("text", "")) for o in c3.outputs)

        ok = reply.ok and "y is 3" in reply.text and eventually(landed)
        row.check("run", ok, f"{reply.status} {reply.text[:300]}")

    async def evaluate() -> None:
        before = (folder / "nb.ipynb").read_bytes()
        reply = await row.call("eval", path=row.path("nb.ipynb"), code="print(6 * 7)")
        ok = reply.ok and "42" in reply.text and (folder / "nb.ipynb").read_bytes() == before
        row.check("eval", ok, f"{reply.status} {reply.text[:300]}")

    async def kernel() -> None:
        reply = await row.call("kernel", path=row.path("nb.ipynb"), action="status")
        row.check("kernel", reply.ok and "kernel" in reply.text.lower(), reply.text[:300])

    async def outputs_of_text() -> None:
        reply = await row.call("outputs", path=row.path("notes.py"), cell="c1")
        refused = not reply.ok and "notebook" in reply.text
        designed = Verdict(REFUSED, NOT_A_NOTEBOOK)
        row.verdicts["outputs of text"] = designed if refused else Verdict(FAIL, reply.text[:300])

    async def revert() -> None:
        column = "revert"
        if "revert" not in row.surface.offered:
            row.verdicts[column] = Verdict(REFUSED, UNDO_NOT_OFFERED)
            return
        if row.server is None:
            reply = await row.call("revert", activity=1)
            refused = not reply.ok and "needs --server" in reply.text
            designed = Verdict(REFUSED, UNDO_ON_SERVER)
            row.verdicts[column] = designed if refused else Verdict(FAIL, reply.text[:300])
            return
        activity = await person_lists_activity(row.server)
        edits = [
            e for e in activity if e["path"] == row.path("notes.py") and e["source"] == "patch"
        ]
        assert edits, f"no edit of notes.py in the activity: {activity[:3]}"
        reply = await row.call("revert", activity=edits[0]["id"])
        ok = reply.ok and (folder / "notes.py").read_text() == TEXT
        row.check(column, ok, f"{reply.status} {reply.text[:300]}")

    steps = {
        "write new nb": write_new_notebook,
        "write new text": write_new_text,
        MISSING_FOLDER: write_in_missing_folder,
        "write text (tag)": write_existing_text,
        "read nb": read_notebook,
        "read text": read_text,
        "edit nb": edit_notebook,
        "edit text": edit_text,
        "move a cell": move_a_cell,
        "outputs": outputs,
        "run": run,
        "eval": evaluate,
        "kernel": kernel,
        "outputs of text": outputs_of_text,
        "revert": revert,
    }
    for column, work in steps.items():
        await row.step(column, work)


async def person_lists_activity(server: LocalServer) -> list[dict[str, Any]]:
    """The server's activity feed as the sidebar reads it, newest first."""
    async with httpx.AsyncClient(timeout=60) as http:
        response = await http.get(
            f"http://127.0.0.1:{server.port}/hashline/activity",
            headers={"Authorization": f"token {TOKEN}"},
        )
    assert response.status_code == 200, response.text
    return list(response.json()["edits"])


def lay_out(folder: Path, storage: Storage, server: LocalServer | None, api_folder: str) -> None:
    """The existing notebook and text file of a row, stored as its storage stores them."""
    folder.mkdir(parents=True)
    (folder / "notes.py").write_text(TEXT)
    nb = notebook()
    if storage.paired:
        nb.metadata["jupytext"] = {"formats": "ipynb,py:percent"}
    if server is not None and storage.paired:  # jupytext's manager writes both files
        model = {
            "type": "notebook",
            "format": "json",
            "content": json.loads(nbformat.writes(nb, split_lines=False)),
        }
        status, body = server.client().request("PUT", f"/api/contents/{api_folder}/nb.ipynb", model)
        assert status in (200, 201), body
        assert (folder / "nb.py").exists(), "jupytext did not write the twin"
        return
    nbformat.write(nb, folder / "nb.ipynb")
    if storage.paired:
        jupytext.write(nb, folder / "nb.py", fmt="py:percent")


@pytest.mark.slow
@pytest.mark.parametrize(("storage", "surface_name"), ROWS)
async def test_every_tool_through_the_surface_over_the_storage(
    storage: Storage,
    surface_name: str,
    servers: dict[str, LocalServer],
    tmp_path: Path,
) -> None:
    server = servers[storage.server] if storage.server else None
    slug = re.sub(r"[^a-z]+", "-", f"{surface_name} {storage.name}").strip("-")
    if server is not None:
        folder = server.root / slug
        url = f"http://127.0.0.1:{server.port}/"
        target = Target(folder, tmp_path / "data", url, TOKEN, server.root)
    else:
        folder = tmp_path / "root"
        target = Target(folder, tmp_path / "data")
    lay_out(folder, storage, server, slug)
    surface = SURFACES[surface_name](target)
    # the session's folder is its root on a server too; other surfaces name paths from the root
    prefix = f"{slug}/" if server is not None and surface_name != "session" else ""
    label = f"{surface.name} / {storage.name}"
    row = Row(label, storage, surface, folder, prefix)
    row.server = server
    person = Person(server, f"{slug}/nb.ipynb") if storage.room and server else None
    await surface.open()
    try:
        if person is not None:
            await asyncio.to_thread(person.__enter__)
            row.person = person
        await scenario(row)
    finally:
        if person is not None:
            await asyncio.to_thread(person.__exit__, None, None, None)
        await surface.aclose()
    for column, verdict in row.verdicts.items():
        record(label, column, verdict)
    failed = {column: v.detail for column, v in row.verdicts.items() if v.outcome == FAIL}
    assert not failed, f"{label}: " + json.dumps(failed, indent=1)


class DroppingEdits(Surface):
    """A planted fault: every edit is answered as done and nothing is written."""

    name = "planted: edits dropped"

    def __init__(self, inner: Surface) -> None:
        self.inner = inner

    async def open(self) -> None:
        await self.inner.open()
        self.offered = self.inner.offered

    async def aclose(self) -> None:
        await self.inner.aclose()

    async def call(self, tool: str, args: Mapping[str, Any]) -> Reply:
        if tool == "edit":
            return Reply(True, "updated", "ok")
        return await self.inner.call(tool, args)


@pytest.mark.slow
async def test_the_matrix_shows_a_planted_fault(tmp_path: Path) -> None:
    """The oracle can fail: a surface that drops edits (answering that it made them) gets FAIL
    in exactly the columns that edit, and the printed matrix names them."""
    folder = tmp_path / "root"
    lay_out(folder, STORAGES[0], None, "")
    surface = DroppingEdits(SessionSurface(Target(folder, tmp_path / "data")))
    row = Row(surface.name, STORAGES[0], surface, folder, "")
    await surface.open()
    try:
        await scenario(row)
    finally:
        await surface.aclose()
    failed = {column for column, verdict in row.verdicts.items() if verdict.outcome == FAIL}
    edits = {"edit nb", "edit text", "move a cell"}
    # the run finds c3 unedited ("y is 2") and the undo has nothing to undo: both follow
    assert failed == edits | {"run"}
    assert row.verdicts["read nb"].outcome == PASS
    shown = render({(row.row, column): verdict for column, verdict in row.verdicts.items()})
    assert any(line.startswith(f"FAIL {row.row} / edit nb:") for line in shown)
    assert shown[-1].endswith(f"{len(failed)} FAIL")
