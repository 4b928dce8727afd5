"""A notebook's file text as a Jupyter contents manager wants it.

Storage adapters (the server's contents manager) hand notebooks over as file text or as a
contents model; this module keeps those conversions in the notebook layer:
- `parse_notebook_text` gives the JSON object of the text only if it is a notebook (a `cells`
  list), else `InvalidNotebookError` naming the path: a broken notebook is never saved.
- `contents_model` gives the model `nbformat.reads` would (line lists joined, transient keys
  dropped), the form save hooks such as jupytext's expect.
- `is_paired` says whether the text pairs the notebook with other files (jupytext formats).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .errors import InvalidNotebookError
from .loading import parse_json, paused_gc, rejoin_lines


def parse_notebook_text(path: str, content: str) -> dict[str, Any]:
    """The JSON object of a notebook file's text, or `InvalidNotebookError` saying why not."""
    try:
        with paused_gc():
            notebook = parse_json(content)
    except ValueError as err:
        raise InvalidNotebookError(f"{path}: the notebook text is not JSON ({err}).") from err
    if not isinstance(notebook, dict) or not isinstance(notebook.get("cells"), list):
        raise InvalidNotebookError(f"{path}: the text is not a notebook (no `cells` list).")
    return notebook


def contents_model(path: str, content: str) -> dict[str, Any]:
    """The contents manager's notebook model of a notebook's text (checked as a notebook)."""
    notebook = parse_notebook_text(path, content)
    with paused_gc():
        return {"type": "notebook", "format": "json", "content": rejoin_lines(notebook)}


def is_paired(text: str) -> bool:
    """Whether a notebook's text pairs it with other files (`jupytext.formats` in its
    metadata). Looks for the key's name before parsing anything."""
    if '"formats"' not in text:
        return False
    try:
        metadata = parse_json(text).get("metadata", {})
    except (ValueError, AttributeError):
        return False
    jupytext = metadata.get("jupytext") if isinstance(metadata, Mapping) else None
    return isinstance(jupytext, Mapping) and bool(jupytext.get("formats"))
