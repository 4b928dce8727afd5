"""One provider request assembled from the three zones, and its exact wire bytes.

`ThreeZoneRequest(prefix, log, scratch, **params)` snapshots the zones when it is made: the
frozen prefix, the log's current generation and length, and the scratch's rendered tail. Its
messages are the log plus the scratch tail, nothing else.

`to_wire(provider)` returns the body bytes: a fixed head (built once per prefix and shape), the
messages' cached wire parts joined in one `b"".join`, and a tail holding the per-request
parameters in key order. Building request N never re-serializes or re-hashes the history; the
same inputs always give the same bytes.

The byte stream the invariant speaks about (see `invariant`) is provider-neutral:
``prefix.stream_bytes`` then, per message, its canonical JSON and ``\\n`` (log, then scratch).
Every shape's wire messages are a pure function of those messages, so a neutral byte prefix is
a wire prefix for every shape (the moving Anthropic breakpoint aside, which is not content).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from typing import Any

from .canonical import FrozenDict, freeze
from .errors import MessageFormatError
from .log import AppendLog, LogGeneration, SerializedMessage
from .prefix import FrozenPrefix, PinnedPrefix
from .scratch import TurnScratch
from .wire import RESERVED_KEYS, Provider, params_tail, resolve_provider

__all__ = ["RequestFingerprint", "ThreeZoneRequest"]

_EMPTY_SHA256 = hashlib.sha256(b"").hexdigest()


@dataclass(frozen=True, slots=True)
class RequestFingerprint:
    """Hashes and byte lengths of a request's three zones (O(1) to make)."""

    prefix_sha256: str
    short_id: str
    log_messages: int
    log_sha256: str
    scratch_messages: int
    scratch_sha256: str
    prefix_bytes: int
    log_bytes: int
    scratch_bytes: int

    @property
    def stream_bytes(self) -> int:
        return self.prefix_bytes + self.log_bytes + self.scratch_bytes

    def to_json(self) -> dict[str, Any]:
        return {
            "prefix_sha256": self.prefix_sha256,
            "short_id": self.short_id,
            "log_messages": self.log_messages,
            "log_sha256": self.log_sha256,
            "scratch_messages": self.scratch_messages,
            "scratch_sha256": self.scratch_sha256,
            "prefix_bytes": self.prefix_bytes,
            "log_bytes": self.log_bytes,
            "scratch_bytes": self.scratch_bytes,
        }


class ThreeZoneRequest:
    """A snapshot of prefix + log + scratch (+ per-request params) that renders to wire bytes."""

    __slots__ = (
        "_fingerprint",
        "_tail",
        "_wire",
        "count",
        "generation",
        "log",
        "params",
        "prefix",
        "scratch",
    )

    def __init__(
        self,
        prefix: FrozenPrefix | PinnedPrefix,
        log: AppendLog,
        scratch: TurnScratch | None = None,
        **params: Any,
    ) -> None:
        if params and not RESERVED_KEYS.isdisjoint(params):
            clash = RESERVED_KEYS.intersection(params)
            raise MessageFormatError(
                f"per-request params may not set {sorted(clash)}: those come from the zones "
                "(change the prefix for model/tools/system, the log for messages)"
            )
        self.prefix = prefix.freeze() if isinstance(prefix, PinnedPrefix) else prefix
        self.log = log
        self.generation: LogGeneration = log.generation
        self.count = len(self.generation.entries)
        self.scratch: tuple[SerializedMessage, ...] = (
            scratch.entries() if scratch is not None else ()
        )
        self.params: FrozenDict = freeze(params, where="params")
        self._tail: bytes | None = None
        self._wire: dict[Provider, bytes] = {}
        self._fingerprint: RequestFingerprint | None = None

    # -- messages ---------------------------------------------------------------------------

    def __len__(self) -> int:
        return self.count + len(self.scratch)

    def entry(self, index: int) -> SerializedMessage | None:
        """The serialized message at `index` of log + scratch, or None past the end."""
        if index < self.count:
            return self.generation.entries[index]
        index -= self.count
        return self.scratch[index] if index < len(self.scratch) else None

    def wire_messages(self, provider: str | Provider | None = None) -> list[Any]:
        """The request's messages: neutral frozen messages (log + scratch tail) by default, or
        the ``messages`` array exactly as `to_wire(provider)` sends it."""
        if provider is None:
            log_part = [e.message for e in self.generation.entries[: self.count]]
            return log_part + [e.message for e in self.scratch]
        return json.loads(self.to_wire(provider))["messages"]

    # -- bytes ------------------------------------------------------------------------------

    def to_wire(self, provider: str | Provider = Provider.ANTHROPIC) -> bytes:
        """The exact body bytes for `provider` (anthropic, openai, deepseek); cached."""
        shape = resolve_provider(provider)
        body = self._wire.get(shape)
        if body is None:
            body = self._wire[shape] = b"".join(self._chunks(shape))
        return body

    def _chunks(self, shape: Provider) -> list[bytes]:
        count, scratch = self.count, self.scratch
        if not count and not scratch:
            raise MessageFormatError(
                "the request has no messages; push one to the log or stage a user message "
                "in the scratch (scratch.stage_user(text)) before building it"
            )
        parts = self.generation.wire_parts(shape, count)
        chunks = [self.prefix.wire_head(shape)]
        if scratch:
            chunks += parts[:count]
            chunks += [entry.part(shape) for entry in scratch[:-1]]
            chunks.append(scratch[-1].last(shape))
        else:
            chunks += parts[: count - 1]
            chunks.append(self.generation.entries[count - 1].last(shape))
        chunks.append(self.tail())
        return chunks

    def tail(self) -> bytes:
        """The body bytes after the last message: ``]``, the params in key order, ``}``."""
        if self._tail is None:
            self._tail = params_tail(self.params)
        return self._tail

    # -- fingerprint ------------------------------------------------------------------------

    @property
    def prefix_bytes(self) -> int:
        return len(self.prefix.stream_bytes)

    @property
    def log_bytes(self) -> int:
        return self.generation.end_at(self.count)

    @property
    def scratch_bytes(self) -> int:
        return self.scratch[-1].end if self.scratch else 0

    @property
    def stream_bytes(self) -> int:
        return self.prefix_bytes + self.log_bytes + self.scratch_bytes

    def fingerprint(self) -> RequestFingerprint:
        if self._fingerprint is None:
            scratch_sha = (
                hashlib.sha256(b"".join(e.digest for e in self.scratch)).hexdigest()
                if self.scratch
                else _EMPTY_SHA256
            )
            prefix, count, generation = self.prefix, self.count, self.generation
            self._fingerprint = RequestFingerprint(
                prefix.combined_sha256,
                prefix.short_id,
                count,
                generation.chain_at(count).hex(),
                len(self.scratch),
                scratch_sha,
                len(prefix.stream_bytes),
                generation.end_at(count),
                self.scratch[-1].end if self.scratch else 0,
            )
        return self._fingerprint

    def __repr__(self) -> str:
        return (
            f"<ThreeZoneRequest prefix {self.prefix.short_id}, {self.count} log + "
            f"{len(self.scratch)} scratch messages>"
        )
