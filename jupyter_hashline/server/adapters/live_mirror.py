"""A notebook kept in step with an open room's shared document, cell by cell.

Reading a notebook open in JupyterLab used to convert the whole shared document (every cell,
through jupyter_ydoc's `get()`) and serialize all of it whenever a person had typed anything:
a keystroke in one cell of a 1,000-cell notebook cost the notebook. `LiveMirror` observes the
document (pycrdt deep observers on its cells and its metadata) and converts again only the
cells that changed since the last look; serializing then reuses every unchanged cell's JSON
(the cells it returns are the very objects it returned before).

Invariants:
- `notebook()` equals `document.get(deduplicate=False)` at the moment it is called: a cell is
  converted by jupyter_ydoc itself (`get_cell`, which `get` uses for each cell too).
- A change inside cell i (its source text, a field, its outputs or metadata) makes cell i alone
  be converted again; cells added, deleted or moved, or any change of the notebook's metadata
  or format version (which decides whether cells keep their ids), make every cell be
  converted again.
- Returned cells are never mutated afterwards (callers must not mutate them either): a cell
  that changes is a new dict.
- `version` changes whenever the document does (any transaction that changes it, a pure
  deletion included), and two mirrors never share a version: a value read from one mirror is
  never equal to one read from another, even of the same document. It replaces comparing the
  document's state vector and delete set, which encoded the whole delete set on every look.
- The observers run on the thread that changes the document (the server's event loop), and so
  does `notebook()`; `close()` unsubscribes.
"""

from __future__ import annotations

from itertools import count
from typing import Any

__all__ = ["LiveMirror"]


_MIRRORS = count()


class LiveMirror:
    """The notebook of one shared `YNotebook`, converted cell by cell (see the module doc)."""

    def __init__(self, document: Any) -> None:
        from pycrdt import Map

        self.document = document
        self._cells: list[dict[str, Any]] | None = None  # None: convert the whole document
        self._top: dict[str, Any] = {}
        self._dirty: set[int] = set()
        self._mirror, self._changes = next(_MIRRORS), 0
        ymeta = document.ydoc.get("meta", type=Map)
        self._subscriptions = [
            (document.ycells, document.ycells.observe_deep(self._cells_changed)),
            (ymeta, ymeta.observe_deep(self._meta_changed)),
            (document.ydoc, document.ydoc.observe(self._document_changed)),
        ]

    @property
    def version(self) -> tuple[int, int]:
        """What changes whenever the document does (see the module docstring)."""
        return self._mirror, self._changes

    def _document_changed(self, event: Any) -> None:
        self._changes += 1

    def close(self) -> None:
        for shared, subscription in self._subscriptions:
            shared.unobserve(subscription)
        self._subscriptions = []

    def _cells_changed(self, events: Any) -> None:
        for event in events:
            path = list(event.path)
            if not path or not isinstance(path[0], int):
                self._cells = None  # cells added, deleted or moved
                return
            self._dirty.add(path[0])

    def _meta_changed(self, events: Any) -> None:
        self._cells = None  # the version decides whether cells keep their ids: convert all

    def notebook(self) -> dict[str, Any]:
        """The notebook as it is now (see the module docstring)."""
        document = self.document
        if self._cells is None or len(self._cells) != len(document.ycells):
            nb = full_notebook(document)
            self._cells = list(nb["cells"])
            self._top = {key: value for key, value in nb.items() if key != "cells"}
        else:
            for index in sorted(self._dirty):
                self._cells[index] = document.get_cell(index)
        self._dirty.clear()
        return {"cells": list(self._cells), **self._top}


def full_notebook(document: Any) -> dict[str, Any]:
    """The whole live notebook, one dict per shared cell (no deduplication, no side effects)."""
    try:
        nb = document.get(deduplicate=False)
    except TypeError:  # jupyter_ydoc before 4.x has no `deduplicate`
        nb = document.get()
    return dict(nb)
