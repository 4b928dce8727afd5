"""`ZonesPanel`: a live ipywidgets view of one agent session's three zones and cache.

Built only from standard ipywidgets (a `VBox` of `HTML` widgets in `HBox` rows), so it works
wherever ipywidgets does, with no front-end build. The numbers it shows also live in its synced
`summary` trait (plain JSON), which is saved with the notebook's widget state.

Invariants:
- Push, never poll: the panel listens to the session (`Session.subscribe`: "request", "tool",
  "turn", "rebuild") and to the log's rebuild callbacks; nothing runs in the kernel between
  events. `close()` unsubscribes.
- Bounded: each update costs the same at turn 10 and at turn 10,000 (see `view.PanelTracker`),
  and "request"/"tool" events inside a turn are coalesced to at most one update per
  `min_interval_s`; turn ends and rebuilds always update, so the panel never ends a turn stale.
  A widget whose HTML did not change sends nothing to the front end (traitlets skip equal values).
- A panel never breaks the agent: a failure while rendering is logged, not raised into the turn.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import ipywidgets as widgets
import traitlets

from . import render
from .view import PanelLimits, PanelTracker

if TYPE_CHECKING:
    from ..agent import Session
    from ..zones import RebuildRecord

__all__ = ["ZonesPanel"]

log = logging.getLogger(__name__)

ALWAYS_RENDER = frozenset({"turn", "rebuild"})


def _html(flex: str = "1 1 0%") -> widgets.HTML:
    return widgets.HTML(layout=widgets.Layout(flex=flex, min_width="0", margin="0 4px 0 0"))


class ZonesPanel(widgets.VBox):
    """The three zones, contract status, rebuild audit, cache and last edits of `session`."""

    summary = traitlets.Dict().tag(sync=True)

    def __init__(
        self,
        session: Session,
        *,
        limits: PanelLimits | None = None,
        min_interval_s: float = 0.2,
        clock: Callable[[], float] = time.monotonic,
        **kwargs: Any,
    ) -> None:
        self.session = session
        self.header, self.status = _html(), _html()
        self.prefix_zone, self.log_zone, self.scratch_zone = _html(), _html(), _html()
        self.cache, self.audit = _html("1 1 0%"), _html("1 1 0%")
        self.edits = _html()
        row = widgets.Layout(width="100%", margin="4px 0")
        zones = widgets.HBox([self.prefix_zone, self.log_zone, self.scratch_zone], layout=row)
        history = widgets.HBox([self.cache, self.audit], layout=row)
        edits_title = widgets.HTML(f'<b style="{render.FONT}">last edits</b>')
        kwargs.setdefault("layout", widgets.Layout(width="100%", max_width="1100px"))
        super().__init__(
            children=[self.header, self.status, zones, history, edits_title, self.edits],
            **kwargs,
        )
        self.add_class("hashline-zones-panel")
        self._tracker = PanelTracker(session, limits)
        self._min_interval_s = min_interval_s
        self._clock = clock
        self._last_render = float("-inf")
        self.renders = 0
        self._unsubscribers = [
            session.subscribe(self._on_session_event),
            session.zones.log.subscribe(self._on_rebuild),
        ]
        self.refresh()

    # -- events ---------------------------------------------------------------------------------
    def _on_session_event(self, event: str, _session: Session) -> None:
        if event == "turn":
            self._tracker.note_turn_end()
        if event in ALWAYS_RENDER or self._clock() - self._last_render >= self._min_interval_s:
            self._safe_refresh()

    def _on_rebuild(self, _record: RebuildRecord) -> None:
        self._safe_refresh()

    def _safe_refresh(self) -> None:
        try:
            self.refresh()
        except Exception:  # the agent's turn must go on whatever the panel does
            log.exception("the hashline zones panel could not update; the session is unaffected")

    # -- rendering ------------------------------------------------------------------------------
    def refresh(self) -> None:
        """Recompute the summary and update every part that changed."""
        summary = self._tracker.summary()
        self.summary = summary
        self.header.value = render.render_header(summary)
        self.status.value = render.render_status(summary)
        self.prefix_zone.value = render.render_prefix(summary)
        self.log_zone.value = render.render_log(summary)
        self.scratch_zone.value = render.render_scratch(summary)
        self.cache.value = render.render_cache(summary)
        self.audit.value = render.render_audit(summary)
        self.edits.value = render.render_edits(summary)
        self._last_render = self._clock()
        self.renders += 1

    def close(self) -> None:
        """Stop listening to the session, then close the widgets."""
        for unsubscribe in self._unsubscribers:
            unsubscribe()
        self._unsubscribers = []
        for child in (self.header, self.status, self.prefix_zone, self.log_zone):
            child.close()
        for child in (self.scratch_zone, self.cache, self.audit, self.edits):
            child.close()
        super().close()
