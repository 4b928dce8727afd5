"""Browser check (issue 6): a patch over REST appears in a notebook open in JupyterLab, next to
the person's unsaved typing, without a reload dialog.

A real JupyterLab server (subprocess, loopback) with jupyter-collaboration; Playwright drives
Debian's Chromium (`chromium_path` skips, saying why, where it is not installed).
"""

from __future__ import annotations

import time
from pathlib import Path

import nbformat
import pytest
from playwright.sync_api import expect, sync_playwright
from testkit.rest import write_notebook

from bench.server import TOKEN, Client, LocalServer
from scripts.labrun import CHROMIUM_ARGS

NEWS_OFF = '{"fetchNews": "false", "checkForUpdates": false}'


def test_rest_patch_appears_live_in_an_open_notebook_tab(
    chromium_path: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root, home = tmp_path / "root", tmp_path / "home"
    write_notebook(root / "live.ipynb", "a = 1", "b = 2")
    settings = tmp_path / "lab-settings"
    notification = settings / "@jupyterlab" / "apputils-extension"
    notification.mkdir(parents=True)
    (notification / "notification.jupyterlab-settings").write_text(NEWS_OFF)
    monkeypatch.setenv("JUPYTERLAB_SETTINGS_DIR", str(settings))
    monkeypatch.setenv("JUPYTERLAB_WORKSPACES_DIR", str(tmp_path / "workspaces"))
    monkeypatch.chdir(tmp_path)  # the room's update store is created in the working directory
    args = ("--YDocExtension.document_save_delay=30",)  # only the agent's save writes the file
    with LocalServer(root, home, extra_args=args) as server, sync_playwright() as play:
        browser = play.chromium.launch(executable_path=chromium_path, args=CHROMIUM_ARGS)
        try:
            page = browser.new_page()
            page.goto(f"http://127.0.0.1:{server.port}/lab/tree/live.ipynb?token={TOKEN}")
            editors = page.locator(".jp-Notebook .jp-Cell .cm-content")
            expect(editors.nth(1)).to_contain_text("b = 2", timeout=60_000)
            editors.nth(0).click()
            page.keyboard.press("End")
            page.keyboard.type("  # typed")
            client = server.client()
            header = _live_header(client, "typed")
            reply = client.patch(f"{header}\nreplace 4:\n+b = 20\n")
            assert reply["sections"][0]["op"] == "update"
            expect(editors.nth(1)).to_contain_text("b = 20", timeout=10_000)
            expect(editors.nth(0)).to_contain_text("a = 1  # typed")
            page.wait_for_timeout(1500)  # the file watcher polls every second
            assert page.locator(".jp-Dialog").count() == 0
            expect(editors.nth(0)).to_contain_text("a = 1  # typed")
            saved = nbformat.read(root / "live.ipynb", as_version=4)
            assert [c.source for c in saved.cells] == ["a = 1  # typed", "b = 20"]
        finally:
            browser.close()


def _live_header(client: Client, text: str) -> str:
    """The header of a read that already shows the browser's typing (the room is live)."""
    deadline = time.monotonic() + 15
    while time.monotonic() < deadline:
        body = client.read("live.ipynb")
        if text in body["view"]:
            return str(body["header"])
        time.sleep(0.1)
    raise AssertionError("the typing in the browser never reached the server's shared document")
