"""Per-turn cost of assembling a three-zone request, against the bare join floor.

For a log of T turns (each turn: an assistant tool call and a ~1.5 KB tool result), the candidate
builds request T the way the agent does every turn: `ThreeZoneRequest(...)`, `fingerprint()`, the
byte-prefix check against request T-1, and `to_wire(provider)`. The baseline is the floor:
`b"".join` of the already-serialized wire messages. Target: <= 1.5x where the history is long
(turn 1,000 and 5,000). At turn 10 and 100 the join takes under a microsecond, so a ratio would
measure only the fixed cost of one request (its prefix fingerprint and the byte-prefix check,
a few microseconds, paid once per model call that takes seconds): those rows have no ratio
target, and their per-request time is printed instead (`SHORT_LOG_REASON`).

A second table shows the one-time cost per pushed message (freeze + canonical JSON + sha256)
against a bare `json.dumps` of the message.

    python bench/zones.py [--smoke] [--repeats N] [--json PATH]
"""

from __future__ import annotations

import json
import statistics
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from bench.harness import Comparison, compare, parse_args, report
from jupyter_hashline.zones import (
    AppendLog,
    PinnedPrefix,
    Provider,
    ThreeZoneRequest,
    TurnScratch,
    check_byte_prefix,
)

TARGET = 1.5
LONG_LOG = 1_000
SHORT_LOG_REASON = (
    "turn 10 and 100 carry no ratio target: the join of a short log takes under a microsecond, "
    "so the ratio would measure the fixed cost of one request (prefix fingerprint, byte-prefix "
    "check), paid once per model call"
)
SYSTEM = "You edit Jupyter notebooks through hashline tools. " * 40  # ~2 KB
TOOLS = [
    {
        "name": f"notebook_{verb}",
        "description": f"{verb.title()} a notebook through the hashline engine. " * 4,
        "input_schema": {"type": "object", "properties": {"path": {"type": "string"}}},
    }
    for verb in ("read", "edit", "write", "outputs")
]


def turn_messages(turn: int) -> list[dict[str, Any]]:
    view = "\n".join(
        f"{n}:value_{turn}_{n} = compute({n}, {turn})  # cell c{n}" for n in range(1, 40)
    )
    call = {
        "type": "tool_use",
        "id": f"t{turn}",
        "name": "notebook_read",
        "input": {"path": "a.ipynb"},
    }
    result = {
        "type": "tool_result",
        "tool_use_id": f"t{turn}",
        "content": f"[a.ipynb#{turn:04X}]\n{view}",
    }
    return [
        {"role": "assistant", "content": [{"type": "text", "text": "Reading."}, call]},
        {"role": "user", "content": [result]},
    ]


def build_log(turns: int) -> AppendLog:
    log = AppendLog([{"role": "user", "content": "Tidy the notebook."}])
    for turn in range(turns):
        for message in turn_messages(turn):
            log.push(message)
    return log


def assembly_case(turns: int, provider: Provider, repeats: int, inner: int) -> Comparison:
    prefix = PinnedPrefix(SYSTEM, TOOLS, "claude-sonnet-4-5").freeze()
    log, scratch = build_log(turns), TurnScratch()
    previous = ThreeZoneRequest(prefix, log, scratch, max_tokens=1024)
    previous.to_wire(provider)  # the previous turn's request
    log.push(turn_messages(turns)[0])
    log.push(turn_messages(turns)[1])
    ThreeZoneRequest(prefix, log, scratch).to_wire(provider)  # the new messages' bytes, made once
    floor = list(log.generation.wire_parts(provider, len(log)))

    def candidate() -> None:
        for _ in range(inner):
            request = ThreeZoneRequest(prefix, log, scratch, max_tokens=1024)
            request.fingerprint()
            if check_byte_prefix(previous, request) is not None:
                raise AssertionError("invariant broken in the benchmark")
            request.to_wire(provider)

    def baseline() -> None:
        for _ in range(inner):
            b"".join(floor)

    name = f"turn {turns:>5} {provider.value:<9} build+check+wire vs join"
    target = TARGET if turns >= LONG_LOG else None
    return compare(name, ("zones", candidate), ("join", baseline), repeats=repeats, target=target)


def push_case(repeats: int, inner: int) -> Comparison:
    messages = [m for turn in range(inner) for m in turn_messages(turn)]

    def candidate() -> None:
        log = AppendLog()
        for message in messages:
            log.push(message)

    def baseline() -> None:
        dumps: Callable[..., str] = json.dumps
        for message in messages:
            dumps(message, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()

    return compare(
        f"push {len(messages)} messages vs json.dumps each",
        ("push", candidate),
        ("dumps", baseline),
        repeats=repeats,
    )


def main() -> None:
    args = parse_args(__doc__ or "zones benchmark")
    if args.smoke:
        plan, repeats = [(10, 2), (100, 1)], 1
    else:
        plan, repeats = [(10, 2000), (100, 400), (1000, 40), (5000, 8)], args.repeats
    rows = [
        assembly_case(turns, provider, repeats, inner)
        for turns, inner in plan
        for provider in (Provider.ANTHROPIC, Provider.OPENAI)
    ]
    rows.append(push_case(repeats, 5 if args.smoke else 200))
    report("zones per-turn request assembly", rows, args.json)
    print(f"  {SHORT_LOG_REASON}; per request:")
    inner = dict(plan)
    for row in rows:
        turns = int(row.name.split()[1]) if row.name.startswith("turn") else None
        if turns is not None and turns < LONG_LOG:
            each_us = statistics.median(row.candidate_s) / inner[turns] * 1e6
            print(f"    {row.name[:24]}: {each_us:.1f} us")


if __name__ == "__main__":
    main()
