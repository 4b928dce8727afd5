"""Merging edited projections: every structural edit, and what must survive it."""

from __future__ import annotations

import copy
import itertools
import json

import nbformat
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from testkit.nb_strategies import notebooks, sources

from jupyter_hashline.hashline.errors import AnchorError
from jupyter_hashline.notebook import merge_projection, project_notebook
from jupyter_hashline.notebook.errors import InvalidNotebookError

STREAM = {"output_type": "stream", "name": "stdout", "text": "3 rows\n"}


def ids_from(prefix: str = "new"):
    counter = itertools.count(1)
    return lambda: f"{prefix}{next(counter)}"


def sample(minor: int = 5) -> dict:
    cells = [
        {"cell_type": "markdown", "metadata": {"tags": ["t"]}, "source": "# Title",
         "attachments": {"a.png": {"image/png": "iVBORw0KGgo="}}},
        {"cell_type": "code", "execution_count": 3, "metadata": {"scrolled": True},
         "outputs": [STREAM], "source": "import pandas as pd\ndf = load()"},
        {"cell_type": "code", "execution_count": 4, "metadata": {}, "outputs": [],
         "source": "df.head()"},
    ]  # fmt: skip
    if minor >= 5:
        for cell, cid in zip(cells, ["intro", "load", "show"], strict=True):
            cell["id"] = cid
    kernel = {"name": "python3", "display_name": "Py"}
    return {
        "cells": cells,
        "metadata": {"kernelspec": kernel},
        "nbformat": 4,
        "nbformat_minor": minor,
    }


def edit(nb: dict, old: str, new: str) -> str:
    text = project_notebook(nb)
    assert old in text
    return text.replace(old, new, 1)


def test_editing_a_line_changes_only_that_cell_and_keeps_its_outputs() -> None:
    nb = sample()
    before = copy.deepcopy(nb)
    merged, warnings = merge_projection(nb, edit(nb, "df = load()", "df = load(2)"))
    assert warnings == []
    assert nb == before  # the input is never modified
    load = merged["cells"][1]
    assert load["source"] == "import pandas as pd\ndf = load(2)"
    assert load["outputs"] == [STREAM] and load["execution_count"] == 3
    assert load["metadata"] == {"scrolled": True} and load["id"] == "load"
    assert merged["cells"][0] is nb["cells"][0] and merged["cells"][2] is nb["cells"][2]
    assert merged["metadata"] is nb["metadata"]


def test_clear_outputs_on_edit_clears_only_edited_code_cells() -> None:
    nb = sample()
    text = edit(nb, "df = load()", "df = 2").replace("df.head()", "df.head()")
    merged, _ = merge_projection(nb, text, clear_outputs_on_edit=True)
    assert merged["cells"][1]["outputs"] == [] and merged["cells"][1]["execution_count"] is None
    assert merged["cells"][2] is nb["cells"][2]


def test_a_marker_without_id_is_a_new_cell_with_a_fresh_id_reported() -> None:
    nb = sample()
    text = edit(nb, "# %% [code] id=show", "# %% [code]\nprint(1)\n# %% [code] id=show")
    merged, warnings = merge_projection(nb, text, new_id=ids_from())
    new = merged["cells"][2]
    assert new == {"cell_type": "code", "execution_count": None, "id": "new1", "metadata": {},
                   "outputs": [], "source": "print(1)"}  # fmt: skip
    assert warnings == ["new code cell id=new1 (line 6)"]
    assert [c["id"] for c in merged["cells"]] == ["intro", "load", "new1", "show"]


def test_an_unknown_id_gets_a_fresh_id_with_a_note() -> None:
    nb = sample()
    merged, warnings = merge_projection(
        nb, project_notebook(nb) + "# %% [markdown] id=made-up\nhi\n", new_id=ids_from()
    )
    assert merged["cells"][-1]["id"] == "new1"
    assert "no cell id=made-up" in warnings[0]


def test_a_duplicated_marker_becomes_a_new_cell_with_a_warning() -> None:
    nb = sample()
    text = project_notebook(nb) + "# %% [code] id=load\ncopy\n"
    merged, warnings = merge_projection(nb, text, new_id=ids_from())
    assert [c["id"] for c in merged["cells"]] == ["intro", "load", "show", "new1"]
    assert merged["cells"][1] is nb["cells"][1]
    assert "marker is on line 3" in warnings[0]


def test_a_marker_pasted_above_a_cell_never_takes_its_outputs() -> None:
    # The audit's edit: a line of the first cell replaced by a marker naming a later cell.
    nb = sample()
    before = project_notebook(nb)
    text = edit(nb, "# Title\n", "# %% [code] id=load\n")
    merged, warnings = merge_projection(nb, text, new_id=ids_from(), before=before)
    assert [c["id"] for c in merged["cells"]] == ["intro", "new1", "load", "show"]
    assert merged["cells"][2] is nb["cells"][1]  # outputs, count and metadata where they were
    assert merged["cells"][1]["outputs"] == [] and merged["cells"][1]["source"] == ""
    assert "id=load is the id of the cell whose marker is on line 3" in warnings[0]
    assert "new code cell id=new1 (line 2)" in warnings[0]


def test_a_marker_over_another_cells_marker_deletes_that_cell_and_moves_nothing() -> None:
    nb = sample()
    before = project_notebook(nb)
    text = edit(nb, "# %% [code] id=load\n", "# %% [code] id=show\n")
    merged, warnings = merge_projection(nb, text, new_id=ids_from(), before=before)
    assert [c["id"] for c in merged["cells"]] == ["intro", "new1", "show"]
    assert merged["cells"][2] is nb["cells"][2]
    assert merged["cells"][1]["outputs"] == [] and merged["cells"][1]["execution_count"] is None
    assert "deleted cell: load" in warnings


def test_markers_repeating_an_id_none_of_them_its_own_are_refused() -> None:
    nb = sample()
    before = project_notebook(nb)
    text = edit(nb, "# %% [code] id=show\n", "# %% [markdown] id=show\n")
    text += "# %% [markdown] id=show\nother\n"
    with pytest.raises(AnchorError, match=r"id=show on lines 6, 8") as caught:
        merge_projection(nb, text, new_id=ids_from(), before=before)
    assert "Nothing was written" in str(caught.value)


def test_repeated_unknown_ids_are_new_cells_as_before() -> None:
    nb = sample()
    before = project_notebook(nb)
    text = before + "# %% [code] id=made-up\na\n# %% [code] id=made-up\nb\n"
    merged, _ = merge_projection(nb, text, new_id=ids_from(), before=before)
    assert [c["id"] for c in merged["cells"]][3:] == ["new1", "new2"]


@settings(max_examples=60, deadline=None)
@given(nb=notebooks(), data=st.data())
def test_a_pasted_marker_never_moves_a_cells_data(nb: dict, data: st.DataObject) -> None:
    """Wherever a copy of a cell's marker lands, that cell keeps its outputs and metadata."""
    cells = nb["cells"]
    if not cells or not all(isinstance(c.get("id"), str) for c in cells):
        return
    if len({c["id"] for c in cells}) != len(cells):
        return
    before = project_notebook(nb)
    rows = before.split("\n")
    victim = data.draw(st.sampled_from(cells))
    marker = next(r for r in rows if r.startswith("# %% [") and r.endswith(f"id={victim['id']}"))
    at = data.draw(st.integers(1, len(rows) - 1))
    text = "\n".join([*rows[:at], marker, *rows[at:]])
    merged, _ = merge_projection(nb, text, new_id=ids_from("zz-new"), before=before)
    kept = [c for c in merged["cells"] if c.get("id") == victim["id"]]
    assert len(kept) == 1
    for key in ("outputs", "execution_count", "metadata", "attachments"):
        assert kept[0].get(key) == victim.get(key)


def test_deleting_a_cell_drops_it_and_says_so() -> None:
    nb = sample()
    text = edit(nb, "# %% [code] id=load\nimport pandas as pd\ndf = load()\n", "")
    merged, warnings = merge_projection(nb, text)
    assert [c["id"] for c in merged["cells"]] == ["intro", "show"]
    assert warnings == ["deleted cell: load"]


def test_moving_a_cell_keeps_everything_of_it() -> None:
    nb = sample()
    text = project_notebook(nb)
    block = "# %% [code] id=show\ndf.head()\n"
    moved = block + text.replace(block, "")
    merged, warnings = merge_projection(nb, moved)
    assert [c["id"] for c in merged["cells"]] == ["show", "intro", "load"]
    assert all(
        a is b for a, b in zip(merged["cells"], [nb["cells"][i] for i in (2, 0, 1)], strict=True)
    )
    assert warnings == []


def test_merging_and_splitting_cells() -> None:
    nb = sample()
    merged, warnings = merge_projection(nb, edit(nb, "# %% [code] id=show\n", ""))
    assert merged["cells"][1]["source"] == "import pandas as pd\ndf = load()\ndf.head()"
    assert merged["cells"][1]["outputs"] == [STREAM]
    assert warnings == ["deleted cell: show"]
    split, warnings = merge_projection(
        nb,
        edit(nb, "import pandas as pd\n", "import pandas as pd\n# %% [code]\n"),
        new_id=ids_from(),
    )
    assert [c["source"] for c in split["cells"][1:3]] == ["import pandas as pd", "df = load()"]
    assert split["cells"][2]["id"] == "new1"


def test_retyping_code_to_markdown_drops_outputs_and_back_gives_empty_outputs() -> None:
    nb = sample()
    merged, warnings = merge_projection(nb, edit(nb, "[code] id=load", "[markdown] id=load"))
    cell = merged["cells"][1]
    assert cell == {"cell_type": "markdown", "id": "load", "metadata": {"scrolled": True},
                    "source": "import pandas as pd\ndf = load()"}  # fmt: skip
    assert "outputs and execution count were dropped" in warnings[0]
    back, _ = merge_projection(
        merged, project_notebook(merged).replace("[markdown] id=load", "[code] id=load")
    )
    assert back["cells"][1]["outputs"] == [] and back["cells"][1]["execution_count"] is None
    to_code, warnings = merge_projection(nb, edit(nb, "[markdown] id=intro", "[code] id=intro"))
    assert "attachments" not in to_code["cells"][0]
    assert "attachments were dropped" in warnings[0]
    to_raw, _ = merge_projection(nb, edit(nb, "[markdown] id=intro", "[raw] id=intro"))
    assert to_raw["cells"][0]["attachments"] == nb["cells"][0]["attachments"]


def test_legacy_notebook_merges_keep_the_version_and_store_no_ids() -> None:
    nb = sample(minor=4)
    text = project_notebook(nb)
    assert merge_projection(nb, text) == (nb, [])
    merged, warnings = merge_projection(
        nb, text.replace("# %% [code] id=cell-2", "# %% [code]\nnew\n# %% [code] id=cell-2"),
        new_id=ids_from(),
    )  # fmt: skip
    assert merged["nbformat_minor"] == 4
    assert all("id" not in cell for cell in merged["cells"])
    assert [c["source"] for c in merged["cells"]][1] == "new"
    assert merged["cells"][0] is nb["cells"][0] and merged["cells"][2] is nb["cells"][1]
    assert warnings == ["new code cell id=cell-2 (line 3)"]  # the id it is shown with now
    assert project_notebook(merged).count("id=cell-") == 4
    nbformat.validate(nbformat.from_dict(copy.deepcopy(merged)))


def test_missing_and_duplicate_ids_are_repaired_on_the_first_changing_merge() -> None:
    nb = sample()
    del nb["cells"][0]["id"]
    nb["cells"][2]["id"] = "load"
    text = project_notebook(nb)
    assert "id=cell-1" in text and "id=load\n" in text and "id=load-2\n" in text
    assert merge_projection(nb, text)[0] is nb
    merged, warnings = merge_projection(
        nb, text.replace("df.head()", "df.tail()"), new_id=ids_from()
    )
    assert [c["id"] for c in merged["cells"]] == ["cell-1", "load", "load-2"]
    assert warnings == ["repaired cell ids: missing id -> cell-1; duplicate id load -> load-2"]


def test_text_before_the_first_marker_is_an_error() -> None:
    with pytest.raises(InvalidNotebookError, match="line 1: text before the first cell marker"):
        merge_projection(sample(), "oops\n" + project_notebook(sample()))


def test_notebook_nodes_stay_notebook_nodes() -> None:
    node = nbformat.from_dict(sample())
    merged, _ = merge_projection(node, project_notebook(node) + "# %% [raw]\nr\n")
    assert isinstance(merged, nbformat.NotebookNode)
    assert merged.cells[-1].cell_type == "raw"


@settings(max_examples=100, deadline=None)
@given(notebooks(min_cells=1), st.data())
def test_editing_one_cell_changes_exactly_that_cell(nb: dict, data: st.DataObject) -> None:
    snapshot = json.dumps(nb, sort_keys=True)
    index = data.draw(st.integers(0, len(nb["cells"]) - 1))
    new_source = data.draw(sources)
    cells = list(nb["cells"])
    cells[index] = {**cells[index], "source": new_source}
    expected = project_notebook({**nb, "cells": cells})
    merged, _ = merge_projection(nb, expected)
    assert json.dumps(nb, sort_keys=True) == snapshot
    assert project_notebook(merged).split("\n")[1:] == expected.split("\n")[1:]
    assert merged["nbformat_minor"] == nb["nbformat_minor"]
    for position, (old, new) in enumerate(zip(nb["cells"], merged["cells"], strict=True)):
        if position == index:
            assert new["source"] == new_source
            assert {k: v for k, v in new.items() if k != "source"} == {
                k: v for k, v in old.items() if k != "source"
            }
        else:
            assert new is old
