"""Cache accounting: what each provider request reused, what it could have, and why not.

`normalize_usage` maps the three usage shapes onto one `Usage`:
- Anthropic: ``input_tokens`` (uncached remainder) + ``cache_read_input_tokens`` +
  ``cache_creation_input_tokens`` = all input; cached = cache read; written = cache creation.
- OpenAI: ``prompt_tokens`` = all input; cached = ``prompt_tokens_details.cached_tokens``.
- DeepSeek: ``prompt_cache_hit_tokens`` + ``prompt_cache_miss_tokens`` = all input; cached = hit.

`CacheLedger.record(request, usage)` adds one `LedgerTurn` per provider request. Locally, with
tokens estimated as UTF-8 bytes / 4 (the simulator's estimate):
- *potential* = the previous request's prefix + log zones (what an unchanged conversation
  repeats); *shared* = the stream bytes this request actually repeats from the previous one;
- *expected reusable* = shared, or 0 when the TTL elapsed or shared is under the provider minimum.
A turn is a *miss* when it is not the first and cached tokens fall short of the potential by more
than `tolerance_tokens` (block rounding). Every miss gets causes, most structural first:
``model_changed``, ``tools_changed``, ``system_changed``, ``messages_rewritten`` (the shared
prefix ends inside the previous log: a rebuild), ``ttl_expired``, ``below_minimum``, else
``unknown`` (e.g. the provider evicted the entry).

Hit ratio = cached input tokens / all input tokens, per turn and over the session, the first
(cold) request included.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from enum import Enum
from typing import Any

from .errors import MessageFormatError
from .invariant import shared_prefix
from .prefix import PrefixDrift
from .request import ThreeZoneRequest
from .wire import Provider, resolve_provider

__all__ = ["CacheLedger", "LedgerTurn", "MissCause", "Usage", "normalize_usage"]


class MissCause(str, Enum):
    SYSTEM_CHANGED = "system_changed"
    TOOLS_CHANGED = "tools_changed"
    MODEL_CHANGED = "model_changed"
    MESSAGES_REWRITTEN = "messages_rewritten"
    TTL_EXPIRED = "ttl_expired"
    BELOW_MINIMUM = "below_minimum"
    UNKNOWN = "unknown"


@dataclass(frozen=True, slots=True)
class Usage:
    """Provider usage in one shape. `input_tokens` counts all input, cached or not."""

    provider: Provider
    input_tokens: int
    cached_tokens: int
    cache_write_tokens: int
    output_tokens: int

    @property
    def uncached_tokens(self) -> int:
        return self.input_tokens - self.cached_tokens


def _count(usage: Mapping[str, Any], key: str) -> int:
    value = usage.get(key)
    return int(value) if isinstance(value, int | float) else 0


def detect_provider(usage: Mapping[str, Any]) -> Provider:
    if "prompt_cache_hit_tokens" in usage or "prompt_cache_miss_tokens" in usage:
        return Provider.DEEPSEEK
    if "prompt_tokens" in usage:
        return Provider.OPENAI
    if "input_tokens" in usage or "cache_read_input_tokens" in usage:
        return Provider.ANTHROPIC
    raise MessageFormatError(
        f"cannot tell the provider from usage keys {sorted(usage)}; pass provider= "
        "('anthropic', 'openai' or 'deepseek')"
    )


def normalize_usage(usage: Mapping[str, Any], provider: str | Provider | None = None) -> Usage:
    shape = detect_provider(usage) if provider is None else resolve_provider(provider)
    if shape is Provider.ANTHROPIC:
        read = _count(usage, "cache_read_input_tokens")
        write = _count(usage, "cache_creation_input_tokens")
        total = _count(usage, "input_tokens") + read + write
        return Usage(shape, total, read, write, _count(usage, "output_tokens"))
    output = _count(usage, "completion_tokens")
    if shape is Provider.DEEPSEEK:
        hit = _count(usage, "prompt_cache_hit_tokens")
        total = hit + _count(usage, "prompt_cache_miss_tokens")
        return Usage(shape, total or _count(usage, "prompt_tokens"), hit, 0, output)
    details = usage.get("prompt_tokens_details")
    cached = _count(details, "cached_tokens") if isinstance(details, Mapping) else 0
    return Usage(shape, _count(usage, "prompt_tokens"), cached, 0, output)


@dataclass(frozen=True, slots=True)
class LedgerTurn:
    """One provider request in the ledger."""

    index: int
    provider: Provider
    input_tokens: int
    cached_tokens: int
    cache_write_tokens: int
    output_tokens: int
    expected_reusable_tokens: int
    potential_tokens: int
    shared_tokens: int
    cold: bool
    miss: bool
    causes: tuple[MissCause, ...]
    prefix_short_id: str
    at: float
    elapsed_s: float | None

    @property
    def cause(self) -> MissCause | None:
        return self.causes[0] if self.causes else None

    @property
    def hit_ratio(self) -> float:
        return self.cached_tokens / self.input_tokens if self.input_tokens else 0.0

    def to_json(self) -> dict[str, Any]:
        return {
            "index": self.index,
            "provider": self.provider.value,
            "input_tokens": self.input_tokens,
            "cached_tokens": self.cached_tokens,
            "cache_write_tokens": self.cache_write_tokens,
            "output_tokens": self.output_tokens,
            "hit_ratio": self.hit_ratio,
            "expected_reusable_tokens": self.expected_reusable_tokens,
            "potential_tokens": self.potential_tokens,
            "shared_tokens": self.shared_tokens,
            "cold": self.cold,
            "miss": self.miss,
            "cause": None if self.cause is None else self.cause.value,
            "causes": [cause.value for cause in self.causes],
            "prefix_short_id": self.prefix_short_id,
            "at": self.at,
            "elapsed_s": self.elapsed_s,
        }


class CacheLedger:
    """Per-request cache accounting with a named cause for every miss."""

    __slots__ = (
        "_clock",
        "_last",
        "_last_at",
        "bytes_per_token",
        "min_tokens",
        "tolerance_tokens",
        "ttl_s",
        "turns",
    )

    def __init__(
        self,
        *,
        min_tokens: int = 1024,
        ttl_s: float = 300.0,
        tolerance_tokens: int = 64,
        bytes_per_token: int = 4,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.min_tokens = min_tokens
        self.ttl_s = ttl_s
        self.tolerance_tokens = tolerance_tokens
        self.bytes_per_token = bytes_per_token
        self._clock = clock
        self._last: ThreeZoneRequest | None = None
        self._last_at = 0.0
        self.turns: list[LedgerTurn] = []

    def record(
        self,
        request: ThreeZoneRequest,
        usage: Mapping[str, Any] | Usage,
        *,
        provider: str | Provider | None = None,
        at: float | None = None,
    ) -> LedgerTurn:
        """Account one provider request: `usage` as the provider returned it (or a `Usage`)."""
        norm = usage if isinstance(usage, Usage) else normalize_usage(usage, provider)
        now = self._clock() if at is None else at
        turn = self._turn(request, norm, now)
        self.turns.append(turn)
        self._last, self._last_at = request, now
        return turn

    def _turn(self, request: ThreeZoneRequest, usage: Usage, now: float) -> LedgerTurn:
        previous, per = self._last, self.bytes_per_token
        cold = previous is None
        shared = potential = 0
        elapsed: float | None = None
        causes: tuple[MissCause, ...] = ()
        if previous is not None:
            shared = shared_prefix(previous, request)
            potential = previous.prefix_bytes + previous.log_bytes
            elapsed = now - self._last_at
        expired = elapsed is not None and elapsed > self.ttl_s
        below = shared // per < self.min_tokens
        miss = not cold and usage.cached_tokens + self.tolerance_tokens < potential // per
        if previous is not None and miss:
            causes = self._causes(previous, request, shared, potential, expired, below)
        return LedgerTurn(
            len(self.turns),
            usage.provider,
            usage.input_tokens,
            usage.cached_tokens,
            usage.cache_write_tokens,
            usage.output_tokens,
            0 if expired or below else shared // per,
            potential // per,
            shared // per,
            cold,
            miss,
            causes,
            request.prefix.short_id,
            now,
            elapsed,
        )

    def _causes(
        self,
        previous: ThreeZoneRequest,
        request: ThreeZoneRequest,
        shared: int,
        potential: int,
        expired: bool,
        below: bool,
    ) -> tuple[MissCause, ...]:
        drift = previous.prefix.drift_to(request.prefix)
        causes = _drift_causes(drift)
        if drift is None and shared < potential:
            causes.append(MissCause.MESSAGES_REWRITTEN)
        if expired:
            causes.append(MissCause.TTL_EXPIRED)
        if below and not causes:
            causes.append(MissCause.BELOW_MINIMUM)
        return tuple(causes) or (MissCause.UNKNOWN,)

    # -- aggregates -------------------------------------------------------------------------

    def hit_ratio(self) -> float:
        total = sum(turn.input_tokens for turn in self.turns)
        return sum(turn.cached_tokens for turn in self.turns) / total if total else 0.0

    def miss_causes(self) -> dict[str, int]:
        counts = Counter(turn.cause.value for turn in self.turns if turn.cause is not None)
        return dict(counts.most_common())

    def to_json(self) -> dict[str, Any]:
        return {
            "hit_ratio": self.hit_ratio(),
            "requests": len(self.turns),
            "input_tokens": sum(turn.input_tokens for turn in self.turns),
            "cached_tokens": sum(turn.cached_tokens for turn in self.turns),
            "cache_write_tokens": sum(turn.cache_write_tokens for turn in self.turns),
            "output_tokens": sum(turn.output_tokens for turn in self.turns),
            "misses": sum(turn.miss for turn in self.turns),
            "miss_causes": self.miss_causes(),
            "min_tokens": self.min_tokens,
            "ttl_s": self.ttl_s,
            "turns": [turn.to_json() for turn in self.turns],
        }


def _drift_causes(drift: PrefixDrift | None) -> list[MissCause]:
    if drift is None:
        return []
    causes = []
    if drift.model_changed:
        causes.append(MissCause.MODEL_CHANGED)
    if drift.tools_changed or drift.tools_reordered:
        causes.append(MissCause.TOOLS_CHANGED)
    if drift.system_changed:
        causes.append(MissCause.SYSTEM_CHANGED)
    return causes
