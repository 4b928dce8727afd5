"""Reusing a file's bytes for the cells an edit kept gives exactly what serializing gives.

`assemble` and `match_cells` are shortcuts: the properties below hold them to the general path
(`serialize_notebook`) on random notebooks, with cells kept, changed, added, deleted and moved,
in files where some cells are stored unlike nbformat (their bytes are never reused).
"""

from __future__ import annotations

import copy
import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from testkit.nb_strategies import notebooks, sources

from jupyter_hashline.notebook import load_notebook, serialize_notebook
from jupyter_hashline.notebook.incremental import layout
from jupyter_hashline.notebook.incremental.cellmatch import match_cells
from jupyter_hashline.notebook.incremental.layout import assemble
from jupyter_hashline.notebook.serialize import cell_json, cell_json_reusing


def stored(nb: dict[str, Any], as_string: set[int]) -> bytes:
    """The file nbformat writes, except the sources of cells `as_string` stored as one string
    (as some tools do): those cells are suspect and their bytes must not be reused."""
    text = serialize_notebook(nb)
    if not as_string:
        return text.encode("utf-8")
    disk = json.loads(text)
    for index in as_string:
        disk["cells"][index]["source"] = "".join(disk["cells"][index]["source"])
    return (json.dumps(disk, indent=1, sort_keys=True, ensure_ascii=False) + "\n").encode()


def edited(cells: list[Any], data: st.DataObject) -> list[Any]:
    """A new list of cells: most the very objects of `cells`, some changed, added, moved."""
    new = list(cells)
    changes = st.sampled_from(["edit", "meta", "retype", "clear", "add", "drop", "move"])
    for change in data.draw(st.lists(changes, max_size=4)):
        at = data.draw(st.integers(0, max(0, len(new) - 1)))
        if change == "edit" and new:
            new[at] = {**new[at], "source": data.draw(sources)}
        elif change == "meta" and new:  # a value beside the source changes, the rest is kept
            new[at] = {**new[at], "metadata": {"tags": ["x"], "trusted": True}}
        elif change == "retype" and new:  # outputs are stored by cell type: kept, not reused
            kind = "markdown" if new[at]["cell_type"] == "code" else "code"
            new[at] = {**new[at], "cell_type": kind}
        elif change == "clear" and new and "outputs" in new[at]:
            new[at] = {**new[at], "outputs": [], "execution_count": None}
        elif change == "add":
            new.insert(at, {"cell_type": "raw", "metadata": {}, "source": data.draw(sources)})
        elif change == "drop" and len(new) > 1:
            del new[at]
        elif change == "move" and len(new) > 1:
            new.insert(data.draw(st.integers(0, len(new) - 1)), new.pop(at))
    return new


@settings(max_examples=300, deadline=None)
@given(notebooks(min_cells=1), st.data())
def test_assembling_equals_serializing(nb: dict[str, Any], data: st.DataObject) -> None:
    as_string = data.draw(st.sets(st.integers(0, len(nb["cells"]) - 1), max_size=2))
    loaded = load_notebook(stored(nb, as_string))
    layout = loaded.layout
    if layout is None:
        return
    merged = {**loaded.nb, "cells": edited(loaded.nb["cells"], data)}
    if data.draw(st.booleans()):
        merged["metadata"] = {**merged["metadata"], "x-new": 1}
    snapshot = copy.deepcopy(loaded.nb)
    built = assemble(loaded.raw, loaded.nb, layout, merged)
    assert loaded.nb == snapshot
    if not merged["cells"]:
        assert built is None
        return
    assert built is not None
    data_out, new_layout = built
    assert data_out == serialize_notebook(merged).encode("utf-8")
    for index, (start, end) in enumerate(new_layout.spans):
        assert data_out[start:end] == cell_json(merged["cells"][index]).encode("utf-8")


@given(st.lists(st.integers(0, 5), max_size=12), st.data())
def test_matching_finds_every_shared_object_and_no_other(
    names: list[int], data: st.DataObject
) -> None:
    old = [{"n": n} for n in names]
    new = data.draw(st.permutations(old)) if old else []
    new = [cell if data.draw(st.booleans()) else dict(cell) for cell in new]
    match = match_cells(old, new)
    for index, cell in enumerate(new):
        found = match.old_index(index)
        assert (found is not None) == any(cell is o for o in old)
        if found is not None:
            assert old[found] is cell and match.new_index(found) == index
    assert match.fresh() == [i for i, cell in enumerate(new) if not any(cell is o for o in old)]


@settings(max_examples=300, deadline=None)
@given(
    st.binary(max_size=60).map(lambda b: bytes(b"\n }a"[x % 4] for x in b)),
    st.integers(0, 60),
    st.integers(0, 60),
)
def test_finding_a_cell_end_by_its_brace_finds_what_the_line_search_finds(
    raw: bytes, start: int, stop: int
) -> None:
    assert layout._find_by_brace(raw, start, stop) == layout._find_by_line(raw, start, stop)


def test_cells_with_large_outputs_are_located_by_brace() -> None:
    nb = json.loads(serialize_notebook(_image_notebook()))
    raw = serialize_notebook(nb).encode()
    assert len(raw) > len(nb["cells"]) * layout._SPARSE_CELL_BYTES
    spans = layout.locate_cells(raw, len(nb["cells"]))
    assert spans is not None
    assert [json.loads(raw[a:b]) for a, b in spans] == nb["cells"]


def _image_notebook() -> dict[str, Any]:
    image = {
        "output_type": "display_data",
        "metadata": {},
        "data": {"image/png": "iVBORw0K" * 4000},
    }
    code = {"cell_type": "code", "execution_count": 1, "id": "c", "metadata": {},
            "outputs": [image], "source": "d = {'a': {1: 2}}\n}"}  # fmt: skip
    cells = [{**code, "id": f"c{n}"} for n in range(3)]
    return {"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}


def test_the_layout_sample_passes_over_cells_of_output_data(monkeypatch: Any) -> None:
    """Image outputs of 200 KB are not serialized to check the layout (a neighbour is, as
    cheap and as telling); a 100 KB cell of source is checked itself."""
    image = "iVBORw0KGgo" * 20_000  # 220 KB of base64-like data
    cells: list[dict[str, Any]] = []
    for n in range(20):
        cell: dict[str, Any] = {
            "cell_type": "code", "execution_count": n, "id": f"c{n}", "metadata": {},
            "outputs": [], "source": f"plot({n})",
        }  # fmt: skip
        if n % 2 == 0:
            data = {"image/png": image, "text/plain": ["<Figure>"]}
            cell["outputs"] = [
                {"output_type": "display_data", "data": data, "metadata": {}},
            ]
        cells.append(cell)
    cells[9]["source"] = "\n".join(f"x_{n} = {n}" + " " * 40 for n in range(2_000))
    nb = {"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    raw = serialize_notebook(nb).encode("utf-8")
    sizes: list[int] = []
    whole = layout.cell_json

    def measured(cell: Any, *args: Any) -> str:
        text = whole(cell, *args)
        sizes.append(len(text))
        return text

    monkeypatch.setattr(layout, "cell_json", measured)
    loaded = load_notebook(raw)
    assert layout.find_layout(raw, loaded.nb, loaded.survey.suspect) is not None
    assert sizes and max(sizes) < 200_000, sizes  # no image cell was serialized
    assert any(size > 90_000 for size in sizes), sizes  # the 100 KB source cell was


@settings(max_examples=300, deadline=None)
@given(notebooks(min_cells=1), st.data())
def test_a_changed_cell_written_from_its_old_bytes_is_what_serializing_gives(
    nb: dict[str, Any], data: st.DataObject
) -> None:
    old = nb["cells"][data.draw(st.integers(0, len(nb["cells"]) - 1))]
    new = edited([old], data)
    for cell in new:
        reused = cell_json_reusing(cell, old, cell_json(old).encode("utf-8"))
        assert reused == cell_json(cell).encode("utf-8")


def test_a_changed_cell_takes_its_kept_values_from_the_old_bytes() -> None:
    """Planted: the old bytes hold a marker where the outputs were, so the result shows
    whether the outputs were copied (the marker) or written again (the real outputs)."""
    old = {
        "cell_type": "code", "execution_count": 1, "id": "a", "metadata": {},
        "outputs": [{"output_type": "stream", "name": "stdout", "text": "big\n"}],
        "source": "print('big')",
    }  # fmt: skip
    text = cell_json(old).encode("utf-8")
    start = text.index(b'"outputs": ') + len(b'"outputs": ')
    end = text.index(b',\n   "source"')
    planted = text[:start] + b'"marker"' + text[end:]
    new = {**old, "source": "print('small')"}
    reused = cell_json_reusing(new, old, planted)
    assert reused is not None and b'"outputs": "marker"' in reused
    assert b"print('small')" in reused
    fresh = cell_json_reusing({**new, "outputs": []}, old, planted)
    assert fresh == cell_json({**new, "outputs": []}).encode("utf-8")


def test_old_bytes_not_laid_out_as_the_serializer_writes_are_not_reused() -> None:
    old = {"cell_type": "markdown", "id": "a", "metadata": {}, "source": "x"}
    new = {**old, "source": "y"}
    indented_two = json.dumps(old, indent=2, sort_keys=True).encode()
    unsorted = cell_json(old).encode().replace(b'"cell_type": "markdown"', b'"zz": 1')
    for odd in (indented_two, unsorted, b"{}", cell_json(old).encode()[:-1]):
        assert cell_json_reusing(new, old, odd) is None
    assert cell_json_reusing({}, old, cell_json(old).encode()) is None
