"""A new version of a notebook parsed by the bytes that changed gives what a whole parse gives.

`reload_notebook(old, raw)` and `splice_views` are shortcuts: every property below compares
them with the general path (`load_notebook`, `project_notebook`) on random notebooks and random
changes of the kind a person's save makes (sources, outputs, metadata, cells added, deleted or
moved, the top level), in the file's nbformat layout or not.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import nbformat
import pytest
from hypothesis import event, given, settings
from hypothesis import strategies as st
from testkit.nb_strategies import notebooks, sources

from jupyter_hashline.hashline.disk import DiskFilesystem
from jupyter_hashline.hashline.memory_store import InMemorySnapshotStore
from jupyter_hashline.hashline.patcher import Patcher
from jupyter_hashline.notebook import (
    NotebookFilesystem,
    filesystem,
    load_notebook,
    serialize_notebook,
)
from jupyter_hashline.notebook.incremental.reload import reload_notebook
from jupyter_hashline.notebook.loading import ANNOTATIONS, LoadedNotebook, splice_views
from jupyter_hashline.notebook.serialize import CellJsonCache, cell_json
from jupyter_hashline.notebook.validation import known_problem
from jupyter_hashline.notebook.validity import SCHEMA_VIEW, current_problem

CHANGES = ("source", "outputs", "metadata", "insert", "delete", "move", "top", "indent")


def changed(nb: dict[str, Any], data: st.DataObject) -> tuple[dict[str, Any], bool]:
    """`nb` after one to three random changes; True when the bytes keep nbformat's layout."""
    new = copy.deepcopy(nb)
    canonical = True
    for change in data.draw(st.lists(st.sampled_from(CHANGES), min_size=1, max_size=3)):
        cells = new["cells"]
        at = data.draw(st.integers(0, max(0, len(cells) - 1)))
        if change == "source" and cells:
            cells[at]["source"] = data.draw(sources)
        elif change == "outputs" and cells and cells[at]["cell_type"] == "code":
            cells[at]["outputs"] = [{"output_type": "stream", "name": "stdout", "text": "hi\n"}]
        elif change == "metadata" and cells:
            cells[at]["metadata"] = {"x-changed": data.draw(st.integers(0, 9))}
        elif change == "insert":
            cell = {"cell_type": "markdown", "metadata": {}, "source": data.draw(sources)}
            if new["nbformat_minor"] >= 5:
                cell["id"] = f"new-{len(cells)}"
            cells.insert(at, cell)
        elif change == "delete" and len(cells) > 1:
            del cells[at]
        elif change == "move" and len(cells) > 1:
            cells.insert(data.draw(st.integers(0, len(cells) - 1)), cells.pop(at))
        elif change == "top":
            new["metadata"] = {**new["metadata"], "x-top": data.draw(st.integers(0, 9))}
        elif change == "indent":
            canonical = False
    return new, canonical


def as_bytes(nb: dict[str, Any], canonical: bool) -> bytes:
    if canonical:
        return serialize_notebook(nb).encode("utf-8")
    return json.dumps(nb, indent=2, ensure_ascii=False).encode("utf-8")


def assert_same(got: LoadedNotebook, expected: LoadedNotebook) -> None:
    assert got.nb == expected.nb
    assert got.survey == expected.survey
    assert got.ids == expected.ids
    assert got.projection == expected.projection
    assert got.marker_starts == expected.marker_starts
    assert got.write_problem() == expected.write_problem()


def assert_exact_layout(loaded: LoadedNotebook) -> None:
    """Every span the layout lets a write reuse holds exactly its cell's serialization."""
    layout = loaded.layout
    if layout is None:
        return
    cells = loaded.nb["cells"]
    assert len(layout.spans) == len(cells)
    for index, (start, end) in enumerate(layout.spans):
        if layout.reusable(index):
            assert loaded.raw[start:end] == cell_json(cells[index]).encode("utf-8")
    serialized = serialize_notebook(loaded.nb).encode("utf-8")
    assert (
        loaded.raw[layout.tail_start :]
        == serialized[len(serialized) - len(loaded.raw) + layout.tail_start :]
    )


@settings(max_examples=300, deadline=None)
@given(notebooks(min_cells=1), st.data())
def test_reloading_by_what_changed_equals_loading_the_whole_file(
    nb: dict[str, Any], data: st.DataObject
) -> None:
    old = load_notebook(serialize_notebook(nb).encode("utf-8"))
    assert old.projection  # a version the reader saw
    current_problem(old)  # and whose validity a write found
    new_nb, canonical = changed(nb, data)
    raw = as_bytes(new_nb, canonical)
    got = reload_notebook(old, raw, "nb.ipynb")
    if got is None:
        return
    assert_same(got, load_notebook(raw))
    assert current_problem(got) == known_problem(got.nb)
    assert_exact_layout(got)
    again = reload_notebook(got, as_bytes(changed(new_nb, data)[0], True), "nb.ipynb")
    if again is not None:  # a chain of versions stays exact
        assert_exact_layout(again)


def kept_cells(old: list[dict[str, Any]], new: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """`new`, with every unchanged cell, wherever it moved, the very object it was (the first
    equal old cell not taken yet), as a reload keeps them; changed and new cells new objects."""
    unused = list(old)

    def kept(cell: dict[str, Any]) -> dict[str, Any]:
        for n, was in enumerate(unused):
            if was == cell:
                return unused.pop(n)
        return cell

    return [kept(cell) for cell in new]


@settings(max_examples=200, deadline=None)
@given(notebooks(min_cells=1), st.data())
def test_a_spliced_projection_equals_projecting_the_notebook(
    nb: dict[str, Any], data: st.DataObject
) -> None:
    before = load_notebook(serialize_notebook(nb).encode("utf-8"))
    assert before.projection  # projected once, as a read does
    new_nb, _ = changed(nb, data)
    cells = kept_cells(before.nb["cells"], new_nb["cells"])
    after = LoadedNotebook(b"", {**new_nb, "cells": cells})
    splice_views(before, after)
    fresh = LoadedNotebook(b"", {**new_nb, "cells": cells})
    assert after.projection == fresh.projection
    assert after.marker_starts == fresh.marker_starts


@settings(max_examples=300, deadline=None)
@given(notebooks(min_cells=1), st.data())
def test_spliced_output_notes_equal_the_notes_made_whole(
    nb: dict[str, Any], data: st.DataObject
) -> None:
    """A version spliced from one whose output notes were made keeps their notes of the cells
    it kept (moved by the lines the splice added) and makes only the others': the same notes
    as making them all (`splice` counts how many examples took that path)."""
    before = load_notebook(serialize_notebook(nb).encode("utf-8"))
    summaries = CellJsonCache()
    before.view(ANNOTATIONS, lambda *_: filesystem._output_notes(before, summaries))
    new_nb, _ = changed(nb, data)
    cells = kept_cells(before.nb["cells"], new_nb["cells"])
    after = LoadedNotebook(b"", {**new_nb, "cells": cells})
    splice_views(before, after)
    event(f"spliced: {after._splice is not None}")
    event(f"kept runs inside: {after._splice is not None and bool(after._splice.runs)}")
    got = filesystem._output_notes(after, summaries)
    assert after.take_splice() is None  # taken once
    fresh = LoadedNotebook(b"", after.nb)
    assert got == filesystem._output_notes(fresh, CellJsonCache())


def test_spliced_output_notes_make_only_the_changed_cells_notes(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """After one cell of 300 changed, the notes of that cell alone are made; the rest are the
    last version's (those after it one line lower: the changed cell gained a line)."""
    nb = many_cells(300)
    before = load_notebook(serialize_notebook(nb).encode("utf-8"))
    summaries = CellJsonCache()
    before.view(ANNOTATIONS, lambda *_: filesystem._output_notes(before, summaries))
    cells = list(before.nb["cells"])
    cells[150] = {**cells[150], "source": cells[150]["source"] + "\nmore = 1"}
    after = LoadedNotebook(b"", {**before.nb, "cells": cells})
    splice_views(before, after)
    got, made = notes_made(after, summaries, monkeypatch)
    assert made == [range(150, 151)]
    assert got == filesystem._output_notes(LoadedNotebook(b"", after.nb), CellJsonCache())
    assert len(got) == 300


def notes_made(
    after: LoadedNotebook, summaries: CellJsonCache, monkeypatch: pytest.MonkeyPatch
) -> tuple[dict[int, Any], list[range]]:
    """`after`'s output notes, and the runs of cells whose notes were made (not carried)."""
    made: list[range] = []
    whole = filesystem._cell_notes

    def counting(cells: Any, indices: range, *rest: Any) -> Any:
        made.append(indices)
        return whole(cells, indices, *rest)

    with monkeypatch.context() as patched:
        patched.setattr(filesystem, "_cell_notes", counting)
        return filesystem._output_notes(after, summaries), made


def test_a_kept_cell_shown_under_another_id_is_projected_again() -> None:
    """Deleting the first of two cells with one id makes the copy the first: it is shown as
    `x` now, not `x-2`, though it is the very object that follows a kept cell (a run of kept
    cells is checked id by id, not only by its first cell)."""
    first, other, copy_ = (
        {"cell_type": "code", "execution_count": None, "id": cid, "metadata": {}, "outputs": [],
         "source": f"{name} = 1"}
        for cid, name in (("x", "a"), ("y", "b"), ("x", "c"))
    )  # fmt: skip
    nb = {"cells": [first, other, copy_], "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    before = LoadedNotebook(b"", nb)
    assert before.ids.ids == ("x", "y", "x-2")
    assert before.projection
    after = LoadedNotebook(b"", {**nb, "cells": [other, copy_]})
    splice_views(before, after)
    fresh = LoadedNotebook(b"", {**nb, "cells": [other, copy_]})
    assert fresh.ids.ids == ("y", "x")
    assert after.projection == fresh.projection
    assert after.marker_starts == fresh.marker_starts


def person_saves(path: Path, cell: int, line: str) -> None:
    nb = nbformat.read(path, as_version=4)
    nb.cells[cell].source += line
    nbformat.write(nb, path)


def many_cells(count: int) -> dict[str, Any]:
    cells = [
        {"cell_type": "code", "execution_count": n, "id": f"c{n}", "metadata": {},
         "outputs": [{"output_type": "stream", "name": "stdout", "text": f"{n}\n"}],
         "source": f"x_{n} = {n}"}
        for n in range(count)
    ]  # fmt: skip
    return {"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}


def test_the_common_changes_are_reloaded_not_refused() -> None:
    nb = many_cells(6)
    old = load_notebook(serialize_notebook(nb).encode("utf-8"))
    for change in ("source", "insert", "delete", "top"):
        new = copy.deepcopy(nb)
        if change == "source":
            new["cells"][3]["source"] = "changed = 1"
        elif change == "insert":
            new["cells"].insert(
                2, {"cell_type": "markdown", "id": "m", "metadata": {}, "source": "# hi"}
            )
        elif change == "delete":
            del new["cells"][4]
        else:
            new["metadata"]["kernelspec"] = {"name": "python3", "display_name": "Python 3"}
        raw = serialize_notebook(new).encode("utf-8")
        got = reload_notebook(old, raw, "nb.ipynb")
        assert got is not None, change
        assert got.nb == load_notebook(raw).nb
        kept = sum(any(c is o for o in old.nb["cells"]) for c in got.nb["cells"])
        assert kept >= len(got.nb["cells"]) - 4, change  # the changed cells and their neighbours


def test_what_cannot_be_reloaded_is_left_to_a_whole_parse() -> None:
    nb = many_cells(4)
    old = load_notebook(serialize_notebook(nb).encode("utf-8"))
    raw = serialize_notebook(nb).encode("utf-8")
    broken = raw.replace(b'"x_2 = 2"', b'"x_2 = 2')  # the changed stretch is not JSON
    assert reload_notebook(old, broken, "nb.ipynb") is None
    minified = json.dumps(nb).encode("utf-8")
    assert reload_notebook(old, minified, "nb.ipynb") is None
    both = copy.deepcopy(nb)
    both["cells"][1]["source"] = "y = 1"
    both["metadata"]["x-top"] = 1
    both_raw = serialize_notebook(both).encode("utf-8")
    got = reload_notebook(old, both_raw, "nb.ipynb")
    assert got is None or got.nb == load_notebook(both_raw).nb


async def test_a_person_saving_between_edits_costs_the_cells_they_changed(tmp_path: Path) -> None:
    (tmp_path / "a.ipynb").write_text(serialize_notebook(many_cells(40)), encoding="utf-8")
    fs = NotebookFilesystem(DiskFilesystem(tmp_path))
    patcher = Patcher(fs, InMemorySnapshotStore())
    for round_ in range(3):
        before = await fs._read("a.ipynb")
        person_saves(tmp_path / "a.ipynb", 5, f"\n# saved {round_}")
        read = await patcher.read("a.ipynb")
        after = await fs._read("a.ipynb")
        shared = sum(c is o for c, o in zip(after.nb["cells"], before.nb["cells"], strict=True))
        assert shared >= 37  # only the person's cell and its neighbours were parsed again
        assert read.text == load_notebook((tmp_path / "a.ipynb").read_bytes()).projection
        line = read.text.split("\n").index("# %% [code] id=c30") + 2
        await patcher.apply(f"{read.header}\nreplace {line}:\n+x_30 = {round_}\n")
        raw = (tmp_path / "a.ipynb").read_text(encoding="utf-8")
        assert raw == nbformat.writes(nbformat.reads(raw, as_version=4)) + "\n"
        assert f"x_30 = {round_}" in raw and f"# saved {round_}" in raw


def test_changes_far_apart_cost_the_changed_cells_not_the_stretch_between() -> None:
    nb = many_cells(200)
    old = load_notebook(serialize_notebook(nb).encode("utf-8"))
    new = copy.deepcopy(nb)
    new["cells"][3]["source"] = "changed = 3"
    del new["cells"][100]
    new["cells"].insert(150, {"cell_type": "markdown", "id": "m", "metadata": {}, "source": "hi"})
    new["cells"][196]["outputs"] = []
    raw = serialize_notebook(new).encode("utf-8")
    got = reload_notebook(old, raw, "nb.ipynb")
    assert got is not None
    assert_same(got, load_notebook(raw))
    assert_exact_layout(got)
    fresh = [n for n, c in enumerate(got.nb["cells"]) if not any(c is o for o in old.nb["cells"])]
    assert fresh == [3, 150, 196]  # every other cell is the object it was, wherever it is


def test_cells_with_the_same_bytes_are_matched_in_order() -> None:
    # a notebook without ids (4.4) whose cells are byte-for-byte alike: whichever old cell a
    # new one is taken for, the notebook equals a whole parse of the file
    same = {"cell_type": "markdown", "metadata": {}, "source": "same"}
    other = {"cell_type": "markdown", "metadata": {}, "source": "other"}
    nb = {"cells": [copy.deepcopy(same) for _ in range(5)] + [other], "metadata": {},
          "nbformat": 4, "nbformat_minor": 4}  # fmt: skip
    old = load_notebook(serialize_notebook(nb).encode("utf-8"))
    for change in range(4):
        new = copy.deepcopy(nb)
        if change == 0:
            del new["cells"][1]
        elif change == 1:
            new["cells"].insert(2, copy.deepcopy(same))
        elif change == 2:
            new["cells"][2]["source"] = "changed"
        else:
            del new["cells"][4:6]
        raw = serialize_notebook(new).encode("utf-8")
        got = reload_notebook(old, raw, "nb.ipynb")
        assert got is not None, change
        assert_same(got, load_notebook(raw))
        assert_exact_layout(got)


def test_a_reload_carries_validity_only_through_cells_that_pass_the_screen() -> None:
    nb = many_cells(50)
    old = load_notebook(serialize_notebook(nb).encode("utf-8"))
    assert current_problem(old) is None
    fine, broken = copy.deepcopy(nb), copy.deepcopy(nb)
    fine["cells"][30]["source"] = "still valid"
    del broken["cells"][30]["outputs"]  # a code cell without outputs breaks the schema
    got = reload_notebook(old, serialize_notebook(fine).encode("utf-8"), "nb.ipynb")
    assert got is not None
    assert got.cached_view(SCHEMA_VIEW, "unknown") is None  # known without a screen
    bad = reload_notebook(old, serialize_notebook(broken).encode("utf-8"), "nb.ipynb")
    assert bad is not None
    assert bad.cached_view(SCHEMA_VIEW, "unknown") == "unknown"
    assert current_problem(bad) is not None and "outputs" in str(current_problem(bad))


def test_spliced_output_notes_of_changes_far_apart_make_only_those_cells_notes(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Cells 10 and 290 of 300 changed, and cell 150 moved up to 5: the kept runs between
    them keep their notes (moved to where each run now starts); notes are made for the
    changed cells alone, and the moved one. Every tenth cell is empty, so its note sits on its
    marker line: on the line right after a run, when it follows one. Outputs have 1 to 7 lines,
    so a note on the wrong cell's line shows."""
    nb = many_cells(300)
    for index, cell in enumerate(nb["cells"]):
        cell["outputs"][0]["text"] = "".join(f"{k}\n" for k in range(index % 7 + 1))
        if index % 10 == 1:
            cell["source"] = ""
    before = load_notebook(serialize_notebook(nb).encode("utf-8"))
    summaries = CellJsonCache()
    before.view(ANNOTATIONS, lambda *_: filesystem._output_notes(before, summaries))
    cells = list(before.nb["cells"])
    for index in (10, 290):
        cells[index] = {**cells[index], "source": cells[index]["source"] + "\nmore = 1\nmore"}
    cells.insert(5, cells.pop(150))
    after = LoadedNotebook(b"", {**before.nb, "cells": cells})
    splice_views(before, after)
    assert after._splice is not None and len(after._splice.runs) >= 3
    got, runs = notes_made(after, summaries, monkeypatch)
    made = [index for run in runs for index in run]
    assert got == filesystem._output_notes(LoadedNotebook(b"", after.nb), CellJsonCache())
    assert len(got) == 300
    assert len(made) <= 4, made  # 10 and 290, the moved cell (and a neighbour at most)
