"""Screenshot JupyterLab with the first example executed, its panel in view, the sidebar open.

    python scripts/screenshot_lab.py [--out artifacts/lab_example.png] [--chromium PATH]

A JupyterLab process (this environment's Python, loopback only, token auth) serves a temporary
copy of examples/; headless Chromium (Debian's, driven by Playwright) opens
`agent_edits_notebook.ipynb`, runs all its cells in the page's kernel, waits for the reports
at the end, scrolls the zones panel into view, opens the hashline sidebar and saves the sidebar
with the start of the notebook, as wide as the docs show it (`DOCS_CLIP`).
The kernel is the server's child, so the example's agent session registers with the server and
the sidebar lists it. Offline: the model is the example's own provider simulator.

Invariants: nothing in the repository changes (the notebook runs in the copy; settings,
workspaces and runtime files live in the temporary directory); the server is stopped on exit.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from playwright.sync_api import Page, ViewportSize

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
from scripts.labrun import LabFailed, chromium_page, start_lab, stop  # noqa: E402

LABEXTENSION = REPO / "jupyter_hashline" / "labextension"
EXAMPLE = "agent_edits_notebook.ipynb"
SIDEBAR_ID = "jupyter-hashline-sidebar"
TOKEN = "hashline-screenshot"
VIEWPORT: ViewportSize = {"width": 1600, "height": 1000}
DOCS_CLIP = {"x": 0, "y": 0, "width": 714, "height": 540}
"""The part saved: the sidebar and the start of the notebook beside it, at the width the docs
show images (714 px, the PyData theme's article column), so it is shown at its own size."""


def shoot(url: str, chromium: str, out: Path) -> None:
    from playwright.sync_api import expect

    with chromium_page(chromium, viewport=VIEWPORT, timeout_ms=60_000) as page:
        page.goto(f"{url}lab/tree/{EXAMPLE}?token={TOKEN}")
        notebook = page.locator(".jp-NotebookPanel")
        idle = page.locator(".jp-Notebook-ExecutionIndicator[data-status='idle']")
        expect(idle.first).to_be_visible()
        run_all(page)
        wait_for_session(url, edits=2, runs=1)
        page.locator(f'.jp-SideBar .lm-TabBar-tab[data-id="{SIDEBAR_ID}"]').click()
        sidebar = page.locator(f"#{SIDEBAR_ID}")
        expect(sidebar).to_be_visible()
        # the example's session edits and runs through this server: its Activity tab
        sidebar.get_by_text("Activity", exact=True).click()
        panel = notebook.locator(".hashline-zones-panel").first
        expect(panel).to_be_visible()
        panel.evaluate("el => el.closest('.jp-Cell').scrollIntoView({block: 'start'})")
        page.wait_for_timeout(1500)  # the sidebar has fetched the activity
        out.parent.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(out), clip=DOCS_CLIP)


def wait_for_session(url: str, edits: int, runs: int, timeout_s: float = 90) -> None:
    """Until the example's agent session has told the server about its edits and runs."""
    request = urllib.request.Request(
        f"{url}hashline/sessions", headers={"Authorization": f"token {TOKEN}"}
    )
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        with urllib.request.urlopen(request, timeout=10) as response:
            listing = json.dumps(json.loads(response.read()))
        if f'"edits": {edits}, "runs": {runs}' in listing:
            return
        time.sleep(0.5)
    raise SystemExit(f"the example's session never reported {edits} edits: {listing[:2000]}")


def run_all(page: Page) -> None:
    """Run > Run All Cells, from the menu bar, as a person would."""
    page.locator(".jp-NotebookPanel .jp-Notebook").click()
    page.locator(".lm-MenuBar-itemLabel", has_text="Run").first.click()
    page.locator(".lm-Menu-itemLabel", has_text="Run All Cells").first.click()


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=REPO / "artifacts" / "lab_example.png")
    parser.add_argument("--chromium", default=shutil.which("chromium") or "/usr/bin/chromium")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="hashline-lab-shot-") as tmp:
        root, home = Path(tmp, "examples"), Path(tmp, "home")
        root.mkdir()
        home.mkdir()
        for name in (EXAMPLE, "sales_analysis.ipynb"):
            shutil.copyfile(REPO / "examples" / name, root / name)
        if not (LABEXTENSION / "package.json").is_file():
            raise SystemExit("the sidebar is not built: run `make labextension` (or `make dev`)")
        try:
            proc, url = start_lab(root, home, Path(tmp, "lab.log"), TOKEN, LABEXTENSION)
        except LabFailed as err:
            raise SystemExit(str(err)) from None
        try:
            shoot(url, args.chromium, args.out)
        finally:
            stop(proc)
    print(f"saved {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
