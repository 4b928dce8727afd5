"""`written_layout` skips the top-level serialization it once did, and loses nothing by it.

The layout of bytes the serializer wrote used to be refused when `top_level_tail` was None
(`cells` not the first key). For such bytes that can only happen when they do not open with
`HEAD`, which `written_layout` checks anyway: these tests hold it to the old definition on
random notebooks and on every notebook of the shared corpus, and show the old check does
refuse a top level whose first key sorts before `cells` (so the comparison can fail).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st
from testkit.nb_strategies import notebooks

from jupyter_hashline.notebook import load_notebook, serialize_notebook
from jupyter_hashline.notebook.incremental.layout import (
    HEAD,
    CellLayout,
    locate_cells,
    top_level_tail,
    written_layout,
)


def reference_layout(data: bytes, nb: dict[str, Any]) -> CellLayout | None:
    """`written_layout` as it was: the top-level tail serialized and checked too."""
    cells = nb.get("cells", [])
    spans = locate_cells(data, len(cells)) if cells and data.startswith(HEAD) else None
    if spans is None or top_level_tail(nb) is None:
        return None
    return CellLayout(tuple(spans), spans[-1][1])


def both(nb: dict[str, Any]) -> tuple[CellLayout | None, CellLayout | None]:
    data = serialize_notebook(nb).encode("utf-8")
    return written_layout(data, nb), reference_layout(data, nb)


@settings(max_examples=300, deadline=None)
@given(notebooks(), st.sampled_from(["", "a", "cellz", "zz", "Cells", "_"]))
def test_the_layout_of_written_bytes_is_the_old_one(nb: dict[str, Any], key: str) -> None:
    if key:
        nb = {**nb, key: 1}  # "a", "Cells", "_" sort before "cells": no HEAD, no layout
    found, expected = both(nb)
    assert found == expected


def test_every_corpus_notebook_gets_the_old_layout(corpus_dir: Path) -> None:
    compared = 0
    for path in sorted(corpus_dir.glob("*.ipynb")):
        loaded = load_notebook(path.read_bytes(), path.name)
        found, expected = both(loaded.nb)
        assert found == expected, path.name
        compared += expected is not None
    assert compared >= 20


def test_the_old_check_refuses_a_key_before_cells() -> None:
    """The planted failure: with a key sorting first, the tail check fails, and so does the
    `HEAD` check `written_layout` relies on (else the comparison above would show it)."""
    nb = {"cells": [{"cell_type": "raw", "metadata": {}, "source": "x"}], "metadata": {},
          "nbformat": 4, "nbformat_minor": 2, "aaa": 1}  # fmt: skip
    assert top_level_tail(nb) is None
    data = serialize_notebook(nb).encode("utf-8")
    assert not data.startswith(HEAD)
    assert both(nb) == (None, None)
    del nb["aaa"]
    found, expected = both(nb)
    assert found is not None and found == expected
