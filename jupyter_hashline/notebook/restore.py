"""Keeping deleted cells whole, and giving them back on an undo.

An edit of the projection deletes a cell by removing its marker and source; the projection
never showed the cell's outputs, attachments or metadata, so an undo that only puts the text
back would make a new, empty cell. Two scopes close that gap, both set by the caller around
one engine call (they are context variables, so they follow the call into the filesystem's
merge without widening any signature in between):

- `capturing_removed()` yields a dict that every merge inside the scope fills with the cells
  it deletes (a copy of each cell's JSON, by the id the projection showed);
- `restoring_cells(cells)` makes a merge inside the scope build a marker naming an id the
  notebook does not have, and that `cells` holds, from the kept cell: its id, outputs,
  execution count, attachments and metadata, with the source the text gives.

Invariants:
- Outside these scopes merging behaves exactly as before: nothing is captured, nothing restored.
- A restored cell keeps its own id when that id is free in the notebook being merged, else
  (a copy of it holds the id now) it comes back whole under a fresh id; a cell whose type the
  text changed is not restored (it is a new cell, as without the scope).
- Captured and restored cells are deep copies: the caller's and the notebook's objects are
  never shared or mutated.
"""

from __future__ import annotations

import copy
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

__all__ = ["capturing_removed", "note_removed", "restorable_cell", "restoring_cells"]

Cell = Mapping[str, Any]

_CAPTURE: ContextVar[dict[str, dict[str, Any]] | None] = ContextVar(
    "hashline_removed_cells", default=None
)
_RESTORE: ContextVar[Mapping[str, Cell] | None] = ContextVar("hashline_restore_cells", default=None)


@contextmanager
def capturing_removed() -> Iterator[dict[str, dict[str, Any]]]:
    """Collect the cells merges in this scope delete, by id."""
    found: dict[str, dict[str, Any]] = {}
    token = _CAPTURE.set(found)
    try:
        yield found
    finally:
        _CAPTURE.reset(token)


@contextmanager
def restoring_cells(cells: Mapping[str, Cell]) -> Iterator[None]:
    """Let merges in this scope bring back `cells` (by id) where the text names them again."""
    token = _RESTORE.set(cells)
    try:
        yield
    finally:
        _RESTORE.reset(token)


def note_removed(cell_id: str, cell: Cell) -> None:
    """A merge deleted `cell`, shown as `cell_id` (kept only inside `capturing_removed`)."""
    found = _CAPTURE.get()
    if found is not None:
        found[cell_id] = copy.deepcopy(dict(cell))


def restorable_cell(cell_id: str | None, cell_type: str) -> dict[str, Any] | None:
    """A copy of the kept cell `cell_id` when a restore scope holds one of `cell_type`."""
    cells = _RESTORE.get()
    if cells is None or cell_id is None:
        return None
    kept = cells.get(cell_id)
    if kept is None or kept.get("cell_type") != cell_type:
        return None
    return copy.deepcopy(dict(kept))
