"""`Workspace`: the tools run in this process, over a notebook filesystem and a snapshot store.

One workspace serves every agent of a process (a server, an MCP connection, a CLI call, a
`Session`). It owns what a tool call shares and what it keeps per agent:

- one `PathLocks` table: reads, outputs, edits and writes of one file are serialized whoever
  sends them, and a multi-file edit holds the locks of all its files;
- the activity log: every call that changed a file is recorded, with the agent's name;
- per agent, a `Patcher` over the shared filesystem, store and locks: seen lines are credited
  to the agent that was shown them (agent B may not edit lines only agent A read) and no-op
  streaks are counted per agent. At most `max_agents` patchers are kept (least recently used
  go first; their seen lines stay in the store, only a no-op streak is forgotten).

Invariants:
- Only this module (of the whole package) builds a `Patcher`.
- Every method returns a `ToolOutcome`; agent mistakes and rejections never raise.
- An edit or write that hits `ChangedDuringWriteError` (a live document changed under it,
  nothing written) is run again, up to `write_attempts` times, as the stale edit it now is.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Awaitable, Callable
from typing import Any

from ..hashline.errors import HashlineError
from ..hashline.locks import PathLocks
from ..hashline.patcher import MiB, Patcher, SeenLinesPolicy
from ..hashline.results import PartialWriteError, PatchResult
from ..hashline.store import SnapshotStore
from ..notebook import NotebookFilesystem
from .activity import ActivityLog, ActivityRecord
from .calls import ToolOutcome
from .catalog import CATALOG, DEFAULT_OUTPUT_CHARS
from .errors import ChangedDuringWriteError
from .requests import EditRequest, OutputsRequest, ReadRequest, ToolRequest, WriteRequest

__all__ = ["Workspace"]

Work = Callable[[], Awaitable[ToolOutcome]]


class Workspace:
    """The tool calls of one process (see the module docstring)."""

    def __init__(
        self,
        fs: NotebookFilesystem,
        store: SnapshotStore,
        *,
        seen_lines: SeenLinesPolicy | str = SeenLinesPolicy.REJECT,
        max_patch_bytes: int = 16 * MiB,
        max_file_bytes: int = 64 * MiB,
        activity: ActivityLog | None = None,
        resolve_path: Callable[[str], str] | None = None,
        max_agents: int = 256,
        write_attempts: int = 3,
        describe: str = "",
    ) -> None:
        self.fs = fs
        self.store = store
        self.seen_lines = SeenLinesPolicy(seen_lines)
        self.max_patch_bytes = max_patch_bytes
        self.max_file_bytes = max_file_bytes
        self.activity = activity if activity is not None else ActivityLog()
        self.locks = PathLocks()
        self.describe = describe or repr(fs)
        self._resolve = resolve_path or (lambda path: path)
        self._max_agents = max_agents
        self._write_attempts = max(1, write_attempts)
        self._patchers: OrderedDict[str, Patcher] = OrderedDict()

    # -- the tools -----------------------------------------------------------------------------

    async def call(self, request: ToolRequest) -> ToolOutcome:
        """Run a validated request with the method its catalog entry names."""
        spec = next(spec for spec in CATALOG if isinstance(request, spec.request))
        method: Callable[[Any], Awaitable[ToolOutcome]] = getattr(self, spec.method)
        return await method(request)

    async def read(self, request: ReadRequest) -> ToolOutcome:
        async def work() -> ToolOutcome:
            patcher = self.patcher(request.agent)
            path = self._resolve(request.path)
            read = await patcher.read(path, request.offset, request.limit, request.cells)
            reply = {"path": read.path, "tag": read.tag, "header": read.header, "view": read.view}
            return ToolOutcome(read.view, reply=reply)

        return await _guarded(work)

    async def edit(self, request: EditRequest) -> ToolOutcome:
        patcher = self.patcher(request.agent)
        return await self._changing(request.agent, "patch", lambda: patcher.apply(request.edit))

    async def write(self, request: WriteRequest) -> ToolOutcome:
        patcher = self.patcher(request.agent)

        async def run() -> PatchResult:
            return await patcher.write(self._resolve(request.path), request.content)

        return await self._changing(request.agent, "write", run)

    async def outputs(self, request: OutputsRequest) -> ToolOutcome:
        async def work() -> ToolOutcome:
            path = self._resolve(request.path)
            max_chars = request.max_chars or DEFAULT_OUTPUT_CHARS
            async with self.locks.hold([await self.fs.canonical_path(path)]):
                text = await self.fs.outputs(path, request.cell, max_chars=max_chars)
            return ToolOutcome(text, reply={"path": path, "cell": request.cell, "text": text})

        return await _guarded(work)

    # -- per-agent state -----------------------------------------------------------------------

    def patcher(self, agent: str) -> Patcher:
        """The patcher of `agent`: its seen lines and no-op streak, the shared everything else."""
        patcher = self._patchers.get(agent)
        if patcher is None:
            patcher = Patcher(
                self.fs,
                self.store,
                self.seen_lines,
                max_patch_bytes=self.max_patch_bytes,
                max_file_bytes=self.max_file_bytes,
                agent=agent,
                locks=self.locks,
            )
            self._patchers[agent] = patcher
            while len(self._patchers) > self._max_agents:
                self._patchers.popitem(last=False)
        self._patchers.move_to_end(agent)
        return patcher

    # -- inspection ----------------------------------------------------------------------------

    def snapshots(self) -> dict[str, Any]:
        """Tracked paths (most recently used first), their versions and the lines shown."""
        tracked = []
        for path in self.store.paths():
            versions = [
                {
                    "tag": snap.tag,
                    "recorded_at_ms": snap.recorded_at_ms,
                    "lines": _line_count(snap.text),
                    "seen_lines": _runs(self.store.seen_lines(path, snap.tag)),
                }
                for snap in self.store.history(path)
            ]
            head = versions[0]["tag"] if versions else None
            tracked.append({"path": path, "head": head, "versions": versions})
        return {"paths": tracked}

    async def aclose(self) -> None:
        """Nothing to release: the store belongs to whoever made it."""

    # -- internals -----------------------------------------------------------------------------

    async def _changing(
        self, agent: str, source: str, run: Callable[[], Awaitable[PatchResult]]
    ) -> ToolOutcome:
        """Run an edit or write, retried on a live change, and record what landed."""
        try:
            result = await self._retrying(run)
        except PartialWriteError as err:
            records = self._record(err.result, agent, source)
            return ToolOutcome.failure(err, result=err.result, activity=records)
        except HashlineError as err:
            return ToolOutcome.failure(err)
        records = self._record(result, agent, source)
        reply = {**result.to_json(), "activity": [record.to_json() for record in records]}
        return ToolOutcome(result.to_text(), reply=reply, result=result, activity=records)

    async def _retrying(self, run: Callable[[], Awaitable[PatchResult]]) -> PatchResult:
        for _ in range(self._write_attempts - 1):
            try:
                return await run()
            except ChangedDuringWriteError:
                continue
        return await run()

    def _record(self, result: PatchResult, agent: str, source: str) -> tuple[ActivityRecord, ...]:
        return tuple(self.activity.record_result(result, who=agent, source=source))


async def _guarded(work: Work) -> ToolOutcome:
    try:
        return await work()
    except HashlineError as err:
        return ToolOutcome.failure(err)


def _line_count(text: str) -> int:
    return text.count("\n") + (0 if text.endswith("\n") or not text else 1)


def _runs(lines: frozenset[int]) -> list[list[int]]:
    """Sorted line numbers as inclusive [first, last] runs."""
    runs: list[list[int]] = []
    for line in sorted(lines):
        if runs and runs[-1][1] == line - 1:
            runs[-1][1] = line
        else:
            runs.append([line, line])
    return runs
