"""Merging an edit of a projection by the part of the text it changed.

An agent's edit changes a few lines of a long projection. `merge_edit` finds the part that
differs (the longest common prefix and suffix of the text as read and the text written, by
comparing whole blocks in C), widens it to whole cells plus one cell on each side, and merges
only those cells; every other cell is kept as the very object it was, without parsing its text.

Invariants:
- The result is exactly `merge_projection(nb, text)`'s (cells, ids, warnings and their line
  numbers). Where that could differ, `merge_edit` returns None and the caller merges the whole
  text: a 4.5 notebook with missing or duplicate ids (the full merge stores them all), a marker
  in the changed part naming a cell outside it (a copy or a move), a legacy notebook gaining a
  cell (its new cells are named by their position in the whole notebook), markers repeating an
  id (which one keeps the cell is decided against the whole text), small notebooks.
- `before` must be `project_notebook(nb)` and `starts` the offsets of its marker lines.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Collection, Mapping, Sequence
from typing import Any

from ...hashline.text import common_prefix, common_suffix
from ..ids import DisplayIds, IdSource, is_legacy
from ..merge import merge_parsed
from ..projection import parse_projection

MIN_CELLS = 2


def merge_edit(
    nb: Mapping[str, Any],
    before: str,
    text: str,
    *,
    shown: DisplayIds,
    starts: Sequence[int],
    all_ids: Collection[str],
    clear_outputs_on_edit: bool = False,
    new_id: IdSource | None = None,
    min_cells: int = MIN_CELLS,
) -> tuple[Any, list[str]] | None:
    """`merge_projection(nb, text)` computed from the changed cells only, or None (see above)."""
    cells: Sequence[Any] = nb.get("cells", [])
    if len(cells) < min_cells or len(starts) != len(cells) or len(all_ids) != len(cells):
        return None
    legacy = is_legacy(nb)
    if (shown.derived or shown.copies) and not legacy:  # ids to repair: the whole merge does
        return None
    prefix = common_prefix(before, text)
    if prefix == len(before) == len(text):
        return (nb if isinstance(nb, dict) else dict(nb)), []
    suffix = common_suffix(before, text, min(len(before), len(text)) - prefix)
    first = max(0, bisect_right(starts, prefix) - 2)
    last = min(len(cells) - 1, bisect_right(starts, len(before) - suffix))
    start = starts[first]
    end = starts[last + 1] if last + 1 < len(cells) else len(before)
    part = text[start : len(text) - (len(before) - end)]
    parsed = parse_projection(part, first_line=before.count("\n", 0, start) + 1)
    inside = set(shown.ids[first : last + 1])
    if any(_outside(item.cell_id, inside, all_ids, legacy) for item in parsed):
        return None
    named = [item.cell_id for item in parsed]
    if legacy and len(set(named)) != len(named):  # a repeated marker adds a cell
        return None
    ided = [cid for cid in named if cid is not None]
    if len(set(ided)) != len(ided):  # which copy keeps the cell: the whole merge decides
        return None
    sub_shown = DisplayIds(shown.ids[first : last + 1], frozenset())
    sub_nb = {**nb, "cells": list(cells[first : last + 1])}
    merged, warnings = merge_parsed(
        sub_nb,
        parsed,
        clear_outputs_on_edit=clear_outputs_on_edit,
        new_id=new_id,
        shown=sub_shown,
        other_ids=all_ids,
    )
    if merged is sub_nb:
        return (nb if isinstance(nb, dict) else dict(nb)), []
    result = type(nb)(nb) if isinstance(nb, dict) else dict(nb)
    result["cells"] = [*cells[:first], *merged["cells"], *cells[last + 1 :]]
    return result, warnings


def _outside(cid: str | None, inside: set[str], all_ids: Collection[str], legacy: bool) -> bool:
    """Whether a marker of the changed part makes a whole-text merge necessary: it names a
    cell outside that part, or it adds a cell to a legacy notebook."""
    if cid is not None and cid in inside:
        return False
    return legacy or (cid is not None and cid in all_ids)
