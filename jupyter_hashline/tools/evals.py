"""`notebook_eval`: code run in a notebook's kernel without a cell, and its reply.

`eval_reply` turns the `KernelRun` of an evaluation into the agent's text and the REST reply;
`Workspace.eval` (workspace.py) gates it like a run (a workspace whose runs are refused or
that has no runner refuses before anything starts) and records it in the activity feed.

Invariants:
- An evaluation never changes the notebook: no cell is added, no output written, nothing
  recorded in the snapshot store. The reply's header is the notebook's current one.
- The activity record of an evaluation has op `run`, source `eval`, no cells, the code as its
  `diff` (what ran, for a person reading the feed) and the evaluation's status in `runs`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..kernels import KernelRun
from .activity import ActivityRecord

__all__ = ["eval_reply"]


def eval_reply(
    run: KernelRun, *, path: str, header: str, max_chars: int, record: ActivityRecord
) -> tuple[str, Mapping[str, Any]]:
    """The agent's text and the REST reply of an evaluation in `path`'s kernel."""
    parts = [
        f"{header} evaluated in kernel {run.kernel}; the notebook is unchanged",
        *(cell.to_text(max_chars) for cell in run.cells),
        *(f"note: {note}" for note in run.notes),
    ]
    text = "\n".join(parts)
    reply = {
        **run.to_json(max_chars=max_chars),
        "path": path,
        "header": header,
        "text": text,
        "activity": [record.to_json()],
    }
    return text, reply
