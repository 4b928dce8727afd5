"""Where the notebook tools run: a directory on this machine, or a running Jupyter server.

Both backends take a tool call (a name from `TOOL_SPECS` and its arguments) and return a
`ToolOutcome`: the text an agent reads, whether it is an error and, for errors, its kind (the
engine's `HashlineError.kind`, or the REST API's `error` field, which uses the same names).

- `DirectoryBackend(root)`: `NotebookTools` over a `Patcher` over
  `NotebookFilesystem(DiskFilesystem(root))`; every path is confined to the root. Snapshots go
  to a `SqliteSnapshotStore`, by default the very file a Jupyter server on the same root uses
  (`default_store_path`), so tags survive between processes (CLI invocations, MCP sessions)
  and a notebook read here can be edited through that server and the other way round.
- `ServerBackend(url, token)`: the server's hashline REST API through httpx. The server owns
  the snapshots, the locks and the activity feed; a notebook open in JupyterLab with
  collaboration is edited live.

Invariants:
- `call` never raises for an agent mistake, a rejection or an unreachable server: it returns
  an error outcome whose text says what to do next. Only programming errors propagate.
- The default store path is a pure function of the root's real path, computed exactly as the
  server extension computes its own default.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Protocol

import httpx

from ..agent.tools import TOOL_NAMES, NotebookTools, ToolOutcome
from ..hashline.disk import DiskFilesystem
from ..hashline.patcher import Patcher, SeenLinesPolicy
from ..hashline.sqlite_store import SqliteSnapshotStore
from ..notebook import NotebookFilesystem

STORE_ENV = "JUPYTER_HASHLINE_STORE"
UNREACHABLE = "unreachable"


class ToolBackend(Protocol):
    """Runs the catalog's tools somewhere; see the module docstring."""

    describe: str

    async def call(self, name: str, arguments: Mapping[str, Any]) -> ToolOutcome: ...

    async def aclose(self) -> None: ...


def default_store_path(root: str | os.PathLike[str]) -> Path:
    """`<Jupyter data dir>/jupyter_hashline/snapshots-<root id>.sqlite3` (the server's default).

    `root id` is the first 12 hex digits of the SHA-256 of the root's real path. The data dir
    honours `JUPYTER_DATA_DIR`.
    """
    from jupyter_core.paths import jupyter_data_dir

    root_id = hashlib.sha256(os.path.realpath(root).encode()).hexdigest()[:12]
    return Path(jupyter_data_dir()) / "jupyter_hashline" / f"snapshots-{root_id}.sqlite3"


def resolve_store_path(root: str | os.PathLike[str], store: str | None) -> str:
    """The store file to use: `store` if given, else `$JUPYTER_HASHLINE_STORE`, else the
    default for `root`. `:memory:` keeps snapshots for this process only."""
    chosen = store or os.environ.get(STORE_ENV) or ""
    if chosen:
        return chosen
    return str(default_store_path(root))


class DirectoryBackend:
    """The tools over files under one directory (see the module docstring)."""

    def __init__(
        self,
        root: str | os.PathLike[str],
        store_path: str | None = None,
        *,
        seen_lines: SeenLinesPolicy | str = SeenLinesPolicy.REJECT,
    ) -> None:
        self.root = Path(root).resolve()
        self.filesystem = NotebookFilesystem(DiskFilesystem(self.root))
        self.store_path = resolve_store_path(self.root, store_path)
        if self.store_path != ":memory:":
            Path(self.store_path).parent.mkdir(parents=True, exist_ok=True)
        self.store = SqliteSnapshotStore(self.store_path)
        self.patcher = Patcher(self.filesystem, self.store, seen_lines)
        self.tools = NotebookTools(self.patcher, self.filesystem.outputs)
        self.describe = f"directory {self.root} (snapshots in {self.store_path})"

    async def call(self, name: str, arguments: Mapping[str, Any]) -> ToolOutcome:
        return await self.tools.call(name, arguments)

    async def aclose(self) -> None:
        self.store.close()


class ServerBackend:
    """The tools through a Jupyter server's hashline REST API (see the module docstring)."""

    def __init__(
        self,
        url: str,
        token: str | None = None,
        *,
        timeout_s: float = 60.0,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        self.base = url.rstrip("/") + "/hashline/"
        headers = {"Authorization": f"token {token}"} if token else {}
        self.client = httpx.AsyncClient(headers=headers, timeout=timeout_s, transport=transport)
        self.describe = f"Jupyter server {url.rstrip('/')}/"

    async def call(self, name: str, arguments: Mapping[str, Any]) -> ToolOutcome:
        if name not in TOOL_NAMES:
            text = f"Unknown tool {name!r}. Tools: {', '.join(TOOL_NAMES)}."
            return ToolOutcome(text, True, kind="unknown_tool")
        try:
            method, route, params, body = _rest_request(name, dict(arguments))
        except (KeyError, TypeError, ValueError) as err:
            text = f"Bad arguments for {name}: {err}. See the tool's schema."
            return ToolOutcome(text, True, kind="bad_arguments")
        try:
            url = self.base + route
            response = await self.client.request(method, url, params=params, json=body)
        except httpx.HTTPError as err:
            return ToolOutcome(self._unreachable(err), True, kind=UNREACHABLE)
        return _outcome(name, response)

    async def aclose(self) -> None:
        await self.client.aclose()

    def _unreachable(self, err: httpx.HTTPError) -> str:
        return (
            f"Cannot reach the Jupyter server at {self.base} ({type(err).__name__}: {err}). "
            "Check that the server is running and that the URL is right; nothing was changed."
        )


RestRequest = tuple[str, str, dict[str, str] | None, dict[str, Any] | None]


def _rest_request(name: str, args: dict[str, Any]) -> RestRequest:
    """Method, route, query and JSON body of the REST call for one tool call."""
    if name == "notebook_read":
        query = {"path": _text(args, "path")}
        for key in ("offset", "limit"):
            if args.get(key) is not None:
                query[key] = str(_whole(args, key))
        cells = args.get("cells")
        if cells:
            query["cells"] = cells if isinstance(cells, str) else ",".join(map(str, cells))
        return "GET", "read", query, None
    if name == "notebook_edit":
        if "patch" in args:
            return "POST", "patch", None, {"patch": _text(args, "patch")}
        if "edits" in args:
            edits = args["edits"]
            edits = json.loads(edits) if isinstance(edits, str) else edits
            return "POST", "patch", None, {"edits": edits}
        raise ValueError("give either 'patch' (edit text) or 'edits' (the JSON form)")
    if name == "notebook_write":
        body = {"path": _text(args, "path"), "content": _text(args, "content")}
        return "POST", "write", None, body
    query = {"path": _text(args, "path"), "cell": _text(args, "cell")}
    if args.get("max_chars") is not None:
        query["max_chars"] = str(_whole(args, "max_chars"))
    return "GET", "outputs", query, None


def _outcome(name: str, response: httpx.Response) -> ToolOutcome:
    try:
        payload = response.json()
    except ValueError:
        payload = None
    if not isinstance(payload, dict):
        text = (
            f"The server answered {response.status_code} without a hashline reply: is the "
            "jupyter_hashline extension enabled on it? (`jupyter server extension list`)"
        )
        return ToolOutcome(text, True, kind=f"http_{response.status_code}")
    if response.is_error:
        message = str(payload.get("message") or f"HTTP {response.status_code}")
        return ToolOutcome(message, True, kind=str(payload.get("error") or "http_error"))
    key = {"notebook_read": "view", "notebook_outputs": "text"}.get(name, "text")
    return ToolOutcome(str(payload.get(key, "")))


def _text(args: Mapping[str, Any], key: str) -> str:
    value = args[key]
    if not isinstance(value, str):
        raise TypeError(f"{key!r} must be a string, not {type(value).__name__}")
    return value


def _whole(args: Mapping[str, Any], key: str) -> int:
    value = args[key]
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ValueError(f"{key!r} must be a whole number >= 1, not {value!r}")
    return value
