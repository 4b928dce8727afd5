"""The stale-edit safety table: what happens to a person's change when an agent edits after it.

For every scenario (bench/safety_scenarios.py: generated notebooks, and the valid nbformat-4
notebooks of the shared corpus when present; each classed before anything runs) and every
strategy (bench/safety_strategies.py), in a fresh directory: write the notebook the agent
reads, let the strategy read it, write the person's version over it, let the strategy apply
the agent's edit, then judge the file on disk against the merge an independent oracle computes
(bench/safety_oracle.py): applied, rejected, lost, wrong cell, corrupted, unexplained.

Hashline's targets: 0 lost, 0 wrong cell, 0 corrupted (and 0 unexplained) in every class;
>= 95% of non-conflicting scenarios applied; 100% of overlapping conflicts rejected. The same
scenarios also make the undo rows (bench/safety_revert.py: a person keeps working after the
agent's edit, then undoes it), with the same targets for what is lost or damaged, and the
review rows (bench/safety_review.py: the agent's edit is a proposal the person accepts after
their save, with the stale-edit targets, or rejects, leaving their file byte for byte), and the
twin-edit row (bench/safety_twin.py: two agents send one edit, A's lands, the person saves, B's
stale one is applied: refused, or a no-op, or an insert applied twice, never on another cell;
targets 0 lost, 0 wrong cell, 0 corrupted, 0 unexplained).

Run `python -m bench.safety [--smoke] [--json PATH] [--peer auto|real|model] [--live N]
[--sample N] [--install-peer]`. `--sample N` (`python -m bench --quick`) judges a declared,
deterministic sample of the full run's scenarios: N of them, half from the generated notebooks
and half from the corpus, each half spread evenly over classes and agent edits, each pick
taking the person change used least so far (`quick_sample`); every strategy, every row and
every target is judged on it, by the same oracles, and the table's first note says what was
sampled out of what. The full run (no `--sample`) judges every scenario.
`real` (and `auto` outside smoke mode) runs jupyter-mcp-server's own code, installing it into
its own virtualenv (PEER_VENV) when missing; `model` (and `auto` in smoke mode, to keep `make
test` offline) uses the model. Outside smoke mode, with the real package,
the peer also runs through its live path (a collaboration client in the room of a running
Jupyter server, bench/safety_live.py) on a sample of `--live` scenarios (default 32).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import statistics
import tempfile
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

from bench.harness import RESULTS_DIR
from bench.safety_oracle import Outcome, judge
from bench.safety_revert import revert_report, revert_verdict, run_revert_rows
from bench.safety_review import ReviewStrategy
from bench.safety_scenarios import (
    AgentKind,
    Conflict,
    PersonKind,
    Scenario,
    corpus_notebooks,
    generated_notebooks,
    scenarios_for,
)
from bench.safety_strategies import (
    PEER_PACKAGE,
    PEER_VENV,
    Attempt,
    CellIdOverwrite,
    HashlineStrategy,
    IndexTools,
    ModelPeer,
    Peer,
    RealPeer,
    Strategy,
    WholeNotebookWrite,
    install_peer,
    peer_python,
)
from bench.safety_twin import run_twin_rows, twin_report, twin_verdict

CORPUS_DIR = Path(__file__).resolve().parent.parent.parent / "shared" / "corpus"
NON_CONFLICTING_APPLIED_TARGET = 0.95
REVIEW_ACCEPT, REVIEW_REJECT = ReviewStrategy(accept=True), ReviewStrategy(accept=False)
REVIEW_TWO_AGENTS = ReviewStrategy(accept=True, agents=2)
REVIEW_PART = ReviewStrategy(accept=True, partial=True)
FAILURES = (Outcome.LOST, Outcome.WRONG_CELL, Outcome.CORRUPTED, Outcome.UNEXPLAINED)


@dataclass(frozen=True, slots=True)
class Result:
    strategy: str
    scenario: str
    agent: str
    person: str
    conflict: str
    outcome: str
    payload_bytes: int
    message: str

    @classmethod
    def of(cls, strategy: str, scenario: Scenario, attempt: Attempt, outcome: Outcome) -> Result:
        """The row of one scenario as `strategy` attempted it and the oracle judged it."""
        return cls(
            strategy=strategy,
            scenario=scenario.name,
            agent=scenario.agent.kind.value,
            person=scenario.person_kind.value,
            conflict=scenario.conflict.value,
            outcome=outcome.value,
            payload_bytes=attempt.payload_bytes,
            message=attempt.message[:400],
        )


async def run_one(strategy: Strategy, scenario: Scenario, directory: Path) -> Result:
    path = directory / "notebook.ipynb"
    path.write_text(scenario.before, encoding="utf-8")
    await strategy.prepare(path, scenario)
    path.write_text(scenario.person, encoding="utf-8")
    attempt = await strategy.apply(path, scenario)
    outcome = judge(scenario, attempt.refused, path.read_text(encoding="utf-8"))
    return Result.of(strategy.name, scenario, attempt, outcome)


async def run_all(strategies: Sequence[Strategy], scenarios: Sequence[Scenario]) -> list[Result]:
    results: list[Result] = []
    with tempfile.TemporaryDirectory(prefix="hashline-safety-") as tmp:
        for strategy in strategies:
            directory = Path(tmp) / strategy.name.replace(" ", "-")
            directory.mkdir()
            for scenario in scenarios:
                results.append(await run_one(strategy, scenario, directory))
    return results


def build_scenarios(
    smoke: bool,
    corpus: Path = CORPUS_DIR,
    *,
    seeds: int | None = None,
    corpus_limit: int | None = None,
) -> tuple[list[Scenario], str]:
    """The scenarios, and a line saying where they came from (`missing_inputs` tells from it
    whether a part was left out).

    Smoke (also the suite's table): one seed of generated notebooks (4 variants) and the 4
    smallest corpus notebooks; full: 2 seeds and the 20 smallest corpus notebooks. Each agent
    edit kind aims at one cell per notebook, with every person change that fits it."""
    notebooks = list(generated_notebooks(seeds if seeds is not None else (1 if smoke else 2)))
    generated = len(notebooks)
    limit = corpus_limit if corpus_limit is not None else (4 if smoke else 20)
    if (corpus / "MANIFEST.tsv").is_file():
        notebooks += corpus_notebooks(corpus, limit)
        where = f"{generated} generated notebooks + {len(notebooks) - generated} from {corpus}"
    else:
        where = f"{generated} generated notebooks; {CORPUS_ABSENT}: {corpus} is absent"
    found = [s for label, raw in notebooks for s in scenarios_for(label, raw)]
    return found, where


CORPUS_ABSENT = "corpus part NOT MEASURED"


def missing_inputs(where: str) -> list[str]:
    """The parts of the table left out for want of their input (the check fails on them)."""
    return [where.split("; ")[1]] if CORPUS_ABSENT in where else []


# -- the verdict -------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class ReviewVerdict:
    """The review rows (bench/safety_review.py): accepts as safe as stale edits, rejects that
    leave the person's file byte for byte."""

    accept: HashlineVerdict
    rejects: int
    rejects_kept: int  # the person's file left byte for byte
    two_agents: HashlineVerdict  # two agents' concurrent proposals: one accepted, one rejected
    part: HashlineVerdict  # all cells of a proposal accepted but a decoy, which is rejected
    part_decoys: int  # the part rows that had a decoy cell

    @property
    def met(self) -> bool:
        rejects_met = self.rejects > 0 and self.rejects_kept == self.rejects
        parts_met = self.part.met and self.part_decoys > 0
        return self.accept.met and rejects_met and self.two_agents.met and parts_met


def review_verdict(results: Iterable[Result]) -> ReviewVerdict:
    results = list(results)
    rejects = [r for r in results if r.strategy == REVIEW_REJECT.name]
    return ReviewVerdict(
        accept=hashline_verdict(results, REVIEW_ACCEPT.name),
        rejects=len(rejects),
        rejects_kept=sum(r.outcome == Outcome.REJECTED.value for r in rejects),
        two_agents=hashline_verdict(results, REVIEW_TWO_AGENTS.name),
        part=hashline_verdict(results, REVIEW_PART.name),
        part_decoys=sum(
            r.message.startswith("decoy ") for r in results if r.strategy == REVIEW_PART.name
        ),
    )


def review_lines(verdict: ReviewVerdict) -> list[str]:
    kept = verdict.rejects_kept / verdict.rejects if verdict.rejects else 0.0
    mark = "MET" if verdict.met else "MISSED"
    return [
        "",
        "== review (the agent's edit proposed; the person saves, then accepts or rejects it)",
        *(line.replace("  hashline ", "  accept: ", 1) for line in _verdict_lines(verdict.accept)),
        f"  reject: person's file left byte for byte {kept:>12.1%}   target 100%    {mark}",
        f"  part of a proposal accepted, a decoy cell in it rejected ({verdict.part_decoys} "
        "with a decoy):",
        *(line.replace("  hashline ", "  part: ", 1) for line in _verdict_lines(verdict.part)),
        "  two agents propose the same edit at once; one accepted, then the other rejected:",
        *(
            line.replace("  hashline ", "  two agents: ", 1)
            for line in _verdict_lines(verdict.two_agents)
        ),
    ]


@dataclass(frozen=True, slots=True)
class HashlineVerdict:
    lost: int
    wrong_cell: int
    corrupted: int
    unexplained: int
    non_conflicting_applied: float
    overlapping_rejected: float

    @property
    def met(self) -> bool:
        return (
            self.lost == self.wrong_cell == self.corrupted == self.unexplained == 0
            and self.non_conflicting_applied >= NON_CONFLICTING_APPLIED_TARGET
            and self.overlapping_rejected == 1.0
        )


def share(results: Sequence[Result], conflict: Conflict, outcome: Outcome) -> float:
    mine = [r for r in results if r.conflict == conflict.value]
    return sum(r.outcome == outcome.value for r in mine) / len(mine) if mine else 1.0


def hashline_verdict(
    results: Iterable[Result], strategy: str = HashlineStrategy.name
) -> HashlineVerdict:
    """The targets' figures for `strategy`'s rows (hashline's stale edits by default)."""
    mine = [r for r in results if r.strategy == strategy]
    count = Counter(r.outcome for r in mine)
    return HashlineVerdict(
        lost=count[Outcome.LOST.value],
        wrong_cell=count[Outcome.WRONG_CELL.value],
        corrupted=count[Outcome.CORRUPTED.value],
        unexplained=count[Outcome.UNEXPLAINED.value],
        non_conflicting_applied=share(mine, Conflict.NONE, Outcome.APPLIED),
        overlapping_rejected=share(mine, Conflict.OVERLAP, Outcome.REJECTED),
    )


# -- the report --------------------------------------------------------------------------------


def _table(results: Sequence[Result], names: Sequence[str]) -> list[str]:
    head = "".join(f"{o.value:>12}" for o in Outcome)
    lines = [f"{'strategy':<36}{'class':<17}{'n':>5}{head}  payload B median"]
    for name in names:
        mine = [r for r in results if r.strategy == name]
        for conflict in Conflict:
            rows = [r for r in mine if r.conflict == conflict.value]
            count = Counter(r.outcome for r in rows)
            cols = "".join(f"{count[o.value]:>12}" for o in Outcome)
            payload = statistics.median(r.payload_bytes for r in rows) if rows else 0
            label = name if conflict is Conflict.NONE else ""
            lines.append(f"{label:<36}{conflict.value:<17}{len(rows):>5}{cols}{payload:>18,.0f}")
        applied = share(mine, Conflict.NONE, Outcome.APPLIED)
        rejected = share(mine, Conflict.OVERLAP, Outcome.REJECTED)
        lines.append(
            f"{'':<36}non-conflicting applied {applied:.1%}, overlapping rejected {rejected:.1%}"
        )
    return lines


def _by(results: Sequence[Result], field: str, values: Iterable[str]) -> list[str]:
    """Hashline's outcomes per agent edit or per person change, most frequent first."""
    mine = [r for r in results if r.strategy == HashlineStrategy.name]
    lines = []
    for value in values:
        rows = [r for r in mine if getattr(r, field) == value]
        if not rows:
            continue
        count = Counter(f"{r.outcome} ({r.conflict})" for r in rows)
        lines.append(f"  {value:<48}" + ", ".join(f"{n} {o}" for o, n in count.most_common()))
    return lines


def _verdict_lines(verdict: HashlineVerdict) -> list[str]:
    def mark(ok: bool) -> str:
        return "MET" if ok else "MISSED"

    nc, ov = verdict.non_conflicting_applied, verdict.overlapping_rejected
    rows = [
        ("person's change lost", f"{verdict.lost}", "0", verdict.lost == 0),
        ("wrong cell edited", f"{verdict.wrong_cell}", "0", verdict.wrong_cell == 0),
        ("file corrupted", f"{verdict.corrupted}", "0", verdict.corrupted == 0),
        ("unexplained results", f"{verdict.unexplained}", "0", verdict.unexplained == 0),
        ("non-conflicting scenarios applied", f"{nc:.1%}", ">= 95%",
         nc >= NON_CONFLICTING_APPLIED_TARGET),
        ("overlapping conflicts rejected", f"{ov:.1%}", "100%", ov == 1.0),
    ]  # fmt: skip
    return [
        f"  hashline {what:<38}{got:>8}   target {want:<7}{mark(ok)}"
        for what, got, want, ok in rows
    ]


def report(results: Sequence[Result], names: Sequence[str], notes: Sequence[str]) -> list[str]:
    lines = ["", "== stale-edit safety (scenarios per strategy and class; outcome counts)", *notes]
    lines += _table(results, names)
    lines += [
        "",
        "hashline by the agent's edit:",
        *_by(results, "agent", [k.value for k in AgentKind]),
    ]
    lines += ["", "hashline by the person's change:"]
    lines += _by(results, "person", [k.value for k in PersonKind])
    lines += ["", *_verdict_lines(hashline_verdict(results))]
    for miss in misses(results):
        lines.append(f"  hashline {miss.outcome}: {miss.scenario}: {miss.message.splitlines()[0]}")
    return lines


def misses(results: Iterable[Result]) -> list[Result]:
    """Hashline's results that miss a target: failures, spurious rejections, applied overlaps."""
    out = []
    for r in results:
        if r.strategy != HashlineStrategy.name:
            continue
        failed = r.outcome in {o.value for o in FAILURES}
        spurious = r.conflict == Conflict.NONE.value and r.outcome != Outcome.APPLIED.value
        overlap = r.conflict == Conflict.OVERLAP.value and r.outcome != Outcome.REJECTED.value
        if failed or spurious or overlap:
            out.append(r)
    return out


def choose_peer(mode: str, smoke: bool) -> Peer:
    """The real jupyter-mcp-server code (`real`; `auto` outside smoke mode), else the model.

    `auto` installs the package into its own virtualenv when it is missing; any failure falls
    back to the model, and the output says which one ran.
    """
    if mode == "model" or (mode == "auto" and smoke):
        return ModelPeer()
    python = peer_python()
    if python is None:
        print(f"installing {PEER_PACKAGE} into {PEER_VENV} to compare its real code ...")
        failure = install_peer()
        if failure is not None:
            print(f"  could not install it ({failure}); using the model of its behaviour")
            return ModelPeer()
        python = peer_python()
    try:
        return RealPeer(python) if python is not None else ModelPeer()
    except (OSError, RuntimeError) as error:
        print(f"jupyter-mcp-server would not run ({error}); using the model of its behaviour")
        return ModelPeer()


def live_sample(scenarios: Sequence[Scenario], size: int) -> list[Scenario]:
    """`size` scenarios spread evenly over classes and agent edits, each pick taking the
    person change used least so far (deterministic)."""
    groups: dict[tuple[str, str], list[Scenario]] = {}
    for s in scenarios:
        groups.setdefault((s.conflict.value, s.agent.kind.value), []).append(s)
    used: Counter[PersonKind] = Counter()
    picked: list[Scenario] = []
    while len(picked) < size and any(groups.values()):
        for key in sorted(groups):
            bucket = groups[key]
            if bucket and len(picked) < size:
                choice = min(bucket, key=lambda s: (used[s.person_kind], bucket.index(s)))
                bucket.remove(choice)
                used[choice.person_kind] += 1
                picked.append(choice)
    return picked


def quick_sample(scenarios: Sequence[Scenario], size: int) -> list[Scenario]:
    """`size` scenarios (deterministic): half from generated notebooks, half from the corpus
    (the other part making up for one that has too few), each half picked by `live_sample`."""
    corpus = [s for s in scenarios if s.label.startswith("corpus")]
    generated = [s for s in scenarios if not s.label.startswith("corpus")]
    from_corpus = live_sample(corpus, size - size // 2 if generated else size)
    from_generated = live_sample(generated, size - len(from_corpus))
    if len(from_corpus) + len(from_generated) < size:  # too few generated: more of the corpus
        from_corpus = live_sample(corpus, size - len(from_generated))
    return from_generated + from_corpus


def main() -> None:
    parser = argparse.ArgumentParser(description="stale-edit safety table")
    parser.add_argument("--smoke", action="store_true", help="a small set of scenarios")
    parser.add_argument("--repeats", type=int, default=1, help="ignored (not a timing bench)")
    parser.add_argument("--json", type=Path, default=None, help="where to write raw figures")
    parser.add_argument("--peer", choices=("auto", "real", "model"), default="auto")
    parser.add_argument("--live", type=int, default=32, help="scenarios for the live peer")
    parser.add_argument("--install-peer", action="store_true", help="install it, then exit")
    parser.add_argument("--sample", type=int, default=None, help="judge N scenarios (quick)")
    args = parser.parse_args()
    if args.install_peer:
        raise SystemExit(install_peer() or 0)
    scenarios, where = build_scenarios(args.smoke)
    if args.sample is not None and args.sample < len(scenarios):
        every = len(scenarios)
        scenarios = quick_sample(scenarios, args.sample)
        where += (
            f"; SAMPLED (quick): {len(scenarios)} of its {every} scenarios, half generated and "
            "half corpus, spread over classes and agent edits (the full run judges all)"
        )
    peer = choose_peer(args.peer, args.smoke)
    strategies: list[Strategy] = [
        HashlineStrategy(), REVIEW_ACCEPT, REVIEW_REJECT, REVIEW_PART, REVIEW_TWO_AGENTS,
        IndexTools(peer, replace=False),
        IndexTools(peer, replace=True), CellIdOverwrite(), WholeNotebookWrite(),
    ]  # fmt: skip
    try:
        results = asyncio.run(run_all(strategies, scenarios))
    finally:
        if isinstance(peer, RealPeer):
            peer.close()
    classes = Counter(s.conflict.value for s in scenarios)
    notes = [
        f"scenarios: {len(scenarios)} over {where}; "
        + ", ".join(f"{n} {c}" for c, n in classes.items()),
        f"cell-index strategies: {peer.kind}",
    ]
    names = [s.name for s in strategies]
    if isinstance(peer, RealPeer) and not args.smoke and args.live > 0:
        from bench.safety_live import live_scenarios, run_live

        sample = live_sample(live_scenarios(scenarios), args.live)
        live_results, note = run_live(sample)
        results += live_results
        names += sorted({r.strategy for r in live_results})
        notes.append(note)
    undo_rows = asyncio.run(run_revert_rows(scenarios))
    twin_rows = asyncio.run(run_twin_rows(scenarios))
    review = review_verdict(results)
    twin_lines = twin_report(twin_rows, len(scenarios))
    print("\n".join([*report(results, names, notes), *review_lines(review),
                     *revert_report(undo_rows), *twin_lines]))  # fmt: skip
    missing = missing_inputs(where)
    for why in missing:
        print(f"!! MISSING: {why} (`python -m bench --check` fails on it)")
    path = args.json or RESULTS_DIR / "safety.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    verdict, undo, twin = (
        hashline_verdict(results),
        revert_verdict(undo_rows),
        twin_verdict(twin_rows),
    )
    summary = {
        "notes": notes,
        "missing": missing,
        "hashline": asdict(verdict) | {"met": verdict.met},
        "revert": asdict(undo) | {"met": undo.met},
        "review": asdict(review) | {"met": review.met},
        "twin": asdict(twin) | {"met": twin.met},
    }
    rows = {
        "results": [asdict(r) for r in results],
        "revert_rows": [asdict(r) for r in undo_rows],
        "twin_rows": [asdict(r) for r in twin_rows],
    }
    path.write_text(json.dumps(summary | rows, indent=1))


if __name__ == "__main__":
    main()
