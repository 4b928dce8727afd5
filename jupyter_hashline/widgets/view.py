"""What the zones panel shows, computed from a live agent `Session` in bounded time.

`PanelTracker` follows one session and turns its current state into a JSON-ready `summary`
dict (the panel's synced state and the input of every renderer in `render.py`). It imports no
ipywidgets, so it is tested on its own and reused by anything else that wants the same numbers.

Invariants:
- Bounded work per update, whatever the session's length: the ledger's running sums are
  advanced only over requests added since the last update (the ledger only appends), and every
  list shown is cut to a fixed size (`PanelLimits`). Nothing here calls `session.snapshot()`,
  whose cost grows with every request; the numbers shown equal the snapshot's all the same.
- The contract status is the worst thing that happened in the session: `drifted` once the
  prefix changed without being declared (the cache contract was broken), else `rebuilt` once the
  log had an audited rebuild or the prefix a declared change, else `ok`.
- Log growth: while a turn runs, what that turn has added so far; between turns, what the last
  completed turn added (negative after a compaction).
"""

from __future__ import annotations

from collections import Counter, deque
from dataclasses import dataclass
from enum import Enum
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from ..agent import Session
    from ..zones import LedgerTurn, PinRecord

__all__ = ["ContractStatus", "PanelLimits", "PanelTracker"]


class ContractStatus(str, Enum):
    OK = "ok"
    REBUILT = "rebuilt"
    DRIFTED = "drifted"


@dataclass(frozen=True, slots=True)
class PanelLimits:
    """How much of each history the panel shows (everything else is only counted)."""

    chart_requests: int = 120
    audit_rows: int = 8
    drift_rows: int = 8
    edits: int = 5
    diff_chars: int = 4_000
    scratch_chars: int = 400


@dataclass(frozen=True, slots=True)
class _Mark:
    """The log's size at a turn boundary."""

    messages: int
    bytes: int


@dataclass(frozen=True, slots=True)
class _ChartPoint:
    """One request in the hit-ratio chart; `kind` is "cold", "hit" or "miss"."""

    index: int
    hit_ratio: float
    kind: str
    cause: str | None


class _CacheTotals:
    """Running sums over the ledger's requests, advanced incrementally, and the newest
    `chart_size` chart points (each computed once, when its request is first seen)."""

    __slots__ = ("cached", "causes", "consumed", "input", "misses", "output", "points", "writes")

    def __init__(self, chart_size: int) -> None:
        self.causes: Counter[str] = Counter()
        self.points: deque[_ChartPoint] = deque(maxlen=chart_size)
        self.reset()

    def reset(self) -> None:
        self.consumed = self.input = self.cached = self.writes = self.output = self.misses = 0
        self.causes.clear()
        self.points.clear()

    def advance(self, turns: list[LedgerTurn]) -> None:
        if len(turns) < self.consumed:  # a new ledger: start over
            self.reset()
        start = max(self.consumed, len(turns) - (self.points.maxlen or 0))
        for turn in turns[self.consumed :]:
            self.input += turn.input_tokens
            self.cached += turn.cached_tokens
            self.writes += turn.cache_write_tokens
            self.output += turn.output_tokens
            self.misses += turn.miss
            if turn.cause is not None:
                self.causes[turn.cause.value] += 1
        self.points.extend(_chart_point(turn) for turn in turns[start:])
        self.consumed = len(turns)

    @property
    def hit_ratio(self) -> float:
        return self.cached / self.input if self.input else 0.0


class PanelTracker:
    """Follows one session; `summary()` is the panel's whole state, computed in bounded time."""

    def __init__(self, session: Session, limits: PanelLimits | None = None) -> None:
        self.session = session
        self.limits = limits or PanelLimits()
        self._totals = _CacheTotals(self.limits.chart_requests)
        here = self._mark()
        self._last_turn_end = here
        self._turn_before = here
        self._turns_seen = session.turns

    def _mark(self) -> _Mark:
        log = self.session.zones.log
        return _Mark(len(log), log.byte_length)

    def note_turn_end(self) -> None:
        """Call at each turn boundary (the session's "turn" event)."""
        if self.session.turns != self._turns_seen:
            self._turns_seen = self.session.turns
            self._turn_before, self._last_turn_end = self._last_turn_end, self._mark()

    def summary(self) -> dict[str, Any]:
        session = self.session
        self._totals.advance(session.zones.ledger.turns)
        return {
            "session": {
                "id": session.id,
                "label": session.label,
                "provider": session.provider,
                "model": session.model,
                "turns": session.turns,
                "active": session.active,
            },
            "status": self._status().value,
            "drifts": self._drifts(),
            "prefix": self._prefix(),
            "log": self._log(),
            "scratch": self._scratch(),
            "cache": self._cache(),
            "audit": self._audit(),
            "edits": self._edits(),
        }

    # -- zones ----------------------------------------------------------------------------------
    def _status(self) -> ContractStatus:
        zones = self.session.zones
        if zones.stability.undeclared_changes:
            return ContractStatus.DRIFTED
        if zones.log.rebuild_count or zones.stability.declared_changes:
            return ContractStatus.REBUILT
        return ContractStatus.OK

    def _prefix(self) -> dict[str, Any]:
        zones = self.session.zones
        prefix, stability = zones.prefix, zones.stability
        check = stability.last_check
        if check is None or check.stable:
            state = "stable"
        else:
            state = "changed (declared)" if check.declared else "drifted (undeclared)"
        return {
            "short_id": prefix.short_id,
            "model": prefix.model,
            "system_chars": len(prefix.system),
            "tool_count": len(prefix.tools),
            "tool_names": list(prefix.tool_names),
            "status": state,
            "checks": stability.checks,
            "changes": stability.changes,
            "undeclared_changes": stability.undeclared_changes,
            "stability_ratio": stability.stability_ratio(),
        }

    def _log(self) -> dict[str, Any]:
        log, session = self.session.zones.log, self.session
        base, now = (self._last_turn_end, self._mark()) if session.active else (None, None)
        if base is None or now is None:
            base, now = self._turn_before, self._last_turn_end
        audit = log.audit
        return {
            "messages": len(log),
            "bytes": log.byte_length,
            "growth_messages": now.messages - base.messages,
            "growth_bytes": now.bytes - base.bytes,
            "generation": log.generation.number,
            "rebuilds": log.rebuild_count,
            "last_rebuild": audit[-1].to_json() if audit else None,
        }

    def _scratch(self) -> dict[str, Any]:
        scratch, limit = self.session.zones.scratch, self.limits.scratch_chars
        pending = scratch.pending_user
        text = _message_text(pending["content"]) if pending is not None else ""
        return scratch.to_json() | {
            "active": self.session.active,
            "pending_text": _clip(text, limit),
            "notes": [_clip(note, limit) for note in scratch.notes[-5:]],
        }

    # -- histories ------------------------------------------------------------------------------
    def _drifts(self) -> list[dict[str, Any]]:
        changed = [pin for pin in self.session.zones.stability.pins if pin.drift is not None]
        return [_drift_row(pin) for pin in reversed(changed[-self.limits.drift_rows :])]

    def _audit(self) -> list[dict[str, Any]]:
        records = self.session.zones.log.audit[-self.limits.audit_rows :]
        return [record.to_json() for record in reversed(records)]

    def _cache(self) -> dict[str, Any]:
        totals = self._totals
        return {
            "hit_ratio": totals.hit_ratio,
            "requests": totals.consumed,
            "input_tokens": totals.input,
            "cached_tokens": totals.cached,
            "cache_write_tokens": totals.writes,
            "output_tokens": totals.output,
            "misses": totals.misses,
            "miss_causes": dict(totals.causes.most_common()),
            "chart": _chart(totals.points),
        }

    def _edits(self) -> list[dict[str, Any]]:
        limit = self.limits.diff_chars
        rows = []
        for record in self.session.edits.recent(self.limits.edits):
            row = record.to_json()
            row["diff"] = _clip(row["diff"], limit)
            rows.append(row)
        return rows


def _drift_row(pin: PinRecord) -> dict[str, Any]:
    drift = pin.drift
    parts = [part.value for part in drift.parts] if drift is not None else []
    return {
        "from": drift.frozen_hash[:12] if drift is not None else "",
        "to": pin.short_id,
        "parts": parts,
        "declared": pin.declared,
        "reason": pin.reason,
        "at": pin.at,
    }


def _chart_point(turn: LedgerTurn) -> _ChartPoint:
    kind = "cold" if turn.cold else "miss" if turn.miss else "hit"
    return _ChartPoint(turn.index, turn.hit_ratio, kind, turn.cause.value if turn.cause else None)


def _chart(points: deque[_ChartPoint]) -> dict[str, Any]:
    """The chart's points as flat lists (cheap to sync, whatever the session's length)."""
    return {
        "first_index": points[0].index if points else 0,
        "hit_ratio": [point.hit_ratio for point in points],
        "kind": [point.kind for point in points],
        "cause": [point.cause for point in points],
    }


def _message_text(content: Any) -> str:
    if isinstance(content, str):
        return content
    if isinstance(content, (list, tuple)):
        return "\n".join(str(block.get("text", "")) for block in content if hasattr(block, "get"))
    return str(content)


def _clip(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    return text[:limit] + f"\n... {len(text) - limit:,} more characters"
