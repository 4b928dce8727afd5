"""Stale-run scenarios: an agent reads a notebook, a person changes it, the agent runs a cell.

A `RunScenario` holds the notebook as the agent read it (`before`), the cell the agent means to
run (`target`, an id, and its index at the read), the notebook after the person's change
(`after`), which change that was (`Change`) and where the person made it (`Where`): in the file
(saved; nobody has the notebook open in a room) or by typing in an open collaboration room
(unsaved). Every scenario is classed before anything runs: the agent's cell is unchanged (the
control, another cell edited, a cell inserted above it) or changed (a line changed, a line
appended, a half-typed line, the text rewritten, the cell turned into markdown, emptied or
deleted).

Invariants:
- Every text of a scenario's notebooks (each cell's source, both versions) holds the scenario's
  nonce, unique to the scenario and the contender it is made for (`salt`), so any code a
  kernel receives names the one run it came from; the person's texts differ from every text
  of the read (`TO_MARKDOWN` keeps the source but not the type; `EMPTY` leaves no text).
- Generation is deterministic (the nonce is derived from the scenario's name).
"""

from __future__ import annotations

import copy
import hashlib
from dataclasses import dataclass
from enum import Enum
from typing import Any

import nbformat

Notebook = dict[str, Any]

TARGETS = ("load", "calc", "report")  # the code cells, in order; the full table aims at each
SMOKE_TARGETS = ("calc",)


class Where(Enum):
    FILE = "saved file"
    ROOM = "open room, unsaved typing"


class Change(Enum):
    NONE = "no change (control)"
    OTHER_CELL = "edits another cell only"
    INSERT_ABOVE = "inserts a cell above it"
    CHANGE_LINE = "changes a line of it"
    APPEND_LINE = "appends a line to it"
    HALF_TYPED = "half-typed line (SyntaxError)"
    REWRITE = "retypes its whole text"
    TO_MARKDOWN = "turns it into markdown"
    EMPTY = "empties it"
    DELETE = "deletes it"

    @property
    def keeps_target(self) -> bool:
        """The agent's cell is as the agent saw it (type, source, place by id)."""
        return self in (Change.NONE, Change.OTHER_CELL, Change.INSERT_ABOVE)


class Kind(Enum):
    UNCHANGED = "agent's cell unchanged"
    CHANGED = "agent's cell changed"


@dataclass(frozen=True, slots=True)
class RunScenario:
    name: str
    where: Where
    change: Change
    target: str  # the id of the cell the agent runs
    nonce: str
    before: Notebook  # as the agent read it
    after: Notebook  # as the person left it

    @property
    def kind(self) -> Kind:
        return Kind.UNCHANGED if self.change.keeps_target else Kind.CHANGED

    @property
    def index(self) -> int:
        """The target's index in the notebook the agent read."""
        return next(n for n, c in enumerate(self.before["cells"]) if c["id"] == self.target)

    @property
    def seen(self) -> str:
        """The source the agent saw in the cell it runs."""
        return str(self.before["cells"][self.index]["source"])

    @property
    def seen_elsewhere(self) -> frozenset[str]:
        """The sources of the other cells of the read (any type)."""
        return frozenset(
            str(c["source"]) for n, c in enumerate(self.before["cells"]) if n != self.index
        )


def notebook(nonce: str) -> Notebook:
    """A markdown title and three self-contained code cells, each printing its own token."""
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    nb.cells = [
        nbformat.v4.new_markdown_cell(f"# Prices check {nonce}", id="intro"),
        nbformat.v4.new_code_cell(f"prices = [3, 5, 8]\nprint('load {nonce}', prices)", id="load"),
        nbformat.v4.new_code_cell(f"total = 6 * 7\nprint('calc {nonce}', total)", id="calc"),
        nbformat.v4.new_code_cell(f"share = 1 / 4\nprint('report {nonce}', share)", id="report"),
    ]
    return dict(copy.deepcopy(nb))


def person_change(before: Notebook, target: str, change: Change, nonce: str) -> Notebook:
    """The person's version of `before` (see `Change`); texts carry the nonce."""
    after = copy.deepcopy(before)
    cells = after["cells"]
    at = next(n for n, c in enumerate(cells) if c["id"] == target)
    cell = cells[at]
    first, _, rest = str(cell["source"]).partition("\n")
    if change is Change.OTHER_CELL:
        other = cells[at + 1] if at + 1 < len(cells) else cells[at - 1]
        other["source"] = f"{other['source']}\nprint('person touched another cell {nonce}')"
    elif change is Change.INSERT_ABOVE:
        inserted = f"print('a cell the person inserted {nonce}')"
        cells.insert(at, dict(nbformat.v4.new_code_cell(inserted, id="inserted")))
    elif change is Change.CHANGE_LINE:
        cell["source"] = f"{first.replace(' = ', ' = 10 * ', 1)}\n{rest}"
    elif change is Change.APPEND_LINE:
        cell["source"] = f"{cell['source']}\nprint('the person appended this {nonce}')"
    elif change is Change.HALF_TYPED:
        cell["source"] = f"{cell['source']}\nprint('the person is still typ"
    elif change is Change.REWRITE:
        cell["source"] = f"import os\nprint('the person rewrote this {nonce}', os.getpid())"
    elif change is Change.TO_MARKDOWN:
        cells[at] = dict(nbformat.v4.new_markdown_cell(cell["source"], id=target))
    elif change is Change.EMPTY:
        cell["source"] = ""
    elif change is Change.DELETE:
        del cells[at]
    return after


def scenario(target: str, change: Change, where: Where, *, salt: str = "") -> RunScenario:
    """The scenario; `salt` (a contender's name) gives it a nonce of its own, so the runs of
    several contenders on one server stay apart."""
    name = f"{where.name.lower()}/{target}/{change.name.lower()}"
    nonce = "n" + hashlib.sha256(f"{salt}/{name}".encode()).hexdigest()[:10]
    before = notebook(nonce)
    return RunScenario(
        name=name,
        where=where,
        change=change,
        target=target,
        nonce=nonce,
        before=before,
        after=person_change(before, target, change, nonce),
    )


def run_scenarios(
    *, smoke: bool, wheres: tuple[Where, ...] = tuple(Where), salt: str = ""
) -> list[RunScenario]:
    """Every change at every place, aimed at each code cell (`smoke`: the middle one only)."""
    targets = SMOKE_TARGETS if smoke else TARGETS
    return [
        scenario(target, change, where, salt=salt)
        for where in wheres
        for target in targets
        for change in Change
    ]


def sources(nb: Notebook) -> list[tuple[str, str]]:
    """Each cell's type and source, in order (what a room or a file shows of the texts)."""
    return [(str(c["cell_type"]), _text(c["source"])) for c in nb["cells"]]


def _text(source: Any) -> str:
    return "".join(source) if isinstance(source, list) else str(source)
