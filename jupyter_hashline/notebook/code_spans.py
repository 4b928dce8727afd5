"""The code cells of a hashline projection as spans, for the engine's syntax check.

Invariants:
- A span is one cell's source lines (the lines after its marker, up to the next marker); a
  marker line belongs to the cell it opens. Sources are unescaped (`\\# %%` is `# %%`), so
  what is checked is what the cell holds.
- Code cells carry the notebook's language ("ipython" for a Python kernel: magics and shell
  lines parse); markdown and raw cells carry their type, so no claim is made for them.
- Cost is one cell's lines per span (a scan to the markers around it), never the notebook;
  `resume_at` lets a walk step over lines no cell holds (text an edit put above the first
  marker) in one scan, not one per line.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ..hashline.syntax import CodeSpan
from .projection import MARKER_PREFIX, read_marker, unescape_source


def notebook_language(nb: Mapping[str, Any]) -> str:
    """The language of a notebook's code cells ("ipython" for Python kernels)."""
    metadata = _mapping(nb.get("metadata"))
    info = _mapping(metadata.get("language_info"))
    spec = _mapping(metadata.get("kernelspec"))
    name = str(info.get("name") or spec.get("language") or "python").lower()
    return "ipython" if name in ("python", "python3", "ipython", "ipython3") else name


def _mapping(value: object) -> Mapping[str, Any]:
    """`value` if it is a mapping; odd metadata (a list, `true`) reads as none."""
    return value if isinstance(value, Mapping) else {}


@dataclass(frozen=True, slots=True)
class CellSpans:
    """A `SpanFinder` over projection texts of a notebook in `language`."""

    language: str

    def span_at(self, lines: Sequence[str], line: int) -> CodeSpan | None:
        if not 1 <= line <= len(lines):
            return None
        marker = line
        while marker >= 1 and not lines[marker - 1].startswith(MARKER_PREFIX):
            marker -= 1
        if marker < 1:
            return None
        return self._cell(lines, marker)

    def resume_at(self, lines: Sequence[str], line: int) -> int:
        """Where a walk over the spans goes on after `span_at(lines, line)` found none (above
        the first marker, or under a marker that does not read): the next marker line."""
        nxt = line + 1
        while nxt <= len(lines) and not lines[nxt - 1].startswith(MARKER_PREFIX):
            nxt += 1
        return nxt

    def span_labelled(self, lines: Sequence[str], label: str) -> CodeSpan | None:
        suffix = f" id={label}"
        for index, row in enumerate(lines):
            if row.startswith(MARKER_PREFIX) and row.endswith(suffix):
                return self._cell(lines, index + 1)
        return None

    def _cell(self, lines: Sequence[str], marker: int) -> CodeSpan | None:
        read = read_marker(lines[marker - 1])
        if read is None:
            return None
        cell_type, cell_id = read
        last = marker
        while last < len(lines) and not lines[last].startswith(MARKER_PREFIX):
            last += 1
        language = self.language if cell_type == "code" else cell_type
        return CodeSpan(marker + 1, last, language, cell_id, lines, unescape_source)
