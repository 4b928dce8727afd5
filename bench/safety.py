"""The stale-edit safety table: what happens to a person's change when an agent edits after it.

For every scenario (bench/safety_scenarios.py: generated notebooks, and the valid nbformat-4
notebooks of the shared corpus when present) and every strategy (bench/safety_strategies.py),
in a fresh directory: write the notebook the agent reads, let the strategy read it, write the
person's version over it, let the strategy apply the agent's intended change, then classify
the file on disk:

- file corrupted: not a valid notebook any more (or changed although the edit was refused);
- rejected: the strategy refused and left the file as the person saved it; counted as "true
  conflict rejected" or "non-conflicting change rejected" by the scenario's kind;
- both changes kept: the cells equal the merge of the two changes;
- wrong cell edited: the agent's new lines landed in a cell other than its target;
- person's change lost: the agent's lines landed in the target, but what the person did is gone;
- unexplained: anything else (listed in full; should not happen).

Edit payload: bytes of the tool-call arguments each strategy had to emit, per scenario.
Hashline targets (DESIGN §8, issue 12): 0 lost, 0 wrong-cell, 0 corrupted, >= 95% of
non-conflicting scenarios applied (both changes kept), 100% of true conflicts rejected.

Run `python -m bench.safety [--smoke] [--json PATH] [--peer auto|real|model] [--install-peer]`.
`real` (and `auto` outside smoke mode) runs jupyter-mcp-server's own code, installing it into its
own virtualenv (PEER_VENV) when missing, and reports how often the model agrees with it; `model`
(and `auto` in smoke mode, to keep `make test` fast and offline) uses the model.
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
from enum import Enum
from pathlib import Path

import nbformat

from bench.harness import RESULTS_DIR
from bench.safety_scenarios import (
    Cells,
    PersonEdit,
    Scenario,
    cells_of,
    corpus_notebooks,
    generated_notebooks,
    scenarios_for,
    source_of,
)
from bench.safety_strategies import (
    PEER_PACKAGE,
    PEER_VENV,
    Attempt,
    CellIdOverwrite,
    HashlineStrategy,
    IndexOverwrite,
    IndexStringReplace,
    ModelPeer,
    Peer,
    RealPeer,
    Strategy,
    WholeNotebookWrite,
    install_peer,
    peer_python,
)

CORPUS_DIR = Path(__file__).resolve().parent.parent.parent / "shared" / "corpus"
NON_CONFLICTING_APPLIED_TARGET = 0.95


class Outcome(Enum):
    BOTH_KEPT = "both kept"
    PERSON_LOST = "person's lost"
    WRONG_CELL = "wrong cell"
    REJECTED_OK = "no-conflict rejected"
    REJECTED_CONFLICT = "conflict rejected"
    CORRUPTED = "corrupted"
    UNEXPLAINED = "unexplained"


@dataclass(frozen=True, slots=True)
class Result:
    strategy: str
    scenario: str
    kind: str
    conflicting: bool
    outcome: str
    payload_bytes: int
    message: str


def _valid_cells(text: str) -> Cells | None:
    try:
        nbformat.validate(nbformat.reads(text, as_version=4))
        return cells_of(json.loads(text))
    except Exception:  # anything unreadable or invalid is a corrupted file
        return None


def classify(scenario: Scenario, attempt: Attempt, final: str) -> Outcome:
    cells = _valid_cells(final)
    if cells is None or (attempt.refused and final != scenario.person):
        return Outcome.CORRUPTED
    if attempt.refused:
        conflict = scenario.kind.conflicting
        return Outcome.REJECTED_CONFLICT if conflict else Outcome.REJECTED_OK
    if cells == scenario.expected:
        return Outcome.BOTH_KEPT
    person = cells_of(json.loads(scenario.person))
    if cells == _stale_notebook(scenario):
        return Outcome.PERSON_LOST  # the notebook as the agent read it, plus its change
    holders = [n for n, (_, source) in enumerate(cells) if scenario.intent.token in source]
    if not holders:
        return Outcome.UNEXPLAINED  # reported as applied, yet the agent's lines are nowhere
    if len(cells) == len(person) and holders != [scenario.target_after]:
        return Outcome.WRONG_CELL
    return Outcome.PERSON_LOST if _person_gone(scenario, cells, person) else Outcome.UNEXPLAINED


def _stale_notebook(scenario: Scenario) -> Cells:
    read = json.loads(scenario.before)
    target = read["cells"][scenario.intent.cell_index]
    target["source"] = scenario.intent.apply_to(source_of(target))
    return cells_of(read)


def _person_gone(scenario: Scenario, cells: Cells, person: Cells) -> bool:
    """The person's change is absent: cells reverted, or the target rewritten from the read."""
    if len(cells) != len(person):
        return True
    target = scenario.target_after
    if any(cells[n] != person[n] for n in range(len(cells)) if n != target):
        return True
    read = json.loads(scenario.before)["cells"][scenario.intent.cell_index]
    return cells[target][1] == scenario.intent.apply_to(source_of(read))


async def run_one(strategy: Strategy, scenario: Scenario, directory: Path) -> Result:
    path = directory / "notebook.ipynb"
    path.write_text(scenario.before, encoding="utf-8")
    await strategy.prepare(path, scenario)
    path.write_text(scenario.person, encoding="utf-8")
    attempt = await strategy.apply(path, scenario)
    outcome = classify(scenario, attempt, path.read_text(encoding="utf-8"))
    return Result(
        strategy.name,
        scenario.name,
        scenario.kind.value,
        scenario.kind.conflicting,
        outcome.value,
        attempt.payload_bytes,
        attempt.message[:400],
    )


async def run_all(strategies: Sequence[Strategy], scenarios: Sequence[Scenario]) -> list[Result]:
    results: list[Result] = []
    with tempfile.TemporaryDirectory(prefix="hashline-safety-") as tmp:
        for strategy in strategies:
            directory = Path(tmp) / strategy.name.replace(" ", "-")
            directory.mkdir()
            for scenario in scenarios:
                results.append(await run_one(strategy, scenario, directory))
    return results


def build_scenarios(smoke: bool, corpus: Path = CORPUS_DIR) -> tuple[list[Scenario], str]:
    """The scenarios, and a line saying where they came from."""
    notebooks = list(generated_notebooks(1 if smoke else 3))
    generated = len(notebooks)
    if (corpus / "MANIFEST.tsv").is_file():
        notebooks += corpus_notebooks(corpus, 4 if smoke else None)
        where = f"{generated} generated notebooks + {len(notebooks) - generated} from {corpus}"
    else:
        where = f"{generated} generated notebooks; corpus part skipped: {corpus} is absent"
    targets = 2 if smoke else 4
    found = [s for label, raw in notebooks for s in scenarios_for(label, raw, targets)]
    return found, where


@dataclass(frozen=True, slots=True)
class HashlineVerdict:
    lost: int
    wrong_cell: int
    corrupted: int
    unexplained: int
    non_conflicting_applied: float
    conflicts_rejected: float

    @property
    def met(self) -> bool:
        return (
            self.lost == self.wrong_cell == self.corrupted == self.unexplained == 0
            and self.non_conflicting_applied >= NON_CONFLICTING_APPLIED_TARGET
            and self.conflicts_rejected == 1.0
        )


def hashline_verdict(results: Iterable[Result]) -> HashlineVerdict:
    mine = [r for r in results if r.strategy == HashlineStrategy.name]
    count = Counter(r.outcome for r in mine)
    calm = [r for r in mine if not r.conflicting]
    # a true conflict: the person changed the agent's own lines (touching lines are reported
    # apart, in the per-kind table: applying both there is fine too)
    true = [r for r in mine if r.kind == PersonEdit.SAME_LINES.value]
    applied = sum(r.outcome == Outcome.BOTH_KEPT.value for r in calm)
    rejected = sum(r.outcome == Outcome.REJECTED_CONFLICT.value for r in true)
    return HashlineVerdict(
        count[Outcome.PERSON_LOST.value],
        count[Outcome.WRONG_CELL.value],
        count[Outcome.CORRUPTED.value],
        count[Outcome.UNEXPLAINED.value],
        applied / len(calm) if calm else 1.0,
        rejected / len(true) if true else 1.0,
    )


def _table(results: Sequence[Result], names: Sequence[str]) -> list[str]:
    widths = [max(len(o.value), 4) + 2 for o in Outcome]
    head = "".join(f"{o.value:>{w}}" for o, w in zip(Outcome, widths, strict=True))
    lines = [f"{'strategy':<27}{'n':>4}{head}  payload B median"]
    for name in names:
        mine = [r for r in results if r.strategy == name]
        count = Counter(r.outcome for r in mine)
        cols = "".join(f"{count[o.value]:>{w}}" for o, w in zip(Outcome, widths, strict=True))
        payload = statistics.median(r.payload_bytes for r in mine) if mine else 0
        lines.append(f"{name:<27}{len(mine):>4}{cols}{payload:>18,.0f}")
    return lines


def _by_kind(results: Sequence[Result], names: Sequence[str]) -> list[str]:
    """Per person edit: each strategy's outcomes, most frequent first."""
    lines = []
    for kind in PersonEdit:
        lines.append(f"  person {kind.value}{' (conflict)' if kind.conflicting else ''}:")
        for name in names:
            count = Counter(
                r.outcome for r in results if r.strategy == name and r.kind == kind.value
            )
            shown = ", ".join(f"{n} {outcome}" for outcome, n in count.most_common())
            lines.append(f"    {name:<28}{shown}")
    return lines


def _verdict_lines(verdict: HashlineVerdict) -> list[str]:
    def mark(ok: bool) -> str:
        return "MET" if ok else "MISSED"

    rows = [
        ("person's change lost", f"{verdict.lost}", "0", verdict.lost == 0),
        ("wrong cell edited", f"{verdict.wrong_cell}", "0", verdict.wrong_cell == 0),
        ("file corrupted", f"{verdict.corrupted}", "0", verdict.corrupted == 0),
        ("unexplained results", f"{verdict.unexplained}", "0", verdict.unexplained == 0),
        ("non-conflicting scenarios applied", f"{verdict.non_conflicting_applied:.1%}", ">= 95%",
         verdict.non_conflicting_applied >= NON_CONFLICTING_APPLIED_TARGET),
        ("true conflicts (same lines) rejected", f"{verdict.conflicts_rejected:.1%}", "100%",
         verdict.conflicts_rejected == 1.0),
    ]  # fmt: skip
    return [
        f"  hashline {what:<38}{got:>8}   target {want:<7}{mark(ok)}"
        for what, got, want, ok in rows
    ]


def report(results: Sequence[Result], names: Sequence[str], notes: Sequence[str]) -> list[str]:
    lines = ["", "== stale-edit safety (scenarios per strategy; outcome counts)", *notes]
    lines += _table(results, names)
    lines += ["", "by the person's edit:", *_by_kind(results, names), ""]
    lines += _verdict_lines(hashline_verdict(results))
    misses = [
        r
        for r in results
        if r.strategy == HashlineStrategy.name
        and r.outcome not in (Outcome.BOTH_KEPT.value, Outcome.REJECTED_CONFLICT.value)
    ]
    for miss in misses:
        lines.append(f"  hashline {miss.outcome}: {miss.scenario}: {miss.message.splitlines()[0]}")
    return lines


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


def model_agreement(results: Sequence[Result], scenarios: Sequence[Scenario]) -> str:
    """Run the model of jupyter-mcp-server too, and say how often it agrees with the real code."""
    model = ModelPeer()
    checks: list[Strategy] = [IndexOverwrite(model), IndexStringReplace(model)]
    modelled = {
        (r.strategy, r.scenario): r.outcome for r in asyncio.run(run_all(checks, scenarios))
    }
    real = [r for r in results if (r.strategy, r.scenario) in modelled]
    same = sum(modelled[(r.strategy, r.scenario)] == r.outcome for r in real)
    return f"its model (used where it is not installed) agrees on {same} of {len(real)} results"


def main() -> None:
    parser = argparse.ArgumentParser(description="stale-edit safety table")
    parser.add_argument("--smoke", action="store_true", help="a small set of scenarios")
    parser.add_argument("--repeats", type=int, default=1, help="ignored (not a timing bench)")
    parser.add_argument("--json", type=Path, default=None, help="where to write raw figures")
    parser.add_argument("--peer", choices=("auto", "real", "model"), default="auto")
    parser.add_argument("--install-peer", action="store_true", help="install it, then exit")
    args = parser.parse_args()
    if args.install_peer:
        raise SystemExit(install_peer() or 0)
    scenarios, where = build_scenarios(args.smoke)
    peer = choose_peer(args.peer, args.smoke)
    strategies: list[Strategy] = [
        HashlineStrategy(), IndexOverwrite(peer), IndexStringReplace(peer),
        CellIdOverwrite(), WholeNotebookWrite(),
    ]  # fmt: skip
    try:
        results = asyncio.run(run_all(strategies, scenarios))
    finally:
        if isinstance(peer, RealPeer):
            peer.close()
    notes = [f"scenarios: {len(scenarios)} over {where}", f"cell-index strategies: {peer.kind}"]
    if isinstance(peer, RealPeer):
        notes.append(model_agreement(results, scenarios))
    names = [s.name for s in strategies]
    print("\n".join(report(results, names, notes)))
    path = args.json or RESULTS_DIR / "safety.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    verdict = hashline_verdict(results)
    summary = {"notes": notes, "hashline": asdict(verdict) | {"met": verdict.met}}
    path.write_text(json.dumps(summary | {"results": [asdict(r) for r in results]}, indent=1))


if __name__ == "__main__":
    main()
