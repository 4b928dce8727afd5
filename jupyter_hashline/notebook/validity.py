"""Writing notebooks that are invalid already: what a write keeps, refuses and says.

Jupyter saves an invalid notebook and says why; so does this layer, with one rule: a write
may keep the problems a notebook has, never add one.

Invariants:
- A write is refused (`InvalidNotebookError`, nothing written) when it adds a schema problem:
  a changed or new cell failing the schema where the version of that cell the notebook had
  (the cell shown under the same id) did not fail it the same way, a top level (metadata,
  version) failing where it did not, or any problem in a new file.
- Otherwise it is written, and `still_invalid` words the problem the written notebook still
  has, on every write of it (the first and every later one alike), until it is repaired.
- Cost follows what changed: the changed cells are validated alone (a cell of a valid
  notebook whose source alone changed, its outputs perhaps cleared, is valid by construction
  and not validated again); whether the rest is valid is
  known from the version written before (kept on the loaded notebook), or carried from the
  version before a person's save when the cells it changed pass the screen (`carry_validity`,
  incremental/reload.py), or found once per version read by `known_problem`'s screen (a few
  lookups per cell).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any

from .errors import InvalidNotebookError
from .ids import display_ids
from .incremental.cellmatch import CellMatch
from .loading import LoadedNotebook
from .validation import (
    cells_known_problem,
    cells_pass_screen,
    cells_problem,
    known_problem,
    notebook_problem,
    top_level_problem,
)

__all__ = ["SCHEMA_VIEW", "carry_validity", "check_write", "remember_problem", "still_invalid"]

SCHEMA_VIEW = "schema problem"
"""The view of a loaded notebook holding its schema problem (None: valid)."""
_UNKNOWN = object()


def current_problem(loaded: LoadedNotebook) -> str | None:
    """The schema problem of a loaded notebook, or None (found once per version)."""
    found: str | None = loaded.view(
        SCHEMA_VIEW, lambda nb, _: loaded.top_level_problem() or cells_known_problem(nb)
    )
    return found


def carry_validity(old: LoadedNotebook, new: LoadedNotebook, changed: Sequence[Any]) -> None:
    """Known valid: `new`, the version after `old` in which only the `changed` cells are new
    or different (the top level the same), when `old` was known valid and those cells pass
    the screen; the other cells are not screened again. Otherwise nothing is known yet."""
    if old.cached_view(SCHEMA_VIEW, _UNKNOWN) is None and cells_pass_screen(new.nb, changed):
        remember_problem(new, None)


def remember_problem(loaded: LoadedNotebook, problem: str | None) -> None:
    """Record what `check_write` found for the notebook a write produced."""
    loaded.view(SCHEMA_VIEW, lambda nb, _: problem)


def check_write(
    path: str,
    current: LoadedNotebook | None,
    merged: Mapping[str, Any],
    match: CellMatch | None,
) -> str | None:
    """The schema problem `merged` keeps from `current` (None: valid); raises when the write
    would add one (see the module docstring)."""
    if current is None or match is None:
        problem = notebook_problem(merged)
        if problem is not None:
            raise _refusal(path, problem)
        return None
    cells: Sequence[Any] = merged.get("cells", [])
    before = current.top_level_problem()
    after = before if _same_top(current.nb, merged) else top_level_problem(merged)
    if after is not None and after != before:
        raise _refusal(path, after)
    names = _names(cells)
    kept = None
    fresh = match.fresh()
    old_cells: Sequence[Any] = current.nb.get("cells", [])
    valid = (
        after is None
        and bool(fresh)
        and _same_version(current.nb, merged)
        and current_problem(current) is None
    )
    for index in fresh:
        if valid and _source_edit(old_cells, index, cells[index]):
            continue
        problem = cells_problem(merged, [cells[index]], names)
        if problem is None:
            continue
        if problem != _old_problem(current, names().get(id(cells[index]))):
            raise _refusal(path, problem)
        kept = kept or problem
    if kept is None and after is None and current_problem(current) is None:
        return None
    return known_problem(merged)


def still_invalid(path: str, problem: str) -> str:
    return (
        f"{path} is still not a valid notebook ({problem}). It was written anyway, as Jupyter "
        "saves such notebooks, because the edit added no new problem; repair it (for example "
        "open and save it in JupyterLab, or fix that cell) to make it valid."
    )


def _source_edit(old: Sequence[Any], index: int, cell: Any) -> bool:
    """Whether `cell` is the cell at `index` of the valid cells `old` with only its source
    changed (to text) and, for a code cell, perhaps its outputs cleared: valid by construction
    (the schema takes any text as a source, no outputs and no execution count), so the schema
    need not run on it. The cell's identity does not matter to this proof, only its shape."""
    if index >= len(old) or type(cell) is not dict or type(cell.get("source")) is not str:
        return False
    before = old[index]
    if type(before) is not dict or before.keys() != cell.keys():
        return False
    for key, value in cell.items():
        if key == "source" or value is before[key]:
            continue
        cleared = (key == "outputs" and value == []) or (key == "execution_count" and value is None)
        if not (cleared and before.get("cell_type") == "code"):
            return False
    return True


def _old_problem(current: LoadedNotebook, name: str | None) -> str | None:
    """The schema problem of the cell `current` shows as `name` (None: none, or no such cell)."""
    ids = current.ids.ids
    if name is None or name not in ids:
        return None
    old = current.nb["cells"][ids.index(name)]
    return cells_problem(current.nb, [old], lambda: {id(old): name})


def _names(cells: Sequence[Any]) -> Callable[[], Mapping[int, str]]:
    """id(cell) -> the id the cell is shown under, computed once when first asked."""
    memo: list[Mapping[int, str]] = []

    def names() -> Mapping[int, str]:
        if not memo:
            shown = display_ids([c if isinstance(c, Mapping) else {} for c in cells]).ids
            memo.append({id(cell): cid for cell, cid in zip(cells, shown, strict=True)})
        return memo[0]

    return names


def _refusal(path: str, problem: str) -> InvalidNotebookError:
    return InvalidNotebookError(
        f"After the edit {path} would not be a valid notebook ({problem}). Nothing was "
        "written. Cell types are code, markdown and raw; fix the marker or the text and send "
        "the edit again."
    )


def _same_version(base: Mapping[str, Any], merged: Mapping[str, Any]) -> bool:
    return all(base.get(key) == merged.get(key) for key in ("nbformat", "nbformat_minor"))


def _same_top(base: Mapping[str, Any], merged: Mapping[str, Any]) -> bool:
    if base.keys() != merged.keys():
        return False
    return all(merged[key] is base[key] for key in base if key != "cells")
