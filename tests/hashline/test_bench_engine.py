"""The engine benchmark runs (`--smoke`: one tiny run of each case), so it cannot rot."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from conftest import REPO_ROOT


def test_engine_benchmark_smoke_run(tmp_path: Path) -> None:
    out = tmp_path / "engine.json"
    done = subprocess.run(
        [sys.executable, "-m", "bench.engine", "--smoke", "--json", str(out)],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    rows = json.loads(out.read_text())
    assert [row["name"].split(",")[0] for row in rows] == [
        "read+tag",
        "full Patcher.read view",
        "10 scattered edits",
    ]
    assert all(row["ratio"] > 0 for row in rows)
