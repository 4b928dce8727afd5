"""Provider clients: POST the exact request bytes, return the reply as plain values.

Invariants:
- The body sent is byte for byte what the caller built (`ThreeZoneRequest.to_wire`), so the
  provider's prefix cache sees exactly what the ledger measured. Nothing re-encodes it.
- Keys and base URLs come from arguments, else from the environment (`ANTHROPIC_API_KEY` /
  `ANTHROPIC_BASE_URL`, `OPENAI_API_KEY` / `OPENAI_BASE_URL`, `DEEPSEEK_API_KEY` /
  `DEEPSEEK_BASE_URL`), else the public endpoints.
- A reply is a `ModelReply`: text, tool calls, optional reasoning, the raw usage dict (the
  ledger normalizes it) and the assistant message in the log's neutral form (Anthropic-style
  blocks; DeepSeek's `reasoning_content` kept verbatim), to be appended to the log as is.
"""

from __future__ import annotations

import json
import os
from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

import httpx


@dataclass(frozen=True, slots=True)
class ToolCall:
    id: str
    name: str
    input: Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class ModelReply:
    text: str
    tool_calls: tuple[ToolCall, ...]
    usage: Mapping[str, Any]
    assistant_message: Mapping[str, Any]
    reasoning: str | None = None
    raw: Mapping[str, Any] = field(default_factory=dict)


class ProviderError(RuntimeError):
    """The provider answered with an error status or an unreadable body."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(f"provider error {status}: {message}")
        self.status = status


class ProviderClient(ABC):
    """Base: one request shape, one endpoint path, credentials from args or environment."""

    provider: ClassVar[str]
    path: ClassVar[str]
    env_prefix: ClassVar[str]
    default_base_url: ClassVar[str]

    def __init__(
        self,
        base_url: str | None = None,
        api_key: str | None = None,
        *,
        http: httpx.AsyncClient | None = None,
        timeout: float = 120.0,
    ) -> None:
        env = os.environ
        self.base_url = (
            base_url or env.get(f"{self.env_prefix}_BASE_URL") or self.default_base_url
        ).rstrip("/")
        self.api_key = api_key or env.get(f"{self.env_prefix}_API_KEY") or ""
        self._http = http
        self._timeout = timeout

    @property
    def url(self) -> str:
        return self.base_url + self.path

    def headers(self) -> dict[str, str]:
        headers = {"content-type": "application/json"}
        if self.api_key:
            headers["authorization"] = f"Bearer {self.api_key}"
        return headers

    async def send(self, body: bytes) -> ModelReply:
        """POST `body` unchanged and parse the reply."""
        if self._http is not None:
            response = await self._http.post(self.url, content=body, headers=self.headers())
        else:
            async with httpx.AsyncClient(timeout=self._timeout) as http:
                response = await http.post(self.url, content=body, headers=self.headers())
        try:
            payload = response.json()
        except json.JSONDecodeError as err:
            raise ProviderError(response.status_code, response.text[:500]) from err
        if response.status_code >= 400:
            error = payload.get("error") if isinstance(payload, dict) else None
            message = error.get("message") if isinstance(error, dict) else str(payload)[:500]
            raise ProviderError(response.status_code, str(message))
        return self.parse(payload)

    @abstractmethod
    def parse(self, payload: Mapping[str, Any]) -> ModelReply:
        """Turn the provider's JSON reply into a `ModelReply`."""


class AnthropicClient(ProviderClient):
    provider = "anthropic"
    path = "/v1/messages"
    env_prefix = "ANTHROPIC"
    default_base_url = "https://api.anthropic.com"

    def headers(self) -> dict[str, str]:
        headers = {"content-type": "application/json", "anthropic-version": "2023-06-01"}
        if self.api_key:
            headers["x-api-key"] = self.api_key
        return headers

    def parse(self, payload: Mapping[str, Any]) -> ModelReply:
        blocks = list(payload.get("content") or [])
        text = "".join(b.get("text", "") for b in blocks if b.get("type") == "text")
        calls = tuple(
            ToolCall(b["id"], b["name"], b.get("input") or {})
            for b in blocks
            if b.get("type") == "tool_use"
        )
        message = {"role": "assistant", "content": blocks}
        return ModelReply(text, calls, payload.get("usage") or {}, message, None, payload)


class OpenAIClient(ProviderClient):
    provider = "openai"
    path = "/chat/completions"
    env_prefix = "OPENAI"
    default_base_url = "https://api.openai.com/v1"

    def parse(self, payload: Mapping[str, Any]) -> ModelReply:
        choices = payload.get("choices") or []
        if not choices:
            raise ProviderError(200, "the reply has no choices")
        message = dict(choices[0].get("message") or {})
        calls = tuple(
            ToolCall(c["id"], c["function"]["name"], _arguments(c["function"]))
            for c in message.get("tool_calls") or []
        )
        reasoning = message.get("reasoning_content")
        text = message.get("content") or ""
        return ModelReply(
            text,
            calls,
            payload.get("usage") or {},
            neutral_assistant(text, calls, reasoning),
            reasoning,
            payload,
        )


class DeepSeekClient(OpenAIClient):
    provider = "deepseek"
    path = "/chat/completions"
    env_prefix = "DEEPSEEK"
    default_base_url = "https://api.deepseek.com"


def neutral_assistant(
    text: str, calls: tuple[ToolCall, ...], reasoning: str | None
) -> dict[str, Any]:
    """An OpenAI-shaped answer as the log's neutral (Anthropic-style) assistant message."""
    blocks: list[dict[str, Any]] = [{"type": "text", "text": text}] if text else []
    blocks += [
        {"type": "tool_use", "id": c.id, "name": c.name, "input": dict(c.input)} for c in calls
    ]
    message: dict[str, Any] = {"role": "assistant", "content": blocks}
    if reasoning:
        message["reasoning_content"] = reasoning
    return message


def _arguments(function: Mapping[str, Any]) -> Mapping[str, Any]:
    raw = function.get("arguments") or "{}"
    try:
        value = json.loads(raw) if isinstance(raw, str) else raw
    except json.JSONDecodeError as err:
        raise ProviderError(200, f"tool call arguments are not JSON: {raw[:200]!r}") from err
    if not isinstance(value, dict):
        raise ProviderError(200, f"tool call arguments are not an object: {raw[:200]!r}")
    return value


CLIENTS: dict[str, type[ProviderClient]] = {
    c.provider: c for c in (AnthropicClient, OpenAIClient, DeepSeekClient)
}


def client_for(provider: str, **kwargs: Any) -> ProviderClient:
    """The client class for a request shape name: `anthropic`, `openai` or `deepseek`."""
    try:
        return CLIENTS[provider](**kwargs)
    except KeyError:
        known = ", ".join(sorted(CLIENTS))
        raise ValueError(f"unknown provider {provider!r}; choose one of {known}") from None
