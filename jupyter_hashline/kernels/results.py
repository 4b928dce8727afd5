"""What a run produced, per cell, and the text an agent reads about it.

Invariants:
- One `CellRun` per cell asked, in the order asked: a cell that ran (`ok`, `error`,
  `timeout`), one that did not start because the kernel stayed busy with someone else's work
  (`busy`), or one left out because an earlier cell of the same call did not finish ok
  (`skipped`). Only cells that ran have outputs to write back.
- `outputs` are nbformat v4 output dicts exactly as the kernel sent them (multi-line strings
  joined); the agent's text is rendered from them by the notebook layer's output renderer:
  ANSI escapes stripped, binary payloads as sized placeholders (never base64), each cell's
  text clipped at `max_chars` with a note.
- Values are frozen; the output dicts inside are never modified after collection.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from ..notebook.executed import Executed
from ..notebook.outputs import DEFAULT_MAX_CHARS, render_outputs


class RunStatus(str, Enum):
    """How one cell's run ended."""

    OK = "ok"
    ERROR = "error"
    TIMEOUT = "timeout"
    BUSY = "busy"
    SKIPPED = "skipped"

    @property
    def ran(self) -> bool:
        return self in (RunStatus.OK, RunStatus.ERROR, RunStatus.TIMEOUT)


@dataclass(frozen=True, slots=True)
class CellRun:
    """One cell's run: status, execution count, wall time and outputs (see the module doc).

    `note` explains a status in words (an interrupt, a kernel that died, why it was skipped).
    """

    cell_id: str
    status: RunStatus
    execution_count: int | None = None
    duration_ms: int = 0
    outputs: tuple[Mapping[str, Any], ...] = field(default=(), repr=False)
    note: str = ""

    def headline(self) -> str:
        """`cell load: ok (execution count 3, 120 ms)`, plus the note."""
        if not self.status.ran:
            return f"cell {self.cell_id}: {self.status.value}" + (
                f" ({self.note})" if self.note else ""
            )
        count = (
            f"execution count {self.execution_count}"
            if self.execution_count is not None
            else "no execution count"
        )
        line = f"cell {self.cell_id}: {self.status.value} ({count}, {_duration(self.duration_ms)})"
        return line + (f"; {self.note}" if self.note else "")

    def to_text(self, max_chars: int = DEFAULT_MAX_CHARS) -> str:
        body = render_outputs(self.outputs, max_chars)
        if self.status.ran and not body:
            body = "(no output)"
        return self.headline() + ("\n" + body if body else "")

    def to_json(self, max_chars: int = DEFAULT_MAX_CHARS) -> dict[str, Any]:
        return {
            "cell": self.cell_id,
            "status": self.status.value,
            "execution_count": self.execution_count,
            "duration_ms": self.duration_ms,
            "outputs": render_outputs(self.outputs, max_chars),
            "note": self.note,
        }


def with_note_appended(runs: tuple[CellRun, ...], note: str) -> tuple[CellRun, ...]:
    """`runs` with `note` added to the note of each cell that ran and has one: what became of
    the kernel after a cell that ended it (died, or stuck past its time limit)."""
    return tuple(
        dataclasses.replace(r, note=f"{r.note}; {note}") if r.status.ran and r.note else r
        for r in runs
    )


def _duration(ms: int) -> str:
    return f"{ms} ms" if ms < 1000 else f"{ms / 1000:.1f} s"


@dataclass(frozen=True, slots=True)
class KernelRun:
    """The outcome of one run call on one notebook.

    `kernel` names the kernelspec the cells ran in; `notes` say what happened to the kernel
    (started, restarted); `landed_text` is the notebook's projection after the outputs were
    written (None when nothing was written) and `write_warnings` what that write reported.
    """

    path: str
    kernel: str
    cells: tuple[CellRun, ...]
    notes: tuple[str, ...] = ()
    landed_text: str | None = field(default=None, repr=False)
    write_warnings: tuple[str, ...] = ()

    @property
    def executed(self) -> dict[str, Executed]:
        """The outputs to write back: cells that ran, by id."""
        return {c.cell_id: (list(c.outputs), c.execution_count) for c in self.cells if c.status.ran}

    def to_text(
        self,
        header: str,
        *,
        max_chars: int = DEFAULT_MAX_CHARS,
        plan_notes: Sequence[str] = (),
    ) -> str:
        """The reply an agent reads: new header, each cell with its outputs, then notes."""
        ran = sum(1 for c in self.cells if c.status.ran)
        first = f"{header} ran {ran} of {len(self.cells)} cell{'s' if len(self.cells) != 1 else ''}"
        parts = [f"{first} in kernel {self.kernel}"]
        parts.extend(cell.to_text(max_chars) for cell in self.cells)
        parts.extend(f"note: {n}" for n in (*plan_notes, *self.notes))
        parts.extend(f"warning: {w}" for w in self.write_warnings)
        return "\n".join(parts)

    def to_json(self, *, max_chars: int = DEFAULT_MAX_CHARS) -> dict[str, Any]:
        return {
            "path": self.path,
            "kernel": self.kernel,
            "cells": [cell.to_json(max_chars) for cell in self.cells],
            "notes": list(self.notes),
            "warnings": list(self.write_warnings),
        }
