"""Every longest common subsequence alignment of two short line lists, by brute force.

An independent reference for the three-way merge (hashline/threeway.py), which computes the
same facts with a banded dynamic programme: it enumerates each alignment (the set of matched
(snapshot line, live line) pairs) and never uses the engine's code.
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache

Pairs = frozenset[tuple[int, int]]


def all_alignments(snap: Sequence[str], live: Sequence[str], limit: int = 20_000) -> set[Pairs]:
    """Every maximum-length alignment of `snap` and `live` (raises past `limit` of them)."""
    n, m = len(snap), len(live)
    length = [[0] * (m + 1) for _ in range(n + 1)]
    for i in range(n - 1, -1, -1):
        for j in range(m - 1, -1, -1):
            best = max(length[i + 1][j], length[i][j + 1])
            if snap[i] == live[j]:
                best = max(best, length[i + 1][j + 1] + 1)
            length[i][j] = best

    @cache
    def walk(i: int, j: int) -> frozenset[Pairs]:
        if i == n or j == m:
            return frozenset({frozenset()})
        found: set[Pairs] = set()
        if snap[i] == live[j] and length[i][j] == length[i + 1][j + 1] + 1:
            found |= {rest | {(i, j)} for rest in walk(i + 1, j + 1)}
        if length[i + 1][j] == length[i][j]:
            found |= walk(i + 1, j)
        if length[i][j + 1] == length[i][j]:
            found |= walk(i, j + 1)
        if len(found) > limit:
            raise OverflowError("too many alignments to enumerate")
        return frozenset(found)

    return set(walk(0, 0))


def fates(alignments: set[Pairs], index: int) -> set[int | None]:
    """What snapshot line `index` becomes across the alignments: live lines, None = deleted."""
    out: set[int | None] = set()
    for pairs in alignments:
        partner = [j for i, j in pairs if i == index]
        out.add(partner[0] if partner else None)
    return out
