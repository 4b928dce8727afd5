"""Repairs a write makes, as JupyterLab makes them when it saves a notebook.

Notebooks other tools wrote are often invalid in ways JupyterLab fixes silently on save: Azure
Data Studio puts `outputs` and `execution_count` on markdown cells, Colab writes cell ids into
nbformat 4.0-4.4 notebooks (a version without them), some tools leave `outputs` or
`execution_count` off code cells. A write repairs these, so such notebooks can be edited, and
says so: one warning per kind of repair, naming the cells.

Invariants:
- A pure function of the notebook: `nb` is never modified; cells that need no repair are the
  very same objects in the result (their bytes are reused), repaired cells are new dicts.
- Only the repairs listed here are made; anything else that is invalid stays as it is (and a
  cell the edit changed must then pass validation).
- Nothing is repaired when nothing needs it: the result is `nb` itself and no warnings.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from difflib import SequenceMatcher
from typing import Any

from .ids import display_ids, is_legacy

_CODE_ONLY = ("outputs", "execution_count")
_CODE_ONLY_REMOVED = (
    "outputs and execution counts removed from non-code cells (only code cells have them; "
    "JupyterLab removes them on save too): "
)
_OUTPUTS_ADDED = "empty outputs and execution count added to code cells that had none: "
IDS_REPAIRED = "repaired cell ids: "


def needs_repair(cell: Any, legacy: bool) -> bool:
    """Whether `repair_cells` would change this cell (cheap: key lookups only)."""
    if not isinstance(cell, Mapping):
        return False
    kind = cell.get("cell_type")
    if kind == "code":
        missing = "outputs" not in cell or "execution_count" not in cell
    else:
        missing = kind in ("markdown", "raw") and ("outputs" in cell or "execution_count" in cell)
    return missing or (legacy and "id" in cell)


def repair_cells(nb: Mapping[str, Any], only: Iterable[int] | None = None) -> tuple[Any, list[str]]:
    """`nb` with its repairable cell problems fixed, and one warning per kind of repair.

    `only`: the indices of the cells to look at (default: every cell)."""
    cells: Sequence[Any] = nb.get("cells", [])
    legacy = is_legacy(nb)
    fixed: list[Any] | None = None
    found: dict[str, list[int]] = {}
    for index in range(len(cells)) if only is None else only:
        cell = cells[index]
        repaired, kinds = _repair_cell(cell, legacy)
        if not kinds:
            continue
        if fixed is None:
            fixed = list(cells)
        fixed[index] = repaired
        for kind in kinds:
            found.setdefault(kind, []).append(index)
    if fixed is None:
        return nb, []
    result = type(nb)(nb) if isinstance(nb, dict) else dict(nb)
    result["cells"] = fixed
    return result, _warnings(found, cells, fixed, nb)


def _repair_cell(cell: Any, legacy: bool) -> tuple[Any, list[str]]:
    if not isinstance(cell, Mapping):
        return cell, []
    kinds: list[str] = []
    drop: set[str] = set()
    add: dict[str, Any] = {}
    if cell.get("cell_type") == "code":
        if "outputs" not in cell:
            add["outputs"] = []
        if "execution_count" not in cell:
            add["execution_count"] = None
        if add:
            kinds.append("added")
    elif cell.get("cell_type") in ("markdown", "raw") and any(k in cell for k in _CODE_ONLY):
        drop.update(k for k in _CODE_ONLY if k in cell)
        kinds.append("code-only")
    if legacy and "id" in cell:
        drop.add("id")
        kinds.append("legacy-id")
    if not kinds:
        return cell, []
    repaired = type(cell)(cell) if isinstance(cell, dict) else dict(cell)
    for key in drop:
        del repaired[key]
    repaired.update(add)
    return repaired, kinds


def _warnings(
    found: Mapping[str, list[int]], before: Sequence[Any], after: Sequence[Any], nb: Any
) -> list[str]:
    old = display_ids([c if isinstance(c, Mapping) else {} for c in before]).ids
    new = display_ids([c if isinstance(c, Mapping) else {} for c in after]).ids
    version = f"{nb.get('nbformat', 4)}.{nb.get('nbformat_minor', 0)}"
    said = {
        "code-only": _CODE_ONLY_REMOVED + "{old}",
        "added": _OUTPUTS_ADDED + "{new}",
        "legacy-id": "cell ids removed (nbformat {version} has no cell ids; these cells are "
        "now shown by position): {moves}",
    }
    notes = []
    for kind, template in said.items():
        indices = found.get(kind)
        if not indices:
            continue
        moves = ", ".join(f"{old[i]} -> {new[i]}" for i in indices)
        notes.append(
            template.format(
                old=", ".join(old[i] for i in indices),
                new=", ".join(new[i] for i in indices),
                moves=moves,
                version=version,
            )
        )
    return notes


def repairs_between(stored: Mapping[str, Any], repaired: Mapping[str, Any]) -> list[str]:
    """The warnings `repair_cells` and the id repair of a write would give for the repairs
    that turned `stored` (a notebook as its file holds it) into `repaired` (the same notebook
    as another writer holds it: a collaboration room repairs a notebook as it loads it, and
    its save then writes those repairs).

    Cells are paired by type and source, so cells added, removed or edited since do not
    count; only repairs `repaired` shows are reported, in the words the write's own repairs use
    (the new ids are the ones `repaired` gave)."""
    old = [c if isinstance(c, Mapping) else {} for c in stored.get("cells", [])]
    new = [c if isinstance(c, Mapping) else {} for c in repaired.get("cells", [])]
    pairs = _pairs(old, new)
    shown = display_ids(old)
    ids: list[str] = []
    added: list[str] = []
    dropped: list[str] = []
    for before, after in pairs:
        was, cell = old[before], new[after]
        now = cell.get("id")
        if isinstance(now, str) and now != was.get("id"):
            if before in shown.copies:
                ids.append(f"duplicate id {was.get('id')} -> {now}")
            elif before in shown.derived:
                ids.append(f"missing id -> {now}")
        kind = was.get("cell_type")
        if kind == "code" and any(k not in was and k in cell for k in _CODE_ONLY):
            added.append(str(now) if isinstance(now, str) else shown.ids[before])
        elif kind in ("markdown", "raw") and any(k in was and k not in cell for k in _CODE_ONLY):
            dropped.append(shown.ids[before])
    notes = []
    if dropped:
        notes.append(_CODE_ONLY_REMOVED + ", ".join(dropped))
    if added:
        notes.append(_OUTPUTS_ADDED + ", ".join(added))
    if ids:
        notes.append(IDS_REPAIRED + "; ".join(ids))
    return notes


def _pairs(
    old: Sequence[Mapping[str, Any]], new: Sequence[Mapping[str, Any]]
) -> list[tuple[int, int]]:
    """Indices of the cells of `old` and `new` that are the same cell (same type and source,
    in the same order)."""

    def key(cell: Mapping[str, Any]) -> tuple[Any, str]:
        source = cell.get("source", "")
        return cell.get("cell_type"), "".join(source) if isinstance(source, list) else str(source)

    matcher = SequenceMatcher(None, [key(c) for c in old], [key(c) for c in new], autojunk=False)
    return [
        (block.a + offset, block.b + offset)
        for block in matcher.get_matching_blocks()
        for offset in range(block.size)
    ]
