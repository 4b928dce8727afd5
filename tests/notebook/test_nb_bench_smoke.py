"""The notebook benchmark runs (`--smoke`: one tiny run of every case), so it cannot rot."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def test_notebook_benchmark_smoke_run(tmp_path: Path) -> None:
    out = tmp_path / "notebook.json"
    done = subprocess.run(
        [sys.executable, "-m", "bench.notebook", "--smoke", "--json", str(out)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    rows = json.loads(out.read_text())
    names = [row["name"] for row in rows]
    assert any("one-line patch vs nbformat" in n for n in names)
    assert any("serialize whole notebook" in n for n in names)
    assert all(row["candidate_s"] and row["baseline_s"] for row in rows)
