"""The three-zone prompt model: a frozen prefix, an append-only log, a per-turn scratch.

Pure and stdlib-only: importing this package loads nothing outside the standard library.

Where things live:
- `prefix`: `PinnedPrefix(system, tools, model).freeze()` -> `FrozenPrefix` (per-part sha256,
  `combined_sha256`, `short_id`); `verify(...)` -> None or a `PrefixDrift`.
- `log`: `AppendLog` (read-only `Sequence`; `push`, `rebuild`, `audit`, `subscribe`),
  `RebuildReason`, `RebuildRecord`.
- `scratch`: `TurnScratch` (pending user message, working set, notes; `clear()`).
- `request`: `ThreeZoneRequest(prefix, log, scratch, **params)` with `wire_messages()`,
  `to_wire(provider)` for ``anthropic``, ``openai`` and ``deepseek``, and `fingerprint()`.
- `invariant`: `check_byte_prefix` (first differing byte and its zone), `PrefixInvariantChecker`.
- `stability`: `PrefixStabilityManager`; `ledger`: `CacheLedger`, `normalize_usage`, `MissCause`.
- `session`: `ZoneSession`, the object the agent's Session owns: prefix + log + scratch +
  stability + ledger + invariant, with `build_request()`, `record_usage()`, and the reports
  `report_zones()`, `report_cache()` and `snapshot()` (JSON-ready; shape in `reports`). The
  report functions also exist standalone in `reports`, taking a `ZoneSession`.
- `canonical`: the one canonical JSON form (sorted keys, compact separators, UTF-8, no ASCII
  escaping, no NaN) used for every hash and every object inside a wire body; `freeze`/`thaw`.
- `wire`: the neutral message form the log stores and its conversion to each provider shape.
"""

from __future__ import annotations

from .canonical import FrozenDict, FrozenList, canonical_json, freeze, thaw
from .errors import ByteInvariantError, MessageFormatError, ZonesError
from .invariant import PrefixBreak, PrefixInvariantChecker, Zone, check_byte_prefix
from .ledger import CacheLedger, LedgerTurn, MissCause, Usage, normalize_usage
from .log import AppendLog, RebuildReason, RebuildRecord
from .prefix import DriftPart, FrozenPrefix, PinnedPrefix, PrefixDrift
from .reports import report_cache, report_zones, zones_snapshot
from .request import RequestFingerprint, ThreeZoneRequest
from .scratch import TurnScratch
from .session import ZoneSession
from .stability import PinRecord, PrefixStabilityManager, StabilityCheck
from .wire import Provider

__all__ = [
    "AppendLog",
    "ByteInvariantError",
    "CacheLedger",
    "DriftPart",
    "FrozenDict",
    "FrozenList",
    "FrozenPrefix",
    "LedgerTurn",
    "MessageFormatError",
    "MissCause",
    "PinRecord",
    "PinnedPrefix",
    "PrefixBreak",
    "PrefixDrift",
    "PrefixInvariantChecker",
    "PrefixStabilityManager",
    "Provider",
    "RebuildReason",
    "RebuildRecord",
    "RequestFingerprint",
    "StabilityCheck",
    "ThreeZoneRequest",
    "TurnScratch",
    "Usage",
    "Zone",
    "ZoneSession",
    "ZonesError",
    "canonical_json",
    "check_byte_prefix",
    "freeze",
    "normalize_usage",
    "report_cache",
    "report_zones",
    "thaw",
    "zones_snapshot",
]
