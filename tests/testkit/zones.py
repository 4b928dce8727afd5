"""Test inputs shared by the zones tests: a tool catalog, a hand-moved clock, message builders."""

from __future__ import annotations

from typing import Any

from jupyter_hashline.zones import PinnedPrefix

SYSTEM = "You edit Jupyter notebooks through hashline tools. Read before you edit."
MODEL = "claude-sonnet-4-5"


def tool(name: str, description: str, **properties: str) -> dict[str, Any]:
    props = {key: {"type": kind} for key, kind in properties.items()}
    return {
        "name": name,
        "description": description,
        "input_schema": {"type": "object", "properties": props, "required": sorted(props)},
    }


TOOLS = [
    tool("notebook_read", "Read a notebook as hashline text.", path="string"),
    tool("notebook_edit", "Apply a hashline patch.", patch="string"),
    tool("notebook_write", "Create or overwrite a file.", path="string", content="string"),
]


class FakeClock:
    """A clock the test moves by hand."""

    def __init__(self, start: float = 1_700_000_000.0) -> None:
        self.now = start

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


def make_prefix(
    system: str = SYSTEM, tools: list[dict[str, Any]] | None = None, model: str = MODEL
) -> PinnedPrefix:
    return PinnedPrefix(system, TOOLS if tools is None else tools, model)


def user(text: str) -> dict[str, Any]:
    return {"role": "user", "content": text}


def assistant_call(call_id: str, name: str, text: str = "", **arguments: Any) -> dict[str, Any]:
    blocks: list[dict[str, Any]] = [{"type": "text", "text": text}] if text else []
    blocks.append({"type": "tool_use", "id": call_id, "name": name, "input": arguments})
    return {"role": "assistant", "content": blocks}


def tool_result(call_id: str, text: str) -> dict[str, Any]:
    return {
        "role": "user",
        "content": [{"type": "tool_result", "tool_use_id": call_id, "content": text}],
    }


def assistant(text: str) -> dict[str, Any]:
    return {"role": "assistant", "content": [{"type": "text", "text": text}]}
