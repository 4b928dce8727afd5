"""The undo story in a real JupyterLab, shared by its browser test and its screenshots.

A person has `undo.ipynb` open (with real-time collaboration) and types in cell `setup`
without saving; the agent `claude-code` edits cell `model` over REST; the cell gets a badge;
the person undoes the edit from the sidebar. Helpers only: the test asserts, the screenshot
script (scripts/screenshot_undo.py) shoots.

Invariants: every wait is on a condition (a locator's state, the file's content), bounded.
"""

from __future__ import annotations

import json
import re
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import nbformat

if TYPE_CHECKING:
    from playwright.sync_api import Locator, Page

NOTEBOOK = "undo.ipynb"
AGENT = "claude-code"
SIDEBAR_ID = "jupyter-hashline-sidebar"
SETUP = "import pandas as pd\nrate = 0.2"
MODEL = "sales = pd.read_csv('sales.csv')\ntotal = sales['amount'].sum()\nprint(total)"


def write_story_notebook(path: Path) -> None:
    cells = [
        nbformat.v4.new_markdown_cell("# Quarterly sales", id="intro"),
        nbformat.v4.new_code_cell(SETUP, id="setup"),
        nbformat.v4.new_code_cell(MODEL, id="model"),
    ]
    nb = nbformat.v4.new_notebook(cells=cells)
    nb.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(nbformat.writes(nb) + "\n", encoding="utf-8")


class Rest:
    """The hashline REST API of a server, as the agent (or a person, without `agent`)."""

    def __init__(self, url: str, token: str) -> None:
        self.url, self.token = url.rstrip("/") + "/", token

    def call(self, method: str, route: str, body: Any = None, agent: str | None = None) -> Any:
        headers = {"Authorization": f"token {self.token}", "Content-Type": "application/json"}
        if agent:
            headers["X-Hashline-Agent"] = agent
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(
            self.url + route, data=data, method=method, headers=headers
        )
        with urllib.request.urlopen(request, timeout=30) as response:
            return json.loads(response.read())

    def agent_replaces(self, old: str, new: str, until: Callable[[str], bool]) -> dict[str, Any]:
        """The agent reads the notebook (once its view satisfies `until`, e.g. shows the
        person's typing) and replaces the line `old` with `new`."""
        deadline = time.monotonic() + 20
        while True:
            read = self.call("GET", f"hashline/read?path={NOTEBOOK}", agent=AGENT)
            if until(read["view"]) or time.monotonic() > deadline:
                break
            time.sleep(0.1)
        match = re.search(rf"^(\d+):{re.escape(old)}$", read["view"], re.M)
        assert match, f"{old!r} is not in the view:\n{read['view']}"
        patch = f"{read['header']}\nreplace {match.group(1)}:\n+{new}\n"
        reply: dict[str, Any] = self.call("POST", "hashline/patch", {"patch": patch}, AGENT)
        assert reply["sections"][0]["op"] == "update", reply["text"]
        return reply


def sources_on_disk(root: Path) -> list[str]:
    return [cell.source for cell in nbformat.read(root / NOTEBOOK, as_version=4).cells]


def wait_for_disk(root: Path, check: Callable[[list[str]], bool], what: str) -> list[str]:
    """Until the notebook on disk satisfies `check` (the room saves after a short delay)."""
    deadline = time.monotonic() + 20
    while True:
        try:
            found = sources_on_disk(root)
        except (OSError, ValueError):  # mid-save
            found = []
        if found and check(found):
            return found
        if time.monotonic() > deadline:
            raise AssertionError(f"the file never showed {what}: {found}")
        time.sleep(0.1)


def editors(page: Page) -> Locator:
    return page.locator(".jp-NotebookPanel .jp-Notebook .jp-Cell .cm-content")


def type_at_end_of_line(page: Page, cell: int, line: int, text: str) -> None:
    """A person clicks into line `line` (0-based) of code cell `cell`, goes to its end, types."""
    editors(page).nth(cell).locator(".cm-line").nth(line).click()
    page.keyboard.press("End")
    page.keyboard.type(text)


def open_sidebar(page: Page) -> Locator:
    page.locator(f'.jp-SideBar .lm-TabBar-tab[data-id="{SIDEBAR_ID}"]').click()
    return page.locator(f"#{SIDEBAR_ID}")
