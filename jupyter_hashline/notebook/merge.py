"""Merging an edited projection back into its notebook.

`merge_projection(nb, text)` returns the notebook the text describes, built from `nb`:

- A marker with a known id keeps that cell: outputs, execution count, metadata and attachments
  stay when only its source changes (as when a person edits a cell in JupyterLab); the option
  `clear_outputs_on_edit` clears the outputs and execution count of edited code cells.
- A marker without an id, or with an id the notebook does not have, is a new cell with a fresh
  nbformat id (reported). A second marker carrying an id already used above it is a new cell
  too, with a fresh id and a warning.
- Cells whose markers are gone are deleted (reported); moving markers moves cells; deleting a
  marker merges a cell into the one above; adding one splits a cell.
- Changing `[code]` to `[markdown]` drops outputs and execution count; the reverse gives empty
  outputs and execution count None. Attachments stay on markdown and raw cells only.
- Notebook metadata is never touched.

Invariants:
- `nb` is never modified. Cells that did not change are the very same objects in the result
  (so serialization can reuse their bytes); changed cells are new dicts.
- Merging the unchanged projection returns `nb` itself and no warnings, legacy or not.
- The first merge that changes a notebook older than 4.5 upgrades it to 4.5 and stores the ids
  the projection showed; a 4.5 notebook with missing or duplicate ids is repaired the same way,
  with a warning (a later copy of an id keeps the distinct id the projection showed for it).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from nbformat import NotebookNode, from_dict

from .ids import DisplayIds, IdSource, display_ids, fresh_id_factory, is_legacy
from .projection import ProjectedCell, cell_source, cell_type_of, parse_projection

Notebook = dict[str, Any]
Cell = dict[str, Any]
_CODE_ONLY = ("outputs", "execution_count")


def merge_projection(
    nb: Mapping[str, Any],
    text: str,
    *,
    clear_outputs_on_edit: bool = False,
    new_id: IdSource | None = None,
) -> tuple[Notebook, list[str]]:
    """The notebook `text` describes, merged into `nb`, and the warnings to report."""
    parsed = parse_projection(text)
    cells: Sequence[Mapping[str, Any]] = nb.get("cells", [])
    shown = display_ids(cells)
    taken = set(shown.ids) | {p.cell_id for p in parsed if p.cell_id}
    fresh = fresh_id_factory(taken, new_id)
    node = isinstance(nb, NotebookNode)
    merged, warnings, consumed = _merge_cells(
        cells, shown, parsed, fresh, node, clear_outputs_on_edit
    )
    if len(merged) == len(cells) and all(m[0] is c for m, c in zip(merged, cells, strict=True)):
        return nb if isinstance(nb, dict) else dict(nb), []
    deleted = [shown.ids[i] for i in range(len(cells)) if i not in consumed]
    if deleted:
        warnings.append(f"deleted cell{'s' if len(deleted) > 1 else ''}: {', '.join(deleted)}")
    result = type(nb)(nb) if isinstance(nb, dict) else dict(nb)
    result["cells"] = _persist_ids(merged, result, fresh, warnings)
    return result, warnings


def _merge_cells(
    cells: Sequence[Mapping[str, Any]],
    shown: DisplayIds,
    parsed: Sequence[ProjectedCell],
    fresh: IdSource,
    node: bool,
    clear_outputs: bool,
) -> tuple[list[tuple[Any, str, bool]], list[str], set[int]]:
    """Each merged cell with the id it was shown under (or got) and whether that id is derived."""
    ids, derived = shown.ids, shown.derived
    positions: dict[str, list[int]] = {}
    for index, cid in enumerate(ids):
        positions.setdefault(cid, []).append(index)
    first_line: dict[str, int] = {}
    merged: list[tuple[Any, str, bool]] = []
    warnings: list[str] = []
    consumed: set[int] = set()
    for item in parsed:
        queue = positions.get(item.cell_id or "")
        if item.cell_id is not None and queue:
            index = queue.pop(0)
            consumed.add(index)
            first_line.setdefault(item.cell_id, item.line)
            cell = _merge_cell(cells[index], item, ids[index], node, clear_outputs, warnings)
            merged.append((cell, ids[index], index in derived))
            continue
        cid = fresh()
        merged.append((_new_cell(item.cell_type, cid, item.source, node), cid, False))
        warnings.append(_new_cell_note(item, cid, first_line))
    return merged, warnings, consumed


def _new_cell_note(item: ProjectedCell, cid: str, first_line: Mapping[str, int]) -> str:
    where = f"new {item.cell_type} cell id={cid} (line {item.line})"
    if item.cell_id is None:
        return where
    if item.cell_id in first_line:
        return (
            f"{where}: id={item.cell_id} was already used by the marker on line "
            f"{first_line[item.cell_id]}, so this copy got a fresh id"
        )
    return f"{where}: the notebook has no cell id={item.cell_id}, so it got a fresh id"


def _merge_cell(
    base: Mapping[str, Any],
    item: ProjectedCell,
    cid: str,
    node: bool,
    clear_outputs: bool,
    warnings: list[str],
) -> Any:
    old_type = cell_type_of(base)
    if item.cell_type == old_type:
        if item.source == cell_source(base):
            return base
        cell = type(base)(base) if isinstance(base, dict) else dict(base)
        cell["source"] = item.source
        if clear_outputs and old_type == "code":
            cell["outputs"] = []
            cell["execution_count"] = None
        return cell
    return _retyped(base, item, cid, node, warnings)


def _retyped(
    base: Mapping[str, Any], item: ProjectedCell, cid: str, node: bool, warnings: list[str]
) -> Any:
    new_type, old_type = item.cell_type, cell_type_of(base)
    dropped = ("attachments", *_CODE_ONLY)
    cell: Cell = {k: v for k, v in base.items() if k not in dropped}
    cell["cell_type"] = new_type
    cell["source"] = item.source
    if new_type == "code":
        cell["outputs"] = []
        cell["execution_count"] = None
    elif new_type in ("markdown", "raw") and "attachments" in base:
        cell["attachments"] = base["attachments"]
    note = f"cell {cid} changed from {old_type} to {new_type}"
    if old_type == "code" and (base.get("outputs") or base.get("execution_count") is not None):
        note += ": its outputs and execution count were dropped"
    if "attachments" in base and "attachments" not in cell:
        note += ("; " if ":" in note else ": ") + "its attachments were dropped"
    warnings.append(note)
    return from_dict(cell) if node else cell


def _new_cell(cell_type: str, cid: str, source: str, node: bool) -> Any:
    cell: Cell = {"cell_type": cell_type, "id": cid, "metadata": {}, "source": source}
    if cell_type == "code":
        cell["outputs"] = []
        cell["execution_count"] = None
    return from_dict(cell) if node else cell


def _persist_ids(
    merged: list[tuple[Any, str, bool]], nb: Notebook, fresh: IdSource, warnings: list[str]
) -> list[Any]:
    """Store the shown id in every cell (unique); upgrade notebooks older than 4.5 to 4.5."""
    legacy = is_legacy(nb)
    seen: set[str] = set()
    repaired: list[str] = []
    result: list[Any] = []
    for cell, shown_id, derived in merged:
        cid = shown_id
        own = cell.get("id")
        if cid in seen:
            cid = fresh()
            repaired.append(f"duplicate id {shown_id} -> {cid}")
        elif derived and not legacy:
            repaired.append(f"missing id -> {cid}")
        elif isinstance(own, str) and own != cid and not legacy:  # a copy, shown apart
            repaired.append(f"duplicate id {own} -> {cid}")
        seen.add(cid)
        if cell.get("id") != cid:
            cell = type(cell)(cell) if isinstance(cell, dict) else dict(cell)
            cell["id"] = cid
        result.append(cell)
    if legacy:
        old = f"{nb.get('nbformat', 4)}.{nb.get('nbformat_minor', 0)}"
        nb["nbformat"], nb["nbformat_minor"] = 4, 5
        warnings.append(f"notebook upgraded from nbformat {old} to 4.5: cell ids are now stored")
    elif repaired:
        warnings.append("repaired cell ids: " + "; ".join(repaired))
    return result
