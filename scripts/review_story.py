"""The review story in a real JupyterLab, shared by its browser test and its screenshots.

A person has `review.ipynb` open (with real-time collaboration) and turns on "Review agent
edits" in the sidebar; the agent `claude-code` edits two cells over REST, which only proposes
them: the file stays as it was and each cell shows the proposed change inline. The person types
in a third cell without saving, accepts one proposed cell and rejects the other. Helpers only:
the test asserts, the screenshot script (scripts/screenshot_review.py) shoots. What every story
shares is in scripts/lab_story.py.

Invariants: every wait is on a condition (a locator's state, the file's content), bounded.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import nbformat

from scripts.lab_story import AGENT, line_number, open_sidebar, wait_for_file, write_notebook

if TYPE_CHECKING:
    from playwright.sync_api import Locator, Page

    from scripts.lab_story import Rest

__all__ = [
    "NOTEBOOK",
    "SOURCES",
    "agent_proposes",
    "open_review_tab",
    "proposal_box",
    "sources_on_disk",
    "wait_for_disk",
    "write_review_notebook",
]

NOTEBOOK = "review.ipynb"
SOURCES = {
    "intro": "# Quarterly forecast",
    "setup": "import pandas as pd\nrate = 0.2",
    "model": "sales = pd.read_csv('sales.csv')\ntotal = sales['amount'].sum()",
    "report": "print(total)",
}


def write_review_notebook(path: Path) -> None:
    cells = [
        nbformat.v4.new_markdown_cell(SOURCES["intro"], id="intro"),
        *(nbformat.v4.new_code_cell(SOURCES[key], id=key) for key in ("setup", "model", "report")),
    ]
    write_notebook(path, cells)


def agent_proposes(rest: Rest, replacements: dict[str, str]) -> dict[str, Any]:
    """The agent reads the notebook and replaces each line `old` with `new`, in one patch
    (review mode turns it into a proposal: the reply says so and nothing is written)."""
    read = rest.agent_reads(NOTEBOOK)
    ops = [
        f"replace {line_number(read['view'], old)}:\n+{new}" for old, new in replacements.items()
    ]
    patch = "\n".join([read["header"], *ops]) + "\n"
    reply: dict[str, Any] = rest.call("POST", "hashline/patch", {"patch": patch}, AGENT)
    return reply


def sources_on_disk(root: Path) -> dict[str, str]:
    nb = nbformat.read(root / NOTEBOOK, as_version=4)
    return {cell.get("id", ""): cell.source for cell in nb.cells}


def wait_for_disk(root: Path, check: Callable[[dict[str, str]], bool], what: str) -> dict[str, str]:
    """Until the notebook on disk satisfies `check` (the room saves after a short delay)."""
    return wait_for_file(lambda: sources_on_disk(root), check, what)


def open_review_tab(page: Page) -> Locator:
    """The sidebar, on its Review tab."""
    sidebar = open_sidebar(page)
    sidebar.locator(".jp-hashline-tab-review").click()
    return sidebar


def proposal_box(page: Page, cell: int) -> Locator:
    """The proposed change shown on notebook cell number `cell` (0-based)."""
    return (
        page.locator(".jp-NotebookPanel .jp-Notebook .jp-Cell")
        .nth(cell)
        .locator(":scope > .jp-hashline-proposed")
    )
