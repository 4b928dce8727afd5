"""Outputs of an agent's run, mirrored into a notebook's open collaborative document.

While a cell runs, `LiveOutputs` clears the cell's outputs, marks it running, and applies
each output change (`OutputEvent`) to the shared document as it arrives, so a person who has
the notebook open in JupyterLab sees the output appear; when the cell ends it sets the
execution count and marks it idle. The caller saves the room afterwards.

Invariants:
- Every change is its own small pycrdt transaction with the hashline origin; only the run
  cell's `outputs`, `execution_count` and `execution_state` are touched, never its source,
  so a person typing in that cell (or any other) loses nothing.
- Outputs are stored as jupyter_ydoc stores them: one map per output, a stream's text as a
  shared text that grows by appending (no offsets are computed, so multi-byte text is safe).
- Cells are found by the ids the projection shows (`display_ids` of the live notebook), so
  notebooks without stored ids are addressed by position as the projection shows them. A
  cell that is gone (a person deleted it) is skipped: its outputs go nowhere.
"""

from __future__ import annotations

import copy
from collections.abc import Mapping, Sequence
from typing import Any

from ...kernels import CellRun, OutputEvent
from ...notebook import Executed, display_ids
from .live_apply import ORIGIN
from .live_mirror import full_notebook as live_notebook


class LiveOutputs:
    """Writes one run's outputs into a live `YNotebook` (see the module docstring)."""

    def __init__(self, document: Any, origin: str = ORIGIN) -> None:
        self.document = document
        self.origin = origin
        self._cells: dict[str, Any] = {}

    def _find(self, cell_id: str) -> Any:
        """The shared map of cell `cell_id` now, or None when it is not a code cell here."""
        cells = live_notebook(self.document).get("cells", [])
        ids = display_ids(cells).ids
        if cell_id not in ids:
            return None
        index = ids.index(cell_id)
        ycell = self.document.ycells[index]
        return ycell if ycell.get("cell_type") == "code" else None

    def started(self, cell_id: str) -> None:
        """The cell is about to run: clear its outputs and count, mark it running."""
        ycell = self._find(cell_id)
        if ycell is None:
            return
        self._cells[cell_id] = ycell
        with self.document.ydoc.transaction(origin=self.origin):
            _outputs(ycell).clear()
            ycell["execution_count"] = None
            ycell["execution_state"] = "running"

    def changed(self, cell_id: str, events: Sequence[OutputEvent]) -> None:
        """Apply output changes of a running cell."""
        ycell = self._cells.get(cell_id)
        if ycell is None:
            return
        outputs = _outputs(ycell)
        with self.document.ydoc.transaction(origin=self.origin):
            for event in events:
                _apply(outputs, event)

    def finished(self, run: CellRun) -> None:
        """The cell ended: set its execution count, mark it idle."""
        ycell = self._cells.pop(run.cell_id, None)
        if ycell is None:
            return
        with self.document.ydoc.transaction(origin=self.origin):
            ycell["execution_count"] = run.execution_count
            ycell["execution_state"] = "idle"

    def write_all(self, executed: Mapping[str, Executed]) -> None:
        """Set finished cells' outputs at once (a room that opened while the cells ran)."""
        for cell_id, (outputs, count) in executed.items():
            ycell = self._find(cell_id)
            if ycell is None:
                continue
            with self.document.ydoc.transaction(origin=self.origin):
                youtputs = _outputs(ycell)
                youtputs.clear()
                for output in outputs:
                    youtputs.append(_youtput(output))
                ycell["execution_count"] = count


def _outputs(ycell: Any) -> Any:
    from pycrdt import Array

    outputs = ycell.get("outputs")
    if not isinstance(outputs, Array):
        outputs = Array()
        ycell["outputs"] = outputs
    return outputs


def _youtput(output: Mapping[str, Any]) -> Any:
    """One output as jupyter_ydoc stores it (a map; a stream's text as shared text)."""
    from pycrdt import Map, Text

    value = copy.deepcopy(dict(output))
    if value.get("output_type") == "stream":
        value["text"] = Text(str(value.get("text", "")))
    return Map(value)


def _apply(outputs: Any, event: OutputEvent) -> None:
    if event.kind == "clear":
        outputs.clear()
    elif event.kind == "append" and event.output is not None:
        outputs.append(_youtput(event.output))
    elif event.kind == "replace" and event.output is not None and event.index < len(outputs):
        outputs[event.index] = _youtput(event.output)
    elif event.kind == "extend" and event.index < len(outputs):
        text = outputs[event.index].get("text")
        if hasattr(text, "insert"):
            text += event.text
        else:
            outputs[event.index]["text"] = str(text or "") + event.text
