"""The twin-edit row of the stale-edit safety table (bench/safety_twin.py): two agents send one
edit, A's lands, the person saves, B's stale one is applied through the real workspace. Judged
against the person's save by the table's oracle: refused, a no-op, or an insert applied twice,
never another cell; a planted edit of another cell shows in the tally."""

from __future__ import annotations

import asyncio
import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from bench.safety import build_scenarios
from bench.safety_scenarios import AgentKind, PersonKind, Scenario, dump, source_of
from bench.safety_strategies import Attempt
from bench.safety_twin import (
    Saved,
    TwinEdits,
    TwinOutcome,
    judge_twin,
    run_twin_rows,
    saved_state,
    twin_report,
    twin_verdict,
)
from jupyter_hashline.tools import Workspace


@pytest.fixture(scope="module")
def scenarios() -> list[Scenario]:
    found, _ = build_scenarios(smoke=True)
    return found


@pytest.mark.slow
def test_a_stale_twin_edit_never_lands_on_another_cell(scenarios: list[Scenario]) -> None:
    rows = asyncio.run(run_twin_rows(scenarios))
    verdict = twin_verdict(rows)
    failures = [f"{r.outcome}: {r.scenario}: {r.message}" for r in rows if r.outcome in FAILED]
    assert (verdict.lost, verdict.wrong_cell, verdict.corrupted, verdict.unexplained) == (
        0, 0, 0, 0,
    ), "\n".join(failures)  # fmt: skip
    assert verdict.rows >= 0.8 * len(scenarios) and verdict.rejected > 0.8 * verdict.rows
    pasted = [r for r in rows if r.person == PersonKind.PASTE_COPY.value]
    assert pasted and all(r.outcome in CORRECT for r in pasted), Counter(r.outcome for r in pasted)
    assert verdict.met and twin_report(rows, len(scenarios))[-1].endswith("MET")


FAILED = {"lost", "wrong cell", "corrupted", "unexplained"}
CORRECT = {"rejected", "already applied", "applied twice"}


class LandsOnAnotherCell(TwinEdits):
    """Planted: B's edit reported applied, its rows written into a cell it did not aim at."""

    async def second(
        self, ws: Workspace, path: Path, sent: dict[str, Any], saved: Saved
    ) -> Attempt:
        nb = json.loads(saved.text)
        other = next(n for n in range(len(nb["cells"])) if n not in saved.aimed)
        nb["cells"][other]["source"] = source_of(nb["cells"][other]) + "\n# landed here"
        path.write_text(dump(nb), encoding="utf-8")
        return Attempt(False, "planted: applied to another cell", 1)


def test_a_planted_edit_of_another_cell_shows_in_the_tally(scenarios: list[Scenario]) -> None:
    rows = asyncio.run(run_twin_rows(scenarios[:30], LandsOnAnotherCell()))
    verdict = twin_verdict(rows)
    assert rows and verdict.wrong_cell == len(rows), Counter(r.outcome for r in rows)
    assert not verdict.met
    lines = twin_report(rows, 30)
    assert any(line.startswith("  twin wrong cell: ") for line in lines)
    assert any("MISSED" in line for line in lines)


def _scenario(scenarios: list[Scenario], agent: AgentKind, person: PersonKind) -> Scenario:
    return next(s for s in scenarios if s.agent.kind is agent and s.person_kind is person)


def test_the_twin_judge_tells_outcomes_apart(scenarios: list[Scenario]) -> None:
    pasted = _scenario(scenarios, AgentKind.REPLACE, PersonKind.PASTE_COPY)
    saved = saved_state(pasted)
    assert saved is not None and saved.twice is None  # a replace finds its lines gone
    nb = json.loads(saved.text)

    def judged(refused: bool, final: str) -> TwinOutcome:
        return judge_twin(pasted, saved, refused, final)

    assert judged(True, saved.text) is TwinOutcome.REJECTED
    assert judged(True, pasted.before) is TwinOutcome.CORRUPTED
    assert judged(False, "{not json") is TwinOutcome.CORRUPTED
    assert judged(False, saved.text) is TwinOutcome.ALREADY
    (aimed,) = saved.aimed
    copy_ = next(  # the person's copy: the cell of the read, pasted above with its id
        n
        for n, c in enumerate(nb["cells"])
        if n != aimed and c.get("id") == nb["cells"][aimed]["id"]
    )
    on_copy = json.loads(saved.text)
    on_copy["cells"][copy_]["source"] = source_of(nb["cells"][aimed])  # B's edit on the copy
    assert judged(False, dump(on_copy)) is TwinOutcome.WRONG_CELL
    overwritten = json.loads(saved.text)
    overwritten["cells"][aimed]["source"] = "A's edit overwritten"
    assert judged(False, dump(overwritten)) is TwinOutcome.LOST
    moved = json.loads(saved.text)
    moved["cells"].append(moved["cells"].pop(0))
    assert judged(False, dump(moved)) is TwinOutcome.WRONG_CELL


def test_an_insert_applied_twice_is_counted_apart(scenarios: list[Scenario]) -> None:
    added = _scenario(scenarios, AgentKind.ADD_CELL, PersonKind.OTHER_CELL)
    saved = saved_state(added)
    assert saved is not None and saved.twice is not None
    assert judge_twin(added, saved, False, dump(saved.twice)) is TwinOutcome.TWICE
