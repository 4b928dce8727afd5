"""One agent story, run on every surface (MCP stdio on a directory or a server, Jupyter AI's
registration, the CLI across processes): read, edit, a person edits another cell (the stale
edit is rebased), re-read, a person edits the very line the agent is about to change (the
edit is rejected and nothing is written), re-read, edit again.

`run_edit_scenario(call, root)` drives it through `call(tool, arguments) -> (is_error, text)`;
the person's edits go straight to the file on disk, as a person saving in JupyterLab would.

A second story runs cells (`run_run_scenario`, on checks.ipynb from `write_checks`): a cell
computing 6 * 7 runs and its output lands in the file, a cell that raises is a result whose
text says `error`, a markdown cell is refused, and after a person changes the cell a run on the
old header is refused and nothing runs.

As a pytest plugin it provides `root` (a folder holding analysis.ipynb; the run story writes
checks.ipynb next to it) and `data_dir` (an isolated `JUPYTER_DATA_DIR`); tests/mcp and
tests/cli make `data_dir` autouse in their conftests.
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import nbformat
import pytest

NOTEBOOK = "analysis.ipynb"
CHECKS = "checks.ipynb"
Call = Callable[[str, dict[str, Any]], Awaitable[tuple[bool, str]]]


def write_analysis(root: Path) -> Path:
    """analysis.ipynb: a markdown intro, a load cell with a stream output, a total cell."""
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    load = nbformat.v4.new_code_cell(
        'import pandas as pd\ndf = pd.read_csv("sales.csv")', id="load-data"
    )
    load.outputs = [nbformat.v4.new_output("stream", name="stdout", text="loaded 120 rows\n")]
    load.execution_count = 1
    nb.cells = [
        nbformat.v4.new_markdown_cell("# Sales analysis", id="intro"),
        load,
        nbformat.v4.new_code_cell('total = df["amount"].sum()\nprint(total)', id="total"),
    ]
    path = root / NOTEBOOK
    nbformat.write(nb, path)
    return path


def write_checks(root: Path) -> Path:
    """checks.ipynb: a markdown intro, a cell printing 6 * 7, a cell that raises."""
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    nb.cells = [
        nbformat.v4.new_markdown_cell("# Checks", id="intro"),
        nbformat.v4.new_code_cell("answer = 6 * 7\nprint(answer)", id="calc"),
        nbformat.v4.new_code_cell("1 / 0", id="fail"),
    ]
    path = root / CHECKS
    nbformat.write(nb, path)
    return path


def person_edits(root: Path, cell_id: str, source: str, notebook: str = NOTEBOOK) -> None:
    """A person changes one cell's source and saves (outside the agent's tools)."""
    path = root / notebook
    nb = nbformat.read(path, as_version=4)
    next(cell for cell in nb.cells if cell.id == cell_id).source = source
    nbformat.write(nb, path)


def header_of(text: str, notebook: str = NOTEBOOK) -> str:
    match = re.match(rf"^\[{re.escape(notebook)}#[0-9A-F]{{4}}\]", text)
    assert match, f"no [{notebook}#TAG] header at the start of:\n{text}"
    return match.group(0)


def line_of(view: str, content: str) -> int:
    """The number of the read-view row showing `content`."""
    for row in view.split("\n"):
        number, sep, text = row.partition(":")
        if sep and number.isdigit() and text == content:
            return int(number)
    raise AssertionError(f"{content!r} is not a row of:\n{view}")


async def ok(call: Call, tool: str, arguments: dict[str, Any]) -> str:
    is_error, text = await call(tool, arguments)
    assert not is_error, f"{tool} failed:\n{text}"
    return text


async def run_edit_scenario(call: Call, root: Path) -> None:
    first = await ok(call, "notebook_read", {"path": NOTEBOOK})
    assert "⎿ outputs: stream (1 line)" in first
    load_line = line_of(first, 'df = pd.read_csv("sales.csv")')
    new_load = 'df = pd.read_csv("sales.csv", parse_dates=["date"])'
    edit = f"{header_of(first)}\nreplace {load_line}:\n+{new_load}\n"
    edited = await ok(call, "notebook_edit", {"patch": edit})
    assert "updated" in edited.split("\n")[0]

    # A person adds a line to another cell: the agent's next edit, on its old tag, is rebased.
    person_edits(root, "intro", "# Sales analysis\nQuarterly figures by region.")
    print_line = line_of(first, "print(total)")
    rebased = await ok(
        call,
        "notebook_edit",
        {"patch": f'{header_of(edited)}\nreplace {print_line}:\n+print(f"{{total:.2f}}")\n'},
    )
    assert 'print(f"{total:.2f}")' in rebased

    # A person rewrites the very line the agent is about to replace: rejected, nothing written.
    second = await ok(call, "notebook_read", {"path": NOTEBOOK})
    total_line = line_of(second, 'total = df["amount"].sum()')
    person_edits(root, "total", 'total = df["amount"].sum() * 1.2\nprint(f"{total:.2f}")')
    before = (root / NOTEBOOK).read_bytes()
    replace_total = "replace {line}:\n+total = df['amount'].sum().round(2)\n"
    is_error, rejected = await call(
        "notebook_edit",
        {"patch": f"{header_of(second)}\n" + replace_total.format(line=total_line)},
    )
    assert is_error, rejected
    assert "changed since your read" in rejected and "Nothing was written" in rejected
    assert (root / NOTEBOOK).read_bytes() == before

    third = await ok(call, "notebook_read", {"path": NOTEBOOK})
    total_line = line_of(third, 'total = df["amount"].sum() * 1.2')
    await ok(
        call,
        "notebook_edit",
        {"patch": header_of(third) + "\n" + replace_total.format(line=total_line)},
    )
    check_final_notebook(root)


async def run_run_scenario(call: Call, root: Path) -> None:
    write_checks(root)
    view = await ok(call, "notebook_read", {"path": CHECKS})
    tag = header_of(view, CHECKS)[-5:-1]
    ran = await ok(call, "notebook_run", {"path": CHECKS, "tag": tag, "cells": ["calc"]})
    assert ran.startswith(f"[{CHECKS}#") and "\ncell calc: ok (execution count " in ran
    assert "\n[1] stream stdout\n42\n" in ran + "\n"
    stored = nbformat.read(root / CHECKS, as_version=4).cells[1]
    assert stored.outputs[0]["text"] == "42\n" and isinstance(stored.execution_count, int)

    raised = await ok(call, "notebook_run", {"path": CHECKS, "tag": tag, "cells": ["fail"]})
    assert "\ncell fail: error (execution count " in raised
    assert "ZeroDivisionError: division by zero" in raised and "\x1b" not in raised

    is_error, markdown = await call(
        "notebook_run", {"path": CHECKS, "tag": tag, "cells": ["intro"]}
    )
    assert is_error and "only code cells run" in markdown

    person_edits(root, "calc", "answer = 6 * 9\nprint(answer)", CHECKS)
    before = (root / CHECKS).read_bytes()
    is_error, stale = await call("notebook_run", {"path": CHECKS, "tag": tag, "cells": ["calc"]})
    assert is_error, stale
    assert "Run refused:" in stale and "Nothing ran" in stale
    assert "*4:answer = 6 * 9" in stale.splitlines()
    assert (root / CHECKS).read_bytes() == before


def check_final_notebook(root: Path) -> None:
    nb = nbformat.read(root / NOTEBOOK, as_version=4)
    nbformat.validate(nb)
    assert [cell.id for cell in nb.cells] == ["intro", "load-data", "total"]
    assert [cell.source for cell in nb.cells] == [
        "# Sales analysis\nQuarterly figures by region.",
        'import pandas as pd\ndf = pd.read_csv("sales.csv", parse_dates=["date"])',
        "total = df['amount'].sum().round(2)\nprint(f\"{total:.2f}\")",
    ]
    load = nb.cells[1]
    assert load.execution_count == 1
    assert load.outputs[0]["text"] == "loaded 120 rows\n"
    assert nb.metadata["kernelspec"]["name"] == "python3"


# -- fixtures --------------------------------------------------------------------------------


@pytest.fixture
def data_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """`JUPYTER_DATA_DIR` for this test (and the processes it starts), where the default
    snapshot store lives; no store or token comes in from the environment."""
    folder = tmp_path / "jupyter-data"
    monkeypatch.setenv("JUPYTER_DATA_DIR", str(folder))
    monkeypatch.delenv("JUPYTER_HASHLINE_STORE", raising=False)
    monkeypatch.delenv("JUPYTER_TOKEN", raising=False)
    return folder


@pytest.fixture
def root(tmp_path: Path) -> Path:
    """A root directory holding analysis.ipynb."""
    folder = tmp_path / "root"
    folder.mkdir()
    write_analysis(folder)
    return folder
