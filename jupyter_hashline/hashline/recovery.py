"""The plain text rule for a stale edit (DESIGN §2.5): rebase only when provably safe.

Given the snapshot an agent read, the live text and the lines the edit names (its anchors),
diff the two texts and map every anchor to an unchanged live line. The rule fails closed:

Invariants:
- An anchor maps only if it lies in a run of lines the diff found unchanged, together with its
  neighbours (the lines just above and below it in the snapshot), so the edit lands in the same
  surroundings the agent saw. An anchor at the start or end of the snapshot must still be at
  the start or end of the live text.
- All anchors move by ONE offset. Two anchors that moved by different amounts mean lines were
  added or removed between them; the edit is refused rather than guessed.
- A refusal names every problem and carries the changed live lines (1-based) to mark and the
  live lines to show as context around each anchor.
- Pure and deterministic: difflib on the lines between the common prefix and suffix.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from difflib import SequenceMatcher

from .filesystem import LineRebase, RebaseRefusal
from .text import split_lines

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
    snapshot_text: str, live_text: str, anchors: Iterable[int]
) -> LineRebase | RebaseRefusal:
    """Map every anchor (snapshot numbering) to the live text by one offset, or refuse."""
    snap, live = split_lines(snapshot_text), split_lines(live_text)
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
    prefix = 0
    limit = min(len(snap), len(live))
    while prefix < limit and snap[prefix] == live[prefix]:
        prefix += 1
    suffix = 0
    while suffix < limit - prefix and snap[-1 - suffix] == live[-1 - suffix]:
        suffix += 1
    blocks = [_Block(0, 0, prefix)] if prefix else []
    middle_snap = snap[prefix : len(snap) - suffix]
    middle_live = live[prefix : len(live) - suffix]
    matcher = SequenceMatcher(None, middle_snap, middle_live, autojunk=False)
    for a, b, size in matcher.get_matching_blocks():
        if size:
            blocks.append(_Block(prefix + a, prefix + b, size))
    if suffix:
        blocks.append(_Block(len(snap) - suffix, len(live) - suffix, suffix))
    return blocks


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
