"""`Workspace`: the tools run in this process, over a notebook filesystem and a snapshot store.

One workspace serves every agent of a process (a server, an MCP connection, a CLI call, a
`Session`). It owns what a tool call shares and what it keeps per agent:

- one `PathLocks` table: reads, outputs, edits and writes of one file are serialized whoever
  sends them, and a multi-file edit holds the locks of all its files;
- the activity log: every call that changed a file is recorded, with the agent's name;
- per agent, a `Patcher` over the shared filesystem, store and locks: seen lines are credited
  to the agent that was shown them (agent B may not edit lines only agent A read) and no-op
  streaks are counted per agent. At most `max_agents` patchers are kept (least recently used
  go first; their seen lines stay in the store, only a no-op streak is forgotten);
- per agent and notebook, the cells the agent's last edit touched (the default of a run);
- the `CellRunner` its surface gave it (a directory's own kernels, a server's), or none;
- whether a whole-file write may replace an existing file without a tag (`allow_overwrite`;
  with a tag it always may, when the tag names the file as it is).

A run holds the notebook's path lock while the gate judges it (the snapshot at the agent's
tag, the live text, the agent's seen lines), never while cells run; the runner takes the lock
again to write the outputs. The text that landed is recorded in the store (the reply's header
carries its tag) and the run in the activity log.

Invariants:
- Only this module (of the whole package) builds a `Patcher` (review.py takes its
  `exact_patcher`).
- Every method returns a `ToolOutcome`; agent mistakes and rejections never raise.
- No cell runs unless the gate cleared it; a workspace whose runs are refused (`run_refusal`)
  or that has no runner answers `RunNotAllowedError` / `RunUnavailableError` before reading
  anything. The workspace owns its runner: `aclose()` closes it (its kernels shut down).
- An eval runs only the code its request carries, in the notebook's kernel, and writes
  nothing; it, and `kernel` (status, interrupt, restart), are refused exactly where runs are.
  The runs and evals in flight are recorded per notebook (`executions`), so an interrupt or
  restart says whose work it stopped.
- Every edit's record keeps its undo plan (revert.py), with the cells it deleted (captured
  during its merge). `revert` applies plans through a patcher of its own (exact rows, no
  seen-lines check: a person undoes what they see in the feed), newest first; when one is
  refused, those already applied are put back, so a request lands whole or not at all.
- An edit or write that hits `ChangedDuringWriteError` (a live document changed under it,
  nothing written) is run again, up to `write_attempts` times, as the stale edit it now is.
"""

from __future__ import annotations

import asyncio
from collections import OrderedDict
from collections.abc import Awaitable, Callable
from dataclasses import replace
from functools import partial
from typing import Any

from ..hashline import messages
from ..hashline.errors import HashlineError, NotFoundError, is_not_found
from ..hashline.locks import PathLocks
from ..hashline.offload import OFFLOAD_EDITS, heavy_call, offloaded
from ..hashline.parse import patch_bulk
from ..hashline.patcher import (
    DEFAULT_MAX_EDITS,
    DEFAULT_MAX_VIEW_LINES,
    MiB,
    Patcher,
    SeenLinesPolicy,
)
from ..hashline.results import PartialWriteError, PatchResult, SectionOp, SectionResult
from ..hashline.store import SnapshotStore
from ..hashline.syntax import SyntaxCheck
from ..hashline.text import line_count, section_tag
from ..kernels import (
    DEFAULT_TIMEOUT_S,
    CellRunner,
    KernelAction,
    KernelRun,
    NotRunnableError,
)
from ..notebook import (
    NotebookFilesystem,
    capturing_removed,
    collect_figures,
    layout_for_call,
    restoring_cells,
)
from ..notebook.filesystem import is_notebook_path
from .activity import ActivityLog, ActivityRecord
from .calls import ToolOutcome
from .catalog import DEFAULT_OUTPUT_CHARS, spec_of
from .errors import (
    BadArgumentsError,
    ChangedDuringWriteError,
    RevertNotAllowedError,
    RevertRefusedError,
    RunNotAllowedError,
    RunUnavailableError,
    cells_without_proposal,
)
from .evals import eval_reply
from .kernel_control import Executions, kernel_reply
from .proposals import ReviewPolicy
from .requests import (
    DecisionRequest,
    EditRequest,
    EvalRequest,
    KernelRequest,
    OutputsRequest,
    ReadRequest,
    RevertRequest,
    ReviewAcceptRequest,
    ReviewListRequest,
    ReviewRejectRequest,
    RunRequest,
    ToolRequest,
    WriteRequest,
)
from .revert import (
    NOTHING_TO_UNDO,
    POSITIONAL,
    UndoPlan,
    check_inverse,
    clear_of_live_ids,
    describe_targets,
    refused_error,
    revert_targets,
    snapshot_after,
    undo_plan,
)
from .review import ReviewDesk, listing_text, proposed_outcome, told_text
from .runs import GatePassed, RunGate, TouchedCells, run_entries, run_reply

__all__ = ["Workspace"]

Work = Callable[[], Awaitable[ToolOutcome]]

BUSY_CALLS = 4
"""Calls in flight beyond which a call runs every engine step in a worker thread (offload.py's
`heavy_call`). One call's steps on a small file cost a few ms on the event loop, less than a
thread hop; but with 16 agents at once their steps queue on the loop, and a person's request
waited behind all of them (worst stall 104-176 ms, bench.server_load). In threads the loop
wins the interpreter back every switch interval."""


class Workspace:
    """The tool calls of one process (see the module docstring)."""

    def __init__(
        self,
        fs: NotebookFilesystem,
        store: SnapshotStore,
        *,
        seen_lines: SeenLinesPolicy | str = SeenLinesPolicy.REJECT,
        syntax_check: SyntaxCheck | str = SyntaxCheck.WARN,
        max_patch_bytes: int = 16 * MiB,
        max_file_bytes: int = 64 * MiB,
        activity: ActivityLog | None = None,
        resolve_path: Callable[[str], str] | None = None,
        max_agents: int = 256,
        write_attempts: int = 3,
        describe: str = "",
        runner: CellRunner | None = None,
        run_refusal: str | None = None,
        revert_refusal: str | None = None,
        allow_overwrite: bool = True,
        max_edits: int = DEFAULT_MAX_EDITS,
        max_view_lines: int = DEFAULT_MAX_VIEW_LINES,
        review: ReviewPolicy | None = None,
    ) -> None:
        self.fs = fs
        self.review = review if review is not None else ReviewPolicy()
        self.desk = ReviewDesk(self)
        self.allow_overwrite = allow_overwrite
        self.max_edits = max_edits
        self.max_view_lines = max_view_lines
        self.store = store
        self.seen_lines = SeenLinesPolicy(seen_lines)
        self.syntax_check = SyntaxCheck(syntax_check)
        self.max_patch_bytes = max_patch_bytes
        self.max_file_bytes = max_file_bytes
        self.activity = activity if activity is not None else ActivityLog()
        self.locks = PathLocks()
        self.describe = describe or repr(fs)
        self.resolve: Callable[[str], str] = resolve_path or (lambda path: path)
        self._max_agents = max_agents
        self._write_attempts = max(1, write_attempts)
        self._patchers: OrderedDict[str, Patcher] = OrderedDict()
        self.runner = runner
        self.run_refusal = run_refusal
        self.revert_refusal = revert_refusal
        self.touched = TouchedCells()
        self.executions = Executions()
        self._in_flight = 0  # tool calls running now (see BUSY_CALLS)

    # -- the tools -----------------------------------------------------------------------------

    async def call(self, request: ToolRequest) -> ToolOutcome:
        """Run a validated request with the method its catalog entry names."""
        spec = spec_of(request)
        method: Callable[[Any], Awaitable[ToolOutcome]] = getattr(self, spec.method)
        self._in_flight += 1
        try:
            with heavy_call(self._in_flight > BUSY_CALLS):
                return await method(request)
        finally:
            self._in_flight -= 1

    async def read(self, request: ReadRequest) -> ToolOutcome:
        async def work() -> ToolOutcome:
            patcher = self.patcher(request.agent)
            path = self.resolve(request.path)
            read = await patcher.read(path, request.offset, request.limit, request.cells)
            reply = {"path": read.path, "tag": read.tag, "header": read.header, "view": read.view}
            return ToolOutcome(read.view, reply=reply)

        return self._told(request.agent, await _guarded(work))

    async def edit(self, request: EditRequest) -> ToolOutcome:
        patcher = self.patcher(request.agent)
        proposing = self.review.proposes(request.agent, request.propose)

        async def run() -> PatchResult:
            with layout_for_call(request.layout):
                if proposing:
                    return await patcher.propose(request.edit)
                return await patcher.apply(request.edit)

        with heavy_call(patch_bulk(request.edit).edits >= OFFLOAD_EDITS):  # its record too
            if proposing:
                return self._told(request.agent, await self._proposing(request.agent, run))
            return self._told(request.agent, await self._changing(request.agent, "patch", run))

    async def write(self, request: WriteRequest) -> ToolOutcome:
        patcher = self.patcher(request.agent)
        proposing = self.review.proposes(request.agent, request.propose)

        async def run() -> PatchResult:
            path = self.resolve(request.path)
            tag, overwrite = request.tag, bool(request.overwrite)
            with layout_for_call(request.layout):
                if proposing:
                    return PatchResult(
                        (
                            await patcher.propose_write(
                                path, request.content, tag=tag, overwrite=overwrite
                            ),
                        )
                    )
                return await patcher.write(path, request.content, tag=tag, overwrite=overwrite)

        if proposing:
            return self._told(request.agent, await self._proposing(request.agent, run))
        return self._told(request.agent, await self._changing(request.agent, "write", run))

    async def decide(self, request: DecisionRequest) -> ToolOutcome:
        """Accept or reject proposals (review.py): a person's decision on an agent's edit."""
        if request.accept and self.revert_refusal is not None:  # read-only: nothing lands
            return ToolOutcome.failure(RevertNotAllowedError(
                self.revert_refusal.replace("Undo refused", "Accept refused")
            ))  # fmt: skip
        return await self.desk.decide(request)

    async def review_list(self, request: ReviewListRequest) -> ToolOutcome:
        """The reviewer's tool: the pending proposals (of a path) as text with their diffs."""

        async def work() -> ToolOutcome:
            listing = await self.desk.listed(request.path, pending_only=True)
            text = listing_text(listing, request.path)
            return ToolOutcome(text, reply={**listing, "text": text})

        return await _guarded(work)

    async def review_accept(self, request: ReviewAcceptRequest) -> ToolOutcome:
        return await self._reviewed(request)

    async def review_reject(self, request: ReviewRejectRequest) -> ToolOutcome:
        return await self._reviewed(request)

    async def _reviewed(self, request: ReviewAcceptRequest | ReviewRejectRequest) -> ToolOutcome:
        if request.cells is not None and request.proposal is None:
            return ToolOutcome.failure(cells_without_proposal())
        return await self.decide(request.decision())

    async def proposals(self, path: str | None = None) -> dict[str, Any]:
        """The proposals kept here (of `path`), newest first, as the REST reply lists them."""
        return await self.desk.listed(path)

    async def outputs(self, request: OutputsRequest) -> ToolOutcome:
        async def work() -> ToolOutcome:
            path = self.resolve(request.path)
            max_chars = request.max_chars or DEFAULT_OUTPUT_CHARS
            async with self.locks.hold([await self.fs.canonical_path(path)]):
                text = await self.fs.outputs(path, request.cell, max_chars=max_chars)
                listed = await self.fs.output_list(path, request.cell) if request.images else ()
            outcome = ToolOutcome(text, reply={"path": path, "cell": request.cell, "text": text})
            if not request.images:
                return outcome
            figures = await asyncio.to_thread(collect_figures, [(request.cell, listed)])
            return outcome.with_figures(figures)

        return await _guarded(work)

    async def run(self, request: RunRequest) -> ToolOutcome:
        async def work() -> ToolOutcome:
            runner = self._runner()
            path = self.resolve(request.path)
            if not is_notebook_path(path) or not self.fs.hashline:
                raise NotRunnableError(_not_runnable(path))
            key = await self.fs.canonical_path(path)
            passed = await self._judge(request, path, key)
            cells = [cell.cell_id for cell in passed.plan.cells]
            with self.executions.running(key, request.agent, "run of cells " + ", ".join(cells)):
                run = await runner.run(
                    path,
                    passed.plan.cells,
                    timeout_s=request.timeout_s or DEFAULT_TIMEOUT_S,
                    write_lock=lambda: self.locks.hold([key]),
                )
            self.executions.saw(key, run)
            return await _with_figures(self._ran(request, path, key, passed, run), run, request)

        return await _guarded(work)

    async def eval(self, request: EvalRequest) -> ToolOutcome:
        async def work() -> ToolOutcome:
            runner = self._runner()
            path = self.resolve(request.path)
            if not is_notebook_path(path) or not self.fs.hashline:
                raise NotRunnableError(_no_kernel(path))
            key = await self.fs.canonical_path(path)
            async with self.locks.hold([key]):
                header = messages.header(path, section_tag(await self._live_text(path)))
            timeout_s = request.timeout_s or DEFAULT_TIMEOUT_S
            with self.executions.running(key, request.agent, "eval"):
                run = await runner.evaluate(path, request.code, timeout_s=timeout_s)
            self.executions.saw(key, run)
            record = self.activity.record_eval(
                path=path, who=request.agent, header=header, code=request.code,
                runs=run_entries(run),
            )  # fmt: skip
            max_chars = request.max_chars or DEFAULT_OUTPUT_CHARS
            text, reply = eval_reply(
                run, path=path, header=header, max_chars=max_chars, record=record
            )
            outcome = ToolOutcome(text, reply=reply, activity=(record,))
            return await _with_figures(outcome, run, request)

        return await _guarded(work)

    async def kernel(self, request: KernelRequest) -> ToolOutcome:
        async def work() -> ToolOutcome:
            action = _kernel_action(request.action)
            runner = self._runner()
            path = self.resolve(request.path)
            if not is_notebook_path(path) or not self.fs.hashline:
                raise NotRunnableError(_no_kernel(path, "Nothing was done"))
            key = await self.fs.canonical_path(path)
            await self._live_text(path)  # a missing notebook is a clear error
            ours = self.executions.first(key)
            state = await runner.control(path, action)
            count = self.executions.count(key)
            if action is KernelAction.RESTART and state.exists:
                self.executions.forget_count(key)
            text, reply = kernel_reply(state, action, ours, count)
            return ToolOutcome(text, reply=reply)

        return await _guarded(work)

    async def revert(self, request: RevertRequest) -> ToolOutcome:
        """Undo recorded edits through the engine, newest first, all or nothing (revert.py)."""
        try:
            if self.revert_refusal is not None:
                raise RevertNotAllowedError(self.revert_refusal)
            targets = revert_targets(self.activity.recent(), request)
            steps = await self._undo_all(targets, request.agent)
        except HashlineError as err:
            return ToolOutcome.failure(err)
        records: tuple[ActivityRecord, ...] = ()
        for target, result, removed in steps:
            records += await self.record(result, request.agent, "revert", removed, (target.id,))
        landed = [result.to_text() for _, result, _ in steps if result.changed]
        undone = [target.id for target, _, _ in steps]
        what = describe_targets(targets) if targets else "nothing"
        text = "\n\n".join([f"Undid {what}." if landed else NOTHING_TO_UNDO, *landed])
        reply = {"reverted": undone, "activity": [r.to_json() for r in records], "text": text}
        return ToolOutcome(text, reply=reply, activity=records)

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
                allow_overwrite=self.allow_overwrite,
                max_edits=self.max_edits,
                syntax_check=self.syntax_check,
                max_view_lines=self.max_view_lines,
            )
            self._patchers[agent] = patcher
            while len(self._patchers) > self._max_agents:
                self._patchers.popitem(last=False)
        self._patchers.move_to_end(agent)
        return patcher

    # -- inspection ----------------------------------------------------------------------------

    def exact_patcher(self, agent: str, syntax_check: SyntaxCheck = SyntaxCheck.WARN) -> Patcher:
        """A patcher applying computed rows as they are (an undo, an accepted proposal),
        crediting `agent`: no seen-lines check (a person decides on what they were shown) and
        no repairs."""
        return Patcher(
            self.fs,
            self.store,
            SeenLinesPolicy.OFF,
            max_patch_bytes=self.max_patch_bytes,
            max_file_bytes=self.max_file_bytes,
            repair_echo=False,
            agent=agent,
            locks=self.locks,
            exact_rows=True,
            syntax_check=syntax_check,
        )

    def snapshots(self) -> dict[str, Any]:
        """Tracked paths (most recently used first), their versions and the lines shown."""
        tracked = []
        for path in self.store.paths():
            versions = [
                {
                    "tag": snap.tag,
                    "recorded_at_ms": snap.recorded_at_ms,
                    "lines": line_count(snap.text),
                    "seen_lines": _runs(self.store.seen_lines(path, snap.tag)),
                }
                for snap in self.store.history(path)
            ]
            head = versions[0]["tag"] if versions else None
            tracked.append({"path": path, "head": head, "versions": versions})
        return {"paths": tracked}

    async def aclose(self) -> None:
        """Close the runner (its own kernels shut down); the store belongs to its maker."""
        if self.runner is not None:
            await self.runner.close()

    # -- internals -----------------------------------------------------------------------------

    async def _changing(
        self, agent: str, source: str, run: Callable[[], Awaitable[PatchResult]]
    ) -> ToolOutcome:
        """Run an edit or write, retried on a live change, and record what landed (with the
        cells it deleted, kept for an undo)."""
        try:
            with capturing_removed() as removed:
                result = await self.retrying(run)
        except PartialWriteError as err:
            records = await self.record(err.result, agent, source, removed)
            await self.note_touched(agent, err.result)
            return ToolOutcome.failure(err, result=err.result, activity=records)
        except HashlineError as err:
            return ToolOutcome.failure(err)
        records = await self.record(result, agent, source, removed)
        await self.note_touched(agent, result)
        reply = {**result.to_json(), "activity": [record.to_json() for record in records]}
        return ToolOutcome(result.to_text(), reply=reply, result=result, activity=records)

    async def _proposing(
        self, agent: str, run: Callable[[], Awaitable[PatchResult]]
    ) -> ToolOutcome:
        """Run an edit or write as a proposal (nothing written) and keep it for review."""
        try:
            result = await run()
        except HashlineError as err:
            return ToolOutcome.failure(err)
        return proposed_outcome(await self.desk.keep(agent, result), result)

    def _told(self, agent: str, outcome: ToolOutcome) -> ToolOutcome:
        """`outcome` with the decisions on `agent`'s proposals it has not been told yet."""
        notices = self.desk.book.take_notices(agent)
        if not notices:
            return outcome
        text = told_text(notices, outcome.text)
        if outcome.is_error:
            return replace(outcome, text=text, reply={**outcome.reply, "message": text})
        reply = {**outcome.reply, "review_updates": list(notices)}
        if "text" in reply:
            reply["text"] = text
        return replace(outcome, text=text, reply=reply)

    async def retrying(self, run: Callable[[], Awaitable[PatchResult]]) -> PatchResult:
        for _ in range(self._write_attempts - 1):
            try:
                return await run()
            except ChangedDuringWriteError:
                continue
        return await run()

    async def record(
        self,
        result: PatchResult,
        agent: str,
        source: str,
        removed: dict[str, dict[str, Any]],
        reverts: tuple[int, ...] = (),
    ) -> tuple[ActivityRecord, ...]:
        def undo(section: SectionResult) -> UndoPlan | None:
            if section.op is not SectionOp.UPDATE:
                return None  # a created file is not undone (that would delete it)
            positional = is_notebook_path(section.path) and any(
                self.fs.positional_ids(text) for text in (section.before, section.after)
            )
            return undo_plan(
                section.path,
                section.before,
                section.after,
                removed,
                positional=positional,
                after_tag=section.tag,
            )

        size = sum(len(section.before) + len(section.after) for section in result.sections)
        described = await offloaded(  # diffs and undo plans of a big edit: off the event loop
            size,
            lambda: self.activity.describe_result(
                result, who=agent, source=source, undo=undo, reverts=reverts
            ),
        )
        return tuple(self.activity.add_described(described))

    # -- undo ----------------------------------------------------------------------------------

    async def _undo_all(
        self, targets: list[ActivityRecord], agent: str
    ) -> list[tuple[ActivityRecord, PatchResult, dict[str, dict[str, Any]]]]:
        """Undo each target in order; when one is refused, put back the ones that landed."""
        steps: list[tuple[ActivityRecord, PatchResult, dict[str, dict[str, Any]]]] = []
        for record in targets:
            assert record.undo is not None, "revert_targets checked it"
            try:
                result, removed = await self._undo(record.undo, record.id, agent)
            except HashlineError as err:
                stuck = await self._roll_back(steps, agent)
                if stuck:  # the feed must show what stayed undone
                    for target, landed, cells in stuck:
                        await self.record(landed, agent, "revert", cells, (target.id,))
                    raise RevertRefusedError(_partly(record, err, stuck)) from err
                raise refused_error(err, record, len(steps)) from err
            steps.append((record, result, removed))
        return steps

    async def _undo(
        self, plan: UndoPlan, activity_id: int, agent: str
    ) -> tuple[PatchResult, dict[str, dict[str, Any]]]:
        """Apply one plan through an exact-rows patcher, from the snapshot the edit produced."""
        key = await self.fs.canonical_path(self.resolve(plan.path))
        snapshot = snapshot_after(self.store, key, plan)
        if snapshot is None:
            raise RevertRefusedError(
                f"Activity {activity_id} cannot be undone safely: the text it produced is no "
                "longer in the snapshot store (too many versions since), so its lines cannot "
                "be told apart from later changes. Nothing was written."
            )
        check_inverse(plan, snapshot.text, activity_id)
        if plan.structural:
            live = await self.fs.read_text(self.resolve(plan.path))
            if self.fs.positional_ids(live):
                raise RevertRefusedError(
                    f"Activity {activity_id} cannot be undone now: {POSITIONAL}. Nothing was "
                    "written."
                )
            plan = clear_of_live_ids(plan, live)
        self.store.record(key, snapshot.text)  # its tag now names this very text
        patcher = self.exact_patcher(agent)
        with capturing_removed() as removed, restoring_cells(plan.restore):
            result = await self.retrying(lambda: patcher.apply(plan.section()))
        return result, removed

    async def _roll_back(
        self, steps: list[tuple[ActivityRecord, PatchResult, dict[str, dict[str, Any]]]], agent: str
    ) -> list[tuple[ActivityRecord, PatchResult, dict[str, dict[str, Any]]]]:
        """Undo the undos that landed, newest first (all or nothing); the steps that could not
        be put back (a person changed those lines meanwhile), empty when all were."""
        for index in range(len(steps) - 1, -1, -1):
            record, result, removed = steps[index]
            try:
                for section in result.sections:
                    if section.written and section.before != section.after:
                        plan = undo_plan(section.path, section.before, section.after, removed)
                        await self._undo(plan, record.id, agent)
            except HashlineError:
                return steps[: index + 1]
        return []

    async def note_touched(self, agent: str, result: PatchResult) -> None:
        """Remember the cells each landed notebook section touched: the agent's next run's
        default."""
        for section in result.sections:
            if section.written and is_notebook_path(section.path):
                key = await self.fs.canonical_path(section.path)
                before, after = section.before, section.after
                cells = await offloaded(  # both projections parsed: off the loop when big
                    len(before) + len(after), partial(TouchedCells.between, before, after)
                )
                self.touched.remember(agent, key, cells)

    def _runner(self) -> CellRunner:
        if self.run_refusal is not None:
            raise RunNotAllowedError(self.run_refusal)
        if self.runner is None:
            raise RunUnavailableError(
                f"run not available here: {self.describe} has no kernel to run cells in, so "
                "nothing ran. Run the notebook through a Jupyter server or on a directory."
            )
        return self.runner

    async def _live_text(self, path: str) -> str:
        """The notebook's text now; a missing file is a clear error saying nothing ran."""
        try:
            return await self.fs.read_text(path)
        except Exception as err:
            if is_not_found(err) and not isinstance(err, HashlineError):
                raise NotFoundError(path, f"File not found: {path}. Nothing ran.") from err
            raise

    async def _judge(self, request: RunRequest, path: str, key: str) -> GatePassed:
        """The gate's verdict, under the notebook's lock (released before any cell runs)."""
        async with self.locks.hold([key]):
            live_text = await self._live_text(path)
            gate = RunGate(self.store, self.seen_lines)
            touched = self.touched.get(request.agent, key)
            return gate.judge(request, path=path, key=key, live_text=live_text, touched=touched)

    def _ran(
        self, request: RunRequest, path: str, key: str, passed: GatePassed, run: KernelRun
    ) -> ToolOutcome:
        """Record what landed and the run; the reply."""
        after = run.landed_text if run.landed_text is not None else passed.live_text
        patcher = self.patcher(request.agent)
        tag, warnings = patcher.record_rewritten(
            path, key, request.tag, passed.snapshot_text, after
        )
        record = self.activity.record_run(
            path=path,
            who=request.agent,
            header_before=messages.header(path, request.tag),
            header_after=messages.header(path, tag),
            runs=run_entries(run),
            warnings=(*run.write_warnings, *warnings),
        )
        notes = (*passed.plan.notes, *passed.notes, *warnings)
        max_chars = request.max_chars or DEFAULT_OUTPUT_CHARS
        text, reply = run_reply(
            run, path=path, tag=tag, notes=notes, max_chars=max_chars, record=record
        )
        return ToolOutcome(text, reply=reply, activity=(record,))


async def _with_figures(
    outcome: ToolOutcome, run: KernelRun, request: RunRequest | EvalRequest
) -> ToolOutcome:
    """`outcome` with the figures of `run` when the request asked for images (decoded and
    downscaled in a worker thread: never on the event loop)."""
    if not request.images:
        return outcome
    cells = [(cell.cell_id, cell.outputs) for cell in run.cells]
    return outcome.with_figures(await asyncio.to_thread(collect_figures, cells))


async def _guarded(work: Work) -> ToolOutcome:
    try:
        return await work()
    except HashlineError as err:
        return ToolOutcome.failure(err)


def _partly(record: ActivityRecord, err: HashlineError, stuck: list[Any]) -> str:
    ids = ", ".join(str(target.id) for target, _, _ in stuck)
    which = f"activit{'ies' if len(stuck) > 1 else 'y'} {ids}"
    return (
        f"Undo of activity {record.id} refused, and the undo of {which} "
        f"made before it by this request could not be put back (the file changed "
        f"meanwhile): those stay undone, as the activity feed shows.\n{err.message}"
    )


def _not_runnable(path: str) -> str:
    return (
        f"Run refused, nothing ran: {path} is not a notebook shown as cell-marked text, so it "
        "has no cells to run. Only .ipynb notebooks run (on a server whose projection is "
        "'hashline')."
    )


def _no_kernel(path: str, what: str = "Eval refused, nothing ran") -> str:
    return (
        f"{what}: {path} is not a notebook shown as cell-marked text, so it has no kernel. "
        "Name an .ipynb notebook (on a server whose projection is 'hashline')."
    )


def _kernel_action(action: str) -> KernelAction:
    try:
        return KernelAction(action.strip().lower())
    except ValueError:
        raise BadArgumentsError(
            f"notebook_kernel: `action` must be status, interrupt or restart, not {action!r}. "
            "Nothing was done."
        ) from None


def _runs(lines: frozenset[int]) -> list[list[int]]:
    """Sorted line numbers as inclusive [first, last] runs."""
    runs: list[list[int]] = []
    for line in sorted(lines):
        if runs and runs[-1][1] == line - 1:
            runs[-1][1] = line
        else:
            runs.append([line, line])
    return runs
