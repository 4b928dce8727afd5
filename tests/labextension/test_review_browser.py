"""Review agent edits in a real JupyterLab with real-time collaboration, driven by Playwright
through Debian's Chromium (the story: scripts/review_story.py).

The person turns on "Review agent edits" in the sidebar. The agent edits two cells over REST:
nothing changes on disk, each cell shows the proposed change inline (CodeMirror's merge view)
with Accept / Reject, and the sidebar lists the proposal. The person types in a third cell
without saving, accepts one proposed cell and rejects the other: the open notebook and the file
hold the accepted change and the person's typing, not the rejected change, and the agent's next
call is told which. Then a proposal whose line the person changes meanwhile is refused on
accept, the reason shown on its cell, nothing written.
"""

from __future__ import annotations

import re
from pathlib import Path

from bench.server import TOKEN
from scripts.lab_story import AGENT, editors, story_lab, type_at_end_of_line
from scripts.review_story import (
    NOTEBOOK,
    SOURCES,
    agent_proposes,
    open_review_tab,
    proposal_box,
    sources_on_disk,
    wait_for_disk,
    write_review_notebook,
)

SETUP_NEW = "rate = 0.25  # agent"
REPORT_NEW = "print(f'total: {total:.2f}')  # agent"
TYPED = "  # typed, not saved"
VIEWPORT = {"width": 1400, "height": 900}


def test_a_person_reviews_agent_edits_per_cell_while_typing_in_another(
    chromium_path: str, built_labextension: Path, lab_env: Path
) -> None:
    from playwright.sync_api import expect

    root, home = lab_env / "root", lab_env / "home"
    write_review_notebook(root / NOTEBOOK)
    lab = story_lab(chromium_path, root, home, viewport=VIEWPORT, timeout_ms=30_000)
    with lab as (rest, page):
        page.goto(f"{rest.url}lab/tree/{NOTEBOOK}?token={TOKEN}")
        cells = editors(page)  # by cell: intro (markdown), setup, model, report
        expect(cells.nth(3)).to_contain_text("print(total)", timeout=60_000)

        # the person turns review on in the sidebar
        sidebar = open_review_tab(page)
        toggle = sidebar.locator(".jp-hashline-review-toggle input")
        expect(toggle).to_be_enabled()
        expect(toggle).not_to_be_checked()
        toggle.check()
        expect(toggle).to_be_checked()
        expect(toggle).to_be_enabled()  # the server answered
        assert rest.call("GET", "hashline/review")["mode"] == "on"

        reply = agent_proposes(rest, {"rate = 0.2": SETUP_NEW, "print(total)": REPORT_NEW})
        assert "PROPOSED, NOT written" in reply["text"], reply["text"]
        (proposal,) = reply["proposals"]
        assert {c["cell"] for c in proposal["cells"]} == {"setup", "report"}
        assert sources_on_disk(root) == SOURCES

        # each proposed cell shows its change inline, with Accept / Reject
        setup_box, report_box = proposal_box(page, 1), proposal_box(page, 3)
        expect(setup_box).to_have_count(1)
        expect(report_box).to_have_count(1)
        expect(proposal_box(page, 2)).to_have_count(0)
        expect(setup_box.locator(".jp-hashline-proposed-title")).to_have_text(
            f"{AGENT} proposes a change to this cell"
        )
        merge = setup_box.locator(".jp-hashline-merge .cm-editor")
        expect(merge).to_contain_text(SETUP_NEW)
        expect(merge.locator(".cm-deletedChunk")).to_contain_text("rate = 0.2")
        expect(report_box.locator(".cm-editor")).to_contain_text(REPORT_NEW)
        expect(cells.nth(1)).not_to_contain_text("# agent")  # nothing landed
        expect(sidebar.locator(".jp-hashline-tab-review")).to_have_text("Review (1)")
        item = sidebar.locator(".jp-hashline-proposal")
        expect(item.locator(".jp-hashline-proposal-counts")).to_have_text("2 changed")
        expect(item.locator(".jp-hashline-proposal-agent")).to_have_text(AGENT)

        # the person types in a third cell, unsaved, then decides each proposed cell
        type_at_end_of_line(page, 2, 1, TYPED)
        expect(cells.nth(2)).to_contain_text(f"total = sales['amount'].sum(){TYPED}")
        setup_box.locator(".jp-hashline-proposed-accept").click()
        expect(cells.nth(1)).to_contain_text(SETUP_NEW)
        expect(setup_box).to_have_count(0)
        report_box.locator(".jp-hashline-proposed-reject").click()
        expect(report_box).to_have_count(0)
        expect(cells.nth(3)).to_have_text("print(total)")
        expect(cells.nth(2)).to_contain_text(TYPED)
        on_disk = wait_for_disk(
            root,
            lambda s: SETUP_NEW in s["setup"] and TYPED in s["model"],
            "the accepted cell next to the person's typing",
        )
        assert on_disk["report"] == SOURCES["report"]
        assert on_disk["setup"] == "import pandas as pd\n" + SETUP_NEW
        expect(sidebar.locator(".jp-hashline-tab-review")).to_have_text("Review")
        expect(sidebar.locator(".jp-hashline-empty-title")).to_have_text("No proposals waiting")

        # the agent's next call says what became of its proposal, cell by cell
        read = rest.call("GET", f"hashline/read?path={NOTEBOOK}", agent=AGENT)
        told = "\n".join(read.get("review_updates", []))
        assert re.search(rf"{proposal['id']}.*setup.*accepted", told), told
        assert re.search(rf"{proposal['id']}.*report.*rejected", told), told
        assert SETUP_NEW in read["view"] and REPORT_NEW not in read["view"]

        # accepting after the person changed the very line is refused, on that cell
        reply = agent_proposes(rest, {"print(total)": REPORT_NEW})
        expect(report_box).to_have_count(1)
        type_at_end_of_line(page, 3, 0, "  # checked")
        before = sources_on_disk(root)
        report_box.locator(".jp-hashline-proposed-accept").click()
        refusal = report_box.locator(".jp-hashline-proposed-error")
        expect(refusal).to_contain_text("Not applied.")
        expect(report_box).to_have_class(re.compile("jp-mod-refused"))
        expect(cells.nth(3)).to_have_text("print(total)  # checked")
        assert sources_on_disk(root) == before
