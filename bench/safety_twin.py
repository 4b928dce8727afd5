"""The twin-edit row of the stale-edit safety table: a stale edit after another agent's edit of
the same cell.

Each scenario of the table (bench/safety_scenarios.py: a notebook `N0`, the agent's edit, a
person's change) whose two changes the independent oracle can merge runs, on disk, through the
real application layer (`tools.Workspace` over `NotebookFilesystem`): agents A and B read `N0`
and make the same edit; A's lands; the person saves `X`, their change with A's edit in it (the
oracle's merge by line identity, bench/safety_oracle.py, never hashline's code: the person's
editor showed A's edit; A's new cells carry the ids A's edit gave them); then B's edit, stale
now, is applied. B read the cell as it was before A's edit, so the text B read may survive only
in a person's pasted copy of the cell: the edit must not land there.

Outcomes, judged against `X` (whole cells compared as the table's oracle does, ids included):

- rejected: B's edit refused, the file exactly `X`;
- already applied: B's edit landed changing nothing (the file is `X`, the same text);
- applied twice: an insert (lines, a cell) landed once more, as `X` with the agent's edit
  applied again by line identity: what two agents sending one insert ask for, counted apart;
- wrong cell: a cell of `X` the edit did not aim at changed or went (the person's pasted copy,
  a neighbour), or every cell of `X` is intact and the edit put its change at another place;
- lost: a cell the edit aims at changed otherwise (A's edit or the person's lines in it
  overwritten), or the notebook's metadata changed;
- corrupted: not a valid notebook, or changed although refused; unexplained: anything else.

Targets: 0 lost, 0 wrong cell, 0 corrupted, 0 unexplained. Rows whose changes the oracle cannot
merge (overlapping ones, the agent's cell gone) are left out; the report says how many ran.
"""

from __future__ import annotations

import itertools
import json
import tempfile
from collections import Counter
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from enum import Enum
from pathlib import Path
from typing import Any

from bench.safety_oracle import Ids, load_valid, normalized, same_cell, same_notebook
from bench.safety_revert import NAME, workspace
from bench.safety_scenarios import (
    CellVerb,
    LineOp,
    Notebook,
    Scenario,
    Tracked,
    apply_ops,
    dump,
    is_legacy,
)
from bench.safety_strategies import Attempt, _check_shown, _hashline_edits, _payload
from jupyter_hashline.notebook import parse_projection
from jupyter_hashline.tools import Workspace, run_tool

__all__ = [
    "AGENTS",
    "TWIN_ROW",
    "Saved",
    "TwinEdits",
    "TwinOutcome",
    "TwinRow",
    "TwinVerdict",
    "judge_twin",
    "run_twin_rows",
    "saved_state",
    "twin_report",
    "twin_verdict",
]

TWIN_ROW = "a stale edit after another agent's edit of the same cell"
AGENTS = ("agent", "agent-b")


class TwinOutcome(Enum):
    REJECTED = "rejected"
    ALREADY = "already applied"
    TWICE = "applied twice"
    LOST = "lost"
    WRONG_CELL = "wrong cell"
    CORRUPTED = "corrupted"
    UNEXPLAINED = "unexplained"


FAILURES = (
    TwinOutcome.LOST,
    TwinOutcome.WRONG_CELL,
    TwinOutcome.CORRUPTED,
    TwinOutcome.UNEXPLAINED,
)


@dataclass(frozen=True, slots=True)
class Saved:
    """The person's save `X` (A's edit in it) and what B's edit may leave.

    `origins` / `twice_origins`: for each cell, its index in the person's notebook (None: new),
    as the table's oracle compares ids; `aimed`: the cells of `X` the agent's edit aims at."""

    text: str
    notebook: Notebook
    origins: tuple[int | None, ...]
    aimed: frozenset[int]
    twice: Notebook | None  # `X` with the agent's insert applied once more; None: no insert
    twice_origins: tuple[int | None, ...]


def saved_state(scenario: Scenario) -> Saved | None:
    """`X`, the person's change with the agent's edit merged in by line identity (None where
    the oracle has no merge)."""
    merged = scenario.tracked.clone()
    for index, cell in enumerate(merged.cells):
        cell.tag = index
    if not apply_ops(merged, scenario.agent.ops):
        return None
    fresh = itertools.count(1)  # the ids `workspace` gives new cells, in order
    _give_ids(merged, fresh)
    aims = _aimed_origins(scenario)
    x = merged.notebook()
    twice, twice_origins = _twice(scenario, merged, fresh)
    return Saved(
        text=dump(x),
        notebook=x,
        origins=tuple(cell.tag for cell in merged.cells),
        aimed=frozenset(n for n, c in enumerate(merged.cells) if c.origin in aims),
        twice=twice,
        twice_origins=twice_origins,
    )


def _aimed_origins(scenario: Scenario) -> set[int]:
    """The cells of the read whose content or place the agent's edit changes."""
    return {
        op.cell
        for op in scenario.agent.ops
        if isinstance(op, LineOp) or op.verb is not CellVerb.ADD_AFTER
    }


def _give_ids(nb: Tracked, fresh: Iterator[int]) -> None:
    """Ids for the agent's new cells (where the notebook has ids), as the workspace names them."""
    if is_legacy(nb.top):
        return
    for cell in nb.cells:
        if cell.origin is None and cell.tag is None:
            cell.fields.setdefault("id", f"agent-{next(fresh)}")


def _twice(
    scenario: Scenario, merged: Tracked, fresh: Iterator[int]
) -> tuple[Notebook | None, tuple[int | None, ...]]:
    """`X` with the agent's edit applied once more, where it inserts and its lines are all
    still there (a replace or a delete finds its lines gone)."""
    again = merged.clone()
    if not _inserts(scenario) or not apply_ops(again, scenario.agent.ops):
        return None, ()
    _give_ids(again, fresh)
    return again.notebook(), tuple(cell.tag for cell in again.cells)


def _inserts(scenario: Scenario) -> bool:
    lines = [op for op in scenario.agent.ops if isinstance(op, LineOp)]
    cells = [op for op in scenario.agent.ops if not isinstance(op, LineOp)]
    return all(op.verb.value.startswith("insert") for op in lines) and all(
        op.verb in (CellVerb.ADD_AFTER, CellVerb.MARKER) for op in cells
    )


# -- the verdict on one row --------------------------------------------------------------------


def judge_twin(scenario: Scenario, saved: Saved, refused: bool, final: str) -> TwinOutcome:
    """The verdict on the file B's edit left (see the module docstring)."""
    ids = Ids(json.loads(scenario.person))
    nb = load_valid(final, copies=bool(ids.later_copies))
    if nb is None:
        return TwinOutcome.CORRUPTED
    if refused:
        return TwinOutcome.REJECTED if final == saved.text else TwinOutcome.CORRUPTED
    if same_notebook(nb, saved.notebook, list(saved.origins), scenario):
        return TwinOutcome.ALREADY
    if saved.twice is not None and same_notebook(
        nb, saved.twice, list(saved.twice_origins), scenario
    ):
        return TwinOutcome.TWICE
    return _diagnose(saved, nb, ids)


def _diagnose(saved: Saved, final: Notebook, ids: Ids) -> TwinOutcome:
    want = saved.notebook
    if normalized(final.get("metadata", {}), "metadata") != normalized(
        want.get("metadata", {}), "metadata"
    ):
        return TwinOutcome.LOST
    free = list(range(len(final["cells"])))
    missing, matched = [], []
    for n, cell in enumerate(want["cells"]):
        got = next(
            (f for f in free if same_cell(cell, final["cells"][f], ids, saved.origins[n])), None
        )
        if got is None:
            missing.append(n)
        else:
            free.remove(got)
            matched.append(got)
    if any(n not in saved.aimed for n in missing):
        return TwinOutcome.WRONG_CELL  # a cell it did not aim at changed or went
    if missing:
        return TwinOutcome.LOST  # its own cell changed otherwise: A's or the person's lines gone
    if free or matched != sorted(matched):
        return TwinOutcome.WRONG_CELL  # every cell intact: a cell added or moved elsewhere
    return TwinOutcome.UNEXPLAINED


# -- running the row ---------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class TwinRow:
    scenario: str
    agent: str
    person: str
    conflict: str
    outcome: str
    message: str


class TwinEdits:
    """Two agents read `N0` and send the same edit; A's lands, the person saves `X`, and B's
    (stale) is applied through the workspace."""

    name = TWIN_ROW

    async def run(self, scenario: Scenario, directory: Path) -> TwinRow | None:
        """The row of one scenario (None: the oracle has no merge for it)."""
        saved = saved_state(scenario)
        if saved is None:
            return None
        ws, path = workspace(directory), directory / NAME
        path.write_text(scenario.before, encoding="utf-8")
        sent = [await _read_and_plan(ws, scenario, agent) for agent in AGENTS]
        first = await run_tool(ws, "notebook_edit", sent[0], agent=AGENTS[0])
        if first.is_error:
            raise AssertionError(f"{scenario.name}: A's edit of the unchanged read failed")
        path.write_text(saved.text, encoding="utf-8")  # the person's save, A's edit in it
        attempt = await self.second(ws, path, sent[1], saved)
        outcome = judge_twin(scenario, saved, attempt.refused, path.read_text(encoding="utf-8"))
        return TwinRow(
            scenario=scenario.name,
            agent=scenario.agent.kind.value,
            person=scenario.person_kind.value,
            conflict=scenario.conflict.value,
            outcome=outcome.value,
            message=attempt.message[:400],
        )

    async def second(
        self, ws: Workspace, path: Path, sent: dict[str, Any], saved: Saved
    ) -> Attempt:
        """B's edit, as it read `N0`, applied to the person's save."""
        outcome = await run_tool(ws, "notebook_edit", sent, agent=AGENTS[1])
        return Attempt(outcome.is_error, outcome.text, _payload(sent))


async def _read_and_plan(ws: Workspace, scenario: Scenario, agent: str) -> dict[str, Any]:
    """`agent` reads the notebook; the arguments of its edit (the scenario's, on that read)."""
    read = await run_tool(ws, "notebook_read", {"path": NAME}, agent=agent)
    text = await ws.fs.read_text(NAME)  # the projection the read showed, whole
    rows = text.split("\n")
    cells = parse_projection(text)
    _check_shown(scenario, cells, rows)
    edits = [e for op in scenario.agent.ops for e in _hashline_edits(op, cells, rows)]
    return {"edits": {"path": NAME, "tag": read.reply["tag"], "edits": edits}}


async def run_twin_rows(
    scenarios: Sequence[Scenario], strategy: TwinEdits | None = None
) -> list[TwinRow]:
    """The row of every scenario the oracle can merge, each in a fresh directory."""
    strategy = strategy or TwinEdits()
    rows: list[TwinRow] = []
    with tempfile.TemporaryDirectory(prefix="hashline-twin-") as tmp:
        for n, scenario in enumerate(scenarios):
            directory = Path(tmp) / str(n)
            directory.mkdir()
            row = await strategy.run(scenario, directory)
            if row is not None:
                rows.append(row)
    return rows


# -- the tally ---------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class TwinVerdict:
    rows: int
    rejected: int
    already: int
    twice: int
    lost: int
    wrong_cell: int
    corrupted: int
    unexplained: int

    @property
    def met(self) -> bool:
        return self.rows > 0 and self.lost == self.wrong_cell == self.corrupted == 0 == (
            self.unexplained
        )


def twin_verdict(rows: Iterable[TwinRow]) -> TwinVerdict:
    rows = list(rows)
    count = Counter(r.outcome for r in rows)
    return TwinVerdict(
        rows=len(rows),
        rejected=count[TwinOutcome.REJECTED.value],
        already=count[TwinOutcome.ALREADY.value],
        twice=count[TwinOutcome.TWICE.value],
        lost=count[TwinOutcome.LOST.value],
        wrong_cell=count[TwinOutcome.WRONG_CELL.value],
        corrupted=count[TwinOutcome.CORRUPTED.value],
        unexplained=count[TwinOutcome.UNEXPLAINED.value],
    )


def twin_report(rows: Sequence[TwinRow], scenarios: int) -> list[str]:
    """The row's lines for the table: outcomes by the person's change, the targets, failures."""
    head = "".join(f"{o.value:>16}" for o in TwinOutcome)
    lines = [
        "",
        f"== {TWIN_ROW} (two agents send one edit; A's lands, the person saves, B's is applied)",
        f"  {len(rows)} of {scenarios} scenarios (the rest: no merge of both changes to save)",
        f"{'class':<20}{'n':>5}{head}",
    ]
    for conflict in sorted({r.conflict for r in rows}):
        mine = [r for r in rows if r.conflict == conflict]
        count = Counter(r.outcome for r in mine)
        cols = "".join(f"{count[o.value]:>16}" for o in TwinOutcome)
        lines.append(f"{conflict:<20}{len(mine):>5}{cols}")
    verdict = twin_verdict(rows)
    lines.append(
        f"  hashline twin edit: lost {verdict.lost}, wrong cell {verdict.wrong_cell}, corrupted "
        f"{verdict.corrupted}, unexplained {verdict.unexplained} (targets 0); refused "
        f"{verdict.rejected}, already applied {verdict.already}, inserts applied twice "
        f"{verdict.twice}: {'MET' if verdict.met else 'MISSED'}"
    )
    for r in rows:
        if r.outcome in {o.value for o in FAILURES}:
            first = r.message.splitlines()[0] if r.message else ""
            lines.append(f"  twin {r.outcome}: {r.scenario}: {first}")
    return lines
