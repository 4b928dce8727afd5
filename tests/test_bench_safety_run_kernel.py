"""The stale-run table's eval and kernel family (bench/safety_run_kernel.py): run once on a real
server with the kernel-log oracle, every hashline row meets its target; and the verdicts tell
a failure apart (code it was not given reached the kernel; a person's work or queued cell
stopped without the reply saying so)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from bench.safety_run_kernel import EVAL_CHANGES, KERNEL_ROWS, eval_verdict, kernel_verdict
from bench.safety_run_oracle import Received

REPO = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def table(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, Any], str]:
    out = tmp_path_factory.mktemp("safety-run-kernel") / "safety_run_kernel.json"
    done = subprocess.run(
        [sys.executable, "-m", "bench.safety_run_kernel", "--json", str(out)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(out.read_text()), done.stdout


def test_every_row_meets_its_target(table: tuple[dict[str, Any], str]) -> None:
    payload, out = table
    verdicts = [(r["family"], r["verdict"]) for r in payload["results"]]
    assert verdicts == [("eval", "ran only the code given")] * len(EVAL_CHANGES) + [
        ("kernel", "stopped, said whose")
    ] * len(KERNEL_ROWS)
    assert payload["met"] is True and "targets met: yes" in out
    # whether the kernel drops a queued cell depends on when it arrived; the reply says it may
    queued = [r for r in payload["results"] if "queued" in r["row"]]
    assert queued and all("cells queued behind it" in r["reply"] for r in queued)


def received(code: str, ended: str = "ok") -> Received:
    return Received(code=code, silent=False, ended=ended, pid=1)


def test_the_verdicts_catch_what_they_are_there_to_catch() -> None:
    probe = "print('probe n1')"
    assert eval_verdict([received(probe)], "n1") == "ran only the code given"
    assert eval_verdict([received("b = a + 1  # n1"), received(probe)], "n1") == "ran cell code"
    assert eval_verdict([], "n1") == "ran nothing"
    person = received("import time  # n1 person running", "KeyboardInterrupt")
    said = "this stopped an execution not started through jupyter-hashline; cells queued behind it"
    assert kernel_verdict([person], said, queued=True) == "stopped, said whose"
    assert kernel_verdict([person], "it was idle", queued=False) == "stopped silently"
    whose = "this stopped an execution not started through jupyter-hashline"
    assert kernel_verdict([person], whose, queued=True) == "dropped the queued cell silently"
    finished = received("import time  # n1 person running")
    assert kernel_verdict([finished], said, queued=False) == "stopped nothing"
