"""Golden files of what agents read: a notebook's read view, a recovery reply, a stale-edit
rejection, an unseen-lines rejection, a run's reply (real kernel; durations masked) and a stale
run's rejection, and the tool catalog (text and JSON schemas).

A change to any of them changes what every agent reads, so it must be a reviewed diff:
regenerate with ``TOOLS_UPDATE_GOLDEN=1 pytest tests/tools/test_golden.py``, then read the diff
by eye before keeping it.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

import nbformat
import pytest
from testkit.cells import PNG_CELL

from jupyter_hashline.hashline.memory_fs import InMemoryFilesystem
from jupyter_hashline.hashline.memory_store import InMemorySnapshotStore
from jupyter_hashline.kernels.pool import DirectoryKernelPool
from jupyter_hashline.notebook import NotebookFilesystem, serialize_notebook
from jupyter_hashline.tools import (
    CATALOG,
    ToolOutcome,
    Workspace,
    mcp_definitions,
    open_directory,
    run_tool,
)

GOLDEN = Path(__file__).parent / "golden"
UPDATE = os.environ.get("TOOLS_UPDATE_GOLDEN") == "1"
NB = "analysis.ipynb"


def check(name: str, text: str) -> None:
    path = GOLDEN / name
    if UPDATE:
        path.write_text(text, encoding="utf-8")
    expected = path.read_text(encoding="utf-8") if path.exists() else None
    assert expected is not None, f"{path} is missing: run with TOOLS_UPDATE_GOLDEN=1"
    assert text.encode() == expected.encode(), f"{name} changed: review, then regenerate"


def notebook(load: str = 'df = pd.read_csv("sales.csv")', intro: str = "# Sales") -> str:
    nb = nbformat.v4.new_notebook()
    cells = [
        nbformat.v4.new_markdown_cell(intro, id="intro"),
        nbformat.v4.new_code_cell(f"import pandas as pd\n{load}", id="load-data"),
        nbformat.v4.new_code_cell('total = df["amount"].sum()\nprint(total)', id="total"),
    ]
    cells[1].outputs = [nbformat.v4.new_output("stream", name="stdout", text="120 rows\n")]
    cells[1].execution_count = 1
    figure = {"image/png": "iVBORw0KGgo=", "text/plain": "<Figure>"}
    cells[2].outputs = [nbformat.v4.new_output("display_data", data=figure)]
    cells[2].execution_count = 2
    nb.cells = cells
    return serialize_notebook(nb)


class Story:
    def __init__(self) -> None:
        self.inner = InMemoryFilesystem({NB: notebook()})
        self.ws = Workspace(NotebookFilesystem(self.inner), InMemorySnapshotStore())

    async def __call__(self, name: str, agent: str = "agent", **arguments: Any) -> ToolOutcome:
        return await run_tool(self.ws, name, arguments, agent=agent)


def header(text: str) -> str:
    return text.split("\n")[0].split(" ")[0]


async def test_read_view_of_a_notebook() -> None:
    story = Story()
    read = await story("notebook_read", path=NB)
    check("read--notebook.txt", read.text + "\n")
    part = await story("notebook_read", path=NB, cells=["total"])
    check("read--notebook-cells.txt", part.text + "\n")


async def test_recovery_reply() -> None:
    story = Story()
    read = await story("notebook_read", path=NB)
    story.inner.set(NB, notebook(intro="# Sales\nQuarterly figures by region."))
    reply = await story(
        "notebook_edit", patch=f"{header(read.text)}\nreplace 8:\n+print(round(total))\n"
    )
    assert not reply.is_error
    check("reply--recovered.txt", reply.text + "\n")


async def test_stale_rejection_reply() -> None:
    story = Story()
    read = await story("notebook_read", path=NB)
    story.inner.set(NB, notebook(load='df = pd.read_csv("sales_2026.csv")'))
    reply = await story("notebook_edit", patch=f"{header(read.text)}\nreplace 5:\n+df = None\n")
    assert reply.is_error and reply.kind == "stale_tag"  # the person edited that very line
    check("reply--stale-rejected.txt", reply.text + "\n")


async def test_unseen_lines_rejection_reply() -> None:
    story = Story()
    read = await story("notebook_read", path=NB, offset=1, limit=3)
    reply = await story("notebook_edit", patch=f"{header(read.text)}\nreplace 6:\n+total = 0\n")
    assert reply.is_error and reply.kind == "unseen_lines"
    check("reply--unseen-rejected.txt", reply.text + "\n")


def run_notebook() -> str:
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    nb.cells = [
        nbformat.v4.new_markdown_cell("# Checks", id="intro"),
        nbformat.v4.new_code_cell("answer = 6 * 7\nprint(answer)", id="calc"),
        nbformat.v4.new_code_cell(PNG_CELL.rstrip("\n"), id="plot"),
    ]
    return serialize_notebook(nb)


def masked_durations(text: str) -> str:
    """Wall times vary from run to run; everything else in a run's reply is fixed."""
    return re.sub(r", \d+(?:\.\d)? m?s\)", ", <duration>)", text)


async def test_run_reply_and_stale_run_rejection(tmp_path: Path) -> None:
    (tmp_path / NB).write_text(run_notebook(), encoding="utf-8")
    ws = open_directory(tmp_path, ":memory:", run_with=DirectoryKernelPool)
    try:
        read = await run_tool(ws, "notebook_read", {"path": NB}, agent="agent")
        tag = read.reply["tag"]
        arguments = {"path": NB, "tag": tag, "cells": ["calc", "plot"]}
        ran = await run_tool(ws, "notebook_run", arguments, agent="agent")
        assert not ran.is_error, ran.text
        check("reply--run.txt", masked_durations(ran.text) + "\n")
        nb = nbformat.reads(run_notebook(), as_version=4)
        nb.cells[1].source = "answer = 6 * 9\nprint(answer)"
        (tmp_path / NB).write_text(serialize_notebook(nb), encoding="utf-8")
        refused = await run_tool(ws, "notebook_run", arguments, agent="agent")
        assert refused.is_error and refused.kind == "stale_cells"
        check("reply--run-stale-rejected.txt", refused.text + "\n")
    finally:
        await ws.aclose()


def test_tool_catalog_text_and_schemas() -> None:
    text = "\n\n".join(f"## {spec.name}: {spec.title}\n\n{spec.description}" for spec in CATALOG)
    check("catalog.txt", text + "\n")
    check("catalog.json", json.dumps(mcp_definitions(), indent=2, ensure_ascii=False) + "\n")


@pytest.mark.skipif(
    UPDATE,
    reason="TOOLS_UPDATE_GOLDEN=1 is rewriting the golden files; "
    "the next normal run checks that set",
)
def test_every_golden_file_is_checked() -> None:
    names = {"read--notebook.txt", "read--notebook-cells.txt", "reply--recovered.txt",
             "reply--stale-rejected.txt", "reply--unseen-rejected.txt", "catalog.txt",
             "catalog.json", "reply--run.txt", "reply--run-stale-rejected.txt"}  # fmt: skip
    assert {p.name for p in GOLDEN.iterdir()} == names
