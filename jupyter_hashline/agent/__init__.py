"""Agents over notebooks: sessions with three-zone prompts, provider clients, the simulator.

`Session` ties the zones (prefix caching by construction) and the notebook tools (through
`jupyter_hashline.tools`, on a directory or through the Jupyter server of its kernel) to a
provider client. `ProviderSimulator` is an offline provider for the examples, tests and
benchmarks.
"""

from __future__ import annotations

from ..tools import TOOL_NAMES, TOOL_SPECS, ActivityLog, ActivityRecord, ToolOutcome
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
from .registration import ServerInfo, find_parent_server
from .session import DEFAULT_SYSTEM, Session
from .simulator import PROVIDER_PATHS, ProviderSimulator
from .where import SessionPlacementError, Via

__all__ = [
    "DEFAULT_SYSTEM",
    "PROVIDER_PATHS",
    "TOOL_NAMES",
    "TOOL_SPECS",
    "ActivityLog",
    "ActivityRecord",
    "AnthropicClient",
    "DeepSeekClient",
    "ModelReply",
    "OpenAIClient",
    "ProviderClient",
    "ProviderError",
    "ProviderSimulator",
    "ServerInfo",
    "Session",
    "SessionPlacementError",
    "ToolCall",
    "ToolOutcome",
    "Via",
    "client_for",
    "find_parent_server",
]
