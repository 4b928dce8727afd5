"""The MCP server's tools on a directory, through an in-process MCP client: both edit forms,
whole-file writes, outputs, persistence between sessions, and agent mistakes as `is_error`
results that say what to do."""

from __future__ import annotations

import json
import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import nbformat
from mcp import Client
from mcp_types import Implementation
from testkit.scenario import NOTEBOOK, header_of, line_of

from jupyter_hashline.mcp import build_server
from jupyter_hashline.tools import open_directory


@asynccontextmanager
async def session(root: Path, store: str | None = None) -> AsyncIterator[Any]:
    """An MCP client connected in-process to a server on `root`; yields `call`."""
    workspace = open_directory(root, store)
    async with Client(build_server(workspace)) as client:

        async def call(tool: str, arguments: dict[str, Any]) -> tuple[bool, str]:
            result = await client.call_tool(tool, arguments)
            return result.is_error, result.content[0].text

        yield call
    await workspace.aclose()


async def test_the_json_form_edits_like_the_edit_text(root: Path) -> None:
    async with session(root) as call:
        _, view = await call("notebook_read", {"path": NOTEBOOK, "cells": ["total"]})
        tag = header_of(view)[-5:-1]
        line = line_of(view, "print(total)")
        edits = {"path": NOTEBOOK, "tag": tag, "edits": [
            {"op": "replace", "start": line, "end": line, "lines": ["print(round(total))"]},
        ]}  # fmt: skip
        is_error, reply = await call("notebook_edit", {"edits": edits})
        assert not is_error, reply
        is_error, empty = await call("notebook_edit", {"edits": json.dumps({**edits, "edits": []})})
        assert is_error
        assert "non-empty list" in empty
    nb = nbformat.read(root / NOTEBOOK, as_version=4)
    assert nb.cells[2].source == 'total = df["amount"].sum()\nprint(round(total))'


async def test_write_creates_a_notebook_that_reads_back_and_shows_outputs(root: Path) -> None:
    content = "# %% [markdown]\n# Notes\n# %% [code]\nx = 1\n"
    async with session(root) as call:
        is_error, reply = await call(
            "notebook_write", {"path": "new/notes.ipynb", "content": content}
        )
        assert not is_error, reply
        _, view = await call("notebook_read", {"path": "new/notes.ipynb"})
        assert view.split("\n")[4] == "4:x = 1"
        is_error, outputs = await call("notebook_outputs", {"path": NOTEBOOK, "cell": "load-data"})
        assert not is_error
        assert "loaded 120 rows" in outputs
    nb = nbformat.read(root / "new" / "notes.ipynb", as_version=4)
    assert [(c.cell_type, c.source) for c in nb.cells] == [
        ("markdown", "# Notes"),
        ("code", "x = 1"),
    ]


async def test_a_second_session_on_the_same_root_knows_the_first_ones_tags(root: Path) -> None:
    async with session(root) as call:
        _, view = await call("notebook_read", {"path": NOTEBOOK})
    async with session(root) as call:
        is_error, reply = await call(
            "notebook_edit", {"patch": f"{header_of(view)}\ninsert tail:\n+# reviewed\n"}
        )
    assert not is_error, reply
    assert nbformat.read(root / NOTEBOOK, as_version=4).cells[2].source.endswith("# reviewed")


async def test_a_memory_store_forgets_tags_when_the_session_ends(root: Path) -> None:
    async with session(root, ":memory:") as call:
        _, view = await call("notebook_read", {"path": NOTEBOOK})
    async with session(root, ":memory:") as call:
        is_error, reply = await call("notebook_edit", {"patch": f"{header_of(view)}\ndelete 2\n"})
    assert is_error
    assert "not from this session" in reply


async def test_mistakes_are_error_results_that_say_what_to_do(root: Path, tmp_path: Path) -> None:
    (tmp_path / "secret.txt").write_text("outside\n")
    before = (root / NOTEBOOK).read_bytes()
    async with session(root) as call:
        cases = {
            "escape": await call("notebook_read", {"path": "../secret.txt"}),
            "missing": await call("notebook_read", {"path": "nope.ipynb"}),
            "unknown tag": await call(
                "notebook_edit", {"patch": "[analysis.ipynb#0000]\ndelete 1\n"}
            ),
            "syntax": await call("notebook_edit", {"patch": "replace everything"}),
            "neither form": await call("notebook_edit", {}),
            "wrong type": await call("notebook_read", {"path": 7}),
            "unknown tool": await call("notebook_delete", {"path": NOTEBOOK}),
            "no outputs": await call("notebook_outputs", {"path": NOTEBOOK, "cell": "nope"}),
        }
    assert all(is_error for is_error, _ in cases.values()), cases
    texts = {name: text for name, (_, text) in cases.items()}
    assert "outside the root" in texts["escape"]
    assert "File not found: nope.ipynb" in texts["missing"]
    assert "not from this session" in texts["unknown tag"]
    assert "expected `replace N:`" in texts["syntax"]
    assert "send exactly one of `patch` or `edits` (neither was given)" in texts["neither form"]
    assert (
        "`path` must be a non-empty string" in texts["wrong type"]
        and ", not 7" in texts["wrong type"]
    )
    assert "notebook_read, notebook_edit, notebook_write, notebook_outputs" in texts["unknown tool"]
    assert "nope" in texts["no outputs"]
    assert (root / NOTEBOOK).read_bytes() == before


async def test_the_agent_is_the_clients_name_and_outlives_its_connection(root: Path) -> None:
    workspace = open_directory(root, ":memory:")
    info = Implementation(name="Claude Desktop", version="1.0")
    try:
        async with Client(build_server(workspace), client_info=info) as first:
            view = (await first.call_tool("notebook_read", {"path": NOTEBOOK})).content[0].text
        line = line_of(view, "print(total)")
        patch = f"{header_of(view)}\nreplace {line}:\n+print(total)  # checked\n"
        other = Implementation(name="other-host", version="1.0")
        async with Client(build_server(workspace), client_info=other) as stranger:
            result = await stranger.call_tool("notebook_edit", {"patch": patch})
            assert result.is_error and "never shown" in result.content[0].text
        async with Client(build_server(workspace), client_info=info) as second:
            result = await second.call_tool("notebook_edit", {"patch": patch})
            assert not result.is_error, result.content[0].text
        [record] = workspace.activity.recent()
        assert record.who == "Claude-Desktop"
    finally:
        await workspace.aclose()


async def test_a_named_agent_overrides_the_clients_name(root: Path) -> None:
    workspace = open_directory(root, ":memory:")
    try:
        async with Client(build_server(workspace, agent="ana")) as first:
            view = (await first.call_tool("notebook_read", {"path": NOTEBOOK})).content[0].text
        line = line_of(view, "print(total)")
        patch = f"{header_of(view)}\nreplace {line}:\n+print(total)  # checked\n"
        info = Implementation(name="inspector", version="1.0")
        async with Client(build_server(workspace, agent="ana"), client_info=info) as second:
            result = await second.call_tool("notebook_edit", {"patch": patch})
            assert not result.is_error, result.content[0].text
        assert [record.who for record in workspace.activity.recent()] == ["ana"]
    finally:
        await workspace.aclose()


async def test_a_paired_notebook_edited_on_root_updates_its_twin(root: Path) -> None:
    """MCP on `--root`: the edit lands in the notebook and in its jupytext twin; a person's
    later edit of the twin is what the next read shows."""
    import os

    import jupytext

    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("a = 1\nb = 2", id="code")])
    nb.metadata["jupytext"] = {"formats": "ipynb,py:percent"}
    nbformat.write(nb, root / "paired.ipynb")
    jupytext.write(nb, root / "paired.py", fmt="py:percent")
    async with session(root) as call:
        _, view = await call("notebook_read", {"path": "paired.ipynb"})
        patch = f"{header_of(view, 'paired.ipynb')}\nreplace {line_of(view, 'b = 2')}:\n+b = 3\n"
        is_error, reply = await call("notebook_edit", {"patch": patch})
        assert not is_error, reply
        assert "b = 3" in (root / "paired.py").read_text()
        twin = (root / "paired.py").read_text().replace("a = 1", "a = 100")
        (root / "paired.py").write_text(twin)
        later = os.stat(root / "paired.ipynb").st_mtime + 5
        os.utime(root / "paired.py", (later, later))
        _, view = await call("notebook_read", {"path": "paired.ipynb"})
        assert line_of(view, "a = 100")
    assert nbformat.read(root / "paired.ipynb", as_version=4).cells[0].source == "a = 1\nb = 3"


async def test_write_over_a_notebook_needs_its_tag_and_a_stale_one_is_an_error(root: Path) -> None:
    before = (root / NOTEBOOK).read_bytes()
    content = "# %% [code]\nreplaced = True\n"
    async with session(root) as call:
        is_error, reply = await call("notebook_write", {"path": NOTEBOOK, "content": content})
        assert is_error and "needs the tag" in reply and f"[{NOTEBOOK}#" in reply
        _, view = await call("notebook_read", {"path": NOTEBOOK})
        tag = header_of(view)[-5:-1]
        nb = nbformat.read(root / NOTEBOOK, as_version=4)
        nb.cells[0].source += "\n# a person's line"
        nbformat.write(nb, root / NOTEBOOK)
        changed = (root / NOTEBOOK).read_bytes()
        assert changed != before
        arguments = {"path": NOTEBOOK, "content": content, "tag": tag}
        is_error, reply = await call("notebook_write", arguments)
        assert is_error and "changed since your read" in reply
        assert (root / NOTEBOOK).read_bytes() == changed
        current = re.search(r"Current header: \[[^#]+#([0-9A-F]{4})\]", reply)
        assert current is not None
        is_error, reply = await call("notebook_write", {**arguments, "tag": current.group(1)})
        assert not is_error, reply
    assert nbformat.read(root / NOTEBOOK, as_version=4).cells[0].source == "replaced = True"
