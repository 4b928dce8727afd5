"""The plain text rule for a stale edit: rebase only when provably safe.

Given the snapshot an agent read, the live text and the edit's footprint (the lines it names,
and the gaps it inserts into), map every named line to the live text, or refuse.

The rule is the three-way line merge of threeway.py: every named line must be the same live
line in every minimal diff of the two texts; a person's change next to it does not conflict,
an overlapping one (the line itself, or an insertion into the gap the edit inserts into) does;
repeated lines that align more than one way and moved lines next to the edit fail closed.

When the texts differ too much for that alignment to be computed within its budget, the older
neighbour rule applies instead, which is stricter still:
- an anchor maps only if it lies in a run of lines the diff found unchanged, together with its
  neighbours (the lines just above and below it in the snapshot); an anchor at the start or end
  of the snapshot must still be at the start or end of the live text;
- all anchors move by ONE offset; anchors that moved by different amounts are refused.

`carry_lines` maps line numbers from one text to another through unchanged lines only (the
lines an agent saw, kept seen when the storage changed a text it wrote).

Invariants:
- Fails closed; never guesses. A refusal names every problem and carries the changed live
  lines (1-based) to mark and the live lines to show as context around each anchor.
- Pure and deterministic.
"""

from __future__ import annotations

from bisect import bisect_right
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from .filesystem import Footprint, LineRebase, RebaseRefusal
from .text import common_prefix, common_suffix, line_count, split_lines
from .threeway import equal_runs, merge_lines

CONTEXT_ROWS = 2
_MAX_MARKED = 2000


@dataclass(frozen=True, slots=True)
class _Block:
    """A run of equal lines: snapshot lines [snap, snap + size) equal live [live, live + size)."""

    snap: int
    live: int
    size: int

    @property
    def offset(self) -> int:
        return self.live - self.snap


def rebase_by_text(
    snapshot_text: str, live_text: str, anchors: Iterable[int] | Footprint
) -> LineRebase | RebaseRefusal:
    """Map every named line (snapshot numbering) to the live text, or refuse.

    Plain line numbers are guarded on both sides, as if the edit inserted next to each.
    """
    footprint = Footprint.of(anchors)
    snap, live = split_lines(snapshot_text), split_lines(live_text)
    merged = merge_lines(snap, live, footprint, context_rows=CONTEXT_ROWS)
    if merged is not None:
        return merged
    return _neighbour_rule(snap, live, footprint.lines)


def _neighbour_rule(
    snap: Sequence[str], live: Sequence[str], anchors: Iterable[int]
) -> LineRebase | RebaseRefusal:
    """The strict rule for texts too different to align exactly (see the module docstring)."""
    blocks = equal_blocks(snap, live)
    wanted = sorted(set(anchors))
    offsets: dict[int, int] = {}
    problems: list[str] = []
    for line in wanted:
        offset, problem = _anchor_offset(line, blocks, snap, live)
        if problem:
            problems.append(problem)
        else:
            offsets[line] = offset
    if not problems and len(set(offsets.values())) > 1:
        problems.append(_uneven(offsets))
    if problems:
        return _refusal(problems, wanted, blocks, len(live))
    offset = next(iter(offsets.values()), 0)
    return LineRebase({line: line + offset for line in wanted}, (_moved_note(wanted, offset),))


def equal_blocks(snap: Sequence[str], live: Sequence[str]) -> list[_Block]:
    """Runs of equal lines (0-based), ordered, from the common ends plus difflib in between."""
    return [_Block(a, b, size) for a, b, size in equal_runs(snap, live)]


def _find(blocks: Sequence[_Block], index: int) -> _Block | None:
    pos = bisect_right([b.snap for b in blocks], index) - 1
    if pos >= 0 and index < blocks[pos].snap + blocks[pos].size:
        return blocks[pos]
    return None


def _anchor_offset(
    line: int, blocks: Sequence[_Block], snap: Sequence[str], live: Sequence[str]
) -> tuple[int, str | None]:
    index = line - 1
    block = _find(blocks, index)
    if block is None:
        return 0, f"line {line} itself was {_fate(index, blocks)}"
    for neighbour in (index - 1, index + 1):
        if 0 <= neighbour < len(snap):
            if _find(blocks, neighbour) is not block:
                return 0, f"the line next to line {line} (line {neighbour + 1}) changed"
        else:
            live_neighbour = neighbour + block.offset
            if 0 <= live_neighbour < len(live):
                edge = "above" if neighbour < index else "below"
                return 0, f"lines were added {edge} line {line} at the edge of the file"
    return block.offset, None


def _fate(index: int, blocks: Sequence[_Block]) -> str:
    """ "edited" when live lines replaced the snapshot line, "deleted" when none did."""
    pos = bisect_right([b.snap for b in blocks], index) - 1
    live_from = blocks[pos].live + blocks[pos].size if pos >= 0 else 0
    live_to = blocks[pos + 1].live if pos + 1 < len(blocks) else None
    if live_to is None:
        return "edited or deleted"
    return "edited" if live_to > live_from else "deleted"


def _uneven(offsets: dict[int, int]) -> str:
    moves = ", ".join(f"line {line} by {offset:+d}" for line, offset in sorted(offsets.items()))
    return (
        "lines were added or removed between your edits, so they moved by different amounts "
        f"({moves})"
    )


def _moved_note(lines: Sequence[int], offset: int) -> str:
    if not lines:
        return "the file changed elsewhere"
    single = lines[0] == lines[-1]
    noun = "line" if single else "lines"
    span = str(lines[0]) if single else f"{lines[0]}..{lines[-1]}"
    if offset == 0:
        return f"the file changed elsewhere; {noun} {span} did not move"
    moved = str(lines[0] + offset) if single else f"{lines[0] + offset}..{lines[-1] + offset}"
    return f"{noun} {span} moved to {moved} since your read"


def changed_live_lines(blocks: Sequence[_Block], live_count: int) -> list[int]:
    """Live lines (1-based) outside every equal run: added or edited since the snapshot."""
    equal = bytearray(live_count)
    for block in blocks:
        equal[block.live : block.live + block.size] = b"\x01" * block.size
    return [i + 1 for i, flag in enumerate(equal) if not flag][:_MAX_MARKED]


def _approximate_live(line: int, blocks: Sequence[_Block]) -> int:
    """Where snapshot `line` would be in the live text, by the nearest run at or above it."""
    pos = bisect_right([b.snap for b in blocks], line - 1) - 1
    return line + (blocks[pos].offset if pos >= 0 else 0)


def _refusal(
    problems: Sequence[str], anchors: Sequence[int], blocks: Sequence[_Block], live_count: int
) -> RebaseRefusal:
    context: set[int] = set()
    for line in anchors:
        centre = _approximate_live(line, blocks)
        context.update(range(centre - CONTEXT_ROWS, centre + CONTEXT_ROWS + 1))
    shown = tuple(sorted(n for n in context if 1 <= n <= live_count))
    reason = "; ".join(dict.fromkeys(problems))
    return RebaseRefusal(reason, tuple(changed_live_lines(blocks, live_count)), shown)


def carry_lines(before: str, after: str, lines: Iterable[int]) -> frozenset[int]:
    """The lines of `after` that are `lines` of `before` carried through unchanged lines only
    (1-based): a line that changed between the two texts is never carried.

    The alignment is the patience rule: common ends, then lines unique in both texts taken in
    order (the longest increasing run of them), each extended over equal neighbours. It never
    pairs lines of different text nor crosses pairs; a line it cannot place is not carried
    (the agent is shown it again), so it may carry less than a minimal diff, never more, in
    O(n log n) where a minimal diff of a large notebook would cost seconds."""
    wanted = set(lines)
    if before == after or not wanted:
        return frozenset(wanted) if before == after else frozenset()
    head, tail, count, shift = _equal_ends(before, after)
    if all(line <= head or count - tail < line <= count for line in wanted):
        return frozenset(  # every line is in the equal ends: the middle need not be aligned
            line if line <= head else line + shift for line in wanted if 1 <= line <= count
        )
    return frozenset(
        new + 1 for old, new in aligned_pairs(split_lines(before), split_lines(after))
        if old + 1 in wanted
    )  # fmt: skip


def _equal_ends(before: str, after: str) -> tuple[int, int, int, int]:
    """The equal lines `aligned_pairs` starts and ends with (how many at the head, at the
    tail), `before`'s line count, and how far the tail moved; found by comparing characters
    (a block at a time), not lines, so a long text with a change or two costs little."""
    old = before if before.endswith("\n") or not before else before + "\n"
    new = after if after.endswith("\n") or not after else after + "\n"
    # every line now ends with a line break: equal lines are equal stretches of characters
    prefix = common_prefix(old, new)
    head = old.count("\n", 0, prefix)
    start = old.rfind("\n", 0, prefix) + 1  # where the first unequal line starts (both texts)
    suffix = common_suffix(old, new, min(len(old), len(new)) - start)
    cut, new_cut = len(old) - suffix, len(new) - suffix  # where the suffix starts in each
    # its first line is whole only where a line starts there in both texts
    whole = (cut == 0 or old[cut - 1] == "\n") and (new_cut == 0 or new[new_cut - 1] == "\n")
    tail = max(old.count("\n", cut) - (0 if whole else 1), 0)
    count = line_count(before)
    return head, tail, count, line_count(after) - count


def aligned_pairs(old: Sequence[str], new: Sequence[str]) -> list[tuple[int, int]]:
    """Equal lines (0-based old, new index), increasing in both (see `carry_lines`)."""
    n, m = len(old), len(new)
    head = 0
    while head < min(n, m) and old[head] == new[head]:
        head += 1
    tail = 0
    while tail < min(n, m) - head and old[n - 1 - tail] == new[m - 1 - tail]:
        tail += 1
    pairs = [(k, k) for k in range(head)]
    pairs += _anchored(old, new, (head, n - tail), (head, m - tail))
    pairs += [(n - tail + k, m - tail + k) for k in range(tail)]
    return pairs


def _anchored(
    old: Sequence[str], new: Sequence[str], old_span: tuple[int, int], new_span: tuple[int, int]
) -> list[tuple[int, int]]:
    """Walk both texts in step while lines are equal; at a difference, resume at the next old
    line that is unique in both texts and lies ahead in the new one (extended back over equal
    neighbours). Pairs are equal lines, increasing in both texts."""
    (a0, a1), (b0, b1) = old_span, new_span
    in_old = Counter(old[a0:a1])
    in_new = Counter(new[b0:b1])
    where_new = {line: j for j, line in enumerate(new[b0:b1], b0) if in_new[line] == 1}
    pairs: list[tuple[int, int]] = []
    i, j = a0, b0
    while i < a1 and j < b1:
        if old[i] == new[j]:
            pairs.append((i, j))
            i, j = i + 1, j + 1
            continue
        anchor = _next_anchor(old, i + 1, a1, j, in_old, where_new)
        if anchor is None:
            break
        ai, aj = anchor
        back: list[tuple[int, int]] = []
        bi, bj = ai - 1, aj - 1
        while bi >= i and bj >= j and old[bi] == new[bj]:
            back.append((bi, bj))
            bi, bj = bi - 1, bj - 1
        pairs.extend(reversed(back))
        i, j = ai, aj
    return pairs


def _next_anchor(
    old: Sequence[str],
    start: int,
    stop: int,
    floor: int,
    in_old: Counter[str],
    where_new: dict[str, int],
) -> tuple[int, int] | None:
    for i in range(start, stop):
        line = old[i]
        j = where_new.get(line)
        if j is not None and j >= floor and in_old[line] == 1:
            return i, j
    return None
