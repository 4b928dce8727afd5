"""Runs jupyter-mcp-server's own cell tools for the safety benchmark, in ITS virtualenv.

Started by bench/safety_strategies.py as `<peer venv>/bin/python bench/peer_worker.py MODE
[SERVER_URL TOKEN ROOT]`; it must not import anything from this project. It reads one JSON
request per line on stdin and calls, in process, the code behind the package's MCP tools:

- MODE `file`: their file-mode writers (the code that runs against a notebook that is not
  open in a collaborative session): `path` is the notebook file;
- MODE `live`: their MCP_SERVER mode, which connects a collaboration client (jupyter-nbmodel-
  client) to the notebook's room on the running Jupyter server at SERVER_URL and edits the
  shared document there: `path` is the file under ROOT, the server's root.

    {"op": "overwrite", "path": P, "cell_index": N, "cell_source": S}
    {"op": "edit", "path": P, "cell_index": N, "old_string": A, "new_string": B}
    {"op": "insert", "path": P, "cell_index": N, "cell_type": T, "cell_source": S}
    {"op": "delete", "path": P, "cell_indices": [N, ...]}
    {"op": "move", "path": P, "source_index": N, "target_index": M}

Each gets one line `@@peer {"ok": true|false, "message": ...}` on stdout (other lines the
package may print are not prefixed, so the reader skips them).
"""

from __future__ import annotations

import asyncio
import importlib
import json
import os
import sys
from typing import Any

REPLY = "@@peer "
TOOLS = {
    "overwrite": ("overwrite_cell_source_tool", "OverwriteCellSourceTool"),
    "edit": ("edit_cell_source_tool", "EditCellSourceTool"),
    "insert": ("insert_cell_tool", "InsertCellTool"),
    "delete": ("delete_cell_tool", "DeleteCellTool"),
    "move": ("move_cell_tool", "MoveCellTool"),
}


def _tools() -> dict[str, Any]:
    found = {}
    for op, (module, name) in TOOLS.items():
        loaded = importlib.import_module(f"jupyter_mcp_server.tools.{module}")
        found[op] = getattr(loaded, name)()
    return found


async def _file(tool: Any, request: dict[str, Any]) -> Any:
    path, op = request["path"], request["op"]
    if op == "overwrite":
        return await tool._overwrite_cell_file(path, request["cell_index"], request["cell_source"])
    if op == "edit":
        args = (request["cell_index"], request["old_string"], request["new_string"], False)
        return await tool._edit_cell_file(path, *args)
    if op == "insert":
        args = (request["cell_index"], request["cell_type"], request["cell_source"])
        return await tool._insert_cell_file(path, *args)
    if op == "delete":
        return await tool._delete_cell_file(path, request["cell_indices"])
    return await tool._move_cell_file(path, request["source_index"], request["target_index"])


class Live:
    """The MCP_SERVER mode's notebook manager, bound to one notebook per request."""

    def __init__(self, url: str, token: str, root: str) -> None:
        manager_module = importlib.import_module("jupyter_mcp_server.notebook_manager")
        self.manager = manager_module.NotebookManager()
        self.url, self.token, self.root = url, token, root

    def bind(self, path: str) -> str:
        name = os.path.relpath(path, self.root)
        if name not in self.manager:
            self.manager.add_notebook(name, {}, server_url=self.url, token=self.token, path=name)
        return str(name)

    async def call(self, tool: Any, request: dict[str, Any]) -> Any:
        name, op, manager = self.bind(request["path"]), request["op"], self.manager
        if op == "overwrite":
            args = (request["cell_index"], request["cell_source"])
            return await tool._overwrite_cell_websocket(manager, *args, notebook_name=name)
        if op == "edit":
            args = (request["cell_index"], request["old_string"], request["new_string"], False)
            return await tool._edit_cell_websocket(manager, *args, notebook_name=name)
        if op == "insert":
            args = (request["cell_index"], request["cell_type"], request["cell_source"])
            return await tool._insert_cell_websocket(manager, *args, notebook_name=name)
        if op == "delete":
            return await tool._delete_cell_websocket(
                manager, request["cell_indices"], notebook_name=name
            )
        args = (request["source_index"], request["target_index"])
        return await tool._move_cell_websocket(manager, *args, notebook_name=name)


def main() -> None:
    mode = sys.argv[1] if len(sys.argv) > 1 else "file"
    tools = _tools()
    version = importlib.import_module("jupyter_mcp_server.__version__").__version__
    live = Live(*sys.argv[2:5]) if mode == "live" else None
    loop = asyncio.new_event_loop()
    print(REPLY + json.dumps({"ok": True, "message": str(version)}), flush=True)
    for line in sys.stdin:
        request = json.loads(line)
        tool = tools[request["op"]]
        try:
            call = live.call(tool, request) if live is not None else _file(tool, request)
            result = loop.run_until_complete(call)
            reply = {"ok": True, "message": str(result)[:2000]}
        except Exception as error:  # the tool's refusal, reported to the caller as such
            reply = {"ok": False, "message": f"{type(error).__name__}: {error}"}
        print(REPLY + json.dumps(reply), flush=True)


if __name__ == "__main__":
    main()
