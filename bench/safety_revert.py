"""The undo rows of the stale-edit safety table: a person keeps working after an agent's edit,
then undoes that edit (`Workspace.revert`, the engine behind `POST hashline/revert`).

Each row starts from a scenario of the stale-edit table (bench/safety_scenarios.py: a notebook
`N0`, the agent's edit, a person's change) and runs, on disk, through the real application
layer (`tools.Workspace` over `NotebookFilesystem`): the agent reads `N0` and its edit lands;
the person's notebook `X` is saved over it; the person undoes the agent's edit. Families:

- the person edited elsewhere / the same cell on other lines / the agent's edit was a structure
  change (a cell added, deleted or moved): `X` is the person's change with the agent's edit on
  top, as the independent oracle merges them (bench/safety_oracle.py: by line identity, never
  with hashline's code; rows where it has no merge are left out). The undo must leave exactly
  the person's notebook (`P0`: their change alone, whole cells compared, ids, outputs and
  metadata included);
- the person edited the agent's lines / deleted the agent's cell: `X` is the agent's result
  with one of its rows changed / its cell deleted. The undo must be refused with the file
  untouched (for a deleted cell, landing with nothing changed is as safe).

Outcomes are the table's: applied, rejected, lost (the person's work not kept), wrong cell
(the agent's rows stayed while something else changed), corrupted (invalid, or changed although
refused), unexplained. Targets: 0 lost, 0 wrong cell, 0 corrupted, 0 unexplained; every undo of
a line the person changed rejected.
"""

from __future__ import annotations

import copy
import itertools
import json
import tempfile
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import Any

import nbformat

from bench.safety_oracle import (
    Outcome,
    cell_body,
    expected,
    expected_cells,
    load_valid,
    same_notebook,
)
from bench.safety_scenarios import AgentKind, Conflict, PersonKind, Scenario, dump, is_legacy
from bench.safety_strategies import _check_shown, _hashline_edits
from jupyter_hashline.hashline import InMemorySnapshotStore
from jupyter_hashline.hashline.disk import DiskFilesystem
from jupyter_hashline.notebook import NotebookFilesystem, parse_projection
from jupyter_hashline.tools import ToolOutcome, Workspace, revert_request, run_tool

NAME = "notebook.ipynb"
SAME_CELL = {
    PersonKind.NEIGHBOUR,
    PersonKind.OTHER_LINES,
    PersonKind.INSERT_LINE,
    PersonKind.DELETE_LINE,
}
STRUCTURE = {AgentKind.ADD_CELL, AgentKind.DELETE_CELL, AgentKind.MOVE_CELL}
FAILURES = (Outcome.LOST, Outcome.WRONG_CELL, Outcome.CORRUPTED, Outcome.UNEXPLAINED)


class Family(Enum):
    ELSEWHERE = "person edited elsewhere"
    SAME_CELL = "person edited the same cell, other lines"
    STRUCTURE = "agent's edit was a structure change"
    SAME_LINE = "person edited the agent's lines"
    DELETED_CELL = "person deleted the agent's cell"


KEEPS_PERSON = (Family.ELSEWHERE, Family.SAME_CELL, Family.STRUCTURE)


@dataclass(frozen=True, slots=True)
class RevertRow:
    scenario: str
    family: str
    outcome: str
    message: str


def family(scenario: Scenario) -> Family | None:
    """The row family a scenario of the stale-edit table makes, or None."""
    rows_only = scenario.agent.writes_rows and scenario.agent.kind not in STRUCTURE
    if scenario.person_kind is PersonKind.SAME_LINES and rows_only:
        return Family.SAME_LINE
    if scenario.person_kind is PersonKind.DELETE_TARGET and rows_only:
        return Family.DELETED_CELL
    if scenario.conflict is not Conflict.NONE:
        return None
    if scenario.agent.kind in STRUCTURE:
        return Family.STRUCTURE
    return Family.SAME_CELL if scenario.person_kind in SAME_CELL else Family.ELSEWHERE


def workspace(directory: Path) -> Workspace:
    """A fresh workspace on `directory`, giving new cells ids in a fixed order (so two runs of
    one edit name its new cell alike)."""
    counter = itertools.count(1)
    fs = NotebookFilesystem(DiskFilesystem(directory), new_id=lambda: f"agent-{next(counter)}")
    return Workspace(fs, InMemorySnapshotStore())


async def agent_edits(ws: Workspace, path: Path, scenario: Scenario, person: str | None) -> bool:
    """The agent reads `N0` and edits it (after `person` is saved over it, when given); True
    when the edit landed."""
    path.write_text(scenario.before, encoding="utf-8")
    read = await run_tool(ws, "notebook_read", {"path": NAME}, agent="agent")
    text = await ws.fs.read_text(NAME)  # the projection the read showed, whole
    full = text.split("\n")
    cells = parse_projection(text)
    _check_shown(scenario, cells, full)
    edits = [e for op in scenario.agent.ops for e in _hashline_edits(op, cells, full)]
    if person is not None:
        path.write_text(person, encoding="utf-8")
    sent = {"edits": {"path": NAME, "tag": read.reply["tag"], "edits": edits}}
    outcome = await run_tool(ws, "notebook_edit", sent, agent="agent")
    return not outcome.is_error and bool(outcome.activity)


async def person_state(scenario: Scenario, fam: Family, directory: Path) -> str | None:
    """`X`, the person's notebook after the agent's edit (None: the row cannot be built).

    Where the person's work is to be kept, `X` is the oracle's merge of both changes (computed
    by line identity, never by hashline), its new cells carrying the ids the agent's edit gave
    them; else the agent's result with the person's change to its rows or cell."""
    path = directory / NAME
    ws = workspace(directory)
    if fam in KEEPS_PERSON:
        merged = expected(scenario)
        if merged is None:
            return None
        fresh = itertools.count(1)
        if not is_legacy(merged):
            for cell, origin in zip(merged["cells"], _origins(scenario), strict=True):
                if origin is None and "id" not in cell:
                    cell["id"] = f"agent-{next(fresh)}"
        return dump(merged)
    if not await agent_edits(ws, path, scenario, None):
        return None
    nb = nbformat.reads(path.read_text(encoding="utf-8"), 4)
    token = scenario.agent.token
    index = next((n for n, c in enumerate(nb.cells) if token in c.source), None)
    if index is None:
        return None
    if fam is Family.DELETED_CELL:
        del nb.cells[index]
    else:
        rows = nb.cells[index].source.split("\n")
        at = next(n for n, row in enumerate(rows) if token in row)
        rows[at] = rows[at].replace(token, f"{token} kept by a person")
        nb.cells[index].source = "\n".join(rows)
    return str(nbformat.writes(nb)) + "\n"


async def run_row(scenario: Scenario, fam: Family, directory: Path) -> RevertRow | None:
    state = await person_state(scenario, fam, directory / "agent")
    if state is None:
        return None
    here = directory / "undo"
    ws = workspace(here)
    path = here / NAME
    if not await agent_edits(ws, path, scenario, None):
        return None
    record = ws.activity.recent()[0]
    path.write_text(state, encoding="utf-8")  # the person's save after the agent's edit
    undone = await ws.revert(revert_request({"activity": record.id}, agent="person"))
    final = path.read_text(encoding="utf-8")
    outcome = judge_undo(scenario, fam, state, undone, final)
    return RevertRow(scenario.name, fam.value, outcome.value, undone.text[:400])


def judge_undo(
    scenario: Scenario, fam: Family, state: str, undone: ToolOutcome, final: str
) -> Outcome:
    """The verdict on the file the undo left (see the module docstring)."""
    copies = any(
        c.get("id") in {d.get("id") for d in json.loads(state)["cells"][:n]}
        for n, c in enumerate(json.loads(state)["cells"])
    )
    nb = load_valid(final, copies=copies)
    if nb is None:
        return Outcome.CORRUPTED
    if undone.is_error:
        return Outcome.REJECTED if final == state else Outcome.CORRUPTED
    if fam in KEEPS_PERSON:
        person = undo_target(scenario)
        origins: list[int | None] = list(range(len(person["cells"])))
        if same_notebook(nb, person, origins, scenario):
            return Outcome.APPLIED
        twins = _twins_renamed(nb, person)
        if twins is not None and same_notebook(nb, twins, origins, scenario):
            return Outcome.APPLIED
        if final == state:
            return Outcome.UNEXPLAINED
        holds = scenario.agent.writes_rows and scenario.agent.token in final
        return Outcome.WRONG_CELL if holds and _person_cells_kept(person, nb) else Outcome.LOST
    if fam is Family.DELETED_CELL and _same_cells(nb, json.loads(state)):
        return Outcome.APPLIED  # nothing was left to undo; the person's deletion stands
    return Outcome.LOST


def _origins(scenario: Scenario) -> list[int | None]:
    found = expected_cells(scenario)
    assert found is not None
    return found[1]


def undo_target(scenario: Scenario) -> dict[str, Any]:
    """The person's notebook, as the undo must leave it: their change alone. A cell the agent
    deleted comes back as the agent found it (the person never saw it after the deletion, so
    their change to it, e.g. a re-run's outputs, never happened)."""
    person: dict[str, Any] = json.loads(scenario.person)
    if scenario.agent.kind is AgentKind.DELETE_CELL:
        gone = scenario.agent.ops[0].cell
        read = json.loads(scenario.before)["cells"][gone]
        for index, cell in enumerate(scenario.tracked.cells):
            if cell.origin == gone:
                person["cells"][index] = read
    return person


def _twins_renamed(final: dict[str, Any], person: dict[str, Any]) -> dict[str, Any] | None:
    """The person's notebook with its twins' ids as `final` carries them, when exactly one twin
    of each group keeps the group's id there (else None).

    Twins are cells of the person's notebook with one id and one body (a pasted copy of a cell
    the agent deleted, and that cell brought back). No valid notebook gives the id to both; the
    undo brings the cell back whole under a fresh id (notebook/restore.py), and as the twins'
    bodies are the same, nothing tells which of them was the original. The caller judges the
    result against this notebook with the whole oracle: bodies, every other id, metadata."""
    got, wanted = final["cells"], person["cells"]
    if len(got) != len(wanted):
        return None
    groups: dict[tuple[str, str], list[int]] = {}
    for n, cell in enumerate(wanted):
        if isinstance(cell.get("id"), str):
            key = (cell["id"], json.dumps(cell_body(cell), sort_keys=True))
            groups.setdefault(key, []).append(n)
    twins = [(cid, members) for (cid, _), members in groups.items() if len(members) > 1]
    if not twins or any(sum(got[n].get("id") == cid for n in m) != 1 for cid, m in twins):
        return None
    renamed = copy.deepcopy(person)
    for _, members in twins:
        for n in members:
            renamed["cells"][n]["id"] = got[n].get("id")
    return renamed


def _bodies(nb: dict[str, object]) -> list[str]:
    cells = nbformat.from_dict(copy.deepcopy(nb)).cells  # type: ignore[attr-defined]
    return [json.dumps(c, sort_keys=True) for c in cells]


def _same_cells(a: dict[str, object], b: dict[str, object]) -> bool:
    return _bodies(nbformat.reads(json.dumps(a), 4)) == _bodies(nbformat.reads(json.dumps(b), 4))


def _person_cells_kept(person: dict[str, object], final: dict[str, object]) -> bool:
    have = set(_bodies(nbformat.reads(json.dumps(final), 4)))
    return all(b in have for b in _bodies(nbformat.reads(json.dumps(person), 4)))


async def run_revert_rows(scenarios: Sequence[Scenario]) -> list[RevertRow]:
    rows: list[RevertRow] = []
    with tempfile.TemporaryDirectory(prefix="hashline-undo-") as tmp:
        for n, scenario in enumerate(scenarios):
            fam = family(scenario)
            if fam is None:
                continue
            directory = Path(tmp) / str(n)
            (directory / "agent").mkdir(parents=True)
            (directory / "undo").mkdir()
            row = await run_row(scenario, fam, directory)
            if row is not None:
                rows.append(row)
    return rows


@dataclass(frozen=True, slots=True)
class RevertVerdict:
    lost: int
    wrong_cell: int
    corrupted: int
    unexplained: int
    kept_applied: float  # undos in the families that keep the person's work, applied
    same_line_rejected: float

    @property
    def met(self) -> bool:
        return (
            self.lost == self.wrong_cell == self.corrupted == self.unexplained == 0
            and self.same_line_rejected == 1.0
        )


def revert_verdict(rows: Iterable[RevertRow]) -> RevertVerdict:
    rows = list(rows)
    count = Counter(r.outcome for r in rows)
    kept = [r for r in rows if r.family in {f.value for f in KEEPS_PERSON}]
    same = [r for r in rows if r.family == Family.SAME_LINE.value]
    return RevertVerdict(
        lost=count[Outcome.LOST.value],
        wrong_cell=count[Outcome.WRONG_CELL.value],
        corrupted=count[Outcome.CORRUPTED.value],
        unexplained=count[Outcome.UNEXPLAINED.value],
        kept_applied=_share(kept, Outcome.APPLIED),
        same_line_rejected=_share(same, Outcome.REJECTED),
    )


def _share(rows: Sequence[RevertRow], outcome: Outcome) -> float:
    return sum(r.outcome == outcome.value for r in rows) / len(rows) if rows else 1.0


def revert_report(rows: Sequence[RevertRow]) -> list[str]:
    head = "".join(f"{o.value:>12}" for o in Outcome)
    lines = [
        "",
        "== undo (POST revert) after a person kept working",
        f"{'family':<44}{'n':>5}{head}",
    ]
    for fam in Family:
        mine = [r for r in rows if r.family == fam.value]
        count = Counter(r.outcome for r in mine)
        lines.append(
            f"{fam.value:<44}{len(mine):>5}" + "".join(f"{count[o.value]:>12}" for o in Outcome)
        )
    verdict = revert_verdict(rows)
    lines.append(
        f"  hashline undo: lost {verdict.lost}, wrong cell {verdict.wrong_cell}, corrupted "
        f"{verdict.corrupted}, unexplained {verdict.unexplained} (targets 0); undos that keep "
        f"the person's work applied {verdict.kept_applied:.1%}; undos of a line the person "
        f"changed rejected {verdict.same_line_rejected:.1%} (target 100%): "
        f"{'MET' if verdict.met else 'MISSED'}"
    )
    for r in rows:
        if r.outcome in {o.value for o in FAILURES}:
            first = r.message.splitlines()[0] if r.message else ""
            lines.append(f"  undo {r.outcome}: {r.scenario}: {first}")
    return lines
