"""The sidebar in a real JupyterLab, driven by Playwright through Debian's Chromium.

A JupyterLab process serves a temporary root holding a 30-cell notebook; its extension path
holds only a link to the freshly built sidebar, and its settings, workspaces and data live in
the test's temporary directory. Two edits go in over REST; then, in the browser: open the
sidebar, see both edits (newest first), expand one and read its diff, click it and land on the
edited cell (active and in view, far down the notebook), and after a reload the sidebar is
still open. The screenshot goes to artifacts/sidebar.png.

With the sidebar's fallback poll turned off in the user's settings (`pollIntervalMs: 0`), an
edit and a session post made over REST while the page is open reach the sidebar through the
server's event stream alone.
"""

from __future__ import annotations

import json
import re
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import nbformat
import pytest

from scripts.labrun import chromium_page, start_lab, stop

REPO = Path(__file__).resolve().parents[2]
ARTIFACTS = REPO / "artifacts"
TOKEN = "hashline-sidebar-test"
CELLS = 30
SIDEBAR_ID = "jupyter-hashline-sidebar"
VIEWPORT = {"width": 1400, "height": 900}


@dataclass(frozen=True, slots=True)
class Lab:
    url: str
    root: Path
    log: Path

    def call(self, method: str, route: str, body: Any = None) -> Any:
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(
            f"{self.url}{route}",
            data=data,
            method=method,
            headers={"Authorization": f"token {TOKEN}", "Content-Type": "application/json"},
        )
        with urllib.request.urlopen(request, timeout=30) as response:
            return json.loads(response.read())


def write_notebook(path: Path) -> None:
    cells = [nbformat.v4.new_markdown_cell("# Sidebar test notebook")]
    cells[0]["id"] = "title"
    for index in range(CELLS):
        cell = nbformat.v4.new_code_cell(f"value_{index:02d} = {index}")
        cell["id"] = f"c{index:02d}"
        cells.append(cell)
    nb = nbformat.v4.new_notebook(cells=cells)
    nb.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    path.write_text(nbformat.writes(nb) + "\n", encoding="utf-8")


@pytest.fixture
def lab(tmp_path: Path, built_labextension: Path) -> Iterator[Lab]:
    root = tmp_path / "root"
    root.mkdir()
    write_notebook(root / "analysis.ipynb")
    home = tmp_path / "home"
    home.mkdir()
    log = tmp_path / "lab.log"
    proc, url = start_lab(root, home, log, TOKEN, built_labextension, timeout_s=60)
    try:
        yield Lab(url=url, root=root, log=log)
    finally:
        stop(proc)


@pytest.fixture
def lab_without_poll(tmp_path: Path, built_labextension: Path) -> Iterator[Lab]:
    """A lab whose user settings turn the sidebar's fallback poll off."""
    root = tmp_path / "root"
    root.mkdir()
    write_notebook(root / "analysis.ipynb")
    home = tmp_path / "home"
    settings = home / "settings" / "jupyter-hashline" / "sidebar.jupyterlab-settings"
    settings.parent.mkdir(parents=True)
    settings.write_text(json.dumps({"pollIntervalMs": 0}))
    log = tmp_path / "lab.log"
    proc, url = start_lab(root, home, log, TOKEN, built_labextension, timeout_s=60)
    try:
        yield Lab(url=url, root=root, log=log)
    finally:
        stop(proc)


def line_of(view: str, text: str) -> int:
    match = re.search(rf"^(\d+):{re.escape(text)}$", view, re.M)
    assert match, f"{text!r} not in the read view"
    return int(match.group(1))


def replace_line(lab: Lab, header: str, line: int, new: str) -> dict[str, Any]:
    reply: dict[str, Any] = lab.call(
        "POST", "hashline/patch", {"patch": f"{header}\nreplace {line}:\n+{new}\n"}
    )
    assert reply["sections"][0]["op"] == "update", reply["text"]
    return reply


def make_two_edits(lab: Lab) -> None:
    """Edit cell c25 (far down), then cell c03 on the header the first reply returned."""
    read = lab.call("GET", "hashline/read?path=analysis.ipynb")
    first = replace_line(
        lab, read["header"], line_of(read["view"], "value_25 = 25"), "value_25 = 2500  # agent"
    )
    replace_line(
        lab, first["sections"][0]["header"], line_of(read["view"], "value_03 = 3"), "value_03 = 300"
    )
    edits = lab.call("GET", "hashline/activity")["edits"]
    assert [edit["cells"] for edit in edits] == [["c03"], ["c25"]]


def test_sidebar_shows_edits_diff_and_opens_the_cell(lab: Lab, chromium_path: str) -> None:
    from playwright.sync_api import expect

    make_two_edits(lab)
    ARTIFACTS.mkdir(exist_ok=True)
    with chromium_page(chromium_path, viewport=VIEWPORT, timeout_ms=20_000) as page:
        page.goto(f"{lab.url}lab?token={TOKEN}")

        tab = page.locator(f'.jp-SideBar .lm-TabBar-tab[data-id="{SIDEBAR_ID}"]')
        tab.click()
        sidebar = page.locator(f"#{SIDEBAR_ID}")
        expect(sidebar).to_be_visible()

        edits = sidebar.locator(".jp-hashline-edit")
        expect(edits).to_have_count(2)
        expect(edits.locator(".jp-hashline-edit-open")).to_have_text(
            ["analysis.ipynb", "analysis.ipynb"]
        )
        expect(edits.locator(".jp-hashline-cells")).to_have_text(["cell c03", "cell c25"])

        c25 = edits.nth(1)
        c25.locator(".jp-hashline-edit-toggle").click()
        diff_text = ".jp-hashline-diff-{} .jp-hashline-diff-text"
        expect(c25.locator(diff_text.format("del"))).to_have_text(["-value_25 = 25"])
        expect(c25.locator(diff_text.format("add"))).to_have_text(["+value_25 = 2500  # agent"])
        expect(edits.nth(0).locator(".jp-hashline-diff")).to_have_count(0)

        c25.locator(".jp-hashline-edit-open").click()
        active = page.locator(".jp-NotebookPanel .jp-Notebook .jp-Cell.jp-mod-active")
        expect(active).to_have_count(1)
        expect(active.locator(".jp-InputArea-editor")).to_contain_text("value_25 = 2500  # agent")
        expect(active).to_be_in_viewport()
        expect(
            page.locator(".jp-Notebook .jp-Cell", has_text="value_00 = 0")
        ).not_to_be_in_viewport()
        page.screenshot(path=str(ARTIFACTS / "sidebar.png"))

        wait_for_saved_layout(lab)
        page.reload()
        expect(page.locator(f"#{SIDEBAR_ID}")).to_be_visible()
        expect(page.locator(f"#{SIDEBAR_ID} .jp-hashline-edit")).to_have_count(2)


def wait_for_saved_layout(lab: Lab) -> None:
    """Wait until the workspace the layout restorer saves records the open sidebar."""
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        workspaces = lab.call("GET", "lab/api/workspaces")
        if SIDEBAR_ID in json.dumps(workspaces):
            return
        time.sleep(0.25)
    raise AssertionError("the workspace never recorded the hashline sidebar as open")


@dataclass
class Traffic:
    """What the page fetched from hashline/ and what its event socket received, with times."""

    fetches: list[tuple[float, str]]
    frames: list[tuple[float, str]]

    def fetched(self, route: str, after: float = 0.0) -> list[float]:
        return [at for at, url in self.fetches if f"/hashline/{route}" in url and at > after]

    def first_frame(self, text: str) -> float | None:
        return next((at for at, payload in self.frames if text in payload), None)


def wait_until(page: Any, check: Any, timeout_s: float, what: str) -> None:
    """Let the page run (its events dispatch) until `check()` holds."""
    deadline = time.monotonic() + timeout_s
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        page.wait_for_timeout(100)


def test_with_the_poll_off_edits_and_sessions_arrive_by_server_events(
    lab_without_poll: Lab, chromium_path: str
) -> None:
    from playwright.sync_api import expect

    lab = lab_without_poll
    traffic = Traffic(fetches=[], frames=[])
    with chromium_page(chromium_path, viewport=VIEWPORT, timeout_ms=20_000) as page:
        page.on("request", lambda r: traffic.fetches.append((time.monotonic(), r.url)))
        with page.expect_websocket(lambda ws: "api/events/subscribe" in ws.url) as opened:
            page.goto(f"{lab.url}lab?token={TOKEN}")
        opened.value.on(
            "framereceived",
            lambda payload: traffic.frames.append((time.monotonic(), str(payload))),
        )
        page.locator(f'.jp-SideBar .lm-TabBar-tab[data-id="{SIDEBAR_ID}"]').click()
        sidebar = page.locator(f"#{SIDEBAR_ID}")
        expect(sidebar).to_have_attribute("data-poll-interval-ms", "0")
        expect(sidebar.locator(".jp-hashline-empty-title")).to_have_text("No edits yet")

        # the socket is live: a server event of another kind (a contents read) arrives,
        # and the sidebar does not fetch for it
        settled = time.monotonic()
        lab.call("GET", "api/contents/analysis.ipynb?content=0")
        wait_until(page, lambda: traffic.first_frame("contents_service"), 10, "any event")
        page.wait_for_timeout(500)
        assert traffic.fetched("activity", after=settled) == []

        edit_started = time.monotonic()
        read = lab.call("GET", "hashline/read?path=analysis.ipynb")
        line = line_of(read["view"], "value_07 = 7")
        replace_line(lab, read["header"], line, "value_07 = 700  # agent")
        edits = sidebar.locator(".jp-hashline-edit")
        expect(edits).to_have_count(1, timeout=15_000)
        expect(edits.locator(".jp-hashline-cells")).to_have_text(["cell c07"])
        event_at = traffic.first_frame("jupyter_hashline/activity/v1")
        assert event_at is not None and event_at > edit_started
        fetches = traffic.fetched("activity", after=edit_started)
        assert fetches and min(fetches) >= event_at  # fetched because the event came

        quiet_from = time.monotonic()
        page.wait_for_timeout(3000)  # nothing polls
        assert traffic.fetched("activity", after=quiet_from) == []

        sidebar.locator(".jp-hashline-tab-sessions").click()
        expect(sidebar.locator(".jp-hashline-empty-title")).to_have_text(
            "No agent sessions registered"
        )
        snapshot = {"zones": {}, "cache": {}, "audit": [], "edits": []}
        lab.call("POST", "hashline/sessions", {"label": "agent by event", "snapshot": snapshot})
        expect(sidebar.locator(".jp-hashline-session-name")).to_have_text(
            ["agent by event"], timeout=15_000
        )
        assert traffic.first_frame("jupyter_hashline/session/v1") is not None
