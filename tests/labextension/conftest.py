"""Fixtures for the JupyterLab sidebar's tests.

`built_labextension` runs `make labextension` once per test session: npm's install is cached in
labextension/node_modules and the build is skipped when no source changed, so this costs well
under a second once done. Node and npm are required (like `make dev`); without them the tests
fail saying so.

`lab_env` is the temporary place of a story in a collaborative JupyterLab (scripts/lab_story.py):
JupyterLab's settings (news off) and workspaces there, and the working directory, for the test.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from scripts.labrun import quiet_lab_settings

REPO = Path(__file__).resolve().parents[2]
LABEXT_SRC = REPO / "labextension"
LABEXT_OUT = REPO / "jupyter_hashline" / "labextension"


@pytest.fixture(scope="session")
def built_labextension() -> Path:
    """The built sidebar (jupyter_hashline/labextension), fresh with respect to its sources."""
    missing = [tool for tool in ("node", "npm", "make") if shutil.which(tool) is None]
    if missing:
        pytest.fail(f"{', '.join(missing)} not on PATH: the sidebar is built with Node and npm")
    done = subprocess.run(
        ["make", "--no-print-directory", "labextension"],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=600,
    )
    if done.returncode != 0:
        pytest.fail(f"`make labextension` failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}")
    assert (LABEXT_OUT / "package.json").is_file()
    return LABEXT_OUT


@pytest.fixture
def lab_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """`tmp_path`, holding JupyterLab's settings and workspaces (pointed at by the environment)
    and made the working directory: the room's update store is created there."""
    for name, value in quiet_lab_settings(tmp_path).items():
        monkeypatch.setenv(name, value)
    monkeypatch.chdir(tmp_path)
    return tmp_path
