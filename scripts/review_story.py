"""The review story in a real JupyterLab, shared by its browser test and its screenshots.

A person has `review.ipynb` open (with real-time collaboration) and turns on "Review agent
edits" in the sidebar; the agent `claude-code` edits two cells over REST, which only proposes
them: the file stays as it was and each cell shows the proposed change inline. The person types
in a third cell without saving, accepts one proposed cell and rejects the other. Helpers only:
the test asserts, the screenshot script (scripts/screenshot_review.py) shoots.

Invariants: every wait is on a condition (a locator's state, the file's content), bounded.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import nbformat

from scripts.undo_story import AGENT, SIDEBAR_ID, Rest

if TYPE_CHECKING:
    from playwright.sync_api import Locator, Page

__all__ = [
    "AGENT",
    "NOTEBOOK",
    "SOURCES",
    "Rest",
    "agent_proposes",
    "editors",
    "open_review_tab",
    "proposal_box",
    "sources_on_disk",
    "type_at_end_of_line",
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
    nb = nbformat.v4.new_notebook(cells=cells)
    nb.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(nbformat.writes(nb) + "\n", encoding="utf-8")


def agent_proposes(rest: Rest, replacements: dict[str, str]) -> dict[str, Any]:
    """The agent reads the notebook and replaces each line `old` with `new`, in one patch
    (review mode turns it into a proposal: the reply says so and nothing is written)."""
    read = rest.call("GET", f"hashline/read?path={NOTEBOOK}", agent=AGENT)
    ops = []
    for old, new in replacements.items():
        match = re.search(rf"^(\d+):{re.escape(old)}$", read["view"], re.M)
        assert match, f"{old!r} is not in the view:\n{read['view']}"
        ops.append(f"replace {match.group(1)}:\n+{new}")
    patch = "\n".join([read["header"], *ops]) + "\n"
    reply: dict[str, Any] = rest.call("POST", "hashline/patch", {"patch": patch}, AGENT)
    return reply


def sources_on_disk(root: Path) -> dict[str, str]:
    nb = nbformat.read(root / NOTEBOOK, as_version=4)
    return {cell.get("id", ""): cell.source for cell in nb.cells}


def wait_for_disk(root: Path, check: Callable[[dict[str, str]], bool], what: str) -> dict[str, str]:
    """Until the notebook on disk satisfies `check` (the room saves after a short delay)."""
    deadline = time.monotonic() + 20
    while True:
        try:
            found = sources_on_disk(root)
        except (OSError, ValueError):  # mid-save
            found = {}
        if found and check(found):
            return found
        if time.monotonic() > deadline:
            raise AssertionError(f"the file never showed {what}: {found}")
        time.sleep(0.1)


def editors(page: Page) -> Locator:
    """Each cell's own editor, in notebook order (a rendered markdown cell keeps a hidden one),
    not the merge views of the proposals shown on them."""
    return page.locator(".jp-NotebookPanel .jp-Notebook .jp-Cell-inputWrapper .cm-content")


def type_at_end_of_line(page: Page, cell: int, line: int, text: str) -> None:
    """A person clicks into line `line` (0-based) of cell `cell`, goes to its end, types."""
    editors(page).nth(cell).locator(".cm-line").nth(line).click()
    page.keyboard.press("End")
    page.keyboard.type(text)


def open_review_tab(page: Page) -> Locator:
    """The sidebar, on its Review tab."""
    sidebar = page.locator(f"#{SIDEBAR_ID}")
    if not sidebar.is_visible():
        page.locator(f'.jp-SideBar .lm-TabBar-tab[data-id="{SIDEBAR_ID}"]').click()
    sidebar.locator(".jp-hashline-tab-review").click()
    return sidebar


def proposal_box(page: Page, cell: int) -> Locator:
    """The proposed change shown on notebook cell number `cell` (0-based)."""
    return (
        page.locator(".jp-NotebookPanel .jp-Notebook .jp-Cell")
        .nth(cell)
        .locator(":scope > .jp-hashline-proposed")
    )
