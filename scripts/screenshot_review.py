"""Screenshot review mode in JupyterLab: the cells an agent proposed to change, each with its
inline diff and Accept / Reject; the sidebar's Review tab; and a refused accept.

    python scripts/screenshot_review.py [--out-dir docs/_static/images] [--chromium PATH]

The story of the browser test (scripts/review_story.py) in a temporary root: a JupyterLab
server with real-time collaboration on loopback, Debian's Chromium driven by Playwright.
Screenshots at device scale 1 and at most `MAX_WIDTH` wide (scripts/lab_story.py), so the
docs' column shows them at the size they were taken.

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
    shoot_down_to,
    shoot_story,
    type_at_end_of_line,
    widen,
)
from scripts.review_story import (  # noqa: E402
    NOTEBOOK,
    agent_proposes,
    open_review_tab,
    proposal_box,
    write_review_notebook,
)

if TYPE_CHECKING:
    from playwright.sync_api import Page, ViewportSize

SIDEBAR_WIDTH = 500
VIEWPORT: ViewportSize = {"width": 1280, "height": 720}


def shoot(rest: Rest, page: Page, out: Path) -> None:
    """The story, shot into `out`, on a page that has its notebook open."""
    from playwright.sync_api import expect

    cells = editors(page)
    expect(cells.nth(3)).to_contain_text("print(total)")
    sidebar = open_review_tab(page)
    widen(page, sidebar, SIDEBAR_WIDTH)
    sidebar.locator(".jp-hashline-review-toggle input").check()
    expect(sidebar.locator(".jp-hashline-review-toggle input")).to_be_enabled()
    agent_proposes(
        rest,
        {
            "rate = 0.2": "rate = 0.25  # agent",
            "print(total)": "print(f'total: {total:.2f}')  # agent",
        },
    )
    for cell in (1, 3):
        expect(proposal_box(page, cell).locator(".cm-editor")).to_be_visible()
    type_at_end_of_line(page, 2, 1, " * (1 - rate)")
    expect(sidebar.locator(".jp-hashline-proposal")).to_have_count(1)
    page.mouse.move(0, 0)
    # the notebook from its toolbar to its last proposal; the sidebar to the end of the list
    notebook = page.locator(".jp-NotebookPanel")
    last = page.locator(".jp-hashline-proposed").last
    shoot_down_to(page, notebook, last, out / "review.png", pad=12)
    review = sidebar.locator(".jp-hashline-review-box")
    shoot_down_to(page, sidebar, review, out / "review_sidebar.png", pad=8)

    type_at_end_of_line(page, 3, 0, "  # checked")  # the person changes the same line
    box = proposal_box(page, 3)
    box.locator(".jp-hashline-proposed-accept").click()
    expect(box.locator(".jp-hashline-proposed-error")).to_be_visible()
    page.mouse.move(0, 0)
    box.screenshot(path=str(out / "review_refused.png"))


def main(argv: list[str] | None = None) -> int:
    out = shoot_story(
        __doc__.splitlines()[0],
        argv,
        notebook=NOTEBOOK,
        write=write_review_notebook,
        viewport=VIEWPORT,
        shoot=shoot,
    )
    print(f"saved review.png, review_sidebar.png and review_refused.png in {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
