"""Fixtures for the MCP tests: an isolated Jupyter data dir for every test (the default
snapshot store lives there), and a Jupyter server with jupyter_hashline enabled for the
Jupyter AI registration tests (token auth as pytest-jupyter sets it up)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from traitlets.config import Config


@pytest.fixture(autouse=True)
def isolated_data_dir(data_dir: Path) -> Path:
    """Every test here runs with its own `JUPYTER_DATA_DIR` (testkit.scenario's `data_dir`)."""
    return data_dir


@pytest.fixture
def jp_server_config(hashline_config: dict[str, Any]) -> Config:
    return Config(
        {
            "ServerApp": {
                "jpserver_extensions": {"jupyter_hashline": True, "jupyter_server_terminals": False}
            },
            "HashlineExtension": hashline_config,
        }
    )
