"""Sets of line numbers as runs: how a store keeps the lines an agent was shown.

A whole read of a large notebook shows every one of its ~100,000 lines; kept one row per line,
recording that cost a quarter of a second and reading it back a twentieth. Kept as runs of
consecutive lines it is one row, and an edit's landed text (all of it seen but the few lines
around the edit) a handful.

Invariants:
- A run is `(first, last)` with `first <= last`, both inclusive. `runs_of` and `merge_runs`
  return runs sorted by `first`, pairwise disjoint and never adjacent (`last + 1 < next first`):
  one set of lines has exactly one such form, so equal sets give equal runs.
- `lines_of(runs_of(lines)) == frozenset(lines)` for any iterable of ints; a `range` of step 1
  is turned into its run without listing its numbers, and a sorted stretch without a gap (its
  span equals its length) into its run without walking it: the lines of an edit's landed text
  (all seen but a few) cost a sort and a few dozen comparisons.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from itertools import chain

__all__ = ["Run", "lines_of", "merge_runs", "runs_of"]

Run = tuple[int, int]


def runs_of(lines: Iterable[int]) -> list[Run]:
    """The runs of `lines` (any order, duplicates allowed)."""
    if isinstance(lines, range) and lines.step == 1:
        return [(lines.start, lines.stop - 1)] if len(lines) else []
    unique = lines if isinstance(lines, (set, frozenset)) else {int(n) for n in lines}
    numbers = sorted(unique)
    runs: list[Run] = []
    pending = [(0, len(numbers))] if numbers else []
    while pending:  # leftmost stretch first, so runs come out in order
        lo, hi = pending.pop()
        if numbers[hi - 1] - numbers[lo] == hi - 1 - lo:  # distinct and sorted: no gap inside
            _append(runs, numbers[lo], numbers[hi - 1])
        elif hi - lo <= _SCAN:
            for n in numbers[lo:hi]:
                _append(runs, n, n)
        else:
            middle = (lo + hi) // 2
            pending += [(middle, hi), (lo, middle)]
    return runs


_SCAN = 32  # below this many numbers a stretch with a gap is walked, not halved again


def _append(runs: list[Run], first: int, last: int) -> None:
    """Add `first..last` (after every run so far), joining the last run when adjacent."""
    if runs and runs[-1][1] + 1 == first:
        runs[-1] = (runs[-1][0], last)
    else:
        runs.append((first, last))


def merge_runs(*groups: Sequence[Run]) -> list[Run]:
    """The runs of the union of the runs in `groups` (each group in any order)."""
    merged: list[Run] = []
    for first, last in sorted(chain.from_iterable(groups)):
        if merged and first <= merged[-1][1] + 1:
            if last > merged[-1][1]:
                merged[-1] = (merged[-1][0], last)
            continue
        merged.append((first, last))
    return merged


def lines_of(runs: Iterable[Run]) -> frozenset[int]:
    """Every line of `runs`."""
    return frozenset(chain.from_iterable(range(first, last + 1) for first, last in runs))
