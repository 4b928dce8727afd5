"""Proposals: an agent's edit kept for a person's review instead of landing (review mode).

A proposal holds the text its edit was made on (`base`, recorded under `base_tag`) and the
text the edit would make (`target`), and, between them, hunks: edits of `base` by line number,
each labelled with the cells it touches (a cell id; `new-N` for the Nth cell the target adds
without an id; `file` for a text file or lines above the first cell). Accepting some cells
applies the hunks whose cells are all accepted, as an ordinary edit tagged `base_tag`, through
the engine's stale-edit rebase (workspace.py): so a person's changes made meanwhile are kept,
or the accept is refused when they touch the same lines.

Invariants:
- Values are frozen; `ProposalBook` replaces a proposal whole when a decision changes it.
- Hunks never overlap and are in `base`'s line numbers; a set of cells closed under
  `together` (cells one hunk changes jointly) picks hunks that apply exactly to `base`.
- After a partial decision, `base` is the base with the accepted hunks applied and `target`
  the base with every hunk not rejected applied, and the hunks are derived anew from the two:
  a cell is never applied twice and a rejected cell never lands.
- A cell is decided once: accepted or rejected cells are never pending again.
- Notices of decisions wait per agent until its next read, edit or write takes them, once.
"""

from __future__ import annotations

import difflib
import re
import threading
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from enum import Enum
from typing import Any

from ..hashline.apply import apply_edits
from ..hashline.edits import Edit, EditOp
from ..hashline.line_diff import line_opcodes
from ..hashline.text import split_lines
from .errors import BadArgumentsError

__all__ = [
    "Hunk",
    "Proposal",
    "ProposalBook",
    "ProposedCell",
    "ReviewMode",
    "ReviewPolicy",
    "new_cell_names",
    "proposal_hunks",
]

_MARKER = re.compile(r"^# %% \[[^\]]*\]")
_MARKER_ID = re.compile(r"^# %% \[[^\]]*\](?:.* )?id=(\S+)")
FILE_KEY = "file"


class ReviewMode(str, Enum):
    """Whether an agent's edits and writes land (off) or wait for a person's review (on)."""

    OFF = "off"
    ON = "on"


@dataclass(frozen=True, slots=True)
class ReviewPolicy:
    """The server-wide mode and per-agent choices; a call's own `propose` adds to both."""

    mode: ReviewMode = ReviewMode.OFF
    agents: Mapping[str, ReviewMode] = field(default_factory=dict)
    self_accept: bool = False  # may the agent that proposed an edit accept it itself

    def proposes(self, agent: str, asked: bool | None) -> bool:
        """Whether `agent`'s call (with `propose` = `asked`) becomes a proposal."""
        return bool(asked) or self.agents.get(agent, self.mode) is ReviewMode.ON

    def with_mode(self, mode: ReviewMode, agent: str | None = None) -> ReviewPolicy:
        if agent is None:
            return replace(self, mode=mode)
        return replace(self, agents={**self.agents, agent: mode})

    def to_json(self) -> dict[str, Any]:
        return {
            "mode": self.mode.value,
            "agents": {name: mode.value for name, mode in sorted(self.agents.items())},
        }


@dataclass(frozen=True, slots=True)
class Hunk:
    """One change of a proposal: base lines `start`..`stop` (0-based, half-open) become
    `rows`; `cells` are the cells it touches."""

    start: int
    stop: int
    rows: tuple[str, ...]
    cells: frozenset[str]
    before_next: bool = False  # an insert the agent anchored on the line after it

    @property
    def delta(self) -> int:
        """How many lines longer the text gets with it."""
        return len(self.rows) - (self.stop - self.start)

    def moved(self, by: int) -> Hunk:
        return replace(self, start=self.start + by, stop=self.stop + by)

    def edit(self) -> Edit:
        """The edit, anchored as the agent anchored it (a rebase follows the anchor line)."""
        if self.before_next and self.start == self.stop:
            return Edit.insert_before(self.start + 1, list(self.rows))
        return _edit(self.start, self.stop, self.rows)


@dataclass(frozen=True, slots=True)
class ProposedCell:
    """What a proposal does to one cell, as a person reviews it."""

    cell: str
    kind: str  # changed | inserted | deleted
    status: str  # pending | accepted | rejected
    after_cell: str | None  # an inserted cell: the cell of the base it follows (None: first)
    together: tuple[str, ...]  # cells that must be decided with this one
    before: str
    after: str
    diff: str

    def to_json(self) -> dict[str, Any]:
        return {
            "cell": self.cell,
            "kind": self.kind,
            "status": self.status,
            "after_cell": self.after_cell,
            "together": list(self.together),
            "before": self.before,
            "after": self.after,
            "diff": self.diff,
        }


@dataclass(frozen=True, slots=True)
class Proposal:
    """One agent's proposed change of one file (see the module docstring)."""

    id: int
    path: str
    key: str  # the file's store key (its canonical path)
    agent: str
    at_ms: int
    base_tag: str
    header: str
    base: str = field(repr=False)
    target: str = field(repr=False)
    notebook: bool
    create: bool = False  # a new file: accepting writes `target` (the base is nothing)
    decided: Mapping[str, ProposedCell] = field(default_factory=dict)  # by cell key
    note: str = ""
    hunks: tuple[Hunk, ...] = field(default=(), repr=False)
    new_cells: tuple[str, ...] = ()  # the keys of the target's id-less markers, in order

    @property
    def pending(self) -> tuple[ProposedCell, ...]:
        """The cells still waiting for a decision."""
        return _cells(self)

    @property
    def status(self) -> str:
        if self.pending:
            return "pending"
        states = {cell.status for cell in self.decided.values()}
        if states == {"accepted"}:
            return "accepted"
        return "rejected" if states == {"rejected"} else "partly accepted"

    def keys(self) -> frozenset[str]:
        return frozenset(cell for hunk in self.hunks for cell in hunk.cells)

    def choose(self, cells: Sequence[str] | None) -> frozenset[str]:
        """The cells a decision names (None: every pending one), checked: pending, and every
        cell changed together with a named one named too."""
        keys = self.keys()
        if cells is None:
            return keys
        chosen = frozenset(cells)
        unknown = sorted(chosen - keys)
        if unknown:
            decided = [key for key in unknown if key in self.decided]
            if decided:
                raise BadArgumentsError(
                    f"Proposal {self.id}: cell(s) {', '.join(decided)} already decided "
                    f"({', '.join(self.decided[k].status for k in decided)}). Nothing was done."
                )
            raise BadArgumentsError(
                f"Proposal {self.id} has no pending cell {', '.join(unknown)}; its pending "
                f"cells: {', '.join(sorted(keys)) or 'none'}. Nothing was done."
            )
        for hunk in self.hunks:
            if hunk.cells & chosen and not hunk.cells <= chosen:
                raise BadArgumentsError(
                    f"Proposal {self.id}: cells {', '.join(sorted(hunk.cells))} changed in one "
                    "piece, so they are decided together; name them all. Nothing was done."
                )
        return chosen

    def edits_for(self, chosen: frozenset[str]) -> tuple[Edit, ...]:
        """The edits of `base` that make the changes of `chosen` cells (hunks that touch
        each other are one edit)."""
        return _edits([hunk for hunk in self.hunks if hunk.cells <= chosen])

    def decide(self, chosen: frozenset[str], status: str, note: str = "") -> Proposal:
        """This proposal with `chosen` cells accepted or rejected (`status`): accepted
        hunks join the base (the later hunks move by their length), rejected ones leave the
        target; the hunks left are the same changes, never derived anew."""
        cells = {cell.cell: replace(cell, status=status) for cell in self.pending}
        decided = {**self.decided, **{key: cells[key] for key in sorted(chosen) if key in cells}}
        picked = [hunk for hunk in self.hunks if hunk.cells <= chosen]
        rest = [hunk for hunk in self.hunks if not hunk.cells <= chosen]
        base, target, names = self.base, self.target, self.new_cells
        if status == "accepted":
            base = apply_edits(base, _edits(picked), exact=True).text
            rest = [
                hunk.moved(sum(p.delta for p in picked if p.stop <= hunk.start)) for hunk in rest
            ]
        else:
            target = apply_edits(base, _edits(rest), exact=True).text
            names = tuple(name for name in names if name not in chosen)
        return replace(
            self,
            base=base,
            target=target,
            new_cells=names,
            hunks=tuple(rest),
            decided=decided,
            note=note or self.note,
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "path": self.path,
            "agent": self.agent,
            "at_ms": self.at_ms,
            "status": self.status,
            "header": self.header,
            "note": self.note,
            "text_file": not self.notebook,
            "cells": [cell.to_json() for cell in (*self.pending, *self.decided.values())],
        }


def new_cell_names(target: str) -> tuple[str, ...]:
    """`new-1`, `new-2`, ...: one key for each id-less marker of `target`."""
    count = sum(
        1 for row in split_lines(target) if _MARKER.match(row) and not _MARKER_ID.match(row)
    )
    return tuple(f"new-{n}" for n in range(1, count + 1))


def proposal_hunks(
    base: str,
    target: str,
    notebook: bool,
    names: Sequence[str],
    alignment: Sequence[tuple[int, int, int]] | None = None,
    placed: Sequence[Edit] = (),
) -> tuple[Hunk, ...]:
    """The hunks between `base` and `target`, each labelled with the cells it touches;
    `names` are the keys of the target's id-less markers (the cells it adds), in order.
    `alignment` is the edit's own (the unchanged runs `(old_first, old_last, new_first)`,
    1-based, that applying it reported): where lines repeat, a diff of the two texts could
    place a change elsewhere than the agent did; without it, the texts are diffed. `placed`
    are the edit's own operations: an insert keeps the anchor line the agent gave it."""
    before = {e.start - 1 for e in placed if e.op is EditOp.INSERT_BEFORE}
    after = {e.start for e in placed if e.op is EditOp.INSERT_AFTER}
    old, new = split_lines(base), split_lines(target)
    old_cells = _cell_of_lines(old) if notebook else [FILE_KEY] * len(old)
    new_keys = _new_keys(new, names)
    opcodes = (
        _gaps(alignment, len(old), len(new))
        if alignment is not None
        else (
            (op, a1, a2, b1, b2) for op, a1, a2, b1, b2 in line_opcodes(old, new) if op != "equal"
        )
    )
    hunks: list[Hunk] = []
    for _op, a1, a2, b1, b2 in _split_at_markers(opcodes, old, new, notebook):
        if old[a1:a2] == new[b1:b2]:
            continue  # rows sent as they were: no change
        if notebook:
            cells = _hunk_cells(old_cells, new_keys, new, a1, a2, b1, b2)
        else:
            cells = frozenset({FILE_KEY})
        before_next = a1 == a2 and a1 in before and a1 not in after
        hunks.append(Hunk(a1, a2, tuple(new[b1:b2]), cells, before_next))
    return tuple(hunks)


def _gaps(
    alignment: Sequence[tuple[int, int, int]], old_count: int, new_count: int
) -> Iterable[tuple[str, int, int, int, int]]:
    """The changed spans between the unchanged runs of an alignment, as opcodes (0-based)."""
    old_at = new_at = 0
    for old_first, old_last, new_first in (*alignment, (old_count + 1, old_count, new_count + 1)):
        a1, a2, b1, b2 = old_at, old_first - 1, new_at, new_first - 1
        if a1 < a2 or b1 < b2:
            yield (
                ("replace" if a1 < a2 and b1 < b2 else "delete" if a1 < a2 else "insert"),
                a1,
                a2,
                b1,
                b2,
            )
        old_at, new_at = old_last, new_first - 1 + (old_last - old_first + 1)


def _edits(hunks: Sequence[Hunk]) -> tuple[Edit, ...]:
    """One edit per run of hunks that touch each other (in base order)."""
    merged: list[Hunk] = []
    for hunk in sorted(hunks, key=lambda h: (h.start, h.stop)):
        if merged and merged[-1].stop == hunk.start:
            last = merged[-1]
            merged[-1] = replace(last, stop=hunk.stop, rows=last.rows + hunk.rows)
        else:
            merged.append(hunk)
    return tuple(hunk.edit() for hunk in merged)


class ProposalBook:
    """The proposals of one workspace, the notices waiting for agents, and listeners.

    Thread-safe; listeners hear `(proposal, action)` once per change, outside the lock."""

    def __init__(self, limit: int = 500, clock: Callable[[], float] = time.time) -> None:
        self._lock = threading.Lock()
        self._proposals: dict[int, Proposal] = {}
        self._next = 1
        self._limit = limit
        self._clock = clock
        self._notices: dict[str, list[str]] = {}
        self._listeners: list[Callable[[Proposal, str], None]] = []

    def add(self, **values: Any) -> Proposal:
        """Keep a new proposal (its id and time are the book's)."""
        with self._lock:
            proposal = Proposal(id=self._next, at_ms=int(self._clock() * 1000), **values)
            self._next += 1
            self._proposals[proposal.id] = proposal
            while len(self._proposals) > self._limit:
                oldest = next(iter(self._proposals))
                del self._proposals[oldest]
        self._tell(proposal, "proposed")
        return proposal

    def get(self, proposal_id: int) -> Proposal | None:
        with self._lock:
            return self._proposals.get(proposal_id)

    def listed(self, path: str | None = None, pending_only: bool = False) -> list[Proposal]:
        """Proposals (of `path`), newest first."""
        with self._lock:
            found = list(self._proposals.values())
        found = [p for p in found if path is None or p.path == path]
        if pending_only:
            found = [p for p in found if p.pending]
        return sorted(found, key=lambda p: p.id, reverse=True)

    def update(self, proposal: Proposal, action: str, notice: str | None = None) -> None:
        """Keep `proposal` as it is now; `notice` waits for its agent's next call."""
        with self._lock:
            self._proposals[proposal.id] = proposal
            if notice:
                self._notices.setdefault(proposal.agent, []).append(notice)
        self._tell(proposal, action)

    def take_notices(self, agent: str) -> tuple[str, ...]:
        with self._lock:
            return tuple(self._notices.pop(agent, ()))

    def subscribe(self, listener: Callable[[Proposal, str], None]) -> Callable[[], None]:
        with self._lock:
            self._listeners.append(listener)

        def stop() -> None:
            with self._lock:
                if listener in self._listeners:
                    self._listeners.remove(listener)

        return stop

    def _tell(self, proposal: Proposal, action: str) -> None:
        with self._lock:
            listeners = list(self._listeners)
        for listener in listeners:
            listener(proposal, action)


# -- cells of a proposal -------------------------------------------------------------------------


def _cells(proposal: Proposal) -> tuple[ProposedCell, ...]:
    """The pending cells, in order of their first hunk."""
    order: list[str] = []
    together: dict[str, set[str]] = {}
    for hunk in proposal.hunks:
        for key in sorted(hunk.cells):
            if key not in together:
                order.append(key)
                together[key] = set()
            together[key] |= hunk.cells - {key}
    if not order:
        return ()
    base_lines, target_lines = split_lines(proposal.base), split_lines(proposal.target)
    if not proposal.notebook:
        before, after = proposal.base, proposal.target
        return (_cell(FILE_KEY, "changed", None, (), before, after),)
    old = _sources(base_lines, _cell_of_lines(base_lines))
    new_keys = _new_keys(target_lines, proposal.new_cells)
    new = _sources(target_lines, _owners(target_lines, new_keys))
    follows = _follows(target_lines, new_keys, set(old))
    cells = []
    for key in order:
        kind = "changed" if key in old and key in new else "deleted" if key in old else "inserted"
        if key == FILE_KEY:
            kind = "changed"
        cells.append(
            _cell(
                key,
                kind,
                follows.get(key) if kind == "inserted" else None,
                tuple(sorted(together[key])),
                old.get(key, ""),
                new.get(key, ""),
            )
        )
    return tuple(cells)


def _cell(
    key: str, kind: str, after_cell: str | None, together: tuple[str, ...], before: str, after: str
) -> ProposedCell:
    diff = "".join(
        difflib.unified_diff(before.splitlines(keepends=True), after.splitlines(keepends=True), n=2)
    )
    return ProposedCell(key, kind, "pending", after_cell, together, before, after, diff)


def _cell_of_lines(lines: Sequence[str]) -> list[str]:
    """For each line, the cell it belongs to (its marker's id; `file` above the first)."""
    return [cell for _, cell in _cell_index(lines)]


def _owners(lines: Sequence[str], new_keys: Mapping[int, str]) -> list[str]:
    """For each line of a target, its cell: an id, a new cell's key, or `file`."""
    return [
        new_keys.get(int(cell[1:]), cell) if cell.startswith("@") else cell
        for _, cell in _cell_index(lines)
    ]


def _cell_index(lines: Sequence[str]) -> Iterable[tuple[int, str]]:
    current = FILE_KEY
    for index, row in enumerate(lines):
        if _MARKER.match(row):
            found = _MARKER_ID.match(row)
            current = found.group(1) if found else f"@{index}"
        yield index, current


def _new_keys(lines: Sequence[str], names: Sequence[str]) -> dict[int, str]:
    """The keys of the id-less markers of `lines` (`names`, in order), by line index."""
    return dict(zip(_idless(lines), names, strict=False))


def _idless(lines: Sequence[str]) -> list[int]:
    """The indices of the marker lines that carry no id (cells an edit adds)."""
    return [i for i, row in enumerate(lines) if _MARKER.match(row) and not _MARKER_ID.match(row)]


def _sources(lines: Sequence[str], owners: Sequence[str]) -> dict[str, str]:
    """Each cell's rows below its marker, as text."""
    rows: dict[str, list[str]] = {}
    for row, owner in zip(lines, owners, strict=True):
        if owner == FILE_KEY:
            continue
        if owner not in rows:
            rows[owner] = []
            continue  # the marker itself
        rows[owner].append(row)
    return {key: "".join(r + "\n" for r in value) for key, value in rows.items()}


def _follows(lines: Sequence[str], new_keys: Mapping[int, str], known: set[str]) -> dict[str, str]:
    """For each new cell, the nearest cell above it that the base has (absent: it is first)."""
    follows: dict[str, str] = {}
    last: str | None = None
    for index, row in enumerate(lines):
        if index in new_keys:
            if last is not None:
                follows[new_keys[index]] = last
            continue
        found = _MARKER_ID.match(row)
        if found and found.group(1) in known:
            last = found.group(1)
    return follows


def _hunk_cells(
    old_cells: Sequence[str],
    new_keys: Mapping[int, str],
    new: Sequence[str],
    a1: int,
    a2: int,
    b1: int,
    b2: int,
) -> frozenset[str]:
    cells = set(old_cells[a1:a2])
    starts_cell = b1 < b2 and bool(_MARKER.match(new[b1]))
    if a1 == a2 and not starts_cell:  # rows added inside the cell above
        cells.add(old_cells[a1 - 1] if a1 > 0 else FILE_KEY)
    for index in range(b1, b2):
        row = new[index]
        if index in new_keys:
            cells.add(new_keys[index])
        elif found := _MARKER_ID.match(row):
            cells.add(found.group(1))
    if not cells:
        cells.add(FILE_KEY)
    return frozenset(cells)


def _split_at_markers(
    opcodes: Iterable[tuple[str, int, int, int, int]],
    old: Sequence[str],
    new: Sequence[str],
    notebook: bool,
) -> Iterable[tuple[str, int, int, int, int]]:
    """Opcodes with a replace split where one side starts a new cell midway: the change of
    the cell above, then the cells added (or removed) after it, decided apart."""
    for op, a1, a2, b1, b2 in opcodes:
        if not notebook or op != "replace":
            yield op, a1, a2, b1, b2
            continue
        old_at = _first_marker(old, a1, a2)
        new_at = _first_marker(new, b1, b2)
        if old_at is None and new_at is not None and new_at > b1:
            yield "replace", a1, a2, b1, new_at
            yield "insert", a2, a2, new_at, b2
        elif new_at is None and old_at is not None and old_at > a1:
            yield "replace", a1, old_at, b1, b2
            yield "delete", old_at, a2, b2, b2
        else:
            yield op, a1, a2, b1, b2


def _first_marker(lines: Sequence[str], start: int, stop: int) -> int | None:
    return next((i for i in range(start, stop) if _MARKER.match(lines[i])), None)


def _edit(a1: int, a2: int, rows: Sequence[str]) -> Edit:
    """The edit of the base (1-based lines) that puts `rows` in place of lines a1..a2."""
    if a1 < a2:
        return Edit.replace(a1 + 1, a2, list(rows)) if rows else Edit.delete(a1 + 1, a2)
    return Edit.insert_after(a1, list(rows)) if a1 else Edit.insert_head(list(rows))
