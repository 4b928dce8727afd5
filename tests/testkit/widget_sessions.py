"""Scripted agent sessions for the panel and magics tests.

The provider is the real `ProviderSimulator` (its cache accounting and replies), called in
process by `InProcessClient` so long sessions need no HTTP round trips; `http_session` uses
the simulator over loopback HTTP, as a notebook would.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import nbformat

from jupyter_hashline.agent import ProviderSimulator, Session
from jupyter_hashline.agent.providers import AnthropicClient, ModelReply

NOTEBOOK = "work.ipynb"
HEADER = re.compile(r"\[work\.ipynb#([0-9A-F]{4})\]")


def make_notebook(root: Path) -> None:
    cells = [
        nbformat.v4.new_markdown_cell("# Counter"),
        nbformat.v4.new_code_cell("value = 0\nprint(value)"),
    ]
    for cell, cid in zip(cells, ["intro", "counter"], strict=True):
        cell["id"] = cid
    (root / NOTEBOOK).write_text(nbformat.writes(nbformat.v4.new_notebook(cells=cells)) + "\n")


def _tool_texts(messages: list[Any]) -> list[str]:
    texts: list[str] = []
    for message in messages:
        content = message.get("content")
        if message.get("role") == "tool":  # the openai and deepseek shapes
            texts.append(content)
        elif isinstance(content, list):
            texts += [b["content"] for b in content if b.get("type") == "tool_result"]
    return texts


def read_turn() -> dict[str, Any]:
    return {"tool_calls": [{"name": "notebook_read", "input": {"path": NOTEBOOK}}]}


def edit_turn(value: int) -> Callable[[list[Any]], dict[str, Any]]:
    """Set the counter, using the header and line number of the latest tool result."""

    def turn(messages: list[Any]) -> dict[str, Any]:
        texts = _tool_texts(messages)
        tag = next(HEADER.findall(t)[-1] for t in reversed(texts) if HEADER.search(t))
        line = next(
            int(m.group(1))
            for t in reversed(texts)
            if (m := re.search(r"^(\d+):value = ", t, re.MULTILINE))
        )
        patch = f"[{NOTEBOOK}#{tag}]\nreplace {line}:\n+value = {value}\n"
        return {"tool_calls": [{"name": "notebook_edit", "input": {"patch": patch}}]}

    return turn


def run_turn() -> Callable[[list[Any]], dict[str, Any]]:
    """Run the cells the last edit touched, with the header of the latest tool result."""

    def turn(messages: list[Any]) -> dict[str, Any]:
        texts = _tool_texts(messages)
        tag = next(HEADER.findall(t)[-1] for t in reversed(texts) if HEADER.search(t))
        arguments = {"path": NOTEBOOK, "tag": tag}
        return {"tool_calls": [{"name": "notebook_run", "input": arguments}]}

    return turn


def done(text: str = "done") -> dict[str, Any]:
    return {"text": text}


def edit_script(values: Iterable[int]) -> list[Any]:
    """A read turn, then one edit turn per value (each a tool round and a final answer)."""
    script: list[Any] = [read_turn(), done("read it")]
    for value in values:
        script += [edit_turn(value), done(f"set {value}")]
    return script


class InProcessClient(AnthropicClient):
    """Sends the exact request bytes to a simulator in this process (no HTTP)."""

    def __init__(self, simulator: ProviderSimulator) -> None:
        super().__init__(base_url="http://in-process", api_key="test")
        self.simulator = simulator

    async def send(self, body: bytes) -> ModelReply:
        return self.parse(self.simulator.serve("anthropic", body))


def scripted_session(
    root: Path, script: list[Any], *, system: Any = None, min_tokens: int = 256
) -> tuple[Session, ProviderSimulator]:
    make_notebook(root)
    simulator = ProviderSimulator(script, min_tokens=min_tokens)
    kwargs: dict[str, Any] = {} if system is None else {"system": system}
    session = Session(root, client=InProcessClient(simulator), register=False, **kwargs)
    return session, simulator


def run(session: Session, prompts: Iterable[str]) -> None:
    async def go() -> None:
        for prompt in prompts:
            await session.run_turn(prompt)

    asyncio.run(go())


class EchoClient(AnthropicClient):
    """Answers every request with text at once, reporting all but the newest ~10% as cached:
    for long sessions whose cost must stay in the session, not in a provider model."""

    def __init__(self) -> None:
        super().__init__(base_url="http://in-process", api_key="test")
        self.requests = 0

    async def send(self, body: bytes) -> ModelReply:
        self.requests += 1
        tokens = len(body) // 4
        cached = 0 if self.requests == 1 else tokens * 9 // 10
        usage = {"input_tokens": tokens - cached, "cache_read_input_tokens": cached}
        content = [{"type": "text", "text": f"ok {self.requests}"}]
        return self.parse({"content": content, "usage": usage})
