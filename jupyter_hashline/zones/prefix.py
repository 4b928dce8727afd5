"""The frozen prefix zone: system prompt, tool catalog and model, fingerprinted.

`PinnedPrefix(system, tools, model).freeze()` gives a `FrozenPrefix`:
- ``system_sha256`` = sha256 of the system prompt (UTF-8);
- ``tools_sha256`` = sha256 of the canonical JSON of each tool, in wire order, joined by ``\\n``;
- ``model_sha256`` = sha256 of the model name;
- ``combined_sha256`` = sha256 of ``"model:<m>\\nsystem:<s>\\ntools:<t>"`` over those three hex
  digests, and ``short_id`` its first 12 hex digits.

Tools are kept in the neutral (Anthropic) form ``{"name", "description", "input_schema"}``; a
chat-completions tool ``{"type": "function", "function": {name, description, parameters}}`` is
converted to it on freezing, so both spellings of one tool hash alike.

Invariants: a `FrozenPrefix` never changes (tools are deep-frozen); equal fingerprints mean equal
prefix bytes; drift between two prefixes classifies the tools as *changed* (a tool added,
removed, or kept by name with another description or schema) or *only reordered* (the same
canonical tools in another order), never both.
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from enum import Enum
from typing import Any

from .canonical import FrozenList, canonical_json, freeze
from .errors import MessageFormatError
from .wire import Provider, prefix_head

__all__ = ["DriftPart", "FrozenPrefix", "PinnedPrefix", "PrefixDrift"]


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


class DriftPart(str, Enum):
    """Which part of the prefix moved."""

    SYSTEM = "system"
    TOOLS = "tools"
    TOOLS_REORDERED = "tools_reordered"
    MODEL = "model"


@dataclass(frozen=True, slots=True)
class PinnedPrefix:
    """The prefix as configured; `freeze()` snapshots and fingerprints it."""

    system: str
    tools: Sequence[Mapping[str, Any]] = ()
    model: str = ""

    def freeze(self) -> FrozenPrefix:
        return FrozenPrefix.of(self.system, self.tools, self.model)


@dataclass(frozen=True, slots=True, eq=False)
class FrozenPrefix:
    """An immutable, fingerprinted prefix. Equality is equality of `combined_sha256`."""

    system: str
    tools: FrozenList
    model: str
    system_sha256: str
    tools_sha256: str
    model_sha256: str
    combined_sha256: str
    short_id: str
    tool_bytes: tuple[bytes, ...] = field(repr=False)
    stream_bytes: bytes = field(repr=False)
    _heads: dict[Provider, bytes] = field(default_factory=dict, repr=False)

    @classmethod
    def of(cls, system: str, tools: Sequence[Mapping[str, Any]], model: str) -> FrozenPrefix:
        if not isinstance(system, str) or not isinstance(model, str):
            raise MessageFormatError("the prefix needs a string system prompt and model name")
        frozen_tools = FrozenList(
            freeze(_neutral_tool(t, i), where=f"tools[{i}]") for i, t in enumerate(tools)
        )
        _refuse_duplicate_names(frozen_tools)
        tool_bytes = tuple(canonical_json(tool) for tool in frozen_tools)
        system_sha = _sha256(system.encode("utf-8"))
        tools_sha = _sha256(b"\n".join(tool_bytes))
        model_sha = _sha256(model.encode("utf-8"))
        combined = _sha256(f"model:{model_sha}\nsystem:{system_sha}\ntools:{tools_sha}".encode())
        stream = canonical_json({"model": model, "system": system, "tools": frozen_tools})
        return cls(
            system, frozen_tools, model, system_sha, tools_sha, model_sha, combined,
            combined[:12], tool_bytes, stream,
        )  # fmt: skip

    @property
    def tool_names(self) -> tuple[str, ...]:
        return tuple(tool["name"] for tool in self.tools)

    def wire_head(self, provider: Provider) -> bytes:
        """The body bytes before the first message for `provider` (built once, then cached)."""
        head = self._heads.get(provider)
        if head is None:
            head = self._heads[provider] = prefix_head(
                provider, self.model, self.system, self.tools
            )
        return head

    def verify(
        self, system: str, tools: Sequence[Mapping[str, Any]], model: str
    ) -> PrefixDrift | None:
        """None when (system, tools, model) freeze to this prefix, else what moved."""
        return self.drift_to(FrozenPrefix.of(system, tools, model))

    def drift_to(self, current: FrozenPrefix) -> PrefixDrift | None:
        if current.combined_sha256 == self.combined_sha256:
            return None
        reordered = self.tool_bytes != current.tool_bytes and sorted(self.tool_bytes) == sorted(
            current.tool_bytes
        )
        added, removed, changed = _tool_changes(self, current)
        return PrefixDrift(
            system_changed=self.system_sha256 != current.system_sha256,
            tools_changed=self.tool_bytes != current.tool_bytes and not reordered,
            tools_reordered=reordered,
            model_changed=self.model != current.model,
            frozen_hash=self.combined_sha256,
            current_hash=current.combined_sha256,
            added_tools=added,
            removed_tools=removed,
            changed_tools=changed,
            frozen_model=self.model,
            current_model=current.model,
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "short_id": self.short_id,
            "combined_sha256": self.combined_sha256,
            "system_sha256": self.system_sha256,
            "tools_sha256": self.tools_sha256,
            "model_sha256": self.model_sha256,
            "model": self.model,
            "tool_names": list(self.tool_names),
            "system_chars": len(self.system),
            "bytes": len(self.stream_bytes),
        }

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, FrozenPrefix):
            return NotImplemented
        return self.combined_sha256 == other.combined_sha256

    def __hash__(self) -> int:
        return hash(self.combined_sha256)


def _neutral_tool(tool: Mapping[str, Any], index: int) -> Mapping[str, Any]:
    if not isinstance(tool, Mapping):
        raise MessageFormatError(f"tools[{index}] must be an object with a 'name'")
    function = tool.get("function")
    if tool.get("type") == "function" and isinstance(function, Mapping):
        neutral = {"name": function.get("name"), "input_schema": function.get("parameters", {})}
        if "description" in function:
            neutral["description"] = function["description"]
        tool = neutral
    if not isinstance(tool.get("name"), str) or not tool["name"]:
        raise MessageFormatError(f"tools[{index}] needs a non-empty string 'name'")
    return tool


def _refuse_duplicate_names(tools: FrozenList) -> None:
    seen: set[str] = set()
    for tool in tools:
        if tool["name"] in seen:
            raise MessageFormatError(
                f"two tools are named {tool['name']!r}; providers reject duplicate tool names, "
                "so rename or drop one before pinning the prefix"
            )
        seen.add(tool["name"])


def _tool_changes(
    frozen: FrozenPrefix, current: FrozenPrefix
) -> tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]:
    before = dict(zip(frozen.tool_names, frozen.tool_bytes, strict=True))
    after = dict(zip(current.tool_names, current.tool_bytes, strict=True))
    added = tuple(name for name in after if name not in before)
    removed = tuple(name for name in before if name not in after)
    changed = tuple(name for name in after if name in before and before[name] != after[name])
    return added, removed, changed


@dataclass(frozen=True, slots=True)
class PrefixDrift:
    """What moved between a frozen prefix and the current one; `str()` reads as a sentence."""

    system_changed: bool
    tools_changed: bool
    tools_reordered: bool
    model_changed: bool
    frozen_hash: str
    current_hash: str
    added_tools: tuple[str, ...] = ()
    removed_tools: tuple[str, ...] = ()
    changed_tools: tuple[str, ...] = ()
    frozen_model: str = ""
    current_model: str = ""

    @property
    def parts(self) -> tuple[DriftPart, ...]:
        flags = [
            (self.model_changed, DriftPart.MODEL),
            (self.tools_changed, DriftPart.TOOLS),
            (self.tools_reordered, DriftPart.TOOLS_REORDERED),
            (self.system_changed, DriftPart.SYSTEM),
        ]
        return tuple(part for flag, part in flags if flag)

    def __str__(self) -> str:
        pieces = []
        if self.model_changed:
            pieces.append(f"model changed ({self.frozen_model!r} -> {self.current_model!r})")
        if self.tools_changed:
            pieces.append(f"tools changed ({self._tool_detail()})")
        if self.tools_reordered:
            pieces.append("tools reordered (same tools, another order)")
        if self.system_changed:
            pieces.append("system prompt changed")
        what = "; ".join(pieces)
        return f"prefix drift {self.frozen_hash[:12]} -> {self.current_hash[:12]}: {what}"

    def _tool_detail(self) -> str:
        named = [
            ("changed", self.changed_tools),
            ("added", self.added_tools),
            ("removed", self.removed_tools),
        ]
        return ", ".join(f"{label}: {', '.join(names)}" for label, names in named if names)

    def to_json(self) -> dict[str, Any]:
        return {
            "parts": [part.value for part in self.parts],
            "system_changed": self.system_changed,
            "tools_changed": self.tools_changed,
            "tools_reordered": self.tools_reordered,
            "model_changed": self.model_changed,
            "frozen_hash": self.frozen_hash,
            "current_hash": self.current_hash,
            "added_tools": list(self.added_tools),
            "removed_tools": list(self.removed_tools),
            "changed_tools": list(self.changed_tools),
            "text": str(self),
        }
