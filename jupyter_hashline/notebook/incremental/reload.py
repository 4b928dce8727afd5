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
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from itertools import repeat
from operator import add, itemgetter
from typing import Any

from ...hashline.text import common_prefix, common_suffix
from ..loading import (
    CellSurvey,
    LoadedNotebook,
    drop_transient,
    parse_json,
    paused_gc,
    splice_views,
    survey_cells,
    version_flags,
)
from ..validation import structure_problem
from ..validity import carry_validity
from .layout import HEAD, SEPARATOR, CellLayout, Span, locate_run, top_level_tail

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
    found = _parse_stretch(raw, stretch, path, old, layout)
    if found is None:
        return None
    fresh = found.cells
    cells = old.nb["cells"]
    kept_after = cells[stretch.last + 1 :]
    nb = {**old.nb, "cells": [*cells[: stretch.first], *fresh, *kept_after]}
    parsed = [fresh[i] for i in found.parsed]
    facts = survey_cells(parsed, version_flags(nb))
    shift = len(fresh) - (stretch.last - stretch.first + 1)
    suspect, repairable = old.survey.suspect, old.survey.repairable
    survey = CellSurvey(
        _moved(suspect, stretch, shift, _within(found, suspect, stretch, facts.suspect)),
        _moved(repairable, stretch, shift, _within(found, repairable, stretch, facts.repairable)),
        structure_problem(nb) if facts.broken or old.survey.broken else None,
    )
    new_layout = None
    if found.spans is not None:
        new_layout = _spliced(layout, stretch, found, survey, len(raw) - len(old.raw))
    loaded = LoadedNotebook(
        raw, nb, layout=new_layout, survey=survey, top_level=old.top_level_problem()
    )
    carry_validity(old, loaded, parsed)
    return loaded


@dataclass(frozen=True, slots=True)
class _Found:
    """The cells now in a changed stretch: `cells` (kept ones are the old objects), `spans`
    (None when the stretch is not laid out as nbformat writes it), `parsed` (indices into
    `cells` of those parsed from the new bytes) and `kept` (index into `cells` -> old index
    relative to the stretch's first cell)."""

    cells: list[dict[str, Any]]
    spans: list[Span] | None
    parsed: tuple[int, ...]
    kept: dict[int, int]


def _parse_stretch(
    raw: bytes, stretch: _Stretch, path: str, old: LoadedNotebook, layout: CellLayout
) -> _Found | None:
    """The cells in `raw[start:stop]`: where they are laid out as nbformat writes them, each
    cell whose bytes equal an old cell's (in order) is that old cell, the others are parsed
    alone; elsewhere the stretch is parsed as array elements."""
    old_spans = layout.spans[stretch.first : stretch.last + 1]
    walked = _walk(raw, stretch, old.raw, old_spans)
    if walked is None:
        located = locate_run(raw, stretch.start, stretch.stop)
        if located is None:
            try:
                cells = parse_json(b"[" + raw[stretch.start : stretch.stop] + b"]", path)
            except ValueError:
                return None
            if not isinstance(cells, list):
                return None
            return _checked(_Found(cells, None, tuple(range(len(cells))), {}))
        walked = located, _same_bytes(raw, located, old.raw, old_spans)
    spans, kept = walked
    parsed = tuple(sorted(set(range(len(spans))).difference(kept)))
    try:
        found = _kept_and_parsed(raw, spans, kept, parsed, old.nb["cells"], stretch, path)
    except ValueError:
        return None
    return _checked(_Found(found, spans, parsed, kept))


def _kept_and_parsed(
    raw: bytes,
    spans: Sequence[Span],
    kept: dict[int, int],
    parsed: tuple[int, ...],
    old_cells: Sequence[Any],
    stretch: _Stretch,
    path: str,
) -> list[Any]:
    """The stretch's cells: the kept ones taken by iterators in C (a placeholder after the old
    cells stands for the others), then the others parsed alone (ValueError: not JSON)."""
    source = list(old_cells[stretch.first : stretch.last + 1])
    source.append(None)
    cells = list(map(source.__getitem__, map(kept.get, range(len(spans)), repeat(len(source) - 1))))
    for n in parsed:
        start, end = spans[n]
        cells[n] = parse_json(raw[start:end], path)
    return cells


def _walk(
    raw: bytes, stretch: _Stretch, old_raw: bytes, old_spans: Sequence[Span]
) -> tuple[list[Span], dict[int, int]] | None:
    """The spans of the cells in `raw[stretch.start:stretch.stop]` and which of them are old
    cells (new index -> index in `old_spans`), found by the old cells' bytes: each old cell is
    first looked for where the previous cell ends (it is there unless something changed just
    before it), else searched for further on (`bytes.find`, in C), so the walk costs what
    changed plus byte comparisons, however far apart the changes are. The bytes between two
    found cells must be a run of cells laid out as nbformat writes them (`locate_run`). None
    when that is not so, or when an old cell is not found among the next `_LOOKAHEAD` (the
    caller then locates the whole stretch)."""
    spans: list[Span] = []
    kept: dict[int, int] = {}
    at, stop, k = stretch.start, stretch.stop, 0
    while at < stop:
        k, at = _same_run(raw, old_raw, old_spans, k, at, stop, spans, kept)
        if at >= stop:
            return (spans, kept) if at == stop else None
        found = _next_old(raw, old_raw, old_spans, k, at, stop)
        if found is None:  # no old cell left here: the rest is new or changed cells
            run = locate_run(raw, at, stop)
            return None if run is None else ([*spans, *run], kept)
        j, where = found
        if where > at:
            run = locate_run(raw, at, where - len(SEPARATOR))
            if run is None:
                return None
            spans += run
        size = old_spans[j][1] - old_spans[j][0]
        kept[len(spans)] = j
        spans.append((where, where + size))
        at, k = where + size + len(SEPARATOR), j + 1
        if where + size == stop:
            return spans, kept
    return None


def _same_run(
    raw: bytes,
    old_raw: bytes,
    old_spans: Sequence[Span],
    k: int,
    at: int,
    stop: int,
    spans: list[Span],
    kept: dict[int, int],
) -> tuple[int, int]:
    """Old cells `k`, `k + 1`, ... whose bytes (and the separator after each) lie unchanged
    at `at` onwards, found by one common-prefix comparison (in C), added to `spans` and
    `kept`; the next old cell and where the next element starts (`stop`: the stretch is all
    done; past `stop`: it is not a run of elements)."""
    if k >= len(old_spans):
        return k, at
    base, end = old_spans[k][0], old_spans[-1][1]
    same = common_prefix(old_raw, raw, base, at, min(end - base, stop - at))
    if same == end - base and at + same == stop:
        last = len(old_spans)  # every remaining old cell, to the end of the stretch
    else:
        last = bisect_right(old_spans, base + same - len(SEPARATOR), lo=k, key=lambda s: s[1])
    if last == k:
        return k, at
    shift = at - base
    first = len(spans)
    spans.extend(_shifted(old_spans[k:last], shift))
    kept.update(zip(range(first, len(spans)), range(k, last), strict=True))
    after = spans[-1][1]
    return last, after if after == stop else after + len(SEPARATOR)


_LOOKAHEAD = 4


def _next_old(
    raw: bytes,
    old_raw: bytes,
    old_spans: Sequence[Span],
    k: int,
    at: int,
    stop: int,
) -> tuple[int, int] | None:
    """The first of old cells `k`, `k + 1`, ... (at most `_LOOKAHEAD`) whose bytes are a whole
    element at `at` or after it (followed by a separator or ending at `stop`; after `at`,
    preceded by a separator), and where it starts; None when none is."""
    for j in range(k, min(len(old_spans), k + _LOOKAHEAD)):
        start, end = old_spans[j]
        size = end - start
        same = common_prefix(old_raw, raw, start, at, size) == size
        if same and _ends_element(raw, at + size, stop):
            return j, at  # (cells k..j-1 are gone)
        where = raw.find(old_raw[start:end], at + len(SEPARATOR) + 1, stop)
        while where != -1:
            after = where + end - start
            if raw.startswith(SEPARATOR, where - len(SEPARATOR)) and _ends_element(
                raw, after, stop
            ):
                return j, where
            where = raw.find(old_raw[start:end], where + 1, stop)
    return None


def _ends_element(raw: bytes, end: int, stop: int) -> bool:
    return end == stop or (end < stop and raw.startswith(SEPARATOR, end))


def _shifted(spans: Sequence[Span], shift: int) -> Iterable[Span]:
    """`spans` moved by `shift` bytes (iterators in C: this runs over every kept cell)."""
    if not shift:
        return spans
    starts = map(add, map(itemgetter(0), spans), repeat(shift))
    return zip(starts, map(add, map(itemgetter(1), spans), repeat(shift)), strict=True)


def _checked(found: _Found) -> _Found | None:
    """`found` if its cells are objects (kept cells are: only the parsed ones are checked)."""
    cells = found.cells
    if not cells or not all(isinstance(cells[n], dict) for n in found.parsed):
        return None
    return found


def _same_bytes(
    raw: bytes, spans: list[Span], old_raw: bytes, old_spans: Sequence[Span]
) -> dict[int, int]:
    """New cell index -> old cell index, for new cells whose bytes are an old cell's, matched
    in order (each old cell at most once): the cells a person's save did not touch, wherever
    they are in the stretch. Byte comparisons and one dict of byte strings, all in C."""
    old_bytes = [old_raw[start:end] for start, end in old_spans]
    kept: dict[int, int] = {}
    where: dict[bytes, list[int]] | None = None
    at = 0
    for n, (start, end) in enumerate(spans):
        data = raw[start:end]
        if at < len(old_bytes) and old_bytes[at] == data:
            kept[n] = at
            at += 1
            continue
        if where is None:
            where = {}
            for k, old in enumerate(old_bytes):
                where.setdefault(old, []).append(k)
        later = [k for k in where.get(data, ()) if k >= at]
        if later:
            kept[n] = later[0]
            at = later[0] + 1
    return kept


def _within(
    found: _Found, old: frozenset[int], stretch: _Stretch, parsed_facts: tuple[int, ...]
) -> tuple[int, ...]:
    """Indices relative to the stretch's first cell: kept cells flagged in `old` (absolute
    old indices), and parsed cells flagged by their survey (`parsed_facts` index `parsed`)."""
    flagged = [i - stretch.first for i in old if stretch.first <= i <= stretch.last]
    if flagged:  # rare: look the kept ones up by their old index
        where = dict(zip(found.kept.values(), found.kept.keys(), strict=True))
        flagged = [where[k] for k in flagged if k in where]
    return tuple(sorted([*flagged, *(found.parsed[i] for i in parsed_facts)]))


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
    layout: CellLayout, stretch: _Stretch, found: _Found, survey: CellSurvey, delta: int
) -> CellLayout:
    """The old layout with the stretch's spans replaced and the spans after it moved. The
    stretch's parsed cells are suspect: their bytes are reused only once a write has serialized
    them (a read that no write follows never pays for checking them); every other cell keeps
    its standing (a kept cell's bytes are its old bytes)."""
    spans = layout.spans
    assert found.spans is not None
    after = _shifted(spans[stretch.last + 1 :], delta)
    shift = len(found.cells) - (stretch.last - stretch.first + 1)
    standing = _within(found, layout.suspect, stretch, ())
    return CellLayout(
        (*spans[: stretch.first], *found.spans, *after),
        layout.tail_start + delta,
        survey.suspect | _moved(layout.suspect, stretch, shift, (*standing, *found.parsed)),
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
