"""Review mode: an agent's edit or write waits as a proposal; a person accepts or rejects it
per cell, on the notebook as it is then (the stale-edit rebase keeps the person's changes, or
the accept is refused with nothing written); the agent hears of each decision once."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from test_workspace_revert import TWENTY, cells, notebook, person_sets, workspace

from jupyter_hashline.tools import (
    REVIEW_TOOL_NAMES,
    TOOL_NAMES,
    TOOL_SPECS,
    ReviewMode,
    ReviewPolicy,
    ToolOutcome,
    Workspace,
    decision_request,
    mcp_definitions,
    run_tool,
)
from jupyter_hashline.tools.errors import BadArgumentsError

REVIEW = ReviewPolicy(ReviewMode.ON)
TWO_CELLS = "replace 6:\n+x = 10\nreplace 10:\n+z = x * y * 2\n"


async def propose(ws: Workspace, body: str, path: str = "a.ipynb", agent: str = "bot") -> Any:
    read = await run_tool(ws, "notebook_read", {"path": path}, agent=agent)
    header = read.reply["header"]
    outcome = await run_tool(ws, "notebook_edit", {"patch": f"{header}\n{body}"}, agent=agent)
    assert not outcome.is_error, outcome.text
    (proposal,) = outcome.reply["proposals"]
    return outcome, proposal


async def decide(
    ws: Workspace, proposal: int, accept: bool = True, who: str = "person", **body: Any
) -> ToolOutcome:
    request = decision_request(body, agent=who, accept=accept, proposal=proposal)
    return await ws.decide(request)


async def test_a_proposed_edit_writes_nothing_and_says_it_waits_for_review() -> None:
    inner, ws = workspace({"a.ipynb": notebook()}, review=REVIEW)
    before = inner.get("a.ipynb")
    outcome, proposal = await propose(ws, TWO_CELLS)
    assert inner.get("a.ipynb") == before
    assert "PROPOSED, NOT written: proposal 1 (cells load, plot)" in outcome.text
    assert outcome.reply["activity"] == [] and ws.activity.recent() == []
    assert [(c["cell"], c["kind"], c["status"]) for c in proposal["cells"]] == [
        ("load", "changed", "pending"),
        ("plot", "changed", "pending"),
    ]
    assert proposal["cells"][0]["after"] == "import math\nx = 10\ny = 2\nprint(x + y)\n"
    assert "-x = 1\n+x = 10\n" in proposal["cells"][0]["diff"]


async def test_a_call_may_propose_where_review_is_off_and_agents_have_their_own_mode() -> None:
    inner, ws = workspace({"t.txt": TWENTY})
    read = await run_tool(ws, "notebook_read", {"path": "t.txt"}, agent="bot")
    patch = read.text.split("\n")[0] + "\nreplace 3:\n+THREE\n"
    asked = await run_tool(ws, "notebook_edit", {"patch": patch, "propose": True}, agent="bot")
    assert asked.reply["proposals"][0]["cells"][0]["cell"] == "file"
    assert inner.get("t.txt") == TWENTY
    ws.review = ws.review.with_mode(ReviewMode.ON, agent="bot")
    again = await run_tool(ws, "notebook_edit", {"patch": patch}, agent="bot")
    assert again.reply["proposals"] and inner.get("t.txt") == TWENTY
    other = await run_tool(ws, "notebook_read", {"path": "t.txt"}, agent="other")
    patch = other.text.split("\n")[0] + "\nreplace 3:\n+THREE\n"
    landed = await run_tool(ws, "notebook_edit", {"patch": patch}, agent="other")
    assert not landed.reply.get("proposals") and "THREE\n" in inner.get("t.txt")


async def test_accept_one_cell_and_reject_another_after_a_persons_save_elsewhere() -> None:
    inner, ws = workspace({"a.ipynb": notebook()}, review=REVIEW)
    _, proposal = await propose(ws, TWO_CELLS)
    person_sets(inner, 0, "# Title\nthe person's text")  # another cell, saved meanwhile
    accepted = await decide(ws, proposal["id"], cells=["load"])
    assert not accepted.is_error, accepted.text
    (record,) = accepted.activity
    assert (record.who, record.source, record.undoable) == ("bot", "proposal", True)
    rejected = await decide(ws, proposal["id"], accept=False, cells=["plot"], note="keep z")
    assert not rejected.is_error, rejected.text
    now = cells(inner)
    assert now["intro"]["source"] == "# Title\nthe person's text"
    assert now["load"]["source"] == "import math\nx = 10\ny = 2\nprint(x + y)"
    assert now["load"]["outputs"][0]["text"] == "3\n"  # outputs and metadata stay
    assert now["plot"]["source"] == "z = x * y\nz"
    assert rejected.reply["proposal"]["status"] == "partly accepted"
    told = await run_tool(ws, "notebook_read", {"path": "a.ipynb"}, agent="bot")
    assert told.reply["review_updates"] == [
        f"Proposal 1 (a.ipynb, cells load) was accepted by person and landed: now "
        f"{accepted.reply['activity'][0]['header_after']}; still pending: plot.",
        "Proposal 1 (a.ipynb, cells plot) was rejected by person: keep z. Nothing of it was "
        "written.",
    ]
    assert told.text.startswith("review: Proposal 1")
    again = await run_tool(ws, "notebook_read", {"path": "a.ipynb"}, agent="bot")
    assert "review_updates" not in again.reply  # told once


async def test_accept_after_the_person_changed_the_same_line_is_refused() -> None:
    inner, ws = workspace({"a.ipynb": notebook()}, review=REVIEW)
    _, proposal = await propose(ws, TWO_CELLS)
    person_sets(inner, 1, "import math\nx = 11  # person\ny = 2\nprint(x + y)")
    before = inner.get("a.ipynb")
    refused = await decide(ws, proposal["id"])
    assert (refused.is_error, refused.kind, refused.status) == (True, "proposal_refused", 409)
    assert inner.get("a.ipynb") == before
    assert "stays pending" in refused.text
    listed = await ws.proposals("a.ipynb")
    assert listed["proposals"][0]["status"] == "pending"
    plot_only = await decide(ws, proposal["id"], cells=["plot"])  # the other cell still lands
    assert not plot_only.is_error, plot_only.text
    assert cells(inner)["plot"]["source"] == "z = x * y * 2\nz"
    assert cells(inner)["load"]["source"].startswith("import math\nx = 11  # person")


async def test_reject_leaves_the_file_byte_identical() -> None:
    inner, ws = workspace({"a.ipynb": notebook()}, review=REVIEW)
    before = inner.get("a.ipynb")
    _, proposal = await propose(ws, TWO_CELLS + "insert after 11:\n+# %% [markdown]\n+The end\n")
    assert [c["cell"] for c in proposal["cells"]][-1] == "new-1"
    assert proposal["cells"][-1]["after_cell"] == "plot"
    rejected = await decide(ws, proposal["id"], accept=False)
    assert not rejected.is_error and rejected.reply["proposal"]["status"] == "rejected"
    assert inner.get("a.ipynb") == before
    twice = await decide(ws, proposal["id"])
    assert (twice.kind, twice.status) == ("proposal_decided", 409)
    assert inner.get("a.ipynb") == before


async def test_inserted_and_deleted_cells_are_cells_of_the_proposal() -> None:
    inner, ws = workspace({"a.ipynb": notebook()}, review=REVIEW)
    _, proposal = await propose(ws, "delete 9..11\ninsert after 3:\n+# %% [code]\n+print('new')\n")
    kinds = {c["cell"]: c["kind"] for c in proposal["cells"]}
    assert kinds == {"new-1": "inserted", "plot": "deleted"}
    accepted = await decide(ws, proposal["id"], cells=["new-1"])
    assert not accepted.is_error, accepted.text
    assert [c["source"] for c in cells(inner).values()][1] == "print('new')"
    assert "plot" in cells(inner)
    deleted = await decide(ws, proposal["id"], cells=["plot"])
    assert not deleted.is_error, deleted.text
    assert "plot" not in cells(inner) and len(cells(inner)) == 3


async def test_nothing_is_applied_twice_when_two_people_accept_at_once() -> None:
    inner, ws = workspace({"t.txt": TWENTY}, review=REVIEW)
    _, proposal = await propose(ws, "insert after 3:\n+ADDED\n", path="t.txt")
    first, second = await asyncio.gather(
        decide(ws, proposal["id"], who="ada"), decide(ws, proposal["id"], who="bo")
    )
    assert sorted([first.is_error, second.is_error]) == [False, True]
    assert inner.get("t.txt").count("ADDED\n") == 1
    assert len(ws.activity.recent()) == 1


async def test_two_agents_proposals_over_one_notebook_both_land() -> None:
    inner, ws = workspace({"a.ipynb": notebook()}, review=REVIEW)
    _, one = await propose(ws, "replace 6:\n+x = 10\n", agent="bot")
    _, two = await propose(ws, "replace 10:\n+z = x * y * 2\n", agent="other")
    for proposal in (two, one):
        accepted = await decide(ws, proposal["id"])
        assert not accepted.is_error, accepted.text
    assert cells(inner)["load"]["source"] == "import math\nx = 10\ny = 2\nprint(x + y)"
    assert cells(inner)["plot"]["source"] == "z = x * y * 2\nz"
    assert [r.who for r in ws.activity.recent()] == ["bot", "other"]


async def test_the_proposing_agent_may_not_accept_but_may_withdraw() -> None:
    inner, ws = workspace({"t.txt": TWENTY}, review=REVIEW)
    _, proposal = await propose(ws, "replace 3:\n+THREE\n", path="t.txt")
    own = await decide(ws, proposal["id"], who="bot")
    assert (own.kind, own.status) == ("proposal_forbidden", 403)
    withdrawn = await decide(ws, proposal["id"], accept=False, who="bot")
    assert not withdrawn.is_error and inner.get("t.txt") == TWENTY
    ws.review = ReviewPolicy(ReviewMode.ON, self_accept=True)
    _, again = await propose(ws, "replace 3:\n+THREE\n", path="t.txt")
    assert not (await decide(ws, again["id"], who="bot")).is_error


async def test_a_proposal_over_a_deleted_file_is_refused() -> None:
    inner, ws = workspace({"t.txt": TWENTY}, review=REVIEW)
    _, proposal = await propose(ws, "replace 3:\n+THREE\n", path="t.txt")
    inner.delete("t.txt")
    refused = await decide(ws, proposal["id"])
    assert (refused.kind, refused.status) == ("proposal_refused", 409)
    assert "is gone" in refused.text and not await inner.exists("t.txt")


async def test_a_proposed_new_file_is_created_on_accept_and_refused_if_made_meanwhile() -> None:
    inner, ws = workspace({}, review=REVIEW)
    made = await run_tool(
        ws, "notebook_write", {"path": "n.txt", "content": "hello\n"}, agent="bot"
    )
    (proposal,) = made.reply["proposals"]
    assert not await inner.exists("n.txt")
    accepted = await decide(ws, proposal["id"])
    assert not accepted.is_error, accepted.text
    assert inner.get("n.txt") == "hello\n"
    again = await run_tool(
        ws, "notebook_write", {"path": "m.txt", "content": "agent\n"}, agent="bot"
    )
    inner.set("m.txt", "person\n")
    refused = await decide(ws, again.reply["proposals"][0]["id"])
    assert (refused.kind, refused.status) == ("proposal_refused", 409)
    assert inner.get("m.txt") == "person\n"


async def test_accept_all_and_reject_all_of_a_notebook() -> None:
    inner, ws = workspace({"a.ipynb": notebook(), "t.txt": TWENTY}, review=REVIEW)
    await propose(ws, "replace 6:\n+x = 10\n")
    await propose(ws, "replace 10:\n+z = x * y * 2\n", agent="other")
    await propose(ws, "replace 3:\n+THREE\n", path="t.txt")
    done = await ws.decide(
        decision_request({"path": "a.ipynb"}, agent="p", accept=True, proposal=None)
    )
    assert not done.is_error, done.text
    assert [p["status"] for p in done.reply["proposals"]] == ["accepted", "accepted"]
    assert cells(inner)["plot"]["source"] == "z = x * y * 2\nz"
    gone = await ws.decide(
        decision_request({"path": "t.txt"}, agent="p", accept=False, proposal=None)
    )
    assert [p["status"] for p in gone.reply["proposals"]] == ["rejected"]
    assert inner.get("t.txt") == TWENTY
    assert (await ws.proposals())["proposals"][0]["status"] == "rejected"


def test_decision_bodies_are_checked() -> None:
    with pytest.raises(BadArgumentsError, match="Unknown field"):
        decision_request({"cell": "a"}, agent="p", accept=True, proposal=1)
    with pytest.raises(BadArgumentsError, match="list of cell keys"):
        decision_request({"cells": "a"}, agent="p", accept=True, proposal=1)
    with pytest.raises(BadArgumentsError, match="path"):
        decision_request({}, agent="p", accept=True, proposal=None)


async def test_cells_changed_in_one_piece_are_decided_together() -> None:
    inner, ws = workspace({"a.ipynb": notebook()}, review=REVIEW)
    _, proposal = await propose(
        ws, "replace 3..4:\n+more text\n+# %% [markdown] id=load\n"
    )  # one piece: the intro's text and load's marker (a code cell made markdown)
    together = {c["cell"]: c["together"] for c in proposal["cells"]}
    assert together == {"intro": ["load"], "load": ["intro"]}
    alone = await decide(ws, proposal["id"], cells=["intro"])
    assert (alone.kind, alone.status) == ("bad_arguments", 400)
    both = await decide(ws, proposal["id"], cells=["intro", "load"])
    assert not both.is_error, both.text
    assert cells(inner)["load"]["cell_type"] == "markdown"
    assert cells(inner)["intro"]["source"] == "# Title\nmore text"


# -- the reviewer's tools (review_list, review_accept, review_reject) -------------------------


async def review(ws: Workspace, tool: str, arguments: dict[str, Any], agent: str) -> ToolOutcome:
    """A reviewer's tool call, where a reviewer's tools are offered (`mcp --review`)."""
    return await run_tool(ws, tool, arguments, agent=agent, names=(*TOOL_NAMES, *REVIEW_TOOL_NAMES))


async def test_the_review_tools_list_and_decide_proposals_as_a_person_would() -> None:
    inner, ws = workspace({"a.ipynb": notebook()}, review=REVIEW)
    empty = await review(ws, "review_list", {}, agent="person")
    assert (empty.is_error, empty.text) == (False, "No proposal waits for review.")
    _, proposal = await propose(ws, TWO_CELLS)
    listed = await review(ws, "review_list", {"path": "a.ipynb"}, agent="person")
    assert not listed.is_error, listed.text
    assert listed.text.startswith("1 proposal waits for review.")
    assert f"proposal {proposal['id']}: bot, a.ipynb, made on [a.ipynb#" in listed.text
    assert "cell load (changed):\n@@ -1,4 +1,4 @@\n import math\n-x = 1\n+x = 10\n" in listed.text
    assert "cell plot (changed):" in listed.text and "+z = x * y * 2" in listed.text
    accepted = await review(
        ws, "review_accept", {"proposal": proposal["id"], "cells": ["load"]}, agent="person"
    )
    assert not accepted.is_error, accepted.text
    assert cells(inner)["load"]["source"] == "import math\nx = 10\ny = 2\nprint(x + y)"
    assert cells(inner)["plot"]["source"] == "z = x * y\nz"
    left = await review(ws, "review_list", {}, agent="person")
    assert "cell plot (changed):" in left.text and "cell load" not in left.text
    note = {"path": "a.ipynb", "note": "keep the plot as it is"}
    rejected = await review(ws, "review_reject", note, agent="person")
    assert not rejected.is_error, rejected.text
    assert cells(inner)["plot"]["source"] == "z = x * y\nz"
    told = await run_tool(ws, "notebook_read", {"path": "a.ipynb"}, agent="bot")
    assert "was rejected by person: keep the plot as it is" in told.text
    assert (await review(ws, "review_list", {}, agent="p")).text.startswith("No proposal")


async def test_the_review_tools_refuse_what_a_decision_cannot_mean() -> None:
    inner, ws = workspace({"a.ipynb": notebook()}, review=REVIEW)
    before = inner.get("a.ipynb")
    _, proposal = await propose(ws, TWO_CELLS)
    both = await review(ws, "review_accept", {"proposal": 1, "path": "a.ipynb"}, agent="p")
    neither = await review(ws, "review_reject", {"note": "no"}, agent="p")
    loose = await review(ws, "review_accept", {"path": "a.ipynb", "cells": ["load"]}, agent="p")
    own = await review(ws, "review_accept", {"proposal": proposal["id"]}, agent="bot")
    unknown = await review(ws, "review_accept", {"proposal": 99}, agent="p")
    kinds = [o.kind for o in (both, neither, loose, own, unknown)]
    assert kinds == [
        "bad_arguments",
        "bad_arguments",
        "bad_arguments",
        "proposal_forbidden",
        "unknown_proposal",
    ]
    assert "send exactly one of `proposal` or `path`" in both.text
    assert "`cells` goes with `proposal`" in loose.text
    assert inner.get("a.ipynb") == before
    assert [c["status"] for c in ws.desk.book.get(proposal["id"]).to_json()["cells"]] == [
        "pending",
        "pending",
    ]


def test_the_review_tools_are_not_among_an_agents_tools() -> None:
    assert REVIEW_TOOL_NAMES == ("review_list", "review_accept", "review_reject")
    assert not set(REVIEW_TOOL_NAMES) & set(TOOL_NAMES)
    assert not {spec["name"] for spec in TOOL_SPECS} & set(REVIEW_TOOL_NAMES)
    offered = mcp_definitions((*TOOL_NAMES, *REVIEW_TOOL_NAMES))
    assert [d["name"] for d in offered][-3:] == list(REVIEW_TOOL_NAMES)
    hints = {d["name"]: d["annotations"] for d in offered}
    assert hints["review_list"]["readOnlyHint"] is True
    assert hints["review_accept"]["destructiveHint"] is True
    assert hints["review_reject"]["destructiveHint"] is False
