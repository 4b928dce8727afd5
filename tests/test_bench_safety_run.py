"""The stale-run safety table is correctness, not speed: hashline's column runs here.

`python -m bench.safety_run --smoke --peer none` runs once for the module, as `make bench` runs
it (the peer, jupyter-mcp-server in its own virtualenv, only in `python -m bench`): one Jupyter
server with collaboration and one kernel bound to every notebook the REST contender runs, one
directory kernel for the directory contender, every person change aimed at the middle cell,
saved in the file and (over REST) typed unsaved in an open room. Verdicts come from the
kernels' own log of the code they received (bench/safety_run_oracle.py). A tool that runs
whatever the cell holds now (no tag) runs through the same harness and oracle, with a real
kernel, to show the oracle tells every outcome apart.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from jupyter_client.manager import start_new_async_kernel

from bench.safety_run import RunResult, run_table
from bench.safety_run_oracle import (
    Answer,
    KernelRecorder,
    Received,
    Reply,
    Verdict,
    judge,
    received_for,
)
from bench.safety_run_scenarios import Change, Kind, RunScenario, Where, run_scenarios, scenario
from bench.summary import summarize

REPO = Path(__file__).resolve().parent.parent
REST = "hashline notebook_run (REST, server kernel)"
DIRECTORY = "hashline notebook_run (directory kernel)"


@pytest.fixture(scope="module")
def smoke(tmp_path_factory: pytest.TempPathFactory) -> tuple[dict[str, Any], str]:
    out = tmp_path_factory.mktemp("safety-run") / "safety_run.json"
    done = subprocess.run(
        [sys.executable, "-m", "bench.safety_run", "--smoke", "--peer", "none", "--json", str(out)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    return json.loads(out.read_text()), done.stdout


def rows(payload: dict[str, Any], contender: str) -> list[dict[str, Any]]:
    return [r for r in payload["results"] if r["contender"] == contender]


def test_hashline_meets_its_run_targets_in_the_file_and_in_an_open_room(
    smoke: tuple[dict[str, Any], str],
) -> None:
    payload, _ = smoke
    assert payload["table"] == "run" and payload["hashline"]["met"], payload["hashline"]
    for contender, wheres in ((REST, set(Where)), (DIRECTORY, {Where.FILE})):
        mine = rows(payload, contender)
        staged = {(r["where"], r["change"]) for r in mine}
        assert staged == {(w.value, c.value) for w in wheres for c in Change}, contender
        for r in mine:
            if r["kind"] == Kind.UNCHANGED.value:
                assert r["verdict"] == Verdict.RAN_SEEN.value, r
                assert "-> ok" in r["received"] and "ran 1 of 1 cell" in r["message"], r
            else:
                assert r["verdict"] == Verdict.REFUSED.value, r
                assert r["received"] == "no code of this run reached a kernel", r
                assert "Nothing ran" in r["message"], r


def test_the_report_shows_the_table_the_replies_and_the_verdict(
    smoke: tuple[dict[str, Any], str],
) -> None:
    _, stdout = smoke
    assert "== stale-run safety" in stdout
    assert "peer: left out" in stdout
    assert f"{REST}, by the person's change:" in stdout
    for line in ("unseen code runs", "controls (no change) run", "changed cells run nothing"):
        assert f"hashline {line}" in stdout
    assert "MISSED" not in stdout
    table = [line for line in stdout.splitlines() if "agent's cell" in line]
    assert len(table) == 6  # REST: file and room, 2 classes each; directory: file, 2 classes


def test_the_summary_carries_the_run_verdict(
    smoke: tuple[dict[str, Any], str], tmp_path: Path
) -> None:
    payload, _ = smoke
    broken = {**payload, "hashline": {**payload["hashline"], "unseen_runs": 1, "met": False}}
    (tmp_path / "safety_run.json").write_text(json.dumps(broken))
    text = "\n".join(summarize({"safety_run": tmp_path / "safety_run.json"}, tmp_path / "a.json"))
    assert "hashline unseen code runs" in text and "stale-run targets, all together: MISSED" in text


# -- the oracle tells outcomes apart -----------------------------------------------------------


def got(*codes: str, ended: str = "ok") -> list[Received]:
    return [Received(code=c, silent=False, ended=ended, pid=1) for c in codes]


def test_the_verdict_follows_the_code_the_kernel_received_not_the_reply() -> None:
    s = scenario("calc", Change.APPEND_LINE, Where.FILE)
    person = next(str(c["source"]) for c in s.after["cells"] if c["id"] == "calc")
    other = next(str(c["source"]) for c in s.before["cells"] if c["id"] == "report")
    ran, refused = Answer(Reply.RAN, "ok"), Answer(Reply.REFUSED, "no")
    assert judge(s, ran, got(s.seen)) is Verdict.RAN_SEEN
    assert judge(s, refused, got(person)) is Verdict.RAN_UNSEEN  # refused, yet it ran
    assert judge(s, ran, got(person, ended="SyntaxError")) is Verdict.RAN_UNSEEN
    assert judge(s, ran, got(other)) is Verdict.RAN_OTHER
    assert judge(s, refused, []) is Verdict.REFUSED
    assert judge(s, Answer(Reply.NOTHING, "skipped"), []) is Verdict.NOTHING_SAID
    assert judge(s, ran, []) is Verdict.CLAIMED
    assert judge(s, Answer(Reply.FAILED, "boom"), []) is Verdict.ERROR
    assert judge(s, refused, got(s.seen)) is Verdict.ERROR  # said no, ran anyway


def test_codes_are_picked_by_the_runs_nonce_and_blank_codes_run_nothing() -> None:
    mine = scenario("calc", Change.NONE, Where.FILE, salt="a")
    theirs = scenario("calc", Change.NONE, Where.FILE, salt="b")
    assert mine.nonce != theirs.nonce and mine.seen != theirs.seen
    log = got(mine.seen, theirs.seen, "", "  \n")
    assert [r.code for r in received_for(mine, log)] == [mine.seen]


def test_every_text_of_a_scenario_holds_its_nonce_and_the_persons_differ_from_the_read() -> None:
    for s in run_scenarios(smoke=False):
        read = [str(c["source"]) for c in s.before["cells"]]
        assert all(s.nonce in text for text in read), s.name
        person = [str(c["source"]) for c in s.after["cells"]]
        fresh = [t for t in person if t not in read]
        if s.change in (Change.NONE, Change.DELETE, Change.TO_MARKDOWN):
            assert fresh == [], s.name
        elif s.change is Change.EMPTY:
            assert fresh == [""], s.name
        else:
            assert len(fresh) == 1 and s.nonce in fresh[0], s.name


class RunsWhatIsThere:
    """A tool without a tag: runs whatever the cell holds now (by id), in its own kernel."""

    name = "runs the cell's current text"
    wheres = (Where.FILE,)
    uses_room = False

    def __init__(self, root: Path, client: Any) -> None:
        self.root, self.client = root, client

    def notebook_path(self, n: int) -> str:
        return "notebook.ipynb"

    async def prepare(self, path: str) -> None:
        return None

    async def read(self, path: str, scenario: RunScenario) -> None:
        return None

    async def run(self, path: str, scenario: RunScenario) -> Answer:
        cells = json.loads((self.root / path).read_text("utf-8"))["cells"]
        cell = next((c for c in cells if c["id"] == scenario.target), None)
        if cell is None:
            return Answer(Reply.REFUSED, f"no cell {scenario.target}")
        source = "".join(cell["source"])
        await self.client.execute_interactive(source, timeout=30, output_hook=lambda m: None)
        return Answer(Reply.RAN, "ran")

    async def aclose(self) -> None:
        return None


@pytest.fixture(scope="module")
def untagged(tmp_path_factory: pytest.TempPathFactory) -> Iterator[list[RunResult]]:
    root = tmp_path_factory.mktemp("untagged")

    async def table() -> list[RunResult]:
        with KernelRecorder() as recorder, recorder.in_environment():
            manager, client = await start_new_async_kernel(kernel_name="python3")
            try:
                tool = RunsWhatIsThere(root, client)
                scenarios = run_scenarios(smoke=True, wheres=(Where.FILE,))
                return await run_table(None, [tool], scenarios, recorder)
            finally:
                client.stop_channels()
                await manager.shutdown_kernel(now=True)

    yield asyncio.run(table())


def test_a_tool_that_runs_what_the_cell_holds_now_is_caught(untagged: list[RunResult]) -> None:
    verdicts = {r.change: r.verdict for r in untagged}
    person_ran = (Change.CHANGE_LINE, Change.APPEND_LINE, Change.HALF_TYPED, Change.REWRITE)
    assert {verdicts[c.value] for c in person_ran} == {Verdict.RAN_UNSEEN.value}
    seen = (Change.NONE, Change.OTHER_CELL, Change.INSERT_ABOVE, Change.TO_MARKDOWN)
    assert {verdicts[c.value] for c in seen} == {Verdict.RAN_SEEN.value}
    assert verdicts[Change.EMPTY.value] == Verdict.CLAIMED.value  # nothing, yet "ran"
    assert verdicts[Change.DELETE.value] == Verdict.REFUSED.value
    half = next(r for r in untagged if r.change == Change.HALF_TYPED.value)
    assert half.received.endswith("-> SyntaxError")  # never executed a line, yet received
    assert Counter(r.kind for r in untagged) == {Kind.UNCHANGED.value: 3, Kind.CHANGED.value: 7}
