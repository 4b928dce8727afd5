"""The undo rows of the stale-edit safety table (bench/safety_revert.py): a person keeps
working after an agent's edit, then undoes it through the real workspace. Judged by the
table's independent oracle: nothing of the person's is lost, no other cell changes, nothing is
corrupted, and every undo of a line the person changed is refused."""

from __future__ import annotations

import asyncio
import copy
import json
import tempfile
from collections import Counter
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from bench.safety import build_scenarios
from bench.safety_oracle import Outcome, expected
from bench.safety_revert import (
    NAME,
    Family,
    RevertRow,
    judge_undo,
    revert_verdict,
    run_revert_rows,
    run_row,
    undo_target,
)
from bench.safety_scenarios import AgentKind, PersonKind, dump, generated_notebooks, scenarios_for
from jupyter_hashline.tools import ToolOutcome


@pytest.fixture(scope="module")
def rows() -> list[RevertRow]:
    scenarios, _ = build_scenarios(smoke=True)
    return asyncio.run(run_revert_rows(scenarios))


@pytest.mark.slow
def test_undo_keeps_the_persons_work_in_every_family(rows: list[RevertRow]) -> None:
    families = Counter(r.family for r in rows)
    assert set(families) == {f.value for f in Family}, families
    assert min(families.values()) >= 10, families
    verdict = revert_verdict(rows)
    failures = [r for r in rows if r.outcome in {"lost", "wrong cell", "corrupted", "unexplained"}]
    assert (verdict.lost, verdict.wrong_cell, verdict.corrupted, verdict.unexplained) == (
        0,
        0,
        0,
        0,
    ), "\n".join(f"{r.outcome}: {r.scenario}: {r.message}" for r in failures)
    assert verdict.same_line_rejected == 1.0
    assert verdict.kept_applied >= 0.7  # the rest are refusals (cells named by position)
    assert verdict.met


def test_the_undo_judge_tells_outcomes_apart() -> None:
    label, raw = next(iter(generated_notebooks(1)))
    calm = next(
        s
        for s in scenarios_for(label, raw)
        if s.agent.kind is AgentKind.REPLACE and s.person_kind is PersonKind.OTHER_CELL
    )
    want = dump(undo_target(calm))
    merged = expected(calm)
    assert merged is not None
    state = dump(merged)  # the person's notebook after the agent's edit
    done, refused = ToolOutcome("ok"), ToolOutcome.error("no", "revert_refused", 409)
    assert judge_undo(calm, Family.ELSEWHERE, state, done, want) is Outcome.APPLIED
    assert judge_undo(calm, Family.ELSEWHERE, state, refused, state) is Outcome.REJECTED
    assert judge_undo(calm, Family.ELSEWHERE, state, refused, want) is Outcome.CORRUPTED
    assert judge_undo(calm, Family.ELSEWHERE, state, done, "{not json") is Outcome.CORRUPTED
    assert judge_undo(calm, Family.ELSEWHERE, state, done, state) is Outcome.UNEXPLAINED
    # the person's change undone along with the agent's: their work is lost
    assert judge_undo(calm, Family.ELSEWHERE, state, done, calm.before) is Outcome.LOST


def test_twins_may_trade_their_id_and_nothing_else() -> None:
    # The person pasted a copy of the cell the agent deleted (same id, same body); the undo
    # brings the cell back whole under a fresh id. Which twin keeps the id is not judged.
    label, raw = next(iter(generated_notebooks(1)))
    twin = next(
        s
        for s in scenarios_for(label, raw)
        if s.agent.kind is AgentKind.DELETE_CELL and s.person_kind is PersonKind.PASTE_COPY
    )
    with tempfile.TemporaryDirectory() as tmp:
        (Path(tmp) / "agent").mkdir()
        (Path(tmp) / "undo").mkdir()
        row = asyncio.run(run_row(twin, Family.STRUCTURE, Path(tmp)))
        assert row is not None and row.outcome == "applied", row
        final = json.loads((Path(tmp) / "undo" / NAME).read_text(encoding="utf-8"))
    cid = json.loads(twin.before)["cells"][twin.agent.ops[0].cell]["id"]
    first, second = (n for n, c in enumerate(final["cells"]) if c["id"].startswith(cid))
    state = dump(final)  # stands for the person's save: only the judged file matters here
    done = ToolOutcome("ok")

    def judged(change: Callable[[list[dict[str, Any]]], None]) -> Outcome:
        cells = copy.deepcopy(final["cells"])
        change(cells)
        return judge_undo(twin, Family.STRUCTURE, state, done, dump({**final, "cells": cells}))

    def traded(cells: list[dict[str, Any]]) -> None:
        cells[first]["id"], cells[second]["id"] = cells[second]["id"], cells[first]["id"]

    def neither(cells: list[dict[str, Any]]) -> None:
        cells[first]["id"], cells[second]["id"] = "other-1", "other-2"

    def damaged(cells: list[dict[str, Any]]) -> None:
        traded(cells)
        cells[second]["metadata"] = {"tags": ["not the person's"]}

    assert judged(traded) is Outcome.APPLIED
    assert judged(neither) is Outcome.LOST
    assert judged(damaged) is Outcome.LOST
