"""The provider simulator: request shapes, scripted turns, and prefix-cache accounting."""

from __future__ import annotations

import json

import httpx
import pytest

from jupyter_hashline.agent.providers import (
    AnthropicClient,
    DeepSeekClient,
    OpenAIClient,
    ProviderError,
    client_for,
)
from jupyter_hashline.agent.simulator import (
    PrefixCache,
    ProviderSimulator,
    estimate_tokens,
    shared_prefix_len,
)


def body(messages: list[str], provider: str = "anthropic", model: str = "m") -> bytes:
    payload = {"model": model, "messages": [{"role": "user", "content": m} for m in messages]}
    return json.dumps(payload).encode()


@pytest.mark.parametrize(
    ("a", "b", "expected"),
    [
        (b"", b"", 0),
        (b"abc", b"abd", 2),
        (b"abc", b"abc", 3),
        (b"abc", b"abcdef", 3),
        (b"x", b"y", 0),
    ],
)
def test_shared_prefix_len(a: bytes, b: bytes, expected: int) -> None:
    assert shared_prefix_len(a, b) == expected


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_prefix_cache_rounds_to_blocks_and_respects_minimum() -> None:
    clock = Clock()
    cache = PrefixCache(block_tokens=64, min_tokens=128, ttl_s=300, clock=clock)
    first = b"a" * 4000  # 1000 tokens
    assert cache.lookup_and_store(first) == (0, 0)  # cold
    cached, shared = cache.lookup_and_store(first + b"b" * 400)
    assert shared == 4000
    assert cached == 1000 // 64 * 64  # 960: whole blocks only
    # a shared prefix below the minimum is not a hit
    cached, _ = cache.lookup_and_store(b"a" * 400 + b"c" * 4000)  # 100 tokens shared
    assert cached == 0


def test_prefix_cache_entries_expire_after_ttl_and_hits_refresh_them() -> None:
    clock = Clock()
    cache = PrefixCache(block_tokens=1, min_tokens=1, ttl_s=10, clock=clock)
    cache.lookup_and_store(b"x" * 400)
    clock.now = 8
    assert cache.lookup_and_store(b"x" * 400 + b"y")[0] == 100  # refreshes the entry
    clock.now = 25  # 17 s after the last use of either entry
    assert cache.lookup_and_store(b"x" * 400 + b"z")[0] == 0


@pytest.mark.parametrize("provider", ["anthropic", "openai", "deepseek"])
async def test_clients_talk_to_the_simulator_over_loopback_http(provider: str) -> None:
    script = [
        {"tool_calls": [{"name": "notebook_read", "input": {"path": "a.ipynb"}}]},
        {"text": "done", "reasoning": "thought about it"},
    ]
    with ProviderSimulator(script, block_tokens=1, min_tokens=1) as sim:
        client = client_for(provider, base_url=sim.base_url(provider), api_key="k")
        sent_1 = body(["hello " * 50], provider)
        first = await client.send(sent_1)
        assert [c.name for c in first.tool_calls] == ["notebook_read"]
        assert first.tool_calls[0].input == {"path": "a.ipynb"}
        assert first.text == ""
        sent_2 = body(["hello " * 50, "more"], provider)
        second = await client.send(sent_2)
        assert second.text == "done"
        assert second.tool_calls == ()
        # the simulator saw exactly the bytes the client was given
        assert sim.bodies == [sent_1, sent_2]
        assert sim.turns_left == 0
    served = sim.requests[1]
    assert served.cached_tokens == estimate_tokens(served.shared_bytes)
    usage = second.usage
    if provider == "anthropic":
        assert usage["cache_read_input_tokens"] == served.cached_tokens
        total = (
            usage["input_tokens"]
            + usage["cache_read_input_tokens"]
            + usage["cache_creation_input_tokens"]
        )
        assert total == served.input_tokens
        assert second.assistant_message["content"][0] == {"type": "text", "text": "done"}
    elif provider == "openai":
        assert usage["prompt_tokens_details"]["cached_tokens"] == served.cached_tokens
        assert usage["prompt_tokens"] == served.input_tokens
        assert second.reasoning is None
    else:
        assert usage["prompt_cache_hit_tokens"] == served.cached_tokens
        assert usage["prompt_cache_miss_tokens"] == served.input_tokens - served.cached_tokens
        assert second.reasoning == "thought about it"
        assert second.assistant_message["reasoning_content"] == "thought about it"


async def test_hit_ratio_counts_the_cold_request() -> None:
    script = [{"text": "a"}, {"text": "b"}]
    async with ProviderSimulator(script, block_tokens=1, min_tokens=1) as sim:
        client = AnthropicClient(base_url=sim.base_url("anthropic"), api_key="k")
        await client.send(body(["x" * 400]))
        await client.send(body(["x" * 400]))
    total = sum(r.input_tokens for r in sim.requests)
    assert sim.hit_ratio == pytest.approx(sim.requests[1].cached_tokens / total)
    assert sim.hit_ratio == 0.5  # identical bodies: second fully cached, first cold


async def test_callable_turns_see_the_request_messages() -> None:
    seen: list[list[object]] = []

    def turn(messages: list[object]) -> dict[str, str]:
        seen.append(messages)
        return {"text": f"{len(messages)} messages"}

    with ProviderSimulator([turn]) as sim:
        reply = await OpenAIClient(base_url=sim.base_url("openai"), api_key="k").send(
            body(["one", "two"])
        )
    assert reply.text == "2 messages"
    assert seen == [[{"role": "user", "content": "one"}, {"role": "user", "content": "two"}]]


async def test_errors_are_clear() -> None:
    with ProviderSimulator([{"text": "only one"}]) as sim:
        no_key = DeepSeekClient(base_url=sim.base_url("deepseek"), api_key="")
        with pytest.raises(ProviderError, match="401"):
            await no_key.send(body(["x"]))
        client = DeepSeekClient(base_url=sim.base_url("deepseek"), api_key="k")
        await client.send(body(["x"]))
        with pytest.raises(ProviderError, match="only 1 turns"):
            await client.send(body(["x"]))
        with pytest.raises(ProviderError, match="400"):
            await client.send(b"not json")
        response = httpx.post(sim.url + "/nowhere", content=b"{}")
        assert response.status_code == 404


def test_clients_take_keys_and_urls_from_the_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "ak")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "http://127.0.0.1:9/x/")
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    client = AnthropicClient()
    assert client.url == "http://127.0.0.1:9/x/v1/messages"
    assert client.headers()["x-api-key"] == "ak"
    assert OpenAIClient(api_key="ok").url == "https://api.openai.com/v1/chat/completions"
    with pytest.raises(ValueError, match="unknown provider"):
        client_for("nope")


async def test_the_root_url_serves_the_anthropic_shape_and_prefixes_serve_every_shape() -> None:
    script = [{"text": "root"}, {"text": "prefixed"}]
    with ProviderSimulator(script) as sim:
        root = await AnthropicClient(base_url=sim.url, api_key="k").send(body(["x"]))
        prefixed = await AnthropicClient(base_url=sim.base_url("anthropic"), api_key="k").send(
            body(["x"])
        )
        assert (root.text, prefixed.text) == ("root", "prefixed")
        assert root.usage["input_tokens"] == sim.requests[0].input_tokens
        # OpenAI and DeepSeek share `/chat/completions`: the root cannot tell them apart
        for path in ("/chat/completions", "/v1/chat/completions"):
            response = httpx.post(sim.url + path, content=b"{}", headers={"x-api-key": "k"})
            assert response.status_code == 404
            assert "no such endpoint" in response.json()["error"]["message"]


def test_simulator_url_requires_a_running_server() -> None:
    sim = ProviderSimulator([])
    with pytest.raises(RuntimeError, match="context manager"):
        _ = sim.url
