"""Undo an agent's edit from the sidebar, in a real JupyterLab with real-time collaboration,
driven by Playwright through Debian's Chromium (the story: scripts/undo_story.py).

A person types unsaved text in one cell while the agent edits another: the edited cell gets a
badge (hover: the cell's diff; a click opens its entry in the sidebar); Undo there removes the
agent's change in the open notebook and on disk, the person's typing kept. The agent edits
again; the person changes the very line it wrote (the badge clears): the second Undo is
refused, the sidebar says why, nothing changes. A badge the person dismisses stays dismissed.
"""

from __future__ import annotations

import re
import time
from pathlib import Path
from typing import Any

import nbformat

from bench.server import TOKEN
from scripts.lab_story import editors, story_lab, type_at_end_of_line, write_notebook
from scripts.undo_story import (
    NOTEBOOK,
    agent_edits_while_person_types,
    agent_replaces,
    sources_on_disk,
    wait_for_disk,
    write_story_notebook,
)

VIEWPORT = {"width": 1400, "height": 900}


def wait_for_room(rest: Any, page: Any, text: str) -> None:
    """Let the page run until the server's copy of the open notebook holds `text` (a read
    there shows the room's document, the person's unsaved typing included)."""
    deadline = time.monotonic() + 30
    while text not in rest.call("GET", f"hashline/read?path={NOTEBOOK}", agent="observer")["view"]:
        assert time.monotonic() < deadline, f"{text!r} never reached the server's room"
        page.wait_for_timeout(100)


def test_undo_from_the_sidebar_keeps_the_persons_typing_and_refuses_a_changed_line(
    chromium_path: str, built_labextension: Path, lab_env: Path
) -> None:
    from playwright.sync_api import expect

    root, home = lab_env / "root", lab_env / "home"
    write_story_notebook(root / NOTEBOOK)
    lab = story_lab(chromium_path, root, home, viewport=VIEWPORT, timeout_ms=30_000)
    with lab as (rest, page):
        page.goto(f"{rest.url}lab/tree/{NOTEBOOK}?token={TOKEN}")
        cells = editors(page)
        expect(cells.nth(2)).to_contain_text("print(total)", timeout=60_000)

        agent_edits_while_person_types(page, rest)  # typing in setup, the agent in model
        expect(cells.nth(2)).to_contain_text("(1 - rate)  # agent")
        badge = page.locator(".jp-Cell .jp-hashline-badge")
        expect(badge).to_have_count(1)
        expect(badge.locator(".jp-hashline-badge-open")).to_contain_text("claude-code")

        expect(badge).to_have_attribute("title", re.compile(r"\(1 - rate\)  # agent"))
        badge.locator(".jp-hashline-badge-open").click()  # the badge opens its entry
        sidebar = page.locator("#jupyter-hashline-sidebar")
        expect(sidebar).to_be_visible()
        edit = sidebar.locator(".jp-hashline-edit").first
        expect(edit).to_have_class(re.compile("jp-mod-expanded"))
        expect(edit.locator(".jp-hashline-who")).to_have_text("claude-code")
        expect(edit.locator(".jp-hashline-cell-diff-title")).to_have_text(["cell model"])
        edit.locator(".jp-hashline-undo").click()
        expect(cells.nth(2)).not_to_contain_text("# agent")
        expect(cells.nth(2)).to_contain_text("total = sales['amount'].sum()")
        expect(cells.nth(1)).to_contain_text("rate = 0.2  # typed, not saved")
        wait_for_disk(
            root,
            lambda s: "# agent" not in s[2] and "typed, not saved" in s[1],
            "the undo next to the person's typing",
        )
        expect(badge).to_have_count(0)  # the edit it stood for is undone
        expect(sidebar.locator(".jp-hashline-edit.jp-mod-revert")).to_have_count(1)

        agent_replaces(rest, "print(total)", "print(round(total, 2))  # agent", lambda v: True)
        expect(cells.nth(2)).to_contain_text("round(total, 2)")
        expect(badge).to_have_count(1)
        type_at_end_of_line(page, 2, 2, " # checked")  # the person edits the very line
        expect(badge).to_have_count(0)
        expect(cells.nth(2)).to_contain_text("# agent # checked")
        wait_for_room(rest, page, "# agent # checked")  # the keystrokes reach the server
        second = sidebar.locator(".jp-hashline-edit").first
        expect(second.locator(".jp-hashline-edit-open")).to_have_text(NOTEBOOK)
        expect(second).not_to_have_class("jp-mod-revert")
        second.locator(".jp-hashline-edit-toggle").click()
        before = sources_on_disk(root)
        second.locator(".jp-hashline-undo").click()
        error = second.locator(".jp-hashline-undo-error")
        expect(error).to_contain_text("refused")
        expect(error).to_contain_text("# agent # checked")  # the line, as it is now
        expect(cells.nth(2)).to_contain_text("print(round(total, 2))  # agent # checked")
        assert sources_on_disk(root) == before

        # a dismissed badge stays dismissed when the next activity arrives
        agent_replaces(rest, "rate = 0.2  # typed, not saved", "rate = 0.25", lambda v: True)
        expect(badge).to_have_count(1)
        badge.locator(".jp-hashline-badge-dismiss").click()
        expect(badge).to_have_count(0)
        (root / "notes.txt").write_text("todo\n")
        read = rest.call("GET", "hashline/read?path=notes.txt", agent="claude-code")
        patch = f"{read['header']}\nreplace 1:\n+done\n"
        rest.call("POST", "hashline/patch", {"patch": patch}, agent="claude-code")
        expect(sidebar.locator(".jp-hashline-counts")).to_have_text("5 edits")
        expect(badge).to_have_count(0)


def test_follow_scrolls_the_notebook_to_the_cell_an_agent_edits(
    chromium_path: str, built_labextension: Path, lab_env: Path
) -> None:
    from playwright.sync_api import Error as PlaywrightError
    from playwright.sync_api import expect

    root, home = lab_env / "root", lab_env / "home"
    steps = [nbformat.v4.new_code_cell(f"step_{n:02d} = {n}", id=f"c{n:02d}") for n in range(40)]
    write_notebook(root / "long.ipynb", steps)
    lab = story_lab(chromium_path, root, home, viewport=VIEWPORT, timeout_ms=30_000, server_args=())
    with lab as (rest, page):
        page.goto(f"{rest.url}lab/tree/long.ipynb?token={TOKEN}")
        first = page.locator(".jp-Notebook .jp-Cell", has_text="step_00 = 0")
        expect(first).to_be_in_viewport(timeout=60_000)
        # the palette's query is filled on its input element, never typed: a key that
        # reaches the notebook instead is a shortcut (A inserts a cell). The shortcut that
        # opens the palette can be lost while JupyterLab settles, and the palette can close
        # again: open it, fill it, and check the command is the one chosen, a bounded
        # number of times; Enter is pressed on the query itself.
        palette = page.locator("#modal-command-palette")
        query = palette.locator("input")
        chosen = palette.locator(".lm-CommandPalette-item.lm-mod-active")
        # the extension adds its command when it adds its sidebar: wait for the sidebar's tab
        tab = page.locator('.jp-SideBar [data-id="jupyter-hashline-sidebar"]')
        expect(tab).to_have_count(1, timeout=60_000)
        for attempt in range(10):
            page.locator(".jp-Notebook").first.click()
            page.keyboard.press("Control+Shift+C")
            try:
                expect(query).to_be_focused(timeout=3_000)
                query.fill("Follow Agent Edits", timeout=3_000)
                expect(chosen).to_contain_text("Follow Agent Edits", timeout=5_000)
                break
            except (AssertionError, PlaywrightError):
                assert attempt < 9, "the command palette never chose Follow Agent Edits"
                if query.is_visible():
                    query.press("Escape")
        query.press("Enter")
        # the palette closes once the toggle ran: only then may the agent's edit arrive
        expect(page.locator("#modal-command-palette")).to_be_hidden(timeout=30_000)
        read = rest.call("GET", "hashline/read?path=long.ipynb", agent="claude-code")
        line = re.search(r"^(\d+):step_35 = 35$", read["view"], re.M)
        assert line is not None
        patch = f"{read['header']}\nreplace {line.group(1)}:\n+step_35 = 350  # agent\n"
        rest.call("POST", "hashline/patch", {"patch": patch}, agent="claude-code")
        followed = page.locator(".jp-Notebook .jp-Cell", has_text="step_35 = 350  # agent")
        expect(followed).to_be_in_viewport(timeout=30_000)
        expect(first).not_to_be_in_viewport(timeout=30_000)
