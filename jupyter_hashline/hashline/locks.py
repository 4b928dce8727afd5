"""Per-path serialization: one asyncio lock per store key (canonical path).

One table serves a whole process: the application layer creates it and hands it to every
patcher (one per agent), so reads, outputs, edits and writes of one file are serialized
whoever sends them. Reads hold the lock too: a storage that writes in place (jupyter_server's
contents manager keeps a backup, it does not rename a temp file) could otherwise show a read a
half-written file.

Invariants:
- Holding `hold(paths)` excludes every other holder of any of those paths.
- Locks are taken in sorted order, so two multi-file patches can never deadlock.
- A lock lives only while someone holds or waits for it: the table never grows without bound.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterable
from contextlib import asynccontextmanager


class PathLocks:
    """A table of asyncio locks keyed by canonical path."""

    def __init__(self) -> None:
        self._locks: dict[str, asyncio.Lock] = {}
        self._users: dict[str, int] = {}

    def _enter(self, path: str) -> asyncio.Lock:
        self._users[path] = self._users.get(path, 0) + 1
        return self._locks.setdefault(path, asyncio.Lock())

    def _leave(self, path: str) -> None:
        self._users[path] -= 1
        if not self._users[path]:
            del self._users[path]
            del self._locks[path]

    @asynccontextmanager
    async def hold(self, paths: Iterable[str]) -> AsyncIterator[None]:
        """Hold the locks of every path in `paths` (deduplicated, sorted) for the block."""
        ordered = sorted(set(paths))
        locks = [self._enter(path) for path in ordered]
        acquired: list[asyncio.Lock] = []
        try:
            for lock in locks:
                await lock.acquire()
                acquired.append(lock)
            yield
        finally:
            for lock in reversed(acquired):
                lock.release()
            for path in ordered:
                self._leave(path)

    def __len__(self) -> int:
        return len(self._locks)
