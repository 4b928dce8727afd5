"""What the stories in a real JupyterLab share (scripts/undo_story.py, scripts/review_story.py),
for their browser tests and their screenshot scripts alike.

A story runs a jupyter_server with jupyter_hashline and real-time collaboration on loopback
(`story_lab`), a notebook the story writes, the agent `claude-code` calling the REST API
(`Rest`), and a person in Chromium who types into cells and opens the sidebar. A screenshot
script hands its notebook and its shots to `shoot_story`, which gives it its command line, a
temporary working place and the notebook open in the page; `widen` and `shoot_down_to` frame
the shots.

Invariants:
- Every wait is on a condition (a locator's state, the file's content), bounded.
- The room saves only when hashline saves it (`LIVE_ROOM_ARGS`), so the file changes only when
  an agent's edit or a person's decision lands, never on a timer.
- Nothing outside the temporary directory a story is given is written; the server and the
  browser are stopped when their block ends, however it ends.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import tempfile
import time
import urllib.request
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import nbformat

from bench.server import TOKEN, LocalServer
from scripts.labrun import chromium_page, quiet_lab_settings

if TYPE_CHECKING:
    from nbformat import NotebookNode
    from playwright.sync_api import Locator, Page, ViewportSize

REPO = Path(__file__).resolve().parent.parent
AGENT = "claude-code"
SIDEBAR_ID = "jupyter-hashline-sidebar"
LIVE_ROOM_ARGS = ("--YDocExtension.document_save_delay=30",)
"""Server flags for a story: the room's own autosave waits 30 s, so only hashline's saves (an
agent's edit, a person's decision) write the file while the story runs."""
MAX_WIDTH = 760
"""The docs' column: no screenshot is wider, so none is scaled down there (a test checks)."""

T = TypeVar("T")


class Rest:
    """The hashline REST API of a server, as the agent (or a person, without `agent`)."""

    def __init__(self, url: str, token: str) -> None:
        self.url, self.token = url.rstrip("/") + "/", token

    def call(self, method: str, route: str, body: Any = None, agent: str | None = None) -> Any:
        headers = {"Authorization": f"token {self.token}", "Content-Type": "application/json"}
        if agent:
            headers["X-Hashline-Agent"] = agent
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(
            self.url + route, data=data, method=method, headers=headers
        )
        with urllib.request.urlopen(request, timeout=30) as response:
            return json.loads(response.read())

    def agent_reads(self, path: str) -> dict[str, Any]:
        """The agent's read of `path`: its `header` and numbered `view`."""
        read: dict[str, Any] = self.call("GET", f"hashline/read?path={path}", agent=AGENT)
        return read


def line_number(view: str, line: str) -> str:
    """The number a read's view gives the line that reads exactly `line`."""
    match = re.search(rf"^(\d+):{re.escape(line)}$", view, re.M)
    assert match, f"{line!r} is not in the view:\n{view}"
    return match.group(1)


def write_notebook(path: Path, cells: list[NotebookNode]) -> None:
    """A Python notebook of `cells` at `path` (its folder made), as Jupyter writes one."""
    nb = nbformat.v4.new_notebook(cells=cells)
    nb.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(nbformat.writes(nb) + "\n", encoding="utf-8")


def wait_for_file(read: Callable[[], T], check: Callable[[T], bool], what: str) -> T:
    """Until what `read()` finds on disk satisfies `check` (the room saves after a short
    delay); a read that fails mid-save counts as not yet."""
    deadline = time.monotonic() + 20
    while True:
        found: T | None
        try:
            found = read()
        except (OSError, ValueError):  # mid-save
            found = None
        if found and check(found):
            return found
        if time.monotonic() > deadline:
            raise AssertionError(f"the file never showed {what}: {found}")
        time.sleep(0.1)


# -- the person, in the browser ---------------------------------------------------------------


def editors(page: Page) -> Locator:
    """Each cell's own editor, in notebook order (a rendered markdown cell keeps a hidden one),
    not the merge views of the proposals shown on them."""
    return page.locator(".jp-NotebookPanel .jp-Notebook .jp-Cell-inputWrapper .cm-content")


def type_at_end_of_line(page: Page, cell: int, line: int, text: str) -> None:
    """A person clicks into line `line` (0-based) of cell `cell`, goes to its end, types."""
    editors(page).nth(cell).locator(".cm-line").nth(line).click()
    page.keyboard.press("End")
    page.keyboard.type(text)


def open_sidebar(page: Page) -> Locator:
    """The hashline sidebar, opened from its tab unless it is showing."""
    sidebar = page.locator(f"#{SIDEBAR_ID}")
    if not sidebar.is_visible():
        page.locator(f'.jp-SideBar .lm-TabBar-tab[data-id="{SIDEBAR_ID}"]').click()
    return sidebar


@contextmanager
def story_lab(
    chromium: str,
    root: Path,
    home: Path,
    *,
    viewport: ViewportSize,
    timeout_ms: float,
    server_args: tuple[str, ...] = LIVE_ROOM_ARGS,
) -> Iterator[tuple[Rest, Page]]:
    """A server on `root` (its config, store and log in `home`) and a Chromium page, with the
    REST API as `Rest`; both stopped when the block ends. JupyterLab's settings, workspaces
    and the room's update store come from the environment and working directory, so the
    caller sets those first (`quiet_lab_settings`, a temporary working directory)."""
    with (
        LocalServer(root, home, extra_args=server_args) as server,
        chromium_page(chromium, viewport=viewport, timeout_ms=timeout_ms) as page,
    ):
        yield Rest(f"http://127.0.0.1:{server.port}/", TOKEN), page


# -- screenshots ------------------------------------------------------------------------------


def shoot_story(
    description: str,
    argv: list[str] | None,
    *,
    notebook: str,
    write: Callable[[Path], None],
    viewport: ViewportSize,
    shoot: Callable[[Rest, Page, Path], None],
) -> Path:
    """A screenshot script's run: its flags (`--out-dir`, `--chromium`; `description` for
    `--help`), then a story lab in a temporary directory (the working directory, where the
    room's update store is created, and JupyterLab's settings, news off) with `write` making
    `notebook` in its root, that notebook opened in the page, and `shoot` on the page. Returns
    the directory shot into."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--out-dir", type=Path, default=REPO / "artifacts")
    parser.add_argument("--chromium", default=shutil.which("chromium") or "/usr/bin/chromium")
    args = parser.parse_args(argv)
    out: Path = args.out_dir.resolve()  # resolved before the working directory changes
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="hashline-story-shot-") as tmp:
        base = Path(tmp)
        os.environ.update(quiet_lab_settings(base))
        os.chdir(base)
        write(base / "root" / notebook)
        lab = story_lab(
            args.chromium, base / "root", base / "home", viewport=viewport, timeout_ms=60_000
        )
        with lab as (rest, page):
            page.goto(f"{rest.url}lab/tree/{notebook}?token={rest.token}")
            shoot(rest, page, out)
    return out


def widen(page: Page, sidebar: Locator, width: int) -> None:
    """Make the left panel `width` wide, as a person drags its edge."""
    box = sidebar.bounding_box()
    assert box is not None
    handle_x = box["x"] + box["width"] + 2
    page.mouse.move(handle_x, box["y"] + 200)
    page.mouse.down()
    page.mouse.move(box["x"] + width, box["y"] + 200, steps=5)
    page.mouse.up()


def shoot_down_to(page: Page, frame: Locator, last: Locator, path: Path, pad: int) -> None:
    """Save `frame` from its top to `pad` pixels below `last` (no empty space under it), at
    most `MAX_WIDTH` wide."""
    box, end = frame.bounding_box(), last.bounding_box()
    assert box is not None and end is not None
    height = end["y"] + end["height"] - box["y"] + pad
    width = min(box["width"], MAX_WIDTH)
    page.screenshot(
        path=str(path), clip={"x": box["x"], "y": box["y"], "width": width, "height": height}
    )
