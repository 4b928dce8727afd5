"""Every benchmark runs once in `--smoke` mode (one tiny run of each case), so none can rot.

Each runs as `python -m bench.<name> --smoke --json FILE` from the repository root, as
`make bench` runs it; the checks below read the raw figures it wrote.

The stale-edit safety table is also a correctness check: on its smoke scenarios (generated
notebooks, plus a few corpus notebooks where the corpus is present) hashline, through the real
`Patcher` + `NotebookFilesystem`, must lose no person's change, edit no wrong cell, corrupt no
file, apply >= 95% of the non-conflicting scenarios and reject every true conflict.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from bench.safety import Outcome, Result, build_scenarios, classify, hashline_verdict, run_all
from bench.safety_scenarios import (
    PersonEdit,
    Scenario,
    generated_notebooks,
    scenarios_for,
    source_of,
)
from bench.safety_strategies import Attempt, HashlineStrategy, IndexOverwrite, ModelPeer

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
    assert {n.split(":")[0] for n in names} == {"generated 20 cells", "generated 40 cells"}
    assert any("one-line patch vs nbformat" in n for n in names)
    assert any("serialize whole notebook" in n for n in names)
    assert all(row["candidate_s"] and row["baseline_s"] for row in rows)


def check_zones(rows: Rows, stdout: str) -> None:
    assert "turn    10 anthropic build+check+wire vs join" in stdout
    assert "turn   100 openai" in stdout
    assert rows and all("ratio" in row for row in rows)


def check_server(rows: Rows, stdout: str) -> None:
    assert [row["name"].split()[0] for row in rows] == ["cold", "one-line", "1", "4", "8"]
    assert all(row["ratio"] > 0 for row in rows)
    assert "patches/s" in stdout


def check_safety(payload: Any, stdout: str) -> None:
    strategies = {row["strategy"] for row in payload["results"]}
    assert strategies == {
        "hashline",
        "cell-index overwrite",
        "cell-index string replace",
        "cell-id overwrite",
        "whole-notebook write-back",
    }
    assert "cell-index strategies: model of jupyter-mcp-server" in stdout
    assert "hashline true conflicts (same lines) rejected" in stdout
    # the peers' known failure modes show up, so the table can tell strategies apart
    outcomes = {(row["strategy"], row["outcome"]) for row in payload["results"]}
    assert ("cell-index overwrite", "wrong cell") in outcomes
    assert ("whole-notebook write-back", "person's lost") in outcomes
    assert all(row["payload_bytes"] > 0 for row in payload["results"])


def check_cold(rows: Rows, stdout: str) -> None:
    names = [row["name"] for row in rows]
    assert "validator FastJsonSchemaValidator" in stdout or "validator" in stdout
    assert any(n.startswith("cold 20 cells: read + one-line patch vs nbformat") for n in names)
    assert any(n.startswith("cold 20 cells: read + one-line patch vs JSON floor") for n in names)
    assert all(row["ratio"] > 0 for row in rows)


CHECKS: dict[str, Callable[[Any, str], None]] = {
    "cold": check_cold,
    "engine": check_engine,
    "notebook": check_notebook,
    "zones": check_zones,
    "server": check_server,
    "safety": check_safety,
}


@pytest.mark.slow
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


def _misses(results: list[Result]) -> str:
    return "\n".join(
        f"{r.outcome}: {r.scenario}: {r.message}"
        for r in results
        if r.outcome not in (Outcome.BOTH_KEPT.value, Outcome.REJECTED_CONFLICT.value)
    )


def test_hashline_meets_its_safety_targets_on_the_smoke_scenarios() -> None:
    scenarios, _ = build_scenarios(smoke=True)
    assert {s.kind for s in scenarios} == set(PersonEdit)
    results = asyncio.run(run_all([HashlineStrategy()], scenarios))
    verdict = hashline_verdict(results)
    assert (verdict.lost, verdict.wrong_cell, verdict.corrupted, verdict.unexplained) == (
        0, 0, 0, 0
    ), _misses(results)  # fmt: skip
    assert verdict.non_conflicting_applied >= 0.95, _misses(results)
    assert verdict.conflicts_rejected == 1.0, _misses(results)
    assert verdict.met


def _one(kind: PersonEdit) -> Scenario:
    label, raw = next(iter(generated_notebooks(1)))
    return next(s for s in scenarios_for(label, raw, 3) if s.kind is kind)


def test_classifier_tells_outcomes_apart() -> None:
    calm, conflict = _one(PersonEdit.OTHER_CELL), _one(PersonEdit.SAME_LINES)
    applied, refused = Attempt(False, "ok", 1), Attempt(True, "no", 1)
    assert classify(calm, refused, calm.person) is Outcome.REJECTED_OK
    assert classify(conflict, refused, conflict.person) is Outcome.REJECTED_CONFLICT
    assert classify(calm, refused, "{not json") is Outcome.CORRUPTED
    assert classify(calm, applied, calm.person) is Outcome.UNEXPLAINED  # nothing landed
    stale = json.loads(calm.before)
    target = stale["cells"][calm.intent.cell_index]
    target["source"] = calm.intent.apply_to(source_of(target))
    assert classify(calm, applied, json.dumps(stale)) is Outcome.PERSON_LOST


def test_index_overwrite_edits_the_wrong_cell_after_an_insert_above() -> None:
    scenario = _one(PersonEdit.INSERT_ABOVE)
    [result] = asyncio.run(run_all([IndexOverwrite(ModelPeer())], [scenario]))
    assert result.outcome == Outcome.WRONG_CELL.value
    [mine] = asyncio.run(run_all([HashlineStrategy()], [scenario]))
    assert mine.outcome == Outcome.BOTH_KEPT.value, mine.message


def test_summary_puts_every_ratio_next_to_its_target(tmp_path: Path) -> None:
    from bench.summary import summarize

    row = {"name": "serialize", "ratio": 0.3, "spread": [0.2, 0.4], "target": 0.25, "met": False}
    free = {"name": "8 clients", "ratio": 2.0, "spread": [1.5, 2.5], "target": None, "met": None}
    verdict = {"lost": 0, "wrong_cell": 1, "corrupted": 0, "unexplained": 0, "met": False,
               "non_conflicting_applied": 0.99, "conflicts_rejected": 1.0}  # fmt: skip
    (tmp_path / "notebook.json").write_text(json.dumps([row, free]))
    (tmp_path / "safety.json").write_text(json.dumps({"hashline": verdict, "results": []}))
    files = {n: tmp_path / f"{n}.json" for n in ("notebook", "safety", "server")}
    text = "\n".join(summarize(files, tmp_path / "all.json"))
    assert "0.300x [0.200..0.400]  <= 0.25x  MISSED" in text
    assert "8 clients" in text and "no target" in text
    assert "wrong cell edited" in text and "all together: MISSED" in text
    assert "server   (no figures: the benchmark did not finish)" in text
    assert set(json.loads((tmp_path / "all.json").read_text())) == {"notebook", "safety"}
