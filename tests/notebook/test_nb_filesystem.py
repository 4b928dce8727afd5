"""NotebookFilesystem over in-memory and disk storage: reads, writes, capabilities, errors."""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from testkit import nb_strategies
from testkit.nb_files import Storage, analysis, dumps, loads

from jupyter_hashline.hashline.disk import DiskFilesystem
from jupyter_hashline.hashline.errors import AnchorError, HashlineError
from jupyter_hashline.hashline.filesystem import CellSelector, LineRebaser, ViewAnnotator
from jupyter_hashline.hashline.memory_fs import InMemoryFilesystem
from jupyter_hashline.hashline.memory_store import InMemorySnapshotStore
from jupyter_hashline.hashline.offload import OFFLOAD_SIZE
from jupyter_hashline.hashline.patcher import Patcher
from jupyter_hashline.notebook import NotebookFilesystem, project_notebook
from jupyter_hashline.notebook import filesystem as fs_module
from jupyter_hashline.notebook.errors import InvalidNotebookError
from jupyter_hashline.notebook.serialize import CellJsonCache


@pytest.fixture(params=["memory", "disk"])
def storage(request: pytest.FixtureRequest, tmp_path: Path) -> Storage:
    return Storage(request.param, tmp_path)


def fresh_ids():
    counter = itertools.count(1)
    return lambda: f"new{next(counter)}"


async def test_reads_show_the_projection_and_other_files_pass_through(storage: Storage) -> None:
    storage.put("a.ipynb", dumps(analysis()))
    storage.put("notes.txt", "plain\r\ntext")
    fs = NotebookFilesystem(storage.fs)
    assert await fs.read_text("a.ipynb") == project_notebook(analysis())
    assert await fs.read_text("notes.txt") == "plain\r\ntext"
    assert fs.normalized_view("a.ipynb") and fs.normalized_view("A.IPYNB")
    assert not fs.normalized_view("notes.txt")
    await fs.write_text("notes.txt", "new")
    assert storage.get("notes.txt") == "new"
    assert isinstance(fs, (LineRebaser, ViewAnnotator, CellSelector))


async def test_a_write_merges_serializes_like_jupyter_and_reports_the_landed_text(
    storage: Storage,
) -> None:
    storage.put("a.ipynb", dumps(analysis()))
    fs = NotebookFilesystem(storage.fs, new_id=fresh_ids())
    text = await fs.read_text("a.ipynb")
    edited = text.replace("df.plot()", "df.plot(kind='bar')") + "# %% [markdown]\nDone.\n"
    result = await fs.write_text("a.ipynb", edited)
    assert result.text == edited.replace("# %% [markdown]\n", "# %% [markdown] id=new1\n")
    assert result.notes == ("new markdown cell id=new1 (line 12)",)
    raw = storage.get("a.ipynb")
    nb = loads(raw)
    assert raw == dumps(nb)
    assert nb.cells[1].outputs[0]["text"] == "a\nb\nc\n" and nb.cells[1].execution_count == 1
    assert nb.cells[1].metadata == {"tags": ["load"]} and nb.metadata["x-custom"] == {"k": 1}
    assert await fs.read_text("a.ipynb") == result.text


async def test_clear_outputs_on_edit(storage: Storage) -> None:
    storage.put("a.ipynb", dumps(analysis()))
    fs = NotebookFilesystem(storage.fs, clear_outputs_on_edit=True)
    text = await fs.read_text("a.ipynb")
    await fs.write_text("a.ipynb", text.replace("sales.csv", "s.csv"))
    cell = loads(storage.get("a.ipynb")).cells[1]
    assert cell.outputs == [] and cell.execution_count is None


async def test_creating_a_notebook_from_a_projection(storage: Storage) -> None:
    fs = NotebookFilesystem(storage.fs, new_id=fresh_ids())
    result = await fs.write_text("new.ipynb", "# %% [markdown]\n# Hi\n# %% [code]\nx = 1\n")
    assert result.text == "# %% [markdown] id=new1\n# Hi\n# %% [code] id=new2\nx = 1\n"
    nb = loads(storage.get("new.ipynb"))
    assert (nb.nbformat, nb.nbformat_minor) == (4, 5)
    assert [c.source for c in nb.cells] == ["# Hi", "x = 1"]


async def test_an_edit_that_would_break_the_schema_is_refused_untouched(storage: Storage) -> None:
    raw = dumps(analysis())
    storage.put("a.ipynb", raw)
    fs = NotebookFilesystem(storage.fs)
    text = await fs.read_text("a.ipynb")
    with pytest.raises(InvalidNotebookError, match=r"not be a valid notebook .*cell plot") as info:
        await fs.write_text("a.ipynb", text.replace("[code] id=plot", "[python] id=plot"))
    assert "Nothing was written" in str(info.value)
    assert storage.get("a.ipynb") == raw


async def test_an_invalid_notebook_is_written_saying_it_is_still_invalid(
    storage: Storage,
) -> None:
    nb = analysis()
    nb["metadata"]["kernelspec"] = "BAD"
    raw = dumps(nb)
    storage.put("bad.ipynb", raw)
    fs = NotebookFilesystem(storage.fs)
    text = await fs.read_text("bad.ipynb")
    assert "id=load-data" in text
    result = await fs.write_text("bad.ipynb", text.replace("df.plot()", "x"))
    (warning,) = result.warnings
    assert "still not a valid notebook (metadata/kernelspec: 'BAD'" in warning
    assert storage.get("bad.ipynb") == raw.replace('"df.plot()"', '"x"')


async def test_broken_json_is_a_clear_read_error(storage: Storage) -> None:
    storage.put("broken.ipynb", '{"cells": [\n<<<<<<< HEAD\n')
    fs = NotebookFilesystem(storage.fs)
    with pytest.raises(InvalidNotebookError, match=r"not valid JSON.*conflict markers"):
        await fs.read_text("broken.ipynb")
    with pytest.raises(InvalidNotebookError):
        await fs.write_text("broken.ipynb", "# %% [code]\nx\n")
    assert storage.get("broken.ipynb") == '{"cells": [\n<<<<<<< HEAD\n'


async def test_legacy_notebooks_keep_their_version_and_get_no_ids(storage: Storage) -> None:
    raw = dumps(analysis(minor=4))
    storage.put("old.ipynb", raw)
    fs = NotebookFilesystem(storage.fs)
    text = await fs.read_text("old.ipynb")
    assert "id=cell-2" in text and await fs.read_text("old.ipynb") == text
    assert (await fs.write_text("old.ipynb", text)).text == text
    assert storage.get("old.ipynb") == raw
    result = await fs.write_text("old.ipynb", text.replace("df.plot()", "df.plot(1)"))
    assert result.text == text.replace("df.plot()", "df.plot(1)")
    assert result.warnings == ()
    nb = loads(storage.get("old.ipynb"))
    assert nb.nbformat_minor == 4 and all("id" not in cell for cell in nb.cells)
    changed = [
        n for n, (a, b) in enumerate(zip(loads(raw).cells, nb.cells, strict=True)) if a != b
    ]  # fmt: skip
    assert changed == [3]


async def test_read_then_write_parses_the_file_once(monkeypatch: pytest.MonkeyPatch) -> None:
    calls: list[int] = []
    original = fs_module.load_notebook

    def counting(raw: str | bytes, path: str = "notebook", **given: object) -> object:
        calls.append(1)
        return original(raw, path, **given)

    monkeypatch.setattr(fs_module, "load_notebook", counting)
    inner = InMemoryFilesystem({"a.ipynb": dumps(analysis())})
    fs = NotebookFilesystem(inner)
    text = await fs.read_text("a.ipynb")
    await fs.write_text("a.ipynb", text.replace("df.plot()", "df"))
    await fs.read_text("a.ipynb")
    assert calls == [1]


async def test_a_storage_that_rewrites_on_save_is_believed() -> None:
    def reformat(path: str, content: str) -> str:
        nb = loads(content)
        nb.cells[-1].source = "rewritten()"
        return dumps(nb)

    inner = InMemoryFilesystem({"a.ipynb": dumps(analysis())}, transform_on_write=reformat)
    fs = NotebookFilesystem(inner)
    text = await fs.read_text("a.ipynb")
    result = await fs.write_text("a.ipynb", text.replace("df.plot()", "df.plot(2)"))
    assert result.text.endswith("# %% [code] id=plot\nrewritten()\n")


async def test_capabilities_through_the_patcher() -> None:
    nb = analysis()
    inner = InMemoryFilesystem({"a.ipynb": dumps(nb)})
    fs = NotebookFilesystem(inner)
    patcher = Patcher(fs, InMemorySnapshotStore())
    view = (await patcher.read("a.ipynb")).view.split("\n")
    assert view[6] == "   ⎿ outputs: stream (3 lines)" and view[5].startswith("5:df =")
    part = await patcher.read("a.ipynb", cells=["plot", "intro"])
    assert [row.split(":")[0] for row in part.view.split("\n")[1:5]] == ["1", "2", "10", "11"]
    with pytest.raises(AnchorError, match=r"no cell with id nope.*intro, load-data, clean, plot"):
        await patcher.read("a.ipynb", cells=["nope"])
    outputs = await fs.outputs("a.ipynb", "load-data")
    assert outputs == "cell load-data: 1 output (execution count 1)\n[1] stream stdout\na\nb\nc"
    with pytest.raises(HashlineError, match="not a notebook"):
        await fs.outputs("x.py", "c")


def test_unknown_projections_are_refused() -> None:
    with pytest.raises(ValueError, match="unknown projection 'ipynb'"):
        NotebookFilesystem(InMemoryFilesystem(), projection="ipynb")


async def test_a_cell_too_broken_to_be_a_cell_is_read_but_never_written(storage: Storage) -> None:
    nb = analysis()
    del nb["cells"][1]["cell_type"]
    del nb["cells"][1]["source"]
    raw = json.dumps(nb, indent=1, sort_keys=True)
    storage.put("broken.ipynb", raw)
    fs = NotebookFilesystem(storage.fs)
    text = await fs.read_text("broken.ipynb")
    with pytest.raises(InvalidNotebookError, match=r"cell_type None .* can be read but not"):
        await fs.write_text("broken.ipynb", text + "# %% [code]\nx = 1\n")
    assert storage.get("broken.ipynb") == raw


class CountingDisk(DiskFilesystem):
    """The disk, counting the byte reads and writes the notebook layer asks for."""

    def __init__(self, root: Path) -> None:
        super().__init__(root)
        self.calls: list[str] = []

    async def read_bytes(self, path: str) -> bytes:
        self.calls.append("read")
        return await super().read_bytes(path)

    async def write_bytes(self, path: str, data: bytes) -> None:
        self.calls.append("write")
        await super().write_bytes(path, data)


async def test_each_engine_call_reads_the_notebook_once_as_bytes(tmp_path: Path) -> None:
    (tmp_path / "a.ipynb").write_text(dumps(analysis()), encoding="utf-8")
    disk = CountingDisk(tmp_path)
    patcher = Patcher(NotebookFilesystem(disk), InMemorySnapshotStore())
    read = await patcher.read("a.ipynb")
    assert disk.calls == ["read"]
    line = read.text.split("\n").index("df.plot()") + 1
    await patcher.apply(f"{read.header}\nreplace {line}:\n+df.plot(kind='bar')\n")
    assert disk.calls == ["read", "read", "write"]
    assert loads((tmp_path / "a.ipynb").read_text()).cells[-1].source == "df.plot(kind='bar')"


async def test_a_notebook_is_weighed_by_its_projection_once_it_has_one(
    storage: Storage, monkeypatch: pytest.MonkeyPatch
) -> None:
    """What decides whether a step runs in a worker thread: the file's bytes on first contact,
    then the length of the notebook's projection, where megabytes of image data count for
    a short summary line."""
    weights: list[int] = []
    real = fs_module.offloaded

    async def weighed(size, work):  # type: ignore[no-untyped-def]
        weights.append(size)
        return await real(size, work)

    monkeypatch.setattr(fs_module, "offloaded", weighed)
    nb = analysis()
    image = {"output_type": "display_data", "metadata": {}, "data": {"image/png": "iVBO" * 400_000}}
    nb["cells"][3]["outputs"] = [image]
    storage.put("a.ipynb", dumps(nb))
    fs = NotebookFilesystem(storage.fs)
    text = await fs.read_text("a.ipynb")
    raw_size = len(storage.get("a.ipynb").encode())
    assert weights == [raw_size] and raw_size > OFFLOAD_SIZE  # nothing known yet
    weights.clear()
    await fs.write_text("a.ipynb", text.replace("df.plot()", "df.plot(kind='bar')"))
    assert weights and set(weights) == {len(text)} and len(text) < 1_000
    weights.clear()
    assert "df.plot(kind='bar')" in await fs.read_text("a.ipynb")
    assert weights and all(w < 1_000 for w in weights)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(nb=nb_strategies.notebooks(max_cells=8))
def test_output_notes_sit_on_each_cells_last_line(nb: dict[str, Any]) -> None:
    """Counted in the projection by its markers, the notes land where counting each cell's
    source lines puts them (the last line of the cell, its marker when it has no source)."""
    from jupyter_hashline.notebook.loading import LoadedNotebook

    loaded = LoadedNotebook(dumps(nb).encode(), loads(dumps(nb)))
    by_markers = fs_module._output_notes(loaded, CellJsonCache())
    by_sources = fs_module._output_notes_by_sources(loaded.nb["cells"], CellJsonCache())
    assert by_markers == by_sources
    lines = loaded.projection.split("\n")
    assert all(1 <= line <= len(lines) for line in by_markers)
