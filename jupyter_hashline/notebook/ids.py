"""Cell ids as the projection shows them, and fresh ids for new cells.

Invariants:
- `display_ids(nb)` is a pure function of the notebook: the same notebook always shows the same
  ids, and never the same id twice. A cell's own `id` is shown when it is a non-empty string
  without whitespace and no earlier cell has it; a later copy of an id (a JSON paste, a git
  merge) is shown as `<id>-<n>`, the first such name free in the notebook. Any other cell
  (nbformat < 4.5, or a 4.5 cell missing its id) gets an id derived from its position,
  `cell-<n>` (1-based), made unique against every real id of the notebook. These shown ids are
  what the first changing write persists, so ids an agent saw stay valid after that write.
- `IdNotes` says what a projection's ids do not say by themselves: which are derived from
  position, and which stand for an id several cells share (so no edit is guessed onto a copy).
- `fresh_id_factory` never returns an id already in use; its randomness is injectable.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Collection, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import repeat
from typing import Any

from nbformat.corpus.words import generate_corpus_id

IdSource = Callable[[], str]
"""Where fresh ids come from (default: nbformat's own generator, 8 random hex digits)."""

_SHOWABLE_ID = re.compile(r"\S+")
_MAX_ID = 64  # nbformat's limit; a copy's shown id must stay a valid id once stored


@dataclass(frozen=True, slots=True)
class DisplayIds:
    """The id shown for each cell, in order, and which of them are not the cell's own id."""

    ids: tuple[str, ...]
    derived: frozenset[int]  # indices of cells whose id is derived, not stored in the file
    copies: frozenset[int] = frozenset()  # indices of cells repeating an earlier cell's id


@dataclass(frozen=True, slots=True)
class IdNotes:
    """What a projection's shown ids hide: the derived ones, and for each cell whose stored id
    several cells share, its shown id -> that stored id."""

    derived: frozenset[str] = frozenset()
    shared: Mapping[str, str] = field(default_factory=dict)

    def __bool__(self) -> bool:
        return bool(self.derived or self.shared)


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
    """Ids for the projection: stored ids where usable and first, `<id>-<n>` for later copies,
    `cell-<n>` by position elsewhere."""
    try:  # cells are dicts but for odd callers: then one step per cell
        own = list(map(dict.get, cells, repeat("id")))  # type: ignore[arg-type]
    except TypeError:
        own = [cell.get("id") for cell in cells]
    return _plain(own) or ids_of(own)


def ids_of(own: Sequence[Any]) -> DisplayIds:
    """`display_ids` of cells whose `id` values are `own`, by the general rule (one step per
    cell; `display_ids` takes C-level shortcuts for the common cases)."""
    stored = [cid if isinstance(cid, str) and _SHOWABLE_ID.fullmatch(cid) else None for cid in own]
    taken = {cid for cid in stored if cid is not None}
    used: set[str] = set()
    ids: list[str] = []
    derived: set[int] = set()
    copies: set[int] = set()
    for index, cid in enumerate(stored):
        if cid is None:
            cid = _unique(f"cell-{index + 1}", taken)
            derived.add(index)
        elif cid in used:
            cid = _unique(cid[: _MAX_ID - 4], taken, first_suffix=2)
            copies.add(index)
        taken.add(cid)
        used.add(cid)
        ids.append(cid)
    return DisplayIds(tuple(ids), frozenset(derived), frozenset(copies))


def _plain(own: list[Any]) -> DisplayIds | None:
    """The display ids of the two common cases, found with a few C-level passes: every cell
    has its own distinct showable id (4.5), or no cell has an id at all (older notebooks)."""
    if own.count(None) == len(own):
        ids = tuple(f"cell-{n}" for n in range(1, len(own) + 1))
        return DisplayIds(ids, frozenset(range(len(own))))
    try:
        joined = " ".join(own)
    except TypeError:
        return None
    if joined.split() != own or len(set(own)) != len(own):  # blank, spaced or repeated ids
        return None
    return DisplayIds(tuple(own), frozenset())


def id_notes(cells: Sequence[Mapping[str, Any]], shown: DisplayIds) -> IdNotes:
    """The `IdNotes` of a notebook whose display ids are `shown`."""
    if not shown.copies:  # no stored id is shared: only the derived ones need a note
        return IdNotes(frozenset(shown.ids[i] for i in shown.derived))
    stored = [stored_id(cell) for cell in cells]
    count = Counter(cid for cid in stored if cid is not None)
    shared = {
        shown.ids[index]: cid
        for index, cid in enumerate(stored)
        if cid is not None and count[cid] > 1
    }
    return IdNotes(frozenset(shown.ids[i] for i in shown.derived), shared)


def _unique(base: str, taken: Collection[str], first_suffix: int = 1) -> str:
    suffix = first_suffix
    candidate = base if suffix == 1 else f"{base}-{suffix}"
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
