"""The snapshot store protocol: which texts an agent was shown, under which tags.

Invariants (every implementation, checked by one shared contract suite):
- `record(path, text)` returns `section_tag(text)`. Recording text identical to a stored
  version refreshes its recency and returns the same tag ("read fusion"); new text prepends a
  version. Dedup compares full text, never the tag alone.
- `history(path)` is newest first; `head(path)` is `history(path)[0]` or None.
- `by_hash(path, tag)` returns the most recent snapshot with that tag (tags can collide).
- Seen lines belong to the exact text shown and to the agent it was shown to: they are kept per
  (path, text, agent), so a colliding text with the same tag starts with no seen lines, and
  agent B is never credited with lines only agent A was shown. `seen_lines(path, tag)` without
  an agent is the union over every agent (what was shown to anyone); `record_seen_lines`
  without one credits the default agent `""` (a single-agent caller sees no difference).
- Safe to share between patchers and threads.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

DEFAULT_AGENT = ""
"""The agent credited when a caller names none (single-agent use)."""


@dataclass(frozen=True, slots=True)
class Snapshot:
    """One version of a file as an agent was shown it (normalized text)."""

    path: str
    text: str
    tag: str
    recorded_at_ms: int


@runtime_checkable
class SnapshotStore(Protocol):
    def head(self, path: str) -> Snapshot | None: ...

    def history(self, path: str) -> list[Snapshot]: ...

    def by_hash(self, path: str, tag: str) -> Snapshot | None: ...

    def record(self, path: str, full_text: str) -> str: ...

    def seen_lines(self, path: str, tag: str, agent: str | None = None) -> frozenset[int]:
        """Lines shown to `agent` (None: to any agent) of the newest version of `path` with
        `tag`."""
        ...

    def record_seen_lines(
        self, path: str, tag: str, lines: Iterable[int], agent: str = DEFAULT_AGENT
    ) -> None:
        """Add `lines` to those shown to `agent` of the newest version of `path` with `tag`."""
        ...

    def invalidate(self, path: str) -> None: ...

    def clear(self) -> None: ...

    def paths(self) -> list[str]:
        """Tracked paths, most recently used first."""
        ...
