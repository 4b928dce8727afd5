"""Outputs of executed cells, merged into a notebook.

`with_executed(nb, executed)` returns the notebook with, for every cell named in `executed`,
its outputs and execution count replaced by the ones a kernel produced.

Invariants:
- Cells are named by the ids the projection shows (`display_ids`), so notebooks without
  stored ids (nbformat < 4.5) are addressed by position exactly as the projection shows them.
- Only the named code cells change, and only their `outputs` and `execution_count`: sources,
  metadata, other cells and notebook metadata are untouched. Unchanged cells are the very
  same objects in the result (so serialization reuses their bytes); `nb` is never modified.
- When nothing changes (same outputs and count, or no named cell found), `nb` itself is
  returned; outputs are compared with line lists joined, however the file stores them.
  Names that match no code cell are returned, so the caller can say so.
- Outputs are stored as given (nbformat v4 output dicts, multi-line strings joined, as the
  notebook layer keeps them in memory); serialization splits them as Jupyter does.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from .ids import display_ids
from .loading import rejoined_outputs
from .projection import cell_type_of

Executed = tuple[Sequence[Mapping[str, Any]], int | None]
"""One cell's run: its outputs (nbformat v4 output dicts) and its execution count."""


def with_executed(
    nb: Mapping[str, Any], executed: Mapping[str, Executed]
) -> tuple[dict[str, Any], tuple[str, ...]]:
    """`nb` with the outputs of `executed` cells set; and the names that matched no code cell."""
    cells: Sequence[Mapping[str, Any]] = nb.get("cells", [])
    ids = display_ids(cells).ids
    found: set[str] = set()
    merged: list[Any] = []
    for cell, cid in zip(cells, ids, strict=True):
        run = executed.get(cid)
        if run is None or cell_type_of(cell) != "code" or cid in found:
            merged.append(cell)
            continue
        found.add(cid)
        merged.append(_with_outputs(cell, run))
    missing = tuple(cid for cid in executed if cid not in found)
    if all(m is c for m, c in zip(merged, cells, strict=True)):
        return (nb if isinstance(nb, dict) else dict(nb)), missing
    result = type(nb)(nb) if isinstance(nb, dict) else dict(nb)
    result["cells"] = merged
    return result, missing


def _with_outputs(cell: Mapping[str, Any], run: Executed) -> Any:
    outputs, count = [dict(output) for output in run[0]], run[1]
    same = cell.get("execution_count") == count and rejoined_outputs(cell.get("outputs")) == outputs
    if same:
        return cell
    updated = type(cell)(cell) if isinstance(cell, dict) else dict(cell)
    updated["outputs"] = outputs
    updated["execution_count"] = count
    return updated
