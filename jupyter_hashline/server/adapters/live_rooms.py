"""Find the open collaborative room of a notebook, and save it, without side effects.

This is the only module that knows jupyter-collaboration's internals (`jupyter_server_ydoc`):
the `YDocExtension` in the server settings, its websocket server's `rooms` keyed
`json:notebook:<file id>`, `room.ready`, and the room's private `_save_to_disc()`.

Invariants:
- Looking a notebook up never creates a room, never registers a path in the file-id
  database (`get_id`, not `index`), and never touches the file.
- A room is used only when it is ready, holds a notebook document, and still has a callable
  save hook; anything else means "no live room": callers use the contents-manager path. A
  missing hook or a changed collaboration API is logged once, as a warning.
- `find` (async) may wait for a room that is still opening (bounded); `lookup` (sync) only
  returns rooms `find` already resolved and that are still open, so callers can check the
  live document and apply an edit without yielding to the event loop in between.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

ROOM_PREFIX = "json:notebook:"
SAVE_HOOK = "_save_to_disc"
LATEST_SAVE = "_saving_document"
"""The room's latest save task: a newer one cancels the one before (see `LiveRoom.save`)."""

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
