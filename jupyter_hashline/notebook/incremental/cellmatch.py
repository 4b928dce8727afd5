"""Which cells of a new version of a notebook are the very objects of an old version, and where.

An edit or a person's save changes a few cells; every other cell of the new version is the same
object as in the old one (the notebook layer never changes a cell in place: it copies the cells
it changes). `match_cells(old, new)` finds the runs of shared cells at the start and at the end
by identity in C, element by element, and looks up only the cells between those runs, so work
that depends on what changed (validation, repairs, reusing bytes, projecting) costs what
changed, not what the notebook holds.

Invariants:
- `old_index(k)` is the index in `old` of the object at `new[k]`, or None when `old` does not
  hold that object; no match is ever claimed for a different object.
- `fresh()` lists, in order, the cells of `new` that are not objects of `old`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import islice, takewhile
from operator import is_, truth
from typing import Any

__all__ = ["CellMatch", "match_cells"]


@dataclass(frozen=True, slots=True)
class CellMatch:
    """`head` cells shared at the start, `tail` at the end, and `between` (new index -> old
    index) for shared cells between those runs."""

    head: int
    tail: int
    old_count: int
    new_count: int
    between: Mapping[int, int]

    def old_index(self, new_index: int) -> int | None:
        if new_index < self.head:
            return new_index
        if new_index >= self.new_count - self.tail:
            return new_index - self.new_count + self.old_count
        return self.between.get(new_index)

    def new_index(self, old_index: int) -> int | None:
        """Where the object at `old[old_index]` is in `new` (None: not there)."""
        if old_index < self.head:
            return old_index
        if old_index >= self.old_count - self.tail:
            return old_index - self.old_count + self.new_count
        return next((k for k, i in self.between.items() if i == old_index), None)

    def fresh(self) -> list[int]:
        return [k for k in range(self.head, self.new_count - self.tail) if k not in self.between]


def match_cells(old: Sequence[Any], new: Sequence[Any]) -> CellMatch:
    """Match the cells of `new` to the very objects of `old` (see the module docstring)."""
    head = len(list(takewhile(truth, map(is_, old, new))))
    limit = min(len(old), len(new)) - head
    tail = len(list(islice(takewhile(truth, map(is_, reversed(old), reversed(new))), limit)))
    inner = {id(cell): index for index, cell in enumerate(old[head : len(old) - tail], head)}
    between = {}
    for index, cell in enumerate(new[head : len(new) - tail], head):
        found = inner.get(id(cell))
        if found is not None and old[found] is cell:
            between[index] = found
    return CellMatch(head, tail, len(old), len(new), between)
