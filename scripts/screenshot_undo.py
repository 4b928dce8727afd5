"""Screenshot undo in JupyterLab: the sidebar with an agent's edit expanded (its diff per cell,
Undo), a refused undo saying why, and a cell an agent changed with its badge.

    python scripts/screenshot_undo.py [--out-dir docs/_static/images] [--chromium PATH]

The story of the browser test (scripts/undo_story.py) in a temporary root: a JupyterLab
server with real-time collaboration on loopback, Debian's Chromium driven by Playwright.
Element screenshots at device scale 1, so the docs show them at the size they were taken.

Invariants: nothing in the repository changes but the PNGs written; the server is stopped on
exit; every wait is on a condition.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
from scripts.lab_story import (  # noqa: E402
    Rest,
    editors,
    open_sidebar,
    shoot_down_to,
    shoot_story,
    type_at_end_of_line,
    widen,
)
from scripts.undo_story import (  # noqa: E402
    NOTEBOOK,
    agent_edits_while_person_types,
    write_story_notebook,
)

if TYPE_CHECKING:
    from playwright.sync_api import Locator, Page, ViewportSize

SIDEBAR_WIDTH = 460
VIEWPORT: ViewportSize = {"width": 1280, "height": 760}


def shoot(rest: Rest, page: Page, out: Path) -> None:
    """The story, shot into `out`, on a page that has its notebook open."""
    from playwright.sync_api import expect

    cells = editors(page)
    expect(cells.nth(2)).to_contain_text("print(total)")
    agent_edits_while_person_types(page, rest)
    badge = page.locator(".jp-Cell .jp-hashline-badge")
    expect(badge).to_have_count(1)
    sidebar = open_sidebar(page)
    widen(page, sidebar, SIDEBAR_WIDTH)
    edit = sidebar.locator(".jp-hashline-edit").first
    edit.locator(".jp-hashline-edit-toggle").click()
    expect(edit.locator(".jp-hashline-undo")).to_be_visible()
    page.mouse.move(0, 0)
    badge_cell = page.locator(".jp-Notebook .jp-Cell").nth(2)
    badge_cell.screenshot(path=str(out / "undo_badge.png"))
    shoot_sidebar(page, sidebar, out / "undo_sidebar.png")

    type_at_end_of_line(page, 2, 1, " # checked")  # the person edits the agent's line
    edit.locator(".jp-hashline-undo").click()
    expect(edit.locator(".jp-hashline-undo-error")).to_be_visible()
    page.mouse.move(0, 0)
    shoot_sidebar(page, sidebar, out / "undo_refused.png")


def shoot_sidebar(page: Page, sidebar: Locator, path: Path) -> None:
    """The sidebar from its tabs to the end of the activity list (no empty space below)."""
    shoot_down_to(page, sidebar, sidebar.locator(".jp-hashline-activity-box"), path, pad=8)


def main(argv: list[str] | None = None) -> int:
    out = shoot_story(
        __doc__.splitlines()[0],
        argv,
        notebook=NOTEBOOK,
        write=write_story_notebook,
        viewport=VIEWPORT,
        shoot=shoot,
    )
    print(f"saved undo_sidebar.png, undo_refused.png and undo_badge.png in {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
