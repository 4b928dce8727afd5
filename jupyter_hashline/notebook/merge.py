"""Merging an edited projection back into its notebook.

`merge_projection(nb, text)` returns the notebook the text describes, built from `nb`:

- A marker with a known id keeps that cell: outputs, execution count, metadata and attachments
  stay when only its source changes (as when a person edits a cell in JupyterLab); the option
  `clear_outputs_on_edit` clears the outputs and execution count of edited code cells.
- A marker without an id, or with an id the notebook does not have, is a new cell with a fresh
  nbformat id (reported). Markers never move data between cells: when several markers name one
  cell's id, the marker that was already there (an unchanged line of the text as read, `before`)
  keeps the cell, its outputs and metadata, and every other one is a new cell with a fresh id
  (a warning names both places); when none of them was there, the edit is refused
  (`AnchorError`, nothing merged). Without `before`, the first such marker keeps the cell.
  In a notebook older than 4.5 new cells get no id field
  (that version has none); the report names the id the cell will be shown with.
- Cells whose markers are gone are deleted (reported); moving markers moves cells; deleting a
  marker merges a cell into the one above; adding one splits a cell.
- Changing `[code]` to `[markdown]` drops outputs and execution count; the reverse gives empty
  outputs and execution count None. Attachments stay on markdown and raw cells only.
- Notebook metadata is never touched.
- Inside `restore.restoring_cells`, a marker naming an id the notebook lacks but the scope
  keeps brings that cell back whole (outputs, attachments, metadata); inside
  `restore.capturing_removed`, deleted cells are kept for such an undo (restore.py).

Invariants:
- `nb` is never modified. Cells that did not change are the very same objects in the result
  (so serialization can reuse their bytes); changed cells are new dicts.
- Merging the unchanged projection returns `nb` itself and no warnings, legacy or not.
- Minimal diffs: a notebook keeps its `nbformat_minor`; a notebook older than 4.5 gets no ids
  stored (its ids stay derived from positions); a 4.5 notebook with missing or duplicate ids
  gets the shown ids stored, with a warning (a later copy of an id keeps the distinct id the
  projection showed for it).
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from difflib import SequenceMatcher
from typing import Any

from nbformat import NotebookNode, from_dict

from ..hashline.errors import AnchorError
from .ids import DisplayIds, IdSource, display_ids, fresh_id_factory, is_legacy
from .projection import ProjectedCell, cell_source, cell_type_of, parse_projection
from .repair import IDS_REPAIRED
from .restore import note_removed, restorable_cell

Notebook = dict[str, Any]
Cell = dict[str, Any]
_Note = str | tuple[int, int, int | None]
_CODE_ONLY = ("outputs", "execution_count")


NOTE_PREFIXES = ("new ", "restored ", "deleted cell")
"""How the merge's reports that ask nothing of a person begin (the rest are warnings)."""


def split_notes(reports: Sequence[str]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """A merge's reports as (notes, warnings): new, restored and deleted cells are what the
    edit asked for; retypes that drop outputs and repaired ids are for a person to check."""
    notes = tuple(r for r in reports if r.startswith(NOTE_PREFIXES))
    return notes, tuple(r for r in reports if not r.startswith(NOTE_PREFIXES))


def merge_projection(
    nb: Mapping[str, Any],
    text: str,
    *,
    clear_outputs_on_edit: bool = False,
    new_id: IdSource | None = None,
    shown: DisplayIds | None = None,
    before: str | None = None,
) -> tuple[Notebook, list[str]]:
    """The notebook `text` describes, merged into `nb`, and the warnings to report.

    `shown` is `display_ids(nb["cells"])` when the caller has it already; `before` is
    `nb`'s projection, which tells a cell's own marker from a copy of it."""
    parsed = parse_projection(text)
    if before is not None and shown is None:
        shown = display_ids(nb.get("cells", []))
    keepers = None
    if before is not None and shown is not None:
        keepers = marker_keepers(parsed, before, text, nb.get("cells", []), shown)
    return merge_parsed(
        nb,
        parsed,
        clear_outputs_on_edit=clear_outputs_on_edit,
        new_id=new_id,
        shown=shown,
        keepers=keepers,
    )


def merge_parsed(
    nb: Mapping[str, Any],
    parsed: Sequence[ProjectedCell],
    *,
    clear_outputs_on_edit: bool = False,
    new_id: IdSource | None = None,
    shown: DisplayIds | None = None,
    other_ids: Collection[str] = (),
    keepers: Mapping[str, int] | None = None,
) -> tuple[Notebook, list[str]]:
    """`merge_projection` of an already parsed text; `other_ids` are ids fresh ones must also
    avoid (a part of a notebook is being merged, and they are the rest's); `keepers` maps an
    id several markers carry to the index (in `parsed`) of the one that keeps the cell."""
    cells: Sequence[Mapping[str, Any]] = nb.get("cells", [])
    shown = display_ids(cells) if shown is None else shown
    fresh = _lazy_fresh(shown, parsed, new_id, other_ids)
    node = isinstance(nb, NotebookNode)
    legacy = is_legacy(nb)
    merged, notes, consumed = _merge_cells(
        cells, shown, parsed, _Options(fresh, node, clear_outputs_on_edit, legacy), keepers or {}
    )
    if len(merged) == len(cells) and all(m[0] is c for m, c in zip(merged, cells, strict=True)):
        return nb if isinstance(nb, dict) else dict(nb), []
    result = type(nb)(nb) if isinstance(nb, dict) else dict(nb)
    warnings: list[str] = []
    if legacy:
        result["cells"] = [cell for cell, _, _ in merged]
    else:
        result["cells"] = _persist_ids(merged, fresh, warnings)
    final = display_ids(result["cells"]).ids if legacy and len(notes) else ()
    said = [
        note
        if isinstance(note, str)
        else _new_cell_note(parsed[note[1]], _final_id(final, merged, note[0]), note[2])
        for note in notes
    ]
    deleted = [shown.ids[i] for i in range(len(cells)) if i not in consumed]
    for index in (i for i in range(len(cells)) if i not in consumed):
        note_removed(shown.ids[index], cells[index])
    if deleted:
        said.append(f"deleted cell{'s' if len(deleted) > 1 else ''}: {', '.join(deleted)}")
    return result, [*said, *warnings]


def _lazy_fresh(
    shown: DisplayIds,
    parsed: Sequence[ProjectedCell],
    new_id: IdSource | None,
    other_ids: Collection[str] = (),
) -> IdSource:
    """A fresh-id source whose set of taken ids is built on its first call only (most merges
    add no cell)."""
    made: list[IdSource] = []

    def fresh() -> str:
        if not made:
            taken = set(shown.ids) | {p.cell_id for p in parsed if p.cell_id} | set(other_ids)
            made.append(fresh_id_factory(taken, new_id))
        return made[0]()

    return fresh


@dataclass(frozen=True, slots=True)
class _Options:
    fresh: IdSource
    node: bool
    clear_outputs: bool
    legacy: bool


def _merge_cells(
    cells: Sequence[Mapping[str, Any]],
    shown: DisplayIds,
    parsed: Sequence[ProjectedCell],
    options: _Options,
    keepers: Mapping[str, int],
) -> tuple[list[tuple[Any, str, bool]], list[_Note], set[int]]:
    """Each merged cell with the id it was shown under (or got) and whether that id is derived;
    the notes in text order (a new cell's note waits for its final id: (merged index, parsed
    index, line of an earlier marker with the same id)); the indices of the cells kept."""
    ids, derived = shown.ids, shown.derived
    positions: dict[str, list[int]] = {}
    for index, cid in enumerate(ids):
        positions.setdefault(cid, []).append(index)
    first_line: dict[str, int] = {}
    merged: list[tuple[Any, str, bool]] = []
    notes: list[_Note] = []
    consumed: set[int] = set()
    restored: set[str] = set()
    for number, item in enumerate(parsed):
        queue = positions.get(item.cell_id or "")
        keeper = keepers.get(item.cell_id or "")
        if keeper is not None and keeper != number:
            queue = None  # a copy of a marker that stays where it was: a new cell
        if item.cell_id is not None and queue:
            index = queue.pop(0)
            consumed.add(index)
            first_line.setdefault(item.cell_id, item.line)
            cell = _merge_cell(cells[index], item, ids[index], options, notes)
            merged.append((cell, ids[index], index in derived))
            continue
        back = None if queue or options.legacy else _restored(item, restored)
        if back is not None:
            if queue is not None:  # its id is another cell's now (a copy): the cell, a new id
                back["id"] = options.fresh()
            notes.append(f"restored {item.cell_type} cell id={back['id']} (line {item.line})")
            merged.append((from_dict(back) if options.node else back, back["id"], False))
            continue
        cid = options.fresh()
        cell = _new_cell(item.cell_type, None if options.legacy else cid, item.source, options)
        earlier = first_line.get(item.cell_id or "")
        if keeper is not None:
            earlier = parsed[keeper].line
        notes.append((len(merged), number, earlier))
        merged.append((cell, cid, False))
    return merged, notes, consumed


def _restored(item: ProjectedCell, restored: set[str]) -> dict[str, Any] | None:
    """The kept cell a restore scope gives back for `item` (once per id), with its source."""
    if item.cell_id is None or item.cell_id in restored:
        return None
    cell = restorable_cell(item.cell_id, item.cell_type)
    if cell is None:
        return None
    restored.add(item.cell_id)
    cell["id"] = item.cell_id
    cell["source"] = item.source
    return cell


def marker_keepers(
    parsed: Sequence[ProjectedCell],
    before: str,
    text: str,
    cells: Sequence[Mapping[str, Any]],
    shown: DisplayIds,
) -> dict[str, int]:
    """For each id of a cell of the notebook that several markers of `text` carry: the index
    (in `parsed`) of the marker that keeps the cell. That is the one whose cell still has the
    cell's type and source when exactly one does, else the one that was already in `before`
    (an unchanged line there) when exactly one was. Refuses (`AnchorError`) otherwise."""
    count: dict[str, list[int]] = {}
    for index, item in enumerate(parsed):
        if item.cell_id is not None:
            count.setdefault(item.cell_id, []).append(index)
    repeated = {cid: found for cid, found in count.items() if len(found) > 1}
    if not repeated:
        return {}
    where = {cid: index for index, cid in enumerate(shown.ids) if cid in repeated}
    kept: frozenset[int] | None = None
    keepers: dict[str, int] = {}
    for cid, found in repeated.items():
        if cid not in where:
            continue  # an id the notebook does not have: every such marker is a new cell
        cell = cells[where[cid]]
        own = (cell_type_of(cell), cell_source(cell))
        same = [i for i in found if (parsed[i].cell_type, parsed[i].source) == own]
        if len(same) != 1:
            kept = unchanged_lines(before, text) if kept is None else kept
            same = [index for index in found if parsed[index].line in kept]
        if len(same) != 1:
            lines = ", ".join(str(parsed[index].line) for index in found)
            raise AnchorError(
                f"The edit writes markers naming id={cid} on lines {lines} of the edited "
                "text, and it is not clear which of them is the cell's own marker. Nothing was "
                "written. A marker with an existing id would move that cell's outputs and "
                "metadata. Write a new cell's marker without an id (`# %% [code]`); to move a "
                "cell, move its marker line and source together."
            )
        keepers[cid] = same[0]
    return keepers


def unchanged_lines(before: str, text: str) -> frozenset[int]:
    """The 1-based numbers of the lines of `text` that are unchanged lines of `before` (a
    line alignment: the common head and tail, and a diff of the part between)."""
    old, new = before.split("\n"), text.split("\n")
    head = 0
    while head < min(len(old), len(new)) and old[head] == new[head]:
        head += 1
    tail = 0
    while tail < min(len(old), len(new)) - head and old[-1 - tail] == new[-1 - tail]:
        tail += 1
    kept = set(range(1, head + 1)) | set(range(len(new) - tail + 1, len(new) + 1))
    matcher = SequenceMatcher(None, old[head : len(old) - tail], new[head : len(new) - tail])
    for _, start, size in matcher.get_matching_blocks():
        kept.update(range(head + start + 1, head + start + size + 1))
    return frozenset(kept)


def _final_id(final: Sequence[str], merged: Sequence[tuple[Any, str, bool]], index: int) -> str:
    """The id a new cell is shown with after the merge (derived from its place in a legacy
    notebook, else the fresh id it was given, possibly replaced when repairing duplicates)."""
    if final:
        return final[index]
    cid = merged[index][0].get("id")
    return cid if isinstance(cid, str) else merged[index][1]


def _new_cell_note(item: ProjectedCell, cid: str, earlier: int | None) -> str:
    where = f"new {item.cell_type} cell id={cid} (line {item.line})"
    asked = item.cell_id
    if asked is None:
        return where
    if earlier is not None:  # a warning, not a note: the marker did not do what it named
        return (
            f"a marker named another cell's id, so it is a {where}: id={asked} is the id of "
            f"the cell whose marker is on line {earlier}, which keeps its outputs and metadata"
        )
    return f"{where}: the notebook has no cell id={asked}, so it got a fresh id"


def _merge_cell(
    base: Mapping[str, Any],
    item: ProjectedCell,
    cid: str,
    options: _Options,
    warnings: list[_Note],
) -> Any:
    old_type = cell_type_of(base)
    if item.cell_type == old_type:
        if item.source == cell_source(base):
            return base
        cell = type(base)(base) if isinstance(base, dict) else dict(base)
        cell["source"] = item.source
        if options.clear_outputs and old_type == "code":
            cell["outputs"] = []
            cell["execution_count"] = None
        return cell
    return _retyped(base, item, cid, options.node, warnings)


def _retyped(
    base: Mapping[str, Any], item: ProjectedCell, cid: str, node: bool, warnings: list[_Note]
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


def _new_cell(cell_type: str, cid: str | None, source: str, options: _Options) -> Any:
    cell: Cell = {"cell_type": cell_type, "metadata": {}, "source": source}
    if cid is not None:
        cell["id"] = cid
    if cell_type == "code":
        cell["outputs"] = []
        cell["execution_count"] = None
    return from_dict(cell) if options.node else cell


def _persist_ids(
    merged: list[tuple[Any, str, bool]], fresh: IdSource, warnings: list[str]
) -> list[Any]:
    """Store the shown id in every cell of a 4.5 notebook, unique: a later copy of an id keeps
    the distinct id the projection showed for it, a missing id the one that was shown, and an
    id the edit itself repeated gets a fresh one (each repair reported in one warning)."""
    seen: set[str] = set()
    repaired: list[str] = []
    result: list[Any] = []
    for cell, shown_id, derived in merged:
        cid = shown_id
        own = cell.get("id")
        if cid in seen:
            cid = fresh()
            repaired.append(f"duplicate id {shown_id} -> {cid}")
        elif derived:
            repaired.append(f"missing id -> {cid}")
        elif isinstance(own, str) and own != cid:  # a later copy of an id, shown apart
            repaired.append(f"duplicate id {own} -> {cid}")
        seen.add(cid)
        if cell.get("id") != cid:
            cell = type(cell)(cell) if isinstance(cell, dict) else dict(cell)
            cell["id"] = cid
        result.append(cell)
    if repaired:
        warnings.append(IDS_REPAIRED + "; ".join(repaired))
    return result
