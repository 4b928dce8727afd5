"""Cell ids as the projection shows them, and fresh ids for new cells.

Invariants:
- `display_ids(nb)` is a pure function of the notebook: the same notebook always shows the same
  ids. A cell's own `id` is shown when it is a non-empty string without whitespace; any other
  cell (nbformat < 4.5, or a 4.5 cell missing its id) gets an id derived from its position,
  `cell-<n>` (1-based), made unique against every real id of the notebook. These derived ids are
  what the first changing write persists, so ids an agent saw stay valid after that write.
- `fresh_id_factory` never returns an id already in use; its randomness is injectable.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from nbformat.corpus.words import generate_corpus_id

IdSource = Callable[[], str]
"""Where fresh ids come from (default: nbformat's own generator, 8 random hex digits)."""

_SHOWABLE_ID = re.compile(r"\S+")


@dataclass(frozen=True, slots=True)
class DisplayIds:
    """The id shown for each cell, in order, and which of them are derived from position."""

    ids: tuple[str, ...]
    derived: frozenset[int]  # indices of cells whose id is derived, not stored in the file


def is_legacy(nb: Mapping[str, Any]) -> bool:
    """True for notebooks older than nbformat 4.5 (no cell ids in the format)."""
    return (nb.get("nbformat", 4), nb.get("nbformat_minor", 0)) < (4, 5)


def stored_id(cell: Mapping[str, Any]) -> str | None:
    """The cell's own id when the projection can show it as is, else None."""
    cid = cell.get("id")
    if isinstance(cid, str) and _SHOWABLE_ID.fullmatch(cid):
        return cid
    return None


def display_ids(cells: Sequence[Mapping[str, Any]]) -> DisplayIds:
    """Ids for the projection: stored ids where usable, `cell-<n>` by position elsewhere."""
    stored = [stored_id(cell) for cell in cells]
    taken = {cid for cid in stored if cid is not None}
    ids: list[str] = []
    derived: set[int] = set()
    for index, cid in enumerate(stored):
        if cid is None:
            cid = _unique(f"cell-{index + 1}", taken)
            taken.add(cid)
            derived.add(index)
        ids.append(cid)
    return DisplayIds(tuple(ids), frozenset(derived))


def _unique(base: str, taken: Collection[str]) -> str:
    candidate, suffix = base, 1
    while candidate in taken:
        suffix += 1
        candidate = f"{base}-{suffix}"
    return candidate


def fresh_id_factory(taken: set[str], source: IdSource | None = None) -> IdSource:
    """A function returning ids not in `taken` (and adding each one it returns to `taken`)."""
    generate = source or generate_corpus_id

    def fresh() -> str:
        for _ in range(1000):
            cid = generate()
            if cid not in taken:
                taken.add(cid)
                return cid
        raise RuntimeError("the cell id source keeps returning ids that are already in use")

    return fresh
