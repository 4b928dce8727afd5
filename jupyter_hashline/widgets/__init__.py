"""Notebook surfaces of an agent session: the live `ZonesPanel` and the `%hashline` magics.

`ZonesPanel(session)` (also `session.panel()`) shows the three zones, the cache contract
status with its drift history, the rebuild audit, the cache hit ratio per request and the last
edits, updated by the session's own events. The magics live in `widgets.magics` and are loaded
with `%load_ext jupyter_hashline`.
"""

from __future__ import annotations

from .panel import ZonesPanel
from .view import ContractStatus, PanelLimits, PanelTracker

__all__ = ["ContractStatus", "PanelLimits", "PanelTracker", "ZonesPanel"]
