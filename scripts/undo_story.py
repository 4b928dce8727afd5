"""The undo story in a real JupyterLab, shared by its browser test and its screenshots.

A person has `undo.ipynb` open (with real-time collaboration) and types in cell `setup`
without saving; the agent `claude-code` edits cell `model` over REST; the cell gets a badge;
the person undoes the edit from the sidebar. Helpers only: the test asserts, the screenshot
script (scripts/screenshot_undo.py) shoots. What every story shares is in scripts/lab_story.py.

Invariants: every wait is on a condition (a locator's state, the file's content), bounded.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import nbformat

from scripts.lab_story import AGENT, line_number, type_at_end_of_line, wait_for_file, write_notebook

if TYPE_CHECKING:
    from playwright.sync_api import Page

    from scripts.lab_story import Rest

__all__ = [
    "MODEL",
    "NOTEBOOK",
    "SETUP",
    "TYPED",
    "agent_edits_while_person_types",
    "agent_replaces",
    "sources_on_disk",
    "wait_for_disk",
    "write_story_notebook",
]

NOTEBOOK = "undo.ipynb"
SETUP = "import pandas as pd\nrate = 0.2"
MODEL = "sales = pd.read_csv('sales.csv')\ntotal = sales['amount'].sum()\nprint(total)"
TYPED = "  # typed, not saved"


def write_story_notebook(path: Path) -> None:
    write_notebook(
        path,
        [
            nbformat.v4.new_markdown_cell("# Quarterly sales", id="intro"),
            nbformat.v4.new_code_cell(SETUP, id="setup"),
            nbformat.v4.new_code_cell(MODEL, id="model"),
        ],
    )


def agent_replaces(rest: Rest, old: str, new: str, until: Callable[[str], bool]) -> dict[str, Any]:
    """The agent reads the notebook (once its view satisfies `until`, e.g. shows the person's
    typing) and replaces the line `old` with `new`."""
    deadline = time.monotonic() + 20
    while True:
        read = rest.agent_reads(NOTEBOOK)
        if until(read["view"]) or time.monotonic() > deadline:
            break
        time.sleep(0.1)
    patch = f"{read['header']}\nreplace {line_number(read['view'], old)}:\n+{new}\n"
    reply: dict[str, Any] = rest.call("POST", "hashline/patch", {"patch": patch}, AGENT)
    assert reply["sections"][0]["op"] == "update", reply["text"]
    return reply


def agent_edits_while_person_types(page: Page, rest: Rest) -> dict[str, Any]:
    """The story's start: the person types `TYPED` at the end of `rate = 0.2` without saving;
    the agent, once its read shows that typing, changes the `total` line of cell `model`."""
    type_at_end_of_line(page, 1, 1, TYPED)
    return agent_replaces(
        rest,
        "total = sales['amount'].sum()",
        "total = sales['amount'].sum() * (1 - rate)  # agent",
        until=lambda view: "typed, not saved" in view,
    )


def sources_on_disk(root: Path) -> list[str]:
    return [cell.source for cell in nbformat.read(root / NOTEBOOK, as_version=4).cells]


def wait_for_disk(root: Path, check: Callable[[list[str]], bool], what: str) -> list[str]:
    """Until the notebook on disk satisfies `check` (the room saves after a short delay)."""
    return wait_for_file(lambda: sources_on_disk(root), check, what)
