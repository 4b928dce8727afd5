"""Merging by the changed part of the text gives exactly what merging the whole text gives."""

from __future__ import annotations

import copy

from hypothesis import given, settings
from hypothesis import strategies as st
from testkit.nb_strategies import notebooks

from jupyter_hashline.notebook import merge_projection, project_notebook
from jupyter_hashline.notebook.ids import display_ids
from jupyter_hashline.notebook.incremental.region import common_prefix, common_suffix, merge_edit
from jupyter_hashline.notebook.projection import marker_starts


def ids_from() -> object:
    counter = iter(range(10**6))
    return lambda: f"new{next(counter)}"


def region(nb: dict, text: str) -> object:
    before = project_notebook(nb)
    shown = display_ids(nb["cells"])
    return merge_edit(
        nb, before, text, shown=shown, starts=marker_starts(before),
        all_ids=frozenset(shown.ids), new_id=ids_from(), min_cells=1,
    )  # fmt: skip


@settings(max_examples=150, deadline=None)
@given(notebooks(min_cells=1), st.data())
def test_a_region_merge_equals_the_whole_merge(nb: dict, data: st.DataObject) -> None:
    before = project_notebook(nb)
    lines = before.split("\n")
    start = data.draw(st.integers(0, len(lines) - 1))
    stop = data.draw(st.integers(start, min(len(lines), start + 6)))
    markers = [f"# %% [code] id={c}" for c in display_ids(nb["cells"]).ids[:3]]
    pieces = ["x = 1", "# %% [code]", "", "# %% [markdown]", *markers]
    new = data.draw(st.lists(st.sampled_from(pieces), max_size=4))
    text = "\n".join([*lines[:start], *new, *lines[stop:]])
    snapshot = copy.deepcopy(nb)
    try:
        expected = merge_projection(nb, text, new_id=ids_from())
    except Exception as err:  # the whole merge refuses: the region merge refuses alike
        try:
            region(nb, text)
        except type(err):
            return
        raise AssertionError("the region merge accepted what the whole merge refused") from err
    got = region(nb, text)
    assert nb == snapshot
    if got is not None:
        assert got == expected


@given(st.text(max_size=9000), st.text(max_size=9000), st.text(max_size=50))
def test_common_prefix_and_suffix(a: str, b: str, middle: str) -> None:
    joined_a, joined_b = a + middle + b, a + b
    p = common_prefix(joined_a, joined_b)
    assert joined_a[:p] == joined_b[:p]
    assert p == min(len(joined_a), len(joined_b)) or joined_a[p] != joined_b[p]
    s = common_suffix(joined_a, joined_b, min(len(joined_a), len(joined_b)) - p)
    assert joined_a[len(joined_a) - s :] == joined_b[len(joined_b) - s :]


def test_a_one_line_edit_is_merged_by_its_region_with_the_same_result() -> None:
    cells = [
        {"cell_type": "code", "execution_count": None, "id": f"c{n}", "metadata": {},
         "outputs": [], "source": f"x = {n}\ny = {n}"}
        for n in range(40)
    ]  # fmt: skip
    nb = {"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    before = project_notebook(nb)
    edits = [
        before.replace("y = 20\n", "y = 200\n"),
        before.replace("# %% [code] id=c30\n", "# %% [markdown]\nnew\n# %% [code] id=c30\n"),
        before.replace("# %% [code] id=c10\nx = 10\ny = 10\n", ""),
        before.replace("# %% [code] id=c12\n", "# %% [raw] id=c12\n"),
    ]
    for text in edits:
        got = region(nb, text)
        assert got is not None
        assert got == merge_projection(nb, text, new_id=ids_from())
        merged, _ = got
        assert all(a is b for a, b in zip(merged["cells"][:9], cells[:9], strict=True))
    moved = before.replace("# %% [code] id=c5\nx = 5\ny = 5\n", "").replace(
        "# %% [code] id=c35\n", "# %% [code] id=c5\nx = 5\ny = 5\n# %% [code] id=c35\n"
    )
    assert region(nb, moved) == merge_projection(nb, moved)  # the part spans both places
    copied = before.replace("# %% [code] id=c35\n", "# %% [code] id=c5\nz\n# %% [code] id=c35\n")
    assert region(nb, copied) is None  # names a cell outside the changed part: whole merge
