"""The bounded log of recent edits and runs, for people watching agents work (server activity
feed, agent session panels and the sidebar all show these records).

`who` is the agent that made the edit (the name the surface gave the agent: a REST header or
user, an MCP connection, the CLI's `--agent`, a session id).

Invariants:
- Records are immutable values; `recent()` lists them newest first; at most `limit` are kept
  (the oldest go first). Ids of the records a log makes increase by one and are never reused;
  `adopt` keeps a record another log made (a session keeps its own edits that way).
- An edit's record may keep its `UndoPlan` (revert.py: the rows to put back and the cells it
  deleted), never serialized: the JSON says only `undoable`. `reverts` names the records a
  revert undid; `notes` are outcomes that ask nothing of a person, `warnings` ones that do.
- Only edits that changed a file are recorded (no-ops are not activity), and every run that
  passed the stale-safe gate (`op` and `source` "run"; `runs` holds each cell's status and
  duration, `cells` the cells asked for, `diff` is empty: a run changes outputs, not text).
- A record's diff is a unified diff of the text as the agent saw it (for notebooks, the
  projection; each hunk header names the cell its first change is in: `@@ ... @@ cell ID`),
  clipped to `max_diff_chars` with a marker saying how much was left out.
- `cells` names the notebook cells whose lines (marker or source) the edit touched, in order
  of their first appearance; empty for plain text files.
- Listeners (`subscribe`) hear every new record once, after it is stored and outside the
  log's lock, on the thread that recorded it (the server emits its events from there).
"""

from __future__ import annotations

import difflib
import re
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..hashline.line_diff import line_opcodes
from ..hashline.results import PatchResult, SectionResult
from ..hashline.text import common_prefix, common_suffix, section_tag

if TYPE_CHECKING:
    from .revert import UndoPlan

_CELL_MARKER = re.compile(r"^# %% \[[^\]]*\](?:.* )?id=(\S+)")


@dataclass(frozen=True, slots=True)
class RunEntry:
    """How one cell of a run ended: status (ok, error, timeout, busy, skipped), wall time and
    execution count."""

    cell: str
    status: str
    duration_ms: int
    execution_count: int | None

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> RunEntry:
        count = data.get("execution_count")
        return cls(
            cell=str(data["cell"]),
            status=str(data["status"]),
            duration_ms=int(data["duration_ms"]),
            execution_count=int(count) if count is not None else None,
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "cell": self.cell,
            "status": self.status,
            "duration_ms": self.duration_ms,
            "execution_count": self.execution_count,
        }


@dataclass(frozen=True, slots=True)
class ActivityRecord:
    """One applied edit of one file, or one run of cells of a notebook (`runs` not empty)."""

    id: int
    path: str
    op: str
    at_ms: int
    who: str
    source: str  # the route that made it: "patch", "write", "run" or "eval"
    header_before: str
    header_after: str
    diff: str
    warnings: tuple[str, ...]
    cells: tuple[str, ...]
    runs: tuple[RunEntry, ...] = ()
    notes: tuple[str, ...] = ()  # outcomes worth knowing that ask nothing of a person
    reverts: tuple[int, ...] = ()  # for source "revert": the ids of the records it undid
    undo: UndoPlan | None = field(default=None, compare=False, repr=False)

    @property
    def undoable(self) -> bool:
        """Whether this process kept what undoing the edit needs, and may undo it."""
        return self.undo is not None and not self.undo.refusal

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> ActivityRecord:
        """The record `to_json` described (e.g. from a REST reply)."""
        return cls(
            id=int(data["id"]),
            path=str(data["path"]),
            op=str(data["op"]),
            at_ms=int(data["at_ms"]),
            who=str(data["who"]),
            source=str(data["source"]),
            header_before=str(data["header_before"]),
            header_after=str(data["header_after"]),
            diff=str(data["diff"]),
            warnings=tuple(str(w) for w in data["warnings"]),
            cells=tuple(str(c) for c in data["cells"]),
            runs=tuple(RunEntry.from_json(r) for r in data.get("runs", ())),
            notes=tuple(str(n) for n in data.get("notes", ())),
            reverts=tuple(int(i) for i in data.get("reverts", ())),
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "path": self.path,
            "op": self.op,
            "at_ms": self.at_ms,
            "who": self.who,
            "source": self.source,
            "header_before": self.header_before,
            "header_after": self.header_after,
            "diff": self.diff,
            "warnings": list(self.warnings),
            "cells": list(self.cells),
            "runs": [run.to_json() for run in self.runs],
            "notes": list(self.notes),
            "reverts": list(self.reverts),
            "undoable": self.undoable,
        }


@dataclass(frozen=True, slots=True)
class _Changed:
    """The lines that differ, in a window of both texts around them: old[start:old_end] became
    new[start:new_end], where `old` and `new` are the window's lines (split on LF, as hashline
    numbers lines) and `base` is the number of lines above the window. The window holds the
    changed lines, `CONTEXT_LINES` more on each side and the cell marker above them, so an edit
    of a huge file splits and diffs a few lines, not the file."""

    old: list[str]
    new: list[str]
    start: int
    old_end: int
    new_end: int
    base: int = 0

    def opcodes(self) -> list[tuple[str, int, int, int, int]]:
        """difflib's opcodes over the window (its equal lines at the ends included)."""
        s = self.start
        middle = line_opcodes(self.old[s : self.old_end], self.new[s : self.new_end])
        codes = [(op, i1 + s, i2 + s, j1 + s, j2 + s) for op, i1, i2, j1, j2 in middle]
        head = [("equal", 0, s, 0, s)] if s else []
        tail_len = len(self.old) - self.old_end
        tail = [("equal", self.old_end, len(self.old), self.new_end, len(self.new))]
        return head + codes + (tail if tail_len else [])


CONTEXT_LINES = 4
"""Equal lines kept on each side of the changed ones (more than any diff's context)."""


def changed_region(before: str, after: str) -> _Changed:
    """The window of lines around what differs (see `_Changed`): the common head and tail are
    found as characters, compared in C."""
    prefix = common_prefix(before, after)
    suffix = common_suffix(before, after, min(len(before), len(after)) - prefix)
    first = _window_start(before, prefix)
    old_stop = _window_stop(before, len(before) - suffix)
    new_stop = _window_stop(after, len(after) - suffix)
    if len(before) - old_stop != len(after) - new_stop:  # the tails differ as lines: widen
        old_stop, new_stop = len(before), len(after)
    old, new = _lines(before[first:old_stop]), _lines(after[first:new_stop])
    start, limit = 0, min(len(old), len(new))
    while start < limit and old[start] == new[start]:
        start += 1
    old_end, new_end = len(old), len(new)
    while old_end > start and new_end > start and old[old_end - 1] == new[new_end - 1]:
        old_end, new_end = old_end - 1, new_end - 1
    return _Changed(old, new, start, old_end, new_end, before.count("\n", 0, first))


def _window_start(text: str, at: int) -> int:
    """The start of a line `CONTEXT_LINES` above the line holding `at`, or of the cell marker
    above it when that is higher."""
    start = text.rfind("\n", 0, at) + 1
    for _ in range(CONTEXT_LINES):
        if start == 0:
            return 0
        start = text.rfind("\n", 0, start - 1) + 1
    marker = text.rfind("\n# %% [", 0, start)
    return start if marker == -1 and not text.startswith("# %% [") else min(start, marker + 1)


def _window_stop(text: str, at: int) -> int:
    """The end of a line `CONTEXT_LINES` below the line holding `at` (the text's end at most)."""
    stop = at
    for _ in range(CONTEXT_LINES + 1):
        found = text.find("\n", stop)
        if found == -1:
            return len(text)
        stop = found + 1
    return stop


def _lines(text: str) -> list[str]:
    """Lines split on LF only, each with its LF (the last one without, if unterminated)."""
    parts = text.split("\n")
    lines = [part + "\n" for part in parts[:-1]]
    if parts[-1]:
        lines.append(parts[-1])
    return lines


def _span(first: int, last: int) -> str:
    """A unified-diff range: 1-based start and length (start is the line before if empty)."""
    length = last - first
    return f"{first + 1 if length else first},{length}"


def unified_diff(path: str, before: str, after: str, max_chars: int, context: int = 2) -> str:
    """A unified diff `before` -> `after` (hunks with `context` lines), clipped to `max_chars`."""
    changed = changed_region(before, after)
    out = [f"--- a/{path}\n", f"+++ b/{path}\n"]
    codes = _grouped(changed.opcodes(), context)
    for group in codes:
        i1, j1, i2, j2 = group[0][1], group[0][3], group[-1][2], group[-1][4]
        base = changed.base
        cell = _hunk_cell(changed, group)
        where = f" cell {cell}" if cell else ""
        out.append(f"@@ -{_span(i1 + base, i2 + base)} +{_span(j1 + base, j2 + base)} @@{where}\n")
        for op, a1, a2, b1, b2 in group:
            if op == "equal":
                out.extend(" " + line for line in changed.old[a1:a2])
                continue
            out.extend("-" + line for line in changed.old[a1:a2])
            out.extend("+" + line for line in changed.new[b1:b2])
    if not codes:
        return ""
    text = "".join(row if row.endswith("\n") else row + "\n" for row in out)
    if len(text) <= max_chars:
        return text
    return text[:max_chars] + f"\n... diff clipped: {len(text) - max_chars} more characters\n"


Opcode = tuple[str, int, int, int, int]


def _grouped(codes: list[Opcode], context: int) -> list[list[Opcode]]:
    """difflib's hunk grouping: changes with up to `context` equal lines around each."""
    return [list(group) for group in _KnownOpcodes(codes).get_grouped_opcodes(context)]


class _KnownOpcodes(difflib.SequenceMatcher):
    """A matcher whose opcodes are already known (computed on the changed middle only)."""

    def __init__(self, codes: list[Opcode]) -> None:
        super().__init__()
        self._codes = codes

    def get_opcodes(self) -> Any:
        return self._codes


def _hunk_cell(changed: _Changed, group: list[Opcode]) -> str | None:
    """The notebook cell a hunk's first change is in (None for plain text): after the hunk
    header, as `git diff` names the function a hunk is in, so a reader can group by cell."""
    op, i1, _, j1, _ = next(code for code in group if code[0] != "equal")
    if op == "delete":
        return _marker_above(changed.old, i1)
    return _marker_above(changed.new, j1)


def _marker_above(lines: list[str], index: int) -> str | None:
    """The id of the cell marker at or above `lines[index]` (None above the first marker)."""
    for row in reversed(lines[: index + 1]):
        match = _CELL_MARKER.match(row)
        if match:
            return match.group(1)
    return None


def _owners(lines: list[str], first: int, last: int) -> list[str | None]:
    """For lines[first:last], the id of the cell each belongs to."""
    current = _marker_above(lines, first - 1) if first else None
    owner: list[str | None] = []
    for row in lines[first:last]:
        match = _CELL_MARKER.match(row)
        if match:
            current = match.group(1)
        owner.append(current)
    return owner


def cells_in_changed_lines(before: str, after: str) -> tuple[str, ...]:
    """Ids of the cells (per projection marker lines) that an edit before -> after touched.

    Only the changed middle of the texts is scanned, plus the way up to the marker above it.
    """
    changed = changed_region(before, after)
    found: dict[str, None] = {}
    for op, i1, i2, j1, j2 in changed.opcodes():
        if op == "equal":
            continue
        for cell in [*_owners(changed.old, i1, i2), *_owners(changed.new, j1, j2)]:
            if cell is not None:
                found.setdefault(cell, None)
    return tuple(found)


class ActivityLog:
    """Recent edits, bounded, safe to share between tasks and threads."""

    def __init__(
        self,
        limit: int = 200,
        *,
        max_diff_chars: int = 20_000,
        clock_ms: Callable[[], int] | None = None,
    ) -> None:
        self._records: deque[ActivityRecord] = deque(maxlen=limit)
        self._max_diff_chars = max_diff_chars
        self._clock_ms = clock_ms or (lambda: int(time.time() * 1000))
        self._next_id = 1
        self._lock = threading.Lock()
        self._listeners: list[Callable[[ActivityRecord], None]] = []

    def subscribe(self, listener: Callable[[ActivityRecord], None]) -> Callable[[], None]:
        """Call `listener(record)` for every new record; returns a function that unsubscribes."""
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener) if listener in self._listeners else None

    def record(self, **edit: Any) -> ActivityRecord:
        """Add one applied edit (the fields of `describe`) and return its record."""
        return self._add(**self.describe(**edit))

    def describe(
        self,
        *,
        path: str,
        op: str,
        who: str,
        source: str,
        before: str,
        after: str,
        warnings: Iterable[str] = (),
        notes: Iterable[str] = (),
        reverts: Iterable[int] = (),
        undo: UndoPlan | None = None,
    ) -> dict[str, Any]:
        """The fields of one applied edit's record: its diff and cells, worked out from the
        two texts (pure, so a big edit's can be worked out in a worker thread)."""
        diff = unified_diff(path, before, after, self._max_diff_chars)
        cells = cells_in_changed_lines(before, after) if path.endswith(".ipynb") else ()
        return {
            "path": path,
            "op": op,
            "who": who,
            "source": source,
            "header_before": f"[{path}#{section_tag(before)}]",
            "header_after": f"[{path}#{section_tag(after)}]",
            "diff": diff,
            "warnings": tuple(warnings),
            "cells": cells,
            "notes": tuple(notes),
            "reverts": tuple(reverts),
            "undo": undo,
        }

    def record_run(
        self,
        *,
        path: str,
        who: str,
        header_before: str,
        header_after: str,
        runs: Iterable[RunEntry],
        warnings: Iterable[str] = (),
    ) -> ActivityRecord:
        """Add one run of cells of notebook `path` and return its record."""
        entries = tuple(runs)
        return self._add(
            path=path,
            op="run",
            who=who,
            source="run",
            header_before=header_before,
            header_after=header_after,
            diff="",
            warnings=tuple(warnings),
            cells=tuple(run.cell for run in entries),
            runs=entries,
        )

    def record_eval(
        self, *, path: str, who: str, header: str, code: str, runs: Iterable[RunEntry]
    ) -> ActivityRecord:
        """Add one evaluation of `code` in notebook `path`'s kernel (nothing changed in the
        file): op `run`, source `eval`, the code as the diff."""
        return self._add(
            path=path,
            op="run",
            who=who,
            source="eval",
            header_before=header,
            header_after=header,
            diff=code,
            warnings=(),
            cells=(),
            runs=tuple(runs),
        )

    def _add(self, **fields: Any) -> ActivityRecord:
        """Store a new record (the next id, stamped now) and tell the listeners."""
        with self._lock:
            entry = ActivityRecord(id=self._next_id, at_ms=self._clock_ms(), **fields)
            self._next_id += 1
            self._records.append(entry)
        self._announce(entry)
        return entry

    def adopt(self, record: ActivityRecord) -> None:
        """Keep `record`, made by another log (e.g. a server's), as it is."""
        with self._lock:
            self._records.append(record)

    def describe_result(
        self,
        result: PatchResult,
        *,
        who: str,
        source: str,
        undo: Callable[[SectionResult], UndoPlan | None] | None = None,
        reverts: Iterable[int] = (),
    ) -> list[dict[str, Any]]:
        """`describe` for every section of a patch result that landed and changed its file
        (with the plan `undo` makes to undo it); pure, like `describe`. `add_described` then
        records them."""
        reverted = tuple(reverts)
        return [
            self.describe(
                path=section.path,
                op=str(section.op.value),
                who=who,
                source=source,
                before=section.before,
                after=section.after,
                warnings=section.warnings,
                notes=(*((section.banner,) if section.banner else ()), *section.notes),
                reverts=reverted,
                undo=undo(section) if undo is not None else None,
            )
            for section in result.sections
            if section.written and section.before != section.after
        ]

    def add_described(self, described: Iterable[dict[str, Any]]) -> list[ActivityRecord]:
        """Store records made by `describe_result`, in order, telling the listeners."""
        return [self._add(**fields) for fields in described]

    def _announce(self, entry: ActivityRecord) -> None:
        for listener in list(self._listeners):
            listener(entry)

    def recent(self, limit: int | None = None) -> list[ActivityRecord]:
        """Records newest first, at most `limit` of them."""
        with self._lock:
            newest_first = list(reversed(self._records))
        return newest_first if limit is None else newest_first[:limit]
