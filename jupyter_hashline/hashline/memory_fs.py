"""An in-memory `Filesystem`: a dict of path -> raw text, for tests, demos and embedding.

Invariants:
- Text is stored and returned exactly as given (BOM and CRLF included); paths are plain keys,
  used as given (`canonical_path` is the identity inherited from `Filesystem`).
- `read_text` of a missing path raises `NotFoundError(path)`; so do `get` and `delete`.
- `write_text` replaces the whole text at once and returns `WriteResult(text=landed)`. With a
  `transform_on_write` hook the landed text is the hook's result (a stand-in for
  format-on-save); paths passed to `refuse_writes` fail with `WriteFailedError`, leaving the
  stored text untouched (a stand-in for a failing disk).
- Safe to share between threads and tasks (one lock around the dict).
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Mapping

from .errors import NotFoundError, WriteFailedError
from .filesystem import Filesystem, WriteResult

WriteTransform = Callable[[str, str], str]
"""`(path, content) -> landed text`: what a storage that rewrites on save would keep."""


class InMemoryFilesystem(Filesystem):
    """Raw text files held in a dict, addressed by path."""

    def __init__(
        self,
        files: Mapping[str, str] | None = None,
        *,
        transform_on_write: WriteTransform | None = None,
    ) -> None:
        self._files: dict[str, str] = dict(files or {})
        self._refused: dict[str, str] = {}
        self._transform = transform_on_write
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"InMemoryFilesystem({len(self._files)} files)"

    # -- the Filesystem protocol ---------------------------------------------------------------

    async def read_text(self, path: str) -> str:
        return self.get(path)

    async def write_text(self, path: str, content: str) -> WriteResult:
        with self._lock:
            reason = self._refused.get(path)
            if reason is not None:
                raise WriteFailedError(
                    f"Could not write {path}: {reason}. Nothing was written; the file is unchanged."
                )
            landed = self._transform(path, content) if self._transform else content
            self._files[path] = landed
        return WriteResult(text=landed)

    async def preflight_write(self, path: str) -> None:
        with self._lock:
            reason = self._refused.get(path)
        if reason is not None:
            raise WriteFailedError(f"{path} cannot be written: {reason}. Nothing was changed.")

    async def exists(self, path: str) -> bool:
        with self._lock:
            return path in self._files

    # -- synchronous helpers -------------------------------------------------------------------

    def set(self, path: str, text: str) -> None:
        """Create or overwrite `path` with `text` (no transform, no refusal)."""
        with self._lock:
            self._files[path] = text

    def get(self, path: str) -> str:
        """The stored text of `path`; missing -> `NotFoundError`."""
        with self._lock:
            try:
                return self._files[path]
            except KeyError:
                raise NotFoundError(path) from None

    def delete(self, path: str) -> None:
        """Remove `path`; missing -> `NotFoundError`."""
        with self._lock:
            if self._files.pop(path, None) is None:
                raise NotFoundError(path)

    def clear(self) -> None:
        """Remove every file."""
        with self._lock:
            self._files.clear()

    def entries(self) -> dict[str, str]:
        """A copy of every path and its text, sorted by path."""
        with self._lock:
            return dict(sorted(self._files.items()))

    def refuse_writes(self, path: str, reason: str = "simulated write failure") -> None:
        """Make writes to `path` fail with `WriteFailedError` until `allow_writes(path)`."""
        with self._lock:
            self._refused[path] = reason

    def allow_writes(self, path: str) -> None:
        """Undo `refuse_writes(path)`."""
        with self._lock:
            self._refused.pop(path, None)
