"""A notebook invalid already is written by an edit that adds no problem, saying so every time;
an edit that adds a problem is refused with the file untouched."""

from __future__ import annotations

import asyncio
import json

import nbformat
import pytest

from jupyter_hashline.hashline.memory_fs import InMemoryFilesystem
from jupyter_hashline.hashline.memory_store import InMemorySnapshotStore
from jupyter_hashline.hashline.patcher import Patcher
from jupyter_hashline.notebook import (
    InvalidNotebookError,
    NotebookFilesystem,
    load_notebook,
    validity,
)
from jupyter_hashline.notebook.validation import known_problem, notebook_problem
from jupyter_hashline.notebook.validity import current_problem

STILL = "is still not a valid notebook"


def with_extra_output_key() -> str:
    """A notebook whose first cell has an output with a key the schema does not allow."""
    nb = nbformat.v4.new_notebook(
        cells=[
            nbformat.v4.new_code_cell(
                "print(1)",
                id="first",
                outputs=[nbformat.v4.new_output("stream", name="stdout", text="1\n")],
            ),
            nbformat.v4.new_code_cell("x = 2", id="second"),
            nbformat.v4.new_code_cell("y = 3", id="third"),
        ]
    )
    disk = json.loads(nbformat.writes(nb))
    disk["cells"][0]["outputs"][0]["extra"] = True
    return json.dumps(disk, indent=1, sort_keys=True, ensure_ascii=False) + "\n"


def test_the_screen_agrees_with_the_schema() -> None:
    raw = with_extra_output_key()
    nb = load_notebook(raw).nb
    assert known_problem(nb) == notebook_problem(nb) is not None
    assert "'extra' was unexpected" in str(known_problem(nb))
    fixed = json.loads(raw)
    del fixed["cells"][0]["outputs"][0]["extra"]
    assert known_problem(load_notebook(json.dumps(fixed)).nb) is None


def test_a_versions_problem_counts_its_top_level_as_the_whole_check_does() -> None:
    """`current_problem` reuses the version's cached top-level check: a top level failing the
    schema (a kernelspec without its name) is the problem, as `known_problem` finds it."""
    disk = json.loads(nbformat.writes(nbformat.v4.new_notebook(cells=[])))
    disk["metadata"]["kernelspec"] = {"display_name": "Python 3"}
    loaded = load_notebook(json.dumps(disk))
    assert loaded.top_level_problem() is not None
    assert current_problem(loaded) == known_problem(loaded.nb) == loaded.top_level_problem()


def test_every_write_of_an_invalid_notebook_says_it_is_still_invalid() -> None:
    """Fresh edits and stale ones (recovered on a newer version) alike."""
    raw = with_extra_output_key()
    inner = InMemoryFilesystem({"nb.ipynb": raw})
    patcher = Patcher(NotebookFilesystem(inner), InMemorySnapshotStore())
    read = asyncio.run(patcher.read("nb.ipynb"))
    lines = read.text.split("\n")
    for source, new in (("x = 2", "x = 20"), ("y = 3", "y = 30")):
        line = next(n for n, row in enumerate(lines, 1) if row.endswith(source))
        # the same (stale) read for both edits: the second is recovered on the newer version
        result = asyncio.run(patcher.apply(f"{read.header}\nreplace {line}:\n+{new}\n"))
        section = result.sections[0]
        assert section.written, section.to_text()
        assert sum(STILL in w and "'extra' was unexpected" in w for w in section.warnings) == 1
    written = nbformat.reads(inner.get("nb.ipynb"), as_version=4, capture_validation_error={})
    assert [c.source for c in written.cells] == ["print(1)", "x = 20", "y = 30"]


def test_an_edit_that_adds_a_problem_is_refused_untouched() -> None:
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("x = 1", id="only")])
    raw = nbformat.writes(nb) + "\n"
    inner = InMemoryFilesystem({"nb.ipynb": raw})
    fs = NotebookFilesystem(inner)
    asyncio.run(fs.read_text("nb.ipynb"))
    bad = {"output_type": "stream", "name": "stdout", "text": "1\n", "extra": True}
    with pytest.raises(InvalidNotebookError, match="would not be a valid notebook") as info:
        asyncio.run(fs.write_outputs("nb.ipynb", {"only": ((bad,), 1)}))
    assert "Nothing was written" in str(info.value)
    assert inner.get("nb.ipynb") == raw


def test_a_problem_the_cell_had_is_kept_a_new_one_refused() -> None:
    raw = with_extra_output_key()
    inner = InMemoryFilesystem({"nb.ipynb": raw})
    fs = NotebookFilesystem(inner)
    text = asyncio.run(fs.read_text("nb.ipynb"))
    result = asyncio.run(fs.write_text("nb.ipynb", text.replace("print(1)", "print(10)")))
    assert any(STILL in w for w in result.warnings)  # the edited cell keeps its output
    before = inner.get("nb.ipynb")
    other = {"output_type": "stream", "name": "stdout", "text": "2\n", "bogus": 1}
    with pytest.raises(InvalidNotebookError, match="'bogus' was unexpected"):
        asyncio.run(fs.write_outputs("nb.ipynb", {"second": ((other,), 2)}))
    assert inner.get("nb.ipynb") == before


def test_a_source_edit_of_a_valid_notebook_is_valid_without_the_schema(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A cell whose source alone changed is valid by construction: the schema is not run on
    it; an output the edit brings is still validated (and refused when bad)."""
    nb = nbformat.v4.new_notebook(
        cells=[
            nbformat.v4.new_code_cell("x = 1", id="one"),
            nbformat.v4.new_markdown_cell("# Title", id="two"),
        ]
    )
    raw = nbformat.writes(nb) + "\n"
    inner = InMemoryFilesystem({"nb.ipynb": raw})
    patcher = Patcher(NotebookFilesystem(inner), InMemorySnapshotStore())
    checked: list[object] = []
    real = validity.cells_problem
    monkeypatch.setattr(
        validity,
        "cells_problem",
        lambda nb, cells, names: checked.append(cells) or real(nb, cells, names),
    )
    read = asyncio.run(patcher.read("nb.ipynb"))
    line = next(n for n, row in enumerate(read.text.split("\n"), 1) if row.endswith("x = 1"))
    result = asyncio.run(patcher.apply(f"{read.header}\nreplace {line}:\n+x = 10\n"))
    assert result.sections[0].written
    assert checked == []
    assert nbformat.reads(inner.get("nb.ipynb"), as_version=4).cells[0].source == "x = 10"
    bad = {"output_type": "stream", "name": "stdout", "text": "1\n", "extra": True}
    with pytest.raises(InvalidNotebookError, match="'extra' was unexpected"):
        asyncio.run(patcher.fs.write_outputs("nb.ipynb", {"one": ((bad,), 1)}))  # type: ignore[attr-defined]
    assert checked and checked[0][0]["outputs"] == [bad]  # type: ignore[index]


@pytest.mark.parametrize(
    ("change", "proven"),
    [
        ({"source": "y = 2"}, True),
        ({"source": "y = 2", "outputs": [], "execution_count": None}, True),
        ({"source": ["y = 2"]}, False),  # not text
        ({"metadata": {"tags": 3}}, False),  # a value the schema must judge
        ({"outputs": [{"output_type": "stream", "name": "stdout", "text": "", "x": 1}]}, False),
        ({"extra": 1}, False),  # a key the cell did not have
    ],
)
def test_only_a_change_of_source_is_proven_valid(change: dict[str, object], proven: bool) -> None:
    old = {
        "cell_type": "code",
        "id": "c",
        "metadata": {},
        "source": "x = 1",
        "execution_count": 1,
        "outputs": [{"output_type": "stream", "name": "stdout", "text": "1\n"}],
    }
    assert validity._source_edit([old], 0, {**old, **change}) is proven
    assert validity._source_edit([old], 1, {**old, **change}) is False  # no cell there
