"""`Session`: one agent conversation over notebooks, with prompts built for prefix caching.

A session owns a `ZoneSession` (frozen prefix of system prompt + tool catalog + model, the
append-only log, the turn scratch, stability manager and cache ledger), a tool workspace and a
provider client. Tool calls go through `tools.run_tool` as the session's agent name, the one
people see in the activity feed: its `label` when given, else the `session_id` given, else
`provider/model #n` (n counts the sessions of that model in this process), never a random id.

Where the tools run (`via`): in a kernel started by a Jupyter server (`"auto"` finds it the way
the session registration does), through that server's REST API, so the sidebar's Activity and
Snapshots show the edits and an open notebook is edited live; elsewhere on the directory
(`"directory"`, a `NotebookFilesystem` with the session's own snapshot store). `"server"`
without a parent server, or for a folder outside the server's root, is a clear error.

`notebook_run` runs cells in the notebooks' own kernels of that server, or, on a directory, in
kernels the session starts on first use; `aclose()` (or `async with session`) shuts those
down. `allow_run=False` keeps a directory session from running cells.

Invariants:
- Every byte sent is `ThreeZoneRequest.to_wire(provider)`; every tool result is appended to the
  log verbatim; the only rewrite of the log is `compact()`, through `AppendLog.rebuild` with a
  named reason (so the ledger can name the miss that follows).
- `system` may be a string or a callable returning one; a callable is re-evaluated for every
  request, and any change shows up as prefix drift (the cache-drift demonstration).
- Observers (`subscribe`) hear "request", "tool" and "turn" events synchronously, from the
  task running the turn: no polling loop anywhere.
- Provider, model, base URL and API key are resolved once, when the session is made, in one
  order: arguments > the user's Jupyter config > keyring > environment (`settings.py`); no
  file in the workspace can set them.
"""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from ..hashline import SnapshotStore
from ..tools import TOOL_SPECS, ActivityLog, ToolOutcome, run_tool
from ..zones import PinnedPrefix, RebuildReason, RebuildRecord, ZoneSession
from .providers import ModelReply, ProviderClient, ToolCall, client_for
from .registration import ServerRegistration, find_parent_server
from .settings import resolve_session_settings
from .where import Via, session_workspace

DEFAULT_SYSTEM = (
    "You edit Jupyter notebooks for a person who is working in them too. Read a notebook with "
    "notebook_read before editing it, edit with notebook_edit using the header and line "
    "numbers of your latest read, run the cells you changed with notebook_run and check "
    "outputs with notebook_outputs. When an edit or a run is rejected, follow the message: "
    "re-read what it names and send it again."
)
MAX_EDITS_KEPT = 50
_MADE: dict[str, int] = {}
_MADE_LOCK = threading.Lock()


def _numbered(name: str) -> str:
    """`name #n`: the n-th session of that provider and model made in this process."""
    with _MADE_LOCK:
        _MADE[name] = _MADE.get(name, 0) + 1
        return f"{name} #{_MADE[name]}"


Observer = Callable[[str, "Session"], None]


class Session:
    """An agent conversation: `await session.run_turn(text)` until the model answers."""

    def __init__(
        self,
        root_or_fs: str | Path | Any,
        provider: str | None = None,
        model: str | None = None,
        base_url: str | None = None,
        api_key: str | None = None,
        system: str | Callable[[], str] = DEFAULT_SYSTEM,
        *,
        client: ProviderClient | None = None,
        store: SnapshotStore | None = None,
        seen_lines: str = "reject",
        syntax_check: str = "warn",
        via: Via | str = Via.AUTO,
        max_tokens: int = 4096,
        max_tool_rounds: int = 32,
        session_id: str | None = None,
        label: str | None = None,
        register: bool | ServerRegistration = True,
        allow_run: bool = True,
        clock: Callable[[], float] = time.time,
    ) -> None:
        self.id = session_id or uuid.uuid4().hex[:12]
        self.workspace, self.via = session_workspace(
            root_or_fs,
            Via(via),
            store=store,
            seen_lines=seen_lines,
            syntax_check=syntax_check,
            allow_run=allow_run,
        )
        self.settings = resolve_session_settings(
            provider=provider,
            model=model,
            base_url=base_url,
            api_key=api_key,
            client=client,
            workspace=root_or_fs if isinstance(root_or_fs, (str, Path)) else None,
        )
        self.provider, self.model = self.settings.provider, self.settings.model
        self.client = client or client_for(
            self.provider, base_url=self.settings.base_url, api_key=self.settings.api_key
        )
        self._system = system
        self._clock = clock
        self.max_tokens = max_tokens
        self.max_tool_rounds = max_tool_rounds
        self.zones = ZoneSession(self._pinned(), clock=clock)
        self.edits = ActivityLog(MAX_EDITS_KEPT, clock_ms=lambda: int(clock() * 1000))
        self.turns = 0
        self.active = False
        self.closed = False
        self._observers: list[Observer] = []
        self.agent = label or session_id or _numbered(f"{self.provider}/{self.model}")
        self.label = label or self.agent
        self.registration = _registration(register)

    # -- the turn loop ------------------------------------------------------------------------
    async def run_turn(self, text: str) -> str:
        """Send `text`, execute tool calls until the model answers, return its final text."""
        zones = self.zones
        zones.scratch.stage_user({"role": "user", "content": text})
        self.active = True
        reply: ModelReply | None = None
        try:
            for _ in range(self.max_tool_rounds):
                reply = await self._request()
                if not reply.tool_calls:
                    break
                await self._run_tools(reply.tool_calls)
            else:
                raise RuntimeError(
                    f"the model kept calling tools for {self.max_tool_rounds} rounds; "
                    "raise max_tool_rounds or check the script"
                )
        finally:
            zones.end_turn()
            self.active = False
            self.turns += 1
            self._notify("turn")
            await self.publish()
        return reply.text if reply is not None else ""

    async def aclose(self) -> None:
        """Tell the server the session ended (its sidebar shows it closed), then release the
        workspace: a server's HTTP client, the kernels a directory session started."""
        if not self.closed:
            self.closed = True
            if self.turns:
                await self.publish()
        await self.workspace.aclose()

    async def __aenter__(self) -> Session:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def publish(self) -> bool:
        """Post the snapshot to the Jupyter server this kernel belongs to (if any)."""
        if self.registration is None:
            return False
        return await self.registration.push(self.id, self.label, self.snapshot())

    async def _request(self) -> ModelReply:
        zones = self.zones
        # a fixed system prompt stays pinned as frozen at start; only a callable one is
        # re-evaluated (and re-hashed) per request, so that its drift is seen
        current = self._pinned() if callable(self._system) else None
        request = zones.build_request(current, max_tokens=self.max_tokens)
        reply = await self.client.send(request.to_wire(self.provider))
        zones.record_usage(request, reply.usage, provider=self.provider)
        zones.commit_user()
        zones.log.push(reply.assistant_message)
        self._notify("request")
        return reply

    async def _run_tools(self, calls: tuple[ToolCall, ...]) -> None:
        results = []
        for call in calls:
            outcome = await run_tool(self.workspace, call.name, call.input, agent=self.agent)
            self._remember(outcome)
            block: dict[str, Any] = {
                "type": "tool_result",
                "tool_use_id": call.id,
                "content": outcome.text,
            }
            if outcome.is_error:
                block["is_error"] = True
            results.append(block)
            self._notify("tool")
        self.zones.log.push({"role": "user", "content": results})

    def _pinned(self) -> PinnedPrefix:
        system = self._system() if callable(self._system) else self._system
        return PinnedPrefix(system, [dict(spec) for spec in TOOL_SPECS], self.model)

    # -- compaction -----------------------------------------------------------------------------
    def compact(
        self,
        summary: str,
        *,
        keep_last_turns: int = 1,
        reason: RebuildReason = RebuildReason.MANUAL_COMPACTION,
    ) -> RebuildRecord:
        """Replace older history with `summary`, keeping the last `keep_last_turns` user turns.

        This is the log's only rewrite: it goes through `AppendLog.rebuild`, is audited, and the
        ledger classifies the next miss as `messages_rewritten`.
        """
        messages = list(self.zones.log)
        starts = [i for i, m in enumerate(messages) if _is_user_text(m)]
        keep_from = (
            starts[-keep_last_turns] if 0 < keep_last_turns <= len(starts) else len(messages)
        )
        kept = messages[keep_from:]
        head: list[Mapping[str, Any]] = [
            {"role": "user", "content": f"Summary of the conversation so far:\n{summary}"},
            {"role": "assistant", "content": "Understood; continuing from that summary."},
        ]
        detail = f"kept the last {len(kept)} messages"
        record = self.zones.log.rebuild(reason, [*head, *kept], detail=detail)
        self._notify("rebuild")
        return record

    # -- observation ----------------------------------------------------------------------------
    def subscribe(self, observer: Observer) -> Callable[[], None]:
        """Call `observer(event, session)` on every event; returns an unsubscribe function."""
        self._observers.append(observer)
        return lambda: self._observers.remove(observer) if observer in self._observers else None

    def _notify(self, event: str) -> None:
        for observer in list(self._observers):
            observer(event, self)

    def _remember(self, outcome: ToolOutcome) -> None:
        for record in outcome.activity:
            self.edits.adopt(record)

    def snapshot(self) -> dict[str, Any]:
        """JSON-ready state for the panel and the sidebar."""
        state = self.zones.snapshot()
        state["edits"] = [record.to_json() for record in self.edits.recent()]
        state["session"] = {
            "id": self.id,
            "agent": self.agent,
            "provider": self.provider,
            "model": self.model,
            "turns": self.turns,
            "active": self.active,
            "closed": self.closed,
            "via": self.via.value,
        }
        return state

    def report_zones(self) -> str:
        return self.zones.report_zones()

    def report_cache(self) -> str:
        return self.zones.report_cache()

    def panel(self) -> Any:
        """The live ipywidgets panel of this session."""
        from ..widgets import ZonesPanel

        return ZonesPanel(self)


def _registration(register: bool | ServerRegistration) -> ServerRegistration | None:
    if isinstance(register, ServerRegistration):
        return register
    server = find_parent_server() if register else None
    return ServerRegistration(server) if server is not None else None


def _is_user_text(message: Mapping[str, Any]) -> bool:
    return message.get("role") == "user" and isinstance(message.get("content"), str)


__all__ = ["DEFAULT_SYSTEM", "Session"]
