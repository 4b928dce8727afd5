"""Edits into notebooks open in JupyterLab with real-time collaboration.

Two layers, so the live path shows exactly the projection the disk path shows:

- `LiveContentsFilesystem` wraps the contents-manager filesystem. For a notebook with an open
  room, `read_text` returns the live shared document serialized exactly as Jupyter would write
  it, and `write_text` lands the merged notebook in the shared document as granular changes
  (`live_apply`) and saves it: where the contents manager stores notebooks as bytes on local
  disk, by writing the document as it stands right after the edit (the text a read shows,
  which is what the room's save would write) off the event loop and telling the room its file
  is current (`LiveRoom.save_as`: no whole-document save on the loop, no reload); else by the
  room's own save, then reading the file back. Either way the landed text is what is on disk.
  Every other path, or a notebook without a room, goes to the contents manager.
- `NotebookFilesystem` is the notebook layer over it (projection, merge, validation, tags and
  cell-aware recovery, unchanged) with one guard, `LiveWriteGuard` (the notebook layer's
  `WriteGuard` seam): an edit is merged only into the live text the patcher read; if a person
  typed in between, the write raises `LiveDocumentChanged` (nothing applied) and the workspace
  retries the whole edit, whose stale tag is then recovered cell by cell as on disk.

Invariants:
- From the guard's check of the live document to the end of the pycrdt transaction nothing
  yields to the event loop (room lookups are cached, the checks and the transaction are
  synchronous), so no keystroke can land in between and be overwritten.
- A live read is served again from its cache only while the shared document's version is
  unchanged, deletions included (a person erasing text or deleting a cell is a change).
- The person's unsaved typing is never dropped: the edit goes into the shared document, and
  the save writes the whole document (their text included), so the room never reloads from disk.
- A repair the room made as it loaded the file (ids, outputs) reads the same warning as when
  a write of the notebook layer makes it, once: on the first write the room saves.
- Without jupyter-collaboration, without an open ready room, or without the room's save hook,
  everything behaves exactly like the contents-manager path.
"""

from __future__ import annotations

import json
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any

from ...hashline import ByteStorage, Filesystem, WriteResult
from ...notebook import (
    CellJsonCache,
    is_notebook_path,
    parse_notebook_text,
    repairs_between,
    serialize_notebook,
)
from .contents_fs import ContentsFilesystem
from .live_apply import LiveDocumentChanged, apply_to_live
from .live_mirror import LiveMirror
from .live_rooms import LiveRoom, RoomFinder

__all__ = [
    "LiveContentsFilesystem",
    "LiveDocumentChanged",
    "LiveWriteGuard",
]

NOT_SAVED = (
    "the edit is in the notebook open in JupyterLab, but the room did not save it to disk yet "
    "(JupyterLab will save it); the header and preview show the file as it is on disk now."
)

IN_ROOM = (
    "the edit is in the notebook open in JupyterLab; the room saves it to disk as it saves "
    "typing (live_save is 'room'), so the file may show it a moment later."
)


@dataclass(frozen=True, slots=True)
class _Served:
    """What a live read returned: the document and its version, raw JSON, the notebook."""

    document: Any
    version: tuple[int, int]
    raw: str
    nb: dict[str, Any]


class LiveContentsFilesystem(Filesystem, ByteStorage):
    """Raw files through the contents manager; open notebooks through their shared document."""

    def __init__(
        self,
        contents: ContentsFilesystem,
        rooms: RoomFinder,
        cache_size: int = 16,
        *,
        wait_for_save: bool = True,
    ):
        self.contents = contents
        self.rooms = rooms
        self.wait_for_save = wait_for_save
        self._cache_size = cache_size
        self._served: OrderedDict[str, _Served] = OrderedDict()
        self._mirrors: OrderedDict[int, LiveMirror] = OrderedDict()
        self._json = CellJsonCache()
        # per room document: the room's load repairs not yet reported by a saved write
        self._repaired: dict[int, tuple[Any, tuple[str, ...]]] = {}

    def _mirror(self, document: Any) -> LiveMirror:
        """The mirror of an open room's document (the newest `cache_size` are kept)."""
        mirror = self._mirrors.get(id(document))
        if mirror is None or mirror.document is not document:
            mirror = self._mirrors[id(document)] = LiveMirror(document)
        self._mirrors.move_to_end(id(document))
        while len(self._mirrors) > self._cache_size:
            self._mirrors.popitem(last=False)[1].close()
        return mirror

    def __repr__(self) -> str:
        return f"LiveContentsFilesystem({self.contents!r})"

    async def find(self, path: str) -> LiveRoom | None:
        """The open room of notebook `path` (None for other files and closed notebooks)."""
        if not is_notebook_path(path):
            return None
        return await self.rooms.find(self.contents.resolve(path))

    async def read_text(self, path: str) -> str:
        live = await self.find(path)
        if live is None:
            return await self.contents.read_text(path)
        return self._serve(self.contents.resolve(path), live).raw

    async def write_text(self, path: str, content: str) -> WriteResult:
        resolved = self.contents.check_write(path, content)
        live = self.rooms.lookup(resolved) if is_notebook_path(resolved) else None
        if live is None:
            return await self.contents.write_text(path, content)
        return await self._write_live(resolved, live, parse_notebook_text(resolved, content))

    async def write_notebook(
        self,
        path: str,
        notebook: Mapping[str, Any],
        data: bytes,
        base: Mapping[str, Any] | None,
    ) -> WriteResult | None:
        """A merged notebook into its open room, as it is (no parse of `data`), planned
        against `base` (the notebook read from the room, whose kept cells the merge reused:
        those need no comparing); None without a room (the notebook layer writes the bytes)."""
        resolved = self.contents.resolve(path)
        live = self.rooms.lookup(resolved) if is_notebook_path(resolved) else None
        if live is None:
            return None
        self.contents.check_write(path, data.decode("utf-8", "surrogatepass"))
        return await self._write_live(resolved, live, notebook, base)

    async def _write_live(
        self,
        resolved: str,
        live: LiveRoom,
        notebook: Mapping[str, Any],
        base: Mapping[str, Any] | None = None,
    ) -> WriteResult:
        served = self._served.get(resolved)
        if (
            served is None
            or served.document is not live.document
            or served.version != self._mirror(live.document).version
        ):
            raise LiveDocumentChanged(resolved)
        apply_to_live(live.document, served.nb if base is None else base, notebook, resolved)
        now, scheduled = self._serve(resolved, live), live.pending_save()
        repairs = await self._room_repairs(resolved, live.document, served.nb)
        if not self.wait_for_save:  # the room saves it, as it saves a person's typing
            self._repaired[id(live.document)] = (live.document, ())
            return WriteResult(now.raw, repairs, (IN_ROOM,))
        if await self._save_ourselves(resolved, live, now, scheduled):
            self._repaired[id(live.document)] = (live.document, ())
            return WriteResult(now.raw, repairs)
        saved = await live.save()
        landed = await self.contents.read_text(resolved)
        if not saved:
            return WriteResult(landed, (NOT_SAVED,))
        self._repaired[id(live.document)] = (live.document, ())
        return WriteResult(landed, repairs)

    async def _save_ourselves(
        self, path: str, live: LiveRoom, now: _Served, scheduled: Any
    ) -> bool:
        """Write the document as it was right after the edit (`now`, serialized as Jupyter
        writes it) ourselves, off the event loop, and tell the room its file is current, so it
        neither converts and saves the whole document on the loop nor reloads it; False when
        the manager does not store notebooks as bytes on local disk (save hooks, a custom
        manager, a jupytext pair: its own save must run) or the room declines."""
        if not await self.contents.stores_bytes(path):
            return False
        data = now.raw.encode("utf-8", "surrogatepass")
        mirror = self._mirror(live.document)
        return await live.save_as(
            data,
            lambda: self.contents.write_bytes(path, data),
            scheduled,
            lambda: mirror.version == now.version,
        )

    async def _room_repairs(
        self, path: str, document: Any, shown: Mapping[str, Any]
    ) -> tuple[str, ...]:
        """What the room repaired in the file as it loaded it (duplicate or missing ids, code
        cells without outputs), which its save now writes: the warnings the notebook layer
        gives when a write of its own repairs the same (read from the file once per room)."""
        known = self._repaired.get(id(document))
        if known is not None and known[0] is document:
            return known[1]
        try:
            stored = json.loads(await self.contents.read_text(path))
        except (ValueError, OSError):  # not a notebook on disk (yet): nothing was repaired
            stored = {}
        repairs = tuple(repairs_between(stored, shown)) if isinstance(stored, dict) else ()
        self._repaired[id(document)] = (document, repairs)
        while len(self._repaired) > self._cache_size:
            self._repaired.pop(next(iter(self._repaired)))
        return repairs

    # A notebook without a room is stored as the contents filesystem stores it (as bytes on
    # local disk); one with a room (even one still opening) goes through the text methods.

    async def stores_bytes(self, path: str) -> bool:
        if self.rooms.has_room(self.contents.resolve(path)):
            return False
        return await self.contents.stores_bytes(path)

    async def read_bytes(self, path: str) -> bytes:
        if self.rooms.has_room(self.contents.resolve(path)):  # opened since stores_bytes()
            return (await self.read_text(path)).encode("utf-8", "surrogatepass")
        return await self.contents.read_bytes(path)

    async def write_bytes(self, path: str, data: bytes) -> None:
        resolved = self.contents.resolve(path)
        if self.rooms.has_room(resolved):  # opened since the edit's read: run it again, live
            raise LiveDocumentChanged(resolved)
        await self.contents.write_bytes(path, data)

    async def preflight_write(self, path: str) -> None:
        await self.contents.preflight_write(path)

    async def exists(self, path: str) -> bool:
        return await self.contents.exists(path)

    async def canonical_path(self, path: str) -> str:
        return await self.contents.canonical_path(path)

    def _serve(self, path: str, live: LiveRoom) -> _Served:
        mirror = self._mirror(live.document)
        version = mirror.version
        cached = self._served.get(path)
        if cached is not None and cached.document is live.document and cached.version == version:
            self._served.move_to_end(path)
            return cached
        nb = mirror.notebook()
        served = _Served(live.document, version, serialize_notebook(nb, cache=self._json), nb)
        self._served[path] = served
        self._served.move_to_end(path)
        while len(self._served) > self._cache_size:
            self._served.popitem(last=False)
        return served


class LiveWriteGuard:
    """The read-to-write guard of notebooks open in a room (a `notebook.WriteGuard`)."""

    def __init__(self, storage: LiveContentsFilesystem, size: int = 64) -> None:
        self.storage = storage
        self._size = size
        self._last_read: OrderedDict[str, str] = OrderedDict()

    def shown(self, path: str, text: str) -> None:
        self._last_read[path] = text
        self._last_read.move_to_end(path)
        while len(self._last_read) > self._size:
            self._last_read.popitem(last=False)

    async def before_write(self, path: str, read_now: Callable[[], Awaitable[str]]) -> None:
        if await self.storage.find(path) is None:
            return  # no room: the contents manager's path, guarded by the engine's own checks
        await self.storage.preflight_write(path)  # the last await that may yield before the edit
        if await self.storage.find(path) is None:
            raise LiveDocumentChanged(path)
        now = await read_now()
        if self._last_read.get(path, now) != now:
            raise LiveDocumentChanged(path)
