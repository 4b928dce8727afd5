"""The undo rows of the stale-edit safety table (bench/safety_revert.py): a person keeps
working after an agent's edit, then undoes it through the real workspace. Judged by the
table's independent oracle: nothing of the person's is lost, no other cell changes, nothing is
corrupted, and every undo of a line the person changed is refused."""

from __future__ import annotations

import asyncio
from collections import Counter

import pytest

from bench.safety import build_scenarios
from bench.safety_oracle import Outcome, expected
from bench.safety_revert import (
    Family,
    RevertRow,
    judge_undo,
    revert_verdict,
    run_revert_rows,
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
