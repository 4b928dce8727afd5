"""`ServerKernelRunner`: agents' cells run in the notebook's own kernel of a Jupyter server.

The kernel is the one of the notebook's session, the session JupyterLab uses (found by the
notebook's path in the server's session manager). With no session, one is created with the
notebook's kernelspec, so a person who opens the notebook afterwards joins that kernel.

Invariants:
- A person's execution is never interrupted for the agent: a cell is sent only when the
  kernel is idle; its time limit counts from when it starts; if the kernel stays busy for
  `timeout_s` first, the cell reports `busy` and is not sent. Only the agent's own cell is
  ever interrupted (at its time limit).
- With the notebook open in a collaboration room, outputs and execution counts go into the
  shared document as they arrive (the person sees them live) and the room is saved right
  after the run; otherwise they are written through the notebook filesystem in one write.
  A room that opens while cells run gets the outputs when they end (never a disk write
  behind an open room).
- The server's kernels are not the runner's: `close()` only disconnects its clients.
- A kernel that dies mid-cell ends the cell as `error`; the server's restarter restarts it,
  and the next run says the variables are gone. A kernel found dead and not restarted is a
  `KernelDiedError`; the next run restarts it.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import posixpath
import queue
import re
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from jupyter_core.utils import ensure_async

from ...kernels import (
    DEFAULT_TIMEOUT_S,
    EVAL_CELL,
    CellToRun,
    KernelAction,
    KernelDiedError,
    KernelOutcome,
    KernelRun,
    KernelState,
    OutputEvent,
    OutputListener,
    WriteLock,
    checked_timeout,
    choose_kernel,
    execute_cells,
    notebook_metadata,
    own_client,
    with_note_appended,
    write_back,
)
from ...notebook import Executed, NotebookFilesystem
from .contents_fs import ContentsFilesystem
from .live_rooms import RoomFinder
from .run_live import LiveOutputs

BUSY_POLL_S = 0.05
PROBE_EVERY_S = 1.0
PROBE_WAIT_S = 0.5
_DRIVE = re.compile(r"^[A-Za-z][\w-]*:")
_AFTERMATH = {
    KernelOutcome.DIED: "the kernel is restarted (by the server, or at your next run): variables "
    "defined before are gone",
    KernelOutcome.STUCK: "your code may still be running in the notebook's kernel: ask the "
    "person to interrupt or restart it",
}
NOT_SAVED = (
    "the outputs are in the notebook open in JupyterLab, but the room did not save them to "
    "disk yet (JupyterLab will save them)"
)


@dataclass(eq=False)
class _ServerKernel:
    """The runner's connection to one server kernel.

    The client connects on the kernel's first idle moment (its readiness handshake would
    otherwise queue behind a person's running cell), inside `wait_turn`.
    """

    kernel_id: str
    manager: Any
    name: str
    client: Any = None
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    restarted: bool = False
    dead_reported: bool = False

    def on_restart(self) -> None:
        self.restarted = True

    async def interrupt(self) -> None:
        await ensure_async(self.manager.interrupt_kernel())

    async def alive(self) -> bool:
        return not self.restarted and bool(await ensure_async(self.manager.is_alive()))

    async def wait_turn(self, timeout_s: float) -> bool:
        """Wait until no one's execution runs in the kernel (connecting on the way there);
        False when that takes longer than `timeout_s`.

        The server knows a kernel's state from its status messages: `busy` while anyone's
        execution runs. A kernel no one has talked to yet is still `starting`: the client's
        readiness handshake settles it (it is answered only between executions).
        """
        deadline = time.monotonic() + timeout_s
        next_probe = time.monotonic() + PROBE_EVERY_S
        while True:
            state = getattr(self.manager, "execution_state", "idle")
            if state == "dead":
                raise self._dead()
            if state in ("idle", "starting"):
                if self.client is not None:
                    return True
                if not await self._connect(max(deadline - time.monotonic(), BUSY_POLL_S)):
                    return False
                continue
            now = time.monotonic()
            if now >= next_probe:
                next_probe = now + PROBE_EVERY_S
                if await self._answers_at_once():
                    return True
            if now >= deadline:
                return False
            await asyncio.sleep(BUSY_POLL_S)

    async def _answers_at_once(self) -> bool:
        """Whether the kernel is between executions although the server says `busy`.

        The server's state can lag behind the kernel (after a restart it may keep saying
        `busy` until the next status message). A kernel answers `kernel_info` on its shell
        channel only between executions, so a prompt answer means no one's cell is running;
        while one runs, the request just waits in the queue and is answered afterwards.
        """
        if self.client is None:
            return await self._connect(PROBE_WAIT_S)
        msg_id = self.client.kernel_info()
        deadline = time.monotonic() + PROBE_WAIT_S
        while (left := deadline - time.monotonic()) > 0:
            try:
                reply = await self.client.get_shell_msg(timeout=left)
            except (queue.Empty, asyncio.TimeoutError):
                return False
            if reply.get("parent_header", {}).get("msg_id") == msg_id:
                return True
        return False

    async def _connect(self, timeout_s: float) -> bool:
        client = own_client(self.manager)
        try:
            await client.wait_for_ready(timeout=timeout_s)
        except Exception:
            client.stop_channels()
            if not await ensure_async(self.manager.is_alive()):
                raise self._dead() from None
            return False  # someone's execution started in between: the kernel is busy
        self.client = client
        return True

    def _dead(self) -> KernelDiedError:
        return KernelDiedError(
            f"The notebook's kernel ({self.name}) is dead, so nothing ran. Restart it in "
            "JupyterLab (Kernel > Restart Kernel) and run again."
        )

    def drop_client(self) -> None:
        """Forget the connection: after a restart the old client's IOPub subscription may
        miss the new process's messages, so the next turn connects (and handshakes) afresh."""
        if self.client is not None:
            self.client.stop_channels()
            self.client = None

    def disconnect(self) -> None:
        self.drop_client()
        self.manager.remove_restart_callback(self.on_restart, "restart")


class ServerKernelRunner:
    """Runs cells in notebooks' own server kernels (see the module docstring)."""

    def __init__(
        self,
        *,
        kernel_manager: Any,
        session_manager: Any,
        kernel_spec_manager: Any,
        contents: ContentsFilesystem,
        notebooks: NotebookFilesystem,
        rooms: RoomFinder | None = None,
    ) -> None:
        self.kernel_manager = kernel_manager
        self.session_manager = session_manager
        self.kernel_spec_manager = kernel_spec_manager
        self.contents = contents
        self.notebooks = notebooks
        self.rooms = rooms
        self._kernels: dict[str, _ServerKernel] = {}
        self._connecting = asyncio.Lock()

    @classmethod
    def from_serverapp(
        cls,
        serverapp: Any,
        *,
        contents: ContentsFilesystem,
        notebooks: NotebookFilesystem,
        rooms: RoomFinder | None = None,
    ) -> ServerKernelRunner:
        return cls(
            kernel_manager=serverapp.kernel_manager,
            session_manager=serverapp.session_manager,
            kernel_spec_manager=serverapp.kernel_spec_manager,
            contents=contents,
            notebooks=notebooks,
            rooms=rooms,
        )

    # -- the CellRunner protocol ---------------------------------------------------------------

    async def run(
        self,
        path: str,
        cells: Sequence[CellToRun],
        *,
        timeout_s: float = DEFAULT_TIMEOUT_S,
        on_output: OutputListener | None = None,
        write_lock: WriteLock | None = None,
    ) -> KernelRun:
        """Run `cells` in the notebook's kernel; outputs live in its room, or written."""
        timeout_s = checked_timeout(timeout_s)
        api = self.contents.resolve(path)
        kernel, notes = await self._kernel_for(api)
        async with kernel.lock:
            notes += await self._check_alive(kernel, api)
            live = await self._live(api)
            done = await execute_cells(
                kernel,
                cells,
                timeout_s=timeout_s,
                on_output=_both(on_output, live.changed if live else None),
                wait_turn=kernel.wait_turn,
                on_cell_start=live.started if live else None,
                on_cell_end=live.finished if live else None,
            )
        runs = done.runs
        if done.kernel is not KernelOutcome.USABLE:
            kernel.dead_reported = done.kernel is KernelOutcome.DIED
            runs = with_note_appended(runs, _AFTERMATH[done.kernel])
        run = KernelRun(path=api, kernel=kernel.name, cells=runs, notes=notes)
        landed, warnings = await self._write(api, live, run.executed, write_lock)
        return dataclasses.replace(run, landed_text=landed, write_warnings=warnings)

    async def evaluate(
        self, path: str, code: str, *, timeout_s: float = DEFAULT_TIMEOUT_S
    ) -> KernelRun:
        """Run `code` in the notebook's kernel once it is idle (a person's running cell is
        never interrupted); nothing is written, no cell of the open document changes."""
        timeout_s = checked_timeout(timeout_s)
        api = self.contents.resolve(path)
        kernel, notes = await self._kernel_for(api)
        async with kernel.lock:
            notes += await self._check_alive(kernel, api)
            done = await execute_cells(
                kernel,
                [CellToRun(EVAL_CELL, code)],
                timeout_s=timeout_s,
                wait_turn=kernel.wait_turn,
            )
        runs = done.runs
        if done.kernel is not KernelOutcome.USABLE:
            kernel.dead_reported = done.kernel is KernelOutcome.DIED
            runs = with_note_appended(runs, _AFTERMATH[done.kernel])
        return KernelRun(path=api, kernel=kernel.name, cells=runs, notes=notes)

    async def control(self, path: str, action: KernelAction) -> KernelState:
        """Status, interrupt or restart of the notebook's session kernel, through the server's
        kernel manager (as JupyterLab's buttons do); never starts a kernel."""
        api = self.contents.resolve(path)
        kernel_id = await self._existing_kernel(api)
        if kernel_id is None:
            return KernelState(api, None, None, "none")
        manager = self._manager(kernel_id)
        name = str(manager.kernel_name)
        state = str(getattr(manager, "execution_state", "idle"))
        notes: tuple[str, ...] = ()
        if action is KernelAction.INTERRUPT:
            await ensure_async(self.kernel_manager.interrupt_kernel(kernel_id))
            notes = ("sent an interrupt to the kernel",)
        elif action is KernelAction.RESTART:
            await ensure_async(self.kernel_manager.restart_kernel(kernel_id))
            known = self._kernels.get(kernel_id)
            if known is not None:  # its connection was to the old process: connect afresh
                known.drop_client()
            notes = (f"restarted the {name} kernel: variables defined before are gone",)
        return KernelState(api, name, self._language(name), state, notes)

    def _language(self, name: str) -> str | None:
        try:
            return str(self.kernel_spec_manager.get_kernel_spec(name).language)
        except Exception:  # a kernelspec removed since the kernel started
            return None

    async def close(self) -> None:
        """Disconnect from the kernels (they belong to the server and keep running)."""
        kernels, self._kernels = list(self._kernels.values()), {}
        for kernel in kernels:
            kernel.disconnect()

    # -- kernels and sessions ------------------------------------------------------------------

    async def _kernel_for(self, api: str) -> tuple[_ServerKernel, tuple[str, ...]]:
        async with self._connecting:
            kernel_id, notes = await self._session_kernel(api)
            kernel = self._kernels.get(kernel_id)
            if kernel is None or kernel.manager is not self._manager(kernel_id):
                if kernel is not None:
                    kernel.disconnect()
                kernel = self._attach(kernel_id)
                self._kernels[kernel_id] = kernel
            return kernel, notes

    async def _existing_kernel(self, api: str) -> str | None:
        """The kernel id of the notebook's session, if it has one."""
        sessions = await ensure_async(self.session_manager.list_sessions())
        for drive_prefix_allowed in (False, True):
            for session in sessions:
                kernel_id = (session.get("kernel") or {}).get("id")
                if kernel_id not in self.kernel_manager:
                    continue
                if _session_path(session, drive_prefix_allowed) == api:
                    return str(kernel_id)
        return None

    async def _session_kernel(self, api: str) -> tuple[str, tuple[str, ...]]:
        """The kernel id of the notebook's session, creating the session when there is none."""
        existing = await self._existing_kernel(api)
        if existing is not None:
            return existing, ()
        name = await self._kernel_name(api)
        model = await ensure_async(
            self.session_manager.create_session(
                path=api, name=posixpath.basename(api), type="notebook", kernel_name=name
            )
        )
        return str(model["kernel"]["id"]), (f"started a {name} kernel session for {api}",)

    async def _kernel_name(self, api: str) -> str:
        metadata = notebook_metadata(await self.contents.read_text(api))
        installed = await ensure_async(self.kernel_spec_manager.find_kernel_specs())
        return choose_kernel(api, metadata, installed, str(self.kernel_manager.default_kernel_name))

    def _manager(self, kernel_id: str) -> Any:
        return self.kernel_manager.get_kernel(kernel_id)

    def _attach(self, kernel_id: str) -> _ServerKernel:
        manager = self._manager(kernel_id)
        kernel = _ServerKernel(kernel_id, manager, str(manager.kernel_name))
        manager.add_restart_callback(kernel.on_restart, "restart")
        return kernel

    async def _check_alive(self, kernel: _ServerKernel, api: str) -> tuple[str, ...]:
        """Refuse on a dead kernel (restarting it on the next run); note a restarted one."""
        notes: tuple[str, ...] = ()
        if kernel.restarted:
            kernel.restarted = False
            kernel.drop_client()
            notes = (f"the kernel of {api} was restarted since the last run: variables are gone",)
        if await kernel.alive():
            kernel.dead_reported = False
            return notes
        if not kernel.dead_reported:
            kernel.dead_reported = True
            raise KernelDiedError(
                f"The kernel of {api} ({kernel.name}) is dead, so nothing ran. It is restarted "
                "at your next run, with none of the variables defined so far."
            )
        kernel.dead_reported = False
        await ensure_async(self.kernel_manager.restart_kernel(kernel.kernel_id))
        kernel.restarted = False
        kernel.drop_client()
        return (*notes, f"restarted the dead kernel of {api}: variables defined before are gone")

    # -- outputs -------------------------------------------------------------------------------

    async def _live(self, api: str) -> LiveOutputs | None:
        room = await self.rooms.find(api) if self.rooms is not None else None
        return LiveOutputs(room.document) if room is not None else None

    async def _write(
        self,
        api: str,
        live: LiveOutputs | None,
        executed: dict[str, Executed],
        write_lock: WriteLock | None,
    ) -> tuple[str | None, tuple[str, ...]]:
        if not executed:
            return None, ()
        room = await self.rooms.find(api) if self.rooms is not None else None
        if room is None:
            return await write_back(self.notebooks, api, executed, write_lock)
        if live is None or live.document is not room.document:
            LiveOutputs(room.document).write_all(executed)
        lock = write_lock() if write_lock is not None else contextlib.nullcontext()
        async with lock:
            saved = await room.save()
            raw = await self.contents.read_text(api)
        return self.notebooks.view_of(api, raw), (() if saved else (NOT_SAVED,))


def _session_path(session: Mapping[str, Any], drive_prefix_allowed: bool) -> str:
    """A session's notebook path; with `drive_prefix_allowed`, without a `Drive:` prefix (the
    collaboration drive names paths `RTC:<path>`)."""
    path = str(session.get("path") or "")
    return _DRIVE.sub("", path, count=1) if drive_prefix_allowed else path


def _both(first: OutputListener | None, second: OutputListener | None) -> OutputListener | None:
    listeners = [x for x in (first, second) if x is not None]
    if len(listeners) < 2:
        return listeners[0] if listeners else None

    def call(cell_id: str, events: tuple[OutputEvent, ...]) -> None:
        for listener in listeners:
            listener(cell_id, events)

    return call
