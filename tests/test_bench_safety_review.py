"""The review rows of the stale-edit safety table (bench/safety_review.py): the agent's edit is
proposed (nothing written), the person saves, then accepts or rejects it, through the real
workspace in review mode. Judged by the table's independent oracle: accepts as safe as stale
edits (0 lost, 0 wrong cell, >= 95% of non-conflicting applied, overlaps refused), rejects
leaving the person's file byte for byte; a planted accept that loses work shows in the tally."""

from __future__ import annotations

import asyncio
from collections import Counter
from pathlib import Path

import pytest

from bench.safety import (
    REVIEW_ACCEPT,
    REVIEW_PART,
    REVIEW_REJECT,
    REVIEW_TWO_AGENTS,
    Result,
    build_scenarios,
    review_lines,
    review_verdict,
    run_all,
)
from bench.safety_review import ProposalWroteError, ReviewStrategy
from bench.safety_scenarios import Scenario
from bench.safety_strategies import Attempt
from jupyter_hashline.tools import ReviewPolicy


@pytest.fixture(scope="module")
def scenarios() -> list[Scenario]:
    found, _ = build_scenarios(smoke=True)
    return found


@pytest.mark.slow
def test_review_accepts_and_rejects_meet_the_tables_targets(scenarios: list[Scenario]) -> None:
    strategies = [REVIEW_ACCEPT, REVIEW_REJECT, REVIEW_PART, REVIEW_TWO_AGENTS]
    results = asyncio.run(run_all(strategies, scenarios))
    verdict = review_verdict(results)
    accepted = verdict.accept
    failures = [
        f"{r.outcome}: {r.scenario}: {r.message}"
        for r in results
        if r.outcome in {"lost", "wrong cell", "corrupted", "unexplained"}
    ]
    assert (accepted.lost, accepted.wrong_cell, accepted.corrupted, accepted.unexplained) == (
        0, 0, 0, 0,
    ), "\n".join(failures)  # fmt: skip
    assert accepted.non_conflicting_applied >= 0.95
    assert accepted.overlapping_rejected == 1.0
    assert verdict.rejects == len(scenarios) == verdict.rejects_kept
    part = verdict.part
    assert (part.lost, part.wrong_cell, part.corrupted, part.unexplained) == (0, 0, 0, 0)
    assert part.non_conflicting_applied >= 0.95 and part.overlapping_rejected == 1.0
    assert verdict.part_decoys >= 0.9 * len(scenarios)  # nearly every notebook has a decoy
    two = verdict.two_agents
    assert (two.lost, two.wrong_cell, two.corrupted, two.unexplained) == (0, 0, 0, 0)
    assert two.non_conflicting_applied >= 0.95 and two.overlapping_rejected == 1.0
    assert verdict.met
    lines = review_lines(verdict)
    assert all(line.endswith("MET") for line in lines[2:] if "target" in line), lines


class LosingAccept(ReviewStrategy):
    """Planted: accepts, then writes the notebook the agent read over the file (the person's
    change gone): the tally must count it."""

    async def apply(self, path: Path, scenario: Scenario) -> Attempt:
        attempt = await super().apply(path, scenario)
        path.write_text(scenario.before, encoding="utf-8")
        return attempt


class WritingProposal(ReviewStrategy):
    """Planted: review is off, so the proposed edit lands at once."""

    policy = ReviewPolicy()


class RejectUndoingTheAccept(ReviewStrategy):
    """Planted: the two agents' row, whose reject after the accept puts back the notebook the
    agents read (the person's change and the accepted edit gone): the tally must count it."""

    async def apply(self, path: Path, scenario: Scenario) -> Attempt:
        attempt = await super().apply(path, scenario)
        if not attempt.refused:
            path.write_text(scenario.before, encoding="utf-8")
        return attempt


class DecoyLeaks(ReviewStrategy):
    """Planted: the part row accepting the whole proposal, decoy and all."""

    async def _accept_but_decoy(self, number: int) -> Attempt:
        return await self._decide_whole(number, [])


def test_a_leaked_decoy_shows_in_the_tally(scenarios: list[Scenario]) -> None:
    sample = scenarios[:40]
    leaky = DecoyLeaks(accept=True, partial=True)
    assert leaky.name == REVIEW_PART.name
    results: list[Result] = asyncio.run(run_all([leaky], sample))
    verdict = review_verdict(results)
    assert verdict.part.wrong_cell + verdict.part.unexplained > 0, Counter(
        r.outcome for r in results
    )
    assert not verdict.part.met


def test_a_planted_failure_of_the_two_agents_row_shows_in_the_tally(
    scenarios: list[Scenario],
) -> None:
    sample = scenarios[:40]
    undoing = RejectUndoingTheAccept(accept=True, agents=2)
    assert undoing.name == REVIEW_TWO_AGENTS.name
    results: list[Result] = asyncio.run(run_all([REVIEW_ACCEPT, REVIEW_REJECT, undoing], sample))
    verdict = review_verdict(results)
    assert verdict.accept.met and verdict.rejects_kept == verdict.rejects
    assert verdict.two_agents.lost > 0, Counter(r.outcome for r in results)
    assert not verdict.met
    assert any(
        "two agents: person's change lost" in x and "MISSED" in x for x in review_lines(verdict)
    )


def test_a_planted_failure_shows_in_the_tally(scenarios: list[Scenario]) -> None:
    sample = scenarios[:40]
    losing = LosingAccept(accept=True)
    losing.name = REVIEW_ACCEPT.name
    results: list[Result] = asyncio.run(run_all([losing, REVIEW_REJECT], sample))
    verdict = review_verdict(results)
    assert verdict.accept.lost + verdict.accept.wrong_cell > 0, Counter(r.outcome for r in results)
    assert not verdict.met and review_lines(verdict)[2].rstrip().endswith("MISSED")
    with pytest.raises(ProposalWroteError):
        asyncio.run(run_all([WritingProposal(accept=True)], sample[:1]))
