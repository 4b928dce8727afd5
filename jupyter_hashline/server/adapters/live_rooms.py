"""Find the open collaborative room of a notebook, and save it, without side effects.

This is the only module that knows jupyter-collaboration's internals (`jupyter_server_ydoc`):
the `YDocExtension` in the server settings, its websocket server's `rooms` keyed
`json:notebook:<file id>`, `room.ready`, the room's private `_save_to_disc()`, its latest
autosave task and update lock, and its file loader's lock, `last_modified` and manager.

Invariants:
- Looking a notebook up never creates a room, never registers a path in the file-id
  database (`get_id`, not `index`), and never touches the file.
- A room is used only when it is ready, holds a notebook document, and still has a callable
  save hook; anything else means "no live room": callers use the contents-manager path. A
  missing hook or a changed collaboration API is logged once, as a warning.
- `find` (async) may wait for a room that is still opening (bounded); `lookup` (sync) only
  returns rooms `find` already resolved and that are still open, so callers can check the
  live document and apply an edit without yielding to the event loop in between.
- `LiveRoom.save_as` writes a document's bytes for the room only as the room itself would:
  under its file loader's lock (so its file watcher never sees the new file before the room
  knows it as its own), and only when the file on disk is the one the room last loaded or
  saved (else nothing is written, and the room's own save handles the change on disk as it
  does). Afterwards the room knows the file as its own (time, hash), the document is marked
  clean only if nothing changed it since, and only the autosave the edit itself scheduled is
  cancelled: a newer change's autosave still runs.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any

from jupyter_core.utils import ensure_async

ROOM_PREFIX = "json:notebook:"
SAVE_HOOK = "_save_to_disc"
LATEST_SAVE = "_saving_document"
"""The room's latest save task: a newer one cancels the one before (see `LiveRoom.save`)."""
FILE_LOADER = "_file"
"""The room's `FileLoader`: its `_lock`, `last_modified`, `path` and `_contents_manager`."""

Settings = Callable[[], Mapping[str, Any]]


@dataclass(frozen=True, slots=True)
class LiveRoom:
    """An open, ready notebook room: its id, the room object and its shared `YNotebook`."""

    room_id: str
    room: Any
    document: Any

    async def save(self, *, attempts: int = 40, pause_s: float = 0.05) -> bool:
        """Save the whole shared document now; False if the room would not save.

        The hook returns None while the room is reloading from disk: retry for a moment. A
        change reaching the room while it saves (a keystroke, JupyterLab marking the document
        dirty) makes the room start a newer save, which cancels the running one, and that one
        then ends quietly, as if done: a save the room cancelled is made again (each time with
        the document as it is then); one that ended before a newer save began counts.
        """
        for _ in range(attempts):
            hook = getattr(self.room, SAVE_HOOK, None)
            if not callable(hook):
                return False
            task = hook()
            if task is None:
                await asyncio.sleep(pause_s)
                continue
            await task
            if not _cancelled(self.room, task):
                return True
        return False

    def pending_save(self) -> Any:
        """The room's latest autosave task (the one a change just made schedules), or None."""
        return getattr(self.room, LATEST_SAVE, None)

    async def save_as(
        self,
        data: bytes,
        write: Callable[[], Awaitable[None]],
        scheduled: Any,
        unchanged: Callable[[], bool],
    ) -> bool:
        """Save the document as `data`, its bytes as the room would write them, by `write`
        (off the event loop), instead of the room converting and saving the whole document
        itself; False, with nothing written, when the room's file bookkeeping is not what
        this knows or the file changed on disk since the room last loaded or saved it (the
        caller then saves the room). `scheduled` is the autosave the edit made schedule
        (`pending_save()` right after it); `unchanged()` says whether the document is still
        as `data` shows it. See the module docstring."""
        loader: Any = getattr(self.room, FILE_LOADER, None)
        lock = getattr(loader, "_lock", None)
        manager = getattr(loader, "_contents_manager", None)
        if not isinstance(lock, asyncio.Lock) or manager is None:
            return False
        async with lock:
            path = loader.path
            known = loader.last_modified
            if known is None or (await _modified(manager, path)) != known:
                return False
            await write()
            loader.last_modified = await _modified(manager, path)
            if scheduled is not None and self.pending_save() is scheduled:
                scheduled.cancel()  # the room's save of this very document: written already
        algorithm = getattr(manager, "hash_algorithm", "sha256")
        digest = await asyncio.to_thread(lambda: hashlib.new(algorithm, data).hexdigest())
        if unchanged():
            updating = getattr(self.room, "_update_lock", None)
            if isinstance(updating, asyncio.Lock) and not updating.locked():
                async with updating:  # the room ignores its own bookkeeping changes under it
                    self.document.dirty = False
                    self.document.hash = digest
        return True


async def _modified(manager: Any, path: str) -> Any:
    """The file's time as the manager reports it (the room compares these to find changes)."""
    model = await ensure_async(manager.get(path, content=False))
    return model["last_modified"]


def _cancelled(room: Any, task: Any) -> bool:
    """Whether the room cancelled its save `task` (a newer save did), which then ended quietly.
    Python 3.11+ counts the cancel requests a task got (none once it is done); before it, a task
    that is no longer the room's latest save may have been cancelled, so it counts as such."""
    cancelling = getattr(task, "cancelling", None)
    if callable(cancelling):
        return bool(cancelling())
    return getattr(room, LATEST_SAVE, task) is not task


class RoomFinder:
    """Resolves API paths of notebooks to their open `LiveRoom`, if any."""

    def __init__(
        self,
        settings: Settings,
        log: logging.Logger | None = None,
        *,
        ready_timeout_s: float = 2.0,
    ) -> None:
        self._settings = settings
        self._log = log or logging.getLogger(__name__)
        self._ready_timeout_s = ready_timeout_s
        self._documents: dict[str, LiveRoom] = {}
        self._warned: set[str] = set()

    def _warn_once(self, key: str, message: str) -> None:
        if key not in self._warned:
            self._warned.add(key)
            self._log.warning("jupyter_hashline: %s", message)

    def _rooms(self) -> tuple[Any, Mapping[str, Any]] | None:
        settings = self._settings()
        extension = settings.get("jupyter_server_ydoc")
        if extension is None:
            return None
        rooms = getattr(getattr(extension, "ywebsocket_server", None), "rooms", None)
        if not isinstance(rooms, Mapping):
            self._warn_once(
                "rooms",
                "jupyter-collaboration is active but its rooms could not be found (its API "
                "changed?); notebooks open in JupyterLab are edited on disk instead.",
            )
            return None
        return extension, rooms

    def _room_id(self, path: str, rooms: Mapping[str, Any]) -> str | None:
        if not any(str(key).startswith(ROOM_PREFIX) for key in rooms):
            return None
        file_ids = self._settings().get("file_id_manager")
        get_id = getattr(file_ids, "get_id", None)
        if not callable(get_id):
            return None
        file_id = get_id(path)
        return f"{ROOM_PREFIX}{file_id}" if file_id else None

    def _usable(self, room: Any) -> bool:
        if not callable(getattr(room, SAVE_HOOK, None)):
            self._warn_once(
                "save",
                f"jupyter-collaboration rooms have no {SAVE_HOOK}() any more; edits to "
                "notebooks open in JupyterLab go through the contents manager instead "
                "(JupyterLab may reload them from disk).",
            )
            return False
        return True

    def lookup(self, path: str) -> LiveRoom | None:
        """The room `find` resolved for `path`, if it is still the open room (no I/O)."""
        found = self._rooms()
        if found is None:
            return None
        _, rooms = found
        room_id = self._room_id(path, rooms)
        cached = self._documents.get(room_id) if room_id else None
        if cached is None or rooms.get(cached.room_id) is not cached.room:
            return None
        return cached if self._usable(cached.room) else None

    def has_room(self, path: str) -> bool:
        """Whether notebook `path` has a room at all, ready or not (no I/O but the file-id
        lookup; never waits): a notebook with one is read and written through `find`."""
        found = self._rooms()
        if found is None:
            return False
        room_id = self._room_id(path, found[1])
        return room_id is not None and room_id in found[1]

    async def find(self, path: str) -> LiveRoom | None:
        """The open, ready room of notebook `path`, or None (then use the contents path)."""
        found = self._rooms()
        if found is None:
            return None
        extension, rooms = found
        room_id = self._room_id(path, rooms)
        room = rooms.get(room_id) if room_id else None
        if room_id is None or room is None or not self._usable(room):
            return None
        cached = self._documents.get(room_id)
        if cached is not None and cached.room is room:
            return cached
        if not await self._wait_ready(room):
            return None
        document = await self._document(extension, room_id, room)
        if document is None:
            return None
        live = LiveRoom(room_id, room, document)
        self._forget_closed(rooms)
        self._documents[room_id] = live
        return live

    async def _wait_ready(self, room: Any) -> bool:
        loop = asyncio.get_running_loop()
        deadline = loop.time() + self._ready_timeout_s
        while not getattr(room, "ready", False):
            if loop.time() >= deadline:
                return False
            await asyncio.sleep(0.05)
        return True

    async def _document(self, extension: Any, room_id: str, room: Any) -> Any:
        get_document = getattr(extension, "get_document", None)
        document = None
        if callable(get_document):
            try:
                document = await get_document(room_id=room_id, copy=False)
            except (TypeError, ValueError) as err:
                self._warn_once("get_document", f"get_document failed ({err})")
        if document is None or not hasattr(document, "ycells"):
            return None
        return document

    def _forget_closed(self, rooms: Mapping[str, Any]) -> None:
        for room_id in [r for r, live in self._documents.items() if rooms.get(r) is not live.room]:
            del self._documents[room_id]
