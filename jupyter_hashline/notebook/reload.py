"""Reading a new version of a notebook file by the bytes that changed since the last version.

When a person saves a notebook (JupyterLab writes it through nbformat), most of the file is byte
for byte what this layer read or wrote before. `reload_notebook(old, raw)` finds the one stretch
of bytes that differs (longest common prefix and suffix, compared in C), widens it to whole
cells plus one cell on each side, parses only those cells, and keeps every other cell as the
very object it was: everything cached by cell identity stays valid (output summaries, the
serialized JSON of cells, the bytes a write reuses), and a read after a person's save costs
what the person changed, not what the notebook holds.

Invariants:
- The result is the notebook `load_notebook(raw)` gives (same cells, same survey of what a
  write must repair or refuse), or None when that cannot be shown cheaply; then the caller
  parses the whole file. None when the old version has no layout (not nbformat's), its head
  changed, both cells and the top level changed, the top level changed its version, or a
  changed stretch holds no cell.
- Sound by the JSON grammar: the bytes before and after the changed stretch are the old
  version's, whose cells sit at the old layout's spans (found there and checked by a sample,
  or written there by this layer); the changed stretch is parsed as a run of array elements
  (each cell alone where it is laid out as nbformat writes it), and a changed top level as the
  object it closes; so the whole file parses to the old cells around the new ones.
- The new layout has the changed cells' exact spans (each was parsed alone there) and marks
  them `suspect`: their bytes are reused only after a write has serialized them; elsewhere it
  inherits the old layout. A stretch not laid out as nbformat writes it leaves no layout.
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from dataclasses import dataclass
from typing import Any

from .layout import HEAD, CellLayout, Span, locate_run, top_level_tail
from .loading import (
    CellSurvey,
    LoadedNotebook,
    drop_transient,
    parse_json,
    paused_gc,
    splice_views,
    survey_cells,
    version_flags,
)
from .region import common_prefix, common_suffix
from .validation import structure_problem

__all__ = ["reload_notebook"]

_CELLS_END = b"\n ]"


@dataclass(frozen=True, slots=True)
class _Stretch:
    """Old cells `first..last` (inclusive) whose bytes `raw[start:stop]` now hold."""

    first: int
    last: int
    start: int
    stop: int


def reload_notebook(old: LoadedNotebook, raw: bytes, path: str) -> LoadedNotebook | None:
    """`load_notebook(raw)` computed from `old` and the bytes that changed (see above)."""
    layout = old.layout
    if layout is None or not raw.startswith(HEAD):
        return None
    prefix = common_prefix(old.raw, raw)
    if prefix < len(HEAD):
        return None
    suffix = common_suffix(old.raw, raw, min(len(old.raw), len(raw)) - prefix)
    old_end = len(old.raw) - suffix
    with paused_gc():
        if prefix >= layout.tail_start:
            found = _new_top_level(old, raw, layout, path)
        elif old_end > layout.tail_start:
            return None
        else:
            stretch = _stretch(layout, prefix, old_end, raw, old.raw)
            found = _new_cells(old, raw, layout, stretch, path)
    if found is not None:
        splice_views(old, found)
    return found


def _stretch(layout: CellLayout, prefix: int, old_end: int, raw: bytes, before: bytes) -> _Stretch:
    """The old cells holding the changed bytes `before[prefix:old_end]`, one more on each side."""
    spans = layout.spans
    first = bisect_right(spans, prefix, key=lambda span: span[1])
    last = bisect_left(spans, old_end, key=lambda span: span[0]) - 1
    first, last = max(0, first - 1), min(len(spans) - 1, max(last, first) + 1)
    stop = spans[last][1] + len(raw) - len(before)
    return _Stretch(first, last, spans[first][0], stop)


def _new_cells(
    old: LoadedNotebook, raw: bytes, layout: CellLayout, stretch: _Stretch, path: str
) -> LoadedNotebook | None:
    found = _parse_stretch(raw, stretch, path)
    if found is None:
        return None
    fresh, fresh_spans = found
    cells = old.nb["cells"]
    kept_after = cells[stretch.last + 1 :]
    nb = {**old.nb, "cells": [*cells[: stretch.first], *fresh, *kept_after]}
    facts = survey_cells(fresh, version_flags(nb))
    shift = len(fresh) - (stretch.last - stretch.first + 1)
    survey = CellSurvey(
        _moved(old.survey.suspect, stretch, shift, facts.suspect),
        _moved(old.survey.repairable, stretch, shift, facts.repairable),
        structure_problem(nb) if facts.broken or old.survey.broken else None,
    )
    new_layout = None
    if fresh_spans is not None:
        new_layout = _spliced(layout, stretch, fresh_spans, survey, len(raw) - len(old.raw))
    return LoadedNotebook(
        raw, nb, layout=new_layout, survey=survey, top_level=old.top_level_problem()
    )


def _parse_stretch(
    raw: bytes, stretch: _Stretch, path: str
) -> tuple[list[dict[str, Any]], list[Span] | None] | None:
    """The cells in `raw[start:stop]` and their spans: each cell parsed alone where they are laid
    out as nbformat writes them, else the stretch parsed as array elements (no spans)."""
    spans = locate_run(raw, stretch.start, stretch.stop)
    try:
        if spans is not None:
            cells = [parse_json(raw[start:end], path) for start, end in spans]
        else:
            cells = parse_json(b"[" + raw[stretch.start : stretch.stop] + b"]", path)
    except ValueError:
        return None
    if not isinstance(cells, list) or not cells or not all(isinstance(c, dict) for c in cells):
        return None
    return cells, spans


def _moved(
    old: frozenset[int], stretch: _Stretch, shift: int, fresh: tuple[int, ...]
) -> frozenset[int]:
    """Indices of the new notebook: old ones outside the stretch (moved by `shift` after it)
    and the stretch's own (`fresh`, relative to its first cell)."""
    kept = {
        i if i < stretch.first else i + shift for i in old if not stretch.first <= i <= stretch.last
    }
    return frozenset(kept | {stretch.first + i for i in fresh})


def _spliced(
    layout: CellLayout,
    stretch: _Stretch,
    fresh_spans: list[Span],
    survey: CellSurvey,
    delta: int,
) -> CellLayout:
    """The old layout with the stretch's spans replaced and the spans after it moved. The
    stretch's cells are suspect: their bytes are reused only once a write has serialized them
    (a read that no write follows never pays for checking them)."""
    spans = layout.spans
    after = [(start + delta, end + delta) for start, end in spans[stretch.last + 1 :]]
    fresh = range(stretch.first, stretch.first + len(fresh_spans))
    return CellLayout(
        (*spans[: stretch.first], *fresh_spans, *after),
        layout.tail_start + delta,
        survey.suspect | frozenset(fresh),
    )


def _new_top_level(
    old: LoadedNotebook, raw: bytes, layout: CellLayout, path: str
) -> LoadedNotebook | None:
    """Every cell unchanged, the top level (metadata, version) changed: parse only that."""
    tail = raw[layout.tail_start :]
    if not tail.startswith(_CELLS_END):
        return None
    rest = tail[len(_CELLS_END) :].lstrip()
    body = b"{" + rest[1:] if rest.startswith(b",") else b"{" + rest
    try:
        top = parse_json(body, path)
    except ValueError:
        return None
    if not isinstance(top, dict) or "cells" in top:
        return None
    nb = {"cells": old.nb["cells"], **top}
    if version_flags(nb) != version_flags(old.nb) or nb.get("nbformat") != 4:
        return None  # the cells' survey depends on the version: survey them all again
    drop_transient(nb)
    canonical = top_level_tail(nb)
    new_layout = None
    if canonical is not None and canonical.encode("utf-8", "surrogatepass") == tail:
        new_layout = CellLayout(layout.spans, layout.tail_start, layout.suspect)
    return LoadedNotebook(raw, nb, layout=new_layout, survey=old.survey)
