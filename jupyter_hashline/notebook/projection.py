"""The hashline projection: a notebook as cell-marked text, and that text parsed back.

Format: for each cell a marker line `# %% [<cell type>] id=<cell id>`, then the cell's source
verbatim. Every line of the text ends with LF.

Invariants:
- Lossless for sources: sources are split on LF only (a CR is content), trailing newlines and
  empty cells survive: `parse_projection(project_notebook(nb))` gives back every cell's type,
  shown id and exact source.
- Escaping is reversible. A source line that starts with `# %%` after zero or more backslashes
  is shown with one more backslash in front (`# %% x` -> `\\# %% x`, `\\# %% x` ->
  `\\\\# %% x`); parsing removes exactly one. Only an unescaped `# %%` at the start of a line
  is a marker, so no source line can ever be read as one.
- An empty source shows no lines; a source of N LF characters shows N + 1 lines.
- Deterministic: the same notebook always projects to the same text (see `ids.display_ids`).
- Parsing fails with `InvalidNotebookError` naming the line for text before the first marker
  and for a line that starts with `# %%` but is not a readable marker.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from .errors import InvalidNotebookError
from .ids import display_ids

MARKER_PREFIX = "# %%"
MARKER_HELP = (
    "A cell marker is `# %% [code] id=<id>` (or [markdown], [raw]); leave out `id=` for a new "
    "cell. To keep a source line that starts with `# %%`, write it as `\\# %%...` (one "
    "backslash more than it has)."
)

_NEEDS_ESCAPE = re.compile(r"^(\\*# %%)", re.MULTILINE)
_ESCAPED = re.compile(r"^\\(\\*# %%)", re.MULTILINE)
_MARKER_REST = re.compile(
    r"[ \t]*(?:\[(?P<type>[^\]\n]+)\])?[ \t]*(?:id=(?P<id>[^\s]+))?[ \t\r]*",
)


@dataclass(frozen=True, slots=True)
class ProjectedCell:
    """One cell as read from a projection text.

    `line` is the 1-based line number of its marker; its source occupies the `line_count`
    lines after it. `cell_id` is None for a marker written without `id=`.
    """

    cell_type: str
    cell_id: str | None
    source: str
    line: int
    line_count: int

    @property
    def last_line(self) -> int:
        """The cell's last line in the text (its marker when the source is empty)."""
        return self.line + self.line_count


def marker_line(cell_type: str, cell_id: str) -> str:
    return f"{MARKER_PREFIX} [{cell_type}] id={cell_id}"


def escape_source(source: str) -> str:
    return _NEEDS_ESCAPE.sub(r"\\\1", source) if MARKER_PREFIX in source else source


def unescape_source(text: str) -> str:
    return _ESCAPED.sub(r"\1", text) if MARKER_PREFIX in text else text


def cell_source(cell: Mapping[str, Any]) -> str:
    """A cell's source as one string (lists of lines, as on disk, are joined)."""
    source = cell.get("source", "")
    if isinstance(source, str):
        return source
    if isinstance(source, list):
        try:
            return "".join(source)
        except TypeError:  # an invalid file: show the text parts; a write validates the cell
            return "".join(part for part in source if isinstance(part, str))
    return ""


def cell_type_of(cell: Mapping[str, Any]) -> str:
    cell_type = cell.get("cell_type")
    return cell_type if isinstance(cell_type, str) and cell_type else "code"


def project_notebook(nb: Mapping[str, Any], ids: Sequence[str] | None = None) -> str:
    """The projection text of `nb` (an nbformat v4 notebook in memory, or its plain dict).

    `ids` are `display_ids(nb["cells"]).ids` when the caller has them already."""
    cells: Sequence[Mapping[str, Any]] = nb.get("cells", [])
    shown = display_ids(cells).ids if ids is None else ids
    parts: list[str] = []
    append = parts.append
    for cell, cid in zip(cells, shown, strict=True):
        kind = cell.get("cell_type")
        append(f"# %% [{kind if isinstance(kind, str) and kind else 'code'}] id={cid}")
        source = cell.get("source", "")
        if not isinstance(source, str):
            source = cell_source(cell)
        if source:
            append(escape_source(source) if MARKER_PREFIX in source else source)
    return "\n".join(parts) + "\n" if parts else ""


def parse_projection(text: str, first_line: int = 1) -> tuple[ProjectedCell, ...]:
    """The cells of a projection text, in order (see the module docstring for the errors).

    `first_line` is the number of the text's first line (for a part of a longer text)."""
    starts = marker_starts(text)
    if text and (not starts or starts[0] != 0):
        raise InvalidNotebookError(
            f"line {first_line}: text before the first cell marker. Every cell starts with a "
            "marker line; " + MARKER_HELP
        )
    cells: list[ProjectedCell] = []
    line = first_line
    for index, start in enumerate(starts):
        if index:
            line += text.count("\n", starts[index - 1], start)
        marker_end = text.find("\n", start)
        marker_end = len(text) if marker_end == -1 else marker_end
        cell_type, cell_id = _read_marker(text[start:marker_end], line)
        end = starts[index + 1] if index + 1 < len(starts) else len(text)
        region = text[marker_end + 1 : end]
        if region.endswith("\n"):
            region = region[:-1]
        line_count = region.count("\n") + 1 if marker_end + 1 < end else 0
        cells.append(ProjectedCell(cell_type, cell_id, unescape_source(region), line, line_count))
    return tuple(cells)


def marker_starts(text: str) -> list[int]:
    """Offsets of every line that starts with `# %%` (str.find: far faster than a regex)."""
    starts = [0] if text.startswith(MARKER_PREFIX) else []
    needle = "\n" + MARKER_PREFIX
    at = text.find(needle)
    while at != -1:
        starts.append(at + 1)
        at = text.find(needle, at + 1)
    return starts


def read_marker(marker: str) -> tuple[str, str | None] | None:
    """(cell type, id or None) of a marker line, or None for a line that is not one."""
    if not marker.startswith(MARKER_PREFIX):
        return None
    try:
        return _read_marker(marker, 0)
    except InvalidNotebookError:
        return None


def _read_marker(marker: str, line: int) -> tuple[str, str | None]:
    fast = _canonical_marker(marker)
    if fast is not None:
        return fast
    rest = _MARKER_REST.fullmatch(marker, len(MARKER_PREFIX))
    if rest is None:
        raise InvalidNotebookError(
            f"line {line}: `{marker[:80]}` is not a readable cell marker. {MARKER_HELP}"
        )
    return rest.group("type") or "code", rest.group("id")


def _canonical_marker(marker: str) -> tuple[str, str] | None:
    """`# %% [type] id=ID` exactly as `marker_line` writes it, read without a regex."""
    if not marker.startswith("# %% [") or "] id=" not in marker:
        return None
    cell_type, _, cell_id = marker[6:].partition("] id=")
    if not cell_type or "]" in cell_type or not cell_id or len(cell_id.split()) != 1:
        return None
    if cell_id != cell_id.strip():
        return None
    return cell_type, cell_id
