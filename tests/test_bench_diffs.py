"""The diff-size table (`python -m bench.diffs`) runs, and its layout rows meet their targets.

Sizes, not timings, so the figures are checked here: on each layout of the varied set a one-line
edit is a one-line diff (`git diff --numstat` +1/-1), parses to exactly the expected notebook,
and only the mixed file falls back to nbformat's layout.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from bench.layouts import LAYOUTS, MIXED

REPO = Path(__file__).resolve().parent.parent


def test_the_diff_table_smoke_run_meets_its_targets(tmp_path: Path) -> None:
    out = tmp_path / "diffs.json"
    done = subprocess.run(
        [sys.executable, "-m", "bench.diffs", "--smoke", "--json", str(out)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    rows = {row["name"]: row for row in json.loads(out.read_text())}
    assert set(rows) == {f"layout: {name}" for name in LAYOUTS}
    assert all(row["exact"] for row in rows.values())
    for name, row in rows.items():
        if name == f"layout: {MIXED}":
            assert row["fallback"]
            continue
        assert not row["fallback"] and (row["added"], row["deleted"]) == (1, 1), name
        assert row["span"] <= 0.10, name
    assert "git lines on the layout set: at most 1 (target <= 2)" in done.stdout
