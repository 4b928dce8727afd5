"""What the patcher returns: `ReadResult`, `SectionResult`, `PatchResult`, and their text.

Invariants:
- Values are frozen. `to_text()` is exactly the reply an agent reads; `to_json()` is the same
  content for REST and tools, never parsed back from text.
- A preview shows NEW line numbers (`N:text` rows, like a read view) around every changed
  region, so an agent can chain edits without re-reading; `...` marks skipped lines.
- `PartialWriteError` is the one error raised after some files of a multi-file patch landed:
  its `result` says, section by section, what was written and what was not.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from enum import Enum
from typing import TYPE_CHECKING

from .errors import WriteFailedError

if TYPE_CHECKING:
    from .edits import Edit

PREVIEW_CONTEXT = 2
PREVIEW_MAX_ROWS = 40


class SectionOp(str, Enum):
    """What happened to one file."""

    UPDATE = "update"
    CREATE = "create"
    NOOP = "noop"


_STATUS = {SectionOp.UPDATE: "updated", SectionOp.CREATE: "created", SectionOp.NOOP: "no changes"}


@dataclass(frozen=True, slots=True)
class ReadResult:
    """A read: `view` is what the agent sees (header and rows); `text` is the whole text."""

    path: str
    tag: str
    header: str
    # Whole texts stay out of repr: a log line (or asyncio's task repr) must not copy megabytes.
    view: str = field(repr=False)
    text: str = field(repr=False)


@dataclass(frozen=True, slots=True)
class SectionResult:
    """The outcome for one file of a patch (or of a write)."""

    path: str
    op: SectionOp
    tag: str
    header: str
    before: str = field(repr=False)
    after: str = field(repr=False)
    written: bool
    first_changed_line: int | None
    warnings: tuple[str, ...]
    preview: str
    banner: str = ""
    notes: tuple[str, ...] = ()  # what happened that asks nothing of anyone (a new cell's id)
    alignment: tuple[tuple[int, int, int], ...] | None = field(
        default=None, compare=False, repr=False
    )
    """For a proposed edit (`Patcher.propose`): the unchanged runs `(old_first, old_last,
    new_first)` of `before` in `after`, as the edit placed its changes."""
    placed: tuple[Edit, ...] = field(default=(), compare=False, repr=False)
    """For a proposed edit: its edits as they applied to `before` (after any rebase)."""

    def to_text(self) -> str:
        status = _STATUS[self.op]
        if not self.written and self.op is not SectionOp.NOOP:
            status = "NOT written"
        first = f"{self.header} {status}" + (f" ({self.banner})" if self.banner else "")
        parts = [first]
        if self.preview:
            parts.append(self.preview)
        parts.extend(f"note: {n}" for n in self.notes)
        parts.extend(f"warning: {w}" for w in self.warnings)
        return "\n".join(parts)

    def to_json(self) -> dict[str, object]:
        return {
            "path": self.path,
            "op": self.op.value,
            "tag": self.tag,
            "header": self.header,
            "written": self.written,
            "first_changed_line": self.first_changed_line,
            "warnings": list(self.warnings),
            "preview": self.preview,
            "banner": self.banner,
            "notes": list(self.notes),
        }


@dataclass(frozen=True, slots=True)
class PatchResult:
    """One `SectionResult` per file, in patch order."""

    sections: tuple[SectionResult, ...]

    @property
    def changed(self) -> bool:
        return any(section.written for section in self.sections)

    @property
    def warnings(self) -> tuple[str, ...]:
        return tuple(w for section in self.sections for w in section.warnings)

    def to_text(self) -> str:
        return "\n\n".join(section.to_text() for section in self.sections)

    def to_json(self) -> dict[str, object]:
        return {"sections": [s.to_json() for s in self.sections], "text": self.to_text()}


class PartialWriteError(WriteFailedError):
    """A multi-file patch whose writes failed midway; `result` says which files landed."""

    def __init__(self, message: str, result: PatchResult) -> None:
        super().__init__(message)
        self.result = result


@dataclass(frozen=True, slots=True)
class Preview:
    """Preview text and the line numbers it shows (they count as seen)."""

    text: str
    lines: frozenset[int]


def build_preview(
    lines: Sequence[str],
    regions: Sequence[tuple[int, int]],
    *,
    context: int = PREVIEW_CONTEXT,
    max_rows: int = PREVIEW_MAX_ROWS,
) -> Preview:
    """`N:text` rows around each region (new numbering), merged, `...` between, capped."""
    windows = _windows(regions, context, len(lines))
    rows: list[str] = []
    shown: list[int] = []
    previous = 0
    for first, last in windows:
        if first > previous + 1:
            rows.append("...")
        for n in range(first, last + 1):
            if len(shown) == max_rows:
                rest = sum(b - a + 1 for a, b in windows) - max_rows
                rows.append(f"... ({rest} more lines around your edits; read the file to see them)")
                return Preview("\n".join(rows), frozenset(shown))
            rows.append(f"{n}:{lines[n - 1]}")
            shown.append(n)
        previous = last
    if shown and previous < len(lines):
        rows.append("...")
    return Preview("\n".join(rows), frozenset(shown))


def _windows(
    regions: Sequence[tuple[int, int]], context: int, line_count: int
) -> list[tuple[int, int]]:
    spans = sorted(
        (max(1, start - context), min(line_count, max(end, start - 1) + context))
        for start, end in regions
    )
    merged: list[tuple[int, int]] = []
    for first, last in spans:
        if first > last:
            continue
        if merged and first <= merged[-1][1] + 1:
            merged[-1] = (merged[-1][0], max(merged[-1][1], last))
        else:
            merged.append((first, last))
    return merged
