"""Screenshot JupyterLab with the first example executed, its panel in view, the sidebar open.

    python scripts/screenshot_lab.py [--out artifacts/lab_example.png] [--chromium PATH]

A JupyterLab process (this environment's Python, loopback only, token auth) serves a temporary
copy of examples/; headless Chromium (Debian's, driven by Playwright) opens
`agent_edits_notebook.ipynb`, runs all its cells in the page's kernel, waits for the reports
at the end, scrolls the zones panel into view, opens the hashline sidebar and saves a PNG.
The kernel is the server's child, so the example's agent session registers with the server and
the sidebar lists it. Offline: the model is the example's own provider simulator.

Invariants: nothing in the repository changes (the notebook runs in the copy; settings,
workspaces and runtime files live in the temporary directory); the server is stopped on exit.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from playwright.sync_api import Page

REPO = Path(__file__).resolve().parent.parent
EXAMPLE = "agent_edits_notebook.ipynb"
SIDEBAR_ID = "jupyter-hashline-sidebar"
TOKEN = "hashline-screenshot"
CHROMIUM_ARGS = [
    "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--disable-quic",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
    "--no-first-run",
]  # fmt: skip


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def lab_environment(home: Path) -> dict[str, str]:
    """Config, data, runtime dirs under `home`; the built sidebar first on JUPYTER_PATH."""
    built = REPO / "jupyter_hashline" / "labextension"
    if not (built / "package.json").is_file():
        raise SystemExit("the sidebar is not built: run `make labextension` (or `make dev`)")
    extensions = home / "jupyter-path" / "labextensions"
    extensions.mkdir(parents=True)
    (extensions / "jupyter-hashline").symlink_to(built, target_is_directory=True)
    config = home / "config"
    (config / "labconfig").mkdir(parents=True)
    enable = {"ServerApp": {"jpserver_extensions": {"jupyter_hashline": True}}}
    (config / "jupyter_server_config.json").write_text(json.dumps(enable))
    quiet = {
        "@jupyterlab/apputils-extension:notification": {
            "fetchNews": "false",
            "checkForUpdates": False,
        }
    }
    (config / "labconfig" / "default_setting_overrides.json").write_text(json.dumps(quiet))
    return dict(
        os.environ,
        JUPYTER_CONFIG_DIR=str(config),
        JUPYTER_DATA_DIR=str(home / "data"),
        JUPYTER_RUNTIME_DIR=str(home / "runtime"),
        JUPYTER_PATH=str(home / "jupyter-path"),
    )


def start_lab(root: Path, home: Path, log: Path) -> tuple[subprocess.Popen[bytes], str]:
    port = free_port()
    args = [
        sys.executable, "-m", "jupyterlab", "--no-browser", "--allow-root", "--ip=127.0.0.1",
        f"--port={port}", "--ServerApp.port_retries=0", f"--ServerApp.root_dir={root}",
        f"--IdentityProvider.token={TOKEN}", f"--LabApp.workspaces_dir={home / 'workspaces'}",
        f"--LabApp.user_settings_dir={home / 'settings'}",
    ]  # fmt: skip
    with log.open("wb") as out:
        proc = subprocess.Popen(
            args, env=lab_environment(home), stdout=out, stderr=subprocess.STDOUT
        )
    url = f"http://127.0.0.1:{port}/"
    deadline = time.monotonic() + 90
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise SystemExit(f"JupyterLab exited:\n{log.read_text()[-3000:]}")
        try:
            with urllib.request.urlopen(f"{url}api/status?token={TOKEN}", timeout=2):
                return proc, url
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            time.sleep(0.3)
    proc.terminate()
    raise SystemExit(f"JupyterLab did not start in time:\n{log.read_text()[-3000:]}")


def stop(proc: subprocess.Popen[bytes]) -> None:
    proc.terminate()
    try:
        proc.wait(timeout=20)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def shoot(url: str, chromium: str, out: Path) -> None:
    from playwright.sync_api import expect, sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=chromium, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page(viewport={"width": 1600, "height": 1000})
            page.set_default_timeout(60_000)
            page.goto(f"{url}lab/tree/{EXAMPLE}?token={TOKEN}")
            notebook = page.locator(".jp-NotebookPanel")
            idle = page.locator(".jp-Notebook-ExecutionIndicator[data-status='idle']")
            expect(idle.first).to_be_visible()
            run_all(page)
            wait_for_session(url, edits=2)
            page.locator(f'.jp-SideBar .lm-TabBar-tab[data-id="{SIDEBAR_ID}"]').click()
            sidebar = page.locator(f"#{SIDEBAR_ID}")
            expect(sidebar).to_be_visible()
            # the example's edits are the kernel session's (not REST activity): show its session
            sidebar.get_by_text("Sessions", exact=True).click()
            panel = notebook.locator(".hashline-zones-panel").first
            expect(panel).to_be_visible()
            panel.evaluate("el => el.closest('.jp-Cell').scrollIntoView({block: 'start'})")
            page.wait_for_timeout(1500)  # the sidebar's next refresh shows the session
            out.parent.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(out))
        finally:
            browser.close()


def wait_for_session(url: str, edits: int, timeout_s: float = 90) -> None:
    """Until the example's agent session has told the server about its `edits` edits."""
    request = urllib.request.Request(
        f"{url}hashline/sessions", headers={"Authorization": f"token {TOKEN}"}
    )
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        with urllib.request.urlopen(request, timeout=10) as response:
            listing = json.dumps(json.loads(response.read()))
        if f'"edits": {edits}' in listing:
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
        for name in (EXAMPLE, "sales_analysis.ipynb"):
            shutil.copyfile(REPO / "examples" / name, root / name)
        proc, url = start_lab(root, home, Path(tmp, "lab.log"))
        try:
            shoot(url, args.chromium, args.out)
        finally:
            stop(proc)
    print(f"saved {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
