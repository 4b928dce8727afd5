"""The zones benchmark runs (`--smoke`: one tiny run of every case) and prints its ratios."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def test_bench_smoke_runs_and_reports_ratios(tmp_path: Path) -> None:
    out = tmp_path / "zones.json"
    result = subprocess.run(
        [sys.executable, str(REPO / "bench" / "zones.py"), "--smoke", "--json", str(out)],
        capture_output=True,
        text=True,
        check=True,
        cwd=REPO,
    )
    assert "turn    10 anthropic build+check+wire vs join" in result.stdout
    assert "turn   100 openai" in result.stdout
    assert out.is_file() and '"ratio"' in out.read_text()
