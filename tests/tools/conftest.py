"""Fixtures for the tools tests: an isolated Jupyter data dir for every test (the default
snapshot store lives there; `testkit.scenario`'s `data_dir`)."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(autouse=True)
def isolated_data_dir(data_dir: Path) -> Path:
    return data_dir
