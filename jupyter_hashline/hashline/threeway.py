"""Three-way line merge of a stale edit: the snapshot an agent read, the live text, and the
edit's footprint (the lines it names and the gaps it inserts into).

The person's change is the difference between the snapshot and the live text. The agent's edit
lands on the live text when every line it names is provably the same line in the live text:

- Every named line must be matched to ONE live line in EVERY longest common subsequence of the
  two texts (an exact banded dynamic programme, not a heuristic diff). A line that some minimal
  diff deletes, or matches elsewhere (repeated identical lines), is refused: never guessed.
- Changes next to a named line do not conflict; only overlapping ones do. An insertion conflicts
  with a person's insertion into the same gap: for `insert after N`, the line below N must still
  follow N directly, or be deleted by every minimal diff (the person replaced it); likewise the
  line above N for `insert before N`. At the ends of the text the end must not have moved.
- Moved lines (a non-blank text the person deleted in one place and inserted in another) next to
  a named line are refused: which side of the move the edit belongs to is not decidable.
- Ranges stay ranges: the caller refuses a range whose lines no longer lie together.

Invariants: pure and deterministic; texts in, a mapping or a refusal out. Work is bounded:
when the alignment would need more than `BUDGET` table cells, `merge_lines` returns None and
the caller applies a cheaper rule. Refusal reasons are clauses (no final period).
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Hashable, Iterable, Sequence
from dataclasses import dataclass
from difflib import SequenceMatcher

from .filesystem import Footprint, LineRebase, RebaseRefusal

BUDGET = 600_000
MAX_WINDOWS = 3  # context windows shown with a refusal (around the first problem lines)
_NEG = -(1 << 40)
_MAX_MARKED = 2000


@dataclass(frozen=True, slots=True)
class Alignment:
    """Snapshot lines (0-based) and their fate in every minimal diff against the live lines.

    `partner[i]` is the live line snapshot line i is matched to in every minimal diff, or None;
    `deleted[i]` is True when every minimal diff deletes line i. A line with neither is
    ambiguous. `equal` lists one minimal-enough diff's runs of equal lines (snap, live, size).
    """

    partner: tuple[int | None, ...]
    deleted: tuple[bool, ...]
    equal: tuple[tuple[int, int, int], ...]
    live_count: int

    def changed_live(self) -> list[int]:
        """Live lines (0-based) outside every equal run: added or edited since the snapshot."""
        flags = bytearray(self.live_count)
        for _, live, size in self.equal:
            flags[live : live + size] = b"\x01" * size
        return [j for j, flag in enumerate(flags) if not flag][:_MAX_MARKED]

    def approximate_live(self, index: int) -> int:
        """Where snapshot line `index` (0-based) is, or would be, in the live text (0-based)."""
        if self.partner[index] is not None:
            return self.partner[index]  # type: ignore[return-value]
        starts = [snap for snap, _, _ in self.equal]
        pos = bisect_right(starts, index) - 1
        if pos < 0:
            return min(index, max(self.live_count - 1, 0))
        snap, live, size = self.equal[pos]
        return min(live + min(index - snap, size), max(self.live_count - 1, 0))


def equal_runs(snap: Sequence[Hashable], live: Sequence[Hashable]) -> list[tuple[int, int, int]]:
    """Runs of equal lines (snap, live, size), ordered: common ends, then difflib between."""
    limit = min(len(snap), len(live))
    prefix = 0
    while prefix < limit and snap[prefix] == live[prefix]:
        prefix += 1
    suffix = 0
    while suffix < limit - prefix and snap[-1 - suffix] == live[-1 - suffix]:
        suffix += 1
    runs = [(0, 0, prefix)] if prefix else []
    middle = SequenceMatcher(
        None, snap[prefix : len(snap) - suffix], live[prefix : len(live) - suffix], autojunk=False
    )
    runs += [(prefix + a, prefix + b, size) for a, b, size in middle.get_matching_blocks() if size]
    if suffix:
        runs.append((len(snap) - suffix, len(live) - suffix, suffix))
    return runs


def align(
    snap: Sequence[Hashable], live: Sequence[Hashable], budget: int = BUDGET
) -> Alignment | None:
    """The fate of every snapshot line in every minimal diff, or None when over `budget`.

    Every minimal diff stays within `n - l0` deletions and `m - l0` insertions of any common
    subsequence of length `l0`, so its path never leaves that diagonal band: the tables below
    cover the band only, and are exact there.
    """
    runs = equal_runs(snap, live)
    common = sum(size for _, _, size in runs)
    low = -(len(snap) - common)
    width = len(snap) + len(live) - 2 * common + 1
    if width * (len(snap) + 1) > budget:
        return None
    forward = _forward(snap, live, low, width)
    backward = _backward(snap, live, low, width)
    total = forward[len(snap)][len(live) - len(snap) - low]
    partner: list[int | None] = []
    deleted: list[bool] = []
    for i in range(len(snap)):
        diagonal, vertical = _row_moves(i, snap, live, forward, backward, low, total)
        partner.append(diagonal[0] if len(diagonal) == 1 and not vertical else None)
        deleted.append(vertical and not diagonal)
    return Alignment(tuple(partner), tuple(deleted), tuple(runs), len(live))


def _forward(
    snap: Sequence[Hashable], live: Sequence[Hashable], low: int, width: int
) -> list[list[int]]:
    """table[i][k]: the longest common subsequence of snap[:i] and live[:j], j = i + low + k."""
    table: list[list[int]] = []
    above: list[int] | None = None
    for i in range(len(snap) + 1):
        row = [_NEG] * width
        line = snap[i - 1] if i else None
        for k in range(max(0, -i - low), min(width, len(live) - i - low + 1)):
            j = i + low + k
            if i == 0 and j == 0:
                row[k] = 0
                continue
            best = _NEG
            if above is not None:
                if k + 1 < width:
                    best = above[k + 1]
                if j > 0 and above[k] != _NEG and line == live[j - 1] and above[k] + 1 > best:
                    best = above[k] + 1
            if k > 0 and row[k - 1] > best:
                best = row[k - 1]
            row[k] = best
        table.append(row)
        above = row
    return table


def _backward(
    snap: Sequence[Hashable], live: Sequence[Hashable], low: int, width: int
) -> list[list[int]]:
    """table[i][k]: the longest common subsequence of snap[i:] and live[j:], j = i + low + k."""
    n, m = len(snap), len(live)
    table: list[list[int]] = [[] for _ in range(n + 1)]
    below: list[int] | None = None
    for i in range(n, -1, -1):
        row = [_NEG] * width
        line = snap[i] if i < n else None
        for k in range(min(width, m - i - low + 1) - 1, max(0, -i - low) - 1, -1):
            j = i + low + k
            if i == n and j == m:
                row[k] = 0
                continue
            best = _NEG
            if below is not None:
                if k > 0:
                    best = below[k - 1]
                if j < m and below[k] != _NEG and line == live[j] and below[k] + 1 > best:
                    best = below[k] + 1
            if k + 1 < width and j < m and row[k + 1] > best:
                best = row[k + 1]
            row[k] = best
        table[i] = row
        below = row
    return table


def _row_moves(
    i: int,
    snap: Sequence[Hashable],
    live: Sequence[Hashable],
    forward: Sequence[Sequence[int]],
    backward: Sequence[Sequence[int]],
    low: int,
    total: int,
) -> tuple[list[int], bool]:
    """How minimal diffs leave row i: the live lines line i is matched to, and whether some
    minimal diff deletes it."""
    here, after = forward[i], backward[i + 1]
    diagonal: list[int] = []
    vertical = False
    for k, reached in enumerate(here):
        if reached == _NEG:
            continue
        j = i + low + k
        if (
            j < len(live)
            and after[k] != _NEG
            and snap[i] == live[j]
            and reached + 1 + after[k] == total
        ):
            diagonal.append(j)
        if k > 0 and after[k - 1] != _NEG and reached + after[k - 1] == total:
            vertical = True
    return diagonal, vertical


# -- the merge rule ----------------------------------------------------------------------------


def merge_lines(
    snap: Sequence[str],
    live: Sequence[str],
    footprint: Footprint,
    *,
    context_rows: int,
    snap_first: int = 1,
    live_first: int = 1,
    budget: int = BUDGET,
) -> LineRebase | RebaseRefusal | None:
    """Map every line the footprint names to the live text, or refuse; None when the texts
    differ too much to align within `budget`.

    `snap[0]` is line `snap_first` and `live[0]` line `live_first` (so a slice of a larger text,
    e.g. one notebook cell, keeps the numbers the agent saw); the footprint, the mapping and
    the refusal's rows use those numbers.
    """
    alignment = align(snap, live, budget)
    if alignment is None:
        return None
    moves = _Moves.find(snap, live, alignment)
    mapping: dict[int, int] = {}
    problems: dict[int, str] = {}
    for line in sorted(footprint.lines):
        index = line - snap_first
        problem = _check_line(index, line, alignment, footprint, moves)
        if problem is None:
            mapping[line] = alignment.partner[index] + live_first  # type: ignore[operator]
        else:
            problems[index] = problem
    if problems:
        return _refusal(problems, alignment, context_rows, live_first)
    return LineRebase(mapping, (moved_note(mapping),))


def _check_line(
    index: int, line: int, alignment: Alignment, footprint: Footprint, moves: _Moves
) -> str | None:
    target = alignment.partner[index]
    if target is None:
        if alignment.deleted[index]:
            return f"line {line} itself was {_fate(index, alignment)}"
        return (
            f"line {line} repeats nearby and the changes around it align more than one way, "
            "so which line it is now cannot be told"
        )
    if line in footprint.after:
        problem = _gap_below(index, line, target, alignment)
        if problem:
            return problem
    if line in footprint.before:
        problem = _gap_above(index, line, target, alignment)
        if problem:
            return problem
    return moves.beside(index, line, target)


def _gap_below(index: int, line: int, target: int, alignment: Alignment) -> str | None:
    """`insert after` a line: the line below must still follow it, or be replaced."""
    if index + 1 == len(alignment.partner):
        if target == alignment.live_count - 1:
            return None
        return f"lines were added after line {line} (the end), where your edit inserts"
    below = alignment.partner[index + 1]
    if below == target + 1 or alignment.deleted[index + 1]:
        return None
    if below is not None:
        return f"lines were added between lines {line} and {line + 1}, where your edit inserts"
    return f"the lines after line {line} align more than one way, so where to insert is unclear"


def _gap_above(index: int, line: int, target: int, alignment: Alignment) -> str | None:
    """`insert before` a line: the line above must still precede it, or be replaced."""
    if index == 0:
        if target == 0:
            return None
        return f"lines were added before line {line} (the start), where your edit inserts"
    above = alignment.partner[index - 1]
    if above == target - 1 or alignment.deleted[index - 1]:
        return None
    if above is not None:
        return f"lines were added between lines {line - 1} and {line}, where your edit inserts"
    return f"the lines before line {line} align more than one way, so where to insert is unclear"


@dataclass(frozen=True, slots=True)
class _Moves:
    """Non-blank texts the person deleted in one place and inserted in another (moved lines),
    and which lines one diff left unmatched on each side."""

    texts: frozenset[str]
    snap: Sequence[str]
    live: Sequence[str]
    kept_snap: bytes
    kept_live: bytes

    @classmethod
    def find(cls, snap: Sequence[str], live: Sequence[str], alignment: Alignment) -> _Moves:
        kept_snap = _covered(len(snap), ((s, z) for s, _, z in alignment.equal))
        kept_live = _covered(len(live), ((j, z) for _, j, z in alignment.equal))
        gone = {snap[i] for i in range(len(snap)) if not kept_snap[i] and snap[i].strip()}
        new = {live[j] for j in range(len(live)) if not kept_live[j] and live[j].strip()}
        return cls(frozenset(gone & new), snap, live, bytes(kept_snap), bytes(kept_live))

    def beside(self, index: int, line: int, target: int) -> str | None:
        """A refusal when a moved line lies right next to snapshot line `index` (numbered
        `line` for the agent) or next to its live partner `target`."""
        if not self.texts:
            return None
        near = [self.snap[i] for i in (index - 1, index + 1) if _unkept(self.kept_snap, i)]
        near += [self.live[j] for j in (target - 1, target + 1) if _unkept(self.kept_live, j)]
        if any(text in self.texts for text in near):
            return f"lines right next to line {line} were moved, so its surroundings changed"
        return None


def _unkept(kept: bytes, index: int) -> bool:
    return 0 <= index < len(kept) and not kept[index]


def _covered(count: int, runs: Iterable[tuple[int, int]]) -> bytearray:
    flags = bytearray(count)
    for start, size in runs:
        flags[start : start + size] = b"\x01" * size
    return flags


def _fate(index: int, alignment: Alignment) -> str:
    """ "edited" when live lines took the deleted line's place, "deleted" when none did."""
    starts = [snap for snap, _, _ in alignment.equal]
    pos = bisect_right(starts, index) - 1
    live_from = alignment.equal[pos][1] + alignment.equal[pos][2] if pos >= 0 else 0
    following = alignment.equal[pos + 1][1] if pos + 1 < len(alignment.equal) else None
    live_to = alignment.live_count if following is None else following
    return "edited" if live_to > live_from else "deleted"


def moved_note(mapping: dict[int, int]) -> str:
    """In words: where the lines went (one offset for all, or each found on its own)."""
    if not mapping:
        return "the text changed elsewhere"
    lines = sorted(mapping)
    offsets = {mapping[n] - n for n in lines}
    single = lines[0] == lines[-1]
    noun = "line" if single else "lines"
    span = str(lines[0]) if single else f"{lines[0]}..{lines[-1]}"
    if len(offsets) > 1:
        return f"the text changed around {noun} {span}; each was found unchanged and edited there"
    offset = offsets.pop()
    if offset == 0:
        return f"the text changed elsewhere; {noun} {span} did not move"
    moved = str(lines[0] + offset) if single else f"{lines[0] + offset}..{lines[-1] + offset}"
    return f"{noun} {span} moved to {moved} since your read"


def _refusal(
    problems: dict[int, str], alignment: Alignment, context_rows: int, live_first: int
) -> RebaseRefusal:
    """The reasons, the changed live lines, and a window of `context_rows` rows each side of
    where the first few problem lines are now."""
    last = live_first + alignment.live_count - 1
    context: set[int] = set()
    for index in sorted(problems)[:MAX_WINDOWS]:
        centre = alignment.approximate_live(index) + live_first
        context.update(
            range(max(centre - context_rows, live_first), min(centre + context_rows, last) + 1)
        )
    changed = tuple(j + live_first for j in alignment.changed_live())
    reason = "; ".join(dict.fromkeys(problems[i] for i in sorted(problems)))
    return RebaseRefusal(reason, changed, tuple(sorted(context)))
