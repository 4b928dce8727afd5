"""Run in the jupyter-ai venv (mcp 1.x): drive `jupyter-hashline --allow-run mcp` over stdio
with the SDK's 1.x client on fig.ipynb (a cell `plot` that displays a PNG and sets `answer`):
run it with images, eval a variable, restart the kernel, eval again; print what it saw as JSON.
argv: ROOT."""

from __future__ import annotations

import asyncio
import json
import sys
from importlib.metadata import version
from typing import Any

from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client

NB = "fig.ipynb"


def blocks(result: Any) -> list[dict[str, Any]]:
    return [block.model_dump(by_alias=True, exclude_none=True) for block in result.content]


async def main(root: str) -> None:
    args = ["-m", "jupyter_hashline.cli", "--root", root, "--allow-run", "mcp"]
    params = StdioServerParameters(command=sys.executable, args=args)
    async with stdio_client(params) as (read, write), ClientSession(read, write) as session:
        await session.initialize()
        view = (await session.call_tool("notebook_read", {"path": NB})).content[0].text
        tag = view.split("\n")[0][-5:-1]
        ran = await session.call_tool("notebook_run", {"path": NB, "tag": tag, "cells": ["plot"]})
        probe = await session.call_tool("notebook_eval", {"path": NB, "code": "answer + 1"})
        restart = await session.call_tool("notebook_kernel", {"path": NB, "action": "restart"})
        gone = await session.call_tool("notebook_eval", {"path": NB, "code": "answer"})
    print(json.dumps({
        "mcp": version("mcp"),
        "run": [ran.isError, blocks(ran)],
        "eval": [probe.isError, probe.content[0].text],
        "restart": [restart.isError, restart.content[0].text],
        "gone": [gone.isError, gone.content[0].text],
    }))  # fmt: skip


asyncio.run(main(sys.argv[1]))
