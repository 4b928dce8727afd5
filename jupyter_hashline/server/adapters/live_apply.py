"""Land a notebook edit in a live (collaborative) document as granular changes.

`apply_to_live(document, base, target, origin)` turns the live `YNotebook` of an open room from
`base` (the notebook it held when the edit was merged) into `target` (the merged notebook), in
ONE pycrdt transaction carrying `origin`:

- a cell whose source changed gets per-line text deletes and inserts (trimmed to the characters
  that differ), never clear-and-replace, so a person's cursor and their text on other lines
  stay where they are;
- cells that appear, disappear or move are inserted, deleted, or deleted and re-inserted (Yjs
  has no array move; JupyterLab moves cells the same way); a cell whose type changed, or whose
  outputs/attachments changed other than being cleared, is replaced as a whole;
- small fields (id, execution count, metadata) are set in place; notebook-level format and
  metadata changes (e.g. the nbformat 4.5 upgrade) land in the `meta` map;
- outputs and attachments are compared as content: a multi-line string stored as a list of
  lines (a notebook file's way) equals the one string the shared document holds, so a cell
  whose outputs did not change is never replaced.

Invariants:
- pycrdt `Text` offsets are UTF-8 byte offsets: every offset is computed on the encoded text,
  so no edit ever lands inside a multi-byte character.
- Nothing is applied unless every changed cell's live source still equals its `base` source
  (checked before the transaction opens): otherwise `LiveDocumentChanged` and nothing changed.
- Cells are matched by the ids the projection shows (`display_ids`), so notebooks without ids
  (nbformat < 4.5) map by position exactly as the projection does.
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import islice
from operator import is_, lt
from typing import Any

from ...hashline import common_prefix, common_suffix, line_opcodes
from ...notebook import display_ids
from ...tools import ChangedDuringWriteError

ORIGIN = "jupyter_hashline"
_SCALAR_KEYS = frozenset({"id", "execution_count"})
_IGNORED_KEYS = frozenset({"source", "cell_type", "execution_state"})


class LiveDocumentChanged(ChangedDuringWriteError):
    """The live notebook changed while an edit was being applied; nothing was written (the
    workspace runs the edit again, as a stale edit)."""

    def __init__(self, path: str) -> None:
        super().__init__(
            f"{path} changed in JupyterLab while your edit was being applied, so nothing was "
            "written. Read it again and send the edit with the new header."
        )
        self.path = path


@dataclass(frozen=True, slots=True)
class TextOp:
    """Replace UTF-8 bytes [start, end) of a text with `insert` (applied bottom-up)."""

    start: int
    end: int
    insert: str


def split_keep_lines(text: str) -> list[str]:
    """Lines with their `\\n` kept (only `\\n` splits: a CR is content)."""
    lines = text.split("\n")
    kept = [line + "\n" for line in lines[:-1]]
    return kept + ([lines[-1]] if lines[-1] else [])


def _trimmed(old: str, new: str) -> tuple[int, int, int]:
    """Common prefix length, and the lengths of `old` and `new` after prefix and suffix."""
    prefix = common_prefix(old, new)
    suffix = common_suffix(old, new, min(len(old), len(new)) - prefix)
    return prefix, len(old) - prefix - suffix, len(new) - prefix - suffix


def text_ops(old: str, new: str) -> list[TextOp]:
    """Byte-offset edits turning `old` into `new`, line by line, last edit first."""
    old_lines, new_lines = split_keep_lines(old), split_keep_lines(new)
    offsets = [0]
    for line in old_lines:
        offsets.append(offsets[-1] + len(line.encode("utf-8")))
    ops: list[TextOp] = []
    for tag, i1, i2, j1, j2 in line_opcodes(old_lines, new_lines):
        if tag == "equal":
            continue
        removed, added = "".join(old_lines[i1:i2]), "".join(new_lines[j1:j2])
        prefix, old_len, new_len = _trimmed(removed, added)
        start = offsets[i1] + len(removed[:prefix].encode("utf-8"))
        end = start + len(removed[prefix : prefix + old_len].encode("utf-8"))
        ops.append(TextOp(start, end, added[prefix : prefix + new_len]))
    ops.reverse()
    return ops


def apply_text_ops(ytext: Any, ops: Sequence[TextOp]) -> None:
    """Apply `text_ops` output to a pycrdt `Text` (inside the caller's transaction)."""
    for op in ops:
        if op.end > op.start:
            del ytext[op.start : op.end]
        if op.insert:
            ytext.insert(op.start, op.insert)


def _source(cell: Mapping[str, Any]) -> str:
    source = cell.get("source", "")
    return "".join(source) if isinstance(source, list) else str(source)


def _joined(value: Any, key: str = "") -> Any:
    """Outputs and attachments with multi-line strings as one string (a live document holds
    `"a\nb\n"` where the file holds `["a\n", "b\n"]`; both are the same value)."""
    if isinstance(value, Mapping):
        return {k: _joined(v, k) for k, v in value.items()}
    if isinstance(value, list):
        if value and all(isinstance(v, str) for v in value) and _multiline(key):
            return "".join(value)
        return [_joined(v) for v in value]
    return value


def _multiline(key: str) -> bool:
    return key == "text" or ("/" in key and not key.endswith("json"))


def _same_multiline(key: str, old: Any, new: Any) -> bool:
    """Whether two outputs (or attachments) differ only in how their strings are split."""
    return key in ("outputs", "attachments") and _joined(old) == _joined(new)


@dataclass(frozen=True, slots=True)
class _CellUpdate:
    """In-place changes to one live cell that stays where it is."""

    index: int
    ops: tuple[TextOp, ...]
    scalars: tuple[tuple[str, Any], ...]
    metadata: Mapping[str, Any] | None
    clear_outputs: bool


_KEPT = _CellUpdate(-1, (), (), None, False)
"""The update of every cell the merge kept as the very object it was (one shared value: a
notebook of thousands of cells builds none per edit); it changes nothing, so no index."""


def _in_place(index: int, base: Mapping[str, Any], target: Mapping[str, Any]) -> _CellUpdate | None:
    """How to update `base` into `target` in place, or None when the cell must be replaced."""
    if base is target:  # the merge kept this very cell: nothing to change
        return _KEPT
    if base.get("cell_type") != target.get("cell_type"):
        return None
    scalars: list[tuple[str, Any]] = []
    metadata: Mapping[str, Any] | None = None
    clear_outputs = False
    for key in (set(base) | set(target)) - _IGNORED_KEYS:
        old, new = base.get(key), target.get(key)
        if old == new or (key == "id" and new is None) or _same_multiline(key, old, new):
            continue
        if key in _SCALAR_KEYS and key in target:
            scalars.append((key, new))
        elif key == "metadata" and isinstance(new, Mapping):
            metadata = new
        elif key == "outputs" and new == []:
            clear_outputs = True
        else:
            return None
    old_source, new_source = _source(base), _source(target)
    ops = () if old_source == new_source else tuple(text_ops(old_source, new_source))
    return _CellUpdate(index, ops, tuple(sorted(scalars)), metadata, clear_outputs)


@dataclass(frozen=True, slots=True)
class LivePlan:
    """Everything one edit changes in a live notebook, computed before the transaction."""

    updates: tuple[_CellUpdate, ...]
    deletes: tuple[int, ...]  # live indices, highest first
    inserts: tuple[tuple[int, Mapping[str, Any]], ...]  # (final index, cell), lowest first
    meta: tuple[tuple[str, Any], ...]
    sources: Mapping[int, str]  # live index -> the base source the update expects

    @property
    def empty(self) -> bool:
        return not (self.updates or self.deletes or self.inserts or self.meta)


def _stable_positions(order: Sequence[int]) -> set[int]:
    """The longest increasing subsequence of `order` (cells that need not move); `order`'s
    values are distinct. Already increasing (no cell moved, the usual case): all of it."""
    if all(map(lt, order, islice(order, 1, None))):
        return set(order)
    tails: list[int] = []
    links: dict[int, int | None] = {}
    for value in order:
        lo = bisect_left(tails, value)
        links[value] = tails[lo - 1] if lo else None
        if lo == len(tails):
            tails.append(value)
        else:
            tails[lo] = value
    stable: set[int] = set()
    current = tails[-1] if tails else None
    while current is not None:
        stable.add(current)
        current = links[current]
    return stable


def _meta_changes(base: Mapping[str, Any], target: Mapping[str, Any]) -> list[tuple[str, Any]]:
    return [
        (key, target.get(key))
        for key in ("nbformat", "nbformat_minor", "metadata")
        if key in target and base.get(key) != target.get(key)
    ]


def plan_changes(base: Mapping[str, Any], target: Mapping[str, Any]) -> LivePlan:
    """The granular changes that turn the live notebook `base` into `target`.

    Where every cell keeps its place and its `id` (an edit of cells' text or outputs: the usual
    case), the cells match by index, as matching by shown ids would match them (those are a
    function of the ids in order: ids.py); only the cells that are not the very same objects
    are looked at. Otherwise cells match by their shown ids (`plan_by_ids`)."""
    base_cells: Sequence[Mapping[str, Any]] = base.get("cells", [])
    target_cells: Sequence[Mapping[str, Any]] = target.get("cells", [])
    if len(base_cells) == len(target_cells):
        changed = [i for i, same in enumerate(map(is_, base_cells, target_cells)) if not same]
        if all(base_cells[i].get("id") == target_cells[i].get("id") for i in changed):
            return _plan_in_place(base, target, base_cells, target_cells, changed)
    return plan_by_ids(base, target)


def _plan_in_place(
    base: Mapping[str, Any],
    target: Mapping[str, Any],
    base_cells: Sequence[Mapping[str, Any]],
    target_cells: Sequence[Mapping[str, Any]],
    changed: Sequence[int],
) -> LivePlan:
    updates: list[_CellUpdate] = []
    replaced: list[int] = []
    for index in changed:
        update = _in_place(index, base_cells[index], target_cells[index])
        if update is None:
            replaced.append(index)
        elif _real(update):
            updates.append(update)
    return LivePlan(
        updates=tuple(updates),
        deletes=tuple(reversed(replaced)),
        inserts=tuple((index, target_cells[index]) for index in replaced),
        meta=tuple(_meta_changes(base, target)),
        sources={u.index: _source(base_cells[u.index]) for u in updates if u.ops},
    )


def plan_by_ids(base: Mapping[str, Any], target: Mapping[str, Any]) -> LivePlan:
    """`plan_changes` by matching cells on their shown ids, wherever they moved."""
    base_cells: Sequence[Mapping[str, Any]] = base.get("cells", [])
    target_cells: Sequence[Mapping[str, Any]] = target.get("cells", [])
    base_index: dict[str, int] = {}
    for index, cid in enumerate(display_ids(base_cells).ids):
        base_index.setdefault(cid, index)
    matched: list[tuple[int, int, _CellUpdate | None]] = []  # (target idx, base idx, update)
    for t_index, cid in enumerate(display_ids(target_cells).ids):
        b_index = base_index.pop(cid, None)
        if b_index is not None:
            update = _in_place(b_index, base_cells[b_index], target_cells[t_index])
            matched.append((t_index, b_index, update))
    stable = _stable_positions([b for _, b, update in matched if update is not None])
    kept = {b: (t, update) for t, b, update in matched if b in stable and update is not None}
    kept_targets = {t for t, _ in kept.values()}
    updates = tuple(
        u for _, u in sorted(kept.values(), key=lambda tu: tu[0]) if u is not None and _real(u)
    )
    return LivePlan(
        updates=updates,
        deletes=tuple(sorted(set(range(len(base_cells))) - kept.keys(), reverse=True)),
        inserts=tuple(
            (t, target_cells[t]) for t in range(len(target_cells)) if t not in kept_targets
        ),
        meta=tuple(_meta_changes(base, target)),
        sources={u.index: _source(base_cells[u.index]) for u in updates if u.ops},
    )


def _real(update: _CellUpdate) -> bool:
    return bool(update.ops or update.scalars or update.metadata is not None or update.clear_outputs)


def check_sources(document: Any, plan: LivePlan, path: str) -> None:
    """Refuse (nothing applied) unless every cell to edit still holds the expected source."""
    cells = document.ycells
    for index, expected in plan.sources.items():
        if index >= len(cells) or str(cells[index]["source"]) != expected:
            raise LiveDocumentChanged(path)


def apply_plan(document: Any, plan: LivePlan, origin: str = ORIGIN) -> None:
    """Apply `plan` to a `YNotebook` in one transaction tagged with `origin`."""
    from pycrdt import Map

    cells = document.ycells
    with document.ydoc.transaction(origin=origin):
        meta = document.ydoc.get("meta", type=Map)
        for key, value in plan.meta:
            if key == "metadata":
                _set_map(meta, key, value)
            else:
                meta[key] = value
        for update in plan.updates:
            _apply_update(cells[update.index], update)
        for index in plan.deletes:
            del cells[index]
        for index, cell in plan.inserts:
            cells.insert(index, document.create_ycell(dict(cell)))


def _set_map(parent: Any, key: str, value: Mapping[str, Any]) -> None:
    """Set a map-valued field, keeping the existing shared map (and its observers) if any."""
    from pycrdt import Map

    current = parent.get(key)
    if isinstance(current, Map):
        current.clear()
        current.update(dict(value))
    else:
        parent[key] = Map(dict(value))


def _apply_update(ycell: Any, update: _CellUpdate) -> None:
    apply_text_ops(ycell["source"], update.ops)
    for key, value in update.scalars:
        ycell[key] = value
    if update.metadata is not None:
        _set_map(ycell, "metadata", update.metadata)
    if update.clear_outputs:
        outputs = ycell.get("outputs")
        if outputs is not None and hasattr(outputs, "clear"):
            outputs.clear()
        else:
            ycell["outputs"] = []


def apply_to_live(
    document: Any,
    base: Mapping[str, Any],
    target: Mapping[str, Any],
    path: str,
    origin: str = ORIGIN,
) -> LivePlan:
    """Plan, check and apply: `document` goes from `base` to `target` (see the module doc)."""
    plan = plan_changes(base, target)
    if len(document.ycells) != len(base.get("cells", [])):
        raise LiveDocumentChanged(path)
    check_sources(document, plan, path)
    if not plan.empty:
        apply_plan(document, plan, origin)
    return plan
