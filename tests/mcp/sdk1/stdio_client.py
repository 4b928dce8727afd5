"""Run in the jupyter-ai venv (mcp 1.x): drive `jupyter-hashline mcp` over stdio with the SDK's
own 1.x client; print what it saw as JSON. argv: ROOT."""

from __future__ import annotations

import asyncio
import json
import sys
from importlib.metadata import version

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client


async def main(root: str) -> None:
    params = StdioServerParameters(
        command=sys.executable, args=["-m", "jupyter_hashline.cli", "--root", root, "mcp"]
    )
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        listed = await session.list_tools()
        tools = [t.model_dump(by_alias=True, exclude_none=True) for t in listed.tools]
        read_view = await session.call_tool("notebook_read", {"path": "analysis.ipynb"})
        view = read_view.content[0].text
        header = view.split("\n")[0]
        line = next(r.split(":")[0] for r in view.split("\n") if r.endswith(":print(total)"))
        patch = f"{header}\nreplace {line}:\n+{line}:print(round(total))\n"
        edit = await session.call_tool("notebook_edit", {"patch": patch})
        wrong = await session.call_tool("notebook_read", {"path": "analysis.ipynb", "offset": "x"})
    print(json.dumps({
        "mcp": version("mcp"),
        "tools": tools,
        "read": [read_view.isError, view],
        "edit": [edit.isError, edit.content[0].text],
        "wrong": [wrong.isError, wrong.content[0].text],
    }))  # fmt: skip


asyncio.run(main(sys.argv[1]))
