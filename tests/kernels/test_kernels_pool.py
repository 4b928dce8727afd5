"""`DirectoryKernelPool` with real ipykernel kernels started through jupyter_client."""

from __future__ import annotations

import asyncio
import json
import os
import signal
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import nbformat
import pytest
from testkit.cells import PNG_CELL

from jupyter_hashline.hashline.disk import DiskFilesystem
from jupyter_hashline.hashline.errors import HashlineError
from jupyter_hashline.kernels import (
    CellToRun,
    KernelDiedError,
    KernelUnavailableError,
    OutputEvent,
    RunStatus,
    StaleCellsError,
    plan_run,
)
from jupyter_hashline.kernels.clients import own_client
from jupyter_hashline.kernels.pool import DirectoryKernelPool
from jupyter_hashline.notebook import NotebookFilesystem

NB = "work/analysis.ipynb"


def write_notebook(root: Path, *sources: str, kernelspec: dict[str, str] | None = None) -> Path:
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = kernelspec or {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    nb.cells = [nbformat.v4.new_markdown_cell("# Title", id="intro")]
    nb.cells += [nbformat.v4.new_code_cell(s, id=f"c{i}") for i, s in enumerate(sources)]
    path = root / NB
    path.parent.mkdir(parents=True, exist_ok=True)
    nbformat.write(nb, path)
    return path


@pytest.fixture
def fs(tmp_path: Path) -> NotebookFilesystem:
    return NotebookFilesystem(DiskFilesystem(tmp_path))


@pytest.fixture
def pool(
    fs: NotebookFilesystem, tmp_path: Path, jp_asyncio_loop: asyncio.AbstractEventLoop
) -> Iterator[DirectoryKernelPool]:
    """A pool for the test; its kernels are shut down afterwards (in the test's loop)."""
    running = DirectoryKernelPool(fs, tmp_path)
    yield running
    jp_asyncio_loop.run_until_complete(running.close())


def cells(path: Path) -> list[dict[str, Any]]:
    return list(json.loads(path.read_text("utf-8"))["cells"])


async def test_a_cell_runs_and_its_output_is_written_with_its_execution_count(
    pool: DirectoryKernelPool, tmp_path: Path
) -> None:
    path = write_notebook(tmp_path, "print(6 * 7)", "y = 1")
    before = cells(path)
    run = await pool.run(NB, [CellToRun("c0", "print(6 * 7)")], timeout_s=30)
    [cell] = run.cells
    assert cell.status is RunStatus.OK and cell.execution_count == 1
    assert "42" in cell.to_text() and run.kernel == "python3"
    assert run.notes == (f"started a python3 kernel for {NB}",)
    after = cells(path)
    assert after[1]["outputs"] == [{"name": "stdout", "output_type": "stream", "text": ["42\n"]}]
    assert after[1]["execution_count"] == 1
    assert after[0] == before[0] and after[2] == before[2]
    assert run.landed_text == await pool.fs.read_text(NB)
    assert pool.running() == {NB: "python3"}


async def test_the_kernel_works_in_the_notebooks_folder_and_keeps_its_variables(
    pool: DirectoryKernelPool, tmp_path: Path
) -> None:
    write_notebook(tmp_path, "x = 41", "import os\nprint(os.getcwd(), x + 1)")
    await pool.run(NB, [CellToRun("c0", "x = 41")], timeout_s=30)
    run = await pool.run(NB, [CellToRun("c1", "import os\nprint(os.getcwd(), x + 1)")])
    assert run.cells[0].status is RunStatus.OK
    assert f"{(tmp_path / 'work').resolve()} 42" in run.cells[0].to_text()
    assert run.notes == () and run.cells[0].execution_count == 2


async def test_a_timeout_interrupts_the_cell_and_the_kernel_stays_usable(
    pool: DirectoryKernelPool, tmp_path: Path
) -> None:
    path = write_notebook(tmp_path, "state = 'kept'", "while True: pass", "print(state)")
    await pool.run(NB, [CellToRun("c0", "state = 'kept'")], timeout_s=30)
    run = await pool.run(
        NB, [CellToRun("c1", "while True: pass"), CellToRun("c2", "print(state)")], timeout_s=2
    )
    looping, after = run.cells
    assert looping.status is RunStatus.TIMEOUT
    assert "interrupted after 2 s" in looping.note and "still usable" in looping.note
    assert 2000 <= looping.duration_ms < 10_000
    assert after.status is RunStatus.SKIPPED
    assert cells(path)[2]["execution_count"] == 2
    again = await pool.run(NB, [CellToRun("c2", "print(state)")], timeout_s=30)
    assert again.cells[0].status is RunStatus.OK and "kept" in again.cells[0].to_text()
    assert again.notes == ()


async def test_an_image_comes_back_as_a_sized_placeholder_never_base64(
    pool: DirectoryKernelPool, tmp_path: Path
) -> None:
    path = write_notebook(tmp_path, PNG_CELL)
    run = await pool.run(NB, [CellToRun("c0", PNG_CELL)], timeout_s=60)
    text = run.cells[0].to_text()
    assert run.cells[0].status is RunStatus.OK
    assert "[image/png 640x480, " in text
    stored = cells(path)[1]["outputs"][0]["data"]["image/png"]
    assert len(stored) > 1000 and stored[:60] not in text
    assert len(text) < 300


async def test_an_error_is_reported_and_later_cells_do_not_run(
    pool: DirectoryKernelPool, tmp_path: Path
) -> None:
    path = write_notebook(tmp_path, "1 / 0", "print('after')")
    run = await pool.run(NB, [CellToRun("c0", "1 / 0"), CellToRun("c1", "print('after')")])
    failed, skipped = run.cells
    assert failed.status is RunStatus.ERROR
    assert "[1] error ZeroDivisionError: division by zero" in failed.to_text()
    assert "\x1b" not in failed.to_text()
    assert skipped.status is RunStatus.SKIPPED and "cell c0 did not finish ok" in skipped.note
    stored = cells(path)
    assert stored[1]["outputs"][0]["ename"] == "ZeroDivisionError"
    assert stored[2]["outputs"] == [] and stored[2]["execution_count"] is None


async def test_a_killed_kernel_gives_a_clear_error_then_a_fresh_kernel(
    pool: DirectoryKernelPool, tmp_path: Path
) -> None:
    write_notebook(tmp_path, "x = 1", "print(6 * 7)")
    await pool.run(NB, [CellToRun("c0", "x = 1")], timeout_s=30)
    os.kill(pool._kernels[NB].manager.provisioner.process.pid, signal.SIGKILL)
    for _ in range(100):
        if not await pool._kernels[NB].alive():
            break
        await asyncio.sleep(0.05)
    with pytest.raises(KernelDiedError) as caught:
        await pool.run(NB, [CellToRun("c1", "print(6 * 7)")])
    assert "died since its last run, so nothing ran" in caught.value.message
    assert caught.value.status == 503
    run = await pool.run(NB, [CellToRun("c1", "print(6 * 7)")], timeout_s=30)
    assert run.cells[0].status is RunStatus.OK and "42" in run.cells[0].to_text()
    assert run.notes == (
        f"started a new python3 kernel for {NB} because the previous one died; variables "
        "defined before are gone",
    )


async def test_a_kernel_dying_mid_cell_ends_that_cell_as_an_error(
    pool: DirectoryKernelPool, tmp_path: Path
) -> None:
    suicide = "import os, signal\nos.kill(os.getpid(), signal.SIGKILL)"
    write_notebook(tmp_path, suicide, "print(6 * 7)")
    run = await pool.run(NB, [CellToRun("c0", suicide), CellToRun("c1", "print(6 * 7)")])
    died, skipped = run.cells
    assert died.status is RunStatus.ERROR
    assert (
        died.note == "the kernel died while running this cell; it is started again at the next run"
    )
    assert skipped.status is RunStatus.SKIPPED
    assert pool.running() == {}
    again = await pool.run(NB, [CellToRun("c1", "print(6 * 7)")], timeout_s=30)
    assert again.cells[0].status is RunStatus.OK


async def test_outputs_stream_to_the_listener_as_they_arrive(
    pool: DirectoryKernelPool, tmp_path: Path
) -> None:
    code = "import time\nprint('first', flush=True)\ntime.sleep(0.5)\nprint('second')"
    write_notebook(tmp_path, code)
    seen: list[tuple[str, float, OutputEvent]] = []
    loop = asyncio.get_running_loop()

    def listen(cell_id: str, events: tuple[OutputEvent, ...]) -> None:
        seen.extend((cell_id, loop.time(), e) for e in events)

    run = await pool.run(NB, [CellToRun("c0", code)], timeout_s=30, on_output=listen)
    assert [(c, e.kind) for c, _, e in seen] == [("c0", "append"), ("c0", "extend")]
    assert seen[1][1] - seen[0][1] >= 0.4
    assert run.cells[0].outputs[0]["text"] == "first\nsecond\n"


async def test_a_stale_cell_is_refused_before_any_kernel_starts(
    pool: DirectoryKernelPool, fs: NotebookFilesystem, tmp_path: Path
) -> None:
    path = write_notebook(tmp_path, "print(6 * 7)")
    snapshot = await fs.read_text(NB)
    nb = nbformat.read(path, as_version=4)
    nb.cells[1].source = "import shutil; shutil.rmtree('/tmp/x')  # a person's half-typed line"
    nbformat.write(nb, path)
    raw = path.read_bytes()
    with pytest.raises(StaleCellsError) as caught:
        plan = plan_run(
            NB, tag="ABCD", snapshot_text=snapshot, live_text=await fs.read_text(NB), cells=["c0"]
        )
        await pool.run(NB, plan.cells)
    assert caught.value.message.splitlines()[2].startswith("*4:import shutil")
    assert pool.running() == {} and path.read_bytes() == raw


async def test_kernelspecs_fall_back_to_python3_only_for_python_notebooks(
    pool: DirectoryKernelPool, tmp_path: Path
) -> None:
    spec = {"name": "conda-env-foo-py", "display_name": "Foo", "language": "python"}
    write_notebook(tmp_path, "print(1)", kernelspec=spec)
    run = await pool.run(NB, [CellToRun("c0", "print(1)")], timeout_s=30)
    assert run.kernel == "python3"
    other = "other/julia.ipynb"
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("1 + 1", id="j")])
    nb.metadata["kernelspec"] = {"name": "julia-1.10", "display_name": "Julia", "language": "julia"}
    (tmp_path / "other").mkdir()
    nbformat.write(nb, tmp_path / other)
    with pytest.raises(KernelUnavailableError, match=r"needs the kernel 'julia-1\.10'"):
        await pool.run(other, [CellToRun("j", "1 + 1")])


async def test_bad_timeouts_and_paths_outside_the_root_are_refused(
    pool: DirectoryKernelPool, tmp_path: Path
) -> None:
    write_notebook(tmp_path, "1")
    for bad in (0, 601, "5", True):
        with pytest.raises(HashlineError, match="timeout_s must be"):
            await pool.run(NB, [CellToRun("c0", "1")], timeout_s=bad)  # type: ignore[arg-type]
    with pytest.raises(HashlineError, match="outside"):
        await pool.run("../escape.ipynb", [CellToRun("c0", "1")])
    assert pool.running() == {}


async def test_close_shuts_every_kernel_down(fs: NotebookFilesystem, tmp_path: Path) -> None:
    write_notebook(tmp_path, "1")
    pool = DirectoryKernelPool(fs, tmp_path)
    await pool.run(NB, [CellToRun("c0", "1")], timeout_s=30)
    manager = pool._kernels[NB].manager
    assert await manager.is_alive()
    await pool.close()
    assert not await manager.is_alive()
    with pytest.raises(KernelUnavailableError, match="closed"):
        await pool.run(NB, [CellToRun("c0", "1")])


async def started(client: Any, msg_id: str) -> None:
    """Wait until the kernel has begun executing request `msg_id` (its execute_input)."""
    while True:
        msg = await client.get_iopub_msg(timeout=30)
        is_input = msg["header"]["msg_type"] == "execute_input"
        if is_input and msg["parent_header"].get("msg_id") == msg_id:
            return


async def test_a_cell_queued_behind_someone_elses_work_is_never_interrupting_it(
    pool: DirectoryKernelPool, tmp_path: Path
) -> None:
    """The time limit counts from the cell's own start: another client's long cell is
    never interrupted; a cell still queued after twice its limit reports busy."""
    write_notebook(tmp_path, "print('agent')")
    await pool.run(NB, [CellToRun("c0", "print('agent')")], timeout_s=30)
    other = own_client(pool._kernels[NB].manager)
    try:
        await other.wait_for_ready(timeout=30)
        msg_id = other.execute("import time\ntime.sleep(3.5)\nprint('other done')")
        await started(other, msg_id)  # the other cell runs before the agent's is sent
        run = await pool.run(NB, [CellToRun("c0", "print('agent')")], timeout_s=1)
        [cell] = run.cells
        assert cell.status is RunStatus.BUSY and "queued behind it" in cell.note
        reply = await other.get_shell_msg(timeout=30)
        assert reply["parent_header"]["msg_id"] == msg_id
        assert reply["content"]["status"] == "ok"  # not interrupted
    finally:
        other.stop_channels()
