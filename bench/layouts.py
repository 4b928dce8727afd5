"""One notebook written the ways real tools write notebooks: the layout-varied set.

`LAYOUTS` maps a name to a writer: nbformat's own layout (Jupyter), Colab's (indent 2, its key
order, no final newline), indent 4, unsorted keys, sources as one string, CRLF line ends,
minified, no final newline, non-ASCII escaped, and a mixed file (one cell hand-written in
another layout) that no single layout reproduces. Each writer takes the notebook as nbformat
stores it (`disk_form`) and returns the file's bytes. Used by the diff-size benchmark
(bench/diffs.py) and by the layout tests.
"""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from typing import Any

import nbformat

Disk = dict[str, Any]
Writer = Callable[[Disk], bytes]

MIXED = "mixed (one cell hand-written)"
"""The one layout expected to fall back to nbformat's."""


def disk_form(nb: Any) -> Disk:
    """The notebook as nbformat writes it (sources and text outputs as lists of lines)."""
    return json.loads(nbformat.writes(nb))


def _nbformat(disk: Disk) -> str:
    return json.dumps(disk, indent=1, sort_keys=True, ensure_ascii=False) + "\n"


def _colab(disk: Disk) -> bytes:
    order = ("cell_type", "source", "metadata", "execution_count", "outputs")
    cells = []
    for cell in disk["cells"]:
        moved = {**cell, "metadata": {"id": cell.get("id", ""), **cell["metadata"]}}
        cells.append({key: moved[key] for key in order if key in moved})
    top = {
        "nbformat": disk["nbformat"],
        "nbformat_minor": 0,  # Colab's: ids live in the cell metadata
        "metadata": disk["metadata"],
        "cells": cells,
    }
    return json.dumps(top, indent=2, ensure_ascii=False).encode()


def _unsorted(value: Any) -> Any:
    if isinstance(value, dict):
        return {key: _unsorted(value[key]) for key in reversed(list(value))}
    if isinstance(value, list):
        return [_unsorted(item) for item in value]
    return value


def _string_sources(disk: Disk) -> bytes:
    joined = copy.deepcopy(disk)
    for cell in joined["cells"]:
        cell["source"] = "".join(cell["source"])
    return _nbformat(joined).encode()


def _mixed(disk: Disk) -> bytes:
    text = _nbformat(disk)
    cells = disk["cells"]
    if not cells:
        return text.encode()
    first = json.dumps(cells[0], indent=1, sort_keys=True, ensure_ascii=False)
    hand = json.dumps(cells[0], sort_keys=True, ensure_ascii=False)  # one line, in place
    indented = first.replace("\n", "\n  ")
    return text.replace(indented, hand, 1).encode()


LAYOUTS: dict[str, Writer] = {
    "nbformat": lambda d: _nbformat(d).encode(),
    "colab (indent 2)": _colab,
    "indent 4": lambda d: (
        json.dumps(d, indent=4, sort_keys=True, ensure_ascii=False) + "\n"
    ).encode(),
    "unsorted keys": lambda d: (
        json.dumps(_unsorted(d), indent=1, ensure_ascii=False) + "\n"
    ).encode(),
    "string sources": _string_sources,
    "CRLF": lambda d: _nbformat(d).replace("\n", "\r\n").encode(),
    "minified": lambda d: json.dumps(d, separators=(",", ":"), ensure_ascii=False).encode(),
    "no final newline": lambda d: _nbformat(d)[:-1].encode(),
    "non-ASCII escaped": lambda d: (json.dumps(d, indent=1, sort_keys=True) + "\n").encode(),
    MIXED: _mixed,
}


def sample_notebook() -> Any:
    """A small notebook with what layouts disagree on: several cells, multi-line sources,
    stream and rich outputs, non-ASCII text, metadata."""
    v4 = nbformat.v4
    cells = [
        v4.new_markdown_cell("# Prices\n\nDaily prices — in €, from the exchange.", id="intro"),
        v4.new_code_cell(
            "import math\nvalues = [1, 2, 3]\nprint(sum(values))",
            id="load",
            execution_count=1,
            outputs=[v4.new_output("stream", name="stdout", text="6\n")],
        ),
        v4.new_code_cell(
            "total = sum(values)\nmean = total / len(values)\nmean",
            id="stats",
            execution_count=2,
            metadata={"tags": ["summary"]},
            outputs=[v4.new_output("execute_result", {"text/plain": "2.0"}, execution_count=2)],
        ),
        v4.new_markdown_cell("## Notes\n\n* one\n* two ✓\n", id="notes"),
        v4.new_code_cell("def area(r):\n    return math.pi * r ** 2\n\narea(2)", id="area"),
    ]
    return v4.new_notebook(
        cells=cells,
        metadata={
            "kernelspec": {"name": "python3", "display_name": "Python 3", "language": "python"}
        },
    )
