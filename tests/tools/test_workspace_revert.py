"""`Workspace.revert`: an agent's edit undone through the engine, on the file as it is now.

A person's later work is kept (other lines, even of the same cell); an undo whose lines the
person changed is refused with nothing written; cells come back whole; several undos are all
or nothing."""

from __future__ import annotations

from typing import Any

import nbformat

from jupyter_hashline.hashline.memory_fs import InMemoryFilesystem
from jupyter_hashline.hashline.memory_store import InMemorySnapshotStore
from jupyter_hashline.notebook import NotebookFilesystem
from jupyter_hashline.tools import RevertRequest, ToolOutcome, Workspace, revert_request, run_tool

TWENTY = "".join(f"line {n}\n" for n in range(1, 21))
PNG = (
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAE"
    "hQGAhKmMIQAAAABJRU5ErkJggg=="
)


def workspace(files: dict[str, str], **options: Any) -> tuple[InMemoryFilesystem, Workspace]:
    inner = InMemoryFilesystem(files)
    return inner, Workspace(NotebookFilesystem(inner), InMemorySnapshotStore(), **options)


def notebook() -> str:
    nb = nbformat.v4.new_notebook()
    intro = nbformat.v4.new_markdown_cell("# Title\nsome text", id="intro")
    intro.attachments = {"dot.png": {"image/png": PNG}}
    load = nbformat.v4.new_code_cell("import math\nx = 1\ny = 2\nprint(x + y)", id="load")
    load.outputs = [nbformat.v4.new_output("stream", name="stdout", text="3\n")]
    load.execution_count = 4
    load.metadata = {"tags": ["keep-me"]}
    plot = nbformat.v4.new_code_cell("z = x * y\nz", id="plot")
    plot.outputs = [nbformat.v4.new_output("display_data", data={"image/png": PNG})]
    nb.cells = [intro, load, plot]
    return nbformat.writes(nb) + "\n"


async def edit(ws: Workspace, agent: str, path: str, body: str) -> ToolOutcome:
    read = await run_tool(ws, "notebook_read", {"path": path}, agent=agent)
    header = read.text.split("\n")[0]
    outcome = await run_tool(ws, "notebook_edit", {"patch": f"{header}\n{body}"}, agent=agent)
    assert not outcome.is_error, outcome.text
    return outcome


async def revert(ws: Workspace, **body: Any) -> ToolOutcome:
    return await ws.revert(revert_request(body, agent="person"))


def cells(inner: InMemoryFilesystem, path: str = "a.ipynb") -> dict[str, Any]:
    return {cell["id"]: cell for cell in nbformat.reads(inner.get(path), 4)["cells"]}


def person_sets(inner: InMemoryFilesystem, index: int, source: str) -> None:
    """A person's save: cell `index` of a.ipynb gets `source`."""
    current = nbformat.reads(inner.get("a.ipynb"), 4)
    current.cells[index].source = source
    inner.set("a.ipynb", nbformat.writes(current) + "\n")


async def test_an_undo_keeps_a_persons_later_edit_elsewhere() -> None:
    inner, ws = workspace({"t.txt": TWENTY})
    done = await edit(ws, "claude", "t.txt", "replace 3:\n+THREE\n")
    inner.set("t.txt", inner.get("t.txt").replace("line 15\n", "person's 15\n"))
    undone = await revert(ws, activity=done.activity[0].id)
    assert not undone.is_error, undone.text
    assert inner.get("t.txt") == TWENTY.replace("line 15\n", "person's 15\n")
    (record,) = undone.activity
    assert (record.source, record.reverts, record.who) == (
        "revert",
        (done.activity[0].id,),
        "person",
    )
    assert undone.reply["reverted"] == [done.activity[0].id]
    assert record.to_json()["undoable"] is True


async def test_an_undo_keeps_a_persons_edit_of_other_lines_of_the_same_cell() -> None:
    inner, ws = workspace({"a.ipynb": notebook()})
    done = await edit(ws, "claude", "a.ipynb", "replace 6:\n+x = 10\n")
    assert cells(inner)["load"]["source"] == "import math\nx = 10\ny = 2\nprint(x + y)"
    person_sets(inner, 1, "import math\nx = 10\ny = 2\nprint(x + y, 'person')")
    undone = await revert(ws, activity=done.activity[0].id)
    assert not undone.is_error, undone.text
    load = cells(inner)["load"]
    assert load["source"] == "import math\nx = 1\ny = 2\nprint(x + y, 'person')"
    assert load["outputs"][0]["text"] == "3\n" and load["metadata"] == {"tags": ["keep-me"]}


async def test_an_undo_of_a_line_the_person_changed_is_refused_and_writes_nothing() -> None:
    inner, ws = workspace({"a.ipynb": notebook()})
    done = await edit(ws, "claude", "a.ipynb", "replace 6:\n+x = 10\n")
    person_sets(inner, 1, "import math\nx = 11  # person\ny = 2\nprint(x + y)")
    before = inner.get("a.ipynb")
    refused = await revert(ws, activity=done.activity[0].id)
    assert (refused.is_error, refused.kind, refused.status) == (True, "revert_refused", 409)
    assert inner.get("a.ipynb") == before
    assert f"activity {done.activity[0].id}" in refused.text
    assert "*6:x = 11  # person" in refused.text  # the conflicting line, marked
    assert [r.source for r in ws.activity.recent()] == ["patch"]


async def test_an_undo_removes_the_cell_the_agent_added() -> None:
    inner, ws = workspace({"a.ipynb": notebook()})
    done = await edit(ws, "claude", "a.ipynb", "insert after 8:\n+# %% [code]\n+print('new')\n")
    assert len(cells(inner)) == 4
    undone = await revert(ws, activity=done.activity[0].id)
    assert not undone.is_error, undone.text
    assert list(cells(inner)) == ["intro", "load", "plot"]


async def test_an_undo_brings_deleted_cells_back_whole() -> None:
    original = notebook()
    inner, ws = workspace({"a.ipynb": original})
    done = await edit(ws, "claude", "a.ipynb", "delete 1..8\n")
    assert list(cells(inner)) == ["plot"]
    undone = await revert(ws, activity=done.activity[0].id)
    assert not undone.is_error, undone.text
    assert cells(inner) == cells(InMemoryFilesystem({"a.ipynb": original}))
    assert any("restored markdown cell id=intro" in n for n in undone.activity[0].notes)


async def test_an_agents_edits_since_a_time_are_undone_newest_first() -> None:
    inner, ws = workspace({"t.txt": TWENTY})
    first = await edit(ws, "claude", "t.txt", "replace 3:\n+THREE\n")
    await edit(ws, "other", "t.txt", "replace 5:\n+FIVE\n")
    await edit(ws, "claude", "t.txt", "replace 3:\n+THREE again\ninsert after 9:\n+extra\n")
    undone = await revert(ws, agent="claude", since_ms=first.activity[0].at_ms)
    assert not undone.is_error, undone.text
    assert inner.get("t.txt") == TWENTY.replace("line 5\n", "FIVE\n")
    assert undone.reply["reverted"] == [3, 1]
    again = await revert(ws, activity=1)
    assert (again.kind, again.status) == ("revert_refused", 409)
    assert "already undone" in again.text


async def test_several_undos_are_all_or_nothing() -> None:
    inner, ws = workspace({"t.txt": TWENTY})
    first = await edit(ws, "claude", "t.txt", "replace 3:\n+THREE\n")
    await edit(ws, "claude", "t.txt", "replace 12:\n+TWELVE\n")
    inner.set("t.txt", inner.get("t.txt").replace("THREE\n", "person's three\n"))
    before = inner.get("t.txt")
    refused = await revert(ws, agent="claude", since_ms=first.activity[0].at_ms)
    assert (refused.kind, refused.status) == ("revert_refused", 409)
    assert inner.get("t.txt") == before
    assert "put back" in refused.text
    assert [r.source for r in ws.activity.recent()] == ["patch", "patch"]


async def test_unknown_refused_and_turned_off_undos() -> None:
    _, ws = workspace({"t.txt": TWENTY}, revert_refusal="Undo is turned off here.")
    done = await edit(ws, "claude", "t.txt", "replace 3:\n+THREE\n")
    off = await revert(ws, activity=done.activity[0].id)
    assert (off.kind, off.status, off.text) == (
        "revert_not_allowed",
        403,
        "Undo is turned off here.",
    )
    _, ws = workspace({"t.txt": TWENTY})
    missing = await ws.revert(RevertRequest(agent="person", activity=99))
    assert (missing.kind, missing.status) == ("unknown_activity", 404)


def test_revert_bodies_are_validated() -> None:
    for body in ({}, {"activity": 0}, {"activity": 1, "agent": "x"}, {"agent": "x"}, {"x": 1}):
        try:
            revert_request(body, agent="p")
        except ValueError as err:
            assert "activity" in str(err)
        else:
            raise AssertionError(body)
    assert revert_request({"agent": "c", "since_ms": 5}, agent="p").target_agent == "c"


async def test_a_cell_added_to_a_notebook_without_ids_is_not_undone_by_position() -> None:
    legacy = nbformat.reads(notebook(), 4)
    legacy.nbformat_minor = 4
    for cell in legacy.cells:
        del cell["id"]
    inner, ws = workspace({"a.ipynb": nbformat.writes(legacy) + "\n"})
    done = await edit(ws, "claude", "a.ipynb", "insert after 3:\n+# %% [code]\n+print('new')\n")
    assert done.activity[0].to_json()["undoable"] is False
    before = inner.get("a.ipynb")
    refused = await revert(ws, activity=done.activity[0].id)
    assert (refused.kind, refused.status) == ("revert_refused", 409)
    assert "positions" in refused.text and inner.get("a.ipynb") == before


async def test_a_deleted_cell_whose_id_a_copy_took_comes_back_whole_under_a_new_id() -> None:
    inner, ws = workspace({"a.ipynb": notebook()})
    done = await edit(ws, "claude", "a.ipynb", "delete 4..8\n")
    current = nbformat.reads(inner.get("a.ipynb"), 4)
    copy = nbformat.v4.new_code_cell("print('a copy')", id="load")  # a paste kept the old id
    current.cells.append(copy)
    inner.set("a.ipynb", nbformat.writes(current) + "\n")
    undone = await revert(ws, activity=done.activity[0].id)
    assert not undone.is_error, undone.text
    back = nbformat.reads(inner.get("a.ipynb"), 4).cells
    assert [c.source for c in back][1] == "import math\nx = 1\ny = 2\nprint(x + y)"
    assert back[1].outputs[0]["text"] == "3\n" and back[1].id == "load-2"
    assert back[-1].id == "load" and back[-1].source == "print('a copy')"


class TypingAfterWrites(InMemoryFilesystem):
    """A file a person changes right after the `nth` write lands (between two steps of one
    undo request), by `change`."""

    def __init__(self, files: dict[str, str], nth: int, change: Any) -> None:
        super().__init__(files)
        self.writes, self.nth, self.change = 0, nth, change

    async def write_text(self, path: str, content: str) -> Any:
        landed = await super().write_text(path, content)
        self.writes += 1
        if self.writes == self.nth:
            self.set(path, self.change(self.get(path)))
        return landed


async def test_an_undo_that_cannot_be_put_back_stays_and_the_feed_shows_it() -> None:
    inner = TypingAfterWrites(
        {"t.txt": TWENTY}, nth=3, change=lambda text: text.replace("line 12\n", "p12\n")
    )
    ws = Workspace(NotebookFilesystem(inner), InMemorySnapshotStore())
    first = await edit(ws, "claude", "t.txt", "replace 3:\n+THREE\n")
    await edit(ws, "claude", "t.txt", "replace 12:\n+TWELVE\n")  # write 2
    inner.set("t.txt", inner.get("t.txt").replace("THREE\n", "person's three\n"))
    refused = await revert(ws, agent="claude", since_ms=first.activity[0].at_ms)
    assert (refused.kind, refused.status) == ("revert_refused", 409)
    assert "could not be put back" in refused.text and "activity 2" in refused.text
    # the undo of edit 2 landed (write 3) and the person then changed its line: it stays
    assert inner.get("t.txt") == TWENTY.replace("line 3\n", "person's three\n").replace(
        "line 12\n", "p12\n"
    )
    newest = ws.activity.recent()[0]
    assert (newest.source, newest.reverts) == ("revert", (2,))
