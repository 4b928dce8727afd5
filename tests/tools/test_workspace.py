"""`Workspace`: per-agent seen lines and no-op streaks, one lock table, the activity log naming
the agent, repair warnings kept on every path, and outcomes instead of exceptions."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from jupyter_hashline.hashline.memory_fs import InMemoryFilesystem
from jupyter_hashline.hashline.memory_store import InMemorySnapshotStore
from jupyter_hashline.notebook import NotebookFilesystem
from jupyter_hashline.tools import ToolOutcome, Workspace, run_tool

TWENTY = "".join(f"line {n}\n" for n in range(1, 21))


def workspace(files: dict[str, str] | None = None) -> tuple[InMemoryFilesystem, Workspace]:
    inner = InMemoryFilesystem(files or {"t.txt": TWENTY})
    return inner, Workspace(NotebookFilesystem(inner), InMemorySnapshotStore())


async def call(ws: Workspace, agent: str, name: str, **arguments: Any) -> ToolOutcome:
    return await run_tool(ws, name, arguments, agent=agent)


async def test_an_agent_may_edit_only_lines_it_was_shown() -> None:
    inner, ws = workspace()
    a = await call(ws, "A", "notebook_read", path="t.txt", offset=1, limit=10)
    await call(ws, "B", "notebook_read", path="t.txt", offset=11, limit=10)
    header = a.text.split("\n")[0]
    rejected = await call(ws, "B", "notebook_edit", patch=f"{header}\nreplace 3:\n+THREE\n")
    assert (rejected.is_error, rejected.kind, rejected.status) == (True, "unseen_lines", 409)
    assert inner.get("t.txt") == TWENTY
    applied = await call(ws, "A", "notebook_edit", patch=f"{header}\nreplace 3:\n+THREE\n")
    assert not applied.is_error and inner.get("t.txt").split("\n")[2] == "THREE"
    assert [(r.who, r.source, r.path) for r in applied.activity] == [("A", "patch", "t.txt")]
    assert [r.who for r in ws.activity.recent()] == ["A"]
    assert applied.reply["activity"] == [applied.activity[0].to_json()]


async def test_noop_streaks_are_per_agent() -> None:
    _, ws = workspace()
    header = (await call(ws, "A", "notebook_read", path="t.txt")).text.split("\n")[0]
    await call(ws, "B", "notebook_read", path="t.txt")
    same = f"{header}\nreplace 1:\n+line 1\n"
    for _ in range(2):
        assert not (await call(ws, "A", "notebook_edit", patch=same)).is_error
    assert not (await call(ws, "B", "notebook_edit", patch=same)).is_error
    third = await call(ws, "A", "notebook_edit", patch=same)
    assert (third.is_error, third.kind) == (True, "repeated_noop")


async def test_one_lock_table_serializes_every_agent() -> None:
    _, ws = workspace()
    assert ws.patcher("A").locks is ws.patcher("B").locks is ws.locks
    key = await ws.fs.canonical_path("t.txt")
    async with ws.locks.hold([key]):
        pending = asyncio.ensure_future(call(ws, "C", "notebook_read", path="t.txt"))
        await asyncio.sleep(0.05)
        assert not pending.done()  # a read waits for the holder of the file's lock
    assert not (await pending).is_error
    assert len(ws.locks) == 0


async def test_a_pasted_prefix_repair_is_reported_when_applied_and_when_recovered() -> None:
    inner, ws = workspace()
    header = (await call(ws, "A", "notebook_read", path="t.txt")).text.split("\n")[0]
    fresh = await call(ws, "A", "notebook_edit", patch=f"{header}\nreplace 2:\n+2:TWO\n")
    assert not fresh.is_error and "warning:" in fresh.text and "prefix" in fresh.text
    assert inner.get("t.txt").split("\n")[1] == "TWO"
    header = fresh.text.split(" ")[0]
    inner.set("t.txt", "new top\n" + inner.get("t.txt"))  # someone else adds a line
    stale = await call(ws, "A", "notebook_edit", patch=f"{header}\nreplace 5:\n+5:FIVE\n")
    assert not stale.is_error, stale.text
    assert "recovered" in stale.text and "prefix" in stale.text
    assert inner.get("t.txt").split("\n")[5] == "FIVE"
    assert any("prefix" in w for w in stale.activity[0].warnings)


async def test_errors_are_outcomes_with_the_kind_and_status() -> None:
    _, ws = workspace()
    missing = await call(ws, "A", "notebook_read", path="nope.txt")
    assert (missing.is_error, missing.kind, missing.status) == (True, "not_found", 404)
    assert missing.reply == {"error": "not_found", "message": missing.text}
    unknown = await call(ws, "A", "notebook_frobnicate", path="t.txt")
    assert (unknown.kind, unknown.status) == ("unknown_tool", 404)


@pytest.mark.parametrize("agents", [300])
async def test_patchers_are_bounded_and_seen_lines_outlive_them(agents: int) -> None:
    _, ws = workspace()
    first = await call(ws, "agent-0", "notebook_read", path="t.txt", offset=1, limit=2)
    for n in range(1, agents):
        ws.patcher(f"agent-{n}")
    assert len(ws._patchers) == 256  # the oldest patchers were dropped...
    header = first.text.split("\n")[0]
    again = await call(ws, "agent-0", "notebook_edit", patch=f"{header}\nreplace 1:\n+ONE\n")
    assert not again.is_error, again.text  # ...but the seen lines live in the store


async def test_each_edit_chooses_the_layout_a_notebook_is_written_in() -> None:
    import json

    import nbformat

    nb = nbformat.v4.new_notebook(
        cells=[nbformat.v4.new_code_cell(f"x = {n}", id=f"c{n}") for n in range(3)]
    )
    colab = json.dumps(json.loads(nbformat.writes(nb)), indent=2)  # no final newline
    inner, ws = workspace({"nb.ipynb": colab})
    read = await call(ws, "A", "notebook_read", path="nb.ipynb")
    header, lines = read.text.split("\n")[0], read.text.split("\n")
    line = next(n for n, row in enumerate(lines) if row.endswith("x = 1"))
    kept = await call(ws, "A", "notebook_edit", patch=f"{header}\nreplace {line}:\n+x = 10\n")
    assert not kept.is_error
    assert inner.get("nb.ipynb") == colab.replace('"x = 1"', '"x = 10"')
    read = await call(ws, "A", "notebook_read", path="nb.ipynb")
    header = read.text.split("\n")[0]
    rewritten = await call(
        ws, "A", "notebook_edit", patch=f"{header}\nreplace {line}:\n+x = 11\n", layout="nbformat"
    )
    assert not rewritten.is_error
    written = inner.get("nb.ipynb")
    assert written == nbformat.writes(nbformat.reads(written, as_version=4)) + "\n"
    wrong = await call(ws, "A", "notebook_edit", patch="x", layout="pretty")
    assert (wrong.is_error, wrong.kind) == (True, "bad_arguments")
    assert "keep or nbformat" in wrong.text
