"""The example agent notebook run in a real JupyterLab fills the sidebar.

JupyterLab serves a copy of examples/; Chromium opens `agent_edits_notebook.ipynb` and runs all
its cells. Its `Session` runs in a kernel the server started, so it edits through that server
(`via="auto"`): the sidebar's Activity tab lists the agent's edits and its run of the summary
cells in the edited notebook's own server kernel (each cell ok; all named by the session id)
and its Snapshots tab the notebook it read. The screenshot goes to artifacts/example-lab.png.
"""

from __future__ import annotations

import json
import re
import shutil
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from scripts.labrun import chromium_page, start_lab, stop

REPO = Path(__file__).resolve().parents[2]
ARTIFACTS = REPO / "artifacts"
TOKEN = "hashline-example-test"
SIDEBAR_ID = "jupyter-hashline-sidebar"
EDITED = "scratch/sales_agent.ipynb"
VIEWPORT = {"width": 1400, "height": 900}


@pytest.fixture
def lab(tmp_path: Path, built_labextension: Path) -> Iterator[tuple[str, Path]]:
    root = tmp_path / "examples"
    shutil.copytree(REPO / "examples", root, ignore=shutil.ignore_patterns("scratch"))
    home = tmp_path / "home"
    home.mkdir()
    proc, url = start_lab(root, home, tmp_path / "lab.log", TOKEN, built_labextension)
    try:
        yield url, root
    finally:
        stop(proc)


def api(url: str, route: str) -> Any:
    request = urllib.request.Request(
        f"{url}hashline/{route}", headers={"Authorization": f"token {TOKEN}"}
    )
    with urllib.request.urlopen(request, timeout=30) as response:
        return json.loads(response.read())


def test_the_example_run_in_lab_fills_activity_and_snapshots(
    lab: tuple[str, Path], chromium_path: str
) -> None:
    from playwright.sync_api import expect

    url, root = lab
    ARTIFACTS.mkdir(exist_ok=True)
    with chromium_page(chromium_path, viewport=VIEWPORT, timeout_ms=30_000) as page:
        try:
            page.goto(f"{url}lab/tree/agent_edits_notebook.ipynb?token={TOKEN}")
            expect.set_options(timeout=30_000)
            expect(page.locator(".jp-Notebook .jp-Cell").first).to_be_visible(timeout=90_000)
            # the kernel is up (status bar) before the cells are run
            idle = page.locator("#jp-main-statusbar").get_by_text(re.compile(r"\| Idle$"))
            expect(idle).to_be_visible(timeout=120_000)
            page.locator(".lm-MenuBar-itemLabel", has_text="Run").click()
            menu = page.locator(".lm-Menu-itemLabel")
            menu.get_by_text("Run All Cells", exact=True).click()
            first_run = page.locator(".jp-InputPrompt", has_text="[1]:")
            expect(first_run).to_have_count(1, timeout=120_000)

            page.locator(f'.jp-SideBar .lm-TabBar-tab[data-id="{SIDEBAR_ID}"]').click()
            sidebar = page.locator(f"#{SIDEBAR_ID}")
            expect(sidebar).to_be_visible()
            edits = sidebar.locator(".jp-hashline-edit")
            expect(edits).to_have_count(3, timeout=120_000)
            expect(edits.locator(".jp-hashline-edit-open")).to_have_text([EDITED] * 3)
            [session] = api(url, "sessions")["sessions"]  # the agent: provider/model #n, readable
            assert re.fullmatch(r"[a-z]+/[\w.-]+ #\d+", session["label"]), session["label"]
            expect(edits.locator(".jp-hashline-who")).to_have_text([session["label"]] * 3)
            run = edits.first  # newest first: the run of the cells the summary needs
            expect(run.locator(".jp-hashline-run-cell")).to_have_text(
                ["imports", "load-data", "totals", "summary"]
            )
            expect(run.locator(".jp-hashline-run-status")).to_have_text(["ok"] * 4)

            sidebar.locator(".jp-hashline-tab", has_text="Snapshots").click()
            expect(sidebar.locator(".jp-hashline-snapshots")).to_contain_text(EDITED)
            page.screenshot(path=str(ARTIFACTS / "example-lab.png"))
        except Exception:
            page.screenshot(path=str(ARTIFACTS / "example-lab-failed.png"))
            raise
    activity = api(url, "activity")["edits"]
    sessions = api(url, "sessions")["sessions"]
    assert len(sessions) == 1 and {edit["who"] for edit in activity} == {sessions[0]["label"]}
    assert (sessions[0]["edits"], sessions[0]["runs"]) == (2, 1)  # runs counted apart
    assert "by_region = {}" in (root / EDITED).read_text()
    assert "best month: 2026-03" in (root / EDITED).read_text()  # the run's saved output
    assert [edit["op"] for edit in activity] == ["run", "update", "update"]
