"""The hashline service of one server: its workspace, snapshot store and session registry.

`build_service` wires the server's contents manager into the notebook layer (live rooms when
jupyter-collaboration is there) and a `tools.Workspace`, which owns the path locks, the
activity log and the per-agent state. Handlers call the workspace for tool calls and this
service for the rest (snapshots, activity, sessions).

Cells run (`notebook_run`) with the runner `build_service` is given (the server's kernels:
`adapters.ServerKernelRunner`), unless the settings refuse runs: a read-only server, or
`allow_run` false (configured, or turned off by the workspace overlay).

Invariants:
- One workspace per server: one lock table, one activity log, one patcher per agent.
- Paths are resolved (confined, allowed, not hidden) by the contents filesystem before the
  engine sees them.
- A server whose settings refuse runs builds no runner at all.
- Notebooks are signed in the current contents manager's notary, the store Jupyter's own saves
  and reads use, so a trusted notebook stays trusted across agent edits (`keep_trust`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from ..hashline import SnapshotStore
from ..kernels import CellRunner
from ..notebook import NbformatNotary, NotebookFilesystem
from ..tools import (
    ActivityLog,
    ReviewMode,
    ReviewPolicy,
    ToolOutcome,
    Workspace,
    decision_request,
    open_workspace,
    revert_request,
)
from .adapters import (
    ContentsFilesystem,
    LiveContentsFilesystem,
    LiveWriteGuard,
    RoomFinder,
)
from .config import HashlineSettings
from .errors import ReviewForbiddenError
from .requests import SessionPost, review_mode_request
from .sessions import SessionRegistry


class HashlineService:
    """Tool calls (the workspace), snapshots, activity and sessions for one server."""

    def __init__(
        self,
        *,
        workspace: Workspace,
        contents: ContentsFilesystem,
        store: SnapshotStore,
        settings: HashlineSettings,
    ) -> None:
        self.workspace = workspace
        self.contents = contents
        self.store = store
        self.settings = settings
        self.sessions = SessionRegistry(settings.max_sessions)

    @property
    def activity_log(self) -> ActivityLog:
        return self.workspace.activity

    @property
    def filesystem(self) -> NotebookFilesystem:
        """The notebook filesystem over the contents manager (live rooms included)."""
        return self.workspace.fs

    def snapshots(self) -> dict[str, Any]:
        return self.workspace.snapshots()

    def activity(self, limit: int | None = None) -> dict[str, Any]:
        return {"edits": [record.to_json() for record in self.activity_log.recent(limit)]}

    def list_sessions(self) -> dict[str, Any]:
        return {"sessions": [entry.summary() for entry in self.sessions.entries()]}

    def post_session(self, post: SessionPost) -> Mapping[str, Any]:
        entry, created = self.sessions.post(post.session_id, post.snapshot, post.label)
        return {**entry.summary(), "created": created}

    async def revert(self, body: Mapping[str, Any], agent: str) -> ToolOutcome:
        """Undo recorded edits as `agent` asks (a bad body raises `BadArgumentsError`)."""
        return await self.workspace.revert(revert_request(body, agent=agent))

    async def proposals(self, path: str | None) -> dict[str, Any]:
        return await self.workspace.proposals(path)

    async def decide(
        self, body: Mapping[str, Any], agent: str, *, accept: bool, proposal: int | None
    ) -> ToolOutcome:
        """Accept or reject a proposal (or all of a notebook's) as `agent` (a bad body raises
        `BadArgumentsError`)."""
        request = decision_request(body, agent=agent, accept=accept, proposal=proposal)
        return await self.workspace.decide(request)

    def review_mode(self) -> dict[str, Any]:
        return self.workspace.review.to_json()

    def set_review_mode(self, body: Mapping[str, Any], *, named_agent: bool) -> dict[str, Any]:
        """Switch review mode for everyone or one agent. A request that names itself an agent
        (the agent header) may turn review on, never off: review is a person's choice."""
        mode, agent = review_mode_request(body)
        if named_agent and mode is ReviewMode.OFF:
            raise ReviewForbiddenError(
                "Review mode is a person's choice: a request naming an agent "
                "(X-Hashline-Agent) may turn it on, not off. Nothing was changed."
            )
        self.workspace.review = self.workspace.review.with_mode(mode, agent)
        return self.review_mode()

    def get_session(self, session_id: str) -> dict[str, Any]:
        return self.sessions.get(session_id).to_json()

    async def aclose(self) -> None:
        """Disconnect the runner from the server's kernels, then close the store."""
        try:
            await self.workspace.aclose()
        finally:
            self.close()

    def close(self) -> None:
        close = getattr(self.store, "close", None)
        if callable(close):
            close()


RunnerFactory = Callable[[ContentsFilesystem, NotebookFilesystem], CellRunner]
"""Makes a server's runner from its contents filesystem and its notebook filesystem."""


def run_refusal(settings: HashlineSettings) -> str | None:
    """Why this server refuses to run cells (None: it runs them)."""
    if settings.read_only:
        return (
            "Run refused, nothing ran: this Jupyter server is read-only for agents "
            "(HashlineExtension.read_only), and running cells writes their outputs."
        )
    if not settings.allow_run:
        return (
            "Run refused, nothing ran: running cells is turned off on this Jupyter server "
            "(HashlineExtension.allow_run is false, or its workspace overlay set "
            '"allow_run": false). Read the outputs with notebook_outputs instead.'
        )
    return None


def revert_refusal(settings: HashlineSettings) -> str | None:
    """Why this server refuses to undo edits (None: it undoes them)."""
    if settings.read_only:
        return (
            "Undo refused, nothing was written: this Jupyter server is read-only for agents "
            "(HashlineExtension.read_only)."
        )
    if not settings.allow_revert:
        return (
            "Undo refused, nothing was written: undoing edits is turned off on this Jupyter "
            "server (HashlineExtension.allow_revert is false, or its workspace overlay set "
            '"allow_revert": false).'
        )
    return None


def server_notary(contents_manager: Callable[[], Any]) -> NbformatNotary:
    """The notary of the server's current contents manager (Jupyter's own signature store:
    the one its saves sign into and its reads check)."""
    return NbformatNotary(lambda: contents_manager().notary)


def build_service(
    contents_manager: Callable[[], Any],
    store: SnapshotStore,
    settings: HashlineSettings,
    rooms: RoomFinder | None = None,
    runner: RunnerFactory | None = None,
) -> HashlineService:
    """Wire the contents manager, the notebook layer and a workspace for one server.

    `contents_manager()` returns the server's current contents manager (looked up per call:
    jupytext's extension replaces it after load). With `rooms`, notebooks open in a
    collaborative room are read and edited live (`adapters.LiveContentsFilesystem`, its writes
    guarded by `adapters.LiveWriteGuard`). With `runner`, cells run (unless the settings refuse
    runs).
    """
    contents = ContentsFilesystem.current(
        contents_manager,
        allowed_paths=settings.allowed_paths,
        read_only=settings.read_only,
        max_file_bytes=settings.max_file_bytes,
    )
    live = (
        LiveContentsFilesystem(contents, rooms, wait_for_save=settings.live_save == "wait")
        if rooms is not None
        else None
    )
    workspace: Workspace = open_workspace(
        live if live is not None else contents,
        store,
        projection=settings.projection,
        layout=settings.layout,
        guard=LiveWriteGuard(live) if live is not None else None,
        notary=server_notary(contents_manager) if settings.keep_trust else None,
        runner=(lambda notebooks: runner(contents, notebooks)) if runner is not None else None,
        run_refusal=run_refusal(settings),
        seen_lines=settings.seen_lines,
        syntax_check=settings.syntax_check,
        max_patch_bytes=settings.max_patch_bytes,
        max_file_bytes=settings.max_file_bytes,
        activity=ActivityLog(settings.activity_limit),
        resolve_path=contents.resolve,
        describe="this Jupyter server",
        revert_refusal=revert_refusal(settings),
        allow_overwrite=settings.allow_overwrite,
        max_edits=settings.max_edits_per_patch,
        max_view_lines=settings.max_view_lines,
        review=ReviewPolicy(ReviewMode(settings.review), self_accept=settings.review_self_accept),
    )
    return HashlineService(workspace=workspace, contents=contents, store=store, settings=settings)
