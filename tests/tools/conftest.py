"""Fixtures for the tools tests: the agent story of tests/mcp (edit_scenario.py, put on the path
here), an isolated Jupyter data dir (where the default snapshot store lives) and a root."""

from __future__ import annotations

import sys
from pathlib import Path

MCP_TESTS = Path(__file__).resolve().parent.parent / "mcp"
if str(MCP_TESTS) not in sys.path:
    sys.path.insert(0, str(MCP_TESTS))

from edit_scenario import data_dir, root  # noqa: E402

__all__ = ["data_dir", "root"]
