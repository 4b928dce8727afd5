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
"""

from __future__ import annotations

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
    """Propose the agent's edit on the read, then accept or reject it after the person's save."""

    policy = ReviewPolicy(ReviewMode.ON)

    def __init__(self, accept: bool) -> None:
        self.accept = accept
        self.name = f"hashline review, {'accept' if accept else 'reject'}"
        self._ws: Workspace | None = None
        self._proposal = 0
        self._payload = 0

    async def prepare(self, path: Path, scenario: Scenario) -> None:
        fs = NotebookFilesystem(DiskFilesystem(path.parent))
        self._ws = ws = Workspace(fs, InMemorySnapshotStore(), review=self.policy)
        read = await run_tool(ws, "notebook_read", {"path": path.name}, agent="agent")
        text = await fs.read_text(path.name)
        rows = text.split("\n")
        cells = parse_projection(text)
        _check_shown(scenario, cells, rows)
        edits = [e for op in scenario.agent.ops for e in _hashline_edits(op, cells, rows)]
        sent: dict[str, Any] = {
            "edits": {"path": path.name, "tag": read.reply["tag"], "edits": edits}
        }
        self._payload = _payload(sent)
        outcome = await run_tool(ws, "notebook_edit", sent, agent="agent")
        if path.read_text(encoding="utf-8") != scenario.before:
            raise ProposalWroteError(f"{scenario.name}: proposing wrote the notebook")
        proposals = outcome.reply.get("proposals") or [{"id": 0}]
        self._proposal = int(proposals[0]["id"])

    async def apply(self, path: Path, scenario: Scenario) -> Attempt:
        assert self._ws is not None
        if not self._proposal:  # the edit changed nothing: nothing to decide
            return Attempt(True, "no proposal (the edit changed nothing)", self._payload)
        body = decision_request({}, agent="person", accept=self.accept, proposal=self._proposal)
        outcome = await self._ws.decide(body)
        refused = outcome.is_error or not self.accept
        return Attempt(refused, outcome.text, self._payload)
