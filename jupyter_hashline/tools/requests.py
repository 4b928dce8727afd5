"""Typed tool requests: what one tool call asks for, after validation, on every surface.

Invariants:
- Requests are frozen values built only by `validate.tool_request` (or by keyword in code that
  already holds typed values); every field is already of its declared type and in range.
- Every request carries `agent`: the identity whose seen lines and no-op streak the call uses
  and whose name the activity feed shows.
- A field's name is the tool argument's name (the catalog's), so a request serializes back to
  the arguments (`arguments()`) without a per-tool table.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, fields
from typing import Any

__all__ = [
    "DecisionRequest",
    "EditRequest",
    "EvalRequest",
    "JsonEdits",
    "KernelRequest",
    "OutputsRequest",
    "ReadRequest",
    "RevertRequest",
    "ReviewAcceptRequest",
    "ReviewListRequest",
    "ReviewRejectRequest",
    "ReviewRequest",
    "RunRequest",
    "ToolRequest",
    "WriteRequest",
]

JsonEdits = Mapping[str, Any] | Sequence[Mapping[str, Any]]
"""The JSON edit form: one section `{path, tag, edits}` or a list of sections."""


class _Arguments:
    """Shared behaviour: the request as tool arguments (None fields left out, no agent)."""

    __slots__ = ()

    def arguments(self) -> dict[str, Any]:
        values = {f.name: getattr(self, f.name) for f in fields(self)}  # type: ignore[arg-type]
        return {
            name: value for name, value in values.items() if name != "agent" and value is not None
        }


@dataclass(frozen=True, slots=True)
class ReadRequest(_Arguments):
    """Show `path` (or lines `offset`..`offset+limit-1`, or the lines of `cells`)."""

    agent: str
    path: str
    offset: int | None = None
    limit: int | None = None
    cells: tuple[str, ...] | None = None


@dataclass(frozen=True, slots=True)
class EditRequest(_Arguments):
    """Apply an edit: exactly one of `patch` (edit text) or `edits` (the JSON form)."""

    agent: str
    patch: str | None = None
    edits: JsonEdits | None = None
    layout: str | None = None
    propose: bool | None = None  # true: a proposal for a person's review, not an edit

    @property
    def edit(self) -> str | JsonEdits:
        """The edit as the engine takes it (the text form or the JSON form)."""
        if self.patch is not None:
            return self.patch
        assert self.edits is not None, "validate.tool_request guarantees one of the two"
        return self.edits


@dataclass(frozen=True, slots=True)
class WriteRequest(_Arguments):
    """Create `path` or replace all of it with `content`: an existing file only under the `tag`
    of the version it replaces, or with `overwrite` true (where that is allowed)."""

    agent: str
    path: str
    content: str
    layout: str | None = None
    tag: str | None = None
    overwrite: bool | None = None
    propose: bool | None = None  # true: a proposal for a person's review, not a write


@dataclass(frozen=True, slots=True)
class OutputsRequest(_Arguments):
    """The outputs of cell `cell` of notebook `path`, text clipped to `max_chars`; with
    `images`, its PNG/JPEG outputs as figures too."""

    agent: str
    path: str
    cell: str
    max_chars: int | None = None
    images: bool | None = None


@dataclass(frozen=True, slots=True)
class RunRequest(_Arguments):
    """Run code cells of notebook `path` whose sources are as the agent saw them at `tag`.

    `cells` names the cells in the order to run them (None: the code cells the agent's last
    edit of the notebook touched); `timeout_s` limits each cell, `max_chars` each cell's text;
    with `images`, the cells' PNG/JPEG outputs come back as figures too.
    """

    agent: str
    path: str
    tag: str
    cells: tuple[str, ...] | None = None
    timeout_s: float | None = None
    max_chars: int | None = None
    images: bool | None = None


@dataclass(frozen=True, slots=True)
class EvalRequest(_Arguments):
    """Run `code` in the kernel of notebook `path` without adding a cell; `timeout_s` limits
    it, `max_chars` its output text; with `images`, its PNG/JPEG outputs come back too."""

    agent: str
    path: str
    code: str
    timeout_s: float | None = None
    max_chars: int | None = None
    images: bool | None = None


@dataclass(frozen=True, slots=True)
class KernelRequest(_Arguments):
    """`action` (status, interrupt or restart) on the kernel of notebook `path`."""

    agent: str
    path: str
    action: str


@dataclass(frozen=True, slots=True)
class RevertRequest:
    """Undo recorded edits: the one record `activity`, or every edit `target_agent` made at or
    after `since_ms` (newest first, all or nothing). `agent` is who asks (a person, usually)."""

    agent: str
    activity: int | None = None
    target_agent: str | None = None
    since_ms: int | None = None


@dataclass(frozen=True, slots=True)
class DecisionRequest:
    """Accept (or reject) proposal `proposal`, its `cells` only when named; with `proposal`
    None, every pending proposal of `path`. `agent` is who decides (a person, usually);
    `note` is said to the agent that proposed it."""

    agent: str
    accept: bool
    proposal: int | None = None
    path: str | None = None
    cells: tuple[str, ...] | None = None
    note: str = ""


@dataclass(frozen=True, slots=True)
class ReviewListRequest(_Arguments):
    """The proposals waiting for review (of `path` only, when named)."""

    agent: str
    path: str | None = None


@dataclass(frozen=True, slots=True)
class ReviewAcceptRequest(_Arguments):
    """Accept proposal `proposal` (its `cells` only, when named) or every pending proposal of
    `path`, as `agent`; `note` is said to the agent that proposed it."""

    agent: str
    proposal: int | None = None
    path: str | None = None
    cells: tuple[str, ...] | None = None
    note: str | None = None

    def decision(self) -> DecisionRequest:
        return _decision(self, accept=True)


@dataclass(frozen=True, slots=True)
class ReviewRejectRequest(_Arguments):
    """Reject proposal `proposal` (its `cells` only, when named) or every pending proposal of
    `path`, as `agent`; `note` is said to the agent that proposed it."""

    agent: str
    proposal: int | None = None
    path: str | None = None
    cells: tuple[str, ...] | None = None
    note: str | None = None

    def decision(self) -> DecisionRequest:
        return _decision(self, accept=False)


def _decision(
    request: ReviewAcceptRequest | ReviewRejectRequest, *, accept: bool
) -> DecisionRequest:
    return DecisionRequest(
        agent=request.agent,
        accept=accept,
        proposal=request.proposal,
        path=request.path if request.proposal is None else None,
        cells=request.cells,
        note=(request.note or "").strip()[:2000],
    )


ReviewRequest = ReviewListRequest | ReviewAcceptRequest | ReviewRejectRequest
"""A reviewer's tool call: the review tools, offered apart from the agent's (catalog.py)."""

ToolRequest = (
    ReadRequest
    | EditRequest
    | WriteRequest
    | OutputsRequest
    | RunRequest
    | EvalRequest
    | KernelRequest
    | ReviewRequest
)
