"""Review over MCP: a Jupyter server in review mode, an agent's MCP client whose edits become
proposals, and a reviewer's MCP client (`jupyter-hashline --server URL mcp --review`, the real
SDK over stdio) that lists them with their diffs and accepts or rejects them per cell, while a
person saves another cell of the notebook in between. The agent hears each decision on its
next call and may not accept its own proposal."""

from __future__ import annotations

import json
import sys
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import nbformat
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from testkit.scenario import NOTEBOOK

from bench.server import TOKEN, LocalServer
from jupyter_hashline.tools import REVIEW_TOOL_NAMES, TOOL_NAMES, RestWorkspace, run_tool

pytestmark = pytest.mark.slow

Call = Callable[[str, dict[str, Any]], Awaitable[tuple[bool, str]]]


@asynccontextmanager
async def mcp_client(url: str, agent: str, *review: str) -> AsyncIterator[tuple[Call, list[str]]]:
    """An MCP client of `jupyter-hashline --server URL --agent AGENT mcp [--review]`: its call
    function and the names of the tools it was offered."""
    args = ["-m", "jupyter_hashline.cli", "--server", url, "--token", TOKEN, "--agent", agent]
    params = StdioServerParameters(command=sys.executable, args=[*args, "mcp", *review])
    async with Client(params) as client:

        async def call(tool: str, arguments: dict[str, Any]) -> tuple[bool, str]:
            result = await client.call_tool(tool, arguments)
            return result.is_error, result.content[0].text

        yield call, [tool.name for tool in (await client.list_tools()).tools]


def line_of(view: str, text: str) -> int:
    """The number of the row of `view` that holds `text`."""
    return next(int(row.split(":", 1)[0]) for row in view.splitlines() if row.endswith(text))


def sources(root: Path) -> dict[str, str]:
    notebook = nbformat.read(root / NOTEBOOK, as_version=4)
    return {cell.id: cell.source for cell in notebook.cells}


LOAD = ('df = pd.read_csv("sales.csv")', 'df = pd.read_csv("sales.csv", parse_dates=["date"])')
TOTAL = ("print(total)", 'print(f"total: {total:,.2f}")')


async def propose(agent: Call, *changes: tuple[str, str]) -> str:
    """The agent's edit replacing each row ending in `old` by `new` (a server in review mode
    proposes it); the reply."""
    failed, view = await agent("notebook_read", {"path": NOTEBOOK})
    assert not failed, view
    rows = "".join(f"replace {line_of(view, old)}:\n+{new}\n" for old, new in changes)
    failed, reply = await agent("notebook_edit", {"patch": f"{view.splitlines()[0]}\n{rows}"})
    assert not failed, reply
    return reply


async def test_a_reviewer_over_mcp_accepts_one_cell_and_rejects_another(
    root: Path, tmp_path: Path
) -> None:
    extra = ("--HashlineExtension.review=on",)
    with LocalServer(root, tmp_path / "home", extra_args=extra) as server:
        url = f"http://127.0.0.1:{server.port}/"
        async with (
            mcp_client(url, "analyst") as (agent, agent_tools),
            mcp_client(url, "reviewer", "--review") as (reviewer, reviewer_tools),
        ):
            assert agent_tools == list(TOOL_NAMES)
            assert reviewer_tools == [*TOOL_NAMES, *REVIEW_TOOL_NAMES]
            before = (root / NOTEBOOK).read_bytes()
            reply = await propose(agent, LOAD, TOTAL)
            assert "PROPOSED, NOT written: proposal 1 (cells load-data, total)" in reply
            assert (root / NOTEBOOK).read_bytes() == before

            failed, listed = await reviewer("review_list", {"path": NOTEBOOK})
            assert not failed, listed
            assert "proposal 1: analyst, analysis.ipynb, made on [analysis.ipynb#" in listed
            assert '-df = pd.read_csv("sales.csv")\n+df = pd.read_csv("sales.csv", parse' in listed
            assert '-print(total)\n+print(f"total: {total:,.2f}")' in listed

            person = nbformat.read(root / NOTEBOOK, as_version=4)  # a person's save meanwhile
            person.cells[0].source = "# Sales analysis, Q3"
            nbformat.write(person, root / NOTEBOOK)

            accept = {"proposal": 1, "cells": ["load-data"]}
            failed, accepted = await reviewer("review_accept", accept)
            assert not failed, accepted
            assert accepted.startswith("Accepted proposal 1, cells load-data.")
            reject = {"proposal": 1, "note": "keep the plain print"}
            failed, rejected = await reviewer("review_reject", reject)
            assert not failed, rejected
            assert sources(root) == {
                "intro": "# Sales analysis, Q3",
                "load-data": 'import pandas as pd\ndf = pd.read_csv("sales.csv", '
                'parse_dates=["date"])',
                "total": 'total = df["amount"].sum()\nprint(total)',
            }

            failed, told = await agent("notebook_read", {"path": NOTEBOOK})
            assert not failed, told
            assert told.startswith(
                "review: Proposal 1 (analysis.ipynb, cells load-data) was accepted by reviewer "
                "and landed: now [analysis.ipynb#"
            )
            assert (
                "review: Proposal 1 (analysis.ipynb, cells total) was rejected by reviewer: "
                "keep the plain print. Nothing of it was written." in told
            )
            failed, empty = await reviewer("review_list", {})
            assert (failed, empty) == (False, "No proposal waits for review.")

            await propose(agent, TOTAL)
            self_review = RestWorkspace(url, TOKEN)  # the agent's own name, through REST
            own = await run_tool(
                self_review,
                "review_accept",
                {"proposal": 2},
                agent="analyst",
                names=REVIEW_TOOL_NAMES,
            )
            await self_review.aclose()
            assert (own.is_error, own.kind, own.status) == (True, "proposal_forbidden", 403)
            failed, all_of_it = await reviewer("review_accept", {"path": NOTEBOOK})
            assert not failed, all_of_it
            failed, gone = await reviewer("review_accept", {"proposal": 2})
            assert failed and "was already decided: accepted" in gone
        _, activity = server.client().request("GET", "/hashline/activity")
    assert sources(root)["total"] == 'total = df["amount"].sum()\nprint(f"total: {total:,.2f}")'
    edits = [(e["who"], e["source"]) for e in activity["edits"]]
    assert edits == [("analyst", "proposal"), ("analyst", "proposal")], json.dumps(edits)
