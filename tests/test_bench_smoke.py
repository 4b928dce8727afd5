"""Every benchmark runs once in `--smoke` mode (one tiny run of each case), so none can rot.

Each runs as `python -m bench.<name> --smoke --json FILE` from the repository root, as
`make bench` runs it; the checks below read the raw figures it wrote.

The stale-edit safety table is also a correctness check: its hashline column runs in
tests/test_bench_safety.py. The stale-run table (`bench.safety_run`) runs its smoke pass in
tests/test_bench_safety_run.py, which checks hashline's column from it.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from bench.cold import DURABLE_BASELINE, JUPYTER_REFERENCE

REPO = Path(__file__).resolve().parent.parent
CORPUS_DIR = REPO.parent / "shared" / "corpus"

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
    for clients in (1, 4, 8):  # every hashline client's last acknowledged edit is in the file
        assert f"{clients} client(s):" in stdout
        assert f"patches/s, last edits kept {clients} of {clients}  vs" in stdout


def check_safety(payload: Any, stdout: str) -> None:
    strategies = {row["strategy"] for row in payload["results"]}
    assert strategies == {
        "hashline",
        "hashline review, accept",
        "hashline review, reject",
        "hashline review, two agents",
        "hashline review, accept part",
        "cell-index overwrite",
        "cell-index string replace",
        "cell-id overwrite",
        "whole-notebook write-back",
    }
    assert "cell-index strategies: model of jupyter-mcp-server" in stdout
    assert "hashline overlapping conflicts rejected" in stdout
    assert "== review (the agent's edit proposed" in stdout
    assert payload["review"]["met"] is True and payload["review"]["rejects"] > 0
    for row in ("two_agents", "part"):  # their own verdicts, each part of review's `met`
        verdict = payload["review"][row]
        assert (verdict["lost"], verdict["wrong_cell"], verdict["corrupted"]) == (0, 0, 0)
    assert payload["review"]["part_decoys"] > 0
    twin = payload["twin"]  # a stale edit after another agent's edit of the same cell
    assert "== a stale edit after another agent's edit of the same cell" in stdout
    assert twin["met"] is True and twin["rows"] > 0 and twin["rejected"] > 0
    assert (twin["lost"], twin["wrong_cell"], twin["corrupted"], twin["unexplained"]) == (0,) * 4
    # the peers' known failure modes show up, so the table can tell strategies apart
    outcomes = {(row["strategy"], row["outcome"]) for row in payload["results"]}
    assert ("cell-index overwrite", "wrong cell") in outcomes
    assert ("whole-notebook write-back", "lost") in outcomes
    assert all(row["payload_bytes"] > 0 for row in payload["results"])


def check_cold(rows: Rows, stdout: str) -> None:
    names = [row["name"] for row in rows]
    assert "validator FastJsonSchemaValidator" in stdout or "validator" in stdout
    assert any(n.startswith("cold 20 cells: read + one-line patch vs nbformat") for n in names)
    assert any(n.startswith("cold 20 cells: read + one-line patch vs JSON floor") for n in names)
    missing = [row for row in rows if "missing" in row]
    # only an absent corpus may leave rows unmeasured, and then they say so
    assert missing == [] or (
        not (CORPUS_DIR / "MANIFEST.tsv").is_file()
        and [row["name"] for row in missing] == ["corpus notebooks"]
    ), missing
    assert all(row["ratio"] > 0 for row in rows if "missing" not in row)
    corpus = [row for row in rows if row["name"].startswith("corpus ") and "KB" in row["name"]]
    for row in corpus:  # equal durability, Jupyter's writer beside without a target
        assert (row["baseline"], row["same_write"]) == (DURABLE_BASELINE, True), row["name"]
        assert row["reference"] == JUPYTER_REFERENCE and row["reference_ratio"] > 0
    aggregates = [row for row in rows if row["name"].startswith("corpus, ")]
    if corpus:
        assert [(row["statistic"], row["target"]) for row in aggregates] == [
            ("median", 0.8), ("p90", 1.0), ("median", None), ("max", 1.2),
        ]  # fmt: skip
        assert "compute above the write" in aggregates[2]["name"]
        assert stdout.count(f"vs {JUPYTER_REFERENCE}: ") == len(corpus) + 3


def check_server_path(rows: Rows, stdout: str) -> None:
    names = [row["name"] for row in rows]
    assert [n.split(", ")[-1].split()[0] for n in names][:2] == ["200", "100"]
    assert ["whole read" in n for n in names] == [False] * 4 + [True] * 2
    assert names[4].endswith(", 200 cells") and names[5].endswith(names[2].split(", ")[-1])
    assert all(row["ratio"] > 0 and row["stall"]["jupyter_ms"] > 0 for row in rows)
    assert [row["stall"]["target_ms"] for row in rows] == [50.0, None, 30.0, None, 50.0, 50.0]
    # the median: as it is; the whole-notebook rows: issue 39's targets
    assert [row["target"] for row in rows] == [0.15, 0.5, 0.3, None, 0.3, 0.3]
    assert stdout.count("worst event-loop stall: hashline") == 6


def check_server_room(payload: Any, stdout: str) -> None:
    waiting, room = payload["rows"]
    assert waiting["name"].startswith("room, 40 cells, live_save=wait")
    assert room["name"].startswith("room, 40 cells, live_save=room")
    for row in (waiting, room):
        assert row["latency_ms"] > 0 and row["stall_ms"] >= 0 and row["direct_ms"] > 0
        assert row["room_save_stall_ms"] >= 0
    assert (waiting["latency_target_ms"], waiting["stall_target_ms"]) == (30.0, 20.0)
    assert isinstance(waiting["met"], bool)
    assert (room["latency_target_ms"], room["met"]) == (None, None)
    assert "the room saves the edit as it saves typing" in stdout
    assert stdout.count("the room's own save of a person's typing stalls") == 2
    assert "the same change in the person's own shared document" in stdout


def check_hostile(payload: Any, stdout: str) -> None:
    refused_json, refused_text, applied = payload["rows"]
    assert refused_json["name"].startswith("20,000 edits, JSON form: refused")
    assert refused_text["name"].startswith("20,000 edits, text form: refused")
    assert applied["name"].startswith("200 edits in 200 cells: applied")
    for row in payload["rows"]:
        assert row["latency_ms"] > 0 and row["stall_ms"] >= 0 and row["jupyter_put_ms"] > 0
        assert row["stall_target_ms"] == 100.0 and isinstance(row["met"], bool)
    assert stdout.count("Jupyter's contents PUT of the same size") == 3


def check_server_load(payload: Any, stdout: str) -> None:
    rows = payload["rows"]
    assert [(r["agents"], r["shared"]) for r in rows] == [
        (1, False), (4, False), (16, False), (1, True), (4, True), (16, True),
    ]  # fmt: skip
    for row in rows:
        ours, theirs = row["hashline"], row["jupyter"]
        assert ours["kept"] == row["agents"] and ours["failed"] == 0  # hashline never loses one
        assert ours["edits_per_s"] > 0 and theirs["edits_per_s"] > 0
        assert 0 < ours["p50_ms"] <= ours["p99_ms"] and ours["stall_ms"] > 0
        assert isinstance(row["met"], bool) == (row["agents"] == 16)
    assert stdout.count("  vs  GET+PUT") == 6


def test_a_missed_load_row_is_a_miss_of_the_check(tmp_path: Path) -> None:
    from bench.summary import check, summarize

    side = {"edits_per_s": 30.0, "p50_ms": 400.0, "p99_ms": 1200.0, "stall_ms": 150.0,
            "failed": 0, "kept": 16}  # fmt: skip
    row = {"name": "16 agent(s), one shared notebook", "agents": 16, "shared": True,
           "hashline": side, "jupyter": {**side, "kept": 0}, "met": False}  # fmt: skip
    path = tmp_path / "server_load.json"
    path.write_text(json.dumps({"table": "load", "rows": [row, {**row, "met": None}]}))
    assert check({"server_load": path}) == [
        "server_load: 16 agent(s), one shared notebook: p99 1200 ms / stall 150.0 ms over "
        "1000 / 100 ms"
    ]
    text = "\n".join(summarize({"server_load": path}, tmp_path / "all.json"))
    assert "MISSED  (GET+PUT: 30.0/s, p99 1200 ms, stall 150.0 ms, last edits kept 0/16)" in text


def test_a_missed_request_row_is_a_miss_of_the_check(tmp_path: Path) -> None:
    from bench.summary import check, summarize

    row = {"name": "400,000 edits, JSON form: refused (16.0 MB)", "latency_ms": 180.0,
           "stall_ms": 140.0, "jupyter_put_ms": 2e4, "jupyter_stall_ms": 3e3,
           "stall_target_ms": 100.0, "met": False}  # fmt: skip
    path = tmp_path / "hostile.json"
    path.write_text(json.dumps({"table": "requests", "rows": [row, {**row, "met": True}]}))
    misses = check({"hostile": path})
    assert misses == [
        "hostile: 400,000 edits, JSON form: refused (16.0 MB): others stalled 140.0 ms > 100 ms"
    ]
    text = "\n".join(summarize({"hostile": path}, tmp_path / "all.json"))
    assert "stall 140.0 ms  <= 100 ms  MISSED" in text and "MET" in text


CHECKS: dict[str, Callable[[Any, str], None]] = {
    "cold": check_cold,
    "engine": check_engine,
    "notebook": check_notebook,
    "zones": check_zones,
    "server": check_server,
    "server_path": check_server_path,
    "server_room": check_server_room,
    "hostile": check_hostile,
    "server_load": check_server_load,
    "safety": check_safety,
}


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(CHECKS))
def test_benchmark_smoke_run(name: str, tmp_path: Path, request: pytest.FixtureRequest) -> None:
    if name == "server_path":
        request.getfixturevalue("corpus_dir")  # its image-heavy row needs the corpus
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


def test_summary_puts_every_ratio_next_to_its_target(tmp_path: Path) -> None:
    from bench.summary import summarize

    row = {"name": "serialize", "ratio": 0.3, "spread": [0.2, 0.4], "target": 0.25, "met": False}
    free = {"name": "8 clients", "ratio": 2.0, "spread": [1.5, 2.5], "target": None, "met": None}
    verdict = {"lost": 0, "wrong_cell": 1, "corrupted": 0, "unexplained": 0, "met": False,
               "non_conflicting_applied": 0.99, "overlapping_rejected": 1.0}  # fmt: skip
    (tmp_path / "notebook.json").write_text(json.dumps([row, free]))
    (tmp_path / "safety.json").write_text(json.dumps({"hashline": verdict, "results": []}))
    files = {n: tmp_path / f"{n}.json" for n in ("notebook", "safety", "server")}
    text = "\n".join(summarize(files, tmp_path / "all.json"))
    assert "0.300x [0.200..0.400]  <= 0.25x  MISSED" in text
    assert "8 clients" in text and "no target" in text
    assert "wrong cell edited" in text and "all together: MISSED" in text
    assert "server      (no figures: the benchmark did not finish)" in text
    assert set(json.loads((tmp_path / "all.json").read_text())) == {"notebook", "safety"}
