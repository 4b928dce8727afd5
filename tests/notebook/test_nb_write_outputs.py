"""`NotebookFilesystem.write_outputs`: run results land in one write, nothing else changes."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest
from testkit.nb_files import Storage, analysis, dumps

from jupyter_hashline.hashline import Filesystem, WriteResult
from jupyter_hashline.hashline.errors import HashlineError
from jupyter_hashline.hashline.memory_fs import InMemoryFilesystem
from jupyter_hashline.notebook import (
    NotebookFilesystem,
    load_notebook,
    parse_projection,
    project_notebook,
)
from jupyter_hashline.notebook.errors import InvalidNotebookError
from jupyter_hashline.notebook.executed import with_executed
from jupyter_hashline.notebook.loading import rejoin_lines

RESULT = {"output_type": "execute_result", "data": {"text/plain": "42"}, "metadata": {},
          "execution_count": 9}  # fmt: skip
STREAM = {"output_type": "stream", "name": "stdout", "text": "line 1\nline 2\n"}


@pytest.fixture(params=["memory", "disk"])
def storage(request: pytest.FixtureRequest, tmp_path: Path) -> Storage:
    return Storage(request.param, tmp_path)


class CountingWrites(Filesystem):
    """The inner filesystem, counting writes."""

    def __init__(self, inner: Filesystem) -> None:
        self.inner = inner
        self.writes = 0

    async def read_text(self, path: str) -> str:
        return await self.inner.read_text(path)

    async def write_text(self, path: str, content: str) -> WriteResult:
        self.writes += 1
        return await self.inner.write_text(path, content)


async def test_outputs_and_counts_of_the_run_cells_land_in_one_write(storage: Storage) -> None:
    storage.put("a.ipynb", dumps(analysis()))
    before = json.loads(storage.get("a.ipynb"))
    counting = CountingWrites(storage.fs)
    fs = NotebookFilesystem(counting)
    result = await fs.write_outputs("a.ipynb", {"clean": ([STREAM], 8), "plot": ([RESULT], 9)})
    assert counting.writes == 1
    assert result.text == project_notebook(analysis()) and result.warnings == ()
    after = json.loads(storage.get("a.ipynb"))
    assert after["cells"][2]["outputs"] == [
        {"output_type": "stream", "name": "stdout", "text": ["line 1\n", "line 2\n"]}
    ]
    assert after["cells"][2]["execution_count"] == 8
    assert after["cells"][3]["outputs"][0]["data"] == {"text/plain": ["42"]}
    assert after["cells"][3]["execution_count"] == 9
    for key in ("metadata", "nbformat", "nbformat_minor"):
        assert after[key] == before[key]
    assert after["cells"][:2] == before["cells"][:2]
    for index in (2, 3):
        unchanged = {k: v for k, v in after["cells"][index].items() if k not in ("outputs",
                     "execution_count")}  # fmt: skip
        assert unchanged == {k: v for k, v in before["cells"][index].items() if k in unchanged}


async def test_unchanged_outputs_write_nothing(storage: Storage) -> None:
    storage.put("a.ipynb", dumps(analysis()))
    counting = CountingWrites(storage.fs)
    fs = NotebookFilesystem(counting)
    stored = analysis()["cells"][1]
    await fs.write_outputs("a.ipynb", {"load-data": (stored["outputs"], 1)})
    assert counting.writes == 0


async def test_cells_that_are_not_code_any_more_are_reported_not_written(
    storage: Storage,
) -> None:
    storage.put("a.ipynb", dumps(analysis()))
    raw = storage.get("a.ipynb")
    fs = NotebookFilesystem(storage.fs)
    result = await fs.write_outputs("a.ipynb", {"intro": ([STREAM], 1), "gone": ([STREAM], 2)})
    assert storage.get("a.ipynb") == raw
    assert result.warnings == (
        "cell intro is no longer a code cell of a.ipynb: its outputs were not written",
        "cell gone is no longer a code cell of a.ipynb: its outputs were not written",
    )


async def test_legacy_notebooks_are_addressed_by_the_ids_the_projection_shows(
    storage: Storage,
) -> None:
    storage.put("old.ipynb", dumps(analysis(minor=4)))
    fs = NotebookFilesystem(storage.fs)
    text = await fs.read_text("old.ipynb")
    assert "# %% [code] id=cell-4" in text
    result = await fs.write_outputs("old.ipynb", {"cell-4": ([RESULT], 9)})
    saved = json.loads(storage.get("old.ipynb"))
    assert saved["nbformat_minor"] == 4 and "id" not in saved["cells"][3]
    assert saved["cells"][3]["execution_count"] == 9
    assert result.text == text


async def test_refusals_leave_the_file_untouched(storage: Storage) -> None:
    storage.put("notes.txt", "text")
    # metadata that is not an object is beyond repair (a bad field inside a cell is not: the
    # run's own cell is validated as written, the others are kept as they are)
    broken = dumps(analysis()).replace('"metadata": {}', '"metadata": []', 1)
    storage.put("broken.ipynb", broken)
    raw = storage.get("broken.ipynb")
    fs = NotebookFilesystem(storage.fs)
    with pytest.raises(HashlineError, match="not a notebook"):
        await fs.write_outputs("notes.txt", {"a": ([], 1)})
    with pytest.raises(InvalidNotebookError, match="can be read but not written"):
        await fs.write_outputs("broken.ipynb", {"load-data": ([STREAM], 1)})
    assert storage.get("broken.ipynb") == raw


def test_with_executed_keeps_unchanged_cells_and_the_input_as_they_were() -> None:
    nb = analysis()
    merged, missing = with_executed(nb, {"plot": ([RESULT], 9), "nope": ([], None)})
    assert missing == ("nope",)
    assert nb["cells"][3]["outputs"] == []
    assert all(merged["cells"][i] is nb["cells"][i] for i in range(3))
    assert merged["cells"][3]["outputs"] == [RESULT]
    same, _ = with_executed(nb, {})
    assert same is nb


@pytest.mark.corpus
async def test_on_every_corpus_notebook_only_the_run_cell_changes(corpus_dir: Path) -> None:
    """Real notebooks (every nbformat 4 minor, with and without ids): writing a run's outputs
    into one code cell leaves every other cell, the metadata and the projection as they were.
    (A v3 file is converted to v4 by any write, an edit's too.)"""
    rows = [
        line.split("\t")[0]
        for line in (corpus_dir / "MANIFEST.tsv").read_text("utf-8").splitlines()[1:]
    ]
    checked = 0
    for name in (r for r in rows if r.endswith(".ipynb") and not r.startswith("invalid/")):
        raw = (corpus_dir / name).read_text("utf-8")
        fs = NotebookFilesystem(InMemoryFilesystem())
        fs.inner.set(name, raw)
        text = await fs.read_text(name)
        code = [c for c in parse_projection(text) if c.cell_type == "code"]
        if not code or '"nbformat": 4' not in raw or load_notebook(raw).write_problem():
            continue
        target = code[-1].cell_id
        assert target is not None
        result = await fs.write_outputs(name, {target: ([STREAM], 77)})
        # compared as loaded (outputs with line lists joined): how the serializer lays out a
        # file is not this method's business
        before = rejoin_lines(copy.deepcopy(load_notebook(raw).nb))
        after = rejoin_lines(copy.deepcopy(load_notebook(fs.inner.get(name)).nb))
        index = [c.cell_id for c in parse_projection(text)].index(target)
        assert after["cells"][index]["execution_count"] == 77
        assert after["cells"][index]["outputs"] == [STREAM]
        others = [c for i, c in enumerate(after["cells"]) if i != index]
        assert others == [c for i, c in enumerate(before["cells"]) if i != index], name
        assert after["metadata"] == before["metadata"] and result.text == text
        checked += 1
    assert checked >= 20
