"""What `Workspace.run` keeps and computes around a kernel: the stale-safe gate with the
workspace's store and policy, the cells each agent's last edit touched, and the reply.

`RunGate` judges one run request against the snapshot at the agent's tag, the live text and
the agent's seen lines (`kernels.plan_run`), recording in the store what a refusal showed, as
an edit rejection does. `TouchedCells` remembers, per agent and notebook, the cells of the
agent's last edit (the default cells of a run). `run_reply` turns a `KernelRun` into the
agent's text and the REST reply.

Invariants:
- A refusal records the live text it was judged against (its tag becomes known) and credits
  the agent with the lines the message showed; a complete unseen-lines refusal credits the
  revealed lines at the agent's tag, so the same call succeeds when sent again.
- With the `warn` seen-lines policy an unseen line does not refuse the run: it runs with a
  note naming those lines; with `off` lines are not checked.
- `TouchedCells` is bounded (least recently edited notebooks go first) and per agent: one
  agent's edit never sets another agent's default cells.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..hashline import messages
from ..hashline.patcher import SeenLinesPolicy
from ..hashline.store import SnapshotStore
from ..kernels import (
    KernelRun,
    RunPlan,
    StaleCellsError,
    UnseenCellsError,
    added_or_changed_cells,
    plan_run,
)
from .activity import ActivityRecord, RunEntry
from .requests import RunRequest

__all__ = ["RunGate", "TouchedCells", "run_entries", "run_reply"]


class TouchedCells:
    """The cells each agent's last edit of each notebook touched (see the module docstring)."""

    def __init__(self, limit: int = 4096) -> None:
        self._cells: OrderedDict[tuple[str, str], tuple[str, ...]] = OrderedDict()
        self._limit = limit

    @staticmethod
    def between(before: str, after: str) -> tuple[str, ...]:
        """The cells an edit turning projection `before` into `after` added or changed (it
        parses both: a caller with big texts runs it off the event loop)."""
        return added_or_changed_cells(before, after)

    def remember(self, agent: str, key: str, cells: tuple[str, ...]) -> None:
        """An edit of notebook `key` by `agent` touched `cells` (see `between`)."""
        self._cells[(agent, key)] = cells
        self._cells.move_to_end((agent, key))
        while len(self._cells) > self._limit:
            self._cells.popitem(last=False)

    def get(self, agent: str, key: str) -> tuple[str, ...] | None:
        """The cells of `agent`'s last edit of `key` (None: it has not edited it here)."""
        return self._cells.get((agent, key))


@dataclass(frozen=True, slots=True)
class GatePassed:
    """A run cleared by the gate: the plan, the text the agent saw at its tag, the live text
    the plan was judged against, and notes for the reply."""

    plan: RunPlan
    snapshot_text: str
    live_text: str
    notes: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class RunGate:
    """The stale-safe gate with the workspace's store and seen-lines policy."""

    store: SnapshotStore
    policy: SeenLinesPolicy

    def judge(
        self,
        request: RunRequest,
        *,
        path: str,
        key: str,
        live_text: str,
        touched: tuple[str, ...] | None,
    ) -> GatePassed:
        """The plan for `request`, or the refusal (with what it showed recorded)."""
        snapshot = self.store.by_hash(key, request.tag)
        if snapshot is None:
            self.store.record(key, live_text)
        snapshot_text = snapshot.text if snapshot is not None else None
        arguments: dict[str, Any] = {
            "tag": request.tag,
            "snapshot_text": snapshot_text,
            "live_text": live_text,
            "cells": request.cells,
            "touched": touched,
        }
        try:
            plan = plan_run(path, **arguments, seen_lines=self._seen(request, key))
            notes: tuple[str, ...] = ()
        except UnseenCellsError as err:
            if self.policy is not SeenLinesPolicy.WARN:
                if err.complete:
                    lines = err.revealed_lines
                    self.store.record_seen_lines(key, request.tag, lines, agent=request.agent)
                raise
            plan = plan_run(path, **arguments)
            notes = (_unseen_note(err),)
        except StaleCellsError as err:
            tag = self.store.record(key, err.live_text)
            self.store.record_seen_lines(key, tag, err.shown_lines, agent=request.agent)
            raise
        assert snapshot_text is not None, "plan_run refuses a tag without a snapshot"
        return GatePassed(plan, snapshot_text, live_text, notes)

    def _seen(self, request: RunRequest, key: str) -> frozenset[int] | None:
        if self.policy is SeenLinesPolicy.OFF:
            return None
        return self.store.seen_lines(key, request.tag, agent=request.agent)


def _unseen_note(err: UnseenCellsError) -> str:
    lines = messages.spans(err.revealed_lines) if err.revealed_lines else "some lines"
    return (
        f"you were never shown line(s) {lines} of the cells that ran under your header "
        "(the seen-lines policy is warn, so they ran); read them to know what ran"
    )


def run_entries(run: KernelRun) -> tuple[RunEntry, ...]:
    """Each cell's status, duration and execution count, for the activity feed."""
    return tuple(
        RunEntry(
            cell=cell.cell_id,
            status=cell.status.value,
            duration_ms=cell.duration_ms,
            execution_count=cell.execution_count,
        )
        for cell in run.cells
    )


def run_reply(
    run: KernelRun,
    *,
    path: str,
    tag: str,
    notes: tuple[str, ...],
    max_chars: int,
    record: ActivityRecord,
) -> tuple[str, Mapping[str, Any]]:
    """The agent's text and the REST reply of a run whose notebook now has `tag`."""
    header = messages.header(path, tag)
    text = run.to_text(header, max_chars=max_chars, plan_notes=notes)
    reply = {
        **run.to_json(max_chars=max_chars),
        "path": path,
        "tag": tag,
        "header": header,
        "notes": [*notes, *run.notes],
        "text": text,
        "activity": [record.to_json()],
    }
    return text, reply
