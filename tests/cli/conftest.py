"""Fixtures for the CLI tests: every test runs with an isolated Jupyter data dir (where the
default snapshot store lives); `root` and the agent story come from testkit.scenario."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(autouse=True)
def isolated_data_dir(data_dir: Path) -> Path:
    """Every test here runs with its own `JUPYTER_DATA_DIR` (testkit.scenario's `data_dir`)."""
    return data_dir
