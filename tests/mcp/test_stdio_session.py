"""`jupyter-hashline mcp` on a directory, driven by the `mcp` package's own stdio client."""

from __future__ import annotations

import base64
import io
import os
import sys
from pathlib import Path
from typing import Any

import nbformat
import pytest
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from PIL import Image
from testkit.cells import FIGURE_CELL
from testkit.scenario import (
    CHECKS,
    NOTEBOOK,
    header_of,
    line_of,
    person_edits,
    run_edit_scenario,
    run_run_scenario,
    write_checks,
)

from jupyter_hashline.tools import TOOL_SPECS, default_store_path, mcp_definitions


def server_params(*args: str) -> StdioServerParameters:
    """`python -m jupyter_hashline.cli ARGS` with this test's Jupyter data dir."""
    return StdioServerParameters(
        command=sys.executable,
        args=["-m", "jupyter_hashline.cli", *args],
        env={"JUPYTER_DATA_DIR": os.environ["JUPYTER_DATA_DIR"]},
    )


def caller(client: Client) -> Any:
    async def call(tool: str, arguments: dict[str, Any]) -> tuple[bool, str]:
        result = await client.call_tool(tool, arguments)
        assert len(result.content) == 1
        return result.is_error, result.content[0].text

    return call


@pytest.mark.slow
async def test_a_client_lists_the_catalog_and_edits_through_stale_tags(root: Path) -> None:
    async with Client(server_params("--root", str(root), "mcp")) as client:
        listed = await client.list_tools()
        assert [(t.name, t.description, t.input_schema) for t in listed.tools] == [
            (spec["name"], spec["description"], dict(spec["input_schema"])) for spec in TOOL_SPECS
        ]
        assert "notebook_read" in (client.instructions or "")
        assert client.server_info is not None and client.server_info.name == "jupyter-hashline"
        await run_edit_scenario(caller(client), root)
    assert default_store_path(root).is_file()


async def test_tools_list_has_titles_annotations_and_described_schemas(root: Path) -> None:
    async with Client(server_params("--root", str(root), "mcp")) as client:
        listed = {tool.name: tool for tool in (await client.list_tools()).tools}
    assert [(d["name"], d["title"]) for d in mcp_definitions()] == [
        (t.name, t.title) for t in listed.values()
    ]
    for definition in mcp_definitions():
        tool = listed[definition["name"]]
        assert tool.annotations is not None and tool.annotations.title == definition["title"]
        wire = tool.annotations.model_dump(by_alias=True, exclude_none=True)
        assert wire == definition["annotations"]
        assert tool.input_schema == definition["inputSchema"]
    assert listed["notebook_read"].annotations.read_only_hint is True
    assert listed["notebook_write"].annotations.destructive_hint is True
    edits = listed["notebook_edit"].input_schema["properties"]["edits"]["anyOf"][0]
    assert "insert_after" in edits["properties"]["edits"]["items"]["properties"]["op"]["enum"]


async def test_wrong_types_and_pasted_prefixes_over_stdio(root: Path) -> None:
    async with Client(server_params("--root", str(root), "mcp")) as client:
        call = caller(client)
        is_error, text = await call("notebook_read", {"path": NOTEBOOK, "offset": "two"})
        assert is_error and "`offset` must be a whole number >= 1" in text
        assert "not supported between" not in text
        _, view = await call("notebook_read", {"path": NOTEBOOK})
        line = line_of(view, "print(total)")
        edit = f"{header_of(view)}\nreplace {line}:\n+{line}:print(round(total))\n"
        is_error, reply = await call("notebook_edit", {"patch": edit})
        assert not is_error and "warning:" in reply and "prefix" in reply
        person_edits(root, "intro", "# Sales analysis\nBy region.")
        line = line_of(view, 'total = df["amount"].sum()')
        edit = f"{header_of(reply)}\nreplace {line}:\n+{line}:total = 0\n"
        is_error, reply = await call("notebook_edit", {"patch": edit})
        assert not is_error and "recovered" in reply and "prefix" in reply, reply


@pytest.mark.slow
async def test_with_allow_run_a_client_runs_cells_and_rejections_are_errors(root: Path) -> None:
    async with Client(server_params("--root", str(root), "--allow-run", "mcp")) as client:
        await run_run_scenario(caller(client), root)
        # the connection's kernel keeps its variables between calls
        call = caller(client)
        _, view = await call("notebook_read", {"path": CHECKS})
        tag = header_of(view, CHECKS)[-5:-1]
        is_error, text = await call(
            "notebook_run", {"path": CHECKS, "tag": tag, "cells": ["calc"], "timeout_s": 30}
        )
        assert not is_error and "\n54" in text and "execution count 3" in text


async def test_without_allow_run_a_run_is_an_error_saying_how_to_allow_it(root: Path) -> None:
    write_checks(root)
    before = (root / CHECKS).read_bytes()
    async with Client(server_params("--root", str(root), "mcp")) as client:
        call = caller(client)
        _, view = await call("notebook_read", {"path": CHECKS})
        arguments = {"path": CHECKS, "tag": header_of(view, CHECKS)[-5:-1], "cells": ["calc"]}
        is_error, text = await call("notebook_run", arguments)
    assert is_error and text.startswith("Run refused, nothing ran")
    assert "--allow-run" in text and "jupyter-hashline --allow-run mcp" in text
    assert (root / CHECKS).read_bytes() == before


async def test_read_and_edit_in_separate_connections_of_one_named_agent(root: Path) -> None:
    """An Inspector-style flow: every call is a new server process, the store is on disk."""
    async with Client(server_params("--root", str(root), "--agent", "ana", "mcp")) as client:
        _, view = await caller(client)("notebook_read", {"path": NOTEBOOK})
    line = line_of(view, "print(total)")
    patch = f"{header_of(view)}\nreplace {line}:\n+print(total)  # checked\n"
    async with Client(server_params("--root", str(root), "--agent", "bob", "mcp")) as client:
        is_error, text = await caller(client)("notebook_edit", {"patch": patch})
    assert is_error and "never shown" in text
    async with Client(server_params("--root", str(root), "--agent", "ana", "mcp")) as client:
        is_error, text = await caller(client)("notebook_edit", {"patch": patch})
    assert not is_error, text
    assert "print(total)  # checked" in (root / NOTEBOOK).read_text("utf-8")


async def test_a_client_sees_the_figure_a_cell_drew_as_image_content(root: Path) -> None:
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3"}
    nb.cells = [nbformat.v4.new_code_cell(FIGURE_CELL, id="plot")]
    nbformat.write(nb, root / "fig.ipynb")
    async with Client(server_params("--root", str(root), "--allow-run", "mcp")) as client:
        _, view = await caller(client)("notebook_read", {"path": "fig.ipynb"})
        tag = header_of(view, "fig.ipynb")[-5:-1]
        ran = await client.call_tool(
            "notebook_run", {"path": "fig.ipynb", "tag": tag, "cells": ["plot"]}
        )
        shown = await client.call_tool("notebook_outputs", {"path": "fig.ipynb", "cell": "plot"})
        text_only = await client.call_tool(
            "notebook_outputs", {"path": "fig.ipynb", "cell": "plot", "images": False}
        )
    assert not ran.is_error
    text, caption, image = ran.content
    assert "image attached: cell plot output [1], image/png 1024x512" in text.text
    assert caption.text.startswith("image attached: cell plot output [1]")
    assert image.type == "image" and image.mime_type == "image/png"
    with Image.open(io.BytesIO(base64.b64decode(image.data))) as decoded:
        assert decoded.size == (1024, 512)
    assert [block.type for block in shown.content] == ["text", "text", "image"]
    assert [block.type for block in text_only.content] == ["text"]


async def test_a_client_evals_a_variable_the_notebooks_cells_defined(root: Path) -> None:
    write_checks(root)
    before = (root / CHECKS).read_bytes()
    async with Client(server_params("--root", str(root), "--allow-run", "mcp")) as client:
        call = caller(client)
        _, view = await call("notebook_read", {"path": CHECKS})
        tag = header_of(view, CHECKS)[-5:-1]
        is_error, text = await call("notebook_run", {"path": CHECKS, "tag": tag, "cells": ["calc"]})
        assert not is_error, text
        ran = (root / CHECKS).read_bytes()
        is_error, text = await call("notebook_eval", {"path": CHECKS, "code": "answer * 2"})
        assert not is_error and "cell (eval): ok" in text, text
        assert "[1] execute_result\n84" in text and "the notebook is unchanged" in text
        is_error, status = await call("notebook_kernel", {"path": CHECKS, "action": "status"})
        assert status.endswith("is idle; last execution count seen 2"), status
        is_error, restart = await call("notebook_kernel", {"path": CHECKS, "action": "restart"})
        assert not is_error and "restarted the kernel python3" in restart, restart
        is_error, text = await call("notebook_eval", {"path": CHECKS, "code": "answer"})
    assert not is_error and "NameError" in text
    assert (root / CHECKS).read_bytes() == ran != before
