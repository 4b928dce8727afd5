"""A busy workspace moves its calls' engine steps off the event loop: with more than
`BUSY_CALLS` calls in flight, every step runs in a worker thread (so a person's request is not
queued behind all of them); with fewer, small files' steps stay on the loop."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import nbformat
import pytest
from test_workspace_revert import notebook

from jupyter_hashline.hashline import InMemoryFilesystem, InMemorySnapshotStore, offload
from jupyter_hashline.notebook import NotebookFilesystem
from jupyter_hashline.tools import Workspace, run_tool
from jupyter_hashline.tools.workspace import BUSY_CALLS


class WaitingFilesystem(InMemoryFilesystem):
    """Files in memory whose reads wait for the event loop once, as a disk's do: calls
    started together are then in flight together."""

    async def read_text(self, path: str) -> str:
        await asyncio.sleep(0)
        return await super().read_text(path)


@pytest.fixture
def threads_used(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The names of the threads `offloaded` ran steps in (an engine step in a worker)."""
    used: list[str] = []
    hand_off = asyncio.to_thread

    async def counted(work: Any, *args: Any) -> Any:
        def run() -> Any:
            used.append(threading.current_thread().name)
            return work(*args)

        return await hand_off(run)

    monkeypatch.setattr(offload.asyncio, "to_thread", counted)
    return used


async def test_calls_in_flight_beyond_the_limit_run_their_steps_in_worker_threads(
    threads_used: list[str],
) -> None:
    files = {f"n{k}.ipynb": notebook() for k in range(BUSY_CALLS + 4)}
    ws = Workspace(NotebookFilesystem(WaitingFilesystem(files)), InMemorySnapshotStore())
    alone = await run_tool(ws, "notebook_read", {"path": "n0.ipynb"}, agent="a")
    assert not alone.is_error and threads_used == []  # one small call: on the loop
    reads = [
        run_tool(ws, "notebook_read", {"path": path}, agent=f"agent-{k}")
        for k, path in enumerate(files)
    ]
    done = await asyncio.gather(*reads)
    assert not any(outcome.is_error for outcome in done)
    assert threads_used and threading.main_thread().name not in threads_used
    threads_used.clear()  # every call counted out again: alone, on the loop once more
    again = await run_tool(ws, "notebook_read", {"path": "n1.ipynb"}, agent="a")
    assert not again.is_error and threads_used == []


async def test_a_heavy_edit_finds_the_cells_it_touched_in_a_worker_thread(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The cells an edit touched (its next run's default) are found by parsing the projection
    before and after it: for an edit of `OFFLOAD_EDITS` edits or more that parse runs in a
    worker thread too (10,000 edits of a 10,000-cell notebook held the loop 100 ms with it)."""
    from jupyter_hashline.tools.runs import TouchedCells

    ran_in: list[str] = []
    between = TouchedCells.between

    def counted(before: str, after: str) -> tuple[str, ...]:
        ran_in.append(threading.current_thread().name)
        return between(before, after)

    monkeypatch.setattr(TouchedCells, "between", staticmethod(counted))
    cells = offload.OFFLOAD_EDITS + 2
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(f"x{k} = {k}", id=f"c{k}") for k in range(cells)]
    ws = Workspace(
        NotebookFilesystem(InMemoryFilesystem({"n.ipynb": nbformat.writes(nb)})),
        InMemorySnapshotStore(),
    )
    read = await run_tool(ws, "notebook_read", {"path": "n.ipynb"}, agent="a")
    header = read.text.split("\n", 1)[0]
    few = await run_tool(
        ws, "notebook_edit", {"patch": f"{header}\nreplace 2:\n+x0 = 100\n"}, agent="a"
    )
    assert not few.is_error, few.text
    assert ran_in == [threading.main_thread().name]  # one small edit: on the loop
    header = few.text.split("\n", 1)[0].split("]", 1)[0] + "]"
    edits = "".join(f"replace {2 * k + 2}:\n+x{k} = {k + 1}\n" for k in range(cells))
    many = await run_tool(ws, "notebook_edit", {"patch": f"{header}\n{edits}"}, agent="a")
    assert not many.is_error, many.text
    assert len(ran_in) == 2 and ran_in[1] != threading.main_thread().name
    assert ws.touched.get("a", "n.ipynb") == tuple(f"c{k}" for k in range(cells))
