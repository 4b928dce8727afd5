"""The review rows of the stale-edit safety table: the agent's edit is a proposal, the person
saves their change, then accepts (or rejects) the proposal.

Each scenario of the table (bench/safety_scenarios.py) runs through the real application layer
(`tools.Workspace` in review mode over `NotebookFilesystem` on disk): the agent reads `N0` and
proposes its edit, which must leave the file byte for byte as it was; the person's notebook is
saved over it; then the person decides.

- `hashline review, accept`: the person accepts the whole proposal. It must land as the stale
  edit would (the same oracle judges it: the person's change kept, the agent's on top), or be
  refused with the file untouched: the table's targets (0 lost, 0 wrong cell, 0 corrupted, 0
  unexplained; >= 95% of non-conflicting scenarios applied; every overlapping one refused).
- `hashline review, reject`: the person rejects it. The file must stay byte for byte the
  person's: every row `rejected`, nothing else.
- `hashline review, accept part`: the agent's proposal also changes a decoy cell (one that
  neither the scenario's edit nor the person touches, two cells or more from the edit's); the
  person accepts every cell of it but the decoy, then rejects the decoy. The oracle judges the
  file as for `accept`: a decoy that leaked in is a change nobody asked for. Notebooks with no
  such cell propose the edit alone (the rows with a decoy say so first: `decoy ID rejected`).
- `hashline review, two agents`: two agents read `N0` and propose the same edit concurrently;
  after the person's save the person accepts the second agent's proposal and then rejects the
  first's. The accept is judged by the same oracle and targets as `accept`, so the reject that
  follows it must leave the file as the accept made it. (Accepting both would apply the edit
  twice, which is what a person accepting two proposals asks for; the oracle knows one edit.)
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

from bench.safety_scenarios import AgentOp, CellOp, Scenario
from bench.safety_strategies import Attempt, _check_shown, _hashline_edits, _payload
from jupyter_hashline.hashline import InMemorySnapshotStore
from jupyter_hashline.hashline.disk import DiskFilesystem
from jupyter_hashline.notebook import NotebookFilesystem, ProjectedCell, parse_projection
from jupyter_hashline.tools import (
    ReviewMode,
    ReviewPolicy,
    Workspace,
    decision_request,
    run_tool,
)

__all__ = ["ReviewStrategy"]


class ProposalWroteError(AssertionError):
    """A proposal changed the file before anyone accepted it: the bench stops, loudly."""


class ReviewStrategy:
    """Propose the agent's edit on the read, then accept or reject it after the person's save
    (with `agents=2`: two agents propose it at once; one proposal is decided, the other
    rejected after it)."""

    policy = ReviewPolicy(ReviewMode.ON)

    def __init__(self, accept: bool, agents: int = 1, partial: bool = False) -> None:
        self.accept, self.partial = accept, partial
        self.agents = ("agent", "agent-b")[:agents]
        if agents == 2:
            self.name = "hashline review, two agents"
        elif partial:
            self.name = "hashline review, accept part"
        else:
            self.name = f"hashline review, {'accept' if accept else 'reject'}"
        self._ws: Workspace | None = None
        self._proposals: list[int] = []
        self._payload = 0
        self._decoy: str | None = None  # the decoy cell's id, when this scenario has one

    async def prepare(self, path: Path, scenario: Scenario) -> None:
        fs = NotebookFilesystem(DiskFilesystem(path.parent))
        self._ws = ws = Workspace(fs, InMemorySnapshotStore(), review=self.policy)
        made = await asyncio.gather(*(self._propose(ws, path, scenario, a) for a in self.agents))
        if path.read_text(encoding="utf-8") != scenario.before:
            raise ProposalWroteError(f"{scenario.name}: proposing wrote the notebook")
        self._proposals = [number for number in made if number]

    async def _propose(self, ws: Workspace, path: Path, scenario: Scenario, agent: str) -> int:
        """`agent` reads the notebook and proposes the scenario's edit: its proposal number
        (0: the edit changed nothing)."""
        read = await run_tool(ws, "notebook_read", {"path": path.name}, agent=agent)
        text = await ws.fs.read_text(path.name)
        rows = text.split("\n")
        cells = parse_projection(text)
        _check_shown(scenario, cells, rows)
        edits = [e for op in scenario.agent.ops for e in _hashline_edits(op, cells, rows)]
        if self.partial:
            self._decoy, decoy = _decoy(scenario, cells)
            edits += decoy
        sent: dict[str, Any] = {
            "edits": {"path": path.name, "tag": read.reply["tag"], "edits": edits}
        }
        self._payload = _payload(sent)
        outcome = await run_tool(ws, "notebook_edit", sent, agent=agent)
        proposals = outcome.reply.get("proposals") or [{"id": 0}]
        return int(proposals[0]["id"])

    async def apply(self, path: Path, scenario: Scenario) -> Attempt:
        assert self._ws is not None
        if not self._proposals:  # the edit changed nothing: nothing to decide
            return Attempt(True, "no proposal (the edit changed nothing)", self._payload)
        *others, chosen = self._proposals  # the last agent's is accepted, the others rejected
        if self._decoy is not None:
            return await self._accept_but_decoy(chosen)
        return await self._decide_whole(chosen, others)

    async def _decide_whole(self, chosen: int, others: list[int]) -> Attempt:
        """Accept (or reject) proposal `chosen` whole, then reject `others`."""
        assert self._ws is not None
        body = decision_request({}, agent="person", accept=self.accept, proposal=chosen)
        outcome = await self._ws.decide(body)
        said = [outcome.text]
        for number in others:
            body = decision_request({}, agent="person", accept=False, proposal=number)
            said.append((await self._ws.decide(body)).text)
        refused = outcome.is_error or not self.accept
        return Attempt(refused, "\n".join(said), self._payload)

    async def _accept_but_decoy(self, number: int) -> Attempt:
        """Accept every cell of proposal `number` but the decoy's, then reject the decoy."""
        assert self._ws is not None
        proposal = self._ws.desk.book.get(number)
        assert proposal is not None
        keys = [cell.cell for cell in proposal.pending if cell.cell != self._decoy]
        accept = decision_request({"cells": keys}, agent="person", accept=True, proposal=number)
        outcome = await self._ws.decide(accept)
        if outcome.is_error:  # refused: the decoy must stay pending, and is rejected too
            rest = decision_request({}, agent="person", accept=False, proposal=number)
        else:
            rest = decision_request(
                {"cells": [self._decoy]}, agent="person", accept=False, proposal=number
            )
        rejected = await self._ws.decide(rest)
        if rejected.is_error:
            raise AssertionError(f"the decoy could not be rejected: {rejected.text}")
        said = f"decoy {self._decoy} rejected\n{outcome.text}\n{rejected.text}"
        return Attempt(outcome.is_error, said, self._payload)


def _decoy(
    scenario: Scenario, cells: tuple[ProjectedCell, ...]
) -> tuple[str | None, list[dict[str, Any]]]:
    """A cell neither the edit nor the person touches, two cells or more from the edit's, and
    the edit adding a row at its end; (None, []) when the notebook has none."""
    before = {c.get("id"): "".join(c["source"]) for c in json.loads(scenario.before)["cells"]}
    person = {c.get("id"): "".join(c["source"]) for c in json.loads(scenario.person)["cells"]}
    near = {
        index + step
        for op in scenario.agent.ops
        for index in _cells_of(op)
        for step in (-2, -1, 0, 1, 2)
    }
    for index, cell in enumerate(cells):
        key = cell.cell_id
        if index in near or key is None or before.get(key) != person.get(key):
            continue
        row = f"# decoy {scenario.agent.token}"
        return key, [{"op": "insert_after", "line": cell.last_line, "lines": [row]}]
    return None, []


def _cells_of(op: AgentOp) -> list[int]:
    if isinstance(op, CellOp):
        return [i for i in (op.cell, op.dest, op.named) if i >= 0]
    return [op.cell]
