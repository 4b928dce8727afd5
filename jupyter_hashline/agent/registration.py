"""Registering an agent session with the Jupyter server that started this kernel.

A kernel started by a Jupyter server is a child process of it, and every running server writes
`jpserver-<pid>.json` (its URL and token) into the Jupyter runtime directory. A session running
in such a kernel finds its parent server there and posts its snapshot to
`{url}hashline/sessions` after every turn, so the JupyterLab sidebar can list it.

Invariants:
- Registration never breaks a session: without a parent server it is simply off, and a failed
  post is logged (once per kind of failure) and retried at the next turn.
- Nothing but the parent server is ever contacted: the URL comes from the server's own file,
  matched by process id, and the token is that server's.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class ServerInfo:
    url: str  # ends with "/"
    token: str
    root_dir: str | None = None  # the server's root directory (None when it did not say)


def runtime_dir() -> Path:
    from jupyter_core.paths import jupyter_runtime_dir

    return Path(jupyter_runtime_dir())


def find_parent_server(directory: Path | None = None, ppid: int | None = None) -> ServerInfo | None:
    """The running Jupyter server whose process is this process's parent, if any."""
    directory = directory if directory is not None else runtime_dir()
    ppid = ppid if ppid is not None else os.getppid()
    for path in sorted(directory.glob("jpserver-*.json")):
        try:
            info = json.loads(path.read_text())
        except (OSError, ValueError):
            continue
        if isinstance(info, dict) and info.get("pid") == ppid and info.get("url"):
            url = str(info["url"])
            root = info.get("root_dir")
            return ServerInfo(
                url if url.endswith("/") else url + "/",
                str(info.get("token", "")),
                str(root) if isinstance(root, str) and root else None,
            )
    return None


class ServerRegistration:
    """Posts a session's snapshots to one server's `hashline/sessions` route."""

    def __init__(self, server: ServerInfo, *, timeout: float = 10.0) -> None:
        self.server = server
        self._timeout = timeout
        self._failures: set[str] = set()

    @property
    def endpoint(self) -> str:
        return self.server.url + "hashline/sessions"

    async def push(self, session_id: str, label: str, snapshot: Mapping[str, Any]) -> bool:
        """Post one snapshot; True when the server took it."""
        headers = {"Authorization": f"token {self.server.token}"} if self.server.token else {}
        body = {"id": session_id, "label": label, "snapshot": snapshot}
        try:
            async with httpx.AsyncClient(timeout=self._timeout) as http:
                response = await http.post(self.endpoint, json=body, headers=headers)
        except httpx.HTTPError as err:
            return self._failed(type(err).__name__, str(err))
        if response.status_code >= 300:
            return self._failed(str(response.status_code), response.text[:300])
        return True

    def _failed(self, kind: str, detail: str) -> bool:
        if kind not in self._failures:
            self._failures.add(kind)
            log.warning("could not register the session with %s: %s", self.endpoint, detail)
        return False
