"""Run one cell in a kernel through a jupyter_client-style async client, within a time limit.

Both runners (a directory's own kernels, a Jupyter server's kernels) execute through here, so
timeouts, interrupts, output collection and dead kernels behave the same everywhere.

Invariants:
- The request is sent with `stop_on_error=False`: a cell that raises never aborts executions
  that others (a person in JupyterLab) queued in the same kernel.
- Only messages whose parent is this request count; other clients' traffic is ignored.
- The time limit counts from when this cell starts in the kernel (its `busy` status or
  `execute_input`), not from when it was sent. On the limit the kernel is interrupted and the
  cell reports `timeout` with what it printed so far; if the kernel does not come back within
  `interrupt_grace_s`, the result says the kernel is stuck (`KernelOutcome.STUCK`). A cell
  that has not started is never interrupted (the kernel would stop someone else's work): if
  it is still queued twice its limit after it was sent, it reports `busy` and is left queued.
- A kernel that dies mid-cell ends the cell as `error` with a note, and `KernelOutcome.DIED`.
- No import of jupyter_client here: the kernel is reached through `ExecutionTarget`.
"""

from __future__ import annotations

import asyncio
import queue
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass
from enum import Enum
from typing import Any, Protocol

from .collect import OutputCollector, OutputEvent
from .results import CellRun, RunStatus
from .selection import CellToRun

POLL_S = 0.25
INTERRUPT_GRACE_S = 5.0
REPLY_WAIT_S = 5.0
DIED_NOTE = "the kernel died while running this cell"
QUEUED_NOTE = (
    "sent when the kernel was idle, but someone else's execution started first and is still "
    "running; this cell is queued behind it and runs when it ends (its outputs are not written)"
)

OutputListener = Callable[[str, tuple[OutputEvent, ...]], None]
"""Called with a cell id and the changes to its outputs, as they arrive."""


class ExecutionTarget(Protocol):
    """A running kernel as the executor needs it."""

    @property
    def client(self) -> Any:
        """A started `jupyter_client.AsyncKernelClient` (or anything with its API)."""
        ...

    async def interrupt(self) -> None:
        """Interrupt whatever the kernel is running."""
        ...

    async def alive(self) -> bool:
        """Whether the kernel process is still there."""
        ...


class KernelOutcome(str, Enum):
    """What the cell left the kernel as."""

    USABLE = "usable"
    STUCK = "stuck"  # did not stop after an interrupt
    DIED = "died"


@dataclass(frozen=True, slots=True)
class Execution:
    """One executed cell and the state it left the kernel in."""

    run: CellRun
    kernel: KernelOutcome


@dataclass
class _Progress:
    """Mutable state of one execution while its messages arrive."""

    sent_at: float
    timeout_s: float
    started_at: float | None = None
    interrupted_at: float | None = None
    finished_at: float | None = None

    def overdue(self, now: float) -> bool:
        """The cell ran past its limit (counted from its own start) and is not yet stopped."""
        started = self.started_at
        return (
            started is not None and self.interrupted_at is None and now >= started + self.timeout_s
        )

    def never_started(self, now: float) -> bool:
        """Still queued behind someone else's work a whole limit after its limit would end."""
        return self.started_at is None and now >= self.sent_at + 2 * self.timeout_s


async def execute_cell(
    target: ExecutionTarget,
    cell: CellToRun,
    *,
    timeout_s: float,
    on_output: OutputListener | None = None,
    interrupt_grace_s: float = INTERRUPT_GRACE_S,
) -> Execution:
    """Run `cell` in `target`'s kernel and collect its outputs (see the module docstring)."""
    msg_id = target.client.execute(
        cell.source, silent=False, store_history=True, allow_stdin=False, stop_on_error=False
    )
    progress = _Progress(sent_at=time.monotonic(), timeout_s=timeout_s)
    collector = OutputCollector()
    outcome = await _follow(
        target, msg_id, cell.cell_id, progress, collector, on_output, interrupt_grace_s
    )
    if outcome is None:
        return Execution(
            CellRun(cell.cell_id, RunStatus.BUSY, note=QUEUED_NOTE), KernelOutcome.USABLE
        )
    if outcome is KernelOutcome.DIED:
        return Execution(_cell_run(cell, RunStatus.ERROR, collector, progress, DIED_NOTE), outcome)
    if outcome is KernelOutcome.STUCK:
        note = f"interrupted after {_secs(timeout_s)} (timeout_s), but the kernel did not stop"
        return Execution(_cell_run(cell, RunStatus.TIMEOUT, collector, progress, note), outcome)
    reply = await _reply(target, msg_id)
    if collector.execution_count is None and isinstance(reply.get("execution_count"), int):
        collector.execution_count = reply["execution_count"]
    if progress.interrupted_at is not None:
        note = f"interrupted after {_secs(timeout_s)} (timeout_s); the kernel is still usable"
        return Execution(_cell_run(cell, RunStatus.TIMEOUT, collector, progress, note), outcome)
    status, note = _verdict(reply, collector)
    return Execution(_cell_run(cell, status, collector, progress, note), outcome)


def _verdict(reply: Mapping[str, Any], collector: OutputCollector) -> tuple[RunStatus, str]:
    """ok or error, from the shell reply (and the outputs, when the reply did not come)."""
    status = reply.get("status")
    if status == "aborted":
        return RunStatus.ERROR, "the kernel aborted this request"
    if status is None and any(o.get("output_type") == "error" for o in collector.outputs):
        return RunStatus.ERROR, ""
    return (RunStatus.ERROR if status == "error" else RunStatus.OK), ""


async def _follow(
    target: ExecutionTarget,
    msg_id: str,
    cell_id: str,
    progress: _Progress,
    collector: OutputCollector,
    on_output: OutputListener | None,
    interrupt_grace_s: float,
) -> KernelOutcome | None:
    """Read IOPub until this request goes idle, the kernel dies, or it will not stop; None
    when the request never started (only the cell's own run is ever interrupted)."""
    while True:
        now = time.monotonic()
        if progress.overdue(now):
            progress.interrupted_at = now
            await target.interrupt()
        if progress.never_started(now):
            return None
        stopping_since = progress.interrupted_at
        if stopping_since is not None and now >= stopping_since + interrupt_grace_s:
            progress.finished_at = now
            return KernelOutcome.STUCK
        try:
            msg = await target.client.get_iopub_msg(timeout=POLL_S)
        except (queue.Empty, asyncio.TimeoutError):
            if not await target.alive():
                progress.finished_at = time.monotonic()
                return KernelOutcome.DIED
            continue
        if msg.get("parent_header", {}).get("msg_id") != msg_id:
            continue
        if _track(msg, progress):
            return KernelOutcome.USABLE
        events = collector.feed(msg)
        if events and on_output is not None:
            on_output(cell_id, events)


def _track(msg: Mapping[str, Any], progress: _Progress) -> bool:
    """Note when the cell started; True when it is finished (idle)."""
    msg_type = msg.get("header", {}).get("msg_type")
    state = msg.get("content", {}).get("execution_state")
    if progress.started_at is None and (
        msg_type == "execute_input" or (msg_type == "status" and state == "busy")
    ):
        progress.started_at = time.monotonic()
    if msg_type == "status" and state == "idle":
        progress.finished_at = time.monotonic()
        return True
    return False


async def _reply(target: ExecutionTarget, msg_id: str) -> Mapping[str, Any]:
    """The shell reply's content ({} if it does not come: the outputs still say what ran)."""
    deadline = time.monotonic() + REPLY_WAIT_S
    while time.monotonic() < deadline:
        try:
            msg = await target.client.get_shell_msg(timeout=POLL_S)
        except (queue.Empty, asyncio.TimeoutError):
            continue
        if msg.get("parent_header", {}).get("msg_id") == msg_id:
            content: Mapping[str, Any] = msg.get("content") or {}
            return content
    return {}


def _cell_run(
    cell: CellToRun,
    status: RunStatus,
    collector: OutputCollector,
    progress: _Progress,
    note: str = "",
) -> CellRun:
    end = progress.finished_at or time.monotonic()
    start = progress.started_at or progress.sent_at
    return CellRun(
        cell_id=cell.cell_id,
        status=status,
        execution_count=collector.execution_count,
        duration_ms=max(0, round((end - start) * 1000)),
        outputs=tuple(collector.outputs),
        note=note,
    )


def _secs(seconds: float) -> str:
    return f"{seconds:g} s"


WaitTurn = Callable[[float], Awaitable[bool]]
"""Wait (at most the given seconds) until the kernel is idle; False if it stayed busy."""


@dataclass(frozen=True, slots=True)
class CellsExecution:
    """The cells of one call, in order, and the state the last one left the kernel in."""

    runs: tuple[CellRun, ...]
    kernel: KernelOutcome


async def execute_cells(
    target: ExecutionTarget,
    cells: Sequence[CellToRun],
    *,
    timeout_s: float,
    on_output: OutputListener | None = None,
    wait_turn: WaitTurn | None = None,
    on_cell_start: Callable[[str], None] | None = None,
    on_cell_end: Callable[[CellRun], None] | None = None,
    interrupt_grace_s: float = INTERRUPT_GRACE_S,
) -> CellsExecution:
    """Run `cells` one after the other; stop at the first that does not finish ok.

    With `wait_turn`, each cell is sent only once the kernel is idle (someone else's work is
    never interrupted); if it stays busy for `timeout_s`, that cell reports `busy`.
    `on_cell_start` is called with a cell's id just before it is sent, `on_cell_end` with its
    run when it ended.
    """
    runs: list[CellRun] = []
    outcome = KernelOutcome.USABLE
    for cell in cells:
        if wait_turn is not None and not await wait_turn(timeout_s):
            note = f"the kernel stayed busy with other work for {_secs(timeout_s)}; not run"
            runs.append(CellRun(cell.cell_id, RunStatus.BUSY, note=note))
            break
        if on_cell_start is not None:
            on_cell_start(cell.cell_id)
        execution = await execute_cell(
            target,
            cell,
            timeout_s=timeout_s,
            on_output=on_output,
            interrupt_grace_s=interrupt_grace_s,
        )
        runs.append(execution.run)
        if on_cell_end is not None:
            on_cell_end(execution.run)
        outcome = execution.kernel
        if outcome is not KernelOutcome.USABLE or execution.run.status is not RunStatus.OK:
            break
    if len(runs) < len(cells):
        stopped = runs[-1].cell_id
        note = f"not run, because cell {stopped} did not finish ok"
        runs.extend(CellRun(c.cell_id, RunStatus.SKIPPED, note=note) for c in cells[len(runs) :])
    return CellsExecution(tuple(runs), outcome)
