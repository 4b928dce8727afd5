"""Agents over notebooks: sessions with three-zone prompts, provider clients, the simulator.

`Session` ties the zones (prefix caching by construction), a `Patcher` over a
`NotebookFilesystem` and the notebook tool catalog to a provider client. `ProviderSimulator`
is an offline provider for the examples, tests and benchmarks.
"""

from __future__ import annotations

from .activity import ActivityLog, ActivityRecord
from .providers import (
    AnthropicClient,
    DeepSeekClient,
    ModelReply,
    OpenAIClient,
    ProviderClient,
    ProviderError,
    ToolCall,
    client_for,
)
from .session import DEFAULT_SYSTEM, Session
from .simulator import ProviderSimulator
from .tools import TOOL_NAMES, TOOL_SPECS, NotebookTools, ToolOutcome

__all__ = [
    "DEFAULT_SYSTEM",
    "TOOL_NAMES",
    "TOOL_SPECS",
    "ActivityLog",
    "ActivityRecord",
    "AnthropicClient",
    "DeepSeekClient",
    "ModelReply",
    "NotebookTools",
    "OpenAIClient",
    "ProviderClient",
    "ProviderError",
    "ProviderSimulator",
    "Session",
    "ToolCall",
    "ToolOutcome",
    "client_for",
]
