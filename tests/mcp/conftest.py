"""Fixtures for the MCP tests: an isolated Jupyter data dir (the default snapshot store lives
there), a root directory holding analysis.ipynb, and a Jupyter server with jupyter_hashline
enabled for the Jupyter AI registration tests."""

from __future__ import annotations

from pathlib import Path

import pytest
from edit_scenario import write_analysis
from traitlets.config import Config


@pytest.fixture(autouse=True)
def data_dir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """`JUPYTER_DATA_DIR` for this test (and the processes it starts)."""
    folder = tmp_path / "jupyter-data"
    monkeypatch.setenv("JUPYTER_DATA_DIR", str(folder))
    monkeypatch.delenv("JUPYTER_HASHLINE_STORE", raising=False)
    return folder


@pytest.fixture
def root(tmp_path: Path) -> Path:
    folder = tmp_path / "root"
    folder.mkdir()
    write_analysis(folder)
    return folder


@pytest.fixture
def jp_server_config() -> Config:
    return Config(
        {
            "ServerApp": {
                "jpserver_extensions": {"jupyter_hashline": True, "jupyter_server_terminals": False}
            }
        }
    )
