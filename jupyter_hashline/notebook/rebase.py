"""Cell-aware recovery: rebasing a stale edit of a notebook projection by cell identity.

Given the projection an agent read (snapshot), the live projection, and the snapshot lines an
edit touches, map every line to (cell, line within cell) and find that cell in the live text:

- the cell's source and type are unchanged: the line maps to the same line of the cell,
  wherever the cell is now, whatever happened to other cells;
- the cell changed: the engine's text rule (hashline/recovery.py) applies inside the cell
  (every asked line must be an unchanged line whose neighbours are unchanged too, the cell's
  marker and end counting as neighbours, and all asked lines of the cell must move by one
  offset); otherwise the edit is refused with that cell's current lines, the changed ones marked;
- a marker line (an edit of structure: retype, delete, merge, insert a cell before it) also
  needs the cell before it unchanged and still directly before it.

Cells are found by id. Ids derived from position (notebooks older than 4.5) are not stable
when cells are inserted or deleted, so for those cells the two projections' cell sequences are
aligned by content instead.

Invariants: pure (texts in, a mapping or a refusal out); it never guesses. Lines asked in a run
of consecutive numbers stay consecutive after mapping, or the edit is refused. Refusal reasons
are clauses (no final period): the patcher words the sentence around them.
"""

from __future__ import annotations

import bisect
import difflib
import re
from collections import Counter
from collections.abc import Collection, Mapping, Sequence

from ..hashline.filesystem import LineRebase, RebaseRefusal
from ..hashline.recovery import rebase_by_text
from .projection import ProjectedCell, escape_source, marker_line, parse_projection

MAX_CONTEXT_LINES = 40
_LINE_NUMBER = re.compile(r"\bline (\d+)")


def rebase_lines(
    snapshot_text: str,
    live_text: str,
    lines: Collection[int],
    derived_ids: Collection[str] = (),
) -> LineRebase | RebaseRefusal:
    """Map snapshot line numbers to live ones by cell (see the module docstring)."""
    snap, live = parse_projection(snapshot_text), parse_projection(live_text)
    locate = _Locator(snap, live, derived_ids)
    starts = [cell.line for cell in snap]
    by_cell: dict[int, list[int]] = {}
    for line in sorted(lines):
        index = bisect.bisect_right(starts, line) - 1
        if index < 0 or line > snap[index].last_line:
            return RebaseRefusal(f"line {line} is not a line of the notebook you read")
        by_cell.setdefault(index, []).append(line)
    mapping: dict[int, int] = {}
    notes: list[str] = []
    for index, asked in by_cell.items():
        outcome = _map_cell(index, asked, snap, live, locate)
        if isinstance(outcome, RebaseRefusal):
            return outcome
        mapping.update(outcome[0])
        notes.extend(outcome[1])
    return _check_runs(mapping, live) or LineRebase(mapping, tuple(dict.fromkeys(notes)))


class _Locator:
    """Finds a snapshot cell's live counterpart: by id, or by content for derived ids."""

    def __init__(
        self, snap: Sequence[ProjectedCell], live: Sequence[ProjectedCell], derived: Collection[str]
    ) -> None:
        self._snap, self._live, self._derived = snap, live, frozenset(derived)
        self._by_id: dict[str, int] = {}
        for index, cell in enumerate(live):
            if cell.cell_id is not None:
                self._by_id.setdefault(cell.cell_id, index)
        self._aligned: dict[int, int] | None = None

    def __call__(self, index: int) -> int | None:
        cell = self._snap[index]
        if cell.cell_id not in self._derived:
            return self._by_id.get(cell.cell_id or "")
        # A derived id names a position, not a cell: after an insert or delete above, the
        # same id can name an identical twin. Only the content alignment decides.
        return self._alignment().get(index)

    def _alignment(self) -> dict[int, int]:
        if self._aligned is None:
            keys_a = [(c.cell_type, c.source) for c in self._snap]
            keys_b = [(c.cell_type, c.source) for c in self._live]
            matcher = difflib.SequenceMatcher(None, keys_a, keys_b, autojunk=False)
            aligned: dict[int, int] = {}
            for tag, a1, a2, b1, b2 in matcher.get_opcodes():
                if tag == "equal" or (tag == "replace" and a2 - a1 == b2 - b1):
                    aligned.update(zip(range(a1, a2), range(b1, b2), strict=True))
            aligned.update(_unique_moves(keys_a, keys_b, aligned))
            self._aligned = aligned
        return self._aligned


def _unique_moves(
    keys_a: Sequence[tuple[str, str]], keys_b: Sequence[tuple[str, str]], aligned: Mapping[int, int]
) -> dict[int, int]:
    """Cells left unmatched by the alignment (a swap reads as delete + insert) whose content
    occurs exactly once on each side: the same cell, moved."""
    taken = set(aligned.values())
    count_a, count_b = Counter(keys_a), Counter(keys_b)
    where_b = {k: j for j, k in enumerate(keys_b) if count_b[k] == 1 and j not in taken}
    return {
        i: where_b[k]
        for i, k in enumerate(keys_a)
        if i not in aligned and count_a[k] == 1 and k in where_b
    }


def _same(a: ProjectedCell, b: ProjectedCell) -> bool:
    return a.cell_type == b.cell_type and a.source == b.source


def _name(cell: ProjectedCell) -> str:
    return cell.cell_id or f"at line {cell.line}"


def _map_cell(
    index: int,
    asked: list[int],
    snap: Sequence[ProjectedCell],
    live: Sequence[ProjectedCell],
    locate: _Locator,
) -> tuple[dict[int, int], list[str]] | RebaseRefusal:
    cell = snap[index]
    found = locate(index)
    if found is None:
        return RebaseRefusal(f"cell {_name(cell)} (line {cell.line} when you read it) was deleted")
    now = live[found]
    moved = [f"cell {_name(cell)} moved from line {cell.line} to {now.line}"]
    if cell.line in asked:
        refusal = _check_structure(index, found, snap, live, locate)
        if refusal is not None:
            return refusal
    if _same(cell, now):
        return {
            line: now.line + line - cell.line for line in asked
        }, moved if now.line != cell.line else []
    return _within_changed_cell(cell, now, asked)


def _check_structure(
    index: int,
    found: int,
    snap: Sequence[ProjectedCell],
    live: Sequence[ProjectedCell],
    locate: _Locator,
) -> RebaseRefusal | None:
    cell, now = snap[index], live[found]
    reason = None
    if not _same(cell, now):
        reason = f"cell {_name(cell)} itself changed since your read"
    elif index == 0 and found != 0:
        reason = f"cells were inserted before cell {_name(cell)}"
    elif index > 0 and (
        found == 0 or locate(index - 1) != found - 1 or not _same(snap[index - 1], live[found - 1])
    ):
        reason = f"the cell before cell {_name(cell)} changed or moved"
    if reason is None:
        return None
    return RebaseRefusal(
        f"your edit changes the cell marker on line {cell.line} (the structure around cell "
        f"{_name(cell)}), but {reason}",
        changed_live_lines=(),
        context_live_lines=_cell_lines(live[max(found - 1, 0) : found + 1]),
    )


def _within_changed_cell(
    cell: ProjectedCell, now: ProjectedCell, asked: list[int]
) -> tuple[dict[int, int], list[str]] | RebaseRefusal:
    """The engine's text rule (recovery.py) applied to the cell alone, its marker included.

    In the cell's own text line 1 is the marker, so snapshot line n is n - cell.line + 1 there
    (and live line m is m - now.line + 1): an anchor on the cell's first or last line needs the
    cell's boundary unmoved, exactly as the rule treats the ends of a file.
    """
    relative = {n: n - cell.line + 1 for n in asked}
    outcome = rebase_by_text(_cell_text(cell), _cell_text(now), relative.values())
    if isinstance(outcome, LineRebase):
        mapping = {n: outcome.mapping[r] + now.line - 1 for n, r in relative.items()}
        inside = next(outcome.mapping[r] - r for r in relative.values())
        note = (
            f"cell {_name(cell)} changed since your read; your lines in it moved by {inside:+d}"
            if inside
            else f"cell {_name(cell)} changed since your read, away from the lines you edit"
        )
        return mapping, [note]
    reason = _LINE_NUMBER.sub(lambda m: f"line {int(m.group(1)) + cell.line - 1}", outcome.reason)
    cell_lines = _cell_lines([now])
    changed = {n + now.line - 1 for n in outcome.changed_live_lines}
    return RebaseRefusal(
        f"cell {_name(cell)} changed where you edit it ({reason})",
        changed_live_lines=tuple(n for n in cell_lines if n in changed),
        context_live_lines=cell_lines,
    )


def _cell_text(cell: ProjectedCell) -> str:
    marker = marker_line(cell.cell_type, cell.cell_id or "")
    return marker + "\n" + (escape_source(cell.source) + "\n" if cell.line_count else "")


def _cell_lines(cells: Sequence[ProjectedCell]) -> tuple[int, ...]:
    lines = [n for c in cells for n in range(c.line, c.last_line + 1)]
    return tuple(lines[:MAX_CONTEXT_LINES])


def _check_runs(mapping: Mapping[int, int], live: Sequence[ProjectedCell]) -> RebaseRefusal | None:
    for line, target in mapping.items():
        follower = mapping.get(line + 1)
        if follower is not None and follower != target + 1:
            return RebaseRefusal(
                f"lines {line} and {line + 1} of your read are no longer next to each other",
                context_live_lines=tuple(range(target, target + 2)),
            )
    return None
