"""Text reports and the JSON snapshot of a `ZoneSession`.

`report_zones` (each zone, its status and contract status, the rebuild audit) and `report_cache`
(stability, fingerprint, hit ratio, miss causes, recent requests) are the notebook's and the
terminal's views; `zones_snapshot` is the same data as JSON values for the panel and the sidebar:
``{"zones": {"prefix": {...}, "log": {...}, "scratch": {...}}, "cache": {"hit_ratio", "turns",
...}, "audit": [...], "invariant": {...}}`` (the agent's Session adds ``"edits"``).
"""

from __future__ import annotations

from datetime import datetime, timezone
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .ledger import LedgerTurn
    from .session import ZoneSession

__all__ = ["report_cache", "report_zones", "zones_snapshot"]

RECENT_TURNS = 10


def zones_snapshot(session: ZoneSession) -> dict[str, Any]:
    """Everything the panel and the sidebar show, as JSON-ready values."""
    return {
        "zones": {
            "prefix": _prefix_json(session),
            "log": _log_json(session),
            "scratch": session.scratch.to_json() | {"status": _scratch_status(session)},
        },
        "cache": session.ledger.to_json(),
        "audit": [record.to_json() for record in session.log.audit],
        "invariant": session.invariant.to_json(),
    }


def _prefix_json(session: ZoneSession) -> dict[str, Any]:
    stability = session.stability.to_json()
    return session.prefix.to_json() | {
        "status": _prefix_status(session),
        "contract": "frozen: byte-identical in every request",
        "contract_status": "holds" if session.stability.changes == 0 else "changed",
        "stability": stability,
    }


def _log_json(session: ZoneSession) -> dict[str, Any]:
    log = session.log
    return {
        "messages": len(log),
        "bytes": log.byte_length,
        "sha256": log.sha256,
        "generation": log.generation.number,
        "rebuilds": log.rebuild_count,
        "status": "append-only",
        "contract": "request N's messages are a byte prefix of request N+1's",
        "contract_status": "broken" if session.invariant.violations else "holds",
    }


def _prefix_status(session: ZoneSession) -> str:
    check = session.stability.last_check
    if check is None or check.stable:
        return "stable"
    return "changed (declared)" if check.declared else "drifted (undeclared)"


def _scratch_status(session: ZoneSession) -> str:
    return "staged" if session.scratch else "empty"


# -- text -----------------------------------------------------------------------------------


def report_zones(session: ZoneSession) -> str:
    """Each zone with its status and contract status, then the rebuild audit."""
    prefix, log, scratch = session.prefix, session.log, session.scratch
    stability, invariant = session.stability, session.invariant
    tools = ", ".join(prefix.tool_names) or "none"
    lines = [
        f"Three zones: prefix {prefix.short_id} | log {_plural(len(log), 'message')} | "
        f"scratch {_plural(len(scratch), 'message')}",
        f"[prefix]  {_prefix_status(session)}: model {prefix.model or '(none)'}, system "
        f"{len(prefix.system):,} chars ({prefix.system_sha256[:12]}), "
        f"{_plural(len(prefix.tools), 'tool')} [{tools}] ({prefix.tools_sha256[:12]})",
        f"          contract: frozen; stable in {stability.checks - stability.changes} of "
        f"{_plural(stability.checks, 'check')} ({stability.stability_ratio():.1%}); changes: "
        f"{stability.declared_changes} declared, {stability.undeclared_changes} undeclared",
    ]
    if stability.pins and stability.pins[-1].drift is not None:
        lines.append(f"          last change: {stability.pins[-1].reason}")
    status = "BROKEN" if invariant.violations else "holds"
    lines += [
        f"[log]     append-only: {_plural(len(log), 'message')}, {log.byte_length:,} bytes, "
        f"sha256 {log.sha256[:12]}, {_plural(log.rebuild_count, 'rebuild')}",
        f"          contract: byte prefix {status}; {_plural(invariant.checks, 'check')}, "
        f"{invariant.excused} excused, {invariant.violations} violations",
        f"[scratch] per-turn, {_scratch_status(session)}: pending user message "
        f"{'yes' if scratch.pending_user is not None else 'no'}; working set "
        f"{', '.join(scratch.working_set) or 'empty'}; {_plural(len(scratch.notes), 'note')}",
    ]
    return "\n".join(lines + _audit_lines(session))


def _audit_lines(session: ZoneSession) -> list[str]:
    audit = session.log.audit
    if not audit:
        return ["Rebuild audit: no rebuilds"]
    kept = f"{len(audit)} of {session.log.rebuild_count} kept"
    lines = [f"Rebuild audit (oldest first; {kept}):"]
    for record in audit:
        lines.append(f"  {_when(record.at)}  {record}")
    return lines


def report_cache(session: ZoneSession) -> str:
    """Stability, fingerprint, hit ratio, miss causes and the most recent requests."""
    ledger, stability = session.ledger, session.stability
    data = ledger.to_json()
    misses = ", ".join(f"{cause} {n}" for cause, n in data["miss_causes"].items()) or "none"
    lines = [
        f"Cache: hit ratio {ledger.hit_ratio():.1%} ({data['cached_tokens']:,} of "
        f"{data['input_tokens']:,} input tokens cached over "
        f"{_plural(len(ledger.turns), 'request')})",
        f"prefix {session.prefix.short_id}: stability {stability.stability_ratio():.1%} "
        f"({stability.checks - stability.changes} of {_plural(stability.checks, 'check')} stable)",
        f"misses: {data['misses']} ({misses})",
    ]
    recent = ledger.turns[-RECENT_TURNS:]
    if recent:
        lines.append(
            "recent requests (newest last; in: input tokens, cached: what the provider served "
            "from its cache, reusable: what it could have, the part repeated from the previous "
            "request, 0 past the cache's TTL or under the provider's minimum):"
        )
        lines += [_turn_line(turn) for turn in recent]
    return "\n".join(lines)


def _turn_line(turn: LedgerTurn) -> str:
    if turn.cold:
        verdict = "cold"
    elif turn.cause is not None:
        verdict = f"MISS {turn.cause.value}"
    else:
        verdict = "hit" if turn.cached_tokens else "ok (nothing reusable yet)"
    return (
        f"  #{turn.index} {turn.provider.value}: in {turn.input_tokens:,}, cached "
        f"{turn.cached_tokens:,} ({turn.hit_ratio:.1%}), reusable {turn.expected_reusable_tokens:,}"
        f" - {verdict}"
    )


def _plural(count: int, noun: str) -> str:
    return f"{count:,} {noun}{'' if count == 1 else 's'}"


def _when(at: float) -> str:
    return datetime.fromtimestamp(at, tz=timezone.utc).strftime("%Y-%m-%d %H:%M:%S UTC")
