"""What the notebook filesystem says about a write reaches the agent's reply."""

from __future__ import annotations

from testkit.nb_files import analysis, dumps, loads

from jupyter_hashline.hashline.memory_fs import InMemoryFilesystem
from jupyter_hashline.hashline.memory_store import InMemorySnapshotStore
from jupyter_hashline.hashline.patcher import Patcher
from jupyter_hashline.notebook import NotebookFilesystem


async def test_new_cell_ids_are_reported_in_the_patch_reply() -> None:
    inner = InMemoryFilesystem({"a.ipynb": dumps(analysis())})
    fs = NotebookFilesystem(inner, new_id=lambda: "fresh-cell")
    patcher = Patcher(fs, InMemorySnapshotStore())
    read = await patcher.read("a.ipynb")
    last = len(read.text.splitlines())
    result = await patcher.apply(f"{read.header}\ninsert after {last}:\n+# %% [code]\n+x = 1\n")
    reply = result.to_text()
    assert "note: new code cell id=fresh-cell" in reply
    # a new cell's id is a note (nothing to act on), never a warning
    assert any("fresh-cell" in n for n in result.sections[0].notes)
    assert not result.sections[0].warnings
    # the generic "landed text differs" notice is not added on top of the filesystem's own
    assert not any("differs" in w for w in result.sections[0].warnings)
    assert "# %% [code] id=fresh-cell" in result.sections[0].after


async def test_lines_seen_before_stay_seen_when_new_cells_get_ids() -> None:
    # the write landed a text unlike the one sent (the new cell's marker got its id): the lines
    # that stayed the same stay seen under the new header, so editing (or running) a cell read
    # before needs no second read; only the changed marker line is not carried
    inner = InMemoryFilesystem({"a.ipynb": dumps(analysis())})
    fs = NotebookFilesystem(inner, new_id=lambda: "fresh-cell")
    store = InMemorySnapshotStore()
    patcher = Patcher(fs, store)
    read = await patcher.read("a.ipynb")
    last = len(read.text.splitlines())
    result = await patcher.apply(f"{read.header}\ninsert after {last}:\n+# %% [code]\n+x = 1\n")
    section = result.sections[0]
    seen = store.seen_lines("a.ipynb", section.tag)
    assert set(range(1, last + 1)) <= seen  # the whole first read, far from the preview
    second = await patcher.apply(f"{section.header}\nreplace 2:\n+# Sales analysis, revised\n")
    assert second.sections[0].written


async def test_a_marker_naming_another_cells_id_moves_none_of_its_data() -> None:
    # The audit's one-line edit: line 2 (the intro's text) becomes a marker naming load-data.
    # load-data keeps its outputs, execution count and tags; the marker is a new empty cell.
    inner = InMemoryFilesystem({"a.ipynb": dumps(analysis())})
    fs = NotebookFilesystem(inner, new_id=lambda: "fresh-cell")
    patcher = Patcher(fs, InMemorySnapshotStore())
    read = await patcher.read("a.ipynb")
    result = await patcher.apply(f"{read.header}\nreplace 2:\n+# %% [code] id=load-data\n")
    nb = loads(inner.get("a.ipynb"))
    assert [c["id"] for c in nb["cells"]] == ["intro", "fresh-cell", "load-data", "clean", "plot"]
    before = loads(dumps(analysis()))["cells"][1]
    load = nb["cells"][2]
    assert (load["outputs"], load["execution_count"], load["metadata"]) == (
        before["outputs"],
        before["execution_count"],
        before["metadata"],
    )
    assert load["source"] == before["source"]
    assert nb["cells"][1]["outputs"] == [] and nb["cells"][1]["execution_count"] is None
    warnings = result.sections[0].warnings
    assert any("fresh-cell" in w and "id=load-data" in w for w in warnings)
