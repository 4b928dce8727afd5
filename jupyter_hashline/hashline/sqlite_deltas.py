"""Versions in the SQLite store kept as deltas: the bytes that differ from another version.

Between two versions of a notebook an agent or a person changes a few cells, yet every version
used to be stored whole: the 64 versions a 5 MB notebook may keep filled 320 MB, and each
record wrote 5 MB. A version may now be stored against a base, another version of the same
path: the lengths of the prefix and the suffix it shares with the base's bytes, and the bytes
between them.

Invariants:
- A version's bytes are `base[:prefix] + middle + base[len(base) - suffix:]` of its base's
  bytes, and a version without a base holds all of its bytes; `prefix + suffix` never exceeds
  the length of either.
- Chains stay short: a delta's depth is its base's plus one, at most `MAX_DEPTH` (the next
  version is stored whole); so is a version whose middle would be more than half of its bytes.
- A base is chosen only among bytes known for certain (a cache entry is used only when its
  digest equals the row's), never guessed.
- A base is never deleted while a version is based on it: a version dropped from the ring is
  hidden from every reader and kept while a kept version's chain leads through it (the store's
  trim), so dropping the oldest version costs no rewrite of the next. The schema's foreign key
  refuses a delete that would break a chain: a missed case fails loudly, it never loses a text.
- Reads of rows only: the caller holds the store's lock (and its transaction, if any).
"""

from __future__ import annotations

import sqlite3
from collections import OrderedDict
from dataclasses import dataclass

from .text import common_prefix, common_suffix

__all__ = ["MAX_DEPTH", "BlobCache", "Delta", "bytes_of", "plan_delta"]

MAX_DEPTH = 8

_CHAIN = """
WITH RECURSIVE chain (id, base_id, prefix, suffix, text, step) AS (
    SELECT id, base_id, prefix, suffix, text, 0 FROM versions WHERE id = ?
    UNION ALL
    SELECT v.id, v.base_id, v.prefix, v.suffix, v.text, chain.step + 1
    FROM versions AS v JOIN chain ON v.id = chain.base_id
)
SELECT base_id, prefix, suffix, text FROM chain ORDER BY step DESC
"""


@dataclass(frozen=True, slots=True)
class Delta:
    """A version's bytes as a base's bytes with the stretch between two lengths replaced."""

    prefix: int
    suffix: int
    middle: bytes

    def applied_to(self, base: bytes) -> bytes:
        return base[: self.prefix] + self.middle + base[len(base) - self.suffix :]


def plan_delta(base: bytes, blob: bytes) -> Delta | None:
    """`blob` against `base`, or None when the delta would hold more than half of `blob`."""
    prefix = common_prefix(base, blob)
    suffix = common_suffix(base, blob, min(len(base), len(blob)) - prefix)
    middle_length = len(blob) - prefix - suffix
    if 2 * middle_length > len(blob):
        return None
    return Delta(prefix, suffix, blob[prefix : len(blob) - suffix])


def bytes_of(conn: sqlite3.Connection, version_id: int) -> bytes:
    """The whole bytes of a version, its chain of bases followed in one query."""
    rows = conn.execute(_CHAIN, (version_id,)).fetchall()
    if not rows or rows[0][0] is not None:
        raise sqlite3.DatabaseError(
            f"database disk image is malformed: version {version_id} has no whole base"
        )
    blob: bytes = rows[0][3]
    for _, prefix, suffix, middle in rows[1:]:
        blob = Delta(prefix, suffix, middle).applied_to(blob)
    return blob


class BlobCache:
    """The bytes of the versions this store recorded or read last, by id and digest (an id
    may name other bytes later, in another process or after a delete: the digest decides).
    At most `size` entries and `max_bytes` bytes: the least recently used go first, and a
    blob larger than `max_bytes` is not kept (its next version is then stored whole)."""

    def __init__(self, size: int = 8, max_bytes: int = 64 * 1024 * 1024) -> None:
        self._size, self._max_bytes, self._bytes = size, max_bytes, 0
        self._blobs: OrderedDict[int, tuple[bytes, bytes]] = OrderedDict()

    def get(self, version_id: int, digest: bytes) -> bytes | None:
        entry = self._blobs.get(version_id)
        if entry is None or entry[0] != digest:
            return None
        self._blobs.move_to_end(version_id)
        return entry[1]

    def put(self, version_id: int, digest: bytes, blob: bytes) -> None:
        self._drop(version_id)
        if len(blob) > self._max_bytes:
            return
        self._blobs[version_id] = (digest, blob)
        self._bytes += len(blob)
        while len(self._blobs) > self._size or self._bytes > self._max_bytes:
            self._drop(next(iter(self._blobs)))

    def _drop(self, version_id: int) -> None:
        entry = self._blobs.pop(version_id, None)
        if entry is not None:
            self._bytes -= len(entry[1])

    def clear(self) -> None:
        self._blobs.clear()
        self._bytes = 0
