"""The `jupyter_hashline` server extension: configuration, wiring, and the route table.

Invariants:
- Settings come from traitlets (command line > config files > defaults), then the workspace
  overlay file at the server root, which may only tighten them (see `config.py`); every
  refused overlay key is logged as a warning.
- Agents run cells in the notebooks' own kernels of this server
  (`adapters.ServerKernelRunner`) unless `allow_run` is false (the overlay may turn it off,
  never on) or the server is read-only.
- The snapshot store is built once per server. Its default is a `SqliteSnapshotStore` in the
  user's Jupyter data dir, one file per server root, so tags survive a restart and two servers
  on different roots never share snapshots. When the data dir is on a network filesystem the
  default file goes to local disk instead (the runtime dir, else a private temporary folder),
  logged in one line; an explicit `store_path` always wins (on a network filesystem the store
  then uses a rollback journal, not WAL). `mount_table` says which filesystem is where.
- Once the server runs, its startup heap is frozen for the garbage collector, once per process
  (`heap.py`), unless `freeze_startup_heap` is false.
"""

from __future__ import annotations

import inspect
import json
from pathlib import Path
from typing import Any

from jupyter_server.extension.application import ExtensionApp
from traitlets import Bool, Enum, Instance, Int, List, TraitError, Unicode, validate
from traitlets.utils.importstring import import_item

from ..hashline import MountTable, SnapshotStore, SyntaxCheck
from ..notebook import NotebookFilesystem
from ..tools import TOOL_NAMES, StorePlacement, default_store_placement
from . import heap
from .adapters import ContentsFilesystem, RoomFinder, ServerKernelRunner
from .config import (
    MIB,
    HashlineSettings,
    SeenLinesPolicy,
    apply_workspace_overlay,
)
from .events import connect_events
from .handlers import make_handlers
from .mcp_tools import DEFAULT_TOOLS
from .service import HashlineService, build_service

OVERLAY_FILE = ".jupyter-hashline.json"


class HashlineExtension(ExtensionApp):
    """REST API for hashline reads and edits over the server's contents manager."""

    name = "jupyter_hashline"
    description = "Safe notebook editing for LLM agents (hashline REST API)."
    extension_url = "/hashline/"
    load_other_extensions = True

    seen_lines = Enum(
        [p.value for p in SeenLinesPolicy],
        default_value=SeenLinesPolicy.REJECT.value,
        help="What to do with an edit anchored on lines the agent was never shown: "
        "'reject' it (showing those lines), apply it with a 'warn'ing, or 'off' (no check).",
    ).tag(config=True)
    syntax_check = Enum(
        [c.value for c in SyntaxCheck],
        default_value=SyntaxCheck.WARN.value,
        help="What to do with an edit or write that turns Python code that parsed (a .py "
        "file, a notebook's code cell, IPython syntax included) into code that does not: "
        "'warn' (it lands, the reply names the line and the error), 'strict' (refused, "
        "nothing written) or 'off' (no check, and no indentation repair).",
    ).tag(config=True)
    projection = Unicode(
        "hashline",
        help="How notebooks read as text: 'hashline' (cell markers with ids) or a jupytext "
        "format such as 'py:percent' or 'md'.",
    ).tag(config=True)
    layout = Enum(
        ["keep", "nbformat"],
        default_value="keep",
        help="How edited notebooks are laid out on disk: 'keep' the layout each file has "
        "(indent, key order, line ends: a one-line edit is a one-line diff; a file no single "
        "layout reproduces is written in nbformat's layout, with a warning), or 'nbformat' "
        "(Jupyter's own layout, the whole file). Each edit or write call may choose too.",
    ).tag(config=True)
    live_save = Enum(
        ["wait", "room"],
        default_value="wait",
        help="When an edit of a notebook open in JupyterLab (a collaboration room) replies: "
        "'wait' replies with the file as it landed on disk (durable when acknowledged; with "
        "Jupyter's own local-disk manager hashline writes the document's bytes itself, off the "
        "event loop, and tells the room its file is current); 'room' replies as soon as the "
        "edit is in the shared document, which the room saves as it saves a person's typing "
        "(within jupyter-collaboration's document_save_delay): faster still on large "
        "notebooks, but an edit acknowledged shortly before the server dies can be lost, as "
        "unsaved typing can.",
    ).tag(config=True)
    review = Enum(
        ["off", "on"],
        default_value="off",
        help="Review mode: 'on' keeps every agent edit or write as a proposal that a person "
        "accepts or rejects per cell (the sidebar, or POST hashline/proposals/ID/accept) "
        "before anything is written; 'off' lets edits land (an agent may still propose one "
        "with propose: true). People switch it at run time with the sidebar's toggle "
        "(POST hashline/review), for every agent or one.",
    ).tag(config=True)
    review_self_accept = Bool(
        False,
        help="Let the agent that proposed an edit accept it itself (off: a proposal is "
        "accepted by someone else, a person).",
    ).tag(config=True)
    max_request_bytes = Int(16 * MIB, help="Request bodies larger than this get 413 (bytes).").tag(
        config=True
    )
    max_patch_bytes = Int(16 * MIB, help="Patches larger than this are refused (bytes).").tag(
        config=True
    )
    max_file_bytes = Int(
        64 * MIB, help="Files larger than this cannot be read or written (bytes)."
    ).tag(config=True)
    max_versions_per_path = Int(
        64,
        help="Snapshot versions kept per file: enough for several concurrent agents to have "
        "their stale edits rebased.",
    ).tag(config=True)
    store_class = Unicode(
        "jupyter_hashline.hashline.sqlite_store.SqliteSnapshotStore",
        help="Dotted name of the SnapshotStore class. A class whose constructor takes a "
        "`path` gets `store_path`; every store gets `max_versions_per_path`.",
    ).tag(config=True)
    store_path = Unicode(
        "",
        help="File of the snapshot store. Default: jupyter_hashline/snapshots-<root id>.sqlite3 "
        "in the Jupyter data dir (one file per server root); when the data dir is on a "
        "network filesystem (NFS homes), on local disk: the runtime dir, else "
        "<temp dir>/jupyter-hashline-<uid>. A file set here on a network filesystem is used "
        "with a rollback journal instead of WAL.",
    ).tag(config=True)
    mount_table = Instance(
        MountTable,
        allow_none=True,
        help="Which filesystem each path is on: a jupyter_hashline.hashline.MountTable "
        "(None: this process's, from /proc/self/mounts). It decides where the default store "
        "goes and whether the store uses WAL. Tests plant one; a Python config file may too "
        "(MountTable.parse(text in the format of /proc/self/mounts)).",
    ).tag(config=True)
    allowed_paths = List(
        Unicode(),
        help="API path prefixes agents may read and edit (empty: the whole server root).",
    ).tag(config=True)
    read_only = Bool(
        False, help="Refuse every write through the hashline API (and every run of cells)."
    ).tag(config=True)
    allow_run = Bool(
        True,
        help="Let agents run notebook cells (notebook_run, POST hashline/run) in the notebooks' "
        "kernels. Running code needs the authority of the server's token anyway (the "
        "route also requires permission to execute kernels); set false to allow reads and "
        "edits only. A workspace overlay may set it false, never true; read_only turns runs "
        "off as well.",
    ).tag(config=True)
    allow_revert = Bool(
        True,
        help="Let people undo recorded agent edits (POST hashline/revert, the sidebar's Undo). "
        "An undo is an edit like any other (it lands only where the lines the agent wrote are "
        "unchanged); set false to keep the feed read-only. A workspace overlay may set it "
        "false, never true; read_only turns undo off as well.",
    ).tag(config=True)
    max_edits_per_patch = Int(
        10_000,
        help="Edit operations one patch may carry, all files together; more gets 413 "
        "(too_large) naming this limit, before anything is read or written. Keeps one request "
        "from holding a notebook's lock (and the server) for long.",
    ).tag(config=True)
    max_view_lines = Int(
        100_000,
        help="Lines one read may show; a longer view gets 413 (too_large) naming this limit, "
        "and the agent reads a part (offset/limit, or cells). A workspace overlay may lower it.",
    ).tag(config=True)
    allow_overwrite = Bool(
        True,
        help="Let notebook_write (POST hashline/write) replace an existing file with "
        "`overwrite: true` and no tag. With a tag (the version it replaces, from a read) a "
        "write is always checked like an edit: a stale tag gets 409 and nothing is written. "
        "Set false to require the tag; a workspace overlay may set it false, never true.",
    ).tag(config=True)
    keep_trust = Bool(
        True,
        help="Keep a trusted notebook trusted across agent edits: when the version an edit "
        "replaces is signed in the contents manager's notary (Jupyter's notebook trust), sign "
        "the new version too, unless it has outputs the signed version did not have (outputs "
        "of cells the agent ran in the notebook's kernel count as a person's runs do). Set "
        "false to leave signing to Jupyter's own saves: an agent edit then makes a trusted "
        "notebook untrusted.",
    ).tag(config=True)
    activity_limit = Int(200, help="How many recent edits GET activity keeps.").tag(config=True)
    max_sessions = Int(64, help="How many agent sessions the registry keeps.").tag(config=True)
    workspace_overlay = Unicode(
        OVERLAY_FILE,
        help="Name of a JSON file at the server root whose settings may only tighten these "
        "(seen_lines, size limits, allowed_paths, read_only, allow_run, allow_revert, "
        "allow_overwrite). Empty: no overlay.",
    ).tag(config=True)

    freeze_startup_heap = Bool(
        True,
        help="Once the server has started, freeze the objects it holds (gc.freeze) so that "
        "Python's full garbage collections skip them: each full collection otherwise scans "
        "the whole server (130-160 ms on 2 cores) inside whatever request runs. Once per "
        "process; objects that requests create later are collected as usual.",
    ).tag(config=True)

    server_mcp_tools = List(
        Unicode(),
        default_value=list(DEFAULT_TOOLS),
        help="The notebook tools the jupyter-server-mcp registration exposes (Jupyter AI's MCP "
        "server). Its port takes no token, so whoever reaches that port may call every tool "
        "listed here. Names from: " + ", ".join(TOOL_NAMES) + ". The default leaves out "
        "notebook_write (whole-file replacement) and notebook_run (it runs code in the "
        "notebooks' kernels); add notebook_run only where everyone who can reach that port may "
        "run code as you.",
    ).tag(config=True)

    service: HashlineService | None = None
    _placement: StorePlacement | None = None

    @validate("server_mcp_tools")
    def _check_server_mcp_tools(self, proposal: Any) -> list[str]:
        names = list(proposal["value"])
        unknown = [name for name in names if name not in TOOL_NAMES]
        if unknown:
            raise TraitError(
                f"HashlineExtension.server_mcp_tools names unknown tool(s) {unknown}; the "
                f"tools are {list(TOOL_NAMES)}."
            )
        return names

    def _configured_settings(self) -> HashlineSettings:
        return HashlineSettings(
            seen_lines=SeenLinesPolicy(self.seen_lines),
            syntax_check=SyntaxCheck(self.syntax_check),
            projection=self.projection,
            layout=self.layout,
            live_save=self.live_save,
            review=self.review,
            review_self_accept=self.review_self_accept,
            max_request_bytes=self.max_request_bytes,
            max_patch_bytes=self.max_patch_bytes,
            max_file_bytes=self.max_file_bytes,
            max_edits_per_patch=self.max_edits_per_patch,
            max_view_lines=self.max_view_lines,
            max_versions_per_path=self.max_versions_per_path,
            allowed_paths=tuple(p.strip("/") for p in self.allowed_paths),
            read_only=self.read_only,
            allow_run=self.allow_run,
            allow_revert=self.allow_revert,
            allow_overwrite=self.allow_overwrite,
            keep_trust=self.keep_trust,
            store_class=self.store_class,
            store_path=self.store_path or self._default_store_path(),
            activity_limit=self.activity_limit,
            max_sessions=self.max_sessions,
            server_mcp_tools=tuple(self.server_mcp_tools),
        )

    def _root_dir(self) -> str:
        assert self.serverapp is not None
        return str(self.serverapp.root_dir)

    def _default_store_path(self) -> str:
        """The default store file, chosen once (and logged once when off the data dir)."""
        if self._placement is None:
            self._placement = default_store_placement(
                self._root_dir(),
                self.data_dir,
                runtime_dir=self.runtime_dir,
                mount_table=self._mounts(),
            )
            if self._placement.note is not None:
                self.log.info("%s", self._placement.note)
        return str(self._placement.path)

    def _mounts(self) -> MountTable:
        if self.mount_table is None:
            self.mount_table = MountTable.read()
        return self.mount_table

    def _read_overlay(self) -> dict[str, Any]:
        if not self.workspace_overlay:
            return {}
        path = Path(self._root_dir()) / self.workspace_overlay
        if not path.is_file():
            return {}
        try:
            overlay = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as err:
            self.log.warning("jupyter_hashline: ignoring workspace overlay %s: %s", path, err)
            return {}
        if not isinstance(overlay, dict):
            self.log.warning("jupyter_hashline: ignoring %s: not a JSON object", path)
            return {}
        return overlay

    def effective_settings(self) -> HashlineSettings:
        """Configured settings, tightened by the workspace overlay (refusals are logged)."""
        merged = apply_workspace_overlay(self._configured_settings(), self._read_overlay())
        for refusal in merged.refused:
            self.log.warning("jupyter_hashline: workspace overlay key %s", refusal)
        if merged.applied:
            self.log.info("jupyter_hashline: workspace overlay tightened %s", merged.applied)
        return merged.settings

    def initialize_settings(self) -> None:
        assert self.serverapp is not None
        settings = self.effective_settings()
        store = make_store(settings, self._mounts())
        serverapp = self.serverapp
        rooms = RoomFinder(lambda: serverapp.web_app.settings, self.log)

        def runner(
            contents: ContentsFilesystem, notebooks: NotebookFilesystem
        ) -> ServerKernelRunner:
            return ServerKernelRunner.from_serverapp(
                serverapp, contents=contents, notebooks=notebooks, rooms=rooms
            )

        self.service = build_service(
            lambda: serverapp.contents_manager, store, settings, rooms, runner=runner
        )
        connect_events(
            serverapp.event_logger,
            activity=self.service.activity_log,
            sessions=self.service.sessions,
            log=self.log,
            proposals=self.service.workspace.desk.book,
        )
        self.settings["jupyter_hashline_service"] = self.service
        self.log.info(
            "jupyter_hashline: store %s, seen lines %s", type(store).__name__, settings.seen_lines
        )

    def initialize_handlers(self) -> None:
        assert self.service is not None
        self.handlers.extend(make_handlers(self.service))

    async def _start_jupyter_server_extension(self, serverapp: Any) -> None:
        """Runs once the server's event loop does: every extension is loaded by then."""
        if self.freeze_startup_heap:
            frozen = heap.freeze_startup_heap()
            if frozen is not None:
                self.log.info(
                    "jupyter_hashline: froze %d startup objects; full garbage collections "
                    "skip them (HashlineExtension.freeze_startup_heap)",
                    frozen,
                )

    async def stop_extension(self) -> None:
        if self.service is not None:
            await self.service.aclose()


CHOOSE_STORE_FILE = "c.HashlineExtension.store_path; the command line: --store"
"""How a server's store file is chosen, as the store's advice names it."""


def make_store(settings: HashlineSettings, mount_table: MountTable | None = None) -> SnapshotStore:
    """Build the configured snapshot store (creating the folder of a file-backed one); a
    store class taking `mount_table` gets it, one taking `choose_file` the server's setting
    (its advice names it)."""
    store_class = import_item(settings.store_class)
    params = inspect.signature(store_class).parameters
    kwargs: dict[str, Any] = {}
    if "max_versions_per_path" in params:
        kwargs["max_versions_per_path"] = settings.max_versions_per_path
    if "mount_table" in params and mount_table is not None:
        kwargs["mount_table"] = mount_table
    if "choose_file" in params:
        kwargs["choose_file"] = CHOOSE_STORE_FILE
    if "path" in params:
        Path(settings.store_path).parent.mkdir(parents=True, exist_ok=True)
        kwargs["path"] = settings.store_path
    store: SnapshotStore = store_class(**kwargs)
    return store
