"""An offline model provider: a loopback HTTP server that speaks the Anthropic Messages, OpenAI
chat-completions and DeepSeek request shapes, replays a script of model turns, and reports
prompt-cache usage computed by real prefix matching.

Accounting (the rules the ledger is checked against):
- A request's input tokens are its prompt's UTF-8 bytes / 4 (rounded up); the prompt is the
  body, except that Anthropic bodies are matched without their `cache_control` breakpoints
  (see `cache_key`).
- It reads from cache the longest byte prefix it shares with an earlier request that is still
  alive (seen within `ttl_s`), rounded down to whole blocks of `block_tokens`, and only if that
  is at least `min_tokens`. A hit refreshes the TTL of the request it matched.
- The answer reports that in the shape's own usage fields (Anthropic `cache_read_input_tokens`,
  `cache_creation_input_tokens`, `input_tokens`; OpenAI `prompt_tokens_details.cached_tokens`;
  DeepSeek `prompt_cache_hit_tokens` / `prompt_cache_miss_tokens`).
- `hit_ratio` is cached input tokens / all input tokens over every request served, the first
  (cold) one included.

Routes: `{url}/anthropic/v1/messages`, `{url}/openai/v1/chat/completions`,
`{url}/deepseek/chat/completions` (see `base_url(provider)`), and `{url}/v1/messages`, so that
`url` itself is an Anthropic base URL, as for the real service (`Session(...,
base_url=sim.url)`). The OpenAI and DeepSeek shapes share the path `/chat/completions` under
their base URLs, so they keep their prefixes. Each shape checks for its API key header (any
value), as the real services do, and answers 401 without it.

The server runs in a daemon thread, so it serves sync and async callers alike; the script is
consumed in order, one turn per request. A turn is `{"text": ...}`, `{"tool_calls": [{"name",
"input"}, ...]}` (optionally with `"text"` and, for DeepSeek, `"reasoning"`), or a callable
that receives the request's messages (as sent) and returns such a dict.
"""

from __future__ import annotations

import json
import math
import threading
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import TracebackType
from typing import Any

Turn = Mapping[str, Any] | Callable[[list[Any]], Mapping[str, Any]]

PROVIDER_PATHS = {
    "anthropic": "/anthropic/v1/messages",
    "openai": "/openai/v1/chat/completions",
    "deepseek": "/deepseek/chat/completions",
}
ROOT_PROVIDER = "anthropic"
"""The shape served at the root (`{url}/v1/messages`): `url` is a base URL for this one."""
ROUTES = {
    **{path: provider for provider, path in PROVIDER_PATHS.items()},
    "/v1/messages": ROOT_PROVIDER,
}
_BASE_SUFFIX = {"anthropic": "/anthropic", "openai": "/openai/v1", "deepseek": "/deepseek"}


@dataclass(frozen=True, slots=True)
class ServedRequest:
    """One request the simulator answered, with its cache accounting."""

    provider: str
    input_tokens: int
    cached_tokens: int
    created_tokens: int  # written to the cache by this request (whole blocks past the hit)
    shared_bytes: int
    body_bytes: int
    at: float


def estimate_tokens(n_bytes: int) -> int:
    return math.ceil(n_bytes / 4)


def shared_prefix_len(a: bytes, b: bytes) -> int:
    """Length of the longest common prefix of two byte strings (binary search on slices)."""
    lo, hi = 0, min(len(a), len(b))
    if a[:hi] == b[:hi]:
        return hi
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if a[:mid] == b[:mid]:
            lo = mid
        else:
            hi = mid - 1
    return lo


class PrefixCache:
    """The provider-side cache model: bodies seen, with their last use, and the match rule."""

    def __init__(
        self, *, block_tokens: int, min_tokens: int, ttl_s: float, clock: Callable[[], float]
    ) -> None:
        self.block_tokens = block_tokens
        self.min_tokens = min_tokens
        self.ttl_s = ttl_s
        self._clock = clock
        self._entries: list[list[Any]] = []  # [body, last_used]

    def cacheable_tokens(self, n_bytes: int) -> int:
        """Whole blocks of a prompt of `n_bytes`, or 0 below the minimum length."""
        tokens = estimate_tokens(n_bytes) // self.block_tokens * self.block_tokens
        return tokens if tokens >= self.min_tokens else 0

    def lookup_and_store(self, body: bytes) -> tuple[int, int]:
        """Return (cached tokens, shared bytes) for `body`, then remember it."""
        now = self._clock()
        self._entries = [e for e in self._entries if now - e[1] <= self.ttl_s]
        best, best_entry = 0, None
        for entry in self._entries:
            shared = shared_prefix_len(entry[0], body)
            if shared > best:
                best, best_entry = shared, entry
        cached = self.cacheable_tokens(best)
        if cached and best_entry is not None:
            best_entry[1] = now
        self._entries.append([body, now])
        return cached, best


class ProviderSimulator:
    """A scripted provider on 127.0.0.1; use as a (sync or async) context manager."""

    def __init__(
        self,
        script: Iterable[Turn],
        block_tokens: int = 64,
        min_tokens: int = 1024,
        ttl_s: float = 300,
        *,
        clock: Callable[[], float] = time.monotonic,
        host: str = "127.0.0.1",
        port: int = 0,
    ) -> None:
        self._script = list(script)
        self._next_turn = 0
        self._lock = threading.Lock()
        self._cache = PrefixCache(
            block_tokens=block_tokens, min_tokens=min_tokens, ttl_s=ttl_s, clock=clock
        )
        self._clock = clock
        self.requests: list[ServedRequest] = []
        self.bodies: list[bytes] = []
        self._host, self._port = host, port
        self._server: ThreadingHTTPServer | None = None
        self._thread: threading.Thread | None = None

    # -- lifecycle -------------------------------------------------------------------------
    def start(self) -> ProviderSimulator:
        if self._server is not None:
            return self
        server = ThreadingHTTPServer((self._host, self._port), _handler_for(self))
        server.daemon_threads = True
        self._server = server
        self._thread = threading.Thread(target=server.serve_forever, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        if self._server is None:
            return
        self._server.shutdown()
        self._server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
        self._server, self._thread = None, None

    def __enter__(self) -> ProviderSimulator:
        return self.start()

    def __exit__(
        self, et: type[BaseException] | None, ev: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()

    async def __aenter__(self) -> ProviderSimulator:
        return self.start()

    async def __aexit__(
        self, et: type[BaseException] | None, ev: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()

    @property
    def url(self) -> str:
        """The root URL; also the Anthropic base URL (`/v1/messages` is served under it)."""
        if self._server is None:
            raise RuntimeError("the simulator is not running; use it as a context manager")
        port = self._server.server_address[1]
        return f"http://{self._host}:{port}"

    def base_url(self, provider: str) -> str:
        """The base URL a client of `provider` should be given (any of the three shapes)."""
        return self.url + _BASE_SUFFIX[provider]

    # -- accounting ------------------------------------------------------------------------
    @property
    def hit_ratio(self) -> float:
        total = sum(r.input_tokens for r in self.requests)
        return sum(r.cached_tokens for r in self.requests) / total if total else 0.0

    @property
    def turns_left(self) -> int:
        return len(self._script) - self._next_turn

    def serve(self, provider: str, body: bytes) -> dict[str, Any]:
        """Answer one request body (the HTTP handler calls this; tests may too)."""
        request = json.loads(body)
        with self._lock:
            if self._next_turn >= len(self._script):
                raise ScriptExhausted(len(self._script))
            turn = self._script[self._next_turn]
            self._next_turn += 1
            prompt = cache_key(provider, request, body)
            cached, shared = self._cache.lookup_and_store(prompt)
            created = max(0, self._cache.cacheable_tokens(len(prompt)) - cached)
            served = ServedRequest(
                provider,
                estimate_tokens(len(prompt)),
                cached,
                created,
                shared,
                len(body),
                self._clock(),
            )
            self.requests.append(served)
            self.bodies.append(body)
            index = len(self.requests)
        resolved = turn(list(request.get("messages", []))) if callable(turn) else turn
        return _RESPONDERS[provider](request, dict(resolved), served, index)


def cache_key(provider: str, request: Mapping[str, Any], body: bytes) -> bytes:
    """The bytes prefix matching runs on: the prompt as the provider's cache sees it.

    Anthropic's cache ignores where `cache_control` breakpoints sit and reads a string content
    as one text block; since a request moves its breakpoint to the new last message, matching
    raw bytes would miss one message per turn. So for that shape the body is re-encoded with
    breakpoints dropped and string contents as blocks (key order kept, so stable parts stay
    first). The other shapes are matched on their raw bytes.
    """
    if provider != "anthropic":
        return body
    return json.dumps(_without_breakpoints(request), ensure_ascii=False).encode()


def _without_breakpoints(value: Any) -> Any:
    if isinstance(value, dict):
        out = {k: _without_breakpoints(v) for k, v in value.items() if k != "cache_control"}
        if isinstance(out.get("content"), str) and "role" in out:
            out["content"] = [{"type": "text", "text": out["content"]}]
        return out
    if isinstance(value, list):
        return [_without_breakpoints(v) for v in value]
    return value


class ScriptExhausted(RuntimeError):
    def __init__(self, length: int) -> None:
        super().__init__(f"the simulator's script has only {length} turns and all were served")


# -- response shapes ---------------------------------------------------------------------------
def _tool_calls(turn: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    return list(turn.get("tool_calls") or [])


def _anthropic_reply(
    request: Mapping[str, Any], turn: Mapping[str, Any], served: ServedRequest, index: int
) -> dict[str, Any]:
    content: list[dict[str, Any]] = []
    if turn.get("text"):
        content.append({"type": "text", "text": turn["text"]})
    for n, call in enumerate(_tool_calls(turn)):
        content.append(
            {
                "type": "tool_use",
                "id": f"toolu_sim_{index:04d}_{n}",
                "name": call["name"],
                "input": call.get("input", {}),
            }
        )
    total, cached, created = served.input_tokens, served.cached_tokens, served.created_tokens
    return {
        "id": f"msg_sim_{index:04d}",
        "type": "message",
        "role": "assistant",
        "model": request.get("model", ""),
        "content": content,
        "stop_reason": "tool_use" if _tool_calls(turn) else "end_turn",
        "stop_sequence": None,
        "usage": {
            "input_tokens": total - cached - created,
            "cache_creation_input_tokens": created,
            "cache_read_input_tokens": cached,
            "output_tokens": estimate_tokens(len(json.dumps(content))),
        },
    }


def _openai_message(turn: Mapping[str, Any], index: int, provider: str) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": turn.get("text") or None}
    if provider == "deepseek" and turn.get("reasoning"):
        message["reasoning_content"] = turn["reasoning"]
    calls = _tool_calls(turn)
    if calls:
        message["tool_calls"] = [
            {
                "id": f"call_sim_{index:04d}_{n}",
                "type": "function",
                "function": {
                    "name": call["name"],
                    "arguments": json.dumps(call.get("input", {}), ensure_ascii=False),
                },
            }
            for n, call in enumerate(calls)
        ]
    return message


def _openai_reply(
    request: Mapping[str, Any],
    turn: Mapping[str, Any],
    served: ServedRequest,
    index: int,
    provider: str = "openai",
) -> dict[str, Any]:
    message = _openai_message(turn, index, provider)
    completion = estimate_tokens(len(json.dumps(message)))
    total, cached = served.input_tokens, served.cached_tokens
    usage: dict[str, Any] = {
        "prompt_tokens": total,
        "completion_tokens": completion,
        "total_tokens": total + completion,
    }
    if provider == "deepseek":
        usage["prompt_cache_hit_tokens"] = cached
        usage["prompt_cache_miss_tokens"] = total - cached
    else:
        usage["prompt_tokens_details"] = {"cached_tokens": cached}
    return {
        "id": f"chatcmpl-sim-{index:04d}",
        "object": "chat.completion",
        "created": 0,
        "model": request.get("model", ""),
        "choices": [
            {
                "index": 0,
                "message": message,
                "finish_reason": "tool_calls" if "tool_calls" in message else "stop",
            }
        ],
        "usage": usage,
    }


def _deepseek_reply(
    request: Mapping[str, Any], turn: Mapping[str, Any], served: ServedRequest, index: int
) -> dict[str, Any]:
    return _openai_reply(request, turn, served, index, provider="deepseek")


_RESPONDERS: dict[
    str, Callable[[Mapping[str, Any], Mapping[str, Any], ServedRequest, int], dict[str, Any]]
] = {"anthropic": _anthropic_reply, "openai": _openai_reply, "deepseek": _deepseek_reply}


# -- HTTP --------------------------------------------------------------------------------------
def _has_key(provider: str, headers: Mapping[str, str]) -> bool:
    if provider == "anthropic":
        return bool(headers.get("x-api-key"))
    return (headers.get("authorization") or "").startswith("Bearer ")


def _handler_for(sim: ProviderSimulator) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:  # quiet
            return None

        def _send(self, status: int, payload: Mapping[str, Any]) -> None:
            data = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_POST(self) -> None:
            provider = ROUTES.get(self.path)
            body = self.rfile.read(int(self.headers.get("content-length") or 0))
            if provider is None:
                self._send(404, {"error": {"message": f"no such endpoint: {self.path}"}})
                return
            headers = {k.lower(): v for k, v in self.headers.items()}
            if not _has_key(provider, headers):
                self._send(401, {"error": {"message": "missing API key"}})
                return
            try:
                self._send(200, sim.serve(provider, body))
            except ScriptExhausted as err:
                self._send(409, {"error": {"type": "script_exhausted", "message": str(err)}})
            except (ValueError, KeyError, TypeError) as err:
                self._send(400, {"error": {"type": "invalid_request", "message": str(err)}})
            except Exception as err:  # a scripted callable failed: say so, do not hang up
                message = f"{type(err).__name__}: {err}"
                self._send(500, {"error": {"type": "script_error", "message": message}})

    return Handler
