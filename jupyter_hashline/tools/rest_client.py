"""`RestWorkspace`: the tools run by a Jupyter server, through its hashline REST API (httpx).

The second implementation of the workspace interface: `call(request)` sends the request to the
route its catalog entry names (GET with the arguments in the query, or POST with a JSON body),
with the server's token and `X-Hashline-Agent: <request.agent>`, and turns the reply into a
`ToolOutcome`. The server owns the snapshots, the locks, the per-agent state and the activity
feed; a notebook open in JupyterLab with collaboration is edited live.

`base_path` maps a folder under the server root to this client's root (a kernel whose working
directory is a sub-folder of the server root): paths the agent sends are joined to it, the
server's replies name them back relative to it, so an agent sees the same paths as it would
editing that folder directly. Only paths are mapped, never file text: path fields (`path`),
header fields (`header`, `header_before`, `header_after`), the prose of messages, warnings and
notes (numbered rows of file text inside them are left alone), and in a reply's text only its
header and `warning:`/`note:` lines. Views, previews, diffs, outputs and rows stay as the
server sent them, so an agent that echoes a line writes exactly what the file holds.

A run (`notebook_run`) waits for its reply without a read timeout: the server bounds every
cell by the run's own `timeout_s`, and the cells of one call run one after the other.

Invariants:
- No Jupyter import: httpx and the catalog only.
- `call` never raises for an agent mistake, a rejection or an unreachable server; an error
  outcome keeps the server's `error` kind, its status and its agent message.
"""

from __future__ import annotations

import asyncio
import posixpath
import re
from collections.abc import Callable, Mapping
from dataclasses import replace
from typing import Any

import httpx

from ..hashline.errors import HashlineError
from ..hashline.parse import parse_patch
from ..notebook import Figure
from .activity import ActivityRecord
from .calls import ToolOutcome
from .catalog import REVIEW_ACCEPT, FieldKind, ToolSpec, spec_of
from .errors import cells_without_proposal
from .requests import (
    EditRequest,
    RevertRequest,
    ReviewAcceptRequest,
    ReviewListRequest,
    ReviewRejectRequest,
    RunRequest,
    ToolRequest,
)
from .review import listing_text, told_text

__all__ = ["AGENT_HEADER", "UNREACHABLE", "RestWorkspace"]

AGENT_HEADER = "X-Hashline-Agent"
UNREACHABLE = "unreachable"

_PATH_KEYS = frozenset({"path", "header", "header_before", "header_after"})
_PROSE_KEYS = frozenset({"message", "warnings", "notes", "note", "banner"})
_TEXT_KEYS = frozenset({"text", "view"})
_NOTE_PREFIXES = ("warning: ", "note: ", "recovered: ")
_ROW = re.compile(r"[ *]?\d+:")


class RestWorkspace:
    """The tools of the Jupyter server at `url` (see the module docstring)."""

    def __init__(
        self,
        url: str,
        token: str | None = None,
        *,
        base_path: str = "",
        timeout_s: float = 60.0,
        transport: httpx.AsyncBaseTransport | None = None,
    ) -> None:
        self.base = url.rstrip("/") + "/hashline/"
        self.base_path = base_path.strip("/")
        self._headers = {"Authorization": f"token {token}"} if token else {}
        self._timeout_s = timeout_s
        self._transport = transport
        self._client: httpx.AsyncClient | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        where = f" (folder {self.base_path}/)" if self.base_path else ""
        self.describe = f"Jupyter server {url.rstrip('/')}/{where}"

    async def call(self, request: ToolRequest) -> ToolOutcome:
        spec = spec_of(request)
        try:
            arguments = self._outward(spec, request)
        except HashlineError as err:
            return ToolOutcome.failure(err)
        try:
            if isinstance(request, ReviewListRequest):
                return await self._review_list(arguments, request)
            if isinstance(request, ReviewAcceptRequest | ReviewRejectRequest):
                return await self._review_decide(arguments, request, accept=spec is REVIEW_ACCEPT)
            response = await self._send(spec, arguments, request.agent, self._timeout(request))
        except httpx.HTTPError as err:
            return ToolOutcome.error(self._unreachable(err), UNREACHABLE, 503)
        return self._outcome(spec, response)

    async def _review_list(
        self, arguments: Mapping[str, Any], request: ReviewListRequest
    ) -> ToolOutcome:
        """`GET proposals` on the server, its pending proposals as a reviewer's text."""
        headers = {AGENT_HEADER: request.agent}
        response = await self.client.get(self.base + "proposals", params=arguments, headers=headers)
        outcome = self._reply(response, "text")
        if outcome.is_error:
            return outcome
        text = listing_text(outcome.reply, request.path)
        return replace(outcome, text=text, reply={**outcome.reply, "text": text})

    async def _review_decide(
        self,
        arguments: Mapping[str, Any],
        request: ReviewAcceptRequest | ReviewRejectRequest,
        *,
        accept: bool,
    ) -> ToolOutcome:
        """`POST proposals/ID/accept|reject` (or `accept-all|reject-all` of a path)."""
        verb = "accept" if accept else "reject"
        body = {name: arguments[name] for name in ("cells", "note") if name in arguments}
        if request.proposal is not None:
            route = f"proposals/{request.proposal}/{verb}"
        elif request.cells is not None:
            return ToolOutcome.failure(cells_without_proposal())
        else:
            route, body = f"proposals/{verb}-all", {**body, "path": arguments["path"]}
        headers = {AGENT_HEADER: request.agent}
        response = await self.client.post(self.base + route, json=body, headers=headers)
        return self._reply(response, "text")

    async def revert(self, request: RevertRequest) -> ToolOutcome:
        """`POST revert` on the server: undo recorded edits there (its activity feed)."""
        if request.activity is not None:
            body: dict[str, Any] = {"activity": request.activity}
        else:
            body = {"agent": request.target_agent, "since_ms": request.since_ms}
        headers = {AGENT_HEADER: request.agent}
        try:
            response = await self.client.post(self.base + "revert", json=body, headers=headers)
        except httpx.HTTPError as err:
            return ToolOutcome.error(self._unreachable(err), UNREACHABLE, 503)
        return self._reply(response, "text")

    async def aclose(self) -> None:
        if self._client is not None and self._loop is asyncio.get_running_loop():
            await self._client.aclose()
        self._client = None

    @property
    def client(self) -> httpx.AsyncClient:
        """The HTTP client of the running event loop (a new loop gets a new client: a pooled
        connection cannot move between loops, and a session may run under several)."""
        loop = asyncio.get_running_loop()
        if self._client is None or self._loop is not loop:
            self._client = httpx.AsyncClient(
                headers=self._headers, timeout=self._timeout_s, transport=self._transport
            )
            self._loop = loop
        return self._client

    # -- the HTTP exchange ---------------------------------------------------------------------

    async def _send(
        self, spec: ToolSpec, arguments: Mapping[str, Any], agent: str, timeout: httpx.Timeout
    ) -> httpx.Response:
        url = self.base + spec.rest.route
        headers = {AGENT_HEADER: agent}
        if spec.rest.http_method == "GET":
            query = {name: _query_value(value) for name, value in arguments.items()}
            return await self.client.get(url, params=query, headers=headers, timeout=timeout)
        return await self.client.post(url, json=dict(arguments), headers=headers, timeout=timeout)

    def _timeout(self, request: ToolRequest) -> httpx.Timeout:
        """The client's timeout; a run's reply may take as long as its cells (no read limit)."""
        if isinstance(request, RunRequest):
            return httpx.Timeout(self._timeout_s, read=None)
        return httpx.Timeout(self._timeout_s)

    def _outcome(self, spec: ToolSpec, response: httpx.Response) -> ToolOutcome:
        return self._reply(response, spec.rest.text_key)

    def _reply(self, response: httpx.Response, text_key: str) -> ToolOutcome:
        try:
            payload = response.json()
        except ValueError:
            payload = None
        if not isinstance(payload, dict):
            text = (
                f"The server answered {response.status_code} without a hashline reply: is the "
                "jupyter_hashline extension enabled on it? (`jupyter server extension list`)"
            )
            return ToolOutcome.error(text, f"http_{response.status_code}", response.status_code)
        payload = self._inward(payload)
        if response.is_error:
            message = str(payload.get("message") or f"HTTP {response.status_code}")
            kind = str(payload.get("error") or "http_error")
            return ToolOutcome.error(message, kind, response.status_code)
        records = tuple(ActivityRecord.from_json(r) for r in payload.get("activity", ()))
        images = tuple(Figure.from_json(image) for image in payload.get("images", ()))
        text = str(payload.get(text_key, ""))
        if text_key != "text":  # a reply's `text` already says them; a read's `view` does not
            text = told_text(payload.get("review_updates", ()), text)
        return ToolOutcome(text, reply=payload, activity=records, images=images)

    def _unreachable(self, err: httpx.HTTPError) -> str:
        return (
            f"Cannot reach the Jupyter server at {self.base} ({type(err).__name__}: {err}). "
            "Check that the server is running and that the URL is right; nothing was changed."
        )

    # -- paths under base_path -----------------------------------------------------------------

    def _outward(self, spec: ToolSpec, request: ToolRequest) -> dict[str, Any]:
        """The arguments to send, their paths joined to `base_path`."""
        arguments = request.arguments()
        if not self.base_path:
            return arguments
        for field in spec.fields:
            if field.kind is FieldKind.PATH and field.name in arguments:
                arguments[field.name] = self._join(arguments[field.name])
        if isinstance(request, EditRequest):
            sections = [section.to_json() for section in parse_patch(request.edit)]
            for section in sections:
                section["path"] = self._join(str(section["path"]))
            arguments = {"edits": sections}
        return arguments

    def _join(self, path: str) -> str:
        return posixpath.normpath(posixpath.join(self.base_path, path.lstrip("/")))

    def _inward(self, node: Any, key: str = "") -> Any:
        """`node` with the server paths it names (see the module docstring) named back relative
        to `base_path`; everything else as sent."""
        if not self.base_path:
            return node
        if isinstance(node, dict):
            return {name: self._inward(value, name) for name, value in node.items()}
        if isinstance(node, list):
            return [self._inward(item, key) for item in node]
        if not isinstance(node, str):
            return node
        if key in _PATH_KEYS:
            return _strip_folder(node, self.base_path)
        if key in _PROSE_KEYS:
            return _map_lines(node, self.base_path, _is_prose)
        if key in _TEXT_KEYS:
            return _map_lines(node, self.base_path, self._is_reply_line)
        return node

    def _is_reply_line(self, line: str) -> bool:
        """A line of a reply's text that is the reply's own: its header or a warning/note."""
        return line.startswith((f"[{self.base_path}/", *_NOTE_PREFIXES))


def _query_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (list, tuple)):
        return ",".join(str(item) for item in value)
    return str(value)


def _strip_folder(text: str, folder: str) -> str:
    """Every `folder/` that starts a path in `text` (at the start, after a space, bracket,
    parenthesis or quote) removed."""
    return re.sub(r"(?:^|(?<=[\s\[(\"'`]))" + re.escape(folder + "/"), "", text)


def _is_prose(line: str) -> bool:
    """Not a numbered row of file text (`7:...`, `*7:...`, ` 7:...`)."""
    return _ROW.match(line) is None


def _map_lines(text: str, folder: str, mapped: Callable[[str], bool]) -> str:
    if folder + "/" not in text:
        return text
    lines = text.split("\n")
    return "\n".join(_strip_folder(line, folder) if mapped(line) else line for line in lines)
