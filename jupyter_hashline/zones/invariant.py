"""The byte-prefix invariant: request N's serialized messages are a byte prefix of request N+1's,
unless a rebuild or a prefix change was recorded between them.

The stream compared is the provider-neutral one (`request` module docstring): prefix bytes, then
each message's canonical JSON and ``\\n``, log first, then scratch. `check_byte_prefix` names
the first differing byte, its offset in the stream, and the zone (prefix / log / scratch) it
lies in on both sides.

Cost: O(1) when both requests share a log generation (the usual case: the log only grew); after a
rebuild, O(log n) chain-hash comparisons find the first differing message, then one byte compare
inside it. The history is never re-walked.

By default the earlier request's prefix and log must carry over; its scratch is volatile by
design and is only checked with ``include_scratch=True``.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum
from typing import Any

from .errors import ByteInvariantError
from .log import CHAIN_SEED
from .request import ThreeZoneRequest

__all__ = ["PrefixBreak", "PrefixInvariantChecker", "Zone", "check_byte_prefix", "shared_prefix"]

_EXCERPT = 24


class Zone(str, Enum):
    PREFIX = "prefix"
    LOG = "log"
    SCRATCH = "scratch"


@dataclass(frozen=True, slots=True)
class PrefixBreak:
    """Where the later request's byte stream stops repeating the earlier one's."""

    offset: int
    zone: Zone
    later_zone: Zone | None  # None: the later stream ends there
    message_index: int | None  # index in log + scratch of the earlier request; None in prefix
    earlier_byte: int | None
    later_byte: int | None
    earlier_excerpt: str
    later_excerpt: str

    def __str__(self) -> str:
        where = f"the {self.zone.value} zone"
        if self.message_index is not None:
            where += f" (message {self.message_index})"
        later = (
            "the later request ends there"
            if self.later_zone is None
            else f"in the later request it lies in the {self.later_zone.value} zone"
        )
        return (
            f"request bytes diverge at byte {self.offset}, in {where}; {later}. "
            f"earlier: {self.earlier_excerpt!r}  later: {self.later_excerpt!r}"
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "offset": self.offset,
            "zone": self.zone.value,
            "later_zone": None if self.later_zone is None else self.later_zone.value,
            "message_index": self.message_index,
            "earlier_byte": self.earlier_byte,
            "later_byte": self.later_byte,
            "text": str(self),
        }


def check_byte_prefix(
    earlier: ThreeZoneRequest, later: ThreeZoneRequest, *, include_scratch: bool = False
) -> PrefixBreak | None:
    """None when `earlier`'s stream (prefix + log, + scratch if asked) is a byte prefix of
    `later`'s; else the first differing byte."""
    if earlier.prefix.combined_sha256 != later.prefix.combined_sha256:
        return _prefix_break(earlier, later)
    covered = len(earlier) if include_scratch else earlier.count
    index = _first_differing_message(earlier, later, covered)
    if index is None:
        return None
    return _message_break(earlier, later, index)


def shared_prefix(earlier: ThreeZoneRequest, later: ThreeZoneRequest) -> int:
    """How many leading stream bytes of `earlier` (all three zones) `later` repeats."""
    brk = check_byte_prefix(earlier, later, include_scratch=True)
    return earlier.stream_bytes if brk is None else brk.offset


def _first_differing_message(
    earlier: ThreeZoneRequest, later: ThreeZoneRequest, covered: int
) -> int | None:
    common_log = min(earlier.count, later.count)
    if earlier.generation is later.generation:
        start = common_log  # one generation only grows: its common entries are identical
    else:
        start = _common_chain_length(earlier, later, common_log)
        if start < common_log:
            return start
    for index in range(start, covered):
        mine, theirs = earlier.entry(index), later.entry(index)
        if theirs is None or mine is None or mine.digest != theirs.digest:
            return index
    return None


def _common_chain_length(earlier: ThreeZoneRequest, later: ThreeZoneRequest, limit: int) -> int:
    """Largest k <= limit whose chain hashes agree: the first k log messages are identical."""

    def chain(request: ThreeZoneRequest, k: int) -> bytes:
        return request.generation.entries[k - 1].chain if k else CHAIN_SEED

    low, high = 0, limit
    while low < high:
        mid = (low + high + 1) // 2
        if chain(earlier, mid) == chain(later, mid):
            low = mid
        else:
            high = mid - 1
    return low


def _prefix_break(earlier: ThreeZoneRequest, later: ThreeZoneRequest) -> PrefixBreak:
    mine, theirs = earlier.prefix.stream_bytes, later.prefix.stream_bytes
    offset = _first_difference(mine, theirs)
    return _make_break(earlier, later, mine, theirs, 0, offset, Zone.PREFIX, None)


def _message_break(earlier: ThreeZoneRequest, later: ThreeZoneRequest, index: int) -> PrefixBreak:
    mine = earlier.entry(index)
    assert mine is not None  # index < covered <= len(earlier)
    theirs = later.entry(index)
    start = _message_start(earlier, index)
    mine_bytes = mine.canonical + b"\n"
    theirs_bytes = b"" if theirs is None else theirs.canonical + b"\n"
    within = _first_difference(mine_bytes, theirs_bytes)
    zone = Zone.LOG if index < earlier.count else Zone.SCRATCH
    return _make_break(earlier, later, mine_bytes, theirs_bytes, start, within, zone, index)


def _make_break(
    earlier: ThreeZoneRequest,
    later: ThreeZoneRequest,
    mine: bytes,
    theirs: bytes,
    start: int,
    within: int,
    zone: Zone,
    index: int | None,
) -> PrefixBreak:
    offset = start + within
    return PrefixBreak(
        offset=offset,
        zone=zone,
        later_zone=_zone_at(later, offset),
        message_index=index,
        earlier_byte=mine[within] if within < len(mine) else None,
        later_byte=theirs[within] if within < len(theirs) else None,
        earlier_excerpt=_excerpt(mine, within),
        later_excerpt=_excerpt(theirs, within),
    )


def _message_start(request: ThreeZoneRequest, index: int) -> int:
    base = request.prefix_bytes
    if index <= request.count:
        return base + request.generation.end_at(index)
    return base + request.log_bytes + request.scratch[index - request.count - 1].end


def _zone_at(request: ThreeZoneRequest, offset: int) -> Zone | None:
    if offset < request.prefix_bytes:
        return Zone.PREFIX
    if offset < request.prefix_bytes + request.log_bytes:
        return Zone.LOG
    if offset < request.stream_bytes:
        return Zone.SCRATCH
    return None


def _first_difference(a: bytes, b: bytes) -> int:
    """Index of the first differing byte (or the shorter length when one is a prefix)."""
    limit = min(len(a), len(b))
    step = 4096
    start = 0
    while start < limit and a[start : start + step] == b[start : start + step]:
        start += step
    end = min(start + step, limit)
    for i in range(start, end):
        if a[i] != b[i]:
            return i
    return end if start < limit else limit


def _excerpt(data: bytes, at: int) -> str:
    return data[max(0, at - _EXCERPT) : at + _EXCERPT].decode("utf-8", errors="replace")


class PrefixInvariantChecker:
    """Checks each request against the previous one. A break is *excused* when the same log was
    rebuilt in between or the prefix changed (both are recorded elsewhere); any other break is a
    violation, raised as `ByteInvariantError` when `strict` (the default)."""

    __slots__ = (
        "_last",
        "checks",
        "excused",
        "include_scratch",
        "last_break",
        "last_excuse",
        "strict",
        "violations",
    )

    def __init__(self, *, strict: bool = True, include_scratch: bool = False) -> None:
        self.strict = strict
        self.include_scratch = include_scratch
        self._last: ThreeZoneRequest | None = None
        self.checks = 0
        self.excused = 0
        self.violations = 0
        self.last_break: PrefixBreak | None = None
        self.last_excuse: str | None = None

    def observe(self, request: ThreeZoneRequest) -> PrefixBreak | None:
        """Check `request` against the previously observed one, then remember it."""
        previous, self._last = self._last, request
        if previous is None:
            return None
        self.checks += 1
        brk = check_byte_prefix(previous, request, include_scratch=self.include_scratch)
        if brk is None:
            return None
        self.last_break = brk
        excuse = _excuse(previous, request)
        if excuse is not None:
            self.excused += 1
            self.last_excuse = excuse
            return brk
        self.violations += 1
        if self.strict:
            raise ByteInvariantError(
                f"byte-prefix invariant broken with no rebuild or prefix change recorded: {brk}. "
                "Only log.push() may change the log between requests; use "
                "log.rebuild(reason, messages) to rewrite it so the break is audited.",
                brk,
            )
        return brk

    def to_json(self) -> dict[str, Any]:
        return {
            "checks": self.checks,
            "holds": self.checks - self.excused - self.violations,
            "excused": self.excused,
            "violations": self.violations,
            "last_break": None if self.last_break is None else self.last_break.to_json(),
            "last_excuse": self.last_excuse,
        }


def _excuse(previous: ThreeZoneRequest, current: ThreeZoneRequest) -> str | None:
    if previous.prefix.combined_sha256 != current.prefix.combined_sha256:
        return "prefix change"
    if previous.log is current.log and previous.generation is not current.generation:
        record = current.generation.record
        return f"rebuild: {record}" if record is not None else "rebuild"
    return None
