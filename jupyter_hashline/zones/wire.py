"""Provider wire shapes: the neutral message form and its byte forms for each provider.

The log stores messages in one provider-neutral form (Anthropic Messages style):
``{"role": "user" | "assistant", "content": str | [block, ...]}`` where blocks are
``{"type": "text", "text"}``, ``{"type": "tool_use", "id", "name", "input"}`` (assistant),
``{"type": "tool_result", "tool_use_id", "content": str | [block, ...]}`` (user),
``{"type": "image", "source": {...}}`` and, passed through to Anthropic only, ``thinking`` blocks.
An assistant message may carry ``"reasoning_content": str`` (DeepSeek replays it verbatim; the
other shapes drop it). The system prompt and tools never appear in the log: they are the prefix.

Shapes:
- ``anthropic``: messages as ``{"content", "role"}``; the request's last message gets
  ``cache_control: {"type": "ephemeral"}`` on its last block (a string content becomes one text
  block), as do the last tool and the system block.
- ``openai`` (chat completions): tools as ``{"type": "function", "function": {...}}``; the
  system prompt is the first message; assistant tool_use blocks become ``tool_calls`` (arguments
  are the canonical JSON of ``input``); each tool_result becomes a ``tool`` message.
- ``deepseek``: the OpenAI shape plus the assistant's ``reasoning_content``, verbatim.

Invariants: every conversion is a pure function of its input, every object it emits is
serialized with `canonical_json`, and one neutral message always yields at least one wire
message, so wire bodies are `head + parts + tail` with no special cases in the middle.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from enum import Enum
from typing import Any

from .canonical import canonical_json
from .errors import MessageFormatError

__all__ = [
    "CACHE_CONTROL",
    "Provider",
    "message_wire",
    "params_tail",
    "prefix_head",
    "resolve_provider",
    "validate_message",
]

CACHE_CONTROL: dict[str, str] = {"type": "ephemeral"}
RESERVED_KEYS = frozenset({"model", "tools", "system", "messages"})
_UNCACHEABLE_BLOCKS = frozenset({"thinking", "redacted_thinking"})


class Provider(str, Enum):
    """The request shapes `ThreeZoneRequest.to_wire` can produce."""

    ANTHROPIC = "anthropic"
    OPENAI = "openai"
    DEEPSEEK = "deepseek"

    # Hash as the plain string: the per-request caches are keyed by shape, and Enum's own
    # __hash__ is a Python-level call on every lookup.
    __hash__ = str.__hash__


_BY_NAME = {p.value: p for p in Provider} | {p: p for p in Provider}


def resolve_provider(provider: str | Provider) -> Provider:
    try:
        return _BY_NAME[provider]
    except KeyError:
        choices = ", ".join(p.value for p in Provider)
        raise MessageFormatError(
            f"unknown provider shape {provider!r}; use one of: {choices}"
        ) from None


# -- validation (at push time, so a bad message never enters the log) -----------------------


def validate_message(message: Mapping[str, Any], where: str = "message") -> None:
    """Raise MessageFormatError unless `message` is in the neutral form (module docstring)."""
    role = message.get("role")
    if role == "system":
        raise MessageFormatError(
            f"{where} has role 'system'; the system prompt belongs to the frozen prefix: "
            "pass it to PinnedPrefix(system, tools, model) instead of pushing it"
        )
    if role not in ("user", "assistant"):
        raise MessageFormatError(f"{where} needs role 'user' or 'assistant', not {role!r}")
    content = message.get("content")
    if isinstance(content, str):
        if not content:
            raise MessageFormatError(f"{where} has empty content; providers reject it")
    elif isinstance(content, Sequence) and content:
        for i, block in enumerate(content):
            _validate_block(block, role, f"{where}.content[{i}]")
    else:
        raise MessageFormatError(
            f"{where} needs 'content' as a non-empty string or a non-empty list of blocks"
        )
    reasoning = message.get("reasoning_content")
    if reasoning is not None and (role != "assistant" or not isinstance(reasoning, str)):
        raise MessageFormatError(f"{where}.reasoning_content must be a string on an assistant")


def _validate_block(block: object, role: str, where: str) -> None:
    if not isinstance(block, Mapping) or not isinstance(block.get("type"), str):
        raise MessageFormatError(f"{where} must be an object with a string 'type'")
    kind = block["type"]
    if kind == "tool_use":
        if role != "assistant":
            raise MessageFormatError(f"{where}: tool_use blocks belong to assistant messages")
        if not isinstance(block.get("id"), str) or not isinstance(block.get("name"), str):
            raise MessageFormatError(f"{where}: tool_use needs string 'id' and 'name'")
        if not isinstance(block.get("input"), Mapping):
            raise MessageFormatError(f"{where}: tool_use needs an object 'input'")
    elif kind == "tool_result":
        if role != "user":
            raise MessageFormatError(f"{where}: tool_result blocks belong to user messages")
        if not isinstance(block.get("tool_use_id"), str):
            raise MessageFormatError(f"{where}: tool_result needs a string 'tool_use_id'")
    elif kind == "text" and not isinstance(block.get("text"), str):
        raise MessageFormatError(f"{where}: a text block needs a string 'text'")


# -- messages ---------------------------------------------------------------------------------


def message_wire(provider: Provider, message: Mapping[str, Any], *, last: bool = False) -> bytes:
    """The wire bytes of one neutral message: one or more comma-joined wire objects."""
    if provider is Provider.ANTHROPIC:
        wire = {"role": message["role"], "content": message["content"]}
        if last:
            wire["content"] = _with_breakpoint(message["content"])
        return canonical_json(wire)
    objects = _openai_messages(message, reasoning=provider is Provider.DEEPSEEK)
    return b",".join(canonical_json(obj) for obj in objects)


def _with_breakpoint(content: str | Sequence[Any]) -> list[Any]:
    blocks: list[Any] = (
        [{"type": "text", "text": content}] if isinstance(content, str) else list(content)
    )
    for i in range(len(blocks) - 1, -1, -1):
        if blocks[i].get("type") not in _UNCACHEABLE_BLOCKS:
            blocks[i] = {**blocks[i], "cache_control": CACHE_CONTROL}
            break
    return blocks


def _openai_messages(message: Mapping[str, Any], *, reasoning: bool) -> list[dict[str, Any]]:
    if message["role"] == "assistant":
        return [_openai_assistant(message, reasoning=reasoning)]
    content = message["content"]
    if isinstance(content, str):
        return [{"role": "user", "content": content}]
    out: list[dict[str, Any]] = []
    rest: list[dict[str, Any]] = []
    for block in content:
        if block["type"] == "tool_result":
            out.append(_openai_tool_message(block))
        else:
            rest.append(_openai_user_part(block))
    if rest:
        out.append({"role": "user", "content": rest})
    return out


def _openai_assistant(message: Mapping[str, Any], *, reasoning: bool) -> dict[str, Any]:
    content = message["content"]
    texts: list[str] = []
    calls: list[dict[str, Any]] = []
    if isinstance(content, str):
        texts.append(content)
    else:
        for block in content:
            if block["type"] == "text":
                texts.append(block["text"])
            elif block["type"] == "tool_use":
                arguments = canonical_json(block["input"]).decode("utf-8")
                function = {"name": block["name"], "arguments": arguments}
                calls.append({"id": block["id"], "type": "function", "function": function})
    wire: dict[str, Any] = {"role": "assistant", "content": "\n\n".join(texts) if texts else None}
    if calls:
        wire["tool_calls"] = calls
    if reasoning and message.get("reasoning_content") is not None:
        wire["reasoning_content"] = message["reasoning_content"]
    return wire


def _openai_tool_message(block: Mapping[str, Any]) -> dict[str, Any]:
    content = block.get("content", "")
    if not isinstance(content, str):
        content = "\n".join(_tool_result_text(part) for part in content)
    return {"role": "tool", "tool_call_id": block["tool_use_id"], "content": content}


def _tool_result_text(part: Mapping[str, Any]) -> str:
    if part.get("type") == "text":
        return str(part.get("text", ""))
    return f"[{part.get('type', 'block')} omitted: chat completions tool messages carry text only]"


def _openai_user_part(block: Mapping[str, Any]) -> dict[str, Any]:
    if block["type"] == "text":
        return {"type": "text", "text": block["text"]}
    source = block.get("source")
    if block["type"] == "image" and isinstance(source, Mapping):
        if source.get("type") == "base64":
            url = f"data:{source.get('media_type')};base64,{source.get('data')}"
        else:
            url = str(source.get("url"))
        return {"type": "image_url", "image_url": {"url": url}}
    return dict(block)


# -- prefix head and params tail ----------------------------------------------------------


def prefix_head(provider: Provider, model: str, system: str, tools: Sequence[Any]) -> bytes:
    """Everything of the body before the first message, ending in ``"messages":[``.

    For the OpenAI shapes the system message is the array's first element, followed by a comma
    (a request always has at least one message after it)."""
    head = [b'{"model":', canonical_json(model)]
    if tools:
        head += [b',"tools":[', _tools_wire(provider, tools), b"]"]
    if provider is Provider.ANTHROPIC:
        if system:
            block = {"type": "text", "text": system, "cache_control": CACHE_CONTROL}
            head += [b',"system":', canonical_json([block])]
        head.append(b',"messages":[')
    else:
        head.append(b',"messages":[')
        if system:
            head += [canonical_json({"role": "system", "content": system}), b","]
    return b"".join(head)


def _tools_wire(provider: Provider, tools: Sequence[Mapping[str, Any]]) -> bytes:
    if provider is Provider.ANTHROPIC:
        wires = [dict(tool) for tool in tools]
        wires[-1]["cache_control"] = CACHE_CONTROL
    else:
        wires = [_openai_tool(tool) for tool in tools]
    return b",".join(canonical_json(w) for w in wires)


def _openai_tool(tool: Mapping[str, Any]) -> dict[str, Any]:
    if "input_schema" not in tool:
        raise MessageFormatError(
            f"tool {tool.get('name')!r} has no input_schema, so it has no chat-completions "
            "function form; give it a JSON Schema or leave it out of the OpenAI-shaped prefix"
        )
    function = {"name": tool["name"], "parameters": tool["input_schema"]}
    if "description" in tool:
        function["description"] = tool["description"]
    return {"type": "function", "function": function}


_TAILS: dict[tuple[tuple[str, Any], ...], bytes] = {}
_TAILS_KEPT = 64


def params_tail(params: Mapping[str, Any]) -> bytes:
    """``]`` closing the messages, the per-request parameters in key order, then ``}``.

    Agents send the same few parameter sets every turn, so scalar-only sets are memoized."""
    try:
        key = tuple(params.items())
        tail = _TAILS.get(key)
    except TypeError:  # unhashable values (nested objects): build every time
        return _build_tail(params)
    if tail is None:
        if len(_TAILS) >= _TAILS_KEPT:
            _TAILS.clear()
        tail = _TAILS[key] = _build_tail(params)
    return tail


def _build_tail(params: Mapping[str, Any]) -> bytes:
    parts = [b"]"]
    for key in sorted(params):
        parts += [b",", canonical_json(key), b":", canonical_json(params[key])]
    parts.append(b"}")
    return b"".join(parts)
