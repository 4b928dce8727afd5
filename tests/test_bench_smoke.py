"""Every benchmark runs once in `--smoke` mode (one tiny run of each case), so none can rot.

Each runs as `python -m bench.<name> --smoke --json FILE` from the repository root, as
`make bench` runs it; the checks below read the raw figures it wrote.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

REPO = Path(__file__).resolve().parent.parent

Rows = list[dict[str, Any]]


def check_engine(rows: Rows, stdout: str) -> None:
    assert [row["name"].split(",")[0] for row in rows] == [
        "read+tag",
        "full Patcher.read view",
        "10 scattered edits",
    ]
    assert all(row["ratio"] > 0 for row in rows)


def check_notebook(rows: Rows, stdout: str) -> None:
    names = [row["name"] for row in rows]
    assert any("one-line patch vs nbformat" in n for n in names)
    assert any("serialize whole notebook" in n for n in names)
    assert all(row["candidate_s"] and row["baseline_s"] for row in rows)


def check_zones(rows: Rows, stdout: str) -> None:
    assert "turn    10 anthropic build+check+wire vs join" in stdout
    assert "turn   100 openai" in stdout
    assert rows and all("ratio" in row for row in rows)


def check_server(rows: Rows, stdout: str) -> None:
    assert [row["name"].split()[0] for row in rows] == ["one-line", "1", "4", "8"]
    assert all(row["ratio"] > 0 for row in rows)
    assert "patches/s" in stdout


CHECKS: dict[str, Callable[[Rows, str], None]] = {
    "engine": check_engine,
    "notebook": check_notebook,
    "zones": check_zones,
    "server": check_server,
}


@pytest.mark.parametrize("name", sorted(CHECKS))
def test_benchmark_smoke_run(name: str, tmp_path: Path) -> None:
    out = tmp_path / f"{name}.json"
    done = subprocess.run(
        [sys.executable, "-m", f"bench.{name}", "--smoke", "--json", str(out)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    CHECKS[name](json.loads(out.read_text()), done.stdout)
