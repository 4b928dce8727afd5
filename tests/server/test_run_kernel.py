"""`ServerKernelRunner`: agents' cells run in the notebook's own kernel of a real Jupyter
server (pytest-jupyter's, with jupyter-collaboration), never cutting into a person's work,
and live in the person's view when the notebook is open in a collaboration room."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import nbformat
import pytest
from testkit.rest import Fetch, write_notebook
from testkit.rooms import OpenInLab, until
from traitlets.config import Config

from jupyter_hashline.hashline import section_tag
from jupyter_hashline.kernels import (
    CellToRun,
    KernelDiedError,
    KernelUnavailableError,
    RunStatus,
    StaleCellsError,
    plan_run,
)
from jupyter_hashline.kernels.clients import own_client
from jupyter_hashline.notebook import NotebookFilesystem
from jupyter_hashline.server.adapters.contents_fs import ContentsFilesystem
from jupyter_hashline.server.adapters.live import (
    LiveContentsFilesystem,
    LiveWriteGuard,
)
from jupyter_hashline.server.adapters.live_rooms import RoomFinder
from jupyter_hashline.server.adapters.run_kernel import ServerKernelRunner

NB = "work/analysis.ipynb"
SLOW = "import time\nprint('first', flush=True)\ntime.sleep(1.5)\nprint('second')"


@pytest.fixture
def jp_server_config(collaboration_server_config: Config) -> Config:
    return collaboration_server_config


@pytest.fixture
def notebooks(jp_serverapp: Any) -> NotebookFilesystem:
    contents = ContentsFilesystem(jp_serverapp.contents_manager)
    rooms = RoomFinder(lambda: jp_serverapp.web_app.settings)
    live = LiveContentsFilesystem(contents, rooms)
    return NotebookFilesystem(live, guard=LiveWriteGuard(live))


@pytest.fixture
def runner(
    jp_serverapp: Any, notebooks: NotebookFilesystem, jp_asyncio_loop: asyncio.AbstractEventLoop
) -> Iterator[ServerKernelRunner]:
    built = ServerKernelRunner.from_serverapp(
        jp_serverapp,
        contents=notebooks.inner.contents,
        notebooks=notebooks,
        rooms=notebooks.inner.rooms,
    )
    yield built
    jp_asyncio_loop.run_until_complete(built.close())


async def lab_session(jp_fetch: Fetch, path: str) -> dict[str, Any]:
    """A kernel session for `path`, created the way JupyterLab creates it."""
    body = {
        "path": path,
        "name": Path(path).name,
        "type": "notebook",
        "kernel": {"name": "python3"},
    }
    reply = await jp_fetch("api", "sessions", method="POST", body=json.dumps(body))
    return dict(json.loads(reply.body))


def disk_cells(root: Path) -> list[dict[str, Any]]:
    return list(json.loads((root / NB).read_text("utf-8"))["cells"])


class Person:
    """Someone running code in the kernel from their own client (as JupyterLab does)."""

    def __init__(self, manager: Any) -> None:
        self.client = own_client(manager)  # JupyterLab's connections have their own sessions

    async def __aenter__(self) -> Person:
        await self.client.wait_for_ready(timeout=30)
        return self

    async def __aexit__(self, *exc: object) -> None:
        self.client.stop_channels()

    async def run(self, code: str) -> dict[str, Any]:
        msg_id = self.client.execute(code)
        while True:
            reply = await self.client.get_shell_msg(timeout=60)
            if reply["parent_header"].get("msg_id") == msg_id:
                return dict(reply["content"])


async def test_a_run_without_a_session_starts_one_and_writes_the_output(
    runner: ServerKernelRunner, jp_serverapp: Any, jp_root_dir: Path
) -> None:
    write_notebook(jp_root_dir / NB, "print(6 * 7)", "y = 2")
    run = await runner.run(NB, [CellToRun("cell-0", "print(6 * 7)")], timeout_s=60)
    [cell] = run.cells
    assert cell.status is RunStatus.OK and "42" in cell.to_text()
    assert run.notes == (f"started a python3 kernel session for {NB}",)
    stored = disk_cells(jp_root_dir)
    assert stored[0]["outputs"] == [{"name": "stdout", "output_type": "stream", "text": ["42\n"]}]
    assert stored[0]["execution_count"] == cell.execution_count == 1
    assert stored[1]["outputs"] == [] and stored[1]["execution_count"] is None
    sessions = await jp_serverapp.session_manager.list_sessions()
    assert [(s["path"], s["kernel"]["name"]) for s in sessions] == [(NB, "python3")]
    again = await runner.run(NB, [CellToRun("cell-1", "y = 2")])
    assert again.notes == () and again.cells[0].execution_count == 2


@pytest.mark.parametrize("session_path", [NB, f"RTC:{NB}"])
async def test_the_run_uses_the_kernel_of_the_session_jupyterlab_opened(
    runner: ServerKernelRunner,
    jp_serverapp: Any,
    jp_fetch: Fetch,
    jp_root_dir: Path,
    session_path: str,
) -> None:
    """JupyterLab names the session by the notebook's path (with the collaboration drive's
    `RTC:` prefix in some versions)."""
    write_notebook(jp_root_dir / NB, "import os\nprint(os.getpid(), os.getcwd())")
    session = await lab_session(jp_fetch, session_path)
    manager = jp_serverapp.kernel_manager.get_kernel(session["kernel"]["id"])
    run = await runner.run(NB, [CellToRun("cell-0", "import os\nprint(os.getpid(), os.getcwd())")])
    pid, cwd = run.cells[0].outputs[0]["text"].split()
    assert int(pid) == manager.provisioner.process.pid
    if session_path == NB:  # the server sets the cwd from the session's path
        assert Path(cwd) == (jp_root_dir / "work").resolve()
    assert run.notes == () and len(await jp_serverapp.session_manager.list_sessions()) == 1


async def test_a_persons_running_cell_is_never_interrupted_the_agent_waits_its_turn(
    runner: ServerKernelRunner, jp_serverapp: Any, jp_fetch: Fetch, jp_root_dir: Path
) -> None:
    """Timed from the send, the agent's cell would take over 4 s and hit its 3 s limit;
    timed from its own start it takes 1.5 s."""
    agent_code = "import time\ntime.sleep(1.5)\nprint('agent done')"
    write_notebook(jp_root_dir / NB, agent_code)
    session = await lab_session(jp_fetch, NB)
    manager = jp_serverapp.kernel_manager.get_kernel(session["kernel"]["id"])
    async with Person(manager) as person:
        persons = asyncio.create_task(person.run("import time\ntime.sleep(3)\nperson_done = 1"))
        await until(lambda: manager.execution_state == "busy", "the person's cell to start")
        started = time.monotonic()
        run = await runner.run(NB, [CellToRun("cell-0", agent_code)], timeout_s=3)
        assert (await persons)["status"] == "ok"  # never interrupted
    [cell] = run.cells
    assert cell.status is RunStatus.OK and "agent done" in cell.to_text()
    assert time.monotonic() - started >= 4.0  # waited for the person, then ran its own 1.5 s
    assert 1400 <= cell.duration_ms < 3000


async def test_a_kernel_busy_for_the_whole_timeout_reports_busy_and_runs_nothing(
    runner: ServerKernelRunner, jp_serverapp: Any, jp_fetch: Fetch, jp_root_dir: Path
) -> None:
    write_notebook(jp_root_dir / NB, "agent_ran = True")
    raw = (jp_root_dir / NB).read_bytes()
    session = await lab_session(jp_fetch, NB)
    manager = jp_serverapp.kernel_manager.get_kernel(session["kernel"]["id"])
    async with Person(manager) as person:
        persons = asyncio.create_task(person.run("import time\ntime.sleep(3)\nperson_done = 1"))
        await until(lambda: manager.execution_state == "busy", "the person's cell to start")
        run = await runner.run(NB, [CellToRun("cell-0", "agent_ran = True")], timeout_s=1)
        assert (await persons)["status"] == "ok"  # not interrupted
        [cell] = run.cells
        assert cell.status is RunStatus.BUSY and "stayed busy" in cell.note
        check = await person.run("assert person_done == 1 and 'agent_ran' not in globals()")
        assert check["status"] == "ok"
    assert run.landed_text is None and (jp_root_dir / NB).read_bytes() == raw


async def test_a_timeout_interrupts_only_the_agents_cell_and_the_kernel_stays_usable(
    runner: ServerKernelRunner, jp_root_dir: Path
) -> None:
    write_notebook(jp_root_dir / NB, "kept = 1", "while True: pass", "print(kept + 41)")
    await runner.run(NB, [CellToRun("cell-0", "kept = 1")], timeout_s=60)
    run = await runner.run(NB, [CellToRun("cell-1", "while True: pass")], timeout_s=2)
    assert run.cells[0].status is RunStatus.TIMEOUT
    assert "KeyboardInterrupt" in run.cells[0].to_text()
    again = await runner.run(NB, [CellToRun("cell-2", "print(kept + 41)")], timeout_s=60)
    assert again.cells[0].status is RunStatus.OK and "42" in again.cells[0].to_text()


async def test_a_kernel_that_dies_mid_cell_is_reported_and_the_next_run_works(
    runner: ServerKernelRunner, jp_root_dir: Path
) -> None:
    suicide = "import os, signal\nos.kill(os.getpid(), signal.SIGKILL)"
    write_notebook(jp_root_dir / NB, suicide, "print(6 * 7)")
    await runner.run(NB, [CellToRun("cell-1", "print(6 * 7)")], timeout_s=60)
    run = await runner.run(NB, [CellToRun("cell-0", suicide)], timeout_s=60)
    assert run.cells[0].status is RunStatus.ERROR
    assert run.cells[0].note.startswith("the kernel died while running this cell; the kernel is")
    again = await runner.run(NB, [CellToRun("cell-1", "print(6 * 7)")], timeout_s=60)
    assert again.cells[0].status is RunStatus.OK and "42" in again.cells[0].to_text()
    assert any("variables" in note for note in again.notes)


async def test_in_an_open_room_the_person_sees_the_output_arrive_and_it_is_saved(
    runner: ServerKernelRunner,
    jp_root_dir: Path,
    open_in_lab: OpenInLab,
) -> None:
    write_notebook(jp_root_dir / NB, "a = 1", SLOW)
    async with open_in_lab(NB) as person:
        person.ycells[0]["source"].insert(5, "  # typed, not saved")
        running = asyncio.create_task(runner.run(NB, [CellToRun("cell-1", SLOW)], timeout_s=60))

        def outputs() -> list[dict[str, Any]]:
            return list(person.get_cell(1).get("outputs", []))

        await until(lambda: any("first" in str(o.get("text")) for o in outputs()), "'first'")
        assert not running.done()  # the first line arrived while the cell still ran
        assert person.ycells[1]["execution_state"] == "running"
        run = await running
        await until(lambda: person.get_cell(1)["execution_count"] == 1, "the execution count")
        assert outputs() == [{"output_type": "stream", "name": "stdout", "text": "first\nsecond\n"}]
        assert person.ycells[1]["execution_state"] == "idle"
        stored = disk_cells(jp_root_dir)  # saved right away, not after the save delay
        assert stored[1]["outputs"][0]["text"] == ["first\n", "second\n"]
        assert stored[1]["execution_count"] == 1
        assert "".join(stored[0]["source"]) == "a = 1  # typed, not saved"
        assert person.get_cell(0)["source"] == "a = 1  # typed, not saved"
    assert run.cells[0].status is RunStatus.OK and run.write_warnings == ()
    assert run.landed_text is not None and "typed, not saved" in run.landed_text


async def test_in_a_room_a_persons_typing_in_the_cell_refuses_the_run(
    runner: ServerKernelRunner,
    jp_serverapp: Any,
    notebooks: NotebookFilesystem,
    jp_root_dir: Path,
    open_in_lab: OpenInLab,
) -> None:
    write_notebook(jp_root_dir / NB, "print(6 * 7)")
    snapshot = await notebooks.read_text(NB)
    async with open_in_lab(NB) as person:
        person.ycells[0]["source"].insert(0, "import shutil  # half-typed\n")
        await until(lambda: "half-typed" in _live_source(jp_serverapp), "the typing to arrive")
        live = await notebooks.read_text(NB)
        with pytest.raises(StaleCellsError) as caught:
            plan = plan_run(
                NB,
                tag=section_tag(snapshot),
                snapshot_text=snapshot,
                live_text=live,
                cells=["cell-0"],
            )
            await runner.run(NB, plan.cells)
        assert "*2:import shutil  # half-typed" in caught.value.message.splitlines()
    assert await jp_serverapp.session_manager.list_sessions() == []


def _live_source(jp_serverapp: Any) -> str:
    rooms = jp_serverapp.web_app.settings["jupyter_server_ydoc"].ywebsocket_server.rooms
    [room] = [r for key, r in rooms.items() if key.startswith("json:notebook:")]
    return str(room._document.ycells[0]["source"])


async def test_a_notebook_with_a_kernel_the_server_lacks_is_refused(
    runner: ServerKernelRunner, jp_serverapp: Any, jp_root_dir: Path
) -> None:
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("1 + 1", id="j")])
    nb.metadata["kernelspec"] = {"name": "julia-1.10", "display_name": "Julia", "language": "julia"}
    (jp_root_dir / "work").mkdir(parents=True)
    nbformat.write(nb, jp_root_dir / NB)
    with pytest.raises(KernelUnavailableError, match=r"needs the kernel 'julia-1\.10'"):
        await runner.run(NB, [CellToRun("j", "1 + 1")])
    assert await jp_serverapp.session_manager.list_sessions() == []


async def test_a_dead_kernel_the_server_did_not_restart_is_refused_then_restarted(
    runner: ServerKernelRunner, jp_serverapp: Any, jp_fetch: Fetch, jp_root_dir: Path
) -> None:
    write_notebook(jp_root_dir / NB, "print(6 * 7)")
    session = await lab_session(jp_fetch, NB)
    manager = jp_serverapp.kernel_manager.get_kernel(session["kernel"]["id"])
    await runner.run(NB, [CellToRun("cell-0", "print(6 * 7)")], timeout_s=60)
    manager.stop_restarter()  # a kernel whose automatic restarts gave up
    os.kill(manager.provisioner.process.pid, signal.SIGKILL)
    await until(lambda: manager.provisioner.process.poll() is not None, "the kernel to die")
    with pytest.raises(KernelDiedError, match="is dead, so nothing ran"):
        await runner.run(NB, [CellToRun("cell-0", "print(6 * 7)")], timeout_s=60)
    run = await runner.run(NB, [CellToRun("cell-0", "print(6 * 7)")], timeout_s=60)
    assert run.cells[0].status is RunStatus.OK and "42" in run.cells[0].to_text()
    assert run.notes == (f"restarted the dead kernel of {NB}: variables defined before are gone",)


async def test_a_room_opened_while_the_cells_run_gets_the_outputs_at_the_end(
    runner: ServerKernelRunner, jp_root_dir: Path, open_in_lab: OpenInLab
) -> None:
    write_notebook(jp_root_dir / NB, SLOW)
    running = asyncio.create_task(runner.run(NB, [CellToRun("cell-0", SLOW)], timeout_s=60))
    await asyncio.sleep(0.3)
    async with open_in_lab(NB) as person:
        assert not running.done()
        run = await running
        await until(lambda: person.get_cell(0)["execution_count"] == 1, "the outputs to arrive")
        assert person.get_cell(0)["outputs"] == [
            {"output_type": "stream", "name": "stdout", "text": "first\nsecond\n"}
        ]
        assert disk_cells(jp_root_dir)[0]["outputs"][0]["text"] == ["first\n", "second\n"]
    assert run.cells[0].status is RunStatus.OK and run.write_warnings == ()
