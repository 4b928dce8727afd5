"""Where each cell's JSON sits in a notebook file in nbformat's layout, and reusing those bytes.

Everything here works on the file's bytes (UTF-8), never on decoded text: a file is compared,
sliced and assembled without decoding the parts no edit touches.

nbformat writes JSON with one space of indent per level and sorted keys, so a notebook opens
with `{\\n "cells": [\\n  {` and each cell is an object at depth 2 that ends on a line `  }`,
followed by `,\\n  {` (the next cell) or `\\n ]` (the end of the cells). A JSON string never
holds a raw line break, so those byte sequences occur at cell boundaries only: finding them is a
handful of `str.find` calls per cell. Where cells are large on average (outputs of images: long
base64 strings without a brace), the end of a cell is found by its `}` (a `memchr` scan, many
times faster over such stretches than a search for the four-byte line) and checked for the
`\n  ` before it: the same position either way.

Invariants:
- `find_layout` trusts a file's cell bytes only when: the cells are found exactly where the
  layout puts them (as many as the notebook has), everything after the cells equals what the
  serializer writes for the notebook's top level, and a sample of cells (the first, the last and
  evenly spaced ones, up to `SAMPLE` in all, each moved to the nearest cheap cell where it is
  not) re-serializes to exactly its bytes. A cell is cheap up to `SAMPLE_BYTES`, a megabyte,
  unless it has outputs or attachments and is over `DATA_SAMPLE_BYTES` (64 KB): a hand-written
  cell of tens of kilobytes (say with `"tags": ["bar"]` inline) is checked itself, not
  skipped for a small neighbour; cells holding images are, as serializing their base64 data
  costs its size (3 ms of a first edit of a 2.7 MB notebook) and tells no more. Cells
  the loader saw stored unlike nbformat (`suspect`) are never reused. A file nbformat wrote
  passes; files other tools wrote (other indents, unsorted keys, minified, sources stored as
  strings) fail on the first check that sees it (keep.py writes those in their own layout).
- `assemble` gives `serialize_notebook(merged)`'s text for a notebook whose unchanged cells (the
  very objects of the loaded notebook) keep their bytes: one slice per run of unchanged cells,
  the serializer only for changed and new cells (and the top level when it changed); a changed
  cell whose old version's bytes may be reused takes from them the JSON of every value it kept
  (`cell_json_reusing`: an edit of a source does not write the cell's outputs again).
- Both return the layout of the text they describe, so a text this module built never needs
  checking again.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..serialize import cell_json, cell_json_reusing, serialize_notebook
from .cellmatch import CellMatch, match_cells

HEAD = b'{\n "cells": [\n  '
SEPARATOR = b",\n  "
_EMPTY_HEAD = '{\n "cells": []'
_CELL_END = b"\n  }"
_CELLS_END = b"\n ]"
SAMPLE = 8
SAMPLE_BYTES = 1024 * 1024
DATA_SAMPLE_BYTES = 64 * 1024
_SPARSE_CELL_BYTES = 8 * 1024  # average bytes per cell above which cell ends are found by `}`

Span = tuple[int, int]


@dataclass(frozen=True, slots=True)
class CellLayout:
    """Byte spans (in a file's bytes) of each cell's JSON; `tail_start` is where the bytes
    after the last cell (`\\n ],\\n "metadata"...`) begin; `suspect` are the cells whose
    bytes must not be reused (stored unlike nbformat), though their spans are known."""

    spans: tuple[Span, ...]
    tail_start: int
    suspect: frozenset[int] = frozenset()

    def reusable(self, index: int) -> bool:
        return index not in self.suspect


def find_layout(raw: bytes, nb: Mapping[str, Any], suspect: frozenset[int]) -> CellLayout | None:
    """The layout of `raw` (the bytes `nb` was loaded from), or None when they cannot be
    trusted to be what the serializer would write (see the module docstring)."""
    cells: Sequence[Any] = nb.get("cells", [])
    if not cells or not raw.startswith(HEAD + b"{"):
        return None
    spans = locate_cells(raw, len(cells))
    if spans is None:
        return None
    tail_start = spans[-1][1]
    tail = top_level_tail(nb)
    if tail is None or _utf8(tail) != raw[tail_start:]:
        return None
    if not _sample_matches(raw, cells, spans, suspect):
        return None
    return CellLayout(tuple(spans), tail_start, suspect)


def locate_cells(raw: bytes, count: int, start: int = len(HEAD)) -> list[Span] | None:
    """The spans of `count` cells laid out as nbformat writes them from `start` (the first
    cell's `{`), or None if they are not."""
    spans: list[Span] = []
    opens = SEPARATOR + b"{"
    find = _find_by_brace if len(raw) - start > count * _SPARSE_CELL_BYTES else _find_by_line
    while len(spans) < count:
        end = find(raw, start, len(raw))
        if end == -1 or not raw.startswith(b"{", start):
            return None
        end += len(_CELL_END)
        spans.append((start, end))
        if not raw.startswith(opens, end):
            break
        start = end + len(SEPARATOR)
    if len(spans) != count or not raw.startswith(_CELLS_END, spans[-1][1]):
        return None
    return spans


def _find_by_line(raw: bytes, start: int, stop: int) -> int:
    """Where the first `\\n  }` in `raw[start:stop]` begins, or -1."""
    return raw.find(_CELL_END, start, stop)


def _find_by_brace(raw: bytes, start: int, stop: int) -> int:
    """`_find_by_line`, by scanning for `}` and checking the three bytes before it."""
    brace = raw.find(b"}", start + len(_CELL_END) - 1, stop)
    while brace != -1 and not raw.startswith(_CELL_END[:-1], brace - len(_CELL_END) + 1):
        brace = raw.find(b"}", brace + 1, stop)
    return brace if brace == -1 else brace - len(_CELL_END) + 1


def locate_run(raw: bytes, start: int, stop: int) -> list[Span] | None:
    """The spans of the cells laid out as nbformat writes them from `start` (a cell's `{`) to
    exactly `stop` (the end of the last one), or None if `raw[start:stop]` is not such a run."""
    spans: list[Span] = []
    find, opens = raw.find, SEPARATOR + b"{"
    while start < stop:
        end = find(_CELL_END, start, stop)
        if end == -1 or not raw.startswith(b"{", start):
            return None
        end += len(_CELL_END)
        spans.append((start, end))
        if end == stop:
            return spans
        if not raw.startswith(opens, end) or end + len(SEPARATOR) >= stop:
            return None
        start = end + len(SEPARATOR)
    return None


def top_level_tail(nb: Mapping[str, Any]) -> str | None:
    """The text the serializer writes after the last cell, or None when `cells` would not be
    the first key (then the cells are not at the top of the file). Text, not bytes: encode it
    strictly to write it (`_utf8` only compares)."""
    text = serialize_notebook({**nb, "cells": []})
    if not text.startswith(_EMPTY_HEAD):
        return None
    return "\n ]" + text[len(_EMPTY_HEAD) :]


def _utf8(text: str) -> bytes:
    """Bytes to compare with a file's (a lone surrogate can never match valid UTF-8)."""
    return text.encode("utf-8", "surrogatepass")


def _sample_matches(
    raw: bytes, cells: Sequence[Any], spans: Sequence[Span], suspect: frozenset[int]
) -> bool:
    count = len(cells)
    step = max(1, (count - 1) // (SAMPLE - 1))
    picked = {_cheap_near(i, cells, spans) for i in {0, count - 1, *range(0, count, step)}}
    sample = sorted(i for i in picked if i not in suspect)[:SAMPLE]
    return all(_utf8(cell_json(cells[i])) == raw[spans[i][0] : spans[i][1]] for i in sample)


def _cheap_near(index: int, cells: Sequence[Any], spans: Sequence[Span]) -> int:
    """`index`, or the nearest cell after or before it that is cheap to serialize (see the
    module docstring): output data tells no more about the file's layout than a small cell, and
    costs its size to serialize (`index` itself when no cell is cheap)."""
    for offset in range(len(spans)):
        for near in (index + offset, index - offset):
            if 0 <= near < len(spans) and _cheap(cells[near], spans[near]):
                return near
    return index


def _cheap(cell: Any, span: Span) -> bool:
    size = span[1] - span[0]
    if size <= DATA_SAMPLE_BYTES:
        return True
    data = isinstance(cell, Mapping) and (cell.get("outputs") or cell.get("attachments"))
    return size <= SAMPLE_BYTES and not data


def assemble(
    raw: bytes,
    base: Mapping[str, Any],
    layout: CellLayout,
    merged: Mapping[str, Any],
    match: CellMatch | None = None,
) -> tuple[bytes, CellLayout] | None:
    """`serialize_notebook(merged)` as UTF-8, built from `raw` where `merged` kept `base`'s
    cells, and the layout of those bytes; None when `merged` has no cells or no top-level tail.
    `match`: `match_cells(base cells, merged cells)` when the caller has it. Raises
    `UnicodeEncodeError` for text that cannot be UTF-8 (a lone surrogate)."""
    cells: Sequence[Any] = merged.get("cells", [])
    if _same_top(base, merged):
        tail: bytes | None = raw[layout.tail_start :]
    else:
        text = top_level_tail(merged)
        tail = None if text is None else text.encode("utf-8")
    if not cells or tail is None:
        return None
    match = match or match_cells(base.get("cells", []), cells)
    return build(raw, layout, cells, match, NBFORMAT_WRITING, tail, base.get("cells", []))


@dataclass(frozen=True, slots=True)
class CellWriting:
    """How a file lays out its cells: the bytes before the first cell (when the top level is
    written anew), between two cells, and one cell's bytes."""

    head: bytes
    separator: bytes
    render: Callable[[Any], bytes]
    rerender: Callable[[Any, Any, bytes], bytes | None] | None = None
    """A cell's bytes from an old version of it and that version's bytes (None: `render`)."""


def _nbformat_cell(cell: Any) -> bytes:
    return cell_json(cell).encode("utf-8")


NBFORMAT_WRITING = CellWriting(HEAD, SEPARATOR, _nbformat_cell, cell_json_reusing)


def build(
    raw: bytes,
    layout: CellLayout,
    cells: Sequence[Any],
    match: CellMatch,
    writing: CellWriting,
    tail: bytes,
    old_cells: Sequence[Any] = (),
) -> tuple[bytes, CellLayout]:
    """The file holding `cells` (matched to the old cells of `raw` by `match`), written as
    `writing` says, slices of `raw` for the kept cells, and the layout of those bytes. Given
    the `old_cells` (those `raw` holds), a changed cell is written from the bytes of the old
    cell of its id (`writing.rerender`) where the layout lets them be reused."""
    builder = _Builder(raw, layout, writing)
    builder.kept(0, match.head, cells)
    before = _replaced(match, old_cells, layout) if writing.rerender is not None else {}
    for index in range(match.head, len(cells) - match.tail):
        found = match.between.get(index)
        if found is None:
            cell = cells[index]
            old = before.get(cell.get("id")) if before and isinstance(cell, Mapping) else None
            builder.serialized(cell, None if old is None else (old_cells[old], old))
        else:
            builder.kept(found, found + 1, cells[index : index + 1])
    builder.kept(match.old_count - match.tail, match.old_count, cells[len(cells) - match.tail :])
    return builder.finish(tail)


def _replaced(match: CellMatch, old_cells: Sequence[Any], layout: CellLayout) -> dict[Any, int]:
    """The old cells no new cell is (between the shared runs) whose bytes may be reused, by
    id: the earlier versions of the cells an edit changed (any old cell would give the same
    bytes, as only the values a cell shares with it are reused: the id only finds the one
    sharing most)."""
    taken = set(match.between.values())
    found: dict[Any, int] = {}
    stop = min(len(old_cells), len(layout.spans), match.old_count - match.tail)
    for index in range(match.head, stop):
        cell = old_cells[index]
        if index in taken or not layout.reusable(index) or not isinstance(cell, Mapping):
            continue
        cid = cell.get("id")
        if isinstance(cid, str):
            found.setdefault(cid, index)
    return found


def _same_top(base: Mapping[str, Any], merged: Mapping[str, Any]) -> bool:
    if base.keys() != merged.keys():
        return False
    return all(merged[key] is base[key] for key in base if key != "cells")


class _Builder:
    """Collects the new bytes: each run of kept cells as one slice of the old bytes (split where
    a kept cell's bytes must not be reused), other cells serialized."""

    def __init__(self, raw: bytes, layout: CellLayout, writing: CellWriting) -> None:
        self.raw = raw
        self.layout = layout
        self.writing = writing
        self.parts: list[bytes] = [writing.head]
        self.spans: list[Span] = []
        self.pos = len(writing.head)

    def kept(self, first: int, stop: int, cells: Sequence[Any]) -> None:
        """Old cells `first..stop-1`, which are `cells` in the new version."""
        done = first
        for index in sorted(i for i in self.layout.suspect if first <= i < stop):
            self._slice(done, index)
            self.serialized(cells[index - first])
            done = index + 1
        self._slice(done, stop)

    def serialized(self, cell: Any, old: tuple[Any, int] | None = None) -> None:
        """`cell` written anew; `old`: an earlier version of it and its index in `raw`."""
        self._separate()
        text: bytes | None = None
        if old is not None and self.writing.rerender is not None:
            start, end = self.layout.spans[old[1]]
            text = self.writing.rerender(cell, old[0], self.raw[start:end])
        text = self.writing.render(cell) if text is None else text
        self.parts.append(text)
        self.spans.append((self.pos, self.pos + len(text)))
        self.pos += len(text)

    def _slice(self, first: int, stop: int) -> None:
        if first >= stop:
            return
        self._separate()
        spans = self.layout.spans
        start, end = spans[first][0], spans[stop - 1][1]
        self.parts.append(self.raw[start:end])
        shift = self.pos - start
        self.spans.extend([(a + shift, b + shift) for a, b in spans[first:stop]])
        self.pos += end - start

    def _separate(self) -> None:
        if self.spans:
            self.parts.append(self.writing.separator)
            self.pos += len(self.writing.separator)

    def finish(self, tail: bytes) -> tuple[bytes, CellLayout]:
        self.parts.append(tail)
        return b"".join(self.parts), CellLayout(tuple(self.spans), self.pos)


def written_layout(data: bytes, nb: Mapping[str, Any]) -> CellLayout | None:
    """The layout of bytes `serialize_notebook(nb)` just wrote (exact: no sample needed).

    No top-level tail is serialized to check it: bytes the serializer wrote that open with
    `HEAD` have `cells` as their first key (the keys are sorted, and `"cells"` encodes only
    "cells"), which is all `top_level_tail` asks, so it is never None for them."""
    cells: Sequence[Any] = nb.get("cells", [])
    spans = locate_cells(data, len(cells)) if cells and data.startswith(HEAD) else None
    if spans is None:
        return None
    return CellLayout(tuple(spans), spans[-1][1])
