"""Run in the jupyter-ai venv (mcp 1.x, jupyter-server-mcp 0.3): connect to the MCP server that
jupyter-server-mcp runs inside a Jupyter server, list and call the hashline tools; print what
it saw as JSON. argv: MCP_URL."""

from __future__ import annotations

import asyncio
import json
import sys
from importlib.metadata import version

from mcp import ClientSession
from mcp.client.streamable_http import streamablehttp_client


async def main(url: str) -> None:
    async with (
        streamablehttp_client(url) as (read, write, _),
        ClientSession(read, write) as session,
    ):
        await session.initialize()
        listed = await session.list_tools()
        names = [t.name for t in listed.tools]
        schemas = {t.name: t.inputSchema for t in listed.tools if t.name.startswith("notebook_")}
        read_view = await session.call_tool("notebook_read", {"path": "analysis.ipynb"})
        view = read_view.content[0].text
        header = view.split("\n")[0]
        line = next(r.split(":")[0] for r in view.split("\n") if r.endswith(":print(total)"))
        patch = f"{header}\nreplace {line}:\n+{line}:print(round(total))\n"
        edit = await session.call_tool("notebook_edit", {"patch": patch})
        outputs = await session.call_tool(
            "notebook_outputs", {"path": "analysis.ipynb", "cell": "load-data"}
        )
        stale = await session.call_tool("notebook_edit", {"patch": f"{header}\ndelete {line}\n"})
        figure = await session.call_tool("notebook_outputs", {"path": "fig.ipynb", "cell": "plot"})
    print(json.dumps({
        "versions": {p: version(p) for p in ("mcp", "jupyter-server-mcp", "jupyter-ai")},
        "names": names,
        "schemas": schemas,
        "read": [read_view.isError, view],
        "edit": [edit.isError, edit.content[0].text],
        "outputs": [outputs.isError, outputs.content[0].text],
        "stale": [stale.isError, stale.content[0].text],
        "figure": [figure.isError, [b.model_dump(by_alias=True) for b in figure.content]],
    }))  # fmt: skip


asyncio.run(main(sys.argv[1]))
