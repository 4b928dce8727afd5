"""The stale-edit safety table is correctness, not speed: hashline's column runs here.

The suite's table is the smoke set (`build_scenarios(smoke=True)`: one seed of the generated
notebooks in all four variants and the four smallest corpus notebooks, every agent edit kind
times every person change that fits, about 450 scenarios, classed before anything runs). The
full table (about 1,700 scenarios, and the peers, real or modelled, also through their live
path) runs in `python -m bench`. Hashline, through the real `Patcher` + `NotebookFilesystem`
on disk, judged against the independent oracle: 0 lost, 0 wrong cell, 0 corrupted, 0
unexplained; >= 95% of non-conflicting scenarios applied; every overlapping conflict rejected.
"""

from __future__ import annotations

import asyncio
import json
from collections import Counter

import pytest

from bench.safety import Result, build_scenarios, hashline_verdict, misses, run_all
from bench.safety_oracle import Outcome, expected, judge
from bench.safety_scenarios import (
    MARKER,
    AgentKind,
    Conflict,
    PersonKind,
    Scenario,
    Touch,
    Tracked,
    apply_ops,
    classify,
    dump,
    generated_notebooks,
    scenarios_for,
)
from bench.safety_strategies import (
    HashlineStrategy,
    IndexTools,
    ModelPeer,
    WholeNotebookWrite,
)


@pytest.fixture(scope="module")
def table() -> tuple[list[Scenario], list[Result]]:
    scenarios, _ = build_scenarios(smoke=True)
    return scenarios, asyncio.run(run_all([HashlineStrategy()], scenarios))


def _misses(results: list[Result]) -> str:
    return "\n".join(
        f"{r.outcome} ({r.conflict}): {r.scenario}: {r.message}" for r in misses(results)
    )


def test_hashline_meets_its_targets_on_the_suite_table(
    table: tuple[list[Scenario], list[Result]],
) -> None:
    scenarios, results = table
    assert {s.agent.kind for s in scenarios} == set(AgentKind)
    assert {s.person_kind for s in scenarios} == set(PersonKind)
    classes = Counter(s.conflict for s in scenarios)
    assert min(classes[c] for c in Conflict) >= 50, classes
    verdict = hashline_verdict(results)
    failures = (verdict.lost, verdict.wrong_cell, verdict.corrupted, verdict.unexplained)
    assert failures == (0, 0, 0, 0), _misses(results)
    assert verdict.non_conflicting_applied >= 0.95, _misses(results)
    assert verdict.overlapping_rejected == 1.0, _misses(results)
    assert verdict.met


def test_a_pasted_copy_never_receives_the_edit_and_neighbours_merge(
    table: tuple[list[Scenario], list[Result]],
) -> None:
    _, results = table
    pasted = [r for r in results if r.person == PersonKind.PASTE_COPY.value]
    assert pasted and {r.outcome for r in pasted} <= {"applied", "rejected"}
    assert sum(r.outcome == "applied" for r in pasted) > len(pasted) // 2
    beside = [r for r in results if r.person == PersonKind.NEIGHBOUR.value]
    assert beside and {r.outcome for r in beside} == {"applied"}
    same = [r for r in results if r.person == PersonKind.SAME_LINES.value]
    assert same and {r.outcome for r in same} == {"rejected"}


# -- the classes, decided before anything runs -------------------------------------------------


def test_disjoint_ranges_do_not_conflict_and_touching_ones_do() -> None:
    agent = Touch(frozenset({(3, 4)}), cells=frozenset({3}))
    assert classify(agent, Touch(frozenset({(3, 5)}))) is Conflict.NONE
    assert classify(agent, Touch(frozenset({(3, 4)}))) is Conflict.OVERLAP
    inserting = Touch(frozenset({(3, 4)}), frozenset({(3, 5)}), frozenset({3}))
    assert classify(inserting, Touch(gaps=frozenset({(3, 5)}))) is Conflict.OVERLAP
    assert classify(inserting, Touch(gaps=frozenset({(3, 4)}))) is Conflict.NONE
    wide = Touch(frozenset({(3, 4), (3, 5)}), cells=frozenset({3}))
    assert classify(wide, Touch(gaps=frozenset({(3, 5)}))) is Conflict.OVERLAP  # inside it
    assert classify(agent, Touch(cells=frozenset({3}))) is Conflict.STRUCTURE
    assert classify(agent, Touch(frozenset({(3, MARKER)}))) is Conflict.NONE


def one(kind: AgentKind, person: PersonKind) -> Scenario:
    label, raw = next(iter(generated_notebooks(1)))
    return next(
        s for s in scenarios_for(label, raw) if s.agent.kind is kind and s.person_kind is person
    )


# -- the oracle tells outcomes apart -----------------------------------------------------------


def test_the_oracle_judges_the_file_not_the_reply() -> None:
    calm = one(AgentKind.REPLACE, PersonKind.RERUN)
    assert calm.conflict is Conflict.NONE
    want = expected(calm)
    assert want is not None
    assert judge(calm, False, dump(want)) is Outcome.APPLIED
    assert judge(calm, True, calm.person) is Outcome.REJECTED
    assert judge(calm, True, dump(want)) is Outcome.CORRUPTED  # refused, yet written
    assert judge(calm, False, "{not json") is Outcome.CORRUPTED
    assert judge(calm, False, calm.person) is Outcome.UNEXPLAINED  # "applied", nothing landed
    read = Tracked.of(json.loads(calm.before))
    assert apply_ops(read, calm.agent.ops)
    assert judge(calm, False, dump(read.notebook())) is Outcome.LOST  # the re-run's outputs


def test_whole_cells_are_compared_outputs_metadata_and_ids_too() -> None:
    calm = one(AgentKind.REPLACE, PersonKind.OTHER_CELL)
    want = expected(calm)
    assert want is not None
    code = next(n for n, c in enumerate(want["cells"]) if c.get("outputs"))
    for damage in ("outputs", "metadata", "id"):
        broken = json.loads(json.dumps(want))
        cell = broken["cells"][code]
        cell[damage] = (
            [] if damage == "outputs" else ({"tags": ["x"]} if damage == "metadata" else "other")
        )
        assert judge(calm, False, dump(broken)) is not Outcome.APPLIED, damage


def test_the_agents_change_on_another_cell_is_a_wrong_cell() -> None:
    moved = one(AgentKind.REPLACE, PersonKind.DELETE_ABOVE)
    [result] = asyncio.run(run_all([IndexTools(ModelPeer(), replace=False)], [moved]))
    assert result.outcome == Outcome.WRONG_CELL.value
    [mine] = asyncio.run(run_all([HashlineStrategy()], [moved]))
    assert mine.outcome == Outcome.APPLIED.value, mine.message
    [stale] = asyncio.run(run_all([WholeNotebookWrite()], [moved]))
    assert stale.outcome == Outcome.LOST.value


# -- markers naming another cell's id ----------------------------------------------------------


def test_markers_naming_another_cells_id_never_move_its_data(
    table: tuple[list[Scenario], list[Result]],
) -> None:
    _, results = table
    family = [r for r in results if r.agent == AgentKind.MARKER_ID.value]
    people = {r.person for r in family}
    assert {PersonKind.DELETE_NAMED.value, PersonKind.MOVE_NAMED.value} <= people
    assert PersonKind.OTHER_CELL.value in people  # the id pasted, the cell it names left alone
    assert {r.outcome for r in family} <= {"applied", "rejected"}, _misses(family)
    calm = [r for r in family if r.conflict == Conflict.NONE.value]
    assert calm and all(r.outcome == "applied" for r in calm), _misses(family)


def test_the_oracle_sees_a_named_cells_outputs_moved_to_the_marker() -> None:
    # What a marker with an existing id once did: the named cell's outputs went to the new cell.
    pasted = next(
        s
        for label, raw in generated_notebooks(1)
        for s in scenarios_for(label, raw)
        if s.agent.kind is AgentKind.MARKER_ID
        and s.person_kind is PersonKind.RERUN
        and s.agent.ops[0].cell_type == "code"
    )
    want = expected(pasted)
    assert want is not None and judge(pasted, False, dump(want)) is Outcome.APPLIED
    named = pasted.agent.ops[0].named
    cells = want["cells"]
    new = next(n for n, c in enumerate(cells) if "agent " + pasted.agent.token in c["source"])
    at = named if named < new else named + 1
    broken = json.loads(json.dumps(want))
    moved = broken["cells"]
    moved[new]["outputs"], moved[at]["outputs"] = moved[at]["outputs"], []
    moved[new]["execution_count"], moved[at]["execution_count"] = moved[at]["execution_count"], None
    assert judge(pasted, False, dump(broken)) in (Outcome.WRONG_CELL, Outcome.LOST)
