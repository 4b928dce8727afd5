"""Screenshot review mode in JupyterLab: the cells an agent proposed to change, each with its
inline diff and Accept / Reject; the sidebar's Review tab; and a refused accept.

    python scripts/screenshot_review.py [--out-dir docs/_static/images] [--chromium PATH]

The story of the browser test (scripts/review_story.py) in a temporary root: a JupyterLab
server with real-time collaboration on loopback, Debian's Chromium driven by Playwright.
Screenshots at device scale 1 and at most `MAX_WIDTH` wide, so the docs' column shows them at
the size they were taken.

Invariants: nothing in the repository changes but the PNGs written; the server is stopped on
exit; every wait is on a condition.
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
from bench.server import TOKEN, LocalServer  # noqa: E402
from scripts.labrun import CHROMIUM_ARGS  # noqa: E402
from scripts.review_story import (  # noqa: E402
    NOTEBOOK,
    Rest,
    agent_proposes,
    editors,
    open_review_tab,
    proposal_box,
    type_at_end_of_line,
    write_review_notebook,
)

NEWS_OFF = '{"fetchNews": "false", "checkForUpdates": false}'
SIDEBAR_WIDTH = 500
MAX_WIDTH = 760  # the docs' column (a test checks no screenshot is scaled down)


def shoot(url: str, chromium: str, out: Path) -> None:
    from playwright.sync_api import expect, sync_playwright

    rest = Rest(url, TOKEN)
    with sync_playwright() as play:
        browser = play.chromium.launch(executable_path=chromium, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 720})
            page.set_default_timeout(60_000)
            page.goto(f"{url}lab/tree/{NOTEBOOK}?token={TOKEN}")
            cells = editors(page)
            expect(cells.nth(3)).to_contain_text("print(total)")
            sidebar = open_review_tab(page)
            widen(page, sidebar)
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
            shoot_notebook(page, out / "review.png")
            shoot_sidebar(page, sidebar, out / "review_sidebar.png")

            type_at_end_of_line(page, 3, 0, "  # checked")  # the person changes the same line
            box = proposal_box(page, 3)
            box.locator(".jp-hashline-proposed-accept").click()
            expect(box.locator(".jp-hashline-proposed-error")).to_be_visible()
            page.mouse.move(0, 0)
            box.screenshot(path=str(out / "review_refused.png"))
        finally:
            browser.close()


def shoot_notebook(page: Any, path: Path) -> None:
    """The notebook from its toolbar to its last proposal (no empty space below)."""
    panel = page.locator(".jp-NotebookPanel").bounding_box()
    last = page.locator(".jp-hashline-proposed").last.bounding_box()
    height = last["y"] + last["height"] - panel["y"] + 12
    width = min(panel["width"], MAX_WIDTH)
    page.screenshot(
        path=str(path), clip={"x": panel["x"], "y": panel["y"], "width": width, "height": height}
    )


def shoot_sidebar(page: Any, sidebar: Any, path: Path) -> None:
    """The sidebar from its tabs to the end of the proposals."""
    box = sidebar.bounding_box()
    content = sidebar.locator(".jp-hashline-review-box").bounding_box()
    height = content["y"] + content["height"] - box["y"] + 8
    width = min(box["width"], MAX_WIDTH)
    page.screenshot(
        path=str(path), clip={"x": box["x"], "y": box["y"], "width": width, "height": height}
    )


def widen(page: Any, sidebar: Any) -> None:
    """Give the left panel room for the proposals (a person drags it wider)."""
    box = sidebar.bounding_box()
    assert box is not None
    handle_x = box["x"] + box["width"] + 2
    page.mouse.move(handle_x, box["y"] + 200)
    page.mouse.down()
    page.mouse.move(box["x"] + SIDEBAR_WIDTH, box["y"] + 200, steps=5)
    page.mouse.up()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out-dir", type=Path, default=REPO / "artifacts")
    parser.add_argument("--chromium", default=shutil.which("chromium") or "/usr/bin/chromium")
    args = parser.parse_args(argv)
    args.out_dir = args.out_dir.resolve()
    args.out_dir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="hashline-review-shot-") as tmp:
        base = Path(tmp)
        settings = base / "lab-settings" / "@jupyterlab" / "apputils-extension"
        settings.mkdir(parents=True)
        (settings / "notification.jupyterlab-settings").write_text(NEWS_OFF)
        os.environ["JUPYTERLAB_SETTINGS_DIR"] = str(base / "lab-settings")
        os.environ["JUPYTERLAB_WORKSPACES_DIR"] = str(base / "workspaces")
        os.chdir(base)  # the room's update store is created in the working directory
        write_review_notebook(base / "root" / NOTEBOOK)
        extra = ("--YDocExtension.document_save_delay=30",)
        with LocalServer(base / "root", base / "home", extra_args=extra) as server:
            shoot(f"http://127.0.0.1:{server.port}/", args.chromium, args.out_dir)
    print(f"saved review.png, review_sidebar.png and review_refused.png in {args.out_dir}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
