"""Line opcodes in difflib's format that cost about what changed, even when the changes are
spread across a big text.

`difflib.SequenceMatcher` finds the longest matching block and recurses on both sides of it;
each search walks the lines of its range, so n changes spread across a text cost about n passes
over it (1,000 one-line replacements in 1,000 cells of a 12,000-line notebook: 9 s of diffing
for one activity record). Here, for texts longer than `SMALL_LINES`, the lines that occur once
in each text are matched first, in order (their longest run that increases in both, as patience
diff does), and each gap between two such anchors is diffed the same way, down to gaps short
enough for difflib. Shorter texts go to difflib whole, so small diffs read as they always did.

Invariants:
- `line_opcodes(a, b)` returns opcodes `(tag, i1, i2, j1, j2)` as difflib's `get_opcodes` does:
  consecutive, covering both sequences in order, "equal" only over equal lines, no two "equal"
  ones in a row; replaying them turns `a` into `b`.
- Pure; cost about (n log n) for n lines plus difflib on gaps of at most `SMALL_LINES` lines
  (or on a longer gap in which no line occurs once on each side: repeated lines only).
"""

from __future__ import annotations

import difflib
from bisect import bisect_left
from collections import Counter
from collections.abc import Sequence

__all__ = ["SMALL_LINES", "Opcode", "line_opcodes"]

Opcode = tuple[str, int, int, int, int]

SMALL_LINES = 400
"""Texts (both sides together) of at most this many lines are diffed by difflib alone."""


def line_opcodes(a: Sequence[str], b: Sequence[str]) -> list[Opcode]:
    """The opcodes turning lines `a` into lines `b` (see the module docstring)."""
    codes: list[Opcode] = []
    _diff(a, b, 0, 0, codes)
    return _merged(codes)


def _diff(a: Sequence[str], b: Sequence[str], at_a: int, at_b: int, out: list[Opcode]) -> None:
    """Append the opcodes of `a` -> `b`, offset by `at_a` / `at_b`, to `out`."""
    anchors = _anchors(a, b) if len(a) + len(b) > SMALL_LINES else []
    if not anchors:
        matcher = difflib.SequenceMatcher(a=a, b=b, autojunk=False)
        out.extend(
            (tag, i1 + at_a, i2 + at_a, j1 + at_b, j2 + at_b)
            for tag, i1, i2, j1, j2 in matcher.get_opcodes()
        )
        return
    prev_a = prev_b = 0
    for i, j in (*anchors, (len(a), len(b))):
        if prev_a < i or prev_b < j:
            _diff(a[prev_a:i], b[prev_b:j], at_a + prev_a, at_b + prev_b, out)
        if i < len(a):  # the anchor itself (the sentinel past the ends is no line)
            out.append(("equal", at_a + i, at_a + i + 1, at_b + j, at_b + j + 1))
        prev_a, prev_b = i + 1, j + 1


def _anchors(a: Sequence[str], b: Sequence[str]) -> list[tuple[int, int]]:
    """Pairs (i, j) with a[i] == b[j] a line that occurs once in each, increasing in both i
    and j: the longest such run (patience sorting over j, in the order of i)."""
    in_a, in_b = Counter(a), Counter(b)
    where_b = {line: j for j, line in enumerate(b) if in_b[line] == 1}
    pairs = [(i, where_b[line]) for i, line in enumerate(a) if in_a[line] == 1 and line in where_b]
    tops: list[int] = []  # the j ending the best run of each length
    ends: list[int] = []  # index into pairs of that run's last pair
    back: list[int] = []  # for each pair, the pair before it in its best run (-1: none)
    for index, (_, j) in enumerate(pairs):
        length = bisect_left(tops, j)
        back.append(ends[length - 1] if length else -1)
        if length == len(tops):
            tops.append(j)
            ends.append(index)
        else:
            tops[length], ends[length] = j, index
    run: list[tuple[int, int]] = []
    index = ends[-1] if ends else -1
    while index >= 0:
        run.append(pairs[index])
        index = back[index]
    run.reverse()
    return run


def _merged(codes: list[Opcode]) -> list[Opcode]:
    """`codes` with "equal" opcodes that touch joined into one (gaps and anchors meet there)."""
    out: list[Opcode] = []
    for code in codes:
        if out and code[0] == "equal" and out[-1][0] == "equal":
            _, i1, _, j1, _ = out[-1]
            out[-1] = ("equal", i1, code[2], j1, code[4])
        else:
            out.append(code)
    return out
