"""Where each cell's JSON sits in a notebook file in nbformat's layout, and reusing those bytes.

nbformat writes JSON with one space of indent per level and sorted keys, so a notebook opens
with `{\\n "cells": [\\n  {` and each cell is an object at depth 2 that ends on a line `  }`,
followed by `,\\n  {` (the next cell) or `\\n ]` (the end of the cells). A JSON string never
holds a raw line break, so those byte sequences occur at cell boundaries only: finding them is a
handful of `str.find` calls per cell.

Invariants:
- `find_layout` trusts a file's cell bytes only when: the cells are found exactly where the
  layout puts them (as many as the notebook has), everything after the cells equals what the
  serializer writes for the notebook's top level, and a sample of cells (the first, the last and
  evenly spaced ones, up to `SAMPLE` in all) re-serializes to exactly its bytes. Cells the loader
  saw stored unlike nbformat (`suspect`) are never reused. A file nbformat wrote passes; files
  other tools wrote (other indents, unsorted keys, minified, sources stored as strings) fail
  on the first check that sees it, and are serialized in full.
- `assemble` gives `serialize_notebook(merged)`'s text for a notebook whose unchanged cells (the
  very objects of the loaded notebook) keep their bytes: one slice per run of unchanged cells,
  the serializer only for changed and new cells (and the top level when it changed).
- Both return the layout of the text they describe, so a text this module built never needs
  checking again.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .serialize import cell_json, serialize_notebook

HEAD = '{\n "cells": [\n  '
SEPARATOR = ",\n  "
_EMPTY_HEAD = '{\n "cells": []'
_CELL_END = "\n  }"
SAMPLE = 8

Span = tuple[int, int]


@dataclass(frozen=True, slots=True)
class CellLayout:
    """Byte spans (in a text) of each cell's JSON, None where the bytes must not be reused;
    `tail_start` is where the text after the last cell (`\\n ],\\n "metadata"...`) begins."""

    spans: tuple[Span | None, ...]
    tail_start: int


def find_layout(raw: str, nb: Mapping[str, Any], suspect: frozenset[int]) -> CellLayout | None:
    """The layout of `raw` (the text `nb` was loaded from), or None when its bytes cannot be
    trusted to be what the serializer would write (see the module docstring)."""
    cells: Sequence[Any] = nb.get("cells", [])
    if not cells or not raw.startswith(HEAD + "{"):
        return None
    spans = locate_cells(raw, len(cells))
    if spans is None:
        return None
    tail_start = spans[-1][1]
    if top_level_tail(nb) != raw[tail_start:]:
        return None
    if not _sample_matches(raw, cells, spans, suspect):
        return None
    kept = tuple(None if i in suspect else span for i, span in enumerate(spans))
    return CellLayout(kept, tail_start)


def locate_cells(raw: str, count: int) -> list[Span] | None:
    """The spans of `count` cells laid out as nbformat writes them, or None if they are not."""
    spans: list[Span] = []
    start = len(HEAD)
    while len(spans) < count:
        end = raw.find(_CELL_END, start)
        if end == -1 or raw[start] != "{":
            return None
        end += len(_CELL_END)
        spans.append((start, end))
        if not raw.startswith(SEPARATOR + "{", end):
            break
        start = end + len(SEPARATOR)
    if len(spans) != count or not raw.startswith("\n ]", spans[-1][1]):
        return None
    return spans


def top_level_tail(nb: Mapping[str, Any]) -> str | None:
    """The text the serializer writes after the last cell, or None when `cells` would not be
    the first key (then the cells are not at the top of the file)."""
    text = serialize_notebook({**nb, "cells": []})
    if not text.startswith(_EMPTY_HEAD):
        return None
    return "\n ]" + text[len(_EMPTY_HEAD) :]


def _sample_matches(
    raw: str, cells: Sequence[Any], spans: Sequence[Span], suspect: frozenset[int]
) -> bool:
    count = len(cells)
    step = max(1, (count - 1) // (SAMPLE - 1))
    picked = {0, count - 1, *range(0, count, step)}
    sample = sorted(i for i in picked if i not in suspect)[:SAMPLE]
    return all(cell_json(cells[i]) == raw[spans[i][0] : spans[i][1]] for i in sample)


def assemble(
    raw: str,
    base: Mapping[str, Any],
    layout: CellLayout,
    merged: Mapping[str, Any],
) -> tuple[str, CellLayout] | None:
    """`serialize_notebook(merged)` built from `raw`'s bytes where `merged` kept `base`'s cells,
    and the layout of that text; None when `merged` has no cells or no top-level tail."""
    cells: Sequence[Any] = merged.get("cells", [])
    tail = raw[layout.tail_start :] if _same_top(base, merged) else top_level_tail(merged)
    if not cells or tail is None:
        return None
    where = {id(cell): i for i, cell in enumerate(base.get("cells", []))}
    builder = _Builder(raw, layout)
    for cell in cells:
        index = where.get(id(cell))
        builder.add(cell, index)
    return builder.finish(tail)


def _same_top(base: Mapping[str, Any], merged: Mapping[str, Any]) -> bool:
    if base.keys() != merged.keys():
        return False
    return all(merged[key] is base[key] for key in base if key != "cells")


class _Builder:
    """Collects the new text: runs of reused cells as one slice each, new cells serialized."""

    def __init__(self, raw: str, layout: CellLayout) -> None:
        self.raw = raw
        self.layout = layout
        self.parts: list[str] = [HEAD]
        self.spans: list[Span] = []
        self.pos = len(HEAD)
        self.run: tuple[int, int] | None = None  # (first, last) base index of the open run

    def add(self, cell: Any, index: int | None) -> None:
        span = self.layout.spans[index] if index is not None else None
        first = not self.spans
        start = self.pos + (0 if first else len(SEPARATOR))
        if span is not None and index is not None:
            if self.run is not None and self.run[1] == index - 1:
                self.run = (self.run[0], index)
            else:
                self._close_run()
                self._separate(first)
                self.run = (index, index)
            length = span[1] - span[0]
        else:
            self._close_run()
            self._separate(first)
            text = cell_json(cell)
            self.parts.append(text)
            length = len(text)
        self.spans.append((start, start + length))
        self.pos = start + length

    def _separate(self, first: bool) -> None:
        if not first:
            self.parts.append(SEPARATOR)

    def _close_run(self) -> None:
        if self.run is None:
            return
        first = self.layout.spans[self.run[0]]
        last = self.layout.spans[self.run[1]]
        assert first is not None and last is not None
        self.parts.append(self.raw[first[0] : last[1]])
        self.run = None

    def finish(self, tail: str) -> tuple[str, CellLayout]:
        self._close_run()
        self.parts.append(tail)
        text = "".join(self.parts)
        return text, CellLayout(tuple(self.spans), self.pos)


def written_layout(text: str, nb: Mapping[str, Any]) -> CellLayout | None:
    """The layout of a text `serialize_notebook(nb)` just wrote (exact: no sample needed)."""
    cells: Sequence[Any] = nb.get("cells", [])
    spans = locate_cells(text, len(cells)) if cells and text.startswith(HEAD) else None
    if spans is None or top_level_tail(nb) is None:
        return None
    return CellLayout(tuple(spans), spans[-1][1])
