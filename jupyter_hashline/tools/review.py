"""Review mode for a workspace: an agent's edit or write kept as a proposal, and a person's
accept or reject of it (proposals.py holds the values; this module runs them).

Invariants:
- A proposal is made by everything an edit or write checks (seen lines, repairs, rebase,
  syntax), but nothing is written: the reply says plainly that it waits for a person's review.
- Accepting applies the chosen cells' hunks through an exact-rows patcher tagged with the
  text they were made on, so the engine's stale-edit rebase keeps whatever a person changed
  since (or refuses, nothing written, the proposal still pending). The landed edit is
  recorded in the activity feed as the proposing agent's (`source` "proposal"), undoable.
- Decisions run one at a time per workspace: nothing is applied twice, and a cell decided
  once is never decided again. The proposing agent may not accept its own proposal unless
  the policy says so (`self_accept`); it may withdraw it (reject).
- Every decision leaves a notice for the proposing agent, taken by its next read, edit or
  write (workspace.py adds it to that reply).
"""

from __future__ import annotations

import asyncio
import difflib
import time
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

from ..hashline.edits import PatchSection
from ..hashline.errors import HashlineError, NotFoundError, StaleTagError
from ..hashline.results import PatchResult, SectionOp
from ..notebook import capturing_removed
from ..notebook.filesystem import is_notebook_path
from .activity import ActivityRecord
from .calls import ToolOutcome
from .errors import (
    BadArgumentsError,
    ProposalDecidedError,
    ProposalForbiddenError,
    ProposalRefusedError,
    UnknownProposalError,
)
from .proposals import Proposal, ProposalBook, new_cell_names, proposal_hunks
from .requests import DecisionRequest

if TYPE_CHECKING:
    from .workspace import Workspace

__all__ = ["ReviewDesk", "decision_request", "listing_text", "proposed_outcome", "told_text"]


class ReviewDesk:
    """The proposals of one workspace and the decisions on them."""

    def __init__(self, workspace: Workspace, book: ProposalBook | None = None) -> None:
        self.workspace = workspace
        self.book = book if book is not None else ProposalBook()
        self._deciding = asyncio.Lock()

    # -- proposing -----------------------------------------------------------------------------

    async def keep(self, agent: str, result: PatchResult) -> tuple[Proposal, ...]:
        """A proposal for every section of `result` (a propose run) that changes its file."""
        kept = []
        for section in result.sections:
            if section.op is SectionOp.NOOP:
                continue
            key = await self.workspace.fs.canonical_path(section.path)
            notebook = is_notebook_path(section.path) and self.workspace.fs.hashline
            names = new_cell_names(section.after) if notebook else ()
            kept.append(
                self.book.add(
                    path=section.path,
                    key=key,
                    agent=agent,
                    base_tag=section.tag,
                    header=section.header,
                    base=section.before,
                    target=section.after,
                    notebook=notebook,
                    create=section.op is SectionOp.CREATE,
                    new_cells=names,
                    hunks=proposal_hunks(
                        section.before,
                        section.after,
                        notebook,
                        names,
                        section.alignment,
                        section.placed,
                    ),
                )
            )
        return tuple(kept)

    # -- listing -------------------------------------------------------------------------------

    async def listed(self, path: str | None, pending_only: bool = False) -> dict[str, Any]:
        key = None
        if path is not None:
            key = await self.workspace.fs.canonical_path(self.workspace.resolve(path))
        found = self.book.listed(pending_only=pending_only)
        return {"proposals": [p.to_json() for p in found if key is None or p.key == key]}

    # -- deciding ------------------------------------------------------------------------------

    async def decide(self, request: DecisionRequest) -> ToolOutcome:
        """Accept or reject one proposal (or every pending one of a path), as `request` asks."""
        try:
            async with self._deciding:
                if request.proposal is not None:
                    targets = [self._pending(request.proposal)]
                else:
                    targets = await self._pending_of(request.path)
                done = [await self._decide_one(p, request) for p in targets]
        except HashlineError as err:
            return ToolOutcome.failure(err)
        records = tuple(record for _, records, _ in done for record in records)
        text = "\n\n".join(line for _, _, line in done) or "No pending proposal there."
        activity = [record.to_json() for record in records]
        if request.proposal is not None:
            reply: dict[str, Any] = {"proposal": done[0][0].to_json()}
        else:
            reply = {"proposals": [proposal.to_json() for proposal, _, _ in done]}
        return ToolOutcome(
            text, reply={**reply, "activity": activity, "text": text}, activity=records
        )

    def _pending(self, proposal_id: int) -> Proposal:
        proposal = self.book.get(proposal_id)
        if proposal is None:
            raise UnknownProposalError(
                f"No proposal {proposal_id} here (the server keeps its newest proposals, and "
                "none across restarts). Nothing was done."
            )
        if not proposal.pending:
            raise ProposalDecidedError(
                f"Proposal {proposal_id} ({proposal.agent}, {proposal.path}) was already "
                f"decided: {proposal.status}. Nothing was done."
            )
        return proposal

    async def _pending_of(self, path: str | None) -> list[Proposal]:
        if path is None:
            raise BadArgumentsError('Name the notebook: send {"path": P}. Nothing was done.')
        key = await self.workspace.fs.canonical_path(self.workspace.resolve(path))
        return sorted(
            (p for p in self.book.listed(pending_only=True) if p.key == key), key=lambda p: p.id
        )

    async def _decide_one(
        self, proposal: Proposal, request: DecisionRequest
    ) -> tuple[Proposal, tuple[ActivityRecord, ...], str]:
        chosen = proposal.choose(request.cells)
        which = _which(proposal, chosen)
        if not request.accept:
            decided = proposal.decide(chosen, "rejected", request.note)
            said = f": {request.note}" if request.note else ""
            notice = (
                f"Proposal {proposal.id} ({proposal.path}{which}) was rejected by "
                f"{request.agent}{said}. Nothing of it was written."
            )
            own = request.agent == proposal.agent  # withdrawn: it knows
            self.book.update(decided, "rejected", None if own else notice)
            return decided, (), f"Rejected proposal {proposal.id} ({proposal.path}{which})."
        if request.agent == proposal.agent and not self.workspace.review.self_accept:
            raise ProposalForbiddenError(
                f"Proposal {proposal.id} is yours ({proposal.agent}): a person accepts it, not "
                "the agent that proposed it. Nothing was written."
            )
        result, records = await self._land(proposal, chosen)
        decided = proposal.decide(chosen, "accepted", request.note)
        header = result.sections[0].header if result.sections else proposal.header
        rest = f"; still pending: {', '.join(c.cell for c in decided.pending)}"
        self.book.update(
            decided,
            "accepted",
            f"Proposal {proposal.id} ({proposal.path}{which}) was accepted by {request.agent} "
            f"and landed: now {header}" + (rest if decided.pending else "") + ".",
        )
        landed = "\n".join(section.to_text() for section in result.sections)
        return decided, records, f"Accepted proposal {proposal.id}{which}.\n{landed}"

    async def _land(
        self, proposal: Proposal, chosen: frozenset[str]
    ) -> tuple[PatchResult, tuple[ActivityRecord, ...]]:
        """Write the chosen part of `proposal` as the edit of its agent (module docstring)."""
        ws = self.workspace
        try:
            with capturing_removed() as removed:
                if proposal.create:
                    patcher = ws.patcher(proposal.agent)
                    result = await patcher.write(proposal.path, proposal.target)
                else:
                    tag = ws.store.record(proposal.key, proposal.base)
                    section = PatchSection(proposal.path, tag, proposal.edits_for(chosen))
                    patcher = ws.exact_patcher(proposal.agent, ws.syntax_check)
                    result = await ws.retrying(lambda: patcher.apply(section))
        except NotFoundError as err:
            raise ProposalRefusedError(
                f"Proposal {proposal.id} cannot be applied: {proposal.path} is gone "
                f"({err.message.splitlines()[0]}). Nothing was written; reject it."
            ) from err
        except HashlineError as err:
            if not isinstance(err, StaleTagError) and err.status != 409:
                raise
            raise ProposalRefusedError(_refused(proposal, err)) from err
        records = await ws.record(result, proposal.agent, "proposal", removed)
        await ws.note_touched(proposal.agent, result)
        return result, records


def proposed_outcome(proposals: Sequence[Proposal], result: PatchResult) -> ToolOutcome:
    """The reply to an agent whose edit or write became proposals."""
    if not proposals:
        text = "\n".join(section.to_text() for section in result.sections)
        return ToolOutcome(text, reply={**result.to_json(), "activity": [], "proposals": []})
    parts = []
    by_path = {p.path: p for p in proposals}
    for section in result.sections:
        proposal = by_path.get(section.path)
        if proposal is None:
            parts.append(section.to_text())
            continue
        cells = ", ".join(cell.cell for cell in proposal.pending)
        what = f" (cells {cells})" if proposal.notebook and cells else ""
        lines = [
            f"{section.header} PROPOSED, NOT written: proposal {proposal.id}{what} waits for a "
            f"person's review. The file is unchanged; your next read, edit or write tells you "
            "when it is accepted or rejected. Do not send it again.",
        ]
        if section.preview:
            lines += ["The file as it would be:", section.preview]
        lines += [f"warning: {w}" for w in section.warnings]
        parts.append("\n".join(lines))
    text = "\n\n".join(parts)
    reply = {
        **result.to_json(),
        "text": text,
        "activity": [],
        "proposals": [p.to_json() for p in proposals],
    }
    return ToolOutcome(text, reply=reply)


def decision_request(
    data: Mapping[str, Any], *, agent: str, accept: bool, proposal: int | None
) -> DecisionRequest:
    """The decision a JSON body asks for: `{"cells"?, "note"?}` on one proposal, or
    `{"path", "note"?}` for every pending proposal of a notebook (`proposal` None)."""
    allowed = {"cells", "note"} if proposal is not None else {"path", "note"}
    unknown = sorted(set(data) - allowed)
    if unknown:
        raise BadArgumentsError(
            f"Unknown field(s) {', '.join(unknown)}; send {', '.join(sorted(allowed))}. "
            "Nothing was done."
        )
    cells = data.get("cells")
    if cells is not None and (
        not isinstance(cells, list) or not all(isinstance(c, str) and c for c in cells)
    ):
        raise BadArgumentsError("`cells` must be a list of cell keys. Nothing was done.")
    note = data.get("note", "")
    if not isinstance(note, str):
        raise BadArgumentsError("`note` must be a string. Nothing was done.")
    path = data.get("path")
    if proposal is None and (not isinstance(path, str) or not path):
        raise BadArgumentsError('Send {"path": P}: the notebook whose proposals to decide.')
    return DecisionRequest(
        agent=agent,
        accept=accept,
        proposal=proposal,
        path=path if proposal is None else None,
        cells=tuple(cells) if cells is not None else None,
        note=note.strip()[:2000],
    )


def told_text(notices: Sequence[str], text: str) -> str:
    """`text` of a reply with the review decisions its agent is told: one `review:` line each,
    then a blank line (the same on every surface)."""
    if not notices:
        return text
    return "\n".join([*(f"review: {notice}" for notice in notices), "", text])


def listing_text(listing: Mapping[str, Any], path: str | None = None) -> str:
    """A reviewer's text of a proposals listing (the REST reply `{"proposals": [...]}`): the
    pending proposals, oldest first, each pending cell's change as a unified diff."""
    pending = [p for p in listing.get("proposals", ()) if p.get("status") == "pending"]
    if not pending:
        return "No proposal waits for review" + (f" of {path}." if path else ".")
    pending.sort(key=lambda p: int(p["id"]))
    count = f"{len(pending)} proposal{'s' if len(pending) > 1 else ''}"
    parts = [
        f"{count} wait{'' if len(pending) > 1 else 's'} for review. Accept with review_accept "
        '{"proposal": N} (add "cells": [...] to accept some cells only), reject with '
        "review_reject; a cell marked `together` is decided with the cells it names."
    ]
    for proposal in pending:
        parts.append(_proposal_text(proposal))
    return "\n\n".join(parts)


def _proposal_text(proposal: Mapping[str, Any]) -> str:
    cells = [c for c in proposal.get("cells", ()) if c.get("status") == "pending"]
    at = time.strftime("%H:%M:%S UTC", time.gmtime(int(proposal["at_ms"]) / 1000))
    what = "the file" if proposal.get("text_file") else f"{len(cells)} cell(s) pending"
    lines = [
        f"proposal {proposal['id']}: {proposal['agent']}, {proposal['path']}, made on "
        f"{proposal['header']} at {at}, {what}"
    ]
    for cell in cells:
        if not proposal.get("text_file"):
            where = f", after {cell['after_cell']}" if cell.get("after_cell") else ""
            together = cell.get("together") or ()
            joined = f", together with {', '.join(together)}" if together else ""
            lines.append(f"cell {cell['cell']} ({cell['kind']}{where}{joined}):")
        diff = difflib.unified_diff(
            str(cell.get("before", "")).splitlines(),
            str(cell.get("after", "")).splitlines(),
            n=2,
            lineterm="",
        )
        lines.extend(list(diff)[2:])  # past the two file-name lines
    return "\n".join(lines)


def _which(proposal: Proposal, chosen: frozenset[str]) -> str:
    if not proposal.notebook:
        return ""
    return f", cells {', '.join(sorted(chosen))}"


def _refused(proposal: Proposal, err: HashlineError) -> str:
    first = err.message.split("\n")[0]
    return (
        f"Proposal {proposal.id} ({proposal.agent}, {proposal.path}) cannot be applied now: "
        f"the file changed since it was proposed, on the lines it changes, so applying it "
        f"would overwrite that change. Nothing was written; it stays pending (reject it, or "
        f"ask the agent to propose again). The engine said: {first}"
    )
