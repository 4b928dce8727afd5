"""`Workspace`: per-agent seen lines and no-op streaks, one lock table, the activity log naming
the agent, repair warnings kept on every path, and outcomes instead of exceptions."""

from __future__ import annotations

import asyncio
from typing import Any

import nbformat
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


def three_cells() -> dict[str, str]:
    """A notebook whose read shows: 4 `a = 1`, 7 `c = a + b`, 10 `print(d)`."""
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_markdown_cell("# Title", id="intro")]
    sources = {"load": "a = 1\nb = 2", "clean": "c = a + b\nd = c * 2", "plot": "print(d)"}
    nb.cells += [nbformat.v4.new_code_cell(source, id=cid) for cid, source in sources.items()]
    return {"n.ipynb": nbformat.writes(nb)}


@pytest.mark.parametrize(
    ("change", "clean_line", "sources"),
    [  # another cell's text changes; a new cell is added above (line 7 is then line 9)
        (
            "replace 10:\n+print(d + 1)\n",
            7,
            ["a = 10\nb = 2", "c = a - b\nd = c * 2", "print(d + 1)"],
        ),
        (
            "insert after 2:\n+# %% [code]\n+x = 0\n",
            9,
            ["x = 0", "a = 10\nb = 2", "c = a - b\nd = c * 2", "print(d)"],
        ),
    ],
)
async def test_a_recovered_edit_keeps_the_lines_the_agent_saw(
    change: str, clean_line: int, sources: list[str]
) -> None:
    inner, ws = workspace(three_cells())
    read = await call(ws, "A", "notebook_read", path="n.ipynb")
    header = read.text.split("\n")[0]
    other = (await call(ws, "B", "notebook_read", path="n.ipynb")).text.split("\n")[0]
    moved = await call(ws, "B", "notebook_edit", patch=f"{other}\n{change}")
    assert not moved.is_error, moved.text
    stale = await call(ws, "A", "notebook_edit", patch=f"{header}\nreplace 4:\n+a = 10\n")
    assert not stale.is_error and "recovered" in stale.text, stale.text
    tag = stale.reply["sections"][0]["tag"]
    follow = await call(
        ws, "A", "notebook_edit", patch=f"[n.ipynb#{tag}]\nreplace {clean_line}:\n+c = a - b\n"
    )
    assert not follow.is_error, follow.text
    cells = [cell.source for cell in nbformat.reads(inner.get("n.ipynb"), 4).cells]
    assert cells == ["# Title", *sources]


async def test_lines_another_agent_changed_are_not_carried_as_seen() -> None:
    _, ws = workspace(three_cells())
    header = (await call(ws, "A", "notebook_read", path="n.ipynb")).text.split("\n")[0]
    other = (await call(ws, "B", "notebook_read", path="n.ipynb")).text.split("\n")[0]
    await call(ws, "B", "notebook_edit", patch=f"{other}\nreplace 10:\n+print(d + 1)\n")
    stale = await call(ws, "A", "notebook_edit", patch=f"{header}\nreplace 4:\n+a = 10\n")
    tag = stale.reply["sections"][0]["tag"]
    unseen = await call(ws, "A", "notebook_edit", patch=f"[n.ipynb#{tag}]\nreplace 10:\n+pass\n")
    assert (unseen.is_error, unseen.kind) == (True, "unseen_lines")
    assert "10:print(d + 1)" in unseen.text


async def test_an_insert_at_the_tail_of_a_stale_text_keeps_the_lines_the_agent_saw() -> None:
    inner, ws = workspace()
    header = (await call(ws, "A", "notebook_read", path="t.txt")).text.split("\n")[0]
    inner.set("t.txt", "new top\n" + TWENTY)
    tail = await call(ws, "A", "notebook_edit", patch=f"{header}\ninsert tail:\n+END\n")
    assert not tail.is_error, tail.text
    tag = tail.reply["sections"][0]["tag"]
    follow = await call(ws, "A", "notebook_edit", patch=f"[t.txt#{tag}]\nreplace 3:\n+TWO\n")
    assert not follow.is_error, follow.text
    assert inner.get("t.txt").split("\n")[:3] == ["new top", "line 1", "TWO"]
