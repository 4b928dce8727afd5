"""Cell-aware recovery: rebasing a stale edit of a notebook projection by cell identity.

Given the projection an agent read (snapshot), the live projection, and the edit's footprint
(the snapshot lines it names and the gaps it inserts into), map every line to (cell, line
within cell) and find that cell in the live text:

- the cell's source and type are unchanged: the line maps to the same line of the cell,
  wherever the cell is now, whatever happened to other cells;
- the cell's source changed: a three-way line merge inside the cell (hashline/threeway.py):
  every named line must be the same live line in every minimal diff of the cell's two sources;
  a person's change on a neighbouring line does not conflict, an overlapping one (the line
  itself, or an insertion into the gap the edit inserts into) does; repeated lines that align
  more than one way and moved lines next to the edit are refused;
- the cell was deleted or retyped: refused;
- a marker line changed (retype, delete, merge, insert before it) needs the cell unchanged and,
  unless the edit deletes the whole cell, the cell before it unchanged and still directly
  before it; a marker named only to insert after it keeps the structure;
- rows that add a cell after a cell's last line need that cell gap free (the next cell read
  still next, or gone) and go after the cell's end as it is now;
- marker rows naming a cell of the read (a move) are rewritten to the id that cell shows now,
  or refused when it is gone or copied.

Cells are found by id. Ids derived from position (notebooks older than 4.5) are not stable
when cells are inserted or deleted, so for those cells the two projections' cell sequences are
aligned by content: unique content, or the match every minimal alignment agrees on (identical
twins around a change are refused). An id several cells share (a pasted copy: the projection
shows the copies under distinct ids, `IdNotes` says which) is resolved by context: the one copy
whose neighbouring cells are those the agent read and which holds the text the agent read.
Anything else is refused, never guessed: a copy holding the read text away from the read's
place, and also a copy in the read's place whose text changed (the original, changed, or a
copy pasted over its place and changed: nothing in the two texts tells which), even where no
other copy holds the read text. A cell whose only copy left is a pasted one (another agent's
edit deleted or renamed the original) looks, in these two texts, like the cell moved: the
patcher checks the edit against the versions recorded since the read for that.

Invariants: pure (texts in, a mapping or a refusal out). Lines asked in a run of consecutive
numbers stay consecutive after mapping, or the edit is refused. A refusal shows the rows within
`CONTEXT_ROWS` of the problem inside its cell, changed rows marked. Refusal reasons are clauses
(no final period): the patcher words the sentence around them.
"""

from __future__ import annotations

import bisect
from collections import Counter
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from enum import Enum

from ..hashline.filesystem import Footprint, LineRebase, RebaseRefusal
from ..hashline.text import common_prefix, common_suffix, split_lines
from ..hashline.threeway import align, merge_lines
from .errors import InvalidNotebookError
from .ids import IdNotes
from .projection import MARKER_PREFIX, ProjectedCell, marker_line, parse_projection

CONTEXT_ROWS = 20
_NO_NOTES = IdNotes()


class _Found(Enum):
    """A snapshot cell with several live candidates none of which is provably it."""

    AMBIGUOUS = "ambiguous"


def rebase_lines(
    snapshot_text: str,
    live_text: str,
    footprint: Footprint | Collection[int],
    snapshot_ids: IdNotes = _NO_NOTES,
    live_ids: IdNotes = _NO_NOTES,
) -> LineRebase | RebaseRefusal:
    """Map snapshot line numbers to live ones by cell (see the module docstring)."""
    needs = Footprint.of(footprint)
    if not snapshot_ids and not live_ids:
        quick = _away_from_the_change(snapshot_text, live_text, needs)
        if quick is not None:
            return quick
    return rebase_by_cells(snapshot_text, live_text, needs, snapshot_ids, live_ids)


def rebase_by_cells(
    snapshot_text: str,
    live_text: str,
    needs: Footprint,
    snapshot_ids: IdNotes = _NO_NOTES,
    live_ids: IdNotes = _NO_NOTES,
) -> LineRebase | RebaseRefusal:
    """`rebase_lines` by parsing both texts into cells (the general path)."""
    snap, live = parse_projection(snapshot_text), parse_projection(live_text)
    texts = _Texts(split_lines(snapshot_text), split_lines(live_text))
    locate = _Locator(snap, live, snapshot_ids, live_ids)
    starts = [cell.line for cell in snap]
    by_cell: dict[int, list[int]] = {}
    for line in sorted(needs.lines):
        index = bisect.bisect_right(starts, line) - 1
        if index < 0 or line > snap[index].last_line:
            return RebaseRefusal(f"line {line} is not a line of the notebook you read")
        by_cell.setdefault(index, []).append(line)
    renamed = _named_ids(needs.rows, snap, live, locate)
    if isinstance(renamed, RebaseRefusal):
        return renamed
    mapping: dict[int, int] = {}
    notes: list[str] = []
    for index, asked in by_cell.items():
        outcome = _map_cell(index, asked, needs, snap, live, locate, texts)
        if isinstance(outcome, RebaseRefusal):
            return outcome
        mapping.update(outcome[0])
        notes.extend(outcome[1])
    rows, renames = renamed
    notes.extend(renames)
    return _check_runs(mapping) or LineRebase(mapping, tuple(dict.fromkeys(notes)), rows)


_MARKER_AT_LINE = "\n" + MARKER_PREFIX


def _away_from_the_change(snap: str, live: str, needs: Footprint) -> LineRebase | None:
    """The mapping without parsing either text, when every line the edit needs lies in a cell
    wholly before the cell where the texts first differ (the same line there), or in a cell
    wholly after the last difference, at least one line inside it (moved by the change's line
    count): those cells are the same text on both sides, their neighbours too, so mapping by
    cell gives exactly this. None otherwise (and for edits writing marker rows, or needing a
    line of a cell the change may have grown at its end, which the full rebase notes as
    changed): the full rebase decides."""
    asked = needs.lines | needs.after.keys() | needs.before.keys() | needs.deleted | needs.replaced
    if not asked or any(row.startswith(MARKER_PREFIX) for row in needs.rows):
        return None
    head = common_prefix(snap, live)
    tail = common_suffix(snap, live, min(len(snap), len(live)) - head)
    at = snap.rfind(_MARKER_AT_LINE, 0, head + len(MARKER_PREFIX))
    changed_from = 1 if at == -1 else snap.count("\n", 0, at + 1) + 1  # that cell's marker
    grown = changed_from  # from the first line of a cell that may have grown at its end
    if at != -1 and head < at + 1 + len(MARKER_PREFIX):  # the texts part where a marker starts
        above = snap.rfind(_MARKER_AT_LINE, 0, at)
        grown = 1 if above == -1 else snap.count("\n", 0, above + 1) + 1
    after = snap.find(_MARKER_AT_LINE, max(len(snap) - tail - 1, 0))
    changed_to = None if after == -1 else snap.count("\n", 0, after + 1) + 1  # next marker
    shift = live.count("\n") - snap.count("\n")
    mapping: dict[int, int] = {}
    for line in asked:
        if grown <= line < changed_from:  # the full rebase says that cell changed
            return None
        if line <= changed_from - 2:
            mapping[line] = line
        elif changed_to is not None and line > changed_to:
            mapping[line] = line + shift
        else:
            return None
    later = sorted(line for line in mapping if mapping[line] != line)
    notes = _moved_cells(snap, after + 1, changed_to, later, shift) if later else []
    return None if _check_runs(mapping) else LineRebase(mapping, tuple(notes))


def _moved_cells(
    snap: str, start: int, first: int | None, lines: list[int], shift: int
) -> list[str]:
    """ "cell X moved from line A to B" for the cells holding `lines` (sorted, after the change),
    found by walking the text from the marker at offset `start` (line `first`)."""
    assert first is not None
    notes: list[str] = []
    marker_at, marker_line, offset, number = start, first, start, first
    for line in lines:
        while number < line:
            offset = snap.index("\n", offset) + 1
            number += 1
            if snap.startswith(MARKER_PREFIX, offset):
                marker_at, marker_line = offset, number
        end = snap.find("\n", marker_at)
        cell = parse_projection(snap[marker_at : None if end == -1 else end + 1], marker_line)[0]
        note = f"cell {_name(cell)} moved from line {marker_line} to {marker_line + shift}"
        if not notes or notes[-1] != note:
            notes.append(note)
    return notes


@dataclass(frozen=True, slots=True)
class _Texts:
    """The lines of both projection texts (0-based lists)."""

    snap: list[str]
    live: list[str]


class _Locator:
    """Finds a snapshot cell's live counterpart: by id (resolving shared ids by context), or
    by content for derived ids."""

    def __init__(
        self,
        snap: Sequence[ProjectedCell],
        live: Sequence[ProjectedCell],
        snap_ids: IdNotes,
        live_ids: IdNotes,
    ) -> None:
        self._snap, self._live = snap, live
        self._snap_ids, self._live_ids = snap_ids, live_ids
        self._by_key: dict[str, list[int]] = {}
        self._by_shown: dict[str, int] = {}
        for index, cell in enumerate(live):
            if cell.cell_id is not None:
                key = live_ids.shared.get(cell.cell_id, cell.cell_id)
                self._by_key.setdefault(key, []).append(index)
                self._by_shown[cell.cell_id] = index
        self._snap_count = Counter(self._snap_key(c) for c in snap)
        self._aligned: dict[int, int | _Found] | None = None

    def _snap_key(self, cell: ProjectedCell) -> str:
        shown = cell.cell_id or ""
        return self._snap_ids.shared.get(shown, shown)

    def __call__(self, index: int) -> int | _Found | None:
        cell = self._snap[index]
        if cell.cell_id in self._snap_ids.derived:
            # A derived id names a position, not a cell: after an insert or delete above, the
            # same id can name an identical twin. Only the content alignment decides.
            return self._alignment().get(index)
        key = self._snap_key(cell)
        found = self._candidates(cell, key)
        shared = any(self._live[i].cell_id in self._live_ids.shared for i in found)
        if len(found) <= 1 and self._snap_count[key] <= 1 and not shared:
            return found[0] if found else None
        return self._resolve(index, found)

    def _candidates(self, cell: ProjectedCell, key: str) -> list[int]:
        found = self._by_key.get(key, [])
        if found or cell.cell_id is None or cell.cell_id not in self._by_shown:
            return found
        # The snapshot's notes are unknown (its text outlived the cache): its id may be a
        # copy's shown id; then every cell sharing that copy's stored id is a candidate.
        live_index = self._by_shown[cell.cell_id]
        stored = self._live_ids.shared.get(cell.cell_id)
        return self._by_key.get(stored, [live_index]) if stored else [live_index]

    def derived(self, index: int) -> bool:
        """Whether snapshot cell `index` is shown under an id derived from its position."""
        return self._snap[index].cell_id in self._snap_ids.derived

    def copies(self, index: int) -> list[ProjectedCell]:
        """The live cells sharing the stored id of snapshot cell `index`."""
        key = self._snap_key(self._snap[index])
        return [self._live[i] for i in self._by_key.get(key, [])]

    def _resolve(self, index: int, found: Sequence[int]) -> int | _Found | None:
        """The one candidate whose neighbours are the ones the agent read and which holds the
        text the agent read; else ambiguous (a changed candidate in the read's place may be a
        copy pasted there as well as the original)."""
        if not found:
            return None
        fits = [i for i in found if self._context_fits(index, i)]
        if len(fits) == 1 and _same(self._snap[index], self._live[fits[0]]):
            return fits[0]
        return _Found.AMBIGUOUS

    def _context_fits(self, index: int, live_index: int) -> bool:
        def neighbour(cells: Sequence[ProjectedCell], at: int) -> ProjectedCell | None:
            return cells[at] if 0 <= at < len(cells) else None

        for step in (-1, 1):
            a = neighbour(self._snap, index + step)
            b = neighbour(self._live, live_index + step)
            if (a is None) != (b is None) or (a is not None and b is not None and not _same(a, b)):
                return False
        return True

    def _alignment(self) -> dict[int, int | _Found]:
        if self._aligned is None:
            keys_a = [(c.cell_type, c.source) for c in self._snap]
            keys_b = [(c.cell_type, c.source) for c in self._live]
            self._aligned = align_cells(keys_a, keys_b)
        return self._aligned


def align_cells(
    keys_a: Sequence[tuple[str, str]], keys_b: Sequence[tuple[str, str]]
) -> dict[int, int | _Found]:
    """Snapshot cell -> live cell by content, for cells shown under ids derived from position:

    - content that occurs exactly once on each side: that cell (moved or not);
    - else the cell every minimal alignment of the two cell sequences matches it to;
    - else, in a run of changed cells between two such cells with as many live cells as
      snapshot ones, the cell at the same place in the run (cells edited in place).

    A cell some minimal alignment matches and another does not (identical twins around a
    change) is ambiguous; a cell every one drops is absent (deleted).
    """
    count_a, count_b = Counter(keys_a), Counter(keys_b)
    unique_b = {k: j for j, k in enumerate(keys_b) if count_b[k] == 1}
    found: dict[int, int | _Found] = {
        i: unique_b[k] for i, k in enumerate(keys_a) if count_a[k] == 1 and k in unique_b
    }
    alignment = align(keys_a, keys_b)
    if alignment is None:  # too different to align exactly: only unique contents are sure
        return found
    for i, partner in enumerate(alignment.partner):
        if i not in found and partner is not None:
            found[i] = partner
        elif i not in found and not alignment.deleted[i]:
            found[i] = _Found.AMBIGUOUS
    found.update(_edited_in_place(alignment.partner, alignment.deleted, len(keys_b), found))
    return found


def _edited_in_place(
    partner: Sequence[int | None],
    deleted: Sequence[bool],
    live_count: int,
    found: Mapping[int, object],
) -> dict[int, int]:
    """Runs of snapshot cells every minimal alignment drops, between two matched cells, facing
    a run of as many unmatched live cells: paired in order."""
    taken = {j for j in found.values() if isinstance(j, int)}
    pairs: dict[int, int] = {}
    last_i, last_j = -1, -1
    for i in [*range(len(partner)), len(partner)]:
        j = live_count if i == len(partner) else partner[i]
        if j is None:
            continue
        run_a = list(range(last_i + 1, i))
        run_b = [b for b in range(last_j + 1, j) if b not in taken]
        if run_a and len(run_a) == len(run_b) and all(deleted[a] and a not in found for a in run_a):
            pairs.update(zip(run_a, run_b, strict=True))
        last_i, last_j = i, j
    return pairs


def _same(a: ProjectedCell, b: ProjectedCell) -> bool:
    return a.cell_type == b.cell_type and a.source == b.source


def _name(cell: ProjectedCell) -> str:
    return cell.cell_id or f"at line {cell.line}"


def _map_cell(
    index: int,
    asked: list[int],
    needs: Footprint,
    snap: Sequence[ProjectedCell],
    live: Sequence[ProjectedCell],
    locate: _Locator,
    texts: _Texts,
) -> tuple[dict[int, int], list[str]] | RebaseRefusal:
    cell, found = snap[index], locate(index)
    if not isinstance(found, int):
        return _not_found(index, cell, found, locate)
    now = live[found]
    if now.cell_type != cell.cell_type:
        return RebaseRefusal(
            f"cell {_name(cell)} was changed from {cell.cell_type} to {now.cell_type}",
            changed_live_lines=(now.line,),
            context_live_lines=_window(now, now.line, now),
        )
    mine = needs.within(asked)
    if cell.line in asked and not _inserts_after_marker_only(cell, mine):
        whole = set(range(cell.line, cell.last_line + 1)) <= mine.deleted
        refusal = _check_structure(index, found, snap, live, locate, whole_cell=whole)
        if refusal is not None:
            return refusal
    adds_cell = _opens_cell(mine.after.get(cell.last_line, ()))
    if adds_cell:
        refusal = _check_cell_gap(index, found, snap, live, locate)
        if refusal is not None:
            return refusal
        mine = _without_end_gap(mine, cell.last_line)
    if _same(cell, now):
        moved = [f"cell {_name(cell)} moved from line {cell.line} to {now.line}"]
        return {line: now.line + line - cell.line for line in asked}, (
            moved if now.line != cell.line else []
        )
    outcome = _changed_cell(cell, now, mine, texts)
    if adds_cell and not isinstance(outcome, RebaseRefusal):
        return _new_cell_after_the_end(cell, now, mine, outcome)
    return outcome


def _not_found(
    index: int, cell: ProjectedCell, found: _Found | None, locate: _Locator
) -> RebaseRefusal:
    if found is _Found.AMBIGUOUS and locate.derived(index):
        return RebaseRefusal(
            f"cell {_name(cell)} (line {cell.line} when you read it) has twins with the same "
            "text, and the cells around it changed, so which of them you read cannot be told "
            "(this notebook stores no cell ids)"
        )
    if found is _Found.AMBIGUOUS:
        return _ambiguous(cell, locate.copies(index))
    return RebaseRefusal(f"cell {_name(cell)} (line {cell.line} when you read it) was deleted")


def _inserts_after_marker_only(cell: ProjectedCell, footprint: Footprint) -> bool:
    """The edit names the cell's marker only to insert after it: the structure stays."""
    marker = cell.line
    return (
        marker in footprint.after
        and marker not in footprint.replaced | footprint.deleted
        and marker not in footprint.before
    )


def _changed_cell(
    cell: ProjectedCell, now: ProjectedCell, footprint: Footprint, texts: _Texts
) -> tuple[dict[int, int], list[str]] | RebaseRefusal:
    """The three-way merge on the source lines; a marker named only to insert after it maps
    to the marker, and its rows need the cell's first line still first."""
    marker = cell.line
    if marker not in footprint.lines:
        return _within_changed_cell(cell, now, footprint, texts)
    source = footprint.within(range(marker + 1, cell.last_line + 1))
    top = footprint.after.get(marker)
    if top is not None:
        if cell.line_count == 0:
            return RebaseRefusal(
                f"lines were added to cell {_name(cell)} since your read, where your edit "
                "inserts at its top",
                changed_live_lines=tuple(range(now.line + 1, now.last_line + 1)),
                context_live_lines=_window(now, now.line, now),
            )
        first = marker + 1
        source = Footprint(
            source.lines | {first},
            source.after,
            {**source.before, first: top},
            source.deleted,
            source.rows,
            source.replaced,
        )
    outcome = _within_changed_cell(cell, now, source, texts) if source.lines else ({}, [])
    if isinstance(outcome, RebaseRefusal):
        return outcome
    mapping = {**outcome[0], marker: now.line}
    if marker + 1 not in footprint.lines:
        mapping.pop(marker + 1, None)
    return mapping, outcome[1]


def _ambiguous(cell: ProjectedCell, copies: Sequence[ProjectedCell]) -> RebaseRefusal:
    names = ", ".join(f"{c.cell_id} (line {c.line})" for c in copies)
    return RebaseRefusal(
        f"the cell you edit ({_name(cell)}, line {cell.line} when you read it) now exists as "
        f"copies sharing one id ({names or 'none left'}), and which copy you read cannot be "
        "told apart by its text and its neighbours",
        changed_live_lines=tuple(c.line for c in copies),
        context_live_lines=tuple(c.line for c in copies),
    )


def _check_structure(
    index: int,
    found: int,
    snap: Sequence[ProjectedCell],
    live: Sequence[ProjectedCell],
    locate: _Locator,
    *,
    whole_cell: bool,
) -> RebaseRefusal | None:
    """A marker edit needs the cell as read; unless it deletes the whole cell, also the cell
    before it, unchanged and still directly before it."""
    cell, now = snap[index], live[found]
    reason = None
    if not _same(cell, now):
        reason = f"cell {_name(cell)} itself changed since your read"
    elif whole_cell:
        return None
    elif index == 0 and found != 0:
        reason = f"cells were inserted before cell {_name(cell)}"
    elif index > 0 and (
        found == 0 or locate(index - 1) != found - 1 or not _same(snap[index - 1], live[found - 1])
    ):
        reason = f"the cell before cell {_name(cell)} changed or moved"
    if reason is None:
        return None
    first = live[max(found - 1, 0)]
    return RebaseRefusal(
        f"your edit changes the cell marker on line {cell.line} (the structure around cell "
        f"{_name(cell)}), but {reason}",
        changed_live_lines=(),
        context_live_lines=_window(first, now.line, now),
    )


def _named_ids(
    rows: Sequence[str],
    snap: Sequence[ProjectedCell],
    live: Sequence[ProjectedCell],
    locate: _Locator,
) -> tuple[dict[str, str], list[str]] | RebaseRefusal:
    """Marker rows naming a cell of the read (a move, a retype) must still name that cell:
    ids derived from position, or shown apart from a copy, can name another cell now. Such a
    row is rewritten to the id the cell shows now; a cell gone or ambiguous is refused."""
    rewrite: dict[str, str] = {}
    notes: list[str] = []
    by_id = {cell.cell_id: index for index, cell in enumerate(snap) if cell.cell_id is not None}
    for row in rows:
        marker = _read_row(row)
        if marker is None or marker.cell_id not in by_id:
            continue
        found = locate(by_id[marker.cell_id])
        if not isinstance(found, int):
            return RebaseRefusal(
                f"your rows name cell {marker.cell_id}, which is "
                f"{'deleted' if found is None else 'now one of several copies'} since your read"
            )
        shown = live[found].cell_id
        if shown is not None and shown != marker.cell_id:
            rewrite[row] = marker_line(marker.cell_type, shown)
            notes.append(f"cell {marker.cell_id} of your read is shown as id={shown} now")
    return rewrite, notes


def _read_row(row: str) -> ProjectedCell | None:
    if not row.startswith(MARKER_PREFIX):
        return None
    try:
        [cell] = parse_projection(row + "\n")
    except InvalidNotebookError:
        return None
    return cell


def _opens_cell(rows: Sequence[str]) -> bool:
    """Rows that add a cell (one of them is a cell marker), not only lines."""
    return any(row.startswith(MARKER_PREFIX) for row in rows)


def _without_end_gap(footprint: Footprint, last: int) -> Footprint:
    """The footprint without the line-level check below `last`, when the rows inserted there
    start a new cell (the cell-level check took its place)."""
    rows = footprint.after[last]
    if rows and not rows[0].startswith(MARKER_PREFIX):
        return footprint  # lines appended to the cell first: the line gap matters too
    after = {n: r for n, r in footprint.after.items() if n != last}
    return Footprint(
        footprint.lines,
        after,
        footprint.before,
        footprint.deleted,
        footprint.rows,
        footprint.replaced,
    )


def _new_cell_after_the_end(
    cell: ProjectedCell,
    now: ProjectedCell,
    footprint: Footprint,
    outcome: tuple[dict[int, int], list[str]],
) -> tuple[dict[int, int], list[str]] | RebaseRefusal:
    """A cell added after a cell whose end the person extended (lines appended, the next cell
    merged in) goes after the cell's end as it is now, not between its lines."""
    mapping, notes = outcome
    last = cell.last_line
    if mapping[last] == now.last_line:
        return outcome
    if last in footprint.replaced | footprint.deleted or last in footprint.before:
        return RebaseRefusal(
            f"your edit adds a cell after cell {_name(cell)} and also changes its last line, "
            "and lines were added after that line since your read",
            changed_live_lines=tuple(range(mapping[last] + 1, now.last_line + 1)),
            context_live_lines=_window(now, now.last_line, now),
        )
    return {**mapping, last: now.last_line}, [*notes, f"cell {_name(cell)} grew at its end"]


def _check_cell_gap(
    index: int,
    found: int,
    snap: Sequence[ProjectedCell],
    live: Sequence[ProjectedCell],
    locate: _Locator,
) -> RebaseRefusal | None:
    """A cell added after cell `index`: no cell may have been added or moved into that gap
    (the next cell read must still follow, or be gone)."""
    cell, now = snap[index], live[found]
    if index + 1 < len(snap):
        following = locate(index + 1)
        if following is None or following == found + 1:
            return None
    elif found == len(live) - 1:
        return None
    return RebaseRefusal(
        f"your edit adds a cell after cell {_name(cell)}, and cells were added or moved into "
        "that place since your read",
        changed_live_lines=(),
        context_live_lines=_window(now, now.last_line, live[min(found + 1, len(live) - 1)]),
    )


def _within_changed_cell(
    cell: ProjectedCell, now: ProjectedCell, footprint: Footprint, texts: _Texts
) -> tuple[dict[int, int], list[str]] | RebaseRefusal:
    """The three-way line merge on the cell's source lines, numbered as the agent saw them."""
    asked = sorted(footprint.lines)
    outcome = merge_lines(
        texts.snap[cell.line : cell.last_line],
        texts.live[now.line : now.last_line],
        footprint,
        context_rows=CONTEXT_ROWS,
        snap_first=cell.line + 1,
        live_first=now.line + 1,
    )
    if outcome is None:
        centre = now.line + min(asked) - cell.line
        return RebaseRefusal(
            f"cell {_name(cell)} changed too much since your read to merge your edit safely",
            context_live_lines=_window(now, centre, now),
        )
    if isinstance(outcome, LineRebase):
        inside = {outcome.mapping[n] - now.line - (n - cell.line) for n in asked}
        return dict(outcome.mapping), [_inside_note(cell, inside)]
    shown = set(outcome.context_live_lines)
    if shown and min(shown) - now.line <= CONTEXT_ROWS:
        shown.add(now.line)  # the marker, when the window reaches the top of the cell
    return RebaseRefusal(
        f"cell {_name(cell)} changed where you edit it ({outcome.reason})",
        changed_live_lines=outcome.changed_live_lines,
        context_live_lines=tuple(sorted(shown)),
    )


def _inside_note(cell: ProjectedCell, offsets: set[int]) -> str:
    changed = f"cell {_name(cell)} changed since your read"
    if offsets == {0}:
        return f"{changed}, not on the lines you edit"
    if len(offsets) == 1:
        return f"{changed}; your lines in it moved by {offsets.pop():+d}"
    return f"{changed}; each of your lines in it was found unchanged and edited there"


def _window(first: ProjectedCell, centre: int, last: ProjectedCell) -> tuple[int, ...]:
    """The rows within `CONTEXT_ROWS` of `centre`, from `first`'s marker to `last`'s end."""
    low = max(centre - CONTEXT_ROWS, first.line)
    high = min(centre + CONTEXT_ROWS, last.last_line)
    return tuple(range(low, high + 1))


def _check_runs(mapping: Mapping[int, int]) -> RebaseRefusal | None:
    for line, target in mapping.items():
        follower = mapping.get(line + 1)
        if follower is not None and follower != target + 1:
            return RebaseRefusal(
                f"lines {line} and {line + 1} of your read are no longer next to each other",
                context_live_lines=tuple(range(target, target + 2)),
            )
    return None
