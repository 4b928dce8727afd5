"""Golden wire bytes: fixed inputs must give these exact bytes for every provider shape.

Regenerate with ``ZONES_UPDATE_GOLDEN=1 pytest tests/zones/test_zones_golden.py``, then read the
diff by eye before keeping it.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

import pytest
from testkit.zones import (
    MODEL,
    SYSTEM,
    TOOLS,
    assistant,
    assistant_call,
    tool_result,
    user,
)

from jupyter_hashline.zones import AppendLog, PinnedPrefix, ThreeZoneRequest, TurnScratch

GOLDEN = Path(__file__).parent / "golden"
UPDATE = os.environ.get("ZONES_UPDATE_GOLDEN") == "1"
PROVIDERS = ("anthropic", "openai", "deepseek")


def basic() -> ThreeZoneRequest:
    log = AppendLog(
        [
            user("Load sales.csv with dates parsed."),
            assistant_call("call_1", "notebook_read", "Reading the notebook.", path="a.ipynb"),
            tool_result(
                "call_1", '[a.ipynb#3C1F]\n1:# %% [code] id=load\n2:df = pd.read_csv("s.csv")'
            ),
            assistant("Done: dates are parsed."),
        ]
    )
    scratch = TurnScratch()
    scratch.stage_user("Now plot revenue per month.")
    scratch.set_working_set(["a.ipynb"])
    scratch.add_note("cell load was edited this session")
    return ThreeZoneRequest(
        PinnedPrefix(SYSTEM, TOOLS, MODEL), log, scratch, max_tokens=1024, temperature=0
    )


def rich() -> ThreeZoneRequest:
    """Non-ASCII, an image, list tool-result content, reasoning, no scratch, OpenAI-form tools."""
    tools = [
        {
            "type": "function",
            "function": {
                "name": "notebook_outputs",
                "description": "Show a cell's outputs — text clipped, images as placeholders.",
                "parameters": {"type": "object", "properties": {"cell": {"type": "string"}}},
            },
        }
    ]
    image = {
        "type": "image",
        "source": {"type": "base64", "media_type": "image/png", "data": "iVBORw0KGgo="},
    }
    log = AppendLog(
        [
            {"role": "user", "content": [{"type": "text", "text": "Größe des Plots? 📈"}, image]},
            {
                "role": "assistant",
                "reasoning_content": "The user asks about plot size; check outputs.",
                "content": [
                    {
                        "type": "tool_use",
                        "id": "c9",
                        "name": "notebook_outputs",
                        "input": {"cell": "plot"},
                    }
                ],
            },
            {
                "role": "user",
                "content": [
                    {
                        "type": "tool_result",
                        "tool_use_id": "c9",
                        "content": [
                            {"type": "text", "text": "image/png 640x480"},
                            {"type": "text", "text": "“done”"},
                        ],
                    }
                ],
            },
        ]
    )
    return ThreeZoneRequest(
        PinnedPrefix("Système: réponds en français.", tools, "deepseek-chat"),
        log,
        None,
        stream=False,
    )


CASES: dict[str, Callable[[], ThreeZoneRequest]] = {"basic": basic, "rich": rich}


@pytest.mark.parametrize("provider", PROVIDERS)
@pytest.mark.parametrize("case", sorted(CASES))
def test_wire_bytes_match_golden(case: str, provider: str) -> None:
    body = CASES[case]().to_wire(provider)
    path = GOLDEN / f"{provider}--{case}.json"
    if UPDATE:
        path.write_bytes(body)
    assert path.is_file(), f"missing {path}; run with ZONES_UPDATE_GOLDEN=1 once and review it"
    assert body == path.read_bytes()


@pytest.mark.parametrize("provider", PROVIDERS)
def test_same_inputs_give_same_bytes(provider: str) -> None:
    assert basic().to_wire(provider) == basic().to_wire(provider)


def test_param_order_does_not_change_bytes() -> None:
    prefix = PinnedPrefix(SYSTEM, TOOLS, MODEL)
    log = AppendLog([user("hi")])
    one = ThreeZoneRequest(prefix, log, None, max_tokens=5, temperature=0.5).to_wire("anthropic")
    two = ThreeZoneRequest(prefix, log, None, temperature=0.5, max_tokens=5).to_wire("anthropic")
    assert one == two
    assert one.endswith(b'],"max_tokens":5,"temperature":0.5}')
