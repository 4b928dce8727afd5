"""The stale-run safety table: what runs when an agent runs a cell a person changed since its read.

For every scenario (bench/safety_run_scenarios.py) and every contender
(bench/safety_run_contenders.py), in a notebook of its own on one running Jupyter server
(jupyter-collaboration on; kernels inherit the oracle's IPython profile): write the notebook the
agent reads; when the scenario happens in an open room, a person joins its room with a real Yjs
client (as JupyterLab does); the contender reads; the person changes the notebook (the file,
saved; or by typing in the room, unsaved: rooms save 30 s after a change); then the contender
asks to run the agent's cell. A second client in the room waits until the server's document
shows the person's change before the run whenever the run reads through a room. When every
scenario has run and every kernel is idle, the oracle (bench/safety_run_oracle.py) judges each
one from the kernels' own log of the code they received.

Hashline's targets: 0 runs of code the agent did not see (nor of another cell), 0 errors; every
control runs; every scenario whose cell is unchanged (another cell edited, a cell inserted
above) runs; every changed cell runs nothing.

Run `python -m bench.safety_run [--smoke] [--json PATH] [--peer auto|real|none]`. The peer,
jupyter-mcp-server's `execute_cell`, runs from its own virtualenv (bench/safety_strategies.py
installs it): `real` installs it when missing, `auto` uses it when present outside smoke mode
(installing it then too), `none` (and `auto` in smoke mode) leaves it out.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import tempfile
import time
from collections import Counter
from collections.abc import Iterable, Sequence
from contextlib import AsyncExitStack
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import httpx
from jupyter_ydoc import YNotebook

from bench.harness import RESULTS_DIR
from bench.safety_live import LiveServer, live_server, person_in_room
from bench.safety_run_contenders import (
    Contender,
    HashlineDirectory,
    HashlineRest,
    PeerExecuteCell,
    PeerSession,
)
from bench.safety_run_oracle import (
    Answer,
    KernelRecorder,
    Received,
    Verdict,
    describe,
    judge,
    received_for,
)
from bench.safety_run_scenarios import (
    Change,
    Kind,
    Notebook,
    RunScenario,
    Where,
    run_scenarios,
    scenario,
    sources,
)
from bench.safety_scenarios import dump
from bench.safety_strategies import PEER_PACKAGE, PEER_VENV, install_peer, peer_python

ROOM_SAVE_DELAY_S = 30.0  # the person's typing stays unsaved for the whole scenario
SETTLE_S = 15.0
RAN_CODE = (Verdict.RAN_UNSEEN, Verdict.RAN_OTHER)
FAILURES = (Verdict.ERROR, Verdict.CLAIMED)


@dataclass(frozen=True, slots=True)
class Staged:
    """One run as it happened, before the oracle's verdict."""

    contender: str
    scenario: RunScenario
    answer: Answer
    seconds: float


@dataclass(frozen=True, slots=True)
class RunResult:
    contender: str
    scenario: str
    where: str
    change: str
    kind: str
    verdict: str
    reply: str
    received: str
    message: str
    seconds: float


# -- staging -----------------------------------------------------------------------------------


def type_into_room(person: YNotebook, after: Notebook) -> None:
    """Make the room's document the person's notebook as a person would: delete, insert or
    retype cells by id, and edit sources in place (the changed middle of the text)."""
    wanted = {str(c["id"]) for c in after["cells"]}
    with person.ydoc.transaction():
        for n in reversed(range(len(person.ycells))):
            if str(person.ycells[n]["id"]) not in wanted:
                del person.ycells[n]
        for n, cell in enumerate(after["cells"]):
            ids = [str(c["id"]) for c in person.ycells]
            if cell["id"] not in ids:
                person.ycells.insert(n, person.create_ycell(dict(cell)))
            elif person.ycells[n]["cell_type"] != cell["cell_type"]:
                del person.ycells[n]
                person.ycells.insert(n, person.create_ycell(dict(cell)))
            else:
                _retype_text(person.ycells[n]["source"], str(cell["source"]))


def _retype_text(text: Any, want: str) -> None:
    have = str(text)
    head = 0
    while head < min(len(have), len(want)) and have[head] == want[head]:
        head += 1
    tail = 0
    while tail < min(len(have), len(want)) - head and have[-1 - tail] == want[-1 - tail]:
        tail += 1
    if have[head : len(have) - tail]:
        del text[head : len(have) - tail]
    if want[head : len(want) - tail]:
        text.insert(head, want[head : len(want) - tail])


def _shown(nb: YNotebook) -> list[tuple[str, str]]:
    return [(str(c["cell_type"]), str(c["source"])) for c in nb.ycells]


async def room_shows(server: LiveServer, path: str, want: Notebook) -> None:
    """Wait (bounded) until a fresh client of the room sees `want`'s cells: the server's
    document holds the person's change."""
    wanted = sources(want)
    async with person_in_room(server, path) as observer:
        deadline = time.monotonic() + SETTLE_S
        while _shown(observer) != wanted:
            if time.monotonic() > deadline:
                raise TimeoutError(f"the room of {path} never showed the person's change")
            await asyncio.sleep(0.02)


async def stage(
    server: LiveServer | None, contender: Contender, scenario: RunScenario, n: int
) -> Staged:
    path = contender.notebook_path(n)
    file = contender.root / path
    file.write_text(dump(scenario.before), encoding="utf-8")
    await contender.prepare(path)
    async with AsyncExitStack() as stack:
        person = None
        if scenario.where is Where.ROOM:
            assert server is not None
            person = await stack.enter_async_context(person_in_room(server, path))
        await contender.read(path, scenario)
        if person is not None:
            type_into_room(person, scenario.after)
        else:
            file.write_text(dump(scenario.after), encoding="utf-8")
        if server is not None and (person is not None or contender.uses_room):
            await room_shows(server, path, scenario.after)
        started = time.monotonic()
        answer = await contender.run(path, scenario)
        seconds = time.monotonic() - started
    return Staged(contender.name, scenario, answer, seconds)


def salted(s: RunScenario, contender: str) -> RunScenario:
    """`s` with a nonce of the contender's own (one server's kernels serve every contender)."""
    return scenario(s.target, s.change, s.where, salt=contender)


async def kernels_idle(server: LiveServer) -> None:
    """Wait (bounded) until every kernel of the server is idle: all code sent has ended."""
    headers = {"Authorization": f"token {server.token}"}
    async with httpx.AsyncClient(base_url=server.url, headers=headers) as http:
        deadline = time.monotonic() + SETTLE_S
        while time.monotonic() < deadline:
            kernels = (await http.get("/api/kernels")).json()
            if all(k["execution_state"] in ("idle", "dead") for k in kernels):
                return
            await asyncio.sleep(0.1)
    raise TimeoutError("a kernel stayed busy after the table ran")


def verdicts(staged: Iterable[Staged], received: Sequence[Received]) -> list[RunResult]:
    results = []
    for one in staged:
        mine = received_for(one.scenario, received)
        s = one.scenario
        results.append(
            RunResult(
                contender=one.contender,
                scenario=s.name,
                where=s.where.value,
                change=s.change.value,
                kind=s.kind.value,
                verdict=judge(s, one.answer, mine).value,
                reply=one.answer.reply.value,
                received=describe(mine),
                message=one.answer.message[:400],
                seconds=round(one.seconds, 3),
            )
        )
    return results


async def run_table(
    server: LiveServer | None,
    contenders: Sequence[Contender],
    scenarios: Sequence[RunScenario],
    recorder: KernelRecorder,
) -> list[RunResult]:
    """Every scenario a contender can stage, for every contender; then the verdicts."""
    staged: list[Staged] = []
    for contender in contenders:
        mine = [salted(s, contender.name) for s in scenarios if s.where in contender.wheres]
        for n, one in enumerate(mine):
            staged.append(await stage(server, contender, one, n))
    if server is not None:
        await kernels_idle(server)
    return verdicts(staged, recorder.received())


# -- the verdict -------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class HashlineRunVerdict:
    unseen_runs: int  # the person's text, or another cell, ran
    failures: int  # errors, and runs claimed that did not happen
    controls_run: float
    unchanged_run: float
    changed_ran_nothing: float

    @property
    def met(self) -> bool:
        return (
            self.unseen_runs == self.failures == 0
            and self.controls_run == self.unchanged_run == self.changed_ran_nothing == 1.0
        )


def is_hashline(result: RunResult) -> bool:
    return result.contender.startswith("hashline")


def _share(rows: Sequence[RunResult], wanted: Iterable[Verdict]) -> float:
    values = {v.value for v in wanted}
    return sum(r.verdict in values for r in rows) / len(rows) if rows else 0.0


def hashline_verdict(results: Iterable[RunResult]) -> HashlineRunVerdict:
    mine = [r for r in results if is_hashline(r)]
    count = Counter(r.verdict for r in mine)
    nothing = (Verdict.REFUSED, Verdict.NOTHING_SAID)
    return HashlineRunVerdict(
        unseen_runs=sum(count[v.value] for v in RAN_CODE),
        failures=sum(count[v.value] for v in FAILURES),
        controls_run=_share([r for r in mine if r.change == Change.NONE.value], [Verdict.RAN_SEEN]),
        unchanged_run=_share(
            [r for r in mine if r.kind == Kind.UNCHANGED.value], [Verdict.RAN_SEEN]
        ),
        changed_ran_nothing=_share([r for r in mine if r.kind == Kind.CHANGED.value], nothing),
    )


# -- the report --------------------------------------------------------------------------------

_SHORT = {
    Verdict.RAN_SEEN: "ran seen",
    Verdict.RAN_UNSEEN: "ran person's",
    Verdict.RAN_OTHER: "ran other",
    Verdict.REFUSED: "refused",
    Verdict.NOTHING_SAID: "nothing,said",
    Verdict.CLAIMED: "claimed run",
    Verdict.ERROR: "error",
}


def _table(results: Sequence[RunResult], names: Sequence[str]) -> list[str]:
    head = "".join(f"{_SHORT[v]:>13}" for v in Verdict)
    lines = [f"{'contender':<46}{'where':<27}{'class':<24}{'n':>4}{head}"]
    for name in names:
        first = True
        for where in Where:
            for kind in Kind:
                rows = [
                    r
                    for r in results
                    if r.contender == name and r.where == where.value and r.kind == kind.value
                ]
                if not rows:
                    continue
                count = Counter(r.verdict for r in rows)
                cols = "".join(f"{count[v.value]:>13}" for v in Verdict)
                label = name if first else ""
                lines.append(f"{label:<46}{where.value:<27}{kind.value:<24}{len(rows):>4}{cols}")
                first = False
    return lines


def _by_change(results: Sequence[RunResult], name: str) -> list[str]:
    """What `name` did for each person change: verdict counts and one reply, first line."""
    lines = [f"{name}, by the person's change:"]
    for where in Where:
        for change in Change:
            rows = [
                r
                for r in results
                if r.contender == name and r.where == where.value and r.change == change.value
            ]
            if not rows:
                continue
            count = Counter(r.verdict for r in rows)
            verdict = ", ".join(f"{n} {v}" for v, n in count.most_common())
            said = rows[0].message.strip().splitlines()[0][:64] if rows[0].message.strip() else ""
            lines.append(f"  {where.name.lower():<5}{change.value:<32}{verdict:<44}| {said}")
    return lines


def _verdict_lines(verdict: HashlineRunVerdict) -> list[str]:
    def mark(ok: bool) -> str:
        return "MET" if ok else "MISSED"

    rows = [
        ("unseen code runs (person's text, other cell)", f"{verdict.unseen_runs}", "0",
         verdict.unseen_runs == 0),
        ("errors and runs claimed but not made", f"{verdict.failures}", "0", verdict.failures == 0),
        ("controls (no change) run", f"{verdict.controls_run:.0%}", "100%",
         verdict.controls_run == 1.0),
        ("unchanged cells run (other cell, insert)", f"{verdict.unchanged_run:.0%}", "100%",
         verdict.unchanged_run == 1.0),
        ("changed cells run nothing", f"{verdict.changed_ran_nothing:.0%}", "100%",
         verdict.changed_ran_nothing == 1.0),
    ]  # fmt: skip
    return [
        f"  hashline {what:<46}{got:>6}   target {want:<5}{mark(ok)}"
        for what, got, want, ok in rows
    ]


def report(results: Sequence[RunResult], names: Sequence[str], notes: Sequence[str]) -> list[str]:
    lines = [
        "",
        "== stale-run safety: an agent runs the cell it read after a person's change "
        "(verdicts from the kernels' own log)",
        *notes,
        *_table(results, names),
        "",
    ]
    for name in names:
        lines += [*_by_change(results, name), ""]
    lines += _verdict_lines(hashline_verdict(results))
    for miss in misses(results):
        lines.append(f"  hashline {miss.verdict}: {miss.scenario}: {miss.received}")
    return lines


def misses(results: Iterable[RunResult]) -> list[RunResult]:
    """Hashline's results that miss a target."""
    out = []
    for r in results:
        if not is_hashline(r):
            continue
        ran = r.verdict == Verdict.RAN_SEEN.value
        nothing = r.verdict in (Verdict.REFUSED.value, Verdict.NOTHING_SAID.value)
        if (r.kind == Kind.UNCHANGED.value and not ran) or (
            r.kind == Kind.CHANGED.value and not nothing
        ):
            out.append(r)
    return out


# -- running it --------------------------------------------------------------------------------


def peer_wanted(mode: str, smoke: bool) -> Path | None:
    """The peer virtualenv's interpreter, installed when the mode asks; None: no peer."""
    if mode == "none" or (mode == "auto" and smoke):
        return None
    python = peer_python()
    if python is None:
        print(f"installing {PEER_PACKAGE} into {PEER_VENV} to compare its real code ...")
        failure = install_peer()
        if failure is not None:
            print(f"  could not install it ({failure}); the peer's columns are left out")
            return None
        python = peer_python()
    return python


async def table(*, smoke: bool, peer: Path | None) -> tuple[list[RunResult], list[str], list[str]]:
    """Results, contender names and notes of the whole table (one server, one recorder)."""
    scenarios = run_scenarios(smoke=smoke)
    with (
        KernelRecorder() as recorder,
        live_server(env=recorder.env(), save_delay_s=ROOM_SAVE_DELAY_S) as server,
        tempfile.TemporaryDirectory(prefix="hashline-run-dir-") as folder,
    ):
        async with AsyncExitStack() as stack:
            contenders: list[Contender] = [
                HashlineRest(server.url, server.token, server.root),
                HashlineDirectory(Path(folder)),
            ]
            notes = [_scenario_note(scenarios)]
            if peer is not None:
                contenders += await _peer(stack, peer, server, notes)
            else:
                notes.append("peer: left out (smoke mode, --peer none, or it would not install)")
            for contender in contenders:
                stack.push_async_callback(contender.aclose)
            with recorder.in_environment():
                results = await run_table(server, contenders, scenarios, recorder)
    return results, [c.name for c in contenders], notes


async def _peer(
    stack: AsyncExitStack, python: Path, server: LiveServer, notes: list[str]
) -> list[Contender]:
    """The peer's contenders (by id, by index) over one MCP session; none if it won't start."""
    session = PeerSession(python, server.url, server.token, server.root)
    stack.push_async_callback(session.aclose)
    try:
        await session.start()
    except Exception as error:  # any failure to start leaves the peer out, and says so
        notes.append(f"peer: jupyter-mcp-server would not start ({error}); left out")
        return []
    notes.append(
        f"peer: jupyter-mcp-server {session.version} over MCP stdio (its own virtualenv), "
        "connected to the same Jupyter server; the agent reads with use_notebook and "
        "read_notebook (detailed), then calls execute_cell (timeout 30 s, the rest as default)"
    )
    return [PeerExecuteCell(session, by_id=True), PeerExecuteCell(session, by_id=False)]


def _scenario_note(scenarios: Sequence[RunScenario]) -> str:
    places = Counter(s.where.value for s in scenarios)
    targets = sorted({s.target for s in scenarios})
    return (
        f"scenarios: {len(scenarios)} ({', '.join(f'{n} {w}' for w, n in places.items())}); "
        f"{len(Change)} person changes aimed at cell(s) {', '.join(targets)} of a notebook "
        "with a markdown title and three code cells"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description="stale-run safety table")
    parser.add_argument("--smoke", action="store_true", help="the middle cell only")
    parser.add_argument("--repeats", type=int, default=1, help="ignored (not a timing bench)")
    parser.add_argument("--json", type=Path, default=None, help="where to write raw figures")
    parser.add_argument("--peer", choices=("auto", "real", "none"), default="auto")
    args = parser.parse_args()
    peer = peer_wanted(args.peer, args.smoke)
    started = time.monotonic()
    results, names, notes = asyncio.run(table(smoke=args.smoke, peer=peer))
    notes.append(f"the whole table took {time.monotonic() - started:.1f} s")
    print("\n".join(report(results, names, notes)))
    path = args.json or RESULTS_DIR / "safety_run.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    verdict = hashline_verdict(results)
    summary = {"table": "run", "notes": notes, "hashline": asdict(verdict) | {"met": verdict.met}}
    path.write_text(json.dumps(summary | {"results": [asdict(r) for r in results]}, indent=1))


if __name__ == "__main__":
    main()
