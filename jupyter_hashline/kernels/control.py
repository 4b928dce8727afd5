"""Asking a notebook's kernel how it is, interrupting it, restarting it: the values.

`KernelAction` is what an agent asks (`status`, `interrupt`, `restart`); `KernelState` what a
runner saw of the notebook's kernel just before acting on it (so a reply can say what was
running when it was interrupted or restarted).

Invariants:
- `status` never starts a kernel: a notebook without one is `KernelState(kernel=None,
  execution_state="none")`. `interrupt` and `restart` of a notebook without a kernel do
  nothing and say so.
- Values only; the runners (pool.py, the server's runner) do the acting.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

__all__ = ["KernelAction", "KernelState"]


class KernelAction(Enum):
    STATUS = "status"
    INTERRUPT = "interrupt"
    RESTART = "restart"


@dataclass(frozen=True, slots=True)
class KernelState:
    """The notebook's kernel as seen before the action: its kernelspec and language (None
    without a kernel), its execution state (`idle`, `busy`, `starting`, `dead`, or `none`
    without a kernel), and notes on what the action did."""

    path: str
    kernel: str | None
    language: str | None
    execution_state: str
    notes: tuple[str, ...] = ()

    @property
    def exists(self) -> bool:
        return self.kernel is not None
