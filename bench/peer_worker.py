"""Runs jupyter-mcp-server's own cell-edit code for the safety benchmark, in ITS virtualenv.

Started by bench/safety_strategies.py as `<peer venv>/bin/python bench/peer_worker.py`; it must
not import anything from this project. It reads one JSON request per line on stdin and calls,
in process and without a server, the file-mode writers of jupyter-mcp-server's tools (the code
its `overwrite_cell_source` and `edit_cell_source` MCP tools run against a notebook that is not
open in a collaborative session):

    {"op": "overwrite", "path": P, "cell_index": N, "cell_source": S}
    {"op": "edit", "path": P, "cell_index": N, "old_string": A, "new_string": B}

and answers each with one line `@@peer {"ok": true|false, "message": ...}` on stdout (other
lines the package may print are not prefixed, so the reader skips them).
"""

from __future__ import annotations

import asyncio
import importlib
import json
import sys
from typing import Any

REPLY = "@@peer "


def _tools() -> tuple[Any, Any, str]:
    edit = importlib.import_module("jupyter_mcp_server.tools.edit_cell_source_tool")
    overwrite = importlib.import_module("jupyter_mcp_server.tools.overwrite_cell_source_tool")
    version = importlib.import_module("jupyter_mcp_server.__version__").__version__
    return edit.EditCellSourceTool(), overwrite.OverwriteCellSourceTool(), str(version)


async def _call(request: dict[str, Any], edit: Any, overwrite: Any) -> str:
    path, index = request["path"], int(request["cell_index"])
    if request["op"] == "overwrite":
        return str(await overwrite._overwrite_cell_file(path, index, request["cell_source"]))
    return str(
        await edit._edit_cell_file(path, index, request["old_string"], request["new_string"], False)
    )


def main() -> None:
    edit, overwrite, version = _tools()
    print(REPLY + json.dumps({"ok": True, "message": version}), flush=True)
    for line in sys.stdin:
        try:
            message = asyncio.run(_call(json.loads(line), edit, overwrite))
            reply = {"ok": True, "message": message}
        except Exception as error:  # the tool's refusal, reported to the caller as such
            reply = {"ok": False, "message": f"{type(error).__name__}: {error}"}
        print(REPLY + json.dumps(reply), flush=True)


if __name__ == "__main__":
    main()
