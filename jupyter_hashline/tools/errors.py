"""The application layer's errors, in the engine's one error tree.

Invariants:
- Every error here is a `HashlineError`: it carries the text an agent reads, a stable `kind`
  and an HTTP status hint, so each surface maps it exactly like an engine error.
- `BadArgumentsError` names the tool, the field and what was expected; it never carries a
  Python error's own wording.
"""

from __future__ import annotations

from ..hashline.errors import HashlineError, StaleTagError

__all__ = [
    "BadArgumentsError",
    "ChangedDuringWriteError",
    "ProposalDecidedError",
    "ProposalForbiddenError",
    "ProposalRefusedError",
    "RevertNotAllowedError",
    "RevertRefusedError",
    "RunNotAllowedError",
    "RunUnavailableError",
    "UnknownActivityError",
    "UnknownProposalError",
    "UnknownToolError",
    "cells_without_proposal",
]


class BadArgumentsError(HashlineError):
    """Tool arguments that do not fit the tool's schema (missing, unknown or mistyped)."""

    kind = "bad_arguments"


def cells_without_proposal() -> BadArgumentsError:
    """A review decision naming cells but no proposal (cells belong to one proposal)."""
    return BadArgumentsError(
        "`cells` goes with `proposal`: name the proposal whose cells to decide (review_list "
        "shows them). Nothing was done."
    )


class UnknownToolError(HashlineError):
    """A tool name that is not in the catalog (or not exposed on this surface)."""

    status = 404
    kind = "unknown_tool"


class ChangedDuringWriteError(StaleTagError):
    """The storage changed while an edit was being written (e.g. a person typed in a live
    notebook), so nothing was written; the edit may be retried as a stale edit."""


class RunNotAllowedError(HashlineError):
    """Running cells is turned off where the call arrived (a read-only server, a server or
    workspace overlay with `allow_run` false, a directory without `--allow-run`); nothing ran."""

    status = 403
    kind = "run_not_allowed"


class RunUnavailableError(HashlineError):
    """This workspace has no kernels to run cells in (e.g. an in-memory filesystem)."""

    status = 501
    kind = "run_unavailable"


class RevertRefusedError(HashlineError):
    """An undo that cannot land safely (the lines the edit wrote changed since, the edit is
    already undone, the text it produced is no longer known); nothing was written."""

    status = 409
    kind = "revert_refused"


class RevertNotAllowedError(HashlineError):
    """Undo is turned off where the request arrived (a read-only server, or an overlay with
    `allow_revert` false); nothing was written."""

    status = 403
    kind = "revert_not_allowed"


class UnknownActivityError(HashlineError):
    """An activity id the feed does not hold (never made, or gone from its bounded log)."""

    status = 404
    kind = "unknown_activity"


class UnknownProposalError(HashlineError):
    """A proposal id this workspace does not hold (never made, or gone from its bounded book)."""

    status = 404
    kind = "unknown_proposal"


class ProposalDecidedError(HashlineError):
    """A decision on a proposal (or cells of it) already accepted or rejected."""

    status = 409
    kind = "proposal_decided"


class ProposalRefusedError(HashlineError):
    """An accept that cannot land safely now (a person changed the same lines, the file is
    gone); nothing was written and the proposal stays pending."""

    status = 409
    kind = "proposal_refused"


class ProposalForbiddenError(HashlineError):
    """The agent that proposed an edit may not accept it itself (review needs a person)."""

    status = 403
    kind = "proposal_forbidden"
