"""Fixtures for the MCP tests: an isolated Jupyter data dir (the default snapshot store lives
there), a root directory holding analysis.ipynb, and a Jupyter server with jupyter_hashline
enabled for the Jupyter AI registration tests."""

from __future__ import annotations

import pytest
from edit_scenario import data_dir, root
from traitlets.config import Config

__all__ = ["data_dir", "jp_server_config", "root"]


@pytest.fixture
def jp_server_config() -> Config:
    return Config(
        {
            "ServerApp": {
                "jpserver_extensions": {"jupyter_hashline": True, "jupyter_server_terminals": False}
            }
        }
    )
