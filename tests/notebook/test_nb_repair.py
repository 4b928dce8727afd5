"""`repairs_between`: the repairs another writer (a collaboration room) made, in the words the
notebook layer's own repairs use."""

from __future__ import annotations

from typing import Any

from jupyter_hashline.notebook import repairs_between


def _code(cid: str | None, source: str, outputs: bool = True) -> dict[str, Any]:
    cell: dict[str, Any] = {"cell_type": "code", "metadata": {}, "source": source}
    if cid is not None:
        cell["id"] = cid
    if outputs:
        cell.update(outputs=[], execution_count=None)
    return cell


def _nb(*cells: dict[str, Any]) -> dict[str, Any]:
    return {"cells": list(cells), "metadata": {}, "nbformat": 4, "nbformat_minor": 5}


def test_repairs_between_names_what_another_writer_repaired_in_the_write_s_words() -> None:
    stored = _nb(_code("a", "x"), _code("a", "y"), _code(None, "z"), _code("d", "w", outputs=False))
    repaired = _nb(_code("a", "x"), _code("f00d", "y"), _code("beef", "z"), _code("d", "w"))
    assert repairs_between(stored, repaired) == [
        "empty outputs and execution count added to code cells that had none: d",
        "repaired cell ids: duplicate id a -> f00d; missing id -> beef",
    ]
    assert repairs_between(stored, stored) == []


def test_repairs_between_pairs_cells_by_source_so_inserted_and_edited_cells_do_not_count() -> None:
    stored = _nb(_code("a", "x"), _code("a", "y"), _code("a", "q"))
    person = {"cell_type": "markdown", "id": "new", "metadata": {}, "source": "# hi"}
    repaired = _nb(person, _code("a", "x"), _code("f00d", "y"), _code("e", "edited"))
    assert repairs_between(stored, repaired) == ["repaired cell ids: duplicate id a -> f00d"]
