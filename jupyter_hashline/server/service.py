"""The hashline service: everything the REST handlers do, without HTTP.

One instance per server. It owns the patcher (over a `NotebookFilesystem` wrapping the
contents-manager filesystem), the snapshot store, the activity log and the session registry.
Methods take parsed requests and return JSON-ready dicts; failures are `HashlineError`s,
mapped to HTTP by `errors.error_response`.

Invariants:
- Requests on one canonical path are serialized (`PathLocks`): reads, outputs, patches and
  writes; a multi-file patch holds the locks of all its files. Concurrent stale edits are
  therefore rebased one at a time, never interleaved, so none is lost; and no read sees a
  save in progress.
- Every edit that changed a file is recorded in the activity log, attributed to the user the
  server authenticated.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from ..agent.activity import ActivityLog
from ..hashline.parse import parse_patch
from ..hashline.patcher import Patcher
from ..hashline.results import PartialWriteError, PatchResult
from ..hashline.store import SnapshotStore
from ..notebook import NotebookFilesystem
from ..notebook.outputs import DEFAULT_MAX_CHARS
from .config import HashlineSettings
from .contents_fs import ContentsFilesystem
from .live import LiveContentsFilesystem, LiveDocumentChanged, LiveNotebookFilesystem
from .live_rooms import RoomFinder
from .locks import PathLocks
from .requests import OutputsRequest, PatchRequest, ReadRequest, SessionPost, WriteRequest
from .sessions import SessionRegistry

LIVE_ATTEMPTS = 3
"""How often an edit is tried when a person's typing lands while it is applied (live path)."""


def patch_reply(result: PatchResult) -> dict[str, Any]:
    """`{"sections": [...], "text": ...}`: the engine's own JSON form of the result."""
    return dict(result.to_json())


def _line_count(text: str) -> int:
    return text.count("\n") + (0 if text.endswith("\n") or not text else 1)


def _seen_ranges(lines: frozenset[int]) -> list[list[int]]:
    """Sorted line numbers as inclusive [start, end] runs."""
    runs: list[list[int]] = []
    for line in sorted(lines):
        if runs and runs[-1][1] == line - 1:
            runs[-1][1] = line
        else:
            runs.append([line, line])
    return runs


class HashlineService:
    """Reads, edits, outputs, snapshots, activity and sessions for one server."""

    def __init__(
        self,
        *,
        patcher: Patcher,
        filesystem: NotebookFilesystem,
        contents: ContentsFilesystem,
        store: SnapshotStore,
        settings: HashlineSettings,
    ) -> None:
        self.patcher = patcher
        self.filesystem = filesystem
        self.contents = contents
        self.store = store
        self.settings = settings
        self.locks = PathLocks()
        self.activity_log = ActivityLog(settings.activity_limit)
        self.sessions = SessionRegistry(settings.max_sessions)

    async def read(self, request: ReadRequest) -> dict[str, Any]:
        path = self.contents.resolve(request.path)
        async with self.locks.hold([await self.contents.canonical_path(path)]):
            result = await self.patcher.read(
                path, offset=request.offset, limit=request.limit, cells=request.cells
            )
        return {
            "path": result.path,
            "tag": result.tag,
            "header": result.header,
            "view": result.view,
        }

    async def patch(self, request: PatchRequest, who: str) -> dict[str, Any]:
        self.patcher.check_patch_size(request.patch)
        sections = parse_patch(request.patch)
        keys = [await self.contents.canonical_path(section.path) for section in sections]
        async with self.locks.hold(keys):
            try:
                result = await self._retrying(lambda: self.patcher.apply(sections))
            except PartialWriteError as err:
                self._record(err.result, who, "patch")
                raise
        self._record(result, who, "patch")
        return patch_reply(result)

    async def write(self, request: WriteRequest, who: str) -> dict[str, Any]:
        path = self.contents.resolve(request.path)
        async with self.locks.hold([await self.contents.canonical_path(path)]):
            result = await self._retrying(lambda: self.patcher.write(path, request.content))
        self._record(result, who, "write")
        return patch_reply(result)

    async def outputs(self, request: OutputsRequest) -> dict[str, Any]:
        path = self.contents.resolve(request.path)
        max_chars = request.max_chars or DEFAULT_MAX_CHARS
        async with self.locks.hold([await self.contents.canonical_path(path)]):
            text = await self.filesystem.outputs(path, request.cell, max_chars=max_chars)
        return {"path": path, "cell": request.cell, "text": text}

    def snapshots(self) -> dict[str, Any]:
        tracked = []
        for path in self.store.paths():
            versions = [
                {
                    "tag": snap.tag,
                    "recorded_at_ms": snap.recorded_at_ms,
                    "lines": _line_count(snap.text),
                    "seen_lines": _seen_ranges(self.store.seen_lines(path, snap.tag)),
                }
                for snap in self.store.history(path)
            ]
            head = versions[0]["tag"] if versions else None
            tracked.append({"path": path, "head": head, "versions": versions})
        return {"paths": tracked}

    def activity(self, limit: int | None = None) -> dict[str, Any]:
        return {"edits": [record.to_json() for record in self.activity_log.recent(limit)]}

    def list_sessions(self) -> dict[str, Any]:
        return {"sessions": [entry.summary() for entry in self.sessions.entries()]}

    def post_session(self, post: SessionPost) -> dict[str, Any]:
        entry, created = self.sessions.post(post.session_id, post.snapshot, post.label)
        return {**entry.summary(), "created": created}

    def get_session(self, session_id: str) -> dict[str, Any]:
        return self.sessions.get(session_id).to_json()

    def close(self) -> None:
        close = getattr(self.store, "close", None)
        if callable(close):
            close()

    async def _retrying(self, run: Callable[[], Awaitable[PatchResult]]) -> PatchResult:
        """Run an edit again (as a stale edit) if a live notebook changed under it."""
        for _ in range(LIVE_ATTEMPTS - 1):
            try:
                return await run()
            except LiveDocumentChanged:
                continue
        return await run()

    def _record(self, result: PatchResult, who: str, source: str) -> None:
        self.activity_log.record_result(result, who=who, source=source)


def build_service(
    contents_manager: Callable[[], Any],
    store: SnapshotStore,
    settings: HashlineSettings,
    rooms: RoomFinder | None = None,
) -> HashlineService:
    """Wire the contents manager, the notebook layer and the engine for one server.

    `contents_manager()` returns the server's current contents manager (looked up per call:
    jupytext's extension replaces it after load). With `rooms`, notebooks open in a
    collaborative room are read and edited live (live.py).
    """
    contents = ContentsFilesystem.current(
        contents_manager,
        allowed_paths=settings.allowed_paths,
        read_only=settings.read_only,
        max_file_bytes=settings.max_file_bytes,
    )
    filesystem = (
        NotebookFilesystem(contents, projection=settings.projection)
        if rooms is None
        else LiveNotebookFilesystem(
            LiveContentsFilesystem(contents, rooms), projection=settings.projection
        )
    )
    patcher = Patcher(
        filesystem,
        store,
        seen_lines=settings.seen_lines,
        max_patch_bytes=settings.max_patch_bytes,
        max_file_bytes=settings.max_file_bytes,
    )
    return HashlineService(
        patcher=patcher, filesystem=filesystem, contents=contents, store=store, settings=settings
    )
