"""Stale-edit scenarios: an agent reads a notebook, a person changes it, the agent edits.

A `Scenario` holds the notebook as the agent read it (`before`, raw JSON text), the agent's
intended change fixed at read time (`Intent`: replace lines `first..last` of one cell, each new
line carrying a unique token), and the notebook after the person's change (`person`). It also
holds what a correct merge of the two gives (`expected`, the cells' (type, source) pairs), or
None where the two changes cannot both stand.

Person edits (`PersonEdit`): another cell; cells inserted, deleted or moved above the target;
another line of the target cell (two or more lines away from the agent's); the line next to the
agent's (a conflict by git's rule: touching hunks conflict); the agent's own lines (a true
conflict). The person's editor keeps the notebook's format version (no ids are added to
notebooks older than 4.5), as `nbformat.read` + `nbformat.write` does.

Invariants: generation is deterministic (seeded by the notebook's label); a scenario's agent
lines are non-blank, never look like projection markers, and its token occurs nowhere in the
notebook; every `person` notebook passes `nbformat.validate`.
"""

from __future__ import annotations

import copy
import json
import random
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import Any

import nbformat

Cells = tuple[tuple[str, str], ...]
Notebook = dict[str, Any]


class PersonEdit(Enum):
    OTHER_CELL = "edits another cell"
    INSERT_ABOVE = "inserts cells above"
    DELETE_ABOVE = "deletes a cell above"
    MOVE_ABOVE = "moves a cell from above to below"
    OTHER_LINES = "edits other lines of the cell"
    ADJACENT_LINE = "edits the line next to the agent's"
    SAME_LINES = "edits the agent's lines"

    @property
    def conflicting(self) -> bool:
        return self in (PersonEdit.ADJACENT_LINE, PersonEdit.SAME_LINES)


@dataclass(frozen=True, slots=True)
class Intent:
    """The agent's change as decided at read time: replace lines first..last (0-based, in the
    cell's source split on newlines) of the cell at `cell_index` with `new_lines`."""

    cell_index: int
    cell_id: str | None  # the id stored in the file; None in notebooks older than 4.5
    first: int
    last: int
    new_lines: tuple[str, ...]
    token: str

    def apply_to(self, source: str, shift: int = 0) -> str:
        lines = source.split("\n")
        lines[self.first + shift : self.last + shift + 1] = list(self.new_lines)
        return "\n".join(lines)


@dataclass(frozen=True, slots=True)
class Scenario:
    label: str  # notebook label, for reports
    kind: PersonEdit
    before: str  # the file the agent read
    intent: Intent
    person: str  # the file after the person's change
    target_after: int  # index of the target cell in the person's notebook
    expected: Cells | None  # the merge of both changes; None where they cannot both stand

    @property
    def name(self) -> str:
        return f"{self.label} cell {self.intent.cell_index}: person {self.kind.value}"


def source_of(cell: dict[str, Any]) -> str:
    source = cell.get("source", "")
    return "".join(source) if isinstance(source, list) else str(source)


def cells_of(nb: Notebook) -> Cells:
    return tuple((str(c.get("cell_type")), source_of(c)) for c in nb["cells"])


def dump(nb: Notebook) -> str:
    """The file as Jupyter saves it."""
    return str(nbformat.writes(nbformat.from_dict(nb))) + "\n"


def _is_editable_line(line: str) -> bool:
    return bool(line.strip()) and not line.lstrip().startswith("# %%")


@dataclass
class _Draft:
    """A person's edit in progress on a copy of the notebook."""

    nb: Notebook
    target: int
    shift: int = 0  # how far the agent's lines moved inside the target cell

    @property
    def cells(self) -> list[dict[str, Any]]:
        return list(self.nb["cells"])


def _mark_line(cell: dict[str, Any], index: int) -> None:
    """Change the line inside (not only at its end), so the old line is no longer a substring."""
    lines = source_of(cell).split("\n")
    line = lines[index]
    lines[index] = f"{line[:-1]}/* changed by a person */{line[-1:]}"
    cell["source"] = "\n".join(lines)


def _new_cell(rng: random.Random, legacy: bool) -> dict[str, Any]:
    cell = nbformat.v4.new_code_cell(f"print('a person added this {rng.randrange(10**6)}')")
    if legacy:
        del cell["id"]
    else:
        cell["id"] = f"{rng.getrandbits(32):08x}"
    return dict(cell)


def _other_cell(d: _Draft, i: Intent, rng: random.Random) -> bool:
    choices = [n for n, c in enumerate(d.cells) if n != d.target and source_of(c).strip()]
    if not choices:
        return False
    cell = d.nb["cells"][rng.choice(choices)]
    lines = source_of(cell).split("\n")
    _mark_line(cell, rng.choice([n for n, line in enumerate(lines) if line.strip()]))
    return True


def _insert_above(d: _Draft, i: Intent, rng: random.Random) -> bool:
    legacy = all("id" not in c for c in d.cells)
    for _ in range(rng.randint(1, 2)):
        d.nb["cells"].insert(rng.randint(0, d.target), _new_cell(rng, legacy))
        d.target += 1
    return True


def _delete_above(d: _Draft, i: Intent, rng: random.Random) -> bool:
    if d.target == 0:
        return False
    del d.nb["cells"][rng.randrange(d.target)]
    d.target -= 1
    return True


def _move_above(d: _Draft, i: Intent, rng: random.Random) -> bool:
    if d.target == 0:
        return False
    cells = d.nb["cells"]
    moved = cells.pop(rng.randrange(d.target))
    d.target -= 1
    cells.insert(rng.randint(d.target + 1, len(cells)), moved)
    return True


def _other_lines(d: _Draft, i: Intent, rng: random.Random) -> bool:
    cell = d.nb["cells"][d.target]
    lines = source_of(cell).split("\n")
    far = [n for n, line in enumerate(lines) if line.strip() and abs(n - i.first) >= 2]
    far = [n for n in far if n < i.first - 1 or n > i.last + 1]
    if i.first >= 1 and rng.random() < 0.3:  # a new line at the top of the cell
        cell["source"] = "# a person's note\n" + source_of(cell)
        d.shift = 1
        return True
    if not far:
        return False
    _mark_line(cell, rng.choice(far))
    return True


def _adjacent_line(d: _Draft, i: Intent, rng: random.Random) -> bool:
    cell = d.nb["cells"][d.target]
    lines = source_of(cell).split("\n")
    near = [n for n in (i.first - 1, i.last + 1) if 0 <= n < len(lines)]
    if not near:
        return False
    _mark_line(cell, rng.choice(near))
    return True


def _same_lines(d: _Draft, i: Intent, rng: random.Random) -> bool:
    _mark_line(d.nb["cells"][d.target], rng.randint(i.first, i.last))
    return True


PERSON_EDITS: dict[PersonEdit, Callable[[_Draft, Intent, random.Random], bool]] = {
    PersonEdit.OTHER_CELL: _other_cell,
    PersonEdit.INSERT_ABOVE: _insert_above,
    PersonEdit.DELETE_ABOVE: _delete_above,
    PersonEdit.MOVE_ABOVE: _move_above,
    PersonEdit.OTHER_LINES: _other_lines,
    PersonEdit.ADJACENT_LINE: _adjacent_line,
    PersonEdit.SAME_LINES: _same_lines,
}


def _intent(nb: Notebook, index: int, rng: random.Random, token: str) -> Intent | None:
    cell = nb["cells"][index]
    lines = source_of(cell).split("\n")
    editable = [n for n, line in enumerate(lines) if _is_editable_line(line)]
    if len(lines) < 3 or not editable:
        return None
    first = rng.choice(editable)
    last = first + 1 if first + 1 in editable and rng.random() < 0.25 else first
    new = tuple(f"{line}  # agent {token}" for line in lines[first : last + 1])
    stored = cell.get("id") if isinstance(cell.get("id"), str) else None
    return Intent(index, stored, first, last, new, token)


def scenarios_for(label: str, raw: str, targets: int) -> Iterator[Scenario]:
    """Up to `targets` target cells of the notebook, each with every person edit that fits."""
    nb: Notebook = json.loads(raw)
    rng = random.Random(zlib.crc32(label.encode()))
    candidates = [n for n, c in enumerate(nb["cells"]) if len(source_of(c).split("\n")) >= 3]
    for index in sorted(rng.sample(candidates, min(targets, len(candidates)))):
        token = f"t{rng.getrandbits(40):010x}"
        intent = _intent(nb, index, rng, token)
        if intent is None or token in raw:
            continue
        for kind, edit in PERSON_EDITS.items():
            scenario = _scenario(label, raw, nb, intent, kind, edit, rng)
            if scenario is not None:
                yield scenario


def _scenario(
    label: str,
    raw: str,
    nb: Notebook,
    intent: Intent,
    kind: PersonEdit,
    edit: Callable[[_Draft, Intent, random.Random], bool],
    rng: random.Random,
) -> Scenario | None:
    draft = _Draft(copy.deepcopy(nb), intent.cell_index)
    if not edit(draft, intent, rng):
        return None
    try:
        nbformat.validate(nbformat.from_dict(copy.deepcopy(draft.nb)))
    except nbformat.ValidationError:
        return None
    expected: Cells | None = None
    if kind is not PersonEdit.SAME_LINES:
        merged = copy.deepcopy(draft.nb)
        target = merged["cells"][draft.target]
        target["source"] = intent.apply_to(source_of(target), draft.shift)
        expected = cells_of(merged)
    return Scenario(label, kind, raw, intent, dump(draft.nb), draft.target, expected)


def generated_notebooks(count: int) -> Iterator[tuple[str, str]]:
    """Synthetic notebooks: with ids (4.5), without (4.4), and with lines repeated in cells."""
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


def corpus_notebooks(corpus: Path, limit: int | None) -> Iterator[tuple[str, str]]:
    """Valid nbformat-4 notebooks of the shared corpus (MANIFEST.tsv), smallest first."""
    rows = (line.split("\t") for line in (corpus / "MANIFEST.tsv").read_text().splitlines()[1:])
    usable = [r[0] for r in rows if len(r) > 8 and r[5].startswith("4.") and r[8] == "y"]
    paths = sorted((corpus / name for name in usable), key=lambda p: p.stat().st_size)
    for path in paths[:limit]:
        yield f"corpus {path.stem[:48]}", path.read_text(encoding="utf-8")
