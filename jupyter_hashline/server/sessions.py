"""A registry of agent session snapshots, posted by sessions running in kernels.

A session (`jupyter_hashline.agent.Session.snapshot()`) posts its JSON snapshot here so the
JupyterLab sidebar can show every agent's zones, cache ledger and edits in one place.

Invariants:
- A snapshot is any JSON object holding at least "zones", "cache", "audit" and "edits";
  anything else is refused. The registry keeps the latest snapshot per id, not a history.
- Session ids are 1-64 characters of letters, digits, `.`, `_` and `-`; a post without an id
  gets a fresh one. Posting to an existing id updates it (its `updates` count grows).
- At most `max_sessions` are kept; the least recently updated one goes first.
- Summaries are derived from the snapshot defensively: a missing or mistyped field shows as
  null, never as an error. Edits and runs are counted apart; a session is `closed` once its
  snapshot says so (`Session.aclose()` posts a last one).
- Listeners (`subscribe`) hear every accepted post once, after it is stored and outside the
  registry's lock, with the entry and whether it created the session.
"""

from __future__ import annotations

import re
import threading
import time
import uuid
from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from .errors import BadRequestError, SessionNotFoundError

REQUIRED_KEYS = ("zones", "cache", "audit", "edits")
SessionListener = Callable[["SessionEntry", bool], None]
_SESSION_ID = re.compile(r"^[A-Za-z0-9._-]{1,64}$")


@dataclass(frozen=True, slots=True)
class SessionEntry:
    """The latest snapshot one agent session posted."""

    id: str
    label: str
    created_at_ms: int
    updated_at_ms: int
    updates: int
    snapshot: Mapping[str, Any]

    def summary(self) -> dict[str, Any]:
        zones = _mapping(self.snapshot.get("zones"))
        cache = _mapping(self.snapshot.get("cache"))
        prefix = _mapping(zones.get("prefix"))
        hit_ratio = cache.get("hit_ratio")
        return {
            "id": self.id,
            "label": self.label,
            "created_at_ms": self.created_at_ms,
            "updated_at_ms": self.updated_at_ms,
            "updates": self.updates,
            "prefix_short_id": _str_or_none(prefix.get("short_id")),
            "hit_ratio": hit_ratio if isinstance(hit_ratio, (int, float)) else None,
            "turns": _len_or_none(cache.get("turns")),
            "edits": _count(self.snapshot.get("edits"), run=False),
            "runs": _count(self.snapshot.get("edits"), run=True),
            "rebuilds": _len_or_none(self.snapshot.get("audit")),
            "closed": _mapping(self.snapshot.get("session")).get("closed") is True,
        }

    def to_json(self) -> dict[str, Any]:
        return {**self.summary(), "snapshot": dict(self.snapshot)}


def _mapping(value: Any) -> Mapping[str, Any]:
    return value if isinstance(value, Mapping) else {}


def _str_or_none(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _count(records: Any, *, run: bool) -> int | None:
    """How many activity records are runs (`run`) or edits, apart: "3 edits" must not count
    runs, which change outputs, not text."""
    if not isinstance(records, (list, tuple)):
        return None
    return sum((_mapping(r).get("op") == "run") is run for r in records)


def _len_or_none(value: Any) -> int | None:
    return len(value) if isinstance(value, (list, tuple)) else None


def check_snapshot(snapshot: Any) -> Mapping[str, Any]:
    """The snapshot if it has the shape of a session snapshot, else `BadRequestError`."""
    if not isinstance(snapshot, Mapping):
        raise BadRequestError('"snapshot" must be a JSON object (a Session.snapshot()).')
    missing = [key for key in REQUIRED_KEYS if key not in snapshot]
    if missing:
        raise BadRequestError(
            f"The session snapshot lacks {missing}; post the object Session.snapshot() returns."
        )
    return snapshot


def check_session_id(session_id: str) -> str:
    if not _SESSION_ID.match(session_id):
        raise BadRequestError(
            f"Session id {session_id!r} is not valid: use 1-64 letters, digits, '.', '_' or '-'."
        )
    return session_id


class SessionRegistry:
    """Latest snapshot per session id, bounded, safe to share between tasks and threads."""

    def __init__(
        self,
        max_sessions: int = 64,
        *,
        clock_ms: Callable[[], int] | None = None,
        new_id: Callable[[], str] | None = None,
    ) -> None:
        self._entries: OrderedDict[str, SessionEntry] = OrderedDict()
        self._max = max_sessions
        self._clock_ms = clock_ms or (lambda: int(time.time() * 1000))
        self._new_id = new_id or (lambda: uuid.uuid4().hex[:12])
        self._lock = threading.Lock()
        self._listeners: list[SessionListener] = []

    def subscribe(self, listener: SessionListener) -> Callable[[], None]:
        """Call `listener(entry, created)` for every accepted post; returns an unsubscribe."""
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener) if listener in self._listeners else None

    def post(
        self, session_id: str | None, snapshot: Any, label: str | None = None
    ) -> tuple[SessionEntry, bool]:
        """Create or update a session; returns the entry and whether it was created."""
        checked = check_snapshot(snapshot)
        key = check_session_id(session_id) if session_id is not None else self._new_id()
        now = self._clock_ms()
        with self._lock:
            previous = self._entries.pop(key, None)
            entry = SessionEntry(
                id=key,
                label=label if label is not None else (previous.label if previous else ""),
                created_at_ms=previous.created_at_ms if previous else now,
                updated_at_ms=now,
                updates=previous.updates + 1 if previous else 1,
                snapshot=checked,
            )
            self._entries[key] = entry
            while len(self._entries) > self._max:
                self._entries.popitem(last=False)
        for listener in list(self._listeners):
            listener(entry, previous is None)
        return entry, previous is None

    def get(self, session_id: str) -> SessionEntry:
        with self._lock:
            entry = self._entries.get(session_id)
        if entry is None:
            raise SessionNotFoundError(
                f"No agent session {session_id!r} is registered; GET sessions lists the ids."
            )
        return entry

    def entries(self) -> list[SessionEntry]:
        """Sessions, most recently updated first."""
        with self._lock:
            return list(reversed(self._entries.values()))
