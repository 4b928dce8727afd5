"""`ZoneSession`: the three zones of one conversation with their bookkeeping, in one object.

The agent's `Session` owns one `ZoneSession`. It bundles the current frozen prefix, the
`AppendLog`, the `TurnScratch`, a `PrefixStabilityManager`, a `CacheLedger` and a
`PrefixInvariantChecker`, and is where the reports live: `report_zones()`, `report_cache()`
and the JSON-ready `snapshot()` (the panel and the sidebar render that, never the text).

A turn, as the agent drives it::

    zs.scratch.stage_user("Fix the plot in analysis.ipynb")
    request = zs.build_request(max_tokens=1024)      # stability check + invariant check
    body = request.to_wire("anthropic")              # send these exact bytes
    zs.record_usage(request, response["usage"])      # cache ledger
    zs.commit_user()                                 # pending user message -> log
    zs.log.push(assistant_message); zs.log.push(tool_results)
    ...                                              # more requests within the turn
    zs.end_turn()                                    # scratch.clear()

Invariants: every request built here passed the stability check and the byte-prefix check
(strict by default: an unexcused break raises `ByteInvariantError`); the snapshot holds only
JSON values.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Mapping
from typing import Any

from .canonical import FrozenDict
from .invariant import PrefixInvariantChecker
from .ledger import CacheLedger, LedgerTurn, Usage
from .log import AppendLog
from .prefix import FrozenPrefix, PinnedPrefix
from .reports import report_cache, report_zones, zones_snapshot
from .request import ThreeZoneRequest
from .scratch import TurnScratch
from .stability import PrefixStabilityManager
from .wire import Provider

__all__ = ["ZoneSession"]


class ZoneSession:
    """Prefix + log + scratch + stability + ledger + invariant for one conversation."""

    def __init__(
        self,
        prefix: FrozenPrefix | PinnedPrefix,
        *,
        log: AppendLog | None = None,
        scratch: TurnScratch | None = None,
        ledger: CacheLedger | None = None,
        audit_size: int = 8,
        pin_history: int = 16,
        strict_invariant: bool = True,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.prefix = _frozen(prefix)
        self.log = log if log is not None else AppendLog(audit_size=audit_size, clock=clock)
        self.scratch = scratch if scratch is not None else TurnScratch()
        self.ledger = ledger if ledger is not None else CacheLedger(clock=clock)
        self.stability = PrefixStabilityManager(self.prefix, history=pin_history, clock=clock)
        self.invariant = PrefixInvariantChecker(strict=strict_invariant)
        self.last_request: ThreeZoneRequest | None = None
        self.requests = 0

    def set_prefix(self, prefix: FrozenPrefix | PinnedPrefix, *, reason: str) -> None:
        """A declared prefix change (model switch, tool added): effective from the next request."""
        self.prefix = _frozen(prefix)
        self.stability.declare(reason)

    def build_request(
        self, prefix: FrozenPrefix | PinnedPrefix | None = None, **params: Any
    ) -> ThreeZoneRequest:
        """Snapshot the zones into a request. A `prefix` given here that differs from the
        pinned one is recorded as undeclared drift (use `set_prefix` to declare a change)."""
        if prefix is not None:
            self.prefix = _frozen(prefix)
        self.stability.check(self.prefix)
        request = ThreeZoneRequest(self.prefix, self.log, self.scratch, **params)
        self.invariant.observe(request)
        self.last_request = request
        self.requests += 1
        return request

    def record_usage(
        self,
        request: ThreeZoneRequest,
        usage: Mapping[str, Any] | Usage,
        *,
        provider: str | Provider | None = None,
        at: float | None = None,
    ) -> LedgerTurn:
        return self.ledger.record(request, usage, provider=provider, at=at)

    def commit_user(self) -> FrozenDict | None:
        """Push the scratch's pending user message into the log (if any) and return it."""
        pending = self.scratch.take_pending_user()
        return None if pending is None else self.log.push(pending)

    def end_turn(self) -> None:
        self.scratch.clear()

    def report_zones(self) -> str:
        return report_zones(self)

    def report_cache(self) -> str:
        return report_cache(self)

    def snapshot(self) -> dict[str, Any]:
        return zones_snapshot(self)


def _frozen(prefix: FrozenPrefix | PinnedPrefix) -> FrozenPrefix:
    return prefix.freeze() if isinstance(prefix, PinnedPrefix) else prefix
