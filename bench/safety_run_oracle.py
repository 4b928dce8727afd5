"""The judge of the stale-run table: what code the kernels received, against what the agent saw.

`KernelRecorder` makes an IPython profile folder whose startup file wraps the kernel's
`do_execute`: every execute request a kernel started with that folder (`IPYTHONDIR`) gets, silent
or not, from any client, is appended to a JSON-lines log with its code and how it ended
(`ok`, or the exception's name: a SyntaxError never executed a line, yet the kernel received
that code). Nothing of the contenders is involved: the log is the kernel's own account.

`judge(scenario, answer, received)` compares the codes received for the scenario (picked out by
its nonce; blank codes run nothing) with the source the agent saw in the cell it asked to run:

- ran the person's text: some code the agent never saw reached the kernel (unseen code ran);
- ran another cell: code the agent saw, but of another cell than the one it asked to run;
- ran what the agent saw: exactly the seen source, and the tool said it ran;
- refused, nothing ran: nothing reached the kernel and the tool refused;
- ran nothing and said so: nothing reached the kernel and the tool's reply says nothing ran;
- said it ran, nothing did: nothing reached the kernel, yet the reply is a run's (outputs);
- error: the tool failed, or refused while the seen code ran.

Invariants: what ran is decided from the kernels' log alone, never from the files or the tools'
own accounts; the reply (as its contender classes it) only tells refusals, replies saying
nothing ran, claimed runs and failures apart when no code of the run reached a kernel.
"""

from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from enum import Enum
from pathlib import Path

from bench.safety_run_scenarios import RunScenario

LOG_ENV = "HASHLINE_BENCH_KERNEL_LOG"

# Runs inside every kernel the profile starts: it may only use the standard library.
STARTUP = """
import json as _json, os as _os

def _hashline_bench_record():
    kernel = get_ipython().kernel
    original = kernel.do_execute
    log = _os.environ["HASHLINE_BENCH_KERNEL_LOG"]

    async def do_execute(code, silent, *args, **kwargs):
        reply = original(code, silent, *args, **kwargs)
        if hasattr(reply, "__await__"):
            reply = await reply
        status = reply.get("status", "?")
        entry = {"code": code, "silent": bool(silent), "pid": _os.getpid(),
                 "ended": reply.get("ename", status) if status == "error" else status}
        with open(log, "a", encoding="utf-8") as out:
            out.write(_json.dumps(entry) + "\\n")
        return reply

    kernel.do_execute = do_execute

_hashline_bench_record()
del _hashline_bench_record
"""


@dataclass(frozen=True, slots=True)
class Received:
    """One execute request a kernel got: its code, whether it was silent, how it ended (`ok`
    or an exception's name) and the kernel's process id."""

    code: str
    silent: bool
    ended: str
    pid: int


class KernelRecorder:
    """An IPython profile folder that makes kernels log what they are asked to run."""

    def __init__(self) -> None:
        self._folder = tempfile.TemporaryDirectory(prefix="hashline-run-oracle-")
        root = Path(self._folder.name)
        startup = root / "ipython" / "profile_default" / "startup"
        startup.mkdir(parents=True)
        (startup / "00-hashline-bench-record.py").write_text(STARTUP, encoding="utf-8")
        self.ipython_dir = root / "ipython"
        self.log = root / "received.jsonl"
        self.log.touch()

    def env(self) -> dict[str, str]:
        """What a kernel's environment needs (a server passes its own on to its kernels)."""
        return {"IPYTHONDIR": str(self.ipython_dir), LOG_ENV: str(self.log)}

    @contextmanager
    def in_environment(self) -> Iterator[None]:
        """This process's environment holds `env()` meanwhile (kernels it starts record)."""
        saved = {key: os.environ.get(key) for key in self.env()}
        os.environ.update(self.env())
        try:
            yield
        finally:
            for key, value in saved.items():
                if value is None:
                    os.environ.pop(key, None)
                else:
                    os.environ[key] = value

    def received(self) -> list[Received]:
        rows = self.log.read_text(encoding="utf-8").splitlines()
        return [Received(**json.loads(row)) for row in rows if row]

    def close(self) -> None:
        self._folder.cleanup()

    def __enter__(self) -> KernelRecorder:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def received_for(scenario: RunScenario, everything: Iterable[Received]) -> list[Received]:
    """The non-blank codes that came from `scenario` (they hold its nonce)."""
    return [r for r in everything if r.code.strip() and scenario.nonce in r.code]


class Reply(Enum):
    """What the tool told the agent, as its contender reads the reply."""

    RAN = "ran"  # it says the cell ran (with or without an error in the cell)
    REFUSED = "refused"  # an error reply: nothing was to run
    NOTHING = "nothing ran"  # a normal reply that says the cell did not run
    FAILED = "failed"  # the tool broke, timed out or could not be reached


@dataclass(frozen=True, slots=True)
class Answer:
    reply: Reply
    message: str


class Verdict(Enum):
    RAN_SEEN = "ran what the agent saw"
    RAN_UNSEEN = "ran the person's text"
    RAN_OTHER = "ran another cell"
    REFUSED = "refused, nothing ran"
    NOTHING_SAID = "ran nothing and said so"
    CLAIMED = "said it ran, nothing did"
    ERROR = "error"


def judge(scenario: RunScenario, answer: Answer, received: Sequence[Received]) -> Verdict:
    codes = [r.code for r in received]
    if any(c != scenario.seen and c not in scenario.seen_elsewhere for c in codes):
        return Verdict.RAN_UNSEEN
    if any(c != scenario.seen for c in codes):
        return Verdict.RAN_OTHER
    if codes:
        return Verdict.RAN_SEEN if answer.reply is Reply.RAN else Verdict.ERROR
    if answer.reply is Reply.REFUSED:
        return Verdict.REFUSED
    if answer.reply is Reply.NOTHING:
        return Verdict.NOTHING_SAID
    return Verdict.CLAIMED if answer.reply is Reply.RAN else Verdict.ERROR


def describe(received: Sequence[Received]) -> str:
    """What reached the kernel, in a few words, for the report."""
    if not received:
        return "no code of this run reached a kernel"
    parts = [f"{json.dumps(r.code[:60])} -> {r.ended}" for r in received]
    return "kernel got " + "; ".join(parts)
