"""Runs the sidebar's TypeScript unit tests (vitest in happy-dom: view logic, DOM rendering,
the widget's event subscription, polling and states) and requires every one to pass."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

LABEXT_SRC = Path(__file__).resolve().parents[2] / "labextension"

# At least this many vitest tests exist; a drop means test files were lost or not collected.
MIN_TESTS = 57


def test_vitest_suite_passes(built_labextension: Path, tmp_path: Path) -> None:
    report = tmp_path / "vitest.json"
    done = subprocess.run(
        [
            "node", "node_modules/vitest/vitest.mjs", "run",
            "--reporter=default", "--reporter=json", f"--outputFile.json={report}",
        ],
        cwd=LABEXT_SRC,
        capture_output=True,
        text=True,
        timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-4000:]
    result = json.loads(report.read_text())
    assert result["numFailedTests"] == 0
    assert result["numPassedTests"] >= MIN_TESTS, result["numPassedTests"]
    files = {Path(suite["name"]).name for suite in result["testResults"]}
    assert {"model.test.ts", "render.test.ts", "sidebar.test.ts", "events.test.ts"} <= files
