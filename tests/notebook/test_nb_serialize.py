"""Serialization: byte for byte what Jupyter writes, and cells reused instead of re-serialized."""

from __future__ import annotations

import copy
import json

import nbformat
import pytest
from hypothesis import given, settings
from testkit.nb_strategies import notebooks

from jupyter_hashline.notebook import (
    CellJsonCache,
    load_notebook,
    merge_projection,
    project_notebook,
    serialize_notebook,
)
from jupyter_hashline.notebook import serialize as serialize_module
from jupyter_hashline.notebook.loading import rejoin_lines


def jupyter_writes(nb: dict) -> str:
    return nbformat.writes(nbformat.from_dict(copy.deepcopy(nb))) + "\n"


@settings(max_examples=200, deadline=None)
@given(notebooks())
def test_serialization_equals_nbformat_writes(nb: dict) -> None:
    before = json.dumps(nb, sort_keys=True)
    assert serialize_notebook(nb) == jupyter_writes(nb)
    assert serialize_notebook(nb, cache=CellJsonCache()) == jupyter_writes(nb)
    assert json.dumps(nb, sort_keys=True) == before  # never modified


@settings(max_examples=100, deadline=None)
@given(notebooks())
def test_serialized_text_loads_back_to_the_same_notebook(nb: dict) -> None:
    loaded = load_notebook(serialize_notebook(nb))
    assert rejoin_lines(copy.deepcopy(loaded.nb)) == nb  # loading keeps outputs as stored
    assert loaded.projection == project_notebook(nb)


def test_transient_keys_are_dropped_and_bytes_written_as_text() -> None:
    nb = {
        "cells": [
            {"cell_type": "raw", "id": "r", "metadata": {"trusted": True, "k": b"v"}, "source": ""}
        ],
        "metadata": {"signature": "x", "orig_nbformat": 3, "orig_nbformat_minor": 0},
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    text = serialize_notebook(nb)
    assert '"trusted"' not in text and '"signature"' not in text and '"orig_nbformat' not in text
    assert text == jupyter_writes(nb)
    assert nb["metadata"]["signature"] == "x"


def test_non_json_values_fail_like_json_does() -> None:
    nb = {"cells": [], "metadata": {"bad": object()}, "nbformat": 4, "nbformat_minor": 5}
    with pytest.raises(TypeError, match="not JSON serializable"):
        serialize_notebook(nb)


def test_a_cached_cell_is_not_serialized_again(monkeypatch: pytest.MonkeyPatch) -> None:
    cells = [
        {"cell_type": "code", "execution_count": None, "id": f"c{i}", "metadata": {},
         "outputs": [], "source": f"x = {i}"}
        for i in range(50)
    ]  # fmt: skip
    nb = {"cells": cells, "metadata": {}, "nbformat": 4, "nbformat_minor": 5}
    cache = CellJsonCache()
    first = serialize_notebook(nb, cache=cache)
    text = project_notebook(nb).replace("x = 7", "x = 70")
    merged, _ = merge_projection(nb, text)
    built: list[object] = []
    original = serialize_module.disk_cell

    def counting(cell: dict) -> dict:
        built.append(cell)
        return original(cell)

    monkeypatch.setattr(serialize_module, "disk_cell", counting)
    second = serialize_notebook(merged, cache=cache)
    assert built == [merged["cells"][7]]
    assert second == first.replace('"x = 7"', '"x = 70"')
    assert second == jupyter_writes(merged)


def test_cache_is_bounded_and_keyed_by_identity() -> None:
    cache = CellJsonCache(max_cells=2)
    a, b, c = {"v": 1}, {"v": 1}, {"v": 2}
    cache.put(a, "A")
    assert cache.get(b) is None  # equal content, different object
    cache.put(b, "B")
    cache.put(c, "C")
    assert len(cache) <= 2 and cache.get(a) is None and cache.get(c) == "C"


def test_cache_keeps_what_was_used_since_half_its_size_was_put() -> None:
    """Entries put or found again are kept until half the bound of others were (the kept
    cells and three others: six entries between two uses of each kept one, under eight)."""
    cache = CellJsonCache(max_cells=16)
    kept, others = [{"k": n} for n in range(3)], [{"o": n} for n in range(40)]
    for cell in kept:
        cache.put(cell, f"kept {cell['k']}")
    for n, other in enumerate(others):
        cache.put(other, "other")
        if n % 3 == 2:
            assert cache.get_many(kept) == ["kept 0", "kept 1", "kept 2"]
        assert len(cache) <= 16
    assert cache.get(others[0]) is None  # not used since: gone
    cache.clear()
    assert len(cache) == 0 and cache.get(kept[0]) is None
