"""Cell-aware recovery (notebook/rebase.py) through the real Patcher over NotebookFilesystem:
pasted copies sharing an id, line-level merges inside a changed cell, retyped cells, and the
context a rejection shows."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from nbformat.v4 import new_code_cell, new_markdown_cell
from testkit.nb_strategies import notebooks, sources

from jupyter_hashline.hashline import InMemoryFilesystem, InMemorySnapshotStore, Patcher
from jupyter_hashline.hashline.errors import StaleTagError
from jupyter_hashline.hashline.filesystem import Footprint, LineRebase
from jupyter_hashline.notebook import NotebookFilesystem, parse_projection, project_notebook
from jupyter_hashline.notebook.ids import IdNotes
from jupyter_hashline.notebook.rebase import (
    _away_from_the_change,
    rebase_by_cells,
    rebase_lines,
)

TARGET = "import pandas as pd\ndf = pd.read_csv('sales.csv')\ndf.head()"


def notebook(*cells: Any) -> str:
    """The file as Jupyter lays it out, written without nbformat's validation (which would
    renumber the copies a JSON paste or a git merge leaves)."""
    nb = {"cells": list(cells), "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    return json.dumps(nb, indent=1, sort_keys=True) + "\n"


def four_cells() -> list[Any]:
    return [
        new_markdown_cell("# Title", id="intro"),
        new_code_cell("x = 1", id="setup"),
        new_code_cell(TARGET, id="load"),
        new_code_cell("df.plot()", id="plot"),
    ]


def cells_of(raw: str) -> list[tuple[str, str]]:
    return [(c["id"], "".join(c["source"])) for c in json.loads(raw)["cells"]]


async def read_then(raw: str) -> tuple[InMemoryFilesystem, Patcher, str]:
    inner = InMemoryFilesystem({"n.ipynb": raw})
    patcher = Patcher(NotebookFilesystem(inner), InMemorySnapshotStore())
    return inner, patcher, (await patcher.read("n.ipynb")).header


def line_of(text: str, row: str) -> int:
    return text.split("\n").index(row) + 1


# -- duplicate ids -----------------------------------------------------------------------------


def test_reads_show_copies_of_an_id_under_distinct_ids() -> None:
    nb = json.loads(notebook(*four_cells(), new_code_cell(TARGET, id="load")))
    text = project_notebook(nb)
    ids = [c.cell_id for c in parse_projection(text)]
    assert ids == ["intro", "setup", "load", "plot", "load-2"]
    assert len(set(ids)) == len(ids)


async def test_a_pasted_copy_above_never_receives_the_stale_edit() -> None:
    inner, patcher, header = await read_then(notebook(*four_cells()))
    pasted = [four_cells()[2], *four_cells()]  # a JSON paste of `load` at the top
    inner.set("n.ipynb", notebook(*pasted))
    result = await patcher.apply(f"{header}\nreplace 7:\n+df = pd.read_csv('sales.csv', sep=';')\n")
    after = cells_of(inner.get("n.ipynb"))
    assert after[0] == ("load", TARGET)  # the copy: untouched
    assert after[3] == ("load-2", TARGET.replace("'sales.csv')", "'sales.csv', sep=';')"))
    assert "repaired cell ids: duplicate id load -> load-2" in result.to_text()


async def test_a_copy_pasted_right_next_to_the_cell_is_refused_not_guessed() -> None:
    inner, patcher, header = await read_then(notebook(*four_cells()))
    cells = four_cells()
    cells.insert(2, four_cells()[2])  # the copy right above: the two readings are the same file
    inner.set("n.ipynb", notebook(*cells))
    before = inner.get("n.ipynb")
    with pytest.raises(StaleTagError) as refused:
        await patcher.apply(f"{header}\nreplace 7:\n+df = None\n")
    message = refused.value.message
    assert "now exists as copies sharing one id (load (line 5), load-2 (line 9))" in message
    assert "*5:# %% [code] id=load" in message and "*9:# %% [code] id=load-2" in message
    assert inner.get("n.ipynb") == before


async def test_content_and_neighbours_must_agree_on_the_copy() -> None:
    """The person edited the original and pasted an old copy elsewhere: the copy holds the
    text the agent read, the original sits where the agent read it. Refused."""
    inner, patcher, header = await read_then(notebook(*four_cells()))
    cells = four_cells()
    cells[2].source = TARGET + "\ndf.tail()"
    cells.insert(0, four_cells()[2])
    inner.set("n.ipynb", notebook(*cells))
    with pytest.raises(StaleTagError, match="copies sharing one id"):
        await patcher.apply(f"{header}\nreplace 6:\n+import numpy as np\n")


async def test_a_fresh_edit_of_a_copy_lands_on_it_and_repairs_its_id() -> None:
    cells = [*four_cells(), new_code_cell("copy = 1", id="load")]
    inner, patcher, header = await read_then(notebook(*cells))
    read = await patcher.read("n.ipynb")
    line = line_of(read.text, "copy = 1")
    assert read.text.split("\n")[line - 2] == "# %% [code] id=load-2"
    result = await patcher.apply(f"{header}\nreplace {line}:\n+copy = 2\n")
    assert [c for c in cells_of(inner.get("n.ipynb")) if c[0].startswith("load")] == [
        ("load", TARGET),
        ("load-2", "copy = 2"),
    ]
    assert "repaired cell ids: duplicate id load -> load-2" in result.to_text()


def test_without_the_notes_a_shown_copy_id_still_finds_its_group() -> None:
    """A snapshot whose id notes are gone (its text outlived the cache) names `load-2`: every
    cell sharing that copy's stored id is a candidate, resolved by context."""
    snap_nb = json.loads(notebook(*four_cells(), new_code_cell("copy = 1", id="load")))
    snapshot = project_notebook(snap_nb)
    live_nb = json.loads(notebook(new_code_cell("new = 0", id="fresh")))
    live = project_notebook({**live_nb, "cells": live_nb["cells"] + snap_nb["cells"]})
    notes = IdNotes(shared={"load": "load", "load-2": "load"})
    line = line_of(snapshot, "copy = 1")
    outcome = rebase_lines(snapshot, live, {line}, IdNotes(), notes)
    assert dict(outcome.mapping) == {line: line_of(live, "copy = 1")}  # type: ignore[union-attr]


# -- inside a changed cell ---------------------------------------------------------------------


async def test_the_persons_edit_on_the_next_line_keeps_both_changes() -> None:
    inner, patcher, header = await read_then(notebook(*four_cells()))
    cells = four_cells()
    cells[2].source = TARGET.replace("df.head()", "df.head(10)")  # line 8, next to line 7
    inner.set("n.ipynb", notebook(*cells))
    result = await patcher.apply(f"{header}\nreplace 7:\n+df = pd.read_parquet('s.pq')\n")
    assert "not on the lines you edit" in result.to_text()
    assert cells_of(inner.get("n.ipynb"))[2][1] == (
        "import pandas as pd\ndf = pd.read_parquet('s.pq')\ndf.head(10)"
    )


async def test_the_persons_edit_on_the_same_line_is_rejected() -> None:
    inner, patcher, header = await read_then(notebook(*four_cells()))
    cells = four_cells()
    cells[2].source = TARGET.replace("sales.csv", "sales_2026.csv")
    inner.set("n.ipynb", notebook(*cells))
    with pytest.raises(StaleTagError, match=r"cell load changed where you edit it \(line 7"):
        await patcher.apply(f"{header}\nreplace 7:\n+df = None\n")


async def test_a_retyped_cell_is_refused() -> None:
    inner, patcher, header = await read_then(notebook(*four_cells()))
    cells = four_cells()
    cells[2] = new_markdown_cell(TARGET, id="load")
    inner.set("n.ipynb", notebook(*cells))
    with pytest.raises(StaleTagError, match="cell load was changed from code to markdown"):
        await patcher.apply(f"{header}\nreplace 7:\n+df = None\n")


async def test_a_conflict_deep_in_a_long_cell_shows_the_rows_around_it() -> None:
    long = "\n".join(f"row_{n} = {n}" for n in range(300))
    cells = [new_markdown_cell("# Title", id="intro"), new_code_cell(long, id="long")]
    inner, patcher, header = await read_then(notebook(*cells))
    read = await patcher.read("n.ipynb")
    line = line_of(read.text, "row_150 = 150")  # 150 lines into the cell
    cells[1].source = long.replace("row_150 = 150", "row_150 = -1")
    inner.set("n.ipynb", notebook(*cells))
    with pytest.raises(StaleTagError) as refused:
        await patcher.apply(f"{header}\nreplace {line}:\n+row_150 = 0\n")
    rows = [r for r in refused.value.message.split("\n") if r[:1] in (" ", "*") and ":" in r]
    numbers = [int(r[1:].split(":", 1)[0]) for r in rows]
    assert numbers == list(range(line - 20, line + 21))
    assert f"*{line}:row_150 = -1" in refused.value.message
    assert "row_0 = 0" not in refused.value.message


# -- structure: new, deleted and moved cells ---------------------------------------------------


async def test_a_new_cell_goes_after_the_cells_end_as_it_is_now() -> None:
    """The person appended a line to the cell the agent adds a cell after: the new cell goes
    after that line, not between the cell's lines."""
    inner, patcher, header = await read_then(notebook(*four_cells()))
    cells = four_cells()
    cells[2]["source"] = TARGET + "\ndf.describe()"
    inner.set("n.ipynb", notebook(*cells))
    result = await patcher.apply(f"{header}\ninsert after 8:\n+# %% [markdown]\n+Notes\n")
    after = cells_of(inner.get("n.ipynb"))
    assert after[2] == ("load", TARGET + "\ndf.describe()")
    assert after[3][1] == "Notes" and after[4] == ("plot", "df.plot()")
    assert "cell load grew at its end" in result.to_text()


async def test_a_new_cell_where_the_person_put_one_is_refused() -> None:
    inner, patcher, header = await read_then(notebook(*four_cells()))
    cells = four_cells()
    cells.insert(3, new_code_cell("person = 1", id="person"))
    inner.set("n.ipynb", notebook(*cells))
    with pytest.raises(StaleTagError, match="cells were added or moved into that place"):
        await patcher.apply(f"{header}\ninsert after 8:\n+# %% [code]\n+agent = 1\n")
    lines_only = await patcher.apply(f"{header}\ninsert after 8:\n+df.tail()\n")
    assert cells_of(inner.get("n.ipynb"))[2] == ("load", TARGET + "\ndf.tail()")
    assert lines_only.sections[0].written


async def test_deleting_a_whole_cell_needs_only_that_cell_unchanged() -> None:
    inner, patcher, header = await read_then(notebook(*four_cells()))
    cells = four_cells()
    cells[1]["source"] = "x = 2"  # the cell before it changed: no matter for a whole delete
    inner.set("n.ipynb", notebook(*cells))
    await patcher.apply(f"{header}\ndelete 5..8\n")
    assert [c[0] for c in cells_of(inner.get("n.ipynb"))] == ["intro", "setup", "plot"]


async def test_a_move_names_the_cell_by_the_id_it_shows_now() -> None:
    """Notebooks without ids show positions: after a cell is inserted above, the moved cell's
    marker row is rewritten to the id that cell shows now, so the move keeps its outputs."""
    legacy = {"cells": [], "metadata": {}, "nbformat": 4, "nbformat_minor": 4}
    for n, source in enumerate(["a = 1", "b = 2", "c = 3"]):
        cell = new_code_cell(source)
        del cell["id"]
        cell["outputs"] = [{"output_type": "stream", "name": "stdout", "text": f"{n}\n"}]
        legacy["cells"].append(cell)
    raw = json.dumps(legacy, indent=1, sort_keys=True) + "\n"
    inner, patcher, header = await read_then(raw)
    person = json.loads(raw)
    person["cells"].insert(0, {**person["cells"][0], "source": "new = 0", "outputs": []})
    inner.set("n.ipynb", json.dumps(person, indent=1) + "\n")
    move = "delete 5..6\ninsert after 2:\n+# %% [code] id=cell-3\n+c = 3\n"
    result = await patcher.apply(f"{header}\n{move}")
    after = json.loads(inner.get("n.ipynb"))["cells"]
    assert ["".join(c["source"]) for c in after] == ["new = 0", "a = 1", "c = 3", "b = 2"]
    assert after[2]["outputs"][0]["text"] in ("2\n", ["2\n"])
    assert "cell cell-3 of your read is shown as id=cell-4 now" in result.to_text()


async def test_lines_inserted_at_the_top_of_an_empty_cell_that_got_lines_are_refused() -> None:
    cells = four_cells()
    cells[3]["source"] = ""
    inner, patcher, header = await read_then(notebook(*cells))
    cells[3]["source"] = "person = 1"
    inner.set("n.ipynb", notebook(*cells))
    with pytest.raises(StaleTagError, match="lines were added to cell plot"):
        await patcher.apply(f"{header}\ninsert after 9:\n+agent = 1\n")
    added = await patcher.apply(f"{header}\ninsert after 9:\n+# %% [code]\n+agent = 1\n")
    assert added.sections[0].written
    assert cells_of(inner.get("n.ipynb"))[3:] == [("plot", "person = 1"), (ANY_ID, "agent = 1")]


class _AnyId:
    def __eq__(self, other: object) -> bool:
        return isinstance(other, str) and bool(other)


ANY_ID: Any = _AnyId()


def test_identical_twins_around_a_change_are_ambiguous_without_ids() -> None:
    snap = "# %% [code] id=cell-1\nx\n# %% [code] id=cell-2\nx\n"
    live = "# %% [code] id=cell-1\nx changed\n# %% [code] id=cell-2\nx\n"
    outcome = rebase_lines(snap, live, {4}, IdNotes(derived=frozenset({"cell-1", "cell-2"})))
    assert "has twins with the same text" in outcome.reason  # type: ignore[union-attr]


# -- the shortcut: lines far from the person's change map without parsing --------------------


@settings(max_examples=300, deadline=None)
@given(notebooks(min_cells=3), st.data())
def test_the_shortcut_maps_as_the_general_path_does(
    nb: dict[str, Any], data: st.DataObject
) -> None:
    before = project_notebook(nb)
    changed = copy.deepcopy(nb)
    cells = changed["cells"]
    at = data.draw(st.integers(0, len(cells) - 1))
    kind = data.draw(st.sampled_from(["source", "append", "insert", "delete"]))
    if kind == "source":
        cells[at]["source"] = data.draw(sources)
    elif kind == "append":  # a person types at the end of a cell: the texts part at a marker
        cells[at]["source"] += "\n" + data.draw(sources)
    elif kind == "insert":
        cell = {"cell_type": "markdown", "metadata": {}, "source": data.draw(sources)}
        if changed["nbformat_minor"] >= 5:
            cell["id"] = "inserted"
        cells.insert(at, cell)
    elif len(cells) > 1:
        del cells[at]
    after = project_notebook(changed)
    count = before.count("\n") + (0 if before.endswith("\n") else 1)
    lines = frozenset(data.draw(st.lists(st.integers(1, count), min_size=1, max_size=4)))
    needs = Footprint.of(lines)
    quick = _away_from_the_change(before, after, needs)
    if quick is None:
        return
    general = rebase_by_cells(before, after, needs)
    assert isinstance(general, LineRebase), general
    assert quick.mapping == general.mapping
    assert set(quick.notes) == set(general.notes)


@pytest.mark.parametrize("grown", ["\n", "# %x\n"])
def test_the_shortcut_declines_the_marker_of_a_cell_that_grew_at_its_end(grown: str) -> None:
    """The texts part where the next cell's marker starts (or inside its `# %% `): the cell
    above grew, so its marker is not away from the change (found by Hypothesis)."""
    before = "# %% [markdown] id=cell-1\n# %% [code] id=cell-2\n0\n# %% [code] id=cell-3\n"
    after = before.replace("0\n", "0\n" + grown)
    needs = Footprint.of(frozenset({2}))
    assert _away_from_the_change(before, after, needs) is None
    assert not isinstance(rebase_by_cells(before, after, needs), LineRebase)


def test_the_shortcut_declines_lines_near_the_change_and_marker_rows() -> None:
    cells = [new_code_cell(f"x_{n} = {n}\ny_{n} = {n}", id=f"c{n}") for n in range(6)]
    nb: dict[str, Any] = {"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    before = project_notebook(nb)  # cell n: marker on line 3n + 1, then two lines
    cells[3]["source"] += "\nadded = 1"  # a person appends a line to c3 (lines 10-12)
    after = project_notebook(nb)
    far = _away_from_the_change(before, after, Footprint.of({2, 17}))
    assert far is not None and far.mapping == {2: 2, 17: 18}
    assert far.notes == ("cell c5 moved from line 16 to 17",)
    # c3, which grew (the full rebase notes that it changed), and the next cell's marker
    for near in (10, 11, 12, 13):
        assert _away_from_the_change(before, after, Footprint.of({near})) is None, near
    general = rebase_by_cells(before, after, Footprint.of({11}))
    assert isinstance(general, LineRebase) and general.mapping == {11: 11}
    assert "cell c3 changed since your read, not on the lines you edit" in general.notes
    inside = _away_from_the_change(before, after, Footprint.of({14}))  # inside the next cell
    general = rebase_by_cells(before, after, Footprint.of({14}))
    assert isinstance(general, LineRebase) and inside is not None
    assert inside.mapping == general.mapping == {14: 15}
    marker_row = Footprint(frozenset({2}), rows=("# %% [code]",))
    assert _away_from_the_change(before, after, marker_row) is None


# -- after another agent's edit of the same cell -----------------------------------------------


async def two_agents_read(raw: str) -> tuple[InMemoryFilesystem, Patcher, Patcher, str]:
    """Agents A and B read one notebook through one store (as a server's workspace has it)."""
    inner, store = InMemoryFilesystem({"n.ipynb": raw}), InMemorySnapshotStore()
    fs = NotebookFilesystem(inner)
    a, b = (Patcher(fs, store, agent=name) for name in ("a", "b"))
    tag = (await a.read("n.ipynb")).tag
    assert (await b.read("n.ipynb")).tag == tag
    return inner, a, b, tag


DELETE_LOAD = [{"op": "delete", "start": 5, "end": 8}]  # the marker and lines of `load`
REPLACE_LOAD = [{"op": "replace", "start": 7, "end": 7, "lines": ["df = None"]}]


def pasted_copy_after(edit: list[dict[str, Any]], renamed: bool) -> str:
    """The person's save after A's `edit` of `load`: a copy of `load` as the agents read it
    pasted at the top (same id), A's edit kept below; `renamed`: the save repaired the
    duplicate id, renaming the later cell (A's), as nbformat's validation does."""
    cells = [four_cells()[2], *four_cells()]
    if edit is DELETE_LOAD:
        del cells[3]
    else:
        cells[3].source = TARGET.replace("df = pd.read_csv('sales.csv')", "df = None")
        if renamed:
            cells[3].id = "d6a4c0b2"
    return notebook(*cells)


@pytest.mark.parametrize(
    ("edit", "renamed"),
    [(DELETE_LOAD, False), (REPLACE_LOAD, False), (REPLACE_LOAD, True)],
    ids=["delete, the copy left alone", "replace, copies share the id", "replace, repaired"],
)
async def test_a_stale_twin_of_a_landed_edit_never_lands_on_the_persons_copy(
    edit: list[dict[str, Any]], renamed: bool
) -> None:
    """A's edit lands; the person pastes a copy of the cell as both agents read it and saves;
    B's same edit, stale now, finds the text it read only in the copy: refused, never applied
    there (the copy is the person's, and B's edit is already in the notebook)."""
    inner, a, b, tag = await two_agents_read(notebook(*four_cells()))
    await a.apply({"path": "n.ipynb", "tag": tag, "edits": edit})
    inner.set("n.ipynb", pasted_copy_after(edit, renamed))
    before = inner.get("n.ipynb")
    with pytest.raises(StaleTagError, match=r"[Rr]e-read") as refused:
        await b.apply({"path": "n.ipynb", "tag": tag, "edits": edit})
    assert inner.get("n.ipynb") == before
    assert "Nothing was written" in refused.value.message


async def test_a_cell_put_back_where_another_agent_deleted_it_is_not_deleted_again() -> None:
    """The person pastes the deleted cell back where it was: the file is the very text B read,
    yet B's delete would delete the person's cell. Refused: the delete already happened."""
    inner, a, b, tag = await two_agents_read(notebook(*four_cells()))
    await a.apply({"path": "n.ipynb", "tag": tag, "edits": DELETE_LOAD})
    inner.set("n.ipynb", notebook(*four_cells()))
    with pytest.raises(StaleTagError, match=r"cell load .* was deleted"):
        await b.apply({"path": "n.ipynb", "tag": tag, "edits": DELETE_LOAD})
    assert inner.get("n.ipynb") == notebook(*four_cells())


async def test_another_agents_edit_elsewhere_still_lets_a_stale_edit_land() -> None:
    """The versions recorded since a read only refuse an edit they conflict with."""
    inner, a, b, tag = await two_agents_read(notebook(*four_cells()))
    await a.apply({"path": "n.ipynb", "tag": tag, "edits": [
        {"op": "replace", "start": 10, "end": 10, "lines": ["df.plot(kind='bar')"]}
    ]})  # fmt: skip
    cells = four_cells()
    cells[3].source = "df.plot(kind='bar')"
    cells[0].source = "# Title, by a person"
    inner.set("n.ipynb", notebook(*cells))
    await b.apply({"path": "n.ipynb", "tag": tag, "edits": REPLACE_LOAD})
    after = cells_of(inner.get("n.ipynb"))
    assert after[2] == ("load", TARGET.replace("df = pd.read_csv('sales.csv')", "df = None"))
    assert after[0] == ("intro", "# Title, by a person") and after[3][1] == "df.plot(kind='bar')"


def test_a_changed_cell_beside_a_changed_copy_is_refused_not_guessed() -> None:
    """Copies of one id, none holding the text the agent read: the one where the agent read
    it may be the original or a copy pasted over its place; nothing proves which."""
    snapshot = project_notebook(json.loads(notebook(*four_cells())))
    cells = four_cells()
    cells[2].source = TARGET + "\ndf.tail()"
    copy_ = four_cells()[2]
    copy_.source = "df = load()"
    live = project_notebook(json.loads(notebook(copy_, *cells)))
    notes = IdNotes(shared={"load": "load", "load-2": "load"})
    outcome = rebase_lines(snapshot, live, {6}, IdNotes(), notes)
    assert not isinstance(outcome, LineRebase)
    assert "copies sharing one id" in outcome.reason
