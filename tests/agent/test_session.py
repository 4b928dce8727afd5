"""Agent sessions against the provider simulator: scripted turns, real tools, real caching."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import nbformat
import pytest

from jupyter_hashline.agent.session import Session
from jupyter_hashline.agent.simulator import ProviderSimulator
from jupyter_hashline.hashline.memory_fs import InMemoryFilesystem
from jupyter_hashline.tools import TOOL_SPECS
from jupyter_hashline.zones import MissCause, RebuildReason

NOTEBOOK = "work.ipynb"
HEADER = re.compile(r"\[work\.ipynb#([0-9A-F]{4})\]")
Turn = Callable[[list[Any]], dict[str, Any]]


def make_notebook(root: Path) -> None:
    cells = [
        nbformat.v4.new_markdown_cell("# Counter\nA notebook the agent keeps editing."),
        nbformat.v4.new_code_cell("import math"),
        nbformat.v4.new_code_cell("value = 0\nprint(value)"),
        nbformat.v4.new_code_cell("note = 'person'"),
    ]
    for cell, cid in zip(cells, ["intro", "imports", "counter", "notes"], strict=True):
        cell["id"] = cid
    nb = nbformat.v4.new_notebook(cells=cells)
    (root / NOTEBOOK).write_text(nbformat.writes(nb) + "\n")


def tool_texts(messages: list[Any]) -> list[str]:
    """Every tool result text in the request, oldest first, whatever the request shape."""
    texts: list[str] = []
    for message in messages:
        if message.get("role") == "tool":
            texts.append(message["content"])
        content = message.get("content")
        if isinstance(content, list):
            texts.extend(
                block["content"]
                for block in content
                if isinstance(block, dict) and block.get("type") == "tool_result"
            )
    return texts


def latest_tag(messages: list[Any]) -> str:
    for text in reversed(tool_texts(messages)):
        found = HEADER.findall(text)
        if found:
            return str(found[-1])
    raise AssertionError("no header in any tool result")


def counter_line(messages: list[Any]) -> int:
    """Where `value = ...` is in the latest read view or preview the agent was shown."""
    for text in reversed(tool_texts(messages)):
        match = re.search(r"^(\d+):value = ", text, re.MULTILINE)
        if match:
            return int(match.group(1))
    raise AssertionError("the agent never saw the counter line")


def read_turn() -> dict[str, Any]:
    return {"tool_calls": [{"name": "notebook_read", "input": {"path": NOTEBOOK}}]}


def edit_turn(value: int, stale_tag: list[str] | None = None) -> Turn:
    def turn(messages: list[Any]) -> dict[str, Any]:
        tag = stale_tag[0] if stale_tag else latest_tag(messages)
        line = counter_line(messages)
        patch = f"[{NOTEBOOK}#{tag}]\nreplace {line}:\n+value = {value}\n"
        return {"tool_calls": [{"name": "notebook_edit", "input": {"patch": patch}}]}

    return turn


def done(text: str = "done") -> dict[str, Any]:
    return {"text": text}


def run(session: Session, prompts: list[str]) -> None:
    import asyncio

    async def go() -> None:
        for prompt in prompts:
            await session.run_turn(prompt)

    asyncio.run(go())


def sources(root: Path) -> dict[str, str]:
    nb = nbformat.read(root / NOTEBOOK, as_version=4)
    return {cell["id"]: cell["source"] for cell in nb.cells}


def scripted_session(tmp_path: Path, provider: str, system: Any) -> tuple[list[Any], list[str]]:
    """50 user turns: a read, then edits of the counter cell, one recovered stale edit (a
    person edits another cell first) and one true conflict that is rejected, re-read and
    retried."""
    script: list[Any] = [read_turn(), done("read it")]
    prompts = ["read the notebook"]
    captured: list[str] = []

    def person_edits_other_cell(messages: list[Any]) -> dict[str, Any]:
        captured.append(latest_tag(messages))  # the agent's tag before the person saves
        nb = nbformat.read(tmp_path / NOTEBOOK, as_version=4)
        nb.cells[0]["source"] += "\nEdited by a person."
        nb.cells.insert(1, nbformat.v4.new_markdown_cell("A new cell from the person."))
        nb.cells[1]["id"] = "person-cell"
        (tmp_path / NOTEBOOK).write_text(nbformat.writes(nb) + "\n")
        return edit_turn(1000, captured)(messages)

    def person_edits_same_line(messages: list[Any]) -> dict[str, Any]:
        nb = nbformat.read(tmp_path / NOTEBOOK, as_version=4)
        counter = next(c for c in nb.cells if c["id"] == "counter")
        counter["source"] = re.sub(r"value = \d+", "value = -1", counter["source"])
        (tmp_path / NOTEBOOK).write_text(nbformat.writes(nb) + "\n")
        return edit_turn(2000)(messages)

    for value in range(1, 51):
        if value == 10:
            script += [person_edits_other_cell, done("recovered")]
        elif value == 20:
            script += [person_edits_same_line, read_turn(), edit_turn(2000), done("retried")]
        else:
            script += [edit_turn(value), done(f"set {value}")]
        prompts.append(f"set the counter to {value}")
        if len(prompts) == 50:
            break
    return script, prompts


@pytest.mark.parametrize("provider", ["anthropic", "openai", "deepseek"])
def test_fifty_turn_session_edits_and_caches(tmp_path: Path, provider: str) -> None:
    make_notebook(tmp_path)
    script, prompts = scripted_session(tmp_path, provider, None)
    with ProviderSimulator(script) as sim:
        session = Session(
            tmp_path, provider=provider, base_url=sim.base_url(provider), api_key="test"
        )
        run(session, prompts)
        assert sim.turns_left == 0
    final = sources(tmp_path)
    assert final["counter"] == "value = 49\nprint(value)"
    assert final["intro"] == "# Counter\nA notebook the agent keeps editing.\nEdited by a person."
    assert final["person-cell"] == "A new cell from the person."
    assert final["notes"] == "note = 'person'"
    # the stale edit recovered, the conflict was rejected then retried
    results = tool_texts(json.loads(sim.bodies[-1])["messages"])
    assert any("recovered" in text.lower() for text in results)
    assert any("rejected" in text.lower() for text in results)
    # cache accounting: the ledger agrees with what the simulator reported
    ledger = session.zones.ledger
    assert len(ledger.turns) == len(sim.requests)
    for turn, served in zip(ledger.turns, sim.requests, strict=True):
        assert turn.cached_tokens == served.cached_tokens
        assert turn.input_tokens == served.input_tokens
    later = ledger.turns[2:]  # everything after the first user turn's two requests
    ratio = sum(t.cached_tokens for t in later) / sum(t.input_tokens for t in later)
    sim_later = sim.requests[2:]
    sim_ratio = sum(r.cached_tokens for r in sim_later) / sum(r.input_tokens for r in sim_later)
    assert ratio == pytest.approx(sim_ratio)
    assert ratio >= 0.95
    assert ledger.hit_ratio() == pytest.approx(sim.hit_ratio)
    snapshot = session.snapshot()
    json.dumps(snapshot)  # JSON-ready
    assert snapshot["cache"]["hit_ratio"] == pytest.approx(sim.hit_ratio)
    assert snapshot["edits"][0]["cells"] == ["counter"]
    assert "+value = 49" in snapshot["edits"][0]["diff"]


def test_timestamp_in_system_prompt_misses_every_time(tmp_path: Path) -> None:
    make_notebook(tmp_path)
    script, prompts = scripted_session(tmp_path, "anthropic", None)
    clock = iter(range(10_000))

    # A real system prompt: the timestamp first, then instructions longer than the tool catalog.
    rules = "".join(f"Rule {n}: keep cell {n} tidy and its outputs short.\n" for n in range(150))

    def system() -> str:
        return f"Current time: 2026-11-30T00:{next(clock):05d}\nYou edit notebooks.\n{rules}"

    with ProviderSimulator(script) as sim:
        session = Session(tmp_path, base_url=sim.base_url("anthropic"), api_key="k", system=system)
        run(session, prompts)
    ledger = session.zones.ledger
    # Only the bytes before the timestamp's changing digits can ever be reused: the model and
    # tool catalog, plus the request's other keys and the system prompt's constant start
    # ("Current time: 2026-11-30T00:"), under 200 bytes; the rules after it are ~8 KB.
    constant = json.dumps({"model": session.model, "tools": list(TOOL_SPECS)})
    before_system = (len(constant) + 200) // 4
    assert all(t.cached_tokens <= before_system for t in ledger.turns)
    assert ledger.hit_ratio() < before_system / min(t.input_tokens for t in ledger.turns)
    misses = [t for t in ledger.turns if t.miss]
    assert len(misses) == len(ledger.turns) - 1  # every request after the cold one
    assert {t.cause for t in misses} == {MissCause.SYSTEM_CHANGED}


def test_compaction_costs_one_miss_then_hits_resume(tmp_path: Path) -> None:
    make_notebook(tmp_path)
    script: list[Any] = [read_turn(), done("read")]
    for value in range(1, 13):
        script += [edit_turn(value), done(f"set {value}")]
    events: list[str] = []
    # a short conversation: a lower minimum so the prefix is cacheable from the second request
    with ProviderSimulator(script, min_tokens=256) as sim:
        session = Session(tmp_path, base_url=sim.base_url("anthropic"), api_key="k")
        session.subscribe(lambda event, _s: events.append(event))
        run(session, ["read"] + [f"set {v}" for v in range(1, 7)])
        record = session.compact("The counter was set to 1..6.", keep_last_turns=1)
        run(session, [f"set {v}" for v in range(7, 13)])
    assert record.reason is RebuildReason.MANUAL_COMPACTION
    assert len(session.zones.log.audit) == 1
    assert events.count("rebuild") == 1
    ledger = session.zones.ledger
    after = ledger.turns[14:]  # the 7 turns before compaction made 14 requests
    assert after[0].miss and after[0].cause is MissCause.MESSAGES_REWRITTEN
    assert all(not t.miss for t in after[1:])
    assert [t.cause for t in ledger.turns if t.miss] == [MissCause.MESSAGES_REWRITTEN]
    assert sources(tmp_path)["counter"] == "value = 12\nprint(value)"


def test_observers_hear_each_request_tool_and_turn(tmp_path: Path) -> None:
    make_notebook(tmp_path)
    events: list[tuple[str, bool]] = []
    with ProviderSimulator([read_turn(), done()]) as sim:
        session = Session(tmp_path, base_url=sim.base_url("anthropic"), api_key="k")
        unsubscribe = session.subscribe(lambda event, s: events.append((event, s.active)))
        run(session, ["read"])
        unsubscribe()
    assert events == [("request", True), ("tool", True), ("request", True), ("turn", False)]


def test_runaway_tool_loop_is_stopped(tmp_path: Path) -> None:
    make_notebook(tmp_path)
    with ProviderSimulator([read_turn()] * 3) as sim:
        session = Session(
            tmp_path, base_url=sim.base_url("anthropic"), api_key="k", max_tool_rounds=3
        )
        with pytest.raises(RuntimeError, match="kept calling tools"):
            run(session, ["loop"])
    assert not session.active
    assert session.zones.scratch.pending_user is None


def test_session_runs_inside_a_running_event_loop(tmp_path: Path) -> None:
    make_notebook(tmp_path)

    async def go() -> str:
        async with ProviderSimulator([read_turn(), done("ok")]) as sim:
            session = Session(tmp_path, base_url=sim.base_url("openai"), provider="openai")
            session.client.api_key = "k"
            return await session.run_turn("read")

    import asyncio

    assert asyncio.run(go()) == "ok"


def test_the_simulator_url_is_an_anthropic_base_url(tmp_path: Path) -> None:
    """`Session(..., base_url=sim.url)`: the root of the simulator serves `/v1/messages`."""
    make_notebook(tmp_path)
    with ProviderSimulator([read_turn(), edit_turn(7), done("set to 7")]) as sim:
        session = Session(tmp_path, provider="anthropic", base_url=sim.url, api_key="k")
        run(session, ["set the counter to 7"])
        assert sim.turns_left == 0
        assert {served.provider for served in sim.requests} == {"anthropic"}
        assert session.client.url == sim.url + "/v1/messages"
    assert sources(tmp_path)["counter"] == "value = 7\nprint(value)"
    assert session.snapshot()["session"]["turns"] == 1


def run_turn_of_last_edit(messages: list[Any]) -> dict[str, Any]:
    """Run the cells the last edit touched (the counter cell when nothing was edited yet)."""
    arguments: dict[str, Any] = {"path": NOTEBOOK, "tag": latest_tag(messages)}
    if not any("updated" in text.split("\n")[0] for text in tool_texts(messages)):
        arguments["cells"] = ["counter"]
    return {"tool_calls": [{"name": "notebook_run", "input": arguments}]}


async def test_a_directory_session_runs_what_it_edited_and_shuts_its_kernels_down(
    tmp_path: Path,
) -> None:
    make_notebook(tmp_path)
    script = [read_turn(), edit_turn(42), run_turn_of_last_edit, {"text": "it prints 42"}]
    async with (
        ProviderSimulator(script) as sim,
        Session(
            tmp_path, base_url=sim.base_url("anthropic"), api_key="k", register=False
        ) as session,
    ):
        assert "notebook_run" in [tool["name"] for tool in session.zones.prefix.tools]
        await session.run_turn("set the counter to 42 and run it")
        pool = session.workspace.runner  # type: ignore[union-attr]
        kernels = list(pool._kernels.values())
        assert pool.running() == {NOTEBOOK: "python3"}
    ran = session.zones.log[-2]["content"][0]["content"]
    assert "cell counter: ok (execution count 1, " in ran and "\n42" in ran
    [run_record, edit_record] = session.snapshot()["edits"][:2]
    assert (run_record["op"], run_record["cells"]) == ("run", ["counter"])
    assert run_record["runs"][0]["status"] == "ok" and edit_record["op"] == "update"
    stored = nbformat.read(tmp_path / NOTEBOOK, as_version=4).cells[2]
    assert stored.outputs[0]["text"] == "42\n"
    assert pool.running() == {}
    assert [await kernel.manager.is_alive() for kernel in kernels] == [False]


async def run_once(root: Any, **options: Any) -> dict[str, Any]:
    """A session that reads the notebook and runs its counter cell; the run's result block."""
    script = [read_turn(), run_turn_of_last_edit, {"text": "ok"}]
    async with ProviderSimulator(script) as sim:
        url = sim.base_url("anthropic")
        async with Session(root, base_url=url, api_key="k", register=False, **options) as session:
            await session.run_turn("run it")
    block: dict[str, Any] = session.zones.log[-2]["content"][0]
    return block


async def test_runs_a_session_cannot_or_may_not_do_are_error_results(tmp_path: Path) -> None:
    make_notebook(tmp_path)
    refused = await run_once(tmp_path, allow_run=False)
    assert refused["is_error"] is True and "allow_run=False" in refused["content"]
    unavailable = await run_once(InMemoryFilesystem({NOTEBOOK: (tmp_path / NOTEBOOK).read_text()}))
    assert unavailable["is_error"] is True
    assert unavailable["content"].startswith("run not available here")


async def test_a_session_replaces_a_notebook_only_under_the_tag_of_its_read(
    tmp_path: Path,
) -> None:
    make_notebook(tmp_path)
    content = "# %% [code]\nvalue = 1\n"
    untagged = {
        "tool_calls": [{"name": "notebook_write", "input": {"path": NOTEBOOK, "content": content}}]
    }

    def tagged(messages: list[Any]) -> dict[str, Any]:
        arguments = {"path": NOTEBOOK, "content": content, "tag": latest_tag(messages)}
        return {"tool_calls": [{"name": "notebook_write", "input": arguments}]}

    script = [untagged, read_turn(), tagged, {"text": "replaced"}]
    async with ProviderSimulator(script) as sim:
        url = sim.base_url("anthropic")
        async with Session(tmp_path, base_url=url, api_key="k", register=False) as session:
            await session.run_turn("replace the notebook")
    results = [
        block
        for message in session.zones.log
        if not isinstance(message["content"], str)
        for block in message["content"]
        if block.get("type") == "tool_result"
    ]
    assert results[0]["is_error"] is True and "needs the tag" in results[0]["content"]
    assert not results[-1].get("is_error")
    assert list(sources(tmp_path).values()) == ["value = 1"]
