"""Fixtures for the CLI tests: the agent story of tests/mcp (edit_scenario.py, put on the path
here), an isolated Jupyter data dir (where the default snapshot store lives) and a root."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

MCP_TESTS = Path(__file__).resolve().parent.parent / "mcp"
if str(MCP_TESTS) not in sys.path:
    sys.path.insert(0, str(MCP_TESTS))

from edit_scenario import write_analysis  # noqa: E402


@pytest.fixture(autouse=True)
def data_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """`JUPYTER_DATA_DIR` for this test (and the processes it starts)."""
    folder = tmp_path / "jupyter-data"
    monkeypatch.setenv("JUPYTER_DATA_DIR", str(folder))
    monkeypatch.delenv("JUPYTER_HASHLINE_STORE", raising=False)
    monkeypatch.delenv("JUPYTER_TOKEN", raising=False)
    return folder


@pytest.fixture
def root(tmp_path: Path) -> Path:
    folder = tmp_path / "root"
    folder.mkdir()
    write_analysis(folder)
    return folder
