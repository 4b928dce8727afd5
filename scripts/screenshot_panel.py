"""Screenshot the zones panel, rendered offline from a headless run of examples/panel_demo.ipynb.

Steps:
1. execute the notebook with nbclient (a real ipykernel; the widget state is stored in the
   notebook's metadata, as JupyterLab's "save widget state" does);
2. export it with nbconvert's HTML exporter, pointing require.js and the widget renderer at
   local copies of npm's `requirejs` and `@jupyter-widgets/html-manager` (installed once with
   npm into artifacts/npm/) instead of their CDNs;
3. serve artifacts/ on 127.0.0.1 and open the page in headless Chromium (Playwright driving the
   system browser), with every request that is not to that loopback server refused, so the page
   renders exactly what is on this machine;
4. wait for the panel's widgets to render and save a PNG of the panel (and the HTML and the
   executed notebook beside it) under artifacts/.

    python scripts/screenshot_panel.py [--out artifacts/panel.png] [--chromium /usr/bin/chromium]

Exits 0 with the PNG written, 1 with a message saying what to do when a step fails.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import shutil
import subprocess
import sys
import threading
from collections.abc import Iterator
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import nbformat

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
from scripts.labrun import CHROMIUM_ARGS  # noqa: E402

NOTEBOOK = REPO / "examples" / "panel_demo.ipynb"
ARTIFACTS = REPO / "artifacts"
NPM_PACKAGES = ("@jupyter-widgets/html-manager@1.0.15", "requirejs@2.3.8")
RENDERER = "npm/node_modules/@jupyter-widgets/html-manager/dist/embed-amd.js"
REQUIRE = "npm/node_modules/requirejs/require.js"
PANEL = ".hashline-zones-panel"
VIEWPORT = {"width": 830, "height": 900}
"""A page as narrow as it can be while the panel still fits the width the docs show images at
(714 px, the PyData theme's article column), so the image is shown at its own size."""


class StepFailed(RuntimeError):
    """A step could not be done; the message says what to do."""


def execute(notebook: Path, timeout: int = 180) -> nbformat.NotebookNode:
    """Run every cell in a fresh kernel, in the notebook's folder, keeping the widget state."""
    from nbclient import NotebookClient

    nb = nbformat.read(notebook, as_version=4)
    client = NotebookClient(
        nb,
        timeout=timeout,
        kernel_name="python3",
        store_widget_state=True,
        resources={"metadata": {"path": str(notebook.parent)}},
    )
    client.execute()
    if "widgets" not in nb.metadata:
        raise StepFailed(f"{notebook.name} ran but stored no widget state; does it show a panel?")
    return nb


def ensure_npm_packages(folder: Path) -> None:
    """Install the widget renderer and require.js from npm once (kept in artifacts/npm)."""
    if (folder.parent / RENDERER).is_file() and (folder.parent / REQUIRE).is_file():
        return
    npm = shutil.which("npm")
    if npm is None:
        raise StepFailed("npm is not on PATH; install Node.js (npm) and run this script again")
    folder.mkdir(parents=True, exist_ok=True)
    command = [npm, "install", "--prefix", str(folder), "--no-audit", "--no-fund", *NPM_PACKAGES]
    done = subprocess.run(command, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise StepFailed(f"npm install failed:\n{done.stderr[-2000:]}")


def export_html(nb: nbformat.NotebookNode) -> str:
    """nbconvert's JupyterLab-style HTML, loading its scripts from the local copies."""
    from nbconvert import HTMLExporter

    exporter = HTMLExporter(
        template_name="lab",
        require_js_url=REQUIRE,
        widget_renderer_url=RENDERER,
        mathjax_url="",
    )
    body, _ = exporter.from_notebook_node(nb)
    return str(body)


class _QuietHandler(SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: Any) -> None:
        pass


@contextlib.contextmanager
def serve(folder: Path) -> Iterator[str]:
    """Serve `folder` on 127.0.0.1 (a free port) for the duration of the block."""
    handler = functools.partial(_QuietHandler, directory=str(folder))
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()


def screenshot(url: str, out: Path, chromium: str) -> dict[str, Any]:
    """Open `url`, refuse anything not served locally, wait for the panel, save its PNG."""
    from urllib.parse import urlsplit

    from playwright.sync_api import Route, sync_playwright

    parts = urlsplit(url)
    origin = f"{parts.scheme}://{parts.netloc}/"

    def only_local(route: Route) -> None:
        if route.request.url.startswith(origin):
            route.continue_()
        else:
            route.abort()

    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport=VIEWPORT)
            page.route("**/*", only_local)
            errors: list[str] = []
            page.on("pageerror", lambda err: errors.append(str(err)))
            page.goto(url)
            try:
                page.wait_for_selector(f"{PANEL} .widget-html-content", timeout=30_000)
            except Exception as err:
                raise StepFailed(
                    f"the panel did not render in the exported page ({'; '.join(errors) or err})"
                ) from err
            page.wait_for_timeout(300)  # let the browser lay out the last widgets
            panel = page.locator(PANEL).first
            panel.screenshot(path=str(out))
            box = panel.bounding_box() or {}
            return {"errors": errors, "box": box}
        finally:
            browser.close()


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--notebook", type=Path, default=NOTEBOOK)
    parser.add_argument("--out", type=Path, default=ARTIFACTS / "panel.png")
    parser.add_argument("--chromium", default=shutil.which("chromium") or "/usr/bin/chromium")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    ARTIFACTS.mkdir(exist_ok=True)
    try:
        if not Path(args.chromium).exists():
            raise StepFailed(f"no Chromium at {args.chromium}; apt-get install chromium")
        ensure_npm_packages(ARTIFACTS / "npm")
        nb = execute(args.notebook)
        nbformat.write(nb, ARTIFACTS / "panel_demo.executed.ipynb")
        (ARTIFACTS / "panel_demo.html").write_text(export_html(nb), encoding="utf-8")
        args.out.parent.mkdir(parents=True, exist_ok=True)
        with serve(ARTIFACTS) as base:
            seen = screenshot(base + "panel_demo.html", args.out.resolve(), args.chromium)
    except StepFailed as err:
        print(f"screenshot_panel: {err}", file=sys.stderr)
        return 1
    print(f"wrote {args.out} (panel {seen['box']}); page errors: {seen['errors'] or 'none'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
