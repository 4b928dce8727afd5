"""`notebook_kernel`: what a notebook's kernel is doing, and interrupting or restarting it
without stopping anyone's work silently.

`Executions` is the workspace's record of the runs and evaluations in flight per notebook
(who, what, since when) and of the last execution count its runs saw; `kernel_reply` turns a
runner's `KernelState` and that record into the agent's text and the REST reply.

Invariants:
- An interrupt or restart reply always says what was running when it acted: an agent's run or
  evaluation (by name, with its cells), an execution not started through jupyter-hashline (a
  person's cell in JupyterLab, another client's; then also that cells the person queued behind
  it are dropped), or nothing.
- `status` never starts a kernel, and an action on a notebook without a kernel does nothing.
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from ..kernels import KernelAction, KernelRun, KernelState

__all__ = ["Execution", "Executions", "kernel_reply"]

FOREIGN = (
    "an execution not started through jupyter-hashline (a person's cell in JupyterLab, or "
    "another client's)"
)

QUEUED = (
    "cells queued behind it in this kernel (a person's next cells) may be dropped too: the "
    "kernel aborts what is queued when the stopped cell ends in an error, or on a restart; tell "
    "the person to check them and run them again"
)


@dataclass(frozen=True, slots=True)
class Execution:
    """One run or evaluation in flight: who sent it, what it runs, when it started."""

    agent: str
    what: str
    started: float

    def describe(self, now: float) -> str:
        return f"{self.agent}'s {self.what} (running for {now - self.started:.1f} s)"


class Executions:
    """The runs and evaluations in flight, per notebook key, and the last execution counts."""

    def __init__(self) -> None:
        self._running: dict[str, list[Execution]] = {}
        self._counts: dict[str, int] = {}

    @contextmanager
    def running(self, key: str, agent: str, what: str) -> Iterator[None]:
        entry = Execution(agent, what, time.monotonic())
        self._running.setdefault(key, []).append(entry)
        try:
            yield
        finally:
            entries = self._running.get(key, [])
            if entry in entries:
                entries.remove(entry)
            if not entries:
                self._running.pop(key, None)

    def first(self, key: str) -> Execution | None:
        entries = self._running.get(key)
        return entries[0] if entries else None

    def saw(self, key: str, run: KernelRun) -> None:
        counts = [c.execution_count for c in run.cells if c.execution_count is not None]
        if counts:
            self._counts[key] = counts[-1]

    def count(self, key: str) -> int | None:
        return self._counts.get(key)

    def forget_count(self, key: str) -> None:
        self._counts.pop(key, None)


def kernel_reply(
    state: KernelState, action: KernelAction, ours: Execution | None, count: int | None
) -> tuple[str, Mapping[str, Any]]:
    """The agent's text and the REST reply for `action` on the kernel seen as `state`."""
    now = time.monotonic()
    running = _running(state, ours, now)
    text = _text(state, action, running, count)
    reply = {
        "path": state.path,
        "action": action.value,
        "kernel": state.kernel,
        "language": state.language,
        "state": state.execution_state,
        "running": running,
        "busy_for_s": round(now - ours.started, 1) if ours is not None else None,
        "execution_count": count,
        "notes": list(state.notes),
        "text": text,
    }
    return text, reply


def _running(state: KernelState, ours: Execution | None, now: float) -> str | None:
    if ours is not None:
        return ours.describe(now)
    if state.execution_state == "busy":
        return FOREIGN
    return None


def _text(state: KernelState, action: KernelAction, running: str | None, count: int | None) -> str:
    if not state.exists:
        done = "" if action is KernelAction.STATUS else f"; nothing to {action.value}"
        return (
            f"{state.path}: no kernel is running for this notebook{done} (one starts at the "
            "first run or eval)"
        )
    kernel = f"kernel {state.kernel}" + (f" ({state.language})" if state.language else "")
    seen = f"; last execution count seen {count}" if count is not None else ""
    if action is KernelAction.STATUS:
        doing = f"busy with {running}" if running else state.execution_state
        return f"{state.path}: {kernel} is {doing}{seen}"
    verb = "interrupted" if action is KernelAction.INTERRUPT else "restarted"
    if running is None:
        stopped = "it was idle: nothing was running, nothing was stopped"
    else:
        stopped = f"this stopped {running}"
    lines = [f"{state.path}: {verb} the {kernel}; {stopped}"]
    if running == FOREIGN:
        lines.append(f"note: {QUEUED}")
    lines.extend(f"note: {note}" for note in state.notes)
    return "\n".join(lines)
