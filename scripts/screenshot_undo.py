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
from scripts.undo_story import (  # noqa: E402
    NOTEBOOK,
    Rest,
    editors,
    open_sidebar,
    type_at_end_of_line,
    write_story_notebook,
)

NEWS_OFF = '{"fetchNews": "false", "checkForUpdates": false}'
SIDEBAR_WIDTH = 460


def shoot(url: str, chromium: str, out: Path) -> None:
    from playwright.sync_api import expect, sync_playwright

    rest = Rest(url, TOKEN)
    with sync_playwright() as play:
        browser = play.chromium.launch(executable_path=chromium, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 760})
            page.set_default_timeout(60_000)
            page.goto(f"{url}lab/tree/{NOTEBOOK}?token={TOKEN}")
            cells = editors(page)
            expect(cells.nth(2)).to_contain_text("print(total)")
            type_at_end_of_line(page, 1, 1, "  # typed, not saved")
            rest.agent_replaces(
                "total = sales['amount'].sum()",
                "total = sales['amount'].sum() * (1 - rate)  # agent",
                until=lambda view: "typed, not saved" in view,
            )
            badge = page.locator(".jp-Cell .jp-hashline-badge")
            expect(badge).to_have_count(1)
            sidebar = open_sidebar(page)
            widen(page, sidebar)
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
        finally:
            browser.close()


def shoot_sidebar(page: Any, sidebar: Any, path: Path) -> None:
    """The sidebar from its tabs to the end of the activity list (no empty space below)."""
    box = sidebar.bounding_box()
    content = sidebar.locator(".jp-hashline-activity-box").bounding_box()
    height = content["y"] + content["height"] - box["y"] + 8
    clip = {"x": box["x"], "y": box["y"], "width": box["width"], "height": height}
    page.screenshot(path=str(path), clip=clip)


def widen(page: object, sidebar: object) -> None:
    """Give the left panel room for a diff (a person drags it wider)."""
    from playwright.sync_api import Locator, Page

    assert isinstance(page, Page) and isinstance(sidebar, Locator)
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
    args.out_dir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="hashline-undo-shot-") as tmp:
        base = Path(tmp)
        settings = base / "lab-settings" / "@jupyterlab" / "apputils-extension"
        settings.mkdir(parents=True)
        (settings / "notification.jupyterlab-settings").write_text(NEWS_OFF)
        os.environ["JUPYTERLAB_SETTINGS_DIR"] = str(base / "lab-settings")
        os.environ["JUPYTERLAB_WORKSPACES_DIR"] = str(base / "workspaces")
        os.chdir(base)  # the room's update store is created in the working directory
        write_story_notebook(base / "root" / NOTEBOOK)
        extra = ("--YDocExtension.document_save_delay=30",)
        with LocalServer(base / "root", base / "home", extra_args=extra) as server:
            shoot(f"http://127.0.0.1:{server.port}/", args.chromium, args.out_dir)
    print(f"saved undo_sidebar.png, undo_refused.png and undo_badge.png in {args.out_dir}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
