"""An in-memory `SnapshotStore`: bounded, thread-safe, the engine's default.

Invariants (on top of the `SnapshotStore` contract in store.py):
- At most `max_paths` paths are tracked; recording a new path beyond that forgets the least
  recently used one. A path is "used" when a version of it is recorded (read fusion included) or
  seen lines are added to it; lookups (`head`, `history`, `by_hash`, `seen_lines`) never change
  recency, so inspecting the store does not reorder it.
- At most `max_versions_per_path` versions are kept per path (a ring): a new version beyond that
  forgets the least recently recorded one, together with its seen lines.
- Versions of one path always have pairwise different texts; seen lines live on the version,
  per agent, so they follow the exact text (not the tag) and the agent that was shown them.
- Every public method holds one lock, so a store can be shared by patchers and threads.
- `clock` returns milliseconds since the epoch; tests inject one to be deterministic.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from .store import DEFAULT_AGENT, Snapshot
from .text import section_tag

Clock = Callable[[], int]


def wall_clock_ms() -> int:
    """Milliseconds since the epoch, from the system clock."""
    return time.time_ns() // 1_000_000


@dataclass(slots=True)
class _Version:
    """One stored text of a path and the line numbers shown of it (mutable, private)."""

    text: str
    tag: str
    recorded_at_ms: int
    seen: dict[str, set[int]] = field(default_factory=dict)

    def seen_by(self, agent: str | None) -> frozenset[int]:
        if agent is not None:
            return frozenset(self.seen.get(agent, ()))
        return frozenset().union(*self.seen.values())


def _check_limit(name: str, value: int) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or value < 1:
        raise ValueError(f"{name} must be a positive integer, got {value!r}")
    return value


class InMemorySnapshotStore:
    """Snapshots kept in process memory: LRU over paths, a ring of versions per path."""

    def __init__(
        self,
        max_paths: int = 30,
        max_versions_per_path: int = 4,
        clock: Clock | None = None,
    ) -> None:
        self.max_paths = _check_limit("max_paths", max_paths)
        self.max_versions_per_path = _check_limit("max_versions_per_path", max_versions_per_path)
        self._clock: Clock = clock or wall_clock_ms
        self._lock = threading.Lock()
        # path -> versions newest first; the OrderedDict's end is the most recently used path.
        self._paths: OrderedDict[str, list[_Version]] = OrderedDict()

    def __repr__(self) -> str:
        return (
            f"InMemorySnapshotStore(paths={len(self._paths)}, max_paths={self.max_paths}, "
            f"max_versions_per_path={self.max_versions_per_path})"
        )

    # -- lookups -------------------------------------------------------------------------------

    def head(self, path: str) -> Snapshot | None:
        with self._lock:
            versions = self._paths.get(path)
            return _snapshot(path, versions[0]) if versions else None

    def history(self, path: str) -> list[Snapshot]:
        with self._lock:
            return [_snapshot(path, v) for v in self._paths.get(path, ())]

    def by_hash(self, path: str, tag: str) -> Snapshot | None:
        with self._lock:
            version = self._find_tag(path, tag)
            return _snapshot(path, version) if version else None

    def seen_lines(self, path: str, tag: str, agent: str | None = None) -> frozenset[int]:
        """Lines shown to `agent` (None: anyone) of the newest version of `path` with `tag`."""
        with self._lock:
            version = self._find_tag(path, tag)
            return version.seen_by(agent) if version else frozenset()

    @property
    def where(self) -> str:
        """Where the tags live, as a refusal names it."""
        return "this process's memory (an in-memory store, gone when it stops)"

    def paths(self) -> list[str]:
        """Tracked paths, most recently used first."""
        with self._lock:
            return list(reversed(self._paths))

    # -- updates -------------------------------------------------------------------------------

    def record(self, path: str, full_text: str) -> str:
        """Store `full_text` as the newest version of `path` and return its tag.

        Text equal to a stored version moves that version to the front (keeping its seen
        lines) instead of adding a copy.
        """
        tag = section_tag(full_text)
        now = self._clock()
        with self._lock:
            versions = self._paths.setdefault(path, [])
            existing = next((v for v in versions if v.text == full_text), None)
            if existing is not None:
                versions.remove(existing)
                existing.recorded_at_ms = now
                versions.insert(0, existing)
            else:
                versions.insert(0, _Version(full_text, tag, now))
                del versions[self.max_versions_per_path :]
            self._touch(path)
        return tag

    def record_seen_lines(
        self, path: str, tag: str, lines: Iterable[int], agent: str = DEFAULT_AGENT
    ) -> None:
        """Credit `agent` with `lines` of the newest version of `path` with `tag` (no such
        version: no-op)."""
        numbers = set(lines) if isinstance(lines, range) else {int(n) for n in lines}
        with self._lock:
            version = self._find_tag(path, tag)
            if version is None:
                return
            version.seen.setdefault(agent, set()).update(numbers)
            self._touch(path)

    def invalidate(self, path: str) -> None:
        """Forget every version of `path` (and its seen lines)."""
        with self._lock:
            self._paths.pop(path, None)

    def clear(self) -> None:
        """Forget everything."""
        with self._lock:
            self._paths.clear()

    # -- internals (caller holds the lock) -----------------------------------------------------

    def _find_tag(self, path: str, tag: str) -> _Version | None:
        return next((v for v in self._paths.get(path, ()) if v.tag == tag), None)

    def _touch(self, path: str) -> None:
        self._paths.move_to_end(path)
        while len(self._paths) > self.max_paths:
            self._paths.popitem(last=False)


def _snapshot(path: str, version: _Version) -> Snapshot:
    return Snapshot(path, version.text, version.tag, version.recorded_at_ms)
