"""Prefix stability: is the frozen prefix of each request the one that was pinned?

`PrefixStabilityManager.check(prefix)` compares a request's prefix with the pinned one. An equal
prefix is a stable check. A different prefix is a *change*: it is pinned in its place, with its
drift and a reason, in a bounded pin history. A change is *declared* when it was announced
(`declare(reason)` before the check, or `check(prefix, declared=reason)`: a model switch, a tool
added) and *undeclared* drift otherwise (a timestamp in the system prompt, a tool description
built from the clock, ...).

Invariants: ``changes == declared_changes + undeclared_changes <= checks``;
``stability_ratio() == (checks - changes) / checks`` (1.0 before any check); the pin history
keeps the newest `history` pins, oldest first; the first check pins without counting a change.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from .prefix import FrozenPrefix, PinnedPrefix, PrefixDrift

__all__ = ["PinRecord", "PrefixStabilityManager", "StabilityCheck"]


@dataclass(frozen=True, slots=True)
class PinRecord:
    """A prefix that became the pinned one, and why."""

    short_id: str
    combined_sha256: str
    reason: str
    declared: bool
    at: float
    drift: PrefixDrift | None

    def to_json(self) -> dict[str, Any]:
        return {
            "short_id": self.short_id,
            "combined_sha256": self.combined_sha256,
            "reason": self.reason,
            "declared": self.declared,
            "at": self.at,
            "drift": None if self.drift is None else self.drift.to_json(),
        }


@dataclass(frozen=True, slots=True)
class StabilityCheck:
    """The outcome of one check: stable, or a change (declared or not) with its drift."""

    stable: bool
    declared: bool
    drift: PrefixDrift | None
    pinned: FrozenPrefix


class PrefixStabilityManager:
    """Counts checks and changes of the frozen prefix across a session's requests."""

    __slots__ = (
        "_clock",
        "_pending_reason",
        "_pins",
        "checks",
        "declared_changes",
        "last_check",
        "pinned",
        "undeclared_changes",
    )

    def __init__(
        self,
        prefix: FrozenPrefix | PinnedPrefix | None = None,
        *,
        history: int = 16,
        clock: Callable[[], float] = time.time,
    ) -> None:
        if history < 1:
            raise ValueError("history must be at least 1")
        self._clock = clock
        self._pins: deque[PinRecord] = deque(maxlen=history)
        self._pending_reason: str | None = None
        self.pinned: FrozenPrefix | None = None
        self.last_check: StabilityCheck | None = None
        self.checks = 0
        self.declared_changes = 0
        self.undeclared_changes = 0
        if prefix is not None:
            self._pin(_frozen(prefix), "initial pin", True, None)

    @property
    def changes(self) -> int:
        return self.declared_changes + self.undeclared_changes

    @property
    def pins(self) -> tuple[PinRecord, ...]:
        return tuple(self._pins)

    def stability_ratio(self) -> float:
        return 1.0 if not self.checks else (self.checks - self.changes) / self.checks

    def declare(self, reason: str) -> None:
        """Announce that the next change is intended (e.g. 'model switch', 'tool added')."""
        self._pending_reason = reason

    def check(
        self, prefix: FrozenPrefix | PinnedPrefix, *, declared: str | None = None
    ) -> StabilityCheck:
        """Compare `prefix` with the pinned one; a different prefix becomes the new pin."""
        self.last_check = result = self._check(_frozen(prefix), declared)
        return result

    def _check(self, current: FrozenPrefix, declared: str | None) -> StabilityCheck:
        self.checks += 1
        if self.pinned is None:
            self._pin(current, declared or "first request", True, None)
            return StabilityCheck(True, False, None, current)
        drift = self.pinned.drift_to(current)
        if drift is None:
            return StabilityCheck(True, False, None, current)
        reason = declared or self._pending_reason
        self._pending_reason = None
        if reason is not None:
            self.declared_changes += 1
        else:
            self.undeclared_changes += 1
        self._pin(current, reason or f"undeclared drift: {drift}", reason is not None, drift)
        return StabilityCheck(False, reason is not None, drift, current)

    def _pin(
        self, prefix: FrozenPrefix, reason: str, declared: bool, drift: PrefixDrift | None
    ) -> None:
        self.pinned = prefix
        self._pins.append(
            PinRecord(
                prefix.short_id, prefix.combined_sha256, reason, declared, self._clock(), drift
            )
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "checks": self.checks,
            "changes": self.changes,
            "declared_changes": self.declared_changes,
            "undeclared_changes": self.undeclared_changes,
            "stability_ratio": self.stability_ratio(),
            "pins": [pin.to_json() for pin in self._pins],
        }


def _frozen(prefix: FrozenPrefix | PinnedPrefix) -> FrozenPrefix:
    return prefix.freeze() if isinstance(prefix, PinnedPrefix) else prefix
