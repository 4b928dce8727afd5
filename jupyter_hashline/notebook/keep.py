"""Writing a notebook in the layout its file already has, so a one-line edit is a one-line diff.

`find_kept_layout(raw, nb)` guesses the file's style (style.py) and proves it: the notebook
written again in that style, cell by cell, must give the file's bytes back exactly; on the way
it notes where each cell's bytes are. `assemble_kept` then writes an edited notebook: kept cells
as slices of the old bytes, changed and new cells (and the top level, when it changed) written
in the file's style.

Invariants:
- A kept layout is exact, never sampled: every byte of every cell was compared with what the
  style writes, and so was the opening and closing of the cells list. The bytes
  `assemble_kept` builds are the old bytes outside the cells (while the top level is
  unchanged, else the top level written in the style), kept cells' old bytes, and the rest
  written in the style: they parse to `merged` (disk forms aside, as nbformat has them).
- A file no style reproduces (mixed indents, some sources as strings and others as lines,
  numbers written unlike Python, ...) has no kept layout: `find_kept_layout` says why, and the
  caller writes nbformat's layout for the whole file and says so.
- Bytes built here are described by the layout returned with them: no check is needed again.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextvars import ContextVar
from dataclasses import dataclass, replace
from typing import Any

from .incremental.cellmatch import CellMatch, match_cells
from .incremental.layout import CellLayout, CellWriting, Span, build
from .style import FileStyle, StyledJson, detect_style

__all__ = [
    "LAYOUTS",
    "KeptLayout",
    "assemble_kept",
    "check_layout",
    "chosen_layout",
    "find_kept_layout",
    "layout_for_call",
    "written_kept",
]

LAYOUTS = ("keep", "nbformat")
"""`keep`: write in the layout the file has; `nbformat`: in nbformat's (Jupyter's) layout."""
_FOR_CALL: ContextVar[str | None] = ContextVar("hashline_notebook_layout", default=None)


def check_layout(layout: str) -> str:
    """`layout` when it names a layout, else a `ValueError` listing them."""
    if layout not in LAYOUTS:
        raise ValueError(f"layout must be one of {', '.join(LAYOUTS)}, not {layout!r}")
    return layout


@contextlib.contextmanager
def layout_for_call(layout: str | None) -> Iterator[None]:
    """Within the block, notebook writes use `layout` whatever their filesystem's default
    (None: the default). Context-local, like an engine call's scope."""
    token = _FOR_CALL.set(None if layout is None else check_layout(layout))
    try:
        yield
    finally:
        _FOR_CALL.reset(token)


def chosen_layout(default: str) -> str:
    """The layout a write uses now: the call's choice, else `default`."""
    return _FOR_CALL.get() or default


@dataclass(frozen=True, slots=True)
class KeptLayout:
    """A file's style, proven on its cells' bytes, and where they are (no cells: no spans)."""

    style: FileStyle
    cells: CellLayout


def find_kept_layout(raw: bytes, nb: Mapping[str, Any]) -> KeptLayout | str:
    """The kept layout of `raw` (the bytes `nb` was loaded from), or why it has none."""
    style = detect_style(raw, nb)
    if isinstance(style, str):
        return style
    found = _prove(raw, nb, style)
    if isinstance(found, str) and found.startswith("cell "):  # outputs stored otherwise?
        other = _prove(raw, nb, replace(style, split_outputs=not style.split_outputs))
        found = other if isinstance(other, KeptLayout) else found
    if isinstance(found, str):
        return f"{found} is not written as the rest of the file ({style.describe()})"
    return found


def _prove(raw: bytes, nb: Mapping[str, Any], style: FileStyle) -> KeptLayout | str:
    """The layout when `style` writes `nb`'s cells as `raw` has them, else where it first
    differs. The top level may differ (a key nbformat drops, say): its bytes are kept while
    it is unchanged, and written anew in the style when it changes."""
    writer = StyledJson(style, as_held=True)
    cells: Sequence[Any] = nb.get("cells", [])
    try:
        if not cells:
            same = writer.notebook(nb).encode("utf-8") == raw
            return KeptLayout(style, CellLayout((), len(raw))) if same else "the notebook"
        head, separator, tail = (part.encode("utf-8") for part in writer.frame(nb))
        first = writer.cell(cells[0]).encode("utf-8")
        start = len(head) if raw.startswith(head) else _cells_start(raw, head, first)
        if start is None:
            return "the notebook's top level"
        spans = _prove_cells(raw, cells, writer, separator, start)
    except UnicodeEncodeError:
        return "text that is not UTF-8 (a lone surrogate)"
    if isinstance(spans, str):
        return spans
    end = spans[-1][1]
    if not raw.startswith(tail[: tail.index(b"]") + 1], end):
        return "the end of the cells"
    return KeptLayout(style, CellLayout(tuple(spans), end))


def _cells_start(raw: bytes, head: bytes, first: bytes) -> int | None:
    """Where the first cell starts in `raw` when the top level before it differs from `head`
    (the bytes that open the cells list are `head`'s last ones)."""
    opener = head[head.rindex(b"[") :]
    found = raw.find(opener + first)
    return None if found == -1 else found + len(opener)


def _prove_cells(
    raw: bytes, cells: Sequence[Any], writer: StyledJson, separator: bytes, pos: int
) -> list[Span] | str:
    spans: list[Span] = []
    for index, cell in enumerate(cells):
        if index:
            if not raw.startswith(separator, pos):
                return f"the space between cells #{index} and #{index + 1}"
            pos += len(separator)
        text = writer.cell(cell).encode("utf-8")
        if not raw.startswith(text, pos):
            return f"cell #{index + 1}"
        spans.append((pos, pos + len(text)))
        pos += len(text)
    return spans


def written_kept(style: FileStyle, nb: Mapping[str, Any]) -> tuple[bytes, KeptLayout]:
    """`nb` written whole in `style`, with its layout."""
    writer = StyledJson(style)
    cells: Sequence[Any] = nb.get("cells", [])
    if not cells:
        data = writer.notebook(nb).encode("utf-8")
        return data, KeptLayout(style, CellLayout((), len(data)))
    writing, tail = _framed(writer, nb)
    built = build(b"", CellLayout((), 0), cells, match_cells((), cells), writing, tail)
    return built[0], KeptLayout(style, built[1])


def assemble_kept(
    raw: bytes,
    base: Mapping[str, Any],
    kept: KeptLayout,
    merged: Mapping[str, Any],
    match: CellMatch | None = None,
) -> tuple[bytes, KeptLayout]:
    """`merged` written in `kept`'s style: the cells it kept from `base` (the notebook loaded
    from `raw`) as their old bytes. Raises `UnicodeEncodeError` for text that cannot be UTF-8."""
    cells: Sequence[Any] = merged.get("cells", [])
    spans = kept.cells.spans
    if not cells or not spans:
        return written_kept(kept.style, merged)
    writer = StyledJson(kept.style)
    if _same_top(base, merged):
        writing = CellWriting(raw[: spans[0][0]], writer.separator.encode("utf-8"), _render(writer))
        tail = raw[kept.cells.tail_start :]
    else:
        writing, tail = _framed(writer, merged)
    match = match or match_cells(base.get("cells", []), cells)
    data, layout = build(raw, kept.cells, cells, match, writing, tail)
    return data, KeptLayout(kept.style, layout)


def _render(writer: StyledJson) -> Callable[[Any], bytes]:
    return lambda cell: writer.cell(cell).encode("utf-8")


def _framed(writer: StyledJson, nb: Mapping[str, Any]) -> tuple[CellWriting, bytes]:
    """How `writer` lays out the cells of `nb`, and the bytes after the last one."""
    head, separator, tail = (part.encode("utf-8") for part in writer.frame(nb))
    return CellWriting(head, separator, _render(writer)), tail


def _same_top(base: Mapping[str, Any], merged: Mapping[str, Any]) -> bool:
    if base.keys() != merged.keys() or list(base) != list(merged):
        return False
    return all(merged[key] is base[key] for key in base if key != "cells")
