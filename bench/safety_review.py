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
- `hashline review, two agents`: two agents read `N0` and propose the same edit concurrently;
  after the person's save the person accepts the second agent's proposal and then rejects the
  first's. The accept is judged by the same oracle and targets as `accept`, so the reject that
  follows it must leave the file as the accept made it. (Accepting both would apply the edit
  twice, which is what a person accepting two proposals asks for; the oracle knows one edit.)
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from bench.safety_scenarios import Scenario
from bench.safety_strategies import Attempt, _check_shown, _hashline_edits, _payload
from jupyter_hashline.hashline import InMemorySnapshotStore
from jupyter_hashline.hashline.disk import DiskFilesystem
from jupyter_hashline.notebook import NotebookFilesystem, parse_projection
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

    def __init__(self, accept: bool, agents: int = 1) -> None:
        self.accept = accept
        self.agents = ("agent", "agent-b")[:agents]
        self.name = (
            "hashline review, two agents"
            if agents == 2
            else f"hashline review, {'accept' if accept else 'reject'}"
        )
        self._ws: Workspace | None = None
        self._proposals: list[int] = []
        self._payload = 0

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
        body = decision_request({}, agent="person", accept=self.accept, proposal=chosen)
        outcome = await self._ws.decide(body)
        said = [outcome.text]
        for number in others:
            body = decision_request({}, agent="person", accept=False, proposal=number)
            said.append((await self._ws.decide(body)).text)
        refused = outcome.is_error or not self.accept
        return Attempt(refused, "\n".join(said), self._payload)
