"""`Workspace.run` with real ipykernel kernels (a `DirectoryKernelPool`): the gate with the
workspace's store (stale cells, unseen lines, unknown tags), the default cells of the agent's
last edit, the header after a run, the activity feed, and refusals before any kernel starts."""

from __future__ import annotations

import asyncio
import base64
import io
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import nbformat
import pytest
from PIL import Image
from testkit.cells import ENDLESS, FIGURE_CELL, PNG_CELL
from testkit.rooms import until

from jupyter_hashline.hashline.disk import DiskFilesystem
from jupyter_hashline.hashline.memory_fs import InMemoryFilesystem
from jupyter_hashline.hashline.memory_store import InMemorySnapshotStore
from jupyter_hashline.kernels.pool import DirectoryKernelPool
from jupyter_hashline.notebook import NotebookFilesystem
from jupyter_hashline.tools import (
    ActivityRecord,
    DirectoryWorkspace,
    ToolOutcome,
    Workspace,
    open_directory,
    run_tool,
)

NB = "analysis.ipynb"


def write_notebook(root: Path, **cells: str) -> Path:
    """A notebook with a markdown intro and one code cell per keyword (id = the keyword)."""
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    nb.cells = [nbformat.v4.new_markdown_cell("# Title", id="intro")]
    nb.cells += [nbformat.v4.new_code_cell(source, id=cid) for cid, source in cells.items()]
    path = root / NB
    nbformat.write(nb, path)
    return path


def person_edits(path: Path, cell_id: str, source: str) -> None:
    nb = nbformat.read(path, as_version=4)
    next(cell for cell in nb.cells if cell.id == cell_id).source = source
    nbformat.write(nb, path)


def disk_cells(path: Path) -> dict[str, dict[str, Any]]:
    return {cell["id"]: cell for cell in json.loads(path.read_text("utf-8"))["cells"]}


@pytest.fixture
def ws(tmp_path: Path, jp_asyncio_loop: asyncio.AbstractEventLoop) -> Iterator[DirectoryWorkspace]:
    """A directory workspace whose runs use kernels of its own; closed (kernels shut) after."""
    workspace = open_directory(tmp_path, ":memory:", run_with=DirectoryKernelPool)
    yield workspace
    jp_asyncio_loop.run_until_complete(workspace.aclose())


def running(ws: Workspace) -> dict[str, str]:
    assert isinstance(ws.runner, DirectoryKernelPool)
    return ws.runner.running()


async def call(ws: Workspace, name: str, agent: str = "A", **arguments: Any) -> ToolOutcome:
    return await run_tool(ws, name, arguments, agent=agent)


async def tag_of_read(ws: Workspace, agent: str = "A", **arguments: Any) -> str:
    read = await call(ws, "notebook_read", agent, path=NB, **arguments)
    assert not read.is_error, read.text
    return str(read.reply["tag"])


async def test_a_run_returns_the_output_writes_it_and_records_the_run(
    ws: DirectoryWorkspace, tmp_path: Path
) -> None:
    path = write_notebook(tmp_path, calc="x = 6 * 7\nprint(x)", other="y = 1")
    heard: list[ActivityRecord] = []
    ws.activity.subscribe(heard.append)
    tag = await tag_of_read(ws)
    run = await call(ws, "notebook_run", path=NB, tag=tag, cells=["calc"])
    assert not run.is_error, run.text
    first, *rest = run.text.split("\n")
    assert first == f"[{NB}#{tag}] ran 1 of 1 cell in kernel python3"
    assert rest[0].startswith("cell calc: ok (execution count 1, ")
    assert rest[1:3] == ["[1] stream stdout", "42"]
    assert f"note: started a python3 kernel for {NB}" in rest
    stored = disk_cells(path)
    assert stored["calc"]["outputs"][0]["text"] == ["42\n"]
    assert stored["calc"]["execution_count"] == 1
    assert stored["other"]["outputs"] == [] and stored["other"]["execution_count"] is None
    reply = run.reply
    assert (reply["tag"], reply["header"], reply["kernel"]) == (tag, f"[{NB}#{tag}]", "python3")
    assert [(c["cell"], c["status"], c["outputs"]) for c in reply["cells"]] == [
        ("calc", "ok", "[1] stream stdout\n42")
    ]
    [record] = run.activity
    assert heard == [record] and ws.activity.recent() == [record]
    assert (record.op, record.source, record.who, record.cells) == ("run", "run", "A", ("calc",))
    assert [(r.cell, r.status, r.execution_count) for r in record.runs] == [("calc", "ok", 1)]
    assert record.runs[0].duration_ms == reply["cells"][0]["duration_ms"]
    assert reply["activity"] == [record.to_json()]
    assert ActivityRecord.from_json(record.to_json()) == record


async def test_the_default_cells_are_those_of_the_agents_last_edit(
    ws: DirectoryWorkspace, tmp_path: Path
) -> None:
    write_notebook(tmp_path, setup="base = 40", calc="print(base + 1)")
    tag = await tag_of_read(ws)
    await call(ws, "notebook_run", path=NB, tag=tag, cells=["setup"])
    # the agent fixes the calc cell (line 6) and retitles the markdown intro (line 2)
    edit = await call(ws, "notebook_edit", patch=f"[{NB}#{tag}]\nreplace 2:\n+# Sums\n"
                      "replace 6:\n+print(base + 2)\n")  # fmt: skip
    assert not edit.is_error, edit.text
    new_tag = edit.reply["sections"][0]["tag"]
    run = await call(ws, "notebook_run", path=NB, tag=new_tag)
    assert not run.is_error, run.text
    assert [c["cell"] for c in run.reply["cells"]] == ["calc"]
    assert run.reply["cells"][0]["outputs"] == "[1] stream stdout\n42"  # the kernel kept `base`
    assert "note: skipped cell intro (markdown): only code cells run" in run.text
    other = await call(ws, "notebook_run", "B", path=NB, tag=new_tag)
    assert (other.is_error, other.kind) == (True, "not_runnable")
    assert "you have not edited any cell" in other.text


async def test_a_cell_a_person_changed_is_refused_and_nothing_runs(
    ws: DirectoryWorkspace, tmp_path: Path
) -> None:
    path = write_notebook(tmp_path, calc="print(6 * 7)")
    tag = await tag_of_read(ws)
    person_edits(path, "calc", "print(6 * 7)\nprint('half-typ")
    before = path.read_bytes()
    refused = await call(ws, "notebook_run", path=NB, tag=tag, cells=["calc"])
    assert (refused.is_error, refused.kind, refused.status) == (True, "stale_cells", 409)
    assert "Nothing ran" in refused.text and "*5:print('half-typ" in refused.text
    assert path.read_bytes() == before and running(ws) == {}
    assert ws.activity.recent() == []
    # the refusal's header is known and its rows were shown: what the agent now saw may run
    current = refused.text.split(f"Current header: [{NB}#")[1][:4]
    person_edits(path, "calc", "print(6 * 7)\nprint('typed')")
    still = await call(ws, "notebook_run", path=NB, tag=current, cells=["calc"])
    assert still.kind == "stale_cells" and "*5:print('typed')" in still.text
    current = still.text.split(f"Current header: [{NB}#")[1][:4]
    again = await call(ws, "notebook_run", path=NB, tag=current, cells=["calc"])
    assert not again.is_error, again.text
    assert again.reply["cells"][0]["outputs"] == "[1] stream stdout\n42\ntyped"


async def test_an_older_tag_runs_when_its_cells_are_unchanged_and_the_reply_has_the_new_header(
    ws: DirectoryWorkspace, tmp_path: Path
) -> None:
    path = write_notebook(tmp_path, calc="print(6 * 7)", other="z = 0")
    tag = await tag_of_read(ws)
    person_edits(path, "other", "z = 1\nz += 1")
    run = await call(ws, "notebook_run", path=NB, tag=tag, cells=["calc"])
    assert not run.is_error, run.text
    new_tag = run.reply["tag"]
    assert new_tag != tag and run.text.startswith(f"[{NB}#{new_tag}] ran 1 of 1 cell")
    assert run.activity[0].header_before == f"[{NB}#{tag}]"
    assert run.activity[0].header_after == f"[{NB}#{new_tag}]"
    # seen lines carry over to the new header for unchanged lines only
    fine = await call(ws, "notebook_edit", patch=f"[{NB}#{new_tag}]\nreplace 4:\n+print(6 * 8)\n")
    assert not fine.is_error, fine.text
    unseen = await call(ws, "notebook_edit", patch=f"[{NB}#{new_tag}]\nreplace 7:\n+z = 2\n")
    assert (unseen.is_error, unseen.kind) == (True, "unseen_lines")


async def test_lines_the_agent_was_never_shown_are_revealed_then_run(
    ws: DirectoryWorkspace, tmp_path: Path
) -> None:
    write_notebook(tmp_path, shown="a = 1", hidden="print('hidden')")
    tag = await tag_of_read(ws, cells=["shown"])
    refused = await call(ws, "notebook_run", path=NB, tag=tag, cells=["hidden"])
    assert (refused.is_error, refused.kind, refused.status) == (True, "unseen_cells", 409)
    assert "6:print('hidden')" in refused.text and running(ws) == {}
    again = await call(ws, "notebook_run", path=NB, tag=tag, cells=["hidden"])
    assert not again.is_error, again.text
    assert again.reply["cells"][0]["outputs"] == "[1] stream stdout\nhidden"


async def test_a_tag_never_issued_is_refused_and_the_live_text_becomes_known(
    ws: DirectoryWorkspace, tmp_path: Path
) -> None:
    write_notebook(tmp_path, calc="print(1)")
    refused = await call(ws, "notebook_run", path=NB, tag="ABCD", cells=["calc"])
    assert (refused.is_error, refused.kind) == (True, "unknown_tag")
    assert "not from this session" in refused.text and running(ws) == {}
    live_tag = refused.text.split(f"Current header: [{NB}#")[1][:4]
    assert ws.store.by_hash(NB, live_tag) is not None


async def test_markdown_cells_unknown_ids_and_text_files_are_clear_errors(
    ws: DirectoryWorkspace, tmp_path: Path
) -> None:
    write_notebook(tmp_path, calc="print(1)")
    (tmp_path / "notes.py").write_text("print(1)\n")
    tag = await tag_of_read(ws)
    markdown = await call(ws, "notebook_run", path=NB, tag=tag, cells=["intro"])
    assert (markdown.kind, markdown.status) == ("not_runnable", 400)
    assert "cell intro (markdown)" in markdown.text
    unknown = await call(ws, "notebook_run", path=NB, tag=tag, cells=["nope"])
    assert unknown.kind == "bad_anchor" and "Its cell ids are: intro, calc" in unknown.text
    text = await call(ws, "notebook_run", path="notes.py", tag=tag, cells=["x"])
    assert text.kind == "not_runnable" and "not a notebook" in text.text
    missing = await call(ws, "notebook_run", path="gone.ipynb", tag=tag, cells=["x"])
    assert (missing.kind, missing.status) == ("not_found", 404)
    bad = await call(ws, "notebook_run", path=NB, tag=tag, timeout_s=601)
    assert bad.kind == "bad_arguments" and "from 1 to 600" in bad.text
    assert running(ws) == {}


async def test_a_timeout_is_reported_and_the_kernel_runs_the_next_call(
    ws: DirectoryWorkspace, tmp_path: Path
) -> None:
    write_notebook(tmp_path, keep="kept = 'yes'", loop=ENDLESS, after="print(kept)")
    tag = await tag_of_read(ws)
    await call(ws, "notebook_run", path=NB, tag=tag, cells=["keep"])
    stuck = await call(ws, "notebook_run", path=NB, tag=tag, cells=["loop", "after"], timeout_s=2)
    assert not stuck.is_error, stuck.text
    assert [c["status"] for c in stuck.reply["cells"]] == ["timeout", "skipped"]
    assert "interrupted after 2 s" in stuck.text
    after = await call(ws, "notebook_run", path=NB, tag=stuck.reply["tag"], cells=["after"])
    assert after.reply["cells"][0]["outputs"] == "[1] stream stdout\nyes"


async def test_an_image_is_a_placeholder_and_an_error_is_a_result(
    ws: DirectoryWorkspace, tmp_path: Path
) -> None:
    write_notebook(tmp_path, plot=PNG_CELL, fail="1 / 0")
    tag = await tag_of_read(ws)
    run = await call(ws, "notebook_run", path=NB, tag=tag, cells=["plot", "fail"])
    assert not run.is_error, run.text
    assert [c["status"] for c in run.reply["cells"]] == ["ok", "error"]
    assert "[image/png 640x480, " in run.text and "iVBOR" not in run.text
    assert "ZeroDivisionError: division by zero" in run.text and "\x1b" not in run.text
    assert [r.status for r in run.activity[0].runs] == ["ok", "error"]


async def test_refused_and_unavailable_runs_answer_before_reading_anything(
    tmp_path: Path,
) -> None:
    write_notebook(tmp_path, calc="print(1)")
    refusing = open_directory(tmp_path, ":memory:", run_refusal="runs are off: pass --allow-run")
    try:
        refused = await call(refusing, "notebook_run", path=NB, tag="ABCD", cells=["calc"])
    finally:
        await refusing.aclose()
    assert (refused.kind, refused.status, refused.text) == (
        "run_not_allowed",
        403,
        "runs are off: pass --allow-run",
    )
    memory = Workspace(
        NotebookFilesystem(InMemoryFilesystem({NB: (tmp_path / NB).read_text()})),
        InMemorySnapshotStore(),
    )
    missing = await call(memory, "notebook_run", path=NB, tag="ABCD", cells=["calc"])
    assert (missing.kind, missing.status) == ("run_unavailable", 501)
    assert missing.text.startswith("run not available here: ")
    assert memory.store.paths() == []


async def test_closing_the_workspace_shuts_its_kernels_down(tmp_path: Path) -> None:
    write_notebook(tmp_path, calc="print(1)")
    ws = open_directory(tmp_path, ":memory:", run_with=DirectoryKernelPool)
    tag = await tag_of_read(ws)
    await call(ws, "notebook_run", path=NB, tag=tag, cells=["calc"])
    assert isinstance(ws.runner, DirectoryKernelPool)
    [kernel] = ws.runner._kernels.values()
    await ws.aclose()
    assert not await kernel.manager.is_alive()
    assert running(ws) == {}


async def test_with_the_warn_policy_unseen_lines_run_with_a_note(tmp_path: Path) -> None:
    write_notebook(tmp_path, shown="a = 1", hidden="print('hidden')")
    ws = open_directory(tmp_path, ":memory:", seen_lines="warn", run_with=DirectoryKernelPool)
    try:
        tag = await tag_of_read(ws, cells=["shown"])
        run = await call(ws, "notebook_run", path=NB, tag=tag, cells=["hidden"])
    finally:
        await ws.aclose()
    assert not run.is_error, run.text
    assert run.reply["cells"][0]["status"] == "ok"
    assert "note: you were never shown line(s) 6 of the cells that ran" in run.text


async def test_a_workspace_whose_notebooks_read_as_jupytext_refuses_runs(tmp_path: Path) -> None:
    write_notebook(tmp_path, calc="print(1)")
    fs = NotebookFilesystem(DiskFilesystem(tmp_path), projection="py:percent")
    pool = DirectoryKernelPool(fs, tmp_path)
    ws = Workspace(fs, InMemorySnapshotStore(), runner=pool)
    try:
        refused = await call(ws, "notebook_run", path=NB, tag="ABCD", cells=["calc"])
    finally:
        await ws.aclose()
    assert (refused.kind, refused.status) == ("not_runnable", 400)
    assert "projection is 'hashline'" in refused.text and pool.running() == {}


async def test_asked_for_images_a_run_attaches_the_figure_a_cell_drew(
    ws: DirectoryWorkspace, tmp_path: Path
) -> None:
    svg = "from IPython.display import SVG\nSVG('<svg xmlns=\"http://www.w3.org/2000/svg\"/>')"
    write_notebook(tmp_path, plot=FIGURE_CELL, svg=svg)
    tag = await tag_of_read(ws)
    run = await call(ws, "notebook_run", path=NB, tag=tag, cells=["plot", "svg"], images=True)
    assert not run.is_error, run.text
    [figure] = run.images
    assert (figure.cell, figure.output_index, figure.mime) == ("plot", 1, "image/png")
    with Image.open(io.BytesIO(base64.b64decode(figure.data))) as image:
        assert image.size == (figure.width, figure.height) == (1024, 512)
    assert run.reply["images"] == [figure.to_json()]
    assert (
        "image attached: cell plot output [1], image/png 1024x512, downscaled from 1600x800"
        in run.text
    )
    assert "image not attached: cell svg output [1], image/svg+xml: SVG" in run.text
    outputs = await call(ws, "notebook_outputs", path=NB, cell="plot", images=True)
    assert [(f.cell, f.width) for f in outputs.images] == [("plot", 1024)]
    plain = await call(ws, "notebook_outputs", path=NB, cell="plot")
    assert plain.images == () and "images" not in plain.reply and "iVBOR" not in plain.text


async def test_eval_runs_code_in_the_notebooks_kernel_and_never_changes_the_file(
    ws: DirectoryWorkspace, tmp_path: Path
) -> None:
    path = write_notebook(tmp_path, setup="total = 6 * 7")
    tag = await tag_of_read(ws)
    await call(ws, "notebook_run", path=NB, tag=tag, cells=["setup"])
    before = path.read_bytes()
    heard: list[ActivityRecord] = []
    ws.activity.subscribe(heard.append)
    probe = await call(ws, "notebook_eval", path=NB, code="print(total)\ntotal + 1")
    assert not probe.is_error, probe.text
    first, headline, *rest = probe.text.split("\n")
    assert first == f"[{NB}#{tag}] evaluated in kernel python3; the notebook is unchanged"
    assert headline.startswith("cell (eval): ok (execution count 2, ")
    assert rest[:4] == ["[1] stream stdout", "42", "[2] execute_result", "43"]
    assert path.read_bytes() == before
    [record] = probe.activity
    assert heard == [record]
    assert (record.op, record.source, record.who, record.cells) == ("run", "eval", "A", ())
    assert record.diff == "print(total)\ntotal + 1"
    assert [(r.cell, r.status) for r in record.runs] == [("(eval)", "ok")]
    assert record.header_before == record.header_after == f"[{NB}#{tag}]"
    failing = await call(ws, "notebook_eval", path=NB, code="undefined_name")
    assert not failing.is_error and "cell (eval): error" in failing.text
    assert "NameError" in failing.text and path.read_bytes() == before


async def test_eval_is_refused_before_anything_starts_where_runs_are(tmp_path: Path) -> None:
    write_notebook(tmp_path, calc="print(1)")
    refused = open_directory(tmp_path, ":memory:", run_refusal="runs are off here")
    outcome = await run_tool(refused, "notebook_eval", {"path": NB, "code": "1"}, agent="A")
    assert (outcome.is_error, outcome.kind, outcome.text) == (
        True, "run_not_allowed", "runs are off here"
    )  # fmt: skip
    assert refused.activity.recent() == []
    (tmp_path / "notes.txt").write_text("x\n")
    fs = NotebookFilesystem(DiskFilesystem(tmp_path))
    async with DirectoryKernelPool(fs, tmp_path) as pool:
        ws = Workspace(fs, InMemorySnapshotStore(), runner=pool)
        text = await run_tool(ws, "notebook_eval", {"path": "notes.txt", "code": "1"}, agent="A")
        missing = await run_tool(ws, "notebook_eval", {"path": "no.ipynb", "code": "1"}, agent="A")
        assert (text.is_error, text.kind) == (True, "not_runnable") and pool.running() == {}
        assert (missing.is_error, missing.kind) == (True, "not_found") and pool.running() == {}


async def test_kernel_status_never_starts_one_and_restart_forgets_every_variable(
    ws: DirectoryWorkspace, tmp_path: Path
) -> None:
    write_notebook(tmp_path, setup="total = 6 * 7")
    status = await call(ws, "notebook_kernel", path=NB, action="status")
    assert not status.is_error and "no kernel is running" in status.text and running(ws) == {}
    assert status.reply["state"] == "none"
    await call(ws, "notebook_run", path=NB, tag=await tag_of_read(ws), cells=["setup"])
    status = await call(ws, "notebook_kernel", path=NB, action="status")
    assert status.text == f"{NB}: kernel python3 (python) is idle; last execution count seen 1"
    assert (status.reply["state"], status.reply["running"]) == ("idle", None)
    restart = await call(ws, "notebook_kernel", path=NB, action="restart")
    assert restart.text.startswith(f"{NB}: restarted the kernel python3 (python); it was idle")
    assert "variables defined before are gone" in restart.text
    gone = await call(ws, "notebook_eval", path=NB, code="total")
    assert "NameError" in gone.text and "execution count 1," in gone.text
    wrong = await call(ws, "notebook_kernel", path=NB, action="reboot")
    assert (wrong.is_error, wrong.kind) == (True, "bad_arguments")
    assert "status, interrupt or restart" in wrong.text


async def test_an_interrupt_says_whose_run_it_stopped(
    ws: DirectoryWorkspace, tmp_path: Path
) -> None:
    marker = tmp_path / "started"
    write_notebook(tmp_path, spin=f"open({str(marker)!r}, 'w').close()\n{ENDLESS}", after="x = 1")
    tag = await tag_of_read(ws, "B")
    pending = asyncio.ensure_future(
        call(ws, "notebook_run", "B", path=NB, tag=tag, cells=["spin"], timeout_s=120)
    )
    await until(marker.exists, "the cell to start")
    status = await call(ws, "notebook_kernel", path=NB, action="status")
    assert status.reply["state"] == "busy" and "busy with B's run of cells spin" in status.text
    stopped = await call(ws, "notebook_kernel", "A", path=NB, action="interrupt")
    assert "interrupted the kernel python3 (python); this stopped B's run of cells spin" in (
        stopped.text
    )
    run = await pending
    assert run.reply["cells"][0]["status"] == "error" and "KeyboardInterrupt" in run.text
    idle = await call(ws, "notebook_kernel", path=NB, action="interrupt")
    assert "it was idle: nothing was running, nothing was stopped" in idle.text


async def test_an_idle_kernel_is_shut_down_and_the_next_run_says_why(tmp_path: Path) -> None:
    write_notebook(tmp_path, setup="total = 1")

    def pool(fs: NotebookFilesystem, root: Path) -> DirectoryKernelPool:
        return DirectoryKernelPool(fs, root, idle_timeout_s=1)

    ws = open_directory(tmp_path, ":memory:", run_with=pool)
    try:
        tag = await tag_of_read(ws)
        first = await call(ws, "notebook_run", path=NB, tag=tag, cells=["setup"])
        assert not first.is_error and running(ws) == {NB: "python3"}
        await until(lambda: running(ws) == {}, "the idle kernel to be shut down", limit_s=30)
        again = await call(ws, "notebook_run", path=NB, tag=first.reply["tag"], cells=["setup"])
        assert "was shut down after 1 s without a run" in again.text
        assert running(ws) == {NB: "python3"}
    finally:
        await ws.aclose()
    assert running(ws) == {}
