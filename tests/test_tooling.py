"""The developer tooling: `make lint` (the Python side) runs where Node is absent."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from testkit.nodeless import path_without_node

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parent.parent


def test_make_lint_runs_without_node(tmp_path: Path) -> None:
    """`-W` makes make treat the sidebar's source and lockfile as just edited: were `lint` to
    depend on the npm install or the TypeScript build, it would run npm here, and fail."""
    done = subprocess.run(
        ["make", "--no-print-directory", "-W", "labextension/src/index.ts",
         "-W", "labextension/package-lock.json", "lint"],
        cwd=REPO,
        env=dict(os.environ, PATH=path_without_node(tmp_path / "bin")),
        capture_output=True,
        text=True,
        timeout=600,
    )  # fmt: skip
    output = done.stdout + done.stderr
    assert done.returncode == 0, output
    assert "npm" not in output
    assert "ruff format --check" in output and "mypy" in output
