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
  is turned into its run without listing its numbers.
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
    runs: list[Run] = []
    first = last = None
    for n in sorted({int(n) for n in lines}):
        if last is not None and n == last + 1:
            last = n
            continue
        if first is not None and last is not None:
            runs.append((first, last))
        first = last = n
    if first is not None and last is not None:
        runs.append((first, last))
    return runs


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
