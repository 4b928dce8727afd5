"""Stale-edit scenarios: an agent reads a notebook, a person changes it, the agent edits.

A `Scenario` holds the notebook as the agent read it (`before`, raw JSON text), the agent's
intended change decided at read time (`AgentEdit`: structured operations on the notebook it
read), the notebook after the person's change (`person`, raw JSON text), and its class,
decided here before anything runs:

- non-conflicting: the agent's and the person's base line ranges are disjoint, they do not
  insert into the same gap, and the person did not delete, split, merge or retype a cell the
  agent edits;
- overlapping: the ranges overlap, or both insert into one gap (a conflict the agent must see);
- structural: the person deleted, split, merged or retyped a cell the agent edits.

Agent edits: replace lines (one or two, by one to three), insert lines (after or before a
line), delete lines, replace a blank line, replace a marker-like line (`# %% ...`), add a cell,
delete a cell, move a cell, a patch over two cells, and a marker naming another cell's id
inserted into a cell (it splits the cell; the cell it names must keep its outputs, metadata and
place: markers never move data between cells). Person changes: another cell; cells
inserted near the target; a cell above deleted or moved below; the line next to the agent's;
other lines of the cell; a line inserted into the cell; a line of the cell deleted; the agent's
own lines; a copy of the cell pasted above with the same id; the cell split, merged with the
next, retyped or deleted; outputs only (a re-run); a JupyterLab-4-style save that upgrades a
pre-4.5 notebook to 4.5 with ids; for the marker family also the cell the marker names deleted,
or moved elsewhere.

Line identities: every line of the notebook read is (cell index, line index) in it, a cell's
marker is line `MARKER`, and a gap is (cell, k), before line k of a cell (k = its line count:
after its last line), or ("cells", c), between cell c and the next (-1: the top). The person's
changes carry those identities along (`Tracked`), so the oracle (bench/safety_oracle.py) can
compute the merge without diffing anything.

Invariants: generation is deterministic (seeded by the notebook's label); a token the agent
writes occurs nowhere in the notebook; every `person` notebook is valid once duplicate ids are
told apart (a pasted copy keeps its id on purpose).
"""

from __future__ import annotations

import copy
import json
import random
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path
from typing import Any

import nbformat
from nbformat.v4 import nbjson

Notebook = dict[str, Any]
Ident = tuple[int, int]
Gap = tuple[Any, int]
MARKER = -1


class Conflict(Enum):
    NONE = "non-conflicting"
    OVERLAP = "overlapping"
    STRUCTURE = "structural"


class AgentKind(Enum):
    REPLACE = "replaces lines"
    INSERT = "inserts lines"
    DELETE = "deletes lines"
    BLANK = "replaces a blank line"
    MARKER_LIKE = "replaces a marker-like line"
    ADD_CELL = "adds a cell"
    DELETE_CELL = "deletes a cell"
    MOVE_CELL = "moves a cell"
    TWO_CELLS = "edits two cells"
    MARKER_ID = "writes a marker naming another cell's id"


class PersonKind(Enum):
    OTHER_CELL = "edits another cell"
    INSERT_CELLS = "inserts cells near the target"
    DELETE_ABOVE = "deletes a cell above"
    MOVE_ABOVE = "moves a cell from above to below"
    NEIGHBOUR = "edits the line next to the agent's"
    OTHER_LINES = "edits other lines of the cell"
    INSERT_LINE = "inserts a line into the cell"
    DELETE_LINE = "deletes a line of the cell"
    SAME_LINES = "edits the agent's lines"
    PASTE_COPY = "pastes a copy of the cell above (same id)"
    SPLIT = "splits the cell"
    MERGE = "merges the cell with the next"
    RETYPE = "retypes the cell"
    DELETE_TARGET = "deletes the cell"
    RERUN = "re-runs cells (outputs only)"
    LAB4_SAVE = "saves in JupyterLab 4 (4.4 -> 4.5, ids added)"
    DELETE_NAMED = "deletes the cell the agent's marker names"
    MOVE_NAMED = "moves the cell the agent's marker names"


# -- the tracked notebook --------------------------------------------------------------------


@dataclass
class TCell:
    """A cell whose lines remember where they were in the notebook the agent read."""

    fields: dict[str, Any]  # every key but "source"
    lines: list[tuple[str, Ident | None]]
    origin: int | None  # its index in the notebook read; None for a cell that is new
    tag: int | None = None  # free for the oracle: the cell's index in the person's notebook

    @property
    def source(self) -> str:
        return "\n".join(text for text, _ in self.lines)

    def clone(self) -> TCell:
        return TCell(copy.deepcopy(self.fields), list(self.lines), self.origin, self.tag)


@dataclass
class Tracked:
    top: dict[str, Any]  # every notebook key but "cells"
    cells: list[TCell]

    @classmethod
    def of(cls, nb: Notebook) -> Tracked:
        cells = []
        for index, cell in enumerate(nb["cells"]):
            fields = {k: copy.deepcopy(v) for k, v in cell.items() if k != "source"}
            rows = source_of(cell).split("\n")
            cells.append(TCell(fields, [(t, (index, k)) for k, t in enumerate(rows)], index))
        return cls({k: copy.deepcopy(v) for k, v in nb.items() if k != "cells"}, cells)

    def clone(self) -> Tracked:
        return Tracked(copy.deepcopy(self.top), [c.clone() for c in self.cells])

    def find(self, origin: int) -> int | None:
        found = [n for n, c in enumerate(self.cells) if c.origin == origin]
        return found[0] if len(found) == 1 else None

    def notebook(self) -> Notebook:
        cells = [{**c.fields, "source": c.source} for c in self.cells]
        return {**copy.deepcopy(self.top), "cells": cells}


def source_of(cell: dict[str, Any]) -> str:
    source = cell.get("source", "")
    return "".join(source) if isinstance(source, list) else str(source)


def dump(nb: Notebook) -> str:
    """The file as Jupyter lays it out (nbformat's JSON writer, without its validation, which
    would renumber a pasted copy's id). `from_dict` copies every dict and list: `nb` is
    never changed."""
    return str(nbjson.writes(nbformat.from_dict(nb))) + "\n"


def is_legacy(nb: Notebook) -> bool:
    return (nb.get("nbformat", 4), nb.get("nbformat_minor", 0)) < (4, 5)


# -- the agent's edit --------------------------------------------------------------------------


class LineVerb(Enum):
    REPLACE = "replace"
    DELETE = "delete"
    INSERT_AFTER = "insert after"
    INSERT_BEFORE = "insert before"


@dataclass(frozen=True, slots=True)
class LineOp:
    """Lines first..last (0-based) of cell `cell` in the notebook read; inserts name one line."""

    cell: int
    verb: LineVerb
    first: int
    last: int
    rows: tuple[str, ...] = ()


class CellVerb(Enum):
    ADD_AFTER = "add after"
    DELETE = "delete"
    MOVE_AFTER = "move after"
    MARKER = "marker naming another cell"


@dataclass(frozen=True, slots=True)
class CellOp:
    verb: CellVerb
    cell: int  # the cell added after, deleted, moved, or split by a marker
    dest: int = -1  # a move: the cell it goes after
    cell_type: str = "code"
    rows: tuple[str, ...] = ()  # an added cell's source lines
    line: int = -1  # a marker: the line of `cell` it goes after
    named: int = -1  # a marker: the cell whose id it carries
    at_end: bool = False  # a marker after the cell's last line: a new cell right after it


AgentOp = LineOp | CellOp


@dataclass(frozen=True, slots=True)
class Touch:
    """What a change touches in the notebook read: lines (MARKER for a marker), gaps, and
    cells acted on as a whole (the agent: the cells it edits; the person: cells deleted,
    split, merged or retyped)."""

    lines: frozenset[Ident] = frozenset()
    gaps: frozenset[Gap] = frozenset()
    cells: frozenset[int] = frozenset()

    def __or__(self, other: Touch) -> Touch:
        return Touch(self.lines | other.lines, self.gaps | other.gaps, self.cells | other.cells)


@dataclass(frozen=True, slots=True)
class AgentEdit:
    kind: AgentKind
    ops: tuple[AgentOp, ...]
    token: str
    touch: Touch

    @property
    def writes_rows(self) -> bool:
        """Whether the edit writes rows (carrying its token) anywhere."""
        return any(op.rows for op in self.ops)

    @property
    def main_cell(self) -> int:
        """The cell the person's changes are aimed at (the first one the edit touches)."""
        op = self.ops[0]
        return op.cell


def classify(agent: Touch, person: Touch) -> Conflict:
    """The scenario's class, from what each side touches (see the module docstring)."""
    if agent.cells & person.cells:
        return Conflict.STRUCTURE
    if agent.lines & person.lines or agent.gaps & person.gaps:
        return Conflict.OVERLAP
    if _inside(person.gaps, agent.lines) or _inside(agent.gaps, person.lines):
        return Conflict.OVERLAP
    return Conflict.NONE


def _inside(gaps: frozenset[Gap], lines: frozenset[Ident]) -> bool:
    """A gap between two lines of a range: an insertion into that range."""
    return any(
        isinstance(cell, int) and (cell, k - 1) in lines and (cell, k) in lines for cell, k in gaps
    )


def line_count(nb: Notebook, cell: int) -> int:
    return len(source_of(nb["cells"][cell]).split("\n"))


def _cell_touch(nb: Notebook, cell: int) -> Touch:
    """A whole cell: its marker, every line and every gap inside it."""
    count = line_count(nb, cell)
    lines = {(cell, k) for k in range(count)} | {(cell, MARKER)}
    return Touch(
        frozenset(lines), frozenset((cell, k) for k in range(count + 1)), frozenset({cell})
    )


def _last_line(nb: Notebook, cell: int) -> Ident:
    """The line an edit after the cell anchors on (its marker when the cell is empty)."""
    source = source_of(nb["cells"][cell])
    return (cell, line_count(nb, cell) - 1) if source else (cell, MARKER)


def op_touch(nb: Notebook, op: AgentOp) -> Touch:
    if isinstance(op, LineOp):
        lines = frozenset((op.cell, k) for k in range(op.first, op.last + 1))
        gaps: frozenset[Gap] = frozenset()
        if op.verb is LineVerb.INSERT_AFTER:
            gaps = frozenset({(op.cell, op.first + 1)})
        elif op.verb is LineVerb.INSERT_BEFORE:
            gaps = frozenset({(op.cell, op.first)})
        return Touch(lines, gaps, frozenset({op.cell}))
    if op.verb is CellVerb.MARKER:
        # It names another cell: that cell deleted under it is a structural change too.
        cells = frozenset({op.cell, op.named})
        lines = frozenset({(op.cell, op.line)})
        if op.at_end:  # a cell added after this one, as `add a cell` does
            return Touch(lines, frozenset({("cells", op.cell)}), cells)
        return Touch(lines, frozenset({(op.cell, op.line + 1)}), cells)
    if op.verb is CellVerb.ADD_AFTER:
        return Touch(
            frozenset({_last_line(nb, op.cell)}),
            frozenset({("cells", op.cell)}),
            frozenset({op.cell}),
        )
    whole = _cell_touch(nb, op.cell)
    if op.verb is CellVerb.DELETE:
        return whole
    add = op_touch(nb, CellOp(CellVerb.ADD_AFTER, op.dest))
    return whole | add


def _editable(line: str) -> bool:
    return bool(line.strip()) and not line.lstrip().startswith("# %%")


def _rows(rng: random.Random, token: str, count: int, like: str = "") -> tuple[str, ...]:
    base = like.rstrip() or "value"
    return tuple(f"{base}  # agent {token} {n}" for n in range(count))


def _line_edit(
    nb: Notebook, cell: int, kind: AgentKind, rng: random.Random, token: str
) -> LineOp | None:
    lines = source_of(nb["cells"][cell]).split("\n")
    if len(lines) < 3:
        return None
    editable = [n for n, line in enumerate(lines) if _editable(line)]
    if kind is AgentKind.BLANK:
        blank = [n for n, line in enumerate(lines) if not line.strip()]
        if not blank:
            return None
        at = rng.choice(blank)
        return LineOp(cell, LineVerb.REPLACE, at, at, (f"# agent {token}",))
    if kind is AgentKind.MARKER_LIKE:
        marked = [n for n, line in enumerate(lines) if line.lstrip().startswith("# %%")]
        if not marked:
            return None
        at = rng.choice(marked)
        return LineOp(cell, LineVerb.REPLACE, at, at, (f"# %% agent {token}",))
    if not editable:
        return None
    first = rng.choice(editable)
    last = first + 1 if first + 1 in editable and rng.random() < 0.4 else first
    if kind is AgentKind.REPLACE:
        rows = _rows(rng, token, rng.randint(1, 3), lines[first])
        return LineOp(cell, LineVerb.REPLACE, first, last, rows)
    if kind is AgentKind.DELETE:
        return LineOp(cell, LineVerb.DELETE, first, last)
    verb = LineVerb.INSERT_AFTER if rng.random() < 0.6 else LineVerb.INSERT_BEFORE
    at = rng.randrange(len(lines))
    return LineOp(cell, verb, at, at, _rows(rng, token, rng.randint(1, 2)))


def agent_edit(
    nb: Notebook, cell: int, kind: AgentKind, rng: random.Random, token: str
) -> AgentEdit | None:
    """The agent's edit of `kind` aimed at `cell`, or None when the notebook has no fit."""
    count = len(nb["cells"])
    ops: list[AgentOp] = []
    if kind is AgentKind.ADD_CELL:
        kind_of = rng.choice(["code", "markdown"])
        ops.append(
            CellOp(CellVerb.ADD_AFTER, cell, cell_type=kind_of, rows=(f"print('agent {token}')",))
        )
    elif kind is AgentKind.DELETE_CELL:
        ops.append(CellOp(CellVerb.DELETE, cell))
    elif kind is AgentKind.MOVE_CELL:
        choices = [d for d in range(count) if d not in (cell, cell - 1)]
        if not choices:
            return None
        ops.append(CellOp(CellVerb.MOVE_AFTER, cell, dest=rng.choice(choices)))
    elif kind is AgentKind.MARKER_ID:
        marker = _marker_edit(nb, cell, rng, token)
        if marker is None:
            return None
        ops.append(marker)
    elif kind is AgentKind.TWO_CELLS:
        others = [n for n in range(count) if n != cell and line_count(nb, n) >= 3]
        first = _line_edit(nb, cell, AgentKind.REPLACE, rng, token)
        second = (
            _line_edit(nb, rng.choice(others), AgentKind.REPLACE, rng, token) if others else None
        )
        if first is None or second is None:
            return None
        ops += [first, second]
    else:
        op = _line_edit(nb, cell, kind, rng, token)
        if op is None:
            return None
        ops.append(op)
    touch = Touch()
    for op in ops:
        touch = touch | op_touch(nb, op)
    return AgentEdit(kind, tuple(ops), token, touch)


def _marker_edit(nb: Notebook, cell: int, rng: random.Random, token: str) -> CellOp | None:
    """A marker carrying the id of a cell at least two cells away, inserted after a line of
    `cell` (its lines below go to the new cell), with one row of the agent's under it."""
    far = [n for n in range(len(nb["cells"])) if abs(n - cell) > 1]
    if not far or not source_of(nb["cells"][cell]):
        return None
    cell_type = rng.choice(["code", "markdown"])
    count = line_count(nb, cell)
    line = rng.randrange(count)
    return CellOp(
        CellVerb.MARKER,
        cell,
        cell_type=cell_type,
        rows=(f"print('agent {token}')",),
        line=line,
        named=rng.choice(far),
        at_end=line == count - 1,
    )


# -- the person's change -----------------------------------------------------------------------


@dataclass
class Draft:
    """A person's change in progress: the tracked notebook and what the change touched."""

    nb: Tracked
    base: Notebook
    agent: AgentEdit
    rng: random.Random
    touch: Touch = field(default_factory=Touch)

    @property
    def target(self) -> int:
        return self.agent.main_cell

    def at(self, origin: int) -> int:
        found = self.nb.find(origin)
        assert found is not None
        return found

    def touched(self, **parts: Any) -> None:
        self.touch = self.touch | Touch(**{k: frozenset(v) for k, v in parts.items()})

    def agent_lines(self) -> list[int]:
        return sorted(k for c, k in self.agent.touch.lines if c == self.target and k != MARKER)


def _changed(text: str) -> str:
    """The line, changed inside (not only at its end), so the old one is no longer a part."""
    return f"{text[:-1]}/* changed by a person */{text[-1:]}"


def _mark(d: Draft, origin: int, k: int) -> None:
    cell = d.nb.cells[d.at(origin)]
    pos = next(n for n, (_, ident) in enumerate(cell.lines) if ident == (origin, k))
    cell.lines[pos] = (_changed(cell.lines[pos][0]), None)
    d.touched(lines={(origin, k)})


def _new_cell(d: Draft, source: str, cell_type: str = "code") -> TCell:
    fields: dict[str, Any] = {"cell_type": cell_type, "metadata": {}}
    if cell_type == "code":
        fields |= {"execution_count": None, "outputs": []}
    if not is_legacy(d.base):
        fields["id"] = f"{d.rng.getrandbits(32):08x}"
    return TCell(fields, [(row, None) for row in source.split("\n")], None)


def _other_cell(d: Draft) -> bool:
    busy = {c for c, _ in d.agent.touch.lines} | {d.target}
    choices = [
        n
        for n in range(len(d.base["cells"]))
        if n not in busy and source_of(d.base["cells"][n]).strip()
    ]
    if not choices:
        return False
    cell = d.rng.choice(choices)
    lines = source_of(d.base["cells"][cell]).split("\n")
    _mark(d, cell, d.rng.choice([k for k, line in enumerate(lines) if line.strip()]))
    return True


def _insert_cells(d: Draft) -> bool:
    for _ in range(d.rng.randint(1, 2)):
        gap = d.rng.randint(0, d.target + 1)  # before base cell `gap`
        pos = d.at(gap) if gap < len(d.base["cells"]) else len(d.nb.cells)
        d.nb.cells.insert(
            pos, _new_cell(d, f"print('a person added this {d.rng.randrange(10**6)}')")
        )
        d.touched(gaps={("cells", gap - 1)})
    return True


def _delete_above(d: Draft) -> bool:
    if d.target == 0:
        return False
    gone = d.rng.randrange(d.target)
    del d.nb.cells[d.at(gone)]
    whole = _cell_touch(d.base, gone)
    d.touch = d.touch | whole
    return True


def _move_above(d: Draft) -> bool:
    count = len(d.base["cells"])
    if d.target == 0:
        return False
    moved = d.rng.randrange(d.target)
    dest = d.rng.randint(d.target, count - 1)  # after base cell `dest`
    cell = d.nb.cells.pop(d.at(moved))
    d.nb.cells.insert(d.at(dest) + 1, cell)
    d.touched(
        lines={(moved, MARKER)}, gaps={("cells", moved - 1), ("cells", moved), ("cells", dest)}
    )
    return True


def _target_lines(d: Draft) -> list[str]:
    return source_of(d.base["cells"][d.target]).split("\n")


def _neighbour(d: Draft) -> bool:
    mine = d.agent_lines()
    if not mine or any(
        isinstance(op, CellOp) and op.verb is not CellVerb.ADD_AFTER for op in d.agent.ops
    ):
        return False
    count = len(_target_lines(d))
    near = [k for k in (mine[0] - 1, mine[-1] + 1) if 0 <= k < count]
    if not near:
        return False
    _mark(d, d.target, d.rng.choice(near))
    return True


def _other_lines(d: Draft) -> bool:
    mine = d.agent_lines()
    if not mine:
        return False
    lines = _target_lines(d)
    far = [
        k for k, line in enumerate(lines) if line.strip() and (k < mine[0] - 1 or k > mine[-1] + 1)
    ]
    if (mine[0] >= 1 and d.rng.random() < 0.3) or not far:  # a new line at the top of the cell
        if mine[0] < 1:
            return False
        cell = d.nb.cells[d.at(d.target)]
        cell.lines.insert(0, ("# a person's note", None))
        d.touched(gaps={(d.target, 0)})
        return True
    _mark(d, d.target, d.rng.choice(far))
    return True


def _insert_line(d: Draft) -> bool:
    count = len(_target_lines(d))
    gap = d.rng.randint(0, count)
    cell = d.nb.cells[d.at(d.target)]
    pos = next((n for n, (_, i) in enumerate(cell.lines) if i == (d.target, gap)), len(cell.lines))
    cell.lines.insert(pos, (f"person_{d.rng.randrange(10**6)} = 1", None))
    d.touched(gaps={(d.target, gap)})
    return True


def _delete_line(d: Draft) -> bool:
    count = len(_target_lines(d))
    if count < 2:
        return False
    k = d.rng.randrange(count)
    cell = d.nb.cells[d.at(d.target)]
    cell.lines = [row for row in cell.lines if row[1] != (d.target, k)]
    d.touched(lines={(d.target, k)})
    return True


def _same_lines(d: Draft) -> bool:
    mine = d.agent_lines()
    if not mine:
        return False
    _mark(d, d.target, d.rng.choice(mine))
    return True


def _paste_copy(d: Draft) -> bool:
    original = d.nb.cells[d.at(d.target)]
    if is_legacy(d.base) or "id" not in original.fields:
        return False
    gap = d.rng.randint(0, d.target)  # before base cell `gap`: right above the target, or higher
    copy_ = TCell(copy.deepcopy(original.fields), [(t, None) for t, _ in original.lines], None)
    d.nb.cells.insert(d.at(gap), copy_)
    d.touched(gaps={("cells", gap - 1)})
    return True


def _split(d: Draft) -> bool:
    count = len(_target_lines(d))
    if count < 2:
        return False
    k = d.rng.randint(1, count - 1)
    index = d.at(d.target)
    cell = d.nb.cells[index]
    bottom = _new_cell(d, "", cell.fields.get("cell_type", "code"))
    bottom.lines = cell.lines[k:]
    cell.lines = cell.lines[:k]
    d.nb.cells.insert(index + 1, bottom)
    d.touched(cells={d.target}, gaps={(d.target, k)})
    return True


def _merge(d: Draft) -> bool:
    following = d.target + 1
    if following >= len(d.base["cells"]):
        return False
    index = d.at(d.target)
    d.nb.cells[index].lines += d.nb.cells[d.at(following)].lines
    del d.nb.cells[d.at(following)]
    d.touched(cells={d.target, following})
    return True


def _retype(d: Draft) -> bool:
    cell = d.nb.cells[d.at(d.target)]
    old = cell.fields.get("cell_type")
    fields = {
        k: v
        for k, v in cell.fields.items()
        if k not in ("outputs", "execution_count", "attachments")
    }
    if old == "code":
        fields["cell_type"] = "markdown"
    else:
        fields |= {"cell_type": "code", "outputs": [], "execution_count": None}
    cell.fields = fields
    d.touched(cells={d.target})
    return True


def _delete_target(d: Draft) -> bool:
    del d.nb.cells[d.at(d.target)]
    d.touch = d.touch | _cell_touch(d.base, d.target)
    return True


def _rerun(d: Draft) -> bool:
    code = [c for c in d.nb.cells if c.fields.get("cell_type") == "code"]
    if not code:
        return False
    count = max((c.fields.get("execution_count") or 0 for c in code), default=0)
    for cell in code:
        count += 1
        cell.fields["execution_count"] = count
        text = f"re-run {count}: {d.rng.random():.6f}\n"
        cell.fields["outputs"] = [{"output_type": "stream", "name": "stdout", "text": text}]
    return True


def _lab4_save(d: Draft) -> bool:
    if not is_legacy(d.base):
        return False
    for cell in d.nb.cells:
        cell.fields["id"] = f"{d.rng.getrandbits(32):08x}"
    d.nb.top["nbformat_minor"] = 5
    return True


def _named(d: Draft) -> int | None:
    """The cell whose id the agent's marker carries, if the agent writes one."""
    ops = [op for op in d.agent.ops if isinstance(op, CellOp) and op.verb is CellVerb.MARKER]
    return ops[0].named if ops else None


def _delete_named(d: Draft) -> bool:
    named = _named(d)
    if named is None:
        return False
    del d.nb.cells[d.at(named)]
    d.touch = d.touch | _cell_touch(d.base, named)
    return True


def _move_named(d: Draft) -> bool:
    """The named cell moved after another cell, away from the cell the marker splits."""
    named = _named(d)
    if named is None:
        return False
    count = len(d.base["cells"])
    dests = [n for n in range(count) if n not in (named, named - 1, d.target - 1, d.target)]
    if not dests:
        return False
    dest = d.rng.choice(dests)
    cell = d.nb.cells.pop(d.at(named))
    d.nb.cells.insert(d.at(dest) + 1, cell)
    d.touched(
        lines={(named, MARKER)}, gaps={("cells", named - 1), ("cells", named), ("cells", dest)}
    )
    return True


PERSON_CHANGES: dict[PersonKind, Callable[[Draft], bool]] = {
    PersonKind.OTHER_CELL: _other_cell,
    PersonKind.INSERT_CELLS: _insert_cells,
    PersonKind.DELETE_ABOVE: _delete_above,
    PersonKind.MOVE_ABOVE: _move_above,
    PersonKind.NEIGHBOUR: _neighbour,
    PersonKind.OTHER_LINES: _other_lines,
    PersonKind.INSERT_LINE: _insert_line,
    PersonKind.DELETE_LINE: _delete_line,
    PersonKind.SAME_LINES: _same_lines,
    PersonKind.PASTE_COPY: _paste_copy,
    PersonKind.SPLIT: _split,
    PersonKind.MERGE: _merge,
    PersonKind.RETYPE: _retype,
    PersonKind.DELETE_TARGET: _delete_target,
    PersonKind.RERUN: _rerun,
    PersonKind.LAB4_SAVE: _lab4_save,
    PersonKind.DELETE_NAMED: _delete_named,
    PersonKind.MOVE_NAMED: _move_named,
}


# -- scenarios ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Scenario:
    label: str  # notebook label, for reports
    agent: AgentEdit
    person_kind: PersonKind
    conflict: Conflict
    before: str  # the file the agent read
    person: str  # the file after the person's change
    tracked: Tracked  # the person's notebook, lines carrying their identity in the read

    @property
    def name(self) -> str:
        return (
            f"{self.label} cell {self.agent.main_cell}: agent {self.agent.kind.value}, "
            f"person {self.person_kind.value}"
        )


def scenarios_for(label: str, raw: str, per_kind: int = 1) -> Iterator[Scenario]:
    """For each agent edit kind, `per_kind` target cells, each with every person change that
    fits them."""
    nb: Notebook = json.loads(raw)
    rng = random.Random(zlib.crc32(label.encode()))
    count = len(nb["cells"])
    if count < 3:
        return
    for kind in AgentKind:
        for _ in range(per_kind):
            token = f"t{rng.getrandbits(40):010x}"
            cell = rng.randrange(count)
            edit = agent_edit(nb, cell, kind, rng, token) if token not in raw else None
            if edit is None:
                continue
            for person_kind, change in PERSON_CHANGES.items():
                scenario = _scenario(label, raw, nb, edit, person_kind, change, rng)
                if scenario is not None:
                    yield scenario


def _scenario(
    label: str,
    raw: str,
    nb: Notebook,
    edit: AgentEdit,
    person_kind: PersonKind,
    change: Callable[[Draft], bool],
    rng: random.Random,
) -> Scenario | None:
    draft = Draft(Tracked.of(nb), nb, edit, random.Random(rng.getrandbits(32)))
    if not change(draft):
        return None
    person = draft.nb.notebook()
    if person == nb or not _valid(person):
        return None
    conflict = classify(edit.touch, draft.touch)
    return Scenario(label, edit, person_kind, conflict, raw, dump(person), draft.nb)


def _valid(nb: Notebook) -> bool:
    """Valid once copies of an id are told apart (a pasted copy keeps its id on purpose)."""
    probe = copy.deepcopy(nb)
    for n, cell in enumerate(probe["cells"]):
        if "id" in cell:
            cell["id"] = f"probe-{n}"
    try:
        nbformat.validate(nbformat.from_dict(probe))
    except nbformat.ValidationError:
        return False
    return True


# -- notebooks ---------------------------------------------------------------------------------


def generated_notebooks(count: int) -> Iterator[tuple[str, str]]:
    """Synthetic notebooks: with ids (4.5), without (4.4), with lines repeated in cells, and
    with blank and marker-like lines (`# %% ...` comments, as percent scripts carry)."""
    from bench.notebook import generated_notebook

    for seed in range(count):
        nb = generated_notebook(24, seed=seed)
        yield f"generated-{seed} (4.5, ids)", dump(nb)
        legacy = copy.deepcopy(nb)
        legacy["nbformat_minor"] = 4
        for cell in legacy["cells"]:
            del cell["id"]
        yield f"generated-{seed} (4.4, no ids)", dump(legacy)
        repeated = copy.deepcopy(nb)
        for cell in repeated["cells"]:
            if cell["cell_type"] == "code":
                cell["source"] = "plt.figure()\n" + source_of(cell) + "\nplt.show()"
        yield f"generated-{seed} (4.5, repeated lines)", dump(repeated)
        percent = copy.deepcopy(nb)
        for n, cell in enumerate(percent["cells"]):
            if cell["cell_type"] == "code":
                rows = source_of(cell).split("\n")
                rows.insert(1, "")
                rows.insert(0, f"# %% step {n}" if n % 2 else "# %%")
                cell["source"] = "\n".join(rows)
        yield f"generated-{seed} (4.5, blank and marker-like lines)", dump(percent)


def corpus_notebooks(corpus: Path, limit: int | None) -> Iterator[tuple[str, str]]:
    """Valid nbformat-4 notebooks of the shared corpus (MANIFEST.tsv), smallest first."""
    rows = (line.split("\t") for line in (corpus / "MANIFEST.tsv").read_text().splitlines()[1:])
    usable = [r[0] for r in rows if len(r) > 8 and r[5].startswith("4.") and r[8] == "y"]
    paths = sorted((corpus / name for name in usable), key=lambda p: p.stat().st_size)
    for path in paths[:limit]:
        yield f"corpus {path.stem[:48]}", path.read_text(encoding="utf-8")


# -- applying the agent's operations by line identity ------------------------------------------


def apply_ops(nb: Tracked, ops: tuple[AgentOp, ...]) -> bool:
    """Apply the agent's operations to `nb` in place, finding every line and cell by its
    identity in the notebook read; False (nb then half changed) when one is not where the
    operation needs it (gone, split off, or no longer consecutive)."""
    return all(_apply_line(nb, op) if isinstance(op, LineOp) else _apply_cell(nb, op) for op in ops)


def _apply_line(nb: Tracked, op: LineOp) -> bool:
    index = nb.find(op.cell)
    if index is None:
        return False
    cell = nb.cells[index]
    wanted = [(op.cell, k) for k in range(op.first, op.last + 1)]
    where = [n for n, (_, ident) in enumerate(cell.lines) if ident in wanted]
    if len(where) != len(wanted) or where != list(range(where[0], where[0] + len(where))):
        return False
    start, end = where[0], where[-1] + 1
    new = [(row, None) for row in op.rows]
    if op.verb is LineVerb.REPLACE:
        cell.lines[start:end] = new
    elif op.verb is LineVerb.DELETE:
        del cell.lines[start:end]
    elif op.verb is LineVerb.INSERT_AFTER:
        cell.lines[end:end] = new
    else:
        cell.lines[start:start] = new
    return True


def new_agent_cell(cell_type: str, rows: tuple[str, ...]) -> TCell:
    fields: dict[str, Any] = {"cell_type": cell_type, "metadata": {}}
    if cell_type == "code":
        fields |= {"execution_count": None, "outputs": []}
    return TCell(fields, [(row, None) for row in rows], None)


def _apply_marker(nb: Tracked, op: CellOp) -> bool:
    """Split the cell holding line `op.line` of cell `op.cell` (wherever it is now) after that
    line: a new cell (the agent's rows, then the lines below) follows it; after the read's last
    line, the new cell follows the whole cell. The cell the marker names is not touched."""
    for index, cell in enumerate(nb.cells):
        at = next((n for n, (_, i) in enumerate(cell.lines) if i == (op.cell, op.line)), None)
        if at is not None:
            new = new_agent_cell(op.cell_type, op.rows)
            if not op.at_end:
                new.lines += cell.lines[at + 1 :]
                cell.lines = cell.lines[: at + 1]
            nb.cells.insert(index + 1, new)
            return True
    return False


def _apply_cell(nb: Tracked, op: CellOp) -> bool:
    if op.verb is CellVerb.MARKER:
        return _apply_marker(nb, op)
    index = nb.find(op.cell)
    if index is None:
        return False
    if op.verb is CellVerb.ADD_AFTER:
        nb.cells.insert(index + 1, new_agent_cell(op.cell_type, op.rows))
        return True
    cell = nb.cells.pop(index)
    if op.verb is CellVerb.DELETE:
        return True
    dest = nb.find(op.dest)
    if dest is None:
        return False
    nb.cells.insert(dest + 1, cell)
    return True
