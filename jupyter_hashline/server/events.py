"""Hashline activity and session updates on jupyter_server's event bus.

The JupyterLab sidebar subscribes to the server's event stream (`/api/events/subscribe`,
`ServiceManager.events` in the browser) and refreshes when one of these events arrives, so it
needs no fast poll.

Invariants:
- Three versioned schemas, the JSON files in `event_schemas/`, with ids under the stable
  namespace `https://events.jupyter.org/jupyter_hashline/`: `activity/v1`, one edit that
  changed one file or one run of notebook cells (emitted for every activity record: patch,
  write, run, any route that records one), `session/v1`, an agent session posted its
  snapshot, and `proposal/v1`, an edit proposed for review or a decision on one. A change of
  shape is a new version (`runs` joined activity/v1 before any release).
- Events name what changed (path, who, op, when, headers, cells, each run cell's status and
  duration; a session's id and counts), never a diff, a text, an output or a snapshot:
  subscribers fetch those from the REST API, which checks the reader's permissions per route.
- Emitting never fails the edit it reports (the edit has landed): an emission error is
  logged as a warning and the reply goes out as usual.
- The hook is a listener on the activity log and on the session registry, so it follows them
  wherever they are built; nothing else in the server calls this module.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable
from pathlib import Path
from typing import Any

from jupyter_events.logger import EventLogger

from ..tools import ActivityLog, ActivityRecord, Proposal, ProposalBook
from .sessions import SessionEntry, SessionRegistry

EVENT_NAMESPACE = "https://events.jupyter.org/jupyter_hashline/"
ACTIVITY_EVENT = EVENT_NAMESPACE + "activity/v1"
SESSION_EVENT = EVENT_NAMESPACE + "session/v1"
PROPOSAL_EVENT = EVENT_NAMESPACE + "proposal/v1"
SCHEMA_DIR = Path(__file__).with_name("event_schemas")
SCHEMA_FILES = {
    ACTIVITY_EVENT: SCHEMA_DIR / "activity.json",
    SESSION_EVENT: SCHEMA_DIR / "session.json",
    PROPOSAL_EVENT: SCHEMA_DIR / "proposal.json",
}


def event_schema(schema_id: str) -> dict[str, Any]:
    """The JSON Schema of one hashline event (as registered with the event logger)."""
    schema: dict[str, Any] = json.loads(SCHEMA_FILES[schema_id].read_text(encoding="utf-8"))
    return schema


def activity_event(record: ActivityRecord) -> dict[str, Any]:
    """The `activity/v1` event of one activity record: the record without diff and warnings."""
    return {
        "id": record.id,
        "path": record.path,
        "op": record.op,
        "source": record.source,
        "who": record.who,
        "at_ms": record.at_ms,
        "header_before": record.header_before,
        "header_after": record.header_after,
        "cells": list(record.cells),
        "runs": [run.to_json() for run in record.runs],
    }


def session_event(entry: SessionEntry, created: bool) -> dict[str, Any]:
    """The `session/v1` event of one accepted session post."""
    return {
        "id": entry.id,
        "label": entry.label,
        "created": created,
        "updates": entry.updates,
        "updated_at_ms": entry.updated_at_ms,
    }


def proposal_event(proposal: Proposal, action: str) -> dict[str, Any]:
    """The `proposal/v1` event of one change of a proposal: what changed, never a diff."""
    return {
        "id": proposal.id,
        "path": proposal.path,
        "agent": proposal.agent,
        "status": proposal.status,
        "action": action,
        "at_ms": proposal.at_ms,
        "cells": [cell.cell for cell in proposal.pending],
    }


class HashlineEvents:
    """Emits hashline events on one server's event bus."""

    def __init__(self, bus: EventLogger, log: logging.Logger) -> None:
        self._bus = bus
        self._log = log

    def register(self) -> None:
        """Register both schemas (once per bus)."""
        for schema_id in SCHEMA_FILES:
            if schema_id not in self._bus.schemas:
                self._bus.register_event_schema(event_schema(schema_id))

    def on_activity(self, record: ActivityRecord) -> None:
        self._emit(ACTIVITY_EVENT, activity_event(record))

    def on_session(self, entry: SessionEntry, created: bool) -> None:
        self._emit(SESSION_EVENT, session_event(entry, created))

    def on_proposal(self, proposal: Proposal, action: str) -> None:
        self._emit(PROPOSAL_EVENT, proposal_event(proposal, action))

    def _emit(self, schema_id: str, data: dict[str, Any]) -> None:
        try:
            self._bus.emit(schema_id=schema_id, data=data)
        except Exception as err:  # the edit has landed; a failed event must not undo its reply
            self._log.warning("jupyter_hashline: could not emit %s: %s", schema_id, err)


def connect_events(
    bus: EventLogger | None,
    *,
    activity: ActivityLog,
    sessions: SessionRegistry,
    log: logging.Logger,
    proposals: ProposalBook | None = None,
) -> Callable[[], None]:
    """Register the schemas and emit on every activity record, session post and proposal
    change.

    Returns a function that disconnects both listeners. Without a bus (a server app that has
    no event logger) nothing is emitted; the sidebar's fallback poll still sees every edit.
    """
    if bus is None:
        log.warning("jupyter_hashline: the server has no event logger; no events are emitted")
        return lambda: None
    events = HashlineEvents(bus, log)
    events.register()
    stops = [activity.subscribe(events.on_activity), sessions.subscribe(events.on_session)]
    if proposals is not None:
        stops.append(proposals.subscribe(events.on_proposal))

    def disconnect() -> None:
        for stop in stops:
            stop()

    return disconnect
