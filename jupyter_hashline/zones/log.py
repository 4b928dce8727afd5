"""The append-only log zone: the conversation, frozen message by message, rewritten only by an
audited rebuild.

Each pushed message is validated, deep-frozen, serialized to canonical JSON and hashed exactly
once (`SerializedMessage`); its wire bytes for each provider shape are made the first time that
shape is asked for, then kept. A running chain hash
(``chain[i] = sha256(chain[i-1] + sha256(m_i))``) and running byte offsets let two requests be
compared without re-walking the history.

Invariants:
- `AppendLog` is a read-only `Sequence`: it has no item assignment, deletion, ``append``,
  ``extend``, ``insert``, ``pop``, ``remove``, ``clear``, ``sort`` or ``reverse``; pushed
  messages refuse mutation too (`TypeError`).
- `push()` is the only everyday mutation; within one *generation* the entry list only grows,
  so a request holding (generation, count) keeps seeing exactly the messages it was built from.
- `rebuild()` is the only rewrite: it validates every new message before touching the log,
  starts a new generation, appends one `RebuildRecord` to the bounded audit (oldest first) and
  notifies every subscriber exactly once.
"""

from __future__ import annotations

import hashlib
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from enum import Enum
from typing import TYPE_CHECKING, Any, NoReturn, overload

from .canonical import FrozenDict, canonical_json, freeze
from .errors import MessageFormatError
from .wire import Provider, message_wire, validate_message

__all__ = [
    "AppendLog",
    "LogGeneration",
    "RebuildReason",
    "RebuildRecord",
    "SerializedMessage",
    "freeze_message",
]

CHAIN_SEED = hashlib.sha256(b"jupyter-hashline three-zone log v1").digest()


class RebuildReason(str, Enum):
    """Why the log was rewritten. `label` is the human wording."""

    MANUAL_COMPACTION = "manual_compaction"
    AUTO_COMPACTION = "auto_compaction"
    PURGE = "purge"
    MICRO_COMPACTION = "micro_compaction"
    CONTEXT_OVERFLOW_RECOVERY = "context_overflow_recovery"
    FRONT_TRIM = "front_trim"
    VERIFY_AND_REPLAN_RESET = "verify_and_replan_reset"
    EDIT_ROLLBACK = "edit_rollback"
    SESSION_SYNC = "session_sync"
    CYCLE_RESET = "cycle_reset"
    HISTORY_CLEAR = "history_clear"
    RUNTIME = "runtime"

    @property
    def label(self) -> str:
        return _REASON_LABELS[self]


_REASON_LABELS = {
    RebuildReason.MANUAL_COMPACTION: "manual compaction",
    RebuildReason.AUTO_COMPACTION: "automatic compaction",
    RebuildReason.PURGE: "purge",
    RebuildReason.MICRO_COMPACTION: "micro-compaction",
    RebuildReason.CONTEXT_OVERFLOW_RECOVERY: "context overflow recovery",
    RebuildReason.FRONT_TRIM: "front trim",
    RebuildReason.VERIFY_AND_REPLAN_RESET: "verify-and-replan reset",
    RebuildReason.EDIT_ROLLBACK: "edit rollback",
    RebuildReason.SESSION_SYNC: "session sync (kernel restart, session restore)",
    RebuildReason.CYCLE_RESET: "cycle reset",
    RebuildReason.HISTORY_CLEAR: "history clear",
    RebuildReason.RUNTIME: "runtime operation",
}


@dataclass(frozen=True, slots=True)
class RebuildRecord:
    """One audited rewrite of the log. `before`/`after` are message counts."""

    reason: RebuildReason
    detail: str | None
    before: int
    after: int
    at: float
    before_sha256: str
    after_sha256: str

    def __str__(self) -> str:
        detail = f" ({self.detail})" if self.detail else ""
        return (
            f"{self.reason.label}{detail}: {self.before} -> {self.after} messages "
            f"(log {self.before_sha256[:12]} -> {self.after_sha256[:12]})"
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "reason": self.reason.value,
            "label": self.reason.label,
            "detail": self.detail,
            "before": self.before,
            "after": self.after,
            "at": self.at,
            "before_sha256": self.before_sha256,
            "after_sha256": self.after_sha256,
            "text": str(self),
        }


def freeze_message(message: Mapping[str, Any], where: str = "message") -> FrozenDict:
    """Validate a neutral message and return its deep-frozen copy."""
    if not isinstance(message, Mapping):
        raise MessageFormatError(f"{where} must be an object with 'role' and 'content'")
    frozen = freeze(message, where=where)
    validate_message(frozen, where)
    return frozen


class SerializedMessage:
    """A frozen message with its canonical bytes, hashes and cached wire bytes (made once)."""

    __slots__ = ("_last", "_parts", "canonical", "chain", "digest", "end", "message")

    def __init__(self, message: FrozenDict, prev_chain: bytes, prev_end: int) -> None:
        self.message = message
        self.canonical = canonical_json(message)
        self.digest = hashlib.sha256(self.canonical).digest()
        self.chain = hashlib.sha256(prev_chain + self.digest).digest()
        self.end = prev_end + len(self.canonical) + 1  # stream form: canonical + b"\n"
        self._parts: dict[Provider, bytes] = {}
        self._last: dict[Provider, bytes] = {}

    def part(self, provider: Provider) -> bytes:
        """Wire bytes followed by a comma: how the message sits in the middle of a body."""
        part = self._parts.get(provider)
        if part is None:
            part = self._parts[provider] = message_wire(provider, self.message) + b","
        return part

    def last(self, provider: Provider) -> bytes:
        """Wire bytes as the request's final message (Anthropic: with the cache breakpoint)."""
        last = self._last.get(provider)
        if last is None:
            last = self._last[provider] = message_wire(provider, self.message, last=True)
        return last


def serialize_all(
    messages: Iterable[FrozenDict], chain: bytes = CHAIN_SEED, end: int = 0
) -> list[SerializedMessage]:
    out = []
    for message in messages:
        entry = SerializedMessage(message, chain, end)
        chain, end = entry.chain, entry.end
        out.append(entry)
    return out


class LogGeneration:
    """The entries between two rebuilds. Entries only grow; `record` is the rebuild that began
    this generation (None for the first)."""

    __slots__ = ("_wire_parts", "entries", "number", "record")

    def __init__(
        self, entries: list[SerializedMessage], number: int, record: RebuildRecord | None
    ) -> None:
        self.entries = entries
        self.number = number
        self.record = record
        self._wire_parts: dict[Provider, list[bytes]] = {}

    def wire_parts(self, provider: Provider, count: int) -> list[bytes]:
        """The list of `part(provider)` for at least the first `count` entries (grown lazily)."""
        parts = self._wire_parts.get(provider)
        if parts is None:
            parts = self._wire_parts[provider] = []
        entries = self.entries
        while len(parts) < count:
            parts.append(entries[len(parts)].part(provider))
        return parts

    def chain_at(self, count: int) -> bytes:
        return self.entries[count - 1].chain if count else CHAIN_SEED

    def end_at(self, count: int) -> int:
        return self.entries[count - 1].end if count else 0


_FORBIDDEN = frozenset(
    {"append", "extend", "insert", "pop", "remove", "clear", "sort", "reverse", "__setitem__"}
)


class AppendLog(Sequence[FrozenDict]):
    """The conversation as an append-only, read-only sequence of frozen messages."""

    __slots__ = ("_audit", "_clock", "_gen", "_rebuilds", "_subscribers")

    def __init__(
        self,
        messages: Iterable[Mapping[str, Any]] = (),
        *,
        audit_size: int = 8,
        clock: Callable[[], float] = time.time,
    ) -> None:
        if audit_size < 1:
            raise ValueError("audit_size must be at least 1")
        frozen = [freeze_message(m, f"messages[{i}]") for i, m in enumerate(messages)]
        self._gen = LogGeneration(serialize_all(frozen), 0, None)
        self._audit: deque[RebuildRecord] = deque(maxlen=audit_size)
        self._subscribers: list[Callable[[RebuildRecord], object]] = []
        self._clock = clock
        self._rebuilds = 0

    # -- reading ----------------------------------------------------------------------------

    def __len__(self) -> int:
        return len(self._gen.entries)

    @overload
    def __getitem__(self, index: int) -> FrozenDict: ...

    @overload
    def __getitem__(self, index: slice) -> tuple[FrozenDict, ...]: ...

    def __getitem__(self, index: int | slice) -> FrozenDict | tuple[FrozenDict, ...]:
        if isinstance(index, slice):
            return tuple(entry.message for entry in self._gen.entries[index])
        return self._gen.entries[index].message

    def __iter__(self) -> Iterator[FrozenDict]:
        return (entry.message for entry in self._gen.entries)

    def __repr__(self) -> str:
        return f"<AppendLog {len(self)} messages, {self._rebuilds} rebuilds, {self.sha256[:12]}>"

    if not TYPE_CHECKING:  # hidden from type checkers, so a typo on the log stays an error

        def __getattr__(self, name: str) -> NoReturn:
            if name in _FORBIDDEN:
                raise AttributeError(
                    f"AppendLog has no {name}(): the log is append-only so cached prefixes "
                    "stay valid. Add with log.push(message); rewrite with "
                    "log.rebuild(RebuildReason.<REASON>, messages, detail=...) (audited)."
                )
            raise AttributeError(f"'AppendLog' object has no attribute {name!r}")

    @property
    def generation(self) -> LogGeneration:
        return self._gen

    @property
    def sha256(self) -> str:
        """Chain hash of the whole log (hex); equal logs have equal hashes."""
        return self._gen.chain_at(len(self._gen.entries)).hex()

    @property
    def byte_length(self) -> int:
        """Length of the log's canonical byte stream (each message's canonical JSON + ``\\n``)."""
        return self._gen.end_at(len(self._gen.entries))

    @property
    def audit(self) -> tuple[RebuildRecord, ...]:
        """The newest rebuild records, oldest first."""
        return tuple(self._audit)

    @property
    def rebuild_count(self) -> int:
        """Rebuilds since the log was made (the audit keeps only the newest)."""
        return self._rebuilds

    # -- the two mutations ------------------------------------------------------------------

    def push(self, message: Mapping[str, Any]) -> FrozenDict:
        """Freeze, serialize and hash `message` once, append it, and return the frozen copy."""
        frozen = freeze_message(message, f"message {len(self)}")
        entries = self._gen.entries
        chain, end = (entries[-1].chain, entries[-1].end) if entries else (CHAIN_SEED, 0)
        entries.append(SerializedMessage(frozen, chain, end))
        return frozen

    def rebuild(
        self,
        reason: RebuildReason | str,
        messages: Iterable[Mapping[str, Any]],
        detail: str | None = None,
    ) -> RebuildRecord:
        """Replace the whole log, audited. Nothing changes if any new message is invalid."""
        reason = _resolve_reason(reason)
        if reason is RebuildReason.RUNTIME and not detail:
            raise MessageFormatError(
                "RebuildReason.RUNTIME needs detail= naming the operation (e.g. 'tool purge')"
            )
        frozen = [freeze_message(m, f"messages[{i}]") for i, m in enumerate(messages)]
        entries = serialize_all(frozen)
        before, before_sha = len(self), self.sha256
        after_sha = (entries[-1].chain if entries else CHAIN_SEED).hex()
        record = RebuildRecord(
            reason, detail, before, len(entries), self._clock(), before_sha, after_sha
        )
        self._gen = LogGeneration(entries, self._gen.number + 1, record)
        self._audit.append(record)
        self._rebuilds += 1
        self._notify(record)
        return record

    # -- events -----------------------------------------------------------------------------

    def subscribe(self, callback: Callable[[RebuildRecord], object]) -> Callable[[], None]:
        """Call `callback(record)` once per rebuild; returns a function that unsubscribes."""
        self._subscribers.append(callback)

        def unsubscribe() -> None:
            if callback in self._subscribers:
                self._subscribers.remove(callback)

        return unsubscribe

    def _notify(self, record: RebuildRecord) -> None:
        # Every subscriber hears of the rebuild even if an earlier one fails; the first
        # failure is re-raised afterwards (the rebuild itself has already happened).
        first_error: BaseException | None = None
        for callback in list(self._subscribers):
            try:
                callback(record)
            except Exception as err:
                first_error = first_error or err
        if first_error is not None:
            raise first_error


def _resolve_reason(reason: RebuildReason | str) -> RebuildReason:
    try:
        return RebuildReason(reason)
    except ValueError:
        names = ", ".join(r.name for r in RebuildReason)
        raise MessageFormatError(
            f"unknown rebuild reason {reason!r}; use one of: {names}"
        ) from None
