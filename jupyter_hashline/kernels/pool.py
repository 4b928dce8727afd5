"""`DirectoryKernelPool`: kernels of its own for the notebooks of a directory.

For the CLI, the MCP server over `--root` and a `Session` without a Jupyter server: one
kernel per notebook, started with jupyter_client on the first run of that notebook, kept for
the pool's life (variables persist between runs, as in JupyterLab), shut down by `close()`.

Invariants:
- The kernel is the notebook's kernelspec (`metadata.kernelspec.name`); a notebook without
  one, or a Python notebook whose kernelspec is not installed here, gets `python3`. Any other
  missing kernelspec is a clear error naming the installed ones. The kernel's working
  directory is the notebook's folder.
- On POSIX the kernel listens on Unix sockets in a private (0700) folder, not on TCP ports.
  Its stdout/stderr go to a log file there; a kernel that fails to start is reported with
  the log's last lines.
- Runs of one notebook are serialized (one kernel runs one cell at a time); runs of
  different notebooks proceed in parallel.
- With `idle_timeout_s`, a kernel that ran nothing for that long is shut down (an MCP server
  keeps kernels alive between calls, not forever); the next run starts a fresh one and says
  why. A run or eval in flight is never cut off by it.
- A kernel found dead before a run: the run is refused (`KernelDiedError`) and the kernel is
  discarded; the next run starts a fresh one and says so. A kernel that dies during a cell,
  or does not stop after an interrupt, is discarded the same way, and the cell says so.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import os
import shutil
import subprocess
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from jupyter_client import AsyncKernelManager
from jupyter_client.kernelspec import KernelSpecManager

from ..notebook import NotebookFilesystem
from .clients import own_client
from .control import KernelAction, KernelState
from .errors import KernelDiedError, KernelUnavailableError
from .execute import KernelOutcome, OutputListener, execute_cells
from .kernelspec import DEFAULT_KERNEL, choose_kernel, notebook_metadata
from .results import KernelRun, with_note_appended
from .runner import DEFAULT_TIMEOUT_S, EVAL_CELL, WriteLock, checked_timeout, write_back
from .selection import CellToRun

STARTUP_TIMEOUT_S = 60.0
SHUTDOWN_TIMEOUT_S = 10.0
_LOG_TAIL_CHARS = 2000
_LOST = {
    KernelOutcome.DIED: "died",
    KernelOutcome.STUCK: "did not stop after an interrupt",
}
_RESTART_NOTES = {
    KernelOutcome.DIED: "it is started again at the next run",
    KernelOutcome.STUCK: "the kernel is shut down and started again at the next run",
}


@dataclass(eq=False)
class _Kernel:
    """One notebook's kernel: manager, client, kernelspec name, and its run lock."""

    manager: Any
    client: Any
    name: str
    log: IO[bytes]
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)

    async def interrupt(self) -> None:
        await self.manager.interrupt_kernel()

    async def alive(self) -> bool:
        return bool(await self.manager.is_alive())


class DirectoryKernelPool:
    """One kernel per notebook under `fs`'s root (see the module docstring)."""

    def __init__(
        self,
        fs: NotebookFilesystem,
        root: str | os.PathLike[str],
        *,
        default_kernel: str = DEFAULT_KERNEL,
        startup_timeout_s: float = STARTUP_TIMEOUT_S,
        kernel_spec_manager: KernelSpecManager | None = None,
        idle_timeout_s: float | None = None,
    ) -> None:
        self.fs = fs
        self.idle_timeout_s = idle_timeout_s
        self._reapers: dict[str, asyncio.Task[None]] = {}
        self.root = Path(root)
        self.default_kernel = default_kernel
        self.startup_timeout_s = startup_timeout_s
        self._specs = kernel_spec_manager or KernelSpecManager()
        self._kernels: dict[str, _Kernel] = {}
        self._starting: dict[str, asyncio.Lock] = {}
        self._lost: dict[str, str] = {}
        self._sockets: str | None = None
        self._closed = False

    def __repr__(self) -> str:
        return f"DirectoryKernelPool({str(self.root)!r}, kernels={len(self._kernels)})"

    async def __aenter__(self) -> DirectoryKernelPool:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    def running(self) -> dict[str, str]:
        """Notebook key -> kernelspec name of every kernel the pool holds now."""
        return {key: kernel.name for key, kernel in self._kernels.items()}

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
        """Run `cells` in the notebook's kernel (started if needed); write their outputs."""
        run = await self._execute(path, cells, checked_timeout(timeout_s), on_output)
        landed, warnings = await write_back(self.fs, path, run.executed, write_lock)
        return dataclasses.replace(run, landed_text=landed, write_warnings=warnings)

    async def evaluate(
        self, path: str, code: str, *, timeout_s: float = DEFAULT_TIMEOUT_S
    ) -> KernelRun:
        """Run `code` in the notebook's kernel as the cell `EVAL_CELL`; nothing is written."""
        cells = [CellToRun(EVAL_CELL, code)]
        return await self._execute(path, cells, checked_timeout(timeout_s), None)

    async def _execute(
        self,
        path: str,
        cells: Sequence[CellToRun],
        timeout_s: float,
        on_output: OutputListener | None,
    ) -> KernelRun:
        if self._closed:
            raise KernelUnavailableError("This kernel pool was closed; nothing ran.")
        key = await self.fs.canonical_path(path)
        kernel, notes = await self._kernel_for(key, path)
        self._stop_reaper(key)
        async with kernel.lock:
            if not await kernel.alive():
                await self._discard(key, "died", kernel)
                raise KernelDiedError(
                    f"The kernel of {path} ({kernel.name}) died since its last run, so nothing "
                    "ran. A new kernel starts at your next run, with none of the variables "
                    "defined so far: run the cells that define them first."
                )
            done = await execute_cells(kernel, cells, timeout_s=timeout_s, on_output=on_output)
        runs = done.runs
        if done.kernel is not KernelOutcome.USABLE:
            await self._discard(key, _LOST[done.kernel], kernel)
            runs = with_note_appended(runs, _RESTART_NOTES[done.kernel])
        self._start_reaper(key)
        return KernelRun(path=path, kernel=kernel.name, cells=runs, notes=notes)

    async def control(self, path: str, action: KernelAction) -> KernelState:
        """Status, interrupt or restart of the notebook's kernel; never starts one for a
        status. A restart replaces the kernel by a fresh one at once."""
        key = await self.fs.canonical_path(path)
        kernel = self._kernels.get(key)
        if kernel is None:
            return KernelState(path, None, None, "none")
        busy = kernel.lock.locked()  # only this pool's runs execute in its kernels
        state = "busy" if busy else ("idle" if await kernel.alive() else "dead")
        language = self._language(kernel.name)
        notes: tuple[str, ...] = ()
        if action is KernelAction.INTERRUPT:
            await kernel.interrupt()
            notes = ("sent an interrupt to the kernel",)
        elif action is KernelAction.RESTART:
            await self._discard(key, "was restarted", kernel)
            await self._kernel_for(key, path)
            self._lost.pop(key, None)
            self._start_reaper(key)
            notes = (f"restarted the {kernel.name} kernel: variables defined before are gone",)
        return KernelState(path, kernel.name, language, state, notes)

    def _language(self, name: str) -> str | None:
        try:
            return str(self._specs.get_kernel_spec(name).language)
        except Exception:  # a kernelspec removed since the kernel started
            return None

    async def close(self) -> None:
        """Shut every kernel down and remove the socket folder."""
        self._closed = True
        for key in list(self._reapers):
            self._stop_reaper(key)
        kernels, self._kernels = list(self._kernels.values()), {}
        await asyncio.gather(*(_shutdown(k) for k in kernels))
        if self._sockets is not None:
            shutil.rmtree(self._sockets, ignore_errors=True)
            self._sockets = None

    # -- kernels -------------------------------------------------------------------------------

    async def _kernel_for(self, key: str, path: str) -> tuple[_Kernel, tuple[str, ...]]:
        starting = self._starting.setdefault(key, asyncio.Lock())
        async with starting:
            kernel = self._kernels.get(key)
            if kernel is not None:
                return kernel, ()
            name = await self._kernel_name(path)
            kernel = await self._start(name, self.root / key, path)
            self._kernels[key] = kernel
        lost = self._lost.pop(key, None)
        if lost is not None:
            return kernel, (
                f"started a new {name} kernel for {path} because the previous one {lost}; "
                "variables defined before are gone",
            )
        return kernel, (f"started a {name} kernel for {path}",)

    async def _kernel_name(self, path: str) -> str:
        metadata = notebook_metadata(await self.fs.inner.read_text(path))
        installed = self._specs.find_kernel_specs()
        return choose_kernel(path, metadata, installed, self.default_kernel)

    async def _start(self, name: str, notebook: Path, path: str) -> _Kernel:
        sockets = self._socket_folder()
        log = tempfile.NamedTemporaryFile(  # noqa: SIM115 (closed with the kernel)
            prefix=f"{name}-", suffix=".log", dir=sockets, delete=False
        )
        options: dict[str, Any] = {"kernel_name": name, "kernel_spec_manager": self._specs}
        if os.name == "posix":
            options.update(transport="ipc", ip=os.path.join(sockets, Path(log.name).stem))
        manager = AsyncKernelManager(**options)
        try:
            await manager.start_kernel(
                cwd=str(notebook.parent), stdout=log, stderr=subprocess.STDOUT
            )
            client = own_client(manager)
            await client.wait_for_ready(timeout=self.startup_timeout_s)
        except Exception as err:
            await _shutdown(_Kernel(manager, None, name, log))
            raise KernelUnavailableError(
                f"The {name} kernel for {path} did not start ({err}). Nothing ran."
                + _log_tail(log.name)
            ) from err
        return _Kernel(manager, client, name, log)

    # -- idle kernels ----------------------------------------------------------------------------

    def _start_reaper(self, key: str) -> None:
        """Shut the notebook's kernel down after `idle_timeout_s` without a run or eval."""
        self._stop_reaper(key)
        kernel = self._kernels.get(key)
        if self.idle_timeout_s is None or kernel is None or self._closed:
            return
        self._reapers[key] = asyncio.ensure_future(self._reap(key, kernel, self.idle_timeout_s))

    def _stop_reaper(self, key: str) -> None:
        reaper = self._reapers.pop(key, None)
        if reaper is not None and reaper is not asyncio.current_task():
            reaper.cancel()

    async def _reap(self, key: str, kernel: _Kernel, after_s: float) -> None:
        await asyncio.sleep(after_s)  # cancelled by every run or eval that starts before
        if kernel.lock.locked():
            return
        self._reapers.pop(key, None)
        await self._discard(key, f"was shut down after {after_s:g} s without a run", kernel)

    def _socket_folder(self) -> str:
        if self._sockets is None:
            self._sockets = tempfile.mkdtemp(prefix="hashline-kernels-")
            os.chmod(self._sockets, 0o700)
        return self._sockets

    async def _discard(self, key: str, why: str, kernel: _Kernel | None = None) -> None:
        """Shut the notebook's kernel down (only `kernel`, when given: a run that ends after a
        restart must not discard the fresh kernel)."""
        current = self._kernels.get(key)
        if current is None or (kernel is not None and current is not kernel):
            return
        del self._kernels[key]
        self._lost[key] = why
        await _shutdown(current)


async def _shutdown(kernel: _Kernel) -> None:
    """Stop the channels and the kernel process; never raises."""
    if kernel.client is not None:
        kernel.client.stop_channels()
    with contextlib.suppress(Exception):
        try:
            await asyncio.wait_for(kernel.manager.shutdown_kernel(), SHUTDOWN_TIMEOUT_S)
        except Exception:
            await kernel.manager.shutdown_kernel(now=True)
    kernel.log.close()


def _log_tail(log_path: str) -> str:
    try:
        text = Path(log_path).read_text("utf-8", errors="replace").strip()
    except OSError:
        return ""
    return f" The kernel's log ends with:\n{text[-_LOG_TAIL_CHARS:]}" if text else ""
